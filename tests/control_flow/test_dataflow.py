"""The dataflow executor: dead tensors, Switch/Merge conds, frames and iterations, ControlTrigger, Ref* ops, and
malformed graphs that end in clean errors (TF's class and message where TF has one)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.graphdef.test_export_tf import assert_same, run_in_tf
from tests.tf_oracle import require_tf
from tfops_py import DT_BOOL, DT_FLOAT, DT_INT32, ClientSession, Scope, ops
from tfops_py.errors import InternalError, InvalidArgumentError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output
from tfops_py.graphdef import graph_def_to_bytes


def session(root, backend="numpy"):
    return ClientSession(root, backend=backend, fetch_numpy=True)


def cond_graph():
    """merge(pred ? x * 2 : -x), plus the Switch's outputs."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT)
    pred = ops.Placeholder(root.WithOpName("pred"), DT_BOOL)
    sw = ops.Switch(root.WithOpName("sw"), x, pred)
    t = ops.Mul(root.WithOpName("t"), sw.output_true, 2.0)
    f = ops.Neg(root.WithOpName("f"), sw.output_false)
    merge = ops.Merge(root.WithOpName("merge"), [t, f])
    return root, x, pred, sw, merge


@pytest.mark.parametrize("pred, value, index", [(True, 6.0, 0), (False, -3.0, 1)])
def test_switch_merge_cond(backend, pred, value, index):
    root, x, p, _, merge = cond_graph()
    out, idx = session(root, backend).Run({x: 3.0, p: pred}, [merge.output, merge.value_index])
    assert out == value and idx == index and idx.dtype == np.int32


def test_fetching_a_dead_tensor_is_tfs_error():
    root, x, p, sw, _ = cond_graph()
    untaken = ops.Identity(root.WithOpName("untaken"), sw.output_true)
    sess = session(root)
    with pytest.raises(InvalidArgumentError, match=r"Retval\[1\] does not have value"):
        sess.Run({x: 3.0, p: False}, [sw.output_false, untaken])
    assert sess.Run({x: 3.0, p: False}, [sw.output_false], [untaken.operation]) == [3.0]  # a dead target is fine


def test_control_trigger_runs_on_dead_inputs_noop_does_not():
    root, x, p, sw, _ = cond_graph()
    dead = ops.Identity(root, sw.output_true)
    trigger = ops.ControlTrigger(root.WithControlDependencies(dead))
    after_trigger = ops.Const(root.WithOpName("after_trigger").WithControlDependencies(trigger), 1.0)
    noop = ops.NoOp(root.WithControlDependencies(dead))
    after_noop = ops.Const(root.WithOpName("after_noop").WithControlDependencies(noop), 2.0)
    sess = session(root)
    assert sess.Run({x: 1.0, p: False}, [after_trigger]) == [1.0]
    with pytest.raises(InvalidArgumentError, match="does not have value"):
        sess.Run({x: 1.0, p: False}, [after_noop])


def test_switch_predicate_must_be_a_scalar():
    root = Scope.NewRootScope()
    x = ops.Const(root, 1.0)
    pred = ops.Placeholder(root, DT_BOOL)  # unknown shape: only the kernel can tell
    sw = ops.Switch(root, x, pred)
    with pytest.raises(InvalidArgumentError, match=r"The second input must be a scalar, but it has shape \[2\]"):
        session(root).Run({pred: np.array([True, False])}, [sw.output_false])


def _merge_with_back_edge(root, enter):
    node = add_node(root, get_op_def("Merge"), [[enter, enter]], {}, back_edges=frozenset({1}))
    return Output(node, 0)


def manual_loop(parallel_iterations: int = 10, constant_limit: bool = False):
    """while i < limit: i += step, built node by node (TF1 style), the limit an is_constant Enter if asked."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_INT32)
    limit = ops.Placeholder(root.WithOpName("limit"), DT_INT32)
    enter = ops.internal.Enter(root, x, "loop", parallel_iterations=parallel_iterations)
    merge = _merge_with_back_edge(root, enter.output)
    if constant_limit:
        bound = ops.internal.Enter(root, limit, "loop", is_constant=True, parallel_iterations=parallel_iterations)
        cond = ops.Less(root, merge, bound)
    else:
        cond = ops.Less(root, merge, ops.Const(root.WithControlDependencies(merge), 10))
    loop_cond = ops.LoopCond(root, cond)
    sw = ops.Switch(root, merge, loop_cond)
    step = ops.Const(root.WithControlDependencies(sw.output_true), 3)
    nxt = ops.NextIteration(root, ops.AddV2(root, sw.output_true, step))
    root.graph().UpdateEdge(nxt.output, merge.node(), 1)
    out = ops.internal.Exit(root.WithOpName("out"), sw.output_false)
    return root, x, limit, out


@pytest.mark.parametrize("parallel_iterations", [1, 2, 10])
@pytest.mark.parametrize("constant_limit", [False, True])
def test_manual_loop(backend, parallel_iterations, constant_limit):
    root, x, limit, out = manual_loop(parallel_iterations, constant_limit)
    sess = session(root, backend)
    for start in (0, 7, 10, 25):
        feeds = {x: start, limit: 10} if constant_limit else {x: start}
        expected = start if start >= 10 else start + 3 * ((10 - start + 2) // 3)
        assert sess.Run(feeds, [out]) == [expected]


def test_long_loop_finishes_and_cleans_up():
    root, x, limit, out = manual_loop(constant_limit=True)
    assert session(root).Run({x: 0, limit: 30000}, [out]) == [30000]


def test_loop_on_an_untaken_branch_sends_dead_exits_to_the_merge(backend):
    """A loop inside the false branch of a cond: when the true branch is taken, its Exit is dead."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT)
    pred = ops.Greater(root, x, 0.0)
    sw = ops.Switch(root, x, pred)
    loop = ops.BuildWhileLoop(root.NewSubScope("neg"), [sw.output_false], lambda s, v: ops.Less(s, v[0], 10.0),
                              lambda s, v: [ops.Add(s, v[0], 4.0)], "in_branch")
    merge = ops.Merge(root, [ops.Mul(root, sw.output_true, 2.0), loop[0]])
    sess = session(root, backend)
    assert sess.Run({x: 3.0}, [merge.output]) == [6.0]
    assert sess.Run({x: -3.0}, [merge.output]) == [13.0]


def test_variable_in_a_loop_through_ref_enter():
    """A TF1 loop adding to a ref variable each iteration: RefEnter (is_constant) carries the reference in."""
    root = Scope.NewRootScope()
    var = ops.Variable(root.WithOpName("v"), [], DT_FLOAT)
    init = ops.Assign(root, var, 0.0)
    n = ops.Placeholder(root.WithOpName("n"), DT_INT32)

    def body(s, v):
        ref = ops.internal.RefEnter(s.WithNoControlDependencies(), var, "acc", is_constant=True)
        added = ops.AssignAdd(s, ref, 1.5)
        return [ops.Add(s.WithControlDependencies(added), v[0], 1), ops.Identity(s, v[1])]

    done = ops.BuildWhileLoop(root, [ops.Const(root, 0), n], lambda s, v: ops.Less(s, v[0], v[1]), body, "acc")
    read = ops.Identity(root.WithControlDependencies(done[0]), var)
    sess = session(root)
    sess.Run([], [init.operation])
    assert sess.Run({n: 4}, [read]) == [6.0]


@pytest.mark.parametrize("n", [0, 3])
def test_reference_as_a_loop_variable(backend, n):
    """RefMerge/RefSwitch/RefNextIteration/RefExit carry a variable's reference round the loop; the body adds
    through it.  (The loop compiler leaves such loops to the per-node schedule: its plans hand back values.)"""
    from tfops_py.kernels.control_flow._graph_cases import ref_loop

    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_FLOAT)
    limit = ops.Placeholder(root, DT_INT32)
    outs, targets = ref_loop(root, x.output, limit.output)
    i, value = session(root, backend).Run({x: [1.0, 2.0, 3.0], limit: n}, outs, targets)
    assert i == n
    np.testing.assert_array_equal(value, np.float32([1, 2, 3]) + n)


# ----------------------------------------------------------------------------- malformed graphs
def test_merge_with_two_live_inputs_is_an_error():
    """TF picks whichever input arrives first; here it is TF's Merge error (recorded as a divergence)."""
    root = Scope.NewRootScope()
    merge = ops.Merge(root.WithOpName("m"), [ops.Const(root, 1.0), ops.Const(root, 2.0)])
    with pytest.raises(InternalError, match="Merge can not have more than one valid input.") as e:
        session(root).Run([merge.output])
    assert e.value.node_name == "m"


def test_next_iteration_outside_a_frame_is_an_error():
    """TF runs it as an identity in the root frame; here it is rejected (recorded as a divergence)."""
    root = Scope.NewRootScope()
    nxt = ops.NextIteration(root.WithOpName("nxt"), ops.Const(root, 1.0))
    with pytest.raises(InvalidArgumentError, match="NextIteration outside a while loop frame"):
        session(root).Run([nxt.output])


def test_exit_outside_a_frame_is_tfs_error():
    root = Scope.NewRootScope()
    ex = ops.internal.Exit(root, ops.Const(root, 1.0))
    with pytest.raises(InvalidArgumentError, match="Invalid Exit op: Cannot find a corresponding Enter op."):
        session(root).Run([ex.output])


def test_inputs_from_different_frames_is_tfs_error():
    root = Scope.NewRootScope()
    x = ops.Const(root, 1.0)
    a = ops.internal.Enter(root.WithOpName("Enter"), x, "f1")
    b = ops.internal.Enter(root.WithOpName("Enter_1"), x, "f2")
    add = ops.AddV2(root.WithOpName("add"), a, b)
    with pytest.raises(InvalidArgumentError, match=r"\{\{node add\}\} has inputs from different frames. The input "
                                                   r"\{\{node Enter(_1)?\}\} is in frame 'f[12]'"):
        session(root).Run([add])


def test_enter_needs_a_frame_name():
    root = Scope.NewRootScope()
    enter = ops.internal.Enter(root.WithOpName("e"), ops.Const(root, 1.0), "")
    with pytest.raises(InvalidArgumentError, match=r"The Enter \{\{node e\}\} must have a frame name."):
        session(root).Run([ops.internal.Exit(root, enter).output])


@pytest.mark.parametrize("with_switch", [False, True])
def test_cycle_without_next_iteration_is_tfs_error(with_switch):
    root = Scope.NewRootScope()
    x = ops.Const(root, 1.0)
    a = ops.Identity(root.WithOpName("a"), x)
    b = ops.Identity(root.WithOpName("b"), a)
    root.graph().UpdateEdge(b, a.node(), 0)
    fetch = ops.Switch(root, b, ops.Const(root, True)).output_true if with_switch else b
    with pytest.raises(InvalidArgumentError,
                       match=r"Graph is invalid, contains a cycle with [23] nodes, including: a, b"):
        session(root).Run([fetch])


def test_fetch_inside_a_loop_is_an_error():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_INT32)
    inside = []

    def body(s, v):
        inside.append(ops.Add(s, v[0], 1))
        return [inside[0]]

    ops.BuildWhileLoop(root, [x], lambda s, v: ops.Less(s, v[0], 3), body, "loop")
    with pytest.raises(InvalidArgumentError, match="inside while loop frame 'loop'"):
        session(root).Run({x: 0}, [inside[0]])


def test_failed_run_leaves_the_session_usable():
    root, x, p, sw, merge = cond_graph()
    sess = session(root)
    with pytest.raises(InvalidArgumentError):
        sess.Run({x: 1.0, p: False}, [sw.output_true])
    assert sess.Run({x: 1.0, p: False}, [merge.output]) == [-1.0]


# ----------------------------------------------------------------------------- against TF
@pytest.mark.tf
@pytest.mark.parametrize("pred", [True, False])
def test_manual_graphs_run_in_tf_alike(pred):
    tf = require_tf()
    root, x, p, sw, merge = cond_graph()
    fetches = [merge.output.name(), merge.value_index.name()]
    theirs = run_in_tf(tf, graph_def_to_bytes(root), {"x:0": 2.5, "pred:0": pred}, fetches, [])
    ours = session(root).Run({x: 2.5, p: pred}, [merge.output, merge.value_index])
    for a, b, name in zip(ours, theirs, fetches):
        assert_same(a, b, name)
    loop_root, lx, limit, out = manual_loop(2, True)
    theirs = run_in_tf(tf, graph_def_to_bytes(loop_root), {"x:0": 1, "limit:0": 20}, ["out:0"], [])
    assert session(loop_root).Run({lx: 1, limit: 20}, [out]) == theirs
