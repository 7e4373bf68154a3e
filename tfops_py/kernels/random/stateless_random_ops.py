"""Stateless random ops: the V1 ops seeded by a ``seed`` tensor, the V2 ops by ``key``/``counter``/``alg``,
and the ops that turn a seed into a key and counter.  Same inputs, same bits as TF 2.21's CPU kernels.

V1 (``stateless_random_ops.cc``) scrambles the two seeds into a Philox key and counter with one Philox
block under a fixed key (``GenerateKey``).  V2 (``stateless_random_ops_v2.cc``) takes them as given:
``key`` is one uint64 (the two key words), ``counter`` two uint64 (the four counter words, low first).
``alg`` 1 (Philox) and 3 (auto-select: Philox on CPU) run; TF's CPU kernels refuse ThreeFry (2) with
``Unsupported algorithm id: 2`` and so does tfops_py.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, divergence, literal, shape
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._philox import MASK32, Philox
from tfops_py.kernels._shape_util import with_value
from tfops_py.kernels.random import _cases, _dist
from tfops_py.kernels.random._base import output_shape, random_shape, scalar_input
from tfops_py.kernels.random.random_ops import SIZES, check_bounds, int_bounds
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "random"

PHILOX, THREEFRY, AUTO_SELECT = 1, 2, 3
_KEY_SCRAMBLE = (0x3EC8F720, 0x02461E29)  # GenerateKey's fixed key
_U64 = (1 << 64) - 1


# -- seeds, keys and counters -------------------------------------------------------------------------
def check_seed(ctx: KernelContext, seed: Any) -> Any:
    """A V1 ``seed`` input must have shape [2]; its host copy."""
    s = ctx.host(seed)
    if s.shape != (2,):
        ctx.invalid_argument(f"seed must have shape [2], not {format_shape(s.shape)}")
    return s


def key_counter_from_seed(ctx: KernelContext, seed: Any) -> Philox:
    """``GenerateKey``: the seed pair (int32/int64, sign-extended to 64 bits) run through one Philox block."""
    s = check_seed(ctx, seed)
    if s.dtype not in (np.int32, np.int64):
        ctx.invalid_argument(f"Invalid seed type: {s.dtype.name}")
    seed0, seed1 = (int(v) & _U64 for v in s.tolist())
    mix = Philox(seed0 | (seed1 << 64), _KEY_SCRAMBLE).block()
    return Philox.from_words((0, 0, mix[2], mix[3]), (mix[0], mix[1]))


def key_counter_alg(ctx: KernelContext, key: Any, counter: Any, alg: Any) -> tuple[Philox, int]:
    """``GetKeyCounterAlgFromInputs``: alg a scalar int32 (3 means Philox), key [1], counter [>= 2].

    TF asks the counter for at least ``alg`` elements (1 for Philox) and then reads two; tfops_py asks
    for the two it reads."""
    a = ctx.host(alg)
    if a.ndim != 0:
        ctx.invalid_argument(f"input 3 (0-based) must have shape [], not {format_shape(a.shape)}")
    algorithm = PHILOX if int(a) == AUTO_SELECT else int(a)
    k, c = ctx.host(key), ctx.host(counter)
    if k.shape != (1,):
        ctx.invalid_argument(f"key must have shape [1], not {format_shape(k.shape)}. "
                             "(Note that batched keys are not supported yet.)")
    needed = 2 if algorithm == PHILOX else algorithm
    if c.ndim != 1 or c.shape[0] < needed:
        ctx.invalid_argument(f"counter must be a vector with length at least {needed}; got shape: "
                             f"{format_shape(c.shape)}. (Note that batched counters are not supported yet.)")
    key_word = int(k[0])
    words = int(c[0]) | (int(c[1]) << 64) if c.shape[0] >= 2 else int(c[0])
    return Philox(words, (key_word & MASK32, key_word >> 32)), algorithm


def check_algorithm(ctx: KernelContext, algorithm: int) -> None:
    if algorithm != PHILOX:
        ctx.invalid_argument(f"Unsupported algorithm id: {algorithm}")


def key_counter_outputs(ctx: KernelContext, gen: Philox) -> tuple[Any, Any]:
    """The V2 ``key`` [1] and ``counter`` [2] (uint64) that name ``gen``."""
    k0, k1 = gen.key
    c = gen.counter
    key = ctx.asarray(np.array([k0 | (k1 << 32)], np.uint64), DataType.DT_UINT64)
    counter = ctx.asarray(np.array([c & _U64, c >> 64], np.uint64), DataType.DT_UINT64)
    return key, counter


# -- kernels -------------------------------------------------------------------------------------------
def draw(ctx: KernelContext, gen: Philox, dims: tuple[int, ...], kind: str, bounds: tuple[int, int] = (0, 0)) -> Any:
    """``FillPhiloxRandom`` from ``gen`` itself (no reservation: stateless ops start at their counter)."""
    n = math.prod(dims)
    dt = ctx.output_dtypes[0]
    xp, out_dtype = ctx.xp, ctx.dtype(dt)
    if kind == "truncated":
        flat = _dist.truncated_normal(xp, gen, n, dt, out_dtype)
    else:
        transform = {"uniform": lambda: _dist.uniform(dt, out_dtype), "normal": lambda: _dist.normal(dt, out_dtype),
                     "int": lambda: _dist.uniform_int(dt, *bounds, out_dtype),
                     "full": lambda: _dist.full_int(dt, out_dtype)}[kind]()
        flat = _dist.generate(xp, gen, n, _dist.per_block(dt), transform)
    return xp.reshape(flat, dims)


def _empty(ctx: KernelContext, dims: tuple[int, ...]) -> Any:
    return ctx.xp.zeros(dims, dtype=ctx.dtype(ctx.output_dtypes[0]))


def _v1(kind: str):
    def kernel(ctx: KernelContext, shape: Any, seed: Any, minval: Any = None, maxval: Any = None) -> Any:
        dims = output_shape(ctx, shape)
        check_seed(ctx, seed)
        if math.prod(dims) == 0:
            return _empty(ctx, dims)
        gen = key_counter_from_seed(ctx, seed)
        bounds = (0, 0)
        if kind == "int":
            bounds = int_bounds(ctx, minval, maxval)
            check_bounds(ctx, *bounds)
        return draw(ctx, gen, dims, kind, bounds)

    return kernel


def _v2(kind: str):
    def kernel(ctx: KernelContext, shape: Any, key: Any, counter: Any, alg: Any, minval: Any = None,
               maxval: Any = None) -> Any:
        gen, algorithm = key_counter_alg(ctx, key, counter, alg)
        dims = output_shape(ctx, shape)
        if math.prod(dims) == 0:
            return _empty(ctx, dims)
        bounds = (0, 0)
        if kind == "int":
            bounds = int_bounds(ctx, minval, maxval)
            check_bounds(ctx, *bounds)
        check_algorithm(ctx, algorithm)
        return draw(ctx, gen, dims, kind, bounds)

    return kernel


V1_OPS = {"StatelessRandomUniform": "uniform", "StatelessRandomNormal": "normal",
          "StatelessTruncatedNormal": "truncated", "StatelessRandomUniformInt": "int",
          "StatelessRandomUniformFullInt": "full"}
V2_OPS = {"StatelessRandomUniformV2": "uniform", "StatelessRandomNormalV2": "normal",
          "StatelessTruncatedNormalV2": "truncated", "StatelessRandomUniformIntV2": "int",
          "StatelessRandomUniformFullIntV2": "full"}
for _op, _kind in V1_OPS.items():
    register_kernel(_op)(_v1(_kind))
for _op, _kind in V2_OPS.items():
    register_kernel(_op)(_v2(_kind))


@register_kernel("StatelessRandomGetKeyCounter")
def _get_key_counter(ctx: KernelContext, seed: Any) -> tuple[Any, Any]:
    return key_counter_outputs(ctx, key_counter_from_seed(ctx, seed))


@register_kernel("StatelessRandomGetAlg")
def _get_alg(ctx: KernelContext) -> Any:
    return ctx.asarray(np.int32(PHILOX), DataType.DT_INT32)


@register_kernel("StatelessRandomGetKeyCounterAlg")
def _get_key_counter_alg(ctx: KernelContext, seed: Any) -> tuple[Any, Any, Any]:
    return (*key_counter_outputs(ctx, key_counter_from_seed(ctx, seed)), _get_alg(ctx))


# -- shape functions -----------------------------------------------------------------------------------
def seed_shape(ctx: InferenceContext, i: int) -> None:
    """A seed input: a vector of two."""
    s = ctx.with_rank(ctx.input(i), 1)
    with_value(ctx, s[0], 2)


def key_counter_alg_shapes(ctx: InferenceContext, first: int) -> None:
    """V2 inputs ``key``, ``counter``, ``alg`` at ``first``..``first + 2``: vectors, a scalar; key of one."""
    key = ctx.with_rank(ctx.input(first), 1)
    ctx.with_rank(ctx.input(first + 1), 1)
    ctx.with_rank(ctx.input(first + 2), 0)
    with_value(ctx, key[0], 1)


@register_shape(*V1_OPS)
def _v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    seed_shape(ctx, 1)
    if ctx.op_type == "StatelessRandomUniformInt":
        scalar_input(ctx, 2, "minval")
        scalar_input(ctx, 3, "maxval")
    return random_shape(ctx)


@register_shape(*V2_OPS)
def _v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    key_counter_alg_shapes(ctx, 1)
    if ctx.op_type == "StatelessRandomUniformIntV2":
        scalar_input(ctx, 4, "minval")
        scalar_input(ctx, 5, "maxval")
    return random_shape(ctx)


@register_shape("StatelessRandomGetKeyCounter", "StatelessRandomGetKeyCounterAlg")
def _get_key_counter_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    seed_shape(ctx, 0)
    shapes = [PartialTensorShape([1]), PartialTensorShape([2])]
    return shapes + [PartialTensorShape([])] * (ctx.num_outputs - 2)


@register_shape("StatelessRandomGetAlg")
def _get_alg_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


# -- conformance ---------------------------------------------------------------------------------------
I32, I64, U64 = DataType.DT_INT32, DataType.DT_INT64, DataType.DT_UINT64
KEY = literal([0x1234_5678_9ABC_DEF0], U64)
COUNTER = literal([2**64 - 3, 17], U64)


def _hand(op: str, v2: bool, **extra: Any) -> list:
    """Sizes across Philox blocks, malformed seeds/keys/counters/algs, empty outputs."""
    fixed = {"key": KEY, "counter": COUNTER, "alg": literal(1, I32)} if v2 else {"seed": literal([7, 11], I64)}
    out = [case({**fixed, **extra, "shape": literal(s, I32)}, id=f"{op}/size-{'x'.join(map(str, s))}") for s in SIZES]
    bad: dict[str, dict[str, Any]] = {"negative-dim": {"shape": literal([2, -3], I32)},
                                      "matrix-shape": {"shape": literal([[2, 3]], I32)}}
    if v2:
        bad |= {"key-of-two": {"key": literal([1, 2], U64)}, "counter-of-one": {"counter": literal([5], U64)},
                "counter-of-three": {"counter": literal([5, 6, 7], U64)}, "threefry": {"alg": literal(2, I32)},
                "auto-select": {"alg": literal(3, I32)}, "alg-zero": {"alg": literal(0, I32)},
                "alg-vector": {"alg": literal([1], I32)}, "threefry-empty": {"alg": literal(2, I32),
                                                                            "shape": literal([0], I32)},
                "bad-key-empty": {"key": literal([1, 2], U64), "shape": literal([0], I32)}}
    else:
        bad |= {"seed-of-three": {"seed": literal([1, 2, 3], I64)}, "seed-matrix": {"seed": literal([[1, 2]], I64)},
                "bad-seed-empty": {"seed": literal([1, 2, 3], I32), "shape": literal([0], I32)},
                "int32-seed": {"seed": literal([-1, 2], I32)}}
    for name, named in bad.items():
        out.append(case({**fixed, **extra, "shape": literal([5], I32), **named}, id=f"{op}/{name}"))
    return out


_V2_INPUTS = {"key": _cases.key(), "counter": _cases.counter(), "alg": _cases.algorithm()}
for _op, _kind in {**V1_OPS, **V2_OPS}.items():
    _v2_op = _op in V2_OPS
    _extra = {"minval": literal(-7), "maxval": literal(100)} if _kind == "int" else {}
    _op_cases = _hand(_op, _v2_op, **_extra)
    if _kind == "int":
        _fixed = {"key": KEY, "counter": COUNTER, "alg": literal(1, I32)} if _v2_op else {"seed": literal([7, 11], I64)}
        _op_cases += [case({**_fixed, "shape": literal([9], I32), "minval": lo, "maxval": hi}, id=f"{_op}/{name}")
                   for name, lo, hi in (("empty-range", literal(5), literal(5)),
                                        ("minval-vector", literal([5]), literal(9)),
                                        ("int32-extremes", literal(-2**31, I32), literal(2**31 - 1, I32)),
                                        ("int64-extremes", literal(-2**63, I64), literal(2**63 - 1, I64)))]
        _op_cases.append(case({**_fixed, "shape": literal([0], I32), "minval": literal(5), "maxval": literal(5)},
                           id=f"{_op}/empty-range-no-output"))
    conformance(_op, shape=shape(), compare="exact", cases=_op_cases, **_extra,
                **(_V2_INPUTS if _v2_op else {"seed": _cases.seed_pair()}))

conformance("StatelessRandomGetKeyCounter", compare="exact", generate=False, cases=[
    case({"seed": v}, id=f"StatelessRandomGetKeyCounter/{name}") for name, v in (
        ("int64", literal([1, 2], I64)), ("int32", literal([1, 2], I32)), ("negative", literal([-1, -2**31], I32)),
        ("wide", literal([2**63 - 1, -2**63], I64)), ("three", literal([1, 2, 3], I64)),
        ("matrix", literal([[1, 2]], I32)))])
conformance("StatelessRandomGetKeyCounterAlg", compare="exact", generate=False, cases=[
    case({"seed": literal([1, 2], I64)}, id="StatelessRandomGetKeyCounterAlg/int64"),
    case({"seed": literal([-3, 9], I32)}, id="StatelessRandomGetKeyCounterAlg/int32"),
    case({"seed": literal([1], I32)}, id="StatelessRandomGetKeyCounterAlg/one")])
conformance("StatelessRandomGetAlg", compare="exact", generate=False, cases=[case(id="StatelessRandomGetAlg/cpu")])

divergence(tuple(V2_OPS), when="Philox with a counter of one element",
           tf="accepts it (it asks for at least `alg` = 1 element) and reads a second uint64 past the end of the "
              "tensor", ours="InvalidArgumentError: the counter must have at least the two elements Philox reads",
           applies=lambda ins, attrs: np.ndim(ins["counter"]) == 1 and np.shape(ins["counter"])[0] == 1
           and int(np.asarray(ins["alg"])) in (PHILOX, AUTO_SELECT))
divergence("StatelessRandomUniformIntV2", when="dtype uint32 or uint64",
           tf="allowed by the op definition, no CPU kernel (NotFoundError)",
           ours="drawn like int32/int64: `minval + bits % (maxval - minval)`")
