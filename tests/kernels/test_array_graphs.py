"""Array-op graphs as a TF user exports them (tried as a new user would): TF builds a TF1 graph, we import
its GraphDef and run it with TF's results — a dilated convolution lowered to SpaceToBatchND / Conv2D /
BatchToSpaceND, ``tf.boolean_mask`` and ``tf.where``, and ``tf.debugging.assert_*`` checks that pass, and
fail with TF's message."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.outcomes import core_message
from tests.tf_oracle import require_tf
from tfops_py import ClientSession, Scope
from tfops_py.errors import InvalidArgumentError
from tfops_py.graphdef import import_graph_def
from tfops_py.kernels.registry import find_kernel

pytestmark = pytest.mark.tf

_rng = np.random.default_rng(7)


def _export(build) -> tuple[bytes, list[str], list[str]]:
    """``build(tf)`` in a TF1 graph returns (placeholders, fetches); the GraphDef and their names."""
    tf = require_tf()
    graph = tf.Graph()
    with graph.as_default():
        feeds, fetches = build(tf)
    return graph.as_graph_def().SerializeToString(), [t.name for t in feeds], [t.name for t in fetches]


def _run_tf(graph_def: bytes, feeds: dict, fetches: list[str]) -> list[np.ndarray]:
    tf = require_tf()
    gd = tf.compat.v1.GraphDef.FromString(graph_def)
    with tf.Graph().as_default() as g:
        tf.graph_util.import_graph_def(gd, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run(fetches, feeds)


def _run_ours(graph_def: bytes, feeds: dict, fetches: list[str], backend: str = "numpy") -> list[np.ndarray]:
    root = Scope.NewRootScope()
    imported = import_graph_def(root, graph_def)
    session = ClientSession(root, backend=backend, fetch_numpy=True)
    return session.Run({imported[k]: v for k, v in feeds.items()}, [imported[f] for f in fetches])


def _atrous(tf):
    x = tf.compat.v1.placeholder(tf.float32, [2, 17, 15, 3], name="x")
    w = tf.constant(_rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

    def conv(inp, num_spatial_dims, padding):
        return tf.nn.conv2d(inp, w, strides=1, padding=padding)

    y = tf.nn.with_space_to_batch(x, dilation_rate=[2, 3], padding="SAME", op=conv, filter_shape=[3, 3])
    return [x], [tf.identity(y, name="y")]


def _masks(tf):
    x = tf.compat.v1.placeholder(tf.float32, [None, 4], name="x")
    positive = x > 0
    kept = tf.boolean_mask(x, positive, name="kept")
    rows = tf.boolean_mask(x, tf.reduce_max(x, axis=1) > 0, name="rows")
    coords = tf.where(positive, name="coords")
    chosen = tf.where(positive, x, -x, name="chosen")
    return [x], [kept, rows, coords, chosen]


def _asserts(tf):
    """The Assert ops ``tf.debugging`` emits, on conditions built without All/Any."""
    x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    checks = [tf.debugging.Assert(tf.reduce_min(x) > 0, ["x must be positive:", x, "rows", n], summarize=4),
              tf.debugging.Assert(tf.equal(tf.shape(x)[0], n), ["rows", tf.shape(x), n]),
              tf.debugging.check_numerics(x, "x is not finite").op]
    with tf.control_dependencies(checks):
        y = tf.identity(x * 2.0, name="y")
    return [x, n], [y]


def _debugging_asserts(tf):
    """``tf.debugging.assert_*`` as written (they reduce their conditions with All)."""
    x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="x")
    n = tf.compat.v1.placeholder(tf.int32, [], name="n")
    checks = [tf.debugging.assert_positive(x, message="x must be positive", summarize=4),
              tf.debugging.assert_equal(tf.shape(x)[0], n, message="rows"),
              tf.debugging.assert_rank(x, 2)]
    with tf.control_dependencies(checks):
        y = tf.identity(x * 2.0, name="y")
    return [x, n], [y]


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_dilated_convolution_graph_runs_as_in_tf(backend):
    graph_def, feeds, fetches = _export(_atrous)
    assert b"SpaceToBatchND" in graph_def and b"BatchToSpaceND" in graph_def
    x = _rng.standard_normal((2, 17, 15, 3)).astype(np.float32)
    (theirs,) = _run_tf(graph_def, {feeds[0]: x}, fetches)
    (ours,) = _run_ours(graph_def, {feeds[0]: x}, fetches, backend)
    assert ours.shape == theirs.shape == (2, 17, 15, 4)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_boolean_mask_and_where_graph_runs_as_in_tf(backend):
    graph_def, feeds, fetches = _export(_masks)
    x = _rng.standard_normal((6, 4)).astype(np.float32)
    x[2] = -1.0  # a row with nothing kept
    theirs = _run_tf(graph_def, {feeds[0]: x}, fetches)
    ours = _run_ours(graph_def, {feeds[0]: x}, fetches, backend)
    for name, a, b in zip(fetches, ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)


def _check_asserts(build, failing: dict) -> None:
    """The graph passes a good input as TF does, and fails on the two bad inputs and on ``failing`` with TF's
    message."""
    tf = require_tf()
    graph_def, feeds, fetches = _export(build)
    good = {feeds[0]: np.full((2, 3), 0.5, np.float32), feeds[1]: np.int32(2)}
    np.testing.assert_array_equal(_run_ours(graph_def, good, fetches)[0], _run_tf(graph_def, good, fetches)[0])
    for bad in ({feeds[0]: np.array([[1.0, -2.0, 3.0], [0.0, 5.0, 6.0]], np.float32), feeds[1]: np.int32(2)},
                {feeds[0]: np.ones((2, 3), np.float32), feeds[1]: np.int32(3)},
                {feeds[0]: failing["x"], feeds[1]: failing["n"]}):
        with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
            _run_tf(graph_def, bad, fetches)
        with pytest.raises(InvalidArgumentError) as ours:
            _run_ours(graph_def, bad, fetches)
        assert ours.value.message.strip() == core_message(theirs.value.message)


def test_asserts_pass_and_fail_with_tf_messages():
    _check_asserts(_asserts, {"x": np.array([[1.0, np.inf, 1.0]], np.float32), "n": np.int32(1)})  # check_numerics


@pytest.mark.skipif(find_kernel("All", "numpy") is None, reason="tf.debugging.assert_* reduce with All (math family)")
def test_debugging_assert_functions_pass_and_fail_with_tf_messages():
    _check_asserts(_debugging_asserts, {"x": np.array([[1.0, 0.0, 1.0]], np.float32), "n": np.int32(1)})  # zero
