"""The profiler on top of ``run_options``' RunOptions, RunMetadata and per-node hook.

``sess.Run(RunOptions(trace_level=RunOptions.FULL_TRACE), feeds, fetches, targets, md)`` runs with
``profile_hook`` installed: ``md.step_stats`` gets a ``NodeExecStats`` per node (start, duration,
``timeline_label`` ``name = Op(inputs)``, thread, and in ``output`` each result's dtype, shape and
bytes); after a linear plan ``md.partition_graphs`` lists the nodes the optimized plan ran and
``md.cost_graph`` their compute time and output bytes.  ``summarize(md)`` prints where the time went;
``timeline.Timeline(md.step_stats)`` writes a Chrome-trace/Perfetto JSON.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from typing import Any

from tfops_py.client.run_options import DeviceStepStats, NodeExecStats, NodeHook, RunMetadata, RunOptions


@dataclasses.dataclass
class AllocationDescription:
    requested_bytes: int = 0
    allocated_bytes: int = 0
    allocator_name: str = "cpu"


@dataclasses.dataclass
class TensorDescription:
    dtype: str = ""
    shape: list[int] = dataclasses.field(default_factory=list)
    allocation_description: AllocationDescription = dataclasses.field(default_factory=AllocationDescription)


@dataclasses.dataclass
class NodeOutput:
    slot: int
    tensor_description: TensorDescription


@dataclasses.dataclass
class CostGraphNode:
    name: str
    id: int
    compute_cost: int  # microseconds
    output_bytes: list[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class CostGraphDef:
    node: list[CostGraphNode] = dataclasses.field(default_factory=list)


def device_name(backend: Any) -> str:
    name = getattr(backend, "name", str(backend))
    return f"/job:localhost/replica:0/task:0/device:{'GPU' if 'cupy' in name else 'CPU'}:0 ({name})"


def output_stats(values: Sequence[Any]) -> list[NodeOutput]:
    out = []
    for slot, v in enumerate(values):
        shape = [int(d) for d in getattr(v, "shape", ())]
        nbytes = int(getattr(v, "nbytes", 0) or 0)
        out.append(NodeOutput(slot, TensorDescription(str(getattr(v, "dtype", type(v).__name__)), shape,
                                                      AllocationDescription(nbytes, nbytes))))
    return out


def profile_hook(metadata: RunMetadata, device: str) -> NodeHook:
    """The session's ``StepContext.node_hook`` for a traced Run: one ``NodeExecStats`` per node with its
    start, duration, inputs (in ``timeline_label``, TF's ``name = Op(inputs)``), thread and outputs."""
    stats = DeviceStepStats(device=device)
    metadata.step_stats.dev_stats.append(stats)
    origin_wall, origin = time.time(), time.perf_counter()

    def hook(node: Any, start: float, end: float, outputs: Sequence[Any]) -> None:
        duration = int(round((end - start) * 1e6))
        inputs = ", ".join(i.name() for i in node.inputs)
        stats.node_stats.append(NodeExecStats(
            node_name=node.name, all_start_micros=int((origin_wall + (start - origin)) * 1e6),
            op_end_rel_micros=duration, all_end_rel_micros=duration,
            timeline_label=f"{node.name} = {node.op}({inputs})", thread_id=threading.get_ident(),
            output=output_stats(outputs)))

    return hook


def fill_graphs(metadata: RunMetadata, plan: Any) -> None:
    """``partition_graphs`` (the nodes the optimized plan ran) and ``cost_graph`` after a traced Run."""
    nodes = plan.nodes() if hasattr(plan, "nodes") else []
    by_name = {s.node_name: s for d in metadata.step_stats.dev_stats for s in d.node_stats}
    metadata.partition_graphs = list(nodes)
    metadata.cost_graph = CostGraphDef([
        CostGraphNode(n.name, i, by_name[n.name].op_end_rel_micros if n.name in by_name else 0,
                      [o.tensor_description.allocation_description.allocated_bytes
                       for o in (by_name[n.name].output if n.name in by_name else [])])
        for i, n in enumerate(nodes)])


def op_type(stats: NodeExecStats) -> str:
    """The op type in a ``timeline_label`` (``name = Op(inputs)``)."""
    return stats.timeline_label.partition(" = ")[2].partition("(")[0] or "?"


def _output_bytes(stats: NodeExecStats) -> int:
    return sum(o.tensor_description.allocation_description.allocated_bytes for o in stats.output
               if isinstance(o, NodeOutput))


def summarize(metadata: RunMetadata, top: int = 10) -> str:
    """A table of time per op type (and the ``top`` slowest nodes) from a traced Run."""
    stats = [s for d in metadata.step_stats.dev_stats for s in d.node_stats]
    total = sum(s.op_end_rel_micros for s in stats) or 1
    per_type: dict[str, list[int]] = {}
    for s in stats:
        entry = per_type.setdefault(op_type(s), [0, 0, 0])
        entry[0] += 1
        entry[1] += s.op_end_rel_micros
        entry[2] += _output_bytes(s)
    lines = [f"{'op type':32s} {'count':>6s} {'total ms':>9s} {'%':>6s} {'mean us':>9s} {'out MiB':>8s}"]
    for op, (count, us, nbytes) in sorted(per_type.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{op[:32]:32s} {count:6d} {us / 1e3:9.3f} {100 * us / total:6.1f} {us / count:9.1f} "
                     f"{nbytes / 2**20:8.2f}")
    lines.append(f"{'total':32s} {len(stats):6d} {total / 1e3:9.3f}")
    slow = sorted(stats, key=lambda s: -s.op_end_rel_micros)[:top]
    if slow:
        lines += ["", f"{'slowest nodes':32s} {'op type':>24s} {'ms':>9s}"]
        lines += [f"{s.node_name[-32:]:32s} {op_type(s)[:24]:>24s} {s.op_end_rel_micros / 1e3:9.3f}" for s in slow]
    return "\n".join(lines)


__all__ = ["CostGraphDef", "NodeOutput", "RunMetadata", "RunOptions", "TensorDescription", "fill_graphs",
           "profile_hook", "summarize"]
