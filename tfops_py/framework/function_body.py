"""Instantiating a library function: its body as a Graph for given attr values (TF's FunctionBody).

The body graph has one ``_Arg`` node per flat input (named after the argument, or
``<arg>_<k>`` inside a list argument), the body nodes built through the ordinary
node builder (attrs completed and checked, shapes inferred), and the returned
tensors.  It shares the library of the graph it came from, so calls and loops
inside a body find their functions.
"""
from __future__ import annotations

from typing import Any

import attrs

from tfops_py.errors import InvalidArgumentError, NotFoundError, OpError
from tfops_py.framework.control_flow import is_back_edge, topological_order
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.function import AttrPlaceholder, FunctionDef, FunctionLibraryDefinition, FunctionNodeDef
from tfops_py.framework.graph import Graph, Node
from tfops_py.framework.node_builder import add_node, arg_types
from tfops_py.framework.op_def import OpDef, arg_ranges, get_op_def, has_op_def
from tfops_py.framework.operation import Operation, Output
from tfops_py.framework.scope import Scope


@attrs.define(eq=False)
class FunctionBody:
    """One instantiation of a function: its graph, argument nodes and returned tensors."""

    fdef: FunctionDef
    graph: Graph
    arg_types: list[DataType]
    ret_types: list[DataType]
    args: list[Node]
    rets: list[Output]
    control_rets: list[Node]


def signature_of(library: FunctionLibraryDefinition, op: str) -> OpDef:
    """The OpDef of an op type, or the signature of a library function of that name."""
    fdef = library.Find(op)
    if fdef is not None:
        return fdef.signature
    return get_op_def(op)


def resolve_attrs(fdef: FunctionDef, attr_values: dict[str, Any]) -> dict[str, Any]:
    """Values for every signature attr: given, else the attr's default; InvalidArgumentError if missing."""
    out: dict[str, Any] = {}
    for a in fdef.signature.attrs:
        if a.name in attr_values:
            out[a.name] = attr_values[a.name]
        elif a.has_default:
            out[a.name] = a.default
        else:
            raise InvalidArgumentError(f"Attr {a.name} is not found from instantiating function '{fdef.name}'")
    return out


def io_types(fdef: FunctionDef, attr_values: dict[str, Any]) -> tuple[list[DataType], list[DataType]]:
    """Flat (input, output) dtypes of a function instantiated with resolved ``attr_values``."""
    try:
        return arg_types(fdef.signature.inputs, attr_values), arg_types(fdef.signature.outputs, attr_values)
    except (KeyError, TypeError) as e:
        raise InvalidArgumentError(f"function '{fdef.name}': cannot work out its argument types from the "
                                   f"attrs ({e})") from None


def substitute(value: Any, attr_values: dict[str, Any], where: str) -> Any:
    """``value`` with every AttrPlaceholder replaced by its instantiation value (func attrs too)."""
    if isinstance(value, AttrPlaceholder):
        if value.name not in attr_values:
            raise InvalidArgumentError(f"{where}: attr placeholder '${value.name}' is not an attr of the function")
        return attr_values[value.name]
    if isinstance(value, dict) and "name" in value:
        return {"name": value["name"], "attr": {k: substitute(v, attr_values, where)
                                                for k, v in (value.get("attr") or {}).items()}}
    if isinstance(value, list):
        return [substitute(v, attr_values, where) for v in value]
    return value


def instantiate(library: FunctionLibraryDefinition, name: str, attr_values: dict[str, Any] | None = None,
                ) -> FunctionBody:
    """Build the body of function ``name`` for ``attr_values``; errors name the function and the node."""
    fdef = library.Find(name)
    if fdef is None:
        raise NotFoundError(f"Function '{name}' is not defined in the graph's function library")
    values = resolve_attrs(fdef, dict(attr_values or {}))
    in_types, out_types = io_types(fdef, values)
    return _Instantiation(library, fdef, values).build(in_types, out_types)


def inline_function(scope: Scope, name: str, attr_values: dict[str, Any] | None, args: list[Output]
                    ) -> tuple[list[Output], list[Node]]:
    """Copy function ``name``'s body into ``scope`` (under its name prefix), reading ``args``.

    Returns the returned tensors and the control-return nodes.  Gradient functions are
    built this way: the forward body, then its gradient, in one graph.
    """
    library = scope.graph().library
    fdef = library.Find(name)
    if fdef is None:
        raise NotFoundError(f"Function '{name}' is not defined in the graph's function library")
    values = resolve_attrs(fdef, dict(attr_values or {}))
    in_types, out_types = io_types(fdef, values)
    if [a.type() for a in args] != in_types:
        raise InvalidArgumentError(f"function '{name}' takes ({', '.join(t.short_name for t in in_types)}), got "
                                   f"({', '.join(a.type().short_name for a in args)})")
    body = _Instantiation(library, fdef, values, scope, args).build(in_types, out_types)
    return body.rets, body.control_rets


class _Instantiation:
    def __init__(self, library: FunctionLibraryDefinition, fdef: FunctionDef, values: dict[str, Any],
                 scope: Scope | None = None, args: list[Output] | None = None):
        self.library = library
        self.fdef = fdef
        self.values = values
        if scope is None:
            self.graph = Graph()
            self.graph.library = library
            self.scope = Scope._on_graph(self.graph)
        else:  # inlining into an existing graph
            self.graph = scope.graph()
            self.scope = scope
        self.given_args = args
        self.args: dict[str, list[Output]] = {}
        self.nodes: dict[str, Node] = {}
        self.where = f"function '{fdef.name}'"
        self.body_names = {n.name for n in fdef.node_def}
        self.back_edges: list[tuple[Node, int, str]] = []  # (Merge, input index, NextIteration reference)

    # -- references --------------------------------------------------------------------------------
    def _ranges(self, node: Node) -> dict[str, tuple[int, int]]:
        return {a.name: r for a, r in zip(node.op_def.outputs, arg_ranges(node.op_def.outputs, node.attrs))}

    def resolve(self, ref: str, user: str) -> list[Output]:
        """Tensors named by a function-format data reference."""
        parts = ref.split(":")
        if parts[0] in self.args and len(parts) <= 2:
            outs = self.args[parts[0]]
            if len(parts) == 1:
                return list(outs)
            if parts[1].isdigit() and int(parts[1]) < len(outs):
                return [outs[int(parts[1])]]
        elif parts[0] in self.nodes and len(parts) in (2, 3):
            node = self.nodes[parts[0]]
            rng = self._ranges(node).get(parts[1])
            if rng is not None:
                start, stop = rng
                if len(parts) == 2:
                    return [Output(node, k) for k in range(start, stop)]
                if parts[2].isdigit() and start + int(parts[2]) < stop:
                    return [Output(node, start + int(parts[2]))]
        raise InvalidArgumentError(f"{self.where}: input '{ref}' of node '{user}' names no argument or node "
                                   "output of the function")

    # -- building -----------------------------------------------------------------------------------
    def build(self, in_types: list[DataType], out_types: list[DataType]) -> FunctionBody:
        sig = self.fdef.signature
        arg_op = get_op_def("_Arg")
        index = 0
        for arg, (a, b) in zip(sig.inputs, arg_ranges(sig.inputs, self.values)):
            outs = []
            if self.given_args is not None:
                self.args[arg.name] = self.given_args[a:b]
                continue
            for k in range(a, b):
                node_name = arg.name if not arg.is_list else f"{arg.name}_{k - a}"
                node = add_node(self.scope.WithOpName(node_name), arg_op, [], {"T": in_types[index],
                                                                                   "index": index})
                arg_shape = self.fdef.arg_attr.get(index, {}).get("_output_shapes")
                if arg_shape and len(arg_shape) == 1 and node is not None:
                    node.output_shapes = [arg_shape[0]]
                outs.append(Output(node, 0))
                index += 1
            self.args[arg.name] = outs
        for node_def in self._ordered_body():
            try:
                self._add(node_def)
            except OpError as e:
                if e.message.startswith(self.where):
                    raise
                raise type(e)(f"{self.where}: {e.message}", op_type=e.op_type or node_def.op,
                              node_name=e.node_name or node_def.name) from None
        for merge, k, ref in self.back_edges:  # every NextIteration exists now: close the loops
            (src,) = self.resolve(ref, merge.name)
            self.graph.UpdateEdge(src, merge, k)
        rets: list[Output] = []
        for arg in sig.outputs:
            if arg.name not in self.fdef.ret:
                raise InvalidArgumentError(f"{self.where}: output '{arg.name}' has no ret entry")
            rets += self.resolve(self.fdef.ret[arg.name], f"ret {arg.name}")
        if [o.type() for o in rets] != out_types:
            got = ", ".join(o.type().short_name for o in rets)
            want = ", ".join(t.short_name for t in out_types)
            raise InvalidArgumentError(f"{self.where} returns ({got}) but its signature says ({want})")
        control_rets = []
        for key, target in self.fdef.control_ret.items():
            if target not in self.nodes:
                raise InvalidArgumentError(f"{self.where}: control_ret '{key}' names no node ('{target}')")
            control_rets.append(self.nodes[target])
        arg_nodes = [] if self.given_args is not None else \
            [o.node() for arg in sig.inputs for o in self.args[arg.name]]
        return FunctionBody(self.fdef, self.graph, in_types, out_types, arg_nodes, rets, control_rets)  # type: ignore

    def _ordered_body(self) -> list[FunctionNodeDef]:
        body = self.fdef.node_def
        index: dict[str, int] = {}
        for i, n in enumerate(body):
            if n.name in index or n.name in self.args:
                raise InvalidArgumentError(f"{self.where}: the body has two nodes or arguments named '{n.name}'")
            index[n.name] = i

        def inputs_of(i: int) -> list[int]:
            deps = []
            for ref in body[i].input:
                src = ref[1:] if ref.startswith("^") else ref.split(":")[0]
                j = index.get(src)
                if j is not None and not (not ref.startswith("^") and is_back_edge(body[j].op, body[i].op)):
                    deps.append(j)
            return deps

        try:
            order = topological_order(len(body), inputs_of, lambda i: body[i].name)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"{self.where}: {e.message}") from None
        return [body[i] for i in order]

    def _add(self, nd: FunctionNodeDef) -> None:
        op_def = signature_of(self.library, nd.op) if (nd.op in self.library or not has_op_def(nd.op)) \
            else get_op_def(nd.op)
        node_attrs = {k: substitute(v, self.values, f"{self.where}, node '{nd.name}'") for k, v in nd.attr.items()}
        data: list[Output] = []
        back_edges: list[tuple[int, str]] = []
        controls: list[Node] = []
        for ref in nd.input:
            if ref.startswith("^"):
                src = ref[1:]
                if src in self.nodes:
                    controls.append(self.nodes[src])
                elif src in self.args:
                    controls += [o.node() for o in self.args[src]]  # type: ignore[misc]
                else:
                    raise InvalidArgumentError(f"{self.where}: control input '{ref}' of node '{nd.name}' names "
                                               "no node of the function")
            elif ref.split(":")[0] in self.body_names and ref.split(":")[0] not in self.nodes:
                back_edges.append((len(data), ref))  # a NextIteration not built yet: closed after the body
                data.append(Output())
            else:
                data += self.resolve(ref, nd.name)
        if back_edges:
            live = next((o for o in data if o.node() is not None), None)
            if live is None:
                raise InvalidArgumentError(f"{self.where}: node '{nd.name}' has only back-edge inputs")
            data = [live if o.node() is None else o for o in data]
        scope = self.scope.WithOpName(nd.name)
        if nd.device:
            scope = scope.WithDevice(nd.device)
        if controls:
            scope = scope.WithControlDependencies([Operation(c) for c in dict.fromkeys(controls)])
        grouped = _group(op_def, node_attrs, data, self.where, nd.name)
        node = add_node(scope, op_def, grouped, node_attrs, default_name=nd.op,
                        back_edges=frozenset(k for k, _ in back_edges))
        if node is None or node.name.rsplit("/", 1)[-1] != nd.name.rsplit("/", 1)[-1]:
            raise InvalidArgumentError(f"{self.where}: could not add node '{nd.name}'")
        self.nodes[nd.name] = node
        self.back_edges += [(node, k, ref) for k, ref in back_edges]


def _group(op_def: OpDef, node_attrs: dict[str, Any], flat: list[Output], where: str, name: str) -> list[Any]:
    """Flat inputs grouped per OpDef input argument, list lengths taken from the inputs themselves."""
    groups: list[Any] = []
    pos = 0
    for k, arg in enumerate(op_def.inputs):
        if not arg.is_list:
            if pos >= len(flat):
                raise InvalidArgumentError(f"{where}: node '{name}' has {len(flat)} inputs, {op_def.name} takes more")
            groups.append(flat[pos])
            pos += 1
            continue
        if arg.number_attr and arg.number_attr in node_attrs:
            n = int(node_attrs[arg.number_attr])
        elif arg.type_list_attr and arg.type_list_attr in node_attrs:
            n = len(node_attrs[arg.type_list_attr])
        else:  # the only list argument left: it takes what the fixed arguments after it leave over
            n = len(flat) - pos - sum(1 for a in op_def.inputs[k + 1:] if not a.is_list)
        groups.append(flat[pos:pos + n])
        pos += n
    if pos != len(flat):
        raise InvalidArgumentError(f"{where}: node '{name}' has {len(flat)} inputs, {op_def.name} takes {pos}")
    return groups


__all__ = ["FunctionBody", "inline_function", "instantiate", "io_types", "resolve_attrs", "signature_of",
           "substitute"]
