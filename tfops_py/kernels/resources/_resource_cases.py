"""The resources family's golden cases: resource and reference variables and lookup tables,
as small graphs written once for tfops_py and TF (recipes, see tfops_py/conformance/graphs.py).  Imported
only when cases are made.  Each recipe returns what it fetches; a case's inputs become constants.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import PartialTensorShape

D = DataType
F32 = np.float32
INIT = np.arange(6, dtype=F32).reshape(3, 2)


# -- resource variables ------------------------------------------------------------------------------------
def _variable(g: Any, init: Any, dtype: DataType = D.DT_FLOAT, shape: Any = (3, 2), name: str = "v") -> tuple:
    """A resource variable assigned ``init``: (handle, the assignment); ``shape`` None: of unknown shape."""
    v = g.op("VarHandleOp", dtype=dtype, shape=PartialTensorShape(None if shape is None else list(shape)),
             shared_name=name)
    return v, g.op("AssignVariableOp", v, init)


def _read_after(g: Any, v: Any, dep: Any, dtype: DataType = D.DT_FLOAT) -> Any:
    with g.after(dep):
        return g.op("ReadVariableOp", v, dtype=dtype)


def read_after_assign(g: Any, init: Any) -> list:
    v, assign = _variable(g, init)
    return [_read_after(g, v, assign)]


def update(op: str, shape: Any = (3, 2), **attrs: Any) -> Any:
    """Assign ``init``, then ``op(handle, *args)``, then read (``shape`` None: a variable of unknown shape, which
    graph construction cannot check the update against)."""
    def recipe(g: Any, init: Any, *args: Any) -> list:
        v, assign = _variable(g, init, shape=shape)
        with g.after(assign):
            step = g.op(op, v, *args, **attrs)
        return [_read_after(g, v, step)]
    return recipe


def gather(op: str, **attrs: Any) -> Any:
    def recipe(g: Any, init: Any, indices: Any) -> list:
        v, assign = _variable(g, init)
        with g.after(assign):
            return [g.op(op, v, indices, dtype=D.DT_FLOAT, **attrs)]
    return recipe


def initialized_around_assign(variable: str, check: str, assign: str) -> Any:
    """Whether a new variable is initialized before and after its first assignment."""
    def recipe(g: Any, init: Any) -> list:
        var = g.op(variable, dtype=D.DT_FLOAT, shape=[3, 2], shared_name="v")
        before = g.op(check, var)
        with g.after(before):
            assigned = g.op(assign, var, init)
        with g.after(assigned):
            return [before, g.op(check, var)]
    return recipe


def destroy(g: Any, init: Any) -> list:
    v, assign = _variable(g, init)
    with g.after(assign):
        gone = g.op("DestroyResourceOp", v, ignore_lookup_error=False)
    with g.after(gone):
        return [g.op("VarIsInitializedOp", v)]


def disable_copy_on_read(g: Any, init: Any) -> list:
    v, assign = _variable(g, init)
    with g.after(assign):
        off = g.op("DisableCopyOnRead", v)
    return [_read_after(g, v, off)]


def read_uninitialized(g: Any) -> list:
    v = g.op("VarHandleOp", dtype=D.DT_FLOAT, shape=[3, 2], shared_name="v")
    return [g.op("ReadVariableOp", v, dtype=D.DT_FLOAT)]


# -- reference variables ------------------------------------------------------------------------------------
def _ref_variable(g: Any, init: Any, op: str = "VariableV2", name: str = "v") -> tuple:
    var = g.op(op, shape=list(np.shape(INIT)), dtype=D.DT_FLOAT, shared_name=name)
    return var, g.op("Assign", var, init)


def ref_assign(op: str = "VariableV2") -> Any:
    def recipe(g: Any, init: Any) -> list:
        _, assigned = _ref_variable(g, init, op)
        return [assigned]
    return recipe


def ref_update(op: str) -> Any:
    def recipe(g: Any, init: Any, delta: Any) -> list:
        var, assigned = _ref_variable(g, init)
        with g.after(assigned):
            return [g.op(op, var, delta)]
    return recipe


# -- lookup tables ------------------------------------------------------------------------------------------
def hash_table(g: Any, keys: Any, values: Any, queries: Any, default: Any) -> list:
    table = g.op("HashTableV2", key_dtype=D.DT_STRING, value_dtype=D.DT_INT64, shared_name="t")
    init = g.op("InitializeTableV2", table, keys, values)
    with g.after(init):
        return [g.op("LookupTableFindV2", table, queries, default), g.op("LookupTableSizeV2", table)]


def hash_table_export(g: Any, keys: Any, values: Any) -> list:
    """Export of a one-entry table: the order of several entries is the hash map's."""
    table = g.op("HashTableV2", key_dtype=D.DT_INT64, value_dtype=D.DT_FLOAT, shared_name="t")
    init = g.op("InitializeTableV2", table, keys, values)
    with g.after(init):
        return list(g.op("LookupTableExportV2", table, Tkeys=D.DT_INT64, Tvalues=D.DT_FLOAT))


def mutable_table(g: Any, keys: Any, values: Any, gone: Any, queries: Any, default: Any) -> list:
    table = g.op("MutableHashTableV2", key_dtype=D.DT_INT64, value_dtype=D.DT_FLOAT, shared_name="t")
    insert = g.op("LookupTableInsertV2", table, keys, values)
    with g.after(insert):
        size = g.op("LookupTableSizeV2", table)
        remove = g.op("LookupTableRemoveV2", table, gone)
    with g.after(remove, size):
        return [size, g.op("LookupTableFindV2", table, queries, default), g.op("LookupTableSizeV2", table)]


def mutable_table_import(g: Any, keys: Any, values: Any, queries: Any, default: Any) -> list:
    table = g.op("MutableHashTableV2", key_dtype=D.DT_STRING, value_dtype=D.DT_FLOAT, shared_name="t")
    imported = g.op("LookupTableImportV2", table, keys, values)
    with g.after(imported):
        return [g.op("LookupTableFindV2", table, queries, default), g.op("LookupTableSizeV2", table)]


def tensor_table(g: Any, keys: Any, values: Any, queries: Any, default: Any) -> list:
    table = g.op("MutableHashTableOfTensorsV2", key_dtype=D.DT_INT64, value_dtype=D.DT_FLOAT, value_shape=[2],
                 shared_name="t")
    insert = g.op("LookupTableInsertV2", table, keys, values)
    with g.after(insert):
        return [g.op("LookupTableFindV2", table, queries, default), g.op("LookupTableSizeV2", table)]


def dense_table(g: Any, empty: Any, deleted: Any, keys: Any, values: Any, gone: Any, queries: Any,
                default: Any) -> list:
    table = g.op("MutableDenseHashTableV2", empty, deleted, value_dtype=D.DT_FLOAT, shared_name="t")
    insert = g.op("LookupTableInsertV2", table, keys, values)
    with g.after(insert):
        remove = g.op("LookupTableRemoveV2", table, gone)
    with g.after(remove):
        return [g.op("LookupTableFindV2", table, queries, default), g.op("LookupTableSizeV2", table)]


def text_file_table(text: bytes) -> Any:
    """A table initialised from a text file holding ``text`` (written when the graph is built)."""
    def recipe(g: Any, queries: Any, default: Any) -> list:
        import tempfile
        from pathlib import Path

        path = Path(tempfile.mkdtemp(prefix="tfops-conformance-")) / "table.txt"
        path.write_bytes(text)
        return _text_file_table(g, str(path), queries, default)
    return recipe


def _text_file_table(g: Any, path: str, queries: Any, default: Any) -> list:
    table = g.op("HashTableV2", key_dtype=D.DT_STRING, value_dtype=D.DT_INT64, shared_name="t")
    init = g.op("InitializeTableFromTextFileV2", table, g.const(np.array(path.encode(), dtype=object)),
                key_index=0, value_index=1, delimiter="\t")
    with g.after(init):
        return [g.op("LookupTableFindV2", table, queries, default), g.op("LookupTableSizeV2", table)]


def _strings(*items: str) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = [s.encode() for s in items]
    return out


def build(out: CaseList) -> None:
    i64 = np.int64
    out.add_graph("VarHandleOp", read_after_assign, [INIT], id="VarHandleOp/assign-read", compare="exact")
    out.add_graph("ReadVariableOp", read_uninitialized, [], id="ReadVariableOp/uninitialized")
    out.add_graph("AssignVariableOp", update("AssignVariableOp"), [INIT, np.full((3, 2), 7, F32)],
                  id="AssignVariableOp/reassign", compare="exact")
    out.add_graph("AssignVariableOp", update("AssignVariableOp", None, validate_shape=True),
                  [INIT, np.ones(3, F32)], id="AssignVariableOp/wrong-shape")
    for op in ("AssignAddVariableOp", "AssignSubVariableOp"):
        out.add_graph(op, update(op), [INIT, np.full((3, 2), 2.5, F32)], id=f"{op}/step", compare="exact")
        out.add_graph(op, update(op, None), [INIT, np.ones(3, F32)], id=f"{op}/wrong-shape")
    around = initialized_around_assign("VarHandleOp", "VarIsInitializedOp", "AssignVariableOp")
    out.add_graph("VarIsInitializedOp", around, [INIT], id="VarIsInitializedOp/before-after")
    out.add_graph("DestroyResourceOp", destroy, [INIT], id="DestroyResourceOp/then-uninitialized")
    out.add_graph("DisableCopyOnRead", disable_copy_on_read, [INIT], id="DisableCopyOnRead/read")
    out.add_graph("ResourceGather", gather("ResourceGather"), [INIT, np.array([2, 0, 2], np.int32)],
                  id="ResourceGather/rows", compare="exact")
    out.add_graph("ResourceGather", gather("ResourceGather"), [INIT, np.array([5], np.int32)],
                  id="ResourceGather/out-of-range")
    out.add_graph("ResourceGatherNd", gather("ResourceGatherNd"), [INIT, np.array([[2, 1], [0, 0]], np.int32)],
                  id="ResourceGatherNd/elements", compare="exact")
    updates = np.array([[1.5, -2.0], [4.0, 0.5], [-3.0, 8.0]], F32)
    for mode in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update"):
        op = f"ResourceScatter{mode}"
        out.add_graph(op, update(op), [INIT, np.array([2, 0, 2], np.int32), updates], id=f"{op}/repeated-index",
                      compare="exact" if mode != "Div" else "ew")
        out.add_graph(op, update(op), [INIT, np.array([5], np.int32), updates[:1]], id=f"{op}/out-of-range")
    for mode in ("Add", "Sub", "Update", "Min", "Max"):
        op = f"ResourceScatterNd{mode}"
        out.add_graph(op, update(op), [INIT, np.array([[2, 1], [0, 0]], np.int32), np.array([4.0, -1.0], F32)],
                      id=f"{op}/elements", compare="exact")
        out.add_graph(op, update(op), [INIT, np.array([[1], [2]], np.int32), updates[:2]], id=f"{op}/rows",
                      compare="exact")
    slices = [np.array([0, 1], np.int32), np.array([3, 2], np.int32), np.array([2, 1], np.int32)]
    out.add_graph("ResourceStridedSliceAssign", update("ResourceStridedSliceAssign"),
                  [INIT, *slices, np.array([[9.0], [8.0]], F32)], id="ResourceStridedSliceAssign/strided",
                  compare="exact")
    out.add_graph("ResourceStridedSliceAssign", update("ResourceStridedSliceAssign"),
                  [INIT, np.array([0], np.int32), np.array([2], np.int32), np.array([1], np.int32),
                   np.zeros((2, 3), F32)], id="ResourceStridedSliceAssign/cannot-broadcast")

    for op in ("VariableV2", "Variable"):
        out.add_graph(op, ref_assign(op), [INIT], id=f"{op}/assign", compare="exact")
    out.add_graph("Assign", ref_assign(), [INIT], id="Assign/value", compare="exact")
    for op in ("AssignAdd", "AssignSub"):
        out.add_graph(op, ref_update(op), [INIT, np.full((3, 2), 1.25, F32)], id=f"{op}/step", compare="exact")
    around = initialized_around_assign("VariableV2", "IsVariableInitialized", "Assign")
    out.add_graph("IsVariableInitialized", around, [INIT], id="IsVariableInitialized/before-after")

    out.add_graph("HashTableV2", hash_table,
                  [_strings("a", "b", "c"), np.array([1, 2, 3], i64), _strings("c", "z", "a"), i64(-1)],
                  id="HashTableV2/find", compare="exact")
    out.add_graph("InitializeTableV2", hash_table,
                  [_strings("a", "a"), np.array([1, 2], i64), _strings("a"), i64(-1)],
                  id="InitializeTableV2/duplicate-keys")
    out.add_graph("LookupTableFindV2", hash_table,
                  [np.array([4, 2], i64).astype(object).astype(bytes).astype(object), np.array([1, 2], i64),
                   _strings("2", "3"), i64(0)], id="LookupTableFindV2/missing-key", compare="exact")
    out.add_graph("LookupTableExportV2", hash_table_export, [np.array([7], i64), np.array([0.5], F32)],
                  id="LookupTableExportV2/one-entry", compare="exact")
    out.add_graph("MutableHashTableV2", mutable_table,
                  [np.array([1, 5, 9], i64), np.array([0.5, 1.5, 2.5], F32), np.array([5], i64),
                   np.array([9, 5, 4], i64), F32(-1.0)], id="MutableHashTableV2/insert-remove-find", compare="exact")
    for op in ("LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableSizeV2"):
        out.add_graph(op, mutable_table, [np.array([2, 4], i64), np.array([1.0, -1.0], F32), np.array([4, 6], i64),
                                          np.array([4, 2], i64), F32(9.0)], id=f"{op}/insert-remove", compare="exact")
    out.add_graph("LookupTableImportV2", mutable_table_import,
                  [_strings("x", "y"), np.array([3.0, 4.0], F32), _strings("y", "q"), F32(0.0)],
                  id="LookupTableImportV2/find", compare="exact")
    out.add_graph("MutableHashTableOfTensorsV2", tensor_table,
                  [np.array([3, 4], i64), np.array([[1.0, 2.0], [3.0, 4.0]], F32), np.array([4, 8], i64),
                   np.array([-1.0, -2.0], F32)], id="MutableHashTableOfTensorsV2/find", compare="exact")
    out.add_graph("MutableDenseHashTableV2", dense_table,
                  [i64(-1), i64(-2), np.array([10, 20, 30], i64), np.array([1.0, 2.0, 3.0], F32), np.array([20], i64),
                   np.array([30, 20, 40], i64), F32(0.0)], id="MutableDenseHashTableV2/insert-remove-find",
                  compare="exact")
    out.add_graph("InitializeTableFromTextFileV2", text_file_table(b"apple\t3\npear\t7\n"),
                  [_strings("pear", "fig"), i64(0)],
                  id="InitializeTableFromTextFileV2/find", compare="exact")
