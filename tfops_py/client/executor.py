"""The dataflow executor: TF's v1 control-flow semantics (frames, iterations, dead tensors).

Used for a pruned graph that contains Switch, Merge, Enter, Exit, NextIteration,
LoopCond or ControlTrigger; every other graph runs as a linear Plan.  It follows
TF's executor (``common_runtime/executor.cc``, ``propagator_state.cc``) on one thread:

* A node runs when all its inputs have arrived.  A node with a dead input is dead:
  it does not run and its outputs are dead.  Merge is the exception: it runs on its
  first live input, or is dead once every data input is dead.  A Switch makes its
  untaken output dead.  ControlTrigger runs even when its inputs are dead.
* Enter moves a value into a child frame (one per loop instance: the parent frame,
  its iteration and the ``frame_name``); ``is_constant`` Enters feed every iteration.
  NextIteration moves a value to the next iteration of its frame (at most
  ``parallel_iterations`` iterations run ahead); Exit moves it to the parent frame.
  A dead Exit is propagated when its frame finishes (a loop on an untaken branch).
* Frames are checked statically (``BuildControlFlowInfo``): an input from another
  frame, an Exit or NextIteration outside a loop, or a cycle that does not go through
  a NextIteration -> Merge back edge is an InvalidArgumentError before anything runs.

Divergences (clean errors where TF picks one value or runs on): a Merge receiving two
live inputs in one iteration is ``InternalError`` (TF's Merge message); a NextIteration
outside a loop is rejected.  Fetching a dead tensor is TF's ``Retval[k] does not have
value``.  Per-Run state is local, so a failed or timed-out Run leaves the plan usable.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from tfops_py.errors import InternalError, InvalidArgumentError, OpError
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output
from tfops_py.client import binding
from tfops_py.client.dataflow_graph import ENTER, EXIT, NORMAL, FrameInfo, Item, bind_dataflow
from tfops_py.client.binding import CHECK_KERNELS, deref, flatten, kernel_error
from tfops_py.kernels._parallel import enter_run, exit_run
from tfops_py.client.function_runtime import function_attrs
from tfops_py.client.plan import _uses_blas, convert_feed, feed_spec
from tfops_py.client.run_options import StepContext
from tfops_py.kernels.control_flow.dataflow_ops import DEAD

_DEADLINE_EVERY = 64  # nodes between deadline checks


class _Iteration:
    __slots__ = ("num", "pending", "dead", "inputs", "outstanding_ops", "outstanding_frames")

    def __init__(self, num: int, info: FrameInfo):
        self.num = num
        self.pending = list(info.pending)
        self.dead = [0] * len(info.pending)
        self.inputs: list[Any] = [None] * info.num_inputs
        self.outstanding_ops = 0
        self.outstanding_frames = 0


class _Frame:
    __slots__ = ("info", "parent", "parent_iter", "iterations", "iteration_count", "outstanding_iterations",
                 "max_parallel", "pending_inputs", "next_roots", "invariants", "dead_exits", "key")

    def __init__(self, info: FrameInfo, parent: _Frame | None, parent_iter: _Iteration | None, key: Any):
        self.info = info
        self.parent = parent
        self.parent_iter = parent_iter
        self.key = key
        self.iterations: dict[int, _Iteration] = {0: _Iteration(0, info)}
        self.iteration_count = 0
        self.outstanding_iterations = 1
        self.max_parallel = max(1, info.parallel_iterations) if parent is not None else 1
        self.pending_inputs = info.input_count if parent is not None else 0
        self.next_roots: list[tuple[Item, Any]] = []
        self.invariants: list[tuple[Item, Any]] = []
        self.dead_exits: list[Item] = []

    def iteration_done(self, it: _Iteration) -> bool:
        if it.outstanding_ops == 0 and it.outstanding_frames == 0:
            if it.num == 0:
                return self.pending_inputs == 0
            return (it.num - 1) not in self.iterations
        return False

    def done(self) -> bool:
        return self.pending_inputs == 0 and self.outstanding_iterations == 0


class DataflowPlan:
    """A compiled request with v1 control flow; same interface as ``Plan``."""

    def __init__(self, backend: Any, feed_order: list[Output], feed_specs: list[Any], source: Item,
                 roots: list[Item], root_info: FrameInfo, fetch_feeds: list[tuple[int, int]], num_fetches: int,
                 fetch_names: list[str], nodes: list[Node], holds_blas: bool):
        self.backend = backend
        self.feed_order = feed_order
        self._feed_specs = feed_specs
        self._source = source
        self._roots = roots
        self._root_info = root_info
        self._fetch_feeds = fetch_feeds  # (feed position, fetch position): a fetched tensor that is fed
        self._num_fetches = num_fetches
        self._fetch_names = fetch_names
        self._nodes = nodes
        self.num_threads = 0  # threads a run may use (0: the process default)
        self.holds_blas = holds_blas  # BLAS to one thread while it runs (see Plan)

    def nodes(self) -> list[Node]:
        """The nodes this plan runs (a loop compiled into one item counts its nodes)."""
        return list(self._nodes)

    def run(self, feed_values: Sequence[Any], step: StepContext | None = None) -> list[Any]:
        values = [convert_feed(self.backend, v, spec, out)
                  for v, spec, out in zip(feed_values, self._feed_specs, self.feed_order)]
        return self._execute(values, step)

    def call(self, args: Sequence[Any], step: StepContext | None = None) -> list[Any]:
        return self._execute(list(args), step)

    # -- the run loop ---------------------------------------------------------------------------------
    def _execute(self, feed_values: list[Any], step: StepContext | None) -> list[Any]:
        results: list[Any] = [None] * self._num_fetches
        for feed_pos, fetch_pos in self._fetch_feeds:
            results[fetch_pos] = feed_values[feed_pos]
        run = _Run(self, results, step)
        token = enter_run(self.num_threads, self.holds_blas)
        try:
            run.start(feed_values)
            run.loop()
        finally:
            exit_run(token, self.holds_blas)
        for k, value in enumerate(results):
            if value is None or value is DEAD:
                raise InvalidArgumentError(f"Retval[{k}] does not have value (fetch '{self._fetch_names[k]}' is dead: "
                                           "it depends on an untaken Switch branch, or never ran)")
        return [deref(v, None) for v in results]


class _Run:
    """The state of one execution of a DataflowPlan (frames, iterations, the ready stack)."""

    def __init__(self, plan: DataflowPlan, results: list[Any], step: StepContext | None):
        self.plan = plan
        self.results = results
        self.step = step
        self.ready: deque[tuple[Item, _Frame, _Iteration, bool]] = deque()  # first in, first out
        self.frames: dict[Any, _Frame] = {}
        self.root = _Frame(plan._root_info, None, None, ())

    def start(self, feed_values: list[Any]) -> None:
        root, it = self.root, self.root.iterations[0]
        it.outstanding_ops = len(self.plan._roots) + 1  # the roots and the feed source
        self.ready.extend((item, root, it, False) for item in self.plan._roots)
        self.propagate(self.plan._source, root, it, False, feed_values)

    def loop(self) -> None:
        ready = self.ready
        results = self.results
        root = self.root
        step = self.step
        hook = step.node_hook if step is not None else None
        deadline = step is not None and step.deadline
        count = 0
        while ready:
            item, frame, it, is_dead = ready.popleft()
            count += 1
            if deadline and count % _DEADLINE_EVERY == 0:
                step.check_deadline()  # type: ignore[union-attr]
            if is_dead:
                outputs: list[Any] = [DEAD] * item.num_outputs
            else:
                base = item.base
                ins = it.inputs[base:base + item.num_inputs]
                it.inputs[base:base + item.num_inputs] = [None] * item.num_inputs
                for k, move in item.convert:
                    if ins[k] is not None and ins[k] is not DEAD:
                        ins[k] = move(item.ctx, ins[k])
                for k in item.deref:
                    ins[k] = deref(ins[k], item.ctx)
                args = ins if item.groups is None else \
                    [ins[a:b] if is_list else ins[a] for a, b, is_list in item.groups]
                start = time.perf_counter() if hook is not None else 0.0
                try:
                    result = item.fn(item.ctx, *args)
                except OpError:
                    raise
                except Exception as e:
                    raise kernel_error(e, item.ctx) from e
                outputs = [result] if item.flat else flatten(result)
                if item.node is not None:  # (a compiled loop's parts report their own nodes)
                    if hook is not None:
                        hook(item.node, start, time.perf_counter(), outputs)
                    if CHECK_KERNELS:
                        binding.check_outputs(item.node, item.ctx, outputs)
            if item.fetch and (frame is root or (item.kind == EXIT and not is_dead and frame.parent is root)):
                for slot, pos in item.fetch:  # a fetched tensor of the root frame (an Exit delivers there)
                    results[pos] = outputs[slot]
            self.propagate(item, frame, it, is_dead, outputs)

    # -- propagation (PropagatorState::PropagateOutputs) --------------------------------------------
    def propagate(self, item: Item, frame: _Frame, it: _Iteration, is_dead: bool, outputs: list[Any]) -> None:
        kind = item.kind
        if kind == NORMAL:
            activated = self.activate(item, is_dead, frame, it, outputs)
            frame_done = self.adjust(frame, it, activated - 1)
        elif kind == ENTER:
            child = self.child_frame(frame, it, item.child)  # type: ignore[arg-type]
            child_it = child.iterations[0]
            if item.is_constant:
                child.invariants.append((item, outputs[0]))
                for num in range(child.iteration_count + 1):  # every active iteration sees the invariant
                    target = child.iterations.get(num)
                    if target is not None:
                        self.adjust(child, target, self.activate(item, is_dead, child, target, outputs))
            else:
                self.adjust(child, child_it, self.activate(item, is_dead, child, child_it, outputs))
            child.pending_inputs -= 1
            frame_done = self.adjust(frame, it, -1)
        elif kind == EXIT:
            if is_dead:
                if it.num == frame.iteration_count:
                    frame.dead_exits.append(item)
            else:
                parent, parent_it = frame.parent, frame.parent_iter
                parent_it.outstanding_ops += self.activate(item, False, parent, parent_it, outputs)  # type: ignore
            frame_done = self.adjust(frame, it, -1)
        else:  # NextIteration
            if not is_dead:
                if it.num == frame.iteration_count:
                    if frame.outstanding_iterations == frame.max_parallel:
                        frame.next_roots.append((item, outputs[0]))  # started when an iteration finishes
                    else:
                        nxt = self.increment_iteration(frame)
                        self.adjust(frame, nxt, self.activate(item, False, frame, nxt, outputs))
                else:
                    nxt = frame.iterations[it.num + 1]
                    nxt.outstanding_ops += self.activate(item, False, frame, nxt, outputs)
            frame_done = self.adjust(frame, it, -1)
        if frame_done and frame.parent is not None:
            self.delete_frame(frame)

    def activate(self, item: Item, is_dead: bool, frame: _Frame, it: _Iteration, outputs: list[Any]) -> int:
        """Deliver ``item``'s outputs to its consumers in ``it``; queue the ready ones; return how many."""
        pending, dead, inputs, ready = it.pending, it.dead, it.inputs, self.ready
        activated = 0
        for slot, dst, loc in item.edges:
            value = outputs[slot]
            pid = dst.pid
            if dst.is_merge:
                if value is not DEAD:  # a live data input
                    count = pending[pid]
                    if not count & 1:
                        raise InternalError("Merge can not have more than one valid input.", op_type=dst.node.op,
                                            node_name=dst.node.name)
                    inputs[loc] = value
                    pending[pid] = count - 1
                    if count != 1:
                        continue
                    dst_dead = False
                else:
                    dead[pid] += 1
                    dst_dead = dead[pid] == dst.num_inputs or item.is_enter
                    if not (pending[pid] == 1 and dst_dead):
                        continue
            else:
                inputs[loc] = value
                pending[pid] -= 1
                if is_dead or value is DEAD:
                    dead[pid] += 1
                if pending[pid]:
                    continue
                dst_dead = dead[pid] > 0
            ready.append((dst, frame, it, dst_dead and not dst.is_trigger))
            activated += 1
        for dst in item.controls:
            pid = dst.pid
            if dst.is_merge:
                pending[pid] -= 2
                count = pending[pid]
                dst_dead = dead[pid] == dst.num_inputs
                if not (count == 0 or (count == 1 and dst_dead)):
                    continue
            else:
                pending[pid] -= 1
                if is_dead:
                    dead[pid] += 1
                if pending[pid]:
                    continue
                dst_dead = dead[pid] > 0
            ready.append((dst, frame, it, dst_dead and not dst.is_trigger))
            activated += 1
        return activated

    # -- frames and iterations ---------------------------------------------------------------------
    def adjust(self, frame: _Frame, it: _Iteration, delta: int) -> bool:
        """Change ``it``'s outstanding ops; clean up finished iterations; True when the frame is done."""
        it.outstanding_ops += delta
        if it.outstanding_ops != 0:
            return False
        return self.cleanup_iterations(frame, it)

    def cleanup_iterations(self, frame: _Frame, it: _Iteration) -> bool:
        num = it.num
        while num <= frame.iteration_count and frame.iteration_done(it):
            del frame.iterations[num]
            frame.outstanding_iterations -= 1
            num += 1
            if frame.next_roots:
                self.increment_iteration(frame)
            if num <= frame.iteration_count:
                nxt = frame.iterations.get(num)
                if nxt is None:  # already cleaned up by a nested call
                    break
                it = nxt
        return frame.done()

    def increment_iteration(self, frame: _Frame) -> _Iteration:
        frame.iteration_count += 1
        nxt = frame.iterations[frame.iteration_count] = _Iteration(frame.iteration_count, frame.info)
        frame.outstanding_iterations += 1
        frame.dead_exits = []
        roots, frame.next_roots = frame.next_roots, []
        activated = sum(self.activate(item, False, frame, nxt, [value]) for item, value in roots)
        self.adjust(frame, nxt, activated)  # NextIterations that waited for a free iteration
        activated = sum(self.activate(item, value is DEAD, frame, nxt, [value]) for item, value in frame.invariants)
        self.adjust(frame, nxt, activated)
        return nxt

    def child_frame(self, frame: _Frame, it: _Iteration, info: FrameInfo) -> _Frame:
        key = (id(frame), it.num, info.name)
        child = self.frames.get(key)
        if child is None:
            child = self.frames[key] = _Frame(info, frame, it, key)
            it.outstanding_frames += 1
        return child

    def delete_frame(self, frame: _Frame) -> None:
        """Propagate the frame's dead exits to its parent, forget it, and clean up the parent iteration."""
        if self.frames.pop(frame.key, None) is None:
            return
        parent, parent_it = frame.parent, frame.parent_iter
        pending, dead = parent_it.pending, parent_it.dead  # type: ignore[union-attr]
        woken: list[tuple[Item, bool]] = []
        for item in frame.dead_exits:
            for _, dst, _ in item.edges:
                pid = dst.pid
                dead[pid] += 1
                if dst.is_merge:
                    dst_dead = dead[pid] == dst.num_inputs
                    if pending[pid] == 1 and dst_dead:
                        woken.append((dst, dst_dead))
                else:
                    pending[pid] -= 1
                    if pending[pid] == 0:
                        woken.append((dst, True))
            for dst in item.controls:
                pid = dst.pid
                if dst.is_merge:
                    pending[pid] -= 2
                    dst_dead = dead[pid] == dst.num_inputs
                    if pending[pid] == 0 or (pending[pid] == 1 and dst_dead):
                        woken.append((dst, dst_dead))
                else:
                    dead[pid] += 1
                    pending[pid] -= 1
                    if pending[pid] == 0:
                        woken.append((dst, True))
        for dst, dst_dead in woken:
            self.ready.append((dst, parent, parent_it, dst_dead and not dst.is_trigger))  # type: ignore[arg-type]
            parent_it.outstanding_ops += 1  # type: ignore[union-attr]
        parent_it.outstanding_frames -= 1  # type: ignore[union-attr]
        if self.cleanup_iterations(parent, parent_it) and parent.parent is not None:  # type: ignore[arg-type]
            self.delete_frame(parent)  # type: ignore[arg-type]


def build_dataflow_plan(backend: Any, feeds: tuple[Output, ...], fetches: tuple[Output, ...], nodes: list[Node],
                        where: dict[int, Any], resources: dict[str, Any] | None, functions: Any,
                        compile_plan: Any) -> DataflowPlan:
    bound = bind_dataflow(backend, feeds, fetches, nodes, where, resources, functions, compile_plan)
    blas = any(_uses_blas(n.op) or (functions is not None and n.op in functions.library) or function_attrs(n)
               for n in nodes)
    return DataflowPlan(backend, list(feeds), [feed_spec(o) for o in feeds], bound.source, bound.roots,
                        bound.root_info, bound.fetch_feeds, len(fetches), [o.name() for o in fetches], nodes, blas)


__all__ = ["DataflowPlan", "build_dataflow_plan"]
