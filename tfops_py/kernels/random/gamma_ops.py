"""RandomGamma, StatelessRandomGammaV2 and StatelessRandomGammaV3: Marsaglia and Tsang's method, in float64.

TF's CPU kernels (``random_op.cc``, ``stateless_random_gamma_op.cc``) give output ``o`` (alpha-major:
``o = alpha_index * samples_per_alpha + sample_index``) its own stream, the generator skipped by
``256 * o`` blocks, and read it a block at a time: a block makes two float64 normals or two uniforms,
used last first.  Each attempt takes a normal ``x`` (another if ``v = 1 + c x <= 0``), cubes ``v``,
takes a uniform ``u`` and accepts when ``u < 1 - 0.0331 x^4`` or ``log u < x^2/2 + d (1 - v + log v)``;
alpha below one multiplies ``d v`` by ``b^(1/alpha)`` for one more uniform ``b``; alpha exactly one
is an exponential from one uniform.  Here every output's attempt runs at once, the outputs still
rejecting are kept for the next round, and ``log``/``pow`` are the C library's (``_libm``, NumPy's
``float_power``), so the float64 samples are TF's bits.
"""
from __future__ import annotations

import math
from typing import Any


from tfops_py.conformance import case, conformance, divergence, literal, one_of, positive, shape, uniform
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._philox import Philox
from tfops_py.kernels._shape_util import shape_from_shape_tensor
from tfops_py.kernels.random import _cases, _dist, _libm
from tfops_py.kernels.random._base import generator, output_shape, samples_then_params_shape
from tfops_py.kernels.random.stateless_random_ops import (check_algorithm, check_seed, key_counter_alg,
                                                          key_counter_alg_shapes, key_counter_from_seed, seed_shape)
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "random"


def gamma_samples(xp: Any, gen: Philox, alpha: Any, samples_per_alpha: int) -> Any:
    """float64 ``[samples_per_alpha * alpha.size]`` in TF's output order (sample-major): the samples of
    every alpha, before the cast to the output type."""
    total, outputs, a, position = _dist.per_output_layout(xp, alpha, samples_per_alpha)
    keys, values = [], []

    one = a == 1.0
    if bool(xp.any(one)):  # an exponential: one uniform, the block's second double first
        ids = outputs[one]
        w = _dist.output_blocks(xp, gen, ids, xp.zeros(ids.shape, dtype=xp.int64), xp.ones(ids.shape, dtype=xp.bool))
        u = _dist.uniform_pair64(xp, w)[1]
        keys.append(position[one])
        values.append(-xp.log1p(-u))  # NumPy's log1p: see the divergence below

    rest = ~one
    streams = _dist.OutputStreams(xp, gen, outputs[rest])
    a, pos = a[rest], position[rest]
    below_one = a < 1.0
    d = a + xp.where(below_one, xp.full(a.shape, 2.0 / 3, dtype=xp.float64), -1.0 / 3)
    c = (1.0 / 3) / xp.sqrt(d)
    while a.shape[0]:
        everyone = xp.ones(a.shape, dtype=xp.bool)
        x = streams.take("normal", everyone)
        v = 1 + c * x
        tried = v > 0  # otherwise the next attempt starts with the next normal
        v = v * v * v
        u = streams.take("uniform", tried)
        safe_v = xp.where(tried, v, 1.0)
        accept = tried & ((u < 1 - 0.0331 * (x * x) * (x * x)) |
                          (_libm.log(xp, u) < 0.5 * x * x + d * (1 - safe_v + _libm.log(xp, safe_v))))
        result = d * v
        boost = accept & below_one
        if bool(xp.any(boost)):
            b = streams.take("uniform", boost)
            result = xp.where(boost, result * _libm.power(xp, b, 1 / a), result)
        keys.append(pos[accept])
        values.append(result[accept])
        keep = ~accept
        a, pos, d, c, below_one = (t[keep] for t in (a, pos, d, c, below_one))
        streams.keep(keep)
    return _dist.place(xp, total, keys, values, xp.float64)


def _gamma(ctx: KernelContext, dims: tuple[int, ...], alpha: Any, gen_of: Any) -> Any:
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    out_shape = dims + tuple(int(s) for s in alpha.shape)
    per_alpha, num_alphas = math.prod(dims), math.prod(out_shape[len(dims):])
    if per_alpha * num_alphas == 0:
        return xp.zeros(out_shape, dtype=ctx.dtype(dt))
    samples = gamma_samples(xp, gen_of(per_alpha * num_alphas), alpha, per_alpha)
    return xp.reshape(_dist.from_double(xp, samples, dt, ctx.dtype(dt)), out_shape)


@register_kernel("RandomGamma")
def _random_gamma(ctx: KernelContext, shape: Any, alpha: Any) -> Any:
    dims = output_shape(ctx, shape)
    return _gamma(ctx, dims, alpha, lambda n: generator(ctx).reserve_random_outputs(n, _dist.RESERVED_PER_OUTPUT))


def _stateless_dims(ctx: KernelContext, dims: tuple[int, ...], alpha: Any) -> tuple[int, ...]:
    """The stateless kernels take the full output shape, which must end with alpha's."""
    alpha_dims = tuple(int(s) for s in alpha.shape)
    if len(alpha_dims) > len(dims) or dims[len(dims) - len(alpha_dims):] != alpha_dims:
        ctx.invalid_argument("Shape passed in must end with broadcasted shape.")
    return dims[:len(dims) - len(alpha_dims)]


@register_kernel("StatelessRandomGammaV2")
def _stateless_gamma_v2(ctx: KernelContext, shape: Any, seed: Any, alpha: Any) -> Any:
    dims = output_shape(ctx, shape)
    check_seed(ctx, seed)
    if math.prod(dims) == 0:
        return ctx.xp.zeros(dims, dtype=ctx.dtype(ctx.output_dtypes[0]))
    gen = key_counter_from_seed(ctx, seed)
    return _gamma(ctx, _stateless_dims(ctx, dims, alpha), alpha, lambda n: gen)


@register_kernel("StatelessRandomGammaV3")
def _stateless_gamma_v3(ctx: KernelContext, shape: Any, key: Any, counter: Any, alg: Any, alpha: Any) -> Any:
    gen, algorithm = key_counter_alg(ctx, key, counter, alg)
    dims = output_shape(ctx, shape)
    if math.prod(dims) == 0:
        return ctx.xp.zeros(dims, dtype=ctx.dtype(ctx.output_dtypes[0]))
    check_algorithm(ctx, algorithm)
    return _gamma(ctx, _stateless_dims(ctx, dims, alpha), alpha, lambda n: gen)


register_shape("RandomGamma")(samples_then_params_shape)


@register_shape("StatelessRandomGammaV2", "StatelessRandomGammaV3")
def _stateless_gamma_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    if ctx.op_type == "StatelessRandomGammaV2":
        seed_shape(ctx, 1)
    else:
        key_counter_alg_shapes(ctx, 1)
    return [shape_from_shape_tensor(ctx, 0)]


# -- conformance -------------------------------------------------------------------------------------
I32 = DataType.DT_INT32
_ALPHAS = [0.05, 0.5, 0.999, 1.5, 3.0, 25.0, 1000.0, 1e-3]
_NOTE_ONE = "alpha exactly one: NumPy's log1p, within an ulp of TF's (the C library's) in float64"
_SHAPES = [{"alpha": s} for s in ((), (3,), (2, 2), (0,), (5,))]
_STATELESS = {"StatelessRandomGammaV2": {"seed": literal([3, -4], DataType.DT_INT64)},
              "StatelessRandomGammaV3": {"key": literal([0xFEED_F00D_1234], DataType.DT_UINT64),
                                         "counter": literal([7, 2**63 + 5], DataType.DT_UINT64),
                                         "alg": literal(1, I32)}}


def _gamma_cases(op: str, fixed: dict[str, Any], full_shape: bool) -> list:
    def shaped(samples: list[int], alpha_shape: tuple[int, ...]) -> Any:
        return literal(samples + list(alpha_shape) if full_shape else samples, I32)

    out = [case({**fixed, "shape": shaped([7], (8,)), "alpha": literal(_ALPHAS)}, id=f"{op}/alphas"),
           case({**fixed, "shape": shaped([3], (2, 2)), "alpha": literal([[0.2, 2.0], [4.0, 0.01]])},
                id=f"{op}/matrix"),
           case({**fixed, "shape": shaped([200], (2,)), "alpha": literal([0.3, 7.0])}, id=f"{op}/many"),
           case({**fixed, "shape": shaped([9], (3,)), "alpha": literal([1.0, 2.0, 1.0])}, id=f"{op}/alpha-one",
                compare="ew", note=_NOTE_ONE),
           case({**fixed, "shape": shaped([0], (1,)), "alpha": literal([1.5])}, id=f"{op}/no-samples"),
           case({**fixed, "shape": literal([-2, 1], I32), "alpha": literal([1.5])}, id=f"{op}/negative-dim")]
    if full_shape:
        out.append(case({**fixed, "shape": literal([4, 3], I32), "alpha": literal([1.5, 2.0])},
                        id=f"{op}/shape-not-ending-in-alpha"))
    return out


conformance("RandomGamma", shape=shape(max_rank=2), alpha=positive(), seed=one_of(7, -3, 2**40 + 1),
            seed2=one_of(0, 11), compare="exact", shapes=_SHAPES,
            cases=_gamma_cases("RandomGamma", {"seed": 5, "seed2": 9}, False),
            no_gradient="its gradient (through RandomGammaGrad) comes with that kernel (the math family)")
for _op, _fixed in _STATELESS.items():
    conformance(_op, shape=literal([6, 2], I32), alpha=uniform(0.05, 5.0), compare="exact", shapes=[{"alpha": (2,)}],
                cases=_gamma_cases(_op, _fixed, True), live=4,
                **({"seed": _cases.seed_pair()} if _op.endswith("V2") else
                   {"key": _cases.key(), "counter": _cases.counter(), "alg": _cases.algorithm()}),
                no_gradient="its gradient (through RandomGammaGrad) comes with that kernel (the math family)")
divergence(("RandomGamma", "StatelessRandomGammaV2", "StatelessRandomGammaV3"), when="alpha exactly 1, float64",
           tf="an exponential `-log1p(-u)` with the C library's log1p",
           ours="NumPy's log1p (no NumPy or SciPy function reaches the C library's): the last bit differs for about "
                "7% of samples (float32 and half samples round to TF's)")
