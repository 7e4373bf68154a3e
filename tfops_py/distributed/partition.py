"""Splitting one Run's pruned graph into per-task partitions, as TF's graph partitioner does.

Placement (``TaskPlacer``): a node whose device names a job runs on that task; a node that takes a
resource handle or a reference (``ReadVariableOp``, ``Assign``) runs where that resource lives, as TF's
placer colocates them; any other node runs where its first placed input runs; a node with neither runs on
the cluster's default task (``/job:worker/task:0``, else the first task).  Constants and placeholders
belong to no task: every partition that reads one gets its own copy.  So do variables and other
resource-creating nodes within their own task.

Partitioning: a node's *stage* is the largest stage of its producers, plus one when a producer runs on
another task.  The nodes of one (task, stage) form a partition; data crossing partitions is fetched by
the producing partition and fed to a placeholder (``tfops_recv/<node>/<k>``) of the consuming one, and
control edges across partitions become ordering between their Dask tasks.  Partitions are therefore
acyclic, and a task that exchanges tensors with another in both directions runs one partition per
exchange.  A ``while`` loop's nodes must stay in one partition (UnimplementedError otherwise): TF's
per-iteration Send/Recv between tasks has no counterpart here.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tfops_py.client.binding import ref_inputs, ref_outputs
from tfops_py.errors import UnimplementedError
from tfops_py.framework.control_flow import MERGE_OPS, NEXT_ITERATION_OPS, topological_order
from tfops_py.framework.device_names import parse_device_name, task_device_name, task_of
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output
from tfops_py.graphdef.export import node_to_node_def, tensor_name
from tfops_py.graphdef.functions import fill_library
from tfops_py.graphdef.schema import GRAPH_DEF_VERSION, GraphDef
from tfops_py.distributed.cluster import ClusterMap, Task

_COPIED_EVERYWHERE = frozenset({"Const", "HostConst", "Placeholder", "PlaceholderV2"})
RECV_PREFIX = "tfops_recv"
_MAX_LOOP_PASSES = 64


def _is_source(node: Node) -> bool:
    return not node.inputs and not node.control_inputs


def _makes_state(node: Node) -> bool:
    """A source node that creates (or looks up) state: a variable, a resource handle, a table."""
    return _is_source(node) and (DataType.DT_RESOURCE in node.output_types or bool(ref_outputs(node)))


def copied(node: Node) -> bool:
    """Nodes every partition that reads them holds a copy of (within their task, for state)."""
    return _is_source(node) and (node.op in _COPIED_EVERYWHERE or _makes_state(node))


def _copied_everywhere(node: Node) -> bool:
    return _is_source(node) and node.op in _COPIED_EVERYWHERE


class TaskPlacer:
    """The task of every node (cached: a node's placement never changes once made)."""

    def __init__(self, cluster: ClusterMap):
        self.cluster = cluster
        self._task: dict[int, Task] = {}

    def place(self, nodes: Sequence[Node], fed: set[Output]) -> dict[int, Task]:
        """Place ``nodes`` (producers first) and return the placement of every node placed so far."""
        for n in nodes:
            if n.id not in self._task:
                self._task[n.id] = self._choose(n, fed)
        return self._task

    def _choose(self, n: Node, fed: set[Output]) -> Task:
        for k in [k for k, t in enumerate(n.input_types) if t == DataType.DT_RESOURCE] + ref_inputs(n):
            src = n.inputs[k].node()  # type: ignore[union-attr]
            if src.id in self._task:  # type: ignore[union-attr]
                return self._task[src.id]  # type: ignore[union-attr]
        task = task_of(n.device)
        if task is not None:
            self.cluster.address(task, n.name, n.op)  # one the cluster has
            return task
        for i in n.inputs:
            src = i.node()
            if i not in fed and src.id in self._task and not _copied_everywhere(src):  # type: ignore[union-attr]
                return self._task[src.id]  # type: ignore[union-attr]
        return self.cluster.default_task()


@dataclass
class Partition:
    """The nodes of one (task, stage), and how it exchanges tensors with the other partitions."""

    task: Task
    stage: int
    nodes: list[Node] = field(default_factory=list)
    copies: dict[int, Node] = field(default_factory=dict)  # sources copied in, by node id
    recvs: dict[Output, str] = field(default_factory=dict)  # tensor made elsewhere -> its placeholder here
    feeds: dict[str, tuple[bool, Output]] = field(default_factory=dict)  # fed name -> (fed by the user?, tensor)
    sends: list[Output] = field(default_factory=list)  # tensors it fetches, for other partitions or the user
    after: set[tuple[Task, int]] = field(default_factory=set)  # partitions it waits for (control edges)

    @property
    def key(self) -> tuple[Task, int]:
        return self.task, self.stage

    def name(self) -> str:
        return f"{task_device_name(self.task)} stage {self.stage}"

    def graph_def(self, library_graph: Any) -> Any:
        """A GraphDef of this partition alone: its nodes, copies, and a placeholder per received tensor."""
        gd = GraphDef()
        members = {n.id for n in self.nodes} | set(self.copies)
        for n in sorted([*self.copies.values(), *self.nodes], key=lambda m: m.id):
            nd = gd.node.add()
            node_to_node_def(n, nd)
            del nd.input[:]
            for i in n.inputs:
                nd.input.append(self.recvs[i] if i in self.recvs else tensor_name(i.node().name, i.index()))  # type: ignore
            nd.input.extend(sorted({"^" + c.name for c in n.control_inputs if c.id in members}))
            nd.device = parse_device_name(n.device).device if n.device else ""
        for o, name in self.recvs.items():
            nd = gd.node.add()
            nd.name, nd.op = name, "Placeholder"
            nd.attr["dtype"].type = int(o.type())
            nd.attr["shape"].shape.unknown_rank = True
        gd.versions.producer = GRAPH_DEF_VERSION
        fill_library(library_graph, gd)
        return gd


def recv_name(o: Output) -> str:
    return f"{RECV_PREFIX}/{o.node().name}/{o.index()}"  # type: ignore[union-attr]


def producer_order(nodes: list[Node], fed: set[Output]) -> list[Node]:
    """``nodes`` with every producer before its consumers (loop back edges left out)."""
    index = {n.id: k for k, n in enumerate(nodes)}
    return [nodes[k] for k in topological_order(len(nodes), lambda k: _producers(nodes[k], index, fed),
                                                lambda k: nodes[k].name)]


def partition(nodes: list[Node], fed: set[Output], fetches: Sequence[Output], targets: Sequence[Node],
              tasks: dict[int, Task]) -> list[Partition]:
    """The partitions of one request's pruned ``nodes`` (in :func:`producer_order`), producers first."""
    index = {n.id: k for k, n in enumerate(nodes)}
    own = {o.node().id for o in fetches if o not in fed} | {t.id for t in targets}  # type: ignore[union-attr]
    for n in nodes:  # state read from another task needs a partition on its own task to be read in
        for src in [i.node() for i in n.inputs if i not in fed] + list(n.control_inputs):
            if copied(src) and not _copied_everywhere(src) and tasks[src.id] != tasks[n.id]:  # type: ignore
                own.add(src.id)  # type: ignore[union-attr]
    stage = _stages(nodes, fed, tasks, own, index)
    parts: dict[tuple[Task, int], Partition] = {}
    home: dict[int, Partition] = {}
    for n in nodes:
        if n.id in stage:
            key = (tasks[n.id], stage[n.id])
            part = home[n.id] = parts.setdefault(key, Partition(*key))
            part.nodes.append(n)
    for part in parts.values():
        for n in part.nodes:
            for i in n.inputs:
                _connect(part, i, fed, home, tasks)
            for c in n.control_inputs:
                if c.id in home and home[c.id] is not part:
                    part.after.add(home[c.id].key)
                elif c.id not in home and c.id in index:
                    part.copies[c.id] = c
    for o in fetches:
        src = o.node()
        if o not in fed and o not in home[src.id].sends:  # type: ignore[union-attr]
            home[src.id].sends.append(o)  # type: ignore[union-attr]
    return sorted(parts.values(), key=lambda p: (p.stage, p.task))


def _connect(part: Partition, i: Output, fed: set[Output], home: dict[int, Partition],
             tasks: dict[int, Task]) -> None:
    src: Node = i.node()  # type: ignore[assignment]
    local = home.get(src.id) is part
    if i in fed:
        name = tensor_name(src.name, i.index()) if local else part.recvs.setdefault(i, recv_name(i))
        part.feeds[name] = (True, i)
    elif local:
        return
    elif src.id not in home or (copied(src) and tasks[src.id] == part.task):  # a reference must stay one
        part.copies[src.id] = src
    else:
        producer = home[src.id]  # type: ignore[union-attr]
        if i not in producer.sends:
            producer.sends.append(i)
        part.feeds[part.recvs.setdefault(i, recv_name(i))] = (False, i)


def _producers(n: Node, index: dict[int, int], fed: set[Output]) -> list[int]:
    """Positions (in the pruned node list) of ``n``'s producers, leaving out fed tensors and loop back edges."""
    srcs = [i.node().id for i in n.inputs if i not in fed and  # type: ignore[union-attr]
            not (i.node().op in NEXT_ITERATION_OPS and n.op in MERGE_OPS)]  # type: ignore[union-attr]
    srcs += [c.id for c in n.control_inputs]
    return [index[s] for s in srcs if s in index]


def _stages(nodes: list[Node], fed: set[Output], tasks: dict[int, Task], own: set[int],
            index: dict[int, int]) -> dict[int, int]:
    """The stage of every node with a partition of its own (copied sources only when in ``own``)."""
    floor: dict[int, int] = {}  # a loop's Merge raised to the stage of its NextIteration
    for _ in range(_MAX_LOOP_PASSES):
        stage: dict[int, int] = {}
        for n in nodes:
            if copied(n) and n.id not in own:
                continue
            s = floor.get(n.id, 0)
            for j in _producers(n, index, fed):
                p = nodes[j]
                if p.id in stage:
                    s = max(s, stage[p.id] + (tasks[p.id] != tasks[n.id]))
            stage[n.id] = s
        raised = False
        for n in nodes:
            for i in n.inputs if n.op in MERGE_OPS else ():
                src = i.node()
                if src.op not in NEXT_ITERATION_OPS or src.id not in stage:  # type: ignore[union-attr]
                    continue
                if tasks[src.id] != tasks[n.id] or stage[src.id] > stage[n.id] + 8 * len(nodes):  # type: ignore
                    raise _loop_error(n)
                if stage[src.id] > stage[n.id]:  # type: ignore[union-attr]
                    floor[n.id] = stage[src.id]  # type: ignore[union-attr]
                    raised = True
        if not raised:
            return stage
    raise _loop_error(next(n for n in nodes if n.id in floor))


def _loop_error(merge: Node) -> UnimplementedError:
    return UnimplementedError(
        f"the while loop of '{merge.name}' has nodes on more than one task (or reads from another task inside "
        "the loop): a loop runs within one task's partition here; place the loop's nodes on one task and "
        "pass tensors in through its Enter nodes", op_type=merge.op, node_name=merge.name)


__all__ = ["Partition", "RECV_PREFIX", "TaskPlacer", "copied", "partition", "producer_order", "recv_name"]
