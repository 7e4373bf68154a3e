"""Optional numba kernels (the ``[jit]`` extra) for what NumPy cannot fuse: the depthwise convolution.

NumPy spends one pass over the output per filter tap (or an einsum with no SIMD over channels); a
compiled loop keeps a pixel's channels in registers and reads each input value once per tap, then
applies the fused bias and Relu/Relu6 before storing.  The kernels release the GIL and are called
on blocks of output rows from ``_parallel``'s threads, so they share the one thread budget.
Without numba (or with ``$TFOPS_JIT=0``) ``available()`` is False and the NumPy paths run; both
are tested.  Compiled code is cached on disk, so only the first process ever pays the compile; the
loading itself happens on a background thread while the first runs take the NumPy path.
"""
from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any, cast

import numpy as np

from tfops_py.kernels._parallel import parallel_map, threads

numba: Any = None  # imported on first use, so that importing tfops_py does not load LLVM
_HAVE_NUMBA = importlib.util.find_spec("numba") is not None

ACTIVATION_CODES = {None: 0, "Relu": 1, "Relu6": 2}
_kernel: Any = None
_grads: Any = None


_ready = threading.Event()
_loading = threading.Lock()
_started = False


def available() -> bool:
    """Are the compiled kernels ready?  The first call starts loading numba and compiling (or loading
    the cached code: seconds, not milliseconds) on a background thread and says no, so the NumPy path
    serves the runs until they are; ``$TFOPS_JIT=wait`` loads them on the spot instead (the test
    suite's setting, for deterministic paths), ``$TFOPS_JIT=0`` never uses them."""
    global _started
    if _ready.is_set():
        return True
    mode = os.environ.get("TFOPS_JIT", "1")
    if not _HAVE_NUMBA or mode in ("0", ""):
        return False
    if mode == "wait":
        _load()
        return True
    if not _started:
        _started = True
        threading.Thread(target=_load, name="tfops-jit", daemon=True).start()
    return False


def wait_ready(timeout: float | None = None) -> bool:
    """Wait for a background load that ``available()`` started (benchmarks time the steady state)."""
    return _ready.wait(timeout) if _started else _ready.is_set()


def _load() -> None:
    with _loading:
        if _ready.is_set():
            return
        _compile()
        _compile_grads()
        x = np.zeros((1, 2, 2, 1), np.float32)
        w = np.zeros((1, 1, 1, 1), np.float32)
        _kernel(x, w, np.zeros(0, np.float32), 0, np.empty_like(x), 0, 1, 0, 2, 1, 1, 1, 0, 0)
        _grads[0](x, w, np.empty_like(x), 0, 1, 0, 2, 1, 1, 1, 0, 0)
        _grads[1](x, x, np.zeros((1, 1, 1), np.float32), 0, 1, 0, 2, 1, 1, 1, 0, 0)
        _ready.set()


def _numba() -> Any:
    global numba
    if numba is None:
        import numba as module

        numba = module
    return numba


def _compile() -> Any:
    global _kernel
    if _kernel is None:
        _numba()
        @numba.njit(nogil=True, cache=True, fastmath=False, boundscheck=False)
        def depthwise_rows(x, w, bias, act, out, n0, n1, r0, r1, stride, dil_r, dil_c, pad_t, pad_l):
            """out[n0:n1, r0:r1] of the depthwise conv of NHWC x by [KH, KW, C, M] w (+ bias, activation)."""
            kh_n, kw_n, c_n, m_n = w.shape
            in_h, in_w = x.shape[1], x.shape[2]
            out_w = out.shape[2]
            cm = c_n * m_n
            acc = np.empty(cm, dtype=out.dtype)
            has_bias = bias.shape[0] == cm
            for n in range(n0, n1):
                for oh in range(r0, r1):
                    for ow in range(out_w):
                        for k in range(cm):
                            acc[k] = 0
                        for kh in range(kh_n):
                            ih = oh * stride - pad_t + kh * dil_r
                            if ih < 0 or ih >= in_h:
                                continue
                            for kw in range(kw_n):
                                iw = ow * stride - pad_l + kw * dil_c
                                if iw < 0 or iw >= in_w:
                                    continue
                                xv = x[n, ih, iw]  # contiguous C values: the loops below vectorize
                                wv = w[kh, kw]
                                if m_n == 1:
                                    for c in range(c_n):
                                        acc[c] += xv[c] * wv[c, 0]
                                else:
                                    for c in range(c_n):
                                        for m in range(m_n):
                                            acc[c * m_n + m] += xv[c] * wv[c, m]
                        for k in range(cm):
                            v = acc[k]
                            if has_bias:
                                v += bias[k]
                            if act == 1:
                                v = max(v, 0) if not np.isnan(v) else v
                            elif act == 2:
                                v = min(max(v, 0), 6) if not np.isnan(v) else v
                            out[n, oh, ow, k] = v

        _kernel = depthwise_rows
    return _kernel


ROW_WORK = 1 << 16  # multiply-adds per block of rows handed to one thread


def depthwise_forward(x: np.ndarray, w: np.ndarray, g: Any, out: np.ndarray, bias: np.ndarray | None = None,
                      activation: str | None = None) -> None:
    """Fill NHWC ``out`` (x's float type) for geometry ``g`` (``_depthwise_conv_impl.Geometry``)."""
    kernel = _compile()
    x = np.ascontiguousarray(x)
    w = np.ascontiguousarray(w, dtype=out.dtype)
    b = np.ascontiguousarray(bias, dtype=out.dtype) if bias is not None else np.zeros(0, out.dtype)
    act = ACTIVATION_CODES[activation]
    per_row = g.out_cols * g.depth * g.multiplier * g.filter_rows * g.filter_cols
    rows = max(1, ROW_WORK // max(1, per_row))
    blocks = [(n, r, min(r + rows, g.out_rows)) for n in range(g.batch) for r in range(0, g.out_rows, rows)]
    if len(blocks) < 2 * threads() and rows > 1:  # at least two blocks per thread
        rows = max(1, -(-g.batch * g.out_rows // (2 * threads())))
        blocks = [(n, r, min(r + rows, g.out_rows)) for n in range(g.batch) for r in range(0, g.out_rows, rows)]

    def work(block: tuple[int, int, int]) -> None:
        n, r0, r1 = block
        kernel(x, w, b, act, out, n, n + 1, r0, r1, g.stride, g.dil_rows, g.dil_cols, g.pad_top, g.pad_left)

    if len(blocks) == 1 or g.batch * g.out_rows * per_row < 4 * ROW_WORK:
        kernel(x, w, b, act, out, 0, g.batch, 0, g.out_rows, g.stride, g.dil_rows, g.dil_cols, g.pad_top,
               g.pad_left)
    else:
        parallel_map(work, blocks)


def _compile_grads() -> Any:
    global _grads
    if _grads is None:
        _numba()
        @numba.njit(nogil=True, cache=True, fastmath=False, boundscheck=False)
        def input_rows(dy, w, dx, n0, n1, r0, r1, stride, dil_r, dil_c, pad_t, pad_l):
            """dx[n0:n1, r0:r1] (gather form: each input pixel sums the taps that read it)."""
            kh_n, kw_n, c_n, m_n = w.shape
            out_h, out_w = dy.shape[1], dy.shape[2]
            in_w = dx.shape[2]
            acc = np.empty(c_n, dtype=dx.dtype)
            for n in range(n0, n1):
                for ih in range(r0, r1):
                    for iw in range(in_w):
                        for c in range(c_n):
                            acc[c] = 0
                        for kh in range(kh_n):
                            t = ih + pad_t - kh * dil_r
                            if t < 0 or t % stride != 0 or t // stride >= out_h:
                                continue
                            oh = t // stride
                            for kw in range(kw_n):
                                u = iw + pad_l - kw * dil_c
                                if u < 0 or u % stride != 0 or u // stride >= out_w:
                                    continue
                                dv = dy[n, oh, u // stride]
                                wv = w[kh, kw]
                                if m_n == 1:
                                    for c in range(c_n):
                                        acc[c] += dv[c] * wv[c, 0]
                                else:
                                    for c in range(c_n):
                                        for m in range(m_n):
                                            acc[c] += dv[c * m_n + m] * wv[c, m]
                        for c in range(c_n):
                            dx[n, ih, iw, c] = acc[c]

        @numba.njit(nogil=True, cache=True, fastmath=False, boundscheck=False)
        def filter_rows(x, dy, total, n0, n1, r0, r1, stride, dil_r, dil_c, pad_t, pad_l):
            """total[KH, KW, C*M] += the filter gradient of output rows r0:r1 of images n0:n1."""
            kh_n, kw_n, cm = total.shape
            in_h, in_w, c_n = x.shape[1], x.shape[2], x.shape[3]
            m_n = cm // c_n
            out_w = dy.shape[2]
            for n in range(n0, n1):
                for oh in range(r0, r1):
                    for ow in range(out_w):
                        dv = dy[n, oh, ow]
                        for kh in range(kh_n):
                            ih = oh * stride - pad_t + kh * dil_r
                            if ih < 0 or ih >= in_h:
                                continue
                            for kw in range(kw_n):
                                iw = ow * stride - pad_l + kw * dil_c
                                if iw < 0 or iw >= in_w:
                                    continue
                                xv = x[n, ih, iw]
                                tv = total[kh, kw]
                                if m_n == 1:
                                    for c in range(c_n):
                                        tv[c] += xv[c] * dv[c]
                                else:
                                    for c in range(c_n):
                                        for m in range(m_n):
                                            tv[c * m_n + m] += xv[c] * dv[c * m_n + m]

        _grads = (input_rows, filter_rows)
    return _grads


def _row_blocks(n: int, rows: int, per_row: int) -> list[tuple[int, int, int]]:
    """(image, first row, stop row) blocks of about ROW_WORK multiply-adds, two per thread at least."""
    size = max(1, ROW_WORK // max(1, per_row))
    if n * -(-rows // size) < 2 * threads():
        size = max(1, -(-n * rows // (2 * threads())))
    return [(i, r, min(r + size, rows)) for i in range(n) for r in range(0, rows, size)]


def depthwise_backprop_input(w: np.ndarray, dy: np.ndarray, g: Any, out: np.ndarray) -> None:
    """Fill NHWC ``out`` [N, H, W, C] with the input gradient (``out``'s float type)."""
    input_rows, _ = _compile_grads()
    dy = np.ascontiguousarray(dy, dtype=out.dtype)
    w = np.ascontiguousarray(w, dtype=out.dtype)
    per_row = g.in_cols * g.depth * g.multiplier * g.filter_rows * g.filter_cols // max(1, g.stride * g.stride)
    args = (g.stride, g.dil_rows, g.dil_cols, g.pad_top, g.pad_left)
    if g.batch * g.in_rows * per_row < 4 * ROW_WORK:
        input_rows(dy, w, out, 0, g.batch, 0, g.in_rows, *args)
        return
    parallel_map(lambda b: input_rows(dy, w, out, b[0], b[0] + 1, b[1], b[2], *args),
                 _row_blocks(g.batch, g.in_rows, per_row))


def depthwise_backprop_filter(x: np.ndarray, dy: np.ndarray, g: Any, dtype: Any) -> np.ndarray:
    """The filter gradient [KH, KW, C, M] in float64: each block of rows is summed in the compute type
    (as the NumPy path and TF do), the blocks in float64."""
    _, filter_rows = _compile_grads()
    x = np.ascontiguousarray(x, dtype=dtype)
    dy = np.ascontiguousarray(dy, dtype=dtype)
    cm = g.depth * g.multiplier
    per_row = g.out_cols * cm * g.filter_rows * g.filter_cols
    args = (g.stride, g.dil_rows, g.dil_cols, g.pad_top, g.pad_left)

    def block(b: tuple[int, int, int]) -> np.ndarray:
        total = np.zeros((g.filter_rows, g.filter_cols, cm), dtype)
        filter_rows(x, dy, total, b[0], b[0] + 1, b[1], b[2], *args)
        return total.astype(np.float64)

    if g.batch * g.out_rows * per_row < 4 * ROW_WORK:
        parts = [block((0, 0, g.out_rows))] if g.batch == 1 else [block((i, 0, g.out_rows)) for i in range(g.batch)]
    else:
        blocks = _row_blocks(g.batch, g.out_rows, per_row)
        k = max(1, len(blocks) // threads())  # one partial sum per thread-sized run of blocks
        runs = [blocks[i:i + k] for i in range(0, len(blocks), k)]
        parts = parallel_map(lambda run: sum(block(b) for b in run), runs)
    return cast(np.ndarray, sum(parts)).reshape(g.filter_rows, g.filter_cols, g.depth, g.multiplier)
