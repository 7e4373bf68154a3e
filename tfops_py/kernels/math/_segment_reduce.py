"""The core of the segment reductions, callable as plain functions (the sparse kernels use them too).

``segment_sum(ctx, data, ids, num_segments, rows=None, weights=None)`` adds ``weights[i] * data[rows[i]]``
into output row ``ids[i]`` (rows: every row of ``data`` in order when None; negative ids are dropped);
``segment_extreme(ctx, data, ids, num_segments, reducer, empty)`` reduces with ``max``, ``min`` or ``prod``.
``data`` is 2-D (rows, columns), ``ids`` 1-D int64, both arrays of ``ctx``'s backend; ids must already be
checked against ``num_segments``.

NumPy: a sum is one sparse matrix product (SciPy's CSR, built by a counting sort: no gather of ``data``,
index order kept within a segment as in TF's serial loop); max/min/prod reduce the runs of the rows sorted
by id (``_reduce_runs``).  Other namespaces: the rows sorted by id (``argsort``, stable), a segmented
log-depth scan (Hillis-Steele: step k combines each row with the row 2^k before it when both belong to
the same segment), and each segment's last row picked with ``searchsorted``: O(n log n) whole-array
steps, no scatter (the array API has none).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse

from tfops_py.kernels._parallel import parallel_for
from tfops_py.kernels.registry import KernelContext

# dtypes SciPy's sparse products take (half and bfloat16 go through float32)
_SPARSE_TYPES = frozenset(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
                                                 np.uint64, np.float32, np.float64, np.complex64, np.complex128))


def _numpy_sum(data: np.ndarray, ids: np.ndarray, num_segments: int, rows: np.ndarray | None,
               weights: np.ndarray | None, sorted_ids: bool = False) -> np.ndarray:
    dtype = data.dtype
    work = data if dtype in _SPARSE_TYPES else data.astype(np.float32)
    if sorted_ids and rows is None and weights is None and (ids.size == 0 or ids[0] >= 0):
        # sorted ids are already the matrix's rows in order: its row pointers are a search away
        indptr = np.searchsorted(ids, np.arange(num_segments + 1))
        matrix = scipy.sparse.csr_matrix((np.ones(ids.size, work.dtype), np.arange(ids.size), indptr),
                                         shape=(num_segments, work.shape[0]))
        out = np.asarray(matrix @ work)
        return out if out.dtype == dtype else out.astype(dtype)
    keep = ids >= 0
    if not keep.all():
        ids = ids[keep]
        rows = (np.flatnonzero(keep) if rows is None else rows[keep])
        weights = None if weights is None else weights[keep]
    n = ids.shape[0]
    values = np.ones(n, work.dtype) if weights is None else weights.astype(work.dtype)
    columns = np.arange(n) if rows is None else rows
    matrix = scipy.sparse.csr_matrix((values, (ids, columns)), shape=(num_segments, work.shape[0]))
    out = np.asarray(matrix @ work)
    return out if out.dtype == dtype else out.astype(dtype)


def _sorted_runs(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start of each run of equal ids, the run's id) of a sorted id vector."""
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]])) if ids.size else np.zeros(0, np.intp)
    return starts, ids[starts]


_SHORT_RUN = 64  # longer runs: reduceat
_UFUNCS = {"max": np.maximum, "min": np.minimum, "prod": np.multiply, "sum": np.add}


def _numpy_reduce(data: np.ndarray, ids: np.ndarray, num_segments: int, reducer: str, empty: Any,
                  sorted_ids: bool) -> np.ndarray:
    if not sorted_ids:
        order = np.argsort(ids, kind="stable")
        ids, data = ids[order], data[order]
    first = int(np.searchsorted(ids, 0))  # negative ids (unsorted ops) sort first and are dropped
    ids, data = ids[first:], data[first:]
    out = np.full((num_segments, data.shape[1]), empty, dtype=data.dtype)
    if ids.size and data.shape[1]:
        starts, segments = _sorted_runs(ids)
        with np.errstate(all="ignore"):  # integer products wrap, as in TF
            out[segments] = _reduce_runs(data, starts, _UFUNCS[reducer])
    return out


def _reduce_runs(data: np.ndarray, starts: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """``ufunc.reduceat(data, starts, axis=0)`` for runs of rows starting at ``starts``, faster for short runs.

    ``reduceat`` runs one short strided inner loop per (run, column): slow for many short runs.  Runs of at
    most ``_SHORT_RUN`` rows are folded instead row offset by row offset: with the runs ordered longest
    first, those still going at offset k are a prefix, so step k is one gather of their k-th rows and one
    in-place ``ufunc`` (whole-array steps, a loop over the longest short run's length).  Longer runs keep
    ``reduceat``, whose inner loops are long there.  Chunks of runs go to the worker threads.
    """
    n, columns = data.shape
    lengths = np.diff(np.append(starts, n))
    out = np.empty((starts.size, columns), dtype=data.dtype)
    long = lengths > _SHORT_RUN
    if long.any():
        bounds = np.stack([starts[long], starts[long] + lengths[long]], axis=1).reshape(-1)
        # reduceat over (start, end) pairs: the even results are the runs (an end at n is dropped: to the end)
        out[long] = ufunc.reduceat(data, bounds[:-1] if bounds[-1] == n else bounds, axis=0)[::2]
    short = np.flatnonzero(~long)
    if short.size:

        def fold(a: int, b: int) -> None:
            runs = short[a:b][np.argsort(-lengths[short[a:b]], kind="stable")]
            first, remaining = starts[runs], -lengths[runs]  # ascending: a run is still going while -length < -k
            acc = data[first]
            rows = np.empty_like(acc)  # one buffer for every step's gather
            for k in range(1, -int(remaining[0])):
                going = int(np.searchsorted(remaining, -k))
                np.take(data, first[:going] + k, axis=0, out=rows[:going])
                ufunc(acc[:going], rows[:going], out=acc[:going])
            out[runs] = acc

        parallel_for(fold, short.size, min_size=1024)
    return out


# -- generic (array API) ---------------------------------------------------------------------------------
def _segmented_scan(xp: Any, x: Any, ids: Any, combine: Callable[[Any, Any], Any]) -> Any:
    """Inclusive scan of the rows of ``x`` within runs of equal ``ids`` (sorted), in log2(n) steps."""
    n = x.shape[0]
    shift = 1
    while shift < n:
        same = xp.reshape(ids[shift:] == ids[:n - shift], (n - shift, 1))
        tail = xp.where(same, combine(x[:n - shift, ...], x[shift:, ...]), x[shift:, ...])
        x = xp.concat([x[:shift, ...], tail], axis=0)
        shift *= 2
    return x


def _last_of_each(xp: Any, scanned: Any, ids: Any, num_segments: int, empty: Any) -> Any:
    """Row r of the result: the scanned row ending segment r (sorted ids), or ``empty`` if r has none."""
    targets = xp.arange(num_segments, dtype=ids.dtype)
    last = xp.searchsorted(ids, targets, side="right") - 1
    safe = xp.clip(last, 0, max(ids.shape[0] - 1, 0))
    present = (last >= 0) & (xp.take(ids, safe) == targets)
    picked = xp.take(scanned, safe, axis=0)
    return xp.where(xp.reshape(present, (num_segments, 1)), picked, xp.full_like(picked, empty))


_COMBINE: dict[str, Callable[[Any], Callable[[Any, Any], Any]]] = {
    "sum": lambda xp: xp.add, "prod": lambda xp: xp.multiply, "max": lambda xp: xp.maximum,
    "min": lambda xp: xp.minimum,
}


def _generic_reduce(xp: Any, data: Any, ids: Any, num_segments: int, reducer: str, empty: Any,
                    sorted_ids: bool) -> Any:
    if num_segments == 0 or ids.shape[0] == 0 or data.shape[1] == 0:
        return xp.full((num_segments, data.shape[1]), empty, dtype=data.dtype)
    if not sorted_ids:
        order = xp.argsort(ids, stable=True)
        ids, data = xp.take(ids, order), xp.take(data, order, axis=0)
    scanned = _segmented_scan(xp, data, ids, _COMBINE[reducer](xp))
    return _last_of_each(xp, scanned, ids, num_segments, empty)


# -- entry points ------------------------------------------------------------------------------------------
def segment_sum(ctx: KernelContext, data: Any, ids: Any, num_segments: int, rows: Any | None = None,
                weights: Any | None = None, sorted_ids: bool = False) -> Any:
    """out[ids[i]] += weights[i] * data[rows[i]] (rows default: i; weights default: 1); negative ids dropped.
    ``sorted_ids``: the ids are non-decreasing (a cheaper path)."""
    if data.shape[1] == 0 or num_segments == 0 or ids.shape[0] == 0:
        return ctx.xp.zeros((num_segments, data.shape[1]), dtype=data.dtype)
    if ctx.backend.name == "numpy":
        return _numpy_sum(data, ids, num_segments, rows, weights, sorted_ids)
    xp = ctx.xp
    values = data if rows is None else xp.take(data, rows, axis=0)
    if weights is not None:
        values = values * xp.reshape(xp.astype(weights, values.dtype), (-1, 1))
    return _generic_reduce(xp, values, ids, num_segments, "sum", 0, sorted_ids=sorted_ids and rows is None)


def segment_extreme(ctx: KernelContext, data: Any, ids: Any, num_segments: int, reducer: str, empty: Any,
                    sorted_ids: bool = False) -> Any:
    """Per segment the ``reducer`` ("max", "min", "prod") of its rows, ``empty`` where it has none; negative
    ids dropped.  NaN propagates (max/min)."""
    if ctx.backend.name == "numpy":
        return _numpy_reduce(data, ids, num_segments, reducer, empty, sorted_ids)
    return _generic_reduce(ctx.xp, data, ids, num_segments, reducer, empty, sorted_ids)


def segment_counts(ctx: KernelContext, ids: Any, num_segments: int) -> Any:
    """How many (non-negative) ids name each segment, as int64."""
    xp = ctx.xp
    if ctx.backend.name == "numpy":
        return np.bincount(ids[ids >= 0], minlength=num_segments)[:num_segments].astype(np.int64)
    ordered = xp.sort(ids)
    targets = xp.arange(num_segments, dtype=ids.dtype)
    return xp.astype(xp.searchsorted(ordered, targets, side="right") - xp.searchsorted(ordered, targets, side="left"),
                     xp.int64)
