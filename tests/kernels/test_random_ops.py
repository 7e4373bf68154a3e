"""The random family as a user meets it; the per-op conformance (golden and live) is in tests/conformance.

* Tried as a new user would: TF's weight initializers (TF1 ``glorot_uniform``/``he_normal``/
  ``truncated_normal`` initializers, their TF2 counterparts, Keras's ``GlorotUniform``), ``tf.random.normal``
  under a graph seed and ``tf.random.stateless_*`` calls, built in a TF graph, exported as a GraphDef and
  run here: the same bits as TF's session.
* A ported C++ program: ``ops::RandomNormal(scope, shape, DT_FLOAT, Seed(..).Seed2(..))`` run twice in one
  session continues its stream as TF's session does; a new session starts again.
* ``seed = seed2 = 0`` draws fresh seeds (TF is not deterministic there): distribution tests.
* The divergences that no TF case can cover (TF never returns).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from tests.tf_oracle import require_tf
from tfops_py import DT_DOUBLE, DT_FLOAT, DT_HALF, DT_INT64, ClientSession, Scope, errors, ops
from tfops_py.graphdef import import_graph_def


def _tf_graph_with_initializers(tf):
    """A TF graph of initializers and stateless calls; (graph, {name: tensor name})."""
    from tensorflow.python.ops import init_ops_v2

    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(1234)
        outs = {
            "glorot_v1": tf.compat.v1.glorot_uniform_initializer(seed=3)([5, 7]),
            "he_v1": tf.compat.v1.initializers.he_normal(seed=5)([3, 3, 2, 4]),
            "truncated_v1": tf.compat.v1.truncated_normal_initializer(stddev=0.02, seed=9)([33], dtype=tf.float64),
            "glorot_v2": init_ops_v2.GlorotUniform(seed=3)([5, 7]),
            "he_v2": init_ops_v2.he_normal(seed=5)([3, 3, 2, 4]),
            "truncated_v2": init_ops_v2.TruncatedNormal(stddev=0.02, seed=9)([33], dtype=tf.float64),
            "keras_glorot": tf.keras.initializers.GlorotUniform(seed=3)([5, 7]),
            "keras_he": tf.keras.initializers.HeNormal(seed=11)([4, 6]),
            "normal_graph_seed": tf.random.normal([17]),
            "uniform_graph_seed": tf.random.uniform([1025], dtype=tf.float16),
            "stateless_normal": tf.random.stateless_normal([3, 5], seed=[1, 2]),
            "stateless_int": tf.random.stateless_uniform([9], seed=[7, -3], minval=-5, maxval=100, dtype=tf.int64),
            "stateless_truncated": tf.random.stateless_truncated_normal([1025], seed=[4, 4], dtype=tf.float16),
            "stateless_poisson": tf.random.stateless_poisson([4, 3], seed=[2, 9], lam=[0.5, 12.0, 300.0]),
            # tf.random.stateless_gamma broadcasts its shapes with BroadcastArgs (no kernel here yet)
            "stateless_gamma": tf.raw_ops.StatelessRandomGammaV2(shape=[6, 2], seed=[3, 1], alpha=[0.7, 3.0]),
        }
        names = {k: tf.identity(v, name=k).name for k, v in outs.items()}
    return graph, names


@pytest.mark.tf
def test_initializers_exported_from_tf_give_tfs_bits() -> None:
    tf = require_tf()
    graph, names = _tf_graph_with_initializers(tf)
    with tf.compat.v1.Session(graph=graph) as sess:
        want = sess.run({k: graph.get_tensor_by_name(v) for k, v in names.items()})
    root = Scope.NewRootScope()
    imported = import_graph_def(root, graph.as_graph_def().SerializeToString())
    got = ClientSession(root).Run([imported[k] for k in names])
    for name, value in zip(names, got):
        assert value.dtype == want[name].dtype and value.shape == want[name].shape, name
        np.testing.assert_array_equal(value, want[name], err_msg=name, strict=True)


@pytest.mark.tf
def test_ported_cpp_random_normal_continues_its_stream_per_session() -> None:
    tf = require_tf()
    root = Scope.NewRootScope()
    x = ops.RandomNormal(root, [2, 3], DT_FLOAT, ops.RandomNormal.Seed(42).Seed2(7))
    session = ClientSession(root)
    first, second = session.Run([x])[0], session.Run([x])[0]
    (again,) = ClientSession(root).Run([x])

    graph = tf.Graph()
    with graph.as_default():
        t = tf.raw_ops.RandomStandardNormal(shape=[2, 3], dtype=tf.float32, seed=42, seed2=7)
    with tf.compat.v1.Session(graph=graph) as sess:
        want = [sess.run(t), sess.run(t)]
    np.testing.assert_array_equal(first, want[0], strict=True)
    np.testing.assert_array_equal(second, want[1], strict=True)
    np.testing.assert_array_equal(again, want[0], strict=True)


def _run(build) -> np.ndarray:
    root = Scope.NewRootScope()
    (out,) = ClientSession(root).Run([build(root)])
    return out


def test_unseeded_ops_draw_fresh_seeds_with_the_right_distribution() -> None:
    a = _run(lambda s: ops.RandomNormal(s, [4000], DT_DOUBLE))
    b = _run(lambda s: ops.RandomNormal(s, [4000], DT_DOUBLE))
    assert not np.array_equal(a, b)  # TF's seed = seed2 = 0: new seeds each time
    assert scipy.stats.kstest(a, "norm").pvalue > 1e-6
    u = _run(lambda s: ops.RandomUniform(s, [4000], DT_FLOAT))
    assert u.min() >= 0 and u.max() < 1 and scipy.stats.kstest(u, "uniform").pvalue > 1e-6
    t = _run(lambda s: ops.TruncatedNormal(s, [4000], DT_DOUBLE))
    assert np.abs(t).max() < 2 and scipy.stats.kstest(t, scipy.stats.truncnorm(-2, 2).cdf).pvalue > 1e-6


def test_poisson_counts_follow_the_rate() -> None:
    counts = _run(lambda s: ops.RandomPoissonV2(s, [4000], [3.0, 250.0], ops.RandomPoissonV2.Seed(1).Seed2(2)))
    assert counts.dtype == np.int64 and counts.shape == (4000, 2)
    for column, rate in enumerate((3.0, 250.0)):
        cdf = scipy.stats.poisson(rate).cdf
        # discrete: compare the empirical CDF at the integers around the mean
        grid = np.arange(int(rate - 3 * rate**0.5), int(rate + 3 * rate**0.5) + 1)
        empirical = (counts[:, column][:, None] <= grid).mean(axis=0)
        assert np.abs(empirical - cdf(grid)).max() < 0.035


# 1e5 is above float16's largest value, 65504: TF redraws every count that does not fit
@pytest.mark.parametrize("rate, dtype", [(float("nan"), DT_FLOAT), (float("inf"), DT_DOUBLE), (1e5, DT_HALF)])
def test_poisson_refuses_rates_tf_never_returns_for(rate: float, dtype) -> None:
    root = Scope.NewRootScope()
    attrs = ops.RandomPoissonV2.Seed(1).Seed2(2).Dtype(dtype)
    x = ops.RandomPoissonV2(root.WithOpName("poisson"), [3], [1.0, rate], attrs)
    with pytest.raises(errors.InvalidArgumentError, match=f"rate must be finite and at most .*; got {rate}") as info:
        ClientSession(root).Run([x])
    assert info.value.node_name == "poisson" and info.value.op_type == "RandomPoissonV2"


def test_rng_read_and_skip_reads_the_first_three_words_of_a_longer_state() -> None:
    """TF writes past its three-element output here (heap corruption); tfops_py reads three words."""
    from tfops_py.framework.node_builder import add_node
    from tfops_py.framework.op_def import get_op_def
    from tfops_py.framework.operation import Operation, Output

    root = Scope.NewRootScope()
    var = ops.VarHandleOp(root, DT_INT64, [5], shared_name="state")
    init = ops.AssignVariableOp(root, var, ops.Const(root, np.array([1, 2, 3, 4, 5], np.int64)))
    node = add_node(root, get_op_def("RngReadAndSkip"),
                    [var.resource, ops.Const(root, np.int32(1)), ops.Const(root, np.uint64(10))], {})
    assert node is not None
    read = ops.ReadVariableOp(root.WithControlDependencies([Operation(node)]), var, DT_INT64)
    session = ClientSession(root)
    session.Run([], [], [init.operation])
    before, after = session.Run([Output(node, 0), read.value])
    np.testing.assert_array_equal(before, [1, 2, 3])
    np.testing.assert_array_equal(after, [1 + 10 * 256, 2, 3, 4, 5])
