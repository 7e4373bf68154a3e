"""SegmentSum/Mean/Max/Min/Prod (sorted ids) and UnsortedSegmentSum/Max/Min/Prod.

Sorted ops: ``segment_ids`` is a vector as long as ``data``'s first dimension, non-decreasing, and the
output has ``segment_ids[-1] + 1`` rows; a row no id names is 0 (1 for Prod).  Unsorted ops:
``segment_ids`` has the shape of a prefix of ``data``'s, ``num_segments`` rows come out, negative ids are
dropped, and a row no id names is 0 for Sum, 1 for Prod, the lowest finite value for Max and the highest
for Min (TF starts every segment there, so a -inf never wins a Max, nor a +inf a Min).  Integer sums
and products wrap; integer Mean divides toward zero.  The numerics are in
``_segment_reduce`` (one sparse product for a sum on NumPy).  Max and Min propagate NaN.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tfops_py.conformance import (Domain, Draw, ShapeRule, case, conformance, divergence, literal, reference,
                                  sorted_ids, uniform, values)
from tfops_py.framework.dtypes import DT_INT64, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import compute_dtype, dtype_limits, trunc_divide
from tfops_py.kernels._shape_util import dim_from_scalar_input, merge_dim
from tfops_py.kernels.math._sizes import sized
from tfops_py.kernels.array.grad_scatter_ops import slice_debug_string
from tfops_py.kernels.math._segment_reduce import segment_counts, segment_extreme, segment_sum
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "segment_ops"
SORTED = ("SegmentSum", "SegmentMean", "SegmentMax", "SegmentMin", "SegmentProd")
UNSORTED = ("UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin", "UnsortedSegmentProd")


def empty_value(reducer: str, dt: DataType, unsorted: bool) -> Any:
    """The value of a segment no id names."""
    if reducer == "prod":
        return 1
    if reducer in ("max", "min") and unsorted:
        lowest, highest = dtype_limits(dt)
        return lowest if reducer == "max" else highest
    return 0


def reduce_rows(ctx: KernelContext, reducer: str, data: Any, ids: Any, rows: int, unsorted: bool) -> Any:
    """Segment ``reducer`` ("sum", "mean", "max", "min", "prod") of 2-D ``data`` by int64 ``ids`` (checked)."""
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    if reducer in ("sum", "mean"):
        wide = compute_dtype(dt)
        work = data if wide == dt else xp.astype(data, ctx.dtype(wide))
        total = segment_sum(ctx, work, ids, rows, sorted_ids=not unsorted)
        if reducer == "mean":  # an empty segment's sum is 0: divide it by 1
            counts = segment_counts(ctx, ids, rows)
            counts = xp.astype(xp.reshape(xp.where(counts == 0, xp.ones_like(counts), counts), (rows, 1)), total.dtype)
            total = trunc_divide(xp, total, counts, dt.numpy_dtype.kind == "i") if dt.is_integer else total / counts
        return total if wide == dt else xp.astype(total, ctx.dtype(dt))
    empty = empty_value(reducer, dt, unsorted)
    out = segment_extreme(ctx, data, ids, rows, reducer, empty, sorted_ids=not unsorted)
    if unsorted and reducer in ("max", "min") and dt.is_floating:
        # TF starts each segment at the lowest (highest) finite value: -inf (+inf) never wins; NaN still does
        floor = xp.full_like(out, empty)
        out = xp.maximum(out, floor) if reducer == "max" else xp.minimum(out, floor)
    return out


# -- sorted segments ------------------------------------------------------------------------------------------
@register_shape(*SORTED)
def _segment_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    data = ctx.with_rank_at_least(ctx.input(0), 1)
    ctx.with_rank(ctx.input(1), 1)
    if data.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape([-1] + list(data.as_tuple()[1:]))]


def _check_sorted(ctx: KernelContext, ids: np.ndarray, rows: int) -> None:
    """TF's walk over the segments: at each segment first "not increasing", then the id's range."""
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
    segments = ids[starts]
    decreasing = np.concatenate([segments[1:] < segments[:-1], [False]])
    out_of_range = (segments < 0) | (segments >= rows)
    bad = np.flatnonzero(decreasing | out_of_range)
    if bad.size:
        k = int(bad[0])
        if decreasing[k]:
            ctx.invalid_argument("segment ids are not increasing")
        ctx.invalid_argument(f"Segment id {segments[k]} out of range [0, {rows}), possibly because 'segment_ids' "
                             "input is not sorted.")


def _sorted_kernel(reducer: str) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, data: Any, segment_ids: Any) -> Any:
        if data.ndim < 1:
            ctx.invalid_argument("input must be at least rank 1")
        if segment_ids.ndim != 1:
            ctx.invalid_argument("segment_ids should be a vector.")
        n = segment_ids.shape[0]
        if n != data.shape[0]:
            ctx.invalid_argument("segment_ids should be the same size as dimension 0 of input.")
        ids = ctx.host(segment_ids).astype(np.int64)
        rows = int(ids[-1]) + 1 if n else 0
        if n and rows <= 0:
            ctx.invalid_argument("segment ids must be >= 0")
        inner = tuple(data.shape[1:])
        shape = sized(ctx, [rows, *inner])
        if n:
            _check_sorted(ctx, ids, rows)
        xp = ctx.xp
        if math.prod(shape) == 0:
            return xp.zeros(shape, dtype=ctx.dtype(ctx.output_dtypes[0]))
        flat = xp.reshape(data, (n, math.prod(inner)))
        out = reduce_rows(ctx, reducer, flat, ctx.asarray(ids, DT_INT64), rows, unsorted=False)
        return xp.reshape(out, shape)

    return kernel


# -- unsorted segments -----------------------------------------------------------------------------------------
@register_shape(*UNSORTED)
def unsorted_segment_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(2), 0)
    data, ids = ctx.input(0), ctx.input(1)
    if ids.unknown_rank():
        return [unknown_shape()]
    if not data.unknown_rank():  # MergePrefix: data starts with segment_ids' shape
        ctx.with_rank_at_least(data, ids.dims())
        for a, b in zip(data, ids):
            merge_dim(ctx, a, b)
    num = dim_from_scalar_input(ctx, 2)
    if data.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape([num] + list(data.as_tuple()[ids.dims():]))]


def unsorted_ids(ctx: KernelContext, data: Any, segment_ids: Any, num_segments: Any) -> tuple[np.ndarray, int, tuple]:
    """TF's checks of an unsorted segment reduction: (ids flattened to int64 on the host, rows, inner shape)."""
    n = ctx.host(num_segments)
    if n.ndim != 0:
        ctx.invalid_argument(f"num_segments should be a scalar, not shape {format_shape(n.shape)}")
    ds, ids_shape = tuple(data.shape), tuple(segment_ids.shape)
    if ds[:len(ids_shape)] != ids_shape:
        ctx.invalid_argument(f"data.shape = {format_shape(ds)} does not start with segment_ids.shape = "
                             f"{format_shape(ids_shape)}")
    rows = int(n)
    if rows < 0:
        ctx.invalid_argument(f"Input num_segments == {rows} must not be negative.")
    ids = ctx.host(segment_ids).reshape(-1).astype(np.int64)
    bad = np.flatnonzero(ids >= rows)
    if bad.size and math.prod(ds):  # TF checks the ids only when there is data
        first = int(bad[0])
        ctx.invalid_argument(f"segment_ids{slice_debug_string(ids_shape, first)} = {ids[first]} is out of range "
                             f"[0, {rows})")
    return ids, rows, ds[len(ids_shape):]


def _unsorted_kernel(reducer: str) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, data: Any, segment_ids: Any, num_segments: Any) -> Any:
        ids, rows, inner = unsorted_ids(ctx, data, segment_ids, num_segments)
        shape = sized(ctx, [rows, *inner])
        xp, dt = ctx.xp, ctx.output_dtypes[0]
        if math.prod(data.shape) == 0 or math.prod(shape) == 0:  # no data: ids unchecked, every segment empty
            return xp.full(shape, empty_value(reducer, dt, unsorted=True), dtype=ctx.dtype(dt))
        flat = xp.reshape(data, (ids.shape[0], math.prod(inner)))
        out = reduce_rows(ctx, reducer, flat, ctx.asarray(ids, DT_INT64), rows, unsorted=True)
        return xp.reshape(out, shape)

    return kernel


_REDUCERS = {"Sum": "sum", "Mean": "mean", "Max": "max", "Min": "min", "Prod": "prod"}
for _op in SORTED:
    register_kernel(_op)(_sorted_kernel(_REDUCERS[_op[len("Segment"):]]))
for _op in UNSORTED:
    register_kernel(_op)(_unsorted_kernel(_REDUCERS[_op[len("UnsortedSegment"):]]))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
class _SortedShapes(ShapeRule):
    """data (n, ...) with sorted ids of length n (the ids domain draws them)."""

    def patterns(self) -> list[dict[str, Any]]:
        return [dict(data=(6,), segment_ids=(6,)), dict(data=(5, 3), segment_ids=(5,)),
                dict(data=(4, 2, 3), segment_ids=(4,)), dict(data=(0, 3), segment_ids=(0,)),
                dict(data=(3, 0), segment_ids=(3,)), dict(data=(4, 2), segment_ids=(3,))]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        inner = tuple(int(d) for d in rng.integers(0, 4, int(rng.integers(0, 3))))
        n = int(rng.integers(0, 9))
        return dict(data=(n,) + inner, segment_ids=(n if rng.uniform() < 0.9 else n + 1,))


class _UnsortedShapes(ShapeRule):
    """ids of a prefix of data's shape (sometimes not: TF's error)."""

    def patterns(self) -> list[dict[str, Any]]:
        return [dict(data=(6,), segment_ids=(6,)), dict(data=(5, 3), segment_ids=(5,)),
                dict(data=(2, 3, 2), segment_ids=(2, 3)), dict(data=(0, 3), segment_ids=(0,)),
                dict(data=(3, 0), segment_ids=(3,)), dict(data=(4, 2), segment_ids=(3,)), dict(data=(), segment_ids=())]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        data = tuple(int(d) for d in rng.integers(0, 5, int(rng.integers(1, 4))))
        k = int(rng.integers(0, len(data) + 1))
        ids = data[:k] if rng.uniform() < 0.9 else data[:k] + (1,)
        return dict(data=data, segment_ids=ids)


class _UnsortedIds(Domain):
    """Ids in [-1, num_segments] in any order: a negative id is dropped, num_segments is out of range."""

    depends = ("num_segments",)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        n = int(np.asarray(d.inputs["num_segments"]))
        shape = d.shape or ()
        ids = d.rng.integers(-1, n + 1, shape) if d.rng.uniform() < 0.3 else d.rng.integers(0, max(n, 1), shape)
        return ids.astype(d.dtype.numpy_dtype)


def _gapped_ids(n: int) -> list[int]:
    return [0, 0, 2, 2, 2, 5][:n]


_MAX_MIN = ("SegmentMax", "SegmentMin", "UnsortedSegmentMax", "UnsortedSegmentMin")
_I32 = DataType.DT_INT32
for _op in SORTED:
    conformance(_op, data=values(specials=_op in _MAX_MIN) if _op != "SegmentProd" else uniform(-2, 2),
                segment_ids=sorted_ids(4), shapes=_SortedShapes(), compare="acc", live=20,
                cases=[case(data=literal([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 1.0], [2.0, 3.0]]),
                            segment_ids=literal(_gapped_ids(6), _I32)),
                       case(data=literal([1.0, 2.0, 3.0, 4.0]), segment_ids=literal([0, 1, 0, 2], _I32)),
                       case(data=literal([1.0, 2.0, 3.0, 4.0]), segment_ids=literal([-1, 0, 0, 2], _I32)),
                       case(data=literal([1.0, 2.0, 3.0]), segment_ids=literal([3, 0, 0], _I32)),
                       case(data=literal([1.0, 2.0]), segment_ids=literal([-2, -1], _I32)),
                       case(data=literal(1.0), segment_ids=literal(0, _I32)),
                       case(data=literal([[1.0, 2.0], [3.0, 4.0]]), segment_ids=literal([[0], [1]], _I32))]
                + ([case(data=literal([-7, 0, 5, 2, 9], DataType.DT_INT32), segment_ids=literal([0, 0, 1, 1, 3], _I32))]
                   if _op == "SegmentMean" else []))
for _op in UNSORTED:
    conformance(_op, data=values(specials=_op in _MAX_MIN) if _op != "UnsortedSegmentProd" else uniform(-2, 2),
                num_segments=literal(4, _I32), segment_ids=_UnsortedIds(), shapes=_UnsortedShapes(),
                compare="acc", live=20,
                cases=[case(data=literal([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]),
                            segment_ids=literal([0, -1, 2, 2], _I32), num_segments=literal(5, _I32)),
                       case(data=literal([1.0, 2.0]), segment_ids=literal([0, 1], _I32),
                            num_segments=literal(-1, _I32)),
                       case(data=literal([1.0, 2.0]), segment_ids=literal([0, 1], _I32),
                            num_segments=literal([2], _I32)),
                       case(data=literal([1.0, 2.0]), segment_ids=literal([0, 1], _I32), num_segments=literal(0, _I32)),
                       case(data=literal(3.0), segment_ids=literal(0, _I32), num_segments=literal(0, _I32)),
                       case(data=literal([[1.0, 2.0]]), segment_ids=literal([[0, 1]], DataType.DT_INT64),
                            num_segments=literal(2, DataType.DT_INT64))])


def _has_nan(inputs: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    data = np.asarray(inputs["data"])
    return data.dtype.kind not in "biuc" and bool(np.isnan(data.astype(np.float64)).any())  # bfloat16: kind V


def nan_segments(run_tf: Callable[..., Any], op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's values, NaN in every segment holding a NaN."""
    out = run_tf(op, inputs, attrs)[0]
    data, ids = np.asarray(inputs[0]), np.asarray(inputs[1]).astype(np.int64)
    rows: np.ndarray = data.reshape((ids.size, -1)) if ids.ndim else data.reshape((1, -1))
    flat_ids = ids.reshape(-1)
    nan_rows = np.isnan(rows.astype(np.float64))
    for_segment = np.zeros((out.shape[0], rows.shape[1]), bool) if out.ndim else np.zeros((0, 0), bool)
    keep = (flat_ids >= 0) & (flat_ids < out.shape[0])
    np.logical_or.at(for_segment, flat_ids[keep], nan_rows[keep])
    patched = out.reshape(for_segment.shape).copy()
    patched[for_segment] = np.nan
    return [patched.reshape(out.shape)]


divergence(_MAX_MIN, when="NaN in a segment",
           tf="depends on the order: a NaN followed by a number in the same segment is forgotten",
           ours="NaN (as Max and Min reductions)", applies=_has_nan,
           reference=reference("tfops_py.kernels.math.segment_ops:nan_segments",
                               "TF's values, NaN in every segment that holds a NaN"))
divergence(("SegmentSum", "SegmentMean", "UnsortedSegmentSum"), when="half / bfloat16",
           tf="accumulates in the type", ours="accumulates in float, rounds once")
