"""Backend-neutral factorizations and solves the array API has no routine for, vectorized over the batch.

Each loops over one matrix dimension (rows or columns), never over batch items: every step is whole-batch
array code on ``xp``.  They reproduce the semantics of TF's Eigen-based CPU kernels where those differ from
LAPACK's (which positions fail, what a failed matrix holds), so the kernels can use a library routine on
the fast path and fall back here.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from tfops_py.kernels.linalg._linalg_util import adjoint


@contextlib.contextmanager
def quiet(xp: Any) -> Iterator[None]:
    """Division by zero and overflow are part of these algorithms' answers: no NumPy warnings for them."""
    if xp is np or getattr(xp, "__name__", "").startswith("array_api_strict"):
        with np.errstate(all="ignore"):
            yield
    else:
        yield


def _is_complex(xp: Any, x: Any) -> bool:
    return xp.isdtype(x.dtype, "complex floating")


def _real(xp: Any, x: Any) -> Any:
    return xp.real(x) if _is_complex(xp, x) else x


# -- Cholesky ----------------------------------------------------------------------------------------
def cholesky(xp: Any, h: Any) -> tuple[Any, Any | None]:
    """Lower Cholesky factors of the Hermitian matrices ``h`` with Eigen's ``LLT`` semantics, and which
    matrices failed (None: none did): a matrix whose pivot ``h_jj - sum |L_jk|^2`` is ``<= 0`` fails and has
    its lower triangle filled with NaN (its strict upper triangle zero); a NaN pivot is not a failure (NaN
    propagates)."""
    with quiet(xp):
        try:
            out = xp.linalg.cholesky(h)
        except (ValueError, ArithmeticError):  # NumPy/LAPACK: some matrix not positive definite, or NaN
            return _cholesky_by_columns(xp, h)
        if bool(xp.all(xp.isfinite(out))):
            return out, None
        return _cholesky_by_columns(xp, h)  # a backend that returns garbage instead of raising


def _cholesky_by_columns(xp: Any, h: Any) -> tuple[Any, Any]:
    n = h.shape[-1]
    lower = xp.zeros_like(h)
    failed = xp.zeros(h.shape[:-2], dtype=xp.bool)
    for j in range(n):
        prev = lower[..., j, :j]
        pivot = _real(xp, h[..., j, j]) - xp.sum(_real(xp, prev * xp.conj(prev)), axis=-1)
        failed = failed | (pivot <= 0)
        d = xp.sqrt(pivot)
        d = xp.astype(d, h.dtype) if _is_complex(xp, h) else d
        lower[..., j, j] = d
        if j + 1 < n:
            col = h[..., j + 1:, j] - xp.matmul(lower[..., j + 1:, :j], xp.conj(prev)[..., None])[..., 0]
            lower[..., j + 1:, j] = col / d[..., None]
    nan = xp.full_like(lower, math.nan) if not _is_complex(xp, h) else xp.full_like(lower, complex(math.nan, math.nan))
    tri = xp.tril(xp.ones((n, n), dtype=xp.bool))
    return xp.where(failed[..., None, None] & tri, nan, lower), failed


# -- LU with partial pivoting ---------------------------------------------------------------------------
def lu(xp: Any, a: Any) -> tuple[Any, Any]:
    """Packed ``L\\U`` factors and the row permutation ``p`` (``L U = a[p]``) of square matrices, with partial
    pivoting on the first entry of largest modulus in each column (ties: the first, as LAPACK)."""
    n = a.shape[-1]
    work = xp.asarray(a, copy=True)
    batch = tuple(a.shape[:-2])
    perm = xp.broadcast_to(xp.arange(n, dtype=xp.int64), batch + (n,))
    perm = xp.asarray(perm, copy=True)
    rows = xp.arange(n, dtype=xp.int64)
    with quiet(xp):
        for k in range(n):
            pivot = xp.argmax(xp.abs(work[..., k:, k]), axis=-1) + k
            pivot = xp.astype(pivot, xp.int64)
            swap = xp.where(rows == k, pivot[..., None], xp.where(rows == pivot[..., None], k, rows))
            work = xp.take_along_axis(work, swap[..., None], axis=-2)
            perm = xp.take_along_axis(perm, swap, axis=-1)
            if k + 1 < n:
                factors = work[..., k + 1:, k] / work[..., k, k][..., None]
                work[..., k + 1:, k] = factors
                pivot_row = work[..., k, k + 1:][..., None, :]
                work[..., k + 1:, k + 1:] = work[..., k + 1:, k + 1:] - factors[..., None] * pivot_row
    return work, perm


# -- triangular solves -----------------------------------------------------------------------------------
def triangular_solve(xp: Any, a: Any, b: Any, lower: bool, adjoint_a: bool = False) -> Any:
    """``op(a) x = b`` by substitution, row by row (``a``'s other triangle is never read; a zero on the
    diagonal gives inf/NaN, as Eigen's triangular solve).  ``a`` and ``b`` have equal batch shapes."""
    n = a.shape[-1]
    if adjoint_a:
        a, lower = adjoint(xp, a), not lower
    x = xp.zeros_like(b)
    with quiet(xp):
        for i in (range(n) if lower else range(n - 1, -1, -1)):
            done = slice(0, i) if lower else slice(i + 1, n)
            acc = b[..., i:i + 1, :] - xp.matmul(a[..., i:i + 1, done], x[..., done, :])
            x[..., i:i + 1, :] = acc / a[..., i:i + 1, i:i + 1]
    return x


def banded_triangular_solve(xp: Any, band: Any, b: Any, lower: bool, adjoint_a: bool) -> Any:
    """TF's BandedTriangularSolve on band storage ``band`` (``[..., bands, M]``): lower matrices keep the
    diagonal in row 0 and ``A[i, i-j]`` at ``band[j, i]``; upper ones the diagonal in the last row and
    ``A[k, k+j]`` at ``band[bands-1-j, k]``.  Row by row, each step a dot with at most ``bands - 1`` solved
    rows.  ``band`` and ``b`` have equal batch shapes."""
    nb, m = band.shape[-2], band.shape[-1]
    coef = band if lower else xp.flip(band, axis=-2)  # coef[j, i]: A[i, i-j] (lower) / A[i, i+j] (upper)
    if adjoint_a:  # row i of A^H: conj(A[i+j, i]) (lower) / conj(A[i-j, i]) (upper): shift band row j by j
        coef = xp.conj(coef) if _is_complex(xp, band) else coef
        coef = xp.stack([_shift(xp, coef[..., j, :], j if lower else -j) for j in range(nb)], axis=-2)
    forward = lower != adjoint_a
    x = xp.zeros_like(b)
    with quiet(xp):
        for i in (range(m) if forward else range(m - 1, -1, -1)):
            reach = min(i if forward else m - 1 - i, nb - 1)
            acc = b[..., i, :]
            if reach:
                solved = xp.flip(x[..., i - reach:i, :], axis=-2) if forward else x[..., i + 1:i + reach + 1, :]
                acc = acc - xp.matmul(coef[..., 1:reach + 1, i][..., None, :], solved)[..., 0, :]
            x[..., i, :] = acc / coef[..., 0, i][..., None]
    return x


def _shift(xp: Any, row: Any, by: int) -> Any:
    """``row`` moved ``by`` places left (negative: right), zeros coming in."""
    n = row.shape[-1]
    if by == 0:
        return row
    if abs(by) >= n:
        return xp.zeros_like(row)
    pad = xp.zeros(row.shape[:-1] + (abs(by),), dtype=row.dtype)
    if by > 0:
        return xp.concat([row[..., by:], pad], axis=-1)
    return xp.concat([pad, row[..., :by]], axis=-1)


# -- tridiagonal solves (TF's TridiagonalSolve: LAPACK's gtsv / gtsv without pivoting / lagtf + lagts) ------
def _where(xp: Any, cond: Any, a: Any, b: Any) -> Any:
    return xp.where(cond, a, b)


def _nan_where(xp: Any, failed: Any, x: Any) -> Any:
    nan = complex(math.nan, math.nan) if _is_complex(xp, x) else math.nan
    return xp.where(failed[..., None, None], xp.full_like(x, nan), x)


def tridiagonal_solve(xp: Any, sup: Any, diag: Any, sub: Any, rhs: Any, pivoting: bool) -> Any:
    """``T x = rhs`` for the tridiagonal ``T`` with diagonals ``sup`` (last entry ignored), ``diag`` and ``sub``
    (first ignored), each ``[..., n]``; ``rhs`` is ``[..., n, k]``.  A matrix met with a zero pivot gives NaN
    (TF logs a warning and fills NaN).  Gaussian elimination with partial pivoting (row interchanges when the
    subdiagonal entry is larger), or the Thomas algorithm."""
    n = diag.shape[-1]
    if n == 0:
        return xp.zeros_like(rhs)
    with quiet(xp):
        if not pivoting:
            return _thomas(xp, sup, diag, sub, rhs)
        u0 = [diag[..., 0]] + [None] * (n - 1)
        u1 = [sup[..., 0]] + [None] * (n - 1)
        u2: list[Any] = [None] * n
        xr = [rhs[..., 0, :]] + [None] * (n - 1)
        failed = xp.zeros(diag.shape[:-1], dtype=xp.bool)
        for i in range(n - 1):
            s, d_next, r_next = sub[..., i + 1], diag[..., i + 1], rhs[..., i + 1, :]
            keep = xp.abs(u0[i]) >= xp.abs(s)
            failed = failed | (keep & (u0[i] == 0))
            f_keep, f_swap = s / u0[i], u0[i] / s
            u0_next = _where(xp, keep, d_next - f_keep * u1[i], u1[i] - f_swap * d_next)
            x_next = _where(xp, keep[..., None], r_next - f_keep[..., None] * xr[i], xr[i] - f_swap[..., None] * r_next)
            xr[i] = _where(xp, keep[..., None], xr[i], r_next)
            u0[i] = _where(xp, keep, u0[i], s)
            if i != n - 2:
                s_next = sup[..., i + 1]
                u2[i] = _where(xp, keep, xp.zeros_like(s_next), s_next)
                u1[i + 1] = _where(xp, keep, s_next, -f_swap * s_next)
            u1[i] = _where(xp, keep, u1[i], d_next)
            u0[i + 1], xr[i + 1] = u0_next, x_next
        failed = failed | (u0[n - 1] == 0)
        return _nan_where(xp, failed, _back_substitute(xp, u0, u1, u2, xr))


def _back_substitute(xp: Any, u0: list, u1: list, u2: list, xr: list, perturb: Any = None) -> Any:
    """Solve the banded upper factor ``U`` (diagonal ``u0``, superdiagonals ``u1``, ``u2``) against ``xr``;
    with ``perturb`` (the tolerance), each pivot goes through :func:`_perturbed` first."""
    n = len(u0)
    x: list[Any] = [None] * n
    for i in range(n - 1, -1, -1):
        row = xr[i]
        if i + 1 < n:
            row = row - u1[i][..., None] * x[i + 1]
        if i + 2 < n:
            row = row - u2[i][..., None] * x[i + 2]
        denom = u0[i]
        if perturb is None:
            x[i] = row / denom[..., None]
        else:
            denom, row = _perturbed(xp, perturb, denom, row)
            x[i] = row * (1 / denom)[..., None]
    return xp.stack(x, axis=-2)


def _thomas(xp: Any, sup: Any, diag: Any, sub: Any, rhs: Any) -> Any:
    n = diag.shape[-1]
    failed = diag[..., 0] == 0
    u = [sup[..., 0] / diag[..., 0]]
    x = [rhs[..., 0, :] / diag[..., 0][..., None]]
    for i in range(1, n):
        denom = diag[..., i] - sub[..., i] * u[i - 1]
        failed = failed | (denom == 0)
        u.append(sup[..., i] / denom)
        x.append((rhs[..., i, :] - sub[..., i][..., None] * x[i - 1]) / denom[..., None])
    for i in range(n - 2, -1, -1):
        x[i] = x[i] - u[i][..., None] * x[i + 1]
    return _nan_where(xp, failed, xp.stack(x, axis=-2))


def tridiagonal_solve_perturbed(xp: Any, sup: Any, diag: Any, sub: Any, rhs: Any) -> Any:
    """TF's ``perturb_singular`` solve (LAPACK's lagtf + lagts): pivoting by scaled magnitudes, then tiny
    pivots of the upper factor perturbed by ``eps * max |U|`` (or the row scaled up) so that numerically
    singular systems give large finite answers instead of inf."""
    n = diag.shape[-1]
    if n == 0:
        return xp.zeros_like(rhs)
    eps = float(xp.finfo(_real(xp, diag).dtype).eps)
    with quiet(xp):
        if n == 1:
            return _back_substitute(xp, [diag[..., 0]], [], [], [rhs[..., 0, :]], eps * xp.abs(diag[..., 0]))
        u0 = [diag[..., 0]] + [None] * (n - 1)
        u1 = [sup[..., 0]] + [None] * (n - 1)
        u2: list[Any] = [None] * n
        xr = [rhs[..., 0, :]] + [None] * (n - 1)
        max_u = xp.maximum(xp.abs(u0[0]), xp.abs(u1[0]))
        scale1 = xp.abs(u0[0]) + xp.abs(u1[0])
        for k in range(n - 1):
            s, d_next, r_next = sub[..., k + 1], diag[..., k + 1], rhs[..., k + 1, :]
            s_next = sup[..., k + 1] if k < n - 2 else xp.zeros_like(s)
            scale2 = xp.abs(s) + xp.abs(d_next) + (xp.abs(s_next) if k < n - 2 else 0)
            piv1 = xp.where(u0[k] == 0, xp.zeros_like(scale1), xp.abs(u0[k]) / scale1)
            swap = (s != 0) & (xp.abs(s) / scale2 > piv1)
            f_keep = xp.where(s == 0, xp.zeros_like(s), s / u0[k])
            f_swap = u0[k] / s
            u0[k + 1] = _where(xp, swap, u1[k] - f_swap * d_next, d_next - f_keep * u1[k])
            x_next = _where(xp, swap[..., None], xr[k] - f_swap[..., None] * r_next, r_next - f_keep[..., None] * xr[k])
            xr[k] = _where(xp, swap[..., None], r_next, xr[k])
            u0[k] = _where(xp, swap, s, u0[k])
            u1[k + 1] = _where(xp, swap, -f_swap * s_next, s_next)
            u2[k] = _where(xp, swap, s_next, xp.zeros_like(s_next))
            u1[k] = _where(xp, swap, d_next, u1[k])
            scale1 = _where(xp, swap, scale1, scale2)
            xr[k + 1] = x_next
            if k < n - 2:
                max_u = xp.maximum(max_u, xp.maximum(xp.abs(u0[k]), xp.maximum(xp.abs(u1[k]), xp.abs(u2[k]))))
        max_u = xp.maximum(max_u, xp.abs(u0[n - 1]))
        return _back_substitute(xp, u0, u1, u2, xr, eps * max_u)


def _perturbed(xp: Any, tol: Any, pivot: Any, row: Any) -> tuple[Any, Any]:
    """LAPACK lagts's guard for one pivot per matrix: while ``|pivot| < 1`` and ``row / pivot`` could
    overflow, add ``tol`` (doubling it each time, with the pivot's sign), or scale pivot and row up once."""
    real = _real(xp, pivot).dtype
    safemin = float(xp.finfo(real).smallest_normal)
    bignum = 1.0 / safemin
    step = xp.copysign(xp.maximum(xp.abs(tol), xp.asarray(safemin, dtype=real)), _real(xp, pivot))
    biggest = xp.max(xp.abs(row), axis=-1) if row.shape[-1] else xp.zeros_like(step)
    size = xp.abs(pivot)
    active = size < 1
    for _ in range(4 * int(math.log2(bignum)) + 8):  # each step doubles the perturbation: bounded
        if not bool(xp.any(active)):
            break
        tiny = size < safemin
        add = active & ((tiny & ((size == 0) | (biggest * safemin > size))) | (~tiny & (biggest > size * bignum)))
        scale = active & tiny & ~add
        pivot = xp.where(add, pivot + xp.astype(step, pivot.dtype), xp.where(scale, pivot * bignum, pivot))
        row = xp.where(scale[..., None], row * bignum, row)
        step = xp.where(add, step * 2, step)
        size = xp.abs(pivot)
        active = add & (size < 1)
    return pivot, row


# -- matrix exponential (tf.linalg.expm's algorithm: Pade approximants with scaling and squaring) ----------
_PADE = {
    3: (120.0, 60.0, 12.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0),
}
# (largest degree's norm bound, [(norm below which, degree), ...]) per precision (Higham 2005, as tf.linalg.expm)
_SINGLE = (3.925724783138660, 7, [(4.258730016922831e-001, 3), (1.880152677804762e+000, 5)])
_DOUBLE = (5.371920351148152, 13, [(1.495585217958292e-002, 3), (2.539398330063230e-001, 5),
                                   (9.504178996162932e-001, 7), (2.097847961257068e+000, 9)])


def _pade(xp: Any, a: Any, degree: int) -> tuple[Any, Any]:
    """(U, V) of the degree-``degree`` Pade approximant: ``exp(a) ~ (V - U)^-1 (V + U)``."""
    b = _PADE[degree]
    eye = xp.eye(a.shape[-1], dtype=a.dtype)
    a2 = xp.matmul(a, a)
    if degree == 13:
        a4 = xp.matmul(a2, a2)
        a6 = xp.matmul(a4, a2)
        u = xp.matmul(a6, a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye
        v = xp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
        return xp.matmul(a, u), v
    powers = [eye, a2]  # I, a^2, a^4, ...: summed from the highest power down, in tf.linalg.expm's order
    for _ in range(degree // 2 - 1):
        powers.append(xp.matmul(powers[-1], a2))
    top = len(powers) - 1
    u = powers[top]
    for i in range(top - 1, -1, -1):
        u = u + b[2 * i + 1] * powers[i]
    v = b[2 * top] * powers[top]
    for i in range(top - 1, -1, -1):
        v = v + b[2 * i] * powers[i]
    return xp.matmul(a, u), v


def expm(xp: Any, a: Any) -> Any:
    """``exp(a)`` for square matrices by tf.linalg.expm's algorithm: the 1-norm picks a Pade degree per
    matrix (3, 5, 7 in single precision; up to 13 in double), the largest degree after scaling by
    ``2^-s``, then ``s`` squarings."""
    single = a.dtype in (xp.float32, xp.complex64) or (hasattr(xp, "float16") and a.dtype == xp.float16)
    bound, top, cuts = _SINGLE if single else _DOUBLE
    norm = xp.max(xp.sum(xp.abs(a), axis=-2), axis=-1)
    with quiet(xp):
        squarings = xp.maximum(xp.floor(xp.log(norm / bound) / math.log(2.0)), xp.zeros_like(norm))
        scaled = a / xp.astype(xp.pow(2.0, squarings), a.dtype)[..., None, None]
        u, v = _pade(xp, scaled, top)
        for cut, degree in reversed(cuts):
            chosen = (norm < cut)[..., None, None]
            if bool(xp.any(chosen)):
                u_d, v_d = _pade(xp, a, degree)
                u, v = xp.where(chosen, u_d, u), xp.where(chosen, v_d, v)
        result = xp.linalg.solve(v - u, u + v)
        most = float(xp.max(squarings)) if squarings.size else 0.0
        i = 0
        while i < most:
            result = xp.where((i < squarings)[..., None, None], xp.matmul(result, result), result)
            i += 1
    return result
