"""Comparisons of factorizations whose factors TF itself does not determine: singular vectors, eigenvectors and
QR's Q columns are unique only up to a unit factor per column (and within a cluster of equal singular values or
eigenvalues, up to any unitary mixing); general eigenvalues come in an order TF leaves open among equal moduli.

Each comparison takes all of an op's outputs (ours and TF's) and checks what is determined, under the ``lin``
tolerance of ``tolerances.py`` (error relative to ``max(1, max |TF's value|)``):

* ``svd`` (s, u, v): equal ``s``; ``u diag(s) v^H`` equal to TF's; our ``u`` and ``v`` have orthonormal columns;
* ``qr`` (q, r): ``q r`` equal to TF's; our ``q`` has orthonormal columns and our ``r`` is upper triangular;
  each column of ``q`` (row of ``r``) equal to TF's up to a unit factor where TF's ``r_kk`` is not negligible;
* ``eigh`` (e, v): equal ``e``; ``v diag(e) v^H`` equal to TF's; our ``v`` orthonormal (``eigh_rows``: the same
  for SelfAdjointEig's ``[..., M+1, M]`` output, eigenvalues in row 0);
* ``eig`` (e, v): ``e`` equal to TF's as a multiset (each eigenvalue matched to the nearest); each eigenvector
  equal to its partner's up to a unit factor.

Outputs with NaN (TF's answer for a matrix with non-finite entries) are compared element by element instead.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tests.conformance.tolerances import TOLERANCES, assert_values

JOINT_KINDS = ("svd", "qr", "eigh", "eigh_rows", "eig")
_PART = {"complex64": "float32", "complex128": "float64"}


def _tol(x: np.ndarray) -> float:
    name = "bfloat16" if x.dtype.name == "bfloat16" else x.dtype.name
    return TOLERANCES["lin"][_PART.get(name, name)]


def _wide(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(np.complex128)


def _adj(x: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(x, -1, -2))


def _close(a: np.ndarray, b: np.ndarray, tol: float, what: str) -> None:
    """``max |a - b| <= tol * max(1, max |b|)``."""
    scale = max(1.0, float(np.abs(b).max(initial=0.0)))
    err = float(np.abs(a - b).max(initial=0.0)) / scale
    assert err <= tol, f"{what}: error {err:.3g} > {tol} (relative to {scale:.3g})"


def _orthonormal(q: np.ndarray, tol: float, what: str) -> None:
    if q.size == 0:
        return
    gram = _adj(q) @ q
    _close(gram, np.broadcast_to(np.eye(q.shape[-1]), gram.shape), tol, f"{what}: columns not orthonormal")


def _has_nan(values: list[np.ndarray]) -> bool:
    return any(np.isnan(v).any() for v in values if v.dtype.kind in "fc")


def _elementwise(ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    for i, (a, b) in enumerate(zip(ours, ref)):
        assert_values(a, b, "lin", f"{what} output {i}")


def _svd(ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    s, u, v = ours
    s_ref, u_ref, v_ref = ref
    tol = _tol(s_ref)
    assert_values(s, s_ref, "lin", f"{what} singular values")
    if u_ref.shape == (0,) or u_ref.size == 0:
        assert u.shape == u_ref.shape and v.shape == v_ref.shape, f"{what}: u/v shapes {u.shape}, {v.shape}"
        return
    p = s_ref.shape[-1]
    rebuilt = (_wide(u)[..., :p] * _wide(s)[..., None, :]) @ _adj(_wide(v)[..., :p])
    rebuilt_ref = (_wide(u_ref)[..., :p] * _wide(s_ref)[..., None, :]) @ _adj(_wide(v_ref)[..., :p])
    _close(rebuilt, rebuilt_ref, tol, f"{what}: u diag(s) v^H")
    _orthonormal(_wide(u), 10 * tol, f"{what} u")
    _orthonormal(_wide(v), 10 * tol, f"{what} v")


def _qr(ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    q, r = (_wide(x) for x in ours)
    q_ref, r_ref = (_wide(x) for x in ref)
    tol = _tol(ref[0])
    p = min(r_ref.shape[-2], r_ref.shape[-1])
    _close(q[..., :, :p] @ r[..., :p, :], q_ref[..., :, :p] @ r_ref[..., :p, :], tol, f"{what}: q r")
    _orthonormal(q, 10 * tol, f"{what} q")
    assert not np.tril(r, -1).any(), f"{what}: r is not upper triangular"
    if p == 0:
        return
    diag = np.diagonal(r_ref[..., :p, :p], axis1=-2, axis2=-1)
    scale = max(1.0, float(np.abs(r_ref).max(initial=0.0)))
    determined = np.abs(diag) > 100 * tol * scale
    ours_diag = np.diagonal(r[..., :p, :p], axis1=-2, axis2=-1)
    phase = np.where(determined, ours_diag / np.where(determined, diag, 1), 1)
    phase = phase / np.where(np.abs(phase) > 0, np.abs(phase), 1)
    expect = np.where(determined[..., None, :], q_ref[..., :, :p] * phase[..., None, :], q[..., :, :p])
    _close(q[..., :, :p], expect, 10 * tol, f"{what}: q columns (up to a unit factor)")


def _eigh(ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    e, v = ours
    e_ref, v_ref = ref
    tol = _tol(e_ref)
    assert_values(e, e_ref, "lin", f"{what} eigenvalues")
    if v_ref.shape == (0,) or v_ref.size == 0:
        assert v.shape == v_ref.shape, f"{what}: v shape {v.shape} != {v_ref.shape}"
        return
    rebuilt = (_wide(v) * _wide(e)[..., None, :]) @ _adj(_wide(v))
    rebuilt_ref = (_wide(v_ref) * _wide(e_ref)[..., None, :]) @ _adj(_wide(v_ref))
    _close(rebuilt, rebuilt_ref, tol, f"{what}: v diag(e) v^H")
    _orthonormal(_wide(v), 10 * tol, f"{what} v")


def _eig(ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    e, v = (_wide(x) for x in ours)
    e_ref, v_ref = (_wide(x) for x in ref)
    tol = _tol(ref[0])
    n = e_ref.shape[-1]
    if e_ref.size == 0:
        assert ours[1].shape == ref[1].shape, f"{what}: v shape {ours[1].shape} != {ref[1].shape}"
        return
    flat_e, flat_ref = e.reshape(-1, n), e_ref.reshape(-1, n)
    has_v = ref[1].shape != (0,) and ref[1].size > 0
    if has_v:
        flat_v, flat_vref = v.reshape(-1, n, n), v_ref.reshape(-1, n, n)
    else:
        assert ours[1].shape == ref[1].shape, f"{what}: v shape {ours[1].shape} != {ref[1].shape}"
    for b in range(flat_ref.shape[0]):
        scale = max(1.0, float(np.abs(flat_ref[b]).max(initial=0.0)))
        free = list(range(n))
        for i in range(n):
            j = min(free, key=lambda k: abs(flat_e[b, k] - flat_ref[b, i]))
            free.remove(j)
            err = abs(flat_e[b, j] - flat_ref[b, i]) / scale
            assert err <= tol, f"{what}: eigenvalue {flat_ref[b, i]} of matrix {b}: nearest {flat_e[b, j]}"
            if has_v:
                x, y = flat_v[b, :, j], flat_vref[b, :, i]
                dot = np.vdot(y, x)
                phase = dot / abs(dot) if abs(dot) > 0 else 1.0
                _close(x, y * phase, 100 * tol, f"{what}: eigenvector {i} of matrix {b} (up to a unit factor)")


def _eigh_rows(ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    """SelfAdjointEig's packed output: eigenvalues in row 0, eigenvectors below."""
    _eigh([ours[0][..., 0, :], ours[0][..., 1:, :]], [ref[0][..., 0, :], ref[0][..., 1:, :]], what)


_JOINT: dict[str, Callable[[list[np.ndarray], list[np.ndarray], str], None]] = {
    "svd": _svd, "qr": _qr, "eigh": _eigh, "eigh_rows": _eigh_rows, "eig": _eig}


def assert_joint(kind: str, ours: list[np.ndarray], ref: list[np.ndarray], what: str) -> None:
    """``ours`` (every output of one run) against TF's ``ref`` under the joint comparison ``kind``."""
    assert len(ours) == len(ref), f"{what}: {len(ours)} outputs, TF {len(ref)}"
    for i, (a, b) in enumerate(zip(ours, ref)):
        assert a.dtype == b.dtype, f"{what} output {i}: dtype {a.dtype} != {b.dtype}"
        assert a.shape == b.shape, f"{what} output {i}: shape {a.shape} != {b.shape}"
    if _has_nan(ref) or _has_nan(ours):
        _elementwise(ours, ref, what)
        return
    _JOINT[kind](ours, ref, what)
