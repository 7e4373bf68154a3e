"""``Tensor::SummarizeValue`` (the v1 form): how Assert, Print and error messages show a tensor's values.

At most ``max_entries`` values (all when negative), nested in ``[...]`` per dimension beyond the last, with
``...`` where values were left out.  Numbers print as TF's ``StrCat`` does: the shortest of ``%.6g``/``%.9g``
(float) or ``%.15g``/``%.17g`` (double) that reads back exactly; half, bfloat16 and float8 print as floats,
booleans as 0/1, strings C-escaped (UTF-8 kept), and types TF does not print (complex …) as ``?``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DataType, as_datatype

_FLOAT_LIKE = frozenset({DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_FLOAT8_E5M2,
                         DataType.DT_FLOAT8_E4M3FN, DataType.DT_FLOAT8_E4M3FNUZ, DataType.DT_FLOAT8_E4M3B11FNUZ,
                         DataType.DT_FLOAT8_E5M2FNUZ})
_INTEGER_LIKE = frozenset({DataType.DT_INT8, DataType.DT_UINT8, DataType.DT_INT16, DataType.DT_UINT16,
                           DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_INT64, DataType.DT_UINT64,
                           DataType.DT_QINT8, DataType.DT_QUINT8, DataType.DT_QINT32, DataType.DT_INT4,
                           DataType.DT_UINT4, DataType.DT_BOOL})
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"', ord("'"): "\\'", ord("\\"): "\\\\"}


def _shortest(value: float, digits: tuple[int, int], exact: Any) -> str:
    if np.isnan(value):
        return "-nan" if np.signbit(value) else "nan"
    if np.isinf(value):
        return "-inf" if value < 0 else "inf"
    text = f"%.{digits[0]}g" % value
    return text if exact(text) == value else f"%.{digits[1]}g" % value


def format_float(value: float) -> str:
    """A float as ``StrCat(float)`` prints it."""
    v = float(np.float32(value))
    return _shortest(v, (6, 9), lambda s: float(np.float32(s)))


def format_double(value: float) -> str:
    """A double as ``StrCat(double)`` prints it."""
    return _shortest(float(value), (15, 17), float)


def c_escape(value: bytes | str) -> str:
    """``absl::Utf8SafeCEscape``: control and quote characters escaped, bytes >= 0x80 kept."""
    raw = value.encode() if isinstance(value, str) else bytes(value)
    out = bytearray()
    for b in raw:
        if b in _ESCAPES:
            out += _ESCAPES[b].encode()
        elif b < 0x20 or b == 0x7F:
            out += f"\\{b:03o}".encode()
        else:
            out.append(b)
    return out.decode("utf-8", errors="backslashreplace")


def _element_formatter(dt: DataType) -> Any:
    if dt == DataType.DT_DOUBLE:
        return format_double
    if dt in _FLOAT_LIKE:
        return format_float
    if dt in _INTEGER_LIKE:
        return lambda v: str(int(v))
    if dt == DataType.DT_STRING:
        return c_escape
    return None


def summarize_value(value: Any, max_entries: int, dtype: DataType | None = None) -> str:
    """``value.SummarizeValue(max_entries)`` of a host array (``dtype`` when NumPy's does not name it)."""
    arr = np.asarray(value)
    dt = dtype if dtype is not None else (DataType.DT_STRING if arr.dtype.kind in "OSU" else as_datatype(arr.dtype))
    count = arr.size
    if max_entries < 0:
        max_entries = count
    limit = min(max_entries, count)
    fmt = _element_formatter(dt)
    flat = arr.reshape(-1)[:limit]
    if fmt is None:  # types TF does not print
        return " ".join("?" for _ in range(limit)) + ("..." if max_entries < count else "")
    items = [fmt(v) for v in flat]
    if arr.ndim == 0:
        return " ".join(items) + ("..." if count > limit else "")
    pieces: list[str] = []
    _print_dim(0, arr.shape, limit, items, [0], pieces)
    return "".join(pieces) + ("..." if count > limit else "")


def _print_dim(dim: int, shape: tuple[int, ...], limit: int, items: list[str], at: list[int], out: list[str]) -> None:
    """TF's ``PrintOneDim``: one nesting level per dimension, stopping after ``limit`` values."""
    if at[0] >= limit:
        return
    if dim == len(shape) - 1:
        for i in range(shape[dim]):
            if at[0] >= limit:
                if dim != 0:
                    out.append("...")
                return
            if i > 0:
                out.append(" ")
            out.append(items[at[0]])
            at[0] += 1
        return
    for _ in range(shape[dim]):
        opened = at[0] < limit
        if opened:
            out.append("[")
        _print_dim(dim + 1, shape, limit, items, at, out)
        if at[0] < limit or opened:
            out.append("]")
