"""The static side of the dataflow executor: items (bound nodes), frames, and the checks TF makes first.

``build_dataflow_plan`` binds the pruned request: every node becomes an :class:`Item` (kernel, context, where
its inputs live, where its outputs go), frames are assigned by TF's ``BuildControlFlowInfo`` walk with its
checks, standard-shaped while loops are compiled into single items (``loop_compiler.py``), and each frame's
pending counts and input slots are laid out (TF's ``PendingCounts`` layout).  ``executor.py`` runs the result.
"""
from __future__ import annotations

from typing import Any

from tfops_py.errors import InternalError, InvalidArgumentError
from tfops_py.framework.control_flow import (ENTER_OPS, EXIT_OPS, MERGE_OPS, NEXT_ITERATION_OPS, is_back_edge,
                                             topological_order)
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output
from tfops_py.client import binding

# Item kinds: how a node's outputs move between frames and iterations.
NORMAL, ENTER, EXIT, NEXT = 0, 1, 2, 3


class FrameInfo:
    """What is static about a frame: its nodes, their pending counts and input slots."""

    __slots__ = ("name", "parent", "items", "pending", "num_inputs", "input_count", "parallel_iterations",
                 "loop_cond")

    def __init__(self, name: str, parent: FrameInfo | None):
        self.name = name
        self.parent = parent
        self.items: list[Item] = []
        self.pending: list[int] = []
        self.num_inputs = 0
        self.input_count = 0  # Enter nodes into this frame: it is not done until each has run
        self.parallel_iterations = 1
        self.loop_cond: Node | None = None


class Item:
    """One node, bound: kernel, context, where its inputs live, where its outputs go."""

    __slots__ = ("node", "fn", "ctx", "groups", "deref", "flat", "num_inputs", "num_outputs", "base", "pid",
                 "edges", "controls", "kind", "is_merge", "is_trigger", "is_enter", "is_constant", "frame", "child",
                 "fetch", "convert", "inputs_from", "num_controls")

    def __init__(self, node: Node | None):
        self.node = node
        self.fn: Any = None
        self.ctx: Any = None
        self.groups: Any = None
        self.deref: tuple[int, ...] = ()
        self.flat = False
        self.num_inputs = 0
        self.num_outputs = 0
        self.base = 0
        self.pid = 0
        self.edges: list[tuple[int, Item, int]] = []  # (output slot, consumer, consumer's frame-local input slot)
        self.controls: list[Item] = []
        self.kind = NORMAL
        self.is_merge = self.is_trigger = self.is_enter = self.is_constant = False
        self.frame: FrameInfo | None = None
        self.child: FrameInfo | None = None
        self.fetch: list[tuple[int, int]] = []  # (output slot, fetch position) for root-frame fetches
        self.convert: tuple[tuple[int, Any], ...] = ()  # (input index, transfer) for inputs from another backend
        self.inputs_from: list[Item] = []  # the producer of each data input (the feed source for fed ones)
        self.num_controls = 0  # control in-edges


# ----------------------------------------------------------------------------- building
def _node_error(message: str, node: Node) -> InvalidArgumentError:
    return InvalidArgumentError(message, op_type=node.op, node_name=node.name)


class BoundGraph:
    """What the executor needs: the feed source, the root items, the root frame, and where fetches come from."""

    def __init__(self, source: Item, roots: list[Item], root_info: FrameInfo, fetch_feeds: list[tuple[int, int]]):
        self.source, self.roots, self.root_info, self.fetch_feeds = source, roots, root_info, fetch_feeds


def bind_dataflow(backend: Any, feeds: tuple[Output, ...], fetches: tuple[Output, ...], nodes: list[Node],
                  where: dict[int, Any], resources: dict[str, Any] | None, functions: Any,
                  compile_plan: Any) -> BoundGraph:
    """Bind ``nodes`` (the pruned request) for the dataflow executor; static checks first.

    ``compile_plan(feeds, fetches)`` compiles the parts of a recognised while loop (same session settings).
    """
    feed_set = set(feeds)
    library = functions.library if functions is not None else None
    items = {n.id: Item(n) for n in nodes}
    source = Item(None)
    feed_index = {o: k for k, o in enumerate(feeds)}
    _check_no_illegal_cycle(nodes, feed_set)

    # Edges (data, then control), counted per consumer the way TF counts in-edges.
    for n in nodes:
        item = items[n.id]
        item.num_inputs = len(n.inputs)
        item.num_outputs = n.num_outputs()
        for k, inp in enumerate(n.inputs):
            producer = source if inp in feed_set else items[inp.node().id]  # type: ignore[union-attr]
            slot = feed_index[inp] if inp in feed_set else inp.index()
            producer.edges.append((slot, item, k))  # k becomes a frame-local slot below
            item.inputs_from.append(producer)
        for c in n.control_inputs:
            if not binding.fed_entirely(c, feed_set):
                items[c.id].controls.append(item)
                item.num_controls += 1
        item.is_merge = n.op in MERGE_OPS
        item.is_trigger = n.op == "ControlTrigger"
        item.is_enter = n.op in ENTER_OPS
        item.kind = ENTER if item.is_enter else EXIT if n.op in EXIT_OPS else \
            NEXT if n.op in NEXT_ITERATION_OPS else NORMAL
        item.is_constant = item.is_enter and bool(n.attrs.get("is_constant", False))

    root_info = FrameInfo("", None)
    _assign_frames(nodes, items, source, root_info)
    fetch_feeds = []
    for pos, out in enumerate(fetches):
        if out in feed_set:
            fetch_feeds.append((feed_index[out], pos))
            continue
        item = items[out.node().id]  # type: ignore[union-attr]
        delivered_to = item.frame.parent if item.kind == EXIT else item.child if item.is_enter else item.frame
        if delivered_to is not root_info:
            raise _node_error(f"cannot fetch '{out.name()}': it is computed inside while loop frame "
                              f"'{delivered_to.name}' (fetch the loop's Exit instead)", out.node())  # type: ignore
        item.fetch.append((out.index(), pos))

    loops = _compile_loops(nodes, items, root_info, backend, resources, compile_plan)
    infos = {id(i.frame): i.frame for i in [*items.values(), *loops]}
    infos[id(root_info)] = root_info
    for info in infos.values():
        _layout(info)  # type: ignore[arg-type]
    for producer in [source, *items.values(), *loops]:
        producer.edges = [(slot, dst, dst.base + k) for slot, dst, k in producer.edges]
    roots = [i for i in [*items.values(), *loops] if not i.num_inputs and not i.num_controls]

    for n in nodes:
        if n.id not in items:  # compiled into a loop item
            continue
        item = items[n.id]
        nb = where[n.id]
        item.ctx = binding.make_context(n, nb, resources, functions)
        fn = binding.kernel_for(n, nb.name, library)
        item.fn = binding.in_device(fn, nb) if hasattr(nb, "device_context") else fn
        item.groups = binding.arg_groups(n, library)
        item.deref = binding.ref_reads(n)
        item.flat = binding.output_is_flat(n, library)
        item.convert = tuple((k, binding.transfer(src_backend, nb)) for k, src_backend in
                             enumerate(backend if p.node is None else where[p.node.id] for p in item.inputs_from)
                             if not (src_backend is nb or src_backend == nb))
    for loop_item in loops:
        loop_item.convert = tuple((k, binding.transfer(where[p.node.id], backend))
                                  for k, p in enumerate(loop_item.inputs_from)
                                  if p.node is not None and where[p.node.id] != backend)
    return BoundGraph(source, roots, root_info, fetch_feeds)


def _compile_loops(nodes: list[Node], items: dict[int, Item], root: FrameInfo, backend: Any,
                   resources: dict[str, Any] | None, compile_plan: Any) -> list[Item]:
    """Replace each standard-shaped loop directly under the root frame by one item running it compiled."""
    from tfops_py.client.loop_compiler import structure_loop
    from tfops_py.kernels.registry import KernelContext

    frames: dict[int, FrameInfo] = {id(i.frame): i.frame for i in items.values()}  # type: ignore[misc]
    done = []
    for info in [f for f in frames.values() if f.parent is root]:
        inside = [f for f in frames.values() if _within(f, info)]
        members = [i for f in inside for i in f.items]
        enters = [i for i in root.items if i.is_enter and i.child is info]
        loop = structure_loop(info.name, [i.node for i in members], [i.node for i in info.items],  # type: ignore
                              [i.node for i in enters], nodes, compile_plan)  # type: ignore[misc]
        if loop is None:
            continue
        item = Item(None)
        item.fn = loop.run
        item.ctx = KernelContext("While", f"{info.name} (TF1 loop)", {}, backend, [], [], None, resources)
        item.frame = root
        item.num_inputs, item.num_outputs = len(loop.enters), len(loop.exits)
        enter_items = [items[e.id] for e in loop.enters]
        for k, enter in enumerate(enter_items):
            producer = enter.inputs_from[0]
            producer.edges = [(slot, item, k) if dst is enter else (slot, dst, j) for slot, dst, j in producer.edges]
            item.inputs_from.append(producer)
        for src in [*items.values(), *done]:  # the Enters' control inputs become the loop's
            src.controls = [item if c in enter_items else c for c in src.controls]
        item.num_controls = sum(e.num_controls for e in enter_items)
        for k, exit_node in enumerate(loop.exits):
            ex = items[exit_node.id]
            item.edges += [(k, dst, j) for _, dst, j in ex.edges]
            item.controls += ex.controls
            item.fetch += [(k, pos) for _, pos in ex.fetch]
            for dst in [d for _, d, _ in ex.edges]:
                dst.inputs_from = [item if p is ex else p for p in dst.inputs_from]
        for member in members + enter_items:
            del items[member.node.id]  # type: ignore[union-attr]
        root.items = [i for i in root.items if i not in enter_items] + [item]
        for f in inside:
            f.items = []
        done.append(item)
    return done


def _within(frame: FrameInfo, ancestor: FrameInfo) -> bool:
    while frame is not None:
        if frame is ancestor:
            return True
        frame = frame.parent  # type: ignore[assignment]
    return False


def _check_no_illegal_cycle(nodes: list[Node], feeds: set[Output]) -> None:
    """TF's ValidateGraphHasNoCycle: the NextIteration -> Merge back edges are the only cycles allowed."""
    position = {n.id: k for k, n in enumerate(nodes)}

    def inputs_of(k: int) -> list[int]:
        n = nodes[k]
        deps = [position[i.node().id] for i in n.inputs  # type: ignore[union-attr]
                if i not in feeds and not is_back_edge(i.node().op, n.op)]  # type: ignore[union-attr]
        return deps + [position[c.id] for c in n.control_inputs if c.id in position]

    topological_order(len(nodes), inputs_of, lambda k: nodes[k].name)


def _assign_frames(nodes: list[Node], items: dict[int, Item], source: Item, root: FrameInfo) -> None:
    """BuildControlFlowInfo: the frame of every node, by a breadth-first walk from the roots.

    An Enter runs in its producer's frame and delivers into the child frame it
    names; an Exit runs in the loop's frame and delivers into the parent frame.
    """
    infos: dict[str, FrameInfo] = {"": root}
    first_producer: dict[int, Item] = {}
    queue: list[Item] = [source] + [i for i in items.values() if not i.num_inputs and not i.num_controls]
    for item in queue:
        item.frame = root
    visited = {id(i) for i in queue}
    head = 0
    while head < len(queue):
        cur = queue[head]
        head += 1
        frame = cur.frame
        if cur.is_enter:
            frame = cur.child
        elif cur.kind == EXIT:
            if frame is root:
                raise _node_error("Invalid Exit op: Cannot find a corresponding Enter op.", cur.node)  # type: ignore
            frame = frame.parent  # type: ignore[union-attr]
        for out in [d for _, d, _ in cur.edges] + cur.controls:
            if id(out) in visited:
                if out.frame is not frame:
                    raise _frames_error(out, cur, frame, first_producer.get(id(out)))  # type: ignore[arg-type]
                continue
            visited.add(id(out))
            first_producer[id(out)] = cur
            queue.append(out)
            out.frame = frame
            if out.is_enter:
                out.child = _child_info(out, frame, infos)  # type: ignore[arg-type]
    for item in items.values():
        node: Node = item.node  # type: ignore[assignment]
        if item.frame is None:
            raise _node_error("node cannot run: its inputs form a cycle that no Enter node leads into", node)
        if item.kind == NEXT and item.frame is root:
            raise _node_error("NextIteration outside a while loop frame (no Enter node leads to it)", node)
        if item.is_enter:
            item.child.parallel_iterations = int(node.attrs.get("parallel_iterations", 10))  # type: ignore
            item.child.input_count += 1  # type: ignore[union-attr]
        if node.op == "LoopCond":
            info = item.frame
            if info.loop_cond is not None and "LoopCounter" not in info.loop_cond.name and \
                    "LoopCounter" not in node.name:
                raise _node_error(f"Invalid loop structure: Loop \"{info.name}\" has more than one LoopCond node: "
                                  f"{{{{node {node.name}}}}} and {{{{node {info.loop_cond.name}}}}}", node)
            info.loop_cond = node
        item.frame.items.append(item)


def _child_info(enter: Item, frame: FrameInfo, infos: dict[str, FrameInfo]) -> FrameInfo:
    node: Node = enter.node  # type: ignore[assignment]
    name = node.attrs.get("frame_name", "")
    if not name:
        raise _node_error(f"The Enter {{{{node {node.name}}}}} must have a frame name.", node)
    info = infos.get(name)
    if info is None:
        info = infos[name] = FrameInfo(name, frame)
    elif info.parent is not frame:
        raise InternalError(f"Invalid loop structure: Mismatched parent frames for \"{name}\": \"{frame.name}\" vs "
                            f"\"{info.parent.name}\". The node giving this error: {{{{node {node.name}}}}}",  # type: ignore
                            op_type=node.op, node_name=node.name)
    return info


def _frames_error(out: Item, cur: Item, frame: FrameInfo, first: Item | None) -> InvalidArgumentError:
    def label(item: Item | None) -> str:
        return "_SOURCE" if item is None or item.node is None else item.node.name

    node: Node = out.node  # type: ignore[assignment]
    return _node_error(f"{{{{node {node.name}}}}} has inputs from different frames. "
                       f"The input {{{{node {label(cur)}}}}} "
                       f"is in frame '{frame.name}'. The input {{{{node {label(first)}}}}} is in frame "
                       f"'{out.frame.name}'.", node)  # type: ignore[union-attr]


def _layout(info: FrameInfo) -> None:
    """Frame-local pending ids, input slots and initial pending counts (TF's PendingCounts layout)."""
    base = 0
    for pid, item in enumerate(info.items):
        item.pid = pid
        item.base = base
        base += item.num_inputs
        controls = item.num_controls
        info.pending.append(2 * controls + 1 if item.is_merge else item.num_inputs + controls)
    info.num_inputs = base




__all__ = ["BoundGraph", "FrameInfo", "Item", "ENTER", "EXIT", "NEXT", "NORMAL", "bind_dataflow"]
