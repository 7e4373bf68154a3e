"""Summary ops give TF's bytes; event files open in TensorBoard's own reader (graph and scalars)."""
from __future__ import annotations

import numpy as np
import pytest

from tfops_py import DT_FLOAT, DT_INT64, ClientSession, Operation, Output, Scope, errors, ops
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import as_output
from tfops_py.summary import FileWriter, Summary
from tests.tf_oracle import require_tf

VALUES = np.random.default_rng(0).normal(size=1000).astype(np.float32)


def _run(build):
    root = Scope.NewRootScope()
    return ClientSession(root).Run([build(root)])[0].item()


def test_scalar_summary_message():
    s = Summary.FromString(_run(lambda r: ops.ScalarSummary(r, ["loss", "acc"], [0.25, 0.5])))
    assert [(v.tag, v.simple_value) for v in s.value] == [("loss", 0.25), ("acc", 0.5)]


def test_histogram_counts_every_value_once():
    s = Summary.FromString(_run(lambda r: ops.HistogramSummary(r, "w", VALUES)))
    h = s.value[0].histo
    assert h.num == VALUES.size == sum(h.bucket)
    assert (h.min, h.max) == (float(VALUES.min()), float(VALUES.max()))


def test_errors_name_the_node():
    with pytest.raises(errors.InvalidArgumentError, match="tags and values are not the same shape"):
        _run(lambda r: ops.ScalarSummary(r, ["a", "b"], [1.0, 2.0, 3.0]))
    with pytest.raises(errors.InvalidArgumentError, match="HistogramSummary node .*Nan in summary histogram for: h"):
        _run(lambda r: ops.HistogramSummary(r, "h", [1.0, np.nan]))
    with pytest.raises(errors.InvalidArgumentError, match="Duplicate tag a"):
        _run(lambda r: ops.MergeSummary(r, [ops.ScalarSummary(r, "a", 1.0), ops.ScalarSummary(r, "a", 2.0)]))


@pytest.mark.tf
@pytest.mark.parametrize("case", ["scalar", "histogram", "histogram_empty", "histogram_int", "merge"])
def test_bytes_equal_tf(case):
    tf = require_tf()

    def ours(r):
        return {"scalar": lambda: ops.ScalarSummary(r, [["a", "b"]], [[1.5, -2.0]]),
                "histogram": lambda: ops.HistogramSummary(r, "h", VALUES),
                "histogram_empty": lambda: ops.HistogramSummary(r, "e", np.zeros(0, np.float32)),
                "histogram_int": lambda: ops.HistogramSummary(r, "i", np.arange(-50, 50, dtype=np.int32)),
                "merge": lambda: ops.MergeSummary(r, [ops.ScalarSummary(r, "a", 1.0),
                                                      ops.HistogramSummary(r, "h", VALUES[:10])])}[case]()

    raw = tf.raw_ops
    theirs = {"scalar": lambda: raw.ScalarSummary(tags=[["a", "b"]], values=[[1.5, -2.0]]),
              "histogram": lambda: raw.HistogramSummary(tag="h", values=VALUES),
              "histogram_empty": lambda: raw.HistogramSummary(tag="e", values=np.zeros(0, np.float32)),
              "histogram_int": lambda: raw.HistogramSummary(tag="i", values=np.arange(-50, 50, dtype=np.int32)),
              "merge": lambda: raw.MergeSummary(inputs=[raw.ScalarSummary(tags="a", values=1.0),
                                                        raw.HistogramSummary(tag="h", values=VALUES[:10])])}[case]()
    assert _run(ours) == theirs.numpy()


def test_event_file_opens_in_tensorboard(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT)
    loss = ops.Mean(root.WithOpName("loss"), ops.Square(root, x), [0])
    summaries = ops.MergeSummary(root, [ops.ScalarSummary(root, "loss", loss), ops.HistogramSummary(root, "x", x)])
    session = ClientSession(root)
    with FileWriter(tmp_path) as writer:
        writer.add_graph(root)
        for step in range(5):
            (s,) = session.Run({x: np.full(4, float(step), np.float32)}, [summaries])
            writer.add_summary(s, step)
        writer.add_scalar("direct", 3.0, step=7)
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"histograms": 0, "scalars": 0})
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(k, float(k * k)) for k in range(5)]
    assert [e.value for e in acc.Scalars("direct")] == [3.0]
    assert len(acc.Histograms("x")) == 5
    graph = acc.Graph()
    assert {"x", "loss"} <= {n.name for n in graph.node}


def _metadata(plugin: str = "scalars") -> bytes:
    from tfops_py.summary import SummaryMetadata

    meta = SummaryMetadata(display_name="shown")
    meta.plugin_data.plugin_name = plugin
    return meta.SerializeToString()


TENSORS = {
    "float": np.arange(6, dtype=np.float32).reshape(2, 3),
    "int_scalar": np.int64(-7),
    "string": np.array([b"a", b"bc"], dtype=object),
    "empty": np.zeros((0, 2), np.float64),
}


@pytest.mark.tf
@pytest.mark.parametrize("name", sorted(TENSORS))
def test_tensor_summary_bytes_equal_tf(name):
    tf = require_tf()
    value = TENSORS[name]
    ours = _run(lambda r: ops.TensorSummaryV2(r, "t", ops.Const(r, value), _metadata()))
    theirs = tf.raw_ops.TensorSummaryV2(tag="t", tensor=tf.constant(value.tolist() if value.dtype == object else value),
                                        serialized_summary_metadata=_metadata()).numpy()
    assert ours == theirs


def _op(root, op_type, *inputs, **attrs):
    """The writer ops have no class in TF's C++ API: a NodeBuilder node, as C++ code would add (literal
    inputs become Consts)."""
    outs = [v if isinstance(v, Output) else as_output(v) if as_output(v) is not None else ops.Const(root, v)
            for v in inputs]
    return Operation(add_node(root, get_op_def(op_type), outs, attrs))


def _writer_graph(root, logdir):
    writer = _op(root, "SummaryWriter", shared_name="train").output(0)
    create = _op(root, "CreateSummaryFileWriter", writer, str(logdir), np.int32(10), np.int32(1000), ".v2")
    step = ops.Placeholder(root, DT_INT64)
    x = ops.Placeholder(root, DT_FLOAT)
    writes = [_op(root, "WriteScalarSummary", writer, step, "loss", ops.Mean(root, x, [0])),
              _op(root, "WriteHistogramSummary", writer, step, "x", x),
              _op(root, "WriteSummary", writer, step, x, "x_tensor", _metadata("tensors"))]
    return writer, create, step, x, writes


def _events(logdir):
    from tensorboard.backend.event_processing import event_file_loader

    (path,) = logdir.glob("events.out.tfevents.*")
    events = []
    for e in event_file_loader.LegacyEventFileLoader(str(path)).Load():
        e.wall_time = 0
        events.append(e.SerializeToString())
    return events


def test_writer_ops_write_what_tensorboard_reads(tmp_path):
    event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    root = Scope.NewRootScope()
    writer, create, step, x, writes = _writer_graph(root, tmp_path)
    graph = _op(root, "WriteGraphSummary", writer, np.int64(0), root.ToGraphDef().SerializeToString())
    session = ClientSession(root)
    session.Run({}, [], [create])
    session.Run({}, [], [graph])
    for k in range(3):
        session.Run({step: np.int64(k), x: np.full(4, float(k), np.float32)}, [], writes)
    session.Run({}, [], [_op(root, "FlushSummaryWriter", writer), _op(root, "CloseSummaryWriter", writer)])
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"histograms": 0, "scalars": 0,
                                                                           "tensors": 0})
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(0, 0.0), (1, 1.0), (2, 2.0)]
    assert len(acc.Histograms("x")) == 3
    assert len(acc.Tensors("x_tensor")) == 3
    assert any(n.name.startswith("WriteScalarSummary") for n in acc.Graph().node)


def test_writing_before_create_or_after_close_is_not_found_as_in_tf(tmp_path):
    root = Scope.NewRootScope()
    writer = _op(root, "SummaryWriter", shared_name="w").output(0)
    write = _op(root, "WriteScalarSummary", writer, np.int64(0), "loss", 1.0)
    session = ClientSession(root)
    with pytest.raises(errors.NotFoundError, match=r"Container localhost does not exist. \(Could not find resource: "
                                                   r"localhost/w\)"):
        session.Run({}, [], [write])
    session.Run({}, [], [_op(root, "CreateSummaryFileWriter", writer, str(tmp_path), np.int32(1), np.int32(1), "")])
    session.Run({}, [], [write])
    session.Run({}, [], [_op(root, "CloseSummaryWriter", writer)])
    with pytest.raises(errors.NotFoundError, match="localhost/w"):  # TF: "Resource localhost/w/... does not exist"
        session.Run({}, [], [write])


@pytest.mark.tf
def test_writer_ops_events_equal_tf(tmp_path):
    tf = require_tf()
    ours_dir, tf_dir = tmp_path / "ours", tmp_path / "tf"
    root = Scope.NewRootScope()
    writer, create, step, x, writes = _writer_graph(root, ours_dir)
    session = ClientSession(root)
    session.Run({}, [], [create])
    feeds = [(np.int64(k), VALUES[:7] * k) for k in range(3)]
    for k, v in feeds:
        session.Run({step: k, x: v}, [], writes)
    session.Run({}, [], [_op(root, "CloseSummaryWriter", writer)])

    raw = tf.raw_ops
    w = raw.SummaryWriter(shared_name="train_tf")
    raw.CreateSummaryFileWriter(writer=w, logdir=str(tf_dir), max_queue=10, flush_millis=1000, filename_suffix=".v2")
    for k, v in feeds:
        raw.WriteScalarSummary(writer=w, step=k, tag="loss", value=tf.reduce_mean(v))
        raw.WriteHistogramSummary(writer=w, step=k, tag="x", values=v)
        raw.WriteSummary(writer=w, step=k, tensor=v, tag="x_tensor", summary_metadata=_metadata("tensors"))
    raw.CloseSummaryWriter(writer=w)
    ours, theirs = _events(ours_dir), _events(tf_dir)
    assert b"brain.Event:2" in ours[0] and b"tfops_py.summary" in ours[0]  # TF names its own writer there
    assert ours[1:] == theirs[1:]
