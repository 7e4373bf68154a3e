"""Which Dask worker runs each TF task (``/job:<job>/task:<k>``).

The mapping is, in order of precedence:

1. ``cluster={"ps": ["w-ps-0"], "worker": ["tcp://10.0.0.5:3456", ...]}``: TF's ``ClusterSpec`` as a
   dict from job name to its tasks' Dask workers, each given by worker name or address;
2. workers *named* after their task (``dask worker --name /job:ps/task:0``, or ``ps/0``, ``ps:0``);
3. otherwise every worker is a task of job ``worker``, in the order of their names (then addresses).

Names are resolved to addresses once, when the session starts; a task whose worker has left (or was
restarted under the same name: its process, and the variables in it, are new) makes later Runs fail
with UnavailableError or AbortedError instead of silently running on fresh state.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tfops_py.errors import InvalidArgumentError, UnavailableError
from tfops_py.framework.device_names import parse_device_name, task_device_name

Task = tuple[str, int]

_NAMED = re.compile(r"^/?(?:job:)?(?P<job>[A-Za-z][\w.-]*)(?:/replica:\d+)?(?:/task:|/|:)(?P<task>\d+)$")


def _task_from_worker_name(name: Any) -> Task | None:
    if not isinstance(name, str):
        return None
    if name.startswith("/job:"):
        parsed = parse_device_name(name)
        return (parsed.job, parsed.task or 0) if parsed.job else None
    m = _NAMED.match(name)
    return (m.group("job"), int(m.group("task"))) if m else None


class ClusterMap:
    """TF tasks -> Dask worker addresses, checked against the scheduler's view of its workers."""

    def __init__(self, client: Any, cluster: Mapping[str, Sequence[str]] | None = None):
        self.client = client
        workers = scheduler_workers(client)
        if not workers:
            raise UnavailableError("the Dask cluster has no workers")
        by_name = {info.get("name"): addr for addr, info in workers.items()}
        self.tasks: dict[Task, str] = {}
        if cluster:
            for job, members in cluster.items():
                for k, member in enumerate(members):
                    addr = member if member in workers else by_name.get(member)
                    if addr is None:
                        raise UnavailableError(f"{task_device_name((job, k))}: no Dask worker named or at "
                                               f"'{member}' (workers: {sorted(map(str, by_name))})")
                    self.tasks[(job, k)] = addr
        else:
            named = {t: addr for addr, info in workers.items() if (t := _task_from_worker_name(info.get("name")))}
            if named:
                self.tasks = named
            else:
                order = sorted(workers, key=lambda a: (str(workers[a].get("name")), a))
                self.tasks = {("worker", k): addr for k, addr in enumerate(order)}
        # a worker's id changes when its process is restarted (a nanny keeps the name, not the state)
        self._ids = {addr: workers[addr].get("id") for addr in self.tasks.values()}

    def address(self, task: Task, node: str | None = None, op: str | None = None) -> str:
        addr = self.tasks.get(task)
        if addr is None:
            known = ", ".join(task_device_name(t) for t in sorted(self.tasks))
            raise InvalidArgumentError(
                f"Cannot assign a device for operation {node}: {task_device_name(task)} is not a task of the "
                f"cluster (tasks: {known})", op_type=op, node_name=node)
        return addr

    def default_task(self) -> Task:
        """Where a node goes that neither names a task nor has a placed input (TF: the master's task)."""
        workers = sorted(t for t in self.tasks if t[0] == "worker")
        return workers[0] if workers else min(self.tasks)

    def lost(self, addresses: Sequence[str] | None = None) -> list[Task]:
        """The tasks (of ``addresses``, default all) whose worker is gone or was restarted."""
        workers = scheduler_workers(self.client)
        check = set(addresses) if addresses is not None else set(self.tasks.values())
        return sorted(t for t, a in self.tasks.items() if a in check and
                      (a not in workers or workers[a].get("id") != self._ids[a]))

    def task_of_address(self, address: str) -> Task | None:
        return next((t for t, a in self.tasks.items() if a == address), None)


def scheduler_workers(client: Any) -> dict[str, dict]:
    """The scheduler's workers now, by address: ``{"name": ..., "id": ...}`` (asked of the scheduler itself:
    the client's own copy of this refreshes only every few seconds, and a restarted worker may not be in it)."""
    return client.run_on_scheduler(_workers_now)


def _workers_now(dask_scheduler: Any = None) -> dict[str, dict]:
    return {addr: {"name": ws.name, "id": ws.server_id} for addr, ws in dask_scheduler.workers.items()}


__all__ = ["ClusterMap", "Task", "scheduler_workers"]
