"""The ops behind ``tf.random.Generator``: StatefulUniform, StatefulUniformInt, StatefulUniformFullInt,
StatefulStandardNormal(V2), StatefulTruncatedNormal, RngSkip, RngReadAndSkip; and NonDeterministicInts.

The state is an int64 resource variable (``stateful_random_ops.cc``): for Philox, ``[counter_lo,
counter_hi, key]`` (the 128-bit counter in two int64, the two key words in one, low word first); the
deprecated StatefulStandardNormal reads the algorithm from a leading element.  A draw of ``n`` values
fills the output from the generator the state names, as the stateless V2 ops do, and moves the counter
on by ``256 n`` blocks; RngSkip moves it by ``256 delta``, RngReadAndSkip returns the state first.
Same state, same bits as TF.  ThreeFry (algorithm 2) is XLA's only: TF's CPU kernels refuse it with
UnimplementedError, and so does tfops_py.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.errors import UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._philox import MASK32, Philox, fresh_seeds
from tfops_py.kernels._shape_util import shape_from_shape_tensor
from tfops_py.kernels.random._base import output_shape
from tfops_py.kernels.random.random_ops import check_bounds, int_bounds
from tfops_py.kernels.random.stateless_random_ops import PHILOX, THREEFRY, draw
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.resources.resource_variable_ops import variable_of
from tfops_py.kernels.resources.state_ops import VariableRef, locked

_U64 = (1 << 64) - 1
PHILOX_STATE_SIZE = 3  # two counter int64, one key int64
BLOCKS_PER_OUTPUT = 256


def _scalar(ctx: KernelContext, value: Any, index: int) -> int:
    """TF's ``GetScalar``: input ``index`` must be 0-D."""
    v = ctx.host(value)
    if v.ndim != 0:
        ctx.invalid_argument(f"input {index} (0-based) must have shape [], not {format_shape(v.shape)}")
    return int(v)


def _state(ctx: KernelContext, var: VariableRef) -> np.ndarray:
    """A host copy of the RNG state (TF's ``CheckState``); hold the variable's lock."""
    state = np.asarray(ctx.host(var.value))
    if state.dtype != np.int64:
        name = var.tf_dtype.short_name if var.tf_dtype is not None else state.dtype.name
        ctx.invalid_argument(f"dtype of RNG state variable must be int64, not {name}")
    if state.ndim != 1:
        ctx.invalid_argument(f"RNG state must have one and only one dimension, not {state.ndim}")
    return state


def _check_algorithm(ctx: KernelContext, alg: int, state: np.ndarray, skip: int = 0) -> None:
    if alg == THREEFRY:
        raise ctx.error(UnimplementedError, "Non-XLA devices don't support the ThreeFry algorithm.")
    if alg != PHILOX:
        ctx.invalid_argument(f"Unsupported algorithm id: {alg}")
    if state.shape[0] < skip + PHILOX_STATE_SIZE:
        ctx.invalid_argument(f"For the Philox algorithm, the size of state must be at least "
                             f"{skip + PHILOX_STATE_SIZE}; got {state.shape[0]}")


def philox_of_state(words: np.ndarray) -> Philox:
    """The generator three int64 state words name."""
    lo, hi, key = (int(w) & _U64 for w in words[:PHILOX_STATE_SIZE])
    return Philox(lo | (hi << 64), (key & MASK32, key >> 32))


def _state_of_philox(gen: Philox) -> list[int]:
    k0, k1 = gen.key
    words = [gen.counter & _U64, gen.counter >> 64, k0 | (k1 << 32)]
    return [w - (1 << 64) if w >> 63 else w for w in words]  # as int64


def _advance(ctx: KernelContext, var: VariableRef, state: np.ndarray, skip: int, gen: Philox, blocks: int) -> None:
    """Write ``gen`` moved on by ``blocks`` (mod 2**64, as TF's uint64 arithmetic) into the state."""
    new = state.copy()
    new[skip:skip + PHILOX_STATE_SIZE] = _state_of_philox(gen.skip(blocks & _U64))
    var.set(ctx.asarray(new, DataType.DT_INT64), shared=False)


def _stateful(kind: str, alg_from_state: bool = False):
    def kernel(ctx: KernelContext, resource: Any, *rest: Any) -> Any:
        if alg_from_state:
            (shape,) = rest
            alg = None
        else:
            algorithm, shape, *bounds_in = rest
            alg = _scalar(ctx, algorithm, 1)
        bounds = (0, 0)
        if kind == "int":
            bounds = int_bounds(ctx, *bounds_in)
            check_bounds(ctx, *bounds)  # before the empty-output exit, as TF
        dims = output_shape(ctx, shape)
        n = math.prod(dims)
        var = variable_of(ctx, resource)
        with locked(ctx, var, always=True):
            state = _state(ctx, var)
            skip = 0
            if alg is None:
                if state.shape[0] < 1:
                    ctx.invalid_argument("Size of tensor must be at least 1")
                alg, skip = int(state[0]), 1
            _check_algorithm(ctx, alg, state, skip)
            gen = philox_of_state(state[skip:])
            _advance(ctx, var, state, skip, gen, BLOCKS_PER_OUTPUT * n)
        if n == 0:
            return ctx.xp.zeros(dims, dtype=ctx.dtype(ctx.output_dtypes[0]))
        return draw(ctx, gen, dims, kind, bounds)

    return kernel


STATEFUL_OPS = {"StatefulUniform": "uniform", "StatefulStandardNormalV2": "normal",
                "StatefulTruncatedNormal": "truncated", "StatefulUniformInt": "int",
                "StatefulUniformFullInt": "full"}
for _op, _kind in STATEFUL_OPS.items():
    register_kernel(_op)(_stateful(_kind))
register_kernel("StatefulStandardNormal")(_stateful("normal", alg_from_state=True))


def _skip(ctx: KernelContext, resource: Any, algorithm: Any, delta: Any) -> np.ndarray:
    """Move the state's counter on by ``256 delta`` blocks; the three state words before."""
    alg = _scalar(ctx, algorithm, 1)
    steps = _scalar(ctx, delta, 2)
    var = variable_of(ctx, resource)
    with locked(ctx, var, always=True):
        state = _state(ctx, var)
        _check_algorithm(ctx, alg, state)
        _advance(ctx, var, state, 0, philox_of_state(state), BLOCKS_PER_OUTPUT * steps)
    return state[:PHILOX_STATE_SIZE]


@register_kernel("RngSkip")
def _rng_skip(ctx: KernelContext, resource: Any, algorithm: Any, delta: Any) -> tuple:
    _skip(ctx, resource, algorithm, delta)
    return ()


@register_kernel("RngReadAndSkip")
def _rng_read_and_skip(ctx: KernelContext, resource: Any, alg: Any, delta: Any) -> Any:
    return ctx.asarray(_skip(ctx, resource, alg, delta), DataType.DT_INT64)


@register_kernel("NonDeterministicInts")
def _non_deterministic_ints(ctx: KernelContext, shape: Any) -> Any:
    """Random 64-bit values cast to ``dtype`` (TF's ``random::New64`` per element): Philox under fresh
    random seeds, drawn as the full-range int distribution of the output dtype."""
    dt = ctx.output_dtypes[0]
    if dt not in (DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_INT64, DataType.DT_UINT64):
        ctx.invalid_argument(f"Unsupported dtype: {dt.name}")
    dims = output_shape(ctx, shape)
    if math.prod(dims) == 0:
        return ctx.xp.zeros(dims, dtype=ctx.dtype(dt))
    return draw(ctx, Philox.from_seeds(*fresh_seeds()), dims, "full")


# -- shape functions -------------------------------------------------------------------------------------
@register_shape(*STATEFUL_OPS)
def _stateful_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    if ctx.op_type == "StatefulUniformInt":
        ctx.with_rank(ctx.input(3), 0)
        ctx.with_rank(ctx.input(4), 0)
    return [shape_from_shape_tensor(ctx, 2)]


@register_shape("StatefulStandardNormal")
def _stateful_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [shape_from_shape_tensor(ctx, 1)]


@register_shape("NonDeterministicInts")
def _non_deterministic_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [shape_from_shape_tensor(ctx, 0)]


@register_shape("RngSkip")
def _rng_skip_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    ctx.with_rank(ctx.input(2), 0)
    return []


@register_shape("RngReadAndSkip")
def _rng_read_and_skip_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    ctx.with_rank(ctx.input(2), 0)
    return [PartialTensorShape([PHILOX_STATE_SIZE])]


# -- conformance: a state variable, two draws chained by control dependencies, then the state ---------------
CONFORMANCE_FAMILY = "random"
_STATES = {"small": [1, 2, 3], "carry": [-1, -1, -7], "long": [5, 2**40, 9, 11], "short": [1, 2]}


def _node(scope: Any, op: str, inputs: list, attrs: dict) -> tuple[Any, list]:
    """A node of ``op`` (no C++ class for these ops): its Operation and outputs."""
    from tfops_py.framework.node_builder import add_node
    from tfops_py.framework.op_def import get_op_def
    from tfops_py.framework.operation import Operation, Output

    node = add_node(scope, get_op_def(op), inputs, attrs)
    assert node is not None
    return Operation(node), [Output(node, i) for i in range(node.num_outputs())]


def _alg_name(op: str) -> str:
    return "alg" if op == "RngReadAndSkip" else "algorithm"


def _alg_value(op: str, alg: int) -> np.ndarray:
    return np.asarray(alg, np.int32 if op == "RngReadAndSkip" else np.int64)


def _state_case(op: str, args: dict, attrs: dict, alg: int = PHILOX):
    """``ours``/``theirs`` builders: a variable holding the state input, ``op`` run twice (control
    dependencies), the state read back.  ``args``: the inputs after ``resource`` and the algorithm."""
    def ours(scope: Any, state: Any) -> tuple[list, list]:
        from tfops_py import ops

        var = ops.VarHandleOp(scope.WithOpName("state"), DataType.DT_INT64, state.shape().as_tuple(),
                              shared_name="state")
        init = ops.AssignVariableOp(scope, var, state).operation
        inputs = [var.resource, ops.Const(scope, _alg_value(op, alg)), *(ops.Const(scope, v) for v in args.values())]
        fetches, after = [], scope
        for _ in range(2):
            node, outs = _node(after, op, inputs, attrs)
            fetches += outs
            after = scope.WithControlDependencies([node])
        return fetches + [ops.ReadVariableOp(after, var, DataType.DT_INT64).value], [init]

    def theirs(tf: Any, state: Any) -> tuple[list, list]:
        var = tf.raw_ops.VarHandleOp(dtype=tf.int64, shape=state.shape, shared_name="state")
        init = tf.raw_ops.AssignVariableOp(resource=var, value=state)
        named = {_alg_name(op): tf.constant(_alg_value(op, alg)), **{k: tf.constant(v) for k, v in args.items()}}
        fetches, deps = [], []
        for _ in range(2):
            with tf.control_dependencies(deps):
                out = getattr(tf.raw_ops, op)(resource=var, **named, **attrs)
            deps = [out]
            fetches += [out] if op != "RngSkip" else []
        with tf.control_dependencies(deps):
            read = tf.raw_ops.ReadVariableOp(resource=var, dtype=tf.int64)
        return fetches + [read], [init]

    return ours, theirs


def _v1_normal_case(dt: DataType, n: int):
    """StatefulStandardNormal (``[alg, *state]``; TF refuses the op now) against V2 on the state after ``alg``."""
    def ours(scope: Any, state: Any) -> tuple[list, list]:
        from tfops_py import ops

        size = state.shape().as_tuple()[0] + 1
        var = ops.VarHandleOp(scope.WithOpName("state"), DataType.DT_INT64, [size], shared_name="state")
        full = ops.Concat(scope, [ops.Const(scope, np.array([PHILOX], np.int64)), state], ops.Const(scope, 0))
        init = ops.AssignVariableOp(scope, var, full).operation
        node, outs = _node(scope, "StatefulStandardNormal", [var.resource, ops.Const(scope, np.array([n], np.int32))],
                           {"dtype": dt})
        read = ops.ReadVariableOp(scope.WithControlDependencies([node]), var, DataType.DT_INT64).value
        return outs + [ops.Slice(scope, read, [1], [-1]).output], [init]

    def theirs(tf: Any, state: Any) -> tuple[list, list]:
        var = tf.raw_ops.VarHandleOp(dtype=tf.int64, shape=state.shape, shared_name="state")
        init = tf.raw_ops.AssignVariableOp(resource=var, value=state)
        out = tf.raw_ops.StatefulStandardNormalV2(resource=var, algorithm=tf.constant(1, tf.int64),
                                                  shape=tf.constant([n], tf.int32), dtype=dt.numpy_dtype)
        with tf.control_dependencies([out]):
            read = tf.raw_ops.ReadVariableOp(resource=var, dtype=tf.int64)
        return [out, read], [init]

    return ours, theirs


def _non_deterministic_case(dt: DataType, dims: list[int]):
    """NonDeterministicInts: its dtype and shape (the values are random on both sides)."""
    def ours(scope: Any) -> list:
        from tfops_py import ops

        _, (x,) = _node(scope, "NonDeterministicInts", [ops.Const(scope, np.array(dims, np.int64))], {"dtype": dt})
        return [ops.ZerosLike(scope, x).y, ops.Shape(scope, x).output]

    def theirs(tf: Any) -> list:
        x = tf.raw_ops.NonDeterministicInts(shape=tf.constant(dims, tf.int64), dtype=dt.numpy_dtype)
        return [tf.zeros_like(x), tf.shape(x)]

    return ours, theirs


def _declare() -> None:
    from tfops_py.conformance import conformance, divergence, graph_case, literal

    def cases(op: str, variants: dict[str, tuple[dict, dict]], states=("small", "carry", "long")) -> list:
        out = []
        for name, (args, attrs) in variants.items():
            for state in states:
                ours, theirs = _state_case(op, args, attrs)
                out.append(graph_case(f"{op}/{name}/{state}", ours, theirs, compare="exact",
                                      state=literal(_STATES[state], DataType.DT_INT64)))
        for alg in (THREEFRY, 0):  # TF's CPU refuses ThreeFry (UnimplementedError) and unknown ids
            args, attrs = next(iter(variants.values()))
            ours, theirs = _state_case(op, args, attrs, alg)
            out.append(graph_case(f"{op}/alg{alg}", ours, theirs, compare="exact",
                                  state=literal(_STATES["small"], DataType.DT_INT64)))
        args, attrs = next(iter(variants.values()))
        ours, theirs = _state_case(op, args, attrs)
        out.append(graph_case(f"{op}/short-state", ours, theirs, compare="exact",
                              state=literal(_STATES["short"], DataType.DT_INT64)))
        return out

    def sized(dtypes) -> dict[str, tuple[dict, dict]]:
        return {f"{dt.short_name}/{n}": ({"shape": np.array([n], np.int32)}, {"dtype": dt})
                for dt in dtypes for n in (3, 1025)}

    floats = (DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE)
    for op in ("StatefulUniform", "StatefulStandardNormalV2", "StatefulTruncatedNormal"):
        conformance(op, generate=False, graph_cases=cases(op, sized(floats)))
    conformance("StatefulUniformFullInt", generate=False, graph_cases=cases("StatefulUniformFullInt", sized(
        (DataType.DT_INT32, DataType.DT_INT64, DataType.DT_UINT32, DataType.DT_UINT64))))
    bounded = {f"{np.dtype(t).name}/{lo}..{hi}": ({"shape": np.array([7], np.int64), "minval": t(lo), "maxval": t(hi)},
                                                  {})
               for t, lo, hi in ((np.int32, -5, 100), (np.int64, -2**62, 2**62), (np.int32, 3, 3))}
    conformance("StatefulUniformInt", generate=False, graph_cases=cases("StatefulUniformInt", bounded))
    conformance("RngSkip", generate=False, graph_cases=cases(
        "RngSkip", {f"delta{d}": ({"delta": np.int64(d)}, {}) for d in (3, 0, -1)}))
    # TF corrupts its heap for a state longer than three elements (the divergence below): no such case
    conformance("RngReadAndSkip", generate=False, graph_cases=cases(
        "RngReadAndSkip", {f"delta{d}": ({"delta": np.uint64(d)}, {}) for d in (5, 0, 2**63 + 1)}, ("small", "carry")))
    divergence("RngReadAndSkip", when="a Philox state of more than three elements",
               tf="writes past its three-element output (heap corruption: the process aborts, e.g. `free(): invalid "
                  "next size`)",
               ours="returns the first three elements and moves the counter on, as for a state of three")
    v1 = []
    for dt in floats:
        ours, theirs = _v1_normal_case(dt, 5)
        v1.append(graph_case(f"StatefulStandardNormal/{dt.short_name}", ours, theirs, compare="exact",
                             state=literal(_STATES["small"], DataType.DT_INT64)))
    conformance("StatefulStandardNormal", generate=False, graph_cases=v1)
    divergence("StatefulStandardNormal", when="always",
               tf="UnimplementedError: the op left GraphDefs at version 29 (TF builds StatefulStandardNormalV2)",
               ours="runs it: the algorithm is the state's first element, the rest is V2's state")
    conformance("NonDeterministicInts", generate=False, graph_cases=[
        graph_case(f"NonDeterministicInts/{dt.short_name}/{'x'.join(map(str, dims))}",
                   *_non_deterministic_case(dt, dims), compare="exact")
        for dt in (DataType.DT_INT32, DataType.DT_UINT32, DataType.DT_INT64, DataType.DT_UINT64)
        for dims in ([3], [2, 0], [9, 5])])


_declare()
