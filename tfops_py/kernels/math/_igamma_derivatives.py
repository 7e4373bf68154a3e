"""Derivatives of the regularized lower incomplete gamma function P(a, x), for IgammaGradA and RandomGammaGrad.

SciPy has no d/da P(a, x), so this follows the algorithm TF uses (Eigen's, after Moore, "Algorithm AS 187",
1982): forward-mode differentiation of Cephes' power series (x <= 1 or x <= a) or of its continued fraction
for the complement (x > 1 and x > a), in float64, with Cephes' double constants and at most 500 terms.

``mode="a"``: dP/da.  ``mode="sample"``: the implicit reparameterization derivative of a Gamma(a, 1)
sample, dx/da = -(dP/da) / pdf(x; a), divided inside the sums as TF does (Figurnov et al., 2018).

Written against the array API: every lane runs the same recurrence, a lane stops changing once its own
stopping rule holds, and the loop ends when every lane has stopped (a Python loop over terms, never
over elements).
"""
from __future__ import annotations

import math
from typing import Any

_EPS = 2.0 ** -52
_MACHEP = _EPS / 2  # 1 - machep == 1
_BIG = 1.0 / _EPS
_BIGINV = _EPS
_MAX_TERMS = 500  # TF's limit for the derivative modes in double
_LOG_MAX = math.log(1.7976931348623157e308)


def _main_term(xp: Any, a: Any, x: Any, lgamma_a: Any) -> Any:
    """x^a e^-x / Gamma(a), 0 where it underflows or is NaN."""
    log_ax = a * xp.log(x) - x - lgamma_a
    small = (log_ax < -_LOG_MAX) | xp.isnan(log_ax)
    return xp.where(small, xp.zeros_like(log_ax), xp.exp(xp.where(small, xp.zeros_like(log_ax), log_ax)))


def _series(xp: Any, a: Any, x: Any, ax: Any, digamma_a1: Any, mode: str) -> Any:
    """Lanes where x <= 1 or x <= a: the derivative of sum x^n / (a+1)...(a+n)."""
    ax = ax / a
    r, c, ans = a, xp.ones_like(a), xp.ones_like(a)
    dc, dans = xp.zeros_like(a), xp.zeros_like(a)
    active = xp.ones(a.shape, dtype=xp.bool)
    for _ in range(_MAX_TERMS):
        r = r + 1
        term = x / r
        new_dc = term * dc - (x / (r * r)) * c
        new_dans = dans + new_dc
        dc = xp.where(active, new_dc, dc)
        dans = xp.where(active, new_dans, dans)
        c = xp.where(active, c * term, c)
        ans = xp.where(active, ans + c, ans)
        active = active & ~(xp.abs(dc) <= _MACHEP * xp.abs(dans))
        if not bool(xp.any(active)):
            break
    dlog_ax = xp.log(x) - digamma_a1
    if mode == "a":
        return ans * (ax * dlog_ax) + dans * ax
    return -(dans + ans * dlog_ax) * x / a


def _continued_fraction(xp: Any, a: Any, x: Any, ax: Any, digamma_a: Any, mode: str) -> Any:
    """Lanes where x > 1 and x > a: the derivative of the complement's continued fraction, negated."""
    y = 1 - a
    z = x + y + 1
    c = xp.zeros_like(a)
    pkm2, qkm2, pkm1, qkm1 = xp.ones_like(a), x, x + 1, z * x
    ans = pkm1 / qkm1
    dpkm2, dqkm2, dpkm1, dqkm1 = xp.zeros_like(a), xp.zeros_like(a), xp.zeros_like(a), -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    active = xp.ones(a.shape, dtype=xp.bool)
    for _ in range(_MAX_TERMS):
        c, y, z = c + 1, y + 1, z + 2
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
        update = active & (qk != 0)
        safe_qk = xp.where(update, qk, xp.ones_like(qk))
        new_ans = pk / safe_qk
        new_dans = (dpk - new_ans * dqk) / safe_qk
        converged = update & (xp.abs(new_dans - dans) <= _MACHEP)
        ans = xp.where(update, new_ans, ans)
        dans = xp.where(update, new_dans, dans)
        active = active & ~converged
        # the recurrence moves on in lanes still running (a converged lane keeps its last terms)
        pkm2, pkm1 = xp.where(active, pkm1, pkm2), xp.where(active, pk, pkm1)
        qkm2, qkm1 = xp.where(active, qkm1, qkm2), xp.where(active, qk, qkm1)
        dpkm2, dpkm1 = xp.where(active, dpkm1, dpkm2), xp.where(active, dpk, dpkm1)
        dqkm2, dqkm1 = xp.where(active, dqkm1, dqkm2), xp.where(active, dqk, dqkm1)
        rescale = active & (xp.abs(pk) > _BIG)
        factor = xp.where(rescale, xp.full_like(pk, _BIGINV), xp.ones_like(pk))
        pkm2, pkm1, qkm2, qkm1 = pkm2 * factor, pkm1 * factor, qkm2 * factor, qkm1 * factor
        dpkm2, dpkm1, dqkm2, dqkm1 = dpkm2 * factor, dpkm1 * factor, dqkm2 * factor, dqkm1 * factor
        if not bool(xp.any(active)):
            break
    dlog_ax = xp.log(x) - digamma_a
    if mode == "a":
        return -(ans * (ax * dlog_ax) + dans * ax)
    return (dans + ans * dlog_ax) * x


def igamma_derivative(xp: Any, a: Any, x: Any, lgamma_a: Any, digamma_a: Any, digamma_a1: Any, mode: str) -> Any:
    """dP(a, x)/da (``mode="a"``) or a Gamma(a, 1) sample's dx/da (``mode="sample"``), float64 arrays of one
    shape; ``lgamma_a``, ``digamma_a`` and ``digamma_a1`` are lgamma(a), psi(a) and psi(a + 1).

    TF's domain: 0 where x == 0 (whatever a is), NaN where x < 0, a <= 0 or either is NaN; 0 where the
    main term x^a e^-x / Gamma(a) underflows, -0 where x is +inf.
    """
    zero = xp.zeros_like(x)
    nan = (x < 0) | (a <= 0) | xp.isnan(a) | xp.isnan(x)
    ok = ~nan & (x != 0) & ~xp.isinf(x)
    # evaluate every lane on harmless values; the masks pick the real answers afterwards
    safe_a = xp.where(ok, a, xp.ones_like(a))
    safe_x = xp.where(ok, x, xp.ones_like(x))
    ax = _main_term(xp, safe_a, safe_x, xp.where(ok, lgamma_a, zero))
    use_cf = (safe_x > 1) & (safe_x > safe_a)
    has_term = ok & (ax != 0)
    series_lanes = has_term & ~use_cf
    cf_lanes = has_term & use_cf
    out = zero
    if bool(xp.any(series_lanes)):
        s_a, s_x = xp.where(series_lanes, safe_a, xp.ones_like(x)), xp.where(series_lanes, safe_x, xp.full_like(x, 0.5))
        series = _series(xp, s_a, s_x, xp.where(series_lanes, ax, zero), digamma_a1, mode)
        out = xp.where(series_lanes, series, out)
    if bool(xp.any(cf_lanes)):
        c_a, c_x = xp.where(cf_lanes, safe_a, xp.ones_like(x)), xp.where(cf_lanes, safe_x, xp.full_like(x, 2.0))
        fraction = _continued_fraction(xp, c_a, c_x, xp.where(cf_lanes, ax, zero), digamma_a, mode)
        out = xp.where(cf_lanes, fraction, out)
    out = xp.where(xp.isinf(x) & ~nan & (a < x), -zero, out)  # the complement's branch at +inf: TF's -0
    return xp.where(nan & (x != 0), xp.full_like(x, math.nan), out)
