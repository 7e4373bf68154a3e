"""Every tolerance of the kernel tests, per comparison kind and dtype, and the comparisons themselves.

Integers, bools and strings always compare exactly; dtype and shape always match.  For floating
outputs (complex: per part), with ``a`` ours and ``b`` TF's value:

* ``exact``: equal values, NaN where NaN, the same sign of zero (bit-exact but for NaN sign and payload);
* ``ew``: NaN/inf where TF has them, else ``|a - b| <= tiny + tol * |b|`` element by element;
* ``cw``: complex outputs, each part within ``tol * |b|`` of TF's (normwise: where TF's own formula
  cancels, e.g. complex Log1p);
* ``ew1``: like ``ew`` relative to ``max(1, |b|)`` (absolute near the zeros of Lgamma/Digamma);
* ``acc``: accumulating ops (sums, products, convolutions): NaN/inf alike, then
  ``max |a - b| / max(1, max |b|) <= tol``;
* ``bn``: batch norm: the NaN pattern alike, then ``|a - b| <= tol * |b| + tol * max(1, max |b|)``;
* ``exp``: ops built on ``exp`` that may differ from Eigen by an ulp where ``exp(x) - 1`` cancels:
  ``|a - b| <= 4 eps + 4 eps |b|``;
* ``avg``: averages of cells (fractional pooling adds in another order than TF): NaN/inf alike, then
  ``|a - b| <= 4 eps |b| + 16 eps max(1, max |b|)``.
* ``lin``: linear algebra (factorizations, solves, matrix functions: LAPACK against Eigen, whose roundings
  grow with the condition number): as ``acc`` with looser tolerances; ``svd``, ``qr``, ``eigh``, ``eig``
  compare what a factorization determines (decompositions.py) under the same tolerances.

Gradient checks use ``GRADIENT``: finite differences (max Jacobian error) and the comparison with
``tf.GradientTape`` (rtol, atol).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

_EW = {"float64": 1e-13, "float32": 1e-6, "float16": 2e-3, "bfloat16": 1.6e-2}
_EPS = {name: float(ml_dtypes.finfo(dt).eps) for name, dt in
        (("float64", np.float64), ("float32", np.float32), ("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16))}
TOLERANCES: dict[str, dict[str, float]] = {
    "exact": {},
    "ew": _EW,
    "cw": _EW,
    "ew1": _EW,
    "acc": {"float64": 1e-12, "float32": 3e-6, "float16": 4e-3, "bfloat16": 4e-2},
    "bn": {"float32": 2e-5, "float16": 2e-3, "bfloat16": 1.6e-2},
    "exp": {name: 4 * eps for name, eps in _EPS.items()},
    "avg": _EPS,  # in eps: 4 relative, 16 of the largest magnitude
    "lin": {"float64": 1e-10, "float32": 1e-4, "float16": 2e-2, "bfloat16": 8e-2},
}
GRADIENT = {"numeric": 1e-6, "tf_rtol": 1e-6, "tf_atol": 1e-6, "delta": 1e-4}
_COMPONENT = {"complex64": "float32", "complex128": "float64"}
BF16 = np.dtype(ml_dtypes.bfloat16)


def _name(a: np.ndarray) -> str:
    return "bfloat16" if a.dtype == BF16 else a.dtype.name


def assert_values(ours: np.ndarray, ref: np.ndarray, kind: str = "ew", what: str = "") -> None:
    """``ours`` equals TF's ``ref`` under comparison ``kind`` (see the module docstring)."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} != {ref.dtype}"
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    name = _name(ref)
    part = _COMPONENT.get(name, name)
    table = TOLERANCES[kind]
    if ref.dtype == object:
        assert ours.tolist() == ref.tolist(), f"{what}: {ours.tolist()} != {ref.tolist()}"
    elif kind == "exact" or part not in table:
        _assert_exact(ours, ref, what)
    elif kind == "bn":
        _assert_bn(ours, ref, table[part], what)
    elif kind == "avg":
        eps = table[part]
        a, b = ours.astype(np.float64), ref.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{what}: NaN positions")
        finite = b[np.isfinite(b)]
        scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
        np.testing.assert_allclose(a, b, rtol=4 * eps, atol=16 * eps * scale, err_msg=what)
    elif kind == "exp":
        tol = table[part]
        np.testing.assert_allclose(ours.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol, err_msg=what)
    else:
        _assert_relative(ours, ref, "acc" if kind == "lin" else kind, table[part], name, what)


def _assert_exact(ours: np.ndarray, ref: np.ndarray, what: str) -> None:
    if ref.dtype.kind == "c":
        _assert_exact(ours.real, ref.real, f"{what} (real part)")
        _assert_exact(ours.imag, ref.imag, f"{what} (imaginary part)")
        return
    if ref.dtype.kind in "biu":
        np.testing.assert_array_equal(ours, ref, err_msg=what)
        return
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    np.testing.assert_array_equal(a, b, err_msg=what)
    real = ~np.isnan(b)  # a NaN's sign is a payload bit
    np.testing.assert_array_equal(np.signbit(a[real]), np.signbit(b[real]), err_msg=f"{what}: signs of zero")


def _assert_bn(ours: np.ndarray, ref: np.ndarray, tol: float, what: str) -> None:
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{what}: NaN pattern")
    finite = b[~np.isnan(b)]
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    np.testing.assert_allclose(np.nan_to_num(a), np.nan_to_num(b), rtol=tol, atol=tol * scale, err_msg=what)


def _assert_relative(ours: np.ndarray, ref: np.ndarray, kind: str, tol: float, name: str, what: str) -> None:
    parts = [(ours.real, ref.real), (ours.imag, ref.imag)] if name in _COMPONENT else [(ours, ref)]
    for a, b in parts:
        a, b = a.astype(np.float64), b.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{what}: NaN positions")
        np.testing.assert_array_equal(a[np.isinf(b)], b[np.isinf(b)], err_msg=f"{what}: infinities")
        assert np.isfinite(a[np.isfinite(b)]).all(), f"{what}: non-finite where TF is finite"
    part = _COMPONENT.get(name, name)
    finite = np.isfinite(ref)
    a, b = ours[finite].astype(np.complex128), ref[finite].astype(np.complex128)
    if kind == "acc":
        scale = max(1.0, float(np.abs(b).max(initial=0.0)))
        err = float(np.abs(a - b).max(initial=0.0)) / scale
        assert err <= tol, f"{what}: error {err:.3g} > {tol} (relative to {scale:.3g})"
        return
    tiny = float(ml_dtypes.finfo(np.float64 if part == "float64" else np.float32 if part == "float32" else
                                 ref.dtype).tiny)
    err = np.maximum(np.abs(a.real - b.real), np.abs(a.imag - b.imag)) if kind == "cw" else np.abs(a - b)
    bad = err > tiny + tol * (np.maximum(1.0, np.abs(b)) if kind == "ew1" else np.abs(b))
    assert not bad.any(), (f"{what}: {int(bad.sum())} values off by more than rtol {tol}: "
                           f"ours {a[bad][:5]} vs TF {b[bad][:5]}")
