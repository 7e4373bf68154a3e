"""Row scatters shared by the scatter kernels: ``base[rows[i]] = op(base[rows[i]], values[i])`` in index order.

TF's CPU scatter kernels (TensorScatter*, the ref-variable Scatter*/ScatterNd* ops, the resource
scatters, InplaceUpdate) walk the updates serially, so duplicate rows combine one after another:
``Update`` keeps the last value, ``Add``/``Sub``/``Mul``/``Div`` round after every step, ``Min`` and
``Max`` follow Eigen's ``cwiseMin``/``cwiseMax`` (``u < x ? u : x``: a NaN update never wins, a NaN
already in ``base`` stays).  Both kernels below keep exactly that order and rounding:

* NumPy: ``ufunc.at`` (serial by definition), in place when the caller owns ``base``; integer Div and
  floating Min/Max (no ufunc has C's or Eigen's rule) go round by round as below;
* any array-API namespace (no scatter there): the updates are sorted stably by row, the rows are
  combined occurrence by occurrence (round ``k`` applies every row's ``k``-th update at once, so the
  rounds number the largest multiplicity of a row, not the updates), and the result is gathered back
  with ``searchsorted``.  Every step is a whole-array operation.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.kernels.registry import KernelContext

MODES = ("Update", "Add", "Sub", "Mul", "Div", "Min", "Max")


def scatter_rows(ctx: KernelContext, mode: str, base: Any, rows: Any, values: Any, keep: Any = None,
                 inplace: bool = False) -> Any:
    """``base`` (R, K) with ``values`` (N, K) combined into ``rows`` (N,) in index order; ``keep`` (N,) drops
    the updates where it is False.  Rows must lie in [0, R) where kept.  ``inplace``: NumPy may write into
    ``base`` (the caller owns it); other backends always return a new array."""
    if mode not in MODES:
        raise ValueError(f"unknown scatter mode {mode!r}")
    if values.shape[0] == 0 or base.shape[0] == 0:
        return base
    if ctx.backend.name == "numpy":
        return _scatter_numpy(mode, base, np.asarray(rows), values, None if keep is None else np.asarray(keep),
                              inplace)
    return _scatter_sorted(ctx, mode, base, rows, values, keep)


# -- NumPy: ufunc.at, serial ------------------------------------------------------------------------------
_UFUNCS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


def _scatter_numpy(mode: str, base: np.ndarray, rows: np.ndarray, values: np.ndarray, keep: np.ndarray | None,
                   inplace: bool) -> np.ndarray:
    out = base if inplace and base.flags.writeable else np.array(base, copy=True)
    if keep is not None and not keep.all():
        rows, values = rows[keep], values[keep]
    if mode == "Update":
        out[rows] = values  # repeated rows: the last assignment wins, as in TF's loop
    elif mode == "Div" and out.dtype.kind in "iu":
        _rounds_at(out, rows, values, _truncating_divide)
    elif mode in ("Min", "Max") and (out.dtype.kind == "f" or out.dtype == _BF16):
        with np.errstate(invalid="ignore"):  # no ufunc keeps Eigen's rule for NaN and the sign of zero
            _rounds_at(out, rows, values, _eigen_min if mode == "Min" else _eigen_max)
    elif mode in ("Min", "Max"):
        (np.minimum if mode == "Min" else np.maximum).at(out, rows, values)
    else:
        with np.errstate(all="ignore"):  # integer wrap-around, inf - inf: TF's results too
            _UFUNCS[mode].at(out, rows, values)
    return out


_BF16 = np.dtype(ml_dtypes.bfloat16)


def _rounds_at(out: np.ndarray, rows: np.ndarray, values: np.ndarray, combine: Any) -> None:
    """``out[r] = combine(out[r], v)`` for each (r, v), repeated rows one after another (one round per
    occurrence rank, each round vectorised over the rows that have that many updates)."""
    order = np.argsort(rows, kind="stable")
    rows, values = rows[order], values[order]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    counts = np.diff(np.r_[starts, rows.size])
    for k in range(int(counts.max(initial=0))):
        take = starts[counts > k] + k
        r = rows[take]
        out[r] = combine(out[r], values[take])


def _truncating_divide(x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """C's integer division (toward zero)."""
    q = np.abs(x) // np.abs(v)
    return np.where((x < 0) != (v < 0), -q, q).astype(x.dtype)


def _eigen_min(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Eigen's ``cwiseMin``: ``u < x ? u : x`` (a NaN update never wins, a NaN or a zero of either sign
    already in ``x`` stays when nothing is smaller)."""
    return np.where(u < x, u, x)


def _eigen_max(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    return np.where(u > x, u, x)


# -- any array-API namespace: sort by row, combine by occurrence rank, gather back ------------------------
def _scatter_sorted(ctx: KernelContext, mode: str, base: Any, rows: Any, values: Any, keep: Any) -> Any:
    xp, r = ctx.xp, base.shape[0]
    rows = xp.astype(rows, xp.int64)
    if keep is not None:
        rows = xp.where(keep, rows, xp.asarray(r, dtype=xp.int64))  # dropped updates sort last
    order = xp.argsort(rows, stable=True)
    n = int(xp.sum(xp.astype(rows < r, xp.int64)))
    if n == 0:
        return base
    order = order[:n]
    sorted_rows = xp.take(rows, order)
    sorted_values = xp.take(values, order, axis=0)
    first = xp.concat([xp.ones((1,), dtype=xp.bool), sorted_rows[1:] != sorted_rows[:-1]])
    starts = xp.nonzero(first)[0]
    counts = xp.concat([starts[1:], xp.asarray([n], dtype=starts.dtype)]) - starts
    unique_rows = xp.take(sorted_rows, starts)
    if mode == "Update":
        combined = xp.take(sorted_values, starts + counts - 1, axis=0)  # the last writer of each row
    else:
        combined = _combine_in_order(ctx, mode, xp.take(base, unique_rows, axis=0), sorted_values, starts, counts)
    # back to (R, K): each row takes its combined value if it was written, else its old one
    at = xp.searchsorted(unique_rows, xp.arange(r, dtype=xp.int64))
    at = xp.where(at < unique_rows.shape[0], at, xp.zeros_like(at))
    written = xp.take(unique_rows, at) == xp.arange(r, dtype=xp.int64)
    return xp.where(xp.reshape(written, (r, 1)), xp.take(combined, at, axis=0), base)


def _combine_in_order(ctx: KernelContext, mode: str, acc: Any, values: Any, starts: Any, counts: Any) -> Any:
    """Each row of ``acc`` combined with its updates ``values[starts[j] : starts[j] + counts[j]]`` in order.

    Rows are processed most-updated first, so the rows still receiving updates in round ``k`` are a prefix.
    """
    xp = ctx.xp
    by_count = xp.argsort(-counts, stable=True)
    acc = xp.take(acc, by_count, axis=0)
    starts = xp.take(starts, by_count)
    descending = ctx.host(xp.take(counts, by_count))
    active = np.searchsorted(-descending, -np.arange(int(descending[0])), side="left")  # rows with a k-th update
    for k, m in enumerate(active.tolist()):
        update = xp.take(values, starts[:m] + k, axis=0)
        acc[:m, ...] = _combine(xp, mode, acc[:m, ...], update)
    inverse = xp.argsort(by_count, stable=True)
    return xp.take(acc, inverse, axis=0)


def _combine(xp: Any, mode: str, x: Any, u: Any) -> Any:
    if mode == "Add":
        return x + u
    if mode == "Sub":
        return x - u
    if mode == "Mul":
        return x * u
    if mode == "Div":
        if xp.isdtype(x.dtype, "integral"):  # C's division truncates toward zero
            q = xp.abs(x) // xp.abs(u)
            return xp.where((x < 0) != (u < 0), -q, q)
        return x / u
    better = (u < x) if mode == "Min" else (u > x)  # Eigen's cwiseMin/Max: a NaN update never wins
    return xp.where(better, u, x)
