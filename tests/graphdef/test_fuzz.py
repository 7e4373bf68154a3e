"""Fuzzing the importer for a few seconds: whatever the bytes, the answer is a graph or a tfops_py error.

Three sources: random bytes and text, mutated real GraphDefs (recorded from TF), and random
structured GraphDefs (random names, ops, inputs and attrs of every kind, sometimes a
function library).  A graph that imports must export and import again to the same nodes.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfops_py import Scope
from tfops_py.errors import OpError
from tfops_py.graphdef import import_graph_def, to_graph_def
from tfops_py.graphdef.schema import GraphDef

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "graphdef")
SEEDS = [open(os.path.join(GOLDEN, name), "rb").read() for name in ("tf1_basic.pb", "function_nested.pb")]
# TFOPS_FUZZ_EXAMPLES=5000 for a longer campaign; the suite's default takes a few seconds.
FUZZ = settings(max_examples=int(os.environ.get("TFOPS_FUZZ_EXAMPLES", "120")), deadline=None,
                suppress_health_check=list(HealthCheck), database=None)
LIMITS = {"max_tensor_bytes": 1 << 20, "max_nodes": 10_000}


def _import(data) -> None:
    root = Scope.NewRootScope()
    try:
        imported = import_graph_def(root, data, **LIMITS)
    except OpError:
        return
    again = Scope.NewRootScope()
    reimported = import_graph_def(again, to_graph_def(root).SerializeToString(), **LIMITS)
    assert [(n.name, n.op) for n in again.graph().nodes()] == [(n.name, n.op) for n in root.graph().nodes()]
    assert len(reimported) == root.graph().num_nodes() >= len(imported) - 0


@FUZZ
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_random_bytes(data):
    _import(data)


@FUZZ
@given(seed=st.sampled_from(SEEDS), edits=st.lists(
    st.tuples(st.sampled_from(["flip", "insert", "delete", "cut"]), st.integers(0, 10_000), st.integers(0, 255)),
    min_size=1, max_size=4))
def test_mutated_graph_defs(seed, edits):
    data = bytearray(seed)
    for kind, pos, byte in edits:
        pos %= max(len(data), 1)
        if kind == "flip" and data:
            data[pos] ^= byte or 1
        elif kind == "insert":
            data.insert(pos, byte)
        elif kind == "delete" and data:
            del data[pos]
        elif kind == "cut":
            del data[pos:]
    _import(bytes(data))


_NAMES = ["a", "b", "c", "a/b", "1", "f", "x_y"]
_OPS = ["Const", "Identity", "AddV2", "NoOp", "IdentityN", "Placeholder", "MatMul", "Frobnicate",
        "PartitionedCall", "f", "Fill", "Reshape", "While", "AddN", "Split", "Unpack", "ConcatV2"]
_ATTR_KEYS = ["T", "dtype", "value", "shape", "N", "transpose_a", "_class", "f", "Tin", "Tout", "body", "cond",
              "num_split", "num"]
_refs = st.builds(lambda ctrl, name, idx: ("^" if ctrl else "") + name + (f":{idx}" if idx is not None else ""),
                  st.booleans(), st.sampled_from(_NAMES + ["zz"]), st.none() | st.integers(0, 3))
_dtypes = st.sampled_from([1, 3, 7, 9, 10, 19, 20, 0, 101, 33, 99])


def _tensor(draw, t) -> None:
    t.dtype = draw(_dtypes)
    for d in draw(st.lists(st.integers(-2, 2**40), max_size=3)):
        t.tensor_shape.dim.add(size=d)
    which = draw(st.sampled_from(["float_val", "int_val", "tensor_content", "string_val", "half_val", "none"]))
    if which == "tensor_content":
        t.tensor_content = draw(st.binary(max_size=16))
    elif which == "string_val":
        t.string_val.extend(draw(st.lists(st.binary(max_size=3), max_size=3)))
    elif which != "none":
        getattr(t, which).extend(draw(st.lists(st.integers(-5, 5), max_size=4)))


def _attr(draw, value) -> None:
    kind = draw(st.sampled_from(["s", "i", "f", "b", "type", "shape", "tensor", "list", "func", "placeholder",
                                 "unset"]))
    if kind == "s":
        value.s = draw(st.binary(max_size=6))
    elif kind == "i":
        value.i = draw(st.one_of(st.integers(-3, 5), st.sampled_from([2**40, -(2**62), 70000])))
    elif kind == "f":
        value.f = draw(st.floats(width=32, allow_nan=True))
    elif kind == "b":
        value.b = draw(st.booleans())
    elif kind == "type":
        value.type = draw(_dtypes)
    elif kind == "shape":
        value.shape.unknown_rank = draw(st.booleans())
        for d in draw(st.lists(st.integers(-3, 2**50), max_size=3)):
            value.shape.dim.add(size=d)
    elif kind == "tensor":
        _tensor(draw, value.tensor)
    elif kind == "list":
        value.list.SetInParent()
        value.list.type.extend(draw(st.lists(_dtypes, max_size=3)))
        value.list.i.extend(draw(st.lists(st.integers(0, 3), max_size=2)))
    elif kind == "func":
        value.func.name = draw(st.sampled_from(["f", "g", ""]))
    elif kind == "placeholder":
        value.placeholder = "T"


@st.composite
def graph_defs(draw) -> bytes:
    gd = GraphDef()
    for _ in range(draw(st.integers(0, 6))):
        nd = gd.node.add(name=draw(st.sampled_from(_NAMES)), op=draw(st.sampled_from(_OPS)))
        nd.input.extend(draw(st.lists(_refs, max_size=3)))
        for key in draw(st.lists(st.sampled_from(_ATTR_KEYS), max_size=4, unique=True)):
            _attr(draw, nd.attr[key])
        if draw(st.booleans()):
            nd.device = draw(st.sampled_from(["/device:CPU:0", "", "bogus"]))
    if draw(st.booleans()):
        fdef = gd.library.function.add()
        fdef.signature.name = "f"
        fdef.signature.input_arg.add(name="a", type=draw(_dtypes))
        fdef.signature.output_arg.add(name="out", type=1)
        body = fdef.node_def.add(name="n", op=draw(st.sampled_from(["Identity", "f", "AddV2", "Frobnicate"])))
        body.input.extend(draw(st.lists(st.sampled_from(["a", "a:0", "n:output:0", "^a", "q"]), max_size=2)))
        _attr(draw, body.attr["T"])
        fdef.ret["out"] = draw(st.sampled_from(["n:output:0", "a", "n:nope:0", "n:output:5"]))
    if draw(st.booleans()):
        gd.versions.producer = draw(st.integers(-5, 3000))
        gd.versions.min_consumer = draw(st.integers(0, 3000))
    return gd.SerializeToString()


@FUZZ
@given(graph_defs())
def test_random_structured_graph_defs(data):
    _import(data)
