"""DecodeRaw and DecodePaddedRaw: the bytes of each string read as a vector of numbers (whole tensor at once).

The strings are joined into one buffer and viewed with the output dtype (byte-swapped when
``little_endian`` is False); ``DecodePaddedRaw`` first cuts or zero-pads each string to ``fixed_length``
bytes.  Booleans are bytes that are not zero.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, choice, conformance, divergence
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._shape_util import dim_from_scalar_input, divide_dim
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.strings._text import flat_strings

CONFORMANCE_FAMILY = "strings"


def _read(ctx: KernelContext, buffer: bytes, shape: tuple[int, ...]) -> Any:
    dt: DataType = ctx.attrs["out_type"]
    np_dtype = np.dtype(dt.numpy_dtype)
    values = np.frombuffer(buffer, dtype=np.uint8 if dt == DataType.DT_BOOL else np_dtype.newbyteorder(
        "<" if ctx.attrs["little_endian"] else ">"))
    values = values != 0 if dt == DataType.DT_BOOL else values.astype(np_dtype)
    return ctx.asarray(values.reshape(shape), dt)


@register_shape("DecodeRaw")
def _decode_raw_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.input(0)
    return [PartialTensorShape(None) if x.unknown_rank() else PartialTensorShape(list(x.as_tuple()) + [-1])]


@register_kernel("DecodeRaw", host=True)
def _decode_raw(ctx: KernelContext, bytes_: Any) -> Any:
    items = flat_strings(bytes_)
    dt: DataType = ctx.attrs["out_type"]
    if not items:
        return _read(ctx, b"", np.shape(bytes_) + (0,))
    size = len(items[0])
    for i, s in enumerate(items):
        if len(s) != size:
            ctx.invalid_argument(f"DecodeRaw requires input strings to all be the same size, but element {i} has "
                                 f"size {size} != {len(s)}")  # TF names the first size, then this one
    width = np.dtype(dt.numpy_dtype).itemsize
    if size % width:
        ctx.invalid_argument(f"Input to DecodeRaw has length {size} that is not a multiple of {width}, the size "
                             f"of {dt.short_name}")
    return _read(ctx, b"".join(items), np.shape(bytes_) + (size // width,))


@register_shape("DecodePaddedRaw")
def _decode_padded_raw_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.input(0)
    ctx.with_rank(ctx.input(1), 0)
    width = np.dtype(ctx.attr("out_type").numpy_dtype).itemsize
    last = divide_dim(ctx, dim_from_scalar_input(ctx, 1), width)
    return [PartialTensorShape(None) if x.unknown_rank() else PartialTensorShape(list(x.as_tuple()) + [last])]


@register_kernel("DecodePaddedRaw", host=True)
def _decode_padded_raw(ctx: KernelContext, input_bytes: Any, fixed_length: Any) -> Any:
    dt: DataType = ctx.attrs["out_type"]
    width = np.dtype(dt.numpy_dtype).itemsize
    length = int(ctx.host(fixed_length))
    if length <= 0:
        ctx.invalid_argument(f"fixed_length ({length}) must be greater than zero.")
    if length % width:
        ctx.invalid_argument(f"fixed_length ({length}) must be a multiple of the size of out_type ({width})")
    items = flat_strings(input_bytes)
    padded = b"".join(s[:length].ljust(length, b"\0") for s in items)
    return _read(ctx, padded, np.shape(input_bytes) + (length // width,))


conformance("DecodeRaw", generate=False, little_endian=BOOL)  # cases: _string_cases.py (strings of one length)
conformance("DecodePaddedRaw", generate=False, fixed_length=choice(0, 8), little_endian=BOOL)
divergence("DecodePaddedRaw", when="out_type=half", tf="no CPU kernel (its OpDef allows half)", ours="decodes half",
           attrs={"out_type": DataType.DT_HALF})
