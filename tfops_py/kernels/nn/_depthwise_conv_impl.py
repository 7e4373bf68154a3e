"""Depthwise-convolution arithmetic on NHWC arrays: generic array-API passes and NumPy fast paths.

Every function here gets validated geometry and non-empty operands; the op module
(``depthwise_conv.py``) does the checks, the layout (NCHW arrives as transposed
views) and the dtype policy (half and bfloat16 are computed in float32).

Index conventions (rows; columns alike), with ``s`` the stride, ``d`` the dilation
and ``pt`` the padding before::

    y[n, i, j, c*M + m] = sum_{fr, fc} xpad[n, i*s + fr*d, j*s + fc*d, c] * w[fr, fc, c, m]
    xpad[p] = x[p - pt]  (zero outside the input)

The generic passes loop over the filter taps only; the NumPy paths do the same on
chunks (a few images, or bands of rows), pulled by the worker threads.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import numpy as np

from tfops_py.kernels._parallel import parallel_map, threads


class Geometry(NamedTuple):
    """One depthwise convolution, in NHWC terms, after every check has passed."""

    batch: int
    in_rows: int
    in_cols: int
    depth: int  # input channels C
    filter_rows: int
    filter_cols: int
    multiplier: int  # M; output channels are C*M, channel c*M + m
    out_rows: int
    out_cols: int
    stride: int
    dil_rows: int
    dil_cols: int
    pad_top: int
    pad_left: int


# ---------------------------------------------------------------------------------------------
# Generic passes (array API only)
# ---------------------------------------------------------------------------------------------

def _place(xp: Any, x: Any, axis: int, before: int, length: int) -> Any:
    """``x`` put at offset ``before`` of a zero array ``length`` long along ``axis`` (overhang cropped)."""
    n = x.shape[axis]
    start, stop = max(0, -before), min(n, length - before)
    if stop <= start:
        shape = list(x.shape)
        shape[axis] = length
        return xp.zeros(tuple(shape), dtype=x.dtype)
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, stop)
    x = x[tuple(index)]
    head, tail = max(0, before), length - max(0, before) - (stop - start)
    parts = []
    for size in (head, None, tail):
        if size is None:
            parts.append(x)
        elif size > 0:
            shape = list(x.shape)
            shape[axis] = size
            parts.append(xp.zeros(tuple(shape), dtype=x.dtype))
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=axis)


def _upsample(xp: Any, x: Any, axis: int, s: int) -> Any:
    """Insert ``s - 1`` zeros between neighbours along ``axis``: length n becomes (n - 1)*s + 1."""
    if s == 1:
        return x
    shape = list(x.shape)
    n = shape[axis]
    gap = shape[:axis + 1] + [s - 1] + shape[axis + 1:]
    out = xp.concat([xp.expand_dims(x, axis=axis + 1), xp.zeros(tuple(gap), dtype=x.dtype)],
                    axis=axis + 1)  # [.., n, s, ..]
    shape[axis] = n * s
    out = xp.reshape(out, tuple(shape))
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, (n - 1) * s + 1)
    return out[tuple(index)]


def _padded_input(xp: Any, x: Any, g: Geometry) -> Any:
    """xpad cut to exactly the rows and columns the output windows read."""
    rows = (g.out_rows - 1) * g.stride + (g.filter_rows - 1) * g.dil_rows + 1
    cols = (g.out_cols - 1) * g.stride + (g.filter_cols - 1) * g.dil_cols + 1
    return _place(xp, _place(xp, x, 1, g.pad_top, rows), 2, g.pad_left, cols)


def _tap(xpad: Any, g: Geometry, fr: int, fc: int) -> Any:
    """The [N, OH, OW, C] input samples that filter tap (fr, fc) multiplies."""
    s, r0, c0 = g.stride, fr * g.dil_rows, fc * g.dil_cols
    return xpad[:, r0:r0 + (g.out_rows - 1) * s + 1:s, c0:c0 + (g.out_cols - 1) * s + 1:s, :]


def forward(xp: Any, x: Any, w: Any, g: Geometry) -> Any:
    """y [N, OH, OW, C*M] from x [N, H, W, C] and w [KH, KW, C, M]."""
    xpad = _padded_input(xp, x, g)
    acc = None
    for fr in range(g.filter_rows):
        for fc in range(g.filter_cols):
            term = _tap(xpad, g, fr, fc)[..., None] * w[fr, fc, ...]
            acc = term if acc is None else acc + term
    return xp.reshape(acc, (g.batch, g.out_rows, g.out_cols, g.depth * g.multiplier))


def backprop_input(xp: Any, w: Any, dy: Any, g: Geometry) -> Any:
    """dx [N, H, W, C]: dx[r] = sum_fr dyup[r + pt - fr*d] w[fr], dyup = dy with s-1 zeros between rows."""
    dy5 = xp.reshape(dy, (g.batch, g.out_rows, g.out_cols, g.depth, g.multiplier))
    up = _upsample(xp, _upsample(xp, dy5, 1, g.stride), 2, g.stride)
    br = max(0, (g.filter_rows - 1) * g.dil_rows - g.pad_top)
    bc = max(0, (g.filter_cols - 1) * g.dil_cols - g.pad_left)
    e = _place(xp, _place(xp, up, 1, br, g.in_rows + g.pad_top + br), 2, bc, g.in_cols + g.pad_left + bc)
    acc = None
    for fr in range(g.filter_rows):
        r0 = g.pad_top - fr * g.dil_rows + br
        for fc in range(g.filter_cols):
            c0 = g.pad_left - fc * g.dil_cols + bc
            term = e[:, r0:r0 + g.in_rows, c0:c0 + g.in_cols, ...] * w[fr, fc, ...]
            acc = term if acc is None else acc + term
    return xp.sum(acc, axis=-1)


def backprop_filter(xp: Any, x: Any, dy: Any, g: Geometry) -> Any:
    """dw [KH, KW, C, M] = sum over batch and output positions of tap samples times dy."""
    xpad = _padded_input(xp, x, g)
    dy5 = xp.reshape(dy, (g.batch, g.out_rows, g.out_cols, g.depth, g.multiplier))
    taps = [xp.sum(_tap(xpad, g, fr, fc)[..., None] * dy5, axis=(0, 1, 2))
            for fr in range(g.filter_rows) for fc in range(g.filter_cols)]
    return xp.reshape(xp.stack(taps), (g.filter_rows, g.filter_cols, g.depth, g.multiplier))


# ---------------------------------------------------------------------------------------------
# NumPy fast paths
#
# Work is cut into chunks (a few images, or a band of rows when images are large or too few to
# keep every thread busy) that the worker threads pull one at a time, so a core busy with
# something else delays only the chunk it holds; each thread keeps its buffers for the call.
# A chunk is copied once into a zero-padded buffer in which every filter tap is a strided view
# whose innermost run is a whole output row, and the taps are summed by np.einsum, which keeps
# the running sum in its loop: one pass per tap where multiply-then-add needs two.
#
# Strides: rows need nothing (a row stride is a view stride).  Columns are grouped in tuples of
# s (padded column P = T*s + h: tuple T, lane h); tap f of output column j reads column
# j*s + f*d = (j + u)*s + h, lane h of tuple j + u.
# * Gradients: over (column, lane, channel) each tap is then one unit-stride run, taps differing
#   only by u, so one einsum takes them all, lanes a tuple offset does not read weighted 0
#   (stride 2, 3 taps: 2 offsets x 2 lanes, 4 lane-taps per column instead of 3); dy is copied
#   repeated over the lanes, and the input gradient writes whole rows of dx.
# * Forward: the copy keeps each lane's columns together (lane-major rows); one einsum per lane
#   over the taps reading it, the lanes' results added.
# For the gradients this replaced phase-split copies of x (a strided pass with channel-long runs)
# and, for dx, strided scatters of per-phase results.  Lanes no tap reads are not stored (strides
# larger than the filter), so the extra work stays bounded.
# ---------------------------------------------------------------------------------------------

CHUNK_BYTES = 1 << 22  # target working set of one chunk: einsum is compute-bound, so L2 residency (1 MiB per
# core here) matters less than the per-chunk costs (halo rows, Python calls): 4 MiB measured 10-25% faster than 1 MiB
PARALLEL_BYTES = 1 << 22  # calls moving less run on the calling thread, in one chunk: splitting a
# [1,56,56,64] image (0.2-0.5 ms of work) over two threads measured 1.5-2x slower on this shared machine


class _Lanes(NamedTuple):
    """Column taps as (tuple offset, lane): filter column f reads padded column (j + u)*s + h for
    output column j, with u = a*ustep (a < nu) and h = l*hstep (l < nl), ``taps[f] == (a, l)``."""

    s: int
    nu: int
    ustep: int
    nl: int
    hstep: int
    taps: tuple[tuple[int, int], ...]


def _lanes(s: int, k: int, d: int) -> _Lanes:
    pos = [f * d for f in range(k)]
    us, hs = sorted({p // s for p in pos}), sorted({p % s for p in pos})
    ustep = math.gcd(*(b - a for a, b in zip(us, us[1:]))) or 1
    hstep = math.gcd(*(b - a for a, b in zip(hs, hs[1:]))) or 1
    return _Lanes(s, us[-1] // ustep + 1, ustep, hs[-1] // hstep + 1, hstep,
                  tuple(((p // s) // ustep, (p % s) // hstep) for p in pos))


def _lane_weights(w: np.ndarray, lanes: _Lanes, ct: np.dtype, tuples: int) -> np.ndarray:
    """w [KH, KW, C, M] as [KH, nu, tuples*nl*C*M]: the weight of each (tuple, lane, channel) of a run
    for every tap row and tuple offset (0 where that offset reads no tap in that lane)."""
    kh, cm = w.shape[0], w.shape[2] * w.shape[3]
    wl = np.zeros((kh, lanes.nu, 1, lanes.nl, cm), ct)
    for f, (a, l) in enumerate(lanes.taps):
        wl[:, a, 0, l] = w[:, f].reshape(kh, cm)
    return np.tile(wl, (1, 1, tuples, 1, 1)).reshape(kh, lanes.nu, -1)


def _progression(values: list[int]) -> tuple[int, int]:
    """(first, step) of an arithmetic progression (step 1 for a single value)."""
    step = values[1] - values[0] if len(values) > 1 else 1
    assert all(b - a == step for a, b in zip(values, values[1:])), values
    return values[0], step


def _chunks(n: int, rows: int, row_bytes: int, halo_bytes: int) -> tuple[int, int, list[tuple[int, int, int, int]]]:
    """(images per chunk, rows per chunk, [(n0, m, r0, r1)]) covering n images of ``rows`` rows, a band
    of R rows of one image costing about R*row_bytes + halo_bytes: whole images while one fits
    CHUNK_BYTES, else bands of rows; bands too when the images are too few to keep the threads busy."""
    image = max(1, rows * row_bytes + halo_bytes)
    want = 2 * threads() if n * image >= PARALLEL_BYTES else 1
    nb = max(1, min(n, CHUNK_BYTES // image, n // want))
    band = rows
    if nb == 1:
        bands = max(-(-rows * row_bytes // max(1, CHUNK_BYTES - halo_bytes)), -(-want // n))
        band = -(-rows // min(rows, bands))
    return nb, band, [(n0, min(nb, n - n0), r0, min(rows, r0 + band))
                      for n0 in range(0, n, nb) for r0 in range(0, rows, band)]


def _run(chunks: list, make_state: Callable[[], Any], work: Callable[..., None]) -> list:
    """``work(state, *chunk)`` for every chunk, the worker threads pulling chunks as they finish one;
    each makes its ``state`` (buffers) once.  Returns the states."""
    lock, it = threading.Lock(), iter(chunks)

    def worker(_: int) -> Any:
        state = make_state()
        while True:
            with lock:
                chunk = next(it, None)
            if chunk is None:
                return state
            work(state, *chunk)

    return parallel_map(worker, range(min(threads(), len(chunks))))


def _store(dst: np.ndarray, src: np.ndarray, ct: np.dtype) -> None:
    """dst [..., C] = src [..., C, M] summed over M (cast to dst's dtype)."""
    if src.shape[-1] == 1:
        np.copyto(dst, src[..., 0], casting="unsafe")
    elif dst.dtype == ct:
        np.sum(src, axis=-1, out=dst)
    else:
        np.copyto(dst, src.sum(axis=-1), casting="unsafe")


def _copy(dst: np.ndarray, src: np.ndarray) -> None:
    """np.copyto(dst, src, casting="unsafe"), each run of channels moved as one element when dtypes match and
    channels are contiguous: NumPy's strided copy then takes one step per pixel, not per channel (copies
    with channel-long runs, such as a lane split, 15-20% faster)."""
    if (dst.dtype == src.dtype and dst.ndim == src.ndim and dst.shape[-1] == src.shape[-1] > 1
            and dst.strides[-1] == src.strides[-1] == dst.itemsize):
        pixel = np.dtype((np.void, dst.shape[-1] * dst.itemsize))
        dst, src = dst.view(pixel)[..., 0], src.view(pixel)[..., 0]
    np.copyto(dst, src, casting="unsafe")


class _Input:
    """The zero-padded copy of a band of x that the forward and the filter gradient read: buffer
    [nb, padded rows, tuples*nl*C*M] (channels repeated M times, borders zeroed once), each row either
    tuple-major ([tuple, lane, channel]: the padded row itself when lanes are whole tuples) or
    lane-major ([lane, tuple, channel]: one run of columns per lane, like a phase split)."""

    def __init__(self, g: Geometry, lane_major: bool = False):
        self.g, self.lanes = g, _lanes(g.stride, g.filter_cols, g.dil_cols)
        self.cm = g.depth * g.multiplier
        self.tuples = g.out_cols + (self.lanes.nu - 1) * self.lanes.ustep
        self.width = self.tuples * self.lanes.nl * self.cm
        self.lane_major = lane_major and self.lanes.nl > 1
        # element (tuple T, lane l, channel) of a row is at T*tuple_pitch + l*lane_pitch + channel
        self.tuple_pitch = self.cm if self.lane_major else self.lanes.nl * self.cm
        self.lane_pitch = self.tuples * self.cm if self.lane_major else self.cm
        self.run = g.out_cols * self.tuple_pitch  # a tap's run: one output row of (column, [lane,] channel)

    def rows(self, band: int) -> int:
        return (band - 1) * self.g.stride + (self.g.filter_rows - 1) * self.g.dil_rows + 1

    def chunks(self, itemsize: int, out_row: int) -> tuple[int, int, list]:
        g = self.g
        return _chunks(g.batch, g.out_rows, (g.stride * self.width + out_row) * itemsize,
                       ((g.filter_rows - 1) * g.dil_rows + 1 - g.stride) * self.width * itemsize)

    def buffer(self, nb: int, band: int, ct: np.dtype) -> np.ndarray:
        return np.zeros((nb, self.rows(band), self.width), ct)

    def fill(self, buf: np.ndarray, x: np.ndarray, n0: int, m: int, i0: int, i1: int) -> None:
        """Copy the input rows that output rows [i0, i1) of images [n0, n0 + m) read."""
        g, lanes, rows = self.g, self.lanes, self.rows(i1 - i0)
        p0 = i0 * g.stride - g.pad_top  # input row of buffer row 0
        v0, v1 = min(rows, max(0, -p0)), max(0, min(rows, g.in_rows - p0))
        buf[:m, :v0] = 0  # padding rows (may hold another band's data)
        buf[:m, max(v0, v1):rows] = 0
        if v1 <= v0:
            return
        src = x[n0:n0 + m, p0 + v0:p0 + v1]
        # [..., C] (M == 1) or [..., C, M] from [..., C, 1]: channels repeated M times
        chan, src = ((g.depth,), src) if g.multiplier == 1 else ((g.depth, g.multiplier), src[..., None])
        dst = buf[:m, v0:v1]
        if lanes.nl == lanes.s and not self.lane_major:  # the row is the padded row: one contiguous copy
            dst = dst.reshape(m, v1 - v0, self.tuples * lanes.s, *chan)
            hi = min(self.tuples * lanes.s, g.pad_left + g.in_cols)
            if hi > g.pad_left:
                _copy(dst[:, :, g.pad_left:hi], src[:, :, :hi - g.pad_left])
            return
        dst = dst.reshape(m, v1 - v0, *((lanes.nl, self.tuples) if self.lane_major else (self.tuples, lanes.nl)), *chan)
        for l in range(lanes.nl):
            h = l * lanes.hstep
            t0 = max(0, -((h - g.pad_left) // lanes.s))  # first tuple whose lane l is an input column
            t1 = min(self.tuples, (g.in_cols - 1 + g.pad_left - h) // lanes.s + 1)
            if t1 > t0:
                q0 = t0 * lanes.s + h - g.pad_left
                lane = dst[:, :, l] if self.lane_major else dst[:, :, :, l]
                _copy(lane[:, :, t0:t1], src[:, :, q0:q0 + (t1 - t0 - 1) * lanes.s + 1:lanes.s])

    def taps(self, buf: np.ndarray, m: int, band: int, lane: int = 0, a0: int = 0, astep: int = 1,
             na: int | None = None) -> np.ndarray:
        """View [KH, na, m, band, run]: tap row, tuple offset (a0 + i*astep)*ustep, image, output row, and
        the run from ``lane`` on (all lanes of a tuple-major row)."""
        g, st, item = self.g, buf.strides, buf.itemsize
        step = self.lanes.ustep * self.tuple_pitch * item
        return np.ndarray((g.filter_rows, self.lanes.nu if na is None else na, m, band, self.run), buf.dtype, buf,
                          lane * self.lane_pitch * item + a0 * step,
                          (g.dil_rows * st[1], astep * step, st[0], g.stride * st[1], st[2]))


def forward_np(x: np.ndarray, w: np.ndarray, g: Geometry, out: np.ndarray, ct: np.dtype) -> None:
    """Fill out [N, OH, OW, C*M] (an NHWC view of any strides) with the convolution of x (NHWC view).

    Lane-major copy of x; per lane, one einsum over the taps that read it (no zero weights) into out's
    rows, the lanes' results added (a contiguous pass).  Tuple-major rows with zero weights where a tap
    offset reads no tap measured 10-15% slower at stride 2: their lane sum is a pass with C*M-element
    runs.  At stride 1 there is one lane and the two are the same.
    """
    inp = _Input(g, lane_major=True)
    lanes = inp.lanes
    plans = []  # per lane read: (lane, first tuple offset, step, count, weights [KH, count, run])
    for l in range(lanes.nl):
        fs = [f for f, (_, fl) in enumerate(lanes.taps) if fl == l]
        if fs:
            a0, astep = _progression([lanes.taps[f][0] for f in fs])
            wl = np.stack([w[:, f].reshape(g.filter_rows, inp.cm) for f in fs], axis=1).astype(ct)
            plans.append((l, a0, astep, len(fs), np.tile(wl, (1, 1, g.out_cols))))
    direct = out.dtype == ct and out.flags.c_contiguous  # einsum writes out's rows
    nb, band, chunks = inp.chunks(ct.itemsize, inp.run)

    def state() -> tuple[np.ndarray, np.ndarray]:  # padded x; [accumulator if not direct, term if several lanes]
        return inp.buffer(nb, band, ct), np.empty(((not direct) + (len(plans) > 1), nb, band, inp.run), ct)

    def work(st: tuple[np.ndarray, np.ndarray], n0: int, m: int, i0: int, i1: int) -> None:
        buf, scratch = st
        inp.fill(buf, x, n0, m, i0, i1)
        dst = out[n0:n0 + m, i0:i1]
        acc = dst.reshape(m, i1 - i0, -1) if direct else scratch[0, :m, :i1 - i0]
        for i, (l, a0, astep, na, wl) in enumerate(plans):
            term = acc if i == 0 else scratch[-1, :m, :i1 - i0]
            np.einsum("abnrk,abk->nrk", inp.taps(buf, m, i1 - i0, l, a0, astep, na), wl, out=term)
            if i:
                np.add(acc, term, out=acc)
        if not direct:
            np.copyto(dst, acc.reshape(dst.shape), casting="unsafe")

    _run(chunks, state, work)


def backprop_filter_np(x: np.ndarray, dy: np.ndarray, g: Geometry, ct: np.dtype) -> np.ndarray:
    """dw [KH, KW, C, M] in float64 from x and dy (NHWC views of any strides and float dtype)."""
    inp = _Input(g)
    lanes = inp.lanes
    direct = lanes.nl == 1 and dy.dtype == ct and dy.flags.c_contiguous
    nb, band, chunks = inp.chunks(ct.itemsize, inp.run)

    def state() -> tuple[np.ndarray, ...]:  # padded x; dy repeated over lanes; chunk sums; float64 running sums
        sums = np.empty((g.filter_rows, lanes.nu, inp.run), ct)
        return (inp.buffer(nb, band, ct), np.empty((0 if direct else nb, band, inp.run), ct), sums,
                np.zeros(sums.shape, np.float64))

    def work(st: tuple[np.ndarray, ...], n0: int, m: int, i0: int, i1: int) -> None:
        buf, dbuf, sums, total = st
        inp.fill(buf, x, n0, m, i0, i1)
        src = dy[n0:n0 + m, i0:i1]
        if direct:
            d = src.reshape(m, i1 - i0, -1)
        else:
            d = dbuf[:m, :i1 - i0]
            _copy(d.reshape(m, i1 - i0, g.out_cols, lanes.nl, inp.cm), src[:, :, :, None])
        np.einsum("abnrk,nrk->abk", inp.taps(buf, m, i1 - i0), d, out=sums)
        np.add(total, sums, out=total)  # a chunk is summed in the compute type, the chunks in float64

    total = cast(np.ndarray, sum(st[3] for st in _run(chunks, state, work)))
    total = total.reshape(g.filter_rows, lanes.nu, g.out_cols, lanes.nl, inp.cm).sum(axis=2)
    dw = np.empty((g.filter_rows, g.filter_cols, inp.cm), np.float64)
    for f, (a, l) in enumerate(lanes.taps):
        dw[:, f] = total[:, a, l]
    return dw.reshape(g.filter_rows, g.filter_cols, g.depth, g.multiplier)


def backprop_input_np(w: np.ndarray, dy: np.ndarray, g: Geometry, out: np.ndarray, ct: np.dtype) -> None:
    """Fill out [N, H, W, C] (an NHWC view of any strides) with the input gradient.

    Gather form: dx row r gets the taps fr with r + pt = i*s + fr*d (its row phase); in columns, dx
    column q at padded column q + pl = T*s + h gets dy column T - u times the weight of the tap
    at (u, h), from a zero-padded copy of dy repeated over the lanes, so one einsum per row phase
    writes whole dx rows.
    """
    s, cm = g.stride, g.depth * g.multiplier
    lanes = _lanes(s, g.filter_cols, g.dil_cols)
    nl, pl = lanes.nl, g.pad_left
    full = nl == s  # every padded column is a lane: a run of (tuple, lane) is a run of dx columns
    tpad = (lanes.nu - 1) * lanes.ustep  # zero tuples before dy's first column
    if full:
        k0, k1 = pl, pl + g.in_cols  # (tuple, lane) positions computed, flattened
    else:
        k0 = max(0, -(((nl - 1) * lanes.hstep - pl) // s)) * nl
        k1 = ((pl + g.in_cols - 1) // s + 1) * nl
    tuples = (k1 - 1) // nl + tpad + 1
    width, run = tuples * nl * cm, (k1 - k0) * cm
    wt = _lane_weights(w, lanes, ct, tuples)[:, :, k0 * cm:k1 * cm]
    by_phase: dict[int, list[int]] = {}
    for fr in range(g.filter_rows):
        by_phase.setdefault((fr * g.dil_rows) % s, []).append(fr)
    phases = [(ph, *_progression(frs), len(frs)) for ph, frs in sorted(by_phase.items())]
    seen = min(g.in_rows, s)  # row phases of dx rows
    complete = seen <= len(by_phase) and all((r + g.pad_top) % s in by_phase for r in range(seen))
    direct = full and g.multiplier == 1 and out.dtype == ct and out.flags.c_contiguous
    reach = (g.filter_rows - 1) * g.dil_rows
    item = ct.itemsize
    nb, band, chunks = _chunks(g.batch, g.in_rows, (width // s + run) * item, (reach // s + 2) * width * item)

    def state() -> tuple[np.ndarray, np.ndarray]:
        return (np.zeros((nb, (band - 1 + reach) // s + 2, width), ct),
                np.empty((0 if direct else nb, band, run), ct))

    def work(st: tuple[np.ndarray, np.ndarray], n0: int, m: int, r0: int, r1: int) -> None:
        buf, scratch = st
        i0 = (r0 + g.pad_top - reach) // s  # dy row of buffer row 0
        rows = (r1 - 1 + g.pad_top) // s + 1 - i0
        v0, v1 = min(rows, max(0, -i0)), max(0, min(rows, g.out_rows - i0))
        buf[:m, :v0] = 0
        buf[:m, max(v0, v1):rows] = 0
        cols = min(g.out_cols, tuples - tpad)
        if v1 > v0 and cols > 0:
            dst = buf[:m, v0:v1].reshape(m, v1 - v0, tuples, nl, cm)[:, :, tpad:tpad + cols]
            _copy(dst, dy[n0:n0 + m, i0 + v0:i0 + v1, :cols, None, :])
        dx = out[n0:n0 + m, r0:r1]
        acc = dx if direct else scratch[:m, :r1 - r0]
        if not complete:
            acc[...] = 0  # rows no tap reaches
        st2 = buf.strides
        for ph, f0, fstep, nf in phases:
            first = r0 + (ph - r0 - g.pad_top) % s  # first row of the band in this phase
            nr = len(range(first, r1, s))
            if nr == 0:
                continue
            row = (first + g.pad_top - f0 * g.dil_rows) // s - i0
            view = np.ndarray((nf, lanes.nu, m, nr, run), ct, buf, row * st2[1] + (k0 + tpad * nl) * cm * st2[2],
                              (-(fstep * g.dil_rows // s) * st2[1], -lanes.ustep * nl * cm * st2[2], st2[0], st2[1],
                               st2[2]))
            target = acc[:, first - r0::s]
            np.einsum("abnrk,abk->nrk", view, wt[f0:f0 + (nf - 1) * fstep + 1:fstep],
                      out=target.reshape(m, nr, -1))
        if direct:
            return
        if full:
            _store(dx, acc.reshape(m, r1 - r0, g.in_cols, g.depth, g.multiplier), ct)
            return
        dx[...] = 0  # columns in lanes no tap reaches
        acc6 = acc.reshape(m, r1 - r0, (k1 - k0) // nl, nl, g.depth, g.multiplier)
        for l in range(nl):
            h = l * lanes.hstep
            t0 = max(k0 // nl, -((h - pl) // s))
            t1 = min(k1 // nl, (g.in_cols - 1 + pl - h) // s + 1)
            if t1 > t0:
                q0 = t0 * s + h - pl
                _store(dx[:, :, q0:q0 + (t1 - t0 - 1) * s + 1:s], acc6[:, :, t0 - k0 // nl:t1 - k0 // nl, l], ct)

    _run(chunks, state, work)
