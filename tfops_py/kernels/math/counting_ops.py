"""Bincount, DenseBincount, HistogramFixedWidth, Bucketize, LowerBound and UpperBound.

Bincount counts (or sums ``weights`` of) each value of ``arr`` in [0, size): larger values are ignored,
a negative one is an error.  DenseBincount does the same per row of a 2-D input, or gives 1 where a
value occurs (``binary_output``).  HistogramFixedWidth is TF's
``min(trunc((max(v, lo) - lo) / ((hi - lo) / nbins)), nbins - 1)`` (the difference in the input's
type, the division in double) counted per bin.  Bucketize gives the number of boundaries <= x;
LowerBound/UpperBound a per-row binary search (a vectorized bisection: log2(n) whole-array steps).
Sums go through the segment-sum core (``_segment_reduce``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, Domain, Draw, case, conformance, literal, one_of, values
from tfops_py.framework.dtypes import DT_INT64, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels.math._sizes import sized
from tfops_py.kernels.math._segment_reduce import segment_sum
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "counting_ops"


def bin_counts(ctx: KernelContext, ids: np.ndarray, size: int, weights: Any | None, dt: DataType) -> Any:
    """Per bin in [0, size) the count (weights None) or the weight sum of the (flat, host) ``ids``; ids outside
    [0, size) are ignored.  A backend array of dtype ``dt``."""
    xp = ctx.xp
    if weights is None:
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= size):  # else no mask and no compressed copy
            ids = ids[(ids >= 0) & (ids < size)]
        counts = np.bincount(ids, minlength=size)[:size]
        return ctx.asarray(counts.astype(dt.numpy_dtype, copy=False), dt)
    kept = np.where(ids < size, ids, -1)
    flat = xp.reshape(weights, (-1, 1))
    return xp.reshape(segment_sum(ctx, flat, ctx.asarray(kept.astype(np.int64), DT_INT64), size), (size,))


# -- Bincount ---------------------------------------------------------------------------------------------
@register_shape("Bincount")
def _bincount_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    size = ctx.input_tensor(1)
    if size is None:
        return [PartialTensorShape([-1])]
    if int(size) < 0:
        ctx.invalid_argument(f"size ({int(size)}) must be non-negative")
    return [PartialTensorShape([int(size)])]


def _size_of(ctx: KernelContext, size: Any) -> int:
    s = ctx.host(size)
    if s.ndim != 0:
        ctx.invalid_argument(f"Shape must be rank 0 but is rank {s.ndim}")
    value = int(s)
    if value < 0:
        ctx.invalid_argument(f"size ({value}) must be non-negative")
    return value


@register_kernel("Bincount")
def _bincount(ctx: KernelContext, arr: Any, size: Any, weights: Any) -> Any:
    n = _size_of(ctx, size)
    sized(ctx, [n])
    ids = ctx.host(arr).reshape(-1).astype(np.intp, copy=False)  # bincount's own index type: no second copy
    if ids.size and ids.min() < 0:
        ctx.invalid_argument("Input arr must be non-negative!")
    has_weights = math.prod(weights.shape) > 0
    if has_weights and math.prod(weights.shape) != ids.size:
        ctx.invalid_argument("Input indices and weights must have the same size.")
    return bin_counts(ctx, ids, n, weights if has_weights else None, ctx.output_dtypes[0])


# -- DenseBincount -------------------------------------------------------------------------------------------
@register_shape("DenseBincount")
def _dense_bincount_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    data = ctx.with_rank_at_most(ctx.input(0), 2)
    ctx.with_rank(ctx.input(1), 0)
    size = ctx.input_tensor(1)
    n = -1 if size is None else int(size)
    if n < -1:
        ctx.invalid_argument(f"size ({n}) must be non-negative")
    if data.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape([n] if data.dims() <= 1 else [data[0], n])]


@register_kernel("DenseBincount")
def _dense_bincount(ctx: KernelContext, input: Any, size: Any, weights: Any) -> Any:  # noqa: A002
    n = _size_of(ctx, size)
    if input.ndim > 2:
        ctx.invalid_argument(f"Shape must be at most rank 2 but is rank {input.ndim}")
    ids = ctx.host(input).astype(np.int64)
    if ids.size and ids.min() < 0:
        ctx.invalid_argument(f"Input 'in' must be non-negative! Negative input value found: {ids.min()}")
    has_weights = math.prod(weights.shape) > 0
    if has_weights and tuple(weights.shape) != tuple(input.shape):
        ctx.invalid_argument("`weights` must be the same shape as `arr` or a length-0 `Tensor`, in which case it "
                             f"acts as all weights equal to 1. Received {format_shape(weights.shape)}")
    rows = ids.shape[0] if ids.ndim == 2 else 1
    out_shape = sized(ctx, [rows, n] if ids.ndim == 2 else [n])
    # one flat bin per (row, value); values past the size are dropped
    flat = np.where(ids < n, ids + n * np.arange(rows).reshape((-1,) + (1,) * (ids.ndim - 1)), -1).reshape(-1)
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    if ctx.attrs["binary_output"]:
        present = np.bincount(flat[flat >= 0], minlength=rows * n)[:rows * n] > 0
        return xp.reshape(ctx.asarray(present.astype(dt.numpy_dtype), dt), out_shape)
    return xp.reshape(bin_counts(ctx, flat, rows * n, weights if has_weights else None, dt), out_shape)


# -- HistogramFixedWidth ---------------------------------------------------------------------------------------
@register_shape("HistogramFixedWidth")
def _histogram_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 1)
    ctx.with_rank(ctx.input(2), 0)
    nbins = ctx.input_tensor(2)
    if nbins is not None and int(nbins) <= 0:
        ctx.invalid_argument(f"Requires nbins > 0: {int(nbins)}")
    return [PartialTensorShape([-1 if nbins is None else int(nbins)])]


@register_kernel("HistogramFixedWidth")
def _histogram_fixed_width(ctx: KernelContext, values: Any, value_range: Any, nbins: Any) -> Any:
    lohi, nb = ctx.host(value_range), ctx.host(nbins)
    if lohi.ndim != 1 or lohi.shape[0] != 2:
        ctx.invalid_argument(f"value_range should be a vector of 2 elements, but got {format_shape(lohi.shape)}")
    if nb.ndim != 0:
        ctx.invalid_argument(f"nbins should be a scalar, but got {format_shape(nb.shape)}")
    bins = int(nb)
    if bins <= 0:
        ctx.invalid_argument(f"nbins should be a positive number, but got '{bins}'")
    sized(ctx, [bins])
    lo, hi = lohi[0], lohi[1]
    if not lo < hi:
        ctx.invalid_argument(f"value_range should satisfy value_range[0] < value_range[1], but got "
                             f"'[{_plain(lo)}, {_plain(hi)}]'")
    xp = ctx.xp
    dt = ctx.input_dtypes[0]
    if dt.is_floating and bool(xp.any(xp.isnan(values))):
        ctx.invalid_argument("Histogram values must not contain NaN")
    step = (float(hi) - float(lo)) / bins  # in double, from the bounds in the input's type
    lo_b = xp.asarray(lo, dtype=values.dtype) if ctx.backend.name != "numpy" else lo
    with np.errstate(all="ignore"):
        shifted = xp.where(values > lo_b, values, lo_b) - lo_b  # in the input's type, as TF (integers wrap)
        position = xp.astype(shifted, ctx.dtype(DataType.DT_DOUBLE)) / step
    index = xp.astype(xp.where(position < bins - 1, position, float(bins - 1)), xp.int64)
    return bin_counts(ctx, ctx.host(xp.reshape(index, (-1,))), bins, None, ctx.output_dtypes[0])


def _plain(v: Any) -> str:
    """A bound as TF prints it (6 significant digits, no trailing zeros)."""
    return str(int(v)) if np.asarray(v).dtype.kind in "iu" else f"{float(v):g}"


# -- Bucketize, LowerBound, UpperBound ---------------------------------------------------------------------
register_shape("Bucketize")(lambda ctx: [ctx.input(0)])


@register_kernel("Bucketize")
def _bucketize(ctx: KernelContext, input: Any) -> Any:  # noqa: A002 - TF's argument name
    """How many boundaries are <= x (NaN: all of them, as TF)."""
    boundaries = [float(b) for b in ctx.attrs["boundaries"]]
    if any(b > a for b, a in zip(boundaries, boundaries[1:])):
        ctx.invalid_argument("Expected sorted boundaries")
    xp = ctx.xp
    edges = xp.asarray(np.asarray(boundaries, np.float64), dtype=xp.float64)
    flat = xp.reshape(xp.astype(input, xp.float64), (-1,))
    found = xp.searchsorted(edges, flat, side="right") if boundaries else xp.zeros(flat.shape, dtype=xp.int64)
    return xp.reshape(xp.astype(found, xp.int32), tuple(input.shape))


def _bound_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    sorted_inputs = ctx.with_rank(ctx.input(0), 2)
    values_shape = ctx.with_rank(ctx.input(1), 2)
    a, b = sorted_inputs[0], values_shape[0]
    if a != -1 and b != -1 and a != b:
        ctx.invalid_argument("Leading dim_size of both tensors must match.")
    return [values_shape]


register_shape("LowerBound", "UpperBound")(_bound_shape)


def search_rows(xp: Any, rows: Any, values: Any, right: bool) -> Any:
    """Per row b, the insertion point of each ``values[b, j]`` in the sorted ``rows[b]`` (int64): bisection
    on the whole batch at once (``right``: after equal entries)."""
    batch, n = rows.shape
    lo = xp.zeros(values.shape, dtype=xp.int64)
    hi = xp.full(values.shape, n, dtype=xp.int64)
    for _ in range(max(1, n).bit_length()):
        mid = (lo + hi) // 2
        probe = xp.take_along_axis(rows, xp.clip(mid, 0, max(n - 1, 0)), axis=1)
        go_right = (probe <= values) if right else (probe < values)
        go_right = go_right & (mid < hi)
        lo = xp.where(go_right, mid + 1, lo)
        hi = xp.where(go_right, hi, mid)
    return lo


def _bound_kernel(right: bool) -> Any:
    def kernel(ctx: KernelContext, sorted_inputs: Any, values: Any) -> Any:
        if sorted_inputs.ndim != 2:
            ctx.invalid_argument(f"Shape must be rank 2 but is rank {sorted_inputs.ndim} for `sorted_inputs` "
                                 "argument")
        if values.ndim != 2:
            ctx.invalid_argument(f"Shape must be rank 2 but is rank {values.ndim} for `values` argument")
        if sorted_inputs.shape[0] != values.shape[0]:
            ctx.invalid_argument("Leading dim_size of both tensors must match.")
        xp = ctx.xp
        out_type = ctx.dtype(ctx.output_dtypes[0])
        if sorted_inputs.shape[1] == 0 or math.prod(values.shape) == 0:
            return xp.zeros(tuple(values.shape), dtype=out_type)
        if ctx.backend.name == "numpy" and sorted_inputs.shape[0] == 1:
            found = np.searchsorted(sorted_inputs[0], values[0], side="right" if right else "left")[None]
        else:
            found = search_rows(xp, sorted_inputs, values, right)
        return xp.astype(found, out_type)

    return kernel


register_kernel("LowerBound")(_bound_kernel(right=False))
register_kernel("UpperBound")(_bound_kernel(right=True))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
class _Counts(Domain):
    """Non-negative values mostly below ``top`` (sometimes past it: ignored), of the pattern shape."""

    def __init__(self, top: int = 6):
        self.top = top

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        return d.rng.integers(0, self.top + 2, d.shape or ()).astype(d.dtype.numpy_dtype)


class _SortedRows(Domain):
    """Rows sorted ascending (small integers: plenty of ties)."""

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer or dtype.is_floating

    def draw(self, d: Draw) -> np.ndarray:
        rows = d.rng.integers(0, 11, d.shape or ()) - (0 if d.dtype.numpy_dtype.kind == "u" else 5)
        return np.sort(rows, axis=-1).astype(d.dtype.numpy_dtype)


_I32 = DataType.DT_INT32
_EMPTY_F = literal(np.zeros(0).tolist(), DataType.DT_FLOAT)
conformance("Bincount", arr=_Counts(), size=literal(5, _I32), weights=values("small"),
            shapes=[dict(arr=s, weights=s) for s in ((7,), (3, 4), (0,), (2, 0, 3))] + [dict(arr=(4,), weights=(0,)),
                                                                                      dict(arr=(4,), weights=(3,))],
            compare="acc", live=20,
            cases=[case(arr=literal([1, 1, 3, 7], _I32), size=literal(s, _I32), weights=_EMPTY_F) for s in (5, 0, -1)]
            + [case(arr=literal([1, -1, 3], _I32), size=literal(5, _I32), weights=_EMPTY_F),
               case(arr=literal([1, 1], _I32), size=literal([5], _I32), weights=_EMPTY_F)])
conformance("DenseBincount", input=_Counts(), size=literal(5, _I32), weights=values("small"), binary_output=BOOL,
            shapes=[dict(input=s, weights=s) for s in ((7,), (3, 4), (0,), (2, 0), ())]
            + [dict(input=(3, 4), weights=(0,)), dict(input=(4,), weights=(3,)), dict(input=(1, 1, 1), weights=(0,))],
            compare="acc", live=20,
            cases=[case(input=literal([[1, -1]], _I32), size=literal(5, _I32), weights=_EMPTY_F),
                   case(input=literal([1, 2], _I32), size=literal(-2, _I32), weights=_EMPTY_F)])
conformance("HistogramFixedWidth", values=values("small", specials=True), value_range=literal([0, 7]),
            nbins=literal(5, _I32), dtype=one_of(DataType.DT_INT32, DataType.DT_INT64), compare="exact", live=20,
            cases=[case(values=literal([-1.0, 0.0, 0.5, 1.0, 4.9, 5.0, 6.0, math.inf, -math.inf]),
                        value_range=literal([0.0, 5.0]), nbins=literal(5, _I32)),
                   case(values=literal([0, 1, 2, 3, 4, 5, 9]), value_range=literal([0, 10]), nbins=literal(3, _I32)),
                   case(values=literal([1.0]), value_range=literal([5.0, 0.0]), nbins=literal(5, _I32)),
                   case(values=literal([1.0]), value_range=literal([0.0, 5.0]), nbins=literal(0, _I32)),
                   case(values=literal([1.0]), value_range=literal([0.0, 5.0]), nbins=literal(-3, _I32)),
                   case(values=literal([1.0, math.nan]), value_range=literal([0.0, 5.0]), nbins=literal(2, _I32))])
conformance("Bucketize", input=values(specials=True), boundaries=one_of([-1.0, 0.0, 2.5], [], [0.0]),
            compare="exact", live=20,
            cases=[case(input=literal([-1.0, 0.0, 0.5, 1.0, 5.0, math.nan, math.inf]), boundaries=[0.0, 1.0, 5.0]),
                   case(input=literal([1.0]), boundaries=[2.0, 1.0]), case(input=literal([1, 2, 3]),
                                                                              boundaries=[1.5, 2.0, 2.0])])
for _op in ("LowerBound", "UpperBound"):
    conformance(_op, sorted_inputs=_SortedRows(), values=values("small"), out_type=one_of(_I32, DataType.DT_INT64),
                shapes=[dict(sorted_inputs=a, values=b) for a, b in (((1, 6), (1, 5)), ((3, 7), (3, 4)),
                                                                     ((2, 0), (2, 3)), ((2, 5), (2, 0)),
                                                                     ((2, 4), (3, 4)), ((4,), (4,)))],
                compare="exact", live=20,
                cases=[case(sorted_inputs=literal([[1.0, 2.0, 2.0, 5.0]]), values=literal([[0.0, 2.0, 6.0, 2.5]]))])
