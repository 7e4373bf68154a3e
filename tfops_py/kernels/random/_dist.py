"""TF's random distributions over Philox blocks (``random_distributions.h``, ``random_op_cpu.h``), vectorised.

A *fixed* distribution turns each Philox block into a fixed number of outputs (a *group*): four float32,
half, bfloat16 or int32 values (one word each), two float64 or int64 values (two words each), four
normals from two Box-Muller pairs, two float64 normals from one.  TF fills the output group after group
from consecutive blocks, so output ``i`` depends only on its block: :func:`generate` computes every
block at once (on NumPy in cache-sized chunks on every core) and keeps the first ``n`` outputs.

The truncated normal rejects candidates, so TF gives every group of outputs its own stretch of 256
blocks per output (``kReservedSamplesPerOutput``) and reads it word by word until the group is full:
:func:`truncated_normal` draws a few candidate pairs for every group at once and draws more only for
the groups still short.

Transforms are exact: a uniform float is its mantissa bits times a power of two (TF builds ``1.m`` and
subtracts one), Box-Muller uses the C library's ``log`` and ``sincos`` (``_libm``) in TF's precision.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DataType
from tfops_py.kernels import _philox
from tfops_py.kernels._parallel import parallel_for
from tfops_py.kernels._philox import Philox
from tfops_py.kernels.random import _libm

F16, BF16, F32, F64 = DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE
I32, I64, U32, U64 = DataType.DT_INT32, DataType.DT_INT64, DataType.DT_UINT32, DataType.DT_UINT64
TWO_PI = 2.0 * math.pi
_EPS32 = float(np.float32(1.0e-7))  # Box-Muller's floor for u1 (float32 1e-7f)
_EPS64 = 1.0e-7
_CHUNK = 8192  # blocks per NumPy chunk
_TRUNCATE = 2.0  # |x| < 2 for the truncated normal
RESERVED_PER_OUTPUT = 256  # blocks TF reserves per output of a variable-sample distribution

Transform = Callable[[Any, Any], Any]  # (xp, uint32 words) -> outputs


def _wide(dt: DataType) -> bool:
    """Whether the type takes two words per value (float64, int64, uint64)."""
    return dt in (F64, I64, U64)


def per_block(dt: DataType) -> int:
    return 2 if _wide(dt) else 4


def _pairs(xp: Any, w: Any, width: int) -> tuple[Any, ...]:
    """The words as ``width`` interleaved columns: ``w[width*i + j]`` is column j, row i."""
    grid = xp.reshape(w, (-1, width))
    return tuple(grid[:, j] for j in range(width))


def _u64(xp: Any, w: Any) -> Any:
    return xp.astype(w, xp.uint64)


# -- uniform ------------------------------------------------------------------------------------------
def unit_float32(xp: Any, w: Any) -> Any:
    """``Uint32ToFloat``: the low 23 bits as the mantissa of 1.m, minus one: exactly ``m / 2**23``."""
    return xp.astype(w & 0x7FFFFF, xp.float32) * (2.0 ** -23)


def unit_float64(xp: Any, hi: Any, lo: Any) -> Any:
    """``Uint64ToDouble``: 20 bits of ``hi`` and 32 of ``lo`` as the mantissa: ``m / 2**52`` exactly."""
    return xp.astype(hi & 0xFFFFF, xp.float64) * (2.0 ** -20) + xp.astype(lo, xp.float64) * (2.0 ** -52)


def uniform(dt: DataType, out_dtype: Any) -> Transform:
    """``UniformDistribution`` for a float type: [0, 1) from the mantissa bits."""

    def transform(xp: Any, w: Any) -> Any:
        if dt == F64:
            return unit_float64(xp, *_pairs(xp, w, 2))
        if dt == F16:  # ten bits of the word's low half
            return xp.astype(xp.astype(w & 0x3FF, xp.float32) * (2.0 ** -10), out_dtype)
        if dt == BF16:  # seven bits
            return xp.astype(xp.astype(w & 0x7F, xp.float32) * (2.0 ** -7), out_dtype)
        return unit_float32(xp, w)

    return transform


def uniform_int(dt: DataType, lo: int, hi: int, out_dtype: Any) -> Transform:
    """``UniformDistribution<int>``: ``lo + bits % (hi - lo)`` with 32 (int32) or 64 (int64) bits (TF has the
    unsigned types only in ops without a CPU kernel for them; they are drawn the same way)."""
    span = (hi - lo) % (1 << (64 if _wide(dt) else 32))

    def transform(xp: Any, w: Any) -> Any:
        if _wide(dt):
            a, b = _pairs(xp, w, 2)
            bits = _u64(xp, a) | (_u64(xp, b) << 32)
            offset = bits % span if span else bits
            if dt == U64:
                return offset + lo
            half = offset >> 1  # TF's SignedAdd: two halves, each below 2**63
            return (xp.astype(half, xp.int64) + lo) + xp.astype(offset - half, xp.int64)
        offset = _u64(xp, w) % span
        return xp.astype(xp.astype(offset, xp.int64) + lo, out_dtype)

    return transform


def full_int(dt: DataType, out_dtype: Any) -> Transform:
    """``UniformFullIntDistribution``: the raw bits as the integer type (two words, low first, for 64 bits)."""

    def transform(xp: Any, w: Any) -> Any:
        if dt == U32:
            return w
        if dt == I32:
            v = xp.astype(w, xp.int64)
            return xp.astype(xp.where(v >= 2**31, v - 2**32, v), out_dtype)
        a, b = _pairs(xp, w, 2)
        if dt == U64:
            return _u64(xp, a) | (_u64(xp, b) << 32)
        high = xp.astype(b, xp.int64)
        return xp.where(high >= 2**31, high - 2**32, high) * 2**32 + xp.astype(a, xp.int64)

    return transform


# -- normal -------------------------------------------------------------------------------------------
def box_muller32(xp: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """``BoxMullerFloat``: two float32 normals from two words, in TF's float32 arithmetic."""
    u1 = xp.maximum(unit_float32(xp, x0), xp.asarray(_EPS32, dtype=xp.float32))
    v1 = xp.astype(xp.astype(unit_float32(xp, x1), xp.float64) * TWO_PI, xp.float32)
    u2 = xp.sqrt(_libm.log(xp, u1) * -2.0)
    s, c = _libm.sincos(xp, v1)
    return s * u2, c * u2


def box_muller64(xp: Any, x0: Any, x1: Any, x2: Any, x3: Any) -> tuple[Any, Any]:
    """``BoxMullerDouble``: two float64 normals from four words."""
    u1 = xp.maximum(unit_float64(xp, x0, x1), xp.asarray(_EPS64, dtype=xp.float64))
    v1 = unit_float64(xp, x2, x3) * TWO_PI
    u2 = xp.sqrt(_libm.log(xp, u1) * -2.0)
    s, c = _libm.sincos(xp, v1)
    return s * u2, c * u2


def _interleave(xp: Any, a: Any, b: Any) -> Any:
    return xp.reshape(xp.stack([a, b], axis=1), (-1,))


def normal(dt: DataType, out_dtype: Any) -> Transform:
    """``NormalDistribution``: Box-Muller on consecutive word pairs (quadruples for float64); half and
    bfloat16 round the float32 normals."""

    def transform(xp: Any, w: Any) -> Any:
        if dt == F64:
            return _interleave(xp, *box_muller64(xp, *_pairs(xp, w, 4)))
        out = _interleave(xp, *box_muller32(xp, *_pairs(xp, w, 2)))
        return out if dt == F32 else xp.astype(out, out_dtype)

    return transform


# -- filling an output --------------------------------------------------------------------------------
def generate(xp: Any, gen: Philox, n: int, per_block: int, transform: Transform) -> Any:
    """TF's ``FillPhiloxRandom`` for a fixed distribution: ``n`` outputs, ``per_block`` from each block."""
    count = -(-n // per_block)
    if xp is not np or count <= _CHUNK:
        return transform(xp, _philox.words(xp, gen, count * 4))[:n]
    parts: list[Any] = [None] * (-(-count // _CHUNK))

    def run(start: int, stop: int) -> None:
        for a in range(start, stop):
            lo, hi = a * _CHUNK, min(count, (a + 1) * _CHUNK)
            parts[a] = transform(np, _philox.serial_words(gen, lo, hi))

    parallel_for(run, len(parts))
    out = np.concatenate(parts)
    return out[:n] if out.shape[0] != n else out


# -- truncated normal ---------------------------------------------------------------------------------
def _group_words(xp: Any, gen: Philox, base: Any, w0: int, w1: int, serial: bool) -> Any:
    """Words ``w0 .. w1 - 1`` of the stretch of blocks starting at each ``base`` offset: ``[len(base), w1 - w0]``."""
    b0, b1 = w0 // 4, -(-w1 // 4)
    offsets = xp.reshape(base, (-1, 1)) + xp.reshape(xp.arange(b0, b1, dtype=xp.int64), (1, -1))
    flat = _philox.blocks_at(xp, gen, xp.astype(xp.reshape(offsets, (-1,)), xp.uint64), serial=serial)
    return xp.reshape(flat, (base.shape[0], -1))[:, w0 - 4 * b0:w1 - 4 * b0]


def _truncated_groups(xp: Any, gen: Philox, groups: Any, dt: DataType, serial: bool) -> tuple[Any, Any]:
    """(flat output positions, values) of the truncated normals of ``groups``: each group reads its own
    stretch of words, Box-Muller pair after pair, keeping candidates with ``|x| < 2`` until it is full."""
    group = per_block(dt)
    stride = group * RESERVED_PER_OUTPUT // 4  # blocks between consecutive groups' stretches
    width = 4 if dt == F64 else 2  # words per Box-Muller pair
    have = xp.zeros(groups.shape, dtype=xp.int64)
    keys, values = [], []
    first, pairs = 0, 3  # three pairs (six candidates) fill a group of four 998 times in 1000
    while groups.shape[0]:
        w = _group_words(xp, gen, groups * stride, first * width, (first + pairs) * width, serial)
        w = xp.reshape(w, (-1,))
        cand = _interleave(xp, *(box_muller64(xp, *_pairs(xp, w, 4)) if dt == F64 else
                                 box_muller32(xp, *_pairs(xp, w, 2))))
        cand = xp.reshape(cand, (groups.shape[0], 2 * pairs))
        keep = xp.abs(cand) < _TRUNCATE
        slot = xp.reshape(have, (-1, 1)) + xp.cumulative_sum(xp.astype(keep, xp.int64), axis=1) - 1
        take = keep & (slot < group)
        keys.append((xp.reshape(groups, (-1, 1)) * group + slot)[take])
        values.append(cand[take])
        have = have + xp.sum(xp.astype(take, xp.int64), axis=1)
        short = have < group
        groups, have = groups[short], have[short]
        first, pairs = first + pairs, 4
    return xp.concat(keys), xp.concat(values)


def truncated_normal(xp: Any, gen: Philox, n: int, dt: DataType, out_dtype: Any) -> Any:
    """``TruncatedNormalDistribution`` under ``FillPhiloxRandomTask<..., true>``: output group g (four
    values, two for float64) reads the words after ``Skip(g * group * 256 / 4)``."""
    group = per_block(dt)
    n_groups = -(-n // group)
    real = xp.float64 if dt == F64 else xp.float32
    if xp is np:
        out = np.empty(n_groups * group, real)
        step = _CHUNK // 2

        def run(start: int, stop: int) -> None:
            for a in range(start, stop, step):
                keys, values = _truncated_groups(np, gen, np.arange(a, min(stop, a + step), dtype=np.int64), dt, True)
                out[keys] = values

        parallel_for(run, n_groups, min_size=step)
    else:
        keys, values = _truncated_groups(xp, gen, xp.arange(n_groups, dtype=xp.int64), dt, False)
        out = xp.take(values, xp.argsort(keys))
    out = out[:n]
    return out if dt in (F32, F64) else xp.astype(out, out_dtype)


# -- per-output streams (rejection samplers) -----------------------------------------------------------
def expand(xp: Any, compact: Any, mask: Any, fill: Any = 0) -> Any:
    """Values computed for ``mask``'s true positions only, spread back to ``mask``'s length (``fill``
    elsewhere): a gather, so it needs no scatter."""
    if compact.shape[0] == 0:
        return xp.full(mask.shape, fill, dtype=compact.dtype)
    at = xp.clip(xp.cumulative_sum(xp.astype(mask, xp.int64)) - 1, 0, compact.shape[0] - 1)
    return xp.where(mask, xp.take(compact, at), xp.asarray(fill, dtype=compact.dtype))


def output_blocks(xp: Any, gen: Philox, outputs: Any, block: Any, mask: Any) -> Any:
    """uint32 ``[len(outputs), 4]``: for each output where ``mask``, the block at ``block`` in its own stream
    (TF's ``gen.Skip(256 * output)`` per output, then blocks in order); zeros elsewhere."""
    offsets = xp.astype(outputs[mask] * RESERVED_PER_OUTPUT + block[mask], xp.uint64)
    got = _philox.blocks_at(xp, gen, offsets)
    return xp.stack([expand(xp, got[:, j], mask) for j in range(4)], axis=1)


def per_output_layout(xp: Any, params: Any, samples_per_param: int) -> tuple[int, Any, Any, Any]:
    """How TF's gamma and Poisson kernels number their outputs: output ``o`` (param-major, its stream
    ``o``) draws for ``params.flat[o // samples_per_param]`` and lands at ``position[o]`` of the
    sample-major result.  Returns ``(total, o, the float64 param of each o, position)``."""
    flat = xp.reshape(xp.astype(params, xp.float64), (-1,))
    num_params = flat.shape[0]
    total = num_params * samples_per_param
    outputs = xp.arange(total, dtype=xp.int64)
    param_index = outputs // samples_per_param
    position = (outputs % samples_per_param) * num_params + param_index
    return total, outputs, xp.take(flat, param_index), position


class OutputStreams:
    """The streams of the outputs a rejection sampler is still drawing for (``ids``, kept in step with
    the sampler's own per-output arrays by :meth:`keep`).

    Output ``o`` reads whole blocks from ``gen.Skip(256 * o)`` on.  A block becomes two float64
    uniforms or two normals (``UniformDistribution``/``NormalDistribution<double>``), handed out last
    first, as TF's ``SampleBuffer`` and ``UNIFORM`` macro do; uniforms and normals have a buffer each.
    """

    KINDS = ("uniform", "normal")

    def __init__(self, xp: Any, gen: Philox, ids: Any):
        self.xp, self.gen, self.ids = xp, gen, ids
        n = ids.shape[0]
        self.block = xp.zeros((n,), dtype=xp.int64)
        self.buffers = {kind: [xp.zeros((n,), dtype=xp.float64)] * 2 for kind in self.KINDS}
        self.left = {kind: xp.zeros((n,), dtype=xp.int64) for kind in self.KINDS}

    def take(self, kind: str, mask: Any) -> Any:
        """The next ``kind`` value of each output where ``mask`` (garbage elsewhere)."""
        xp = self.xp
        refill = mask & (self.left[kind] == 0)
        if bool(xp.any(refill)):
            blocks = output_blocks(xp, self.gen, self.ids, self.block, refill)
            fresh = uniform_pair64(xp, blocks) if kind == "uniform" else normal_pair64(xp, blocks)
            self.buffers[kind] = [xp.where(refill, f, old) for f, old in zip(fresh, self.buffers[kind])]
            self.left[kind] = xp.where(refill, 2, self.left[kind])
            self.block = self.block + xp.astype(refill, xp.int64)
        first, second = self.buffers[kind]
        value = xp.where(self.left[kind] == 2, second, first)
        self.left[kind] = self.left[kind] - xp.astype(mask, xp.int64)
        return value

    def keep(self, mask: Any) -> None:
        """Drop the outputs that are done (``mask`` false)."""
        self.ids, self.block = self.ids[mask], self.block[mask]
        for kind in self.KINDS:
            self.buffers[kind] = [b[mask] for b in self.buffers[kind]]
            self.left[kind] = self.left[kind][mask]


def uniform_pair64(xp: Any, w: Any) -> tuple[Any, Any]:
    """The two doubles ``UniformDistribution<double>`` makes of one block (rows of ``w``)."""
    return unit_float64(xp, w[:, 0], w[:, 1]), unit_float64(xp, w[:, 2], w[:, 3])


def normal_pair64(xp: Any, w: Any) -> tuple[Any, Any]:
    """The two doubles ``NormalDistribution<double>`` makes of one block."""
    return box_muller64(xp, w[:, 0], w[:, 1], w[:, 2], w[:, 3])


def flush_subnormal(xp: Any, v: Any) -> Any:
    """What TF's kernels compute with the CPU flushing subnormal results to zero (its threads set FTZ)."""
    tiny = float(np.finfo(np.float64 if v.dtype == xp.float64 else np.float32).tiny)
    return xp.where(xp.abs(v) < tiny, xp.zeros_like(v), v)


def from_double(xp: Any, v: Any, dt: DataType, out_dtype: Any) -> Any:
    """``static_cast<T>(double)`` in TF's flush-to-zero mode; half and bfloat16 go through float32, as
    Eigen converts them."""
    v = flush_subnormal(xp, v)
    if dt == F64:
        return v
    v = flush_subnormal(xp, xp.astype(v, xp.float32))
    return v if dt == F32 else xp.astype(v, out_dtype)


def place(xp: Any, size: int, keys: list[Any], values: list[Any], dtype: Any) -> Any:
    """A flat array of ``size`` with ``values`` at ``keys`` (each position exactly once)."""
    k, v = xp.concat(keys), xp.concat(values)
    if xp is np:
        out = np.empty(size, dtype)
        out[k] = v
        return out
    return xp.astype(xp.take(v, xp.argsort(k)), dtype)
