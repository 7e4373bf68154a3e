"""The graph optimizer: each pass rewrites what it should, leaves results unchanged, and can be turned off.

Every test compares a plan built with the optimizer against one built without it (same session
options otherwise), on NumPy and on array_api_strict, and looks at the ops the optimized plan runs.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest

from tfops_py import DT_FLOAT, ClientSession, Operation, Scope, ops
from tfops_py.client import optimizer
from tfops_py.client.session_options import ConfigProto, GraphOptions, RewriterConfig, SessionOptions
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def

RNG = np.random.default_rng(3)
pytestmark = pytest.mark.skipif(not optimizer.enabled(), reason="TFOPS_OPTIMIZE=0 turns the optimizer off")
OFF = RewriterConfig.OFF


def _options(**rewrites) -> SessionOptions:
    return SessionOptions(config=ConfigProto(graph_options=GraphOptions(RewriterConfig(**rewrites))))


NO_OPTIMIZER = _options(disable_meta_optimizer=True)


def _run(root, feeds, fetches, backend="numpy", options=None):
    if options is not None:
        options.backend = backend
    sess = ClientSession(root, options if options is not None else backend, fetch_numpy=True)
    values = sess.Run(feeds, fetches)
    (plan,) = sess._plans.values()
    steps = collections.Counter(s.node.op for s in plan._steps if s.node is not None)
    return values, steps


def _same(root, feeds, fetches, backend="numpy", options=None, rtol=1e-5):
    """Run optimized and unoptimized; assert equal results; return the optimized plan's op counts."""
    got, steps = _run(root, feeds, fetches, backend, options)
    want, _ = _run(root, feeds, fetches, backend, NO_OPTIMIZER)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)
    return steps


def _placeholder(root, shape, name="x"):
    return ops.Placeholder(root.WithOpName(name), DT_FLOAT, ops.Placeholder.Shape(list(shape)))


def test_identities_and_pure_control_edges_removed(backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [3])
    w = ops.Identity(root, ops.Const(root, np.float32([1, 2, 3])))
    noop = ops.NoOp(root.WithControlDependencies(Operation(w.node())))
    y = ops.Identity(root.WithControlDependencies(noop), ops.Mul(root, ops.Snapshot(root, x), w))
    steps = _same(root, {x: np.float32([4, 5, 6])}, [y], backend)
    assert "Identity" not in steps and "Snapshot" not in steps and "NoOp" not in steps


def test_control_edges_from_fed_values_removed(backend):
    """A TF1 loop body's shape: its inputs are fed (the Switch outputs) and its constants hang on a pivot
    Identity of one by a control edge; nothing upstream of a feed runs, so the edges and the pivot go."""
    root = Scope.NewRootScope()
    switch = ops.Switch(root, _placeholder(root, [3]), ops.Const(root, True))
    pivot = ops.Identity(root, switch.output_true)
    scale = ops.Const(root.WithControlDependencies(Operation(pivot.node())), np.float32(2))
    y = ops.Mul(root, pivot, scale)
    steps = _same(root, {switch.output_true: np.float32([4, 5, 6])}, [y], backend)
    assert "Identity" not in steps and set(steps) <= {"Mul", "Const"}  # (Const is a step when kernels are checked)


def test_common_subexpressions_merged(backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [4])
    a, b = ops.Exp(root, x), ops.Exp(root, x)
    y = ops.AddV2(root, a, b)
    steps = _same(root, {x: RNG.standard_normal(4).astype(np.float32)}, [y, a, b], backend)
    assert steps["Exp"] == 1


def test_constant_chains_and_known_shapes_fold(backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [2, 3])
    c = ops.Rsqrt(root, ops.AddV2(root, ops.Const(root, np.float32([1, 2, 3])), np.float32(1e-3)))
    shape = ops.Shape(root, x)
    y = ops.Reshape(root, ops.Mul(root, x, c), shape)
    steps = _same(root, {x: RNG.standard_normal((2, 3)).astype(np.float32)}, [y, c], backend)
    assert set(steps) == {"Const", "Mul", "Reshape"}


def test_folding_respects_the_size_cap():
    root = Scope.NewRootScope()
    big = ops.Fill(root, [256, 1024], np.float32(1.5))  # 1 MiB from a few bytes of inputs
    y = ops.Exp(root, big)
    steps = _same(root, {}, [y], options=_options(max_folded_constant_bytes=1 << 10))
    assert steps["Fill"] == 1 and steps["Exp"] == 1
    steps = _same(root, {}, [y])
    assert set(steps) == {"Const"}


def test_kernel_errors_still_raised_by_run():
    from tfops_py.errors import InvalidArgumentError

    root = Scope.NewRootScope()
    bad = ops.GatherV2(root, ops.Const(root, np.arange(6, dtype=np.float32)), np.int32([10]), np.int32(0))
    with pytest.raises(InvalidArgumentError, match="10 is not in") as e:
        ClientSession(root).Run([bad])
    assert e.value.node_name == bad.node().name  # the user's node, not a folding artefact


def test_random_ops_are_not_folded():
    root = Scope.NewRootScope()
    pool = ops.FractionalAvgPool(root, ops.Const(root, np.zeros((1, 60, 60, 1), np.float32)), [1.0, 1.44, 1.44, 1.0])
    sess = ClientSession(root)
    runs = {tuple(sess.Run([pool.row_pooling_sequence])[0]) for _ in range(3)}
    assert len(runs) > 1  # TF marks FractionalAvgPool stateless; its seed attrs keep it out of folding


def test_arithmetic_identities(backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [2, 3])
    y = ops.Sub(root, ops.AddV2(root, ops.Mul(root, np.float32(1), x), np.float32(0)), np.zeros(3, np.float32))
    t = ops.Transpose(root, ops.Transpose(root, y, [1, 0]), [1, 0])
    r = ops.Reshape(root, ops.Reshape(root, t, [6]), [3, 2])
    steps = _same(root, {x: RNG.standard_normal((2, 3)).astype(np.float32)}, [r, t], backend)
    assert set(steps) <= {"Const", "Reshape"} and steps["Reshape"] == 1


def test_broadcasting_constant_is_not_an_identity(backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [3])
    y = ops.Mul(root, x, np.ones((2, 3), np.float32))  # grows x to [2, 3]
    steps = _same(root, {x: np.float32([1, 2, 3])}, [y], backend)
    assert steps["Mul"] == 1


def _conv_bn_graph(root, act=None, depthwise=False, use_bias=False, residual=False):
    x = _placeholder(root, [2, 8, 8, 3])
    if depthwise:
        y = ops.DepthwiseConv2dNative(root, x, RNG.standard_normal((3, 3, 3, 2)).astype(np.float32),
                                      [1, 1, 1, 1], "SAME")
        c = 6
    else:
        y = ops.Conv2D(root, x, RNG.standard_normal((3, 3, 3, 5)).astype(np.float32), [1, 1, 1, 1], "SAME")
        c = 5
    if use_bias:
        y = ops.BiasAdd(root, y, RNG.standard_normal(c).astype(np.float32))
    gamma, beta = RNG.random(c).astype(np.float32) + 0.5, RNG.standard_normal(c).astype(np.float32)
    mean, var = RNG.standard_normal(c).astype(np.float32), RNG.random(c).astype(np.float32) + 0.1
    scale = ops.Mul(root, ops.Rsqrt(root, ops.AddV2(root, var, np.float32(1e-3))), gamma)  # Keras's form
    y = ops.AddV2(root, ops.Mul(root, y, ops.Reshape(root, scale, [1, 1, 1, c])),
                  ops.Sub(root, beta, ops.Mul(root, mean, scale)))
    if residual:
        y = ops.AddV2(root, y, _placeholder(root, [2, 8, 8, c], "skip"))
    if act == "swish":
        y = ops.Mul(root, y, ops.Sigmoid(root, y))
    elif act is not None:
        y = getattr(ops, act)(root, y)
    return x, y


@pytest.mark.parametrize("act", [None, "Relu", "Relu6", "Elu", "Tanh", "Sigmoid", "swish"])
@pytest.mark.parametrize("depthwise", [False, True])
def test_batch_norm_arithmetic_folds_and_fuses(act, depthwise, backend):
    root = Scope.NewRootScope()
    x, y = _conv_bn_graph(root, act, depthwise, use_bias=not depthwise)
    steps = _same(root, {x: RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)}, [y], backend)
    fused = "_FusedDepthwiseConv2dNative" if depthwise else "_FusedConv2D"
    assert set(steps) == {"Const", fused}


def test_residual_add_fuses(backend):
    root = Scope.NewRootScope()
    x, y = _conv_bn_graph(root, "Relu", residual=True)
    skip = root.graph().find_node("skip")
    feeds = {x: RNG.standard_normal((2, 8, 8, 3)).astype(np.float32),
             Operation(skip): RNG.standard_normal((2, 8, 8, 5)).astype(np.float32)}
    steps = _same(root, feeds, [y], backend)
    assert set(steps) == {"Const", "_FusedConv2D"}


def test_fused_batch_norm_and_matmul_fold(backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [2, 6, 6, 3])
    conv = ops.Conv2D(root, x, RNG.standard_normal((1, 1, 3, 4)).astype(np.float32), [1, 1, 1, 1], "VALID")
    params = [RNG.random(4).astype(np.float32) + 0.5 for _ in range(4)]
    bn = ops.FusedBatchNormV3(root, conv, *params, epsilon=1e-3, is_training=False)
    h = ops.Relu(root, bn.y)
    m = _placeholder(root, [3, 4], "m")
    dense = ops.LeakyRelu(root, ops.BiasAdd(root, ops.MatMul(root, m, RNG.standard_normal((5, 4)).astype(
        np.float32), transpose_b=True), RNG.standard_normal(5).astype(np.float32)), alpha=0.1)
    feeds = {x: RNG.standard_normal((2, 6, 6, 3)).astype(np.float32), m: RNG.standard_normal((3, 4)).astype(
        np.float32)}
    steps = _same(root, feeds, [h, dense], backend)
    assert set(steps) == {"Const", "_FusedConv2D", "_FusedMatMul"}


def test_fetched_intermediates_stop_fusion(backend):
    root = Scope.NewRootScope()
    x, y = _conv_bn_graph(root, None, use_bias=True)
    r = ops.Relu(root, y)
    steps = _same(root, {x: RNG.standard_normal((2, 8, 8, 3)).astype(np.float32)}, [r, y], backend)
    assert steps["_FusedConv2D"] == 1 and steps["Relu"] == 1


@pytest.mark.parametrize("name,kept", [("dependency_optimization", "Identity"),
                                       ("common_subgraph_elimination", "Exp"),
                                       ("constant_folding", "Rsqrt"),
                                       ("arithmetic_optimization", "Transpose"),
                                       ("remapping", "Conv2D")])
def test_each_pass_can_be_turned_off(name, kept):
    root = Scope.NewRootScope()
    x = _placeholder(root, [1, 4, 4, 2])
    e = ops.AddV2(root, ops.Exp(root, x), ops.Exp(root, x))
    t = ops.Transpose(root, ops.Transpose(root, ops.Identity(root, e), [0, 2, 1, 3]), [0, 2, 1, 3])
    w = ops.Mul(root, RNG.standard_normal((1, 1, 2, 2)).astype(np.float32),
                ops.Rsqrt(root, np.float32([4, 9])))
    y = ops.Relu(root, ops.BiasAdd(root, ops.Conv2D(root, t, w, [1, 1, 1, 1], "SAME"), np.float32([1, -1])))
    feeds = {x: RNG.standard_normal((1, 4, 4, 2)).astype(np.float32)}
    on = _same(root, feeds, [y])
    off = _same(root, feeds, [y], options=_options(**{name: OFF}))
    assert on[kept] < off[kept]


def test_thread_budget_option():
    """intra_op_parallelism_threads sets the budget; BLAS runs on one thread while a plan with BLAS ops
    runs, and gets its thread count back afterwards."""
    from tfops_py.kernels import _parallel

    seen = []
    root = Scope.NewRootScope()
    x = _placeholder(root, [2, 2])
    y = ops.Exp(root, ops.MatMul(root, x, x))
    sess = ClientSession(root, SessionOptions(config=ConfigProto(intra_op_parallelism_threads=1)))
    feed = {x: np.eye(2, dtype=np.float32)}
    sess.Run(feed, [y])
    (plan,) = sess._plans.values()
    step = plan._steps[-1]
    inner = step.fn
    step.fn = lambda ctx, v: (seen.append((_parallel.threads(), _parallel.blas_threads())), inner(ctx, v))[1]
    before = _parallel.blas_threads()
    sess.Run(feed, [y])
    assert seen[0][0] == 1 and all(n == 1 for n in seen[0][1])
    assert _parallel.blas_threads() == before


def test_users_graph_is_not_changed():
    root = Scope.NewRootScope()
    x, y = _conv_bn_graph(root, "Relu", use_bias=True)
    graph = root.graph()
    before = [(n.name, n.op, [i.name() for i in n.inputs], dict(n.attrs)) for n in graph.nodes()]
    ClientSession(root).Run({x: np.zeros((2, 8, 8, 3), np.float32)}, [y])
    after = [(n.name, n.op, [i.name() for i in n.inputs], dict(n.attrs)) for n in graph.nodes()]
    assert [b[:3] for b in before] == [a[:3] for a in after]
    assert all(b[3].keys() == a[3].keys() for b, a in zip(before, after))


def test_fused_ops_written_by_tf_run_unchanged():
    """A graph that already holds TF's fused op (as some saved graphs do) runs as is."""
    root = Scope.NewRootScope()
    x = _placeholder(root, [1, 5, 5, 2])
    f = ops.Const(root, RNG.standard_normal((3, 3, 2, 4)).astype(np.float32))
    node = add_node(root.WithOpName("fused"), get_op_def("_FusedConv2D"), [x.output, f, [ops.Const(root, np.ones(4,
                    np.float32))], []], dict(strides=[1, 1, 1, 1], padding="SAME", fused_ops=["BiasAdd", "Relu"],
                                             num_args=1))
    from tfops_py.framework.operation import Output

    steps = _same(root, {x: RNG.standard_normal((1, 5, 5, 2)).astype(np.float32)}, [Output(node, 0)])
    assert steps["_FusedConv2D"] == 1


@pytest.mark.tf
def test_tensorflow_config_proto_is_accepted():
    from tests import tf_oracle

    tf = tf_oracle.require_tf()
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=1)
    config.graph_options.rewrite_options.remapping = RewriterConfig.OFF
    root = Scope.NewRootScope()
    x, y = _conv_bn_graph(root, "Relu", use_bias=True)
    steps = _same(root, {x: np.ones((2, 8, 8, 3), np.float32)}, [y], options=SessionOptions(config=config))
    assert "Conv2D" in steps and "_FusedConv2D" not in steps


@pytest.mark.parametrize("depthwise", [False, True])
def test_zero_pad_becomes_explicit_padding(depthwise, backend):
    root = Scope.NewRootScope()
    x = _placeholder(root, [1, 7, 7, 3])
    padded = ops.Pad(root, x, np.int32([[0, 0], [1, 2], [0, 1], [0, 0]]))
    if depthwise:
        y = ops.DepthwiseConv2dNative(root, padded, RNG.standard_normal((3, 3, 3, 2)).astype(np.float32),
                                      [1, 2, 2, 1], "VALID")
    else:
        y = ops.Conv2D(root, padded, RNG.standard_normal((3, 3, 3, 4)).astype(np.float32), [1, 2, 2, 1], "VALID")
    steps = _same(root, {x: RNG.standard_normal((1, 7, 7, 3)).astype(np.float32)}, [y], backend)
    assert "Pad" not in steps


@pytest.mark.parametrize("act", [None, "Relu", "Relu6", "Elu"])
def test_per_channel_affine_and_activation_become_one_batch_norm(act, backend):
    """DenseNet's pre-activation batch norm (after a concatenation, so no product absorbs it)."""
    root = Scope.NewRootScope()
    a, b = _placeholder(root, [2, 5, 5, 3], "a"), _placeholder(root, [2, 5, 5, 2], "b")
    x = ops.Concat(root, [a, b], 3)
    y = ops.AddV2(root, ops.Mul(root, x, RNG.random(5).astype(np.float32) + 0.5), RNG.standard_normal(5).astype(
        np.float32))
    if act:
        y = getattr(ops, act)(root, y)
    feeds = {a: RNG.standard_normal((2, 5, 5, 3)).astype(np.float32),
             b: RNG.standard_normal((2, 5, 5, 2)).astype(np.float32)}
    steps = _same(root, feeds, [y], backend)
    assert set(steps) == {"Const", "ConcatV2", "_FusedBatchNormEx"}
