"""Function libraries: inlining calls on import, and keeping the rest for export.

A node calls a library function when its op type is the function's name, or when
it is a ``PartitionedCall`` / ``StatefulPartitionedCall`` whose ``f`` names it.
Each call is replaced the way TF's inliner does it: one ``Identity`` per argument
(``Func/<call>/input/_<k>``), the body under ``<call>/``, and, where TF would add
output Identities, a single ``IdentityN`` named like the call itself (a ``NoOp``
when the function returns nothing), so ``"<call>:1"`` still names output 1.  The
call's control inputs go through ``Func/<call>/input_control_node/_<k>``;
``control_ret`` nodes become control inputs of the node named ``<call>``.
Functions used by ops that are not inlined (``While``, ``If`` ...) are kept with the
graph and written back to ``GraphDef.library`` on export.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tfops_py.errors import InvalidArgumentError, NotFoundError, ResourceExhaustedError
from tfops_py.framework.graph import Graph
from tfops_py.framework.op_def import get_op_def, has_op_def
from tfops_py.graphdef.library import function_library_from_proto, function_library_to_proto
from tfops_py.graphdef.schema import FunctionDef, NodeDef
from tfops_py.graphdef.values import DEFAULT_MAX_TENSOR_BYTES

CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")
# Inlining may not make a graph bigger than this many nodes (nested calls multiply).
DEFAULT_MAX_NODES = 1_000_000
# Calls may nest this deep.
MAX_CALL_DEPTH = 64
# No argument list (``N``, ``num_split`` ...) of a node or function may be longer than this.
MAX_LIST_LENGTH = 1 << 16


def checked_count(n: int, what: str) -> int:
    """``n`` if it is a sane list length, else InvalidArgumentError (a hostile N must not allocate)."""
    if not 0 <= n <= MAX_LIST_LENGTH:
        raise InvalidArgumentError(f"{what} has length {n}, outside [0, {MAX_LIST_LENGTH}]")
    return n



class FunctionLibrary:
    """The functions of a GraphDef's library by name."""

    def __init__(self, library: Any = None):
        self.proto = library
        self.functions: dict[str, Any] = {}
        for fdef in (library.function if library is not None else ()):
            name = fdef.signature.name
            if not name:
                raise InvalidArgumentError("function library has a function with an empty name")
            if name in self.functions:
                raise InvalidArgumentError(f"function library defines '{name}' more than once")
            self.functions[name] = fdef

    def callee(self, node: Any) -> tuple[str, dict[str, Any]] | None:
        """(function name, instantiation attrs) when ``node`` (a NodeDef) calls a library function."""
        if node.op in self.functions:
            return node.op, dict(node.attr)
        if node.op in CALL_OPS and "f" in node.attr and node.attr["f"].WhichOneof("value") == "func":
            f = node.attr["f"].func
            if f.name not in self.functions:
                raise NotFoundError(f"function '{f.name}' is not in the graph's function library",
                                    op_type=node.op, node_name=node.name)
            return f.name, dict(f.attr)
        return None

    def reachable(self, nodes: Iterable[Any]) -> list[str]:
        """Names of the functions that calls in ``nodes`` inline, transitively (depth first)."""
        seen: dict[str, None] = {}
        stack = [c[0] for c in (self.callee(n) for n in nodes) if c]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen[name] = None
            stack += [c[0] for c in (self.callee(n) for n in self.functions[name].node_def) if c]
        return list(seen)

    def expanded_size(self, nodes: Iterable[Any], limit: int) -> int:
        """Node count after inlining; InvalidArgumentError on recursion, ResourceExhaustedError over limit."""
        sizes: dict[str, int] = {}
        active: list[str] = []

        def size_of(name: str) -> int:
            if name in sizes:
                return sizes[name]
            if name in active:
                cycle = " -> ".join(active[active.index(name):] + [name])
                raise InvalidArgumentError(f"function '{name}' calls itself ({cycle}); recursive functions "
                                           "cannot be inlined")
            if len(active) >= MAX_CALL_DEPTH:
                raise InvalidArgumentError(f"function calls nest more than {MAX_CALL_DEPTH} deep "
                                           f"({' -> '.join(active[:3])} ...)")
            active.append(name)
            fdef = self.functions[name]
            total = 2 + len(fdef.signature.input_arg) * 2
            for node in fdef.node_def:
                call = self.callee(node)
                total += size_of(call[0]) if call else 1
                if total > limit:
                    break
            active.pop()
            sizes[name] = total
            return total

        total = 0
        for node in nodes:
            call = self.callee(node)
            total += size_of(call[0]) if call else 1
            if total > limit:
                raise ResourceExhaustedError(f"inlining the function library would make more than {limit} "
                                             "nodes (max_nodes)")
        return total


# ----------------------------------------------------------------------------- inlining
def _attr_value(attrs: dict[str, Any], op_def_attrs: dict[str, Any], name: str) -> Any:
    """An attr's AttrValue from a call or node, or its OpDef default as a Python value."""
    if name in attrs:
        return attrs[name]
    if name in op_def_attrs and op_def_attrs[name].has_default:
        return op_def_attrs[name].default
    raise InvalidArgumentError(f"attr '{name}' is not set")


def _arg_sizes_and_types(args: Iterable[Any], attrs: dict[str, Any], what: str) -> list[tuple[int, list[int]]]:
    """(count, flat dtypes) per signature arg (ArgDef protos) for the given instantiation attrs."""
    out = []
    for arg in args:
        try:
            if arg.type_list_attr:
                types = [int(t) for t in attrs[arg.type_list_attr].list.type]
            else:
                n = checked_count(attrs[arg.number_attr].i, f"{what} argument '{arg.name}'") \
                    if arg.number_attr else 1
                t = arg.type if arg.type else attrs[arg.type_attr].type
                types = [int(t)] * n
        except KeyError as e:
            raise InvalidArgumentError(f"{what} argument '{arg.name}' needs attr {e} which the call does not set")\
                from None
        out.append((len(types), types))
    return out


def _substitute(attr_map: Any, inst: dict[str, Any], where: str) -> None:
    """Replace ``placeholder`` attr values by the instantiation attrs (recursively in func attrs)."""
    for key in list(attr_map):
        value = attr_map[key]
        case = value.WhichOneof("value")
        if case == "placeholder":
            if value.placeholder not in inst:
                raise InvalidArgumentError(f"{where}: attr '{key}' refers to '{value.placeholder}', which the call "
                                           "does not set")
            value.CopyFrom(inst[value.placeholder])
        elif case == "func":
            _substitute(value.func.attr, inst, where)
        elif case == "list":
            for f in value.list.func:
                _substitute(f.attr, inst, where)


class _Inliner:
    def __init__(self, library: FunctionLibrary):
        self.library = library

    def output_ranges(self, node: Any) -> dict[str, tuple[int, int]]:
        """Output arg name -> (start, count) of a (substituted) body NodeDef."""
        try:
            return self._output_ranges(node)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(e.message, op_type=node.op, node_name=node.name) from None

    def _output_ranges(self, node: Any) -> dict[str, tuple[int, int]]:
        call = self.library.callee(node)
        if call is not None and node.op not in CALL_OPS:
            fdef = self.library.functions[call[0]]
            args = fdef.signature.output_arg
            sizes = _arg_sizes_and_types(args, call[1], f"function '{call[0]}' output")
        else:
            op_def = get_op_def(node.op)
            attrs = dict(node.attr)
            sizes = []
            for arg in op_def.outputs:
                if arg.number_attr:
                    v = _attr_value(attrs, op_def.attr_map, arg.number_attr)
                    sizes.append((checked_count(v.i if hasattr(v, "i") else int(v), f"output '{arg.name}'"), []))
                elif arg.type_list_attr:
                    v = _attr_value(attrs, op_def.attr_map, arg.type_list_attr)
                    sizes.append((len(v.list.type) if hasattr(v, "list") else len(v), []))
                else:
                    sizes.append((1, []))
            args = op_def.outputs
        ranges, start = {}, 0
        for arg, (n, _) in zip(args, sizes):
            ranges[arg.name] = (start, n)
            start += n
        return ranges

    def inline(self, call: Any, out: list[Any], stack: tuple[str, ...] = ()) -> None:
        """Append the inlined form of ``call`` (a NodeDef in graph format) to ``out``."""
        fname, inst = self.library.callee(call)  # type: ignore[misc]
        fdef = self.library.functions[fname]
        sig = fdef.signature
        where = f"function '{fname}' called by node '{call.name}'"
        data = [i for i in call.input if not i.startswith("^")]
        control = [i for i in call.input if i.startswith("^")]
        in_args = _arg_sizes_and_types(sig.input_arg, inst, f"function '{fname}' input")
        if sum(n for n, _ in in_args) != len(data):
            raise InvalidArgumentError(f"{where}: the call has {len(data)} inputs, the function takes "
                                       f"{sum(n for n, _ in in_args)}", op_type=call.op, node_name=call.name)
        counter = 0

        def new_node(name: str, op: str, inputs: list[str]) -> Any:
            node = NodeDef(name=name, op=op, input=inputs, device=call.device)
            return node

        control_node = None
        if control:
            control_node = f"Func/{call.name}/input_control_node/_{counter}"
            counter += 1
            out.append(new_node(control_node, "NoOp", control))
        wait = ["^" + control_node] if control_node else []
        args: dict[str, list[str]] = {}
        pos = 0
        for arg, (_n, types) in zip(sig.input_arg, in_args):
            names = []
            for t in types:
                ident = new_node(f"Func/{call.name}/input/_{counter}", "Identity", [data[pos]] + wait)
                ident.attr["T"].type = t
                out.append(ident)
                names.append(ident.name)
                counter += 1
                pos += 1
            args[arg.name] = names

        prefix = call.name + "/"
        body: dict[str, Any] = {}
        for node in fdef.node_def:
            if node.name in body or node.name in args:
                raise InvalidArgumentError(f"{where}: the body has two nodes or args named '{node.name}'",
                                           op_type=call.op, node_name=call.name)
            copy = NodeDef()
            copy.CopyFrom(node)
            _substitute(copy.attr, inst, f"{where}, body node '{node.name}'")
            body[node.name] = copy
        ranges: dict[str, dict[str, tuple[int, int]]] = {}

        def resolve(ref: str) -> list[str]:
            """Graph-format tensor names for a function-format reference."""
            if ref.startswith("^"):
                name = ref[1:]
                if name in body:
                    return ["^" + prefix + name]
                if name in args:
                    return ["^" + a for a in args[name]]
            else:
                parts = ref.split(":")
                if parts[0] in args and len(parts) <= 2:
                    names = args[parts[0]]
                    if len(parts) == 1:
                        return names
                    if parts[1].isdigit() and int(parts[1]) < len(names):
                        return [names[int(parts[1])]]
                elif parts[0] in body and len(parts) <= 3:
                    node = body[parts[0]]
                    if len(parts) == 1:
                        return [prefix + parts[0]]
                    if node.name not in ranges:
                        ranges[node.name] = self.output_ranges(node)
                    rng = ranges[node.name].get(parts[1])
                    if rng is not None:
                        start, n = rng
                        idx = [int(parts[2])] if len(parts) == 3 and parts[2].isdigit() else \
                            (list(range(n)) if len(parts) == 2 else [-1])
                        if all(0 <= i < n for i in idx):
                            return [prefix + parts[0] + (f":{start + i}" if start + i else "") for i in idx]
            raise InvalidArgumentError(f"{where}: input '{ref}' names no argument or node output of the function",
                                       op_type=call.op, node_name=call.name)

        for name, node in body.items():
            inputs = [r for ref in node.input for r in resolve(ref)]
            if not inputs and wait:
                inputs = list(wait)
            del node.input[:]
            node.input.extend(inputs)
            node.name = prefix + name
            node.device = node.device or call.device
            callee = self.library.callee(node)
            if callee is not None:
                if callee[0] in stack or callee[0] == fname:
                    raise InvalidArgumentError(f"function '{callee[0]}' calls itself; recursive functions cannot "
                                               "be inlined", op_type=node.op, node_name=node.name)
                self.inline(node, out, stack + (fname,))
            else:
                out.append(node)

        rets: list[str] = []
        out_args = _arg_sizes_and_types(sig.output_arg, inst, f"function '{fname}' output")
        types: list[int] = []
        for arg, (_, arg_types) in zip(sig.output_arg, out_args):
            if arg.name not in fdef.ret:
                raise InvalidArgumentError(f"{where}: output '{arg.name}' has no ret entry",
                                           op_type=call.op, node_name=call.name)
            refs = resolve(fdef.ret[arg.name])
            if len(refs) != len(arg_types):
                raise InvalidArgumentError(f"{where}: output '{arg.name}' returns {len(refs)} tensors, expected "
                                           f"{len(arg_types)}", op_type=call.op, node_name=call.name)
            rets += refs
            types += arg_types
        controls = sorted({r for name in fdef.control_ret.values() for r in resolve("^" + name)})
        if rets:
            result = new_node(call.name, "IdentityN", rets + controls)
            result.attr["T"].list.type.extend(types)
        else:
            result = new_node(call.name, "NoOp", controls)
        out.append(result)


def inline_calls(nodes: Iterable[Any], library: FunctionLibrary, max_nodes: int = DEFAULT_MAX_NODES) -> list[Any]:
    """NodeDefs with every call of a library function inlined (graph format, not yet ordered)."""
    nodes = list(nodes)
    library.expanded_size(nodes, max_nodes)
    inliner = _Inliner(library)
    out: list[Any] = []
    for node in nodes:
        if library.callee(node) is None:
            out.append(node)
        else:
            inliner.inline(node, out)
    return out


def unknown_ops(nodes: Iterable[Any], library: FunctionLibrary) -> dict[str, list[str]]:
    """Op type -> node names, for ops with no OpDef in ``nodes`` and the bodies they inline."""
    missing: dict[str, list[str]] = {}
    nodes = list(nodes)
    bodies = [(f"{name}/", library.functions[name].node_def) for name in library.reachable(nodes)]
    for prefix, group in [("", nodes)] + bodies:
        for node in group:
            if not has_op_def(node.op) and node.op not in library.functions:
                missing.setdefault(node.op, []).append(prefix + node.name)
    return missing


# ----------------------------------------------------------------------------- the graph's library
def converted_library(library: FunctionLibrary, max_tensor_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> Any:
    """The GraphDef's library as a FunctionLibraryDefinition (None when it is empty)."""
    if library.proto is None or not (library.proto.function or library.proto.gradient):
        return None
    return function_library_from_proto(library.proto, max_tensor_bytes)


def fill_library(graph: Graph, graph_def: Any) -> None:
    """Write the graph's whole function library to ``graph_def.library`` (as ``Graph::ToGraphDef``)."""
    if len(graph.library) or graph.library.gradients():
        function_library_to_proto(graph.library, graph_def.library)


__all__ = ["CALL_OPS", "DEFAULT_MAX_NODES", "FunctionDef", "FunctionLibrary", "MAX_LIST_LENGTH", "checked_count",
           "converted_library", "fill_library", "inline_calls", "unknown_ops"]
