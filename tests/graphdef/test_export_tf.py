"""Graphs built here, exported, imported by ``tf.compat.v1.import_graph_def`` and run by TF give our results.

One test graph per op that has a kernel (discovered from the kernel registry: a recipe,
or generic float inputs); each is also imported back here and run again.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.graphdef.recipes import NoRecipe, build_case, run
from tests.tf_oracle import require_tf
from tfops_py import DT_FLOAT, Scope, ops
from tfops_py.graphdef import graph_def_to_bytes, graph_def_to_text, import_graph_def
from tfops_py.kernels.registry import registered_kernel_ops

KERNEL_OPS = sorted(registered_kernel_ops())


def assert_same(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    if isinstance(theirs, bytes):  # a string scalar: np.asarray would give dtype S, which drops trailing NULs
        theirs = np.array(theirs, dtype=object)
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if theirs.dtype.kind == "S":
        theirs = theirs.astype(object)
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype} != TF's {theirs.dtype}"
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != TF's {theirs.shape}"
    if ours.dtype == object or ours.dtype.kind in "biu":
        assert ours.tolist() == theirs.tolist(), what
    else:
        tol = 1e-2 if ours.dtype.itemsize <= 2 else 1e-4
        np.testing.assert_allclose(ours.astype(np.complex128), theirs.astype(np.complex128), rtol=tol, atol=tol,
                                   err_msg=what)


def run_in_tf(tf, data: bytes, feeds: dict[str, np.ndarray], fetches: list[str], targets: list[str]):
    """Import serialized GraphDef bytes into a fresh TF graph and run it in a TF1 Session."""
    gd = tf.compat.v1.GraphDef.FromString(data)
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            if targets:
                sess.run(targets, feeds)
            return sess.run(fetches, feeds)


@pytest.mark.tf
@pytest.mark.parametrize("op_type", KERNEL_OPS)
def test_exported_graph_runs_in_tf(op_type):
    tf = require_tf()
    try:
        case = build_case(op_type)
    except NoRecipe as e:
        pytest.skip(f"no test graph for {op_type}: {e}")
    ours = run(case.root, case.feeds, case.fetches, case.targets)
    data = graph_def_to_bytes(case.root)
    theirs = run_in_tf(tf, data, {o.name(): v for o, v in case.feeds.items()}, [o.name() for o in case.fetches],
                       [t.operation.name() for t in case.targets])
    for out, a, b in zip(case.fetches, ours, theirs):
        assert_same(a, b, f"{op_type}: {out.name()}")

    # And back here: the same graph, the same values.
    root = Scope.NewRootScope()
    imported = import_graph_def(root, data)
    again = run(root, {imported[o.name()]: v for o, v in case.feeds.items()},
                [imported[o.name()] for o in case.fetches], [imported[t.operation.name()] for t in case.targets])
    for out, a, b in zip(case.fetches, again, ours):
        assert_same(a, b, f"{op_type} re-imported: {out.name()}")


@pytest.mark.tf
def test_text_format_parses_in_tf_to_the_same_graph():
    tf = require_tf()
    from google.protobuf import text_format

    case = build_case("Const")
    ops.MatMul(case.root.WithOpName("m").WithDevice("/device:CPU:0"), case.fetches[0], case.fetches[0],
               transpose_b=True)
    binary = tf.compat.v1.GraphDef.FromString(graph_def_to_bytes(case.root))
    text = text_format.Parse(graph_def_to_text(case.root), tf.compat.v1.GraphDef())
    assert text == binary
    assert binary.versions.producer == tf.version.GRAPH_DEF_VERSION


@pytest.mark.tf
@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(2.5), np.float16(1.5), np.arange(3, dtype=np.float16),
    np.array([1.5, -2.0], dtype="bfloat16"), np.array(True), np.array([True, False]), np.arange(4, dtype=np.int64),
    np.int64(-7), np.array([1, 2], np.uint16), np.array([3, 4], np.uint8), np.array([1 + 2j], np.complex64),
    np.array([1 - 1j, 2j], np.complex128), np.array([b"x", b"yz"], dtype=object), np.array(b"s", dtype=object),
    np.zeros((0, 3), np.float32), np.array([2**33], np.uint64), np.array([5, 6], np.uint32), np.int8(-3),
], ids=lambda v: f"{np.asarray(v).dtype}{list(np.shape(v))}")
def test_const_tensor_encoded_as_tf_encodes_it(value):
    """Our Const's TensorProto equals the one tf.constant writes (tensor_content vs typed fields, half_val ...)."""
    tf = require_tf()
    value = np.asarray(value, dtype="bfloat16") if str(np.asarray(value).dtype) == "bfloat16" else value
    root = Scope.NewRootScope()
    ops.Const(root.WithOpName("c"), value)
    ours = tf.compat.v1.GraphDef.FromString(graph_def_to_bytes(root)).node[0].attr["value"].tensor
    g = tf.Graph()
    with g.as_default():
        tf.constant(value, name="c")
    theirs = g.as_graph_def().node[0].attr["value"].tensor
    assert ours == theirs


@pytest.mark.tf
def test_control_inputs_device_and_private_attrs_survive_tf():
    """``^x`` inputs, devices, ``_class`` colocation and ``name:1`` outputs read back from TF as we wrote them."""
    tf = require_tf()
    root = Scope.NewRootScope()
    a = ops.Const(root.WithOpName("a"), 1.0)
    split = ops.Split(root.WithOpName("split"), 0, ops.Const(root, [1.0, 2.0]), 2)
    with_dev = root.WithDevice("/device:CPU:0").ColocateWith(a).WithControlDependencies(split.operation)
    ops.AddV2(with_dev.WithOpName("sum"), a, split.output[1])
    ops.Placeholder(root.WithOpName("p"), DT_FLOAT)
    gd = tf.compat.v1.GraphDef.FromString(graph_def_to_bytes(root))
    node = {n.name: n for n in gd.node}["sum"]
    assert list(node.input) == ["a", "split:1", "^split"]
    assert node.device == "/device:CPU:0"
    assert list(node.attr["_class"].list.s) == [b"loc:@a"]
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
        assert [i.name for i in g.get_operation_by_name("sum").control_inputs] == ["split"]
        assert g.get_operation_by_name("p").get_attr("shape") is not None
