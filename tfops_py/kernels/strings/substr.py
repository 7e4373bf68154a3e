"""Substr: substrings by byte or by UTF-8 character, ``pos``/``len`` broadcast against the strings.

A negative ``pos`` counts from the end; ``pos`` outside ``[-length, length]`` is TF's InvalidArgumentError
naming the element; in bytes a negative ``len`` takes the rest of the string.  In ``UTF8_CHAR`` units a
character starts at every byte that is not a continuation byte, so each stray byte of malformed UTF-8 is one
character, and a negative ``len`` gives ``b""`` after a non-negative ``pos`` and an error after a negative
one (TF's character walk).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import conformance, divergence, one_of, text, values
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import broadcast_shapes
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.strings._text import string_array

CONFORMANCE_FAMILY = "strings"


@register_shape("Substr")
def _substr_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    pos, length = ctx.input(1), ctx.input(2)
    if not pos.unknown_rank() and not length.unknown_rank():
        ctx.with_rank(pos, length.dims())
        if any(a != b for a, b in zip(pos.as_tuple(), length.as_tuple())):
            ctx.invalid_argument(f"pos and len shapes must match: {pos} vs. {length}")
    return [broadcast_shapes(ctx, ctx.input(0), pos)]


def _char_starts(s: bytes) -> list[int]:
    """Byte offsets of the characters of ``s`` (then its length)."""
    return [i for i, b in enumerate(s) if b & 0xC0 != 0x80] + [len(s)]


@register_kernel("Substr", host=True)
def _substr(ctx: KernelContext, input: Any, pos: Any, length: Any) -> Any:
    positions, lengths = np.asarray(ctx.host(pos)), np.asarray(ctx.host(length))
    if positions.shape != lengths.shape:
        ctx.invalid_argument(f"pos and len should have the same shape, got: {format_shape(positions.shape)} vs. "
                             f"{format_shape(lengths.shape)}")
    strings = np.asarray(input, dtype=object)
    try:
        shape = np.broadcast_shapes(strings.shape, positions.shape)
    except ValueError:
        ctx.invalid_argument(f"Incompatible shapes: {format_shape(strings.shape)} vs. {format_shape(positions.shape)}")
    items = np.broadcast_to(strings, shape).reshape(-1).tolist()
    starts = np.broadcast_to(positions, shape).reshape(-1).tolist()
    counts = np.broadcast_to(lengths, shape).reshape(-1).tolist()
    by_char = ctx.attrs["unit"] == "UTF8_CHAR"
    # TF names an element by its flat index, or by (row, column) when it broadcast two matrices
    matrix = len(shape) == 2 and positions.ndim > 0 and positions.shape != strings.shape
    out = []
    for i, (s, p, n) in enumerate(zip(items, starts, counts)):
        span = _utf8_span(s, p, n) if by_char else _byte_span(s, p, n)
        if span is None:
            row, column = divmod(i, shape[-1]) if matrix else (i, 0)
            where = "" if by_char else f" b'{s.decode('utf-8', 'backslashreplace')}'"
            index = row if matrix and by_char else f"({row}, {column})" if matrix else i
            ctx.invalid_argument(f"pos {p} out of range for string{where} at index {index}")
        out.append(s[span[0]:span[1]])
    return string_array(out, shape)


def _byte_span(s: bytes, pos: int, length: int) -> tuple[int, int] | None:
    """Byte offsets of ``Substr(s, pos, length)``, or None when ``pos`` is out of range."""
    size = len(s)
    if not -size <= pos <= size:
        return None
    start = pos + size if pos < 0 else pos
    return start, size if length < 0 else min(size, start + length)


def _utf8_span(s: bytes, pos: int, length: int) -> tuple[int, int] | None:
    """Byte offsets of a UTF8_CHAR substring, walking characters as TF does: a non-negative ``pos`` steps
    forward (a negative ``length`` then gives an empty string); a negative ``pos`` places the end first,
    ``-pos - length`` characters before the end, then the start (a negative ``length`` is out of range)."""
    offsets = _char_starts(s)
    chars = len(offsets) - 1
    if pos >= 0:
        if pos > chars:
            return None
        return offsets[pos], offsets[pos] if length < 0 else offsets[min(chars, pos + length)]
    skip = max(-pos - length, 0)
    back = -pos - skip
    if skip > chars or back < 0 or back > chars - skip:
        return None
    return offsets[chars - skip - back], offsets[chars - skip]


divergence("Substr", when="pos/len broadcast against the strings in 3 or more dimensions",
           tf="UnimplementedError (Substr broadcast not implemented for 3 dimensions)", ours="the broadcast result",
           applies=lambda inputs, attrs: np.ndim(inputs["pos"]) > 0 and np.shape(inputs["pos"]) !=
           np.shape(inputs["input"]) and max(np.ndim(inputs["pos"]), np.ndim(inputs["input"])) > 2)
conformance("Substr", input=text(max_words=2), pos=values("small"), len=values("small"),
            unit=one_of("BYTE", "UTF8_CHAR"),
            shapes=[{"input": (), "pos": (), "len": ()}, {"input": (4,), "pos": (4,), "len": (4,)},
                    {"input": (2, 3), "pos": (), "len": ()}, {"input": (2, 1), "pos": (3,), "len": (3,)},
                    {"input": (0,), "pos": (), "len": ()}])
