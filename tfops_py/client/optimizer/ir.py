"""The optimizer's working form of a pruned request: mutable node records, rewritten in passes.

The user's Graph and Nodes are never changed.  ``Program.build`` wraps each needed Node in an
``ONode``; passes walk the nodes in topological order, resolving inputs through a substitution map
(``replace``) and adding new nodes where they rewrite; ``Program.materialize`` keeps what the
fetches and targets still reach and gives back Nodes: the user's own where nothing changed, fresh
ones (outside any graph's node list) where something did.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output
from tfops_py.framework.tensor_shape import PartialTensorShape

Ref = tuple["ONode", int]
_ids = itertools.count(1 << 40)  # ids of new nodes: unique, after any graph's own


class ONode:
    """A node being optimized: the fields a plan binds, plus where it came from."""

    __slots__ = ("name", "op", "op_def", "attrs", "inputs", "control", "input_types", "output_types",
                 "output_shapes", "requested_device", "assigned_device", "orig", "dirty", "external", "pure")

    def __init__(self, name: str, op: str, attrs: dict[str, Any], inputs: list[Ref], control: list[ONode],
                 input_types: list[DataType], output_types: list[DataType],
                 output_shapes: list[PartialTensorShape], device: tuple[str, str] = ("", ""),
                 orig: Node | None = None):
        self.name, self.op, self.attrs = name, op, attrs
        self.op_def = orig.op_def if orig is not None else get_op_def(op)  # a function call's is synthesized
        self.inputs, self.control = inputs, control
        self.input_types, self.output_types, self.output_shapes = input_types, output_types, output_shapes
        self.requested_device, self.assigned_device = device
        self.orig = orig
        self.dirty = orig is None
        self.external = False  # a node outside the request (its outputs are fed): never rewritten
        self.pure: bool | None = None  # cached by the passes

    @classmethod
    def of(cls, node: Node) -> ONode:
        return cls(node.name, node.op, node.attrs, [], [], list(node.input_types), list(node.output_types),
                   list(node.output_shapes), (node.requested_device, node.assigned_device), node)

    def num_outputs(self) -> int:
        return len(self.output_types)

    @property
    def device(self) -> str:
        return self.assigned_device or self.requested_device

    def like(self, op: str, attrs: dict[str, Any], inputs: list[Ref], output_types: list[DataType] | None = None,
             output_shapes: list[PartialTensorShape] | None = None, suffix: str = "") -> ONode:
        """A new node on this one's device, named after it."""
        return ONode(self.name + suffix, op, attrs, inputs, [],
                     [r[0].output_types[r[1]] for r in inputs], output_types or list(self.output_types),
                     output_shapes or list(self.output_shapes), (self.requested_device, self.assigned_device))

    def __repr__(self) -> str:
        return f"<ONode {self.name!r} op={self.op}>"


def const_node(like: ONode, value: np.ndarray, dtype: DataType, suffix: str = "") -> ONode:
    """A Const node holding ``value`` on ``like``'s device."""
    return ONode(like.name + suffix, "Const", {"value": value, "dtype": dtype}, [], [], [], [dtype],
                 [PartialTensorShape(value.shape)], (like.requested_device, like.assigned_device))


class Program:
    """The request being optimized: nodes in topological order, fed refs, fetch refs, targets."""

    def __init__(self, order: list[ONode], fed: set[Ref], fetches: list[Ref], targets: list[ONode],
                 feeds: set[Output]):
        self.order = order
        self.fed = fed
        self.fetches = fetches
        self.targets = targets
        self._feeds = feeds
        self._subst: dict[Ref, Ref] = {}

    # -- construction ------------------------------------------------------------------------------------
    @classmethod
    def build(cls, nodes: Sequence[Node], feeds: set[Output], fetches: Sequence[Output],
              targets: Sequence[Node]) -> Program:
        wrapped: dict[int, ONode] = {id(n): ONode.of(n) for n in nodes}

        def wrap(node: Node) -> ONode:
            o = wrapped.get(id(node))
            if o is None:  # a producer whose used outputs are all fed
                o = wrapped[id(node)] = ONode.of(node)
                o.external = True
            return o

        for n in nodes:
            o = wrapped[id(n)]
            o.inputs = [(wrap(i.node()), i.index()) for i in n.inputs]  # type: ignore[arg-type]
            o.control = [wrap(c) for c in n.control_inputs]
        fed = {(wrap(f.node()), f.index()) for f in feeds}  # type: ignore[arg-type]
        fetch_refs = [(wrap(f.node()), f.index()) for f in fetches]  # type: ignore[arg-type]
        return cls([wrapped[id(n)] for n in nodes], fed, fetch_refs, [wrap(t) for t in targets], set(feeds))

    # -- rewriting -----------------------------------------------------------------------------------------
    def resolve(self, ref: Ref) -> Ref:
        seen = ref
        while ref in self._subst:
            ref = self._subst[ref]
        if ref is not seen:
            self._subst[seen] = ref
        return ref

    def replace(self, old: Ref, new: Ref) -> None:
        """Every use of ``old`` (from now on) reads ``new``."""
        if old != new:
            self._subst[old] = new

    def walk(self) -> Iterable[ONode]:
        """The nodes in order with inputs resolved; nodes added with ``insert`` join the new order."""
        new_order: list[ONode] = []
        self._pending = new_order
        for node in self.order:
            if not node.external:
                node.inputs = [self.resolve(r) for r in node.inputs]
            new_order.append(node)
            yield node
        self.order = [n for n in new_order if n is not None]
        self.fetches = [self.resolve(r) for r in self.fetches]

    def insert(self, node: ONode) -> ONode:
        """Add a new node at the current point of ``walk`` (before the node being visited)."""
        self._pending.insert(len(self._pending) - 1, node)
        return node

    def move_here(self, node: ONode) -> None:
        """Move a node added earlier in this walk to the current point (its consumers are all later)."""
        k = self._pending.index(node)
        self._pending[k] = None  # type: ignore[call-overload]
        self._pending.insert(len(self._pending) - 1, node)

    def prune(self) -> None:
        """Drop the nodes no fetch or target reaches any more."""
        self.fetches = [self.resolve(r) for r in self.fetches]
        reached: set[int] = set()
        stack = [r[0] for r in self.fetches if r not in self.fed] + list(self.targets)
        while stack:
            n = stack.pop()
            if id(n) in reached or n.external:
                continue
            reached.add(id(n))
            stack.extend(self.resolve(r)[0] for r in n.inputs if self.resolve(r) not in self.fed)
            stack.extend(n.control)
        self.order = [n for n in self.order if id(n) in reached]

    def use_counts(self) -> dict[Ref, int]:
        """Data and control uses of each ref by the live nodes (fetches count; a control use counts for
        every output)."""
        self.prune()
        uses: dict[Ref, int] = {}

        def use(ref: Ref) -> None:
            uses[ref] = uses.get(ref, 0) + 1

        def use_all(node: ONode) -> None:
            for k in range(max(1, node.num_outputs())):
                use((node, k))

        for n in self.order:
            for r in n.inputs:
                use(self.resolve(r))
            for c in n.control:
                use_all(c)
        for r in self.fetches:
            use(self.resolve(r))
        for t in self.targets:
            use_all(t)
        return uses

    def is_fed(self, ref: Ref) -> bool:
        return ref in self.fed

    # -- result ---------------------------------------------------------------------------------------------
    def materialize(self) -> tuple[list[Node], list[Output]]:
        """(nodes the fetches and targets reach, in topological order; the fetches as Outputs)."""
        self.prune()
        for n in self.order:
            n.inputs = [self.resolve(r) for r in n.inputs]
        live = self.order
        out: dict[int, Node] = {}

        def node_of(o: ONode) -> Node:
            if o.external:
                return o.orig  # type: ignore[return-value]
            return out[id(o)]

        def output_of(ref: Ref) -> Output:
            o, k = ref
            if ref in self.fed:
                return Output(o.orig, k)
            return Output(node_of(o), k)

        for o in live:
            inputs = [output_of(r) for r in o.inputs]
            control = [node_of(c) for c in o.control]
            orig = o.orig
            if (orig is not None and not o.dirty and all(a == b for a, b in zip(inputs, orig.inputs))
                    and len(control) == len(orig.control_inputs)
                    and all(a is b for a, b in zip(control, orig.control_inputs))):
                out[id(o)] = orig
                continue
            graph = orig.graph if orig is not None else _any_graph(inputs, control, live, out)
            node = Node(graph, next(_ids), o.name, o.op_def, inputs, control,  # type: ignore[arg-type]
                        o.attrs, o.input_types, o.output_types, o.requested_device, o.assigned_device)
            node.output_shapes = list(o.output_shapes)
            out[id(o)] = node
        return [out[id(o)] for o in live], [output_of(r) for r in self.fetches]


def _any_graph(inputs: list[Output], control: list[Node], live: list[ONode], out: dict[int, Node]) -> Any:
    for i in inputs:
        return i.node().graph  # type: ignore[union-attr]
    for c in control:
        return c.graph
    for o in live:
        if o.orig is not None:
            return o.orig.graph
    return None
