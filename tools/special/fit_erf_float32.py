"""Fit the rational approximation behind tfops_py's float32 Erf on NumPy (``_special_math.erf_float32``).

    python tools/special/fit_erf_float32.py

erf(x) ~ x P(x^2) / Q(x^2) on [0, 4] (|x| >= 4 rounds to +-1 in float32), P of degree 6 and Q of degree 5
with Q(0) = 1: linearised least squares on Chebyshev and uniform points, reweighted by the relative error
(Lawson's iteration) towards the minimax fit.  Prints the coefficients, the fit's relative error in float64
and the error of the float32 evaluation against SciPy's float64 erf (measured: 2e-9 and 3.8e-7).
"""
from __future__ import annotations

import numpy as np
import scipy.special


def fit(p_degree: int = 6, q_degree: int = 5, end: float = 4.0, iterations: int = 60) -> tuple:
    k = np.arange(6000)
    x = np.unique(np.concatenate([end * (1 - np.cos(np.pi * (k + 0.5) / 6000)) / 2, np.linspace(0, end, 6000)]))[1:]
    u, f = x * x, scipy.special.erf(x)
    weights, q_scale, best = np.ones_like(x), np.ones_like(x), None
    for _ in range(iterations):
        a = np.concatenate([x[:, None] * u[:, None] ** np.arange(p_degree + 1),
                            -f[:, None] * u[:, None] ** np.arange(1, q_degree + 1)], axis=1)
        w = np.sqrt(weights) / (f * q_scale)
        c = np.linalg.lstsq(a * w[:, None], f * w, rcond=None)[0]
        p, q = c[:p_degree + 1], np.concatenate([[1.0], c[p_degree + 1:]])
        q_scale = np.abs(np.polyval(q[::-1], u))
        err = np.abs(x * np.polyval(p[::-1], u) / np.polyval(q[::-1], u) - f) / f
        if best is None or err.max() < best[0]:
            best = (err.max(), p, q)
        weights = weights * err
        weights /= weights.sum()
    return best


def main() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tfops_py.kernels.math._special_math import erf_float32

    error, p, q = fit()
    print("P =", tuple(float(v) for v in p))
    print("Q =", tuple(float(v) for v in q))
    print(f"fit: max relative error {error:.3g}")
    xs = np.concatenate([np.linspace(-6, 6, 2_000_001), np.geomspace(1e-30, 1, 10001)]).astype(np.float32)
    ref = scipy.special.erf(xs.astype(np.float64))
    got = erf_float32(xs).astype(np.float64)
    print(f"float32 evaluation (current coefficients): max relative error "
          f"{np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)):.3g}")


if __name__ == "__main__":
    main()
