"""Gradients of functional control flow and calls: PartitionedCall (and calls by op type), If, Case, While.

The gradient of a library function ``f`` is another library function ``f_grad(xs..., dys...) -> dxs``: ``f``'s
body copied into it, then ``AddSymbolicGradients`` on the copy (``gradient_function``).  Only differentiable
arguments (floating point, complex, variant lists) get gradients; the others get NoGradient.

* A call's gradient calls ``f_grad``.  If and Case choose a gradient branch with the forward predicate or index.
* While: the forward loop keeps no per-iteration values, so the gradient replays it once, pushing each
  iteration's loop variables onto TensorLists, then runs a backward loop that pops them in reverse and applies
  ``body_grad`` to carry ``dvars`` from the outputs back to the inputs.  (TF2 instead rewrites the forward While
  to accumulate; the replay leaves the user's graph untouched at the cost of running the forward loop twice.)
"""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from tfops_py import ops
from tfops_py.errors import NotFoundError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.func_graph import Function
from tfops_py.framework.function import attr_cache_key
from tfops_py.framework.function_body import inline_function, io_types, resolve_attrs
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.registry import register_gradient


# How these gradients differ from TF's C++ API (docs/gradients.md's table is generated from these).
BEYOND_TF_CC = {
    **{op: "registered (TF: Python only)" for op in ("PartitionedCall", "StatefulPartitionedCall", "If",
                                                     "StatelessIf", "Case", "StatelessCase")},
    "While": "registered (TF: Python only); replays the loop instead of rewriting it to accumulate",
    "StatelessWhile": "registered (TF: Python only); replays the loop instead of rewriting it to accumulate",
}
CHANGED_FROM_TF_CC: dict[str, str] = {}


def differentiable(dtype: DataType) -> bool:
    return dtype.is_floating or dtype.is_complex or dtype == DataType.DT_VARIANT


def _reachable(ys: Sequence[Output]) -> set[int]:
    seen: set[int] = set()
    stack = [y.node() for y in ys]
    while stack:
        n = stack.pop()
        if n.id not in seen:  # type: ignore[union-attr]
            seen.add(n.id)  # type: ignore[union-attr]
            stack += [i.node() for i in n.inputs]  # type: ignore[union-attr]
    return seen


def gradients_or_zeros(scope: Scope, ys: Sequence[Output], xs: Sequence[Output], dys: Sequence[Output]) -> list[Output]:
    """``AddSymbolicGradients(ys, xs, dys)`` with zeros where no gradient reaches an x (or none is defined)."""
    from tfops_py.gradients.builder import AddSymbolicGradients

    reach = _reachable(ys) if ys else set()
    live = [k for k, x in enumerate(xs) if x.node().id in reach]  # type: ignore[union-attr]
    grads: list[Output] = [NoGradient() for _ in xs]
    if live:
        for k, g in zip(live, AddSymbolicGradients(scope, list(ys), [xs[k] for k in live], list(dys))):
            grads[k] = g
    return [ops.ZerosLike(scope, x).y if g.node() is None else g for g, x in zip(grads, xs)]


def gradient_function(scope: Scope, func: Any) -> tuple[Function, list[int], list[int]]:
    """``f_grad`` for a ``func`` attr value, with the indices of the differentiable inputs and outputs.

    ``f_grad`` takes f's inputs and one upstream gradient per differentiable output, and returns one gradient
    per differentiable input.  It is added to the graph's library once per (function, attr values).
    """
    name, attrs = (func["name"], func.get("attr") or {}) if isinstance(func, dict) else (func, {})
    library = scope.graph().library
    fdef = library.Find(name)
    if fdef is None:
        raise NotFoundError(f"Function '{name}' is not defined in the graph's function library")
    values = resolve_attrs(fdef, dict(attrs))
    in_types, out_types = io_types(fdef, values)
    diff_in = [i for i, t in enumerate(in_types) if differentiable(t)]
    diff_out = [i for i, t in enumerate(out_types) if differentiable(t)]
    grad_name = f"{name}_grad" + (f"_{digest(values)}" if values else "")
    existing = library.Find(grad_name)
    if existing is not None:
        return Function(scope.graph(), existing), diff_in, diff_out

    def build(s: Scope, *args: Output) -> list[Output]:
        xs, dys = list(args[:len(in_types)]), list(args[len(in_types):])
        rets, _ = inline_function(s.NewSubScope("forward"), name, values, xs)
        # Each result through an Identity of its own: when one result also feeds another (a loop body's q and
        # SetItem(list, i, q)), AddSymbolicGradients' frontier search could otherwise stop at it.
        ys = [ops.Identity(s.NewSubScope("result"), rets[i]).output for i in diff_out]
        grads = gradients_or_zeros(s, ys, [xs[i] for i in diff_in], dys)
        return [ops.Identity(s, g).output for g in grads]  # each output a node of its own, even for a passed-on dy

    types = in_types + [out_types[i] for i in diff_out]
    names = [f"x{i}" for i in range(len(in_types))] + [f"dy{i}" for i in diff_out]
    grad = Function.from_callable(scope, grad_name, types, build, input_names=names,
                                  output_names=[f"dx{i}" for i in diff_in])
    return grad, diff_in, diff_out


def _upstream(grads: Sequence[Output], diff_out: Sequence[int]) -> list[Output]:
    return [grads[i] for i in diff_out]


def _scatter_dx(count: int, diff_in: Sequence[int], values: Sequence[Output], offset: int = 0) -> list[Output]:
    dx = [NoGradient() for _ in range(count + offset)]
    for k, i in enumerate(diff_in):
        dx[offset + i] = values[k]
    return dx


# -- calls -------------------------------------------------------------------------------------------------
def call_gradient(scope: Scope, op: Operation, grads: list[Output], func: Any, stateful: bool) -> list[Output]:
    node: Node = op.node()  # type: ignore[assignment]
    grad, diff_in, diff_out = gradient_function(scope, func)
    if not diff_in:
        return [NoGradient() for _ in node.inputs]
    call_op = ops.StatefulPartitionedCall if stateful else ops.PartitionedCall
    call = call_op(scope, list(node.inputs) + _upstream(grads, diff_out), grad.output_types, grad)
    return _scatter_dx(len(node.inputs), diff_in, list(call.output))


@register_gradient("PartitionedCall", "StatefulPartitionedCall")
def _partitioned_call_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node: Node = op.node()  # type: ignore[assignment]
    return call_gradient(scope, op, grads, node.attrs["f"], node.op == "StatefulPartitionedCall")


def function_op_gradient(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    """The gradient of a node whose op type is a library function (a TF1 Defun call)."""
    node: Node = op.node()  # type: ignore[assignment]
    attrs = {k: v for k, v in node.attrs.items() if not k.startswith("_")}
    return call_gradient(scope, op, grads, {"name": node.op, "attr": attrs}, node.op_def.is_stateful)


# -- If and Case -------------------------------------------------------------------------------------------
@register_gradient("If", "StatelessIf")
def _if_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node: Node = op.node()  # type: ignore[assignment]
    then_grad, diff_in, diff_out = gradient_function(scope, node.attrs["then_branch"])
    else_grad, _, _ = gradient_function(scope, node.attrs["else_branch"])
    args = list(node.inputs[1:])
    if not diff_in:
        return [NoGradient() for _ in node.inputs]
    if_op = ops.StatelessIf if node.op == "StatelessIf" else ops.If
    branch = if_op(scope, node.inputs[0], args + _upstream(grads, diff_out), then_grad.output_types, then_grad,
                   else_grad)
    return _scatter_dx(len(args), diff_in, list(branch.output), offset=1)


@register_gradient("Case", "StatelessCase")
def _case_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node: Node = op.node()  # type: ignore[assignment]
    branches = [gradient_function(scope, f) for f in node.attrs["branches"]]
    _, diff_in, diff_out = branches[0]
    args = list(node.inputs[1:])
    if not diff_in:
        return [NoGradient() for _ in node.inputs]
    case_op = ops.StatelessCase if node.op == "StatelessCase" else ops.Case
    case = case_op(scope, node.inputs[0], args + _upstream(grads, diff_out), branches[0][0].output_types,
                   [b[0] for b in branches])
    return _scatter_dx(len(args), diff_in, list(case.output), offset=1)


# -- While -------------------------------------------------------------------------------------------------
def _call(scope: Scope, func: Any, args: list[Output], out_types: list[DataType]) -> list[Output]:
    return list(ops.PartitionedCall(scope, args, out_types, func).output)


@register_gradient("While", "StatelessWhile")
def _while_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node: Node = op.node()  # type: ignore[assignment]
    types: list[DataType] = list(node.attrs["T"])
    n = len(types)
    body_grad, diff_in, diff_out = gradient_function(scope, node.attrs["body"])
    if not diff_in:
        return [NoGradient() for _ in range(n)]
    cond_f, body_f = node.attrs["cond"], node.attrs["body"]
    cond_types = io_types(scope.graph().library.Find(cond_f["name"]),
                          resolve_attrs(scope.graph().library.Find(cond_f["name"]), cond_f.get("attr") or {}))[1]
    saved = [i for i, t in enumerate(types) if t != DataType.DT_RESOURCE]  # loop variables replayed per iteration
    s = scope.NewSubScope(f"{node.name}_grad")

    # 1. Replay: the forward loop again, pushing each iteration's loop variables onto a TensorList.
    def replay_cond(sc: Scope, *v: Output) -> Output:
        return _call(sc, cond_f, list(v[1:n + 1]), cond_types)[0]

    def replay_body(sc: Scope, *v: Output) -> list[Output]:
        vars_, stacks = list(v[1:n + 1]), list(v[n + 1:])
        pushed = [ops.TensorListPushBack(sc, acc, vars_[i]).output_handle for acc, i in zip(stacks, saved)]
        return [ops.Add(sc, v[0], 1).z] + _call(sc, body_f, vars_, types) + pushed

    replay_types = [DataType.DT_INT32] + types + [DataType.DT_VARIANT] * len(saved)
    tag = node.name.replace("/", "_").lower()
    replay_c = Function.from_callable(s, f"{tag}_replay_cond_{_key(node)}", replay_types, replay_cond)
    replay_b = Function.from_callable(s, f"{tag}_replay_body_{_key(node)}", replay_types, replay_body)
    stacks = [ops.EmptyTensorList(s, -1, -1, types[i]).handle for i in saved]
    replay = ops.While(s.WithOpName("replay"), [ops.Const(s, 0)] + list(node.inputs) + stacks, replay_c, replay_b)
    count, stacks_out = replay.output[0], list(replay.output[n + 1:])

    # 2. Backward: pop the variables of each iteration, last first, and apply body_grad to the running dvars.
    resources = {i: node.inputs[i] for i in range(n) if i not in saved}
    back_types = [DataType.DT_INT32] + [types[i] for i in diff_out] + [DataType.DT_VARIANT] * len(saved) + \
        [types[i] for i in resources]

    def back_cond(sc: Scope, *v: Output) -> Output:
        return ops.Greater(sc, v[0], 0).z

    def back_body(sc: Scope, *v: Output) -> list[Output]:
        k = len(diff_out)
        dvars, accs, handles = list(v[1:1 + k]), list(v[1 + k:1 + k + len(saved)]), list(v[1 + k + len(saved):])
        vars_: list[Output] = [NoGradient() for _ in range(n)]
        popped_accs = []
        for acc, i in zip(accs, saved):
            pop = ops.TensorListPopBack(sc, acc, -1, types[i])
            popped_accs.append(pop.output_handle)
            vars_[i] = pop.tensor
        for i, h in zip(resources, handles):
            vars_[i] = h
        new_dvars = list(ops.PartitionedCall(sc, vars_ + dvars, body_grad.output_types, body_grad).output)
        by_input = dict(zip(diff_in, new_dvars))
        return [ops.Sub(sc, v[0], 1).z] + [by_input[i] if i in by_input else ops.ZerosLike(sc, dv).y
                                         for i, dv in zip(diff_out, dvars)] + popped_accs + handles

    back_c = Function.from_callable(s, f"{tag}_backward_cond_{_key(node)}", back_types, back_cond)
    back_b = Function.from_callable(s, f"{tag}_backward_body_{_key(node)}", back_types, back_body)
    start = [count] + _upstream(grads, diff_out) + stacks_out + list(resources.values())
    backward = ops.While(s.WithOpName("backward"), start, back_c, back_b)
    finals = dict(zip(diff_out, list(backward.output[1:1 + len(diff_out)])))
    return [finals[i] if i in finals and i in diff_in else NoGradient() for i in range(n)]


def _key(node: Node) -> str:
    """What makes two While gradients different (their functions and types), as a short digest."""
    return digest({k: node.attrs[k] for k in ("T", "cond", "body")})


def digest(value: Any) -> str:
    """A short name-safe digest of attr values, the same in every process (unlike ``hash``)."""
    return hashlib.sha1(repr(attr_cache_key(value)).encode()).hexdigest()[:8]


__all__ = ["call_gradient", "differentiable", "function_op_gradient", "gradient_function", "gradients_or_zeros"]
