"""Run with RunOptions/RunMetadata, the timeline writer, the summary table, callables and tensor names."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tfops_py import DT_FLOAT, ClientSession, Scope, ops
from tfops_py.client import optimizer
from tfops_py.client.callables import CallableOptions
from tfops_py.client.profiler import RunMetadata, RunOptions, op_type, summarize
from tfops_py.client.timeline import Timeline
from tfops_py.errors import DeadlineExceededError, InvalidArgumentError, NotFoundError

RNG = np.random.default_rng(5)


def _model():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, ops.Placeholder.Shape([2, 8, 8, 3]))
    y = ops.Relu(root.WithOpName("act"), ops.BiasAdd(root, ops.Conv2D(
        root, x, RNG.standard_normal((3, 3, 3, 4)).astype(np.float32), [1, 1, 1, 1], "SAME"), np.ones(4, np.float32)))
    z = ops.Softmax(root.WithOpName("out"), ops.Reshape(root, y, [2, -1]))
    return root, x, z


def test_traced_run_fills_step_stats_and_cost_graph():
    root, x, z = _model()
    sess = ClientSession(root)
    feed = {x: RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)}
    md = RunMetadata()
    (traced,) = sess.Run(RunOptions(trace_level=RunOptions.FULL_TRACE), feed, [z], None, run_metadata=md)
    np.testing.assert_array_equal(traced, sess.Run(feed, [z])[0])
    (dev,) = md.step_stats.dev_stats
    names = [s.node_name for s in dev.node_stats]
    assert "act" in names and "out" in names  # the fused conv took the activation's name, as TF's remapper
    fused = dev.node_stats[names.index("act")]
    assert op_type(fused) == ("_FusedConv2D" if optimizer.enabled() else "Relu")
    assert fused.all_end_rel_micros == fused.op_end_rel_micros >= 0
    assert fused.output[0].tensor_description.shape == [2, 8, 8, 4]
    assert fused.output[0].tensor_description.allocation_description.allocated_bytes == 2 * 8 * 8 * 4 * 4
    assert [n.name for n in md.partition_graphs] == names
    assert len(md.cost_graph.node) == len(names)
    starts = [s.all_start_micros for s in dev.node_stats]
    assert starts == sorted(starts)


def test_summary_and_timeline(tmp_path):
    root, x, z = _model()
    md = RunMetadata()
    ClientSession(root).Run(RunOptions(trace_level=RunOptions.FULL_TRACE), {x: np.ones((2, 8, 8, 3), np.float32)},
                            [z], [], md)
    table = summarize(md)
    assert table.splitlines()[0].split()[:2] == ["op", "type"] and "Softmax" in table and "total" in table
    path = Timeline(md.step_stats).save(str(tmp_path / "trace.json"), show_memory=True)
    trace = json.loads(open(path).read())
    events = trace["traceEvents"]
    ops_run = [e for e in events if e["ph"] == "X"]
    assert {e["name"] for e in ops_run} >= {"Softmax"}
    assert all(e["dur"] >= 0 and e["ts"] >= 0 and "name" in e["args"] for e in ops_run)
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in events)
    assert any(e["ph"] == "C" for e in events)


def test_timeout_in_ms():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_FLOAT)
    y = x
    for _ in range(200):
        y = ops.Exp(root, ops.Neg(root, y))
    sess = ClientSession(root)
    with pytest.raises(DeadlineExceededError):
        sess.Run(RunOptions(timeout_in_ms=1), {x: np.ones(1 << 18, np.float32)}, [y], [])
    assert sess.Run(RunOptions(timeout_in_ms=60_000), {x: np.float32(0)}, [y], [])[0].shape == ()


def test_callables_by_name_and_output():
    root, x, z = _model()
    sess = ClientSession(root)
    feed = RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)
    want = sess.Run({x: feed}, [z])[0]
    by_name = sess.MakeCallable(CallableOptions(feed=["x:0"], fetch=["out:0", "act"]))
    by_output = sess.MakeCallable(CallableOptions(feed=[x], fetch=[z], target=["out"]))
    got, act = sess.RunCallable(by_name, [feed])
    np.testing.assert_array_equal(got, want)
    assert act.shape == (2, 8, 8, 4)
    md = RunMetadata()
    traced = sess.MakeCallable(CallableOptions(feed=[x], fetch=[z], run_options=RunOptions(trace_level=1)))
    np.testing.assert_array_equal(sess.RunCallable(traced, [feed], run_metadata=md)[0], want)
    assert md.step_stats.dev_stats
    np.testing.assert_array_equal(sess.RunCallable(by_output, [feed])[0], want)
    with pytest.raises(InvalidArgumentError, match="Invalid number of feed values"):
        sess.RunCallable(by_output, [])
    sess.ReleaseCallable(by_output)
    with pytest.raises(InvalidArgumentError, match="No such callable handle"):
        sess.RunCallable(by_output, [feed])


def test_run_takes_tensor_names():
    root, x, z = _model()
    sess = ClientSession(root)
    feed = RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)
    np.testing.assert_array_equal(sess.Run({"x:0": feed}, ["out:0"])[0], sess.Run({x: feed}, [z])[0])
    with pytest.raises(NotFoundError):
        sess.Run({"x:0": feed}, ["nope:0"])
    with pytest.raises(InvalidArgumentError):
        sess.Run({"x:0": feed}, ["out:3"])
