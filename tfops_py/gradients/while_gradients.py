"""Gradients of TF1 while loops built by ``ops.BuildWhileLoop`` (tensorflow/cc/framework/while_gradients.cc).

Three loops, as in C++: a counter in the forward loop's frame counts its iterations; a backprop counter
counts them down in the frame ``<frame>_backprop``; the gradient loop runs in that frame while the counter is
positive, its body the symbolic gradient of the forward body (loop variables: the gradients of the loop's
outputs; results: the gradients of its inputs).

Like C++'s, this supports bodies whose gradient does not need the values the forward body computed in each
iteration (sums, scaling by loop invariants ...).  A body such as ``x * x`` would need every iteration's ``x``:
C++ builds a graph that fails when run (inputs from two frames); here that is an UnimplementedError naming
the forward node, raised when the gradient is built.  A functional While differentiates any body.
"""
from __future__ import annotations

from collections.abc import Sequence

from tfops_py import ops
from tfops_py.errors import UnimplementedError
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output
from tfops_py.framework.scope import Scope
from tfops_py.ops.while_loop import WhileContext


def backprop_frame_name(forward_frame_name: str) -> str:
    return f"{forward_frame_name}_backprop"


def _loop_nodes(ctx: WhileContext) -> set[int]:
    """Ids of the forward loop's nodes: everything reachable from its Enters without passing its Exits."""
    exits = {n.id for n in ctx.exit_nodes}
    graph = ctx.enter_nodes[0].graph
    consumers: dict[int, list[Node]] = {}
    for n in graph.nodes():
        for src in [i.node() for i in n.inputs] + list(n.control_inputs):
            consumers.setdefault(src.id, []).append(n)  # type: ignore[union-attr]
    seen = {n.id for n in ctx.enter_nodes}
    stack = list(ctx.enter_nodes)
    while stack:
        for dst in consumers.get(stack.pop().id, ()):
            if dst.id not in seen and dst.id not in exits:
                seen.add(dst.id)
                stack.append(dst)
    return seen


def AddWhileLoopGradient(while_ctx: WhileContext, scope: Scope, grad_inputs: Sequence[Output]) -> list[Output]:
    """The gradients with respect to the loop's inputs, given ``grad_inputs`` for its outputs (Exit nodes)."""
    from tfops_py.gradients.builder import AddSymbolicGradients

    frame = while_ctx.frame_name
    counter = ops.BuildWhileLoop(scope.NewSubScope("ForwardLoopCounter"), [ops.Const(scope, 0)],
                                 lambda s, v: while_ctx.cond_output, lambda s, v: [ops.Add(s, v[0], 1)], frame,
                                 create_while_ctx=False)[0]
    pred: list[Output] = []
    ops.BuildWhileLoop(scope.NewSubScope("BackPropLoopCounter"), [counter], lambda s, v: ops.Greater(s, v[0], 0),
                       lambda s, v: [ops.Subtract(s, v[0], 1)], backprop_frame_name(frame), create_while_ctx=False,
                       cond_output=pred)
    forward = _loop_nodes(while_ctx)
    graph = scope.graph()

    def body(s: Scope, inputs: list[Output]) -> list[Output]:
        first_new = graph.num_nodes()
        grads = AddSymbolicGradients(s, while_ctx.body_outputs, while_ctx.body_inputs, inputs)
        for node in graph.nodes()[first_new:]:
            used = next((i.node() for i in node.inputs if i.node().id in forward), None)  # type: ignore[union-attr]
            if used is not None:
                raise UnimplementedError(
                    f"the gradient of while loop '{frame}' needs '{used.name}' from every forward iteration (its "
                    "body's gradient depends on values the body computes); TF's C++ while gradients, which these "
                    "follow, support only bodies whose gradient does not: use a functional While (Function, "
                    "ops.While), whose gradient replays the loop", op_type=node.op, node_name=node.name)
        return grads

    return ops.BuildWhileLoop(scope.NewSubScope("while"), list(grad_inputs), lambda s, v: pred[0], body,
                              backprop_frame_name(frame), create_while_ctx=False)


__all__ = ["AddWhileLoopGradient", "backprop_frame_name"]
