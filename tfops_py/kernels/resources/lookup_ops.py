"""Lookup tables: HashTableV2, the mutable hash tables, and the LookupTable*/InitializeTable* ops on them.

A table is a session resource (see ``handles.py``) holding its keys and values as
host NumPy arrays (int64 or string keys and values: object arrays of ``bytes``),
kept unique, plus a sorted view so that a find is one ``searchsorted`` over all
keys (no loop over elements).  HashTableV2 is filled once by an initializer
(InitializeTableV2, InitializeTableFromTextFileV2); the mutable tables take
inserts, removes and imports.  InitializeTableFromDataset is not supported.
Checks and messages follow TF 2.21's ``lookup_table_op.cc``/``lookup_util.cc``.
"""
from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from tfops_py.conformance import conformance
from tfops_py.errors import FailedPreconditionError, InvalidArgumentError, NotFoundError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import (
    PartialTensorShape,
    format_shape,
    unknown_shape,
)
from tfops_py.kernels._strings import as_text
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.resources.handles import (
    ResourceHandle,
    as_handle,
    handle_from_attrs,
    lookup,
    lookup_or_create,
)

WHOLE_LINE, LINE_NUMBER = -2, -1
_TABLE_OPS = ("HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2", "MutableDenseHashTableV2")
MAX_VOCAB_FILE_BYTES = 1 << 31  # a vocabulary file larger than this is refused, not read into memory


class LookupTable:
    """Unique keys with their values; ``find`` is vectorised through a sorted view of the keys."""

    def __init__(self, key_dtype: DataType, value_dtype: DataType, value_shape: tuple[int, ...], mutable: bool,
                 empty_key: Any = None, deleted_key: Any = None):
        self.key_dtype, self.value_dtype = key_dtype, value_dtype
        self.value_shape = value_shape
        self.mutable = mutable
        self.initialized = mutable
        self.empty_key, self.deleted_key = empty_key, deleted_key
        self.keys = np.empty(0, dtype=key_dtype.numpy_dtype)
        self.values = np.empty((0,) + value_shape, dtype=value_dtype.numpy_dtype)
        self._sorted: tuple[np.ndarray, np.ndarray] | None = None
        self.lock = threading.Lock()

    def size(self) -> int:
        return len(self.keys)

    def _view(self) -> tuple[np.ndarray, np.ndarray]:
        if self._sorted is None:
            order = np.argsort(self.keys, kind="stable")
            self._sorted = (order, self.keys[order])
        return self._sorted

    def find(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        flat = keys.reshape(-1)
        out = np.empty((len(flat),) + self.value_shape, dtype=self.values.dtype)
        out[...] = default
        if len(self.keys) and len(flat):
            order, sorted_keys = self._view()
            pos = np.searchsorted(sorted_keys, flat)
            pos_c = np.minimum(pos, len(sorted_keys) - 1)
            hit = (pos < len(sorted_keys)) & (sorted_keys[pos_c] == flat)
            out[hit] = self.values[order[pos_c[hit]]]
        return out.reshape(keys.shape + self.value_shape)

    def insert(self, keys: np.ndarray, values: np.ndarray) -> None:
        """Add or replace; among duplicate keys the last one wins."""
        all_keys = np.concatenate([self.keys, keys.reshape(-1)])
        all_values = np.concatenate([self.values, values.reshape((-1,) + self.value_shape)])
        _, last = np.unique(all_keys[::-1], return_index=True)
        keep = np.sort(len(all_keys) - 1 - last)
        self.keys, self.values = all_keys[keep], all_values[keep]
        self._sorted = None

    def remove(self, keys: np.ndarray) -> None:
        gone = np.isin(self.keys, keys.reshape(-1))
        self.keys, self.values = self.keys[~gone], self.values[~gone]
        self._sorted = None

    def replace(self, keys: np.ndarray, values: np.ndarray) -> None:
        self.keys = np.empty(0, dtype=self.keys.dtype)
        self.values = np.empty((0,) + self.value_shape, dtype=self.values.dtype)
        self.insert(keys, values)


# -- shape functions ---------------------------------------------------------------------------------------
def _scalar(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


def _nothing(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


register_shape(*_TABLE_OPS, "LookupTableSizeV2")(_scalar)
register_shape("LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableImportV2", "InitializeTableV2",
               "InitializeTableFromTextFileV2")(_nothing)


@register_shape("LookupTableFindV2")
def _find_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    keys, default = ctx.input(1), ctx.input(2)
    if keys.unknown_rank() or default.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape(list(keys.as_tuple()) + list(default.as_tuple()))]


@register_shape("LookupTableExportV2")
def _export_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([-1]), unknown_shape()]


# -- table handles -------------------------------------------------------------------------------------------
def _table_handle(ctx: KernelContext, mutable: bool, value_shape: tuple[int, ...] = (), empty: Any = None,
                  deleted: Any = None) -> ResourceHandle:
    if not ctx.attrs.get("shared_name") and not ctx.attrs.get("use_node_name_sharing"):
        # A private table of this node in this session (TF: a name unique to the kernel).
        attrs = dict(ctx.attrs, shared_name=f"table_{ctx.node_name}_private")
        handle = handle_from_attrs(_AttrView(ctx, attrs), "LookupTable")
    else:
        attrs = dict(ctx.attrs, shared_name=ctx.attrs.get("shared_name") or ctx.node_name)
        handle = handle_from_attrs(_AttrView(ctx, attrs), "LookupTable")
    kd, vd = ctx.attrs["key_dtype"], ctx.attrs["value_dtype"]
    table = lookup_or_create(ctx, handle, lambda: LookupTable(kd, vd, value_shape, mutable, empty, deleted))
    if table.key_dtype != kd or table.value_dtype != vd:
        ctx.invalid_argument(f"Conflicting key/value dtypes {kd.short_name}->{vd.short_name} with "
                             f"{table.key_dtype.short_name}->{table.value_dtype.short_name}")
    return handle


class _AttrView:
    """A KernelContext stand-in with other attrs (for handle_from_attrs)."""

    def __init__(self, ctx: KernelContext, attrs: dict[str, Any]):
        self.attrs, self.node_name = attrs, ctx.node_name


def _value_shape(ctx: KernelContext) -> tuple[int, ...]:
    shape = ctx.attrs.get("value_shape", PartialTensorShape([]))
    if shape.unknown_rank() or any(d < 0 for d in shape.as_tuple()):
        ctx.invalid_argument(f"value_shape must be fully defined, got {shape}")
    return tuple(shape.as_tuple())


@register_kernel("HashTableV2")
def _hash_table(ctx: KernelContext) -> ResourceHandle:
    return _table_handle(ctx, False)


@register_kernel("MutableHashTableV2")
def _mutable_hash_table(ctx: KernelContext) -> ResourceHandle:
    return _table_handle(ctx, True)


@register_kernel("MutableHashTableOfTensorsV2")
def _mutable_hash_table_of_tensors(ctx: KernelContext) -> ResourceHandle:
    return _table_handle(ctx, True, _value_shape(ctx))


@register_kernel("MutableDenseHashTableV2")
def _mutable_dense_hash_table(ctx: KernelContext, empty_key: Any, deleted_key: Any) -> ResourceHandle:
    empty, deleted = ctx.host(empty_key), ctx.host(deleted_key)
    if empty.shape != deleted.shape or (empty == deleted).all():
        ctx.invalid_argument("empty_key and deleted_key cannot be equal")
    return _table_handle(ctx, True, _value_shape(ctx), empty, deleted)


# -- table ops -----------------------------------------------------------------------------------------------
def _table(ctx: KernelContext, value: Any) -> LookupTable:
    handle = as_handle(ctx, value, "table_handle")
    table = lookup(ctx, handle)
    if not isinstance(table, LookupTable):
        raise ctx.error(NotFoundError, f"Resource {handle.container}/{handle.name}/LookupTable does not exist.")
    return table


def _check_types(ctx: KernelContext, table: LookupTable, keys: Any = None, values: Any = None) -> None:
    names = {"LookupTableFindV2": ("Tin", "Tout"), "LookupTableInsertV2": ("Tin", "Tout"),
             "LookupTableImportV2": ("Tin", "Tout"), "InitializeTableV2": ("Tkey", "Tval"),
             "LookupTableRemoveV2": ("Tin", None)}.get(ctx.op_type, (None, None))
    k, v = (ctx.attrs.get(n) if n else None for n in names)
    if k is not None and k != table.key_dtype or v is not None and v != table.value_dtype:
        ctx.invalid_argument(f"Conflicting key/value dtypes {k.short_name if k else '?'}->"
                             f"{v.short_name if v else '?'} with {table.key_dtype.short_name}->"
                             f"{table.value_dtype.short_name}")


def _host(ctx: KernelContext, value: Any) -> np.ndarray:
    return np.asarray(ctx.host(value))


def _check_keys_values(ctx: KernelContext, table: LookupTable, keys: np.ndarray, values: np.ndarray) -> None:
    want = keys.shape + table.value_shape
    if values.shape != want:
        ctx.invalid_argument(f"Expected shape {format_shape(want)} for value, got {format_shape(values.shape)}")
    if table.empty_key is not None:
        for special, what in ((table.empty_key, "empty_key"), (table.deleted_key, "deleted_key")):
            if np.any(keys.reshape(-1) == special.reshape(-1)[0] if special.size == 1 else False):
                ctx.invalid_argument(f"Using the {what} as a table key is not allowed")


@register_kernel("LookupTableFindV2")
def _find(ctx: KernelContext, table_handle: Any, keys: Any, default_value: Any) -> Any:
    table = _table(ctx, table_handle)
    _check_types(ctx, table)
    if not table.initialized:
        raise ctx.error(FailedPreconditionError, "Table not initialized.")
    default = _host(ctx, default_value)
    if default.shape not in ((), table.value_shape):
        ctx.invalid_argument(f"Expected shape {format_shape(table.value_shape)} or [] for default value, got "
                             f"{format_shape(default.shape)}")
    with table.lock:
        out = table.find(_host(ctx, keys), default)
    return ctx.backend.from_numpy(out, ctx)


@register_kernel("LookupTableInsertV2")
def _insert(ctx: KernelContext, table_handle: Any, keys: Any, values: Any) -> tuple:
    table = _table(ctx, table_handle)
    _check_types(ctx, table)
    if not table.mutable:
        ctx.unimplemented("LookupTableInsertV2 on a HashTable (it is filled by its initializer only)")
    k, v = _host(ctx, keys), _host(ctx, values)
    _check_keys_values(ctx, table, k, v)
    with table.lock:
        table.insert(k, v)
    return ()


@register_kernel("LookupTableRemoveV2")
def _remove(ctx: KernelContext, table_handle: Any, keys: Any) -> tuple:
    table = _table(ctx, table_handle)
    if not table.mutable:
        ctx.unimplemented("LookupTableRemoveV2 on a HashTable (it is filled by its initializer only)")
    with table.lock:
        table.remove(_host(ctx, keys))
    return ()


@register_kernel("LookupTableSizeV2")
def _size(ctx: KernelContext, table_handle: Any) -> Any:
    return ctx.asarray(_table(ctx, table_handle).size(), DataType.DT_INT64)


@register_kernel("LookupTableExportV2")
def _export(ctx: KernelContext, table_handle: Any) -> tuple:
    table = _table(ctx, table_handle)
    with table.lock:
        keys, values = table.keys.copy(), table.values.copy()
    return ctx.backend.from_numpy(keys, ctx), ctx.backend.from_numpy(values, ctx)


@register_kernel("LookupTableImportV2")
def _import(ctx: KernelContext, table_handle: Any, keys: Any, values: Any) -> tuple:
    table = _table(ctx, table_handle)
    _check_types(ctx, table)
    k, v = _host(ctx, keys), _host(ctx, values)
    _check_keys_values(ctx, table, k, v)
    with table.lock:
        table.replace(k, v)
        table.initialized = True
    return ()


def _initialize(ctx: KernelContext, table: LookupTable, keys: np.ndarray, values: np.ndarray) -> None:
    """Fill a table once (TF's InitializableLookupTable): again with the same data is a no-op."""
    with table.lock:
        if table.initialized and not table.mutable:
            same = LookupTable(table.key_dtype, table.value_dtype, table.value_shape, True)
            same.insert(keys, values)
            if not (np.array_equal(np.sort(same.keys), np.sort(table.keys)) and same.size() == table.size()):
                raise ctx.error(FailedPreconditionError, "Table was already initialized with different data.")
            return
        _, first = np.unique(keys, return_index=True)
        if len(first) != len(keys):
            dup = np.setdiff1d(np.arange(len(keys)), first)[0]
            prior = int(np.flatnonzero(keys == keys[dup])[0])
            if values[prior] != values[dup]:
                raise ctx.error(FailedPreconditionError, "HashTable has different value for same key. Key "
                                f"{_show(keys[dup])} has {_show(values[prior])} and trying to add value "
                                f"{_show(values[dup])}")
        table.insert(keys, values)
        table.initialized = True


def _show(v: Any) -> str:
    return as_text(v) if isinstance(v, bytes) else str(v)


@register_kernel("InitializeTableV2")
def _initialize_table(ctx: KernelContext, table_handle: Any, keys: Any, values: Any) -> tuple:
    table = _table(ctx, table_handle)
    _check_types(ctx, table)
    k, v = _host(ctx, keys), _host(ctx, values)
    if k.ndim != 1 or v.ndim != 1:
        ctx.invalid_argument(f"Keys and values must be 1-D, got {format_shape(k.shape)} and "
                             f"{format_shape(v.shape)}")
    if k.shape != v.shape:
        ctx.invalid_argument("Keys and values must have the same size " f"{k.size} vs {v.size}")
    _initialize(ctx, table, k, v)
    return ()


def _parse_column(ctx: KernelContext, texts: list[str], dtype: DataType, what: str, path: str) -> np.ndarray:
    if dtype == DataType.DT_STRING:
        out = np.empty(len(texts), dtype=object)
        out[:] = [t.encode("utf-8", "surrogateescape") for t in texts]
        return out
    try:
        arr = np.array([float(t) if dtype.is_floating else int(t) for t in texts], dtype=dtype.numpy_dtype)
    except (ValueError, OverflowError) as e:
        ctx.invalid_argument(f"Field in {path} is not a valid {dtype.short_name} {what}: {e}")
    return arr


@register_kernel("InitializeTableFromTextFileV2")
def _initialize_from_text_file(ctx: KernelContext, table_handle: Any, filename: Any) -> tuple:
    table = _table(ctx, table_handle)
    name = _host(ctx, filename)
    if name.shape != ():
        ctx.invalid_argument(f"filename should be a single string, but got {format_shape(name.shape)}")
    path = as_text(name.reshape(-1)[0])
    key_index, value_index = ctx.attrs["key_index"], ctx.attrs["value_index"]
    vocab_size, delimiter = ctx.attrs.get("vocab_size", -1), ctx.attrs.get("delimiter", "\t")
    offset = ctx.attrs.get("offset", 0)
    if key_index < WHOLE_LINE or value_index < WHOLE_LINE:
        ctx.invalid_argument(f"key_index and value_index must be >= -2, got {key_index} and {value_index}")
    try:
        if os.path.getsize(path) > MAX_VOCAB_FILE_BYTES:
            ctx.invalid_argument(f"vocabulary file {path} is larger than {MAX_VOCAB_FILE_BYTES} bytes")
        with open(path, "rb") as f:
            f.seek(max(offset, 0))
            data = f.read()
    except FileNotFoundError:
        raise ctx.error(NotFoundError, f"{path}; No such file or directory") from None
    except OSError as e:
        raise ctx.error(InvalidArgumentError, f"cannot read vocabulary file {path}: {e.strerror}") from None
    lines = data.decode("utf-8", "surrogateescape").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln.removesuffix("\r") for ln in lines]
    if vocab_size > 0:
        if len(lines) < vocab_size:
            ctx.invalid_argument(f"Invalid vocab_size in {path}: expected {vocab_size} but got {len(lines)}")
        lines = lines[:vocab_size]

    def column(index: int, dtype: DataType, what: str) -> np.ndarray:
        if index == LINE_NUMBER:
            return np.arange(len(lines), dtype=dtype.numpy_dtype)
        if index == WHOLE_LINE:
            return _parse_column(ctx, lines, dtype, what, path)
        fields = [ln.split(delimiter) if delimiter else ln.split() for ln in lines]
        short = next((i for i, f in enumerate(fields) if len(f) <= index), None)
        if short is not None:
            ctx.invalid_argument(f"Invalid number of columns in {path} line {short} ({lines[short]}) for "
                                 f"{what} index {index}")
        return _parse_column(ctx, [f[index] for f in fields], dtype, what, path)

    keys = column(key_index, table.key_dtype, "key")
    values = column(value_index, table.value_dtype, "value")
    _initialize(ctx, table, keys, values)
    return ()


__all__ = ["LookupTable"]


# -- conformance (tests/conformance): graph cases on TF (resources family, built in _resource_cases.py) -------
CONFORMANCE_FAMILY = "resources"
for _op in (*_TABLE_OPS, "LookupTableFindV2", "LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableSizeV2",
            "LookupTableExportV2", "LookupTableImportV2", "InitializeTableV2", "InitializeTableFromTextFileV2"):
    conformance(_op, generate=False)
