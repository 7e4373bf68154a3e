"""ClientSession: runs the part of a Scope's graph that the fetches and targets need.

A Run prunes the graph to the nodes the fetches and targets depend on (stopping
at fed tensors), checks that every one has a kernel on the session's backend,
binds kernels and attrs into a plan cached per (feeds, fetches, targets), and
frees each intermediate after its last consumer.  Library functions that nodes run
(loop bodies, branches, calls) are compiled once per session and cached.  Run is
thread-safe: the caches are locked, per-run state is local.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from tfops_py.backends import get_backend
from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.operation import Operation, Output, as_output
from tfops_py.framework.scope import Scope
from tfops_py.client.callables import CallableOptions, node_of, output_of
from tfops_py.client.function_runtime import FunctionRuntime, body_feeds, body_targets
from tfops_py.client.placement import Placer
from tfops_py.client.session_options import SessionOptions
from tfops_py.client.plan import Plan, build_plan
from tfops_py.client.profiler import device_name, fill_graphs, profile_hook
from tfops_py.client.run_options import RunMetadata, RunOptions, StepContext, enter_step, exit_step


class ClientSession:
    """``tensorflow::ClientSession`` on a NumPy, CuPy or array-API backend.

    ``backend`` is ``"numpy"`` (default, or ``$TFOPS_BACKEND``), ``"cupy"``, or an
    array-API namespace module, or a :class:`SessionOptions` (C++'s ``ClientSession(scope, options)``)
    that names them.  Fetched values are the arrays of the backend that produced them; pass
    ``fetch_numpy=True`` to always get NumPy arrays back.
    Nodes placed with ``WithDevice`` run on ``/CPU`` -> NumPy, ``/GPU:k`` -> CuPy
    device k, or whatever ``devices`` maps them to (``{"GPU": array_api_strict}``).
    The options' ``config`` also sets the graph optimizer's passes and the thread budget.

    ``target`` (or the options' ``target``) runs the graph on a Dask cluster instead: a
    ``dask.distributed.Client`` or a scheduler address (``"tcp://host:8786"``); the session is then a
    :class:`tfops_py.distributed.DistributedSession` (the ``[dask]`` extra; see docs/distributed.md).
    ``resources`` shares one state store (variables, tables) between sessions; by default each has its own.
    """

    def __new__(cls, scope: Scope, backend: Any = None, *args: Any, target: Any = None, **kwargs: Any):
        if cls is ClientSession and _remote_target(backend, target):
            from tfops_py.distributed.session import DistributedSession  # the one way up: an optional extra

            cls = DistributedSession
        return object.__new__(cls)

    def __init__(self, scope: Scope, backend: Any = None, *, fetch_numpy: bool = False,
                 devices: Mapping[str, Any] | None = None, allow_soft_placement: bool = False,
                 resources: dict[str, Any] | None = None, target: Any = None):
        self._options = backend if isinstance(backend, SessionOptions) else SessionOptions()
        if isinstance(backend, SessionOptions):
            options = backend
            backend = options.backend
            devices = devices if devices is not None else options.devices
            allow_soft_placement = allow_soft_placement or options.allow_soft_placement
        self._scope = scope
        self._graph = scope.graph()
        self._backend = get_backend(backend)
        self._placer = Placer(self._backend, devices, allow_soft_placement)
        self._fetch_numpy = fetch_numpy
        self._plans: dict[tuple, Plan] = {}
        # variables and other state; shared only when asked (the partitions of one task of a distributed session)
        self._resources: dict[str, Any] = {} if resources is None else resources
        self._lock = threading.RLock()
        self._functions = FunctionRuntime(self._graph.library, self._compile_function)
        self._callables: dict[int, tuple[Plan, list[int], Any]] = {}
        self._next_handle = 1

    @property
    def backend(self) -> Any:
        return self._backend

    def Run(self, *args: Any, inputs: Mapping | None = None, fetch_outputs: Iterable | None = None,
            run_outputs: Iterable | None = None, run_options: RunOptions | None = None,
            run_metadata: RunMetadata | None = None) -> list[Any]:
        """Run the graph; returns the fetched values in fetch order.

        ``Run(fetches)``, ``Run(feeds, fetches)``, ``Run(feeds, fetches, targets)``, or C++'s
        ``Run(run_options, feeds, fetches, targets, run_metadata)`` (``run_metadata`` may be
        omitted).  ``run_options.timeout_in_ms`` bounds the Run (DeadlineExceededError);
        a ``trace_level`` above NO_TRACE records every node in ``run_metadata.step_stats`` (with output
        shapes and bytes; see ``client/profiler.py``).  Feeds and fetches may be Outputs, single-output ops
        or tensor names (``"x:0"``; ``"x"`` is output 0), targets ops or op names.
        """
        if args and isinstance(args[0], RunOptions):
            run_options, args = args[0], args[1:]
            if len(args) == 4:
                run_metadata, args = args[3], args[:3]
            if len(args) != 3:
                raise TypeError("Run(run_options, feeds, fetches, targets[, run_metadata])")
        if len(args) == 1:
            fetch_outputs = args[0]
        elif len(args) == 2:
            inputs, fetch_outputs = args
        elif len(args) == 3:
            inputs, fetch_outputs, run_outputs = args
        elif len(args) > 3:
            raise TypeError("Run takes at most 3 positional arguments (feeds, fetches, targets)")
        feeds = {self._feed_key(k): v for k, v in (inputs or {}).items()}
        fetches = [self._fetch_output(f) for f in _as_list(fetch_outputs)]
        targets = [self._target_node(t) for t in _as_list(run_outputs)]
        for out in list(feeds) + fetches:
            if out.node().graph is not self._graph:  # type: ignore[union-attr]
                raise InvalidArgumentError(f"tensor {out.name()} is not an element of this session's graph")
        plan = self._plan(tuple(feeds), tuple(fetches), tuple(targets))
        return self._execute(plan, [feeds[o] for o in plan.feed_order], run_options, run_metadata)

    def _execute(self, plan: Plan, feed_values: list[Any], run_options: Any, run_metadata: Any) -> list[Any]:
        if run_options is None:  # no deadline, no tracing: nested calls see the default StepContext
            results = plan.run(feed_values)
        else:
            step = self._step(run_options, run_metadata)
            token = enter_step(step)
            try:
                results = plan.run(feed_values, step)
            finally:
                exit_step(token)
            if step.node_hook is not None and run_metadata is not None:
                fill_graphs(run_metadata, plan)
        if self._fetch_numpy:
            results = [self._backend.to_numpy(r) for r in results]
        return results

    def _plan(self, feeds: tuple[Output, ...], fetches: tuple[Output, ...], targets: tuple) -> Plan:
        key = (frozenset(feeds), fetches, targets)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = self._plans.get(key)
                if plan is None:
                    plan = self._plans[key] = self._build_plan(feeds, fetches, targets)
        return plan

    def _build_plan(self, feeds: tuple[Output, ...], fetches: tuple[Output, ...], targets: tuple) -> Plan:
        """A new plan for one request (cached by ``_plan``; a distributed session builds its own kind)."""
        return build_plan(self._backend, feeds, fetches, targets, self._resources, self._placer, self._functions,
                          self._options.config)

    def _compile_function(self, body: Any) -> Any:
        """The plan of a function body: arguments fed, results fetched, stateful nodes run."""
        return build_plan(self._backend, body_feeds(body), tuple(body.rets), tuple(body_targets(body)),
                          self._resources, self._placer, self._functions, self._options.config)

    def _step(self, options: RunOptions, metadata: RunMetadata | None) -> StepContext:
        hook = None
        if options.trace_level and metadata is not None:
            hook = profile_hook(metadata, device_name(self._backend))
        return StepContext(int(options.timeout_in_ms or 0), hook, metadata)

    def Close(self) -> None:
        """Free the session's plans and state (variables, tables); TF's ``Session::Close``.  A closed session
        can run again, from uninitialised state."""
        with self._lock:
            self._plans.clear()
            self._callables.clear()
            self._resources.clear()

    # -- callables (TF's MakeCallable / RunCallable / ReleaseCallable) ---------------------------------------
    def MakeCallable(self, callable_options: CallableOptions) -> int:
        """A handle running one fixed (feeds, fetches, targets) request; its plan is built now."""
        feeds = tuple(self._feed_key(f) for f in callable_options.feed)
        fetches = tuple(self._fetch_output(f) for f in callable_options.fetch)
        targets = tuple(node_of(self._graph, t) for t in callable_options.target)
        plan = self._plan(feeds, fetches, targets)
        order = [feeds.index(o) for o in plan.feed_order]
        with self._lock:
            handle = self._next_handle
            self._next_handle += 1
            self._callables[handle] = (plan, order, callable_options.run_options)
        return handle

    def RunCallable(self, handle: int, feed_tensors: Iterable[Any] = (),
                    run_metadata: RunMetadata | None = None) -> list[Any]:
        """Fetch values for ``feed_tensors`` (in the callable's feed order)."""
        entry = self._callables.get(handle)
        if entry is None:
            raise InvalidArgumentError(f"No such callable handle: {handle}")
        plan, order, run_options = entry
        values = list(feed_tensors)
        if len(values) != len(order):
            raise InvalidArgumentError(f"Invalid number of feed values: expected {len(order)} but got "
                                       f"{len(values)}")
        return self._execute(plan, [values[i] for i in order], run_options, run_metadata)

    def ReleaseCallable(self, handle: int) -> None:
        with self._lock:
            if self._callables.pop(handle, None) is None:
                raise InvalidArgumentError(f"No such callable handle: {handle}")

    def _feed_key(self, key: Any) -> Output:
        return output_of(self._graph, key, "feed key")

    def _fetch_output(self, value: Any) -> Output:
        out = None if isinstance(value, str) else as_output(value)
        if out is not None and out.node() is None:
            raise InvalidArgumentError("cannot fetch a null Output (its op was built on a scope in error)"
                                       f"{_why_null(self._scope)}")
        return output_of(self._graph, value, "fetch")

    def _target_node(self, value: Any) -> Any:
        op = value.op() if isinstance(value, Output) else value if isinstance(value, Operation) \
            else getattr(value, "operation", None)
        if isinstance(op, Operation) and op.node() is None:
            raise InvalidArgumentError(f"run target {value!r} is a null op (it was built on a scope in error)"
                                       f"{_why_null(self._scope)}")
        return node_of(self._graph, value)


def _remote_target(backend: Any, target: Any) -> bool:
    """Whether a session is asked for a cluster: a ``target`` argument, or ``SessionOptions.target`` set."""
    if target is None and isinstance(backend, SessionOptions):
        target = backend.target
    return bool(target) and target not in ("local", "")


def _why_null(scope: Scope) -> str:
    """The scope status that made an op null (record mode keeps the first error there)."""
    status = scope.status()
    return f"; the scope's status: {status.ToString()}" if not status.ok() else ""


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (Output, Operation, str)) or hasattr(value, "__tfops_output__") \
            or hasattr(value, "operation"):
        return [value]
    return list(value)


__all__ = ["ClientSession"]
