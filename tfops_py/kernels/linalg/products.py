"""Matrix products: MatMul, BatchMatMul (V1: equal batch dimensions), BatchMatMulV2 (broadcast batches),
BatchMatMulV3 (operand and result types of their own); Cross; ConjugateTranspose.

Half and bfloat16 products are summed in float and rounded once, as Eigen's contraction does; integer
products wrap.  BatchMatMulV3 converts both operands to the result type (int8 x int8 -> int32 sums exactly;
int8 x bfloat16 -> bfloat16 in float).  ``grad_a``/``grad_b`` (MatMul) and ``grad_x``/``grad_y`` (V3) are
hints for TF's kernel selection and change nothing.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import (ALLOWED, ShapeRule, case, conformance, divergence, literal, small, uniform, values,
                                  via_dtype)
from tfops_py.errors import FailedPreconditionError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import broadcast_shapes, compute_dtype
from tfops_py.kernels._shape_util import merge_dim, merge_shapes, with_value
from tfops_py.kernels.array.shape_ops import _transpose, _transpose_shape
from tfops_py.kernels.linalg._algorithms import quiet
from tfops_py.kernels.linalg._linalg_domains import permutation_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "linalg"
D = DataType


# -- shapes (TF's MatMulShape / BatchMatMulV2Shape: generic messages; the kernels check with their own) ------
def _inner(a: PartialTensorShape, b: PartialTensorShape, adj_a: bool, adj_b: bool) -> tuple[int, int, int, int]:
    """(rows, inner of a, inner of b, cols) of the product of the innermost matrices."""
    m, k1 = (a[-1], a[-2]) if adj_a else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if adj_b else (b[-2], b[-1])
    return m, k1, k2, n


@register_shape("MatMul")
def _matmul_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = ctx.with_rank(ctx.input(0), 2)
    b = ctx.with_rank(ctx.input(1), 2)
    m, k1, k2, n = _inner(a, b, ctx.attr("transpose_a"), ctx.attr("transpose_b"))
    merge_dim(ctx, k1, k2)
    return [PartialTensorShape((m, n))]


@register_shape("BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = ctx.with_rank_at_least(ctx.input(0), 2)
    b = ctx.with_rank_at_least(ctx.input(1), 2)
    if a.unknown_rank() or b.unknown_rank():
        return [unknown_shape()]
    m, k1, k2, n = _inner(a, b, ctx.attr("adj_x"), ctx.attr("adj_y"))
    merge_dim(ctx, k1, k2)
    batch = broadcast_shapes(ctx, PartialTensorShape(a.as_tuple()[:-2]), PartialTensorShape(b.as_tuple()[:-2]))
    return [PartialTensorShape(batch.as_tuple() + (m, n))]


def _matmul_dims(ctx: Any, a: PartialTensorShape, b: PartialTensorShape, adj_a: bool, adj_b: bool) -> None:
    """The kernels' check of the inner dimensions, with their message."""
    _, k1, k2, _ = _inner(a, b, adj_a, adj_b)
    if k1 != k2:
        ctx.invalid_argument(f"Matrix size-incompatible: In[0]: {a}, In[1]: {b}")


def _batch_matmul_dims(ctx: Any, a: PartialTensorShape, b: PartialTensorShape) -> None:
    """BatchMatMulV2/V3's kernel checks, in its order."""
    if a.dims() < 2 or b.dims() < 2:
        i, s = (0, a) if a.dims() < 2 else (1, b)
        ctx.invalid_argument(f"In[{i}] ndims must be >= 2: {s.dims()}")
    try:
        np.broadcast_shapes(a.as_tuple()[:-2], b.as_tuple()[:-2])
    except ValueError:
        ctx.invalid_argument(f"In[0] and In[1] must have compatible batch dimensions: {a} vs. {b}")
    _matmul_dims(ctx, a, b, ctx.attrs["adj_x"], ctx.attrs["adj_y"])


@register_shape("BatchMatMul")
def _batch_matmul_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's v1 shape function: equal ranks >= 2, equal batch dimensions (no broadcasting)."""
    a = ctx.with_rank_at_least(ctx.input(0), 2)
    b = ctx.with_rank_at_least(ctx.input(1), 2)
    if a.unknown_rank() or b.unknown_rank():
        return [unknown_shape()]
    batch = merge_shapes(ctx, PartialTensorShape(a.as_tuple()[:-2]), PartialTensorShape(b.as_tuple()[:-2]))
    m, k1, k2, n = _inner(a, b, ctx.attr("adj_x"), ctx.attr("adj_y"))
    merge_dim(ctx, k1, k2)
    return [PartialTensorShape(batch.as_tuple() + (m, n))]


# -- kernels -----------------------------------------------------------------------------------------
def matmul(xp: Any, a: Any, b: Any, adj_a: bool = False, adj_b: bool = False, conj: bool = False) -> Any:
    """``op(a) @ op(b)`` with op a transpose (``conj``: a conjugate transpose) where asked: the core every
    product kernel (and Einsum) calls."""
    if adj_a:
        a = xp.matrix_transpose(xp.conj(a) if conj else a)
    if adj_b:
        b = xp.matrix_transpose(xp.conj(b) if conj else b)
    return xp.matmul(a, b)


def _product(ctx: KernelContext, a: Any, b: Any, adj_a: bool, adj_b: bool, conj: bool) -> Any:
    """The product in the output type: half/bfloat16 summed in float and rounded once; other operand types
    converted to the output type first (BatchMatMulV3)."""
    xp = ctx.xp
    dt = ctx.output_dtypes[0]
    wide = ctx.dtype(compute_dtype(dt))
    if a.dtype != wide:
        a = xp.astype(a, wide)
    if b.dtype != wide:
        b = xp.astype(b, wide)
    out = matmul(xp, a, b, adj_a, adj_b, conj)
    return out if compute_dtype(dt) == dt else xp.astype(out, ctx.dtype(dt))


@register_kernel("MatMul")
def _matmul(ctx: KernelContext, a: Any, b: Any) -> Any:
    if a.ndim != 2 or b.ndim != 2:
        ctx.invalid_argument(f"In[0] and In[1] has different ndims: {format_shape(a.shape)} vs. "
                             f"{format_shape(b.shape)}" if a.ndim != b.ndim else
                             f"In[0] is not a matrix. Instead it has shape {format_shape(a.shape)}")
    attrs = ctx.attrs
    _matmul_dims(ctx, PartialTensorShape(a.shape), PartialTensorShape(b.shape),
                 attrs["transpose_a"], attrs["transpose_b"])
    return _product(ctx, a, b, attrs["transpose_a"], attrs["transpose_b"], conj=False)


@register_kernel("BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul(ctx: KernelContext, x: Any, y: Any) -> Any:
    _batch_matmul_dims(ctx, PartialTensorShape(x.shape), PartialTensorShape(y.shape))
    return _product(ctx, x, y, ctx.attrs["adj_x"], ctx.attrs["adj_y"], conj=ctx.output_dtypes[0].is_complex)


@register_kernel("BatchMatMul")
def _batch_matmul_v1(ctx: KernelContext, x: Any, y: Any) -> Any:
    sx, sy = format_shape(x.shape), format_shape(y.shape)
    if x.ndim != y.ndim:
        ctx.invalid_argument(f"In[0] and In[1] has different ndims: {sx} vs. {sy}")
    if x.ndim < 2:
        ctx.invalid_argument(f"In[0] and In[1] ndims must be >= 2: {x.ndim}")
    for i in range(x.ndim - 2):
        if x.shape[i] != y.shape[i]:
            ctx.invalid_argument(f"In[0].dim({i}) and In[1].dim({i}) must be the same: {sx} vs {sy}")
    _matmul_dims(ctx, PartialTensorShape(x.shape), PartialTensorShape(y.shape), ctx.attrs["adj_x"],
                 ctx.attrs["adj_y"])
    return _product(ctx, x, y, ctx.attrs["adj_x"], ctx.attrs["adj_y"], conj=ctx.output_dtypes[0].is_complex)


# -- Cross -------------------------------------------------------------------------------------------
@register_shape("Cross")
def _cross_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = ctx.with_rank_at_least(ctx.input(0), 1)
    out = merge_shapes(ctx, a, ctx.input(1))
    if not out.unknown_rank() and out.dims() > 0:
        with_value(ctx, out[-1], 3)
    return [out]


@register_kernel("Cross")
def _cross(ctx: KernelContext, a: Any, b: Any) -> Any:
    if a.ndim < 1:
        ctx.invalid_argument(f"Input must be at least 1D{format_shape(a.shape)}")
    if tuple(a.shape) != tuple(b.shape):
        ctx.invalid_argument(f"Both inputs must be of same shape: {format_shape(a.shape)} vs. {format_shape(b.shape)}")
    if a.shape[-1] != 3:
        raise ctx.error(FailedPreconditionError, "Cross-products are only defined for 3-element vectors.")
    xp = ctx.xp
    dt = ctx.output_dtypes[0]
    wide = compute_dtype(dt)
    if wide != dt:  # half/bfloat16: each product rounded, as Eigen's element-wise expression
        a, b = xp.astype(a, ctx.dtype(wide)), xp.astype(b, ctx.dtype(wide))
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    with quiet(xp):  # integers wrap, as TF's
        out = xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return out if wide == dt else xp.astype(out, ctx.dtype(dt))


# -- ConjugateTranspose ------------------------------------------------------------------------------
register_shape("ConjugateTranspose")(_transpose_shape)


@register_kernel("ConjugateTranspose")
def _conjugate_transpose(ctx: KernelContext, x: Any, perm: Any) -> Any:
    """Transpose's checks and permutation, then the complex conjugate (other types: Transpose)."""
    out = _transpose(ctx, x, perm)
    return ctx.xp.conj(out) if ctx.input_dtypes[0].is_complex else out


# -- conformance ---------------------------------------------------------------------------------------
class ProductShapes(ShapeRule):
    """Matrix products: inner dimensions that agree (as the transpose/adjoint attrs say), 0..5 each; batch
    dimensions that broadcast (BatchMatMulV2/V3) or are equal (``same_batch``: BatchMatMul)."""

    def __init__(self, a: str, b: str, ta: str, tb: str, fixed: list[dict[str, Any]], batched: bool = True,
                 same_batch: bool = False):
        self.names, self.fixed, self.batched, self.same_batch = (a, b, ta, tb), fixed, batched, same_batch

    def patterns(self) -> list[dict[str, Any]]:
        return self.fixed

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        a, b, ta, tb = self.names
        m, k, n = (int(v) for v in rng.integers(0, 6, 3))
        t_a, t_b = (bool(v) for v in rng.integers(0, 2, 2))
        batch_a, batch_b = broadcastable_batches(rng) if self.batched else ((), ())
        if self.same_batch:
            batch_b = batch_a
        return {a: batch_a + ((k, m) if t_a else (m, k)), b: batch_b + ((n, k) if t_b else (k, n)), ta: t_a, tb: t_b}


def broadcastable_batches(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two batch shapes of ranks 0..3 that broadcast together (some dims 1, some leading dims missing)."""
    base = [int(v) for v in rng.integers(1, 4, int(rng.integers(0, 4)))]
    out = []
    for _ in range(2):
        dims = [1 if rng.integers(0, 3) == 0 else d for d in base]
        out.append(tuple(dims[int(rng.integers(0, len(dims) + 1)):]))
    return out[0], out[1]


conformance("MatMul", a=small(), b=small(), compare="acc", live=30, shapes=ProductShapes(
    "a", "b", "transpose_a", "transpose_b", [
        dict(a=(3, 4), b=(4, 5)), dict(a=(4, 3), b=(4, 5), transpose_a=True),
        dict(a=(3, 4), b=(5, 4), transpose_b=True), dict(a=(4, 3), b=(5, 4), transpose_a=True, transpose_b=True),
        dict(a=(2, 0), b=(0, 3)), dict(a=(0, 3), b=(3, 2)), dict(a=(3, 4), b=(3, 5)), dict(a=(2, 3, 4), b=(4, 5))],
    batched=False))
_BATCH_PATTERNS = [
    dict(x=(2, 1, 3, 4), y=(5, 4, 2)), dict(x=(3, 4), y=(2, 4, 5)), dict(x=(2, 4, 3), y=(2, 4, 5), adj_x=True),
    dict(x=(1, 2, 3), y=(2, 4, 3), adj_y=True), dict(x=(0, 3, 4), y=(4, 2)), dict(x=(3, 0), y=(0, 2)),
    dict(x=(2, 3, 4), y=(3, 4, 5)), dict(x=(4,), y=(4, 2)), dict(x=(2, 3, 4), y=(2, 5, 2))]
conformance("BatchMatMulV2", x=small(), y=small(), compare="acc", live=30, shapes=ProductShapes(
    "x", "y", "adj_x", "adj_y", _BATCH_PATTERNS))
conformance("BatchMatMul", x=small(), y=small(), compare="acc", live=20, shapes=ProductShapes(
    "x", "y", "adj_x", "adj_y", [
        dict(x=(2, 3, 4), y=(2, 4, 5)), dict(x=(3, 4), y=(4, 2)), dict(x=(2, 4, 3), y=(2, 4, 5), adj_x=True),
        dict(x=(1, 2, 3), y=(1, 4, 3), adj_y=True), dict(x=(0, 3, 4), y=(0, 4, 2)), dict(x=(1, 3, 4), y=(3, 4, 5)),
        dict(x=(2, 3, 4), y=(4, 5)), dict(x=(4,), y=(4,))], same_batch=True))
conformance("BatchMatMulV3", x=uniform(-8, 8), y=uniform(-8, 8), Ta=ALLOWED, Tb=ALLOWED, Tout=ALLOWED, compare="acc",
            live=20, shapes=ProductShapes("x", "y", "adj_x", "adj_y", _BATCH_PATTERNS))
conformance("Cross", compare="acc", shapes=[dict(a=(3,), b=(3,)), dict(a=(2, 3), b=(2, 3)),
                                            dict(a=(2, 0, 3), b=(2, 0, 3)),
                                            dict(a=(4, 3), b=(3,)), dict(a=(2, 4), b=(2, 4)), dict(a=(), b=()),
                                            dict(a=(2, 3), b=(1, 3))])
conformance("ConjugateTranspose", perm=permutation_of("x"), live=10,
            cases=[case(x=values(), perm=literal(p, D.DT_INT32), shapes={"x": (2, 3)}, id=f"ConjugateTranspose/bad{k}")
                   for k, p in enumerate(([0, 0], [0, 2], [1], [[1, 0]]))])

_UNSIGNED = (D.DT_UINT8, D.DT_UINT16, D.DT_UINT32, D.DT_UINT64)
divergence("MatMul", when="unsigned integer inputs", tf="no kernel", ours="computed (wrapping)",
           dtypes=_UNSIGNED, reference=via_dtype(D.DT_INT64, "TF has no unsigned MatMul kernel: the value "
                                                             "is TF's int64 product, wrapped to the type"))
divergence("BatchMatMulV3", when="operand and result types without a TF CPU kernel (e.g. float x float -> double, "
                                 "int32 x int8 -> int32)",
           tf="no kernel (NotFoundError)", ours="both operands converted to the result type, then multiplied")
divergence("ConjugateTranspose", when="string tensors (that need moving)", dtypes=(D.DT_STRING,),
           tf="aborts the process (a failed CHECK: strings cannot be copied with memcpy)",
           ours="Transpose's result (strings have no conjugate)")
