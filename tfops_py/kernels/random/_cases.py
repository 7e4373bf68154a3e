"""Input domains of the random family's conformance cases: seeds, keys, counters, algorithm ids.

The harness's generic domains draw values of the case's pattern shape; a seed is always a pair, a key
one uint64, a counter two, so these draw fixed-length vectors of random bits instead.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tfops_py.conformance.domains import Domain, Draw
from tfops_py.framework.dtypes import DataType


class RandomBits(Domain):
    """``length`` random values over the integer dtype's whole range (int32/int64 seeds, uint64 keys)."""

    patterned = False

    def __init__(self, length: int, dtype: DataType | None = None):
        self.length, self.dtype = length, dtype

    def fixed_dtype(self) -> DataType | None:
        return self.dtype

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer and (self.dtype is None or dtype == self.dtype)

    def draw(self, d: Draw) -> np.ndarray:
        info = np.iinfo(d.dtype.numpy_dtype)
        return d.rng.integers(info.min, info.max, self.length, endpoint=True, dtype=d.dtype.numpy_dtype)


class OneOfValues(Domain):
    """One of a few scalar values (an algorithm id), drawn at random."""

    patterned = False

    def __init__(self, choices: Sequence[int], dtype: DataType):
        self.choices, self.dtype = tuple(choices), dtype

    def fixed_dtype(self) -> DataType | None:
        return self.dtype

    def accepts(self, dtype: DataType) -> bool:
        return dtype == self.dtype

    def draw(self, d: Draw) -> np.ndarray:
        return np.asarray(self.choices[int(d.rng.integers(len(self.choices)))], d.dtype.numpy_dtype)


def seed_pair() -> RandomBits:
    """A V1 ``seed``: two random int32/int64 values."""
    return RandomBits(2)


def key() -> RandomBits:
    return RandomBits(1, DataType.DT_UINT64)


def counter() -> RandomBits:
    return RandomBits(2, DataType.DT_UINT64)


def algorithm() -> OneOfValues:
    """Philox (1) or auto-select (3, Philox on CPU)."""
    return OneOfValues((1, 3), DataType.DT_INT32)
