"""Fractional pooling: TF's pooling sequences, cell geometry, and the NumPy fast paths.

Host side (NumPy on small vectors): ``pooling_sequences`` reproduces TF 2.21's
``GeneratePoolingSequence`` bit for bit (``fractional_pool_common.cc``: rows first, then columns,
from one Philox generator), and :class:`Cells` / :class:`Coverage` describe which input rows
(columns) each cell spans and which cells cover each input row.

Device side, NumPy only: the average pool and its gradient, cut into cache-sized batch tiles
shared over the ``_parallel`` threads.  The gradient reproduces TF's float64 arithmetic exactly
(same divisions, same order of additions), so it matches the generic kernel bit for bit.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from tfops_py.kernels._parallel import parallel_for, threads
from tfops_py.kernels._philox import GuardedPhilox

TILE_BYTES = 1 << 20  # working set of one tile of the NumPy paths


# -- sequences ------------------------------------------------------------------------------------
def output_size(in_size: int, ratio: float) -> int:
    """``floor(in / ratio)`` computed in float32, as TF's kernel and shape function do."""
    return int(np.floor(np.float32(in_size) / np.float32(ratio)))


def _sequence(in_len: int, out_len: int, gen: GuardedPhilox, pseudo_random: bool) -> np.ndarray:
    k = in_len // out_len
    if pseudo_random:
        alpha = in_len / out_len
        u_max = min((k + 2) / alpha - 1, (in_len + 1 - k) / alpha - (out_len - 1))
        u = gen.reserve_samples32(2).rand_double() * u_max
        cum = np.empty(out_len + 1, np.int64)
        cum[0], cum[-1] = 1, in_len + 1
        cum[1:-1] = np.ceil(alpha * (np.arange(1, out_len, dtype=np.float64) + u))
        diff = np.diff(cum)
    else:
        rem = in_len % out_len
        diff_list = [k + 1] * rem + [k] * (out_len - rem)
        words = gen.reserve_samples32(out_len).words(out_len - 1).tolist()
        # Fisher-Yates as TF's RandomShuffle: inherently sequential, O(out) on host integers.
        for i, w in enumerate(words):
            j = i + w % (out_len - i)
            diff_list[i], diff_list[j] = diff_list[j], diff_list[i]
        diff = np.asarray(diff_list, np.int64)
    seq = np.zeros(out_len + 1, np.int64)
    np.cumsum(diff, out=seq[1:])
    return seq


def pooling_sequences(rows: int, cols: int, ratio: list[float], pseudo_random: bool,
                      seed: int, seed2: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column pooling sequences (int64, ``out + 1`` entries from 0 to ``in``) for one Compute."""
    gen = GuardedPhilox(seed, seed2)
    row_seq = _sequence(rows, output_size(rows, ratio[1]), gen, pseudo_random)
    col_seq = _sequence(cols, output_size(cols, ratio[2]), gen, pseudo_random)
    return row_seq, col_seq


# -- geometry -------------------------------------------------------------------------------------
class Cells(NamedTuple):
    """Cells along one axis: cell i spans input indices ``start[i] ..= end[i]`` (empty if end < start)."""

    start: np.ndarray
    end: np.ndarray
    size: int  # input length along the axis

    @property
    def length(self) -> np.ndarray:
        return np.maximum(self.end - self.start + 1, 0)

    @property
    def max_length(self) -> int:
        return int(self.length.max(initial=0))


def cells(seq: np.ndarray, n_out: int, size: int, overlapping: bool) -> Cells:
    """Cells of the first ``n_out + 1`` sequence values; ends are clamped to ``size - 1`` like TF's."""
    s = np.asarray(seq, np.int64).reshape(-1)[: n_out + 1]
    end = np.minimum(s[1:] if overlapping else s[1:] - 1, size - 1)
    return Cells(s[:-1], end, size)


class Coverage(NamedTuple):
    """For each input index: the first cell covering it and how many consecutive cells do (0: none)."""

    first: np.ndarray
    count: np.ndarray

    @property
    def depth(self) -> int:
        return int(self.count.max(initial=0))


def coverage(c: Cells) -> Coverage:
    """Covering cells of each input index; valid for non-decreasing sequences, where they are consecutive."""
    pos = np.arange(c.size)
    last = np.searchsorted(c.start, pos, side="right") - 1  # last cell starting at or before pos
    first = np.searchsorted(c.end, pos, side="left")  # first cell ending at or after pos
    count = np.maximum(last - first + 1, 0)
    return Coverage(np.minimum(first, max(len(c.start) - 1, 0)), count)


def cell_counts(rows: Cells, cols: Cells) -> np.ndarray:
    """Elements per cell, ``[rows, cols]`` int64, as TF computes them (from the clamped ends)."""
    return np.outer(rows.end - rows.start + 1, cols.end - cols.start + 1)


# -- NumPy fast paths -----------------------------------------------------------------------------
Tile = Callable[[int, int], None]


def _run_tiles(make_worker: Callable[[int], Tile], batch: int, item_bytes: int) -> None:
    """Cut the batch into tiles of about TILE_BYTES of working set and share them over the threads.

    Each thread takes the next tile as it finishes one (a thread slowed by other processes holds
    up nobody), through ``tile(lo, hi)`` from ``make_worker(step)``, whose buffers for ``step``
    items are allocated once per thread (fresh large arrays would cost page faults on every tile).
    """
    step = max(1, min(batch, TILE_BYTES // max(item_bytes, 1)))
    tiles = [(b, min(batch, b + step)) for b in range(0, batch, step)]
    claim = itertools.count()

    def worker(_lo: int, _hi: int) -> None:
        tile = None
        while (i := next(claim)) < len(tiles):
            tile = tile or make_worker(step)
            tile(*tiles[i])

    parallel_for(worker, min(threads(), len(tiles)))


class _SortedAxis(NamedTuple):
    """An axis with its cells reordered longest first, so that "cells longer than t" is a prefix."""

    order: np.ndarray  # sorted position -> cell
    start: np.ndarray  # cell starts in that order
    prefix: list[int]  # prefix[t] = number of cells longer than t


def _sorted_axis(c: Cells) -> _SortedAxis:
    order = np.argsort(-c.length, kind="stable")
    length = c.length[order]
    return _SortedAxis(order, c.start[order], [int((length > t).sum()) for t in range(c.max_length)])


def _sum_axis(x: np.ndarray, ax: _SortedAxis, axis: int, out: np.ndarray, scratch: list[np.ndarray]) -> None:
    """``out`` = cell sums of ``x`` along ``axis`` (sorted cells); ``scratch[t]`` holds term t + 1."""
    np.take(x, ax.start, axis=axis, mode="clip", out=out)
    lead = (slice(None),) * axis
    for t, n in enumerate(ax.prefix[1:], start=1):
        term = scratch[t - 1]
        np.take(x, ax.start[:n] + t, axis=axis, mode="clip", out=term)
        part = out[lead + (slice(0, n),)]
        np.add(part, term, out=part)


def truncating_divide(xp: Any, total: Any, count: Any) -> Any:
    """C++ integer division (rounds toward zero) of ``total`` by a positive ``count``."""
    q = xp.floor_divide(total, count)
    inexact = xp.remainder(total, count) != 0
    return xp.where(inexact & (total < 0), q + 1, q)


def avg_pool_numpy(x: np.ndarray, rows: Cells, cols: Cells) -> np.ndarray:
    """Cell means (integer division truncates), summed in the input dtype, rows first.

    Rows: cells sorted longest first, so term t is one ``take`` of whole input rows and one ``add``
    on a prefix.  Columns: the row sums sit behind a zero row in a flat ``[1 + rows * W, D]``
    buffer; term t of every cell, in the original row order, is one flat ``take`` straight into
    the output (a cell shorter than t + 1 takes the zero row), so nothing is re-sorted.
    """
    batch, _, cols_in, depth = x.shape
    r_ax = _sorted_axis(rows)
    n_r, n_c = len(rows.start), len(cols.start)
    plane = n_r * cols_in  # row sums of one item
    rank = np.argsort(r_ax.order)  # cell -> its place among the sorted row sums
    per_item = [np.where(cols.length[None, :] > t, 1 + rank[:, None] * cols_in + cols.start[None, :] + t, 0).ravel()
                for t in range(cols.max_length)]
    counts = np.ascontiguousarray(np.broadcast_to(cell_counts(rows, cols).reshape(-1, 1), (n_r * n_c, depth)),
                                  dtype=x.dtype)
    out = np.empty((batch, n_r, n_c, depth), x.dtype)
    integer = np.issubdtype(x.dtype, np.integer)

    def make_worker(step: int) -> Tile:
        y = np.empty((1 + step * plane, depth), x.dtype)
        y[0] = 0
        y_terms = [np.empty((step, n, cols_in, depth), x.dtype) for n in r_ax.prefix[1:]]
        terms = np.empty((len(per_item) - 1, step * n_r * n_c, depth), x.dtype)
        index: dict[int, tuple[np.ndarray, np.ndarray]] = {}

        def tile(lo: int, hi: int) -> None:
            k = hi - lo
            if k not in index:  # item b's row sums start at 1 + b * plane
                shift = (np.arange(k) * plane)[:, None]
                idx = [np.where(i == 0, 0, i + shift).ravel() for i in per_item]
                index[k] = idx[0], np.concatenate(idx[1:] or [np.zeros(0, np.int64)])
            first, rest = index[k]
            _sum_axis(x[lo:hi], r_ax, 1, y[1:1 + k * plane].reshape(k, n_r, cols_in, depth),
                      [a[:k] for a in y_terms])
            o = out[lo:hi].reshape(k * n_r * n_c, depth)
            np.take(y, first, axis=0, mode="clip", out=o)
            if len(rest):  # every later column term of every cell in one take, then one add each
                more = terms[:, :len(first)]
                np.take(y, rest, axis=0, mode="clip", out=more.reshape(-1, depth))
                for term in more:
                    np.add(o, term, out=o)
            o3 = o.reshape(k, n_r * n_c, depth)
            if integer:
                o3[...] = truncating_divide(np, o3, counts)
            else:
                np.divide(o3, counts, out=o3)

        return tile

    _run_tiles(make_worker, batch, x[0].nbytes + out[0].nbytes * 3)
    return out


def saturate(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Clip float64 ``v`` in place to the range of integer ``dtype`` (C++ leaves overflow undefined)."""
    info = np.iinfo(dtype)
    return np.clip(v, float(info.min), np.nextafter(float(info.max) + 1.0, 0.0), out=v)


def avg_pool_grad_numpy(dy: np.ndarray, rows: Cells, cols: Cells, rcov: Coverage, ccov: Coverage,
                        out_shape: tuple[int, int, int, int]) -> np.ndarray:
    """FractionalAvgPoolGrad when every input row and column lies in at most two cells.

    Each input element then takes one of four sums of ``v = float64(dy) / count``: one cell, a
    column pair, a row pair or a 2x2 block, added in TF's order.  The sums are formed on the small
    cell grid -- four ``[R, C]`` quadrants (single/pair rows x single/pair columns) whose last
    pair row and column stay zero for input rows and columns no cell covers -- cast to T there,
    and one gather per tile writes the output.
    """
    batch, n_r, n_c, depth = dy.shape
    _, rows_in, cols_in, _ = out_shape
    counts = cell_counts(rows, cols).astype(np.float64)
    counts[counts <= 0] = 1.0  # empty cells cover nothing
    counts = np.ascontiguousarray(np.broadcast_to(counts[:, :, None], (n_r, n_c, depth)))
    # quadrant-major grid index: ((row kind * 2 + col kind) * R + row cell) * C + col cell
    r_kind = np.where(rcov.count == 1, 0, 1)
    r_cell = np.where(rcov.count == 0, n_r - 1, rcov.first)
    c_kind = np.where(ccov.count == 1, 0, 1)
    c_cell = np.where(ccov.count == 0, n_c - 1, ccov.first)
    gather = (((r_kind[:, None] * 2 + c_kind[None, :]) * n_r + r_cell[:, None]) * n_c + c_cell[None, :]).reshape(-1)
    direct = (batch, depth) == (out_shape[0], out_shape[3])  # else zeros around the part dy reaches
    out = np.empty(out_shape, dy.dtype) if direct else np.zeros(out_shape, dy.dtype)
    target = out[:batch, :, :, :depth]
    integer = np.issubdtype(dy.dtype, np.integer)

    def make_worker(step: int) -> Tile:
        g = np.empty((step, 2, 2, n_r, n_c, depth), np.float64)
        g[:, 1, :, n_r - 1] = 0.0  # the zero row and column: never written below
        g[:, :, 1, :, n_c - 1] = 0.0
        cast = np.empty(g.shape, dy.dtype)

        def tile(lo: int, hi: int) -> None:
            k = hi - lo
            q = g[:k]
            v, row_pair, col_pair, block = q[:, 0, 0], q[:, 1, 0, :-1], q[:, 0, 1, :, :-1], q[:, 1, 1, :-1, :-1]
            np.copyto(v, dy[lo:hi])
            np.divide(v, counts, out=v)
            v += 0.0  # TF's sums start from +0.0: no -0.0 survives
            np.add(v[:, :, :-1], v[:, :, 1:], out=col_pair)
            np.add(v[:, :-1], v[:, 1:], out=row_pair)
            np.add(col_pair[:, :-1], v[:, 1:, :-1], out=block)
            np.add(block, v[:, 1:, 1:], out=block)
            c = cast[:k]
            np.copyto(c, saturate(q, dy.dtype) if integer else q, casting="unsafe")
            flat = c.reshape(k, 4 * n_r * n_c, depth)
            if direct:
                np.take(flat, gather, axis=1, mode="clip", out=target[lo:hi].reshape(k, rows_in * cols_in, depth))
            else:
                target[lo:hi] = np.take(flat, gather, axis=1).reshape(k, rows_in, cols_in, depth)

        return tile

    _run_tiles(make_worker, batch, 4 * n_r * n_c * depth * (8 + dy.itemsize))
    return out


def _blend(dst: np.ndarray, src: Any, mask: np.ndarray) -> None:
    """``dst = mask ? src : dst`` for integers, branch-free (wrapping arithmetic; ``mask`` is 0/1 uint8).

    ``np.where`` and ``copyto(where=)`` cost ~3 ns an element on unpredictable masks.
    """
    diff = np.subtract(src, dst, dtype=dst.dtype)
    np.multiply(diff, mask, out=diff)
    dst += diff


def _offset_dtype(*cs: Cells) -> type:
    return np.uint8 if max(c.max_length for c in cs) < 256 else np.int32


def _max_axis(x: np.ndarray, c: Cells, axis: int, val: np.ndarray, off: np.ndarray | None = None,
              carry: np.ndarray | None = None, carried: np.ndarray | None = None) -> None:
    """``val`` = each cell's maximum along ``axis``; ``off`` = its offset in the cell, the first on ties
    (TF's strict ``<``); ``carried`` = ``carry`` at that offset.  Needs NaN-free data.

    Values use ``np.maximum(new, kept)``, which returns its second operand on ties, so +0.0 / -0.0
    stay TF's (the tests pin this).
    """
    for t in range(c.max_length):
        idx = np.minimum(c.start + t, c.end)  # a short cell re-reads its last element: never larger
        if t == 0:
            np.take(x, idx, axis=axis, mode="clip", out=val)
            if off is not None:
                off.fill(0)
            if carry is not None:
                np.take(carry, idx, axis=axis, mode="clip", out=carried)
            continue
        term = np.take(x, idx, axis=axis, mode="clip")
        if off is not None:
            larger = np.greater(term, val).view(np.uint8)
            _blend(off, t, larger)
            if carry is not None:
                _blend(carried, np.take(carry, idx, axis=axis, mode="clip"), larger)
        np.maximum(term, val, out=val)


def max_pool_numpy(x: np.ndarray, rows: Cells, cols: Cells) -> np.ndarray:
    """Cell maxima of NaN-free ``x``: columns, then rows (the first maximum of each cell either way)."""
    batch, rows_in, _, depth = x.shape
    n_r, n_c = len(rows.start), len(cols.start)
    out = np.empty((batch, n_r, n_c, depth), x.dtype)

    def make_worker(step: int) -> Tile:
        y = np.empty((step, rows_in, n_c, depth), x.dtype)

        def tile(lo: int, hi: int) -> None:
            _max_axis(x[lo:hi], cols, 2, y[:hi - lo])
            _max_axis(y[:hi - lo], rows, 1, out[lo:hi])

        return tile

    _run_tiles(make_worker, batch, x[0].nbytes + out[0].nbytes * 3)
    return out


def max_pool_grad_numpy(x: np.ndarray, y: np.ndarray, dy: np.ndarray, rows: Cells, cols: Cells) -> np.ndarray | None:
    """FractionalMaxPoolGrad for NaN-free ``x``; None when ``y`` is not the max pool of ``x``.

    Each cell's first maximum is found columns first, then rows (for distinct values or ties the
    same element as TF's row-major scan); ``np.add.at`` then adds ``dy`` at those elements in
    output order, TF's order of accumulation.
    """
    batch, rows_in, cols_in, depth = x.shape
    n_r, n_c = len(rows.start), len(cols.start)
    dx = np.zeros(x.shape, dy.dtype)
    mismatch: list[bool] = []

    off_t = _offset_dtype(rows, cols)
    # flat input index of each cell's first element, per (row cell, col cell, channel)
    base = ((rows.start[:, None, None] * cols_in + cols.start[None, :, None]) * depth
            + np.arange(depth, dtype=np.int64)[None, None, :])
    item_size = rows_in * cols_in * depth

    def make_worker(step: int) -> Tile:
        col_max = np.empty((step, rows_in, n_c, depth), x.dtype)
        col_off = np.empty((step, rows_in, n_c, depth), off_t)
        cell_max = np.empty((step, n_r, n_c, depth), x.dtype)
        row_off = np.empty((step, n_r, n_c, depth), off_t)
        cell_col_off = np.empty((step, n_r, n_c, depth), off_t)

        def tile(lo: int, hi: int) -> None:
            k = hi - lo
            _max_axis(x[lo:hi], cols, 2, col_max[:k], col_off[:k])
            _max_axis(col_max[:k], rows, 1, cell_max[:k], row_off[:k], col_off[:k], cell_col_off[:k])
            if not np.array_equal(cell_max[:k], y[lo:hi]):
                mismatch.append(True)
                return
            step_in_cell = row_off[:k].astype(np.int64)
            step_in_cell *= cols_in
            step_in_cell += cell_col_off[:k]
            step_in_cell *= depth
            flat = step_in_cell + base
            flat += np.arange(k, dtype=np.int64)[:, None, None, None] * item_size
            np.add.at(dx[lo:hi].reshape(-1), flat.reshape(-1), dy[lo:hi].reshape(-1))

        return tile

    _run_tiles(make_worker, batch, x[0].nbytes + dx[0].nbytes + 16 * n_r * n_c * depth)
    return None if mismatch else dx
