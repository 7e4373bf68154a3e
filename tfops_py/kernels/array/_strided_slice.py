"""TF's ``ValidateStridedSliceOp``: a sparse slice spec (masks, ellipsis, new axes) made dense and checked.

Shared by StridedSlice's shape function (where begin/end and some dims may be unknown) and its
kernel.  The clamping follows TF exactly: out-of-range begin/end are clamped to the dimension,
except on shrink axes, which must index inside it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tfops_py.kernels._typing import Fail
import numpy as np

from tfops_py.framework.tensor_shape import format_shape

_SHRINK, _NEW_AXIS = -1, -2


@dataclass
class DenseSlice:
    """Per input dimension: canonical begin/end/stride, whether it is shrunk, and the sliced size."""

    begin: list[int]
    end: list[int]
    strides: list[int]
    shrink: list[bool]
    processing_shape: list[int]  # -1 where unknown
    final_shape: list[int]  # the op's output shape, -1 where unknown


def check_spec_shapes(fail: Fail, begin: Sequence[int] | None, end: Sequence[int] | None,
                      strides: Sequence[int]) -> None:
    """begin, end and strides must be vectors of one length (< 32: the masks are 32-bit)."""
    n = 1
    for d in strides:
        n *= d

    def fmt(s: Sequence[int]) -> str:
        return "[" + ",".join(str(d) for d in s) + "]"

    begin_wrong = begin is not None and not (len(begin) == 1 and begin[0] == n and n < 32)
    end_wrong = end is not None and not (len(end) == 1 and end[0] == n)
    if begin_wrong or end_wrong or len(strides) != 1:
        if begin is not None and end is not None:
            fail(f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes {fmt(begin)}, "
                 f"{fmt(end)}, and {fmt(strides)} instead.")
        fail(f"Expected begin, end, and strides to be 1D equal size tensors, but got shape {fmt(strides)} "
             f"for strides.")


def dense_slice(fail: Fail, input_shape: Sequence[int], begin: Sequence[int] | None,
                end: Sequence[int] | None, strides: Sequence[int], begin_mask: int, end_mask: int,
                ellipsis_mask: int, new_axis_mask: int, shrink_axis_mask: int) -> DenseSlice:
    """The dense spec of a checked sparse one; ``fail(message)`` must raise."""
    if ellipsis_mask & (ellipsis_mask - 1):
        fail("Multiple ellipses in slice spec not allowed")
    sparse_dims = len(strides)
    new_after_ellipsis, seen = 0, False
    for i in range(sparse_dims):
        if seen and (1 << i) & new_axis_mask:
            new_after_ellipsis += 1
        if (1 << i) & ellipsis_mask:
            seen = True
    if not seen:  # an implicit ellipsis at the end
        ellipsis_mask |= 1 << sparse_dims
        sparse_dims += 1

    dims = len(input_shape)
    d_begin, d_end, d_strides = [0] * dims, [0] * dims, [0] * dims
    d_begin_mask = d_end_mask = d_shrink = 0
    gather: list[int] = []  # where each output dim comes from
    full = 0
    for i in range(sparse_dims):
        bit = 1 << i
        if bit & ellipsis_mask:
            stop = min(dims - (sparse_dims - i) + 1 + new_after_ellipsis, dims)
            while full < stop:
                d_strides[full] = 1
                d_begin_mask |= 1 << full
                d_end_mask |= 1 << full
                gather.append(full)
                full += 1
        elif bit & new_axis_mask:
            gather.append(_NEW_AXIS)
        else:
            if full == dims:
                if dims == 0:
                    fail("Attempting to slice scalar input.")
                fail(f"Index out of range using input dim {full}; input has only {dims} dims")
            if begin is not None:
                d_begin[full] = begin[i]
            if end is not None:
                d_end[full] = end[i]
            d_strides[full] = strides[i]
            if begin_mask & bit:
                d_begin_mask |= 1 << full
            if end_mask & bit:
                d_end_mask |= 1 << full
            if shrink_axis_mask & bit:
                gather.append(_SHRINK)
                d_shrink |= 1 << full
            else:
                gather.append(full)
            full += 1

    valid = begin is not None and end is not None
    processing: list[int] = []
    for i in range(dims):
        stride, dim = d_strides[i], input_shape[i]
        if stride == 0:
            fail(f"strides[{i}] must be non-zero")
        shrink = bool(d_shrink & (1 << i))
        if dim == -1:
            processing.append(1 if shrink else -1)
            continue
        masked = (bool(d_begin_mask & (1 << i)), bool(d_end_mask & (1 << i)))
        lo, hi = (0, dim) if stride > 0 else (-1, dim - 1)

        def canonical(x: int, c: int, masked=masked, lo=lo, hi=hi, stride=stride, dim=dim) -> int:
            if masked[c]:
                return (lo, hi)[c] if stride > 0 else (lo, hi)[1 - c]
            x = dim + x if x < 0 else x
            return min(max(x, lo), hi)

        if shrink and stride <= 0:
            fail("only stride 1 allowed on non-range indexing.")
        if valid:
            if shrink:
                b = dim + d_begin[i] if d_begin[i] < 0 else d_begin[i]
                if b < 0 or b >= dim:
                    fail(f"slice index {b} of dimension {i} out of bounds.")
                d_begin[i], d_end[i] = b, b + 1
            else:
                d_begin[i], d_end[i] = canonical(d_begin[i], 0), canonical(d_end[i], 1)
            length: int | None = d_end[i] - d_begin[i]
        elif shrink:
            length = 1
        elif masked[0] and masked[1]:
            length = -dim if stride < 0 else dim
        else:
            length = None
        if length is None:
            processing.append(-1)
        elif length == 0 or (length < 0) != (stride < 0):
            processing.append(0)
        else:
            processing.append(-(-length // stride))

    final = [processing[g] if g >= 0 else 1 for g in gather if g != _SHRINK]
    return DenseSlice(d_begin, d_end, d_strides, [bool(d_shrink & (1 << i)) for i in range(dims)],
                      processing, final)


def index_tuple(spec: DenseSlice) -> tuple:
    """Python indices (ints and slices) that take the dense slice from a concrete tensor."""
    idx: list = []
    for b, e, s, shrink, size in zip(spec.begin, spec.end, spec.strides, spec.shrink, spec.processing_shape):
        if shrink:
            idx.append(b)
        elif size == 0:
            idx.append(slice(0, 0))
        elif s > 0:
            idx.append(slice(b, e, s))
        else:  # canonical end -1 means "through index 0", which Python spells None
            idx.append(slice(b, e if e >= 0 else None, s))
    return tuple(idx)


def check_broadcast_into(fail: Fail, value_shape: Sequence[int], final: Sequence[int]) -> None:
    """A strided-slice assignment's value must broadcast to the slice's final shape (TF's message)."""
    vs, fs = tuple(value_shape), tuple(final)
    try:
        ok = np.broadcast_shapes(vs, fs) == fs
    except ValueError:
        ok = False
    if not ok:
        fail(f"Cannot broadcast input shape {format_shape(vs)} into final shape {format_shape(fs)}")
