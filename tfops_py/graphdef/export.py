"""Graph -> GraphDef, and writing it as binary or text protobuf (what ``Scope::ToGraphDef`` does)."""
from __future__ import annotations

import os
from typing import Any

from google.protobuf import text_format

from tfops_py.errors import OpError
from tfops_py.framework.graph import Graph, Node
from tfops_py.graphdef import functions
from tfops_py.graphdef.schema import GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_CONSUMER, GraphDef
from tfops_py.graphdef.values import attr_to_proto

TEXT_SUFFIXES = (".pbtxt", ".pbtext", ".txt", ".prototxt")  # file names written and read as text format
GraphLike = Any | Graph  # a Scope, a Graph or a GraphDef message


def tensor_name(node_name: str, index: int) -> str:
    """How a GraphDef names output ``index`` of a node: ``"x"`` for 0, ``"x:1"`` otherwise."""
    return node_name if index == 0 else f"{node_name}:{index}"


def node_to_node_def(node: Node, out: Any) -> None:
    """Fill a NodeDef: name, op, inputs (data, then sorted unique ``^control``), device, every attr."""
    out.name = node.name
    out.op = node.op
    out.input.extend(tensor_name(i.node().name, i.index()) for i in node.inputs)  # type: ignore[union-attr]
    out.input.extend("^" + name for name in sorted({c.name for c in node.control_inputs}))
    if node.device:
        out.device = node.device
    attr_types = node.op_def.attr_map
    for key, value in node.attrs.items():
        attr_type = attr_types[key].type if key in attr_types else None
        try:
            attr_to_proto(value, attr_type, out.attr[key])
        except OpError as e:
            raise type(e)(f"cannot export attr '{key}': {e.message}", op_type=node.op, node_name=node.name) from None


def graph_of(value: Any) -> Graph | None:
    """The Graph of a Graph or a Scope (raising the scope's error if it has one); None for anything else."""
    if isinstance(value, Graph):
        return value
    graph = getattr(value, "graph", None)
    if callable(graph):  # a Scope
        value.status().raise_if_error()
        result = graph()
        return result if isinstance(result, Graph) else None
    return None


def to_graph_def(graph: GraphLike) -> Any:
    """The GraphDef of a Graph (or a Scope's graph): nodes in creation order, TF 2.21 versions.

    Functions kept from an imported graph's library (for ops such as ``While`` that
    refer to them) are written to ``library``.
    """
    g = graph_of(graph)
    if g is None:
        raise TypeError(f"expected a Scope or a Graph, got {type(graph).__name__}")
    gd = GraphDef()
    for node in g.nodes():
        node_to_node_def(node, gd.node.add())
    gd.versions.producer = GRAPH_DEF_VERSION
    gd.versions.min_consumer = GRAPH_DEF_VERSION_MIN_CONSUMER
    functions.fill_library(g, gd)
    return gd


def _as_graph_def(value: Any) -> Any:
    return value if isinstance(value, GraphDef) else to_graph_def(value)


def graph_def_to_bytes(graph: Any) -> bytes:
    """Binary protobuf (deterministic: map entries sorted) of a Scope, Graph or GraphDef."""
    return _as_graph_def(graph).SerializeToString(deterministic=True)


def graph_def_to_text(graph: Any) -> str:
    """Text-format protobuf of a Scope, Graph or GraphDef (what TF writes to ``.pbtxt``)."""
    return text_format.MessageToString(_as_graph_def(graph))


def write_graph(graph: Any, path: str | os.PathLike, as_text: bool | None = None) -> str:
    """Write a Scope's graph (or a Graph / GraphDef) to ``path``; returns the path.

    ``as_text=None`` picks text format for ``.pbtxt``/``.pbtext``/``.txt``/``.prototxt``
    and binary otherwise (``tf.io.write_graph`` defaults to text; say which you want).
    """
    path = os.fspath(path)
    if as_text is None:
        as_text = path.lower().endswith(TEXT_SUFFIXES)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    if as_text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(graph_def_to_text(graph))
    else:
        with open(path, "wb") as f:
            f.write(graph_def_to_bytes(graph))
    return path


__all__ = ["TEXT_SUFFIXES", "graph_def_to_bytes", "graph_def_to_text", "graph_of", "node_to_node_def",
           "tensor_name", "to_graph_def", "write_graph"]
