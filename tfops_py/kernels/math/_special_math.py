"""Erf, Erfc, Lgamma and Digamma written against the array API standard (which has none of them), and
the float32 Erf of the NumPy backend.

TF 2.21 computes these with Eigen (erf, erfc, digamma) and glibc (lgamma).  The array API has no erf or
lgamma (and SciPy serves NumPy only), so the generic kernels build them from ``+ - * /``, ``exp``,
``log``, ``log1p``, ``sin``, ``tan``, ``floor``/``round``, ``clip`` and ``where`` only: no Python loop
over elements, and the same code runs on NumPy, CuPy or any array-API namespace.

- ``erf``/``erfc`` (float64): ``erf(x) = x P(x^2)`` for ``|x| < 0.5``; otherwise
  ``erfc(|x|) = exp(-x^2) Q(s)`` with ``s`` a Möbius map of ``x`` in [0.5, inf) onto [-1, 1)
  (Schonfelder's form), ``exp(-x^2)`` taken from an exact split of ``x^2``.  Relative error
  below 3e-15 where the result is normal.
- ``lgamma`` (float64): Stirling's series for ``x >= 7``; below, the recurrence down (or up) to
  ``lgamma(2 + z)`` with ``|z| <= 0.5``, a polynomial ``z P(z)`` that keeps full relative accuracy
  at the zeros x = 1 and x = 2; the reflection formula for ``x < 0``.  Relative error below 1e-15,
  except next to the zeros of lgamma on the negative axis (x = -2.457..., -2.747..., ...) where the
  error is absolute, about 1e-15 (glibc stays relative there).
- ``digamma``: Eigen's (Cephes) algorithm step by step in the input's own precision, so float32
  results follow TF's rounding: reflection for ``x <= 0``, the recurrence up to ``s >= 10`` (ten
  masked steps), then the asymptotic series.

float32, half and bfloat16 erf/erfc/lgamma are computed in float64 and rounded once (erf/erfc
with shorter polynomials there).

``erf_float32`` (NumPy float32 Erf): SciPy's erf runs ~15x slower than TF's vectorized float kernel, so
float32 uses ``x P(x^2) / Q(x^2)`` on [-4, 4] (degrees 6 and 5, a near-minimax fit made by
tools/special/fit_erf_float32.py; relative error 2e-9 in exact arithmetic, 3.8e-7 evaluated in float32,
measured over 2 million points), evaluated in float32 on cache-sized blocks on every core.

The polynomial coefficients are degree n-1 Chebyshev interpolants (n Chebyshev points of the first
kind, mpmath at 50 digits, converted to the monomial basis of the interval's own variable) of
``erfcx(x) = exp(x^2) erfc(x)``, ``lgamma(2 + z) / z`` and ``erf(x) / x``; the recipe is in
docs/ops/math_ops.md.  Stirling's and the digamma series' coefficients are Bernoulli numbers.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.kernels._parallel import parallel_for

# erfcx on x in [0.5, inf): s = 2 (t - T0) / (1 - T0) - 1 with t = (x - K) / (x + K), n = 22.
_K = 3.75
_T0 = (0.5 - _K) / (0.5 + _K)
_ERFCX = (
    0.11630270721024732, -0.1997793130843868, 0.13700151707386138, -0.08390388790624169,
    0.045421089586650226, -0.02138575391400926, 0.008523964184434518, -0.0027328116475737623,
    0.0006223758652378318, -5.4449198958110004e-05, -2.5714322691130444e-05, 1.1831530158744614e-05,
    -1.005060144305622e-06, -8.22537119790127e-07, 2.678414805699255e-07, 3.43759432320276e-08,
    -3.349361116621751e-08, 5.931526548795482e-10, 3.452366889195308e-09, -3.4261323159615344e-10,
    -2.4136920697694015e-10, 3.518506767054362e-11)
# The same interpolant with n = 14: relative error 4e-10, enough for results rounded to float32.
_ERFCX_SHORT = (
    0.11630270723139984, -0.1997793130801946, 0.1370015149980838, -0.08390388831711931, 0.04542112303168809,
    -0.02138574733654713, 0.00852376070884746, -0.00273285115106707, 0.0006229715964047299,
    -5.433615962772997e-05, -2.6627422614323597e-05, 1.1665385878580899e-05, -2.780659553122908e-07,
    -7.014419133623762e-07)
# erf(x) / x on x^2 in [0, 0.25], variable u = 8 x^2 - 1, n = 9 (n = 6: relative error 1e-11).
_ERF_SMALL = (
    1.0830752376761712, -0.043642058886697886, 0.0016130716680617082, -4.762336934519552e-05,
    1.151603779519474e-06, -2.3472289797042594e-08, 4.1270252134730293e-10, -6.37686858732805e-12,
    8.777299809787717e-14)
_ERF_SMALL_SHORT = (
    1.0830752376890724, -0.04364205888689717, 0.0016130714358452245, -4.762336575818992e-05,
    1.152222981418237e-06, -2.3481855099921593e-08)
# lgamma(2 + z) / z on z in [-0.5, 0.5], variable u = 2 z, n = 18.
_LGAMMA2 = (
    0.42278433509846713, 0.1612335167120566, -0.016838075263298908, 0.0025726010534729226,
    -0.00046159693930847154, 9.03284478395594e-05, -1.8636779703098573e-05, 3.981793122286463e-06,
    -8.716991307145595e-07, 1.94253158049944e-07, -4.38708276994606e-08, 1.0012704932493954e-08,
    -2.3086641882572558e-09, 5.350164231426595e-10, -1.2050236137952312e-10, 2.8206946487921987e-11,
    -8.867306165956492e-12, 2.0962059060600024e-12)
# Stirling: lgamma(x) ~ (x - 1/2) log x - x + log(2 pi) / 2 + sum B_2k / (2k (2k - 1) x^(2k - 1)).
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400,
             43867 / 244188)
_STIRLING_FROM = 7.0
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)
# digamma's asymptotic series sum B_2k / (2k s^2k), in z = 1 / s^2, as many terms as Eigen uses.
_PSI_FLOAT = (1 / 12, -1 / 120, 1 / 252, -1 / 240)
_PSI_DOUBLE = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
_SPLIT = 134217729.0  # 2^27 + 1: Veltkamp's split of a double into two 26-bit halves


def _poly(u: Any, coeffs: tuple[float, ...]) -> Any:
    """sum coeffs[k] * u**k by Horner's rule, in place on one new array (large temporaries cost more
    than the arithmetic on NumPy; a namespace without in-place operators rebinds instead)."""
    acc = u * coeffs[-1]
    acc += coeffs[-2]
    for c in reversed(coeffs[:-2]):
        acc *= u
        acc += c
    return acc


def _exp_minus_square(xp: Any, x: Any) -> Any:
    """exp(-x^2) without the error of rounding x^2 (relative 1e-13 at x = 26 otherwise)."""
    c = _SPLIT * x
    hi = c - (c - x)
    lo = x - hi
    hi2 = hi * hi
    lo *= 2 * hi + lo  # (2 hi + lo) lo: x^2 = hi^2 + that, hi^2 exact
    out = xp.exp(-hi2)
    out *= xp.exp(-lo)
    return out


def _erfc_large(xp: Any, ax: Any, short: bool) -> Any:
    """erfc(ax) for ax >= 0.5 (other lanes: any finite value); inf and values past underflow give 0.

    ``short``: for a float32 result (erfc underflows there past x = 10.1; exp(-x^2) needs no split).
    """
    ax = xp.clip(ax, 0.5, 10.5 if short else 28.0)  # NaN stays NaN
    s = ax - _K
    s /= ax + _K
    s *= 2 / (1 - _T0)
    s -= 1 + 2 * _T0 / (1 - _T0)  # s = 2 (t - T0) / (1 - T0) - 1
    out = _poly(s, _ERFCX_SHORT if short else _ERFCX)
    out *= xp.exp(-(ax * ax)) if short else _exp_minus_square(xp, ax)
    return out


def _erf_small(xp: Any, x: Any, short: bool) -> Any:
    """erf(x) for |x| <= 0.5 (other lanes: any finite value)."""
    x = xp.clip(x, -0.5, 0.5)
    u = x * x
    u *= 8
    u -= 1
    out = _poly(u, _ERF_SMALL_SHORT if short else _ERF_SMALL)
    out *= x
    return out


def erf(xp: Any, x: Any, short: bool = False) -> Any:
    """erf of a float64 array (erf(+-inf) = +-1, NaN stays NaN); ``short`` when it will be rounded to float32."""
    ax = xp.abs(x)
    large = _erfc_large(xp, ax, short)
    large -= 1
    large = xp.copysign(large, x)  # 1 - erfc(|x|) >= 0, with x's sign
    return xp.where(ax < 0.5, _erf_small(xp, x, short), large)


def erfc(xp: Any, x: Any, short: bool = False) -> Any:
    """erfc of a float64 array (erfc(inf) = 0, erfc(-inf) = 2); ``short`` when it will be rounded to float32."""
    ax = xp.abs(x)
    tail = _erfc_large(xp, ax, short)
    small = _erf_small(xp, x, short)
    small -= 1
    return xp.where(ax < 0.5, -small, xp.where(x < 0, 2 - tail, tail))


def lgamma(xp: Any, x: Any) -> Any:
    """log|Gamma(x)| of a float64 array; +inf at 0, at the negative integers and at +-inf."""
    neg = x < 0
    y = xp.where(neg, 1 - x, x)  # >= 0, or NaN
    big = y >= _STIRLING_FROM
    # Stirling's series where y >= 7 (other lanes evaluate it at 7)
    yb = xp.clip(y, _STIRLING_FROM, None)
    inv = 1 / yb
    stirling = _poly(inv * inv, _STIRLING)
    stirling *= inv
    stirling += _HALF_LOG_2PI
    stirling -= yb
    stirling += (yb - 0.5) * xp.log(yb)
    # below 7: down to [1.5, 2.5) collecting the product of the steps (at most 5), or up from below 1.5
    ys = xp.clip(y, None, _STIRLING_FROM)
    prod = xp.ones_like(ys)
    for _ in range(5):
        step = xp.astype(ys >= 2.5, ys.dtype)
        factor = ys - 2
        factor *= step
        factor += 1  # ys - 1 where stepping (exact), else 1
        prod *= factor
        ys -= step
    up2, up1 = ys < 0.5, ys < 1.5  # lgamma(y) = lgamma(y + 2) - log(y (y + 1)), lgamma(y + 1) - log(y)
    z = ys - xp.astype(~up2, ys.dtype) - xp.astype(~up1, ys.dtype)  # exact, in [-0.5, 0.5)
    base = _poly(2 * z, _LGAMMA2)
    base *= z  # lgamma(2 + z)
    base += xp.log(prod)
    shift = xp.where(up2, xp.log(xp.where(up2, ys, 1.0)) + xp.log1p(ys), xp.log1p(xp.where(up1, z, 0.0)))
    base -= shift
    positive = xp.where(big, stirling, base)
    # reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); the poles are the integers
    frac = x - xp.round(x)
    sin_pi = xp.abs(xp.sin(math.pi * frac))
    reflected = _LOG_PI - xp.log(xp.where(neg, sin_pi, 1.0)) - positive
    out = xp.where(neg, reflected, positive)
    return xp.where(xp.isinf(x) | (neg & (frac == 0)), math.inf, out)


def _rounded(xp: Any, fn: Any, x: Any) -> Any:
    """fn(x) correctly rounded to float32 in practice (computed in float64), like glibc's tanf/logf."""
    return fn(x) if x.dtype == xp.float64 else xp.astype(fn(xp.astype(x, xp.float64)), x.dtype)


def digamma(xp: Any, x: Any) -> Any:
    """psi(x) in the array's own float precision, step by step as Eigen's digamma_impl.

    NaN at 0, at the negative integers and at -inf; psi(inf) = inf.
    """
    neg = x <= 0
    floor = xp.floor(x)
    pole = neg & (floor == x)
    # pi / tan(pi r), r = x minus its nearest integer; 0 when r = 1/2 (Eigen skips the tan there)
    nz = x - floor
    nz = xp.where(nz > 0.5, x - (floor + 1), nz)
    half = nz == 0.5
    tan = _rounded(xp, xp.tan, math.pi * xp.where(neg & ~pole & ~half, nz, 0.25))
    reflection = xp.where(half, 0.0, math.pi / tan)
    s = xp.where(neg, 1 - x, x)
    w = xp.zeros_like(s)
    for _ in range(10):  # s > 0 reaches 10 in at most ten steps: w += 1 / s, s += 1 while s < 10
        step = xp.astype(s < 10, s.dtype)
        w += step / s
        s += step
    z = 1 / (s * s)
    series = _poly(z, _PSI_DOUBLE if x.dtype == xp.float64 else _PSI_FLOAT)
    series *= z
    y = _rounded(xp, xp.log, s) - 0.5 / s
    y -= series
    y -= w
    y = xp.where(neg, y - reflection, y)
    return xp.where(pole, math.nan, y)


# erf(x) ~ x P(x^2) / Q(x^2) on [-4, 4] (tools/special/fit_erf_float32.py); |x| >= 4 rounds to +-1 in float32.
_ERF32_P = (1.1283791693683518, 0.1852027118679243, 0.05431680941162346, 0.0038495862424748123,
            0.00037960703656879645, 4.684742625898502e-06, -1.3202027985552649e-08)
_ERF32_Q = (1.0, 0.497465043648266, 0.11395817529049246, 0.015462032143234728, 0.001307562257053482,
            6.311023596395704e-05)
_ERF32_BLOCK = 1 << 16  # elements per block: the temporaries stay in cache
_ERF32_ONE = np.float32(3.84)  # float32 erf is 1 from 3.8325 on


def _erf32_block(x: np.ndarray, out: np.ndarray) -> None:
    """Past |x| = 3.84 (where erf rounds to +-1) P/Q may overflow to NaN: those lanes become +-1 at the end."""
    xc = x
    u = xc * xc
    p = u * np.float32(_ERF32_P[-1])
    p += np.float32(_ERF32_P[-2])
    for c in reversed(_ERF32_P[:-2]):
        p *= u
        p += np.float32(c)
    q = u * np.float32(_ERF32_Q[-1])
    q += np.float32(_ERF32_Q[-2])
    for c in reversed(_ERF32_Q[:-2]):
        q *= u
        q += np.float32(c)
    p *= xc
    np.divide(p, q, out=out)
    np.copysign(np.float32(1), x, out=out, where=np.abs(x) >= _ERF32_ONE)  # erf rounds to +-1 there

def blockwise(block_fn: Callable[[np.ndarray, np.ndarray], None], x: np.ndarray, dtype: Any,
              block: int = _ERF32_BLOCK) -> np.ndarray:
    """``block_fn(x_block, out_block)`` over cache-sized blocks of ``x`` (as ``dtype``), on every core."""
    flat = np.ascontiguousarray(x, dtype=dtype).reshape(-1)
    out = np.empty_like(flat)

    def run(start: int, stop: int) -> None:
        with np.errstate(all="ignore"):  # per thread: the error state does not cross threads
            for s in range(start, stop, block):
                e = min(stop, s + block)
                block_fn(flat[s:e], out[s:e])

    parallel_for(run, flat.size, min_size=block)
    return out.reshape(np.shape(x))


def erf_float32(x: np.ndarray) -> np.ndarray:
    """erf of a float32 NumPy array (NaN stays NaN, +-inf gives +-1), on every core."""
    return blockwise(_erf32_block, x, np.float32)
