"""Multinomial and StatelessMultinomial: categorical samples from unnormalised log-probabilities.

TF's CPU kernel (``multinomial_op.cc``) works row by row in float64: the finite logits' maximum is
subtracted, ``exp`` gives an unnormalised CDF over the finite logits (non-finite ones add nothing), and
each sample is ``upper_bound(cdf, u * total)`` with ``u`` a double from two Philox words
(``SimplePhilox::RandDouble``).  Rows read the stream one after another.  Here the CDFs are one
cumulative sum and every sample's binary search runs at once.

TF splits large batches over its threads and starts each thread's rows at a skip of
``start_row * (num_samples + 3) / 4`` blocks, so its samples then depend on its thread count; tfops_py
always gives the single-thread stream (what TF gives when the batch fits one thread, and with
``intra_op_parallelism_threads=1``).
"""
from __future__ import annotations

import math
from typing import Any

import ml_dtypes

from tfops_py.conformance import case, conformance, divergence, literal, one_of, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels import _philox
from tfops_py.kernels._philox import Philox
from tfops_py.kernels._shape_util import dim_from_scalar_input
from tfops_py.kernels.random import _cases, _dist
from tfops_py.kernels.random._base import generator
from tfops_py.kernels.random.stateless_random_ops import check_seed, key_counter_from_seed, seed_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "random"


def _checks(ctx: KernelContext, logits: Any, num_samples: Any) -> tuple[int, int, int]:
    """TF's checks in its order: (batch, classes, samples)."""
    if logits.ndim != 2:
        ctx.invalid_argument(f"logits should be a matrix, got shape {format_shape(logits.shape)}")
    n = ctx.host(num_samples)
    if n.ndim != 0:
        ctx.invalid_argument(f"num_samples should be a scalar, got shape {format_shape(n.shape)}")
    samples = int(n)
    if samples < 0:
        ctx.invalid_argument(f"num_samples should be non-negative, got {samples}")
    batch, classes = (int(d) for d in logits.shape)
    for d in (batch, classes):
        if d >= 2**31:
            ctx.invalid_argument(f"logits.shape = {format_shape(logits.shape)} too large for int")
    if classes <= 0:
        ctx.invalid_argument(f"num_classes should be positive, got {classes}")
    return batch, classes, samples


def _lowest(dt: DataType) -> float:
    return float(ml_dtypes.finfo(dt.numpy_dtype).min)


def sample_rows(xp: Any, logits: Any, samples: int, gen: Philox, lowest: float) -> Any:
    """int64 ``[batch, samples]``: TF's samples, rows reading ``gen``'s words one after another."""
    batch, classes = (int(d) for d in logits.shape)
    x = xp.astype(logits, xp.float64)
    finite = xp.isfinite(x)
    peak = xp.max(xp.where(finite, x, -math.inf), axis=1, keepdims=True)
    peak = xp.where(xp.isinf(peak), lowest, peak)  # no finite logit: T's lowest value
    weights = xp.where(finite, xp.exp(x - peak), 0.0)
    cdf = xp.cumulative_sum(weights, axis=1)  # sequential per row: TF's running total
    total = cdf[:, -1:]
    w = _philox.words(xp, gen, 2 * samples * batch)
    target = xp.reshape(_dist.unit_float64(xp, *_dist._pairs(xp, w, 2)), (batch, samples)) * total
    # upper_bound over each row at once: the first class whose CDF exceeds the target
    flat = xp.reshape(cdf, (-1,))
    base = xp.reshape(xp.arange(batch, dtype=xp.int64) * classes, (-1, 1))
    lo = xp.zeros((batch, samples), dtype=xp.int64)
    hi = xp.full((batch, samples), classes, dtype=xp.int64)
    for _ in range(max(1, classes).bit_length()):
        mid = (lo + hi) // 2
        below = xp.take(flat, xp.reshape(base + xp.clip(mid, 0, classes - 1), (-1,)))
        go_right = (xp.reshape(below, mid.shape) <= target) & (lo < hi)
        lo = xp.where(go_right, mid + 1, lo)
        hi = xp.where(go_right | (lo >= hi), hi, mid)
    return lo


def _multinomial(ctx: KernelContext, logits: Any, num_samples: Any, gen_of: Any) -> Any:
    batch, _, samples = _checks(ctx, logits, num_samples)
    out_dtype = ctx.dtype(ctx.output_dtypes[0])
    if batch * samples == 0:
        return ctx.xp.zeros((batch, samples), dtype=out_dtype)
    gen = gen_of(batch, samples)
    return ctx.xp.astype(sample_rows(ctx.xp, logits, samples, gen, _lowest(ctx.input_dtypes[0])), out_dtype)


@register_kernel("Multinomial")
def _multinomial_op(ctx: KernelContext, logits: Any, num_samples: Any) -> Any:
    def reserve(batch: int, samples: int) -> Philox:
        doubles = -(-samples // 4) * 4 * 2  # the CPU kernel reserves for doubles: two words per sample
        return generator(ctx).reserve_random_outputs(batch * doubles, _dist.RESERVED_PER_OUTPUT)

    return _multinomial(ctx, logits, num_samples, reserve)


@register_kernel("StatelessMultinomial")
def _stateless_multinomial(ctx: KernelContext, logits: Any, num_samples: Any, seed: Any) -> Any:
    check_seed(ctx, seed)
    return _multinomial(ctx, logits, num_samples, lambda batch, samples: key_counter_from_seed(ctx, seed))


@register_shape("Multinomial", "StatelessMultinomial")
def _multinomial_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    logits = ctx.with_rank(ctx.input(0), 2)
    if ctx.op_type == "StatelessMultinomial":
        seed_shape(ctx, 2)
    ctx.with_rank(ctx.input(1), 0)
    batch = -1 if logits.unknown_rank() else logits[0]
    return [PartialTensorShape([batch, dim_from_scalar_input(ctx, 1)])]


# -- conformance -------------------------------------------------------------------------------------
I32 = DataType.DT_INT32
_SHAPES = [{"logits": s} for s in ((1, 1), (2, 3), (3, 5), (4, 2), (0, 3), (2, 7))]
_EDGES = {
    "nan-and-inf": literal([[0.0, float("nan"), 1.0, float("inf")], [float("-inf"), 2.0, 0.5, -1.0]]),
    "all-non-finite": literal([[float("nan"), float("inf"), float("-inf")]]),
    "one-hot": literal([[-1e30, 0.0, -1e30], [0.0, -1e30, -1e30]]),
    "huge": literal([[3e38, 3e38, -3e38]]),
    "ties": literal([[0.0, 0.0, 0.0, 0.0]] * 3),
}


def _cases_of(op: str, extra: dict[str, Any]) -> list:
    out = [case({**extra, "logits": v, "num_samples": literal(9, I32)}, id=f"{op}/{name}")
           for name, v in _EDGES.items()]
    bad = {"vector-logits": (literal([0.5, 1.0]), literal(3, I32)), "no-classes": (literal([[], []]), literal(3, I32)),
           "negative-samples": (literal([[0.5, 1.0]]), literal(-1, I32)),
           "vector-samples": (literal([[0.5, 1.0]]), literal([3], I32)),
           "no-samples": (literal([[0.5, 1.0]]), literal(0, I32)),
           "many-samples": (literal([[0.1, 2.0, -1.0, 0.3, 1.5]]), literal(1003, I32))}
    out += [case({**extra, "logits": lg, "num_samples": ns}, id=f"{op}/{name}") for name, (lg, ns) in bad.items()]
    return out


_SEEDED = {"seed": 5, "seed2": 9}
conformance("Multinomial", logits=values(), num_samples=literal(6, I32), shapes=_SHAPES, compare="exact",
            seed=one_of(7, -3, 2**40 + 1), seed2=one_of(0, 11),
            output_dtype=one_of(DataType.DT_INT32, DataType.DT_INT64),
            cases=_cases_of("Multinomial", _SEEDED))
conformance("StatelessMultinomial", logits=values(), num_samples=literal(6, I32), seed=_cases.seed_pair(),
            shapes=_SHAPES, compare="exact", output_dtype=one_of(DataType.DT_INT32, DataType.DT_INT64),
            cases=_cases_of("StatelessMultinomial", {"seed": literal([3, -4], DataType.DT_INT64)}) + [
                case({"logits": literal([[0.5, 1.0]]), "num_samples": literal(2, I32),
                      "seed": literal([1, 2, 3], DataType.DT_INT64)}, id="StatelessMultinomial/seed-of-three")])
divergence(("Multinomial", "StatelessMultinomial"), when="batches TF shares out over several threads (a cost of "
           "about 10^5 cycles or more: `batch * 50 * (samples * log2(classes) + classes)`)",
           tf="starts each thread's rows at `start_row * (num_samples + 3) / 4` blocks into the stream: the samples of "
              "later rows depend on TF's thread count", ours="the single-thread stream (rows one after another): TF's "
              "samples whenever TF runs the batch on one thread; the same distribution otherwise")
