"""Function libraries: Function.from_callable, While/If/Case/PartitionedCall nodes, calls by op type, polymorphic
functions instantiated per attr values, clean errors (recursion, missing functions, signatures that do not fit),
and libraries that export to GraphDef, import back, and run in TF."""
from __future__ import annotations

import numpy as np
import pytest

from tests.graphdef.test_export_tf import assert_same, run_in_tf
from tests.tf_oracle import require_tf
from tfops_py import (DT_BOOL, DT_FLOAT, DT_INT32, ClientSession, Function, PartialTensorShape, Scope,
                      ops)
from tfops_py.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from tfops_py.framework.function import AttrPlaceholder, FunctionDef, FunctionNodeDef
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import ArgDef, AttrDef, OpDef
from tfops_py.framework.operation import Output
from tfops_py.graphdef import graph_def_to_bytes, import_graph_def, to_graph_def


def session(root, backend="numpy"):
    return ClientSession(root, backend=backend, fetch_numpy=True)


def loop_functions(root):
    cond = Function.from_callable(root, "cond", [DT_FLOAT, DT_INT32], lambda s, x, i: ops.Less(s, i, 5))
    body = Function.from_callable(root, "body", [DT_FLOAT, DT_INT32],
                                  lambda s, x, i: [ops.AddV2(s, ops.Mul(s, x, 2.0), 1.0), ops.Add(s, i, 1)])
    return cond, body


def test_from_callable_records_a_function_def():
    root = Scope.NewRootScope()
    _, body = loop_functions(root)
    fdef = root.graph().library.Find("body")
    assert fdef is body.fdef and [a.name for a in fdef.signature.inputs] == ["x", "i"]
    assert [a.name for a in fdef.signature.outputs] == ["output_0", "output_1"]
    assert fdef.ret == {"output_0": "AddV2:z:0", "output_1": "Add:z:0"}
    assert body.input_types == [DT_FLOAT, DT_INT32] and body.output_types == [DT_FLOAT, DT_INT32]
    assert repr(body) == "<Function body(float, int32) -> (float, int32)>"


def test_while(backend):
    root = Scope.NewRootScope()
    cond, body = loop_functions(root)
    x = ops.Placeholder(root, DT_FLOAT)
    loop = ops.While(root, [x, ops.Const(root, 0)], cond, body)
    value, count = session(root, backend).Run({x: 0.5}, list(loop.output))
    expected = 0.5
    for _ in range(5):
        expected = expected * 2 + 1
    assert value == np.float32(expected) and count == 5


def test_if_and_case(backend):
    root = Scope.NewRootScope()
    double = Function.from_callable(root, "double", [DT_FLOAT], lambda s, x: [ops.Mul(s, x, 2.0)])
    negate = Function.from_callable(root, "negate", [DT_FLOAT], lambda s, x: [ops.Neg(s, x)])
    square = Function.from_callable(root, "square", [DT_FLOAT], lambda s, x: [ops.Square(s, x)])
    x = ops.Placeholder(root, DT_FLOAT)
    p = ops.Placeholder(root, DT_BOOL)
    k = ops.Placeholder(root, DT_INT32)
    branch = ops.If(root, p, [x], [DT_FLOAT], double, negate)
    case = ops.Case(root, k, [x], [DT_FLOAT], [double, negate, square])
    sess = session(root, backend)
    assert sess.Run({x: 3.0, p: True}, [branch.output[0]]) == [6.0]
    assert sess.Run({x: 3.0, p: False}, [branch.output[0]]) == [-3.0]
    assert [sess.Run({x: 3.0, k: i}, [case.output[0]])[0] for i in (0, 1, 2, 3, -1)] == [6.0, -3.0, 9.0, 9.0, 9.0]


def test_predicates_convert_as_tfs_to_bool():
    root = Scope.NewRootScope()
    keep = Function.from_callable(root, "keep", [DT_FLOAT], lambda s, x: [ops.Identity(s, x)])
    drop = Function.from_callable(root, "drop", [DT_FLOAT], lambda s, x: [ops.Neg(s, x)])
    x = ops.Const(root, 1.0)
    sess = session(root)
    for pred, expected in [(0, -1.0), (7, 1.0), (np.zeros(0, np.float32), -1.0), (np.zeros(3, np.float32), 1.0),
                           (np.float32(0.5), 1.0)]:
        branch = ops.If(root, ops.Const(root, pred), [x], [DT_FLOAT], keep, drop)
        assert sess.Run([branch.output[0]]) == [expected]
    bad = ops.If(root, ops.Const(root, np.complex64(1)), [x], [DT_FLOAT], keep, drop)
    with pytest.raises(InvalidArgumentError, match="complex64 cannot be converted to a boolean"):
        sess.Run([bad.output[0]])


def test_calls(backend):
    root = Scope.NewRootScope()
    affine = Function.from_callable(root, "affine", [DT_FLOAT, DT_FLOAT],
                                    lambda s, x, b: [ops.AddV2(s, ops.Mul(s, x, 3.0), b), ops.Identity(s, b)])
    x = ops.Placeholder(root, DT_FLOAT)
    y, b = affine(root, x, ops.Const(root, 1.0))  # a PartitionedCall node
    stateful = ops.StatefulPartitionedCall(root, [x, x], [DT_FLOAT, DT_FLOAT], affine)
    direct = add_node(root, affine.fdef.signature, [x.output, x.output], {})  # op type = the function (TF1 Defun)
    assert y.node().op == "PartitionedCall" and direct.op == "affine"
    out = session(root, backend).Run({x: 2.0}, [y, b, stateful.output[0], Output(direct, 0), Output(direct, 1)])
    assert out == [7.0, 1.0, 8.0, 8.0, 2.0]


def test_functions_calling_functions_and_loops_in_bodies():
    root = Scope.NewRootScope()
    cond, body = loop_functions(root)

    def outer(s, x):
        loop = ops.While(s, [x, ops.Const(s, 0)], cond, body)
        return [ops.Mul(s, loop.output[0], 10.0)]

    outer_fn = Function.from_callable(root, "outer", [DT_FLOAT], outer)
    twice = Function.from_callable(root, "twice", [DT_FLOAT], lambda s, x: [ops.AddV2(s, outer_fn(s, x)[0], 1.0)])
    x = ops.Placeholder(root, DT_FLOAT)
    assert session(root).Run({x: 0.0}, twice(root, x)) == [311.0]


def _poly_library(root):
    sig = OpDef(name="plus_self", inputs=(ArgDef("a", type_attr="T"),), outputs=(ArgDef("out", type_attr="T"),),
                attrs=(AttrDef("T", "type"),))
    node = FunctionNodeDef("add", "AddV2", ["a", "a"], attr={"T": AttrPlaceholder("T")})
    root.graph().library.AddFunctionDef(FunctionDef(sig, [node], {"out": "add:z:0"}))


def test_polymorphic_function_is_instantiated_per_attr_values(backend):
    root = Scope.NewRootScope()
    _poly_library(root)
    f32 = ops.PartitionedCall(root, [ops.Const(root, 1.5)], [DT_FLOAT], {"name": "plus_self", "attr": {"T": DT_FLOAT}})
    i32 = ops.PartitionedCall(root, [ops.Const(root, 4)], [DT_INT32], {"name": "plus_self", "attr": {"T": DT_INT32}})
    direct = add_node(root, root.graph().library.Find("plus_self").signature, [ops.Const(root, 2.5)], {})
    sess = session(root, backend)
    assert sess.Run([f32.output[0], i32.output[0], Output(direct, 0)]) == [3.0, 8, 5.0]
    assert len(sess._functions._cache) == 2  # float and int32 instantiations, compiled once each


# ----------------------------------------------------------------------------- errors
def test_recursion_is_an_error():
    root = Scope.NewRootScope()
    sig = OpDef(name="f", inputs=(ArgDef("a", type=DT_FLOAT),), outputs=(ArgDef("out", type=DT_FLOAT),), attrs=())
    call = FunctionNodeDef("call", "PartitionedCall", ["a"],
                           attr={"Tin": [DT_FLOAT], "Tout": [DT_FLOAT], "f": {"name": "f", "attr": {}}})
    root.graph().library.AddFunctionDef(FunctionDef(sig, [call], {"out": "call:output:0"}))
    out = ops.PartitionedCall(root.WithOpName("top"), [ops.Const(root, 1.0)], [DT_FLOAT], "f")
    with pytest.raises(InvalidArgumentError, match=r"function 'f' calls itself \(f -> f\)"):
        session(root).Run([out.output[0]])


def test_missing_function_is_not_found():
    root = Scope.NewRootScope()
    out = ops.PartitionedCall(root, [ops.Const(root, 1.0)], [DT_FLOAT], "nowhere")
    with pytest.raises(NotFoundError, match="Function 'nowhere' is not defined"):
        session(root).Run([out.output[0]])


def test_while_body_changing_a_dtype_is_an_error():
    root = Scope.NewRootScope()
    cond = Function.from_callable(root, "c", [DT_INT32], lambda s, i: ops.Less(s, i, 3))
    body = Function.from_callable(root, "b", [DT_INT32], lambda s, i: [ops.Cast(s, i, DT_FLOAT)])
    loop = ops.While(root.WithOpName("w"), [ops.Const(root, 0)], cond, body)
    with pytest.raises(InvalidArgumentError, match=r"function 'b' \(body\) returns \(float\) but the node expects "
                                                   r"\(int32\)"):
        session(root).Run([loop.output[0]])


def test_while_cond_must_return_one_tensor():
    root = Scope.NewRootScope()
    cond = Function.from_callable(root, "c", [DT_INT32], lambda s, i: [ops.Less(s, i, 3), ops.Less(s, i, 4)])
    body = Function.from_callable(root, "b", [DT_INT32], lambda s, i: [ops.Add(s, i, 1)])
    loop = ops.While(root, [ops.Const(root, 0)], cond, body)
    with pytest.raises(InvalidArgumentError, match="Expected a single scalar return value from WhileOp cond, got 2"):
        session(root).Run([loop.output[0]])


def test_call_with_wrong_argument_types_is_an_error():
    root = Scope.NewRootScope()
    f = Function.from_callable(root, "f", [DT_FLOAT], lambda s, x: [ops.Identity(s, x)])
    call = ops.PartitionedCall(root, [ops.Const(root, 1)], [DT_FLOAT], f)
    with pytest.raises(InvalidArgumentError, match=r"function 'f' \(f\) takes \(float\) but the node passes"):
        session(root).Run([call.output[0]])


def test_body_cannot_capture_an_outer_tensor():
    root = Scope.NewRootScope()
    outer = ops.Const(root, 2.0)
    with pytest.raises(InvalidArgumentError, match="tensor of another graph"):
        Function.from_callable(root, "bad", [DT_FLOAT], lambda s, x: [ops.Mul(s, x, outer)])


def test_a_different_function_with_the_same_name_is_refused():
    root = Scope.NewRootScope()
    Function.from_callable(root, "f", [DT_FLOAT], lambda s, x: [ops.Identity(s, x)])
    Function.from_callable(root, "f", [DT_FLOAT], lambda s, x: [ops.Identity(s, x)])  # the same: fine
    with pytest.raises(AlreadyExistsError, match="a different function with the same name already exists"):
        Function.from_callable(root, "f", [DT_FLOAT], lambda s, x: [ops.Neg(s, x)])


def test_error_inside_a_body_names_the_function_and_node():
    root = Scope.NewRootScope()
    f = Function.from_callable(root, "f", [DT_INT32], lambda s, x: [ops.FloorDiv(s, x, 0)])
    call = ops.PartitionedCall(root, [ops.Const(root, 3)], [DT_INT32], f)
    with pytest.raises(InvalidArgumentError, match="Integer division by zero") as e:
        session(root).Run([call.output[0]])
    assert e.value.node_name == "FloorDiv"


# ----------------------------------------------------------------------------- GraphDef
def _library_graph(polymorphic: bool = True):
    """A While and a call; TF's Python importer cannot read polymorphic functions, so the TF test leaves them out."""
    root = Scope.NewRootScope()
    cond, body = loop_functions(root)
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT)
    loop = ops.While(root.WithOpName("loop"), [x, ops.Const(root, 0)], cond, body,
                     output_shapes=[PartialTensorShape([]), PartialTensorShape([])])
    if polymorphic:
        _poly_library(root)
        f = {"name": "plus_self", "attr": {"T": DT_FLOAT}}
    else:
        f = Function.from_callable(root, "plus_self", [DT_FLOAT], lambda s, a: [ops.AddV2(s, a, a)])
    call = ops.PartitionedCall(root.WithOpName("call"), [loop.output[0]], [DT_FLOAT], f)
    return root, x, [loop.output[0], loop.output[1], call.output[0]]


def test_library_round_trips_through_graph_def():
    root, x, fetches = _library_graph()
    gd = to_graph_def(root)
    assert sorted(f.signature.name for f in gd.library.function) == ["body", "cond", "plus_self"]
    poly = next(f for f in gd.library.function if f.signature.name == "plus_self")
    assert poly.node_def[0].attr["T"].placeholder == "T" and poly.signature.attr[0].type == "type"
    again = Scope.NewRootScope()
    imported = import_graph_def(again, gd)
    assert to_graph_def(again).library == gd.library
    names = [o.name() for o in fetches]
    ours = session(again).Run({imported["x"]: 1.0}, [imported[n] for n in names])
    assert ours == session(root).Run({x: 1.0}, fetches)


@pytest.mark.tf
def test_exported_library_graph_runs_in_tf():
    tf = require_tf()
    root, x, fetches = _library_graph(polymorphic=False)
    names = [o.name() for o in fetches]
    theirs = run_in_tf(tf, graph_def_to_bytes(root), {"x:0": 1.25}, names, [])
    for a, b, name in zip(session(root).Run({x: 1.25}, fetches), theirs, names):
        assert_same(a, b, name)
