"""Hostile GraphDefs: each gets a clean tfops_py error (as TF would give), the graph stays unchanged,
and nothing crashes, hangs or allocates what the input asks for.  No TensorFlow needed.
"""
from __future__ import annotations

import numpy as np
import pytest

from tfops_py import ClientSession, Scope, ops
from tfops_py.errors import (DataLossError, InvalidArgumentError, NotFoundError, ResourceExhaustedError,
                             UnimplementedError)
from tfops_py.framework.dtypes import DataType
from tfops_py.graphdef import import_graph_def, parse_graph_def, to_graph_def
from tfops_py.graphdef.schema import GRAPH_DEF_VERSION, GraphDef

CONST = 'node {{ name: "{name}" op: "Const" attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} ' \
        'attr {{ key: "value" value {{ tensor {{ dtype: DT_FLOAT tensor_shape {{ }} float_val: 1 }} }} }} }}'
T_FLOAT = 'attr { key: "T" value { type: DT_FLOAT } }'


def const(name: str) -> str:
    return CONST.format(name=name)


def node(name: str, op: str, *inputs: str, attrs: str = T_FLOAT) -> str:
    ins = " ".join(f'input: "{i}"' for i in inputs)
    return f'node {{ name: "{name}" op: "{op}" {ins} {attrs} }}'


def imported(*nodes: str, scope: Scope | None = None, **kwargs):
    scope = scope or Scope.NewRootScope()
    return import_graph_def(scope, "\n".join(nodes).encode(), as_text=True, **kwargs), scope


def tensor_const(tensor: str, dtype: str = "DT_FLOAT") -> str:
    return (f'node {{ name: "c" op: "Const" attr {{ key: "dtype" value {{ type: {dtype} }} }} '
            f'attr {{ key: "value" value {{ tensor {{ {tensor} }} }} }} }}')


# ----------------------------------------------------------------------------- bytes
def _good_bytes() -> bytes:
    root = Scope.NewRootScope()
    ops.AddV2(root.WithOpName("z"), ops.Const(root.WithOpName("a"), [1.0, 2.0]), 3.0)
    return to_graph_def(root).SerializeToString()


@pytest.mark.parametrize("data", [b"\xff\xff\xff\xff", b"\x0a\xff\xff\xff\xff\x0f", b"node {", b"\x00" * 7,
                                  b"garbage that is not a proto", b"node { name: 'x' op: 'Const' unknown_field: 1 }"])
def test_garbage_bytes_are_data_loss(data):
    with pytest.raises(DataLossError, match="Can't parse"):
        import_graph_def(Scope.NewRootScope(), data)


def test_truncated_bytes_never_crash():
    data = _good_bytes()
    for cut in range(1, len(data)):
        try:
            import_graph_def(Scope.NewRootScope(), data[:cut], as_text=False)
        except (DataLossError, InvalidArgumentError, NotFoundError):
            pass


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(NotFoundError, match="No such file"):
        import_graph_def(Scope.NewRootScope(), str(tmp_path / "missing.pb"))


def test_deeply_nested_text_is_data_loss():
    text = "node { attr { key: 'f' value { func { " + "attr { key: 'g' value { func { " * 3000
    with pytest.raises(DataLossError):
        parse_graph_def(text.encode(), as_text=True)


# ----------------------------------------------------------------------------- structure
def test_cycle_is_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="3 nodes in a cycle"):
        imported(node("a", "Identity", "c"), node("b", "Identity", "a"), node("c", "Identity", "b"))


def test_self_control_loop_is_a_cycle():
    with pytest.raises(InvalidArgumentError, match="cycle"):
        imported(const("a"), node("b", "NoOp", "^b", attrs=""))


def test_tf1_loop_back_edge_is_not_a_cycle():
    """NextIteration -> Merge closes a while loop: the importer orders around it and connects it last."""
    enter = 'attr { key: "frame_name" value { s: "w" } }'
    result, _ = imported(const("x"), node("enter", "Enter", "x", attrs=T_FLOAT + enter),
                         node("merge", "Merge", "enter", "next", attrs=T_FLOAT + ' attr { key: "N" value { i: 2 } }'),
                         node("next", "NextIteration", "merge"))
    assert result.node("merge").inputs[1].node() is result.node("next")
    assert result.node("merge").output_shapes[0].unknown_rank()  # the back edge's shape is unknown when built


def test_cycle_through_next_iteration_into_a_non_merge_is_invalid():
    with pytest.raises(InvalidArgumentError, match="2 nodes in a cycle"):
        imported(const("x"), node("ident", "Identity", "next"), node("next", "NextIteration", "ident"))


def test_dangling_input_is_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="Unknown input node 'nowhere'") as e:
        imported(node("y", "Identity", "nowhere"))
    assert e.value.node_name == "y"


def test_dangling_control_input():
    with pytest.raises(InvalidArgumentError, match="Unknown input node '\\^ghost'"):
        imported(node("n", "NoOp", "^ghost", attrs=""))


def test_duplicate_node_names():
    with pytest.raises(InvalidArgumentError, match="Node 'a' is not unique"):
        imported(const("a"), const("a"))


@pytest.mark.parametrize("bad", ["", "a b", "_internal", "a:1", "x^", "-x"])
def test_invalid_node_names(bad):
    with pytest.raises(InvalidArgumentError, match="invalid characters"):
        imported(const(bad))


def test_input_to_missing_output():
    with pytest.raises(InvalidArgumentError, match="Connecting to invalid output 3 of source node a which has 1"):
        imported(const("a"), node("y", "Identity", "a:3"))


def test_huge_output_index_is_not_parsed_as_a_number():
    with pytest.raises(InvalidArgumentError, match="Unknown input node"):
        imported(const("a"), node("y", "Identity", "a:99999999999999999999999"))


def test_control_input_before_data_input():
    with pytest.raises(InvalidArgumentError, match="Control dependencies must come after"):
        imported(const("a"), const("b"), node("y", "Identity", "^a", "b"))


def test_unknown_ops_reported_all_at_once():
    with pytest.raises(NotFoundError) as e:
        imported(const("a"), node("x", "Frobnicate", "a"), node("y", "Wibble", "x"), node("z", "Frobnicate", "a"))
    message = str(e.value)
    assert "2 unknown op type(s)" in message
    assert "'Frobnicate' (nodes: x, z)" in message and "'Wibble' (nodes: y)" in message


def test_unknown_attr():
    with pytest.raises(InvalidArgumentError, match="NodeDef mentions attr 'bogus' not in Op<name=Identity>"):
        imported(const("a"), node("y", "Identity", "a", attrs=T_FLOAT + ' attr { key: "bogus" value { i: 1 } }'))


@pytest.mark.parametrize("value,kind", [("i: 3", "int"), ('s: "float"', "string"), ("list { type: DT_FLOAT }",
                                                                                     "list(type)"), ("", "")])
def test_wrong_attr_kind(value, kind):
    attrs = f'attr {{ key: "T" value {{ {value} }} }}'
    message = f"had value with type '{kind}' when 'type' expected" if kind else "missing value with expected type"
    with pytest.raises(InvalidArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
        imported(const("a"), node("y", "Identity", "a", attrs=attrs))
    assert "for attr 'T'" in str(e.value) and e.value.node_name == "y"


def test_list_attr_with_two_kinds():
    attrs = T_FLOAT + ' attr { key: "transpose_a" value { list { i: 1 b: true } } }'
    with pytest.raises(InvalidArgumentError, match="more than one list type"):
        imported(const("a"), node("y", "MatMul", "a", "a", attrs=attrs))


def test_missing_required_attr():
    with pytest.raises(InvalidArgumentError, match="NodeDef missing attr 'T'"):
        imported(const("a"), node("y", "Identity", "a", attrs=""))


def test_input_type_mismatch():
    int_const = tensor_const("dtype: DT_INT32 tensor_shape { } int_val: 1", "DT_INT32")
    with pytest.raises(InvalidArgumentError, match="Input 0 of node y was passed int32 from c:0 incompatible "
                                                   "with expected float"):
        imported(int_const, node("y", "Identity", "c"))


def test_wrong_number_of_inputs():
    with pytest.raises(InvalidArgumentError, match="expected inputs 'float, float' do not match 1 inputs"):
        imported(const("a"), node("y", "AddV2", "a"))


@pytest.mark.parametrize("op,inputs,attr", [("AddN", ["a", "a"], "N"), ("Split", ["i", "a"], "num_split"),
                                             ("Unpack", ["a"], "num")])
def test_huge_list_length_attr_allocates_nothing(op, inputs, attr):
    int_const = tensor_const("dtype: DT_INT32 tensor_shape { } int_val: 0", "DT_INT32").replace('"c"', '"i"')
    attrs = T_FLOAT + f' attr {{ key: "{attr}" value {{ i: 1099511627776 }} }}'
    with pytest.raises(InvalidArgumentError, match="has length 1099511627776"):
        imported(const("a"), int_const, node("y", op, *inputs, attrs=attrs))


def test_attr_outside_allowed_values():
    attrs = T_FLOAT + ' attr { key: "data_format" value { s: "NWHC" } }'
    with pytest.raises(InvalidArgumentError, match="NWHC"):
        imported(const("a"), const("b"), node("y", "BiasAdd", "a", "b", attrs=attrs))


def test_const_dtype_must_match_value():
    with pytest.raises(InvalidArgumentError, match="Type mismatch between value \\(int32\\) and dtype \\(float\\)"):
        imported(tensor_const("dtype: DT_INT32 tensor_shape { } int_val: 1", "DT_FLOAT"))


def test_placeholder_attr_outside_function():
    with pytest.raises(InvalidArgumentError, match="placeholder 'T' outside a function"):
        imported(const("a"), node("y", "Identity", "a", attrs='attr { key: "T" value { placeholder: "T" } }'))


# ----------------------------------------------------------------------------- tensors
@pytest.mark.parametrize("tensor,error,message", [
    ('dtype: DT_FLOAT tensor_shape { dim { size: 2 } } tensor_content: "abc"', InvalidArgumentError,
     "tensor_content has 3 bytes, but a float tensor of shape \\[2\\] needs 8"),
    ("dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2 float_val: 3",
     InvalidArgumentError, "float_val has 3 values, more than the 2 elements"),
    ("dtype: DT_FLOAT tensor_shape { dim { size: 2 } } int_val: 1", InvalidArgumentError,
     "float tensor has values in int_val"),
    ("dtype: DT_FLOAT tensor_shape { dim { size: -1 } }", InvalidArgumentError, "invalid dimension -1"),
    ("dtype: DT_FLOAT tensor_shape { unknown_rank: true }", InvalidArgumentError, "known rank"),
    ("dtype: DT_FLOAT tensor_shape { dim { size: 1099511627776 } } float_val: 1", ResourceExhaustedError,
     "needs 4398046511104 bytes"),
    ("dtype: DT_STRING tensor_shape { dim { size: 1099511627776 } }", ResourceExhaustedError, "bytes"),
    ("dtype: DT_FLOAT tensor_shape { dim { size: 4611686018427387904 } dim { size: 4 } }", InvalidArgumentError,
     "more than 2\\*\\*63-1 elements"),
    ("dtype: DT_COMPLEX64 tensor_shape { } scomplex_val: 1", InvalidArgumentError, "odd number"),
    ('dtype: DT_STRING tensor_shape { dim { size: 2 } } tensor_content: "\\005ab"', InvalidArgumentError,
     "string tensor_content"),
    ("dtype: DT_RESOURCE tensor_shape { }", UnimplementedError, "resource"),
    ("dtype: DT_FLOAT_REF tensor_shape { }", InvalidArgumentError, "reference type"),
])
def test_bad_tensors(tensor, error, message):
    dtype = tensor.split()[1]
    with pytest.raises(error, match=message) as e:
        imported(tensor_const(tensor, dtype if not dtype.endswith("_REF") else "DT_FLOAT"))
    assert e.value.node_name == "c" and "attr 'value'" in str(e.value)


def test_limit_on_tensor_bytes_is_adjustable():
    big = tensor_const("dtype: DT_FLOAT tensor_shape { dim { size: 1000 } } float_val: 1")
    with pytest.raises(ResourceExhaustedError, match="max_tensor_bytes"):
        imported(big, max_tensor_bytes=1000)
    result, root = imported(big)
    (value,) = ClientSession(root).Run([result["c"]])
    assert value.shape == (1000,) and (value == 1).all()  # TF repeats the last value


def test_shape_attr_of_absurd_rank():
    dims = " ".join("dim { size: 1 }" for _ in range(300))
    attrs = f'attr {{ key: "dtype" value {{ type: DT_FLOAT }} }} attr {{ key: "shape" value {{ shape {{ {dims} }} }} }}'
    with pytest.raises(InvalidArgumentError, match="rank 300"):
        imported(node("p", "Placeholder", attrs=attrs))


def test_absurd_placeholder_shape_allocates_nothing():
    attrs = ('attr { key: "dtype" value { type: DT_FLOAT } } '
             'attr { key: "shape" value { shape { dim { size: 1099511627776 } dim { size: 1099511627776 } } } }')
    result, _ = imported(node("p", "Placeholder", attrs=attrs))
    assert result.node("p").attrs["shape"].as_list() == [2**40, 2**40]


# ----------------------------------------------------------------------------- versions and deprecation
def test_min_consumer_above_ours():
    with pytest.raises(InvalidArgumentError, match="min consumer version"):
        imported(const("a"), f"versions {{ producer: 1 min_consumer: {GRAPH_DEF_VERSION + 1} }}")


def test_bad_consumer():
    with pytest.raises(InvalidArgumentError, match="disallows consumer version"):
        imported(const("a"), f"versions {{ producer: 1 bad_consumers: {GRAPH_DEF_VERSION} }}")


def test_deprecated_op_in_new_graph_is_unimplemented():
    old = node("n", "BatchNormWithGlobalNormalization", "a", "a", "a", "a", "a",
               attrs=T_FLOAT + ' attr { key: "variance_epsilon" value { f: 0.1 } } '
                                'attr { key: "scale_after_normalization" value { b: true } }')
    with pytest.raises(UnimplementedError, match="removed in version 9"):
        imported(const("a"), old, "versions { producer: 30 }")
    imported(const("a"), old, "versions { producer: 8 }")  # an old graph may use it


# ----------------------------------------------------------------------------- functions
def _function(name: str, body: str, sig_in: str = 'input_arg { name: "a" type: DT_FLOAT }',
              ret: str = 'ret { key: "out" value: "n:output:0" }') -> str:
    return (f'function {{ signature {{ name: "{name}" {sig_in} output_arg {{ name: "out" '
            f'type: DT_FLOAT }} }} {body} {ret} }}')


def library(*functions: str) -> str:
    return "library { " + " ".join(functions) + " }"


def test_recursive_function_is_invalid_argument():
    lib = _function("f", 'node_def { name: "n" op: "f" input: "a" }')
    with pytest.raises(InvalidArgumentError, match="calls itself"):
        imported(const("a"), node("c", "f", "a", attrs=""), library(lib))


def test_exponential_inlining_is_refused_before_it_starts():
    funcs = []
    for i in range(30):  # f0 calls f1 twice, f1 calls f2 twice ... 2**30 nodes
        body = (f'node_def {{ name: "n" op: "f{i + 1}" input: "a" }} node_def {{ name: "m" op: "f{i + 1}" '
                f'input: "n:out:0" }}' if i < 29 else f'node_def {{ name: "n" op: "Identity" input: "a" {T_FLOAT} }}')
        ret = 'ret { key: "out" value: "m:out:0" }' if i < 29 else 'ret { key: "out" value: "n:output:0" }'
        funcs.append(_function(f"f{i}", body, ret=ret))
    with pytest.raises(ResourceExhaustedError, match="max_nodes"):
        imported(const("a"), node("c", "f0", "a", attrs=""), library(*funcs))


def test_call_of_missing_function():
    attrs = ('attr { key: "f" value { func { name: "nope" } } } attr { key: "Tin" value { list { type: DT_FLOAT } } }'
             ' attr { key: "Tout" value { list { type: DT_FLOAT } } }')
    with pytest.raises(NotFoundError, match="function 'nope' is not in the graph's function library"):
        imported(const("a"), node("c", "PartitionedCall", "a", attrs=attrs))


def test_function_body_with_bad_reference():
    lib = _function("f", f'node_def {{ name: "n" op: "Identity" input: "nothing" {T_FLOAT} }}')
    with pytest.raises(InvalidArgumentError, match="input 'nothing' names no argument"):
        imported(const("a"), node("c", "f", "a", attrs=""), library(lib))


def test_unknown_op_inside_a_function_body_is_reported():
    lib = _function("f", 'node_def { name: "n" op: "Mystery" input: "a" }')
    with pytest.raises(NotFoundError, match="'Mystery' \\(nodes: f/n\\)"):
        imported(const("a"), node("c", "f", "a", attrs=""), library(lib))


def test_polymorphic_function_gets_its_attrs_from_the_call():
    lib = ('library { function { signature { name: "poly" input_arg { name: "a" type_attr: "T" } '
           'output_arg { name: "out" type_attr: "T" } attr { name: "T" type: "type" } } '
           'node_def { name: "n" op: "Identity" input: "a" attr { key: "T" value { placeholder: "T" } } } '
           'ret { key: "out" value: "n:output:0" } } }')
    result, root = imported(const("a"), node("c", "poly", "a"), node("y", "Identity", "c"), lib)
    assert result.node("c/n").attrs["T"].name == "DT_FLOAT"
    (value,) = ClientSession(root).Run([result["y"]])
    assert value == 1.0


def test_while_keeps_its_functions_for_export():
    body = _function("body", f'node_def {{ name: "n" op: "Identity" input: "a" {T_FLOAT} }}')
    cond = ('function { signature { name: "cond" input_arg { name: "a" type: DT_FLOAT } '
            'output_arg { name: "out" type: DT_BOOL } } node_def { name: "n" op: "Less" input: "a" input: "a" '
            + T_FLOAT + ' } ret { key: "out" value: "n:z:0" } }')
    attrs = ('attr { key: "T" value { list { type: DT_FLOAT } } } attr { key: "cond" value { func { name: "cond" } } }'
             ' attr { key: "body" value { func { name: "body" } } }')
    result, root = imported(const("a"), node("w", "While", "a", attrs=attrs), library(body, cond))
    exported = to_graph_def(root)
    assert sorted(f.signature.name for f in exported.library.function) == ["body", "cond"]
    assert ClientSession(root).Run([result["w"]]) == [1.0]  # cond a < a is false at once


# ----------------------------------------------------------------------------- the target graph
def test_name_clash_with_existing_node_leaves_graph_unchanged():
    root = Scope.NewRootScope()
    ops.Const(root.WithOpName("a"), 2.0)
    with pytest.raises(InvalidArgumentError, match="Node name 'a' already exists"):
        imported(const("a"), scope=root)
    assert root.graph().num_nodes() == 1 and root.ok()


def test_failure_half_way_takes_added_nodes_out_again():
    root = Scope.NewRootScope()
    ops.Const(root.WithOpName("keep"), 1.0)
    bad_shape = 'attr { key: "transpose_a" value { b: false } }'
    a = tensor_const("dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 3 } } float_val: 1")
    with pytest.raises(InvalidArgumentError, match="m"):
        imported(a, node("ok", "Identity", "c"), node("m", "MatMul", "c", "c", attrs=T_FLOAT + bad_shape), scope=root)
    assert [n.name for n in root.graph().nodes()] == ["keep"] and root.ok()
    result, _ = imported(a, node("ok", "Identity", "c"), scope=root)  # the names are free again
    assert result.node("ok").name == "ok"


def test_prefix_input_map_and_later_names():
    root = Scope.NewRootScope()
    feed = ops.Const(root.WithOpName("feed"), 5.0)
    graph = (node("x", "Placeholder", attrs='attr { key: "dtype" value { type: DT_FLOAT } }')
             + node("y", "AddV2", "x", "x") + node("z", "Identity", "y"))
    result, _ = imported(graph, scope=root, prefix="imp", input_map={"x:0": feed})
    assert result.node("y").name == "imp/y"
    assert [i.node().name for i in result.node("y").inputs] == ["feed", "feed"]
    (value,) = ClientSession(root).Run([result["z"]])
    assert value == 10.0
    later = ops.Identity(root.NewSubScope("imp"), feed)
    assert later.operation.name() == "imp_1/Identity"
    with pytest.raises(InvalidArgumentError, match="prefix 'imp' conflicts"):
        imported(graph, scope=root, prefix="imp")
    with pytest.raises(InvalidArgumentError, match="not found in graph_def: \\[q:0\\]"):
        imported(graph, scope=root, prefix="imp2", input_map={"q:0": feed})


def test_op_without_kernel_imports_and_fails_at_run():
    from tfops_py.kernels.registry import registered_kernel_ops
    from tfops_py.framework.op_def import get_op_def, op_names

    def unary_float(o: str) -> bool:  # one input and one output of type T, T the only attr, float allowed
        d = get_op_def(o)
        return (len(d.inputs) == 1 and len(d.outputs) == 1 and d.inputs[0].type_attr == "T"
                and [a.name for a in d.attrs] == ["T"]
                and (d.attrs[0].allowed is None or DataType.DT_FLOAT in d.attrs[0].allowed))

    op = next(o for o in sorted(op_names()) if o not in registered_kernel_ops() and not o.startswith("_")
              and unary_float(o))
    result, root = imported(const("a"), node("y", op, "a"))
    with pytest.raises(UnimplementedError, match=op):
        ClientSession(root).Run([result["y"]])


def test_default_attrs_are_filled_from_the_op_def():
    a = tensor_const("dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } } float_val: 1")
    result, _ = imported(a, node("m", "MatMul", "c", "c"))
    attrs = result.node("m").attrs
    assert attrs["transpose_a"] is False and attrs["transpose_b"] is False and attrs["grad_a"] is False


def test_empty_graph_def():
    result, root = imported("")
    assert len(result) == 0 and root.graph().num_nodes() == 0
    assert GraphDef.FromString(to_graph_def(root).SerializeToString()).versions.producer == GRAPH_DEF_VERSION


def test_scope_in_error_refuses_import():
    root = Scope.NewRootScope(raise_errors=False)
    ops.AddV2(root, ops.Const(root, 1.0), ops.Const(root, np.int32(1)))
    assert not root.ok()
    with pytest.raises(InvalidArgumentError):
        imported(const("a"), scope=root)
