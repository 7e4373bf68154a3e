"""Variables (state_ops.py): session-owned storage, Assign/AssignAdd/AssignSub, TF's errors.

Runs on both backends; the live tests build the same graphs with TF 1.x-style
VariableV2 refs in a tf.compat.v1.Session and compare values and error messages.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

from tests.tf_oracle import require_tf
from tfops_py import DT_DOUBLE, DT_FLOAT, ClientSession, PartialTensorShape, Scope, ops
from tfops_py.errors import FailedPreconditionError, InvalidArgumentError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output


def session(scope: Scope, backend: str) -> ClientSession:
    return ClientSession(scope, backend=backend, fetch_numpy=True)


def variable_v2(scope: Scope, shape, dtype, **attrs):
    """A VariableV2 node (the graph op TF's C++ ``ops::Variable`` builds)."""
    node = add_node(scope, get_op_def("VariableV2"), [], {"shape": PartialTensorShape(shape), "dtype": dtype,
                                                          **attrs})
    return Output(node, 0)


@pytest.fixture(params=["Variable", "VariableV2"])
def make_var(request):
    """Both graph op types get the same kernel."""
    if request.param == "Variable":
        return lambda scope, shape, dtype, **kw: ops.Variable(scope, shape, dtype, **kw).ref
    return variable_v2


def test_uninitialized_read_fails_at_the_reader_with_tf_message(backend, make_var):
    root = Scope.NewRootScope()
    v = make_var(root.WithOpName("v"), [2, 2], DT_FLOAT)
    read = ops.Identity(root.WithOpName("read"), v)
    sess = session(root, backend)
    with pytest.raises(FailedPreconditionError) as e:
        sess.Run([read])
    assert e.value.message == "Attempting to use uninitialized value v"
    assert e.value.node_name == "read"
    with pytest.raises(FailedPreconditionError, match="Attempting to use uninitialized value v"):
        sess.Run([v])  # fetching the variable itself


def test_assign_outputs_new_value_and_it_persists_across_runs(backend, make_var):
    root = Scope.NewRootScope()
    v = make_var(root.WithOpName("v"), [2, 2], DT_FLOAT)
    assign = ops.Assign(root, v, [[1.0, 2.0], [3.0, 4.0]])
    add = ops.AssignAdd(root, v, [[1.0, 1.0], [1.0, 1.0]])
    sub = ops.AssignSub(root, v, [[0.5, 0.5], [0.5, 0.5]])
    read = ops.Identity(root, v)
    sess = session(root, backend)
    (out,) = sess.Run([assign])
    np.testing.assert_array_equal(out, [[1, 2], [3, 4]])
    assert out.dtype == np.float32
    np.testing.assert_array_equal(sess.Run([add])[0], [[2, 3], [4, 5]])
    np.testing.assert_array_equal(sess.Run([add])[0], [[3, 4], [5, 6]])
    np.testing.assert_array_equal(sess.Run([sub])[0], [[2.5, 3.5], [4.5, 5.5]])
    np.testing.assert_array_equal(sess.Run([read])[0], [[2.5, 3.5], [4.5, 5.5]])
    np.testing.assert_array_equal(sess.Run([v])[0], [[2.5, 3.5], [4.5, 5.5]])


def test_two_sessions_on_one_graph_have_separate_variables(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root.WithOpName("v"), [], DT_FLOAT)
    assign = ops.Assign(root, v, 1.0)
    bump = ops.AssignAdd(root, v, 10.0)
    s1, s2 = session(root, backend), session(root, backend)
    s1.Run({}, [], [assign])
    s1.Run({}, [], [bump])
    with pytest.raises(FailedPreconditionError, match="uninitialized value v"):
        s2.Run([v])
    s2.Run({}, [], [assign])
    assert s1.Run([v])[0] == 11.0 and s2.Run([v])[0] == 1.0


def test_read_ordered_after_update_in_the_same_run_sees_new_value(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root.WithOpName("v"), [2], DT_FLOAT)
    assign = ops.Assign(root, v, [1.0, 2.0])
    before = ops.Identity(root, v)
    bump = ops.AssignAdd(root.WithControlDependencies(before), v, [10.0, 10.0])
    after = ops.Identity(root.WithControlDependencies(bump), v)
    sess = session(root, backend)
    sess.Run({}, [], [assign])
    got_before, got_after = sess.Run([before, after])
    np.testing.assert_array_equal(got_before, [1, 2])
    np.testing.assert_array_equal(got_after, [11, 12])


def test_assign_validate_shape(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root.WithOpName("v"), [2, 2], DT_FLOAT)
    p = ops.Placeholder(root, DT_FLOAT)
    bad = ops.Assign(root.WithOpName("bad"), v, p)
    sess = session(root, backend)
    with pytest.raises(InvalidArgumentError) as e:
        sess.Run({p: [1.0, 2.0, 3.0]}, [bad])
    assert e.value.message == "Assign requires shapes of both tensors to match. lhs shape= [2,2] rhs shape= [3]"
    assert e.value.node_name == "bad"
    with pytest.raises(InvalidArgumentError, match="Shapes must be equal rank, but are 2 and 1"):
        ops.Assign(root, v, [1.0, 2.0, 3.0])  # known shapes: refused at build time, as TF's shape function does


def test_assign_without_validate_shape_replaces_shape(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root.WithOpName("v"), PartialTensorShape(), DT_FLOAT)
    p = ops.Placeholder(root, DT_FLOAT)
    first = ops.Assign(root, v, [[1.0, 2.0], [3.0, 4.0]], validate_shape=False)
    again = ops.Assign(root, v, p, validate_shape=False)
    checked = ops.Assign(root.WithOpName("checked"), v, p)
    sess = session(root, backend)
    sess.Run({}, [], [first])
    np.testing.assert_array_equal(sess.Run({p: [5.0, 6.0, 7.0]}, [again])[0], [5, 6, 7])
    with pytest.raises(InvalidArgumentError, match=r"lhs shape= \[3\] rhs shape= \[2\]"):
        sess.Run({p: [1.0, 2.0]}, [checked])  # validate_shape compares with the current value


def test_assign_add_errors(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root.WithOpName("v"), [2], DT_FLOAT)
    p = ops.Placeholder(root, DT_FLOAT)
    add = ops.AssignAdd(root.WithOpName("add"), v, p)
    init = ops.Assign(root, v, [0.0, 0.0])
    sess = session(root, backend)
    with pytest.raises(FailedPreconditionError) as e:
        sess.Run({p: [1.0, 1.0]}, [add])
    assert e.value.message == "Attempting to use uninitialized value v" and e.value.node_name == "add"
    sess.Run({}, [], [init])
    with pytest.raises(InvalidArgumentError, match=r"^AssignAdd node 'add': Parameters and update must be the "
                                                   r"same size: \[2\] vs \[3\]"):
        sess.Run({p: [1.0, 1.0, 1.0]}, [add])


def test_assign_copies_the_fed_value(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root.WithOpName("v"), [3], DT_FLOAT)
    p = ops.Placeholder(root, DT_FLOAT, shape=[3])
    assign = ops.Assign(root, v, p)
    sess = session(root, backend)
    fed = np.array([1.0, 2.0, 3.0], np.float32)
    sess.Run({p: fed}, [], [assign])
    fed[:] = 0
    np.testing.assert_array_equal(sess.Run([v])[0], [1, 2, 3])


def test_is_variable_initialized(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root, [], DT_DOUBLE)
    init = ops.IsVariableInitialized(root, v)
    assign = ops.Assign(root, v, np.float64(2.0))
    sess = session(root, backend)
    assert sess.Run([init])[0].item() is False
    sess.Run({}, [], [assign])
    assert sess.Run([init])[0].item() is True


def test_shared_name_shares_storage_within_a_session(backend):
    root = Scope.NewRootScope()
    a = ops.Variable(root.WithOpName("a"), [], DT_FLOAT, shared_name="w")
    b = ops.Variable(root.WithOpName("b"), [], DT_FLOAT, shared_name="w")
    sess = session(root, backend)
    sess.Run({}, [], [ops.Assign(root, a, 3.0)])
    assert sess.Run([b])[0] == 3.0


def test_assign_to_a_non_variable_is_refused(backend):
    root = Scope.NewRootScope()
    c = ops.Const(root, [1.0])
    bad = ops.Assign(root.WithOpName("bad"), c, [2.0])
    with pytest.raises(InvalidArgumentError, match="Input 'ref' of 'Assign' Op requires l-value input"):
        session(root, backend).Run([bad])


def test_use_locking_serialises_concurrent_updates(backend):
    root = Scope.NewRootScope()
    v = ops.Variable(root, [], DT_DOUBLE)
    init = ops.Assign(root, v, np.float64(0.0))
    bump = ops.AssignAdd(root, v, np.float64(1.0), use_locking=True)
    sess = session(root, backend)
    sess.Run({}, [], [init])

    def work():
        for _ in range(200):
            sess.Run({}, [], [bump])

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sess.Run([v])[0] == 400.0


def test_shapes_inferred_at_build_time():
    root = Scope.NewRootScope()
    v = ops.Variable(root, [2, -1], DT_FLOAT)
    assert v.ref.shape().as_list() == [2, -1]
    assert ops.Assign(root, v, np.ones((2, 5), np.float32)).output_ref.shape().as_list() == [2, 5]
    p = ops.Placeholder(root, DT_FLOAT, shape=[3])
    assert ops.Assign(root, v, p, validate_shape=False).output_ref.shape().as_list() == [3]
    assert ops.IsVariableInitialized(root, v).is_initialized.shape().as_list() == []


# -- live comparison with TF (VariableV2 refs in a tf.compat.v1.Session) ---------------------------------
def _tf_run_sequence(tf, steps):
    g = tf.Graph()
    with g.as_default():
        p = tf.compat.v1.placeholder(tf.float32)
        v = tf.raw_ops.VariableV2(shape=[2, 2], dtype=tf.float32, name="v")
        made = {"Assign": tf.raw_ops.Assign(ref=v, value=p, name="a"),
                "AssignAdd": tf.raw_ops.AssignAdd(ref=v, value=p, name="aa"),
                "AssignSub": tf.raw_ops.AssignSub(ref=v, value=p, name="as"),
                "read": tf.identity(v, name="read")}
        sess = tf.compat.v1.Session(graph=g)
        out = []
        for op, value in steps:
            try:
                out.append(sess.run(made[op], {p: value} if value is not None else None))
            except tf.errors.OpError as e:
                out.append((type(e).__name__, [line for line in e.message.splitlines() if "value v" in line
                                               or "shapes" in line or "same size" in line][0].strip()))
    return out


def test_sequences_match_tensorflow(backend):
    tf = require_tf()
    steps = [("read", None), ("Assign", [[1.0, 2.0], [3.0, 4.0]]), ("AssignAdd", [[0.5, 0.5], [1.0, 1.0]]),
             ("AssignSub", [[2.0, 0.0], [0.0, 2.0]]), ("Assign", [1.0, 2.0, 3.0]), ("AssignAdd", [1.0]),
             ("read", None)]
    want = _tf_run_sequence(tf, steps)
    root = Scope.NewRootScope()
    p = ops.Placeholder(root, DT_FLOAT)
    v = variable_v2(root.WithOpName("v"), [2, 2], DT_FLOAT)
    made = {"Assign": ops.Assign(root.WithOpName("a"), v, p), "AssignAdd": ops.AssignAdd(root.WithOpName("aa"), v, p),
            "AssignSub": ops.AssignSub(root.WithOpName("as"), v, p), "read": ops.Identity(root.WithOpName("read"), v)}
    sess = session(root, backend)
    for (op, value), expected in zip(steps, want):
        try:
            got = sess.Run({p: value} if value is not None else {}, [made[op]])[0]
        except (FailedPreconditionError, InvalidArgumentError) as e:
            assert isinstance(expected, tuple), f"{op}: we raised {e}, TF returned {expected}"
            assert type(e).__name__ == expected[0] and e.message.startswith(expected[1])
            continue
        assert not isinstance(expected, tuple), f"{op}: TF raised {expected}, we returned {got}"
        np.testing.assert_array_equal(got, expected)


def test_integer_scatter_div_by_zero_is_an_error_not_a_crash():
    """TF's ScatterDiv dies of SIGFPE here (recorded divergence); the variable stays as it was."""
    from tfops_py.framework.dtypes import DT_INT32

    root = Scope.NewRootScope()
    var = ops.Variable(root, [3], DT_INT32)
    init = ops.Assign(root, var, [6, 7, 8])
    div = ops.ScatterDiv(root, var, [0, 2], [2, 0])
    sess = ClientSession(root)
    sess.Run([], [], [init.operation])
    with pytest.raises(InvalidArgumentError, match="Integer division by zero"):
        sess.Run([], [], [div.operation])
    assert sess.Run([ops.Identity(root, var).output])[0].tolist() == [6, 7, 8]
