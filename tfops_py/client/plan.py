"""Execution plans: a pruned, ordered, kernel-bound form of one (feeds, fetches, targets) request.

``build_plan`` picks the executor.  A pruned graph without dataflow control-flow ops
(Switch, Merge, Enter, Exit, NextIteration, LoopCond, ControlTrigger) becomes a
:class:`Plan`: a flat list of steps run in order, values in numbered slots, each slot
freed after its last reader.  Anything else goes to the dataflow executor
(``executor.py``), which has TF's frames, iterations and dead tensors.  Functional
control flow (While, If, Case, function calls) runs inside kernels that call compiled
function bodies, each itself a Plan, so TF2 graphs stay on the fast linear path.

``build_plan`` is the one place the graph optimizer (``client/optimizer``) rewrites the pruned
node list of a linear plan before binding; ``Plan.run`` and the executor's loop call
``StepContext.node_hook`` (if set) after every node, for the profiler.  A linear plan fills
Const slots once when it is built, and holds BLAS to one thread while it runs (the thread
budget of ``kernels/_parallel.py``).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfops_py.errors import InvalidArgumentError, OpError
from tfops_py.framework.control_flow import DATAFLOW_OPS, is_back_edge, topological_order
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Node
from tfops_py.framework.operation import Output
from tfops_py.framework.tensor import literal_to_array
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.client import binding
from tfops_py.client.binding import CHECK_KERNELS, deref, flatten, kernel_error
from tfops_py.client.optimizer import optimize
from tfops_py.client.run_options import StepContext
from tfops_py.kernels._parallel import enter_run, exit_run
from tfops_py.kernels.registry import KernelContext, find_kernel

FeedSpec = tuple[DataType, PartialTensorShape, str]


class _Step:
    __slots__ = ("fn", "ctx", "in_slots", "groups", "out_slots", "flat", "free", "node", "deref", "simple", "out")

    def __init__(self, fn, ctx, in_slots, groups, out_slots, flat, node):
        self.fn, self.ctx, self.in_slots, self.groups = fn, ctx, in_slots, groups
        self.out_slots, self.flat, self.node = out_slots, flat, node
        self.free: tuple[int, ...] = ()
        self.deref: tuple[int, ...] = binding.ref_reads(node) if node is not None else ()
        # The common case, taken without further tests: flat inputs, no references, one output.
        self.simple = not self.deref and groups is None and flat and not CHECK_KERNELS
        self.out = out_slots[0] if flat else -1


_BLAS_WORDS = ("MatMul", "Conv", "Einsum", "Matrix", "Cholesky", "Qr", "Svd", "Lu", "Solve", "Eig", "_Fused")


def _uses_blas(op_type: str) -> bool:
    """Ops whose NumPy kernels call BLAS/LAPACK (and so may wake its spinning worker threads)."""
    return any(w in op_type for w in _BLAS_WORDS)


def holds_blas(ctx: KernelContext) -> bool:
    """Whether a run holding this kernel should hold BLAS to one thread: a BLAS op, or one that calls
    functions (While, If, calls), whose bodies then run inside the hold instead of taking it per call."""
    return _uses_blas(ctx.op_type) or bool(ctx.funcs)


class Plan:
    """A compiled straight-line request: run() maps feed values (in ``feed_order``) to fetch values."""

    def __init__(self, backend: Any, feed_order: list[Output], feed_slots: list[int], feed_specs: list[FeedSpec],
                 steps: list[_Step], fetch_slots: list[int], num_slots: int):
        self.backend = backend
        self.feed_order = feed_order
        self._feed_slots = feed_slots
        self._feed_specs = feed_specs
        self._steps = steps
        self._fetch_slots = fetch_slots
        self._num_slots = num_slots
        self._initial: list[Any] = [None] * num_slots  # each run starts from these (Const values)
        self.num_threads = 0  # threads a run may use (0: the process default)
        self.holds_blas = any(holds_blas(s.ctx) for s in steps)  # BLAS to one thread while it runs

    def nodes(self) -> list[Node]:
        """The nodes this plan runs, in order (after the graph optimizer)."""
        return [s.node for s in self._steps if s.node is not None]

    def run(self, feed_values: Sequence[Any], step: StepContext | None = None) -> list[Any]:
        """Fetch values for user feed values (converted and checked against the fed tensors)."""
        vals: list[Any] = list(self._initial)
        for slot, value, spec, out in zip(self._feed_slots, feed_values, self._feed_specs, self.feed_order):
            vals[slot] = convert_feed(self.backend, value, spec, out)
        # TF computes inf/NaN silently: NumPy's floating-point warnings are off for the whole run, once, here,
        # not in each kernel (errstate is a context variable; kernels.parallel_map carries it to workers).
        with np.errstate(all="ignore"):
            return self._execute(vals, step)

    def call(self, args: Sequence[Any], step: StepContext | None = None) -> list[Any]:
        """Fetch values for argument values already of the right dtypes (a function body's plan)."""
        vals: list[Any] = list(self._initial)
        for slot, value in zip(self._feed_slots, args):
            vals[slot] = value
        return self._execute(vals, step)

    def _execute(self, vals: list[Any], step: StepContext | None) -> list[Any]:
        token = enter_run(self.num_threads, self.holds_blas)
        try:
            if step is not None and (step.node_hook is not None or step.deadline):
                return self._execute_hooked(vals, step)
            return self._execute_fast(vals)
        finally:
            exit_run(token, self.holds_blas)

    def _execute_fast(self, vals: list[Any]) -> list[Any]:
        check = CHECK_KERNELS
        for s in self._steps:
            if s.simple:
                ins = s.in_slots
                try:
                    if len(ins) == 2:
                        vals[s.out] = s.fn(s.ctx, vals[ins[0]], vals[ins[1]])
                    elif len(ins) == 1:
                        vals[s.out] = s.fn(s.ctx, vals[ins[0]])
                    else:
                        vals[s.out] = s.fn(s.ctx, *[vals[i] for i in ins])
                except OpError:
                    raise
                except Exception as e:
                    raise kernel_error(e, s.ctx) from e
                for slot in s.free:
                    vals[slot] = None
                continue
            if s.deref:
                ins = [vals[i] for i in s.in_slots]
                for k in s.deref:
                    ins[k] = deref(ins[k], s.ctx)
                args = ins if s.groups is None else [ins[a:b] if is_list else ins[a] for a, b, is_list in s.groups]
            elif s.groups is None:
                args = [vals[i] for i in s.in_slots]
            else:
                args = [[vals[s.in_slots[i]] for i in range(a, b)] if is_list else vals[s.in_slots[a]]
                        for a, b, is_list in s.groups]
            try:
                result = s.fn(s.ctx, *args)
            except OpError as e:
                located(e, s.node)
                raise
            except Exception as e:
                raise located(kernel_error(e, s.ctx), s.node, cause=e)  # noqa: B904 (the cause is set there)
            if s.flat:
                vals[s.out_slots[0]] = result
                if check and s.node is not None:
                    binding.check_outputs(s.node, s.ctx, [result])
            else:
                flat = flatten(result)
                for slot, value in zip(s.out_slots, flat):
                    if slot >= 0:
                        vals[slot] = value
                if check and s.node is not None:
                    binding.check_outputs(s.node, s.ctx, flat)
            for slot in s.free:
                vals[slot] = None
        return [deref(vals[i], None) for i in self._fetch_slots]

    def _execute_hooked(self, vals: list[Any], step: StepContext) -> list[Any]:
        """The same loop, timing each node for ``step.node_hook`` and checking the Run's deadline."""
        hook = step.node_hook
        for s in self._steps:
            ins = [vals[i] for i in s.in_slots]
            for k in s.deref:
                ins[k] = deref(ins[k], s.ctx)
            args = ins if s.groups is None else [ins[a:b] if is_list else ins[a] for a, b, is_list in s.groups]
            start = time.perf_counter()
            try:
                result = s.fn(s.ctx, *args)
            except OpError as e:
                located(e, s.node)
                raise
            except Exception as e:
                raise located(kernel_error(e, s.ctx), s.node, cause=e)  # noqa: B904 (the cause is set there)
            end = time.perf_counter()
            outs = [result] if s.flat else flatten(result)
            for slot, value in zip(s.out_slots, outs):
                if slot >= 0:
                    vals[slot] = value
            if s.node is not None and hook is not None:
                hook(s.node, start, end, outs)
            step.check_deadline()
            for slot in s.free:
                vals[slot] = None
        return [deref(vals[i], None) for i in self._fetch_slots]


class DefinedAt(Exception):
    """Where the user's code built the node whose kernel failed (the cause shown in tracebacks)."""


def located(error: OpError, node: Node | None, cause: BaseException | None = None) -> OpError:
    """``error`` saying where the user's code built the failing node (TF's "defined at"): ``error.defined_at``,
    and a :class:`DefinedAt` cause in the traceback (before ``cause`` or the error's own cause); ``str(error)``
    stays TF's exact text."""
    cause = cause if cause is not None else error.__cause__
    if node is not None and error.defined_at is None and node.defined_at is not None \
            and error.node_name in (None, node.name):
        error.node_name, error.op_type = node.name, error.op_type or node.op
        error.defined_at = node.defined_at
        where = DefinedAt(f"node '{node.name}' defined at {node.defined_at[0]}:{node.defined_at[1]}")
        where.__cause__ = cause
        cause = where
    error.__cause__ = cause
    return error


def convert_feed(backend: Any, value: Any, spec: FeedSpec, out: Output) -> Any:
    """A fed value as a backend array of the fed tensor's dtype; InvalidArgumentError if it cannot be."""
    dtype, shape, op_type = spec
    node = out.node()
    if dtype in binding.OPAQUE_DTYPES:
        return value  # a TensorList / handle fed back in: nothing to convert
    xp_dtype = backend.dtype(dtype)
    if not isinstance(value, (np.ndarray, np.generic)) and hasattr(value, "shape") \
            and getattr(value, "dtype", None) == xp_dtype:
        arr_shape = tuple(value.shape)
        converted = value  # already a backend array
    else:
        try:
            arr = literal_to_array(value)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(f"cannot feed tensor {out.name()}: {e.message}",
                                       op_type=op_type, node_name=node.name) from None  # type: ignore[union-attr]
        want = dtype.numpy_dtype
        if arr.dtype != want:
            literal = not isinstance(value, (np.ndarray, np.generic))
            if literal and np.can_cast(arr.dtype, want, "same_kind"):
                arr = arr.astype(want)
            else:
                raise InvalidArgumentError(
                    f"cannot feed a {arr.dtype} value to tensor {out.name()} of dtype {dtype.short_name}",
                    op_type=op_type, node_name=node.name)  # type: ignore[union-attr]
        arr_shape = arr.shape
        converted = backend.from_numpy(arr)
    if not shape.is_compatible_with(arr_shape):
        raise InvalidArgumentError(
            f"cannot feed value of shape {format_shape(arr_shape)} for tensor {out.name()}, "
            f"which has shape {shape}", op_type=op_type, node_name=node.name)  # type: ignore[union-attr]
    return converted


def feed_spec(out: Output) -> FeedSpec:
    node = out.node()
    shape = out.shape()
    if node.op in ("Placeholder", "PlaceholderV2"):  # type: ignore[union-attr]
        shape = node.attrs.get("shape", shape)  # type: ignore[union-attr]
    return out.type(), shape, node.op  # type: ignore[union-attr]


def _linear_order(nodes: list[Node]) -> list[Node]:
    """``nodes`` (creation order) if every input comes earlier, else a topological order; cycles are errors."""
    position = {n.id: k for k, n in enumerate(nodes)}
    if all(position.get(i.node().id, -1) < k for k, n in enumerate(nodes) for i in n.inputs) and \
            all(position.get(c.id, -1) < k for k, n in enumerate(nodes) for c in n.control_inputs):
        return nodes
    return [nodes[k] for k in _topological(nodes, position)]


def _topological(nodes: list[Node], position: dict[int, int]) -> list[int]:
    def inputs_of(k: int) -> list[int]:
        n = nodes[k]
        deps = [position[i.node().id] for i in n.inputs  # type: ignore[union-attr]
                if i.node().id in position and not is_back_edge(i.node().op, n.op)]  # type: ignore[union-attr]
        return deps + [position[c.id] for c in n.control_inputs if c.id in position]

    return topological_order(len(nodes), inputs_of, lambda k: nodes[k].name)


def build_plan(backend: Any, feeds: tuple[Output, ...], fetches: tuple[Output, ...], targets: tuple,
               resources: dict[str, Any] | None = None, placer: Any = None, functions: Any = None,
               config: Any = None) -> Any:
    """Compile a request into a :class:`Plan` or, with v1 control flow, a ``DataflowPlan``.

    ``resources`` is the session's state store handed to every kernel; ``placer``
    maps a node to the backend that runs it (default: ``backend`` for all);
    ``functions`` (a FunctionRuntime) compiles the library functions nodes run.
    Values crossing backends get a transfer step at the boundary.  ``config`` (a ConfigProto)
    sets the graph optimizer's passes and the run's thread budget.
    """
    feed_set = set(feeds)
    nodes = binding.needed_nodes(feed_set, fetches, targets)

    def backend_for(n: Any) -> Any:
        return placer.backend_for(n) if placer is not None else backend

    where = {n.id: backend_for(n) for n in nodes}
    library = functions.library if functions is not None else None
    binding.check_runnable(nodes, where, library)
    if any(n.op in DATAFLOW_OPS for n in nodes):
        from tfops_py.client.executor import build_dataflow_plan

        def compile_part(part_feeds: tuple[Output, ...], part_fetches: tuple[Output, ...], part_targets: tuple) -> Any:
            return build_plan(backend, part_feeds, part_fetches, part_targets, resources, placer, functions, config)

        dataflow = build_dataflow_plan(backend, feeds, fetches, nodes, where, resources, functions, compile_part)
        dataflow.num_threads = _num_threads(config)
        return dataflow
    nodes = _linear_order(nodes)
    nodes, fetches = optimize(nodes, feed_set, fetches, targets, backend_for, config)  # type: ignore[assignment]
    where.update((n.id, backend_for(n)) for n in nodes if n.id not in where)

    slots: dict[Output, int] = {}
    count = [0]

    def new_slot() -> int:
        count[0] += 1
        return count[0] - 1

    def slot(o: Output) -> int:
        if o not in slots:
            slots[o] = new_slot()
        return slots[o]

    feed_order = list(feeds)
    constants: dict[int, Any] = {}
    feed_slots = [slot(o) for o in feed_order]
    consumers_needed = {inp for n in nodes for inp in n.inputs} | set(fetches)
    steps: list[_Step] = []
    slot_backend: dict[int, Any] = {s: backend for s in feed_slots}
    moved: dict[tuple[int, int], int] = {}

    def on(backend_: Any, s: int) -> int:
        """``s``, or the slot of its copy on ``backend_`` (adding a transfer step once)."""
        src = slot_backend[s]
        if src is backend_ or src == backend_:
            return s
        key = (s, id(backend_))
        if key not in moved:
            new = moved[key] = new_slot()
            slot_backend[new] = backend_
            ctx = KernelContext("_Transfer", f"{src.name}->{backend_.name}", {}, backend_, [], [])
            steps.append(_Step(binding.transfer(src, backend_), ctx, (s,), None, (new,), True, None))
        return moved[key]

    for n in nodes:
        nb = where[n.id]
        in_slots = tuple(on(nb, slot(i)) for i in n.inputs)
        out_slots = tuple(slot(Output(n, k)) if Output(n, k) in consumers_needed and Output(n, k) not in feed_set
                          else -1 for k in range(n.num_outputs()))
        ctx = binding.make_context(n, nb, resources, functions)
        flat = binding.output_is_flat(n, library)
        if flat and out_slots[0] == -1:
            out_slots = (slot(Output(n, 0)),)  # unused result still needs somewhere to go
        for s in out_slots:
            if s >= 0:
                slot_backend[s] = nb
        fn = binding.kernel_for(n, nb.name, library)
        if hasattr(nb, "device_context"):
            fn = binding.in_device(fn, nb)
        if n.op == "Const" and fn is find_kernel("Const", "*") and not n.control_inputs and not CHECK_KERNELS:
            constants[out_slots[0]] = fn(ctx)  # on the device once, now: a slot filled before every run
            continue
        steps.append(_Step(fn, ctx, in_slots, binding.arg_groups(n, library), out_slots, flat, n))

    # Free each slot after its last reader (fetched, fed and constant slots stay).
    keep = {slots[o] for o in fetches} | set(constants)
    last_use: dict[int, int] = {}
    for i, step in enumerate(steps):
        for s in step.in_slots:
            last_use[s] = i
        for s in step.out_slots:
            if s >= 0:
                last_use.setdefault(s, i)
    frees: dict[int, list[int]] = {}
    for s, i in last_use.items():
        if s not in keep:
            frees.setdefault(i, []).append(s)
    for i, step in enumerate(steps):
        step.free = tuple(frees.get(i, ()))
    plan = Plan(backend, feed_order, feed_slots, [feed_spec(o) for o in feed_order], steps,
                [slot(o) for o in fetches], count[0])
    for s, value in constants.items():
        plan._initial[s] = value
    plan.num_threads = _num_threads(config)
    return plan


def _num_threads(config: Any) -> int:
    return getattr(config, "intra_op_parallelism_threads", 0) if config is not None else 0
