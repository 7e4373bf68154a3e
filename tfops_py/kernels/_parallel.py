"""One thread budget for kernel work: our pool splits NumPy calls, BLAS runs on one thread meanwhile.

NumPy releases the GIL inside its loops and BLAS calls, so a kernel that splits its work over the
pool scales over cores.  OpenBLAS keeps worker threads of its own that spin after each call; next to
our pool (or under other processes) they oversubscribe the cores and spin instead of computing.  So
while a plan runs, every BLAS library loaded in the process is held to one thread (through
threadpoolctl) and all parallelism comes from this pool, whose idle workers block, never spin.

The budget (``threads()``) is per run: a session's ``intra_op_parallelism_threads`` sets it with
``budget(n)``; the default is the number of cores this process may use (``$TFOPS_NUM_THREADS``
overrides it).  Only host (NumPy) fast paths use this; generic kernels stay single-call array code.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


NUM_THREADS = max(1, int(os.environ.get("TFOPS_NUM_THREADS", 0)) or _available_cores())
_budget: contextvars.ContextVar[int] = contextvars.ContextVar("tfops_threads", default=NUM_THREADS)
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def threads() -> int:
    """Threads the current run may use."""
    return _budget.get()


@contextlib.contextmanager
def budget(n: int | None) -> Iterator[None]:
    """Run the body with at most ``n`` threads (``None`` or 0: the default)."""
    token = _budget.set(max(1, int(n)) if n else NUM_THREADS)
    try:
        yield
    finally:
        _budget.reset(token)


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    if _pool is None or _pool_size < workers:
        with _pool_lock:
            if _pool is None or _pool_size < workers:
                old, _pool = _pool, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tfops")
                _pool_size = workers
                if old is not None:
                    old.shutdown(wait=False)
    return _pool


def split_range(n: int, parts: int | None = None, min_size: int = 1) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(n)`` in at most ``parts`` near-equal chunks."""
    parts = parts or threads()
    parts = max(1, min(parts, n // max(1, min_size)))
    bounds = [n * i // parts for i in range(parts + 1)]
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def _run_all(calls: Sequence[Callable[[], T]]) -> list[T]:
    """Run the calls on the pool and the calling thread; results in order.

    Threads pull the next call from a shared counter, the caller included, so when another process
    holds a core the threads that do run take the remaining calls instead of waiting for a thread
    that is not scheduled (a static split would wait for it)."""
    n = len(calls)
    helpers = min(threads(), n) - 1
    if helpers <= 0:
        return [c() for c in calls]
    results: list[Any] = [None] * n
    errors: list[BaseException] = []
    taken = itertools.count()
    done = [0]
    lock = threading.Lock()
    finished = threading.Event()

    def drain() -> None:
        while True:
            i = next(taken)
            if i >= n:
                return
            try:
                results[i] = calls[i]()
            except BaseException as e:  # re-raised in the caller
                errors.append(e)
            with lock:
                done[0] += 1
                if done[0] == n:
                    finished.set()

    pool = _executor(threads())
    ctx = contextvars.copy_context()
    for _ in range(helpers):
        pool.submit(ctx.copy().run, drain)
    drain()
    finished.wait()
    if errors:
        raise errors[0]
    return results


def parallel_for(fn: Callable[[int, int], T], n: int, min_size: int = 1) -> list[T]:
    """Call ``fn(start, stop)`` over chunks of ``range(n)`` on the worker threads; results in order."""
    return _run_all([lambda a=a, b=b: fn(a, b) for a, b in split_range(n, min_size=min_size)])


def parallel_map(fn: Callable[..., T], items: Sequence[Any]) -> list[T]:
    """``[fn(x) for x in items]`` on the worker threads (one task per item, pulled as threads free up)."""
    return _run_all([lambda x=x: fn(x) for x in items])


# -- BLAS ------------------------------------------------------------------------------------------------

class _BlasHold:
    """Holds every loaded BLAS library to one thread while at least one run is inside ``hold()``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: list[tuple[Any, int]] = []
        self._libs: list[Any] | None = None

    def _controllers(self) -> list[Any]:
        if self._libs is None:
            try:
                from threadpoolctl import ThreadpoolController
                self._libs = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
            except Exception:  # threadpoolctl missing or unable to inspect this process: leave BLAS alone
                self._libs = []
        return self._libs

    def enter(self) -> None:
        with self._lock:
            if self._depth == 0:
                self._saved = []
                for lib in self._controllers():
                    n = lib.get_num_threads()
                    if n and n != 1:
                        lib.set_num_threads(1)
                        self._saved.append((lib, n))
            self._depth += 1

    def exit(self) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0:
                for lib, n in self._saved:
                    lib.set_num_threads(n)
                self._saved = []


_blas = _BlasHold()


@contextlib.contextmanager
def hold_blas() -> Iterator[None]:
    """BLAS on one thread for the body (nests and is thread-safe; the previous counts come back)."""
    _blas.enter()
    try:
        yield
    finally:
        _blas.exit()


def blas_threads() -> list[int]:
    """Current thread count of each BLAS library loaded (for tests and benchmarks)."""
    return [lib.get_num_threads() for lib in _blas._controllers()]


def matmul(a: Any, b: Any, min_flops: int = 1 << 22) -> Any:
    """NumPy ``a @ b`` for 2-D ``a``, its rows split over the budget when the product is large."""
    import numpy as np

    m, k = a.shape
    n = b.shape[1]
    parts = min(threads(), m // 64 or 1)
    if parts <= 1 or m * k * n < min_flops:
        return a @ b
    out = np.empty((m, n), dtype=np.result_type(a, b))

    def rows(start: int, stop: int) -> None:
        np.matmul(a[start:stop], b, out=out[start:stop])

    parallel_for(rows, m, min_size=64)
    return out


def enter_run(num_threads: int | None, blas: bool = True) -> Any:
    """Start a plan's run: BLAS held to one thread (when ``blas``), the budget set to ``num_threads``
    when given.  Returns a token for ``exit_run`` (cheaper than a context manager on the per-Run path)."""
    if blas:
        _blas.enter()
    return _budget.set(max(1, num_threads)) if num_threads else None


def exit_run(token: Any, blas: bool = True) -> None:
    if token is not None:
        _budget.reset(token)
    if blas:
        _blas.exit()
