"""Factorizations: Cholesky, Qr, Svd, SelfAdjointEig(V2), Eig, Lu and their deprecated Batch* forms.

Each runs the array API's ``linalg`` routine (LAPACK on NumPy) over the whole batch.  Results are TF's where
TF's are determined: Cholesky and the eigensolvers read only the lower triangle; eigenvalues ascend
(SelfAdjointEig) or are ordered by modulus (Eig: TF sorts Eigen's eigenvalues by modulus; among equal moduli,
e.g. a conjugate pair, the order is LAPACK's); Qr's R has LAPACK's (= Eigen's Householder) signs.  Singular
vectors and eigenvectors are determined only up to a unit factor per column: the conformance comparison
checks them up to that factor, and the family tests check the invariants (``U diag(s) V^H = A``, ``A V = V E``).

Where TF's kernel answers with garbage (uninitialised outputs), these give a defined answer; see the
divergences at the end.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

import numpy as np
import scipy.linalg

from tfops_py.conformance import ALLOWED, BOOL, conformance, divergence, literal, reference
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._shape_util import add_dim
from tfops_py.kernels.linalg import _algorithms as alg
from tfops_py.kernels.linalg._linalg_domains import matrices
from tfops_py.kernels.linalg._linalg_util import (adjoint, batch_of, batch_square, check_matrices, check_square,
                                                  concat, hermitian_from_lower, is_numpy, min_dim, on_host,
                                                  unchanged_square, widened)
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "linalg"
D = DataType
_EMPTY = (0,)  # the shape of an output not computed (compute_uv / compute_v false)


def _empty(ctx: KernelContext, i: int) -> Any:
    return ctx.xp.zeros(_EMPTY, dtype=ctx.dtype(ctx.output_dtypes[i]))


def _nan(xp: Any, x: Any) -> Any:
    return complex(math.nan, math.nan) if xp.isdtype(x.dtype, "complex floating") else math.nan


# -- Cholesky ------------------------------------------------------------------------------------------
register_shape("Cholesky")(unchanged_square)


@register_kernel("Cholesky")
def _cholesky(ctx: KernelContext, x: Any) -> Any:
    """The lower factor ``L`` (``L L^H = A``) from ``A``'s lower triangle; a matrix that is not positive
    definite gives NaN in its lower triangle (TF logs a warning), zeros above."""
    check_matrices(ctx, x)
    check_square(ctx, x)
    if x.shape[-1] == 0:
        return x
    return alg.cholesky(ctx.xp, hermitian_from_lower(ctx.xp, x))[0]


# -- Qr --------------------------------------------------------------------------------------------------
@register_shape("Qr")
def _qr_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 2)
    if x.unknown_rank():
        return [x, x]
    m, n = x[-2], x[-1]
    p = min_dim(m, n)
    batch = batch_of(x)
    if ctx.attr("full_matrices"):
        return [concat(batch, m, m), concat(batch, m, n)]
    return [concat(batch, m, p), concat(batch, p, n)]


@register_kernel("Qr")
def _qr(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    check_matrices(ctx, x)
    a, back = widened(ctx, x)
    q, r = ctx.xp.linalg.qr(a, mode="complete" if ctx.attrs["full_matrices"] else "reduced")
    return back(q), back(r)


# -- Svd ---------------------------------------------------------------------------------------------------
@register_shape("Svd")
def _svd_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 2)
    if x.unknown_rank():
        return [x, x, x] if ctx.attr("compute_uv") else [x, PartialTensorShape(_EMPTY), PartialTensorShape(_EMPTY)]
    m, n = x[-2], x[-1]
    p = min_dim(m, n)
    batch = batch_of(x)
    if not ctx.attr("compute_uv"):
        return [concat(batch, p), PartialTensorShape(_EMPTY), PartialTensorShape(_EMPTY)]
    if ctx.attr("full_matrices"):
        return [concat(batch, p), concat(batch, m, m), concat(batch, n, n)]
    return [concat(batch, p), concat(batch, m, p), concat(batch, n, p)]


def _finite_or_zero(xp: Any, x: Any) -> tuple[Any, Any]:
    """(matrices with a non-finite entry, ``x`` with those matrices zeroed): LAPACK refuses NaN."""
    bad = ~xp.all(xp.isfinite(x), axis=(-2, -1))
    return bad, xp.where(bad[..., None, None], xp.zeros_like(x), x)


@register_kernel("Svd")
def _svd(ctx: KernelContext, x: Any) -> tuple[Any, Any, Any]:
    """``s`` (descending, in T: complex with zero imaginary part for complex input), ``u``, ``v`` (not
    ``v^H``); a matrix with a NaN or infinite entry gives NaN everywhere, as TF."""
    check_matrices(ctx, x)
    xp = ctx.xp
    a, back = widened(ctx, x)
    bad, a = _finite_or_zero(xp, a)
    any_bad = bool(xp.any(bad))
    out_type = ctx.dtype(ctx.output_dtypes[0])

    def spoil(y: Any, extra: int) -> Any:
        if not any_bad:
            return y
        mask = xp.reshape(bad, tuple(bad.shape) + (1,) * extra)
        return xp.where(mask, xp.full_like(y, _nan(xp, y)), y)

    if not ctx.attrs["compute_uv"]:
        s = xp.linalg.svdvals(a)
        return spoil(xp.astype(back(s), out_type), 1), _empty(ctx, 1), _empty(ctx, 2)
    u, s, vh = xp.linalg.svd(a, full_matrices=ctx.attrs["full_matrices"])
    return (spoil(xp.astype(back(s), out_type), 1), spoil(back(u), 2), spoil(back(adjoint(xp, vh)), 2))


# -- self-adjoint eigensolvers ------------------------------------------------------------------------------
@register_shape("SelfAdjointEigV2", "Eig")
def _eigen_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """Eigenvalues ``[..., N]`` and, with ``compute_v``, vectors ``[..., N, N]`` (else ``[0]``)."""
    x = batch_square(ctx, ctx.input(0))
    if x.unknown_rank():
        return [x, x if ctx.attr("compute_v") else PartialTensorShape(_EMPTY)]
    n = x[-1]
    v = concat(batch_of(x), n, n) if ctx.attr("compute_v") else PartialTensorShape(_EMPTY)
    return [concat(batch_of(x), n), v]


@register_shape("SelfAdjointEig")
def _eigh_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = batch_square(ctx, ctx.input(0))
    if x.unknown_rank():
        return [x]
    n = x[-1]
    return [concat(batch_of(x), add_dim(ctx, n, 1), n)]


def _eigh(ctx: KernelContext, x: Any, vectors: bool) -> tuple[Any, Any]:
    check_matrices(ctx, x)
    check_square(ctx, x)
    xp = ctx.xp
    a, back = widened(ctx, x)
    if not bool(xp.all(xp.isfinite(a))):
        ctx.invalid_argument("Self-adjoint eigen decomposition was not successful. The input might not be valid.")
    h = hermitian_from_lower(xp, a)
    if vectors:
        e, v = xp.linalg.eigh(h)
        return back(xp.astype(e, h.dtype)), back(v)
    return back(xp.astype(xp.linalg.eigvalsh(h), h.dtype)), None


@register_kernel("SelfAdjointEigV2")
def _self_adjoint_eig_v2(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    """Ascending eigenvalues (in T) and, with ``compute_v``, unit eigenvectors as columns, of the Hermitian
    matrices ``x``'s lower triangles define; a NaN or infinite entry is TF's error."""
    e, v = _eigh(ctx, x, ctx.attrs["compute_v"])
    return e, v if v is not None else _empty(ctx, 1)


@register_kernel("SelfAdjointEig")
def _self_adjoint_eig(ctx: KernelContext, x: Any) -> Any:
    """The deprecated layout: ``[..., M+1, M]``, eigenvalues in row 0, the eigenvector matrix below."""
    e, v = _eigh(ctx, x, True)
    return ctx.xp.concat([e[..., None, :], v], axis=-2)


# -- Eig -------------------------------------------------------------------------------------------------
_EIG_OUT = {D.DT_FLOAT: D.DT_COMPLEX64, D.DT_COMPLEX64: D.DT_COMPLEX64, D.DT_DOUBLE: D.DT_COMPLEX128,
            D.DT_COMPLEX128: D.DT_COMPLEX128}


@register_kernel("Eig")
def _eig(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    """Eigenvalues ordered by modulus (stable: equal moduli keep LAPACK's order) and unit eigenvectors as
    columns.  ``Tout`` must be the complex type of T's precision (TF's message otherwise)."""
    check_matrices(ctx, x)
    check_square(ctx, x)
    tout, expected = ctx.attrs["Tout"], _EIG_OUT[ctx.input_dtypes[0]]
    if tout != expected:
        ctx.invalid_argument(f"Invalid output dtype {int(tout)} vs {int(expected)}")
    xp = ctx.xp
    out_type = ctx.dtype(tout)
    compute_v = ctx.attrs["compute_v"]
    if x.shape[-1] == 0:
        e = xp.zeros(tuple(x.shape[:-1]), dtype=out_type)
        return e, xp.astype(x, out_type) if compute_v else _empty(ctx, 1)
    if not bool(xp.all(xp.isfinite(x))):
        ctx.invalid_argument("Eigen decomposition was not successful. The input might not be valid.")
    if hasattr(xp.linalg, "eig"):
        e, v = xp.linalg.eig(x)
    else:  # an array-API namespace without the (2025.12) eig extension: LAPACK on the host
        e, v = on_host(ctx, lambda a: tuple(np.linalg.eig(a)), x)
    order = xp.argsort(xp.abs(e), axis=-1, stable=True)
    e = xp.astype(xp.take_along_axis(e, order, axis=-1), out_type)
    if not compute_v:
        return e, _empty(ctx, 1)
    v = xp.take_along_axis(v, xp.broadcast_to(order[..., None, :], tuple(v.shape)), axis=-1)
    return e, xp.astype(v, out_type)


# -- Lu --------------------------------------------------------------------------------------------------
@register_shape("Lu")
def _lu_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = batch_square(ctx, ctx.input(0))
    if x.unknown_rank():
        return [x, x]
    return [x, concat(batch_of(x), x[-1])]


@register_kernel("Lu")
def _lu(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    """Packed factors (``L`` strictly below the diagonal with an implicit unit diagonal, ``U`` on and above)
    and the row permutation ``p`` with ``L U = x[p]``; an exactly zero pivot is TF's error."""
    check_matrices(ctx, x, rank_message="Input tensor must have rank >= 2, got {}")
    check_square(ctx, x)
    xp = ctx.xp
    idx_type = ctx.dtype(ctx.output_dtypes[1])
    if x.size == 0:
        return x, xp.zeros(tuple(x.shape[:-1]), dtype=idx_type)
    if is_numpy(ctx):
        p, lower, upper = cast(tuple[Any, Any, Any], scipy.linalg.lu(x, p_indices=True, check_finite=False))
        packed = np.tril(lower, -1) + upper
    else:
        packed, p = alg.lu(xp, x)
    if not bool(xp.all(xp.abs(xp.linalg.diagonal(packed)) > 0)):
        ctx.invalid_argument("Input is not invertible.")
    return xp.astype(packed, x.dtype), xp.astype(p, idx_type)


# -- conformance -------------------------------------------------------------------------------------------
_SQUARE = [dict(input=(3, 3)), dict(input=(2, 4, 4)), dict(input=(2, 1, 2, 2)), dict(input=(0, 0)),
           dict(input=(2, 0, 0)), dict(input=(3, 0, 2, 2)), dict(input=(3,)), dict(input=(2, 3))]
_ANY_SHAPE = [dict(input=(3, 3)), dict(input=(2, 4, 3)), dict(input=(2, 1, 3, 5)), dict(input=(0, 3)),
              dict(input=(3, 0)), dict(input=(2, 0, 0)), dict(input=(3,))]
_SPECIALS = [[[math.nan, 1.0], [1.0, 2.0]], [[1.0, 2.0], [math.inf, 3.0]]]

conformance("Cholesky", input=matrices("spd"), compare="lin", shapes=_SQUARE, live=10,
            cases=[{"input": literal(v)} for v in ([[4.0, 100.0], [2.0, 5.0]], [[-4.0, 0.0], [0.0, 5.0]],
                                                   [[4.0, 0.0], [0.0, -5.0]], [[math.nan, 0.0], [0.0, 1.0]])])
conformance("Qr", input=matrices(), compare="qr", shapes=_ANY_SHAPE, full_matrices=BOOL, live=10,
            cases=[{"input": literal([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]), "full_matrices": True}])
conformance("Svd", input=matrices(), compare="svd", shapes=_ANY_SHAPE, full_matrices=BOOL, compute_uv=BOOL, live=10,
            cases=[{"input": literal(v)} for v in _SPECIALS])
conformance("SelfAdjointEigV2", input=matrices("hermitian"), compare="eigh", shapes=_SQUARE, compute_v=BOOL, live=10,
            cases=[{"input": literal(v)} for v in _SPECIALS + [[[1.0, 5.0], [2.0, 1.0]]]])
conformance("SelfAdjointEig", input=matrices("hermitian"), compare="eigh_rows", shapes=_SQUARE, live=4, messages=False)
conformance("Eig", input=matrices(), compare="eig", shapes=_SQUARE, compute_v=BOOL, Tout=ALLOWED, live=10,
            cases=[{"input": literal([[0.0, 1.0], [-1.0, 0.0]], D.DT_FLOAT), "Tout": D.DT_COMPLEX64},
                   {"input": literal([[0.0, 1.0], [-1.0, 0.0]], D.DT_FLOAT), "Tout": D.DT_COMPLEX128},
                   {"input": literal(_SPECIALS[0], D.DT_DOUBLE), "Tout": D.DT_COMPLEX128}])
conformance("Lu", input=matrices("invertible"), compare="lin", shapes=_SQUARE, output_idx_type=ALLOWED, live=10,
            cases=[{"input": literal(v)} for v in ([[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]],
                                                   [[1.0, 2.0], [3.0, 4.0]])])


def _not_positive_definite(inputs: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    """Whether LAPACK's Cholesky fails on some matrix the input's lower triangles define."""
    x = np.asarray(inputs["input"])
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.shape[-1] == 0:
        return False
    h = np.tril(x) + np.conj(np.swapaxes(np.tril(x, -1), -1, -2))
    try:
        with np.errstate(all="ignore"):
            np.linalg.cholesky(h.astype(np.complex128 if h.dtype.kind == "c" else np.float64))
    except np.linalg.LinAlgError:
        return True
    return False


_CASES = "tfops_py.kernels.linalg._linalg_cases"
divergence("Cholesky", when="a real matrix that is not positive definite",
           tf="NaN in its lower triangle (with a logged warning); its strict upper triangle left unwritten "
              "(uninitialised memory)", ours="NaN in the lower triangle, zeros above",
           dtypes=(D.DT_FLOAT, D.DT_DOUBLE), applies=_not_positive_definite,
           reference=reference(f"{_CASES}:lower_triangle", "TF's value with the strict upper triangle (which TF "
                                                            "leaves unwritten on failure) zero"))
_EMPTY_NOTE = "TF's first output; the outputs not computed are empty ([0]) where TF returns an uninitialised scalar"
divergence("Svd", when="`compute_uv=false`",
           tf="`u` and `v` are uninitialised scalars (the graph's static shapes say `[0]`)",
           ours="empty `u` and `v` of shape `[0]`", attrs={"compute_uv": False},
           reference=reference(f"{_CASES}:values_then_empty", _EMPTY_NOTE))
divergence(("SelfAdjointEigV2", "Eig"), when="`compute_v=false`",
           tf="`v` is an uninitialised scalar (the graph's static shape says `[0]`)",
           ours="an empty `v` of shape `[0]`", attrs={"compute_v": False},
           reference=reference(f"{_CASES}:values_then_empty", _EMPTY_NOTE))

_COMPLEX = {None: (D.DT_COMPLEX64, D.DT_COMPLEX128)}
_COMPLEX_NAN = ("fills it with `std::numeric_limits<complex>::quiet_NaN()`, which is 0: zeros, silently (and leaves "
                "the rest unwritten)")
divergence("Cholesky", when="a complex matrix that is not positive definite", tf=_COMPLEX_NAN,
           ours="NaN (NaN + NaN i) in the lower triangle, zeros above", dtypes=_COMPLEX[None],
           applies=_not_positive_definite)
divergence("Svd", when="a complex matrix with a NaN or infinite entry", tf=_COMPLEX_NAN.replace(" (and leaves the rest "
                                                                                                  "unwritten)", ""),
           ours="NaN + NaN i in s, u and v", dtypes=_COMPLEX[None],
           applies=lambda inputs, attrs: not np.isfinite(np.asarray(inputs["input"])).all())
