"""Linear-algebra, Einsum, diagonal and FFT gradients (linalg_grad.py, matrix_grad.py, fft_grad.py): finite
differences (float64) and tf.GradientTape on the same computations.

Factorizations whose factors are determined only up to signs (Svd, Qr columns, eigenvectors) are compared with
TF through sign-invariant functions of them (``|u|``, reconstructions); symmetric-input ops (Cholesky,
SelfAdjointEigV2) are differentiated through a symmetrization, as their gradients assume symmetric perturbations.
"""
from __future__ import annotations

import numpy as np

from tests.gradients.harness import GradCase, case_tests
from tfops_py import DT_COMPLEX128, DT_DOUBLE, ops
from tfops_py.gradients.fft_grad import raw_op

_rng = np.random.default_rng(20240611)
_COMPLEX_WHY = "the finite-difference checker takes real tensors: complex gradients are checked against TF only"


def r(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return _rng.uniform(lo, hi, size=shape)


def c(*shape: int) -> np.ndarray:
    return r(*shape) + 1j * r(*shape)


def invertible(*shape: int) -> np.ndarray:
    return r(*shape) + 3 * np.eye(shape[-1])


def spd(*shape: int) -> np.ndarray:
    x = r(*shape)
    return x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])


def sym(s, x):
    """``(x + x^T) / 2`` on our graph."""
    return ops.Mul(s, ops.AddV2(s, x, ops.Transpose(s, x, _perm(x))), np.float64(0.5))


def sym_tf(tf, x):
    return 0.5 * (x + tf.linalg.matrix_transpose(x))


def _perm(x):
    rank = x.shape().dims()
    return np.asarray(list(range(rank - 2)) + [rank - 1, rank - 2], np.int32)


def case(id_, build, tf_fn, *inputs, **kw) -> GradCase:
    return GradCase(id_, build, tf_fn, tuple(inputs), **kw)


def complex_case(id_, build, tf_fn, *inputs) -> GradCase:
    return GradCase(id_, build, tf_fn, tuple(inputs), numeric=False, why=_COMPLEX_WHY)


CASES = [
    case("MatrixInverse", lambda s, a: ops.MatrixInverse(s, a), lambda tf, a: tf.raw_ops.MatrixInverse(input=a),
         invertible(2, 3, 3)),
    case("MatrixInverse_adjoint", lambda s, a: ops.MatrixInverse(s, a, adjoint=True),
         lambda tf, a: tf.raw_ops.MatrixInverse(input=a, adjoint=True), invertible(3, 3)),
    complex_case("MatrixInverse_complex", lambda s, a: ops.MatrixInverse(s, a),
                 lambda tf, a: tf.raw_ops.MatrixInverse(input=a), c(2, 2) + 3 * np.eye(2)),
    case("MatrixDeterminant", lambda s, a: ops.MatrixDeterminant(s, a),
         lambda tf, a: tf.raw_ops.MatrixDeterminant(input=a), invertible(2, 3, 3)),
    case("LogMatrixDeterminant", lambda s, a: ops.LogMatrixDeterminant(s, a).log_abs_determinant,
         lambda tf, a: tf.raw_ops.LogMatrixDeterminant(input=a)[1], invertible(2, 3, 3)),
    case("Cholesky", lambda s, a: ops.Cholesky(s, sym(s, a)), lambda tf, a: tf.raw_ops.Cholesky(input=sym_tf(tf, a)),
         spd(2, 3, 3)),
    case("Qr_deep", lambda s, a: [ops.Qr(s, a).q, ops.Qr(s, a).r],
         lambda tf, a: list(tf.raw_ops.Qr(input=a)), r(4, 3), tf_rtol=1e-5, tf_atol=1e-6),
    case("Qr_square", lambda s, a: [ops.Qr(s, a).q, ops.Qr(s, a).r], lambda tf, a: list(tf.raw_ops.Qr(input=a)),
         invertible(2, 3, 3), tf_rtol=1e-5),
    case("Qr_wide", lambda s, a: [ops.Qr(s, a).q, ops.Qr(s, a).r], lambda tf, a: list(tf.raw_ops.Qr(input=a)),
         r(2, 4), tf_rtol=1e-5),
    case("MatrixSolve", lambda s, a, b: ops.MatrixSolve(s, a, b), lambda tf, a, b: tf.raw_ops.MatrixSolve(
        matrix=a, rhs=b), invertible(2, 3, 3), r(2, 3, 2)),
    case("MatrixSolve_adjoint", lambda s, a, b: ops.MatrixSolve(s, a, b, adjoint=True),
         lambda tf, a, b: tf.raw_ops.MatrixSolve(matrix=a, rhs=b, adjoint=True), invertible(3, 3), r(3, 1)),
    case("MatrixTriangularSolve_broadcast", lambda s, a, b: ops.MatrixTriangularSolve(s, a, b),
         lambda tf, a, b: tf.raw_ops.MatrixTriangularSolve(matrix=a, rhs=b), invertible(1, 3, 3), r(2, 3, 2)),
    case("MatrixTriangularSolve_upper_adjoint", lambda s, a, b: ops.MatrixTriangularSolve(s, a, b, lower=False,
                                                                                          adjoint=True),
         lambda tf, a, b: tf.raw_ops.MatrixTriangularSolve(matrix=a, rhs=b, lower=False, adjoint=True),
         invertible(3, 3), r(3, 2)),
    case("BandedTriangularSolve", lambda s, a, b: ops.BandedTriangularSolve(s, a, b),
         lambda tf, a, b: tf.raw_ops.BandedTriangularSolve(matrix=a, rhs=b), r(2, 4) + np.array([[3.0], [0.0]]),
         r(4, 2)),
    case("BandedTriangularSolve_upper_adjoint", lambda s, a, b: ops.BandedTriangularSolve(s, a, b, lower=False,
                                                                                          adjoint=True),
         lambda tf, a, b: tf.raw_ops.BandedTriangularSolve(matrix=a, rhs=b, lower=False, adjoint=True),
         r(2, 4) + np.array([[0.0], [3.0]]), r(4, 1)),
    case("MatrixSolveLs_over", lambda s, a, b: ops.MatrixSolveLs(s, a, b, np.float64(0.5)),
         lambda tf, a, b: tf.raw_ops.MatrixSolveLs(matrix=a, rhs=b, l2_regularizer=np.float64(0.5)), r(4, 3),
         r(4, 2), tf_rtol=1e-5),
    case("MatrixSolveLs_under", lambda s, a, b: ops.MatrixSolveLs(s, a, b, np.float64(0.25)),
         lambda tf, a, b: tf.raw_ops.MatrixSolveLs(matrix=a, rhs=b, l2_regularizer=np.float64(0.25)), r(2, 3),
         r(2, 2), tf_rtol=1e-5),
    case("SelfAdjointEigV2", lambda s, a: [ops.SelfAdjointEig(s, sym(s, a)).e,
                                          ops.Abs(s, ops.SelfAdjointEig(s, sym(s, a)).v)],
         lambda tf, a: [tf.raw_ops.SelfAdjointEigV2(input=sym_tf(tf, a))[0],
                        tf.abs(tf.raw_ops.SelfAdjointEigV2(input=sym_tf(tf, a))[1])],
         np.diag([1.0, 2.5, 4.0]) + 0.2 * r(3, 3), tf_rtol=1e-5),
    case("SelfAdjointEigV2_values", lambda s, a: ops.SelfAdjointEig(s, sym(s, a), compute_v=False).e,
         lambda tf, a: tf.raw_ops.SelfAdjointEigV2(input=sym_tf(tf, a), compute_v=False)[0],
         np.diag([1.0, 2.5, 4.0]) + 0.2 * r(3, 3)),
    case("Svd", lambda s, a: [ops.Svd(s, a).s, ops.Abs(s, ops.Svd(s, a).u), ops.Abs(s, ops.Svd(s, a).v)],
         lambda tf, a: [tf.raw_ops.Svd(input=a)[0], tf.abs(tf.raw_ops.Svd(input=a)[1]),
                        tf.abs(tf.raw_ops.Svd(input=a)[2])], r(4, 3), tf_rtol=1e-5, tf_atol=1e-6),
    case("Svd_wide_values", lambda s, a: ops.Svd(s, a, compute_uv=False).s,
         lambda tf, a: tf.raw_ops.Svd(input=a, compute_uv=False)[0], r(2, 3, 4)),
    complex_case("Eig", lambda s, a: [ops.Eig(s, a, DT_COMPLEX128).e,
                                      ops.ComplexAbs(s, ops.Eig(s, a, DT_COMPLEX128).v, Tout=DT_DOUBLE)],
                 lambda tf, a: [tf.raw_ops.Eig(input=a, Tout=tf.complex128)[0],
                                tf.abs(tf.raw_ops.Eig(input=a, Tout=tf.complex128)[1])],
                 np.diag([1.0, 2.0, 3.0]) + 0.1 * r(3, 3)),
    case("MatrixSquareRoot", lambda s, a: ops.MatrixSquareRoot(s, a), lambda tf, a: tf.raw_ops.MatrixSquareRoot(
        input=a), spd(2, 3, 3), tf_rtol=1e-5),
    case("TridiagonalMatMul", lambda s, u, m, d, b: ops.TridiagonalMatMul(s, u, m, d, b),
         lambda tf, u, m, d, b: tf.raw_ops.TridiagonalMatMul(superdiag=u, maindiag=m, subdiag=d, rhs=b),
         r(2, 1, 4), r(2, 1, 4), r(2, 1, 4), r(2, 4, 3)),
    case("TridiagonalSolve", lambda s, d, b: ops.TridiagonalSolve(s, d, b),
         lambda tf, d, b: tf.raw_ops.TridiagonalSolve(diagonals=d, rhs=b),
         r(2, 3, 4) + np.array([0.0, 4.0, 0.0])[:, None], r(2, 4, 2)),
    case("Einsum_matmul", lambda s, a, b: ops.Einsum(s, [a, b], "ij,jk->ik"),
         lambda tf, a, b: tf.raw_ops.Einsum(inputs=[a, b], equation="ij,jk->ik"), r(2, 3), r(3, 4)),
    case("Einsum_attention", lambda s, a, b: ops.Einsum(s, [a, b], "bhqd,bhkd->bhqk"),
         lambda tf, a, b: tf.raw_ops.Einsum(inputs=[a, b], equation="bhqd,bhkd->bhqk"), r(2, 2, 3, 4), r(2, 2, 5, 4)),
    case("Einsum_reduce", lambda s, a, b: ops.Einsum(s, [a, b], "abc,cd->ad"),
         lambda tf, a, b: tf.raw_ops.Einsum(inputs=[a, b], equation="abc,cd->ad"), r(2, 3, 4), r(4, 2)),
    case("Einsum_trace", lambda s, a: ops.Einsum(s, [a], "aab->b"),
         lambda tf, a: tf.raw_ops.Einsum(inputs=[a], equation="aab->b"), r(3, 3, 2)),
    case("Einsum_sum", lambda s, a: ops.Einsum(s, [a], "abc->ac"),
         lambda tf, a: tf.raw_ops.Einsum(inputs=[a], equation="abc->ac"), r(2, 3, 4)),
    case("Einsum_transpose", lambda s, a: ops.Einsum(s, [a], "abc->cab"),
         lambda tf, a: tf.raw_ops.Einsum(inputs=[a], equation="abc->cab"), r(2, 3, 4)),
    case("Einsum_ellipsis_broadcast", lambda s, a, b: ops.Einsum(s, [a, b], "...ij,...jk->...ik"),
         lambda tf, a, b: tf.raw_ops.Einsum(inputs=[a, b], equation="...ij,...jk->...ik"), r(2, 1, 2, 3), r(4, 3, 2)),
    case("Cross", lambda s, a, b: ops.Cross(s, a, b), lambda tf, a, b: tf.raw_ops.Cross(a=a, b=b), r(2, 3), r(2, 3)),
    case("ConjugateTranspose", lambda s, a: ops.ConjugateTranspose(s, a, np.asarray([2, 0, 1], np.int32)),
         lambda tf, a: tf.raw_ops.ConjugateTranspose(x=a, perm=[2, 0, 1]), r(2, 3, 4)),
    complex_case("ConjugateTranspose_complex", lambda s, a: ops.ConjugateTranspose(s, a, np.asarray([1, 0], np.int32)),
                 lambda tf, a: tf.raw_ops.ConjugateTranspose(x=a, perm=[1, 0]), c(2, 3)),
    case("MatrixDiagPart", lambda s, a: ops.MatrixDiagPart(s, a), lambda tf, a: tf.raw_ops.MatrixDiagPart(input=a),
         r(2, 3, 4)),
    case("MatrixDiagPartV3", lambda s, a: ops.MatrixDiagPartV3(s, a, np.asarray([-1, 1], np.int32), np.float64(0.0)),
         lambda tf, a: tf.raw_ops.MatrixDiagPartV3(input=a, k=[-1, 1], padding_value=0.0), r(2, 3, 4)),
    case("MatrixDiagV3", lambda s, d: ops.MatrixDiagV3(s, d, np.asarray([0, 1], np.int32), -1, -1, np.float64(0.0),
                                                       align="LEFT_RIGHT"),
         lambda tf, d: tf.raw_ops.MatrixDiagV3(diagonal=d, k=[0, 1], num_rows=-1, num_cols=-1, padding_value=0.0,
                                               align="LEFT_RIGHT"), r(2, 2, 3)),
    case("MatrixDiagPartV2", lambda s, a: ops.MatrixDiagPartV2(s, a, np.asarray([0, 1], np.int32), np.float64(0.0)),
         lambda tf, a: tf.raw_ops.MatrixDiagPartV2(input=a, k=[0, 1], padding_value=0.0), r(2, 3, 4)),
    case("MatrixDiagV2", lambda s, d: ops.MatrixDiagV2(s, d, np.asarray([-1, 0], np.int32), -1, -1, np.float64(0.0)),
         lambda tf, d: tf.raw_ops.MatrixDiagV2(diagonal=d, k=[-1, 0], num_rows=-1, num_cols=-1, padding_value=0.0),
         r(2, 2, 3)),
    case("MatrixSetDiagV2", lambda s, a, d: ops.MatrixSetDiagV2(s, a, d, np.asarray([-1, 0], np.int32)),
         lambda tf, a, d: tf.raw_ops.MatrixSetDiagV2(input=a, diagonal=d, k=[-1, 0]), r(3, 4), r(2, 3)),
    case("MatrixSetDiag", lambda s, a, d: ops.MatrixSetDiag(s, a, d),
         lambda tf, a, d: tf.raw_ops.MatrixSetDiag(input=a, diagonal=d), r(2, 3, 4), r(2, 3)),
    case("MatrixSetDiagV3", lambda s, a, d: ops.MatrixSetDiagV3(s, a, d, np.asarray([0, 1], np.int32)),
         lambda tf, a, d: tf.raw_ops.MatrixSetDiagV3(input=a, diagonal=d, k=[0, 1]), r(3, 4), r(2, 3)),
    complex_case("FFT", lambda s, x: raw_op(s, "FFT", x), lambda tf, x: tf.raw_ops.FFT(input=x), c(2, 5)),
    complex_case("IFFT", lambda s, x: raw_op(s, "IFFT", x), lambda tf, x: tf.raw_ops.IFFT(input=x), c(3, 4)),
    complex_case("FFT2D", lambda s, x: raw_op(s, "FFT2D", x), lambda tf, x: tf.raw_ops.FFT2D(input=x), c(3, 4)),
    complex_case("IFFT3D", lambda s, x: raw_op(s, "IFFT3D", x), lambda tf, x: tf.raw_ops.IFFT3D(input=x), c(2, 2, 3)),
    complex_case("IFFT2D", lambda s, x: raw_op(s, "IFFT2D", x), lambda tf, x: tf.raw_ops.IFFT2D(input=x), c(2, 3, 4)),
    complex_case("FFT3D", lambda s, x: raw_op(s, "FFT3D", x), lambda tf, x: tf.raw_ops.FFT3D(input=x), c(2, 3, 4)),
    case("RFFT", lambda s, x: [ops.Real(s, raw_op(s, "RFFT", x, np.asarray([6], np.int32), Tcomplex=DT_COMPLEX128),
                                        Tout=DT_DOUBLE),
                               ops.Imag(s, raw_op(s, "RFFT", x, np.asarray([6], np.int32), Tcomplex=DT_COMPLEX128),
                                        Tout=DT_DOUBLE)],
         lambda tf, x: [tf.math.real(tf.raw_ops.RFFT(input=x, fft_length=[6], Tcomplex=tf.complex128)),
                        tf.math.imag(tf.raw_ops.RFFT(input=x, fft_length=[6], Tcomplex=tf.complex128))], r(2, 6)),
    case("RFFT2D_odd", lambda s, x: ops.ComplexAbs(s, raw_op(s, "RFFT2D", x, np.asarray([3, 5], np.int32),
                                                              Tcomplex=DT_COMPLEX128),
                                                   Tout=DT_DOUBLE),
         lambda tf, x: tf.abs(tf.raw_ops.RFFT2D(input=x, fft_length=[3, 5], Tcomplex=tf.complex128)), r(2, 3, 5)),
    complex_case("IRFFT", lambda s, x: raw_op(s, "IRFFT", x, np.asarray([8], np.int32), Treal=DT_DOUBLE),
                 lambda tf, x: tf.raw_ops.IRFFT(input=x, fft_length=[8], Treal=tf.float64), c(2, 5)),
    complex_case("IRFFT2D_odd", lambda s, x: raw_op(s, "IRFFT2D", x, np.asarray([3, 5], np.int32), Treal=DT_DOUBLE),
                 lambda tf, x: tf.raw_ops.IRFFT2D(input=x, fft_length=[3, 5], Treal=tf.float64), c(3, 3)),
    complex_case("ComplexAbs", lambda s, x: ops.ComplexAbs(s, x, Tout=DT_DOUBLE),
                 lambda tf, x: tf.raw_ops.ComplexAbs(x=x, Tout=tf.float64), c(2, 3)),
]

test_gradient_matches_finite_differences, test_gradient_matches_tensorflow = case_tests(CASES)
