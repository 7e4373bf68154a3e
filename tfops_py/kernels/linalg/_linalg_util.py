"""What the linear-algebra kernels share: TF's shape functions for batches of matrices (``linalg_ops.cc``),
the input checks of TF's ``LinearAlgebraOp`` base kernel with its messages, the types factorizations run
in, and the way a kernel reaches a library routine the array API lacks (a host round trip through NumPy
or SciPy, documented per op).

Shapes are PartialTensorShapes at build time; kernels see concrete arrays.  Every check raises through
``ctx.invalid_argument`` so the message names the op and the node.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext
from tfops_py.framework.tensor_shape import PartialTensorShape, unknown_shape
from tfops_py.kernels._shape_util import merge_dim, merge_shapes
from tfops_py.kernels.registry import KernelContext

Shape = PartialTensorShape


# -- shape functions ---------------------------------------------------------------------------------
def batch_of(shape: Shape) -> Shape:
    """``Subshape(s, 0, -2)``: the batch dimensions of a shape of rank >= 2 (unknown rank stays unknown)."""
    return shape if shape.unknown_rank() else PartialTensorShape(shape.as_tuple()[:-2])


def concat(batch: Shape, *dims: int) -> Shape:
    """``Concatenate(batch, [dims])``: unknown rank when the batch's rank is unknown."""
    return batch if batch.unknown_rank() else PartialTensorShape(batch.as_tuple() + tuple(dims))


def batch_square(ctx: InferenceContext, shape: Shape, swap: bool = False) -> Shape:
    """``MakeBatchSquareMatrix``: rank >= 2 and the two innermost dimensions merged (TF merges ``-2`` with ``-1``;
    MatrixDeterminant's shape function ``-1`` with ``-2``: ``swap``)."""
    shape = ctx.with_rank_at_least(shape, 2)
    if shape.unknown_rank():
        return shape
    rows, cols = (shape[-1], shape[-2]) if swap else (shape[-2], shape[-1])
    n = merge_dim(ctx, rows, cols)
    return concat(batch_of(shape), n, n)


def unchanged_square(ctx: InferenceContext) -> list[Shape]:
    """``BatchUnchangedSquareShapeFn``."""
    return [batch_square(ctx, ctx.input(0))]


def solve_shape(ctx: InferenceContext, square: bool) -> Shape:
    """``MatrixSolveShapeFn``: lhs ``[..., M, N]`` (square: ``[..., M, M]``), rhs ``[..., M, K]`` with the same batch;
    the result is ``[..., N, K]``."""
    lhs = batch_square(ctx, ctx.input(0)) if square else ctx.with_rank_at_least(ctx.input(0), 2)
    rhs = ctx.with_rank_at_least(ctx.input(1), 2)
    batch = merge_shapes(ctx, batch_of(lhs), batch_of(rhs))
    m = merge_dim(ctx, lhs[-2], rhs[-2])
    n = merge_dim(ctx, m, lhs[-1]) if square else lhs[-1]
    return concat(batch, n, rhs[-1])


def min_dim(a: int, b: int) -> int:
    """``InferenceContext::Min``: unknown unless both are known (or one is 0)."""
    if a == 0 or b == 0:
        return 0
    return -1 if a == -1 or b == -1 else min(a, b)


# -- kernel checks (LinearAlgebraOp::AnalyzeInputs and its Validate* helpers) ----------------------------
def check_matrices(ctx: KernelContext, *arrays: Any, rank_message: str = "Input tensor 0 must have rank >= 2, got {}"
                   ) -> tuple[int, ...]:
    """Input 0 has rank >= 2, every other input its rank and batch dimensions; returns the batch shape."""
    first = arrays[0]
    if first.ndim < 2:
        ctx.invalid_argument(rank_message.format(first.ndim))
    batch = tuple(first.shape[:-2])
    for other in arrays[1:]:
        if other.ndim != first.ndim:
            ctx.invalid_argument("All input tensors must have the same rank.")
        if tuple(other.shape[:-2]) != batch:
            ctx.invalid_argument("All input tensors must have the same outer dimensions.")
    return batch


def check_square(ctx: KernelContext, x: Any, message: str = "Input matrix must be square.") -> None:
    if x.shape[-1] != x.shape[-2]:
        ctx.invalid_argument(message)


def check_solver(ctx: KernelContext, matrix: Any, rhs: Any, square: bool) -> None:
    """``ValidateSquareSolver`` / ``ValidateSolver``."""
    if square and matrix.shape[-1] != matrix.shape[-2]:
        ctx.invalid_argument("First input (lhs) must be a square matrix.")
    if matrix.shape[-2] != rhs.shape[-2]:
        ctx.invalid_argument("Input matrix and rhs are incompatible.")


# -- types -------------------------------------------------------------------------------------------
_WIDE = {DataType.DT_HALF: DataType.DT_FLOAT, DataType.DT_BFLOAT16: DataType.DT_FLOAT}


def widened(ctx: KernelContext, x: Any, dt: DataType | None = None) -> tuple[Any, Callable[[Any], Any]]:
    """``x`` in the type a factorization runs in (half and bfloat16 in float: LAPACK has no half) and the
    function that rounds a result back to ``dt`` (default: the input's type)."""
    dt = dt or ctx.input_dtypes[0]
    wide = _WIDE.get(dt)
    if wide is None:
        return x, lambda y: y
    narrow = ctx.dtype(dt)
    return ctx.xp.astype(x, ctx.dtype(wide)), lambda y: ctx.xp.astype(y, narrow)


def real_dtype(dt: DataType) -> DataType:
    return {DataType.DT_COMPLEX64: DataType.DT_FLOAT, DataType.DT_COMPLEX128: DataType.DT_DOUBLE}.get(dt, dt)


# -- array helpers -----------------------------------------------------------------------------------
def adjoint(xp: Any, x: Any) -> Any:
    """The conjugate transpose of the innermost matrices."""
    t = xp.matrix_transpose(x)
    return xp.conj(t) if xp.isdtype(x.dtype, "complex floating") else t


def hermitian_from_lower(xp: Any, x: Any) -> Any:
    """The Hermitian matrix whose lower triangle is ``x``'s (TF's Cholesky and eigensolvers read only it)."""
    return xp.tril(x) + adjoint(xp, xp.tril(x, k=-1))


def eye_like(xp: Any, x: Any) -> Any:
    """Identity matrices of ``x``'s batch shape and type."""
    n = x.shape[-1]
    return xp.broadcast_to(xp.eye(n, dtype=x.dtype), tuple(x.shape))


def on_host(ctx: KernelContext, fn: Callable[..., Any], *arrays: Any) -> Any:
    """``fn`` on NumPy copies of ``arrays``; its array result(s) back on the session's backend.

    For routines the array API has no counterpart for (LU with pivots, matrix logarithm …): on NumPy this
    costs nothing; on other backends it is a host round trip, said in the op's documentation.
    """
    host = [ctx.host(a) for a in arrays]
    out = fn(*host)
    if isinstance(out, tuple):
        return tuple(ctx.backend.from_numpy(np.ascontiguousarray(o), ctx) for o in out)
    return ctx.backend.from_numpy(np.ascontiguousarray(out), ctx)


def is_numpy(ctx: KernelContext) -> bool:
    return ctx.xp is np


def flat_batch(x: Any, xp: Any) -> Any:
    """``x`` reshaped to ``[batch, rows, cols]`` (one batch dimension)."""
    return xp.reshape(x, (-1,) + tuple(x.shape[-2:])) if x.ndim != 3 else x


def unknown_matrix_batch(shape: Shape, rank_extra: int) -> Shape:
    """An unknown-rank shape stays unknown; else one of rank ``len(batch) + rank_extra`` with unknown dims."""
    return shape if shape.unknown_rank() else unknown_shape(shape.dims() - 2 + rank_extra)


__all__: Sequence[str] = ["adjoint", "batch_of", "batch_square", "check_matrices", "check_solver", "check_square",
                          "concat", "eye_like", "flat_batch", "hermitian_from_lower", "is_numpy", "min_dim",
                          "on_host", "real_dtype", "solve_shape", "unchanged_square", "widened"]
