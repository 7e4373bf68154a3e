"""Special functions: Erfinv, Ndtri, the Bessel functions, Dawsn, Expint, the Fresnel integrals, Spence,
Igamma, Igammac, IgammaGradA, RandomGammaGrad, Betainc, Zeta and Polygamma.

Values come from SciPy (``_scipy_special.special``: cupyx on CuPy, a host round trip on other
namespaces), computed in float64 for every input type and rounded once.  TF computes them with Eigen's
ports of Cephes, in float for float32/half (Cephes' single-precision algorithms) and in double for
float64: the float64 values agree with SciPy's to ~1e-13, the float32 ones are less accurate than a
rounded float64 result (see the divergences below).  Around SciPy's values we apply TF's domain rules
(what a NaN, a zero, an infinite or an out-of-domain argument gives), which differ from SciPy's in
many corners: Igamma(a, 0) is 0 even for a <= 0, BesselK0 of a negative number is +inf, Expint of a
negative number is NaN, Zeta(x, q) for q a non-positive integer is +inf for even integer x else NaN.

On NumPy, BesselI0e, BesselI1e, BesselI0 and BesselI1 of narrow floats take ``_bessel_i``'s short series
instead (the same rounded values but for ties, ~3x less CPU).

IgammaGradA and RandomGammaGrad have no SciPy counterpart: ``_igamma_derivatives`` differentiates the
series and continued fraction of P(a, x) as TF does.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.conformance import (BROADCAST, Domain, Draw, case, conformance, divergence, literal, positive,
                                  reference, uniform, values, via_dtype)
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import broadcast_binary, unchanged_shape
from tfops_py.kernels._shape_util import merge_shapes
from tfops_py.kernels.math import _special_math
from tfops_py.kernels.math._bessel_i import bessel_i, is_narrow
from tfops_py.kernels.math._igamma_derivatives import igamma_derivative
from tfops_py.kernels.math._scipy_special import special
from tfops_py.kernels.math.math_ops import _check_broadcast
from tfops_py.kernels.registry import KernelContext, register_kernel

Fix = Callable[[Any, Any, Any], Any]
F64 = DataType.DT_DOUBLE


def _in_float64(ctx: KernelContext, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` on float64 copies of the inputs, rounded once to the output type."""
    xp = ctx.xp
    f64 = ctx.dtype(F64)
    wide = [a if a.dtype == f64 else xp.astype(a, f64) for a in args]
    with np.errstate(all="ignore"):
        out = fn(*wide)
    dt = ctx.dtype(ctx.output_dtypes[0])
    return out if out.dtype == dt else xp.astype(out, dt)


# -- unary functions --------------------------------------------------------------------------------------
def _negative_is(value: float) -> Fix:
    """TF's rule for an argument below the domain: ``value`` where x < 0."""
    return lambda xp, x, y: xp.where(x < 0, xp.full_like(y, value), y)


def _fresnel_limit(xp: Any, x: Any, y: Any) -> Any:
    """SciPy gives NaN past |x| ~ 1e15; the integrals tend to +-1/2 there (TF's value)."""
    return xp.where(xp.isnan(y) & ~xp.isnan(x), xp.where(x < 0, xp.full_like(y, -0.5), xp.full_like(y, 0.5)), y)


def _expint_domain(xp: Any, x: Any, y: Any) -> Any:
    """TF's Ei is NaN for x < 0 (SciPy gives the real principal value)."""
    return xp.where(x < 0, xp.full_like(y, math.nan), y)


# op -> (SciPy function, TF's domain rule around it or None)
_UNARY: dict[str, tuple[str, Fix | None]] = {
    "Erfinv": ("erfinv", None),
    "Ndtri": ("ndtri", None),
    "BesselI0": ("i0", None), "BesselI0e": ("i0e", None), "BesselI1": ("i1", None), "BesselI1e": ("i1e", None),
    "BesselJ0": ("j0", None), "BesselJ1": ("j1", None),
    "BesselY0": ("y0", _negative_is(-math.inf)), "BesselY1": ("y1", _negative_is(-math.inf)),
    "BesselK0": ("k0", _negative_is(math.inf)), "BesselK0e": ("k0e", _negative_is(math.inf)),
    "BesselK1": ("k1", _negative_is(math.inf)), "BesselK1e": ("k1e", _negative_is(math.inf)),
    "Dawsn": ("dawsn", None),
    "Expint": ("expi", _expint_domain),
    "FresnelCos": ("fresnel_cos", _fresnel_limit), "FresnelSin": ("fresnel_sin", _fresnel_limit),
    "Spence": ("spence", None),
}


def _unary_kernel(function: str, fix: Fix | None) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any) -> Any:
        def compute(v: Any) -> Any:
            y = special(ctx, function, v)
            return y if fix is None else fix(ctx.xp, v, y)

        return _in_float64(ctx, compute, x)

    return kernel


for _op, (_function, _fix) in _UNARY.items():
    register_shape(_op)(unchanged_shape)
    register_kernel(_op)(_unary_kernel(_function, _fix))


def _bessel_i_kernel(function: str) -> Callable[..., Any]:
    """NumPy: narrow floats through _bessel_i's short series (~3x less CPU than SciPy), float64 through SciPy."""
    generic = _unary_kernel(function, None)

    def kernel(ctx: KernelContext, x: Any) -> Any:
        return bessel_i(function, x) if is_narrow(x.dtype) else generic(ctx, x)

    return kernel


for _op, _function in (("BesselI0e", "i0e"), ("BesselI1e", "i1e"), ("BesselI0", "i0"), ("BesselI1", "i1")):
    register_kernel(_op, backend="numpy")(_bessel_i_kernel(_function))


# -- incomplete gamma, zeta, polygamma ----------------------------------------------------------------------
def _full(xp: Any, like: Any, value: float) -> Any:
    return xp.full_like(like, value)


def igamma(ctx: KernelContext, a: Any, x: Any) -> Any:
    """P(a, x) with TF's rules (float64): 0 where x == 0 (any a), NaN where x < 0, a <= 0 or NaN, 0 where a
    is +inf."""
    xp = ctx.xp
    p = special(ctx, "gammainc", a, x)
    p = xp.where(xp.isinf(a), _full(xp, p, 0.0), p)
    bad = (x < 0) | (a <= 0) | xp.isnan(a) | xp.isnan(x)
    return xp.where(x == 0, _full(xp, p, 0.0), xp.where(bad, _full(xp, p, math.nan), p))


def igammac(ctx: KernelContext, a: Any, x: Any) -> Any:
    """Q(a, x) with TF's rules (float64): NaN where x < 0, a <= 0 or NaN (x == 0 too), 1 where x == 0, and
    where a is +inf: 1 below x = inf, 0 at it."""
    xp = ctx.xp
    q = special(ctx, "gammaincc", a, x)
    q = xp.where(x == 0, _full(xp, q, 1.0), q)
    q = xp.where(xp.isinf(a), xp.where(xp.isinf(x), _full(xp, q, 0.0), _full(xp, q, 1.0)), q)
    bad = (x < 0) | (a <= 0) | xp.isnan(a) | xp.isnan(x)
    return xp.where(bad, _full(xp, q, math.nan), q)


def _whole(xp: Any, v: Any) -> Any:
    return xp.floor(v) == v


def zeta(ctx: KernelContext, x: Any, q: Any) -> Any:
    """Hurwitz zeta(x, q) with TF's (Eigen's Cephes) rules, float64."""
    xp = ctx.xp
    z = special(ctx, "zeta", x, q)
    # x = +inf: q^-x decides alone
    z = xp.where(xp.isinf(x) & (x > 0),
                 xp.where(q > 1, _full(xp, z, 0.0), xp.where(q == 1, _full(xp, z, 1.0), _full(xp, z, math.inf))), z)
    even = _whole(xp, x) & (xp.isinf(x) | (xp.remainder(xp.where(xp.isinf(x), _full(xp, x, 0.0), x), 2.0) == 0))
    non_positive = q <= 0
    pole = non_positive & _whole(xp, q)
    z = xp.where(pole, xp.where(even, _full(xp, z, math.inf), _full(xp, z, math.nan)), z)
    z = xp.where(non_positive & ~pole & ~_whole(xp, x), _full(xp, z, math.nan), z)
    z = xp.where((x < 1) | xp.isnan(x) | xp.isnan(q), _full(xp, z, math.nan), z)
    return xp.where(x == 1, _full(xp, z, math.inf), z)


def polygamma(ctx: KernelContext, n: Any, x: Any) -> Any:
    """TF's psi^(n)(x): digamma for n = 0, (-1)^(n+1) n! zeta(n + 1, x) for whole n > 0, NaN otherwise."""
    xp = ctx.xp
    n, x = xp.broadcast_arrays(n, x)
    order = n + 1
    factorial = xp.exp(special(ctx, "gammaln", order))
    higher = xp.pow(_full(xp, order, -1.0), order) * factorial * zeta(ctx, order, x)
    out = xp.where(n == 0, _special_math.digamma(xp, x), higher)
    return xp.where(~_whole(xp, n) | (n < 0), _full(xp, out, math.nan), out)


def _gamma_derivative(mode: str) -> Callable[..., Any]:
    def compute(ctx: KernelContext, a: Any, x: Any) -> Any:
        xp = ctx.xp
        a, x = xp.broadcast_arrays(a, x)
        return igamma_derivative(xp, a, x, special(ctx, "gammaln", a), special(ctx, "psi", a),
                                 special(ctx, "psi", a + 1), mode)

    return compute


_BINARY: dict[str, Callable[..., Any]] = {
    "Igamma": igamma, "Igammac": igammac, "Zeta": zeta, "Polygamma": polygamma,
    "IgammaGradA": _gamma_derivative("a"), "RandomGammaGrad": _gamma_derivative("sample"),
}


def _binary_kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        _check_broadcast(ctx, x, y)
        return _in_float64(ctx, lambda a, b: fn(ctx, a, b), x, y)

    return kernel


for _op, _fn in _BINARY.items():
    register_shape(_op)(broadcast_binary)
    register_kernel(_op)(_binary_kernel(_fn))


# -- Betainc ------------------------------------------------------------------------------------------------
@register_shape("Betainc")
def _betainc_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's: the non-scalar inputs merged (a scalar broadcasts); unknown ranks leave it open."""
    output, scalars, some_non_scalar = unknown_shape(), 0, unknown_shape()
    for i in range(3):
        shape = ctx.input(i)
        if shape.unknown_rank():
            some_non_scalar = shape
        elif shape.dims() == 0:
            scalars += 1
        else:
            output = merge_shapes(ctx, output, shape)
            some_non_scalar = output
    if scalars == 2:
        return [some_non_scalar]
    return [ctx.input(0) if scalars == 3 else output]


def betainc(ctx: KernelContext, a: Any, b: Any, x: Any) -> Any:
    """I_x(a, b) with TF's rules (float64): NaN where a <= 0 or b <= 0, then 0 at x = 0 and 1 at x = 1, NaN
    outside [0, 1] and where a or b is infinite or NaN."""
    xp = ctx.xp
    v = special(ctx, "betainc", a, b, x)
    v = xp.where(xp.isinf(a) | xp.isinf(b) | xp.isnan(a) | xp.isnan(b) | (x < 0) | (x > 1) | xp.isnan(x),
                 _full(xp, v, math.nan), v)
    v = xp.where(x == 0, _full(xp, v, 0.0), xp.where(x == 1, _full(xp, v, 1.0), v))
    return xp.where((a <= 0) | (b <= 0), _full(xp, v, math.nan), v)


@register_kernel("Betainc")
def _betainc(ctx: KernelContext, a: Any, b: Any, x: Any) -> Any:
    """a, b and x have one shape, or are scalars (no other broadcasting, as TF)."""
    shapes = {"a": tuple(a.shape), "b": tuple(b.shape), "x": tuple(x.shape)}
    for first, second in (("a", "b"), ("a", "x"), ("b", "x")):
        s, t = shapes[first], shapes[second]
        if s and t and s != t:
            ctx.invalid_argument(f"Shapes of {first} and {second} are inconsistent: {format_shape(s)} vs. "
                                 f"{format_shape(t)}")
    xp = ctx.xp
    return _in_float64(ctx, lambda *v: betainc(ctx, *xp.broadcast_arrays(*v)), a, b, x)


# -- conformance (tests/conformance) -------------------------------------------------------------------------
class _Orders(Domain):
    """Polygamma's order: mostly whole numbers 0..4, sometimes a fraction or a negative (TF's NaN)."""

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_floating

    def draw(self, d: Draw) -> np.ndarray:
        shape = d.shape or ()
        whole = d.rng.integers(0, 5, shape).astype(np.float64)
        odd = d.rng.uniform(-1, 4, shape)
        return np.where(d.rng.uniform(0, 1, shape) < 0.85, whole, odd).astype(d.dtype.numpy_dtype)


_F32_AS_F64 = via_dtype(F64, "TF's float64 kernel, rounded: tfops_py computes float32/half/bfloat16 in float64 "
                             "(TF uses Cephes' float algorithms, less accurate)")
_NARROW = (DataType.DT_FLOAT, DataType.DT_HALF, DataType.DT_BFLOAT16)
_EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-300, 1e-8, 0.5, 1.0, 2.0, 3.0, 10.0, 50.0, 700.0, -0.5, -1.0,
          -3.0, -50.0]
_OSCILLATING = ("BesselJ0", "BesselJ1", "BesselY0", "BesselY1", "Expint", "Spence", "FresnelCos", "FresnelSin",
                "Dawsn")
_UNARY_DOMAINS = {"Erfinv": uniform(-1, 1), "Ndtri": uniform(0, 1), "Spence": positive()}
for _op in _UNARY:
    edges = [v for v in _EDGES if not (_op == "Erfinv" and 0 < abs(v) < 1e-3)]  # see the divergence
    conformance(_op, x=_UNARY_DOMAINS.get(_op, values(specials=True)),
                compare="ew1" if _op in _OSCILLATING + ("Erfinv",) else "ew", live=10,
                cases=[case(x=literal(edges, F64)), case(x=literal(edges, DataType.DT_FLOAT))]
                + ([case(x=literal([-1.0, -0.999, -1e-3, 0.0, 1e-3, 0.3, 0.999, 1.0, 1.5, math.nan], F64))]
                   if _op in ("Erfinv", "Ndtri") else []))

_PAIRS = [0.0, -0.0, 1e-10, 0.5, 1.0, 1.5, 2.0, 3.0, 20.0, math.inf, -1.0, -2.5, -3.0, math.nan, -math.inf]
_GRID_A = [a for a in _PAIRS for _ in _PAIRS]
_GRID_X = [x for _ in _PAIRS for x in _PAIRS]
for _op, _names in (("Igamma", ("a", "x")), ("Igammac", ("a", "x")), ("IgammaGradA", ("a", "x")),
                    ("RandomGammaGrad", ("alpha", "sample")), ("Zeta", ("x", "q"))):
    first, second = _names
    conformance(_op, shapes=BROADCAST, compare="ew1", live=10,
                **{first: uniform(0.05, 8.0) if _op != "Zeta" else uniform(1.0, 8.0), second: positive()},
                cases=[case({first: literal(_GRID_A, F64), second: literal(_GRID_X, F64)}),
                       case({first: literal([0.5, 1.0, 5.0, 30.0, 200.0], F64),
                             second: literal([0.1, 2.0, 4.5, 31.0, 180.0], F64)})])
conformance("Polygamma", a=_Orders(), x=values(specials=True), shapes=BROADCAST, compare="ew1", live=10,
            cases=[case(a=literal(_GRID_A, F64), x=literal(_GRID_X, F64)),
                   case(a=literal([0.0, 1.0, 2.0, 3.0, 4.0, 10.0], F64),
                        x=literal([-2.5, 0.3, 1.0, 4.0, 7.5, 2.0], F64))])


_BETAINC_SHAPES = [dict(a=(3, 4), b=(3, 4), x=(3, 4)), dict(a=(), b=(), x=(5,)), dict(a=(2, 3), b=(), x=()),
                   dict(a=(), b=(2, 0), x=(2, 0)), dict(a=(), b=(), x=()), dict(a=(3,), b=(2,), x=(3,)),
                   dict(a=(2, 3), b=(), x=(3,))]
conformance("Betainc", a=uniform(0.05, 8.0), b=uniform(0.05, 8.0), x=uniform(0.0, 1.0), compare="ew1", live=10,
            shapes=_BETAINC_SHAPES,
            cases=[case(a=literal([0.0, -1.0, 1.0, math.inf, math.nan, 0.5, 2.0, 2.0, 2.0, 1e-10, 3.0, 0.5], F64),
                        b=literal([1.0, 1.0, 0.0, 1.0, 1.0, math.inf, math.nan, 2.0, 2.0, 3.0, 1e-10, 0.5], F64),
                        x=literal([0.5, 0.0, 0.5, 0.5, 0.0, 0.3, 1.0, -0.5, 1.5, 0.2, 0.9, math.nan], F64))])

_SPECIAL_OPS = tuple(_UNARY) + tuple(_BINARY) + ("Betainc",)
divergence("Expint", when="x = +inf", tf="NaN", ours="+inf (Ei grows without bound)",
           applies=lambda inputs, attrs: bool(np.any(np.isposinf(inputs["x"]))),
           reference=reference("tfops_py.kernels.math.special_math_ops:expint_at_infinity",
                               "TF's float64 Expint, rounded, with +inf at +inf (TF: NaN)"))
divergence(_SPECIAL_OPS, when="float32, half and bfloat16",
           tf="computes in float with Cephes' single-precision algorithms (float32 relative errors measured up to "
              "3e-3 near the zeros of J0/J1/Y0/Y1 and Expint, 1e-6 elsewhere; Erfinv(x) is 0 for |x| < 6e-8); "
              "no bfloat16 kernels, and half only for the Bessel functions",
           ours="computes in float64 (SciPy) and rounds once; the conformance cases expect TF's float64 value, "
                "rounded", dtypes=_NARROW, reference=_F32_AS_F64)
divergence("Erfinv", when="float64 near 0 and near ±1",
           tf="evaluates ndtri((1 + x) / 2) / √2, which loses digits of x: relative errors ~1e-12 at |x| = 1e-5, 0 "
              "for |x| < 1e-16, 2e-6 at 1 − 1e-12", ours="SciPy's erfinv: erf(Erfinv(x)) = x to the last bit")
divergence("BesselI1", when="its gradient at x = 0", tf="1 (TF's Python gradient imputes it)",
           ours="1/2, the derivative (I1(x) ≈ x/2 near 0)")
divergence(("Igamma", "Igammac", "Betainc"), when="float64 with parameters in the hundreds and more",
           tf="Cephes' series and continued fractions (relative errors up to ~1e-10 measured at a = b = 1e4)",
           ours="SciPy's (Boost's for Betainc): more accurate there")


def expint_at_infinity(run_tf: Callable[..., Any], op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's float64 Expint (which float32 and narrower types also take as their reference), +inf at +inf."""
    (x,) = inputs
    out = run_tf(op, [np.asarray(x, np.float64)], attrs)[0]
    out[np.isposinf(x)] = np.inf
    return [out.astype(np.asarray(x).dtype)]
