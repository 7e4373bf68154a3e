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


class SpaceBlock(Domain):
    """A ``block_shape`` for SpaceToBatchND/BatchToSpaceND over input ``source``: 0..3 block dims (fewer than
    its rank) of sizes 1..3; ``divides_batch``: their product divides the batch (BatchToSpaceND)."""

    patterned = False

    def __init__(self, source: str, divides_batch: bool = False):
        self.source, self.divides_batch = source, divides_batch
        self.depends = (source,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DataType.DT_INT32, DataType.DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        shape = np.shape(d.inputs[self.source])
        m = int(d.rng.integers(0, min(3, max(len(shape) - 1, 0)) + 1))
        block = d.rng.integers(1, 4, m)
        if self.divides_batch and m:
            while shape[0] % int(np.prod(block)):
                block[int(np.argmax(block))] -= 1  # ends at all ones, which divides anything
        return block.astype(d.dtype.numpy_dtype)


def space_block(source: str, divides_batch: bool = False) -> SpaceBlock:
    return SpaceBlock(source, divides_batch)


class SpacePads(Domain):
    """``paddings`` (or ``crops``) of shape [M, 2] for the drawn ``block`` over input ``source``: paddings make
    each padded dim a multiple of its block, crops keep each cropped dim >= 0."""

    patterned = False

    def __init__(self, source: str, block: str, crops: bool = False):
        self.source, self.block, self.crops = source, block, crops
        self.depends = (source, block)

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DataType.DT_INT32, DataType.DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        shape = np.shape(d.inputs[self.source])
        block = np.asarray(d.inputs[self.block]).astype(np.int64).reshape(-1)
        out = np.zeros((block.size, 2), np.int64)
        for i, b in enumerate(block.tolist()):  # over the few block dims
            n = shape[i + 1]
            total = n * b if self.crops else (-n) % b + b * int(d.rng.integers(0, 2))
            total = int(d.rng.integers(0, total + 1)) if self.crops else total
            out[i, 0] = int(d.rng.integers(0, total + 1))
            out[i, 1] = total - out[i, 0]
        return out.astype(d.dtype.numpy_dtype)


def space_pads(source: str, block: str, crops: bool = False) -> SpacePads:
    return SpacePads(source, block, crops)


class _FromInput(Domain):
    """A domain drawn from input ``source`` (not from the case's shape pattern)."""

    patterned = False

    def __init__(self, source: str):
        self.source = source
        self.depends = (source,)


class _IntsFromInput(_FromInput):
    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DataType.DT_INT32, DataType.DT_INT64)


class AxisMask(_FromInput):
    """A bool vector with one random entry per dimension of input ``source`` (Reverse's ``dims``)."""

    def accepts(self, dtype: DataType) -> bool:
        return dtype == DataType.DT_BOOL

    def draw(self, d: Draw) -> np.ndarray:
        return d.rng.integers(0, 2, np.ndim(d.inputs[self.source])).astype(bool)


def axis_mask(source: str) -> AxisMask:
    return AxisMask(source)


class Permutation(_IntsFromInput):
    """A random permutation of the dimensions of input ``source``, some entries negative (TF counts them
    from the end)."""

    def draw(self, d: Draw) -> np.ndarray:
        rank = np.ndim(d.inputs[self.source])
        perm = d.rng.permutation(rank)
        return np.where(d.rng.random(rank) < 0.25, perm - rank, perm).astype(d.dtype.numpy_dtype)


def permutation(source: str) -> Permutation:
    return Permutation(source)


class LengthsAlong(_IntsFromInput):
    """One length per entry of dimension attr ``batch_dim`` of input ``source``, each in
    ``[0, shape[seq_dim]]`` (ReverseSequence's ``seq_lengths``)."""

    def draw(self, d: Draw) -> np.ndarray:
        shape = np.shape(d.inputs[self.source])
        n, s = shape[d.attrs["batch_dim"]], shape[d.attrs["seq_dim"]]
        return d.rng.integers(0, s + 1, n).astype(d.dtype.numpy_dtype)


def lengths_along(source: str) -> LengthsAlong:
    return LengthsAlong(source)


class ShiftsFor(_IntsFromInput):
    """Integers in [-7, 7] of the shape of input ``source`` (Roll's ``shift``, shaped as its ``axis``)."""

    def draw(self, d: Draw) -> np.ndarray:
        return d.rng.integers(-7, 8, np.shape(d.inputs[self.source])).astype(d.dtype.numpy_dtype)


def shifts_for(axes: str) -> ShiftsFor:
    return ShiftsFor(axes)


class PartitionIds(Domain):
    """int32 ids in ``[0, num_partitions)`` of the pattern shape (DynamicPartition's ``partitions``)."""

    def accepts(self, dtype: DataType) -> bool:
        return dtype == DataType.DT_INT32

    def fixed_dtype(self) -> DataType | None:
        return DataType.DT_INT32

    def draw(self, d: Draw) -> np.ndarray:
        n = max(int(d.attrs["num_partitions"]), 1)
        return d.rng.integers(0, n, d.shape or ()).astype(np.int32)


def partition_ids() -> PartitionIds:
    return PartitionIds()
