"""Ops that compute coordinates or shapes: Where (coordinates of true elements), UnravelIndex, BroadcastArgs.

Where's output size depends on the data: it is ``xp.nonzero`` stacked into an ``[n, rank]`` int64 matrix.
UnravelIndex keeps C's truncating ``%`` and ``/`` (negative indices give TF's negative coordinates).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, divergence, literal, values, via_dtype
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import host_ints, num_elements
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


# -- Where ---------------------------------------------------------------------------------------------------
@register_shape("Where")
def _where_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    return [PartialTensorShape([-1, -1 if src.unknown_rank() else src.dims()])]


@register_kernel("Where")
def _where(ctx: KernelContext, condition: Any) -> Any:  # TF names the input "input"
    xp = ctx.xp
    if not 1 <= condition.ndim <= 8:
        ctx.invalid_argument(f"WhereOp : Unhandled input dimensions: {condition.ndim}")
    mask = condition if ctx.input_dtypes[0] == DataType.DT_BOOL else condition != 0
    coords = xp.nonzero(mask)
    return xp.stack([xp.astype(c, xp.int64) for c in coords], axis=1)


# -- UnravelIndex --------------------------------------------------------------------------------------------
@register_shape("UnravelIndex")
def _unravel_index_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    indices = ctx.input(0)
    dims = ctx.with_rank(ctx.input(1), 1)
    if indices.unknown_rank():
        return [unknown_shape()]
    if indices.dims() == 0:
        return [PartialTensorShape([dims[0]])]
    return [PartialTensorShape([dims[0], num_elements(indices)])]


def _eigen_vector(values: list[int]) -> str:
    """A vector as Eigen's ``operator<<`` prints it: entries right-aligned to the widest, space separated."""
    width = max((len(str(v)) for v in values), default=0)
    return " ".join(str(v).rjust(width) for v in values)


def _c_mod_div(xp: Any, a: Any, mod: Any, div: Any) -> Any:
    """``(a % mod) / div`` with C's truncating integer semantics (``mod``, ``div`` > 0)."""
    r = xp.remainder(a, mod)  # floor semantics: in [0, mod)
    r = xp.where((a < 0) & (r != 0), r - mod, r)  # C's remainder takes the sign of a
    q = xp.floor_divide(r, div)
    return xp.where((r < 0) & (xp.remainder(r, div) != 0), q + 1, q)


@register_kernel("UnravelIndex")
def _unravel_index(ctx: KernelContext, indices: Any, dims: Any) -> Any:
    xp = ctx.xp
    if indices.ndim > 1:
        ctx.invalid_argument(f'The indices can only be scalar or vector, got "{format_shape(indices.shape)}"')
    if indices.size == 0:
        ctx.invalid_argument(f"received empty tensor indices: Tensor<type: {ctx.input_dtypes[0].short_name} "
                             f"shape: {format_shape(indices.shape)} values: >")
    d = ctx.host(dims)
    if d.ndim != 1:
        ctx.invalid_argument(f'The indices can only be 1-D, got "{format_shape(d.shape)}"')
    sizes = host_ints(d)
    limit = 2**63 - 1 if ctx.input_dtypes[0] == DataType.DT_INT64 else 2**31 - 1
    prod = 1
    for i, n in enumerate(sizes):
        if n == 0:
            ctx.invalid_argument(f"Input dims cannot contain a dim of zero, but dims contains zero at index {i}")
        if n < 0:
            ctx.invalid_argument(f"Input dims cannot be negative. Got dim = {n} at index {i}")
        if prod > limit // n:
            ctx.invalid_argument(f"Input dims product is causing integer overflow: ({_eigen_vector(sizes)})")
        prod *= n
    if not bool(xp.all(indices < prod)):
        ctx.invalid_argument("index is out of bound as with dims")
    inner = [int(np.prod(sizes[k + 1:], dtype=object)) for k in range(len(sizes))]
    dt = ctx.input_dtypes[0]
    strides = ctx.asarray([n * s for n, s in zip(sizes, inner)], dt)
    shifted = ctx.asarray(inner, dt)
    if indices.ndim == 0:
        return _c_mod_div(xp, indices, strides, shifted)
    return _c_mod_div(xp, indices[None, :], strides[:, None], shifted[:, None])


# -- BroadcastArgs -------------------------------------------------------------------------------------------
@register_shape("BroadcastArgs")
def _broadcast_args_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank(ctx.input(0), 1)
    y = ctx.with_rank(ctx.input(1), 1)
    if x[0] == -1 or y[0] == -1:
        return [PartialTensorShape([-1])]
    return [PartialTensorShape([max(x[0], y[0])])]


def broadcast_shape(a: list[int], b: list[int]) -> list[int] | None:
    """TF's ``BCast`` of two shapes (right-aligned; equal or one of them 1), or None when they do not fit."""
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return out


@register_kernel("BroadcastArgs")
def _broadcast_args(ctx: KernelContext, s0: Any, s1: Any) -> Any:
    a, b = ctx.host(s0), ctx.host(s1)
    for i, v in enumerate((a, b)):
        if v.ndim != 1:
            ctx.invalid_argument(f"In[{i}] must be a vector.{format_shape(v.shape)}")
    out = broadcast_shape(host_ints(a), host_ints(b))
    if out is None:
        ctx.invalid_argument(f"Incompatible shapes: {format_shape(host_ints(a))} vs. "
                             f"{format_shape(host_ints(b))}")
    return ctx.asarray(out, ctx.input_dtypes[0])


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_I32, _I64, _F32 = DataType.DT_INT32, DataType.DT_INT64, DataType.DT_FLOAT
_NAN = float("nan")

conformance("Where", input=values(), compare="exact", cases=[
    case(id="Where/specials", input=literal([[_NAN, 0.0], [-0.0, float("inf")]])),
    case(id="Where/bools", input=literal([[True, False, True], [False, False, True]])),
    case(id="Where/complex", input=literal([0j, 1j, 2 + 0j, 0j])),
    case(id="Where/rank8", T=_F32, shapes={"input": (1, 2, 1, 1, 2, 1, 1, 2)}),
    case(id="Where/rank9", T=_F32, shapes={"input": (1,) * 9}),
    case(id="Where/scalar", T=DataType.DT_BOOL, input=literal(True)),
])
divergence("Where", when="half input", tf="UnimplementedError (its CPU kernel refuses half on purpose)",
           ours="the coordinates, as for any other type", dtypes=(DataType.DT_HALF,),
           reference=via_dtype(_F32, note="TF's Where on the input widened to float32"))
conformance("UnravelIndex", indices=literal([5, 0, 3, 1], _I32), dims=literal([2, 3], _I32), compare="exact",
            shapes=[{"indices": (4,), "dims": (2,)}], cases=[
                case(id="UnravelIndex/scalar", indices=literal(17), dims=literal([4, 1, 5])),
                case(id="UnravelIndex/one_dim", indices=literal([0, 4, 2]), dims=literal([5])),
                case(id="UnravelIndex/negative", indices=literal([-7, -1, 0]), dims=literal([2, 3])),
                case(id="UnravelIndex/int_min", indices=literal(-2**31, _I32), dims=literal([2, 3], _I32)),
                case(id="UnravelIndex/wide", indices=literal([2**40 + 3, 7], _I64), dims=literal([2**21, 2**21], _I64)),
                case(id="UnravelIndex/out_of_bound", indices=literal([6]), dims=literal([2, 3])),
                case(id="UnravelIndex/zero_dim", indices=literal([0]), dims=literal([2, 0])),
                case(id="UnravelIndex/negative_dim", indices=literal([0]), dims=literal([2, -1])),
                case(id="UnravelIndex/overflow", indices=literal([1], _I32), dims=literal([3, 2**30, 5], _I32)),
                case(id="UnravelIndex/empty", indices=literal(np.zeros(0, np.int32)), dims=literal([2, 3], _I32)),
                case(id="UnravelIndex/matrix", indices=literal([[1]]), dims=literal([2, 3])),
                case(id="UnravelIndex/dims_matrix", indices=literal([3]), dims=literal([[2, 3]])),
                case(id="UnravelIndex/no_dims", indices=literal(0, _I32), dims=literal(np.zeros(0, np.int32))),
            ])
conformance("BroadcastArgs", s0=literal([2, 1, 3]), s1=literal([4, 1]), compare="exact",
            shapes=[{"s0": (3,), "s1": (2,)}], cases=[
                case(id="BroadcastArgs/incompatible", s0=literal([2, 1, 3]), s1=literal([4, 2])),
                case(id="BroadcastArgs/zero", s0=literal([0, 1]), s1=literal([1, 5])),
                case(id="BroadcastArgs/negative_with_one", s0=literal([-2]), s1=literal([1])),
                case(id="BroadcastArgs/negative", s0=literal([-2]), s1=literal([3])),
                case(id="BroadcastArgs/empty", s0=literal(np.zeros(0, np.int64)), s1=literal([1, 4], _I64)),
                case(id="BroadcastArgs/matrix", s0=literal([[2]], _I32), s1=literal([4, 2], _I32)),
                case(id="BroadcastArgs/matrix_second", s0=literal([3], _I32), s1=literal([[4]], _I32)),
            ])
