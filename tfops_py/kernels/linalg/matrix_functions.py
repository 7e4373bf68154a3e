"""Functions of square matrices: MatrixInverse, MatrixDeterminant, LogMatrixDeterminant, MatrixExponential,
MatrixLogarithm, MatrixSquareRoot, CholeskyGrad (and the Batch* forms of the first three and CholeskyGrad).

MatrixInverse and the determinants use LAPACK's LU (TF: Eigen's PartialPivLU, the same pivots).
MatrixExponential runs ``tf.linalg.expm``'s algorithm (TF graphs no longer contain the op: it was removed
in GraphDef version 27, and TF 2.21 refuses it; older graphs run here).  MatrixSquareRoot and
MatrixLogarithm use SciPy's (Schur-based) square root: the logarithm by inverse scaling and squaring,
``log A = 2^k log(A^(1/2^k))`` with a Pade approximant near I.  The array API has neither, so on other
backends these two are a host round trip through NumPy.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.linalg

from tfops_py.conformance import BOOL, case, conformance, divergence, literal
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.linalg import _algorithms as alg
from tfops_py.kernels.linalg._linalg_domains import matrices
from tfops_py.kernels.linalg._linalg_util import (adjoint, batch_of, batch_square, check_matrices, check_square,
                                                  eye_like, on_host, unchanged_square, widened)
from tfops_py.kernels.linalg.solvers import lu_solve_fails
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "linalg"
D = DataType


def _square_input(ctx: KernelContext, x: Any) -> None:
    check_matrices(ctx, x)
    check_square(ctx, x)


# -- MatrixInverse -------------------------------------------------------------------------------------
register_shape("MatrixInverse")(unchanged_square)


@register_kernel("MatrixInverse")
def _matrix_inverse(ctx: KernelContext, x: Any) -> Any:
    """``inv(x)`` (``adjoint``: ``inv(x^H)``); an exactly singular matrix, or one whose first pivot is NaN, is
    TF's error; half is inverted in float and rounded."""
    _square_input(ctx, x)
    xp = ctx.xp
    if x.shape[-1] == 0:
        return x
    a, back = widened(ctx, x)
    if ctx.attrs["adjoint"]:
        a = adjoint(xp, a)
    if lu_solve_fails(xp, a):
        ctx.invalid_argument("Input is not invertible.")
    with alg.quiet(xp):
        try:
            return back(xp.linalg.inv(a))
        except (ValueError, ArithmeticError):
            ctx.invalid_argument("Input is not invertible.")


# -- determinants -------------------------------------------------------------------------------------------
@register_shape("MatrixDeterminant")
def _determinant_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [batch_of(batch_square(ctx, ctx.input(0), swap=True))]


@register_shape("LogMatrixDeterminant")
def _log_determinant_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    batch = batch_of(batch_square(ctx, ctx.input(0), swap=True))
    return [batch, batch]


@register_kernel("MatrixDeterminant")
def _matrix_determinant(ctx: KernelContext, x: Any) -> Any:
    """1 for an empty matrix."""
    _square_input(ctx, x)
    sign, log_abs = _slogdet(ctx, x)
    with alg.quiet(ctx.xp):
        return sign * ctx.xp.exp(log_abs)


@register_kernel("LogMatrixDeterminant")
def _log_matrix_determinant(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    """(sign, log|det|), both in T (complex: the sign is a unit complex, the log a complex with zero imaginary
    part); a singular matrix gives sign 0 and log -inf; an empty one (1, 0)."""
    _square_input(ctx, x)
    return _slogdet(ctx, x)


def _slogdet(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    """(sign, log|det|) in T from LAPACK's LU, as TF's SLogDet: an empty matrix (1, 0); a NaN anywhere (complex:
    any non-finite entry) makes the sign NaN and the log NaN (the log is real: a complex NaN has a zero imaginary
    part); TF's determinant is ``sign * exp(log|det|)``."""
    xp = ctx.xp
    batch = tuple(x.shape[:-2])
    if x.shape[-1] == 0:
        return xp.ones(batch, dtype=x.dtype), xp.zeros(batch, dtype=x.dtype)
    is_complex = ctx.input_dtypes[0].is_complex
    with alg.quiet(xp):
        sign, log_abs = xp.linalg.slogdet(x)
        sign, log_abs = xp.astype(sign, x.dtype), xp.astype(log_abs, x.dtype)
        bad = xp.any(~xp.isfinite(x) if is_complex else xp.isnan(x), axis=(-2, -1))
        if bool(xp.any(bad)):
            sign = xp.where(bad, xp.full_like(sign, complex(math.nan, math.nan) if is_complex else math.nan), sign)
            log_abs = xp.where(bad, xp.full_like(log_abs, math.nan), log_abs)
    return sign, log_abs


# -- MatrixExponential ---------------------------------------------------------------------------------------
register_shape("MatrixExponential")(unchanged_square)


@register_kernel("MatrixExponential")
def _matrix_exponential(ctx: KernelContext, x: Any) -> Any:
    _square_input(ctx, x)
    if x.shape[-1] == 0:
        return x
    a, back = widened(ctx, x)
    return back(alg.expm(ctx.xp, a))


# -- MatrixSquareRoot, MatrixLogarithm -----------------------------------------------------------------------
register_shape("MatrixSquareRoot", "MatrixLogarithm")(unchanged_square)


def principal_sqrt(a: np.ndarray) -> np.ndarray:
    """The principal square roots of a NumPy batch (SciPy's Schur method).  A real matrix with no real
    square root (an eigenvalue on the negative real axis) gives NaN, as TF's real Schur method."""
    with np.errstate(all="ignore"):
        root = scipy.linalg.sqrtm(a)
    root = np.asarray(root)
    if a.dtype.kind == "c" or root.dtype.kind != "c":
        return root.astype(a.dtype, copy=False)
    real_part = np.real(root)
    real = np.all(np.abs(np.imag(root)) <= 1e3 * np.finfo(a.dtype).eps * np.maximum(np.abs(real_part), 1.0),
                  axis=(-2, -1))
    return np.where(real[..., None, None], real_part, np.nan).astype(a.dtype)


# Nodes and weights of Gauss-Legendre quadrature on [0, 1]: log(I + X) = X sum_j w_j (I + t_j X)^-1 is the
# [m/m] Pade approximant of log(1 + x) (Higham, "Functions of Matrices", 11.4), accurate to double precision
# for ||X|| <= 0.25 with m = 10.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(10)
_NODES, _WEIGHTS = (_NODES + 1) / 2, _WEIGHTS / 2


def principal_log(a: np.ndarray) -> np.ndarray:
    """Principal logarithms of a NumPy batch of complex matrices by inverse scaling and squaring: square roots
    until ``||A^(1/2^k) - I||_1 <= 1/4``, then a Pade approximant, times ``2^k``."""
    eye = np.eye(a.shape[-1], dtype=a.dtype)
    roots = a
    k = np.zeros(a.shape[:-2])
    with np.errstate(all="ignore"):
        for _ in range(64):
            far = np.abs(roots - eye).sum(axis=-2).max(axis=-1) > 0.25
            if not far.any():
                break
            roots = np.where(far[..., None, None], principal_sqrt(roots), roots)
            k = k + far
        x = roots - eye
        log = np.zeros_like(x)
        for t, w in zip(_NODES, _WEIGHTS):
            log = log + w * np.linalg.solve(eye + t * x, x)
    return (log * np.exp2(k)[..., None, None]).astype(a.dtype)


def _finite_matrices(ctx: KernelContext, fn: Any, x: Any) -> Any:
    """``fn`` on the host over the matrices without NaN/inf; the others give NaN."""
    def run(a: np.ndarray) -> np.ndarray:
        bad = np.logical_not(np.all(np.isfinite(a), axis=(-2, -1)))
        out = fn(np.where(bad[..., None, None], np.eye(a.shape[-1], dtype=a.dtype), a))
        nan = complex(np.nan, np.nan) if a.dtype.kind == "c" else np.nan
        return np.where(bad[..., None, None], nan, out).astype(a.dtype)

    return on_host(ctx, run, x)


@register_kernel("MatrixSquareRoot")
def _matrix_square_root(ctx: KernelContext, x: Any) -> Any:
    """The principal square root (``sqrt(A)^2 = A``, eigenvalues in the right half plane)."""
    _square_input(ctx, x)
    if x.shape[-1] == 0:
        return x
    return _finite_matrices(ctx, principal_sqrt, x)


@register_kernel("MatrixLogarithm")
def _matrix_logarithm(ctx: KernelContext, x: Any) -> Any:
    """The principal logarithm (eigenvalues' imaginary parts in (-pi, pi]); complex types only, as TF."""
    _square_input(ctx, x)
    if x.shape[-1] == 0:
        return x
    return _finite_matrices(ctx, principal_log, x)


# -- CholeskyGrad ------------------------------------------------------------------------------------------
@register_shape("CholeskyGrad")
def _cholesky_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [batch_square(ctx, ctx.input(0))]


@register_kernel("CholeskyGrad")
def _cholesky_grad(ctx: KernelContext, l: Any, grad: Any) -> Any:  # noqa: E741 - TF's input name
    """The gradient with respect to ``A`` (symmetrized) of ``L = cholesky(A)`` given the gradient ``grad`` with
    respect to ``L``; only the lower triangles of ``l`` and ``grad`` are read (Murray 2016:
    ``sym(L^-T Phi(L^T tril(grad)) L^-1)``, Phi taking the lower triangle with the diagonal halved)."""
    check_matrices(ctx, l, grad)
    if l.shape[-1] != l.shape[-2] or grad.shape[-1] != grad.shape[-2]:
        ctx.invalid_argument("Inputs must be a square matrices.")
    if tuple(l.shape) != tuple(grad.shape):
        ctx.invalid_argument("Inputs (L and grad) must have the same shape.")
    xp = ctx.xp
    if l.shape[-1] == 0:
        return xp.zeros_like(grad)
    lower = xp.tril(l)
    with alg.quiet(xp):
        middle = xp.matmul(xp.matrix_transpose(lower), xp.tril(grad))
        middle = xp.tril(middle) - 0.5 * (xp.tril(middle) - xp.tril(middle, k=-1))
        inverse = alg.triangular_solve(xp, lower, eye_like(xp, lower), lower=True)
        grad_a = xp.matmul(xp.matmul(xp.matrix_transpose(inverse), middle), inverse)
        return 0.5 * (grad_a + xp.matrix_transpose(grad_a))


# -- conformance -------------------------------------------------------------------------------------------
_SQUARE = [dict(input=(3, 3)), dict(input=(2, 4, 4)), dict(input=(2, 1, 2, 2)), dict(input=(0, 0)),
           dict(input=(2, 0, 0)), dict(input=(3, 0, 2, 2)), dict(input=(3,)), dict(input=(2, 3))]
_NAN, _INF = math.nan, math.inf
_EDGES = ([[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]], [[_NAN, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, _NAN]],
          [[_INF, 1.0], [1.0, 1.0]], [[1e-30, 0.0], [0.0, 1e-30]], [[-1.0, 0.0], [0.0, 2.0]])
conformance("MatrixInverse", input=matrices("invertible"), compare="lin", adjoint=BOOL, shapes=_SQUARE, live=10,
            cases=[case(input=literal(m), id=f"MatrixInverse/edge{k}") for k, m in enumerate(_EDGES)])
conformance("MatrixDeterminant", input=matrices(), compare="lin", shapes=_SQUARE, live=10,
            cases=[case(input=literal(m), id=f"MatrixDeterminant/edge{k}") for k, m in enumerate(_EDGES)]
            + [case(input=literal([[1e30, 0.0], [0.0, 1e30]]), id="MatrixDeterminant/overflow")])
conformance("LogMatrixDeterminant", input=matrices(), compare="lin", shapes=_SQUARE, live=10,
            cases=[case(input=literal(m), id=f"LogMatrixDeterminant/edge{k}") for k, m in enumerate(_EDGES)]
            + [case(input=literal([[1j, 0.0], [0.0, 2.0]]), id="LogMatrixDeterminant/complex_sign")])
conformance("MatrixExponential", input=matrices(scale=0.7), compare="lin", shapes=_SQUARE, live=6, messages=False,
            cases=[case(input=matrices(scale=s), shapes={"input": (2, 3, 3)}, id=f"MatrixExponential/scale{s}")
                   for s in (0.01, 0.3, 3.0, 20.0)])
conformance("MatrixSquareRoot", input=matrices("spd"), compare="lin", shapes=_SQUARE, live=8,
            cases=[case(input=literal(m), id=f"MatrixSquareRoot/edge{k}") for k, m in enumerate(
                ([[-1.0, 0.0], [0.0, 4.0]], [[0.0, 1.0], [-1.0, 0.0]], [[_NAN, 0.0], [0.0, 1.0]],
                 [[4.0, 1.0], [0.0, 9.0]]))])
conformance("MatrixLogarithm", input=matrices("invertible"), compare="lin", shapes=_SQUARE, live=8,
            cases=[case(input=literal(m), id=f"MatrixLogarithm/edge{k}") for k, m in enumerate(
                ([[-1.0, 0.0], [0.0, 4.0]], [[1.0, 0.0], [0.0, 1.0]], [[_NAN, 0.0], [0.0, 1.0]],
                 [[2.0, 1.0], [0.0, 2.0]]))])
conformance("CholeskyGrad", l=matrices("cholesky"), compare="lin", live=8, shapes=[
    dict(l=(3, 3), grad=(3, 3)), dict(l=(2, 4, 4), grad=(2, 4, 4)), dict(l=(0, 0), grad=(0, 0)),
    dict(l=(2, 0, 0), grad=(2, 0, 0)), dict(l=(2, 3), grad=(2, 3)), dict(l=(2, 2), grad=(3, 3)),
    dict(l=(2, 2), grad=(1, 2, 2)), dict(l=(4, 2, 2), grad=(3, 2, 2)), dict(l=(2,), grad=(2,))],
    cases=[case(l=literal([[0.0, 0.0], [0.0, 0.0]]), grad=literal([[1.0, 2.0], [3.0, 4.0]]))])
divergence("MatrixSquareRoot", when="a real matrix with an eigenvalue on the negative real axis (no real square root)",
           tf="Eigen's real Schur method takes square roots of negative numbers: NaN in some entries",
           ours="NaN in every entry of that matrix")
divergence("MatrixInverse", when="the gradient with `adjoint=true`",
           tf="TF's Python gradient ignores `adjoint`: `-B^H g B^H` for the output `B = inv(A^H)`, the formula "
              "for `inv(A)` (wrong)",
           ours="the gradient of inv(A^H): `-B g^H B` for `B = inv(A^H)`")
