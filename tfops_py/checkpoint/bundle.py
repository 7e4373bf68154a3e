"""TF's tensor-bundle checkpoint format (V2): ``<prefix>.index`` plus ``<prefix>.data-NNNNN-of-NNNNN`` shards.

The index is a :mod:`table <tfops_py.checkpoint.table>` mapping ``""`` to a
BundleHeaderProto and every tensor name to a BundleEntryProto (dtype, shape,
shard, offset, size, masked crc32c of the bytes, and for a partitioned tensor the
slices stored under their own keys).  Numeric data is the tensor's bytes in
little-endian order; a string tensor is its varint64 lengths, a masked crc32c of
the lengths (as uint32), then the bytes.

Reading checks everything TF's ``BundleReader`` checks (header, versions, shapes,
sizes against dtypes and against the file, checksums, slice coverage) before it
allocates, so a hostile file ends in a clean error and never asks for more memory
than the data file holds.  Each tensor is read once, straight into its array.
"""
from __future__ import annotations

import os
import secrets
import struct
import threading
from collections.abc import Iterable, Sequence
import io
from typing import Any

import numpy as np

from tfops_py.errors import (DataLossError, InternalError, InvalidArgumentError, NotFoundError, OpError,
                             UnimplementedError)
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.checkpoint.schema import BundleEntryProto, BundleHeaderProto
from tfops_py.checkpoint.slices import FULL, MAX_RANK, TensorSlice, encode_tensor_name_slice
from tfops_py.checkpoint.table import TableWriter, crc32c, mask, put_varint, read_table, unmask

HEADER_KEY = b""
VERSION = 1  # kTensorBundleVersion
MIN_PRODUCER = 0
MIN_CONSUMER = 0
MAX_SHARDS = (1 << 31) - 1
_TF = "TensorFlow 2.21"


def meta_filename(prefix: str) -> str:
    """``<prefix>.index`` (TF's MetaFilename)."""
    return f"{prefix}.index"


def data_filename(prefix: str, shard: int, num_shards: int) -> str:
    """``<prefix>.data-00000-of-00001`` (TF's DataFilename)."""
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}"


def _fs_error(e: OSError, path: str) -> OpError:
    if isinstance(e, FileNotFoundError):
        return NotFoundError(f"{path}; No such file or directory")
    if isinstance(e, PermissionError):
        from tfops_py.errors import PermissionDeniedError

        return PermissionDeniedError(f"{path}; Permission denied")
    return InternalError(f"{path}; {e.strerror or e}")


def check_versions(version: Any, what: str = "Checkpoint") -> None:
    """TF's CheckVersions for a bundle header's VersionDef."""
    low = what.lower()
    if version.producer < MIN_PRODUCER:
        raise InvalidArgumentError(f"{what} producer version {version.producer} below min producer {MIN_PRODUCER} "
                                   f"supported by {_TF}. Please regenerate your {low}.")
    if version.min_consumer > VERSION:
        raise InvalidArgumentError(f"{what} min consumer version {version.min_consumer} above current version "
                                   f"{VERSION} for {_TF}. Please upgrade TensorFlow.")
    if VERSION in version.bad_consumers:
        raise InvalidArgumentError(f"{what} disallows consumer version {VERSION}. Please upgrade TensorFlow: this "
                                   "version is likely buggy.")


def _corrupt(filename: str, detail: str, cause: str = "") -> DataLossError:
    return DataLossError(f"Unable to read file ({filename}). Perhaps the file is corrupt or was produced by a newer "
                         f"version of TensorFlow with format changes ({detail})" + (f": {cause}" if cause else ""))


def _dtype_of_entry(entry: Any, key: str) -> DataType:
    try:
        dtype = DataType(entry.dtype)
    except ValueError:
        raise DataLossError(f"Entry for key {key} has an unknown dtype {entry.dtype}") from None
    if dtype in (DataType.DT_VARIANT, DataType.DT_RESOURCE) or dtype == DataType.DT_INVALID:
        raise UnimplementedError(f"Entry for key {key} has dtype {dtype.short_name}, which tfops_py cannot restore")
    try:
        _ = dtype.numpy_dtype
    except KeyError:
        raise UnimplementedError(f"Entry for key {key} has dtype {dtype.short_name}, which tfops_py cannot "
                                 "restore") from None
    return dtype


def _entry_shape(entry: Any, key: str) -> tuple[int, ...]:
    shape = entry.shape
    dims = [d.size for d in shape.dim]
    n = 1
    for d in dims:
        n *= max(d, 0)
    if shape.unknown_rank or len(dims) > MAX_RANK or any(d < 0 for d in dims) or n >= 1 << 63:
        raise DataLossError(f"Invalid tensor shape: {key} {shape}".rstrip())
    return tuple(dims)


def _decode_varints(buf: np.ndarray, count: int) -> tuple[np.ndarray, int]:
    """The first ``count`` varint64s of a uint8 buffer (vectorised) and the bytes they take."""
    if count == 0:
        return np.zeros(0, np.uint64), 0
    ends = np.flatnonzero(buf < 0x80)
    if len(ends) < count:
        raise DataLossError("string lengths are truncated")
    ends = ends[:count]
    starts = np.concatenate([[0], ends[:-1] + 1])
    if np.any(ends - starts >= 10):
        raise DataLossError("bad varint in string lengths")
    used = int(ends[-1]) + 1
    body = buf[:used].astype(np.uint64) & np.uint64(0x7F)
    group = np.repeat(np.arange(count), (ends - starts + 1))
    shift = (np.arange(used) - starts[group]).astype(np.uint64) * np.uint64(7)
    values = np.zeros(count, np.uint64)
    np.add.at(values, group, body << shift)
    return values, used


class BundleReader:
    """Reads a V2 checkpoint (TF's ``BundleReader``).  ``lookup(name)`` gives the tensor as a NumPy array."""

    def __init__(self, prefix: str):
        self.prefix = os.fspath(prefix)
        filename = meta_filename(self.prefix)
        try:
            with open(filename, "rb") as f:
                data = f.read()
        except OSError as e:
            raise _fs_error(e, filename) from None
        self._entries: dict[bytes, bytes] = {}
        rows = read_table(data)
        if not rows or rows[0][0] != HEADER_KEY:
            raise _corrupt(filename, "failed to seek to header entry")
        header = BundleHeaderProto()
        try:
            header.ParseFromString(rows[0][1])
        except Exception:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise _corrupt(filename, "unable to parse header", "Entry for key  not parseable.") from None
        if not 0 < header.num_shards <= MAX_SHARDS:
            raise _corrupt(filename, f"header has num_shards = {header.num_shards}")
        self.num_shards = header.num_shards
        self.swap_bytes = header.endianness == 1  # BIG, read on a little-endian host
        check_versions(header.version)
        self._entries = dict(rows[1:])
        self._files: dict[int, io.BufferedReader] = {}
        self._lock = threading.Lock()

    # -- keys ---------------------------------------------------------------------------
    def keys(self) -> list[str]:
        """Tensor names, without the keys of stored slices (as TF's CheckpointReader lists them)."""
        slice_keys: set[bytes] = set()
        for key, value in self._entries.items():
            entry = self._parse(key, value)
            slice_keys.update(encode_tensor_name_slice(key.decode("utf-8", "surrogateescape"),
                                                       TensorSlice.from_proto(s)) for s in entry.slices)
        return [k.decode("utf-8", "surrogateescape") for k in self._entries if k not in slice_keys]

    def contains(self, name: str) -> bool:
        return name.encode("utf-8", "surrogateescape") in self._entries

    @staticmethod
    def _parse(key: bytes, value: bytes) -> Any:
        entry = BundleEntryProto()
        try:
            entry.ParseFromString(value)
        except Exception:  # noqa: BLE001
            raise DataLossError(f"Entry for key {key.decode('utf-8', 'replace')} not parseable.") from None
        return entry

    def entry(self, name: str | bytes) -> Any:
        """The BundleEntryProto of ``name``; NotFoundError as TF's when absent."""
        key = name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")
        value = self._entries.get(key)
        text = key.decode("utf-8", "replace")
        if value is None:
            raise NotFoundError(f"Key {text} not found in checkpoint")
        entry = self._parse(key, value)
        _entry_shape(entry, text)
        return entry

    def dtype_and_shape(self, name: str) -> tuple[DataType, tuple[int, ...]]:
        entry = self.entry(name)
        try:
            dtype = DataType(entry.dtype)
        except ValueError:
            raise DataLossError(f"Entry for key {name} has an unknown dtype {entry.dtype}") from None
        return dtype, _entry_shape(entry, name)

    # -- values -------------------------------------------------------------------------
    def lookup(self, name: str) -> np.ndarray:
        """The whole tensor ``name`` (joined from its slices when it was saved partitioned)."""
        entry = self.entry(name)
        if entry.slices:
            return self.lookup_slice(name, TensorSlice.full(len(entry.shape.dim)), entry)
        return self._value(entry, name)

    def lookup_slice(self, name: str, target: TensorSlice, entry: Any = None) -> np.ndarray:
        """The part ``target`` of tensor ``name`` (TF's LookupSlice), from whichever stored slices cover it."""
        entry = entry if entry is not None else self.entry(name)
        dtype = _dtype_of_entry(entry, name)
        shape = _entry_shape(entry, name)
        if target.dims() != len(shape):
            raise InvalidArgumentError(f"Mismatching ranks: shape = {list(shape)}, slice = {target}")
        out_shape = target.slice_shape(shape)
        stored = [TensorSlice.from_proto(s) for s in entry.slices] or [TensorSlice.full(len(shape))]
        want = target.bounds(shape)
        parts: list[tuple[TensorSlice, list[tuple[int, int]]]] = []
        covered = 0
        for i, slc in enumerate(stored):
            if slc.dims() != len(shape):
                raise DataLossError(f"slice {slc} of {name} does not have the rank of its shape {list(shape)}")
            have = slc.bounds(shape)
            if any(stop > d for (_, stop), d in zip(have, shape)):
                raise DataLossError(f"slice {slc} of {name} is outside its shape {list(shape)}")
            for other in stored[:i]:
                if all(a0 < b1 and b0 < a1 for (a0, a1), (b0, b1) in zip(have, other.bounds(shape))):
                    raise DataLossError(f"Overlapping slices: existing slice = {other}, new slice = {slc}")
            inter = [(max(a0, b0), min(a1, b1)) for (a0, a1), (b0, b1) in zip(have, want)]
            if all(lo < hi for lo, hi in inter) or not shape or 0 in out_shape:
                parts.append((slc, inter))
                covered += int(np.prod([hi - lo for lo, hi in inter], dtype=np.float64)) if shape else 1
        needed = int(np.prod(out_shape, dtype=np.float64)) if shape else 1
        if covered < needed:
            raise InvalidArgumentError(f"Does not have sufficient slices for partitioned tensor {name} to restore "
                                       f"in slice_spec: {target}")
        if len(parts) == 1 and parts[0][0].bounds(shape) == want:
            slc = parts[0][0]
            return self._value(entry if slc.is_full() else self.entry(encode_tensor_name_slice(name, slc)), name,
                               slc.slice_shape(shape))
        out = np.empty(out_shape, dtype=dtype.numpy_dtype)
        for slc, inter in parts:
            if any(lo >= hi for lo, hi in inter):
                continue
            have = slc.bounds(shape)
            key_entry = entry if slc.is_full() else self.entry(encode_tensor_name_slice(name, slc))
            value = self._value(key_entry, name, slc.slice_shape(shape))
            src = tuple(slice(lo - h0, hi - h0) for (lo, hi), (h0, _) in zip(inter, have))
            dst = tuple(slice(lo - w0, hi - w0) for (lo, hi), (w0, _) in zip(inter, want))
            out[dst] = value[src]
            del value
        return out

    def _file(self, shard: int) -> io.BufferedReader:
        if not 0 <= shard < self.num_shards:
            raise DataLossError(f"TensorBundle at {self.prefix}: entry refers to shard {shard}, but the bundle has "
                                f"{self.num_shards}")
        f = self._files.get(shard)
        if f is None:
            path = data_filename(self.prefix, shard, self.num_shards)
            try:
                f = self._files[shard] = open(path, "rb")
            except OSError as e:
                raise _fs_error(e, path) from None
        return f

    def _check_extent(self, entry: Any, name: str) -> io.BufferedReader:
        """The entry's shard, once its bytes are known to lie inside it (checked before any allocation)."""
        f = self._file(entry.shard_id)
        end = os.fstat(f.fileno()).st_size
        if entry.offset < 0 or entry.size < 0 or entry.offset + entry.size > end:
            raise DataLossError(f"TensorBundle at {self.prefix} shard {entry.shard_id}: entry {name} "
                                f"(offset {entry.offset}, {entry.size} bytes) runs past the end of the data file "
                                f"({end} bytes); the file is truncated or the index is corrupt")
        return f

    def _read(self, entry: Any, name: str, into: Any = None) -> Any:
        """The bytes [offset, offset + size) of the entry's shard (into ``into`` when given)."""
        f = self._check_extent(entry, name)
        with self._lock:
            f.seek(entry.offset)
            if into is None:
                data = f.read(entry.size)
                got = len(data)
            else:
                got = f.readinto(into)
        if got != entry.size:
            raise DataLossError(f"TensorBundle at {self.prefix}: read {got} of {entry.size} bytes of {name}")
        return data if into is None else into

    def _value(self, entry: Any, name: str, expect: Sequence[int] | None = None) -> np.ndarray:
        dtype = _dtype_of_entry(entry, name)
        shape = _entry_shape(entry, name)
        if expect is not None and tuple(expect) != shape:
            raise DataLossError(f"stored slice of {name} has shape {list(shape)}, expected {list(expect)}")
        n = int(np.prod(shape, dtype=np.float64)) if shape else 1
        np_dtype = dtype.numpy_dtype
        if dtype == DataType.DT_STRING:
            if entry.size < n:
                raise DataLossError(f"Invalid size in bundle entry: key {name}; stored size {entry.size}; "
                                    f"expected size is at least {n}")
            self._check_extent(entry, name)
            flat = self._read_strings(entry, name, n)
            return flat.reshape(shape)
        nbytes = n * np_dtype.itemsize
        if entry.size != nbytes:
            raise DataLossError(f"Invalid size in bundle entry: key {name}; stored size {entry.size}; expected size "
                                f"{nbytes}")
        self._check_extent(entry, name)
        arr = np.empty(n, dtype=np_dtype)
        if nbytes:
            self._read(entry, name, memoryview(arr.view(np.uint8)))
        actual = crc32c(arr) if nbytes else 0
        if unmask(entry.crc32c) != actual:
            raise DataLossError(f"TensorBundle at {self.prefix} shard {entry.shard_id} ({entry.size} bytes): "
                                f"Checksum does not match: stored {unmask(entry.crc32c):08d} vs. calculated on the "
                                f"restored bytes {actual}")
        if self.swap_bytes and np_dtype.itemsize > 1:
            arr = arr.byteswap()  # complex: each part swapped, as TF's ByteSwapTensor
        if dtype == DataType.DT_BOOL and np.any(arr.view(np.uint8) > 1):
            raise DataLossError(f"bool tensor {name} holds values other than 0 and 1")
        return arr.reshape(shape)

    def _read_strings(self, entry: Any, name: str, n: int) -> np.ndarray:
        raw = np.frombuffer(self._read(entry, name), dtype=np.uint8) if entry.size else np.zeros(0, np.uint8)
        flat = np.empty(n, dtype=object)
        if entry.size == 0:
            flat[...] = b""
            return flat
        lengths, used = _decode_varints(raw[:min(len(raw), 10 * n)], n)
        width = "<u4" if not self.swap_bytes else ">u4"
        small = lengths <= 0xFFFFFFFF
        if small.all():
            length_bytes = lengths.astype(width).tobytes()
        else:  # lengths above 2**32 were checksummed as uint64
            length_bytes = b"".join(int(v).to_bytes(4 if s else 8, "little" if not self.swap_bytes else "big")
                                    for v, s in zip(lengths.tolist(), small.tolist()))
        crc = crc32c(length_bytes) if n else 0
        if used + 4 > len(raw):
            raise DataLossError(f"String lengths longer than expected offset {entry.offset + entry.size}")
        stored = struct.unpack_from("<I" if not self.swap_bytes else ">I", raw, used)[0]
        if unmask(stored) != crc:
            raise DataLossError(f"The length checksum does not match: expected {unmask(stored):08d} but actual is "
                                f"{crc:08d}")
        crc = crc32c(raw[used:used + 4].tobytes(), crc)
        total = int(lengths.sum(dtype=np.float64)) if n else 0
        if used + 4 + total != len(raw):
            raise DataLossError(f"string tensor {name}: lengths add up to {total} bytes, the entry holds "
                                f"{len(raw) - used - 4}")
        body = raw[used + 4:]
        crc = crc32c(body, crc) if len(body) else crc
        if unmask(entry.crc32c) != crc:
            raise DataLossError(f"TensorBundle at {self.prefix} shard {entry.shard_id} ({entry.size} bytes): "
                                f"Checksum does not match: stored {unmask(entry.crc32c):08d} vs. calculated on the "
                                f"restored bytes {crc}")
        data = body.tobytes()
        ends = np.cumsum(lengths.astype(np.int64)).tolist()
        starts = [0] + ends[:-1]
        flat[:] = [data[a:b] for a, b in zip(starts, ends)]
        return flat

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()

    def __enter__(self) -> BundleReader:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


# ----------------------------------------------------------------------------- writing
def _string_bytes(values: np.ndarray) -> list[bytes]:
    return [v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v) for v in values.reshape(-1)]


class BundleWriter:
    """Writes a V2 checkpoint (TF's ``BundleWriter``): ``add`` / ``add_slice`` tensors, then ``finish``.

    Files are written under temporary names and renamed at the end, as TF does on
    filesystems with atomic rename, so a reader never sees half a checkpoint.
    """

    def __init__(self, prefix: str):
        self.prefix = os.fspath(prefix)
        self._entries: dict[bytes, Any] = {}
        self._size = 0
        suffix = f".tempstate{secrets.randbits(63)}"
        self._data_path = data_filename(self.prefix, 0, 1) + suffix
        self._meta_path = meta_filename(self.prefix) + suffix
        directory = os.path.dirname(self.prefix)
        try:
            if directory:
                os.makedirs(directory, exist_ok=True)
            self._out: io.BufferedWriter | None = open(self._data_path, "wb")
        except OSError as e:
            raise _fs_error(e, self._data_path) from None

    def add(self, name: str | bytes, value: Any) -> None:
        key = name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")
        if key == HEADER_KEY:
            raise InvalidArgumentError("a checkpoint tensor cannot have the empty name (the header's key)")
        if key in self._entries:
            raise InvalidArgumentError(f"Adding duplicate key: {key.decode('utf-8', 'replace')}")
        arr = np.asarray(value)
        dtype = as_datatype(arr.dtype)
        entry = BundleEntryProto(dtype=int(dtype), shard_id=0, offset=self._size)
        entry.shape.SetInParent()
        for d in arr.shape:
            entry.shape.dim.add(size=d)
        if dtype == DataType.DT_STRING:
            written, crc = self._write_strings(arr)
        else:
            arr = np.ascontiguousarray(arr)
            written = arr.nbytes
            crc = crc32c(arr) if written else 0
            self._write(memoryview(arr.reshape(-1).view(np.uint8)) if written else b"")
        entry.size = written
        entry.crc32c = mask(crc)
        self._size += written
        self._entries[key] = entry

    def add_slice(self, name: str, full_shape: Sequence[int], slc: TensorSlice, value: Any) -> None:
        """Store ``value`` as the part ``slc`` of a tensor of ``full_shape`` (TF's AddSlice)."""
        arr = np.asarray(value)
        if slc.covers_all_of(full_shape):
            self.add(name, arr)
            return
        key = name.encode("utf-8", "surrogateescape")
        full = self._entries.get(key)
        dtype = as_datatype(arr.dtype)
        if full is None:
            full = self._entries[key] = BundleEntryProto(dtype=int(dtype))
            full.shape.SetInParent()
            for d in full_shape:
                full.shape.dim.add(size=d)
        elif not full.slices or full.dtype != int(dtype) or [d.size for d in full.shape.dim] != list(full_shape):
            raise InvalidArgumentError(f"slice of {name} disagrees with what was saved for it before (dtype, shape, "
                                       "or a whole tensor)")
        slc.to_proto(full.slices.add())
        self.add(encode_tensor_name_slice(name, slc), arr)

    def _write(self, data: Any) -> None:
        try:
            self._out.write(data)  # type: ignore[union-attr]
        except OSError as e:
            raise _fs_error(e, self._data_path) from None

    def _write_strings(self, arr: np.ndarray) -> tuple[int, int]:
        items = _string_bytes(arr)
        lengths = bytearray()
        for s in items:
            put_varint(lengths, len(s))
        sizes = np.fromiter((len(s) for s in items), dtype=np.uint64, count=len(items))
        if np.all(sizes <= 0xFFFFFFFF):
            crc = crc32c(sizes.astype("<u4").tobytes()) if len(items) else 0
        else:
            crc = crc32c(b"".join(int(v).to_bytes(4 if v <= 0xFFFFFFFF else 8, "little") for v in sizes.tolist()))
        length_checksum = struct.pack("<I", mask(crc))
        crc = crc32c(length_checksum, crc)
        body = b"".join(items)
        if body:
            crc = crc32c(body, crc)
        self._write(bytes(lengths) + length_checksum + body)
        return len(lengths) + 4 + len(body), crc

    def finish(self) -> None:
        """Close the data file and write the index; both appear under their final names only now."""
        if self._out is None:
            raise InternalError("BundleWriter is closed")
        try:
            self._out.close()
            self._out = None
            os.replace(self._data_path, data_filename(self.prefix, 0, 1))
            header = BundleHeaderProto(num_shards=1, endianness=0)
            header.version.producer = VERSION
            header.version.min_consumer = MIN_CONSUMER
            write_index(self._meta_path, header, sorted(self._entries.items()))
            os.replace(self._meta_path, meta_filename(self.prefix))
        except OSError as e:
            raise _fs_error(e, self.prefix) from None

    def abort(self) -> None:
        """Drop what was written (after an error)."""
        if self._out is not None:
            self._out.close()
            self._out = None
        for path in (self._data_path, self._meta_path):
            try:
                os.remove(path)
            except OSError:
                pass


def write_index(path: str, header: Any, entries: Iterable[tuple[bytes, Any]]) -> None:
    with open(path, "wb") as f:
        table = TableWriter(f)
        table.add(HEADER_KEY, header.SerializeToString())
        for key, entry in entries:
            table.add(key, entry.SerializeToString())
        table.finish()


def write_bundle(prefix: str, tensors: dict[str, Any]) -> None:
    """Write ``{name: array}`` as a one-shard checkpoint at ``prefix``."""
    writer = BundleWriter(prefix)
    try:
        for name, value in tensors.items():
            writer.add(name, value)
        writer.finish()
    except BaseException:
        writer.abort()
        raise


# ----------------------------------------------------------------------------- merging
def merge_bundles(prefixes: Sequence[str], merged_prefix: str, allow_missing_files: bool = False) -> None:
    """Merge the per-shard checkpoints ``prefixes`` into one at ``merged_prefix`` (TF's MergeBundles).

    Data files are renamed, not copied; the old index files are deleted.
    """
    entries: dict[bytes, Any] = {}
    shard_ids: dict[str, int] = {}
    first: Any = None
    num_shards = 0
    merged_any = False
    directory = os.path.dirname(merged_prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    for prefix in prefixes:
        filename = meta_filename(prefix)
        if allow_missing_files and not os.path.exists(filename):
            continue
        merged_any = True
        reader = BundleReader(prefix)
        header = BundleHeaderProto(num_shards=reader.num_shards, endianness=1 if reader.swap_bytes else 0)
        if first is None:
            first = header
        elif first.endianness != header.endianness:
            raise InvalidArgumentError("Merging bundles with conflicting endianness; inputs corrupted?")
        num_shards += reader.num_shards
        for key, value in reader._entries.items():  # noqa: SLF001 - same module family
            entry = reader._parse(key, value)
            existing = entries.get(key)
            text = key.decode("utf-8", "replace")
            if existing is not None:
                if not existing.slices:
                    raise InvalidArgumentError(f"Duplicate tensor keyed by {text} encountered, when merging prefix: "
                                               f"{prefix}")
                if not entry.slices:
                    raise InternalError(f"Duplicate tensor keyed by {text}; attempting to merge in a non-slice "
                                        "bundle entry")
                existing.slices.extend(entry.slices)
                continue
            if not entry.slices:
                path = data_filename(prefix, entry.shard_id, reader.num_shards)
                entry.shard_id = shard_ids.setdefault(path, len(shard_ids))
            entries[key] = entry
        reader.close()
    if not merged_any:
        raise InvalidArgumentError("Expected at least one checkpoint to merge, found none of: " + ", ".join(prefixes))
    for path, shard in shard_ids.items():
        try:
            os.replace(path, data_filename(merged_prefix, shard, len(shard_ids)))
        except OSError as e:
            raise _fs_error(e, path) from None
    header = BundleHeaderProto(num_shards=max(len(shard_ids), 1), endianness=first.endianness)
    header.version.producer = VERSION
    header.version.min_consumer = MIN_CONSUMER
    write_index(meta_filename(merged_prefix), header, sorted(entries.items()))
    for prefix in prefixes:
        if os.path.abspath(meta_filename(prefix)) != os.path.abspath(meta_filename(merged_prefix)):
            try:
                os.remove(meta_filename(prefix))
            except OSError:
                pass


__all__ = ["BundleReader", "BundleWriter", "FULL", "check_versions", "data_filename", "merge_bundles",
           "meta_filename", "write_bundle"]
