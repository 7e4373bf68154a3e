"""Tensor slices (TF's ``TensorSlice``) and the keys under which a checkpoint stores them.

A slice is one ``(start, length)`` extent per dimension, length ``-1`` meaning the
whole dimension.  Ops spell it as ``shape_and_slice`` (``"10 20 0,5:-"``: full shape
10x20, rows 0..4, every column; ``""`` for the whole tensor).  A partitioned
variable's parts are stored under ``EncodeTensorNameSlice(name, slice)``, TF's
``OrderedCode`` encoding of (0, name, rank, start/length per dim).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tfops_py.errors import InvalidArgumentError

FULL = -1  # TensorSlice::kFullExtent
MAX_RANK = 254


class TensorSlice:
    """Per-dimension (start, length); length -1 is the full extent."""

    __slots__ = ("starts", "lengths")

    def __init__(self, starts: Sequence[int], lengths: Sequence[int]):
        self.starts = tuple(int(s) for s in starts)
        self.lengths = tuple(int(n) for n in lengths)

    @classmethod
    def full(cls, rank: int) -> TensorSlice:
        return cls([0] * rank, [FULL] * rank)

    @classmethod
    def parse(cls, spec: str) -> TensorSlice:
        """``"-:0,5"`` -> TensorSlice; TF's errors for a malformed spec."""
        starts, lengths = [], []
        for item in spec.split(":"):
            if item == "-":
                starts.append(0)
                lengths.append(FULL)
                continue
            parts = item.split(",")
            try:
                if len(parts) != 2:
                    raise ValueError
                start, length = int(parts[0]), int(parts[1])
            except ValueError:
                raise InvalidArgumentError(f"Expected a pair of numbers or '-' but got '{item}': string = "
                                           f"{spec}") from None
            if start < 0 or length <= 0:
                raise InvalidArgumentError(f"Expected non-negative start and positive length but got start = "
                                           f"{start}, length = {length}: string = {spec}")
            starts.append(start)
            lengths.append(length)
        if len(starts) > MAX_RANK:
            raise InvalidArgumentError(f"slice spec has rank {len(starts)}, more than {MAX_RANK}: {spec[:100]}")
        return cls(starts, lengths)

    @classmethod
    def from_proto(cls, proto: Any) -> TensorSlice:
        if len(proto.extent) > MAX_RANK:
            raise InvalidArgumentError(f"slice has rank {len(proto.extent)}, more than {MAX_RANK}")
        starts, lengths = [], []
        for e in proto.extent:
            has = e.WhichOneof("has_length_hack") is not None
            if e.start < 0 or (has and e.length < 0):
                raise InvalidArgumentError(f"slice extent has a negative start or length ({e.start}, {e.length})")
            starts.append(e.start if has else 0)
            lengths.append(e.length if has else FULL)
        return cls(starts, lengths)

    def to_proto(self, out: Any) -> None:
        out.SetInParent()
        for start, length in zip(self.starts, self.lengths):
            e = out.extent.add()
            if length != FULL:
                e.start = start
                e.length = length

    def dims(self) -> int:
        return len(self.starts)

    def is_full(self) -> bool:
        return all(n == FULL for n in self.lengths)

    def bounds(self, shape: Sequence[int]) -> list[tuple[int, int]]:
        """(start, stop) per dim within ``shape``."""
        return [(0, d) if n == FULL else (s, s + n) for s, n, d in zip(self.starts, self.lengths, shape)]

    def slice_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """The shape this slice takes out of a tensor of ``shape`` (TF's SliceTensorShape)."""
        if len(shape) != self.dims():
            raise InvalidArgumentError(f"Mismatching ranks: shape = {list(shape)}, slice = {self}")
        for (_start, stop), d in zip(self.bounds(shape), shape):
            if stop > d:
                raise InvalidArgumentError(f"Extent in dimension {len(shape)} out of bounds: shape = "
                                           f"{list(shape)}, slice = {self}")
        return tuple(stop - start for start, stop in self.bounds(shape))

    def covers_all_of(self, shape: Sequence[int]) -> bool:
        """True when this slice is all of a tensor of ``shape`` (TF's IsFullSlice)."""
        return all(n == FULL or (s == 0 and n == d) for s, n, d in zip(self.starts, self.lengths, shape))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorSlice) and (self.starts, self.lengths) == (other.starts, other.lengths)

    def __hash__(self) -> int:
        return hash((self.starts, self.lengths))

    def __str__(self) -> str:
        return ":".join("-" if n == FULL else f"{s},{n}" for s, n in zip(self.starts, self.lengths))

    __repr__ = __str__


def parse_shape_and_slice(spec: str) -> tuple[tuple[int, ...], TensorSlice, tuple[int, ...]]:
    """(full shape, slice, slice shape) of a non-empty ``shape_and_slice`` string."""
    splits = spec.split(" ")
    if len(splits) < 2:
        raise InvalidArgumentError(f"Need least two elements in shape_and_slice specification: {spec}")
    slc = TensorSlice.parse(splits[-1])
    shape = []
    for s in splits[:-1]:
        try:
            d = int(s)
        except ValueError:
            raise InvalidArgumentError(f"Non numerical dimension in shape_and_slice: {spec}") from None
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0 in shape_and_slice: {spec}")
        shape.append(d)
    return tuple(shape), slc, slc.slice_shape(shape)


# ----------------------------------------------------------------------------- OrderedCode
def _num_increasing(value: int) -> bytes:
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


def _escape(value: bytes) -> bytes:
    out = bytearray()
    for b in value:
        out += b"\x00\xff" if b == 0 else b"\xff\x00" if b == 0xFF else bytes([b])
    return bytes(out)


def _signed_increasing(value: int) -> bytes:
    x = ~value if value < 0 else value
    length = x.bit_length() // 7 + 1
    raw = bytearray(value.to_bytes(10, "big", signed=True)[10 - length:])
    leading = (1 << length) - 1 << (16 - length)  # ``length`` one-bits at the top of a 16-bit header
    raw[0] ^= leading >> 8 & 0xFF
    if length > 1:
        raw[1] ^= leading & 0xFF
    return bytes(raw)


def encode_tensor_name_slice(name: str, slc: TensorSlice) -> bytes:
    """The table key of one stored slice of ``name`` (TF's ``EncodeTensorNameSlice``)."""
    out = _num_increasing(0) + _escape(name.encode("utf-8", "surrogateescape")) + b"\x00\x01"
    out += _num_increasing(slc.dims())
    for start, length in zip(slc.starts, slc.lengths):
        out += _signed_increasing(start) + _signed_increasing(length)
    return out


__all__ = ["FULL", "TensorSlice", "encode_tensor_name_slice", "parse_shape_and_slice"]
