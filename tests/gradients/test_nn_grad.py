"""NN op gradients (nn_grad.py): finite differences and tf.GradientTape on the same computations.

TF's CPU kernels lack NCHW for Conv2D, DepthwiseConv2dNative and the pools, so the TF
side of those cases runs NHWC between transposes (the gradient is the same function).
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.gradients.harness import GradCase, case_tests
from tests.tf_oracle import require_tf
from tfops_py import DT_DOUBLE, DT_FLOAT, ClientSession, Scope, ops
from tfops_py.errors import UnimplementedError
from tfops_py.gradients import AddSymbolicGradients

_rng = np.random.default_rng(5)


def r(*shape: int, lo: float = -1.0, hi: float = 1.0, dtype=np.float64) -> np.ndarray:
    return _rng.uniform(lo, hi, size=shape).astype(dtype)


def away(*shape: int, gap: float = 0.1) -> np.ndarray:
    """Values in [-1, 1] at least ``gap`` from 0 (kinks of Relu-like functions)."""
    return np.sign(r(*shape)) * r(*shape, lo=gap, hi=1.0)


def distinct(*shape: int) -> np.ndarray:
    """A permutation of evenly spaced values: no ties for max pooling."""
    n = int(np.prod(shape))
    return (_rng.permutation(n) / n - 0.5).reshape(shape)


def _labels(*shape: int) -> np.ndarray:
    """Rows summing to 1: TF's logits gradient (softmax - labels) is the derivative only for those."""
    p = r(*shape, lo=0.1, hi=1.0)
    return p / p.sum(-1, keepdims=True)


def case(id_: str, build, tf_fn, *inputs: np.ndarray, **kw) -> GradCase:
    return GradCase(id_, build, tf_fn, tuple(inputs), **kw)


def nchw(tf, fn, *tensors):
    """Run an NHWC-only TF op on NCHW tensors (transposes in and out)."""
    out = fn(*[tf.transpose(t, [0, 2, 3, 1]) for t in tensors])
    return tf.transpose(out, [0, 3, 1, 2])


def activation(op_class, tf_name: str, x: np.ndarray, **attrs) -> GradCase:
    return case(tf_name, lambda s, a: op_class(s, a, **attrs),
                lambda tf, a: getattr(tf.raw_ops, tf_name)(features=a, **attrs), x)


def conv2d(id_: str, x, w, strides, padding, fmt="NHWC", dilations=(1, 1, 1, 1)) -> GradCase:
    tf_strides = strides if fmt == "NHWC" else [strides[0], strides[2], strides[3], strides[1]]
    tf_dil = list(dilations) if fmt == "NHWC" else [dilations[0], dilations[2], dilations[3], dilations[1]]

    def tf_fn(tf, a, b):
        conv = lambda t: tf.raw_ops.Conv2D(input=t, filter=b, strides=tf_strides, padding=padding,
                                           dilations=tf_dil)
        return conv(a) if fmt == "NHWC" else nchw(tf, conv, a)

    return case(id_, lambda s, a, b: ops.Conv2D(s, a, b, strides, padding, data_format=fmt, dilations=list(dilations)),
                tf_fn, x, w)


def depthwise(id_: str, x, w, strides, padding, fmt="NHWC") -> GradCase:
    tf_strides = strides if fmt == "NHWC" else [strides[0], strides[2], strides[3], strides[1]]

    def tf_fn(tf, a, b):
        conv = lambda t: tf.raw_ops.DepthwiseConv2dNative(input=t, filter=b, strides=tf_strides, padding=padding)
        return conv(a) if fmt == "NHWC" else nchw(tf, conv, a)

    return case(id_, lambda s, a, b: ops.DepthwiseConv2dNative(s, a, b, strides, padding, data_format=fmt),
                tf_fn, x, w)


def pool(op_class, tf_name: str, id_: str, x, ksize, strides, padding, fmt="NHWC") -> GradCase:
    perm = lambda v: v if fmt == "NHWC" else [v[0], v[2], v[3], v[1]]
    arg = "value" if tf_name == "AvgPool" else "input"

    def tf_fn(tf, a):
        f = lambda t: getattr(tf.raw_ops, tf_name)(**{arg: t}, ksize=perm(ksize), strides=perm(strides),
                                                   padding=padding)
        return f(a) if fmt == "NHWC" else nchw(tf, f, a)

    return case(id_, lambda s, a: op_class(s, a, ksize, strides, padding, data_format=fmt), tf_fn, x)


_BN = {"FusedBatchNorm": ops.FusedBatchNorm, "FusedBatchNormV2": ops.FusedBatchNormV2,
       "FusedBatchNormV3": ops.FusedBatchNormV3}


def batch_norm(version: str, training: bool, fmt: str) -> GradCase:
    shape = (2, 3, 2, 3) if fmt == "NHWC" else (2, 3, 3, 2)
    c = 3
    x = r(*shape, dtype=np.float32)
    scale, offset = r(c, lo=0.5, hi=1.5, dtype=np.float32), r(c, dtype=np.float32)
    mean = np.zeros(0, np.float32) if training else r(c, dtype=np.float32)
    var = np.zeros(0, np.float32) if training else r(c, lo=0.5, hi=1.5, dtype=np.float32)
    attrs = dict(epsilon=0.001, data_format=fmt, is_training=training)
    build = lambda s, a, sc, of: _BN[version](s, a, sc, of, mean, var, **attrs).y
    tf_fn = lambda tf, a, sc, of: getattr(tf.raw_ops, version)(x=a, scale=sc, offset=of, mean=mean, variance=var,
                                                               **attrs)[0]
    return case(f"{version}_{'training' if training else 'inference'}_{fmt}", build, tf_fn, x, scale, offset,
                tol=2e-2, delta=1e-2, tf_rtol=1e-4, tf_atol=1e-4)


def fractional(op_name: str, overlapping: bool) -> GradCase:
    attrs = dict(pooling_ratio=[1.0, 1.44, 1.73, 1.0], pseudo_random=True, overlapping=overlapping,
                 deterministic=True, seed=1, seed2=2)
    op_class = getattr(ops, op_name)
    return case(f"{op_name}_{'overlapping' if overlapping else 'disjoint'}",
                lambda s, a: op_class(s, a, **attrs).output,
                lambda tf, a: getattr(tf.raw_ops, op_name)(value=a, **attrs)[0], distinct(1, 5, 6, 2))


CASES = [
    activation(ops.Relu, "Relu", away(2, 3)),
    activation(ops.Relu6, "Relu6", 4 * away(2, 4)),
    activation(ops.LeakyRelu, "LeakyRelu", away(2, 3), alpha=0.3),
    activation(ops.Elu, "Elu", away(2, 3)),
    activation(ops.Selu, "Selu", away(2, 3)),
    activation(ops.Softplus, "Softplus", r(2, 3)),
    activation(ops.Softsign, "Softsign", r(2, 3)),
    case("Softmax", lambda s, a: ops.Softmax(s, a), lambda tf, a: tf.raw_ops.Softmax(logits=a), r(2, 4)),
    case("Softmax_rank3", lambda s, a: ops.Softmax(s, a), lambda tf, a: tf.raw_ops.Softmax(logits=a), r(2, 2, 3)),
    case("LogSoftmax", lambda s, a: ops.LogSoftmax(s, a), lambda tf, a: tf.raw_ops.LogSoftmax(logits=a), r(3, 4)),
    case("SoftmaxCrossEntropyWithLogits", lambda s, a, b: ops.SoftmaxCrossEntropyWithLogits(s, a, b).loss,
         lambda tf, a, b: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=a, labels=b)[0],
         r(2, 3), _labels(2, 3)),
    case("LeakyReluGrad", lambda s, g, f: ops.internal.LeakyReluGrad(s, g, f, alpha=0.2),
         lambda tf, g, f: tf.raw_ops.LeakyReluGrad(gradients=g, features=f, alpha=0.2), r(2, 3), away(2, 3)),
    case("L2Loss", lambda s, a: ops.L2Loss(s, a), lambda tf, a: tf.raw_ops.L2Loss(t=a), r(2, 3)),
    case("BiasAdd_NHWC", lambda s, a, b: ops.BiasAdd(s, a, b),
         lambda tf, a, b: tf.raw_ops.BiasAdd(value=a, bias=b), r(2, 2, 3), r(3)),
    case("BiasAdd_NCHW", lambda s, a, b: ops.BiasAdd(s, a, b, data_format="NCHW"),
         lambda tf, a, b: tf.raw_ops.BiasAdd(value=a, bias=b, data_format="NCHW"), r(2, 3, 2, 2), r(3)),
    case("LRN", lambda s, a: ops.LRN(s, a, depth_radius=2, bias=1.5, alpha=0.3, beta=0.6),
         lambda tf, a: tf.raw_ops.LRN(input=a, depth_radius=2, bias=1.5, alpha=0.3, beta=0.6),
         r(1, 2, 2, 5, dtype=np.float32), tol=1e-2, delta=1e-2, tf_rtol=1e-4, tf_atol=1e-5),
    conv2d("Conv2D_SAME", r(1, 4, 4, 2), r(3, 3, 2, 3), [1, 1, 1, 1], "SAME"),
    conv2d("Conv2D_VALID_stride2", r(2, 5, 5, 2), r(2, 2, 2, 2), [1, 2, 2, 1], "VALID"),
    conv2d("Conv2D_NCHW", r(1, 2, 5, 5), r(2, 2, 2, 2), [1, 1, 2, 2], "SAME", "NCHW"),
    # TF's CPU Conv2DBackpropInput refuses dilations > 1: finite differences only
    GradCase("Conv2D_NCHW_dilated", lambda s, a, b: ops.Conv2D(s, a, b, [1, 1, 1, 1], "SAME", data_format="NCHW",
                                                                dilations=[1, 1, 2, 2]),
             None, (r(1, 2, 5, 5), r(2, 2, 2, 2))),
    case("Conv2DBackpropInput", lambda s, w, dy: ops.Conv2DBackpropInput(s, [1, 4, 4, 2], w, dy, [1, 2, 2, 1], "SAME"),
         lambda tf, w, dy: tf.raw_ops.Conv2DBackpropInput(input_sizes=[1, 4, 4, 2], filter=w, out_backprop=dy,
                                                          strides=[1, 2, 2, 1], padding="SAME"),
         r(2, 2, 2, 3), r(1, 2, 2, 3)),
    depthwise("DepthwiseConv2dNative_SAME", r(1, 4, 4, 2), r(3, 3, 2, 2), [1, 1, 1, 1], "SAME"),
    depthwise("DepthwiseConv2dNative_VALID_stride2", r(2, 5, 5, 3), r(2, 2, 3, 1), [1, 2, 2, 1], "VALID"),
    depthwise("DepthwiseConv2dNative_NCHW", r(1, 2, 4, 4), r(3, 3, 2, 2), [1, 1, 2, 2], "SAME", "NCHW"),
    pool(ops.MaxPool, "MaxPool", "MaxPool_VALID", distinct(1, 4, 4, 2), [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
    pool(ops.MaxPool, "MaxPool", "MaxPool_SAME_overlap", distinct(2, 5, 5, 1), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    pool(ops.MaxPool, "MaxPool", "MaxPool_NCHW", distinct(1, 2, 4, 4), [1, 1, 2, 2], [1, 1, 2, 2], "VALID", "NCHW"),
    pool(ops.AvgPool, "AvgPool", "AvgPool_SAME", r(1, 5, 5, 2), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
    pool(ops.AvgPool, "AvgPool", "AvgPool_NCHW", r(1, 2, 4, 4), [1, 1, 2, 2], [1, 1, 2, 2], "VALID", "NCHW"),
    case("MaxPoolV2", lambda s, a: ops.MaxPoolV2(s, a, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
         lambda tf, a: tf.raw_ops.MaxPoolV2(input=a, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
         distinct(1, 4, 4, 1)),
    case("MaxPool3D", lambda s, a: ops.MaxPool3D(s, a, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "VALID"),
         lambda tf, a: tf.raw_ops.MaxPool3D(input=a, ksize=[1, 2, 2, 2, 1], strides=[1, 2, 2, 2, 1], padding="VALID"),
         distinct(1, 2, 4, 4, 1).astype(np.float32), tol=1e-2, delta=1e-3),
    case("AvgPool3D", lambda s, a: ops.AvgPool3D(s, a, [1, 2, 2, 2, 1], [1, 1, 2, 2, 1], "SAME"),
         lambda tf, a: tf.raw_ops.AvgPool3D(input=a, ksize=[1, 2, 2, 2, 1], strides=[1, 1, 2, 2, 1], padding="SAME"),
         r(1, 2, 3, 3, 1, dtype=np.float32), tol=1e-2, delta=1e-2, tf_rtol=1e-5),
    *[batch_norm(v, t, f) for v in _BN for t in (True, False) for f in ("NHWC", "NCHW")],
    fractional("FractionalAvgPool", False), fractional("FractionalAvgPool", True),
    fractional("FractionalMaxPool", False), fractional("FractionalMaxPool", True),
]


test_gradient_matches_finite_differences, test_gradient_matches_tensorflow = case_tests(CASES)


def test_every_nn_registration_of_tf_cc_is_present():
    from tfops_py.gradients import registered_gradient_ops

    table = registered_gradient_ops()
    with_grad = ("Softmax SoftmaxCrossEntropyWithLogits LogSoftmax Relu Relu6 LeakyRelu LeakyReluGrad Elu Selu "
                 "L2Loss BiasAdd Conv2D MaxPool MaxPoolV2 MaxPool3D AvgPool AvgPool3D LRN Softplus Softsign "
                 "FractionalAvgPool FractionalMaxPool FusedBatchNormV3 Conv2DBackpropInput "
                 "DepthwiseConv2dNative").split()
    assert len(with_grad) == 25
    assert all(table.get(op) is True for op in with_grad)
    # beyond TF's C++ API: v1 and v2 batch norm (TF registers these in Python)
    assert table.get("FusedBatchNorm") is True and table.get("FusedBatchNormV2") is True


@pytest.mark.parametrize("version,grad_op", [("FusedBatchNorm", "FusedBatchNormGrad"),
                                             ("FusedBatchNormV2", "FusedBatchNormGradV2"),
                                             ("FusedBatchNormV3", "FusedBatchNormGradV3")])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_gradient_graph(version, grad_op, training, fmt):
    """The gradient op of each version, fed the saved statistics (training) or the population ones
    (inference, run channels-last between transposes), as TF's BaseFusedBatchNormGrad does."""
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope.WithOpName("x"), DT_FLOAT, shape=[2, 3, 4, 5])
    scale = ops.Const(scope.WithOpName("scale"), np.ones(3 if fmt == "NCHW" else 5, np.float32))
    offset = ops.Const(scope.WithOpName("offset"), np.zeros(3 if fmt == "NCHW" else 5, np.float32))
    n = 0 if training else (3 if fmt == "NCHW" else 5)
    mean = ops.Const(scope.WithOpName("mean"), np.zeros(n, np.float32))
    var = ops.Const(scope.WithOpName("var"), np.ones(n, np.float32))
    bn = getattr(ops, version)(scope.WithOpName("bn"), x, scale, offset, mean, var, data_format=fmt,
                               is_training=training, epsilon=0.01)
    dx, dscale, doffset = AddSymbolicGradients(scope, [bn.y], [x, scale, offset])
    g = dx.node() if training or fmt == "NHWC" else dx.node().inputs[0].node()
    assert g.op == grad_op and dscale.node() is g and doffset.node() is g
    assert g.attrs["epsilon"] == pytest.approx(0.01) and g.attrs["is_training"] is training
    assert g.attrs["data_format"] == (fmt if training else "NHWC")
    stats = [i.node().name for i in g.inputs[3:5]]
    assert stats == (["bn", "bn"] if training else ["mean", "var"])
    if version == "FusedBatchNormV3":
        assert g.inputs[5].node().name == "bn" and g.inputs[5].index() == 5
    if not training and fmt == "NCHW":
        assert dx.node().op == "Transpose" and g.inputs[1].node().op == "Transpose"


@pytest.mark.parametrize("op_name,grad_op", [("FractionalAvgPool", "FractionalAvgPoolGrad"),
                                             ("FractionalMaxPool", "FractionalMaxPoolGrad")])
def test_fractional_pool_gradient_uses_the_pooling_sequences(op_name, grad_op, backend):
    """Ours vs TF's own gradient op given our forward's row/col pooling sequences."""
    tf = require_tf()
    x_val = distinct(1, 6, 7, 2).astype(np.float64)
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope, DT_DOUBLE, shape=list(x_val.shape)).output
    pooled = getattr(ops, op_name)(scope, x, [1.0, 1.5, 1.7, 1.0], overlapping=True, pseudo_random=True,
                                   deterministic=True, seed=3, seed2=4)
    dy = ops.Placeholder(scope, x.type())
    (dx,) = AddSymbolicGradients(scope, [pooled.output], [x], [dy])
    g = dx.node()
    assert g.op == grad_op and g.attrs["overlapping"] is True
    assert [i.index() for i in g.inputs[-2:]] == [1, 2] and g.inputs[-1].node() is pooled.operation.node()
    if op_name == "FractionalAvgPool":
        shape = g.inputs[0].node()
        assert shape.op == "Shape" and shape.attrs["out_type"].name == "DT_INT64"
    sess = ClientSession(scope, backend=backend, fetch_numpy=True)
    try:
        out, rows, cols = sess.Run({x: x_val}, [pooled.output, pooled.row_pooling_sequence,
                                                pooled.col_pooling_sequence])
    except UnimplementedError as e:
        pytest.skip(f"waiting for kernels: {e}")
    dy_val = np.random.default_rng(0).uniform(-1, 1, out.shape)
    try:
        (got,) = sess.Run({x: x_val, dy: dy_val}, [dx])
    except UnimplementedError as e:
        pytest.skip(f"waiting for kernels: {e}")
    if op_name == "FractionalAvgPool":
        want = tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=x_val.shape, out_backprop=dy_val,
                                                row_pooling_sequence=rows, col_pooling_sequence=cols,
                                                overlapping=True)
    else:
        want = tf.raw_ops.FractionalMaxPoolGrad(orig_input=x_val, orig_output=out, out_backprop=dy_val,
                                                row_pooling_sequence=rows, col_pooling_sequence=cols,
                                                overlapping=True)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)


def test_depthwise_conv_gradient_graph():
    """Both backprops, with Shape(input) / Shape(filter) and every conv attr copied (TF's C++ gradient)."""
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope.WithOpName("x"), DT_FLOAT, shape=[1, 2, 6, 6]).output
    w = ops.Placeholder(scope.WithOpName("w"), DT_FLOAT, shape=[3, 3, 2, 2]).output
    y = ops.DepthwiseConv2dNative(scope.WithOpName("y"), x, w, [1, 1, 2, 2], "EXPLICIT", data_format="NCHW",
                                  dilations=[1, 1, 2, 1], explicit_paddings=[0, 0, 0, 0, 1, 2, 2, 1])
    dx, dw = AddSymbolicGradients(scope, [y], [x, w])
    gi, gf = dx.node(), dw.node()
    assert (gi.op, gf.op) == ("DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter")
    assert gi.inputs[0].node().op == "Shape" and gi.inputs[0].node().inputs[0] == x and gi.inputs[1] == w
    assert gf.inputs[0] == x and gf.inputs[1].node().op == "Shape" and gf.inputs[1].node().inputs[0] == w
    for g in (gi, gf):
        assert g.inputs[2].node().op == "OnesLike"
        for a in ("strides", "padding", "data_format", "dilations", "explicit_paddings"):
            assert g.attrs[a] == y.node().attrs[a], a


def test_every_registered_gradient_has_a_case():
    """The finite-difference/TF tables cover every gradient function, except those listed here."""
    from tests.control_flow import test_gradients as control_flow
    from tests.gradients import test_array_grad, test_math_grad
    from tests.gradients.harness import _build
    from tfops_py.gradients import registered_gradient_ops

    untested = {"RefIdentity": "needs a Ref(T) input that only a variable gives, and has no kernel",
                "QuantizeAndDequantize": "deprecated op: no class in TF 2.21's C++ API",
                # a resource handle cannot be finite-differenced: checked against TF in test_resource_grad.py
                "ReadVariableOp": "test_resource_grad.py", "ResourceGather": "test_resource_grad.py",
                **{op: "needs a Ref(T) input" for op in ("RefSwitch", "RefMerge", "RefEnter", "RefExit",
                                                         "RefNextIteration")},
                **{op: "differentiated as part of a loop: tests/control_flow/test_gradients.py's BuildWhileLoop tests"
                   for op in ("Enter", "Exit", "NextIteration")}}
    covered = set()
    for cases in (test_math_grad.CASES, test_array_grad.CASES, CASES, control_flow.CASES, control_flow.LIST_CASES):
        for c in cases:
            scope, _, _ = _build(c)
            covered |= {n.op for n in scope.graph().nodes()}
    with_fn = {op for op, has in registered_gradient_ops().items() if has}
    assert sorted(with_fn - covered) == sorted(untested)
