"""AsString, StringToNumber, EncodeBase64, DecodeBase64: numbers to text and back, web-safe base64.

``AsString`` formats like TF's ``absl::StrFormat("%<fill><width>.<precision><conv>")`` (``d``/``u`` for
integers, ``f``/``e``/``g`` for floats, ``s`` for strings; half and bfloat16 go through float; complex
values as ``(re,im)``); NaN keeps its sign (``-nan``) as glibc/absl print it.  ``StringToNumber`` accepts
what TF's ``absl::SimpleAtof``/``SimpleAtoi`` accept: ASCII whitespace around, a sign, decimal or hex
floats, ``inf``/``infinity``/``nan`` in any case; integers in decimal only, within the type's range.
float32 values are parsed as double and then rounded (TF rounds once: the two differ only for decimal
strings within 2**-29 ulp of a float32 rounding boundary).
"""
from __future__ import annotations

import base64
import re
from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, conformance, divergence, one_of, text, values
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels._common import unchanged_shape
from tfops_py.framework.shape_inference import register_shape
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.strings._text import flat_strings, map_strings, string_array

CONFORMANCE_FAMILY = "strings"

_FILLS = frozenset(" +-0#")


# -- AsString --------------------------------------------------------------------------------------------------
def _format_of(ctx: KernelContext, dt: DataType) -> str | None:
    """The printf format TF builds from the attrs (None: booleans, or strings passed through)."""
    precision, width = int(ctx.attrs["precision"]), int(ctx.attrs["width"])
    scientific, shortest = bool(ctx.attrs["scientific"]), bool(ctx.attrs["shortest"])
    fill = str(ctx.attrs["fill"])
    textual = dt == DataType.DT_STRING or dt.is_floating or dt.is_complex
    if not textual:
        if scientific or shortest:
            ctx.invalid_argument(f"scientific and shortest format not supported for datatype {dt.short_name}")
        if precision >= 0:
            ctx.invalid_argument(f"precision not supported for datatype {dt.short_name}")
    if len(fill.encode("utf-8", "surrogateescape")) > 1:
        ctx.invalid_argument("Fill string must be one or fewer characters")
    if scientific and shortest:
        ctx.invalid_argument("Cannot select both scientific and shortest notation")
    if fill and fill not in _FILLS:
        ctx.invalid_argument(f'Fill argument not supported: "{fill}"')
    width = max(width, 0)
    if dt == DataType.DT_BOOL or dt == DataType.DT_STRING and width == 0:
        return None
    if dt == DataType.DT_VARIANT:
        ctx.unimplemented("AsString of variant tensors (TF prints each value's DebugString) is not supported")
    if dt.is_integer and dt.numpy_dtype.kind == "u" and fill in ("+", " "):
        fill = ""  # %u has no sign to show
    conv = "s" if dt == DataType.DT_STRING else "d" if dt.is_integer else \
        "g" if shortest else "e" if scientific else "f"
    return f"%{fill}{width}" + (f".{precision}" if precision >= 0 else "") + conv


def _format_floats(fmt: str, x: np.ndarray) -> list[str]:
    """``fmt`` applied to each value as printf does: inf and NaN are padded with spaces, not zeros, and NaNs
    with the sign bit set print as ``-nan`` (formatted as -inf, then renamed)."""
    out = [fmt % v for v in x.tolist()]
    spaced = fmt.replace("%0", "%", 1)
    for i in np.flatnonzero(~np.isfinite(x)).tolist():
        v = x[i]
        out[i] = (spaced % float("-inf")).replace("inf", "nan") if np.isnan(v) and np.signbit(v) else spaced % v
    return out


@register_kernel("AsString", host=True)
def _as_string(ctx: KernelContext, input: Any) -> Any:
    dt = ctx.input_dtypes[0]
    fmt = _format_of(ctx, dt)
    if dt == DataType.DT_STRING:
        if fmt is None:
            return input
        text_fmt = fmt.encode()
        return map_strings(lambda s: text_fmt % s, input)
    x = np.asarray(ctx.host(input)).reshape(-1)
    if dt == DataType.DT_BOOL:
        items = [b"true" if v else b"false" for v in x.tolist()]
    elif dt.is_complex:
        parts = x.astype(np.complex128)
        re_, im = _format_floats(fmt, parts.real), _format_floats(fmt, parts.imag)
        items = [f"({a},{b})".encode() for a, b in zip(re_, im)]
    elif dt.is_floating:
        items = [s.encode() for s in _format_floats(fmt, x.astype(np.float64))]
    else:
        items = [(fmt % v).encode() for v in x.tolist()]
    return string_array(items, np.shape(input))


register_shape("AsString", "StringToNumber", "EncodeBase64", "DecodeBase64")(unchanged_shape)

conformance("AsString", input=values(specials=True), width=one_of(-1, 0, 3, 12), fill=one_of("", " ", "0", "-", "+"),
            shortest=BOOL, scientific=False,
            shapes=[{"input": ()}, {"input": (6,)}, {"input": (2, 0)}, {"input": (2, 3)}])
divergence("AsString", when="variant inputs", tf="prints each value's DebugString", ours="UnimplementedError",
           dtypes=(DataType.DT_VARIANT,))


# -- StringToNumber ---------------------------------------------------------------------------------------------
_WHITESPACE = b" \t\n\v\f\r"
_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(rb"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)")
_SPECIAL = re.compile(rb"([+-]?)(?:(inf|infinity)|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_SIGNED_INT = re.compile(rb"[+-]?\d+")
_UNSIGNED_INT = re.compile(rb"\+?\d+")


def parse_float(s: bytes) -> float | None:
    """A float the way ``absl::SimpleAtof`` reads one, or None."""
    t = s.strip(_WHITESPACE)
    if _DECIMAL.fullmatch(t):
        return float(t)
    m = _HEX.fullmatch(t)
    if m:
        value = float.fromhex(m.group(2).decode() if b"p" in m.group(2).lower() else m.group(2).decode() + "p0")
        return -value if m.group(1) == b"-" else value
    m = _SPECIAL.fullmatch(t)
    if m:
        return (float("-inf") if m.group(1) == b"-" else float("inf")) if m.group(2) else float("nan")
    return None


def parse_int(s: bytes, signed: bool) -> int | None:
    """An integer the way ``absl::SimpleAtoi`` reads one (decimal, optional sign), or None."""
    t = s.strip(_WHITESPACE)
    return int(t) if (_SIGNED_INT if signed else _UNSIGNED_INT).fullmatch(t) else None


@register_kernel("StringToNumber", host=True)
def _string_to_number(ctx: KernelContext, string_tensor: Any) -> Any:
    dt = ctx.attrs["out_type"]
    items = flat_strings(string_tensor)
    parsed: list[float | int | None]
    if dt.is_floating:
        parsed = [parse_float(s) for s in items]
        lo, hi = 0, 0  # not used: floats have no range check
    else:
        info = np.iinfo(dt.numpy_dtype)
        lo, hi = int(info.min), int(info.max)
        parsed = [parse_int(s, lo < 0) for s in items]
    for s, v in zip(items, parsed):
        if v is None or not dt.is_floating and not lo <= v <= hi:  # floats overflow to inf, as TF's do
            ctx.invalid_argument("StringToNumberOp could not correctly convert string: "
                                 + s.decode("utf-8", "backslashreplace"))
    with np.errstate(over="ignore"):
        out = np.array(parsed, dtype=np.float64 if dt.is_floating else object).astype(dt.numpy_dtype)
    return ctx.asarray(out.reshape(np.shape(string_tensor)), dt)


conformance("StringToNumber", string_tensor=text(max_words=1, unicode=False), out_type=one_of(
    DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32, DataType.DT_INT64, DataType.DT_UINT32,
    DataType.DT_UINT64), shapes=[{"string_tensor": ()}, {"string_tensor": (0,)}])


# -- EncodeBase64, DecodeBase64 -----------------------------------------------------------------------------------
_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


@register_kernel("EncodeBase64", host=True)
def _encode_base64(ctx: KernelContext, input: Any) -> Any:
    if ctx.attrs["pad"]:
        return map_strings(base64.urlsafe_b64encode, input)
    return map_strings(lambda s: base64.urlsafe_b64encode(s).rstrip(b"="), input)


def decode_base64(ctx: KernelContext, s: bytes) -> bytes:
    """TF's ``Base64Decode``: web-safe alphabet; ``=`` padding only at the end of a final 4-character group."""
    if not s:
        return b""
    tail_at = len(s) - ((len(s) - 1) % 4 + 1)
    head, tail = s[:tail_at], s[tail_at:]
    if head.translate(None, _ALPHABET):
        ctx.invalid_argument("Invalid character found in base64.")
    if len(tail) == 4:
        tail = tail[:2] if tail[2:] == b"==" else tail[:3] if tail[3:] == b"=" else tail
    if len(tail) == 1:
        ctx.invalid_argument("Base64 string length cannot be 1 modulo 4.")
    if tail.translate(None, _ALPHABET):
        ctx.invalid_argument("Invalid character found in base64.")
    return base64.urlsafe_b64decode(head + tail + b"=" * (-len(tail) % 4))


@register_kernel("DecodeBase64", host=True)
def _decode_base64(ctx: KernelContext, input: Any) -> Any:
    return map_strings(lambda s: decode_base64(ctx, s), input)


_SHAPES = [{"input": ()}, {"input": (5,)}, {"input": (2, 0)}, {"input": (2, 3)}]
conformance("EncodeBase64", input=text(invalid=True), pad=BOOL, shapes=_SHAPES)
conformance("DecodeBase64", input=text(max_words=1, unicode=False), shapes=_SHAPES)
