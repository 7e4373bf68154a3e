"""TensorFlow DataType enum (values from ``types.proto``) and its NumPy mapping."""
from __future__ import annotations

import enum

import ml_dtypes
import numpy as np


class DataType(enum.IntEnum):
    """``tensorflow::DataType``; reference types are the base value plus 100."""

    DT_INVALID = 0
    DT_FLOAT = 1
    DT_DOUBLE = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 5
    DT_INT8 = 6
    DT_STRING = 7
    DT_COMPLEX64 = 8
    DT_INT64 = 9
    DT_BOOL = 10
    DT_QINT8 = 11
    DT_QUINT8 = 12
    DT_QINT32 = 13
    DT_BFLOAT16 = 14
    DT_QINT16 = 15
    DT_QUINT16 = 16
    DT_UINT16 = 17
    DT_COMPLEX128 = 18
    DT_HALF = 19
    DT_RESOURCE = 20
    DT_VARIANT = 21
    DT_UINT32 = 22
    DT_UINT64 = 23
    DT_FLOAT8_E5M2 = 24
    DT_FLOAT8_E4M3FN = 25
    DT_FLOAT8_E4M3FNUZ = 26
    DT_FLOAT8_E4M3B11FNUZ = 27
    DT_FLOAT8_E5M2FNUZ = 28
    DT_INT4 = 29
    DT_UINT4 = 30
    DT_INT2 = 31
    DT_UINT2 = 32

    @property
    def short_name(self) -> str:
        """TF's DataTypeString spelling: ``float``, ``int32``, ``bfloat16``."""
        return _SHORT_NAMES.get(self, self.name[3:].lower())

    def __str__(self) -> str:
        return self.name

    @property
    def is_floating(self) -> bool:
        return self in _FLOATING

    @property
    def is_integer(self) -> bool:
        return self in _INTEGER

    @property
    def is_complex(self) -> bool:
        return self in (DataType.DT_COMPLEX64, DataType.DT_COMPLEX128)

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype; raises ``KeyError`` for types without one (resource, variant, quantized)."""
        return _TO_NUMPY[self]


_SHORT_NAMES = {DataType.DT_FLOAT: "float", DataType.DT_DOUBLE: "double", DataType.DT_HALF: "half"}
_FLOATING = frozenset({DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE})
_INTEGER = frozenset({DataType.DT_INT8, DataType.DT_INT16, DataType.DT_INT32, DataType.DT_INT64,
                      DataType.DT_UINT8, DataType.DT_UINT16, DataType.DT_UINT32, DataType.DT_UINT64})

_TO_NUMPY: dict[DataType, np.dtype] = {
    DataType.DT_FLOAT: np.dtype(np.float32),
    DataType.DT_DOUBLE: np.dtype(np.float64),
    DataType.DT_HALF: np.dtype(np.float16),
    DataType.DT_BFLOAT16: np.dtype(ml_dtypes.bfloat16),
    DataType.DT_INT8: np.dtype(np.int8),
    DataType.DT_INT16: np.dtype(np.int16),
    DataType.DT_INT32: np.dtype(np.int32),
    DataType.DT_INT64: np.dtype(np.int64),
    DataType.DT_UINT8: np.dtype(np.uint8),
    DataType.DT_UINT16: np.dtype(np.uint16),
    DataType.DT_UINT32: np.dtype(np.uint32),
    DataType.DT_UINT64: np.dtype(np.uint64),
    DataType.DT_BOOL: np.dtype(np.bool_),
    DataType.DT_COMPLEX64: np.dtype(np.complex64),
    DataType.DT_COMPLEX128: np.dtype(np.complex128),
    DataType.DT_STRING: np.dtype(object),
    DataType.DT_FLOAT8_E5M2: np.dtype(ml_dtypes.float8_e5m2),
    DataType.DT_FLOAT8_E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    DataType.DT_FLOAT8_E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    DataType.DT_FLOAT8_E4M3B11FNUZ: np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    DataType.DT_FLOAT8_E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    DataType.DT_INT4: np.dtype(ml_dtypes.int4),
    DataType.DT_UINT4: np.dtype(ml_dtypes.uint4),
    DataType.DT_INT2: np.dtype(ml_dtypes.int2),
    DataType.DT_UINT2: np.dtype(ml_dtypes.uint2),
}
_FROM_NUMPY: dict[np.dtype, DataType] = {v: k for k, v in _TO_NUMPY.items()}
_FROM_NUMPY[np.dtype("U")] = DataType.DT_STRING
_FROM_NUMPY[np.dtype("S")] = DataType.DT_STRING


def as_datatype(value: object) -> DataType:
    """DataType from a DataType, its enum int, its name (``"DT_FLOAT"``/``"float32"``) or a NumPy dtype."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        if value.startswith("DT_"):
            return DataType[value]
        if value in ("float", "double", "half"):
            return {"float": DataType.DT_FLOAT, "double": DataType.DT_DOUBLE, "half": DataType.DT_HALF}[value]
    if isinstance(value, int) and not isinstance(value, bool):
        return DataType(value)
    dt = np.dtype(value)  # type: ignore[arg-type]
    if dt.kind in "US":
        return DataType.DT_STRING
    try:
        return _FROM_NUMPY[dt]
    except KeyError:
        raise TypeError(f"no TensorFlow DataType for NumPy dtype {dt}") from None


def from_numpy(dtype: np.dtype) -> DataType:
    return as_datatype(dtype)


# Module-level DT_* constants, as in the C++ namespace; spelled out so type checkers see them
# (a test keeps the list equal to the enum).
DT_INVALID = DataType.DT_INVALID
DT_FLOAT = DataType.DT_FLOAT
DT_DOUBLE = DataType.DT_DOUBLE
DT_INT32 = DataType.DT_INT32
DT_UINT8 = DataType.DT_UINT8
DT_INT16 = DataType.DT_INT16
DT_INT8 = DataType.DT_INT8
DT_STRING = DataType.DT_STRING
DT_COMPLEX64 = DataType.DT_COMPLEX64
DT_INT64 = DataType.DT_INT64
DT_BOOL = DataType.DT_BOOL
DT_QINT8 = DataType.DT_QINT8
DT_QUINT8 = DataType.DT_QUINT8
DT_QINT32 = DataType.DT_QINT32
DT_BFLOAT16 = DataType.DT_BFLOAT16
DT_QINT16 = DataType.DT_QINT16
DT_QUINT16 = DataType.DT_QUINT16
DT_UINT16 = DataType.DT_UINT16
DT_COMPLEX128 = DataType.DT_COMPLEX128
DT_HALF = DataType.DT_HALF
DT_RESOURCE = DataType.DT_RESOURCE
DT_VARIANT = DataType.DT_VARIANT
DT_UINT32 = DataType.DT_UINT32
DT_UINT64 = DataType.DT_UINT64
DT_FLOAT8_E5M2 = DataType.DT_FLOAT8_E5M2
DT_FLOAT8_E4M3FN = DataType.DT_FLOAT8_E4M3FN
DT_FLOAT8_E4M3FNUZ = DataType.DT_FLOAT8_E4M3FNUZ
DT_FLOAT8_E4M3B11FNUZ = DataType.DT_FLOAT8_E4M3B11FNUZ
DT_FLOAT8_E5M2FNUZ = DataType.DT_FLOAT8_E5M2FNUZ
DT_INT4 = DataType.DT_INT4
DT_UINT4 = DataType.DT_UINT4
DT_INT2 = DataType.DT_INT2
DT_UINT2 = DataType.DT_UINT2

__all__ = ["DataType", "as_datatype", "from_numpy",
           "DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8", "DT_INT16", "DT_INT8", "DT_STRING",
           "DT_COMPLEX64", "DT_INT64", "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
           "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF", "DT_RESOURCE", "DT_VARIANT",
           "DT_UINT32", "DT_UINT64", "DT_FLOAT8_E5M2", "DT_FLOAT8_E4M3FN", "DT_FLOAT8_E4M3FNUZ",
           "DT_FLOAT8_E4M3B11FNUZ", "DT_FLOAT8_E5M2FNUZ", "DT_INT4", "DT_UINT4", "DT_INT2", "DT_UINT2"]
