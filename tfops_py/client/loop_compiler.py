"""TF1 while loops compiled into structured form: each iteration runs as compiled plans, not node by node.

The dataflow executor interprets any graph TF can run, at a cost per node.  Most TF1 loops (every one that
``tf.while_loop``, ``ops.BuildWhileLoop`` or TF's ``lower_control_flow`` makes) have one shape::

    Enter -> Merge -> [cond] -> LoopCond -> Switch -> [body] -> NextIteration -> Merge;  Switch:0 -> [exit] -> Exit

with loop-invariant values entering through constant Enters.  Such a frame is recognised when the plan is built
and replaced by one node of its parent frame that runs ``cond``, ``body`` and ``exit`` as three compiled plans
(linear ones, unless they hold conds or inner loops, which the same rules handle recursively) in a Python loop,
as a functional While runs.  Anything that does not fit stays with the interpreter.  The replacing node is an
ordinary node of the parent frame: a dead input (a loop on an untaken branch) makes every output dead, which is
what TF's frame gives when its Enters are dead.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.control_flow import EXIT_OPS, MERGE_OPS, NEXT_ITERATION_OPS, SWITCH_OPS
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output
from tfops_py.client import binding
from tfops_py.client.run_options import current_step
from tfops_py.kernels.control_flow.dataflow_ops import DEAD
from tfops_py.kernels.registry import KernelContext

Compile = Callable[[tuple[Output, ...], tuple[Output, ...], tuple[Node, ...]], Any]  # -> plan with .call()


class StructuredLoop:
    """A recognised TF1 loop: its inputs (the Enters' inputs: loop variables, then invariants) and outputs
    (its Exits), and the compiled cond, body and exit plans."""

    def __init__(self, frame: str, var_enters: list[Node], const_enters: list[Node], merges: list[Node],
                 switches: list[Node], exits: list[Node], plans: tuple[Any, Any, Any], switch_node: Node):
        self.frame = frame
        self.var_enters, self.const_enters = var_enters, const_enters
        self.merges, self.switches, self.exits = merges, switches, exits
        self.cond, self.body, self.exit = plans
        self.switch_node = switch_node  # named in a non-scalar predicate's error, as the Switch kernel would
        # Merge value_index in the first iteration (the Enter's input) and later ones (the NextIteration's).
        self.first_index = [m.inputs.index(Output(e, 0)) for m, e in zip(merges, var_enters)]
        self.next_index = [1 - i for i in self.first_index]

    @property
    def enters(self) -> list[Node]:
        return self.var_enters + self.const_enters

    def run(self, ctx: KernelContext, *inputs: Any) -> list[Any]:
        n = len(self.var_enters)  # (the executor does not run a loop with a dead input: its Exits are dead)
        vars_, invariants = list(inputs[:n]), list(inputs[n:])
        first = [ctx.asarray(i, DataType.DT_INT32) for i in self.first_index]
        later = [ctx.asarray(i, DataType.DT_INT32) for i in self.next_index]
        step = current_step()
        index = first
        while True:
            if step.deadline:
                step.check_deadline()
            (pred,) = self.cond.call([x for pair in zip(vars_, index) for x in pair] + invariants, step)
            if tuple(getattr(pred, "shape", ())):
                raise InvalidArgumentError(f"The second input must be a scalar, but it has shape "
                                           f"[{','.join(str(d) for d in pred.shape)}]", op_type=self.switch_node.op,
                                           node_name=self.switch_node.name)
            if not bool(pred):
                break
            vars_ = self.body.call([x for v in vars_ for x in (v, DEAD)] + invariants, step)
            index = later
        return self.exit.call([x for v in vars_ for x in (v, DEAD)] + invariants, step)


def _consumers(nodes: Sequence[Node]) -> dict[Output, list[Node]]:
    out: dict[Output, list[Node]] = {}
    for n in nodes:
        for i in n.inputs:
            out.setdefault(i, []).append(n)
    return out


def structure_loop(frame: str, members: list[Node], frame_nodes: list[Node], enters: list[Node],
                   all_nodes: Sequence[Node], compile_plan: Compile) -> StructuredLoop | None:
    """The loop of frame ``frame`` in structured form, or None when it does not have the standard shape.

    ``members``: every node of the frame and of frames nested in it; ``frame_nodes``: those of the frame
    itself; ``enters``: the Enter nodes into it (they run in the parent frame).
    """
    consumers = _consumers(all_nodes)
    loop_conds = [n for n in frame_nodes if n.op == "LoopCond"]
    if len(loop_conds) != 1:
        return None
    loop_cond = loop_conds[0]
    var_enters, merges, switches, nexts = [], [], [], []
    for enter in (e for e in enters if not e.attrs.get("is_constant", False)):
        users = consumers.get(Output(enter, 0), [])
        if len(users) != 1 or users[0].op not in MERGE_OPS or users[0].control_inputs or len(users[0].inputs) != 2:
            return None
        merge = users[0]
        other = next(i for i in merge.inputs if i != Output(enter, 0))
        nxt = other.node()
        if nxt.op not in NEXT_ITERATION_OPS or consumers.get(Output(nxt, 0), []) != [merge] or \
                consumers.get(Output(merge, 1)):  # type: ignore[union-attr]
            return None
        merged, predicate = Output(merge, 0), Output(loop_cond, 0)
        loop_switches = [u for u in consumers.get(merged, [])
                         if u.op in SWITCH_OPS and u.inputs[0] == merged and u.inputs[1] == predicate]
        if len(loop_switches) != 1:
            return None
        var_enters.append(enter)
        merges.append(merge)
        switches.append(loop_switches[0])
        nexts.append(nxt)
    const_enters = [e for e in enters if e.attrs.get("is_constant", False)]
    exits = [n for n in frame_nodes if n.op in EXIT_OPS]
    if not merges or not exits:
        return None
    if any(n.op.startswith("Ref") for n in [*merges, *switches, *nexts, *exits]):
        return None  # a loop variable that is a reference: plans hand back values, so keep the per-node schedule
    structural = {n.id for n in [loop_cond, *var_enters, *const_enters, *merges, *switches, *nexts, *exits]}
    invariants = [Output(e, 0) for e in const_enters]
    cond_feeds = [o for m in merges for o in (Output(m, 0), Output(m, 1))] + invariants
    body_feeds = [o for s in switches for o in (Output(s, 1), Output(s, 0))] + invariants
    exit_feeds = [o for s in switches for o in (Output(s, 0), Output(s, 1))] + invariants
    def controls(of: list[Node]) -> list[Node]:  # what a phase runs for its structural nodes' control inputs
        return [c for n in of for c in n.control_inputs if c.id not in structural]

    # (feeds, fetches, targets, values the request must not read: those dead in it)
    requests = [(cond_feeds, [loop_cond.inputs[0]], controls([loop_cond]), set()),
                (body_feeds, [n.inputs[0] for n in nexts], controls(nexts), {Output(s, 0) for s in switches}),
                (exit_feeds, [e.inputs[0] for e in exits], controls(exits), {Output(s, 1) for s in switches})]
    if any(n.control_inputs for n in merges + switches):
        return None
    covered = set(structural)
    stateful: set[int] = set()
    for feeds, fetches, targets, dead in requests:
        needed = binding.needed_nodes(set(feeds), fetches, targets)
        ids = {n.id for n in needed}
        if ids & structural or any(i in dead for n in needed for i in n.inputs) or set(fetches) & dead:
            return None  # values flow through the loop's structure or from the other branch: not the standard shape
        once = {n.id for n in needed if n.op_def.is_stateful}
        if once & stateful:
            return None  # a stateful node both cond and body need would run twice per iteration
        stateful |= once
        covered |= ids
    if not {n.id for n in members} <= covered:
        return None  # something in the frame runs for its own sake (a target): keep TF's per-node schedule
    plans = tuple(compile_plan(tuple(feeds), tuple(fetches), tuple(targets)) for feeds, fetches, targets, _ in requests)
    return StructuredLoop(frame, var_enters, const_enters, merges, switches, exits, plans, switches[0])


__all__ = ["StructuredLoop", "structure_loop"]
