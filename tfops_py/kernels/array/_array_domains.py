"""Conformance input domains of the array family that the shared ones (``tfops_py.conformance``) lack.

Records only: nothing is drawn at import.
"""
from __future__ import annotations

import numpy as np

from tfops_py.conformance import Domain, Draw
from tfops_py.framework.dtypes import DataType


class NdIndices(Domain):
    """Index tuples into input ``source``: an integer array of the pattern shape whose last dimension is the
    index depth; column ``k`` lies in ``[0, shape(source)[k])``.  ``bad``: about one tuple in eight has a
    column one past either end (TF's range errors)."""

    def __init__(self, source: str, bad: bool = False):
        self.source, self.bad = source, bad
        self.depends = (source,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer and dtype.numpy_dtype.kind == "i"

    def draw(self, d: Draw) -> np.ndarray:
        shape = d.shape or ()
        dims = np.shape(d.inputs[self.source])
        depth = shape[-1] if shape else 0
        sizes = np.array([dims[k] if k < len(dims) else 1 for k in range(depth)], np.int64)
        u = d.rng.random(shape) if shape else np.zeros(())
        out = np.floor(u * np.maximum(sizes, 1)).astype(np.int64) if depth else np.zeros(shape, np.int64)
        if self.bad and out.size:
            flat = out.reshape(-1, depth)
            pick = d.rng.random(flat.shape[0]) < 0.125
            col = d.rng.integers(0, depth, flat.shape[0])
            high = d.rng.random(flat.shape[0]) < 0.5
            rows = np.flatnonzero(pick)
            flat[rows, col[rows]] = np.where(high[rows], sizes[col[rows]], -1)
        return out.astype(d.dtype.numpy_dtype)


def nd_indices(source: str, bad: bool = False) -> NdIndices:
    """Index tuples into ``source`` (the pattern shape's last dimension is their depth)."""
    return NdIndices(source, bad)


class RowIndices(Domain):
    """Indices into dimension ``dim`` of input ``source``, of the pattern shape; ``bad``: about one in eight
    is one past either end."""

    def __init__(self, source: str, dim: int = 0, bad: bool = False):
        self.source, self.dim, self.bad = source, dim, bad
        self.depends = (source,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer and dtype.numpy_dtype.kind == "i"

    def draw(self, d: Draw) -> np.ndarray:
        dims = np.shape(d.inputs[self.source])
        size = dims[self.dim] if len(dims) > abs(self.dim) else 0
        shape = d.shape or ()
        out = d.rng.integers(0, max(size, 1), shape) if size else np.zeros(shape, np.int64)
        if self.bad and out.size:
            flat = out.reshape(-1)
            rows = np.flatnonzero(d.rng.random(flat.size) < 0.125)
            flat[rows] = np.where(d.rng.random(rows.size) < 0.5, size, -1)
        return out.astype(d.dtype.numpy_dtype)


def row_indices(source: str, dim: int = 0, bad: bool = False) -> RowIndices:
    return RowIndices(source, dim, bad)
