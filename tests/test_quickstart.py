"""The snippet of tf_cc_api.md section 4 and its follow-ups, ported line by line."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from tfops_py import DT_FLOAT, ClientSession, Scope, errors, ops


def build():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, ops.Placeholder.Shape([2, 2]))
    w = ops.Const(root.WithOpName("w"), [[1.0, 2.0], [3.0, 4.0]])
    y = ops.MatMul(root.WithOpName("y"), x, w, ops.MatMul.TransposeB(True))
    z = ops.Add(root, y, 1.0)
    return root, x, w, y, z


def test_snippet_names_attrs_and_result():
    root, x, w, y, z = build()
    assert [n.name for n in root.graph().nodes()] == ["x", "w", "y", "Const/Const", "Add"]
    assert root.ok()
    assert y.node().op == "MatMul"
    assert y.node().attrs["transpose_b"] is True and y.node().attrs["transpose_a"] is False
    assert y.node().attrs["T"] == DT_FLOAT
    session = ClientSession(root)
    (out,) = session.Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [z])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[4, 8], [3, 5]])


def test_extend_graph_after_run():
    root, x, w, y, z = build()
    session = ClientSession(root)
    session.Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [z])
    d = ops.Add(root, z, 1.0)
    (out,) = session.Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [d])
    np.testing.assert_array_equal(out, [[5, 9], [4, 6]])


def test_run_is_thread_safe():
    root, x, w, y, z = build()
    session = ClientSession(root)
    results, errors_seen = [], []

    def worker(k: float) -> None:
        try:
            for _ in range(50):
                (out,) = session.Run({x: [[k, 0.0], [0.0, k]]}, [z])
                results.append((k, out))
        except Exception as e:  # pragma: no cover - reported below
            errors_seen.append(e)

    threads = [threading.Thread(target=worker, args=(float(k),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors_seen
    for k, out in results:
        np.testing.assert_array_equal(out, np.array([[1, 3], [2, 4]], np.float32) * k + 1)


def test_unfed_placeholder_and_bad_feeds_name_the_placeholder():
    root, x, w, y, z = build()
    session = ClientSession(root)
    with pytest.raises(errors.InvalidArgumentError, match="placeholder tensor 'x'"):
        session.Run([z])
    with pytest.raises(errors.InvalidArgumentError, match=r"x:0.*shape \[2,2\]"):
        session.Run({x: [1.0, 2.0, 3.0]}, [z])
    with pytest.raises(errors.InvalidArgumentError, match="x"):
        session.Run({x: np.ones((2, 2), np.int32)}, [z])


def test_missing_kernels_are_reported_all_at_once():
    root = Scope.NewRootScope()
    a = ops.Const(root, [1.0, 2.0])
    b = ops.SegmentSumV2(root, a, [0, 1], 2)  # TF has no CPU kernel for the V2 segment ops either
    c = ops.SegmentMaxV2(root, b, [0, 1], 2)
    with pytest.raises(errors.UnimplementedError, match=r"SegmentMaxV2 \(numpy\), SegmentSumV2 \(numpy\)"):
        ClientSession(root).Run([c])


def test_only_needed_subgraph_runs():
    root = Scope.NewRootScope()
    a = ops.Const(root, [1.0, 2.0])
    ops.SegmentSumV2(root, a, [0, 1], 2)  # no kernel, but not needed
    (out,) = ClientSession(root).Run([a])
    np.testing.assert_array_equal(out, [1.0, 2.0])
