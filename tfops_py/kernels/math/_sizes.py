"""Sizing outputs from input values (segment counts, bin counts, ``num``): TF's errors before allocating.

A segment id of 2**31 - 1 asks for 2**31 output rows.  TF then tries to allocate (and fails with
ResourceExhaustedError, or takes the machine's memory); NumPy hands out lazily zeroed pages and the
kernel runs the machine out of memory.  ``sized`` raises TF's InvalidArgumentError for a shape past
int64 and ResourceExhaustedError ("OOM when allocating tensor with shape[...]") for an output, or its
per-row bookkeeping (8 bytes a row: row pointers, counts), larger than the allocation limit: the
machine's physical memory, or ``$TFOPS_MAX_ALLOCATION_BYTES``.  (The reliability work adds a shared
limit with a setter; this module becomes a call to it.)
"""
from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence

from tfops_py.errors import ResourceExhaustedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import format_shape
from tfops_py.kernels.array.fill_ops import checked_shape
from tfops_py.kernels.registry import KernelContext


@functools.cache
def _limit() -> int:
    env = os.environ.get("TFOPS_MAX_ALLOCATION_BYTES", "").strip()
    if env:
        return int(env)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2**63 - 1


def sized(ctx: KernelContext, dims: Sequence[int], dt: DataType | None = None) -> tuple[int, ...]:
    """``dims`` as an output shape this kernel may allocate (``dt``: the first output's dtype by default).

    Kernels return an empty output before any per-row work (none of it is checked here)."""
    shape = checked_shape(ctx, [int(d) for d in dims])
    dt = dt if dt is not None else ctx.output_dtypes[0]
    count = math.prod(shape)
    nbytes = max(count * dt.numpy_dtype.itemsize, 8 * shape[0]) if count else 0  # an empty output needs nothing
    if nbytes > _limit():
        raise ctx.error(ResourceExhaustedError,
                        f"OOM when allocating tensor with shape{format_shape(shape)} and type {dt.short_name} on "
                        f"CPU by allocator CPU ({nbytes} bytes, more than the allocation limit of {_limit()})")
    return shape
