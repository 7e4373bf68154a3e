"""TF's fused ops (_FusedConv2D, _FusedDepthwiseConv2dNative, _FusedMatMul, _FusedBatchNormEx).

Each fused node is checked against the same computation spelt out with the standalone ops (on
NumPy and on array_api_strict), against TF's own kernels where TF's CPU build has them (live, by
running our graph exported as a GraphDef), and for TF's attr errors.
"""
from __future__ import annotations

import numpy as np
import pytest

from tfops_py import ClientSession, Scope, ops, to_graph_def
from tfops_py.errors import InvalidArgumentError, UnimplementedError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output
from tests import tf_oracle

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 9, 8, 4)).astype(np.float32)
F = RNG.standard_normal((3, 3, 4, 6)).astype(np.float32)
FD = RNG.standard_normal((3, 3, 4, 2)).astype(np.float32)
A = RNG.standard_normal((6, 7)).astype(np.float32)
W = RNG.standard_normal((7, 6)).astype(np.float32)
BIAS = RNG.standard_normal(6).astype(np.float32)
BN = [RNG.standard_normal(6).astype(np.float32) for _ in range(3)] + [RNG.random(6).astype(np.float32) + 0.5]
ACTIVATIONS = [None, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid", "_MklSwish"]
# What TF 2.21's native CPU kernels compute (the others raise Unimplemented there).
TF_CONV = {None, "Relu", "Relu6", "Elu", "LeakyRelu"}
TF_MATMUL = {None, "Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid"}
CONV_ATTRS = dict(strides=[1, 2, 2, 1], padding="SAME")


def _fused_node(root: Scope, op: str, a, b, args, attrs: dict) -> Output:
    inputs = [ops.Const(root, a), ops.Const(root, b), [ops.Const(root, v) for v in args]]
    if op == "_FusedConv2D":
        inputs.append([])
    return Output(add_node(root.WithOpName("fused"), get_op_def(op), inputs, attrs), 0)


def _reference(root: Scope, op: str, a, b, args, steps: list[str], alpha: float) -> Output:
    """The fused computation spelt out with standalone ops."""
    if op == "_FusedMatMul":
        y = ops.MatMul(root, a, b)
    elif op == "_FusedConv2D":
        y = ops.Conv2D(root, a, b, CONV_ATTRS["strides"], "SAME")
    else:
        y = ops.DepthwiseConv2dNative(root, a, b, CONV_ATTRS["strides"], "SAME")
    if steps[0] == "BiasAdd":
        y = ops.BiasAdd(root, y, args[0])
    else:
        scale, offset, mean, var = args
        factor = ops.Mul(root, ops.Rsqrt(root, ops.AddV2(root, var, np.asarray(1e-3, var.dtype))), scale)
        y = ops.AddV2(root, ops.Mul(root, ops.Sub(root, y, mean), factor), offset)
    if "Add" in steps:
        y = ops.AddV2(root, y, args[1])
    act = steps[-1] if steps[-1] not in ("BiasAdd", "FusedBatchNorm", "Add") else None
    if act == "LeakyRelu":
        y = ops.LeakyRelu(root, y, alpha=alpha)
    elif act == "_MklSwish":
        y = ops.Mul(root, y, ops.Sigmoid(root, y))
    elif act is not None:
        y = getattr(ops, act)(root, y)
    return y


def _cases() -> list[tuple[str, list[str], list[np.ndarray]]]:
    out = []
    for act in ACTIVATIONS:
        tail = [act] if act else []
        out.append(("_FusedConv2D", ["BiasAdd"] + tail, [BIAS]))
        out.append(("_FusedMatMul", ["BiasAdd"] + tail, [BIAS]))
        out.append(("_FusedDepthwiseConv2dNative", ["BiasAdd"] + tail, [RNG.standard_normal(8).astype(np.float32)]))
    for act in (None, "Relu", "Relu6"):
        tail = [act] if act else []
        out.append(("_FusedConv2D", ["FusedBatchNorm"] + tail, BN))
        out.append(("_FusedConv2D", ["BiasAdd", "Add"] + tail, [BIAS, RNG.standard_normal((2, 5, 4, 6))
                                                                  .astype(np.float32)]))
    return out


CASES = _cases()


def _operands(op: str) -> tuple[np.ndarray, np.ndarray, dict]:
    if op == "_FusedMatMul":
        return A, W, {}
    return X, (F if op == "_FusedConv2D" else FD), dict(CONV_ATTRS)


def _build(op: str, steps: list[str], args: list[np.ndarray], alpha: float = 0.3):
    a, b, attrs = _operands(op)
    root = Scope.NewRootScope()
    fused = _fused_node(root, op, a, b, args, dict(attrs, fused_ops=steps, num_args=len(args), epsilon=1e-3,
                                                    leakyrelu_alpha=alpha))
    return root, fused, _reference(root, op, a, b, args, steps, alpha)


@pytest.mark.parametrize("op,steps,args", CASES, ids=[f"{c[0]}-{'+'.join(c[1])}" for c in CASES])
def test_fused_equals_unfused(op, steps, args, backend):
    root, fused, ref = _build(op, steps, args)
    got, want = ClientSession(root, backend=backend, fetch_numpy=True).Run([fused, ref])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_fused_conv_other_types(dtype):
    """float64 exactly as the float64 reference; half computed in float and rounded once."""
    args = [v.astype(dtype) for v in BN]
    root = Scope.NewRootScope()
    fused = _fused_node(root, "_FusedConv2D", X.astype(dtype), F.astype(dtype), args,
                        dict(CONV_ATTRS, fused_ops=["FusedBatchNorm", "Relu"], num_args=4, epsilon=1e-3))
    ref = _reference(root, "_FusedConv2D", X.astype(dtype).astype(np.float64), F.astype(dtype).astype(np.float64),
                     [v.astype(np.float64) for v in args], ["FusedBatchNorm", "Relu"], 0.2)
    got, want = ClientSession(root).Run([fused, ref])
    assert got.dtype == dtype
    tol = 2e-3 if dtype == np.float16 else 1e-9  # epsilon is a float attr: 1e-3 in float32
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * 10)


def test_fused_conv_nchw_and_blocks_match(backend):
    """NCHW (computed through the NHWC view) and an output large enough for many GEMM blocks."""
    x = RNG.standard_normal((3, 40, 33, 8)).astype(np.float32)
    f = RNG.standard_normal((3, 3, 8, 16)).astype(np.float32)
    bias = RNG.standard_normal(16).astype(np.float32)
    root = Scope.NewRootScope()
    attrs = dict(strides=[1, 1, 1, 1], padding="SAME", fused_ops=["BiasAdd", "Relu"], num_args=1)
    nhwc = _fused_node(root, "_FusedConv2D", x, f, [bias], attrs)
    nchw_in = ops.Const(root, x.transpose(0, 3, 1, 2).copy())
    node = add_node(root.WithOpName("nchw"), get_op_def("_FusedConv2D"),
                    [nchw_in, ops.Const(root, f), [ops.Const(root, bias)], []],
                    dict(attrs, data_format="NCHW"))
    ref = ops.Relu(root, ops.BiasAdd(root, ops.Conv2D(root, x, f, [1, 1, 1, 1], "SAME"), bias))
    a, b, want = ClientSession(root, backend=backend, fetch_numpy=True).Run([nhwc, Output(node, 0), ref])
    np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(b.transpose(0, 2, 3, 1), want, rtol=1e-5, atol=1e-4)


def test_fused_batch_norm_ex(backend):
    x = RNG.standard_normal((2, 4, 5, 6)).astype(np.float32)
    side = RNG.standard_normal((2, 4, 5, 6)).astype(np.float32)
    root = Scope.NewRootScope()
    c = [ops.Const(root, v) for v in [x] + BN]
    node = add_node(root.WithOpName("bn"), get_op_def("_FusedBatchNormEx"), c + [[ops.Const(root, side)]],
                    dict(epsilon=1e-3, is_training=False, num_side_inputs=1, activation_mode="Relu"))
    ref = ops.Relu(root, ops.AddV2(root, ops.FusedBatchNormV3(root, *c, epsilon=1e-3, is_training=False).y, side))
    got, want = ClientSession(root, backend=backend, fetch_numpy=True).Run([Output(node, 0), ref])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_errors():
    root = Scope.NewRootScope()
    with pytest.raises(UnimplementedError, match=r"Fusion is not implemented: \[Relu\]"):
        _fused_node(root, "_FusedConv2D", X, F, [BIAS], dict(CONV_ATTRS, fused_ops=["Relu"], num_args=1))
    with pytest.raises(InvalidArgumentError, match="Fused Conv2D with FusedBatchNorm must have four extra"):
        _fused_node(root, "_FusedConv2D", X, F, [BIAS], dict(CONV_ATTRS, fused_ops=["FusedBatchNorm"], num_args=1))
    with pytest.raises(InvalidArgumentError, match="Fused MatMul with BiasAdd must have one extra argument"):
        _fused_node(root, "_FusedMatMul", A, W, [BIAS, BIAS], dict(fused_ops=["BiasAdd"], num_args=2))
    with pytest.raises(UnimplementedError, match="Fusion is not implemented"):
        _fused_node(root, "_FusedMatMul", A, W, BN, dict(fused_ops=["FusedBatchNorm"], num_args=4))
    root = Scope.NewRootScope()
    bad = _fused_node(root, "_FusedMatMul", A, W, [BIAS[:4]], dict(fused_ops=["BiasAdd"], num_args=1))
    with pytest.raises(InvalidArgumentError, match="bias must be 1-D with 6 elements") as e:
        ClientSession(root).Run([bad])
    assert e.value.node_name == "fused"


TF_CASES = [c for c in CASES if (c[0] == "_FusedConv2D" and "Add" not in c[1] and (c[1][1:] or [None])[0] in TF_CONV)
            or (c[0] == "_FusedMatMul" and (c[1][1:] or [None])[0] in TF_MATMUL)]


@pytest.mark.tf
@pytest.mark.parametrize("op,steps,args", TF_CASES, ids=[f"{c[0]}-{'+'.join(c[1])}" for c in TF_CASES])
def test_fused_against_tf(op, steps, args):
    tf = tf_oracle.require_tf()
    root, fused, _ = _build(op, steps, args)
    (ours,) = ClientSession(root).Run([fused])
    graph = tf.Graph()
    with graph.as_default():
        gd = tf.compat.v1.GraphDef()
        gd.ParseFromString(to_graph_def(root).SerializeToString())
        tf.compat.v1.import_graph_def(gd, name="")
    theirs = tf.compat.v1.Session(graph=graph).run("fused:0")
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
