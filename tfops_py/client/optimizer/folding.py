"""Passes that shrink the graph: Identity removal, common subexpressions, constant folding, x*1 and x+0.

Constant folding evaluates a node whose inputs are all constant once, when the plan is built, with
the kernel the plan would run (the session's backend), and replaces it by a Const; shapes known
when the graph was built (Shape, Size, Rank, ShapeN of fully defined shapes) fold too.  A kernel
that fails leaves its node alone: the error is then raised by Run, as without the optimizer.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.client import binding
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.op_def import has_op_def
from tfops_py.client.optimizer.ir import ONode, Program, Ref, const_node

_IDENTITIES = frozenset({"Identity", "Snapshot", "StopGradient", "IdentityN"})
_SHAPE_OPS = frozenset({"Shape", "Size", "Rank", "ShapeN"})
_NO_FOLD_TYPES = frozenset({DataType.DT_RESOURCE, DataType.DT_VARIANT})
_NEVER_FOLD = frozenset({"Const", "Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "NoOp"})


_REF_ARGS: dict[str, tuple[bool, bool]] = {}


def _ref_args(node: ONode) -> tuple[bool, bool]:
    """(takes or gives a reference, gives one), per op type."""
    flags = _REF_ARGS.get(node.op)
    if flags is None:
        gives = any(a.is_ref for a in node.op_def.outputs)
        flags = _REF_ARGS[node.op] = (gives or any(a.is_ref for a in node.op_def.inputs), gives)
    return flags


def _is_ref_arg(node: ONode) -> bool:
    """Takes or gives a reference (TF1 variables), or reads one as a value (a variable read)."""
    return _ref_args(node)[0] or any(_ref_args(r[0])[1] and binding._flat_is_ref(r[0].op_def.outputs, r[0])[r[1]]
                                     for r in node.inputs)


def _pure(node: ONode) -> bool:
    """Safe to evaluate early, merge or drop: no state, no randomness (TF marks some random ops, such as
    FractionalAvgPool, stateless: a ``seed`` attr gives them away), no references, no resource or
    variant tensors, nor a call of a library function.  Cached on the node: rewrites change its inputs,
    never their kinds."""
    if node.pure is None:
        node.pure = (has_op_def(node.op) and not node.op_def.is_stateful and not node.external
                     and "seed" not in node.attrs and "seed2" not in node.attrs and not _is_ref_arg(node)
                     and not any(t in _NO_FOLD_TYPES for t in list(node.input_types) + list(node.output_types)))
    return node.pure


def remove_identities(prog: Program) -> None:
    """TF's dependency optimizer: control edges on nodes without side effects (nor any upstream) are
    dropped, then Identity, Snapshot, StopGradient and IdentityN forward their inputs."""
    effect_free: dict[int, bool] = {}

    def free(producer: ONode) -> bool:  # a node outside the plan (its outputs fed) does not run in it
        return effect_free.get(id(producer), producer.external)

    for node in prog.walk():
        effect_free[id(node)] = (_pure(node) or node.op == "NoOp") and all(
            free(r[0]) for r in node.inputs) and all(free(c) for c in node.control)
        if node.control:
            kept = [c for c in node.control if not free(c)]
            if len(kept) != len(node.control):
                node.control = kept
                node.dirty = True
        if node.op in _IDENTITIES and not node.control and _pure(node) and all(
                r[0].requested_device == node.requested_device for r in node.inputs):
            for k, r in enumerate(node.inputs):
                prog.replace((node, k), r)


def _attr_key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ("nd", value.dtype.str, value.shape, value.tobytes() if value.nbytes <= 4096 else id(value))
    if isinstance(value, (list, tuple)):
        return tuple(_attr_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _attr_key(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


def eliminate_common_subexpressions(prog: Program) -> None:
    """Nodes with the same op, attrs, inputs and device compute the same value: keep the first."""
    seen: dict[Any, ONode] = {}
    targets = {id(t) for t in prog.targets}
    for node in prog.walk():
        if not _pure(node) or node.control or id(node) in targets or node.op in ("Placeholder", "PlaceholderV2"):
            continue
        key = (node.op, node.requested_device, tuple((id(r[0]), r[1]) for r in node.inputs),
               _attr_key(node.attrs))
        first = seen.setdefault(key, node)
        if first is not node:
            for k in range(node.num_outputs()):
                prog.replace((node, k), (first, k))


class Evaluator:
    """Runs one node's kernel on constant inputs, on the backend the plan would place it on."""

    def __init__(self, backend_for: Any, resources: dict | None):
        self._backend_for = backend_for
        self._resources = resources

    def __call__(self, node: ONode, values: list[np.ndarray]) -> list[np.ndarray] | None:
        from tfops_py.kernels.registry import KernelContext, find_kernel

        backend = self._backend_for(node)
        fn = find_kernel(node.op, backend.name)
        if fn is None:
            return None
        ctx = KernelContext(node.op, node.name, node.attrs, backend, list(node.input_types),
                            list(node.output_types), [r[0].name for r in node.inputs], {})
        ins = [backend.from_numpy(np.ascontiguousarray(v)) for v in values]
        groups = binding.arg_groups(node)  # type: ignore[arg-type]
        args = ins if groups is None else [ins[a:b] if is_list else ins[a] for a, b, is_list in groups]
        try:
            with _device(backend):
                result = fn(ctx, *args)
            flat = [result] if binding.output_is_flat(node) else binding.flatten(result)  # type: ignore[arg-type]
            if len(flat) != node.num_outputs():
                return None
            out = [np.asarray(backend.to_numpy(v)) for v in flat]
        except Exception:  # any failure: leave the node to Run, which reports it as it always would
            return None
        for v, t, s in zip(out, node.output_types, node.output_shapes):
            if v.dtype != t.numpy_dtype or not s.is_compatible_with(v.shape):
                return None
        return out


class _device:
    def __init__(self, backend: Any):
        self._ctx = backend.device_context() if hasattr(backend, "device_context") else None

    def __enter__(self) -> None:
        if self._ctx is not None:
            self._ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self._ctx is not None:
            self._ctx.__exit__(*exc)


def _static_shape_value(node: ONode) -> list[np.ndarray] | None:
    """Shape, Size, Rank, ShapeN of inputs whose shapes were fully known when the graph was built."""
    shapes = [r[0].output_shapes[r[1]] for r in node.inputs]
    if any(s.unknown_rank() for s in shapes):
        return None
    if node.op == "Rank":
        return [np.asarray(shapes[0].dims(), np.int32)]
    if not all(s.IsFullyDefined() for s in shapes):
        return None
    dims = [list(s.as_tuple()) for s in shapes]
    out_type = node.output_types[0].numpy_dtype
    if node.op == "Size":
        return [np.asarray(math.prod(dims[0]), out_type)]
    return [np.asarray(d, out_type) for d in dims]


def fold_constants(prog: Program, evaluate: Evaluator, max_bytes: int) -> None:
    """Replace nodes whose inputs are all Consts (and shapes known at build time) by Consts."""
    for node in prog.walk():
        if node.op in _NEVER_FOLD or not _pure(node) or node.control or not node.num_outputs():
            continue
        if node.op in _SHAPE_OPS:
            if any(prog.is_fed(r) and r[0].op not in ("Placeholder", "PlaceholderV2") for r in node.inputs):
                continue
            values = _static_shape_value(node)
        else:
            if not all(r[0].op == "Const" and not prog.is_fed(r) for r in node.inputs):
                continue
            consts = [r[0].attrs["value"] for r in node.inputs]
            values = evaluate(node, consts)
            if values is not None and sum(v.nbytes for v in values) > max(max_bytes, sum(c.nbytes for c in consts)):
                values = None
        if values is None:
            continue
        for k, v in enumerate(values):
            c = prog.insert(const_node(node, v, node.output_types[k], suffix="" if k == 0 else f"_{k}"))
            prog.replace((node, k), (c, 0))


def _const_of(ref: Ref) -> np.ndarray | None:
    return ref[0].attrs["value"] if ref[0].op == "Const" else None


def _neutral(node: ONode, k: int, value: float) -> bool:
    """Input ``k`` is a Const filled with ``value`` that broadcasting cannot grow the other input by."""
    c = _const_of(node.inputs[k])
    other = node.inputs[1 - k]
    shape = other[0].output_shapes[other[1]]
    if c is None or shape.unknown_rank() or c.ndim > shape.dims():
        return False
    if any(d != 1 for d in c.shape) and (
            not shape.IsFullyDefined() or any(d not in (1, s) for d, s in zip(c.shape[::-1], shape.as_tuple()[::-1]))):
        return False
    return c.size > 0 and bool(np.all(c == value)) and other[0].output_types[other[1]] == node.output_types[0]


def simplify_arithmetic(prog: Program) -> None:
    """x*1, 1*x, x+0, 0+x, x-0, x/1 become x; Transpose of Transpose composes; Reshape of Reshape skips
    the inner one."""
    for node in prog.walk():
        if not _pure(node) or node.control:
            continue
        op = node.op
        if op in ("Mul", "AddV2", "Add", "Sub", "RealDiv", "Div"):
            unit = 1.0 if op in ("Mul", "RealDiv", "Div") else 0.0
            for k in ((0, 1) if op in ("Mul", "AddV2", "Add") else (1,)):
                if _neutral(node, k, unit):
                    prog.replace((node, 0), node.inputs[1 - k])
                    break
        elif op == "Transpose":
            _compose_transposes(prog, node)
        elif op == "Reshape":
            inner = node.inputs[0]
            if inner[0].op == "Reshape" and _pure(inner[0]) and not inner[0].control:
                node.inputs = [inner[0].inputs[0], node.inputs[1]]
                node.input_types = [inner[0].input_types[0], node.input_types[1]]
                node.dirty = True


def _compose_transposes(prog: Program, node: ONode) -> None:
    inner = node.inputs[0]
    outer_perm, inner_perm = _const_of(node.inputs[1]), None
    if inner[0].op == "Transpose" and _pure(inner[0]) and not inner[0].control:
        inner_perm = _const_of(inner[0].inputs[1])
    x = node.inputs[0]
    shape = x[0].output_shapes[x[1]]
    if outer_perm is None or shape.unknown_rank() or shape.dims() != outer_perm.size:
        return  # a wrong-sized perm must still fail in the kernel
    if inner_perm is None:
        if np.array_equal(outer_perm, np.arange(outer_perm.size)):
            prog.replace((node, 0), inner)
        return
    n = outer_perm.size
    if inner_perm.shape != outer_perm.shape or sorted(inner_perm.tolist()) != list(range(n)) \
            or sorted(outer_perm.tolist()) != list(range(n)):
        return
    perm = inner_perm[outer_perm]
    source = inner[0].inputs[0]
    if np.array_equal(perm, np.arange(perm.size)):
        prog.replace((node, 0), source)
        return
    c = prog.insert(const_node(node, perm.astype(outer_perm.dtype), node.input_types[1], suffix="/perm"))
    node.inputs = [source, (c, 0)]
    node.dirty = True
