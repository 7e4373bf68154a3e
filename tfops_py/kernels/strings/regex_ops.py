"""RegexReplace, StaticRegexReplace, RegexFullMatch, StaticRegexFullMatch with RE2, TF's regex engine.

Patterns are compiled by Google's RE2 (the ``google-re2`` package, the ``strings`` extra) with RE2's default
options, as TF does: UTF-8 patterns over byte strings, leftmost-first matching, no backtracking (so no
catastrophic patterns).  Replacement follows ``RE2::GlobalReplace``/``RE2::Replace`` exactly: ``\\0``–``\\9``
name groups and ``\\\\`` is a backslash; a rewrite naming a group the pattern lacks leaves the input unchanged;
a malformed rewrite (a backslash before another character) stops the rewrite where it is, as in TF; after an
empty match the scan moves on by one UTF-8 character (one byte where the bytes are not valid UTF-8).
"""
from __future__ import annotations

import functools
import importlib
from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, choice, conformance, one_of, text
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.strings._text import attr_bytes, flat_strings, map_strings

CONFORMANCE_FAMILY = "strings"

try:
    _re2: Any = importlib.import_module("re2._re2")  # the C++ binding: RE2 objects, Match with spans
except ImportError:  # pragma: no cover - the strings extra is not installed
    _re2 = None

_MAX_RUNE = 0x10FFFF


@functools.lru_cache(maxsize=64)
def _compile(pattern: bytes) -> Any:
    """The compiled RE2 (or the RE2 object whose ``error()`` says why not), cached per pattern as TF does."""
    options = _re2.RE2.Options()
    options.log_errors = False
    return _re2.RE2(pattern, options)


def compiled(ctx: KernelContext, pattern: bytes) -> Any:
    """``pattern`` compiled, or TF's InvalidArgumentError naming it and RE2's reason."""
    if _re2 is None:
        ctx.unimplemented(f"{ctx.op_type} needs RE2: pip install 'tfops_py[strings]' (google-re2)")
    regex = _compile(pattern)
    if not regex.ok():
        ctx.invalid_argument(f"Invalid pattern: {_text(pattern)}, error: {_text(regex.error())}")
    return regex


def _text(value: bytes) -> str:
    return value.decode("utf-8", "backslashreplace")


def _max_group(rewrite: bytes) -> int:
    """``RE2::MaxSubmatch``: the highest ``\\N`` the rewrite names."""
    top, i = 0, 0
    while i < len(rewrite):
        if rewrite[i] == 0x5C:  # backslash
            i += 1
            if i < len(rewrite) and 0x30 <= rewrite[i] <= 0x39:
                top = max(top, rewrite[i] - 0x30)
        i += 1
    return top


def _rewrite(out: list[bytes], rewrite: bytes, text: bytes, spans: list[tuple[int, int]]) -> bool:
    """``RE2::Rewrite``: appends to ``out``; False (output so far kept) at a malformed escape."""
    start, i, n = 0, 0, len(rewrite)
    while i < n:
        if rewrite[i] != 0x5C:
            i += 1
            continue
        out.append(rewrite[start:i])
        c = rewrite[i + 1] if i + 1 < n else -1
        if 0x30 <= c <= 0x39:
            a, b = spans[c - 0x30]
            if a >= 0:
                out.append(text[a:b])
        elif c == 0x5C:
            out.append(b"\\")
        else:
            return False
        i += 2
        start = i
    out.append(rewrite[start:])
    return True


def _rune_length(text: bytes, p: int) -> int:
    """Bytes of the UTF-8 character at ``p``, or 1 where the bytes there are not a valid (non-overlong) one."""
    lead = text[p]
    if lead < 0xC0:
        return 1
    n, low, value = (2, 0x80, lead & 0x1F) if lead < 0xE0 else (3, 0x800, lead & 0x0F) if lead < 0xF0 else \
        (4, 0x10000, lead & 0x07) if lead < 0xF8 else (1, 0, 0)
    if n == 1 or p + n > len(text):
        return 1
    for b in text[p + 1:p + n]:
        if b & 0xC0 != 0x80:
            return 1
        value = (value << 6) | (b & 0x3F)
    return n if low <= value <= _MAX_RUNE else 1


def replace_all(regex: Any, rewrite: bytes, text: bytes) -> bytes:
    """``RE2::GlobalReplace`` of one string."""
    if _max_group(rewrite) > regex.NumberOfCapturingGroups():
        return text
    match, anchor = regex.Match, _re2.RE2.Anchor.UNANCHORED
    end = len(text)
    out: list[bytes] = []
    p, last_end, count = 0, -1, 0
    while p <= end:
        spans = match(anchor, text, p, end)
        a, b = spans[0]
        if a < 0:
            break
        if p < a:
            out.append(text[p:a])
        if a == b == last_end:  # no empty match right where the last match ended: step over one character
            if p < end:
                step = _rune_length(text, p)
                out.append(text[p:p + step])
                p += step
            else:
                p += 1
            continue
        _rewrite(out, rewrite, text, spans)
        p = last_end = b
        count += 1
    if count == 0:
        return text
    if p < end:
        out.append(text[p:])
    return b"".join(out)


def replace_first(regex: Any, rewrite: bytes, text: bytes) -> bytes:
    """``RE2::Replace`` of one string (unchanged when the rewrite is malformed)."""
    if _max_group(rewrite) > regex.NumberOfCapturingGroups():
        return text
    spans = regex.Match(_re2.RE2.Anchor.UNANCHORED, text, 0, len(text))
    a, b = spans[0]
    if a < 0:
        return text
    out = [text[:a]]
    if not _rewrite(out, rewrite, text, spans):
        return text
    out.append(text[b:])
    return b"".join(out)


def _replace(ctx: KernelContext, input: Any, pattern: bytes, rewrite: bytes, replace_global: bool) -> Any:
    regex = compiled(ctx, pattern)
    one = replace_all if replace_global else replace_first
    return map_strings(lambda s: one(regex, rewrite, s), input)


def _full_match(ctx: KernelContext, input: Any, pattern: bytes) -> Any:
    regex = compiled(ctx, pattern)
    match, anchor = regex.Match, _re2.RE2.Anchor.ANCHOR_BOTH
    items = flat_strings(input)
    found = np.fromiter((match(anchor, s, 0, len(s))[0][0] >= 0 for s in items), dtype=bool, count=len(items))
    return ctx.asarray(found.reshape(np.shape(input)), DataType.DT_BOOL)


def _scalar_arg(ctx: KernelContext, value: Any, what: str) -> bytes:
    if np.ndim(value) != 0:
        ctx.invalid_argument(f"{what} must be scalar, but received {format_shape(np.shape(value))}")
    return value[()]


@register_shape("RegexReplace")
def _regex_replace_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    ctx.with_rank(ctx.input(2), 0)
    return [ctx.input(0)]


@register_kernel("RegexReplace", host=True)
def _regex_replace(ctx: KernelContext, input: Any, pattern: Any, rewrite: Any) -> Any:
    pattern_bytes = _scalar_arg(ctx, pattern, "Pattern")
    rewrite_bytes = _scalar_arg(ctx, rewrite, "Rewrite")
    return _replace(ctx, input, pattern_bytes, rewrite_bytes, bool(ctx.attrs["replace_global"]))


register_shape("StaticRegexReplace", "StaticRegexFullMatch")(unchanged_shape)


@register_kernel("StaticRegexReplace", host=True)
def _static_regex_replace(ctx: KernelContext, input: Any) -> Any:
    return _replace(ctx, input, attr_bytes(ctx, "pattern"), attr_bytes(ctx, "rewrite"),
                    bool(ctx.attrs["replace_global"]))


@register_shape("RegexFullMatch")
def _regex_full_match_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    return [ctx.input(0)]


@register_kernel("RegexFullMatch", host=True)
def _regex_full_match(ctx: KernelContext, input: Any, pattern: Any) -> Any:
    return _full_match(ctx, input, _scalar_arg(ctx, pattern, "Pattern"))


@register_kernel("StaticRegexFullMatch", host=True)
def _static_regex_full_match(ctx: KernelContext, input: Any) -> Any:
    return _full_match(ctx, input, attr_bytes(ctx, "pattern"))


_SHAPES = [{"input": ()}, {"input": (5,)}, {"input": (2, 0)}, {"input": (2, 3)}]
_PATTERNS = (b"[aeiou]", b"\\s+", b"(\\w+) (\\w+)", b"x*", b"[[:punct:]]", b"\\pL+", b"^", b"$")
_REWRITES = (b"", b"-", b"<\\0>", b"\\2 \\1", b"\\\\")
conformance("RegexReplace", input=text(invalid=True), pattern=choice(*_PATTERNS), rewrite=choice(*_REWRITES),
            replace_global=BOOL, shapes=_SHAPES)
conformance("StaticRegexReplace", input=text(invalid=True),
            pattern=one_of(*(p.decode() for p in _PATTERNS)), rewrite=one_of(*(r.decode() for r in _REWRITES)),
            replace_global=BOOL, shapes=_SHAPES)
conformance("RegexFullMatch", input=text(max_words=2), pattern=choice(b".*", b"[a-z]+", b"\\w+(\\s\\w+)*", b"",
                                                                    b"(?i)the.*", b"\\d+"), shapes=_SHAPES)
conformance("StaticRegexFullMatch", input=text(max_words=2),
            pattern=one_of(".*", "[a-z]+", "\\w+(\\s\\w+)*", "", "(?i)the.*", "\\d+"), shapes=_SHAPES)
