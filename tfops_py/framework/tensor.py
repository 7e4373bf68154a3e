"""Literal values -> NumPy arrays, following TF's ``Input::Initializer`` typing rules.

Python ``float`` is DT_FLOAT, ``int`` DT_INT32 (DT_INT64 when it does not fit),
``bool`` DT_BOOL, ``str``/``bytes`` DT_STRING; NumPy arrays and scalars keep their
dtype.  Nested lists stack along a new leading axis and must agree in type and
shape; ``[]`` is a DT_FLOAT tensor of shape [0].
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.dtypes import DataType, as_datatype

_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def _scalar(v: Any) -> np.ndarray:
    if isinstance(v, (bool, np.bool_)):
        return np.asarray(v, dtype=np.bool_)
    if isinstance(v, (str, bytes)):  # before np.generic: np.str_ and np.bytes_ are both
        return string_array(np.asarray(v, dtype=object))
    if isinstance(v, np.generic):
        arr = np.asarray(v)
        _check_dtype(arr)
        return arr
    if isinstance(v, int):
        if _INT32_MIN <= v <= _INT32_MAX:
            return np.asarray(v, dtype=np.int32)
        if -(2**63) <= v < 2**63:
            return np.asarray(v, dtype=np.int64)
        raise InvalidArgumentError(f"integer literal {v} does not fit in int64")
    if isinstance(v, float):
        return np.asarray(v, dtype=np.float32)
    if isinstance(v, complex):
        raise InvalidArgumentError("complex literals are not supported as Input; pass a NumPy array")
    raise InvalidArgumentError(f"cannot convert {type(v).__name__} value {v!r} to a tensor")


def string_array(value: np.ndarray) -> np.ndarray:
    """The canonical string tensor: an object array of ``bytes``, from ``S``/``U``/StringDType arrays or object
    arrays of ``str``/``bytes`` (``str`` is UTF-8 encoded; NumPy's ``S`` dtype drops trailing NUL bytes)."""
    if value.dtype.kind == "S":
        return value.astype(object)
    flat = value.reshape(-1).tolist()
    if value.dtype.kind == "O" and set(map(type, flat)) <= {bytes}:
        return value
    items = []
    for v in flat:
        if isinstance(v, str):
            items.append(v.encode("utf-8", "surrogateescape"))
        elif isinstance(v, bytes):
            items.append(bytes(v))
        else:
            raise InvalidArgumentError(f"cannot convert {type(v).__name__} element {v!r} to a string")
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out.reshape(value.shape)


def _check_dtype(arr: np.ndarray) -> None:
    try:
        as_datatype(arr.dtype)
    except TypeError:
        raise InvalidArgumentError(f"NumPy dtype {arr.dtype} has no TensorFlow DataType") from None


def _from_list(v: list | tuple) -> np.ndarray:
    if len(v) == 0:
        return np.zeros((0,), dtype=np.float32)
    if not any(isinstance(x, (list, tuple, np.ndarray)) for x in v):
        kinds = {_leaf_kind(x) for x in v}
        if len(kinds) > 1:
            raise InvalidArgumentError("Initializer list components should all have the same type")
        return np.stack([_scalar(x) for x in v]) if "generic" in kinds or "str" in kinds else \
            _homogeneous(v, kinds.pop())
    parts = [literal_to_array(x) for x in v]
    first = parts[0]
    for p in parts[1:]:
        if p.dtype != first.dtype:
            raise InvalidArgumentError("Initializer list components should all have the same type")
        if p.shape != first.shape:
            raise InvalidArgumentError("Initializer list components should all have the same shape")
    return np.stack(parts)


def _leaf_kind(x: Any) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, np.generic):
        return "generic"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    if isinstance(x, (str, bytes)):
        return "str"
    return type(x).__name__


def _homogeneous(v: list | tuple, kind: str) -> np.ndarray:
    if kind == "float":
        return np.asarray(v, dtype=np.float32)
    if kind == "bool":
        return np.asarray(v, dtype=np.bool_)
    if kind == "int":
        arr = np.asarray(v)
        if arr.dtype == object:
            raise InvalidArgumentError("integer literal does not fit in int64")
        if arr.min() >= _INT32_MIN and arr.max() <= _INT32_MAX:
            return arr.astype(np.int32)
        return arr.astype(np.int64)
    return np.stack([_scalar(x) for x in v])


def literal_to_array(value: Any) -> np.ndarray:
    """A NumPy array for a literal Input/feed value, typed as TF types C++ literals."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "USTO":
            return string_array(value)
        _check_dtype(value)
        return value
    if isinstance(value, (list, tuple)):
        return _from_list(value)
    if hasattr(value, "__array__") and not isinstance(value, (str, bytes)):
        return literal_to_array(np.asarray(value))
    return _scalar(value)


def datatype_of(arr: np.ndarray) -> DataType:
    return as_datatype(arr.dtype)
