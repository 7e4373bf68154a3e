"""NumPy engine for the batch-norm family: cache-sized blocks on every core, no x-sized temporaries.

Batch norm is memory bound: the training gradient must read x and dy twice (the per-channel sums
come before dx) and write dx once.  This engine streams each input through the cache once per
pass: the data is cut into blocks of about ``BLOCK`` elements, a block goes through every ufunc of
a pass while it is cache-resident, and the blocks are shared out over ``_parallel``'s threads
(NumPy releases the GIL inside its loops).

Every block is a 2-D view laid out so that NumPy runs its fast loops (they are about half as
fast when a broadcast operand changes along a short inner dimension):

* columns: rows of ``L`` elements that share one channel pattern -- channels-last (L = C), or
  channels-first with a small spatial size (L = C*spatial).  ``m`` rows sit side by side in a
  ``(k, m*L)`` view, constants are ``m*L``-long tiles, per-channel sums are column sums.
* groups: channels-first items larger than a block: a block is ``x[n, c0:c1, s0:s1]``, a
  contiguous run of whole channels (or a piece of one), viewed ``(c1 - c0, s1 - s0)``; constants
  are expanded to that shape once per group and reused for every item; per-channel sums are
  row sums.  (One-channel strided blocks with scalar constants measured 1.5x slower.)

Partial sums are float32 within a block and float64 across blocks.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from tfops_py.kernels._parallel import parallel_map, split_range, threads

BLOCK = 1 << 18  # elements per block (1 MiB of float32; 64-512 Ki measured within 10%)
WIDE = 1 << 14  # inner length of the column views in elementwise ops
REDUCE_WIDTH = 1 << 10  # ... and when summing columns (a short accumulator)
GROUPS_MIN_PLANE: int | None = None  # channels-first items from this size on use groups (None: BLOCK/8)
MIN_ELEMENTS = 1 << 16  # smaller tensors go to the generic engine (fewer Python calls)
SPLIT = 2  # block ranges per thread in a sweep
SAMPLE = 256  # values per channel in the sample that picks shift-free formulas
TAU = 4.0  # |mean| up to TAU deviations: products may use x directly (see _shift_free)

Block = tuple[tuple, tuple[int, int], int]  # (index into the base view, 2-D shape, kind or channel)
Reduce = Callable[[int, np.ndarray], None]
Body = Callable[[Block, list, Reduce, list], None]


class NumpyEngine:
    """Same interface as ``batch_norm.GenericEngine``; vectors in and out are float32 [C]."""

    def __init__(self, shape: tuple[int, ...], last: bool, block: int | None = None):
        block = max(1, block or BLOCK)
        self.shape, self._last = shape, last
        if last:
            n, c, inner = math.prod(shape[:-1]), shape[-1], 1
        else:
            n, c, inner = shape[0], shape[1], math.prod(shape[2:])
        self.C, self.count, self._inner = c, n * inner, inner
        plane = c * inner  # one item (channels-first) or one position (channels-last)
        # columns need a plane-long accumulator update per block: fine while a plane is small
        self._columns = last or plane < (GROUPS_MIN_PLANE or max(1, block // 8))
        blocks: list[Block] = []
        if self._columns:  # rows of ``plane`` elements sharing one channel pattern
            mr = max(1, min(REDUCE_WIDTH // max(plane, 1), n))  # rows side by side when summing
            m = mr * max(1, min(WIDE // (mr * max(plane, 1)), n // mr))  # ... and in elementwise ops
            width = m * plane
            k = max(1, block // max(width, 1))
            full_rows = n - n % m
            for r in range(0, full_rows, k * m):
                rows = min(k * m, full_rows - r)
                blocks.append(((slice(r * plane, (r + rows) * plane),), (rows // m, width), 0))
            if full_rows < n:
                blocks.append(((slice(full_rows * plane, n * plane),), (n - full_rows, plane), 1))
            self._base: tuple[int, ...] = (-1,)
            self._plane, self._m, self._mr = plane, m, mr
        else:  # channel groups of each item, group-major so a group's constants serve every item
            if inner <= block:
                cb = max(1, block // max(inner, 1))
                groups = [(c0, min(c, c0 + cb), 0, inner) for c0 in range(0, c, cb)]
            else:
                pieces = -(-inner // block)
                groups = [(ch, ch + 1, inner * j // pieces, inner * (j + 1) // pieces)
                          for ch in range(c) for j in range(pieces)]
            blocks = [((item, slice(c0, c1), slice(s0, s1)), (c1 - c0, s1 - s0), g)
                      for g, (c0, c1, s0, s1) in enumerate(groups) for item in range(n)]
            self._base, self._groups = (n, c, inner), groups
        self._blocks = blocks
        self._maxlen = max((b[1][0] * b[1][1] for b in blocks), default=0)
        self._dev_key: tuple | None = None
        self._dev = np.zeros(0)

    # -- block plumbing ------------------------------------------------------------------------------
    def _expand(self, v: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray]:
        """Block-shaped forms of a [C] vector: (full-width tile, tail-width pattern), or a group's block."""
        if self._columns:
            pattern = v if self._inner == 1 else np.repeat(v, self._inner)
            return np.tile(pattern, self._m), pattern
        c0, c1, s0, s1 = self._groups[group]
        e = np.repeat(v[c0:c1], s1 - s0).reshape(c1 - c0, s1 - s0)
        return e, e

    def _sweep(self, body: Body, vecs: list[np.ndarray], nsums: int, nbuf: int,
               reverse: bool = False) -> list[np.ndarray]:
        """Run ``body(block, consts, reduce, buffers)`` on every block; per-channel float64 sums.

        Each thread walks the same block range in every sweep; ``reverse`` walks it backwards, so a
        second pass over the same data starts with the blocks the first pass left in the cache.
        """
        vecs = [np.ascontiguousarray(v, dtype=np.float32) for v in vecs]
        columns = self._columns
        shared = [self._expand(v, 0) for v in vecs] if columns else []

        def work(a: int, b: int) -> list[list[np.ndarray]]:
            if columns:
                accs = [[np.zeros(self._mr * self._plane), np.zeros(self._plane)] for _ in range(nsums)]
                rwidth = self._mr * self._plane

                def red(s: int, arr: np.ndarray) -> None:
                    acc = accs[s][kind]
                    acc += np.add.reduce(arr if kind else arr.reshape(-1, rwidth), axis=0)
            else:
                accs = [[np.zeros(self.C)] for _ in range(nsums)]

                def red(s: int, arr: np.ndarray) -> None:
                    acc = accs[s][0][c0:c1]
                    acc += np.add.reduce(arr, axis=1)
            flat_bufs = [np.empty(self._maxlen, np.float32) for _ in range(nbuf)]
            group, expanded = -1, shared
            for i in (range(b - 1, a - 1, -1) if reverse else range(a, b)):
                blk = self._blocks[i]
                shape2, kind = blk[1], blk[2]
                if not columns and kind != group:
                    group, expanded = kind, [self._expand(v, kind) for v in vecs]
                    c0, c1 = self._groups[kind][:2]
                consts = [e[kind] for e in expanded] if columns else [e[0] for e in expanded]
                bufs = [fb[:shape2[0] * shape2[1]].reshape(shape2) for fb in flat_bufs]
                body(blk, consts, red, bufs)
            return accs

        # a few ranges per thread, handed out as threads free up: a core lost to another process
        # then delays one short range, not half the pass
        ranges = split_range(len(self._blocks), threads() * SPLIT if threads() > 1 else 1)
        parts = parallel_map(lambda r: work(*r), ranges[::-1] if reverse else ranges)
        return [self._fold([p[s] for p in parts]) for s in range(nsums)]

    def _fold(self, accs: list[list[np.ndarray]]) -> np.ndarray:
        if not accs:
            return np.zeros(self.C)
        if self._columns:
            firsts = cast(np.ndarray, sum(a[0] for a in accs))
            per_row = firsts.reshape(self._mr, self._plane).sum(axis=0) + sum(a[1] for a in accs)
            return per_row.reshape(self.C, self._inner).sum(axis=1)
        return cast(np.ndarray, sum(a[0] for a in accs))

    def _view(self, a: np.ndarray) -> Callable[[Block], np.ndarray]:
        base = a.reshape(self._base)
        if self._columns:
            return lambda blk: base[blk[0]].reshape(blk[1])
        return lambda blk: base[blk[0]]

    def _loader(self, a: np.ndarray) -> Callable[[Block, np.ndarray], np.ndarray]:
        """Block reader giving float32: a view for float32 data, else a cast into ``buf``."""
        view = self._view(a)
        if a.dtype == np.float32:
            return lambda blk, buf: view(blk)

        def load(blk: Block, buf: np.ndarray) -> np.ndarray:
            buf[...] = view(blk)
            return buf
        return load

    def _output(self, dtype: Any) -> tuple[np.ndarray, Callable[[Block, np.ndarray], np.ndarray],
                                           Callable[[Block, np.ndarray], None]]:
        """(output array, block target getter, block store) -- float32 outputs are written in place."""
        out = np.empty(self.shape, dtype)
        view = self._view(out)
        if out.dtype == np.float32:
            return out, (lambda blk, buf: view(blk)), (lambda blk, t: None)

        def store(blk: Block, t: np.ndarray) -> None:
            view(blk)[...] = t
        return out, (lambda blk, buf: buf), store

    # -- shift-free shortcuts -----------------------------------------------------------------------------
    def _sample(self, x: np.ndarray) -> np.ndarray:
        """About ``SAMPLE`` values per channel, spread over the whole tensor, as float64 [samples, C]."""
        side = math.isqrt(SAMPLE)
        if self._last:  # runs of adjacent rows: few pages touched (a page walk each)
            rows = x.reshape(-1, self.C)
            run = min(side, rows.shape[0])
            starts = np.unique(np.linspace(0, rows.shape[0] - run, side).astype(np.intp))
            return rows[(starts[:, None] + np.arange(run)).reshape(-1)].astype(np.float64)
        x3 = x.reshape(self.shape[0], self.C, -1)
        items = np.unique(np.linspace(0, x3.shape[0] - 1, side).astype(np.intp))
        where = np.unique(np.linspace(0, x3.shape[2] - 1, side).astype(np.intp))
        picked = x3[np.ix_(items, np.arange(self.C), where)]  # copies only the sample
        return np.moveaxis(picked, 1, -1).reshape(-1, self.C).astype(np.float64)

    def _deviation(self, x: np.ndarray, centre: np.ndarray) -> np.ndarray:
        """Root-mean-square distance of x from ``centre`` per channel, estimated from a sample (cached)."""
        key = (id(x), np.asarray(centre, np.float64).tobytes())
        if self._dev_key != key:
            sample = self._sample(x)
            self._dev_key, self._dev = key, np.sqrt(np.mean((sample - centre) ** 2, axis=0))
        return self._dev

    def _shift_free(self, x: np.ndarray, centre: np.ndarray, tau: float = TAU) -> bool:
        """True when every |centre| is within ``tau`` deviations of x from it.

        Then ``b*x + (c - b*centre)`` and ``sum(dy*x) - centre*sum(dy)`` lose at most a factor
        ~(1 + tau) in float32 accuracy against the centred forms, and save one pass each.
        """
        centre = np.asarray(centre, np.float64)
        return bool(np.all(np.abs(centre) <= tau * self._deviation(x, centre)))

    # -- the engine interface --------------------------------------------------------------------------
    def moments(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Batch mean and biased variance in one read of x: sums of (x - K) and (x - K)^2 around a
        shift K near the mean (a sample mean; 0 when that is within a deviation of 0), in float64."""
        shift = self._sample(x).mean(axis=0).astype(np.float32)
        load = self._loader(x)
        if self._shift_free(x, shift, 1.0):
            shift[...] = 0

            def body(blk, e, red, bufs):
                xb = load(blk, bufs[1])
                red(0, xb)
                t = bufs[0]
                np.multiply(xb, xb, out=t)
                red(1, t)
        else:
            def body(blk, e, red, bufs):
                t = bufs[0]
                np.subtract(load(blk, bufs[1]), e[0], out=t)
                red(0, t)
                np.multiply(t, t, out=t)
                red(1, t)

        s1, s2 = self._sweep(body, [shift], 2, 2)
        d = s1 / self.count
        var = np.maximum(s2 / self.count - d * d, 0.0)
        return (shift + d).astype(np.float32), var.astype(np.float32)

    def normalize(self, x: np.ndarray, mean: np.ndarray, k: np.ndarray, offset: np.ndarray,
                  dtype: Any) -> np.ndarray:
        out, target, store = self._output(dtype)
        load = self._loader(x)
        if self._shift_free(x, mean):
            consts = [k, offset.astype(np.float64) - mean.astype(np.float64) * k]

            def body(blk, e, red, bufs):
                t = target(blk, bufs[0])
                np.multiply(load(blk, bufs[1]), e[0], out=t)
                np.add(t, e[1], out=t)
                store(blk, t)
        else:
            consts = [mean, k, offset]

            def body(blk, e, red, bufs):
                t = target(blk, bufs[0])
                np.subtract(load(blk, bufs[1]), e[0], out=t)
                np.multiply(t, e[1], out=t)
                np.add(t, e[2], out=t)
                store(blk, t)

        self._sweep(body, consts, 0, 2, reverse=True)
        return out

    def _dy_sums(self, dy: np.ndarray, x: np.ndarray, mean: np.ndarray, apply: Any, nbuf: int,
                 consts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """sum(dy) and sum(dy * (x - mean)) per channel; ``apply(blk, db, e, bufs)`` also
        runs on each dy block (the inference gradient writes dx there)."""
        load_dy, load_x = self._loader(dy), self._loader(x)
        free = self._shift_free(x, mean)

        def body(blk, e, red, bufs):
            db = load_dy(blk, bufs[1])
            if apply is not None:
                apply(blk, db, e, bufs)
            red(0, db)
            t = bufs[0]
            if free:
                np.multiply(load_x(blk, bufs[2]), db, out=t)
            else:
                np.subtract(load_x(blk, bufs[2]), e[0], out=t)
                np.multiply(t, db, out=t)
            red(1, t)

        s_dy, s_dyx = self._sweep(body, [mean] + consts, 2, nbuf)
        if free:
            s_dyx = s_dyx - mean.astype(np.float64) * s_dy
        return s_dy.astype(np.float32), s_dyx.astype(np.float32)

    def grad_sums(self, dy: np.ndarray, x: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._dy_sums(dy, x, mean, None, 3, [])

    def grad_frozen(self, dy: np.ndarray, x: np.ndarray, mean: np.ndarray, a: np.ndarray,
                    dtype: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        out, target, store = self._output(dtype)

        def apply(blk, db, e, bufs):
            o = target(blk, bufs[3])
            np.multiply(db, e[1], out=o)
            store(blk, o)

        s_dy, s_dyxc = self._dy_sums(dy, x, mean, apply, 4, [a])
        return out, s_dy, s_dyxc

    def grad_apply(self, dy: np.ndarray, x: np.ndarray, mean: np.ndarray, a: np.ndarray, b: np.ndarray,
                   c: np.ndarray, dtype: Any) -> np.ndarray:
        """``a*dy + b*(x - mean) + c``; written ``a*dy + b*x + (c - b*mean)`` when that is as exact."""
        out, target, store = self._output(dtype)
        load_dy, load_x = self._loader(dy), self._loader(x)
        free = self._shift_free(x, mean)
        c = c.astype(np.float64) - b.astype(np.float64) * mean if free else c

        def body(blk, e, red, bufs):
            t = bufs[0]
            if free:
                np.multiply(load_x(blk, bufs[2]), e[2], out=t)
            else:
                np.subtract(load_x(blk, bufs[2]), e[0], out=t)
                np.multiply(t, e[2], out=t)
            o = target(blk, bufs[1])
            np.multiply(load_dy(blk, bufs[3]), e[1], out=o)
            np.add(o, t, out=o)
            np.add(o, e[3], out=o)
            store(blk, o)

        self._sweep(body, [mean, a, b, c], 0, 4, reverse=True)
        return out
