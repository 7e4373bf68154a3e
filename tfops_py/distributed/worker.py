"""What runs inside a Dask worker process: each session's state for the task that worker serves.

``_STATES`` maps a session id to that task's state in this process: one resource store (variables,
tables, ...) shared by every partition of the task, and the partitions' compiled sessions.  It lives as
long as the process (or until the session is closed); a restarted worker has none, which the session
reports as AbortedError instead of running on fresh, uninitialised state.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tfops_py.backends import get_backend
from tfops_py.errors import AbortedError, InternalError, OpError
from tfops_py.framework.scope import Scope
from tfops_py.graphdef.import_ import import_graph_def


@dataclass
class _Compiled:
    session: Any
    feeds: list[str]
    fetches: list[str]
    targets: list[str]


@dataclass
class TaskState:
    task: str
    backend: Any
    options: Any
    resources: dict[str, Any] = field(default_factory=dict)
    partitions: dict[str, _Compiled] = field(default_factory=dict)


_STATES: dict[str, TaskState] = {}
_LOCK = threading.Lock()


def init_task(session_id: str, task: str, backend: str, options: Any) -> int:
    """Create this process's state for ``task`` of the session (``client.run`` calls it); returns the pid."""
    with _LOCK:
        _STATES.setdefault(session_id, TaskState(task, get_backend(backend), options))
    return os.getpid()


def install_partition(session_id: str, key: str, graph_def: bytes, feeds: Sequence[str], fetches: Sequence[str],
                      targets: Sequence[str]) -> None:
    """Import one partition's GraphDef and make the session that runs it (sharing the task's resources)."""
    from tfops_py.client.session import ClientSession

    state = _state(session_id, key)
    if key in state.partitions:
        return
    scope = Scope.NewRootScope()
    import_graph_def(scope, graph_def)
    session = ClientSession(scope, state.options, resources=state.resources)
    with _LOCK:
        state.partitions.setdefault(key, _Compiled(session, list(feeds), list(fetches), list(targets)))


def run_partition(session_id: str, key: str, feed_values: Sequence[Any], after: Sequence[Any],
                  to_numpy: bool = False, picks: Sequence[tuple[int, Any, int | None]] = ()) -> tuple:
    """Run one partition for one Run: ``feed_values`` in its feed order (``after``: results it waited for;
    ``to_numpy``: return NumPy arrays, for results that go to the client).  ``picks`` fill feeds from other
    partitions' results: ``(position, result, index)``, ``index`` None when ``result`` is the tensor itself."""
    del after  # only ordering: these are the partitions this one's control inputs ran in
    if picks:
        feed_values = list(feed_values)
        for pos, result, index in picks:
            feed_values[pos] = result if index is None else result[index]
    state = _state(session_id, key)
    compiled = state.partitions.get(key)
    if compiled is None:
        raise AbortedError(f"partition {key} of this session is not installed on worker process {os.getpid()} "
                           "(the worker was restarted); make a new session")
    try:
        values = compiled.session.Run(dict(zip(compiled.feeds, feed_values)), compiled.fetches, compiled.targets)
        return tuple(state.backend.to_numpy(v) if to_numpy and hasattr(v, "shape") else v for v in values)
    except OpError:
        raise
    except Exception as e:  # a bug of ours, not the user's: keep its type and message visible
        raise InternalError(f"partition {key} failed: {type(e).__name__}: {e}") from e


def fetched(session_id: str, values: tuple, index: int, to_numpy: bool) -> Any:
    """One value of a partition's result (as NumPy for the client's fetches, so any backend's arrays travel)."""
    value = values[index]
    if to_numpy:
        state = _STATES.get(session_id)
        if state is not None and hasattr(value, "shape"):
            return state.backend.to_numpy(value)
    return value


def drop_sessions(session_id: str) -> int:
    """Free the state of every task of a session in this process; returns how many there were."""
    with _LOCK:
        keys = [k for k in _STATES if k.startswith(session_id + "/")]
        for k in keys:
            del _STATES[k]
    return len(keys)


def _state(session_id: str, key: str) -> TaskState:
    state = _STATES.get(session_id)
    if state is None:
        raise AbortedError(f"this session's state is not on worker process {os.getpid()} (the worker was "
                           f"restarted, losing its variables) while running {key}; make a new session")
    return state


__all__ = ["TaskState", "drop_sessions", "fetched", "init_task", "install_partition", "run_partition"]
