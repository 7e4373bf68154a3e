"""Shape-function helpers shared by the kernel families."""
from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext
from tfops_py.framework.tensor_shape import PartialTensorShape, unknown_shape


def unchanged_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """Output 0 has the shape of input 0."""
    return [ctx.input(0)]


def broadcast_shapes(ctx: InferenceContext, a: PartialTensorShape, b: PartialTensorShape) -> PartialTensorShape:
    """NumPy/TF broadcasting of two partial shapes; ``Incompatible shapes`` when they cannot broadcast."""
    if a.unknown_rank() or b.unknown_rank():
        return unknown_shape()
    ra, rb = a.dims(), b.dims()
    rank = max(ra, rb)
    da = [1] * (rank - ra) + list(a.as_tuple())
    db = [1] * (rank - rb) + list(b.as_tuple())
    out = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == -1 or y == -1:
            # one side unknown: the other known non-1 dim wins; both unknown stays unknown
            out.append(y if x == -1 else x)
        elif x == y:
            out.append(x)
        else:
            ctx.invalid_argument(f"Incompatible shapes: {a} vs. {b}")
    return PartialTensorShape(out)


def broadcast_binary(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [broadcast_shapes(ctx, ctx.input(0), ctx.input(1))]


# -- numeric helpers shared by the math, reduction, nn and pooling families ---------------------------

_LOW_PRECISION = frozenset({DataType.DT_HALF, DataType.DT_BFLOAT16})


def compute_dtype(dt: DataType) -> DataType:
    """The type Eigen computes ``dt`` in: float for half and bfloat16, ``dt`` itself otherwise."""
    return DataType.DT_FLOAT if dt in _LOW_PRECISION else dt


def dtype_limits(dt: DataType) -> tuple[float | int, float | int]:
    """(lowest, highest) finite value of a real or integer type, as Python numbers (bool: 0, 1)."""
    if dt == DataType.DT_BOOL:
        return 0, 1
    np_dtype = dt.numpy_dtype
    info = np.iinfo(np_dtype) if dt.is_integer else ml_dtypes.finfo(np_dtype)
    return (int(info.min), int(info.max)) if dt.is_integer else (float(info.min), float(info.max))


def trunc_divide(xp: Any, x: Any, y: Any, signed: bool = True) -> Any:
    """Integer division rounding toward zero (C++ ``/``); ``y`` must be non-zero.  MIN / -1 wraps to MIN."""
    q = xp.floor_divide(x, y)
    if not signed:
        return q
    inexact = (x - q * y) != 0
    return xp.where(inexact & ((x < 0) != (y < 0)), q + 1, q)


def complex_from_parts(xp: Any, re: Any, im: Any) -> Any:
    """``re + i im`` (real arrays of one float dtype) with both parts kept exactly: infinities, NaN and the
    signs of zeros too.

    The array API has no complex constructor and ``im * 1j`` turns an infinite ``im`` into a NaN real
    part (``inf * 0``), so non-finite imaginary parts are added as complex scalars ``0 + i v``; adding a
    signed zero can lose its sign, which a conjugation (imaginary part) or ``-conj`` (real part) restores.
    """
    cdt = xp.complex128 if re.dtype == xp.float64 else xp.complex64
    finite = xp.isfinite(im)
    if bool(xp.all(finite)):
        out = xp.astype(re, cdt) + xp.astype(im, cdt) * 1j
    else:
        out = xp.astype(re, cdt) + xp.astype(xp.where(finite, im, xp.zeros_like(im)), cdt) * 1j
        for special in (math.inf, -math.inf):
            out = xp.where(im == special, out + complex(0.0, special), out)
        out = xp.where(xp.isnan(im), out + complex(0.0, math.nan), out)
    lost_re = (re == 0) & (xp.signbit(re) != xp.signbit(xp.real(out)))
    out = xp.where(lost_re, -xp.conj(out), out)
    lost_im = (im == 0) & (xp.signbit(im) != xp.signbit(xp.imag(out)))
    return xp.where(lost_im, xp.conj(out), out)
