"""AddSymbolicGradients: the graphs it builds and the values they compute (port of TF's gradients_test.cc)."""
from __future__ import annotations

import numpy as np
import pytest

from tfops_py import ClientSession, DT_DOUBLE, DT_FLOAT, Scope, ops
from tfops_py.errors import InternalError, InvalidArgumentError, NotFoundError
from tfops_py.framework.operation import NoGradient
from tfops_py.gradients import AddSymbolicGradients, GradOpRegistry, register_gradient
from tfops_py.kernels.registry import registered_kernel_ops


def needs_kernels(*op_types: str) -> None:
    missing = sorted(set(op_types) - registered_kernel_ops())
    if missing:
        pytest.skip(f"no kernel yet for {', '.join(missing)}")


def graph_signature(scope: Scope) -> list[tuple]:
    """Each node as (name, op, inputs, attrs), sorted by name (like TF's EqualGraphDef, order-blind)."""
    sig = []
    for n in scope.graph().nodes():
        attrs = {k: (np.asarray(v).tolist() if k == "value" else v) for k, v in n.attrs.items()}
        sig.append((n.name, n.op, [i.name() for i in n.inputs], sorted(attrs.items(), key=lambda kv: kv[0])))
    return sorted(sig, key=lambda t: t[0])


def run(scope: Scope, fetches, feeds=None):
    return ClientSession(scope, fetch_numpy=True).Run(feeds or {}, list(fetches))


def _matmul_graph(scope: Scope):
    x = ops.Const(scope, [[1.0, 2.0], [3.0, 4.0]])
    y = ops.Const(scope, [[1.0, 0.0], [0.0, 1.0]])
    return x, y, ops.MatMul(scope, x, y)


def test_one_matmul_matches_hand_built_graph():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    x, y, z = _matmul_graph(expected)
    dz = ops.Const(expected, [[1.0, 1.0], [1.0, 1.0]])
    ops.MatMul(expected, dz, y, transpose_b=True)
    ops.MatMul(expected, x, dz, transpose_a=True)

    x, y, z = _matmul_graph(test)
    dz = ops.Const(test, [[1.0, 1.0], [1.0, 1.0]])
    grads = AddSymbolicGradients(test, [z], [x, y], [dz])
    assert graph_signature(test) == graph_signature(expected)
    assert [g.node().name for g in grads] == ["MatMul_1", "MatMul_2"]


def test_one_matmul_infers_grad_inputs_with_ones_like():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    x, y, z = _matmul_graph(expected)
    dz = ops.OnesLike(expected, z)
    ops.MatMul(expected, dz, y, transpose_b=True)
    ops.MatMul(expected, x, dz, transpose_a=True)

    x, y, z = _matmul_graph(test)
    AddSymbolicGradients(test, [z], [x, y])
    assert graph_signature(test) == graph_signature(expected)


def test_section4_example_adds_ones_like_and_two_matmuls_without_prefix():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, shape=[2, 2])
    w = ops.Const(root.WithOpName("w"), [[1.0, 2.0], [3.0, 4.0]])
    y = ops.MatMul(root.WithOpName("y"), x, w, ops.MatMul.TransposeB(True))
    before = {n.name for n in root.graph().nodes()}
    (dw,) = AddSymbolicGradients(root, [y], [w])
    added = [(n.name, n.op) for n in root.graph().nodes() if n.name not in before]
    assert added == [("OnesLike", "OnesLike"), ("MatMul", "MatMul"), ("MatMul_1", "MatMul")]
    assert dw.node().name == "MatMul_1"
    needs_kernels("MatMul", "OnesLike")
    (got,) = run(root, [dw], {x: [[1.0, 1.0], [0.0, 1.0]]})
    # y = x w^T, so dw = dy^T x with dy all ones
    np.testing.assert_allclose(got, np.ones((2, 2)).T @ np.array([[1.0, 1.0], [0.0, 1.0]]))


def test_two_matmuls_chained():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    for scope in (expected, test):
        u = ops.Const(scope, [[1.0, 2.0], [3.0, 4.0]])
        v = ops.Const(scope, [[1.0, 0.0], [0.0, 1.0]])
        x = ops.MatMul(scope, u, v)
        y = ops.Const(scope, [[1.0, 0.0], [0.0, 1.0]])
        z = ops.MatMul(scope, x, y)
        dz = ops.Const(scope, [[1.0, 1.0], [1.0, 1.0]])
        if scope is expected:
            dx = ops.MatMul(scope, dz, y, transpose_b=True)
            ops.MatMul(scope, x, dz, transpose_a=True)
            ops.MatMul(scope, dx, v, transpose_b=True)
            ops.MatMul(scope, u, dx, transpose_a=True)
        else:
            AddSymbolicGradients(scope, [z], [u, v], [dz])
    assert graph_signature(test) == graph_signature(expected)


def test_two_matmuls_independent():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    for scope in (expected, test):
        t = ops.Const(scope, [[1.0, 2.0], [3.0, 4.0]])
        u = ops.Const(scope, [[1.0, 0.0], [0.0, 1.0]])
        v = ops.MatMul(scope, t, u)
        x = ops.Const(scope, [[5.0, 6.0], [7.0, 8.0]])
        y = ops.Const(scope, [[1.0, 0.0], [0.0, 1.0]])
        z = ops.MatMul(scope, x, y)
        if scope is expected:
            dv = ops.Const(scope, [[1.0, 1.0], [1.0, 1.0]])
            ops.MatMul(scope, dv, u, transpose_b=True)
            ops.MatMul(scope, t, dv, transpose_a=True)
            dz = ops.Const(scope, [[1.0, 1.0], [1.0, 1.0]])
            ops.MatMul(scope, dz, y, transpose_b=True)
            ops.MatMul(scope, x, dz, transpose_a=True)
        else:
            dv = ops.Const(scope, [[1.0, 1.0], [1.0, 1.0]])
            dz = ops.Const(scope, [[1.0, 1.0], [1.0, 1.0]])
            AddSymbolicGradients(scope, [v, z], [t, u, x, y], [dv, dz])
    assert graph_signature(test) == graph_signature(expected)


def _abc(scope: Scope):
    return [ops.Const(scope, np.full((4, 2), v, np.int32)) for v in (1, 2, 3)]


def _dxyz(scope: Scope):
    return [ops.Const(scope, np.full((4, 2), v, np.int32)) for v in (4, 5, 6)]


def test_stack_unstack_chained():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    for scope in (expected, test):
        a, b, c = _abc(scope)
        pack = ops.Stack(scope, [a, b, c])
        unpack = ops.Unstack(scope, pack.output, 3)
        dx, dy, dz = _dxyz(scope)
        if scope is expected:
            unpack_grad = ops.Stack(scope, [dx, dy, dz])
            ops.Unstack(scope, unpack_grad.output, 3)
        else:
            AddSymbolicGradients(scope, unpack.output, [a, b, c], [dx, dy, dz])
    assert graph_signature(test) == graph_signature(expected)


def test_stack_unstack_stops_backprop_at_requested_input():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    for scope in (expected, test):
        a, b, c = _abc(scope)
        pack = ops.Stack(scope, [a, b, c])
        unpack = ops.Unstack(scope, pack.output, 3)
        dx, dy, dz = _dxyz(scope)
        if scope is expected:
            ops.Stack(scope, [dx, dy, dz])  # only Unstack's gradient: Stack is upstream of the input
        else:
            AddSymbolicGradients(scope, unpack.output, [pack], [dx, dy, dz])
    assert graph_signature(test) == graph_signature(expected)


def test_stack_unstack_subset_of_unstack_outputs():
    expected, test = Scope.NewRootScope(), Scope.NewRootScope()
    for scope in (expected, test):
        c = ops.Const(scope, np.ones((3, 4, 2), np.int32))
        unpack = ops.Unstack(scope, c, 3)
        ops.Identity(scope, unpack.output[0])
        y = ops.Identity(scope, unpack.output[1])
        z = ops.Identity(scope, unpack.output[2])
        dy = ops.Const(scope, np.full((4, 2), 4, np.int32))
        dz = ops.Const(scope, np.full((4, 2), 5, np.int32))
        if scope is expected:
            ops.Identity(scope, dy)
            ops.Identity(scope, dz)
        else:
            grads = AddSymbolicGradients(scope, [y, z], [unpack.output[1], unpack.output[2]], [dy, dz])
            assert len(grads) == 2 and all(g.node() is not None for g in grads)
    assert graph_signature(test) == graph_signature(expected)


def test_dependent_grad_outputs():
    needs_kernels("MatMul")
    scope = Scope.NewRootScope()
    u = ops.Const(scope, [[2.0]])
    v = ops.Const(scope, [[3.0]])
    x = ops.MatMul(scope, u, v)
    y = ops.Const(scope, [[4.0]])
    z = ops.MatMul(scope, x, y)
    dz = ops.Const(scope, [[5.0]])
    dv, dx = AddSymbolicGradients(scope, [z], [v, x], [dz])
    out = run(scope, [dv, dx])
    np.testing.assert_array_equal(out[0], [[40.0]])
    np.testing.assert_array_equal(out[1], [[20.0]])


def test_multiple_node_output_grads():
    needs_kernels("Unpack", "Pack")
    scope = Scope.NewRootScope()
    x = ops.Const(scope, np.ones((3, 4, 2), np.int32))
    unpack = ops.Unstack(scope, x, 3)
    pack = ops.Stack(scope, unpack.output)
    dx_val = np.arange(24, dtype=np.int32).reshape(3, 4, 2) + 40
    dx = ops.Const(scope, dx_val)
    grads = AddSymbolicGradients(scope, [pack], unpack.output, [dx])
    for got, want in zip(run(scope, grads), dx_val):
        np.testing.assert_array_equal(got, want)


def test_unreachable_edge_grads_with_variables():
    needs_kernels("MatMul", "AddN")
    scope = Scope.NewRootScope()
    x = ops.Variable(scope, [2, 3], DT_DOUBLE)
    x_assign = ops.Assign(scope, x, ops.Const(scope, np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])))
    y = ops.Variable(scope, [3, 1], DT_DOUBLE)
    y_assign = ops.Assign(scope, y, ops.Const(scope, np.array([[1.0], [2.0], [3.0]])))
    m1 = ops.MatMul(scope, x, y)
    z = ops.Variable(scope, [1, 3], DT_DOUBLE)
    z_assign = ops.Assign(scope, z, ops.Const(scope, np.array([[9.0, 10.0, 11.0]])))
    m2 = ops.MatMul(scope, y, z)
    dm1 = ops.Const(scope, np.array([[0.5], [0.5]]))
    dm2 = ops.Const(scope, np.array([[0.5, 0.5, 0.5], [0.6, 0.7, 0.8], [0.6, 0.7, 0.9]]))
    (g_one,) = AddSymbolicGradients(scope, [m1], [y], [dm1])
    (g_two,) = AddSymbolicGradients(scope, [m1, m2], [y], [dm1, dm2])
    sess = ClientSession(scope, fetch_numpy=True)
    sess.Run({}, [], [x_assign, y_assign, z_assign])
    got_one, got_two = sess.Run([g_one, g_two])
    np.testing.assert_allclose(got_one, [[2.5], [3.5], [4.5]], atol=1e-5)
    np.testing.assert_allclose(got_two, [[17.5], [24.7], [26.8]], atol=1e-5)


def test_unreachable_input_is_invalid_argument_with_tf_message():
    scope = Scope.NewRootScope()
    x = ops.Const(scope, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = ops.Const(scope, [[1.0], [2.0], [3.0]])
    z = ops.Const(scope.WithOpName("z"), [[9.0, 10.0, 11.0]])
    m1 = ops.MatMul(scope, x, y)
    ops.MatMul(scope, y, z)
    dm1 = ops.Const(scope, [[0.5], [0.5]])
    with pytest.raises(InvalidArgumentError) as e:
        AddSymbolicGradients(scope, [m1], [z], [dm1])
    assert str(e.value) == ("Cannot compute the partial derivative for node 'z' as it's unreachable "
                            "from the output node(s).")


def test_needs_one_grad_input_per_output():
    scope = Scope.NewRootScope()
    x, y, z = _matmul_graph(scope)
    with pytest.raises(InvalidArgumentError, match="Must specify a gradient input for each output."):
        AddSymbolicGradients(scope, [z], [x], [])


def test_missing_gradient_is_not_found_with_tf_message():
    scope = Scope.NewRootScope()
    x = ops.Const(scope, [1.0, 2.0])
    y = ops.IgammaGradA(scope.WithOpName("c"), x, x)  # TF differentiates it nowhere
    with pytest.raises(NotFoundError) as e:
        AddSymbolicGradients(scope, [y], [x])
    assert e.value.message == (
        "No gradient defined for op: IgammaGradA. Please see "
        "https://www.tensorflow.org/code/tensorflow/cc/gradients/README.md for instructions on how to add "
        "C++ gradients.")
    assert e.value.node_name == "c" and e.value.op_type == "IgammaGradA"


@pytest.mark.parametrize("requested,expected", [((0,), 2.0 * 3), ((0, 2), 2.0 * 3 + 8 * 3.0 ** 7)])
def test_dependent_outputs_sum(requested, expected):
    needs_kernels("Square", "Mul", "Cast", "AddN")
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope, DT_FLOAT)
    ys = [ops.Square(scope, x)]
    ys.append(ops.Square(scope, ys[-1]))
    ys.append(ops.Square(scope, ys[-1]))
    grads = AddSymbolicGradients(scope, [ys[i] for i in requested], [x])
    (got,) = run(scope, grads, {x: 3.0})
    assert got == np.float32(expected)  # TF's DependentOutputs: 17502 for y0 and y2


def test_multi_output_node_dependent_outputs():
    needs_kernels("Square", "Mul", "Cast", "AddN")
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope, DT_FLOAT)
    y0 = ops.Square(scope, x)
    y1 = ops.Square(scope, y0)
    y2 = ops.Square(scope, y0)
    y3 = ops.Square(scope, y2)
    grads = AddSymbolicGradients(scope, [y0, y1, y3], [x])
    (got,) = run(scope, grads, {x: 3.0})
    assert got == np.float32(17610.0)


STOP_SINGLE = [
    ((False, False, False), [[15, 18], [21, 24]]), ((True, False, False), [[14, 16], [18, 20]]),
    ((False, True, False), [[10, 12], [14, 16]]), ((False, False, True), [[6, 8], [10, 12]]),
    ((True, True, False), [[9, 10], [11, 12]]), ((False, True, True), [[1, 2], [3, 4]]),
    ((True, False, True), [[5, 6], [7, 8]]), ((True, True, True), None),
]


@pytest.mark.parametrize("stops,expected", STOP_SINGLE)
def test_stop_gradient_single_output_multi_edge(stops, expected):
    scope = Scope.NewRootScope()
    x = ops.Const(scope, [[1, 0], [0, 1]])
    y = ops.Const(scope, [[1, 0], [0, 1]])
    z = ops.MatMul(scope, x, y)
    outs = [ops.StopGradient(scope, ops.Identity(scope, z)).output if s else ops.Identity(scope, z).output
            for s in stops]
    gs = [ops.Const(scope, v) for v in ([[1, 2], [3, 4]], [[5, 6], [7, 8]], [[9, 10], [11, 12]])]
    (grad,) = AddSymbolicGradients(scope, outs, [z], gs)
    if expected is None:
        assert grad == NoGradient()
    else:
        needs_kernels("Identity", "AddN")
        np.testing.assert_array_equal(run(scope, [grad])[0], expected)


@pytest.mark.parametrize("stops", [(False, False, False), (True, False, False), (False, True, False),
                                   (False, False, True), (True, False, True), (True, True, True)])
def test_stop_gradient_multi_output(stops):
    scope = Scope.NewRootScope()
    x = ops.Const(scope, np.ones((3, 2, 4), np.int32))
    y = ops.Unstack(scope, x, 3)
    outs = [ops.StopGradient(scope, o).output if s else o for o, s in zip(y.output, stops)]
    g_vals = [np.arange(1, 9, dtype=np.int32).reshape(2, 4) + 8 * k for k in range(3)]
    gs = [ops.Const(scope, v) for v in g_vals]
    (grad,) = AddSymbolicGradients(scope, outs, [x], gs)
    if all(stops):
        assert grad == NoGradient()
        return
    # outputs that got NoGradient are filled with ZerosLike before Unpack's gradient runs
    n_zeros = sum(1 for n in scope.graph().nodes() if n.op == "ZerosLike")
    assert n_zeros == sum(stops)
    needs_kernels("Unpack", "Pack", "ZerosLike")
    want = np.stack([np.zeros_like(g) if s else g for g, s in zip(g_vals, stops)])
    np.testing.assert_array_equal(run(scope, [grad])[0], want)


def test_no_gradient_op_sends_no_gradient_to_inputs():
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope, DT_FLOAT)
    s = ops.Shape(scope, x)
    y = ops.Cast(scope, s, DT_FLOAT)
    (grad,) = AddSymbolicGradients(scope, [y], [x])
    assert grad == NoGradient()


def test_grad_function_returning_too_few_outputs_is_internal_error(monkeypatch):
    registry = GradOpRegistry.Global()
    monkeypatch.setitem(registry._fns, "Cumprod", lambda scope, op, grads: [])
    scope = Scope.NewRootScope()
    x = ops.Const(scope, [1.0, 2.0])
    y = ops.Cumprod(scope, x, 0)
    with pytest.raises(InternalError, match="Invalid gradient output index: 0 size: 0"):
        AddSymbolicGradients(scope, [y], [x])


def test_registering_twice_is_an_error():
    with pytest.raises(Exception, match="Existing gradient for MatMul"):
        register_gradient("MatMul")(lambda scope, op, grads: grads)


def test_record_only_scope_error_from_a_grad_function_is_raised():
    scope = Scope.NewRootScope(raise_errors=False)
    x = ops.Const(scope, [1.0, 2.0])
    y = ops.Square(scope, x)
    ops.Reshape(scope, x, [3])  # leaves a shape error in the scope status
    assert not scope.ok()
    with pytest.raises(InvalidArgumentError):
        AddSymbolicGradients(scope, [y], [x])


def test_gradient_with_a_fed_upstream_placeholder_runs():
    """Tanh's gradient depends on its upstream gradient by a control edge; a fed placeholder satisfies it."""
    needs_kernels("Tanh", "TanhGrad")
    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope, DT_FLOAT, shape=[2])
    dy = ops.Placeholder(scope, DT_FLOAT, shape=[2])
    (dx,) = AddSymbolicGradients(scope, [ops.Tanh(scope, x)], [x], [dy])
    assert dy.node() in dx.node().control_inputs
    (got,) = run(scope, [dx], {x: [0.0, 1.0], dy: [1.0, 2.0]})
    np.testing.assert_allclose(got, [1.0, 2.0 * (1 - np.tanh(1.0) ** 2)], rtol=1e-6)
