"""The io family's golden cases: checkpoints written and read back, as small graphs written once for
tfops_py and TF (recipes, see tfops_py/conformance/graphs.py).  Each recipe writes under a fresh
temporary directory made when the graph is built.  Imported only when cases are made.
"""
from __future__ import annotations

import tempfile
from typing import Any

import numpy as np

from tfops_py.conformance import CaseList
from tfops_py.framework.dtypes import DataType

D = DataType


def _strings(*items: str) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = [s.encode() for s in items]
    return out


def _path(name: str) -> bytes:
    return f"{tempfile.mkdtemp(prefix='tfops-conformance-')}/{name}".encode()


def _prefix(g: Any, name: str) -> Any:
    return g.const(np.array(_path(name), dtype=object))


def save_restore(g: Any, names: Any, slices: Any, a: Any, b: Any, wanted: Any, wanted_slices: Any) -> list:
    """SaveV2 of two tensors, then RestoreV2 of ``wanted`` (in any order, slices included)."""
    prefix = _prefix(g, "ckpt")
    save = g.op("SaveV2", prefix, names, slices, [a, b])
    with g.after(save):
        return list(g.op("RestoreV2", prefix, wanted, wanted_slices, dtypes=[D.DT_FLOAT, D.DT_INT64]))


def restore_missing(g: Any, a: Any) -> list:
    prefix = _prefix(g, "ckpt")
    save = g.op("SaveV2", prefix, g.const(_strings("a")), g.const(_strings("")), [a])
    with g.after(save):
        return [g.op("RestoreV2", prefix, g.const(_strings("nope")), g.const(_strings("")), dtypes=[D.DT_FLOAT])]


def merge(g: Any, a: Any, b: Any) -> list:
    """Two single-tensor checkpoints merged into a third, read back."""
    paths = np.empty(2, dtype=object)
    paths[:] = [_path("one"), _path("two")]
    first, second = g.const(paths[0]), g.const(paths[1])
    merged = _prefix(g, "merged")
    empty = g.const(_strings(""))
    saves = [g.op("SaveV2", first, g.const(_strings("a")), empty, [a]),
             g.op("SaveV2", second, g.const(_strings("b")), empty, [b])]
    with g.after(*saves):
        joined = g.op("MergeV2Checkpoints", g.const(paths), merged, delete_old_dirs=True)
    with g.after(joined):
        return list(g.op("RestoreV2", merged, g.const(_strings("b", "a")), g.const(_strings("", "")),
                         dtypes=[D.DT_INT64, D.DT_FLOAT]))


def build(out: CaseList) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    b = np.array([7, -3, 2**40], np.int64)
    out.add_graph("SaveV2", save_restore, [_strings("a", "b"), _strings("", ""), a, b, _strings("a", "b"),
                                           _strings("", "")], id="SaveV2/round-trip", compare="exact")
    out.add_graph("RestoreV2", save_restore, [_strings("b", "a"), _strings("", ""), b.astype(np.float32),
                                              a.astype(np.int64), _strings("b", "a"), _strings("3 1,2", "3 4 0,2:-")],
                  id="RestoreV2/slice", compare="exact")
    out.add_graph("RestoreV2", restore_missing, [a], id="RestoreV2/missing-tensor")
    out.add_graph("MergeV2Checkpoints", merge, [a, b], id="MergeV2Checkpoints/two", compare="exact")
