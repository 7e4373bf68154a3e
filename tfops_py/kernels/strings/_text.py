"""Helpers for string kernels: object arrays of ``bytes`` to flat lists and back."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def flat_strings(x: Any) -> list[bytes]:
    """The elements of a string tensor in row-major order."""
    return np.asarray(x, dtype=object).reshape(-1).tolist()


def string_array(items: Sequence[Any], shape: Sequence[int]) -> np.ndarray:
    """An object array of ``shape`` holding ``items`` (bytes) in row-major order."""
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(tuple(shape))


def map_strings(fn: Callable[[bytes], Any], x: Any) -> np.ndarray:
    """``fn`` applied to every element of a string tensor, as a string tensor of the same shape."""
    return string_array(list(map(fn, flat_strings(x))), np.shape(x))


def utf8_char_counts(items: Sequence[bytes]) -> np.ndarray:
    """Per string, the number of UTF-8 characters as TF counts them: bytes that are not continuation bytes
    (``10xxxxxx``), so malformed input counts each stray lead byte."""
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    data = np.frombuffer(b"".join(items) + b"\0", dtype=np.uint8)  # the sentinel keeps every start in range
    continuation = (data & 0xC0) == 0x80
    starts = np.cumsum(lengths) - lengths
    within = np.add.reduceat(continuation, starts, dtype=np.int64) if len(items) else lengths
    return lengths - np.where(lengths > 0, within, 0)  # reduceat gives the element itself for empty segments


def attr_bytes(ctx: Any, name: str) -> bytes:
    """A string attr as the bytes TF's kernel sees (attrs are held as ``str`` with surrogate escapes)."""
    return str(ctx.attrs[name]).encode("utf-8", "surrogateescape")
