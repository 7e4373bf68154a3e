"""The element-wise math ops that need more than a table entry in math_ops.py.

Modulo and truncating division (integer sign rules and division-by-zero checks as TF's
``safe_div_or_mod``), SquaredDifference, DivNoNan, Xlogy/Xdivy/Xlog1py, the bit shifts,
ClipByValue, complex Expm1/Log1p in Eigen's formulas, and Erf/Erfc/Lgamma/Digamma
(numerics in _special_math.py).  Registered through math_ops' ``_register``; checked and departing
from TF as declared at the end.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.conformance import BROADCAST, ShapeRule, conformance, divergence, reference, small, values
from tfops_py.errors import InternalError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels.math import _special_math
from tfops_py.kernels._common import complex_from_parts, trunc_divide, unchanged_shape
from tfops_py.kernels.math.math_ops import (IN_FLOAT, _check_broadcast, _check_nonzero, _divides, _register,
                                            _unary_kernel, no_tf_kernel)
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "math_ops"
Kernel = Callable[..., Any]


# -- modulo and truncating division ----------------------------------------------------------------------

def _fmod(xp: Any, x: Any, y: Any) -> Any:
    """C's fmod for floats from the standard's floor-mod ``remainder``: exact, -0.0 and NaN as fmod."""
    return xp.copysign(xp.remainder(xp.abs(x), xp.abs(y)), x)


def _trunc_mod_int(xp: Any, x: Any, y: Any) -> Any:
    """C's ``%`` (sign of x) from the floor-mod ``remainder``; INT_MIN % -1 is 0, as TF."""
    r = xp.remainder(x, y)
    return xp.where((r != 0) & ((r < 0) != (x < 0)), r - y, r)


def _truncating_zero_check(ctx: KernelContext, x: Any, y: Any) -> None:
    """TF's TruncateDiv/TruncateMod report an integer zero divisor as this InternalError."""
    if _divides(x, y) and ctx.xp.any(y == 0):
        raise ctx.error(InternalError, "Unexpected error in binary operator (only integer div and mod should "
                                       "have errors)")


def _mod_kernel(fmod: Callable[[Any, Any, Any], Any], int_mod: Callable[[Any, Any, Any], Any]) -> Kernel:
    def mod(ctx: KernelContext, x: Any, y: Any) -> Any:
        """Mod and TruncateMod: remainder with the sign of x (C ``%``, ``fmod``)."""
        xp, dt = ctx.xp, ctx.output_dtypes[0]
        _check_broadcast(ctx, x, y)
        if dt.is_integer:
            (_check_nonzero if ctx.op_type == "Mod" else _truncating_zero_check)(ctx, x, y)
            return int_mod(xp, x, y)
        return fmod(xp, x, y)

    return mod


def _floor_mod_kernel(fmod: Callable[[Any, Any, Any], Any]) -> Kernel:
    def floor_mod(ctx: KernelContext, x: Any, y: Any) -> Any:
        """Remainder with the sign of y.  Floats: TF's ``fmod`` then ``+ y`` where the signs differ (a zero
        result keeps x's sign, where NumPy's remainder takes y's)."""
        xp, dt = ctx.xp, ctx.output_dtypes[0]
        _check_broadcast(ctx, x, y)
        if dt.is_integer:
            _check_nonzero(ctx, x, y)
            return xp.remainder(x, y)  # unsigned: plain %, signed: Python's floor mod = TF's
        r = fmod(xp, x, y)
        return xp.where((r != 0) & ((y < 0) != (r < 0)), r + y, r)

    return floor_mod


def _truncate_div(ctx: KernelContext, x: Any, y: Any) -> Any:
    """Integers: C ``/`` (toward zero, INT_MIN / -1 = INT_MIN); floats: ``trunc(x / y)``."""
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    if dt.is_complex:
        no_tf_kernel(ctx)
    _check_broadcast(ctx, x, y)
    if dt.is_integer:
        _truncating_zero_check(ctx, x, y)
        return trunc_divide(xp, x, y, signed=dt.numpy_dtype.kind == "i")
    return xp.trunc(xp.divide(x, y))


_np_fmod = lambda xp, x, y: np.fmod(x, y)  # noqa: E731  one pass (the standard path takes four)
for _names, _kernel, _np_kernel in (
        (("Mod", "TruncateMod"), _mod_kernel(_fmod, _trunc_mod_int), _mod_kernel(_np_fmod, _np_fmod)),
        (("FloorMod",), _floor_mod_kernel(_fmod), _floor_mod_kernel(_np_fmod))):
    _register(_names, _kernel)
    register_kernel(*_names, backend="numpy")(_np_kernel)
_register(("TruncateDiv",), _truncate_div)


# -- other binary element-wise ----------------------------------------------------------------------------

def _binary(fn: Callable[[Any, Any, Any], Any]) -> Kernel:
    def kernel(ctx: KernelContext, x: Any, y: Any) -> Any:
        _check_broadcast(ctx, x, y)
        return fn(ctx.xp, x, y)

    kernel.__name__ = f"_{fn.__name__}"
    return kernel


def _squared_difference(xp: Any, x: Any, y: Any) -> Any:
    """``(x - y) * conj(x - y)``: complex results have a zero imaginary part (NaN where |x - y| is inf, as TF)."""
    d = x - y
    return d * xp.conj(d) if d.dtype in (xp.complex64, xp.complex128) else d * d


def _where_x_zero(xp: Any, x: Any, value: Any) -> Any:
    """TF's xlogy/xdivy/xlog1py rule: 0 wherever x == 0, even when the other factor is NaN or inf."""
    return xp.where(x == 0, xp.zeros_like(value), value)


def _complex_log1p(xp: Any, x: Any) -> Any:
    """Eigen's log1p for complex: ``x log(u) / (u - 1)`` with ``u = 1 + x`` (x where u is 1 or log(u) = u),
    and Eigen's complex log, ``log|u| + i arg(u)`` (the C library's clog differs where |u| is near 1)."""
    u = x + 1
    re, im = xp.real(u), xp.imag(u)
    log_u = complex_from_parts(xp, xp.log(xp.hypot(re, im)), xp.atan2(im, re))
    keep_x = (u == 1) | (u == log_u)
    return xp.where(keep_x, x, x * (log_u / xp.where(keep_x, xp.ones_like(u), u - 1)))


def _log1p(xp: Any, x: Any) -> Any:
    return _complex_log1p(xp, x) if x.dtype in (xp.complex64, xp.complex128) else xp.log1p(x)


_BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "SquaredDifference": _squared_difference,
    "DivNoNan": lambda xp, x, y: xp.where(y == 0, xp.zeros_like(x), x / y),  # 0/NaN stays NaN, as TF
    "Xlogy": lambda xp, x, y: _where_x_zero(xp, x, x * xp.log(y)),
    "Xdivy": lambda xp, x, y: _where_x_zero(xp, x, x / y),
    "Xlog1py": lambda xp, x, y: _where_x_zero(xp, x, x * _log1p(xp, y)),
}
for _name, _fn in _BINARY.items():
    _register((_name,), _binary(_fn))


def _shift_kernel(left: bool) -> Kernel:
    def shift(ctx: KernelContext, x: Any, y: Any) -> Any:
        """TF clamps the shift to [0, bits - 1] (no UB); signed right shifts are arithmetic."""
        xp = ctx.xp
        _check_broadcast(ctx, x, y)
        bits = ctx.output_dtypes[0].numpy_dtype.itemsize * 8
        y = xp.where(y > bits - 1, xp.full_like(y, bits - 1), y)
        if ctx.output_dtypes[0].numpy_dtype.kind == "i":
            y = xp.where(y < 0, xp.zeros_like(y), y)
        return xp.bitwise_left_shift(x, y) if left else xp.bitwise_right_shift(x, y)

    return shift


_register(("LeftShift",), _shift_kernel(left=True))
_register(("RightShift",), _shift_kernel(left=False))


# -- ClipByValue -----------------------------------------------------------------------------------------

_CLIP_MESSAGE = "clip_value_min and clip_value_max must be either of the same shape as input, or a scalar. "


def _clip_error(ctx: Any, t: str, lo: str, hi: str) -> None:
    ctx.invalid_argument(f"{_CLIP_MESSAGE}input shape: {t}clip_value_min shape: {lo}clip_value_max shape: {hi}")


def _clip_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's shape function is UnchangedShape and its kernel checks the bounds; we check at build time
    when the shapes already decide it."""
    t = ctx.input(0)
    out = t
    for i in (1, 2):
        b = ctx.input(i)
        if b.unknown_rank() or b.dims() == 0:
            continue
        if not b.is_compatible_with(t):
            _clip_error(ctx, str(t), str(ctx.input(1)), str(ctx.input(2)))
        out = out.merge_with(b)
    return [out]


def _plain_bound(xp: Any, b: Any) -> bool:
    """A scalar bound that is not NaN: ``minimum``/``maximum`` then give Eigen's answer in one pass."""
    return b.ndim == 0 and not (b.dtype in (xp.float32, xp.float64) and bool(xp.isnan(b)))


def _clip_components(xp: Any, t: Any, lo: Any, hi: Any) -> Any:
    """Eigen's ``t.cwiseMin(hi).cwiseMax(lo)``: a NaN bound is ignored, a NaN t stays, lo wins over hi."""
    m = xp.minimum(t, hi) if _plain_bound(xp, hi) else xp.where(hi < t, hi, t)
    return xp.maximum(m, lo) if _plain_bound(xp, lo) else xp.where(m < lo, lo, m)


def _clip_by_value(ctx: KernelContext, t: Any, lo: Any, hi: Any) -> Any:
    """Complex values are clipped part by part (real against real, imaginary against imaginary), as TF."""
    xp = ctx.xp
    shape = tuple(t.shape)
    if any(tuple(b.shape) not in (shape, ()) for b in (lo, hi)):
        _clip_error(ctx, format_shape(shape), format_shape(lo.shape), format_shape(hi.shape))
    if ctx.output_dtypes[0].is_complex:
        re = _clip_components(xp, xp.real(t), xp.real(lo), xp.real(hi))
        im = _clip_components(xp, xp.imag(t), xp.imag(lo), xp.imag(hi))
        return complex_from_parts(xp, re, im)
    return _clip_components(xp, t, lo, hi)


_register(("ClipByValue",), _clip_by_value, shape=_clip_shape)


# -- Expm1, Log1p and the special functions ---------------------------------------------------------------

def _expm1(ctx: KernelContext, x: Any) -> Any:
    """Complex: Eigen's ``expm1(a) - 2 e^a sin^2(b/2) + i e^a sin b`` (accurate near 0, as TF)."""
    xp = ctx.xp
    if not ctx.input_dtypes[0].is_complex:
        return _REAL["Expm1"](ctx, x)
    a, b = xp.real(x), xp.imag(x)
    em1 = xp.expm1(a)
    e = em1 + 1
    half_sin = xp.sin(b / 2)
    return complex_from_parts(xp, em1 - 2 * e * (half_sin * half_sin), e * xp.sin(b))


def _in_double(fn: Callable[..., Any], **float32_kwargs: Any) -> Callable[[Any, Any], Any]:
    """float32/half/bfloat16 computed in float64 (with ``float32_kwargs``) and rounded once."""

    def wide(xp: Any, x: Any) -> Any:
        if x.dtype == xp.float64:
            return fn(xp, x)
        return xp.astype(fn(xp, xp.astype(x, xp.float64), **float32_kwargs), x.dtype)

    return wide


_REAL: dict[str, Kernel] = {
    "Expm1": _unary_kernel(lambda xp, x: xp.expm1(x), True),
    "Log1p": _unary_kernel(_log1p, True),  # complex: Eigen's formula (_complex_log1p)
    "Erf": _unary_kernel(_in_double(_special_math.erf, short=True), True),
    "Erfc": _unary_kernel(_in_double(_special_math.erfc, short=True), True),
    "Lgamma": _unary_kernel(_in_double(_special_math.lgamma), True),
    "Digamma": _unary_kernel(_special_math.digamma, True),  # in float32 / float64, as Eigen
}
for _name, _kernel in {**_REAL, "Expm1": _expm1}.items():
    _register((_name,), _kernel, shape=unchanged_shape)


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_ANY = values(specials=True)
_PYTHON_ONLY = "TF Python only (not in TF's C++ API); not ported yet"
_NO_GRADIENT = {
    "FloorMod": _PYTHON_ONLY, "Xdivy": _PYTHON_ONLY, "Xlogy": _PYTHON_ONLY, "Xlog1py": _PYTHON_ONLY,
    "Erfc": _PYTHON_ONLY, "Digamma": "TF Python only (Polygamma(1, x)); waits for a Polygamma kernel",
    "TruncateDiv": "not differentiable: TF Python's gradient is None, TF's C++ API registers none"}
for _op in ("Mod", "FloorMod", "TruncateMod", "TruncateDiv", "SquaredDifference", "DivNoNan", "Xdivy", "LeftShift",
            "RightShift"):
    conformance(_op, x=_ANY, y=_ANY, shapes=BROADCAST, no_gradient=_NO_GRADIENT.get(_op))
for _op in ("Xlogy", "Xlog1py"):
    conformance(_op, x=_ANY, y=_ANY, shapes=BROADCAST, compare="cw", no_gradient=_NO_GRADIENT.get(_op))


class _ClipShapes(ShapeRule):
    """Bounds that are scalars or t's shape, and sometimes neither (TF's error)."""

    def patterns(self) -> list[dict[str, Any]]:
        scalar, full = (), (3, 4)
        return [dict(t=full, clip_value_min=lo, clip_value_max=hi) for lo, hi in
                ((scalar, scalar), (full, scalar), (scalar, full), (full, full), ((4,), scalar), (full, (1, 3, 4)))] + \
            [dict(t=(), clip_value_min=(), clip_value_max=()), dict(t=(2, 0, 3), clip_value_min=(), clip_value_max=())]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        t = tuple(int(d) for d in rng.integers(0, 5, int(rng.integers(0, 4))))
        bounds = [(), t, t, (1,) + t, (2,)]  # mostly valid, sometimes not
        return dict(t=t, clip_value_min=bounds[int(rng.integers(5))], clip_value_max=bounds[int(rng.integers(5))])


conformance("ClipByValue", t=_ANY, clip_value_min=small(), clip_value_max=small(), shapes=_ClipShapes(),
            live=60)
for _op in ("Expm1", "Log1p"):
    conformance(_op, x=_ANY, compare="cw")
for _op in ("Erf", "Erfc"):
    conformance(_op, x=_ANY, no_gradient=_NO_GRADIENT.get(_op))
for _op in ("Lgamma", "Digamma"):
    conformance(_op, x=_ANY, compare="ew1", no_gradient=_NO_GRADIENT.get(_op))

ERF_AT_INFINITY = reference("tfops_py.kernels.math._math_cases:erf_at_infinity",
                            "TF's float64 Erf gives NaN at +-inf; tfops_py gives +-1")
_LOW = (DataType.DT_HALF, DataType.DT_BFLOAT16)
divergence(("Mod", "TruncateMod"), when="half / bfloat16", tf="no kernel (NotFoundError)",
           ours="computed in float, rounded", dtypes=_LOW, reference=IN_FLOAT)
divergence(("Lgamma", "Digamma"), when="bfloat16", tf="no kernel (NotFoundError)", ours="computed in float, rounded",
           dtypes=(DataType.DT_BFLOAT16,), reference=IN_FLOAT)
divergence("ClipByValue", when="uint32 / uint64", tf="no kernel (NotFoundError)",
           ours="computed, comparing in the type (no trip through int64)")
divergence("Erf", when="float64 at ±inf", tf="NaN (its float32 and half kernels give ±1)", ours="±1",
           dtypes=(DataType.DT_DOUBLE,), reference=ERF_AT_INFINITY)
divergence(("Erf", "Erfc"), when="float32",
           tf="Eigen's vectorized approximations (up to ~5 ulp; erfc loses digits just above the subnormal range, "
              "x ≈ 8.6–9.2)", ours="float64 results rounded: within 3e-7 relative of TF, measured")
divergence("Lgamma", when="float64 near its zeros on the negative axis", tf="glibc: relative accuracy",
           ours="absolute error about 1e-15 (relative error up to ~1e-12 within 1e-3 of a zero)")
divergence("Xdivy", when="complex division by zero",
           tf="NaN + NaN·i in the vectorized body of a tensor, C99's ±inf parts in its scalar tail "
              "(position-dependent)",
           ours="C99's answer (NumPy's) everywhere")
divergence("ClipByValue", when="bound shapes", tf="checked at run time",
           ours="checked at build time when the shapes are known")
