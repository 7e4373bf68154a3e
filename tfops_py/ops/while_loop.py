"""``ops::BuildWhileLoop`` (tensorflow/cc/ops/while_loop.h): a TF1 dataflow while loop from two builders.

C++ builders write their result to an out-parameter and return a Status; here they
return the result::

    // C++                                                # Python
    [](const Scope& s, const std::vector<Output>& in,     lambda s, inputs: ops.Less(s, inputs[0], 10)
       Output* out) { *out = ops::Less(s, in[0], 10);
                      return s.status(); }
    [](const Scope& s, const std::vector<Output>& in,     lambda s, inputs: [ops.Add(s, inputs[0], 1)]
       std::vector<Output>* out) {
         out->push_back(ops::Add(s, in[0], 1));
         return s.status(); }

A builder may instead raise, or return a non-OK ``Status``: the error propagates
out of ``BuildWhileLoop`` as an exception (C++ returns it as the Status).  The loop
outputs (one Exit per loop variable) are returned, and also appended to ``outputs``
when a list is passed, for line-by-line ports of ``OutputList outputs;
TF_CHECK_OK(BuildWhileLoop(..., &outputs))``; a list passed as ``cond_output``
receives the LoopCond output.  Node names, frame structure and the back edges are
TF's, so the graph exports to TF and runs there.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from tfops_py.errors import InvalidArgumentError, OpError, OutOfRangeError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Graph, Node
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output, as_output
from tfops_py.framework.scope import Scope
from tfops_py.framework.status import Status

CondGraphBuilderFn = Callable[[Scope, list[Output]], Any]  # returns the boolean Output
BodyGraphBuilderFn = Callable[[Scope, list[Output]], Any]  # returns one Output per loop variable


@attrs.define(eq=False)
class WhileContext:
    """What a gradient needs to know about a loop built by BuildWhileLoop (``tensorflow::WhileContext``)."""

    frame_name: str
    enter_nodes: list[Node]
    exit_nodes: list[Node]
    cond_output: Output
    body_inputs: list[Output]
    body_outputs: list[Output]


def while_contexts(graph: Graph) -> dict[str, WhileContext]:
    """The graph's while contexts by frame name (``Graph::AddWhileContext`` stores them)."""
    return graph.while_contexts


def while_context_of(node: Node) -> WhileContext | None:
    """The WhileContext of a loop's Exit node (``Node::while_ctx``), if BuildWhileLoop recorded one."""
    for ctx in while_contexts(node.graph).values():
        if any(e is node for e in ctx.exit_nodes):
            return ctx
    return None


def _fail(scope: Scope, error: OpError) -> None:
    """Raise what C++ returns as BuildWhileLoop's Status (like C++, it is not recorded in the scope's status)."""
    raise error


def _result(scope: Scope, value: Any) -> Any:
    """A builder's return value (None for an OK Status: the out-parameter was left unset); raises its error."""
    if isinstance(value, Status):
        if not value.ok():
            _fail(scope, value.error())  # type: ignore[arg-type]
        value = None
    scope.status().raise_if_error()
    return value


def _valid_output(scope: Scope, value: Any, what: str) -> Output:
    """``Graph::IsValidOutputTensor`` with TF's messages."""
    out = as_output(value) if value is not None else None
    if out is None or out.node() is None:
        _fail(scope, InvalidArgumentError("Node is null"))
    node = out.node()  # type: ignore[union-attr]
    if node.graph is not scope.graph():
        _fail(scope, InvalidArgumentError(f"BuildWhileLoop: '{what}' returned '{node.name}', a node of another graph"))
    if not 0 <= out.index() < node.num_outputs():  # type: ignore[union-attr]
        _fail(scope, OutOfRangeError(f"Node '{node.name}' (type: '{node.op}', num of outputs: {node.num_outputs()}) "
                                     f"does not have output {out.index()}"))  # type: ignore[union-attr]
    return out  # type: ignore[return-value]


def _next_iteration_name(scope: Scope, index: int) -> str:
    prefix = scope.name()
    return (f"{prefix}/" if prefix else "") + "NextIteration" + (f"_{index}" if index > 0 else "")


def BuildWhileLoop(scope: Scope, inputs: Sequence[Any], cond: CondGraphBuilderFn, body: BodyGraphBuilderFn,
                   frame_name: str, outputs: list | None = None, create_while_ctx: bool = True,
                   cond_output: list | None = None) -> list[Output]:
    """Build ``while cond(vars): vars = body(vars)``; returns the loop's outputs (Exit nodes).

    ``inputs`` are the initial loop variables.  ``cond(scope, vars)`` returns a bool
    Output; ``body(scope, vars)`` returns one Output per variable.  ``frame_name``
    names the loop's frame (unique per loop).  See the module docstring for the
    C++ calling convention.
    """
    from tfops_py import ops

    scope.status().raise_if_error()
    loop_inputs = [_valid_output(scope, v, "inputs") for v in inputs]
    if not loop_inputs:
        _fail(scope, InvalidArgumentError("BuildWhileLoop: 'inputs' must not be empty"))
    enters = [ops.internal.Enter(scope, x, frame_name).output for x in loop_inputs]
    merges: list[Output] = []
    merge_op = get_op_def("Merge")
    for enter in enters:
        # Input 1 stands for the NextIteration built after the body (TF names it before it exists).
        node = add_node(scope, merge_op, [[enter, enter]], {}, back_edges=frozenset({1}))
        merges.append(Output(node, 0))

    cond_scope = scope.NewSubScope("cond").WithControlDependencies(merges[0])
    raw_cond = _valid_output(scope, _result(scope, cond(cond_scope, list(merges))), "cond")
    if raw_cond.type() != DataType.DT_BOOL:
        _fail(scope, InvalidArgumentError(f"BuildWhileLoop: 'cond' argument must return a boolean output, got "
                                          f"{raw_cond.type().short_name}"))
    cond_out = ops.LoopCond(scope, raw_cond).output
    if cond_output is not None:
        cond_output.append(cond_out)

    switches = [ops.Switch(scope, m, cond_out) for m in merges]
    switch_trues = [s.output_true for s in switches]
    body_scope = scope.NewSubScope("body").WithControlDependencies(switch_trues[0])
    result = _result(scope, body(body_scope, list(switch_trues)))
    items = [] if result is None else list(result) if isinstance(result, (list, tuple)) else [result]
    if len(items) != len(loop_inputs):
        _fail(scope, InvalidArgumentError(f"BuildWhileLoop: 'body' argument expected to return {len(loop_inputs)} "
                                          f"output(s), got {len(items)}"))
    body_outputs = [_valid_output(scope, v, "body") for v in items]

    nexts = []
    for i, out in enumerate(body_outputs):
        if out.type() != loop_inputs[i].type():
            _fail(scope, InvalidArgumentError(f"BuildWhileLoop: 'body' output {i} is {out.type().short_name}, loop "
                                              f"variable {i} is {loop_inputs[i].type().short_name}"))
        nxt = ops.NextIteration(scope, out).output
        if nxt.node().name != _next_iteration_name(scope, i):  # type: ignore[union-attr]
            _fail(scope, InvalidArgumentError(f"BuildWhileLoop: a node named '{_next_iteration_name(scope, i)}' "
                                              "already exists in this scope; use a fresh sub-scope for the loop"))
        nexts.append(nxt)
    for nxt, merge in zip(nexts, merges):
        scope.graph().UpdateEdge(nxt, merge.node(), 1)  # type: ignore[arg-type]

    exits = [ops.internal.Exit(scope, s.output_false).output for s in switches]
    if create_while_ctx:
        contexts = while_contexts(scope.graph())
        if frame_name in contexts:
            _fail(scope, InvalidArgumentError(f"WhileContext with frame name '{frame_name}' already exists"))
        contexts[frame_name] = WhileContext(frame_name, [e.node() for e in enters], [e.node() for e in exits],
                                            cond_out, switch_trues, body_outputs)
    if outputs is not None:
        outputs.extend(exits)
    return exits


__all__ = ["BodyGraphBuilderFn", "BuildWhileLoop", "CondGraphBuilderFn", "WhileContext", "while_context_of",
           "while_contexts"]
