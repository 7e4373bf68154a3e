"""``ClientSession(scope, target=...)`` on a Dask cluster: each task's partition runs on its worker.

A Run is pruned and placed on the client (``partition.py``), each partition's GraphDef is installed on
its worker once per request (its plan is cached there), and every Run submits one Dask task per
partition, pinned to that partition's worker.  Tensors crossing partitions are Dask futures, so they
move worker to worker; only fetched values come to the client, as NumPy.  Variables and other
resources stay in the worker processes of their tasks between Runs.  While it waits, the session
watches the scheduler: a worker that leaves (or is restarted) ends the Run with AbortedError, and later
Runs that need that task end with UnavailableError (its state is gone; other tasks keep working).
"""
from __future__ import annotations

import inspect
import itertools
import threading
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tfops_py.backends import get_backend
from tfops_py.client import binding
from tfops_py.client.plan import convert_feed, feed_spec
from tfops_py.client.run_options import StepContext
from tfops_py.client.session import ClientSession, _as_list
from tfops_py.client.session_options import SessionOptions
from tfops_py.errors import AbortedError, InvalidArgumentError, OpError, UnavailableError
from tfops_py.framework.device_names import task_device_name
from tfops_py.framework.operation import Output
from tfops_py.framework.scope import Scope
from tfops_py.distributed import worker
from tfops_py.distributed.batch import BatchRunner, Progress
from tfops_py.distributed.errors import remote_error
from tfops_py.distributed.cluster import ClusterMap, Task
from tfops_py.distributed.partition import Partition, TaskPlacer, partition, producer_order

_POLL_S = 0.1  # how often a waiting Run looks at the scheduler's workers
_ids = itertools.count(1)


def _dask() -> Any:
    try:
        import distributed
    except ImportError:  # pragma: no cover - the [dask] extra is not installed
        raise ImportError("a session with a target needs dask.distributed: pip install 'tfops_py[dask]'") from None
    return distributed


class DistributedSession(ClientSession):
    """A session whose graph runs on the Dask workers its device strings' tasks map to.

    ``target``: a ``dask.distributed.Client`` or a scheduler address (the session then owns a client
    and closes it in :meth:`Close`).  ``cluster``: TF's ClusterSpec as ``{job: [worker name or address,
    ...]}`` (see ``cluster.py`` for the default mapping).  ``backend``/``devices`` are what each worker's
    partitions run on (``"numpy"``, ``"cupy"``, ``"array_api_strict"``); fetched values are NumPy.
    """

    def __init__(self, scope: Scope, backend: Any = None, *, target: Any = None, fetch_numpy: bool = False,
                 devices: Mapping[str, Any] | None = None, allow_soft_placement: bool = False,
                 resources: dict[str, Any] | None = None, cluster: Mapping[str, Sequence[str]] | None = None):
        options = backend if isinstance(backend, SessionOptions) else \
            SessionOptions(backend, devices=devices, allow_soft_placement=allow_soft_placement, target=target)
        target = target if target is not None else options.target
        if resources is not None:
            raise ValueError("a distributed session's resources live on its workers; it cannot share a local store")
        super().__init__(scope, "numpy", fetch_numpy=fetch_numpy)
        distributed = _dask()
        self._owns_client = not isinstance(target, distributed.Client)
        self.client = distributed.Client(target) if self._owns_client else target
        self.cluster = ClusterMap(self.client, cluster)
        self._placer_tasks = TaskPlacer(self.cluster)
        self.session_id = uuid.uuid4().hex[:12]
        self._worker_options = SessionOptions(_spec_name(options.backend), allow_soft_placement=
                                              options.allow_soft_placement, config=options.config,
                                              devices={k: _spec_name(v) for k, v in (options.devices or {}).items()})
        self._batch_runners: dict[tuple, BatchRunner] = {}
        self._started: set[Task] = set()
        self._lost: set[Task] = set()
        self._state_lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _close, self.client, self.session_id, self._owns_client)

    # -- TF's Session API ---------------------------------------------------------------------------------
    def Close(self) -> None:
        """Drop this session's state on every worker (and close the client the session made)."""
        super().Close()
        self._finalizer()

    def RunBatches(self, feeds: Mapping[Any, Any], fetches: Any, *, batch_size: int,
                   broadcast: Mapping[Any, Any] | None = None, progress: Progress | None = None,
                   as_dask: bool = False) -> list[Any]:
        """Evaluate ``fetches`` over a batch split along the first dimension, chunks spread over the workers.

        ``feeds``: NumPy or Dask arrays with the same first dimension (Dask arrays are rechunked to
        ``batch_size`` rows and never pass through the client); ``broadcast``: feeds every chunk gets
        whole (a ``keep_prob``, a lookup table); ``progress(done, total)`` is called as chunks finish.
        Returns the fetches concatenated along the first dimension: NumPy arrays, or with ``as_dask``
        Dask arrays whose chunks stay on the workers.  See ``batch.py`` for which graphs qualify.
        """
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgumentError(f"batch_size must be a positive integer, got {batch_size!r}")
        batched = {self._feed_key(k): v for k, v in feeds.items()}
        whole = {self._feed_key(k): v for k, v in (broadcast or {}).items()}
        outs = tuple(self._fetch_output(f) for f in _as_list(fetches))
        if not batched:
            raise InvalidArgumentError("RunBatches needs at least one batched feed")
        key = (tuple(batched), tuple(whole), outs)
        with self._lock:
            runner = self._batch_runners.get(key)
            if runner is None:
                runner = self._batch_runners[key] = BatchRunner(self, [*batched, *whole], outs)
        return runner.run(batched, batch_size, whole, progress, as_dask)

    def ListDevices(self) -> list[str]:
        """The cluster's devices, as TF's ``Session::ListDevices`` names them (a CPU per task)."""
        return [f"{task_device_name(t)}/device:CPU:0" for t in sorted(self.cluster.tasks)]

    # -- plans --------------------------------------------------------------------------------------------
    def _build_plan(self, feeds: tuple[Output, ...], fetches: tuple[Output, ...], targets: tuple) -> Any:
        return DistributedPlan(self, feeds, fetches, targets)  # a Plan to the base class: feed_order, run

    def _state_key(self, task: Task) -> str:
        return f"{self.session_id}/{task[0]}/{task[1]}"

    def _ensure_started(self, tasks: Iterable[Task]) -> None:
        """Create each task's state in its worker process (once) and refuse tasks whose worker was lost."""
        tasks = set(tasks)
        with self._state_lock:
            self._check_lost(tasks)
            for task in sorted(set(tasks) - self._started):
                addr = self.cluster.address(task)
                self._on_worker(addr, task, worker.init_task, self._state_key(task), task_device_name(task),
                                self._worker_options.backend, self._worker_options)
                self._started.add(task)

    def _check_lost(self, tasks: Iterable[Task], refresh: bool = True) -> None:
        """UnavailableError for a task whose worker is known lost (``refresh``: ask the scheduler now)."""
        tasks = set(tasks)
        if not tasks:
            return
        if refresh:
            self._lost.update(self.cluster.lost([self.cluster.address(t) for t in tasks]))
        gone = sorted(tasks & self._lost)
        if gone:
            raise UnavailableError(f"{task_device_name(gone[0])} is unavailable: its Dask worker left the cluster or "
                                   "was restarted, and the state it held (variables, tables) is gone; this session "
                                   "can still run graphs that do not need it")

    def _on_worker(self, addr: str, task: Task, fn: Any, *args: Any) -> Any:
        try:
            return self.client.run(fn, *args, workers=[addr])[addr]
        except OpError:
            raise
        except Exception as e:
            self._lost.update(self.cluster.lost([addr]))
            raise UnavailableError(f"{task_device_name(task)} at {addr} is unavailable: {type(e).__name__}: {e}") \
                from None


class DistributedPlan:
    """One request, partitioned; ``run`` submits its partitions and gathers the fetches."""

    def __init__(self, session: DistributedSession, feeds: tuple[Output, ...], fetches: tuple[Output, ...],
                 targets: tuple):
        self.session = session
        self.feed_order = list(feeds)
        self._specs = [feed_spec(o) for o in feeds]
        self._fetches = fetches
        fed = set(feeds)
        nodes = producer_order(binding.needed_nodes(fed, fetches, targets), fed)
        tasks = session._placer_tasks.place(nodes, fed)
        self.partitions: list[Partition] = partition(nodes, fed, fetches, targets, tasks)
        session._ensure_started(p.task for p in self.partitions)
        self._id = next(_ids)
        self._edges = {o for p in self.partitions for user, o in p.feeds.values() if not user}
        self._addresses = {p.key: session.cluster.address(p.task) for p in self.partitions}
        for p in self.partitions:
            gd = p.graph_def(session._graph).SerializeToString()
            fetch_names = [o.name() for o in p.sends]
            session._on_worker(self._addresses[p.key], p.task, worker.install_partition, session._state_key(p.task),
                               self._key(p), gd, list(p.feeds), fetch_names, [n.name for n in p.nodes])

    def _key(self, p: Partition) -> str:
        return f"plan{self._id}/stage{p.stage}"

    def nodes(self) -> list[Any]:
        return [n for p in self.partitions for n in p.nodes]

    def run(self, feed_values: Sequence[Any], step: StepContext | None = None) -> list[Any]:
        s = self.session
        s._check_lost([p.task for p in self.partitions], refresh=False)
        host = get_backend("numpy")
        values = {o: convert_feed(host, v, spec, o) for o, v, spec in zip(self.feed_order, feed_values, self._specs)}
        run = f"tfops-{s.session_id}-{self._id}-{next(_ids)}"
        parts: dict[Any, Any] = {}
        edges: dict[Output, Any] = {}
        wanted: dict[Output, Any] = {}
        fetch_set = set(self._fetches)
        for p in self.partitions:
            addr, skey = self._addresses[p.key], s._state_key(p.task)
            args = [values[o] if user else None for user, o in p.feeds.values()]
            picks = [(pos, *edges[o]) for pos, (user, o) in enumerate(p.feeds.values()) if not user]
            fut = s.client.submit(worker.run_partition, skey, self._key(p), args, [parts[k] for k in p.after],
                                  picks=picks, workers=[addr], allow_other_workers=False, pure=False, retries=0,
                                  key=f"{run}-{p.task[0]}{p.task[1]}-s{p.stage}")
            parts[p.key] = fut
            for k, o in enumerate(p.sends):
                if o in self._edges and len(p.sends) == 1:  # the whole result is that one tensor: no extra task
                    edges[o] = (fut, k)
                elif o in self._edges:  # one tensor of several: only it travels to the consumer
                    edges[o] = (s.client.submit(worker.fetched, skey, fut, k, False, workers=[addr], pure=False,
                                                key=f"{run}-edge-{p.stage}-{k}-{p.task[0]}{p.task[1]}"), None)
                if o in fetch_set:
                    wanted[o] = s.client.submit(worker.fetched, skey, fut, k, True, workers=[addr], pure=False,
                                                key=f"{run}-fetch-{p.stage}-{k}-{p.task[0]}{p.task[1]}")
        self._wait([*parts.values(), *wanted.values()], step)
        got = dict(zip(wanted, s.client.gather(list(wanted.values()))))
        return [values[o] if o in values else got[o] for o in self._fetches]

    def _wait(self, futures: list[Any], step: StepContext | None) -> None:
        distributed = _dask()
        pending = futures
        try:
            while pending:
                try:
                    done, not_done = distributed.wait(pending, timeout=_POLL_S, return_when="FIRST_COMPLETED")
                except (TimeoutError, distributed.TimeoutError):
                    done, not_done = set(), pending
                failed = [f for f in done if f.status in ("error", "cancelled")]
                if failed:
                    raise self._located(remote_error(failed[0]))
                pending = list(not_done)
                if pending and not done:  # nothing finished for a while: is every worker of this Run still there?
                    self._check_alive()
                    if step is not None:
                        step.check_deadline()
        except BaseException:
            self.session.client.cancel(futures, force=True)
            raise

    def _located(self, error: BaseException) -> BaseException:
        """A worker's error, pointing at the user's code that built the node (not at the worker's import)."""
        if isinstance(error, OpError) and error.node_name:
            node = self.session._graph.find_node(error.node_name)
            error.defined_at = node.defined_at if node is not None else None
            error.__cause__ = None
        return error

    def _check_alive(self) -> None:
        s = self.session
        lost = s.cluster.lost(list(set(self._addresses.values())))
        if lost:
            s._lost.update(lost)
            raise AbortedError(f"{task_device_name(lost[0])}: its Dask worker left the cluster (or was restarted), "
                               "and the state it held (variables, tables) with it; the Run was cancelled")


def _spec_name(spec: Any) -> Any:
    """A backend spec a worker can rebuild (a name: modules and Backend objects do not travel)."""
    return None if spec is None else spec if isinstance(spec, str) else get_backend(spec).name


def _close(client: Any, session_id: str, owns_client: bool) -> None:
    try:
        if client.status == "running":
            pending = client.run(worker.drop_sessions, session_id)
            if inspect.iscoroutine(pending):  # collected on the client's event loop: it cannot wait there
                pending.close()
    except Exception:  # the cluster may be gone already: nothing left to free
        pass
    finally:
        if owns_client:
            client.close()


__all__ = ["DistributedPlan", "DistributedSession"]
