"""Input domains of the linear-algebra conformance declarations: matrices a factorization is defined and
well conditioned on (so that TF's and LAPACK's rounding stay within the tolerance table), permutations,
band and tridiagonal operands.  Drawn only when cases are generated (see ``tfops_py.conformance.domains``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance.domains import Domain, Draw
from tfops_py.framework.dtypes import DataType

KINDS = ("general", "invertible", "spd", "hermitian", "triangular", "near_identity", "rank_deficient", "cholesky")


def _normal(rng: np.random.Generator, shape: tuple[int, ...], complex_: bool) -> np.ndarray:
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def _adjoint(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def matrices_of(kind: str, rng: np.random.Generator, shape: tuple[int, ...], complex_: bool) -> np.ndarray:
    """Random matrices of ``shape`` (float64/complex128) of a ``kind`` (see :class:`Matrices`)."""
    x = _normal(rng, shape, complex_)
    if len(shape) < 2 or shape[-1] != shape[-2] or kind == "general":
        return x
    n = shape[-1]
    eye = np.eye(n)
    if kind == "invertible" or kind == "triangular":  # diagonally dominant: condition number below ~5
        signs = np.where(rng.integers(0, 2, shape[:-1]) == 0, -1.0, 1.0)
        return x + (2.0 * np.sqrt(n) + 1.0) * eye * signs[..., None, :]
    if kind == "spd":
        return (x @ _adjoint(x)) / max(n, 1) + eye
    if kind == "cholesky":  # a lower factor with a positive diagonal (what Cholesky returns)
        return np.linalg.cholesky((x @ _adjoint(x)) / max(n, 1) + eye)
    if kind == "hermitian":  # eigenvalues spread apart: eigenvectors well defined
        q, _ = np.linalg.qr(x)
        e = np.sort(rng.uniform(-3, 3, shape[:-1]), axis=-1) + np.arange(n) * 1.5
        return (q * e[..., None, :]) @ _adjoint(q)
    if kind == "near_identity":  # eigenvalues near 1: logarithm and square root on the principal branch
        return eye + 0.3 * x / max(np.sqrt(n), 1.0)
    if kind == "rank_deficient":
        k = max(n - 1, 0)
        return _normal(rng, shape[:-1] + (k,), complex_) @ _normal(rng, shape[:-2] + (k, n), complex_)
    raise ValueError(f"unknown matrix kind {kind!r}")


class Matrices(Domain):
    """Floating or complex matrices of the case's shape pattern.  ``kind`` (square shapes only; others draw
    ``general``): ``general`` N(0, 1) entries; ``invertible``/``triangular`` diagonally dominant;
    ``spd`` Hermitian positive definite; ``cholesky`` the lower factor of one; ``hermitian`` with eigenvalues
    at least 1.5 apart; ``near_identity`` eigenvalues near 1; ``rank_deficient`` of rank n - 1."""

    def __init__(self, kind: str = "general", scale: float = 1.0):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
        self.kind, self.scale = kind, scale

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_floating or dtype.is_complex

    def draw(self, d: Draw) -> np.ndarray:
        x = matrices_of(self.kind, d.rng, tuple(d.shape or ()), d.dtype.is_complex) * self.scale
        return np.asarray(x).astype(d.dtype.numpy_dtype)


def matrices(kind: str = "general", scale: float = 1.0) -> Matrices:
    return Matrices(kind, scale)


class PermutationOf(Domain):
    """A permutation of input ``name``'s axes (negative entries too)."""

    patterned = False

    def __init__(self, name: str):
        self.name = name
        self.depends = (name,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DataType.DT_INT32, DataType.DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        rank = d.rank_of(self.name)
        perm = d.rng.permutation(rank)
        negative = d.rng.integers(0, 2, rank).astype(bool)
        return np.where(negative, perm - rank, perm).astype(d.dtype.numpy_dtype)


def permutation_of(name: str) -> PermutationOf:
    return PermutationOf(name)


class Scalar(Domain):
    """One scalar of the input's type, uniform in [lo, hi] (a regularizer, a count)."""

    patterned = False

    def __init__(self, lo: float, hi: float, dtype: DataType | None = None):
        self.lo, self.hi, self.dtype = lo, hi, dtype

    def fixed_dtype(self) -> DataType | None:
        return self.dtype

    def draw(self, d: Draw) -> np.ndarray:
        value: Any = d.rng.uniform(self.lo, self.hi)
        if d.dtype.is_integer:
            value = int(round(value))
        return np.asarray(value, d.dtype.numpy_dtype)


def scalar(lo: float, hi: float, dtype: DataType | None = None) -> Scalar:
    return Scalar(lo, hi, dtype)


class Magnitudes(Domain):
    """Values of random sign with magnitudes uniform in [lo, hi] (triangular factors with no tiny pivot)."""

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_floating or dtype.is_complex

    def draw(self, d: Draw) -> np.ndarray:
        shape = tuple(d.shape or ())
        v = d.rng.uniform(self.lo, self.hi, shape) * np.where(d.rng.integers(0, 2, shape) == 0, -1.0, 1.0)
        if d.dtype.is_complex:
            v = v * np.exp(1j * d.rng.uniform(0, 2 * np.pi, shape))
        return v.astype(d.dtype.numpy_dtype)


def magnitudes(lo: float = 1.0, hi: float = 2.0) -> Magnitudes:
    return Magnitudes(lo, hi)


class Tridiagonal(Domain):
    """``[..., 3, M]`` diagonals of a diagonally dominant tridiagonal matrix (superdiagonal, diagonal,
    subdiagonal): stable with or without pivoting.  Other shapes draw N(0, 1) values."""

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_floating or dtype.is_complex

    def draw(self, d: Draw) -> np.ndarray:
        shape = tuple(d.shape or ())
        x = _normal(d.rng, shape, d.dtype.is_complex)
        if len(shape) >= 2 and shape[-2] == 3:
            signs = np.where(d.rng.integers(0, 2, shape[:-2] + shape[-1:]) == 0, -1, 1)
            x[..., 1, :] = signs * (3 + np.abs(x[..., 1, :]))
        return x.astype(d.dtype.numpy_dtype)


def tridiagonal() -> Tridiagonal:
    return Tridiagonal()
