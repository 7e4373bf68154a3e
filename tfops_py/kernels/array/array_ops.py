"""Joining, splitting, repeating and selecting: ConcatV2 (and v1 Concat), Pack, Unpack, Split, Tile, Pad,
Select, SelectV2.

Unpack and Split return views on NumPy (no copy).
"""
from __future__ import annotations

import math

from tfops_py.conformance import BROADCAST, conformance, divergence, family_cases, values
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import broadcast_shapes
from tfops_py.kernels._shape_util import (INT64_MAX, add_dim, axis_from_scalar_input, divide_dim, host_ints,
                                          merge_shapes, multiply_dim, shape_from_shape_tensor, with_value)
from tfops_py.kernels.array.fill_ops import zeros_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


# -- ConcatV2 ------------------------------------------------------------------------------------------
@register_shape("ConcatV2")
def _concat_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    n = ctx.num_inputs - 1
    return concat_shape(ctx, n, list(range(n)))


@register_shape("Concat")
def _concat_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return concat_shape(ctx, 0, list(range(1, ctx.num_inputs)))


def concat_shape(ctx: InferenceContext, axis_input: int, value_inputs: list[int]) -> list[PartialTensorShape]:
    """TF's ``ConcatShapeHelper``: the axis is input ``axis_input`` (0 for Concat, last for ConcatV2)."""
    n = axis_input
    ctx.with_rank(ctx.input(n), 0)
    shapes = [ctx.input(i) for i in value_inputs]
    # TF's first pass (axis not yet known): all ranks agree, no scalars.
    rank = next((s.dims() for s in shapes if not s.unknown_rank()), -1)
    if rank == -1:
        return [unknown_shape()]
    if rank == 0:
        ctx.invalid_argument("Can't concatenate scalars (use tf.stack instead)")
    shapes = [ctx.with_rank(s, rank) for s in shapes]
    axis_t = ctx.input_tensor(n)
    if axis_t is None:
        return [unknown_shape(rank)]
    axis = host_ints(axis_t)[0]
    ctx.with_rank_at_least(shapes[-1], -axis if axis < 0 else axis + 1)
    a = axis + rank if axis < 0 else axis
    last = shapes[-1].as_list()
    before, middle, after = PartialTensorShape(last[:a]), last[a], PartialTensorShape(last[a + 1:])
    for s in reversed(shapes[:-1]):
        dims = s.as_list()
        before = merge_shapes(ctx, PartialTensorShape(dims[:a]), before)
        middle = add_dim(ctx, middle, dims[a])
        after = merge_shapes(ctx, PartialTensorShape(dims[a + 1:]), after)
    return [PartialTensorShape(before.as_list() + [middle] + after.as_list())]  # type: ignore[operator]


@register_kernel("ConcatV2")
def _concat_v2(ctx: KernelContext, values, axis):
    return concat(ctx, values, axis, "axis")


@register_kernel("Concat")
def _concat_v1(ctx: KernelContext, concat_dim, values):
    return concat(ctx, values, concat_dim, "concat_dim")


def concat(ctx: KernelContext, values, axis, axis_name: str):
    """TF's ConcatBaseOp; ``axis_name`` is the axis input's name in messages."""
    a = ctx.host(axis)
    if not (a.ndim == 0 or a.shape == (1,)):
        ctx.invalid_argument(f"{axis_name} tensor should be a scalar integer, but got shape {format_shape(a.shape)}")
    concat_dim = host_ints(a)[0]
    first = tuple(values[0].shape)
    rank = len(first)
    ax = concat_dim + rank if concat_dim < 0 else concat_dim
    if not (0 <= ax < rank or concat_dim == 0):
        ctx.invalid_argument(f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), "
                             f"but got {concat_dim}")
    if any(len(v.shape) == 0 for v in values):
        ctx.invalid_argument("ConcatOp : Can't concatenate scalars (use tf.stack instead)")
    for i, v in enumerate(values):
        shape = tuple(v.shape)
        if len(shape) != rank:
            ctx.invalid_argument(f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                                 f"{format_shape(first)} vs. shape[{i}] = {format_shape(shape)}")
        for j in range(rank):
            if j != ax and shape[j] != first[j]:
                ctx.invalid_argument(f"ConcatOp : Dimension {j} in both shapes must be equal: shape[0] = "
                                     f"{format_shape(first)} vs. shape[{i}] = {format_shape(shape)}")
    return ctx.xp.concat(list(values), axis=ax)


# -- Pack, Unpack --------------------------------------------------------------------------------------
def _pack_axis(ctx: InferenceContext, rank: int) -> int:
    """``GetAxisForPackAndUnpack``: the axis attr checked against ``rank`` and made non-negative."""
    axis = ctx.attr("axis")
    if axis < -rank or axis >= rank:
        ctx.invalid_argument(f"Invalid axis: {axis}; must be in [{-rank},{rank})")
    return axis + rank if axis < 0 else axis


@register_shape("Pack")
def _pack_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    cur = ctx.input(ctx.num_inputs - 1)
    for i in range(ctx.num_inputs - 2, -1, -1):
        cur = merge_shapes(ctx, ctx.input(i), cur, f"From merging shape {i} with other shapes.")
    if cur.unknown_rank():
        return [unknown_shape()]
    axis = _pack_axis(ctx, cur.dims() + 1)
    dims = cur.as_list()
    return [PartialTensorShape(dims[:axis] + [ctx.num_inputs] + dims[axis:])]  # type: ignore[operator]


@register_kernel("Pack")
def _pack(ctx: KernelContext, values):
    first = tuple(values[0].shape)
    rank = len(first) + 1
    axis = ctx.attrs["axis"]
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        ctx.invalid_argument(f"axis = {axis} not in [{-rank}, {rank})")
    for i, v in enumerate(values):
        if tuple(v.shape) != first:
            ctx.invalid_argument(f"Shapes of all inputs must match: values[0].shape = {format_shape(first)} "
                                 f"!= values[{i}].shape = {format_shape(v.shape)}")
    return ctx.xp.stack(list(values), axis=a)


@register_shape("Unpack")
def _unpack_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    if src.unknown_rank():
        return [unknown_shape()] * ctx.num_outputs
    axis = _pack_axis(ctx, src.dims())
    with_value(ctx, src[axis], ctx.num_outputs)
    dims = src.as_list()
    return [PartialTensorShape(dims[:axis] + dims[axis + 1:])] * ctx.num_outputs  # type: ignore[operator]


@register_kernel("Unpack")
def _unpack(ctx: KernelContext, value):
    shape = tuple(value.shape)
    rank, num, axis = len(shape), ctx.attrs["num"], ctx.attrs["axis"]
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        ctx.invalid_argument(f"axis = {axis} not in [{-rank}, {rank})")
    if shape[a] != num:
        ctx.invalid_argument(f"Input shape axis {a} must equal {num}, got shape {format_shape(shape)}")
    lead = (slice(None),) * a
    return ([value[lead + (i, ...)] for i in range(num)],)


# -- Split -----------------------------------------------------------------------------------------------
@register_shape("Split")
def _split_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(1)
    num = ctx.num_outputs
    axis = axis_from_scalar_input(ctx, 0, src.dims())
    if axis == -1:
        return [unknown_shape(src.rank)] * num
    src = ctx.with_rank_at_least(src, axis + 1)
    dims = src.as_list()
    if dims is None:
        return [unknown_shape()] * num
    dims[axis] = divide_dim(ctx, dims[axis], num, "Number of ways to split should evenly divide the split dimension")
    return [PartialTensorShape(dims)] * num


@register_kernel("Split")
def _split(ctx: KernelContext, split_dim, value):
    d = ctx.host(split_dim)
    if d.ndim != 0:
        ctx.invalid_argument(f"split_dim must be a scalar but has rank {d.ndim}")
    shape = tuple(value.shape)
    rank, num, orig = len(shape), ctx.attrs["num_split"], int(d)
    axis = orig + rank if orig < 0 else orig
    if not 0 <= axis < rank:
        ctx.invalid_argument(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {orig}")
    if shape[axis] % num:
        ctx.invalid_argument(f"Number of ways to split should evenly divide the split dimension, but got "
                             f"split_dim {axis} (size = {shape[axis]}) and num_split {num}")
    k = shape[axis] // num
    lead = (slice(None),) * axis
    return ([value[lead + (slice(i * k, (i + 1) * k), ...)] for i in range(num)],)


# -- Tile ---------------------------------------------------------------------------------------------------
@register_shape("Tile")
def _tile_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    multiples = shape_from_shape_tensor(ctx, 1)
    if not src.unknown_rank():
        multiples = ctx.with_rank(multiples, src.dims())
        merge_shapes(ctx, ctx.input(1), PartialTensorShape([src.dims()]))
    if multiples.unknown_rank():
        return [unknown_shape()]
    src = ctx.with_rank(src, multiples.dims())
    return [PartialTensorShape([multiply_dim(ctx, d, m) for d, m in zip(src, multiples)])]


def tile(xp, x, reps: list[int]):
    """``x`` repeated ``reps[i]`` times along each axis i (NumPy's ``tile``, from broadcast + reshape)."""
    shape = tuple(x.shape)
    if all(r == 1 for r in reps):
        return x
    spread = tuple(v for d in shape for v in (1, d))
    grown = tuple(v for d, r in zip(shape, reps) for v in (r, d))
    return xp.reshape(xp.broadcast_to(xp.reshape(x, spread), grown), tuple(d * r for d, r in zip(shape, reps)))


@register_kernel("Tile")
def _tile(ctx: KernelContext, x, multiples):
    m = ctx.host(multiples)
    if m.ndim != 1:
        ctx.invalid_argument(f"Expected multiples to be 1-D, but got shape {format_shape(m.shape)}")
    shape = tuple(x.shape)
    if m.size != len(shape):
        ctx.invalid_argument(f"Expected multiples argument to be a vector of length {len(shape)} but got length "
                             f"{m.shape[0]}")
    if not shape:
        return x
    reps = host_ints(m)
    for i, r in enumerate(reps):
        if r < 0:
            ctx.invalid_argument(f"Expected multiples[{i}] >= 0, but got {r}")
    out = [d * r for d, r in zip(shape, reps)]
    if 0 not in out and math.prod(out) > INT64_MAX:
        ctx.invalid_argument(f"Tile output shape {format_shape(out)} would have more than 2**63 - 1 elements")
    return tile(ctx.xp, x, reps)


# -- Pad ---------------------------------------------------------------------------------------------------
@register_shape("Pad")
def _pad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    paddings = ctx.with_rank(ctx.input(1), 2)
    with_value(ctx, paddings[1], 2)
    src = ctx.input(0)
    n = paddings[0]
    if n != -1:
        src = ctx.with_rank(src, n)
    elif not src.unknown_rank():
        n = src.dims()
    value = ctx.input_tensor(1)
    if value is None:
        return [unknown_shape(None if n == -1 else n)]
    src = ctx.with_rank(src, value.shape[0])
    pads = host_ints(value)
    dims = []
    for i, d in enumerate(src):
        before, after = pads[2 * i], pads[2 * i + 1]
        if before < 0 or after < 0:
            ctx.invalid_argument("Paddings must be non-negative")
        dims.append(add_dim(ctx, d, before + after))
    return [PartialTensorShape(dims)]


@register_kernel("Pad")
def _pad(ctx: KernelContext, x, paddings):
    p = ctx.host(paddings)
    shape = tuple(x.shape)
    if not (p.ndim == 2 and p.shape[1] == 2):
        ctx.invalid_argument(f"paddings must be a matrix with 2 columns: {format_shape(p.shape)}")
    if p.shape[0] != len(shape):
        ctx.invalid_argument(f"The first dimension of paddings must be the rank of inputs"
                             f"{format_shape(p.shape)} {format_shape(shape)}")
    pads = host_ints(p)
    before, after = pads[0::2], pads[1::2]
    for b, a in zip(before, after):
        if b < 0 or a < 0:
            ctx.invalid_argument(f"Paddings must be non-negative: {b} {a}")
    if not any(pads):
        return x
    out = zeros_of(ctx, tuple(b + d + a for b, d, a in zip(before, shape, after)), ctx.output_dtypes[0])
    out[tuple(slice(b, b + d) for b, d in zip(before, shape))] = x
    return out


# -- Select, SelectV2 ------------------------------------------------------------------------------------
@register_shape("Select")
def _select_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's old rule: ``condition`` is a scalar, has the shape of ``t``/``e``, or is a vector over dim 0."""
    data = merge_shapes(ctx, ctx.input(1), ctx.input(2))
    cond = ctx.input(0)
    if cond.unknown_rank() or data.unknown_rank() or cond.dims() == 0:
        return [data]
    if cond.dims() != 1 or data.dims() == 0:
        return [merge_shapes(ctx, data, cond)]
    merge_shapes(ctx, cond, PartialTensorShape([data[0]]))
    return [data]


@register_kernel("Select")
def _select(ctx: KernelContext, condition, t, e):
    cs, ts, es = tuple(condition.shape), tuple(t.shape), tuple(e.shape)
    same_size = f"'then' and 'else' must have the same size.  but received: {format_shape(ts)} vs. {format_shape(es)}"
    if not cs:
        if ts != es:
            ctx.invalid_argument(same_size)
        return t if bool(ctx.host(condition)) else e
    xp = ctx.xp
    if len(cs) == 1 and len(ts) != 1:
        if not ts:
            ctx.invalid_argument(f"'then' must be at least a vector, but saw shape: {format_shape(ts)}")
        if ts[0] != cs[0]:
            ctx.invalid_argument(f"Number of batches of 'then' must match size of 'cond', but saw: {ts[0]} vs. {cs[0]}")
        if ts != es:
            ctx.invalid_argument(same_size)
        return xp.where(xp.reshape(condition, cs + (1,) * (len(ts) - 1)), t, e)
    for i, s in ((1, ts), (2, es)):
        if s != cs:
            ctx.invalid_argument(f"Inputs to operation {ctx.node_name} of type Select must have the same size and "
                                 f"shape.  Input 0: {format_shape(cs)} != input {i}: {format_shape(s)}")
    return xp.where(condition, t, e)


@register_shape("SelectV2")
def _select_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    other = broadcast_shapes(ctx, ctx.input(1), ctx.input(2))
    return [broadcast_shapes(ctx, ctx.input(0), other)]


@register_kernel("SelectV2")
def _select_v2(ctx: KernelContext, condition, t, e):
    shapes = [tuple(a.shape) for a in (condition, t, e)]
    rank = max(len(s) for s in shapes)
    for column in zip(*[(1,) * (rank - len(s)) + s for s in shapes]):
        if len({d for d in column if d != 1}) > 1:
            cs, ts, es = (format_shape(s) for s in shapes)
            ctx.invalid_argument(f"condition {cs}, then {ts}, and else {es} must be broadcastable")
    return ctx.xp.where(condition, t, e)


# -- conformance (tests/conformance) -------------------------------------------------------------------------
family_cases("tfops_py.kernels.array._array_cases:build")
_ARRAY = dict(compare="exact", static_shapes="exact", early_errors=False)
# Inputs tied to each other (concatenated dims, split sizes, multiples, paddings, a condition's shape): the golden
# cases of _array_cases.py, on every CPU dtype; tests/kernels/test_array_ops.py draws live ones.
for _op in ("ConcatV2", "Pack", "Unpack", "Split", "Tile", "Pad", "Select"):
    conformance(_op, generate=False, **_ARRAY)
conformance("SelectV2", condition=values(), t=values(specials=True), e=values(specials=True), shapes=BROADCAST,
            **_ARRAY)

divergence(("Unpack", "Split"), when="the NumPy backend", tf="copies", ours="NumPy views of the input (no copy)")
divergence("Tile", when="uint16", tf="no CPU kernel (NotFoundError)", ours="computed")
divergence("Pad", when="rank above 8", tf="`UnimplementedError` (`inputs rank not in [0,8]: 9`)", ours="computed")
divergence("Select", when="its same-shape error of a default-named node",
           tf="eager names the node `Select`", ours="`Inputs to operation Where3 of type Select …` (the C++ class "
                                                  "names the node)")
divergence("SelectV2", when="build-time broadcasting errors",
           tf="the shape function's `Dimensions must be equal, but are 3 and 2`",
           ours="the broadcasting helper's `Incompatible shapes: [3,2] vs. [2,3]`")
# -- conformance (tests/conformance): v1 Concat (ConcatV2 still has its own tests) ----------------------------
def _declare_concat_v1() -> None:
    from tfops_py.conformance import case, conformance, literal, one_of, values
    from tfops_py.framework.dtypes import DataType

    i32, f32 = DataType.DT_INT32, DataType.DT_FLOAT
    conformance("Concat", concat_dim=literal(1, i32), values=values(), N=one_of(2, 3), compare="exact",
                shapes=[{"values": (2, 3)}, {"values": (1, 0, 2)}, {"values": (2, 2, 1, 2)}], cases=[
                    case(id="Concat/negative_axis", T=f32, N=2, concat_dim=literal(-1, i32), shapes={"values": (2, 3)}),
                    case(id="Concat/axis_out_of_range", T=f32, N=2, concat_dim=literal(2, i32),
                         shapes={"values": (2, 3)}),
                    case(id="Concat/scalars", T=f32, N=2, concat_dim=literal(0, i32), shapes={"values": ()}),
                    case(id="Concat/axis_vector", T=f32, N=2, concat_dim=literal([1], i32), shapes={"values": (2, 3)}),
                ])


_declare_concat_v1()
