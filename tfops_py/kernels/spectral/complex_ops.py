"""Complex numbers: Complex (from broadcast real and imaginary parts), Real, Imag, Angle, Conj, ComplexAbs.

``Tout`` must be the precision of ``T`` (complex64 <-> float); other pairings have no TF CPU kernel and are
refused here with the same NotFoundError-like UnimplementedError as an unsupported dtype.  Complex keeps
infinite and NaN imaginary parts exactly (no ``inf * 0`` in the real part); ComplexAbs is ``hypot(re, im)``
(no overflow for large finite parts); Angle is ``atan2(im, re)``.
"""
from __future__ import annotations

from typing import Any

from tfops_py.conformance import BROADCAST, case, conformance, float_specials, literal, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import register_shape
from tfops_py.kernels._common import broadcast_binary, complex_from_parts, unchanged_shape
from tfops_py.kernels.linalg._algorithms import quiet as _quiet
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "fft"
D = DataType
_PRECISION = {D.DT_FLOAT: D.DT_COMPLEX64, D.DT_DOUBLE: D.DT_COMPLEX128}
_REAL = {D.DT_COMPLEX64: D.DT_FLOAT, D.DT_COMPLEX128: D.DT_DOUBLE}


def _check_pairing(ctx: KernelContext, complex_type: DataType, real_type: DataType) -> None:
    if _REAL.get(complex_type) != real_type:
        ctx.unimplemented(f"{ctx.op_type} from {ctx.input_dtypes[0].short_name} to {ctx.output_dtypes[0].short_name} "
                          "is not supported (TensorFlow has no such kernel)")


register_shape("Complex")(broadcast_binary)
register_shape("Real", "Imag", "Angle", "Conj", "ComplexAbs")(unchanged_shape)


@register_kernel("Complex")
def _complex(ctx: KernelContext, real: Any, imag: Any) -> Any:
    _check_pairing(ctx, ctx.output_dtypes[0], ctx.input_dtypes[0])
    xp = ctx.xp
    try:
        shape = tuple(xp.broadcast_arrays(real, imag)[0].shape)
    except ValueError:
        ctx.invalid_argument(f"Incompatible shapes: [{','.join(map(str, real.shape))}] vs. "
                             f"[{','.join(map(str, imag.shape))}]")
    with _quiet(xp):
        return complex_from_parts(xp, xp.broadcast_to(real, shape), xp.broadcast_to(imag, shape))


def _part_kernel(fn: Any) -> Any:
    def kernel(ctx: KernelContext, x: Any) -> Any:
        _check_pairing(ctx, ctx.input_dtypes[0], ctx.output_dtypes[0])
        with _quiet(ctx.xp):
            return fn(ctx.xp, x)

    return kernel


@register_kernel("ComplexAbs")
def _complex_abs(ctx: KernelContext, x: Any) -> Any:
    """``hypot(re, im)``; TF's kernel lookup message for a ``Tout`` of the other precision."""
    t, tout = ctx.input_dtypes[0], ctx.output_dtypes[0]
    if _REAL[t] != tout:
        ctx.invalid_argument(f"Signature mismatch, have: {t.short_name}->{tout.short_name} expected: "
                             f"{t.short_name}->{_REAL[t].short_name}")
    with _quiet(ctx.xp):
        return ctx.xp.hypot(ctx.xp.real(x), ctx.xp.imag(x))


_PARTS = {
    "Real": lambda xp, x: xp.real(x),
    "Imag": lambda xp, x: xp.imag(x),
    "Angle": lambda xp, x: xp.atan2(xp.imag(x), xp.real(x)),
}
for _op, _fn in _PARTS.items():
    register_kernel(_op)(_part_kernel(_fn))


@register_kernel("Conj")
def _conj(ctx: KernelContext, x: Any) -> Any:
    return ctx.xp.conj(x)


# -- conformance -----------------------------------------------------------------------------------------
_NAN, _INF = float("nan"), float("inf")
_COMPLEX_EDGES = [complex(_NAN, 1.0), complex(1.0, _NAN), complex(_INF, -_INF), complex(-_INF, 2.0), complex(0.0, -0.0),
                  complex(-0.0, 0.0), complex(-1.0, 0.0), complex(-1.0, -0.0), complex(3e38, 3e38), complex(1e-45, 0.0)]
conformance("Complex", real=values(specials=True), imag=values(specials=True), shapes=BROADCAST, compare="exact",
            live=10, cases=[case(real=float_specials(t), imag=float_specials(t), id=f"Complex/specials/{t}")
                            for t in ("float", "double")])
for _op in _PARTS:
    conformance(_op, compare="exact" if _op in ("Real", "Imag") else "ew", live=10,
                cases=[case(input=literal(_COMPLEX_EDGES), id=f"{_op}/edges")])
conformance("ComplexAbs", compare="ew", live=10, cases=[case(x=literal(_COMPLEX_EDGES), id="ComplexAbs/edges")])
conformance("Conj", compare="exact", live=10, cases=[case(input=literal(_COMPLEX_EDGES), id="Conj/edges")])
