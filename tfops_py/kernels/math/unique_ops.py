"""Unique, UniqueV2, UniqueWithCounts, UniqueWithCountsV2 and ListDiff.

Unique keeps the first occurrence of each value, in order of appearance, and maps every element to
its value's position (``idx``); the V2 forms find unique slices along ``axis`` (a one-element tensor;
empty: the 1-D op).  Values compare with ``==``: NaN is never equal to anything (each NaN is its own
value), -0.0 equals 0.0.  ListDiff keeps the elements of x that are not in y, in order, with their
positions.  Strings (host object arrays) go through NumPy on every backend.

``unique_first_occurrence`` is the plain function: a stable sort of the rows (one pass per column for
slices), runs of equal neighbours, groups renumbered by first occurrence; no hashing and no scatter, so
it runs on any array namespace.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import Domain, Draw, case, conformance, literal, one_of, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, unknown_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "counting_ops"


def _numpy_like(ctx: KernelContext, x: Any) -> bool:
    return ctx.backend.name == "numpy" or isinstance(x, np.ndarray) and x.dtype == object


def unique_first_occurrence(xp: Any, rows: Any) -> tuple[Any, Any, Any]:
    """For a (n, k) array: (first position of each distinct row in order of appearance, each row's group, each
    group's size), int64 arrays of ``xp``."""
    n, k = rows.shape
    if n == 0:
        empty = xp.zeros((0,), dtype=xp.int64)
        return empty, empty, empty
    if rows.dtype == xp.bool:  # the array API sorts numbers only
        rows = xp.astype(rows, xp.uint8)
    order = xp.arange(n, dtype=xp.int64)
    for col in range(k - 1, -1, -1):  # stable sorts, last column first: a lexicographic order of the rows
        column = xp.take(rows[:, col], order)
        order = xp.take(order, xp.argsort(column, stable=True))
    ordered = xp.take(rows, order, axis=0)
    if k:
        same = xp.all(ordered[1:, ...] == ordered[:-1, ...], axis=1)  # NaN != NaN: each NaN row stands alone
    else:
        same = xp.ones((max(n - 1, 0),), dtype=xp.bool)
    new = xp.concat([xp.ones((min(n, 1),), dtype=xp.bool), ~same])
    group_sorted = xp.cumulative_sum(xp.astype(new, xp.int64)) - 1
    starts = xp.nonzero(new)[0]
    first = xp.take(order, starts)  # a stable sort keeps each group's first occurrence first
    counts = xp.diff(xp.concat([starts, xp.asarray([n], dtype=starts.dtype)]))
    by_appearance = xp.argsort(first, stable=True)
    renumber = xp.argsort(by_appearance, stable=True)  # group -> its position in order of appearance
    group = xp.take(renumber, xp.take(group_sorted, xp.argsort(order, stable=True)))
    return xp.take(first, by_appearance), group, xp.take(counts, by_appearance)


def _numpy_keys(x: np.ndarray) -> np.ndarray:
    """What NumPy compares for ``x``: half/bfloat16 as float32 with -0.0 apart from 0.0 (TF hashes those types'
    bits, so their signed zeros are two values) on a float32 value neither type can hold."""
    if x.dtype.kind in "biuOSU" or x.dtype.itemsize >= 4:
        return x
    wide = x.astype(np.float32)
    return np.where((wide == 0) & np.signbit(wide), np.float32(-1.4e-45), wide)


def _numpy_unique(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``unique_first_occurrence`` for a 1-D NumPy array (strings too): one unstable sort (faster than a
    stable one), each group's first occurrence as the smallest original index of its run."""
    keys = _numpy_keys(x)
    n = keys.shape[0]
    if n == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    order = np.argsort(keys)
    ordered = keys[order]
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])  # NaN != NaN: every NaN is a value of its own
    starts = np.flatnonzero(new)
    first = np.minimum.reduceat(order, starts)
    counts = np.diff(np.append(starts, n))
    group = np.empty(n, np.int64)
    group[order] = np.cumsum(new) - 1
    by_appearance = np.argsort(first)
    renumber = np.empty_like(by_appearance)
    renumber[by_appearance] = np.arange(by_appearance.size)
    return first[by_appearance], renumber[group], counts[by_appearance]


# -- Unique, UniqueWithCounts ----------------------------------------------------------------------------
@register_shape("Unique", "UniqueWithCounts")
def _unique_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """Unique: a vector (checked at build time); UniqueWithCounts: TF's shape function does not check."""
    if ctx.op_type == "Unique":
        return [PartialTensorShape([-1]), ctx.with_rank(ctx.input(0), 1)]
    return [PartialTensorShape([-1]), ctx.input(0), PartialTensorShape([-1])]


@register_shape("UniqueV2", "UniqueWithCountsV2")
def _unique_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """The data's rank; idx has one entry per slice along the axis when the axis is a constant."""
    x, axis = ctx.input(0), ctx.input_tensor(1)
    data = unknown_shape() if x.unknown_rank() else unknown_shape(x.dims())
    slices = -1
    if axis is not None and np.size(axis) > 1:
        ctx.invalid_argument("axis does not support input tensors larger than 1 elements.")
    if axis is not None and not x.unknown_rank():
        rank = x.dims()
        if np.size(axis) == 0:
            if rank != 1:
                ctx.invalid_argument("x expects a 1D vector.")
            slices = x[0]
        else:
            a = int(np.reshape(axis, -1)[0])
            if not -rank <= a < rank:
                ctx.invalid_argument(f"axis expects to be in the range [{-rank}, {rank})")
            slices = x[a % rank]
    outs = [data, PartialTensorShape([slices])]
    return outs + [PartialTensorShape([-1])] if ctx.op_type == "UniqueWithCountsV2" else outs


def _unique(ctx: KernelContext, x: Any, axis: Any | None) -> tuple[Any, Any, Any]:
    xp = ctx.xp
    ax = None
    if axis is not None:
        a = ctx.host(axis).reshape(-1)
        if a.size > 1:
            ctx.invalid_argument("axis does not support input tensors larger than 1 elements")  # sic: no period
        if a.size == 1:
            ax = int(a[0])
            if ax < 0:
                ax += x.ndim
            if not 0 <= ax < x.ndim:
                ctx.invalid_argument(f"axis has to be between [0, {x.ndim})")
    if ax is None:
        if x.ndim != 1:
            ctx.invalid_argument("unique expects a 1D vector.")
        ax = 0
    idx_type = ctx.output_dtypes[1]
    if x.ndim == 1 and _numpy_like(ctx, x):
        first, group, counts = (np.asarray(v) for v in _numpy_unique(np.asarray(x)))
        y = x[first]
        if not isinstance(x, np.ndarray) or ctx.backend.name != "numpy":
            first, group, counts = (ctx.backend.from_numpy(v.astype(np.int64), ctx) for v in (first, group, counts))
        return y, xp.astype(group, ctx.dtype(idx_type)), xp.astype(counts, ctx.dtype(idx_type))
    moved = xp.moveaxis(x, ax, 0)
    n = moved.shape[0]
    rows = xp.reshape(moved, (n, math.prod(moved.shape[1:])))
    first, group, counts = unique_first_occurrence(xp, rows)
    y = xp.moveaxis(xp.take(moved, first, axis=0), 0, ax)
    return y, xp.astype(group, ctx.dtype(idx_type)), xp.astype(counts, ctx.dtype(idx_type))


@register_kernel("Unique")
def _unique_v1(ctx: KernelContext, x: Any) -> tuple[Any, Any]:
    y, idx, _ = _unique(ctx, x, None)
    return y, idx


@register_kernel("UniqueWithCounts")
def _unique_with_counts(ctx: KernelContext, x: Any) -> tuple[Any, Any, Any]:
    return _unique(ctx, x, None)


@register_kernel("UniqueV2")
def _unique_v2(ctx: KernelContext, x: Any, axis: Any) -> tuple[Any, Any]:
    y, idx, _ = _unique(ctx, x, axis)
    return y, idx


@register_kernel("UniqueWithCountsV2")
def _unique_with_counts_v2(ctx: KernelContext, x: Any, axis: Any) -> tuple[Any, Any, Any]:
    return _unique(ctx, x, axis)


# -- ListDiff -------------------------------------------------------------------------------------------------
@register_shape("ListDiff")
def _list_diff_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 1)
    ctx.with_rank(ctx.input(1), 1)
    return [PartialTensorShape([-1]), PartialTensorShape([-1])]


@register_kernel("ListDiff")
def _list_diff(ctx: KernelContext, x: Any, y: Any) -> tuple[Any, Any]:
    """The elements of x not in y (``==``: a NaN is never in y), in order, and their positions in x."""
    if x.ndim != 1:
        ctx.invalid_argument("x should be a 1D vector.")
    if y.ndim != 1:
        ctx.invalid_argument("y should be a 1D vector.")
    idx_type = ctx.output_dtypes[1]
    if _numpy_like(ctx, x):
        xs = np.asarray(x)
        keys, ys = _numpy_keys(xs), np.sort(_numpy_keys(np.asarray(y)))
        found = np.take(ys, np.clip(np.searchsorted(ys, keys), 0, max(ys.size - 1, 0))) == keys if ys.size else \
            np.zeros(xs.shape, bool)
        keep = np.flatnonzero(~found)
        idx = keep.astype(idx_type.numpy_dtype)
        return xs[keep], idx if ctx.backend.name == "numpy" else ctx.backend.from_numpy(idx, ctx)
    xp = ctx.xp
    if y.shape[0]:
        ys = xp.sort(y)
        position = xp.clip(xp.searchsorted(ys, x), 0, y.shape[0] - 1)
        found = xp.take(ys, position) == x
    else:
        found = xp.zeros(x.shape, dtype=xp.bool)
    keep = xp.nonzero(~found)[0]
    return xp.take(x, keep), xp.astype(keep, ctx.dtype(idx_type))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
class _OneAxis(Domain):
    """A one-element axis vector for input ``x``: any of its axes, negative ones too."""

    patterned = False
    depends = ("x",)

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DataType.DT_INT32, DataType.DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        rank = max(d.rank_of("x"), 1)
        return np.asarray([int(d.rng.integers(-rank, rank))], d.dtype.numpy_dtype)


_I32, _I64 = DataType.DT_INT32, DataType.DT_INT64
_REPEATED = [3.0, 1.0, 3.0, 2.0, 1.0, 0.0, -0.0, math.nan, math.nan, math.inf, 3.0]
for _op in ("Unique", "UniqueWithCounts"):
    conformance(_op, x=values("small", specials=True), out_idx=one_of(_I32, _I64), compare="exact", live=20,
                shapes=[{"x": s} for s in ((9,), (0,), (1,), (3, 2))],
                cases=[case(x=literal(_REPEATED)), case(x=literal([True, False, True])),
                       case(x=literal([b"a", b"bc", b"a", b""]))])
for _op in ("UniqueV2", "UniqueWithCountsV2"):
    conformance(_op, x=values("small"), axis=_OneAxis(), out_idx=one_of(_I32, _I64), compare="exact", live=20,
                shapes=[{"x": s} for s in ((9,), (5, 2), (2, 6), (3, 4, 2), (0, 3), (3, 0))],
                cases=[case(x=literal([[1, 2], [3, 4], [1, 2]]), axis=literal([a], _I32)) for a in (0, 1, -1, 2)]
                + [case(x=literal([[math.nan, 1.0], [math.nan, 1.0], [0.0, 1.0], [-0.0, 1.0]]),
                        axis=literal([0], _I64)),
                   case(x=literal(_REPEATED), axis=literal([0], _I32)),
                   case(x=literal([[1, 2, 1]]), axis=literal(np.zeros(0, np.int32).tolist(), _I32)),
                   case(x=literal([1, 2, 1]), axis=literal(np.zeros(0, np.int32).tolist(), _I32)),
                   case(x=literal([1, 2, 1]), axis=literal([0, 0], _I32)), case(x=literal(3), axis=literal([0], _I32))])
conformance("ListDiff", x=values("small", specials=True), y=values("small", specials=True),
            out_idx=one_of(_I32, _I64), compare="exact", live=20,
            shapes=[dict(x=a, y=b) for a, b in (((9,), (4,)), ((0,), (3,)), ((5,), (0,)), ((2, 2), (2,)))],
            cases=[case(x=literal([math.nan, 1.0, 0.0, -0.0, 2.0]), y=literal([math.nan, 0.0])),
                   case(x=literal([1, 1, 2, 2, 3]), y=literal([2])), case(x=literal([1, 2]), y=literal([[2]])),
                   case(x=literal([b"a", b"b", b"a"]), y=literal([b"b"]))])
