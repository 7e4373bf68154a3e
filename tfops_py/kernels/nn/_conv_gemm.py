"""Conv2D on NumPy as GEMMs over blocks of output rows, with an optional in-place epilogue.

The output is cut into blocks of rows of one image.  A block's patches are either a view of the
input (1x1 filter, stride 1: the block's pixels are already the GEMM's rows, nothing is copied) or
one copy out of a strided view whose innermost run is a whole filter row (``KW * C`` contiguous
values per tap row when the column dilation is 1), sized to stay in cache.  Each block is one BLAS
call writing straight into the output, then the fused epilogue (bias, batch norm, residual,
activation) runs on it while it is still in cache.  Blocks are shared out over the thread budget;
BLAS itself runs on one thread meanwhile (see ``kernels/_parallel.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.kernels._parallel import parallel_map, threads

BLOCK_BYTES = 1 << 20  # patch (or output) bytes per block: about one core's L2
MIN_ROWS = 96  # GEMM rows per block below which BLAS loses efficiency
PARALLEL_MACS = 1 << 22  # below this many multiply-adds one thread does all the blocks
Epilogue = Callable[[np.ndarray, int, int, int], None]  # (block as (rows*cols, O), image, row0, row1)
EpilogueFactory = Callable[[tuple, Any], "Epilogue | None"]  # (output shape, compute dtype) -> Epilogue


def _blocks(n: int, oh: int, ow: int, row_bytes: int) -> list[tuple[int, int, int]]:
    """(image, first row, stop row) blocks of at most BLOCK_BYTES, at least four per thread (threads pull
    blocks as they free up, so a thread another process delays holds up little), but never so thin that
    a block's GEMM has fewer than MIN_ROWS rows (each block streams the whole filter once)."""
    rows = max(1, min(oh, BLOCK_BYTES // max(1, row_bytes)))
    rows = min(rows, max(1, -(-n * oh // (4 * threads()))))
    rows = max(rows, min(oh, -(-MIN_ROWS // max(1, ow))))
    return [(i, r, min(r + rows, oh)) for i in range(n) for r in range(0, oh, rows)]


def conv2d(x: np.ndarray, f: np.ndarray, strides: tuple[int, int], dilations: tuple[int, int],
           pads: tuple[int, int, int, int], offsets: tuple[int, int], out_hw: tuple[int, int],
           epilogue: Epilogue | None = None) -> np.ndarray:
    """NHWC ``x`` (compute type) by HWIO ``f`` (trimmed to the taps that reach the input).

    ``pads`` (top, bottom, left, right) is the padding to materialise; ``offsets`` the first tap's
    (row, col) in the padded input.  Returns the (N, OH, OW, O) output."""
    n, _, _, c = x.shape
    kh, kw, _, o = f.shape
    oh, ow = out_hw
    (sh, sw), (dh, dw) = strides, dilations
    out = np.empty((n, oh, ow, o), dtype=np.result_type(x, f))
    fm = f.reshape(kh * kw * c, o)
    direct = kh == kw == 1 and sh == sw == 1 and not any(pads) and offsets == (0, 0)
    if direct:
        src = np.ascontiguousarray(x)
        inner = None
    else:
        top, bottom, left, right = pads
        src = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0))) if any(pads) else np.ascontiguousarray(x)
        src = src[:, offsets[0]:, offsets[1]:, :]
        s = src.strides
        if dw == 1:  # a tap row is KW*C contiguous values
            inner = np.lib.stride_tricks.as_strided(src, (n, oh, ow, kh, kw * c),
                                                    (s[0], s[1] * sh, s[2] * sw, s[1] * dh, s[3]), writeable=False)
        else:
            inner = np.lib.stride_tricks.as_strided(src, (n, oh, ow, kh, kw, c),
                                                    (s[0], s[1] * sh, s[2] * sw, s[1] * dh, s[2] * dw, s[3]),
                                                    writeable=False)
    row_bytes = ow * max(kh * kw * c, o) * out.itemsize
    blocks = _blocks(n, oh, ow, row_bytes)

    macs = n * oh * ow * fm.size
    parts = 1  # output-channel slices per block: few thick blocks (7x7 maps at batch 1) still use every thread
    if macs >= PARALLEL_MACS and len(blocks) < threads():
        parts = max(1, min(-(-threads() // len(blocks)), o // 64))

    def patches(i: int, r0: int, r1: int) -> np.ndarray:
        if inner is None:
            return src[i, r0:r1].reshape(-1, c)
        a = np.empty(((r1 - r0) * ow, kh * kw * c), dtype=src.dtype)
        np.copyto(a.reshape(inner[i, r0:r1].shape), inner[i, r0:r1])
        return a

    def work(k: int) -> None:
        i, r0, r1 = blocks[k]
        y = out[i, r0:r1].reshape(-1, o)
        np.matmul(patches(i, r0, r1), fm, out=y)
        if epilogue is not None:
            epilogue(y, i, r0, r1)

    if parts > 1:
        cols = [(o * j // parts, o * (j + 1) // parts) for j in range(parts)]
        inputs = [patches(*b) for b in blocks]

        def slice_work(t: int) -> None:
            k, (c0, c1) = divmod(t, parts)[0], cols[t % parts]
            i, r0, r1 = blocks[k]
            out[i, r0:r1].reshape(-1, o)[:, c0:c1] = inputs[k] @ fm[:, c0:c1]

        parallel_map(slice_work, range(len(blocks) * parts))
        if epilogue is not None:
            for i, r0, r1 in blocks:
                epilogue(out[i, r0:r1].reshape(-1, o), i, r0, r1)
    elif macs < PARALLEL_MACS:
        for k in range(len(blocks)):
            work(k)
    else:
        parallel_map(work, range(len(blocks)))
    return out
