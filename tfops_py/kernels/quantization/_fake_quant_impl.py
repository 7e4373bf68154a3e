"""Numerics of the fake-quant family in TF 2.21's float32 order, and its input checks.

Three pieces, shared by the generic kernels and the NumPy fast path in ``fake_quant.py``:

* :func:`nudge` -- TF's ``Nudge`` (``fake_quant_ops_functor.h``) on host float32 arrays.
* :func:`forward` / :func:`gradient` -- the element-wise formulas against any array namespace.
* :class:`SumPlan` -- the order in which Eigen's ``FullReducer`` adds up ``backprop_wrt_min`` /
  ``backprop_wrt_max`` on the CPU, so those sums agree with TF bit for bit (see ``SumPlan``).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfops_py.kernels._typing import Dims, Fail

F32 = np.float32
HALF = F32(0.5)


# -- nudging -------------------------------------------------------------------------------------

def quant_range(num_bits: int, narrow_range: bool) -> tuple[int, int]:
    return (1 if narrow_range else 0), (1 << num_bits) - 1


@dataclass(frozen=True)
class Nudged:
    """Float32 quantisation parameters, one per channel (0-d for the scalar ops)."""

    nudged_min: np.ndarray
    nudged_max: np.ndarray
    scale: np.ndarray
    inv_scale: np.ndarray  # (qmax - qmin) / (max - min): computed on its own, not 1 / scale
    quant_zero: np.ndarray  # floor(-nudged_min * inv_scale + 0.5)
    zero: np.ndarray  # min == max == 0: TF outputs 0 forward and passes gradients through
    lo_cmp: np.ndarray  # nudged_min as TF's gradient comparisons see it (see ``daz_bound``)
    hi_cmp: np.ndarray

    def params(self) -> tuple[np.ndarray, ...]:
        """(nudged_min, nudged_max, scale, inv_scale, quant_zero); the zero channels, whose
        results are replaced anyway, get a harmless [0, 1] range instead of 0/0."""
        if not self.zero.any():
            return self.nudged_min, self.nudged_max, self.scale, self.inv_scale, self.quant_zero
        z = self.zero
        return (np.where(z, F32(0), self.nudged_min), np.where(z, F32(1), self.nudged_max),
                np.where(z, F32(1), self.scale), np.where(z, F32(1), self.inv_scale),
                np.where(z, F32(0), self.quant_zero))

    def compare_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) thresholds for the gradient masks (``x >= lower`` and ``x <= upper``)."""
        return self.lo_cmp, self.hi_cmp


def _round_half_away(v: np.ndarray) -> np.ndarray:
    """``std::round`` for v >= 0 (float32, exact: v - floor(v) has no rounding error)."""
    t = np.floor(v)
    return np.where(v - t >= HALF, t + F32(1), t)


def nudge(min_: Any, max_: Any, num_bits: int, narrow_range: bool) -> Nudged:
    """TF's ``Nudge`` for each (min, max) pair, every step in float32 as the C++ does it."""
    qmin, qmax = quant_range(num_bits, narrow_range)
    qmin_f, qmax_f = F32(qmin), F32(qmax)
    mn = np.asarray(min_, dtype=F32)
    mx = np.asarray(max_, dtype=F32)
    with np.errstate(all="ignore"):
        scale = (mx - mn) / (qmax_f - qmin_f)
        inv_scale = (qmax_f - qmin_f) / (mx - mn)
        zp_from_min = qmin_f - mn / scale
        zp = np.where(zp_from_min < qmin_f, qmin_f,
                      np.where(zp_from_min > qmax_f, qmax_f, _round_half_away(zp_from_min)))
        # A NaN zero point (min or max not finite) is cast to uint16 by TF: 0 on x86.
        zp = np.where(np.isnan(zp_from_min), F32(0), zp).astype(F32)
        nudged_min = ((qmin_f - zp) * scale).astype(F32)
        nudged_max = ((qmax_f - zp) * scale).astype(F32)
        quant_zero = np.floor(-nudged_min * inv_scale + HALF).astype(F32)
    zero = (mn == 0) & (mx == 0)
    return Nudged(nudged_min, nudged_max, scale.astype(F32), inv_scale.astype(F32), quant_zero, zero,
                  daz_bound(nudged_min, -1), daz_bound(nudged_max, +1))


DENORM_MAX = np.nextafter(np.finfo(F32).tiny, F32(0))  # the largest float32 denormal


def daz_bound(bound: np.ndarray, side: int) -> np.ndarray:
    """A comparison threshold that classifies denormal inputs as TF's CPU kernels do.

    TF runs kernels with denormals-are-zero, so against a bound of 0 a denormal input counts
    as 0 (inside the range).  For the lower bound, ``x >= 0`` under DAZ is ``x >= -DENORM_MAX``
    (and ``x < 0`` is ``x < -DENORM_MAX``); for the upper bound the mirror image.  A nonzero
    normal bound needs no change: a denormal compares with it as 0 does.
    """
    return np.where(bound == 0, F32(side) * DENORM_MAX, bound).astype(F32)


# -- element-wise formulas (any array namespace) ------------------------------------------------

def forward(xp: Any, x: Any, nmin: Any, nmax: Any, scale: Any, inv_scale: Any, quant_zero: Any,
            divide: bool) -> Any:
    """``floor(t - quant_zero + 0.5) * scale`` with t the clamped input shifted and scaled.

    ``divide``: FakeQuantWithMinMaxVars divides by ``scale``; Args and PerChannel multiply by
    ``inv_scale``.  The two differ in the last bit for some inputs, as in TF.  The clamp is
    min-then-max, so min > max bounds give TF's (meaningless) answer too.
    """
    t = xp.maximum(xp.minimum(x, nmax), nmin) - nmin
    t = t / scale if divide else t * inv_scale
    return xp.floor(t - quant_zero + 0.5) * scale


def gradient(xp: Any, g: Any, x: Any, nmin: Any, nmax: Any) -> tuple[Any, Any, Any]:
    """(dx, g where x < nudged_min, g where x > nudged_max), each as TF's ``g * mask``.

    Multiplying by a 0/1 float mask (not selecting) keeps TF's -0 and ``inf * 0 = NaN``.
    """
    f32 = g.dtype
    inside = xp.astype((x >= nmin) & (x <= nmax), f32)
    below = g * xp.astype(x < nmin, f32)
    above = g * xp.astype(x > nmax, f32)
    return g * inside, below, above


# -- Eigen's full-reduction order ---------------------------------------------------------------

PACKET = 8  # TF's x86 wheels vectorise Eigen with AVX: 8 floats per packet
LEAF = 1024  # Eigen's LeafSize<float>; vectorised leaves hold up to PACKET * LEAF values
# TensorCostModel cost per coefficient of TF's ``(g * (x < m).select(1, 0)).sum()``: the
# scalar op reads flat tensors, the per-channel op reads chips of [rows, depth]
# (two chips cost 2 * 2 / PACKET more).  Measured on TF 2.21 against this plan with 1, 2,
# 3, 4 and 8 intra-op threads: the 1 -> 2 thread switch is at 50150 and 44800 values.
COST_SCALAR = 4.1875
COST_PER_CHANNEL = 4.6875


def tf_intra_op_threads() -> int:
    """The size of TF's intra-op pool on this machine (its default: the usable CPUs)."""
    env = os.environ.get("TF_NUM_INTRAOP_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def eigen_threads(n: int, cost: float, max_threads: int) -> int:
    """``TensorCostModel<ThreadPoolDevice>::numThreads`` (in double, as Eigen computes it)."""
    threads = (n * cost - 100000.0) / 100000.0 + 0.9
    return min(max_threads, max(1, int(min(threads, 2.0 ** 31 - 1))))


@dataclass(frozen=True)
class SumPlan:
    """How Eigen's ``FullReducer<ThreadPoolDevice>`` adds up n values on TF's CPU.

    The n values are split into shards (one per thread the cost model picks; the remainder
    shard first), each shard is halved at packet-aligned points until a leaf holds at most
    ``PACKET * LEAF`` values, and a leaf is summed with four 8-lane accumulators
    (``InnerMostDimReducer``).  ``leaves`` lists (first, count); ``root`` says how leaf sums
    combine: an int is a leaf, ``("+", a, b)`` is a + b, ``("shards", rest, [s...])`` is
    ((rest + s0) + s1) + ... with rest None for 0.
    """

    n: int
    leaves: tuple[tuple[int, int], ...]
    root: Any


@functools.lru_cache(maxsize=64)
def sum_plan(n: int, cost: float, max_threads: int) -> SumPlan:
    leaves: list[tuple[int, int]] = []

    def tree(first: int, num: int) -> Any:
        if num > PACKET * LEAF:
            split = PACKET * -(-(first + -(-num // 2)) // PACKET)
            num_left = min(split - first, num)
            left = tree(first, num_left)
            return ("+", left, tree(split, num - num_left)) if num_left < num else left
        leaves.append((first, num))
        return len(leaves) - 1

    threads = eigen_threads(n, cost, max_threads) if n else 1
    if threads == 1:
        root = tree(0, n) if n else None
    else:
        block = n // threads
        count = n // block
        shards = [tree(i * block, block) for i in range(count)]
        rest = tree(count * block, n - count * block) if count * block < n else None
        root = ("shards", rest, shards)
    return SumPlan(n, tuple(leaves), root)


def leaf_sum(xp: Any, seg: Any) -> Any:
    """Eigen's vectorised leaf sums of ``seg`` [k, num, d] over axis 1: [k, d].

    Relies on ``xp.sum`` adding along a non-innermost axis in order (NumPy-based namespaces
    do); the result equals Eigen's up to the sign of a zero, which ``evaluate`` normalises.
    """
    k, num, d = seg.shape
    block = 4 * PACKET
    v4 = (num // block) * block
    acc4 = None
    if v4:  # four packet accumulators over whole blocks of 4 packets
        acc4 = xp.sum(xp.reshape(seg[:, :v4, :], (k, v4 // block, 4, PACKET, d)), axis=1)
    return leaf_finish(xp, acc4, seg[:, v4:, :])


def leaf_finish(xp: Any, acc4: Any, tail: Any) -> Any:
    """The end of a leaf sum: ``acc4`` [k, 4, PACKET, d] (None before any whole block), then
    ``tail`` [k, t, d], the rows after the last whole block (t < 4 * PACKET)."""
    acc = None
    if acc4 is not None:  # acc0 += acc1; acc0 += acc2; acc0 += acc3
        acc = ((acc4[:, 0, ...] + acc4[:, 1, ...]) + acc4[:, 2, ...]) + acc4[:, 3, ...]
    t = tail.shape[1]
    vec = (t // PACKET) * PACKET
    for j in range(0, vec, PACKET):  # at most three packets left, into acc0
        packet = tail[:, j:j + PACKET, :]
        acc = packet if acc is None else acc + packet
    total = None
    if acc is not None:  # predux<Packet8f>: halves, then (a0 + a2) + (a1 + a3)
        q = acc[:, :4, :] + acc[:, 4:, :]
        total = (q[:, 0, :] + q[:, 2, :]) + (q[:, 1, :] + q[:, 3, :])
    rest = None
    for j in range(vec, t):  # at most seven scalars, in order, from 0 (a new array, never a view)
        rest = (tail[:, j, :] + 0.0) if rest is None else rest + tail[:, j, :]
    if rest is None:
        return total if total is not None else xp.zeros((tail.shape[0], tail.shape[2]), dtype=tail.dtype)
    return rest if total is None else rest + total


def leaf_sums(xp: Any, values: Any, leaves: Sequence[tuple[int, int]], offset: int = 0) -> list[Any]:
    """The [d] sum of each leaf (first, num) of ``values`` [rows, d] (row 0 is ``offset``).

    Leaves of one length are summed together: a reshape when they are adjacent, else a take.
    """
    out: list[Any] = [None] * len(leaves)
    groups: dict[int, list[int]] = {}
    for i, (_, num) in enumerate(leaves):
        groups.setdefault(num, []).append(i)
    d = values.shape[1]
    for num, idx in groups.items():
        starts = [leaves[i][0] - offset for i in idx]
        k = len(idx)
        if all(b - a == num for a, b in zip(starts, starts[1:])):
            seg = xp.reshape(values[starts[0]:starts[0] + k * num, ...], (k, num, d))
        else:
            rows = np.add.outer(np.asarray(starts), np.arange(num)).reshape(-1)
            seg = xp.reshape(xp.take(values, xp.asarray(rows), axis=0), (k, num, d))
        sums = leaf_sum(xp, seg)
        for j, i in enumerate(idx):
            out[i] = sums[j, ...]
    return out


def evaluate(plan: SumPlan, leaf_values: Sequence[Any], zeros: Any) -> Any:
    """Combine leaf sums as Eigen does; ``+ 0.0`` turns a -0 into Eigen's +0."""

    def ev(node: Any) -> Any:
        if isinstance(node, int):
            return leaf_values[node]
        if node[0] == "+":
            return ev(node[1]) + ev(node[2])
        acc = zeros if node[1] is None else ev(node[1])
        for shard in node[2]:
            acc = acc + ev(shard)
        return acc

    if plan.root is None:
        return zeros
    return ev(plan.root) + 0.0


def column_sums(xp: Any, values: Any, cost: float) -> Any:
    """Per-column sums of ``values`` [n, d] in the order TF's CPU kernel adds them."""
    n, d = values.shape
    plan = sum_plan(n, cost, tf_intra_op_threads())
    return evaluate(plan, leaf_sums(xp, values, plan.leaves), xp.zeros((d,), dtype=values.dtype))


# -- input checks (shape functions and kernels) -------------------------------------------------

def fmt_float(v: float) -> str:
    s = str(F32(v))
    return s[:-2] if s.endswith(".0") else s


def fmt_shape(shape: Dims) -> str:
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if s < 0 else str(s) for s in shape) + "]"


def check_num_bits(fail: Fail, num_bits: int) -> None:
    if not 2 <= num_bits <= 16:
        fail(f"num_bits must be between 2 and 16, inclusive, but is {num_bits}")


def check_args_range(fail: Fail, min_: float, max_: float) -> None:
    if not min_ < max_:
        fail(f"min has to be smaller than max, was: {fmt_float(min_)} >= {fmt_float(max_)}")


def shapes_differ(a: Dims, b: Dims) -> bool:
    """True when two (partial) shapes cannot be the same shape."""
    if a is None or b is None:
        return False
    return len(a) != len(b) or any(x >= 0 and y >= 0 and x != y for x, y in zip(a, b))


def check_same_shape(fail: Fail, gradients: Dims, inputs: Dims) -> None:
    if shapes_differ(gradients, inputs):
        fail(f"gradient and input must be the same size, but gradients has shape {fmt_shape(gradients)} "
             f"and inputs has shape {fmt_shape(inputs)}")


def check_rank(fail: Fail, name: str, shape: Dims, rank: int) -> None:
    if shape is not None and len(shape) != rank:
        fail(f"`{name}` must be rank {rank} but is rank {len(shape)}")


def check_per_channel(fail: Fail, inputs: Dims, min_: Dims, max_: Dims) -> None:
    """TF's per-channel checks in TF's order (inputs rank >= 1 is missing in TF 2.21: it aborts)."""
    if inputs is not None and len(inputs) == 0:
        fail("input must be at least rank 1 but is rank 0")
    depth = inputs[-1] if inputs else -1
    for name, shape in (("min", min_), ("max", max_)):
        check_rank(fail, name, shape, 1)
        if shape is not None and depth >= 0 and shape[0] >= 0 and shape[0] != depth:
            fail(f"{name} has incorrect size, expected {depth} was {shape[0]}")
    if min_ is not None and max_ is not None and -1 < min_[0] != max_[0] > -1:  # depth unknown
        fail(f"min and max must have the same size, but have {min_[0]} and {max_[0]}")
