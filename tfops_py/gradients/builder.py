"""``AddSymbolicGradients``: reverse-mode differentiation that adds gradient ops to a graph.

A port of ``SymbolicGradientBuilder`` (tensorflow/cc/framework/gradients.cc): the
gradient ops go straight into the given scope (no ``gradients/`` prefix); only
nodes on a data path from ``inputs`` to ``outputs`` are differentiated, backprop
stops at the frontier outputs; several incoming gradients are summed with
``AddN``; a multi-output node whose outputs got only some gradients gets
``ZerosLike`` for the rest; ops registered as no-gradient pass ``NoGradient()``
to every input.  Errors that C++ returns as a Status are raised.

While loops built by ``ops.BuildWhileLoop`` are differentiated as a whole: their Exit nodes collect the
incoming gradients and, once every Exit has one, ``AddWhileLoopGradient`` builds the gradient loops and the
result flows to the loop's inputs (C++'s ProcessWhileLoop).  An Exit that no gradient reaches counts as zeros
(C++ leaves such a loop without a gradient).  A node whose op type is a library function differentiates
through the function (``function_grad.py``).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from tfops_py import ops
from tfops_py.errors import InternalError, InvalidArgumentError, NotFoundError, UnimplementedError
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import NoGradient, Operation, Output, as_output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.registry import GradOpRegistry
from tfops_py.ops.while_loop import WhileContext, while_context_of


def _node(o: Output) -> Node:
    """The node of an Output already checked to have one."""
    return o.node()  # type: ignore[return-value]


def _is_no_gradient(o: Output) -> bool:
    return o.node() is None and o.index() == -1


def _as_outputs(values: Sequence[Any], what: str, allow_no_gradient: bool = False) -> list[Output]:
    outs = []
    for v in values:
        o = NoGradient() if v is None and allow_no_gradient else as_output(v)
        if o is None or (o.node() is None and not (allow_no_gradient and _is_no_gradient(o))):
            raise InvalidArgumentError(f"AddSymbolicGradients: every entry of {what} must be an Output "
                                       f"of a node, got {v!r}")
        outs.append(o)
    return outs


class _SymbolicGradientBuilder:
    def __init__(self, scope: Scope, registry: GradOpRegistry, outputs: list[Output], inputs: list[Output],
                 grad_inputs: list[Output]):
        self.scope = scope
        self.registry = registry
        self.outputs = outputs
        self.inputs = inputs
        self.grad_inputs = grad_inputs
        self.grad_outputs: list[Output] = []
        self.backprops: dict[Output, list[Output]] = {}
        self.pending: dict[int, int] = {}
        self.ready: deque[Node] = deque()
        self.input_index: dict[Output, int] = {}
        # Per while loop (frame name): the summed gradient of each Exit node seen so far.
        self.while_backprops: dict[str, dict[int, Output]] = {}
        # Out-edges of the forward graph, in consumer creation order (TF's EdgeSet insertion order).
        self.consumers: dict[int, list[Node]] = {}
        for n in scope.graph().nodes():
            for inp in n.inputs:
                self.consumers.setdefault(_node(inp).id, []).append(n)

    # -- initialisation ---------------------------------------------------------------------
    def _reachable(self) -> set[int]:
        """Ids of nodes from which some output is reachable along data edges."""
        seen = {_node(o).id for o in self.outputs}
        queue = deque(_node(o) for o in self.outputs)
        while queue:
            n = queue.popleft()
            for inp in n.inputs:
                src = _node(inp)
                if src.id not in seen:
                    seen.add(src.id)
                    queue.append(src)
        return seen

    def _stop_backprop_nodes(self, reachable: set[int], output_nodes: set[int]) -> set[int]:
        """Output nodes that are not consumed (transitively) by another output: the frontier."""
        internal: set[int] = set()
        visited: set[int] = set()
        queue: deque[tuple[Node, Node | None]] = deque()
        for o in self.inputs:
            if _node(o).id not in visited:
                visited.add(_node(o).id)
                queue.append((_node(o), None))
        while queue:
            n, last_output = queue.popleft()
            for dst in self.consumers.get(n.id, ()):
                if dst.id not in reachable or dst.id in visited:
                    continue
                visited.add(dst.id)
                last = last_output
                if dst.id in output_nodes:
                    if last is not None:
                        internal.add(last.id)
                    last = dst
                queue.append((dst, last))
        return output_nodes - internal

    def _initialize(self) -> None:
        if len(self.outputs) != len(self.grad_inputs):
            raise InvalidArgumentError("Must specify a gradient input for each output.")
        reachable = self._reachable()
        for o in self.inputs:
            if _node(o).id not in reachable:
                raise InvalidArgumentError(
                    f"Cannot compute the partial derivative for node '{_node(o).name}' as it's "
                    "unreachable from the output node(s).")
        self.grad_outputs = [NoGradient() for _ in self.inputs]
        output_nodes = {_node(o).id for o in self.outputs}
        stop_nodes = self._stop_backprop_nodes(reachable, output_nodes)
        for i, o in enumerate(self.inputs):
            self.input_index.setdefault(o, i)

        visited: set[int] = set()
        queue: deque[Node] = deque()
        for o in self.inputs:
            n = _node(o)
            if n.id not in visited:
                visited.add(n.id)
                queue.append(n)
        # Forward from the inputs: which outputs need backprop, and how many gradients each node awaits.
        while queue:
            n = queue.popleft()
            for i in range(n.num_outputs()):
                self.backprops[Output(n, i)] = []
            expected = 0
            if n.id not in stop_nodes:
                for dst in self.consumers.get(n.id, ()):
                    if dst.id not in reachable:
                        continue
                    if dst.id not in visited:
                        visited.add(dst.id)
                        queue.append(dst)
                    expected += 1  # one per edge: a node using n twice awaits two gradients
            if n.id in output_nodes:
                expected += sum(1 for o in self.outputs if o.node() is n)
            self.pending[n.id] = expected

        for dy, y in zip(self.grad_inputs, self.outputs):
            self._backprop_along_edge(dy, y)

    # -- propagation ------------------------------------------------------------------------
    def _backprop_along_edge(self, dst_grad: Output, src: Output) -> None:
        grads = self.backprops.get(src)
        if grads is not None:
            grads.append(dst_grad)
            node = _node(src)
            self.pending[node.id] -= 1
            if self.pending[node.id] == 0:
                self.ready.append(node)

    def _sum_gradients(self, src: Output) -> Output:
        grads = self.backprops.get(src)
        if grads is None:
            raise InternalError(f"Unable to find backprop list for node.id {_node(src).name}")
        keep = [g for g in grads if not _is_no_gradient(g)]
        if not keep:
            return NoGradient()
        if len(keep) == 1:
            return keep[0]
        return ops.AddN(self.scope, keep).sum

    def _call_grad_function(self, n: Node, dy: list[Output]) -> list[Output]:
        if n.op in n.graph.library:
            from tfops_py.gradients.function_grad import function_op_gradient

            fn = function_op_gradient
        else:
            try:
                fn = self.registry.Lookup(n.op)
            except NotFoundError as e:
                raise NotFoundError(e.message, op_type=n.op, node_name=n.name) from None
        assert fn is not None  # no-gradient ops were handled by the caller
        dx = fn(self.scope, Operation(n), dy)
        self.scope.status().raise_if_error()
        return _as_outputs(dx, f"the gradients returned for {n.op} node '{n.name}'", allow_no_gradient=True)

    # -- while loops ------------------------------------------------------------------------------
    def _process_while_loop(self, exit_node: Node, summed: Output) -> None:
        ctx = while_context_of(exit_node)
        if ctx is None:
            raise UnimplementedError("gradient through a TF1 while loop that ops.BuildWhileLoop did not build (no "
                                     "WhileContext records its structure); build it with BuildWhileLoop or use a "
                                     "functional While", op_type=exit_node.op, node_name=exit_node.name)
        self.while_backprops.setdefault(ctx.frame_name, {})[exit_node.id] = summed
        if len(self.while_backprops[ctx.frame_name]) == len(ctx.exit_nodes):
            self._add_while_gradient(ctx)

    def _add_while_gradient(self, ctx: WhileContext) -> None:
        from tfops_py.gradients.while_gradients import AddWhileLoopGradient

        got = self.while_backprops.pop(ctx.frame_name)
        dy = [got.get(e.id, NoGradient()) for e in ctx.exit_nodes]
        dy = [ops.ZerosLike(self.scope, Output(e, 0)).y if _is_no_gradient(g) else g
              for g, e in zip(dy, ctx.exit_nodes)]
        dx = AddWhileLoopGradient(ctx, self.scope.NewSubScope(f"{ctx.frame_name}_grad"), dy)
        for g, enter in zip(dx, ctx.enter_nodes):
            self._backprop_along_edge(g, enter.inputs[0])

    def add_gradients(self) -> list[Output]:
        self._initialize()
        while self.ready or self.while_backprops:
            if not self.ready:  # loops some of whose Exits got no gradient: those count as zeros
                seen = next(iter(self.while_backprops.values()))
                exit_node = self.scope.graph().node_by_id(next(iter(seen)))
                self._add_while_gradient(while_context_of(exit_node))  # type: ignore[arg-type]
                continue
            n = self.ready.popleft()
            num_y = n.num_outputs()
            dy: list[Output] = []
            no_grad = []
            for i in range(num_y):
                g = self._sum_gradients(Output(n, i))
                if _is_no_gradient(g):
                    no_grad.append(i)
                idx = self.input_index.get(Output(n, i))
                if idx is not None:
                    self.grad_outputs[idx] = g
                dy.append(g)

            # Stop when none of n's inputs lies on a path from the requested inputs.
            if not any(inp in self.backprops for inp in n.inputs):
                continue
            if n.op in ("Exit", "RefExit"):
                self._process_while_loop(n, dy[0])
                continue
            if self.registry.is_no_gradient(n.op) or len(no_grad) == num_y:
                for inp in n.inputs:
                    self._backprop_along_edge(NoGradient(), inp)
                continue
            for i in no_grad:
                dy[i] = ops.ZerosLike(self.scope, Output(n, i)).y
            dx = self._call_grad_function(n, dy)
            for k, inp in enumerate(n.inputs):
                if k >= len(dx):
                    raise InternalError(f"Invalid gradient output index: {k} size: {len(dx)}",
                                        op_type=n.op, node_name=n.name)
                self._backprop_along_edge(dx[k], inp)

        # Inputs on nodes not fully processed (only some of a multi-output node's outputs requested).
        for o in self.inputs:
            if self.pending[_node(o).id] > 0:
                self.grad_outputs[self.input_index[o]] = self._sum_gradients(o)
        return self.grad_outputs


def AddSymbolicGradients(scope: Scope, outputs: Sequence[Any], inputs: Sequence[Any],
                         grad_inputs: Sequence[Any] | None = None) -> list[Output]:
    """Gradients of ``sum(outputs * grad_inputs)`` with respect to each of ``inputs``.

    ``grad_inputs`` defaults to ``OnesLike(scope, y)`` for each output (added first, as in
    C++).  Returns one Output per input; ``NoGradient()`` where no gradient flows.
    Raises the error C++ would return (InvalidArgumentError for an unreachable input,
    NotFoundError for an op without a registered gradient, ...).
    """
    outs = _as_outputs(outputs, "outputs")
    ins = _as_outputs(inputs, "inputs")
    if grad_inputs is None:
        grads = [ops.OnesLike(scope, y).y for y in outs]
        scope.status().raise_if_error()
    else:
        grads = _as_outputs(grad_inputs, "grad_inputs", allow_no_gradient=True)
    return _SymbolicGradientBuilder(scope, GradOpRegistry.Global(), outs, ins, grads).add_gradients()
