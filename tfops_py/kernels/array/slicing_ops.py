"""Taking parts of a tensor: Slice, StridedSlice, GatherV2 (and v1 Gather).

Slice and StridedSlice return views on NumPy (no copy).  GatherV2 follows TF's CPU kernel:
an out-of-range index is an error, never a zero.
"""
from __future__ import annotations

import math

import numpy as np

from tfops_py.conformance import conformance, divergence
from tfops_py.framework.dtypes import DT_INT64
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import host_ints, merge_shapes, shape_from_shape_tensor, subtract_dim
from tfops_py.kernels.array._strided_slice import check_spec_shapes, dense_slice, index_tuple
from tfops_py.kernels.array.fill_ops import zeros_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


# -- Slice ------------------------------------------------------------------------------------------------
@register_shape("Slice")
def _slice_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    lengths = merge_shapes(ctx, ctx.with_rank(ctx.input(1), 1), ctx.with_rank(ctx.input(2), 1))
    if lengths[0] != -1:
        src = ctx.with_rank(src, lengths[0])
    begin = shape_from_shape_tensor(ctx, 1)  # -1 in begin reads as "unknown", as in TF
    sizes_as_shape = shape_from_shape_tensor(ctx, 2)  # TF's first pass: rejects sizes < -1
    sizes = ctx.input_tensor(2)
    if sizes is not None:
        begin = ctx.with_rank(begin, sizes.size)
        return [PartialTensorShape([s if s != -1 else subtract_dim(ctx, src[i], begin[i])
                                    for i, s in enumerate(host_ints(sizes))])]
    if not sizes_as_shape.unknown_rank():
        ctx.with_rank(begin, sizes_as_shape.dims())
        return [sizes_as_shape]
    return [unknown_shape(src.rank)]


@register_kernel("Slice")
def _slice(ctx: KernelContext, x, begin, size):
    b_t, s_t = ctx.host(begin), ctx.host(size)
    shape = tuple(x.shape)
    rank = len(shape)
    if not (b_t.ndim == 1 and s_t.ndim == 1 and b_t.size == rank and s_t.size == rank):
        ctx.invalid_argument(f"Expected begin and size arguments to be 1-D tensors of size {rank}, but got shapes "
                             f"{format_shape(b_t.shape)} and {format_shape(s_t.shape)} instead.")
    idx = []
    for i, (b, s, d) in enumerate(zip(host_ints(b_t), host_ints(s_t), shape)):
        if s == -1:
            s = d - b
        if d == 0:
            if b != 0 or s != 0:
                ctx.invalid_argument(f"Expected begin[{i}] == 0 (got {b}) and size[{i}] == 0 (got {s}) when "
                                     f"input.dim_size({i}) == 0")
        else:
            if not 0 <= b <= d:
                ctx.invalid_argument(f"Expected begin[{i}] in [0, {d}], but got {b}")
            if not (0 <= s and b + s <= d):
                ctx.invalid_argument(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        idx.append(slice(b, b + s))
    return x[tuple(idx) + (...,)]  # the Ellipsis keeps NumPy from returning a scalar for rank 0


# -- StridedSlice ------------------------------------------------------------------------------------------
def _masks(attrs: dict) -> tuple[int, int, int, int, int]:
    return (attrs["begin_mask"], attrs["end_mask"], attrs["ellipsis_mask"], attrs["new_axis_mask"],
            attrs["shrink_axis_mask"])


@register_shape("StridedSlice")
def _strided_slice_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    n = merge_shapes(ctx, merge_shapes(ctx, ctx.with_rank(ctx.input(1), 1), ctx.with_rank(ctx.input(2), 1)),
                     ctx.with_rank(ctx.input(3), 1))[0]
    strides = ctx.input_tensor(3)
    if src.unknown_rank() or n == -1 or strides is None:
        return [unknown_shape()]
    begin, end = ctx.input_tensor(1), ctx.input_tensor(2)
    check_spec_shapes(ctx.invalid_argument, None if begin is None else begin.shape,
                      None if end is None else end.shape, strides.shape)
    spec = dense_slice(ctx.invalid_argument, src.as_tuple(), None if begin is None else host_ints(begin),
                       None if end is None else host_ints(end), host_ints(strides), *_masks(ctx.attrs))
    return [PartialTensorShape(spec.final_shape)]


@register_kernel("StridedSlice")
def _strided_slice(ctx: KernelContext, x, begin, end, strides):
    b, e, s = ctx.host(begin), ctx.host(end), ctx.host(strides)
    # The spec usually repeats from run to run: keep the last one (per node and plan).
    key = (tuple(x.shape), b.shape, e.shape, s.shape, b.tobytes(), e.tobytes(), s.tobytes())
    last = ctx.cache.get("spec")
    if last is not None and last[0] == key:
        index, final = last[1]
    else:
        check_spec_shapes(ctx.invalid_argument, b.shape, e.shape, s.shape)
        spec = dense_slice(ctx.invalid_argument, key[0], host_ints(b), host_ints(e), host_ints(s),
                           *_masks(ctx.attrs))
        index, final = index_tuple(spec) + (...,), tuple(spec.final_shape)
        ctx.cache["spec"] = (key, (index, final))
    return ctx.xp.reshape(x[index], final)


# -- GatherV2 -----------------------------------------------------------------------------------------------
@register_shape("GatherV2")
def _gather_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    params = ctx.with_rank_at_least(ctx.input(0), 1)
    indices = ctx.input(1)
    ctx.with_rank(ctx.input(2), 0)
    batch_dims = ctx.attr("batch_dims")
    axis_t = ctx.input_tensor(2)
    if axis_t is None:
        if params.unknown_rank() or indices.unknown_rank():
            return [unknown_shape()]
        # TF subtracts the raw attr; a negative batch_dims counts from the end of indices' dims.
        bd = batch_dims + indices.dims() if batch_dims < 0 else batch_dims
        rank = params.dims() + indices.dims() - 1 - bd
        if rank < -1:  # TF's graph construction aborts the process here (CHECK rank >= 0)
            irank = indices.dims()
            ctx.invalid_argument(f"Expected batch_dims in the range [{-irank}, {irank}], but got {batch_dims}")
        return [unknown_shape(rank if rank >= 0 else None)]
    axis = host_ints(axis_t)[0]
    ctx.with_rank_at_least(params, -axis if axis < 0 else axis + 1)
    ctx.with_rank_at_least(indices, abs(batch_dims))
    if batch_dims < 0:
        batch_dims += indices.dims()  # TF adds -1 when the rank is unknown
    ctx.with_rank_at_least(params, batch_dims + 1)
    if params.unknown_rank() or indices.unknown_rank():
        return [unknown_shape()]
    p, i = params.as_list(), indices.as_list()
    a = axis + len(p) if axis < 0 else axis
    return [PartialTensorShape(p[:a] + i[batch_dims:] + p[a + 1:])]  # type: ignore[operator]


def _gather_dims(ctx: KernelContext, params_shape: tuple[int, ...], indices_shape: tuple[int, ...],
                 axis) -> tuple[int, int]:
    """(axis, batch_dims) made non-negative, checked as TF's GatherOp does."""
    rank, irank = len(params_shape), len(indices_shape)
    batch_dims = ctx.attrs.get("batch_dims", 0)  # v1 Gather has none
    if rank < 1:
        ctx.invalid_argument("params must be at least 1 dimensional")
    if rank < batch_dims:
        ctx.invalid_argument(f"params must have at least {batch_dims} (batch_dims) dimensions but it has shape "
                             f"{format_shape(params_shape)}")
    a = ctx.host(axis)
    if a.ndim != 0:
        ctx.invalid_argument("axis must be scalar")
    ax = int(a)
    least = -ax if ax < 0 else ax + 1
    if rank < least:
        ctx.invalid_argument(f"Shape must be at least rank {least} but is rank {rank}")
    if ax < 0:
        ax += rank
    if batch_dims != 0:
        if not -irank <= batch_dims <= irank:
            ctx.invalid_argument(f"Expected batch_dims in the range [{-irank}, {irank}], but got {batch_dims}")
        if batch_dims < 0:
            batch_dims += irank
        if batch_dims >= rank:
            ctx.invalid_argument(f"batch_dims ({batch_dims}) must be less than rank(params) ({rank}).")
        if ax < batch_dims:
            ctx.invalid_argument(f"batch_dims ({batch_dims}) must be less than or equal to axis ({ax}).")
        for i in range(batch_dims):
            if params_shape[i] != indices_shape[i]:
                ctx.invalid_argument(f"params.shape[{i}]: {params_shape[i]} should be equal to indices.shape[{i}]: "
                                     f"{indices_shape[i]}")
    limit = np.iinfo(ctx.input_dtypes[1].numpy_dtype).max
    if params_shape[ax] > limit:
        ctx.invalid_argument(f"params.shape[{ax}] too large for {ctx.input_dtypes[1].short_name} indexing: "
                             f"{params_shape[ax]} > {limit}")
    return ax, batch_dims


def _output_shape(ps: tuple[int, ...], qs: tuple[int, ...], ax: int, bd: int) -> tuple[int, ...]:
    return tuple(ps[:ax]) + tuple(qs[bd:]) + tuple(ps[ax + 1:])


def _bad_index(ctx: KernelContext, indices, n: int) -> None:
    """TF's message for the first index outside [0, n): ``indices[1,2] = 7 is not in [0, 5)``."""
    host = ctx.host(indices)
    flat = host.reshape(-1)
    first = int(np.flatnonzero((flat < 0) | (flat >= n))[0])
    where = "" if host.ndim == 0 else "[" + ",".join(map(str, np.unravel_index(first, host.shape))) + "]"
    ctx.invalid_argument(f"indices{where} = {flat[first]} is not in [0, {n})")


def _gather_rows(ctx: KernelContext, params, indices, ax: int, bd: int):
    """The gather as one ``take`` of rows: params seen as (batch * outer * n, inner)."""
    xp = ctx.xp
    ps, qs = tuple(params.shape), tuple(indices.shape)
    n = ps[ax]
    batch, outer, inner = math.prod(ps[:bd]), math.prod(ps[bd:ax]), math.prod(ps[ax + 1:])
    i64 = ctx.dtype(DT_INT64)
    rows = (xp.reshape(xp.arange(batch, dtype=i64) * (outer * n), (batch, 1, 1))
            + xp.reshape(xp.arange(outer, dtype=i64) * n, (1, outer, 1))
            + xp.reshape(xp.astype(indices, i64), (batch, 1, math.prod(qs[bd:]))))
    taken = xp.take(xp.reshape(params, (batch * outer * n, inner)), xp.reshape(rows, (-1,)), axis=0)
    return xp.reshape(taken, _output_shape(ps, qs, ax, bd))


@register_kernel("GatherV2")
def _gather(ctx: KernelContext, params, indices, axis):
    xp = ctx.xp
    ax, bd = _gather_dims(ctx, tuple(params.shape), tuple(indices.shape), axis)
    n = params.shape[ax]
    out = _output_shape(tuple(params.shape), tuple(indices.shape), ax, bd)
    if 0 in out:  # TF visits, so checks, no index then
        return zeros_of(ctx, out, ctx.output_dtypes[0])
    if bool(ctx.host(xp.any((indices < 0) | (indices >= n)))):
        _bad_index(ctx, indices, n)
    return _gather_rows(ctx, params, indices, ax, bd)


# -- Gather (v1): GatherV2 on axis 0 ------------------------------------------------------------------------
@register_shape("Gather")
def _gather_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    params = ctx.with_rank_at_least(ctx.input(0), 1)
    indices = ctx.input(1)
    if params.unknown_rank() or indices.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape(indices.as_list() + params.as_list()[1:])]  # type: ignore[operator]


_AXIS0 = np.zeros((), np.int32)


@register_kernel("Gather")
def _gather_v1(ctx: KernelContext, params, indices):
    return _gather(ctx, params, indices, _AXIS0)


@register_kernel("Gather", backend="numpy")
def _gather_v1_numpy(ctx: KernelContext, params, indices):
    return _gather_numpy(ctx, params, indices, _AXIS0)


@register_kernel("GatherV2", backend="numpy")
def _gather_numpy(ctx: KernelContext, params, indices, axis):
    ax, bd = _gather_dims(ctx, params.shape, indices.shape, axis)
    n = params.shape[ax]
    out = _output_shape(params.shape, indices.shape, ax, bd)
    if 0 in out:  # TF visits, so checks, no index then
        return zeros_of(ctx, out, ctx.output_dtypes[0])
    if indices.min() < 0 or indices.max() >= n:
        _bad_index(ctx, indices, n)
    if bd:
        return _gather_rows(ctx, params, indices, ax, bd)
    out = np.take(params, indices, axis=ax)
    return out if isinstance(out, np.ndarray) else np.asarray(out, dtype=params.dtype)  # a scalar gather


# -- conformance (tests/conformance) -------------------------------------------------------------------------
# Begin/end/size/indices tied to the input's shape: _array_cases.py and tests/kernels/test_slicing_ops.py.
for _op in ("Slice", "StridedSlice", "GatherV2"):
    conformance(_op, generate=False, compare="exact", static_shapes="exact", early_errors=False)

divergence(("Slice", "StridedSlice"), when="the NumPy backend", tf="copies strided slices",
           ours="NumPy views of the input (no copy)")
divergence("StridedSlice", when="rank above 8 (non-contiguous slices)",
           tf="`UnimplementedError` (`Unhandled input dimensions 9`)", ours="computed")
divergence("GatherV2", when="an unknown axis and a negative `batch_dims`",
           tf="infers the output rank with the negative attr as is (one or more too large)",
           ours="counts `batch_dims` from the end of indices' dims: the rank the kernel produces")
divergence("GatherV2", when="an unknown axis and `batch_dims` beyond rank(params) + rank(indices) - 1",
           tf="building kills the process (`Check failed: rank >= 0`)",
           ours="`InvalidArgumentError` (`Expected batch_dims in the range [0, 0], but got 2`)")
divergence("GatherV2", when="several out-of-range indices in a large input",
           tf="its multi-threaded kernel may name any of them", ours="names the first in row-major order")
# -- conformance (tests/conformance): v1 Gather (GatherV2 still has its own tests) ----------------------------
def _declare_gather_v1() -> None:
    from tfops_py.conformance import case, conformance, index_into, literal, values
    from tfops_py.framework.dtypes import DataType

    i32, i64, f32 = DataType.DT_INT32, DataType.DT_INT64, DataType.DT_FLOAT
    conformance("Gather", params=values(), indices=index_into("params"), compare="exact",
                shapes=[{"params": (5,), "indices": (3,)}, {"params": (4, 3), "indices": (2, 2)},
                        {"params": (3, 0, 2), "indices": (4,)}, {"params": (3, 2), "indices": ()}], cases=[
                    case(id="Gather/out_of_range", Tparams=f32, indices=literal([[0, 3]], i32),
                         shapes={"params": (3, 2)}),
                    case(id="Gather/negative", Tparams=f32, indices=literal([-1], i64), shapes={"params": (3,)}),
                    case(id="Gather/scalar_params", Tparams=f32, indices=literal([0], i32), shapes={"params": ()}),
                    case(id="Gather/empty_output", Tparams=f32, indices=literal(np.zeros((0,), np.int32)),
                         shapes={"params": (3, 2)}),
                ])


_declare_gather_v1()
