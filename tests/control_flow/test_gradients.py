"""Gradients through control flow: BuildWhileLoop loops (the semantics of TF's while_gradients_test.cc, written
here), TF1 conds, functional While/If/Case and calls, TensorList and TensorArray ops, and a Keras LSTM graph;
checked by finite differences and against tf.GradientTape."""
from __future__ import annotations

import numpy as np
import pytest

from tests.control_flow.test_tf_graphs import _golden
from tests.gradients.harness import GradCase, case_tests
from tests.tf_oracle import require_tf
from tfops_py import DT_DOUBLE, DT_INT32, DT_VARIANT, AddSymbolicGradients, ClientSession, Function, Scope, ops
from tfops_py.errors import UnimplementedError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output
from tfops_py.graphdef import import_graph_def

rng = np.random.default_rng(11)


def r(*shape: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=shape)


# ----------------------------------------------------------------------------- BuildWhileLoop (C++ semantics)
def while_gradients(num_inputs: int, cond, body, feeds: list, dtype=DT_INT32, transform=None, after=None):
    root = Scope.NewRootScope()
    xs = [ops.Placeholder(root, dtype) for _ in range(num_inputs)]
    loop_inputs = transform(root, xs) if transform else xs
    outs = ops.BuildWhileLoop(root, loop_inputs, cond, body, "test_loop")
    if after:
        outs = after(root, outs)
    grads = AddSymbolicGradients(root, outs, xs)
    session = ClientSession(root, fetch_numpy=True)
    return [session.Run(dict(zip(xs, values)), grads) for values in feeds]


def test_basic_while_gradient():
    # while (i < 10) i += 1: d(out)/d(in) = 1 whether or not the body runs
    got = while_gradients(1, lambda s, v: ops.Less(s, v[0], 10), lambda s, v: [ops.AddN(s, [v[0], 1])], [[1], [11]])
    assert got == [[1], [1]]


def test_multiple_loop_vars():
    # while (i < 10) { i += j; j += 1 }; k unchanged: dF/dj counts how often j reaches i
    got = while_gradients(3, lambda s, v: ops.Less(s, v[0], 10),
                          lambda s, v: [ops.AddN(s, [v[0], v[1]]), ops.AddN(s, [v[1], 1]), v[2]],
                          [[0, 1, 2], [1, 1, 0], [0, 0, 0]])
    assert got == [[1, 5, 1], [1, 5, 1], [1, 6, 1]]


def test_chaining_into_and_out_of_the_loop():
    got = while_gradients(
        2, lambda s, v: ops.LogicalAnd(s, ops.Greater(s, v[0], np.float64(0)), ops.Greater(s, v[1], np.float64(0))),
        lambda s, v: [ops.AddN(s, [v[0], np.float64(-1)]), v[1]], [[1.0, 1.0], [0.0, 0.0]], dtype=DT_DOUBLE,
        transform=lambda s, xs: [ops.Multiply(s, x, np.float64(2.0)) for x in xs],
        after=lambda s, outs: [ops.Neg(s, outs[0]).y, outs[1]])
    assert got == [[-2.0, 2.0], [-2.0, 2.0]]


@pytest.mark.tf
def test_gradient_graph_exports_and_runs_in_tf():
    """The gradient graph (forward counter, backprop frame and its loop) imports into TF, which computes the same."""
    from tests.graphdef.test_export_tf import run_in_tf
    from tfops_py.graphdef import graph_def_to_bytes

    tf = require_tf()
    root = Scope.NewRootScope()
    xs = [ops.Placeholder(root.WithOpName(f"x{k}"), DT_INT32) for k in range(3)]
    outs = ops.BuildWhileLoop(root, xs, lambda s, v: ops.Less(s, v[0], 10),
                              lambda s, v: [ops.AddN(s, [v[0], v[1]]), ops.AddN(s, [v[1], 1]), v[2]], "test_loop")
    grads = AddSymbolicGradients(root, outs, xs)
    session = ClientSession(root, fetch_numpy=True)
    for values in ([0, 1, 2], [1, 1, 0], [0, 0, 0], [12, 3, 1]):
        ours = session.Run(dict(zip(xs, values)), grads + outs)
        theirs = run_in_tf(tf, graph_def_to_bytes(root), {f"x{k}:0": v for k, v in enumerate(values)},
                           [o.name() for o in grads + outs], [])
        assert [int(a) for a in ours] == [int(b) for b in theirs]


def test_an_exit_without_gradient_counts_as_zeros():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_DOUBLE)
    outs = ops.BuildWhileLoop(root, [x, x], lambda s, v: ops.Less(s, v[0], np.float64(3)),
                              lambda s, v: [ops.AddN(s, [v[0], np.float64(1)]), ops.AddN(s, [v[1], v[1]])], "l")
    (dx,) = AddSymbolicGradients(root, [outs[0]], [x])
    assert ClientSession(root).Run({x: 0.0}, [dx]) == [1.0]


def test_body_needing_forward_values_is_a_clear_error():
    """C++ builds a gradient that fails when run (inputs from two frames); here it fails when built."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_DOUBLE)
    outs = ops.BuildWhileLoop(root, [x], lambda s, v: ops.Less(s, v[0], np.float64(10)),
                              lambda s, v: [ops.Mul(s, v[0], v[0])], "squares")
    with pytest.raises(UnimplementedError, match="needs 'Switch' from every forward iteration"):
        AddSymbolicGradients(root, outs, [x])


# ----------------------------------------------------------------------------- TF1 conds (Switch / Merge)
@pytest.mark.parametrize("x", [1.5, -1.5])
def test_switch_merge_cond_gradient(x, backend):
    """y = x > 0 ? x * x : 3 x; dy/dx through the Merge to the taken branch only."""
    root = Scope.NewRootScope()
    xp = ops.Placeholder(root, DT_DOUBLE)
    sw = ops.Switch(root, xp, ops.Greater(root, xp, np.float64(0)))
    merge = ops.Merge(root, [ops.Mul(root, sw.output_true, sw.output_true), ops.Mul(root, sw.output_false,
                                                                                     np.float64(3))])
    (dx,) = AddSymbolicGradients(root, [merge.output], [xp])
    assert ClientSession(root, backend=backend).Run({xp: x}, [dx]) == [2 * x if x > 0 else 3.0]


# ----------------------------------------------------------------------------- functional control flow
def _loop_fns(s: Scope, dtype=DT_DOUBLE):
    cond = Function.from_callable(s, "cond", [dtype, dtype, DT_INT32], lambda sc, a, b, i: ops.Less(sc, i, 3))
    body = Function.from_callable(s, "body", [dtype, dtype, DT_INT32], lambda sc, a, b, i: [
        ops.Mul(sc, ops.Sin(sc, a), b), ops.AddV2(sc, b, ops.Square(sc, a)), ops.Add(sc, i, 1)])
    return cond, body


def _while(s: Scope, a, b):
    cond, body = _loop_fns(s)
    loop = ops.While(s, [a, b, ops.Const(s, 0)], cond, body)
    return [loop.output[0], loop.output[1]]


def _tf_while(tf, a, b):
    i, a, b = 0, a, b
    while i < 3:
        a, b, i = tf.sin(a) * b, b + tf.square(a), i + 1
    return [a, b]


def _if(s: Scope, x, p):
    then = Function.from_callable(s, "then", [DT_DOUBLE, DT_DOUBLE], lambda sc, x, p: [ops.Mul(sc, x, p)])
    other = Function.from_callable(s, "other", [DT_DOUBLE, DT_DOUBLE], lambda sc, x, p: [ops.Exp(sc, x)])
    return ops.If(s, ops.Greater(s, ops.Sum(s, p, [0]), np.float64(0)), [x, p], [DT_DOUBLE], then, other).output[0]


def _case(s: Scope, x):
    branches = [Function.from_callable(s, f"b{k}", [DT_DOUBLE], fn) for k, fn in enumerate(
        [lambda sc, x: [ops.Tanh(sc, x)], lambda sc, x: [ops.Mul(sc, x, x)], lambda sc, x: [ops.Neg(sc, x)]])]
    return [ops.Case(s, ops.Const(s, k), [x], [DT_DOUBLE], branches).output[0] for k in (0, 1, 7)]


def _call(s: Scope, x, y):
    f = Function.from_callable(s, "f", [DT_DOUBLE, DT_DOUBLE], lambda sc, x, y: [ops.Mul(sc, ops.Sin(sc, x), y),
                                                                                   ops.Cast(sc, x, DT_INT32)])
    outer = Function.from_callable(s, "outer", [DT_DOUBLE, DT_DOUBLE], lambda sc, x, y: [ops.Exp(sc, f(sc, x, y)[0])])
    return outer(s, x, y)[0]


def _tensor_list_loop(s: Scope, x):
    """Running products written into a TensorList inside a While: the loop variables include the list."""
    def body(sc, i, p, lst):
        q = ops.Mul(sc, p, ops.TensorListGetItem(sc, lst, i, -1, DT_DOUBLE).item)
        return [ops.Add(sc, i, 1), q, ops.TensorListSetItem(sc, lst, i, q)]

    types = [DT_INT32, DT_DOUBLE, DT_VARIANT]
    cond = Function.from_callable(s, "lc", types, lambda sc, i, p, lst: ops.Less(sc, i, 4))
    initial = [ops.Const(s, 0), ops.Const(s, np.float64(1.0)), ops.TensorListFromTensor(s, x, np.zeros(0, np.int32))]
    loop = ops.While(s, initial, cond, Function.from_callable(s, "lb", types, body))
    return [loop.output[1], ops.TensorListStack(s, loop.output[2], np.zeros(0, np.int32), DT_DOUBLE).tensor]


CASES = [
    GradCase("while_replay", _while, _tf_while, (r(2), r(2))),
    GradCase("if", lambda s, x, p: _if(s, x, p), lambda tf, x, p: tf.cond(tf.reduce_sum(p) > 0, lambda: x * p,
                                                                           lambda: tf.exp(x)),
             (r(3), np.abs(r(3)) + 0.1)),
    GradCase("if_else", lambda s, x, p: _if(s, x, p), lambda tf, x, p: tf.cond(tf.reduce_sum(p) > 0, lambda: x * p,
                                                                                lambda: tf.exp(x)),
             (r(3), -np.abs(r(3)) - 0.1)),
    GradCase("case", _case, lambda tf, x: [tf.tanh(x), x * x, -x], (r(2, 2),)),
    GradCase("nested_calls", _call, lambda tf, x, y: tf.exp(tf.sin(x) * y), (r(3), r(3))),
    GradCase("tensor_list_loop", _tensor_list_loop, lambda tf, x: [tf.reduce_prod(x), tf.math.cumprod(x)],
             (r(4) + 1.5,)),
]
test_gradient_matches_finite_differences, test_gradient_matches_tensorflow = case_tests(CASES)


# ----------------------------------------------------------------------------- list and array ops
def _list_ops(s: Scope, x):
    lst = ops.TensorListFromTensor(s, x, [3]).output_handle
    item = ops.TensorListGetItem(s, lst, 1, [3], DT_DOUBLE).item
    lst = ops.TensorListSetItem(s, lst, 0, ops.Mul(s, item, item)).output_handle
    lst = ops.TensorListPushBack(s, lst, ops.Sin(s, item)).output_handle
    popped = ops.TensorListPopBack(s, lst, [3], DT_DOUBLE)
    gathered = ops.TensorListGather(s, popped.output_handle, [2, 0], [3], DT_DOUBLE).values
    return [ops.TensorListStack(s, popped.output_handle, [3], DT_DOUBLE).tensor, popped.tensor, gathered]


def _tf_list_ops(tf, x):
    item = x[1]
    stacked = tf.concat([[item * item], x[1:]], 0)
    return [stacked, tf.sin(item), tf.stack([stacked[2], stacked[0]])]


def _more_list_ops(s: Scope, x):
    lst = ops.TensorListScatterV2(s, x, [2, 0, 1], [3], 4).output_handle
    lst = ops.TensorListResize(s, lst, 3).output_handle
    first = ops.Slice(s, x, [0, 0], [1, 3])
    lst = ops.TensorListScatterIntoExistingList(s, lst, ops.Mul(s, first, ops.Slice(s, x, [1, 0], [1, 3])), [1])
    lst = ops.TensorListScatter(s, ops.TensorListStack(s, lst.output_handle, [3], DT_DOUBLE).tensor, [0, 1, 2],
                                [3]).output_handle
    concat = ops.TensorListConcatV2(s, lst, [-1], np.zeros(0, np.int64), DT_DOUBLE)
    split = ops.TensorListSplit(s, ops.Exp(s, concat.tensor), [-1], np.int64([4, 5])).output_handle
    return ops.TensorListConcat(s, split, DT_DOUBLE, element_shape=[-1]).tensor


def _tf_more_list_ops(tf, x):
    rows = [x[1], x[2], x[0]]
    rows[1] = x[0] * x[1]
    return tf.exp(tf.concat(rows, 0))


def _tensor_array(s: Scope, x):
    ta = ops.TensorArray(s, 4, DT_DOUBLE, element_shape=[2])
    flow = ops.TensorArrayScatter(s, ta.handle, [3, 0, 2, 1], x, ta.flow).flow_out
    read = ops.TensorArrayRead(s, ta.handle, 2, flow, DT_DOUBLE).value
    ta2 = ops.TensorArray(s, 2, DT_DOUBLE, element_shape=[2])
    flow2 = ops.TensorArrayWrite(s, ta2.handle, 0, ops.Mul(s, read, read), ta2.flow).flow_out
    flow2 = ops.TensorArrayWrite(s, ta2.handle, 1, ops.Exp(s, read), flow2).flow_out
    return ops.TensorArrayGather(s, ta2.handle, [1, 0], flow2, DT_DOUBLE, element_shape=[2]).value


def _tensor_array_concat_split(s: Scope, x):
    ta = ops.TensorArray(s, 2, DT_DOUBLE)
    flow = ops.TensorArraySplit(s, ta.handle, x, np.int64([1, 3]), ta.flow).flow_out
    concat = add_node(s, get_op_def("TensorArrayConcatV3"), [ta.handle, flow], {"dtype": DT_DOUBLE})
    return ops.Square(s, Output(concat, 0))


def _switch_merge(s: Scope, x):
    sw = ops.Switch(s, x, ops.Greater(s, ops.Sum(s, x, [0]), np.float64(0)))
    return ops.Merge(s, [ops.Sin(s, sw.output_false), ops.Mul(s, sw.output_true, sw.output_true)]).output


def _stateless(s: Scope, x):
    then = Function.from_callable(s, "t", [DT_DOUBLE], lambda sc, v: [ops.Sin(sc, v)])
    other = Function.from_callable(s, "e", [DT_DOUBLE], lambda sc, v: [ops.Cos(sc, v)])
    a = ops.StatelessIf(s, ops.Const(s, True), [x], [DT_DOUBLE], then, other).output[0]
    b = ops.StatelessCase(s, ops.Const(s, 1), [a], [DT_DOUBLE], [then, other]).output[0]
    cond = Function.from_callable(s, "wc", [DT_DOUBLE, DT_INT32], lambda sc, v, i: ops.Less(sc, i, 2))
    body = Function.from_callable(s, "wb", [DT_DOUBLE, DT_INT32], lambda sc, v, i: [ops.Sin(sc, v), ops.Add(sc, i, 1)])
    c = ops.StatelessWhile(s, [b, ops.Const(s, 0)], cond, body).output[0]
    return ops.StatefulPartitionedCall(s, [c], [DT_DOUBLE], then).output[0]


LIST_CASES = [
    GradCase("list_ops", _list_ops, _tf_list_ops, (r(3, 3),)),
    GradCase("tensor_array", _tensor_array, lambda tf, x: tf.stack([tf.exp(x[2]), x[2] * x[2]]), (r(4, 2),)),
    GradCase("more_list_ops", _more_list_ops, _tf_more_list_ops, (r(3, 3),)),
    GradCase("tensor_array_concat_split", _tensor_array_concat_split, lambda tf, x: tf.square(x), (r(4, 2),)),
    GradCase("switch_merge_true", _switch_merge, lambda tf, x: x * x, (np.abs(r(3)) + 0.1,)),
    GradCase("switch_merge_false", _switch_merge, lambda tf, x: tf.sin(x), (-np.abs(r(3)) - 0.1,)),
    GradCase("stateless_and_stateful", _stateless, lambda tf, x: tf.sin(tf.sin(tf.sin(tf.cos(tf.sin(x))))), (r(3),)),
]
test_list_gradient_matches_finite_differences, test_list_gradient_matches_tensorflow = case_tests(LIST_CASES)


# ----------------------------------------------------------------------------- a Keras LSTM graph
@pytest.mark.tf
@pytest.mark.parametrize("case", ["keras_lstm_functional", "keras_gru_functional"])
def test_keras_rnn_graph_gradient_matches_tf(case):
    """d(sum of the outputs)/d(input) of the imported graph, against TF differentiating the same GraphDef."""
    tf = require_tf()
    graph, runs, fetches, _ = _golden(case)
    (input_name,) = runs[0]
    x = runs[0][input_name]
    root = Scope.NewRootScope()
    imported = import_graph_def(root, graph)
    (dx,) = AddSymbolicGradients(root, [imported[fetches[0]]], [imported[input_name]])
    (ours,) = ClientSession(root, fetch_numpy=True).Run({imported[input_name]: x}, [dx])
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(graph), name="")
        y = g.get_tensor_by_name(fetches[0])
        theirs_t = tf.compat.v1.gradients(y, g.get_tensor_by_name(input_name))[0]
        with tf.compat.v1.Session(graph=g) as sess:
            theirs = sess.run(theirs_t, {input_name: x})
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
