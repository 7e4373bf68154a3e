"""RandomPoisson, RandomPoissonV2 and StatelessRandomPoisson.

TF's CPU kernel (``random_poisson_op.cc``) computes in float64 with one stream per output (the
generator skipped by ``256 * o`` blocks; a block makes two uniforms, used last first):

* rate < 10: Knuth's method, the count of uniforms whose running product stays above ``exp(-rate)``;
* rate >= 10: Hormann's transformed rejection (PTRS) with TF's constants; a draw above the output
  dtype's largest value is drawn again.

TF never returns for a NaN or infinite rate (the rejection loop accepts nothing) and can take forever
for a rate above the output dtype's largest value; tfops_py refuses both (InvalidArgumentError).

Every output's step runs at once here; the outputs not done yet go round again.  The counts are TF's
except where a comparison falls within an ulp of ``exp(-rate)`` or of ``lgamma(k + 1)`` (NumPy and
SciPy versus the C library: a chance far below one in 10^12 per sample).
"""
from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import scipy.special

from tfops_py.conformance import case, conformance, divergence, literal, one_of, shape, uniform
from tfops_py.conformance.references import Reference, RunTF
from tfops_py.framework.dtypes import DataType, from_numpy
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._philox import Philox
from tfops_py.kernels._shape_util import shape_from_shape_tensor
from tfops_py.kernels.random import _cases, _dist, _libm
from tfops_py.kernels.random._base import generator, output_shape, samples_then_params_shape
from tfops_py.kernels.random.stateless_random_ops import check_seed, key_counter_from_seed, seed_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "random"


def _lgamma(xp: Any, x: Any) -> Any:
    if xp is np:
        return scipy.special.gammaln(x)
    if _libm.on_host(x):
        return xp.asarray(scipy.special.gammaln(np.from_dlpack(x)))
    from tfops_py.kernels.math._special_math import lgamma

    return lgamma(xp, x)


def highest(dt: DataType) -> float:
    """``NumTraits<U>::highest()`` as a double."""
    np_dtype = dt.numpy_dtype
    info = np.iinfo(np_dtype) if dt.is_integer else ml_dtypes.finfo(np_dtype)
    return float(info.max)


def poisson_samples(xp: Any, gen: Philox, rate: Any, samples_per_rate: int, top: float) -> Any:
    """float64 ``[samples_per_rate * rate.size]`` (sample-major, TF's output order): the counts."""
    total, outputs, lam, position = _dist.per_output_layout(xp, rate, samples_per_rate)
    keys, values = [], []

    small = lam < 10
    # Knuth: multiply uniforms until the product drops to exp(-rate)
    streams = _dist.OutputStreams(xp, gen, outputs[small])
    limit, pos = xp.exp(-lam[small]), position[small]
    prod = xp.ones(limit.shape, dtype=xp.float64)
    count = xp.zeros(limit.shape, dtype=xp.float64)
    while limit.shape[0]:
        prod = prod * streams.take("uniform", xp.ones(limit.shape, dtype=xp.bool))
        done = (prod <= limit) & (count <= top)
        keys.append(pos[done])
        values.append(count[done])
        keep = ~done
        limit, pos, prod, count = limit[keep], pos[keep], prod[keep], count[keep] + 1
        streams.keep(keep)

    # PTRS (Hormann): transformed rejection
    big = ~small
    streams = _dist.OutputStreams(xp, gen, outputs[big])
    lam, pos = lam[big], position[big]
    log_rate = _libm.log(xp, lam)
    b = 0.931 + 2.53 * xp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while lam.shape[0]:
        everyone = xp.ones(lam.shape, dtype=xp.bool)
        u = streams.take("uniform", everyone) - 0.5
        v = streams.take("uniform", everyone)
        u_shifted = 0.5 - xp.abs(u)
        k = xp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        fits = ~(k > top)  # NaN fits, as in TF's comparison
        quick = fits & (u_shifted >= 0.07) & (v <= v_r)
        tested = fits & ~quick & ~((k < 0) | ((u_shifted < 0.013) & (v > u_shifted)))
        s = _libm.log(xp, v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        safe_k = xp.where(tested, k, 0.0)
        t = -lam + safe_k * log_rate - _lgamma(xp, safe_k + 1)
        done = quick | (tested & (s <= t))
        keys.append(pos[done])
        values.append(k[done])
        keep = ~done
        lam, pos, log_rate, b, a, inv_alpha, v_r = (z[keep] for z in (lam, pos, log_rate, b, a, inv_alpha, v_r))
        streams.keep(keep)
    return _dist.place(xp, total, keys, values, xp.float64)


def _to_output(xp: Any, counts: Any, dt: DataType, out_dtype: Any) -> Any:
    """``U(x)``: floats through ``_dist.from_double``; integers truncate, NaN giving the lowest value (x86)."""
    if dt.is_integer:
        low = -(2 ** (dt.numpy_dtype.itemsize * 8 - 1))
        return xp.astype(xp.where(xp.isnan(counts), float(low), counts), out_dtype)
    return _dist.from_double(xp, counts, dt, out_dtype)


def _hopeless(xp: Any, rate: Any, top: float) -> Any:
    """The rates TF's sampler never (NaN, infinite) or hardly ever (above ``top``) returns for."""
    return ~(xp.astype(rate, xp.float64) <= top)


def _poisson(ctx: KernelContext, dims: tuple[int, ...], rate: Any, gen_of: Any) -> Any:
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    out_shape = dims + tuple(int(s) for s in rate.shape)
    per_rate, num_rates = math.prod(dims), math.prod(out_shape[len(dims):])
    out_dtype = ctx.dtype(dt)
    if per_rate == 0:
        return xp.zeros(out_shape, dtype=out_dtype)
    gen = gen_of(per_rate * num_rates)
    if num_rates == 0:
        return xp.zeros(out_shape, dtype=out_dtype)
    top = highest(dt)
    bad = _hopeless(xp, rate, top)
    if bool(xp.any(bad)):
        first = float(ctx.host(rate)[ctx.host(bad)].reshape(-1)[0])
        ctx.invalid_argument(f"rate must be finite and at most {top:g}, the largest {dt.short_name}; got {first} "
                             "(TF's sampler never returns)")
    counts = poisson_samples(xp, gen, rate, per_rate, top)
    return xp.reshape(_to_output(xp, counts, dt, out_dtype), out_shape)


@register_kernel("RandomPoisson", "RandomPoissonV2")
def _random_poisson(ctx: KernelContext, shape: Any, rate: Any) -> Any:
    dims = output_shape(ctx, shape)
    return _poisson(ctx, dims, rate, lambda n: generator(ctx).reserve_random_outputs(n, _dist.RESERVED_PER_OUTPUT))


@register_kernel("StatelessRandomPoisson")
def _stateless_poisson(ctx: KernelContext, shape: Any, seed: Any, lam: Any) -> Any:
    dims = output_shape(ctx, shape)
    check_seed(ctx, seed)
    if math.prod(dims) == 0:
        return ctx.xp.zeros(dims, dtype=ctx.dtype(ctx.output_dtypes[0]))
    gen = key_counter_from_seed(ctx, seed)
    lam_dims = tuple(int(s) for s in lam.shape)
    if len(lam_dims) > len(dims) or dims[len(dims) - len(lam_dims):] != lam_dims:
        ctx.invalid_argument("Shape passed in must end with broadcasted shape.")
    return _poisson(ctx, dims[:len(dims) - len(lam_dims)], lam, lambda n: gen)


register_shape("RandomPoisson", "RandomPoissonV2")(samples_then_params_shape)


@register_shape("StatelessRandomPoisson")
def _stateless_poisson_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    seed_shape(ctx, 1)
    return [shape_from_shape_tensor(ctx, 0)]


# -- conformance -------------------------------------------------------------------------------------
I32 = DataType.DT_INT32
_RATES = [0.0, 0.3, 2.5, 9.99, 10.0, 37.5, 1e3, 1e6, -1.0]
_SHAPES = [{"rate": s} for s in ((), (3,), (2, 2), (0,), (4,))]


def _poisson_cases(op: str, fixed: dict[str, Any], rate_name: str, full_shape: bool) -> list:
    def shaped(samples: list[int], rate_shape: tuple[int, ...]) -> Any:
        return literal(samples + list(rate_shape) if full_shape else samples, I32)

    return [case({**fixed, "shape": shaped([9], (len(_RATES),)), rate_name: literal(_RATES)}, id=f"{op}/rates"),
            case({**fixed, "shape": shaped([300], (2,)), rate_name: literal([4.5, 120.0])}, id=f"{op}/many"),
            case({**fixed, "shape": shaped([3], (2,)), rate_name: literal([-float("inf"), -5.0])}, id=f"{op}/negative"),
            case({**fixed, "shape": shaped([3], (2,)), rate_name: literal([1.0, float("nan")])}, id=f"{op}/nan"),
            case({**fixed, "shape": shaped([3], (2,)), rate_name: literal([float("inf"), 1.0])}, id=f"{op}/inf"),
            case({**fixed, "shape": shaped([0], (2,)), rate_name: literal([1.0, 2.0])}, id=f"{op}/no-samples"),
            case({**fixed, "shape": literal([-1], I32), rate_name: literal([1.0])}, id=f"{op}/negative-dim")]


_SEEDS = {"seed": one_of(7, -3, 2**40 + 1), "seed2": one_of(0, 11)}
# RandomPoisson left GraphDefs at version 25 (TF builds none): checked against RandomPoissonV2 (see _AsV2)
conformance("RandomPoisson", shape=shape(max_rank=2), rate=uniform(0.0, 30.0), compare="exact", shapes=_SHAPES,
            tf_op="RandomPoissonV2",
            cases=_poisson_cases("RandomPoisson", {"seed": 5, "seed2": 9}, "rate", False), **_SEEDS)
conformance("RandomPoissonV2", shape=shape(max_rank=2), rate=uniform(0.0, 30.0), compare="exact", shapes=_SHAPES,
            dtype=one_of(DataType.DT_HALF, DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32,
                         DataType.DT_INT64),
            cases=_poisson_cases("RandomPoissonV2", {"seed": 5, "seed2": 9}, "rate", False), **_SEEDS)
conformance("StatelessRandomPoisson", shape=literal([5, 3], I32), lam=uniform(0.0, 30.0), seed=_cases.seed_pair(),
            compare="exact", shapes=[{"lam": (3,)}], live=4,
            dtype=one_of(DataType.DT_HALF, DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32, DataType.DT_INT64),
            cases=_poisson_cases("StatelessRandomPoisson", {"seed": literal([3, -4], DataType.DT_INT64),
                                                            "dtype": DataType.DT_INT64}, "lam", True) + [
                case({"seed": literal([3, -4], DataType.DT_INT64), "dtype": DataType.DT_FLOAT,
                      "shape": literal([4, 3], I32), "lam": literal([1.0, 2.0])},
                     id="StatelessRandomPoisson/shape-not-ending-in-lam")])


def _hopeless_case(rate_name: str, same_dtype: bool) -> Any:
    """Whether a case has a rate TF never returns for (``same_dtype``: the output dtype is the rate's)."""
    def applies(ins: Any, attrs: Any) -> bool:
        rate = np.asarray(ins[rate_name])
        dt = from_numpy(rate.dtype) if same_dtype else attrs.get("dtype", DataType.DT_INT64)
        return bool(np.any(~(rate.astype(np.float64) <= highest(dt))))

    return applies


for _op, _rate, _same in (("RandomPoisson", "rate", True), ("RandomPoissonV2", "rate", False),
                          ("StatelessRandomPoisson", "lam", False)):
    divergence(_op, when="a rate is NaN, infinite or above the output dtype's largest value",
               tf="never returns (the rejection loop accepts no draw, or redraws every value that does not fit)",
               ours="InvalidArgumentError naming the first such rate", applies=_hopeless_case(_rate, _same))


class _AsV2(Reference):
    note = "TF's RandomPoissonV2 with dtype = the rate's dtype"

    def __call__(self, run_tf: RunTF, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
        return run_tf("RandomPoissonV2", inputs, {**attrs, "dtype": from_numpy(np.asarray(inputs[1]).dtype)})


divergence("RandomPoisson", when="always", applies=lambda ins, attrs: True, reference=_AsV2(),
           tf="UnimplementedError: the op left GraphDefs at version 25 (TF builds RandomPoissonV2)",
           ours="runs it as RandomPoissonV2 with `dtype` = `R`, so old GraphDefs still run")
