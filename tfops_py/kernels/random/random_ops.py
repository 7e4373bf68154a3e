"""The seeded random ops: RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt.

Bit-exact with TF 2.21's CPU kernels (``random_op.cc``) for fixed seeds: each ``Run`` reserves 256
Philox blocks per output from the node's generator (``ReserveRandomOutputs(n, 256)``) and fills the
output from the start of that reservation (``_dist``).  With ``seed = seed2 = 0`` the stream is seeded
at random, as in TF.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tfops_py.conformance import case, conformance, literal, one_of, shape
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.random import _dist
from tfops_py.kernels.random._base import generator, host_scalar, output_shape, random_shape, scalar_input
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "random"

register_shape("RandomUniform", "RandomStandardNormal", "TruncatedNormal")(random_shape)


@register_shape("RandomUniformInt")
def _uniform_int_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    scalar_input(ctx, 1, "minval")
    scalar_input(ctx, 2, "maxval")
    return random_shape(ctx)


def fill(ctx: KernelContext, dims: tuple[int, ...], transform: Callable[[Any, Any], Any] | None) -> Any:
    """``PhiloxRandomOp``: an output of ``dims`` from the next reservation of the node's generator
    (``transform`` None: the truncated normal)."""
    n = math.prod(dims)
    dt = ctx.output_dtypes[0]
    gen = generator(ctx).reserve_random_outputs(n, _dist.RESERVED_PER_OUTPUT)
    xp, out_dtype = ctx.xp, ctx.dtype(dt)
    if n == 0:
        return xp.zeros(dims, dtype=out_dtype)
    if transform is None:
        flat = _dist.truncated_normal(xp, gen, n, dt, out_dtype)
    else:
        flat = _dist.generate(xp, gen, n, _dist.per_block(dt), transform)
    return xp.reshape(flat, dims)


@register_kernel("RandomUniform")
def _random_uniform(ctx: KernelContext, shape: Any) -> Any:
    dt = ctx.output_dtypes[0]
    return fill(ctx, output_shape(ctx, shape), _dist.uniform(dt, ctx.dtype(dt)))


@register_kernel("RandomStandardNormal")
def _random_standard_normal(ctx: KernelContext, shape: Any) -> Any:
    dt = ctx.output_dtypes[0]
    return fill(ctx, output_shape(ctx, shape), _dist.normal(dt, ctx.dtype(dt)))


@register_kernel("TruncatedNormal")
def _truncated_normal(ctx: KernelContext, shape: Any) -> Any:
    return fill(ctx, output_shape(ctx, shape), None)


def int_bounds(ctx: KernelContext, minval: Any, maxval: Any) -> tuple[int, int]:
    """The 0-D ``minval``/``maxval`` of the uniform-int ops, as Python ints."""
    lo = int(host_scalar(ctx, minval, "minval"))
    hi = int(host_scalar(ctx, maxval, "maxval"))
    return lo, hi


def check_bounds(ctx: KernelContext, lo: int, hi: int) -> None:
    if not lo < hi:
        ctx.invalid_argument(f"Need minval < maxval, got {lo} >= {hi}")


@register_kernel("RandomUniformInt")
def _random_uniform_int(ctx: KernelContext, shape: Any, minval: Any, maxval: Any) -> Any:
    lo, hi = int_bounds(ctx, minval, maxval)
    dims = output_shape(ctx, shape)
    if math.prod(dims) == 0:  # TF returns before checking the bounds: no draws, no error
        return ctx.xp.zeros(dims, dtype=ctx.dtype(ctx.output_dtypes[0]))
    check_bounds(ctx, lo, hi)
    dt = ctx.output_dtypes[0]
    return fill(ctx, dims, _dist.uniform_int(dt, lo, hi, ctx.dtype(dt)))


# -- conformance -------------------------------------------------------------------------------------
I32, I64 = DataType.DT_INT32, DataType.DT_INT64
# Sizes around Philox's block of four words (two for 64-bit types) and TF's groups, empty ones too.
SIZES = ([1], [3], [4], [5], [7], [2, 3], [9, 1, 2], [1025], [0], [3, 0], [129, 5])
SEEDS = {"seed": one_of(7, -3, 2**40 + 1), "seed2": one_of(0, 11, 2**62)}


def seeded(id: str, **named: Any) -> Any:
    """A hand case with fixed seeds (a case without them would draw random ones, as TF does)."""
    return case({"seed": 5, "seed2": 9, **named}, id=id)


def sized_cases(op: str, **fixed: Any) -> list:
    """Hand cases over :data:`SIZES` (every output dtype) and malformed shapes."""
    bad = {"matrix-shape": literal([[2, 3]], I32), "scalar-shape": literal(3, I32),
           "negative-dim": literal([2, -3], I64), "minus-one": literal([-1], I32),
           "too-many-elements": literal([2**40, 2**40], I64)}
    return ([seeded(f"{op}/size-{'x'.join(map(str, s))}", shape=literal(s, I32), **fixed) for s in SIZES]
            + [seeded(f"{op}/{name}", shape=value, **fixed) for name, value in bad.items()])


for _op in ("RandomUniform", "RandomStandardNormal", "TruncatedNormal"):
    conformance(_op, shape=shape(), compare="exact", cases=sized_cases(_op), **SEEDS)

_BOUNDS = {"minval": literal(-7), "maxval": literal(100)}
conformance("RandomUniformInt", shape=shape(), **_BOUNDS, compare="exact",
            cases=sized_cases("RandomUniformInt", **_BOUNDS) + [
                seeded(f"RandomUniformInt/{name}", shape=literal(size, I32), minval=lo, maxval=hi)
                for name, size, lo, hi in (
                    ("empty-range", [6], literal(5), literal(5)),
                    ("empty-range-no-output", [0], literal(5), literal(5)),
                    ("minval-vector", [6], literal([5]), literal(9)), ("maxval-vector", [6], literal(5), literal([9])),
                    ("int32-extremes", [9], literal(-2**31, I32), literal(2**31 - 1, I32)),
                    ("int64-extremes", [9], literal(-2**63, I64), literal(2**63 - 1, I64)),
                    ("int64-low-range", [9], literal(-2**63, I64), literal(-2**63 + 3, I64)),
                    ("wide-int64-range", [9], literal(-2**62, I64), literal(2**62 + 5, I64)))],
            **SEEDS)
