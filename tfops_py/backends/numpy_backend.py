"""The NumPy backend: the default, and the reference every other backend is tested against."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.backends.base import Backend
from tfops_py.framework.dtypes import DataType


class NumpyBackend(Backend):
    name = "numpy"

    def __init__(self) -> None:
        super().__init__(np)

    def dtype(self, dt: DataType, ctx: Any = None) -> Any:
        return dt.numpy_dtype

    def asarray(self, value: Any, dt: DataType, ctx: Any = None) -> Any:
        return np.asarray(value, dtype=dt.numpy_dtype)

    def from_numpy(self, value: np.ndarray, ctx: Any = None) -> Any:
        return value

    def bitcast(self, x: Any, dt: DataType, shape: tuple[int, ...], ctx: Any = None) -> Any:
        return np.ascontiguousarray(x).view(dt.numpy_dtype).reshape(shape)
