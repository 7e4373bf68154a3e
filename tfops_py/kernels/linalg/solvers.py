"""Linear solvers: MatrixSolve, MatrixTriangularSolve, MatrixSolveLs (and their Batch* forms),
BandedTriangularSolve, TridiagonalSolve and TridiagonalMatMul.

MatrixSolve is LAPACK's LU solve (TF: Eigen's PartialPivLU, the same pivots) with TF's singularity rule; the
triangular, banded and tridiagonal solves substitute row by row over the whole batch (``_algorithms``), so a
zero pivot gives TF's inf/NaN rather than an error; MatrixSolveLs solves the normal equations by Cholesky
(``fast``) or takes the minimum-norm least-squares solution (the pseudo-inverse; TF: a complete orthogonal
decomposition, equal for full-rank and rank-deficient inputs alike).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, case, conformance, divergence, literal, reference
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import broadcast_shapes
from tfops_py.kernels._shape_util import merge_dim, merge_shapes, with_value
from tfops_py.kernels.linalg import _algorithms as alg
from tfops_py.kernels.linalg._linalg_domains import magnitudes, matrices, scalar, tridiagonal
from tfops_py.kernels.linalg._linalg_util import (adjoint, batch_of, batch_square, check_matrices, check_solver,
                                                  concat, hermitian_from_lower, solve_shape)
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "linalg"
D = DataType


def lu_solve_fails(xp: Any, a: Any) -> bool:
    """Whether TF's PartialPivLU check rejects some matrix of ``a``: its smallest pivot modulus (Eigen's
    ``minCoeff``: the first pivot unless a later one is smaller) is not ``> 0``.  LAPACK raises for an exact
    zero pivot; the first pivot is NaN exactly when ``a[0, 0]`` is (a NaN is never picked as a later pivot)."""
    return a.shape[-1] > 0 and bool(xp.any(xp.isnan(xp.abs(a[..., 0, 0]))))


# -- MatrixSolve ---------------------------------------------------------------------------------------
register_shape("MatrixSolve")(lambda ctx: [solve_shape(ctx, square=True)])


@register_kernel("MatrixSolve")
def _matrix_solve(ctx: KernelContext, matrix: Any, rhs: Any) -> Any:
    """``op(matrix) x = rhs``, op the adjoint with ``adjoint``; an exactly singular matrix (or one whose first
    pivot is NaN) is TF's error unless there is nothing to solve."""
    check_matrices(ctx, matrix, rhs)
    check_solver(ctx, matrix, rhs, square=True)
    xp = ctx.xp
    if matrix.shape[-1] == 0 or rhs.shape[-1] == 0 or rhs.size == 0:
        return xp.zeros_like(rhs)
    a = adjoint(xp, matrix) if ctx.attrs["adjoint"] else matrix
    if lu_solve_fails(xp, a):
        ctx.invalid_argument("Input matrix is not invertible.")
    with alg.quiet(xp):
        try:
            return xp.linalg.solve(a, rhs)
        except (ValueError, ArithmeticError):
            ctx.invalid_argument("Input matrix is not invertible.")


# -- MatrixTriangularSolve ---------------------------------------------------------------------------------
@register_shape("MatrixTriangularSolve")
def _triangular_solve_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """Batch dimensions broadcast (as BatchMatMulV2)."""
    lhs = batch_square(ctx, ctx.input(0))
    rhs = ctx.with_rank_at_least(ctx.input(1), 2)
    if lhs.unknown_rank() or rhs.unknown_rank():
        return [PartialTensorShape()]
    batch = broadcast_shapes(ctx, batch_of(lhs), batch_of(rhs))
    m = merge_dim(ctx, lhs[-2], rhs[-2])
    return [concat(batch, merge_dim(ctx, m, lhs[-1]), rhs[-1])]


def _broadcast_batches(ctx: KernelContext, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` with their batch dimensions broadcast to a common shape (TF's MatMulBCast)."""
    try:
        batch = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        ctx.invalid_argument(f"In[0] and In[1] must have compatible batch dimensions: {format_shape(a.shape)} vs. "
                             f"{format_shape(b.shape)}")
    xp = ctx.xp
    return xp.broadcast_to(a, batch + tuple(a.shape[-2:])), xp.broadcast_to(b, batch + tuple(b.shape[-2:]))


def _check_ndims(ctx: KernelContext, a: Any, b: Any) -> None:
    for i, x in enumerate((a, b)):
        if x.ndim < 2:
            ctx.invalid_argument(f"In[{i}] ndims must be >= 2: {x.ndim}")


@register_kernel("MatrixTriangularSolve")
def _matrix_triangular_solve(ctx: KernelContext, matrix: Any, rhs: Any) -> Any:
    """Only ``matrix``'s ``lower`` (or upper) triangle is read; a zero on its diagonal gives inf/NaN."""
    _check_ndims(ctx, matrix, rhs)
    a, b = _broadcast_batches(ctx, matrix, rhs)
    rows, cols = matrix.shape[-2], matrix.shape[-1]
    if rows != cols:
        ctx.invalid_argument(f"In[0] matrices in the last dimensions must be square ({cols} =/= {rows})")
    lower, adj = ctx.attrs["lower"], ctx.attrs["adjoint"]
    if cols != rhs.shape[-2]:
        ctx.invalid_argument(f"In[0] mismatch In[1] shape: {cols} vs. {rhs.shape[-2]}: {format_shape(matrix.shape)} "
                             f"{format_shape(rhs.shape)} {int(lower)} {int(adj)}")
    return alg.triangular_solve(ctx.xp, a, b, lower, adj)


# -- MatrixSolveLs -----------------------------------------------------------------------------------------
@register_shape("MatrixSolveLs")
def _solve_ls_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(2), 0)
    return [solve_shape(ctx, square=False)]


_RANK_DEFICIENT = ("Input matrix was rank deficient or ill-conditioned. Try setting fast=False or provide a larger "
                   "l2_regularizer > 0.")


@register_kernel("MatrixSolveLs")
def _matrix_solve_ls(ctx: KernelContext, matrix: Any, rhs: Any, l2_regularizer: Any) -> Any:
    """The least-squares solution ``X`` of ``matrix X = rhs`` (``[..., N, K]``).  ``fast``: the normal equations
    ``(A^H A + l2 I) X = A^H B`` (or ``X = A^H (A A^H + l2 I)^-1 B`` when M < N) by Cholesky, TF's error when
    the Gramian is not positive definite; otherwise the minimum-norm solution (``l2_regularizer`` ignored,
    as TF).  An empty system (M, N or K zero) gives zeros."""
    check_matrices(ctx, matrix, rhs)
    check_solver(ctx, matrix, rhs, square=False)
    xp = ctx.xp
    m, n, k = matrix.shape[-2], matrix.shape[-1], rhs.shape[-1]
    out_shape = tuple(matrix.shape[:-2]) + (n, k)
    if 0 in matrix.shape[:-2]:
        return xp.zeros(out_shape, dtype=matrix.dtype)
    l2 = ctx.host(l2_regularizer)
    if l2.ndim != 0:
        ctx.invalid_argument(f"l2_regularizer must be scalar, got shape {format_shape(l2.shape)}")
    if not float(l2) >= 0:
        ctx.invalid_argument("l2_regularizer must be >= 0.")
    if 0 in (m, n, k):
        return xp.zeros(out_shape, dtype=matrix.dtype)
    a_h = adjoint(xp, matrix)
    with alg.quiet(xp):
        if not ctx.attrs["fast"]:
            return _minimum_norm(xp, matrix, rhs)
        over = m >= n
        gram = xp.matmul(a_h, matrix) if over else xp.matmul(matrix, a_h)
        gram = hermitian_from_lower(xp, gram)
        if float(l2) > 0:
            gram = gram + float(l2) * xp.eye(gram.shape[-1], dtype=gram.dtype)
        _, failed = alg.cholesky(xp, gram)
        if failed is not None and bool(xp.any(failed)):
            ctx.invalid_argument(_RANK_DEFICIENT)
        if over:
            return xp.linalg.solve(gram, xp.matmul(a_h, rhs))
        return xp.matmul(a_h, xp.linalg.solve(gram, rhs))


def _minimum_norm(xp: Any, a: Any, b: Any) -> Any:
    """``pinv(a) b``; matrices with a NaN or infinite entry give NaN."""
    bad = ~xp.all(xp.isfinite(a), axis=(-2, -1))
    clean = xp.where(bad[..., None, None], xp.zeros_like(a), a)
    x = xp.matmul(xp.linalg.pinv(clean), b)
    nan = complex(np.nan, np.nan) if xp.isdtype(x.dtype, "complex floating") else np.nan
    return xp.where(bad[..., None, None], xp.full_like(x, nan), x)


# -- BandedTriangularSolve ---------------------------------------------------------------------------------
@register_shape("BandedTriangularSolve")
def _banded_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    lhs = ctx.with_rank_at_least(ctx.input(0), 2)
    rhs = ctx.with_rank_at_least(ctx.input(1), 2)
    if lhs.unknown_rank() or rhs.unknown_rank():
        return [PartialTensorShape()]
    bands, m = lhs[-2], lhs[-1]
    if bands == 0:
        ctx.invalid_argument(f"Number of bands must be positive, but is {bands}")
    if bands != -1 and m != -1 and bands > m:
        ctx.invalid_argument(f"Number of bands {bands} cannot exceed the size of the matrix {m}")
    batch = broadcast_shapes(ctx, batch_of(lhs), batch_of(rhs))
    return [concat(batch, merge_dim(ctx, m, rhs[-2]), rhs[-1])]


def _debug_string(ctx: KernelContext, i: int, x: Any) -> str:
    """TF's ``Tensor::DebugString`` of an empty tensor."""
    return f"Tensor<type: {ctx.input_dtypes[i].short_name} shape: {format_shape(x.shape)} values: >"


@register_kernel("BandedTriangularSolve")
def _banded_triangular_solve(ctx: KernelContext, matrix: Any, rhs: Any) -> Any:
    """Band storage: see ``_algorithms.banded_triangular_solve``.  A zero on the diagonal is TF's error
    (TF checks only the first matrix of the batch; here every matrix)."""
    _check_ndims(ctx, matrix, rhs)
    for i, x in enumerate((matrix, rhs)):
        if x.size == 0:
            ctx.invalid_argument(f"In[{i}] must not be an empty tensor: {_debug_string(ctx, i, x)}")
    a, b = _broadcast_batches(ctx, matrix, rhs)
    lower, adj = ctx.attrs["lower"], ctx.attrs["adjoint"]
    m = matrix.shape[-1]
    if m != rhs.shape[-2]:
        ctx.invalid_argument(f"In[0] mismatch In[1] shape: {m} vs. {rhs.shape[-2]}: {format_shape(matrix.shape)} "
                             f"{format_shape(rhs.shape)} {int(lower)} {int(adj)}")
    xp = ctx.xp
    diagonal = matrix[..., 0 if lower else matrix.shape[-2] - 1, :]
    if not bool(xp.all(xp.abs(diagonal) > 0)):
        ctx.invalid_argument("Input matrix is not invertible.")
    return alg.banded_triangular_solve(xp, a, b, lower, adj)


# -- TridiagonalSolve ---------------------------------------------------------------------------------------
@register_shape("TridiagonalSolve")
def _tridiagonal_solve_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    lhs = ctx.with_rank_at_least(ctx.input(0), 2)
    rhs = ctx.with_rank_at_least(ctx.input(1), 2)
    if lhs.unknown_rank() or rhs.unknown_rank():
        return [rhs]
    with_value(ctx, lhs[-2], 3)
    batch = merge_shapes(ctx, batch_of(lhs), batch_of(rhs))
    return [concat(batch, merge_dim(ctx, lhs[-1], rhs[-2]), rhs[-1])]


@register_kernel("TridiagonalSolve")
def _tridiagonal_solve(ctx: KernelContext, diagonals: Any, rhs: Any) -> Any:
    """``diagonals`` is ``[..., 3, M]``: superdiagonal (last entry ignored), diagonal, subdiagonal (first
    ignored).  A singular system gives NaN (TF logs a warning); ``perturb_singular`` perturbs tiny pivots."""
    pivoting, perturb = ctx.attrs["partial_pivoting"], ctx.attrs["perturb_singular"]
    if perturb and not pivoting:
        ctx.invalid_argument("Setting perturb_singular requires also setting partial_pivoting.")
    check_matrices(ctx, diagonals, rhs)
    if diagonals.shape[-2] != 3:
        ctx.invalid_argument(f"Expected diagonals to be provided as a matrix with 3 rows, got "
                             f"{diagonals.shape[-2]} rows.")
    if diagonals.shape[-1] != rhs.shape[-2]:
        ctx.invalid_argument(f"Expected the same number of left-hand sides and right-hand sides, got "
                             f"{diagonals.shape[-1]} and {rhs.shape[-2]}.")
    xp = ctx.xp
    sup, diag, sub = diagonals[..., 0, :], diagonals[..., 1, :], diagonals[..., 2, :]
    if perturb:
        return alg.tridiagonal_solve_perturbed(xp, sup, diag, sub, rhs)
    return alg.tridiagonal_solve(xp, sup, diag, sub, rhs, pivoting)


# -- TridiagonalMatMul --------------------------------------------------------------------------------------
@register_shape("TridiagonalMatMul")
def _tridiagonal_matmul_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    diags = [ctx.with_rank_at_least(ctx.input(i), 2) for i in range(3)]
    rhs = ctx.with_rank_at_least(ctx.input(3), 2)
    diag = merge_shapes(ctx, diags[2], merge_shapes(ctx, diags[0], diags[1]))
    if diag.unknown_rank() or rhs.unknown_rank():
        return [rhs]
    with_value(ctx, diag[-2], 1)
    batch = merge_shapes(ctx, batch_of(diag), batch_of(rhs))
    return [concat(batch, merge_dim(ctx, diag[-1], rhs[-2]), rhs[-1])]


@register_kernel("TridiagonalMatMul")
def _tridiagonal_matmul(ctx: KernelContext, superdiag: Any, maindiag: Any, subdiag: Any, rhs: Any) -> Any:
    """``T rhs`` for the tridiagonal ``T`` whose diagonals are the ``[..., 1, M]`` inputs (the superdiagonal's
    last and the subdiagonal's first entries are ignored)."""
    check_matrices(ctx, superdiag, maindiag, subdiag, rhs)
    m = rhs.shape[-2]
    for x, what in ((superdiag, "superdiagonal"), (maindiag, "main diagonal"), (subdiag, "subdiagonal")):
        if tuple(x.shape[-2:]) != (1, m):
            ctx.invalid_argument(f"Invalid {what} shape.")
    xp = ctx.xp
    sup, diag, sub = (xp.matrix_transpose(d) for d in (superdiag, maindiag, subdiag))  # [..., M, 1] columns
    out = diag * rhs
    if m > 1:
        above = sup[..., :-1, :] * rhs[..., 1:, :]
        below = sub[..., 1:, :] * rhs[..., :-1, :]
        zero = xp.zeros_like(rhs[..., :1, :])
        out = out + xp.concat([above, zero], axis=-2) + xp.concat([zero, below], axis=-2)
    return out


# -- conformance -------------------------------------------------------------------------------------------
def _pairs(*items: tuple[tuple[int, ...], tuple[int, ...]], names: tuple[str, str] = ("matrix", "rhs"),
           **attrs: object) -> list[dict[str, object]]:
    return [{names[0]: a, names[1]: b, **attrs} for a, b in items]


_NAN = float("nan")
conformance("MatrixSolve", matrix=matrices("invertible"), compare="lin", adjoint=BOOL, live=10, shapes=_pairs(
    ((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((2, 1, 2, 2), (2, 1, 2, 3)), ((0, 0), (0, 2)), ((3, 3), (3, 0)),
    ((2, 0, 3, 3), (2, 0, 3, 1)), ((2, 3), (2, 1)), ((3, 3), (4, 1)), ((3, 3), (3,)), ((4, 2, 2), (3, 2, 1)),
    ((4, 2, 2), (2, 1))),
    cases=[case(matrix=literal(m), rhs=literal([[1.0], [2.0]])) for m in (
        [[1.0, 2.0], [2.0, 4.0]], [[_NAN, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, _NAN]], [[0.0, 0.0], [0.0, 0.0]])]
    + [case(matrix=literal([[1.0, 2.0], [2.0, 4.0]]), rhs=literal([[], []]), id="MatrixSolve/singular_no_rhs")])
conformance("MatrixTriangularSolve", matrix=matrices("triangular"), compare="lin", lower=BOOL, adjoint=BOOL, live=10,
            shapes=_pairs(((3, 3), (3, 2)), ((2, 4, 4), (2, 4, 1)), ((4, 2, 2), (2, 3)), ((1, 3, 3), (2, 3, 2)),
                          ((2, 1, 3, 3), (4, 3, 1)), ((0, 0), (0, 2)), ((3, 3), (3, 0)), ((2, 3), (2, 1)),
                          ((3, 3), (4, 1)), ((3, 3), (3,)), ((3,), (3, 1)), ((4, 2, 2), (3, 2, 1))),
            cases=[case(matrix=literal([[0.0, 0.0], [1.0, 2.0]], t), rhs=literal([[1.0], [2.0]], t),
                        id=f"MatrixTriangularSolve/zero_pivot/{t.short_name}") for t in (D.DT_FLOAT, D.DT_DOUBLE)])
conformance("MatrixSolveLs", matrix=matrices(), l2_regularizer=scalar(0.0, 1.0), compare="lin", fast=BOOL, live=10,
            shapes=_pairs(((4, 3), (4, 2)), ((3, 4), (3, 2)), ((2, 5, 3), (2, 5, 1)), ((2, 2, 3), (2, 2, 2)),
                          ((3, 3), (3, 0)), ((3, 0), (3, 2)), ((0, 2, 3), (0, 2, 1)), ((0, 3), (0, 2)),
                          ((3, 2), (2, 1)), ((3, 2), (3,)), ((4, 3, 2), (3, 3, 1))),
            cases=[case(matrix=literal([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]), rhs=literal([[1.0], [1.0], [1.0]]),
                        l2_regularizer=literal(l2, D.DT_DOUBLE), fast=fast, id=f"MatrixSolveLs/ones/{l2}/{fast}")
                   for l2 in (0.0, 1.0) for fast in (True, False)]
            + [case(matrix=literal([[1.0, 2.0], [3.0, 4.0]]), rhs=literal([[1.0], [1.0]]),
                    l2_regularizer=literal(v, D.DT_DOUBLE), id=f"MatrixSolveLs/l2/{i}")
               for i, v in enumerate((-1.0, [0.5, 0.5], _NAN))])
conformance("BandedTriangularSolve", matrix=magnitudes(), compare="lin", lower=BOOL, adjoint=BOOL, live=10,
            shapes=_pairs(((2, 4), (4, 2)), ((3, 4), (4, 1)), ((1, 3), (3, 2)), ((4, 4), (4, 1)),
                          ((2, 1, 2, 3), (3, 3, 1)), ((2, 3, 5), (5, 2)), ((5, 3), (3, 1)), ((2, 3), (2, 1)),
                          ((0, 3), (3, 1)), ((2, 3), (3, 0)), ((2,), (2, 1)), ((3, 2, 3), (2, 3, 1))),
            cases=[case(matrix=literal([[1.0, 0.0, 3.0], [4.0, 5.0, 6.0]]), rhs=literal([[1.0], [2.0], [3.0]]),
                        lower=lower, id=f"BandedTriangularSolve/zero_pivot/{lower}") for lower in (True, False)])
conformance("TridiagonalSolve", diagonals=tridiagonal(), compare="lin", partial_pivoting=BOOL, perturb_singular=BOOL,
            live=10, shapes=_pairs(((3, 4), (4, 2)), ((2, 3, 5), (2, 5, 1)), ((3, 1), (1, 2)), ((3, 2), (2, 3)),
                                   ((3, 0), (0, 2)), ((2, 3), (3, 2)), ((3, 3), (4, 2)), ((3,), (3, 2)),
                                   ((3, 3), (3,)), ((2, 3, 3), (3, 3, 2)), names=("diagonals", "rhs")),
            cases=[case(diagonals=literal(d), rhs=literal([[1.0, 2.0]] * 3), partial_pivoting=p, perturb_singular=q,
                        id=f"TridiagonalSolve/singular/{k}/{p}/{q}")
                   for k, d in enumerate(([[0.0] * 3] * 3, [[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]],
                                          [[2.0, 1.0, 0.0], [0.0, 3.0, 1.0], [0.0, 4.0, 2.0]]))
                   for p, q in ((True, False), (False, False), (True, True))])
conformance("TridiagonalMatMul", compare="acc", live=10, shapes=[
    dict(superdiag=(1, 4), maindiag=(1, 4), subdiag=(1, 4), rhs=(4, 2)),
    dict(superdiag=(2, 1, 3), maindiag=(2, 1, 3), subdiag=(2, 1, 3), rhs=(2, 3, 5)),
    dict(superdiag=(1, 1), maindiag=(1, 1), subdiag=(1, 1), rhs=(1, 2)),
    dict(superdiag=(1, 0), maindiag=(1, 0), subdiag=(1, 0), rhs=(0, 2)),
    dict(superdiag=(1, 3), maindiag=(1, 3), subdiag=(1, 3), rhs=(4, 2)),
    dict(superdiag=(2, 3), maindiag=(1, 3), subdiag=(1, 3), rhs=(3, 2)),
    dict(superdiag=(1, 3), maindiag=(1, 3), subdiag=(1, 4), rhs=(3, 2)),
    dict(superdiag=(3,), maindiag=(1, 3), subdiag=(1, 3), rhs=(3, 2)),
    dict(superdiag=(1, 3), maindiag=(1, 3), subdiag=(1, 3), rhs=(3,)),
    dict(superdiag=(2, 1, 3), maindiag=(2, 1, 3), subdiag=(2, 1, 3), rhs=(3, 3, 5))])

divergence("MatrixSolveLs", when="an empty system: M = 0 rows with N, K > 0",
           tf="returns uninitialised memory", ours="zeros (the minimum-norm solution)",
           applies=lambda inputs, attrs: np.shape(inputs["matrix"])[-2] == 0 and np.size(inputs["rhs"]) == 0
           and 0 not in np.shape(inputs["matrix"])[:-2] and np.shape(inputs["matrix"])[-1] > 0
           and np.shape(inputs["rhs"])[-1] > 0,
           reference=reference("tfops_py.kernels.linalg._linalg_cases:zeros_like_solution",
                               "TF returns uninitialised memory for M = 0: the expected value is the zero solution"))
divergence("BandedTriangularSolve", when="a zero on the diagonal of a matrix after the first of the batch",
           tf="checks only the first matrix: the others divide by zero (inf/NaN)",
           ours="TF's error for any matrix of the batch (\"Input matrix is not invertible.\")")



def _solve_fails(inputs: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    """Whether a tridiagonal system meets a zero pivot (the answer is NaN), by this module's own algorithm."""
    diags, rhs = np.asarray(inputs["diagonals"]), np.asarray(inputs["rhs"])
    if (diags.ndim < 2 or rhs.ndim != diags.ndim or diags.shape[-2] != 3 or diags.shape[-1] != rhs.shape[-2]
            or diags.shape[:-2] != rhs.shape[:-2] or attrs.get("perturb_singular")):
        return False
    out = alg.tridiagonal_solve(np, diags[..., 0, :], diags[..., 1, :], diags[..., 2, :], rhs,
                                attrs.get("partial_pivoting", True))
    return bool(np.isnan(out).any()) and bool(np.isfinite(diags).all())


divergence("TridiagonalSolve", when="a complex system met with a zero pivot (singular, or needing pivoting without it)",
           tf="fills the answer with `std::numeric_limits<complex>::quiet_NaN()`, which is 0: zeros, silently",
           ours="NaN + NaN i", dtypes=(D.DT_COMPLEX64, D.DT_COMPLEX128), applies=_solve_fails)
divergence("MatrixTriangularSolve", when="complex systems with a zero on the diagonal",
           tf="Eigen's complex division by zero (e.g. `-inf + NaN i`)", ours="NumPy's (e.g. `NaN + NaN i`)")
