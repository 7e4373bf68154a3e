"""Gradients of the linear-algebra ops: TF's Python gradients (``linalg_grad.py``, Giles 2008 and Ionescu et al.
2015 for the spectral ones) built from the same ops in the same order, so that the values agree with TF's.

TF registers none of these in its C++ API; ``AddSymbolicGradients`` here differentiates graphs that use them.
Matrices are the innermost two dimensions; ``adjoint`` is the conjugate transpose.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py import ops
from tfops_py.errors import InvalidArgumentError, UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.operation import NoGradient, Operation, Output, as_output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.array_grad import attr
from tfops_py.gradients.math_grad import conj, const_of
from tfops_py.gradients.registry import register_gradient

_COMPLEX = (DataType.DT_COMPLEX64, DataType.DT_COMPLEX128)
_I64 = np.int64
# Where these gradients differ from TF's C++ API (listed in docs/gradients.md by tools/gen_gradient_table.py).
_PYTHON_ONLY = "registered (TF: Python only)"
BEYOND_TF_CC = {op: _PYTHON_ONLY for op in (
    "Cholesky", "Qr", "MatrixSolve", "MatrixTriangularSolve", "BandedTriangularSolve", "MatrixSolveLs",
    "MatrixDeterminant", "LogMatrixDeterminant", "SelfAdjointEigV2", "Eig", "Svd", "MatrixSquareRoot",
    "TridiagonalMatMul", "TridiagonalSolve")}
BEYOND_TF_CC["MatrixInverse"] = (f"{_PYTHON_ONLY}; with `adjoint=true` the gradient of inv(A^H) (TF's ignores "
                                 "`adjoint`: a wrong gradient)")
CHANGED_FROM_TF_CC: dict[str, str] = {}


# -- graph helpers ---------------------------------------------------------------------------------------
def _tensor(scope: Scope, x: Any) -> Any:
    return x if not isinstance(x, (np.ndarray, np.generic, int, float)) else ops.Const(scope, np.asarray(x))


def concat(scope: Scope, items: list[Any], axis: int) -> Output:
    """ConcatV2 of outputs and NumPy constants."""
    return ops.Concat(scope, [_tensor(scope, x) for x in items], axis).output


def stack(scope: Scope, items: list[Any], axis: int = 0) -> Output:
    """Pack of outputs and NumPy constants."""
    return ops.Stack(scope, [_tensor(scope, x) for x in items], axis=axis).output


def matmul(scope: Scope, a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False) -> Output:
    """``op(a) @ op(b)`` over batches (BatchMatMulV2: broadcast batch dims, adjoints conjugate)."""
    return ops.BatchMatMulV2(scope, a, b, adj_x=adjoint_a, adj_y=adjoint_b).output


def adjoint(scope: Scope, x: Any) -> Output:
    """The conjugate transpose of the innermost matrices (TF's ``linalg.adjoint``)."""
    x = as_output(x)
    shape = x.shape()
    if not shape.unknown_rank():
        rank = shape.dims()
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
        return ops.ConjugateTranspose(scope, x, np.asarray(perm, np.int32)).y
    rank = ops.Rank(scope, x).output
    head = ops.Range(scope, 0, ops.Sub(scope, rank, 2), 1).output
    tail = stack(scope, [ops.Sub(scope, rank, 1).z, ops.Sub(scope, rank, 2).z])
    return ops.ConjugateTranspose(scope, x, concat(scope, [head, tail], 0)).y


def transpose(scope: Scope, x: Any) -> Output:
    """The innermost matrices transposed (not conjugated)."""
    x = as_output(x)
    if x.type() not in _COMPLEX:
        return adjoint(scope, x)
    return ops.Conj(scope, adjoint(scope, x)).output


def band(scope: Scope, x: Any, lower: int, upper: int) -> Output:
    return ops.MatrixBandPart(scope, x, _I64(lower), _I64(upper)).band


def halve_diagonal(scope: Scope, x: Any) -> Output:
    """``x`` with its diagonal halved (MatrixSetDiag of 0.5 MatrixDiagPart)."""
    x = as_output(x)
    half = ops.Mul(scope, const_of(scope, 0.5, x.type()), ops.MatrixDiagPart(scope, x).diagonal).z
    return ops.MatrixSetDiag(scope, x, half).output


def columns(scope: Scope, x: Any, start: int, stop: int | None) -> Output:
    """``x[..., :, start:stop]`` (StridedSlice with an ellipsis)."""
    end, end_mask = (0, 0b100) if stop is None else (stop, 0)
    return ops.StridedSlice(scope, x, np.asarray([0, 0, start], np.int32), np.asarray([0, 0, end], np.int32),
                            np.asarray([1, 1, 1], np.int32), ellipsis_mask=0b001, begin_mask=0b010,
                            end_mask=0b010 | end_mask).output


def expand_matrix(scope: Scope, x: Any, like: Any) -> Output:
    """``x`` (batch shaped) reshaped to ``[..., 1, 1]``."""
    shape = concat(scope, [ops.Shape(scope, like).output, np.asarray([1, 1], np.int32)], 0)
    return ops.Reshape(scope, x, shape).output


def safe_reciprocal(scope: Scope, x: Any, epsilon: float = 1e-20) -> Output:
    """``x / (x^2 + eps)``: TF's Lorentz broadening against equal eigenvalues / singular values."""
    x = as_output(x)
    denom = ops.AddV2(scope, ops.Mul(scope, x, x).z, const_of(scope, epsilon, x.type())).z
    return ops.Mul(scope, x, ops.Reciprocal(scope, denom).y).z


def pairwise_inverse_gaps(scope: Scope, e: Any) -> Output:
    """``f[i, j] = 1 / (e[j] - e[i])`` off the diagonal, 0 on it (safe reciprocal)."""
    diff = ops.Sub(scope, ops.ExpandDims(scope, e, -2).output, ops.ExpandDims(scope, e, -1).output).z
    return ops.MatrixSetDiag(scope, safe_reciprocal(scope, diff), ops.ZerosLike(scope, e).y).output


def unbroadcast(scope: Scope, grad_a: Output, grad_b: Output, a: Output, b: Output) -> list[Output]:
    """Sum the gradients over the batch dimensions their inputs were broadcast along (skipped when the static
    batch shapes are equal, as TF)."""
    sa, sb = a.shape(), b.shape()
    if sa.IsFullyDefined() and sb.IsFullyDefined() and sa.as_tuple()[:-2] == sb.as_tuple()[:-2]:
        return [grad_a, grad_b]
    shape_a, shape_b = ops.Shape(scope, a).output, ops.Shape(scope, b).output
    batch_a = ops.StridedSlice(scope, shape_a, np.asarray([0], np.int32), np.asarray([-2], np.int32),
                               np.asarray([1], np.int32)).output
    batch_b = ops.StridedSlice(scope, shape_b, np.asarray([0], np.int32), np.asarray([-2], np.int32),
                               np.asarray([1], np.int32)).output
    r = ops.internal.BroadcastGradientArgs(scope, batch_a, batch_b)
    return [ops.Reshape(scope, ops.Sum(scope, grad_a, r.r0).output, shape_a).output,
            ops.Reshape(scope, ops.Sum(scope, grad_b, r.r1).output, shape_b).output]


# -- inverse, determinants ---------------------------------------------------------------------------------
@register_gradient("MatrixInverse")
def _matrix_inverse_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """``-B^H g B^H`` for ``B = inv(A)``; with ``adjoint`` (``B = inv(A^H)``) ``-B g^H B``."""
    inv, grad = op.output(0), grad_inputs[0]
    if attr(op, "adjoint"):
        return [ops.Neg(scope, matmul(scope, inv, matmul(scope, grad, inv, adjoint_a=True))).y]
    return [ops.Neg(scope, matmul(scope, inv, matmul(scope, grad, inv, adjoint_b=True), adjoint_a=True)).y]


@register_gradient("MatrixDeterminant")
def _matrix_determinant_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    a, det = op.input(0), op.output(0)
    inv_adj = ops.MatrixInverse(scope, a, adjoint=True).output
    return [ops.Mul(scope, expand_matrix(scope, ops.Mul(scope, grad_inputs[0], det).z, det), inv_adj).z]


@register_gradient("LogMatrixDeterminant")
def _log_matrix_determinant_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    a, log_abs = op.input(0), op.output(1)
    inv_adj = ops.MatrixInverse(scope, a, adjoint=True).output
    return [ops.Mul(scope, expand_matrix(scope, grad_inputs[1], log_abs), inv_adj).z]


# -- Cholesky, Qr ---------------------------------------------------------------------------------------------
@register_gradient("Cholesky")
def _cholesky_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """``sym(L^-H Phi(L^H dL) L^-1)``; Phi: the lower triangle with the diagonal halved."""
    lower = op.output(0)
    eye = ops.MatrixDiag(scope, ops.OnesLike(scope, ops.MatrixDiagPart(scope, lower).diagonal).y).output
    inverse = ops.MatrixTriangularSolve(scope, lower, eye).output
    middle = band(scope, halve_diagonal(scope, matmul(scope, lower, grad_inputs[0], adjoint_a=True)), -1, 0)
    grad_a = matmul(scope, matmul(scope, inverse, middle, adjoint_a=True), inverse)
    grad_a = ops.AddV2(scope, grad_a, adjoint(scope, grad_a)).z
    return [ops.Mul(scope, grad_a, const_of(scope, 0.5, grad_a.type())).z]


def _triangular_right_solve(scope: Scope, x: Output, r: Output) -> Output:
    """``x @ inv(r)^H`` for upper-triangular ``r``."""
    return adjoint(scope, ops.MatrixTriangularSolve(scope, r, adjoint(scope, x), lower=False, adjoint=False).output)


def _qr_grad_deep(scope: Scope, q: Output, r: Output, dq: Output, dr: Output) -> Output:
    qdq = matmul(scope, q, dq, adjoint_a=True)
    qdq_ = ops.Sub(scope, qdq, adjoint(scope, qdq)).z
    rdr = matmul(scope, r, dr, adjoint_b=True)
    rdr_ = ops.Sub(scope, rdr, adjoint(scope, rdr)).z
    tril = band(scope, ops.AddV2(scope, qdq_, rdr_).z, -1, 0)
    grad_a = matmul(scope, q, ops.AddV2(scope, dr, _triangular_right_solve(scope, tril, r)).z)
    grad_b = _triangular_right_solve(scope, ops.Sub(scope, dq, matmul(scope, q, qdq)).z, r)
    return ops.AddV2(scope, grad_a, grad_b).z


@register_gradient("Qr")
def _qr_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    q, r = op.output(0), op.output(1)
    dq, dr = grad_inputs
    qs, rs = q.shape(), r.shape()
    if rs.unknown_rank() or rs[-2] == -1 or rs[-1] == -1:
        raise UnimplementedError("QrGrad not implemented with dynamic shapes.", op_type="Qr", node_name=op.name())
    if rs[-2] > rs[-1] and qs[-2] == qs[-1]:
        raise UnimplementedError("QrGrad not implemented when nrows > ncols and full_matrices is true.",
                                 op_type="Qr", node_name=op.name())
    rows, cols = qs[-2], rs[-1]
    if rows >= cols:
        return [_qr_grad_deep(scope, q, r, dq, dr)]
    # wide: a = [x, y], r = [u, v]; the square part's gradient plus q dv for y
    y, u = columns(scope, op.input(0), rows, None), columns(scope, r, 0, rows)
    dv, du = columns(scope, dr, rows, None), columns(scope, dr, 0, rows)
    dy = matmul(scope, q, dv)
    dx = _qr_grad_deep(scope, q, u, ops.AddV2(scope, dq, matmul(scope, y, dv, adjoint_b=True)).z, du)
    return [concat(scope, [dx, dy], -1)]


# -- solves ----------------------------------------------------------------------------------------------------
@register_gradient("MatrixSolve")
def _matrix_solve_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    a, c = op.input(0), op.output(0)
    adj = attr(op, "adjoint")
    grad_b = ops.MatrixSolve(scope, a, grad_inputs[0], adjoint=not adj).output
    grad_a = matmul(scope, c, grad_b, adjoint_b=True) if adj else matmul(scope, grad_b, c, adjoint_b=True)
    return [ops.Neg(scope, grad_a).y, grad_b]


def _triangular_solve_grad(scope: Scope, op: Operation, grad: Output, solve: Any) -> tuple[Output, Output]:
    a, c = op.input(0), op.output(0)
    adj, lower = attr(op, "adjoint"), attr(op, "lower")
    grad_b = solve(scope, a, grad, lower=lower, adjoint=not adj).output
    grad_a = matmul(scope, c, grad_b, adjoint_b=True) if adj else matmul(scope, grad_b, c, adjoint_b=True)
    return ops.Neg(scope, grad_a).y, grad_b


@register_gradient("MatrixTriangularSolve")
def _matrix_triangular_solve_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad_a, grad_b = _triangular_solve_grad(scope, op, grad_inputs[0], ops.MatrixTriangularSolve)
    grad_a = band(scope, grad_a, -1, 0) if attr(op, "lower") else band(scope, grad_a, 0, -1)
    return unbroadcast(scope, grad_a, grad_b, op.input(0), op.input(1))


@register_gradient("BandedTriangularSolve")
def _banded_triangular_solve_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad_a, grad_b = _triangular_solve_grad(scope, op, grad_inputs[0], ops.BandedTriangularSolve)
    bands = ops.StridedSlice(scope, ops.Shape(scope, op.input(0)).output, np.asarray([-2], np.int32),
                             np.asarray([-1], np.int32), np.asarray([1], np.int32), shrink_axis_mask=1).output
    below = ops.Sub(scope, np.int32(1), bands).z
    k = stack(scope, [below, np.int32(0)]) if attr(op, "lower") else \
        stack(scope, [np.int32(0), ops.Neg(scope, below).y])
    grad_a = ops.MatrixDiagPartV3(scope, grad_a, k, const_of(scope, 0, grad_a.type()), align="LEFT_RIGHT").diagonal
    return unbroadcast(scope, grad_a, grad_b, op.input(0), op.input(1))


@register_gradient("MatrixSolveLs")
def _matrix_solve_ls_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """The normal-equation solution's gradient (``fast`` only, as TF)."""
    if not attr(op, "fast"):
        raise InvalidArgumentError("Gradient not defined for fast=False", op_type="MatrixSolveLs",
                                   node_name=op.name())
    a, b, x = op.input(0), op.input(1), op.output(0)
    grad = grad_inputs[0]
    shape = a.shape()
    if shape.unknown_rank() or shape[-2] == -1 or shape[-1] == -1:
        raise UnimplementedError("MatrixSolveLs gradient needs the matrix's static shape", op_type="MatrixSolveLs",
                                 node_name=op.name())
    l2 = ops.Cast(scope, op.input(2), a.type()).y
    over = shape[-2] >= shape[-1]
    gram = matmul(scope, a, a, adjoint_a=True) if over else matmul(scope, a, a, adjoint_b=True)
    eye = ops.MatrixDiag(scope, ops.OnesLike(scope, ops.MatrixDiagPart(scope, gram).diagonal).y).output
    gram = ops.AddV2(scope, gram, ops.Mul(scope, l2, eye).z).z
    chol = ops.Cholesky(scope, gram).output

    def cholesky_solve(rhs: Any) -> Output:
        y = ops.MatrixTriangularSolve(scope, chol, rhs, lower=True, adjoint=False).output
        return ops.MatrixTriangularSolve(scope, chol, y, lower=True, adjoint=True).output

    if over:
        z = cholesky_solve(grad)
        xzt = matmul(scope, x, z, adjoint_b=True)
        zx_sym = ops.AddV2(scope, xzt, transpose(scope, xzt)).z  # TF: a plain transpose, complex too
        grad_a = ops.AddV2(scope, ops.Neg(scope, matmul(scope, a, zx_sym)).y, matmul(scope, b, z, adjoint_b=True)).z
        return [grad_a, matmul(scope, a, z), NoGradient()]
    grad_b = cholesky_solve(matmul(scope, a, grad))
    tmp = cholesky_solve(b)
    a1 = ops.Neg(scope, matmul(scope, grad_b, matmul(scope, tmp, a, adjoint_a=True))).y
    a2 = matmul(scope, tmp, ops.Sub(scope, grad, matmul(scope, a, grad_b, adjoint_a=True)).z, adjoint_b=True)
    return [ops.AddV2(scope, a1, a2).z, grad_b, NoGradient()]




# -- eigen decompositions, SVD ----------------------------------------------------------------------------
@register_gradient("SelfAdjointEigV2")
def _self_adjoint_eig_v2_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """``V (diag(de) + F o (V^H dV)) V^H``, symmetrized onto the lower triangle the op reads."""
    e = op.output(0)
    grad_e, grad_v = grad_inputs
    if attr(op, "compute_v"):
        v = op.output(1)
        f = pairwise_inverse_gaps(scope, e)
        inner = ops.AddV2(scope, ops.MatrixDiag(scope, grad_e).output,
                          ops.Mul(scope, f, matmul(scope, v, grad_v, adjoint_a=True)).z).z
    else:
        v = ops.SelfAdjointEig(scope, op.input(0)).v
        inner = ops.MatrixDiag(scope, grad_e).output
    grad_a = matmul(scope, v, matmul(scope, inner, v, adjoint_b=True))
    grad_a = band(scope, ops.AddV2(scope, grad_a, adjoint(scope, grad_a)).z, -1, 0)
    return [halve_diagonal(scope, grad_a)]


@register_gradient("Eig")
def _eig_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """Boeddeker et al. (2017), eq. 4.77, for distinct eigenvalues."""
    e = op.output(0)
    grad_e, grad_v = grad_inputs
    if attr(op, "compute_v"):
        v = op.output(1)
        vt = adjoint(scope, v)
        f = ops.Conj(scope, pairwise_inverse_gaps(scope, e)).output
        vgv = matmul(scope, vt, grad_v)
        real_diag = ops.Cast(scope, ops.Real(scope, vgv, Tout=_real_type(vgv.type())).output, vgv.type()).y
        diag_grad_part = ops.MatrixDiag(scope, ops.MatrixDiagPart(scope, real_diag).diagonal).output
        mid = ops.AddV2(scope, ops.MatrixDiag(scope, grad_e).output,
                        ops.Mul(scope, f, ops.Sub(scope, vgv, matmul(scope, matmul(scope, vt, v),
                                                                      diag_grad_part)).z).z).z
        grad_a = ops.MatrixSolve(scope, vt, matmul(scope, mid, vt)).output
    else:
        v = ops.Eig(scope, op.input(0), e.type()).v
        vt = adjoint(scope, v)
        grad_a = ops.MatrixSolve(scope, vt, matmul(scope, ops.MatrixDiag(scope, grad_e).output, vt)).output
    return [ops.Cast(scope, grad_a, op.input_type(0)).y]


def _real_type(t: DataType) -> DataType:
    return DataType.DT_DOUBLE if t == DataType.DT_COMPLEX128 else DataType.DT_FLOAT


@register_gradient("Svd")
def _svd_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """Giles (2008); Townsend for full_matrices=False; the complex term of Wan & Zhang."""
    a = op.input(0)
    grad_s, grad_u, grad_v = grad_inputs
    grad_s = ops.Cast(scope, grad_s, a.type()).y
    grad_s_mat = ops.MatrixDiag(scope, grad_s).output
    if not attr(op, "compute_uv"):
        full = ops.Svd(scope, a, compute_uv=True)
        return [matmul(scope, full.u, matmul(scope, grad_s_mat, full.v, adjoint_b=True))]
    shape = a.shape()
    if shape.unknown_rank() or shape[-2] == -1 or shape[-1] == -1:
        raise UnimplementedError("SVD gradient has not been implemented for input with unknown inner matrix shape.",
                                 op_type="Svd", node_name=op.name())
    m, n = shape[-2], shape[-1]
    full_matrices = attr(op, "full_matrices")
    s = ops.Cast(scope, op.output(0), a.type()).y
    u, v = op.output(1), op.output(2)
    use_adjoint = m > n
    if use_adjoint:  # the gradient of A^H = V S U^H, conjugate-transposed at the end
        m, n = n, m
        u, v, grad_u, grad_v = v, u, grad_v, grad_u
    if full_matrices and abs(m - n) > 1:
        raise UnimplementedError("svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True",
                                 op_type="Svd", node_name=op.name())
    s_mat = ops.MatrixDiag(scope, s).output
    f = pairwise_inverse_gaps(scope, ops.Square(scope, s).y)
    s_inv_mat = ops.MatrixDiag(scope, safe_reciprocal(scope, s)).output
    v1, grad_v1 = columns(scope, v, 0, m), columns(scope, grad_v, 0, m)
    u_gu = matmul(scope, u, grad_u, adjoint_a=True)
    v_gv = matmul(scope, v1, grad_v1, adjoint_a=True)
    f_u, f_v = ops.Mul(scope, f, u_gu).z, ops.Mul(scope, f, v_gv).z
    term1_nouv = ops.AddV2(scope, ops.AddV2(scope, grad_s_mat, matmul(
        scope, ops.AddV2(scope, f_u, adjoint(scope, f_u)).z, s_mat)).z, matmul(
        scope, s_mat, ops.AddV2(scope, f_v, adjoint(scope, f_v)).z)).z
    grad = matmul(scope, u, matmul(scope, term1_nouv, v1, adjoint_b=True))
    if m != n:
        gv1t = adjoint(scope, grad_v1)
        term2_nous = ops.Sub(scope, gv1t, matmul(scope, matmul(scope, gv1t, v1), v1, adjoint_b=True)).z
        if full_matrices:
            v2, grad_v2 = columns(scope, v, m, n), columns(scope, grad_v, m, n)
            term2_nous = ops.Sub(scope, term2_nous, matmul(scope, matmul(scope, v1, grad_v2, adjoint_a=True), v2,
                                                           adjoint_b=True)).z
        grad = ops.AddV2(scope, grad, matmul(scope, matmul(scope, u, s_inv_mat), term2_nous)).z
    if a.type() in _COMPLEX:
        eye = ops.MatrixDiag(scope, ops.OnesLike(scope, s).y).output
        lmat = ops.Mul(scope, eye, v_gv).z
        term3_nouv = matmul(scope, s_inv_mat, ops.Sub(scope, adjoint(scope, lmat), lmat).z)
        term3 = ops.Mul(scope, const_of(scope, 0.5, a.type()),
                        matmul(scope, u, matmul(scope, term3_nouv, v1, adjoint_b=True))).z
        grad = ops.AddV2(scope, grad, term3).z
    return [adjoint(scope, grad) if use_adjoint else grad]


# -- matrix square root ------------------------------------------------------------------------------------
def _kronecker(scope: Scope, b1: Output, b2: Output) -> Output:
    """The Kronecker products of two batches of square matrices of one order."""
    shape = ops.Shape(scope, b1).output
    order = ops.StridedSlice(scope, shape, np.asarray([-1], np.int32), np.asarray([0], np.int32),
                             np.asarray([1], np.int32), end_mask=1, shrink_axis_mask=1).output
    batch = ops.StridedSlice(scope, shape, np.asarray([0], np.int32), np.asarray([-2], np.int32),
                             np.asarray([1], np.int32)).output
    one = np.asarray([1], np.int32)
    vec = ops.Reshape(scope, order, one).output
    r1 = ops.Reshape(scope, b1, concat(scope, [batch, vec, one, vec, one], 0)).output
    r2 = ops.Reshape(scope, b2, concat(scope, [batch, one, vec, one, vec], 0)).output
    prod = ops.Reshape(scope, ops.Mul(scope, order, order).z, one).output
    return ops.Reshape(scope, ops.Mul(scope, r1, r2).z, concat(scope, [batch, prod, prod], 0)).output


@register_gradient("MatrixSquareRoot")
def _matrix_square_root_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """Solves the Sylvester equation ``R dR + dR R = dA`` through its Kronecker form."""
    root = op.output(0)
    eye = ops.MatrixDiag(scope, ops.OnesLike(scope, ops.MatrixDiagPart(scope, root).diagonal).y).output
    ksum = ops.AddV2(scope, _kronecker(scope, eye, transpose(scope, root)), _kronecker(scope, root, eye)).z
    shape = ops.Shape(scope, root).output
    batch = ops.StridedSlice(scope, shape, np.asarray([0], np.int32), np.asarray([-2], np.int32),
                             np.asarray([1], np.int32)).output
    order = ops.StridedSlice(scope, shape, np.asarray([-1], np.int32), np.asarray([0], np.int32),
                             np.asarray([1], np.int32), end_mask=1).output
    vec_shape = concat(scope, [batch, ops.Mul(scope, order, order).z, np.asarray([1], np.int32)], 0)
    vec_da = ops.Reshape(scope, transpose(scope, grad_inputs[0]), vec_shape).output
    vec_dr = ops.MatrixSolve(scope, ksum, vec_da).output
    return [transpose(scope, ops.Reshape(scope, vec_dr, shape).output)]


# -- tridiagonal ops ----------------------------------------------------------------------------------------
def _shift_rows(scope: Scope, x: Output, left: bool) -> Output:
    """The next-to-last dimension shifted by one (left: row i takes row i + 1), a zero row coming in."""
    rank = ops.Rank(scope, x).output
    zeros = ops.Fill(scope, stack(scope, [ops.Sub(scope, rank, 2).z, np.int32(2)]), np.int32(0)).output
    pad = concat(scope, [zeros, np.asarray([[0, 1], [0, 0]] if left else [[1, 0], [0, 0]], np.int32)], 0)
    begin, end = ([0, 1, 0], [0, 0, 0]) if left else ([0, 0, 0], [0, -1, 0])
    sliced = ops.StridedSlice(scope, x, np.asarray(begin, np.int32), np.asarray(end, np.int32),
                              np.asarray([1, 1, 1], np.int32), ellipsis_mask=0b001,
                              begin_mask=0b100 if left else 0b110, end_mask=0b110 if left else 0b100).output
    return ops.Pad(scope, sliced, pad).output


@register_gradient("TridiagonalMatMul")
def _tridiagonal_matmul_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad = grad_inputs[0]
    sup, main, sub = (adjoint(scope, op.input(i)) for i in range(3))
    rhs = conj(scope, op.input(3))

    def summed(x: Output) -> Output:
        return ops.ExpandDims(scope, ops.Sum(scope, ops.Mul(scope, x, grad).z, np.int32(-1)).output, -2).output

    grad_rhs = ops.AddV2(scope, ops.AddV2(scope, _shift_rows(scope, ops.Mul(scope, sup, grad).z, left=False),
                                          ops.Mul(scope, main, grad).z).z,
                         _shift_rows(scope, ops.Mul(scope, sub, grad).z, left=True)).z
    return [summed(_shift_rows(scope, rhs, left=True)), summed(rhs), summed(_shift_rows(scope, rhs, left=False)),
            grad_rhs]


@register_gradient("TridiagonalSolve")
def _tridiagonal_solve_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """Solve with the transposed matrix, then the three diagonals of ``-grad_rhs x^T``."""
    diags, x = op.input(0), op.output(0)
    grad_rhs = ops.TridiagonalSolve(scope, _transposed_diagonals(scope, diags), grad_inputs[0],
                                    partial_pivoting=attr(op, "partial_pivoting")).output
    return [ops.Neg(scope, _three_diagonals(scope, grad_rhs, x)).y, grad_rhs]


def _row(scope: Scope, diags: Output, i: int) -> Output:
    """``diags[..., i, :]``."""
    return ops.StridedSlice(scope, diags, np.asarray([0, i, 0], np.int32), np.asarray([0, i + 1, 0], np.int32),
                            np.asarray([1, 1, 1], np.int32), ellipsis_mask=0b001, end_mask=0b100,
                            begin_mask=0b100, shrink_axis_mask=0b010).output


def _shift_last(scope: Scope, x: Output, left: bool) -> Output:
    """The last dimension shifted by one, a zero coming in."""
    expanded = ops.ExpandDims(scope, x, -1).output
    return ops.Squeeze(scope, _shift_rows(scope, expanded, left), axis=[-1]).output


def _transposed_diagonals(scope: Scope, diags: Output) -> Output:
    sup, main, sub = (_row(scope, diags, i) for i in range(3))
    return stack(scope, [_shift_last(scope, sub, left=True), main, _shift_last(scope, sup, left=False)], -2)


def _three_diagonals(scope: Scope, x: Output, y: Output) -> Output:
    """The super-, main and subdiagonals of ``x y^T``, without the product."""
    def summed(v: Output) -> Output:
        return ops.Sum(scope, ops.Mul(scope, x, v).z, np.int32(-1)).output

    return stack(scope, [summed(_shift_rows(scope, y, left=True)), summed(y),
                             summed(_shift_rows(scope, y, left=False))], axis=-2)
