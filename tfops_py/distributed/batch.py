"""Data-parallel batch runs: one request evaluated over a batch split along its first dimension.

Every worker gets the request's graph once (device placements reduced to the device inside a process:
jobs and tasks do not apply); each chunk of the batch is one Dask task that any of those workers may run,
so Dask balances the chunks and runs them where their data already is.  Batch runs are for graphs
without state (a frozen model: weights as constants); a graph that reads variables finds them
uninitialised on the workers, as TF's Session would.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tfops_py.client import binding
from tfops_py.client.plan import convert_feed, feed_spec
from tfops_py.backends import get_backend
from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.operation import Output
from tfops_py.distributed import worker
from tfops_py.distributed.errors import remote_error
from tfops_py.distributed.partition import Partition, recv_name

Progress = Callable[[int, int], None]
_calls = itertools.count()


def _is_dask_array(value: Any) -> bool:
    return type(value).__module__.startswith("dask.array")


class BatchRunner:
    """Installs one request on every worker and runs it over chunks of a batch."""

    def __init__(self, session: Any, feeds: Sequence[Output], fetches: Sequence[Output]):
        self.session = session
        self.feeds = list(feeds)
        self.fetches = list(fetches)
        fed = set(feeds)
        whole = Partition(("batch", 0), 0, nodes=binding.needed_nodes(fed, self.fetches, []))
        for o in self.feeds:  # every fed tensor comes in through a placeholder (its producer is pruned away)
            whole.feeds[whole.recvs.setdefault(o, recv_name(o))] = (True, o)
        self.key = f"batch{id(self)}"
        self.state_key = f"{session.session_id}/batch"
        self.addresses = sorted(set(session.cluster.tasks.values()))
        gd = whole.graph_def(session._graph).SerializeToString()
        names = [o.name() for o in self.fetches]
        opts = session._worker_options
        for addr in self.addresses:
            session._on_worker(addr, ("batch", 0), worker.init_task, self.state_key, "batch", opts.backend, opts)
            session._on_worker(addr, ("batch", 0), worker.install_partition, self.state_key, self.key, gd,
                               list(whole.feeds), names, [])

    def run(self, feeds: Mapping[Output, Any], batch_size: int, broadcast: Mapping[Output, Any],
            progress: Progress | None, as_dask: bool) -> list[Any]:
        client = self.session.client
        host = get_backend("numpy")
        chunks = self._chunks(feeds, batch_size)
        fixed = {o: convert_feed(host, v, feed_spec(o), o) for o, v in broadcast.items()}
        fixed_futures = {o: client.scatter(v, broadcast=True) for o, v in fixed.items()}
        futures = []
        call = next(_calls)
        for k, chunk in enumerate(chunks):
            args = [chunk[o] if o in chunk else fixed_futures[o] for o in self.feeds]
            futures.append(client.submit(worker.run_partition, self.state_key, self.key, args, [], True,
                                         workers=self.addresses, pure=False, retries=0,
                                         key=f"tfops-batch-{self.session.session_id}-{self.key}-{call}-{k}"))
        self._wait(futures, progress)
        if as_dask:
            return self._as_dask(futures)
        parts = client.gather(futures)
        return [np.concatenate([p[j] for p in parts]) for j in range(len(self.fetches))]

    def _chunks(self, feeds: Mapping[Output, Any], batch_size: int) -> list[dict[Output, Any]]:
        """Per chunk, each batched feed's piece (futures: the pieces are on the workers already)."""
        client = self.session.client
        sizes = {o: int(v.shape[0]) if getattr(v, "ndim", 0) else -1 for o, v in feeds.items()}
        if len(set(sizes.values())) != 1 or -1 in sizes.values():
            shown = ", ".join(f"{o.name()}: {s if s >= 0 else 'a scalar'}" for o, s in sizes.items())
            raise InvalidArgumentError(f"every batched feed needs the same first (batch) dimension; got {shown}")
        total = next(iter(sizes.values()))
        count = max(1, math.ceil(total / batch_size))
        pieces: dict[Output, list[Any]] = {}
        for o, v in feeds.items():
            if _is_dask_array(v):
                v = v.rechunk({0: batch_size, **{d: -1 for d in range(1, v.ndim)}})
                pieces[o] = client.compute(list(v.to_delayed().ravel()))
            else:
                spec = feed_spec(o)
                arr = convert_feed(get_backend("numpy"), v, spec, o)
                pieces[o] = client.scatter([arr[i * batch_size:(i + 1) * batch_size] for i in range(count)])
        return [{o: pieces[o][i] for o in feeds} for i in range(count)]

    def _wait(self, futures: list[Any], progress: Progress | None) -> None:
        from distributed import as_completed

        done = 0
        try:
            for fut in as_completed(futures):
                if fut.status != "finished":
                    raise remote_error(fut)
                done += 1
                if progress is not None:
                    progress(done, len(futures))
        except BaseException:
            self.session.client.cancel(futures, force=True)
            raise

    def _as_dask(self, futures: list[Any]) -> list[Any]:
        import dask.array as da
        from dask.delayed import delayed

        client = self.session.client
        meta = client.gather([client.submit(_shapes, f, pure=False) for f in futures])
        out = []
        for j in range(len(self.fetches)):
            blocks = [da.from_delayed(delayed(_item)(f, j), shape=m[j][0], dtype=m[j][1])
                      for f, m in zip(futures, meta)]
            out.append(da.concatenate(blocks))
        return out


def _shapes(values: tuple) -> list[tuple[tuple[int, ...], Any]]:
    return [(tuple(v.shape), v.dtype) for v in values]


def _item(values: tuple, index: int) -> Any:
    return values[index]


__all__ = ["BatchRunner", "Progress"]
