"""The summary family's graph cases, written once for tfops_py and TF (recipes, see
tfops_py/conformance/graphs.py): summaries merged, and writer resources driven through their life
(create, write each kind, flush, close) and misused (a write before create).  Event files themselves
are compared with TF's in tests/summary (their wall times differ).  Imported only when cases are made.
"""
from __future__ import annotations

import tempfile
from typing import Any

import numpy as np

from tfops_py.conformance import CaseList

_GRAPH = b"\n\t\n\x01x\x12\x04NoOp"  # a GraphDef: one NoOp node named x


def _string(value: bytes) -> np.ndarray:
    return np.array(value, dtype=object)


def merge(g: Any, tags: Any, values: Any, tag: Any, histogram: Any) -> list:
    return [g.op("MergeSummary", [g.op("ScalarSummary", tags, values), g.op("HistogramSummary", tag, histogram)])]


def merge_duplicate(g: Any, tags: Any, values: Any) -> list:
    return [g.op("MergeSummary", [g.op("ScalarSummary", tags, values), g.op("ScalarSummary", tags, values)])]


def _writer(g: Any, name: str) -> Any:
    return g.op("SummaryWriter", shared_name=name)


def write_each_kind(g: Any, step: Any, value: Any, histogram: Any, metadata: Any) -> tuple[list, list]:
    """Create a writer, write every kind of summary, flush and close it; the step is fetched after."""
    writer = _writer(g, "conformance")
    logdir = g.const(_string(tempfile.mkdtemp(prefix="tfops-conformance-").encode()))
    create = g.op("CreateSummaryFileWriter", writer, logdir, g.const(np.int32(2)), g.const(np.int32(1000)),
                  g.const(_string(b".v2")))
    with g.after(create):
        writes = [g.op("WriteScalarSummary", writer, step, g.const(_string(b"loss")), value),
                  g.op("WriteHistogramSummary", writer, step, g.const(_string(b"h")), histogram),
                  g.op("WriteSummary", writer, step, histogram, g.const(_string(b"t")), metadata),
                  g.op("WriteGraphSummary", writer, step, g.const(_string(_GRAPH))),
                  g.op("WriteRawProtoSummary", writer, step, g.op("ScalarSummary", g.const(_string(b"raw")), value))]
    with g.after(*writes):
        flush = g.op("FlushSummaryWriter", writer)
    with g.after(flush):
        close = g.op("CloseSummaryWriter", writer)
    with g.after(close):
        return [g.op("Identity", step)], [close]


def write_before_create(g: Any, step: Any, tag: Any, value: Any) -> list:
    write = g.op("WriteScalarSummary", _writer(g, "never_created"), step, tag, value)
    with g.after(write):
        return [g.op("Identity", step)]


def write_bad_graph(g: Any, step: Any, graph: Any) -> list:
    writer = _writer(g, "bad_graph")
    logdir = g.const(_string(tempfile.mkdtemp(prefix="tfops-conformance-").encode()))
    create = g.op("CreateSummaryFileWriter", writer, logdir, g.const(np.int32(2)), g.const(np.int32(1000)),
                  g.const(_string(b"")))
    with g.after(create):
        write = g.op("WriteGraphSummary", writer, step, graph)
    with g.after(write):
        return [g.op("Identity", step)]


def build(out: CaseList) -> None:
    tags = np.array([b"a", b"b"], dtype=object)
    values = np.array([1.5, -2.0], np.float32)
    histogram = np.linspace(-3, 5, 17, dtype=np.float32)
    out.add_graph("MergeSummary", merge, [tags, values, _string(b"h"), histogram], id="MergeSummary/scalars+histogram",
                  compare="exact")
    out.add_graph("MergeSummary", merge_duplicate, [tags, values], id="MergeSummary/duplicate-tag")
    for op in ("SummaryWriter", "CreateSummaryFileWriter", "WriteScalarSummary", "WriteHistogramSummary",
               "WriteSummary", "WriteGraphSummary", "WriteRawProtoSummary", "FlushSummaryWriter",
               "CloseSummaryWriter"):
        out.add_graph(op, write_each_kind, [np.int64(3), np.float32(0.25), histogram, _string(b"")],
                      id=f"{op}/create-write-flush-close", compare="exact")
    # (string inputs keep these cases on the backends that hold strings, as the writer kernels)
    out.add_graph("WriteScalarSummary", write_before_create, [np.int64(0), _string(b"loss"), np.float32(1.0)],
                  id="WriteScalarSummary/before-create")
    out.add_graph("WriteGraphSummary", write_bad_graph, [np.int64(0), _string(b"\x0a\x05no")],
                  id="WriteGraphSummary/bad-graphdef")
