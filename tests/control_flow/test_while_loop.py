"""ops.BuildWhileLoop: the semantics of TF's while_loop_test.cc (written here, not copied), TF's node naming and
frame structure, and graphs that export to TF and run there with the same results."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.graphdef.test_export_tf import assert_same, run_in_tf
from tests.tf_oracle import require_tf
from tfops_py import DT_DOUBLE, DT_FLOAT, DT_INT32, ClientSession, Output, Scope, Status, ops
from tfops_py.errors import InvalidArgumentError, OutOfRangeError
from tfops_py.graphdef import graph_def_to_bytes
from tfops_py.ops.while_loop import while_context_of

FRAME = "test_loop"


def less_than_ten(s, inputs):
    return ops.Less(s, inputs[0], 10)


def add_one(s, inputs):
    return [ops.Add(s, inputs[0], 1)]


def build(num_inputs: int, cond, body, dtype=DT_INT32):
    root = Scope.NewRootScope()
    inputs = [ops.Placeholder(root, dtype) for _ in range(num_inputs)]
    outputs = ops.BuildWhileLoop(root, inputs, cond, body, FRAME)
    return root, inputs, outputs


def run(root, inputs, outputs, values, backend="numpy"):
    session = ClientSession(root, backend=backend, fetch_numpy=True)
    return session.Run(dict(zip(inputs, values)), outputs)


def test_basic(backend):
    root, inputs, outputs = build(1, less_than_ten, add_one)
    for node in (o.node() for o in outputs):
        assert node.op == "Exit"
        assert while_context_of(node).frame_name == FRAME
    assert run(root, inputs, outputs, [1], backend) == [10]
    assert run(root, inputs, outputs, [11], backend) == [11]


def test_node_names_and_frame_structure_are_tfs():
    root, _, outputs = build(2, less_than_ten, lambda s, v: [ops.Add(s, v[0], 1), ops.Identity(s, v[1])])
    nodes = {n.name: n for n in root.graph().nodes()}
    assert {"Enter", "Enter_1", "Merge", "Merge_1", "cond/Less", "LoopCond", "Switch", "Switch_1", "body/Add",
            "body/Identity", "NextIteration", "NextIteration_1", "Exit", "Exit_1"} <= set(nodes)
    assert nodes["Enter"].attrs["frame_name"] == FRAME and nodes["Enter"].attrs["parallel_iterations"] == 10
    assert [i.node().name for i in nodes["Merge"].inputs] == ["Enter", "NextIteration"]
    assert [c.name for c in nodes["cond/Less"].control_inputs] == ["Merge"]
    assert [c.name for c in nodes["body/Add"].control_inputs] == ["Switch"]
    assert nodes["Merge"].output_shapes[0].unknown_rank()  # the back edge is unknown when the Merge is built
    assert [o.node().name for o in outputs] == ["Exit", "Exit_1"]


def test_multiple_loop_vars(backend):
    # while (i < 10) { i += j; j += 1 }
    root, inputs, outputs = build(2, less_than_ten, lambda s, v: [ops.AddN(s, [v[0], v[1]]), ops.Add(s, v[1], 1)])
    assert run(root, inputs, outputs, [0, 1], backend) == [10, 5]
    assert run(root, inputs, outputs, [1, 1], backend) == [11, 5]


def test_outputs_list_and_cond_output_are_filled_for_ports():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_INT32)
    outputs: list[Output] = []
    cond_output: list[Output] = []
    returned = ops.BuildWhileLoop(root, [x], less_than_ten, add_one, FRAME, outputs, True, cond_output)
    assert outputs == returned and cond_output[0].node().op == "LoopCond"


def test_nested_loops(backend):
    # while i < 3: j = 0; while j < i: j += 1, acc += j;  i += 1
    def body(s, v):
        # As in C++, the inner loop needs a scope without the body's control dependency on the outer Switch (its
        # Merge nodes would otherwise take inputs from two frames), and outer values enter it as loop variables.
        inner = ops.BuildWhileLoop(s.WithNoControlDependencies(), [ops.Const(s, 0), v[1], v[0]],
                                   lambda s2, w: ops.Less(s2, w[0], w[2]),
                                   lambda s2, w: [ops.Add(s2, w[0], 1), ops.Add(s2, w[1], w[0]),
                                                  ops.Identity(s2, w[2])], "inner")
        return [ops.Add(s, v[0], 1), inner[1]]

    root, inputs, outputs = build(2, lambda s, v: ops.Less(s, v[0], 4), body)
    assert run(root, inputs, outputs, [0, 0], backend) == [4, 0 + 0 + (0 + 1) + (0 + 1 + 2)]


@pytest.mark.parametrize("bad, code, message", [
    (lambda s, v: ops.Placeholder(s, DT_FLOAT), InvalidArgumentError,
     "BuildWhileLoop: 'cond' argument must return a boolean output, got float"),
    (lambda s, v: Output(None, 0), InvalidArgumentError, "Node is null"),
    (lambda s, v: Output(ops.Less(s, v[0], 10).operation, 100), OutOfRangeError,
     "Node 'cond/Less' (type: 'Less', num of outputs: 1) does not have output 100"),
    (lambda s, v: s.status(), InvalidArgumentError, "Node is null"),  # the out-parameter left unset
])
def test_cond_errors(bad, code, message):
    with pytest.raises(code) as e:
        build(1, bad, add_one)
    assert e.value.message == message


@pytest.mark.parametrize("bad, code, message", [
    (lambda s, v: [Output(None, 0)], InvalidArgumentError, "Node is null"),
    (lambda s, v: [Output(ops.Add(s, v[0], 1).operation, 100)], OutOfRangeError,
     "Node 'body/Add' (type: 'Add', num of outputs: 1) does not have output 100"),
    (lambda s, v: s.status(), InvalidArgumentError,
     "BuildWhileLoop: 'body' argument expected to return 1 output(s), got 0"),
    (lambda s, v: [], InvalidArgumentError, "BuildWhileLoop: 'body' argument expected to return 1 output(s), got 0"),
    (lambda s, v: [ops.Cast(s, v[0], DT_FLOAT)], InvalidArgumentError,
     "BuildWhileLoop: 'body' output 0 is float, loop variable 0 is int32"),
])
def test_body_errors(bad, code, message):
    with pytest.raises(code) as e:
        build(1, less_than_ten, bad)
    assert e.value.message == message


def test_builder_errors_propagate():
    def failing(s, v):
        return Status(InvalidArgumentError("my builder failed"))

    def raising(s, v):
        raise InvalidArgumentError("raised in the builder")

    with pytest.raises(InvalidArgumentError, match="my builder failed"):
        build(1, failing, add_one)
    with pytest.raises(InvalidArgumentError, match="raised in the builder"):
        build(1, less_than_ten, raising)


def test_frame_name_is_unique_per_while_context():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_INT32)
    ops.BuildWhileLoop(root.NewSubScope("a"), [x], less_than_ten, add_one, FRAME)
    with pytest.raises(InvalidArgumentError, match="WhileContext with frame name 'test_loop' already exists"):
        ops.BuildWhileLoop(root.NewSubScope("b"), [x], less_than_ten, add_one, FRAME)
    ops.BuildWhileLoop(root.NewSubScope("c"), [x], less_than_ten, add_one, FRAME, create_while_ctx=False)


# ----------------------------------------------------------------------------- against TF
def _loop_graph(scale: float):
    """while i < n: i += 1; x = x * scale + i (int and float loop variables, a loop-invariant capture)."""
    root = Scope.NewRootScope()
    n = ops.Placeholder(root.WithOpName("n"), DT_INT32)
    x = ops.Placeholder(root.WithOpName("x"), DT_DOUBLE)
    i0 = ops.Const(root.WithOpName("i0"), 0)
    outs = ops.BuildWhileLoop(
        root, [i0, x, n], lambda s, v: ops.Less(s, v[0], v[2]),
        lambda s, v: [ops.Add(s, v[0], 1),
                      ops.AddV2(s, ops.Mul(s, v[1], np.float64(scale)), ops.Cast(s, v[0], DT_DOUBLE)),
                      ops.Identity(s, v[2])], "loop")
    return root, n, x, outs


@pytest.mark.tf
@settings(max_examples=8, deadline=None)
@given(n=st.integers(-1, 12), x=st.floats(-3, 3), scale=st.sampled_from([0.5, 1.0, -1.25]))
def test_exported_loop_runs_in_tf_with_the_same_results(n, x, scale):
    tf = require_tf()
    root, n_in, x_in, outs = _loop_graph(scale)
    ours = ClientSession(root, fetch_numpy=True).Run({n_in: n, x_in: x}, outs)
    theirs = run_in_tf(tf, graph_def_to_bytes(root), {"n:0": n, "x:0": x}, [o.name() for o in outs], [])
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_same(a, b, f"loop output {k}")


def test_loop_result_matches_python():
    root, n_in, x_in, outs = _loop_graph(0.5)
    value = 1.0
    for i in range(1, 6):
        value = value * 0.5 + (i - 1)
    i, x, _ = ClientSession(root, fetch_numpy=True).Run({n_in: 5, x_in: 1.0}, outs)
    assert i == 5 and np.isclose(x, value)
