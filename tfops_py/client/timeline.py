"""A Chrome-trace / Perfetto timeline of a traced Run, like TF's ``timeline.Timeline``.

    md = RunMetadata()
    sess.Run(RunOptions(trace_level=RunOptions.FULL_TRACE), feeds, fetches, run_metadata=md)
    Timeline(md.step_stats).save("run.json")   # open in ui.perfetto.dev or chrome://tracing

One process row per device, one thread row per worker thread, a complete ("X") event per node with
its op type as the name and the node name, inputs and output shapes in ``args``; ``show_memory``
adds a counter of the bytes the outputs hold as the run goes.
"""
from __future__ import annotations

import json
from typing import Any

from tfops_py.client.profiler import NodeOutput, op_type


class Timeline:
    def __init__(self, step_stats: Any, graph: Any = None):
        self._step_stats = step_stats
        self._graph = graph  # accepted for TF's signature; the labels already carry the inputs

    def _events(self, show_memory: bool) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        start = min((s.all_start_micros for d in self._step_stats.dev_stats for s in d.node_stats), default=0)
        for pid, dev in enumerate(self._step_stats.dev_stats):
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": dev.device}})
            threads = sorted({s.thread_id for s in dev.node_stats})
            tids = {t: i for i, t in enumerate(threads)}
            for t, i in tids.items():
                events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": i,
                               "args": {"name": f"thread {t}"}})
            live = 0
            for s in dev.node_stats:
                ts = s.all_start_micros - start
                op = op_type(s)
                inputs = s.timeline_label.partition("(")[2].rstrip(")")
                args = {"name": s.node_name, "op": op, "inputs": inputs}
                for o in s.output:
                    if isinstance(o, NodeOutput):
                        args[f"output{o.slot}"] = f"{o.tensor_description.dtype}{o.tensor_description.shape}"
                events.append({"name": op, "cat": "Op", "ph": "X", "pid": pid, "tid": tids[s.thread_id],
                               "ts": ts, "dur": s.op_end_rel_micros, "args": args})
                if show_memory:
                    live += sum(o.tensor_description.allocation_description.allocated_bytes for o in s.output
                                if isinstance(o, NodeOutput))
                    events.append({"name": "outputs", "ph": "C", "pid": pid, "ts": ts,
                                   "args": {"bytes": live}})
        return events

    def generate_chrome_trace_format(self, show_dataflow: bool = True, show_memory: bool = False) -> str:
        """The trace as a JSON string (``show_dataflow`` is accepted for TF's signature)."""
        return json.dumps({"traceEvents": self._events(show_memory), "displayTimeUnit": "ms"})

    def save(self, path: str, show_memory: bool = False) -> str:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.generate_chrome_trace_format(show_memory=show_memory))
        return path


__all__ = ["Timeline"]
