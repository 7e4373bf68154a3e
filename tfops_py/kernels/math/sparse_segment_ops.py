"""SparseSegmentSum/Mean/SqrtN (and their WithNumSegments forms), their Grad and GradV2 ops.

``output[s] = reduce(data[indices[i]] for i with segment_ids[i] == s)``: a segment sum over gathered rows,
divided by the segment's size (Mean) or its square root (SqrtN); an empty segment gives 0.  The ids are
sorted (TF checks it); without ``num_segments`` there are ``segment_ids[-1] + 1`` segments.  The gather
is fused into the sum (``_segment_reduce.segment_sum`` with ``rows=indices``: on NumPy one sparse
product, no copy of the gathered rows).  ``sparse_gradient`` only changes which gradient TF builds.

The Grad ops scatter ``grad[segment_ids[i]]`` (scaled by 1, 1/size or 1/sqrt(size) of the segment) into
row ``indices[i]`` of an ``output_dim0``-row tensor; GradV2 returns only the rows named by the sorted
unique indices, and those indices.  Kernel messages are TF 2.21's.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.conformance import Domain, Draw, ShapeRule, case, conformance, divergence, literal, reference, values
from tfops_py.framework.dtypes import DT_INT32, DT_INT64, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import compute_dtype
from tfops_py.kernels._shape_util import merge_shapes, scalar_input
from tfops_py.kernels.math._sizes import sized
from tfops_py.kernels.math._segment_reduce import segment_counts, segment_sum
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "segment_ops"
_KINDS = ("Sum", "Mean", "SqrtN")
FORWARD = tuple(f"SparseSegment{k}" for k in _KINDS) + tuple(f"SparseSegment{k}WithNumSegments" for k in _KINDS)
GRAD = tuple(f"SparseSegment{k}Grad" for k in _KINDS)
GRAD_V2 = tuple(f"SparseSegment{k}GradV2" for k in _KINDS)


def _kind(op: str) -> str:
    return next(k for k in ("SqrtN", "Mean", "Sum") if op.startswith(f"SparseSegment{k}"))


def segment_scale(ctx: KernelContext, kind: str, counts: Any, dtype: Any) -> Any | None:
    """Per segment the factor a Mean (1/size) or SqrtN (1/sqrt(size)) applies; None for Sum.  Empty: 1."""
    if kind == "Sum":
        return None
    xp = ctx.xp
    sizes = xp.astype(xp.where(counts == 0, xp.ones_like(counts), counts), dtype)
    return 1 / (sizes if kind == "Mean" else xp.sqrt(sizes))


# -- forward ---------------------------------------------------------------------------------------------
@register_shape(*FORWARD)
def _sparse_segment_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's SparseSegmentReductionShapeFn (WithNumSegments: the number of rows is that input's value)."""
    data = ctx.with_rank_at_least(ctx.input(0), 1)
    merge_shapes(ctx, ctx.with_rank(ctx.input(1), 1), ctx.with_rank(ctx.input(2), 1))
    rows = -1
    if ctx.num_inputs == 4:
        ctx.with_rank(ctx.input(3), 0)
        value = scalar_input(ctx, 3)
        if value is not None and value < 0:
            ctx.invalid_argument("Cannot specify a negative value for num_segments")
        rows = -1 if value is None else value
    if data.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape([rows] + list(data.as_tuple()[1:]))]


def _vectors(ctx: KernelContext, indices: Any, segment_ids: Any) -> None:
    if indices.ndim != 1:
        ctx.invalid_argument("indices should be a vector.")
    if segment_ids.ndim != 1:
        ctx.invalid_argument("segment_ids should be a vector.")
    if indices.shape[0] != segment_ids.shape[0]:
        ctx.invalid_argument("segment_ids and indices should have same size.")


def _check_segments(ctx: KernelContext, ids: np.ndarray, idx: np.ndarray, rows: int, num_data: int) -> None:
    """TF's walk over the segments: not increasing, then the id's range, then the segment's indices."""
    starts = np.flatnonzero(np.concatenate([[True], ids[1:] != ids[:-1]]))
    ends = np.concatenate([starts[1:], [ids.size]])
    segments = ids[starts]
    decreasing = np.concatenate([segments[1:] < segments[:-1], [False]])
    out_of_range = (segments < 0) | (segments >= rows)
    bad_index = (idx < 0) | (idx >= num_data)
    first_bad = np.full(segments.size, ids.size)
    if bad_index.any():
        positions = np.flatnonzero(bad_index)
        owner = np.searchsorted(starts, positions, side="right") - 1
        np.minimum.at(first_bad, owner, positions)
    bad_indices = first_bad < ends
    bad = np.flatnonzero(decreasing | out_of_range | bad_indices)
    if not bad.size:
        return
    k = int(bad[0])
    if decreasing[k]:
        ctx.invalid_argument("segment ids are not increasing")
    if out_of_range[k]:
        ctx.invalid_argument(f"Segment id {segments[k]} out of range [0, {rows}), possibly because 'segment_ids' "
                             "input is not sorted.")
    i = int(first_bad[k])
    ctx.invalid_argument(f"Bad: indices[{i}] == {idx[i]} out of range [0, {num_data})")


def _forward_kernel(kind: str, with_num_segments: bool) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, data: Any, indices: Any, segment_ids: Any, num_segments: Any = None) -> Any:
        _vectors(ctx, indices, segment_ids)
        ids = ctx.host(segment_ids).astype(np.int64)
        n = ids.shape[0]
        last = int(ids[-1]) if n else -1
        if with_num_segments:
            num = ctx.host(num_segments)
            if num.ndim != 0:
                ctx.invalid_argument(f"num_segments should be a scalar, not shape {format_shape(num.shape)}")
            rows = int(num)
            if rows < 0:
                ctx.invalid_argument("segment ids must be >= 0")
            if rows <= last:
                ctx.invalid_argument("segment ids must be < num_segments")
        else:
            rows = last + 1
        if data.ndim < 1:
            ctx.invalid_argument("Shape must be at least rank 1")
        inner = tuple(data.shape[1:])
        shape = sized(ctx, [rows, *inner])
        idx = ctx.host(indices).astype(np.int64)
        if n:
            _check_segments(ctx, ids, idx, rows, data.shape[0])
        xp, dt = ctx.xp, ctx.output_dtypes[0]
        if math.prod(shape) == 0:
            return xp.zeros(shape, dtype=ctx.dtype(dt))
        wide = compute_dtype(dt)
        flat = xp.reshape(data, (data.shape[0], math.prod(inner)))
        if wide != dt:
            flat = xp.astype(flat, ctx.dtype(wide))
        ids_b = ctx.asarray(ids, DT_INT64)
        total = segment_sum(ctx, flat, ids_b, rows, rows=ctx.asarray(idx, DT_INT64))
        scale = segment_scale(ctx, kind, segment_counts(ctx, ids_b, rows), total.dtype)
        if scale is not None:
            total = total * xp.reshape(scale, (rows, 1))
        return xp.reshape(total if wide == dt else xp.astype(total, ctx.dtype(dt)), shape)

    return kernel


# -- gradients --------------------------------------------------------------------------------------------
def _grad_inputs(ctx: InferenceContext) -> PartialTensorShape:
    """The checks both gradient forms make; grad's shape."""
    grad = ctx.with_rank_at_least(ctx.input(0), 1)
    indices = ctx.with_rank(ctx.input(1), 1)
    merge_shapes(ctx, ctx.with_rank(ctx.input(2), 1), indices)
    ctx.with_rank(ctx.input(3), 0)
    return grad


@register_shape(*GRAD)
def _grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's SparseSegmentReductionGradShapeFn: output_dim0 rows, then grad's inner dimensions."""
    grad = _grad_inputs(ctx)
    dim0 = scalar_input(ctx, 3)
    if dim0 is not None and dim0 < 0:
        ctx.invalid_argument("Cannot specify a negative value for output_dim0")
    if grad.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape([-1 if dim0 is None else dim0] + list(grad.as_tuple()[1:]))]


@register_shape(*GRAD_V2)
def _grad_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    grad = _grad_inputs(ctx)
    rows = unknown_shape() if grad.unknown_rank() else PartialTensorShape([-1] + list(grad.as_tuple()[1:]))
    return [rows, PartialTensorShape([-1])]


def _gradient(ctx: KernelContext, kind: str, grad: Any, indices: Any, segment_ids: Any, dim0: Any,
              v2: bool) -> tuple[Any, np.ndarray | None, int, tuple]:
    """(the scattered sum, the sorted unique indices (V2) or None, output rows, inner shape)."""
    _vectors(ctx, indices, segment_ids)
    d0 = ctx.host(dim0)
    if d0.ndim != 0:
        ctx.invalid_argument("output_dim0 should be a scalar.")
    m = int(d0)
    if m < 0:
        ctx.invalid_argument(f"Expected a non-negative size, got {m}")
    if grad.ndim < 1:
        ctx.invalid_argument("Shape must be at least rank 1")
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    inner = tuple(grad.shape[1:])
    if m == 0:  # TF returns the empty output before looking at the ids
        empty = xp.zeros((0, math.prod(inner)), dtype=ctx.dtype(dt))
        return empty, (np.zeros(0, np.int64) if v2 else None), 0, inner
    ids = ctx.host(segment_ids).astype(np.int64)
    idx = ctx.host(indices).astype(np.int64)
    num_segments = grad.shape[0]
    if ids.size and (ids.min() < 0 or ids.max() >= num_segments):
        ctx.invalid_argument("Invalid number of segments")
    bad = np.flatnonzero((idx < 0) | (idx >= m))
    if bad.size:
        ctx.invalid_argument(f"Index {idx[bad[0]]} out of range [0, {m}).")
    unique = np.unique(idx) if v2 else None
    rows = m if unique is None else unique.size
    if not v2 and math.prod(sized(ctx, [rows, *inner])) == 0:
        return xp.zeros((rows, math.prod(inner)), dtype=ctx.dtype(dt)), None, rows, inner
    wide = compute_dtype(dt)
    flat = xp.reshape(grad, (num_segments, math.prod(inner)))
    if wide != dt:
        flat = xp.astype(flat, ctx.dtype(wide))
    ids_b = ctx.asarray(ids, DT_INT64)
    scale = segment_scale(ctx, kind, segment_counts(ctx, ids_b, num_segments), flat.dtype)
    weights = None if scale is None else xp.take(scale, ids_b)
    targets = idx if unique is None else np.searchsorted(unique, idx)
    out = segment_sum(ctx, flat, ctx.asarray(targets, DT_INT64), rows, rows=ids_b, weights=weights)
    return (out if wide == dt else xp.astype(out, ctx.dtype(dt))), unique, rows, inner


def _grad_kernel(kind: str) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, grad: Any, indices: Any, segment_ids: Any, output_dim0: Any) -> Any:
        out, _, rows, inner = _gradient(ctx, kind, grad, indices, segment_ids, output_dim0, v2=False)
        return ctx.xp.reshape(out, (rows, *inner))

    return kernel


def _grad_v2_kernel(kind: str) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, grad: Any, indices: Any, segment_ids: Any, dense_output_dim0: Any) -> Any:
        out, unique, rows, inner = _gradient(ctx, kind, grad, indices, segment_ids, dense_output_dim0, v2=True)
        assert unique is not None  # V2 returns the sorted unique indices
        index_type = ctx.output_dtypes[1]
        return ctx.xp.reshape(out, (rows, *inner)), ctx.asarray(unique.astype(index_type.numpy_dtype), index_type)

    return kernel


for _kind_name in _KINDS:
    register_kernel(f"SparseSegment{_kind_name}")(_forward_kernel(_kind_name, with_num_segments=False))
    register_kernel(f"SparseSegment{_kind_name}WithNumSegments")(_forward_kernel(_kind_name, with_num_segments=True))
    register_kernel(f"SparseSegment{_kind_name}Grad")(_grad_kernel(_kind_name))
    register_kernel(f"SparseSegment{_kind_name}GradV2")(_grad_v2_kernel(_kind_name))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
class _Lookups(ShapeRule):
    """A table of ``rows`` rows and ``n`` lookups (indices and sorted segment ids of length n)."""

    def __init__(self, table: str, extra: dict[str, Any] | None = None):
        self.table, self.extra = table, extra or {}

    def patterns(self) -> list[dict[str, Any]]:
        t = self.table
        return [{t: (5, 3), "indices": (6,), "segment_ids": (6,), **self.extra},
                {t: (4,), "indices": (4,), "segment_ids": (4,), **self.extra},
                {t: (3, 2, 2), "indices": (2,), "segment_ids": (2,), **self.extra},
                {t: (4, 0), "indices": (3,), "segment_ids": (3,), **self.extra},
                {t: (3, 2), "indices": (0,), "segment_ids": (0,), **self.extra},
                {t: (3, 2), "indices": (3,), "segment_ids": (2,), **self.extra}]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        n = int(rng.integers(0, 8))
        table = (int(rng.integers(1, 6)),) + tuple(int(d) for d in rng.integers(0, 4, int(rng.integers(0, 3))))
        return {self.table: table, "indices": (n,), "segment_ids": (n if rng.uniform() < 0.9 else n + 1,),
                **self.extra}


class _Rows(Domain):
    """Row indices into input ``table`` (sometimes one out of range: TF's error)."""

    def __init__(self, table: str, bad: float = 0.1):
        self.table, self.bad = table, bad
        self.depends = (table,)

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DT_INT32, DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        rows = int(np.shape(d.inputs[self.table])[0]) if np.ndim(d.inputs[self.table]) else 0
        shape = d.shape or ()
        out = d.rng.integers(0, max(rows, 1), shape)
        if out.size and d.rng.uniform() < self.bad:
            out.reshape(-1)[int(d.rng.integers(out.size))] = rows + 1
        return out.astype(d.dtype.numpy_dtype)


class _SortedSegments(Domain):
    """Sorted segment ids below 4 with gaps (sometimes not sorted: TF's error)."""

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DT_INT32, DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        shape = d.shape or ()
        ids = np.sort(d.rng.integers(0, 4, shape))
        if ids.size > 1 and d.rng.uniform() < 0.1:
            ids = ids[::-1].copy()
        return ids.astype(d.dtype.numpy_dtype)


class _GradSegments(Domain):
    """Segment ids below the number of rows of ``grad``, as the forward op's would be."""

    depends = ("grad",)

    def accepts(self, dtype: DataType) -> bool:
        return dtype in (DT_INT32, DT_INT64)

    def draw(self, d: Draw) -> np.ndarray:
        rows = int(np.shape(d.inputs["grad"])[0]) if np.ndim(d.inputs["grad"]) else 1
        shape = d.shape or ()
        return np.sort(d.rng.integers(0, max(rows, 1), shape)).astype(d.dtype.numpy_dtype)


_I32, _I64 = DT_INT32, DT_INT64
_TABLE = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]


def _forward_cases(op: str) -> list[Any]:
    with_num = op.endswith("WithNumSegments")
    extra: dict[str, Any] = {"num_segments": literal(4, _I32)} if with_num else {}
    cases = [case(data=literal(_TABLE), indices=literal(idx, _I32), segment_ids=literal(seg, _I32), **extra)
             for idx, seg in (([0, 1, 3], [0, 0, 2]), ([0, 1, 3], [0, 2, 1]), ([0, 7, 3], [0, 0, 1]),
                              ([0, -1, 3], [0, 0, 1]), ([0, 1, 3], [-1, 0, 1]), ([3, 3, 0, 0], [0, 0, 3, 3]),
                              ([0, 1, 3], [0, 0]), ([[0], [1]], [0, 1]))]
    cases.append(case(data=literal(1.0), indices=literal([0], _I32), segment_ids=literal([0], _I32), **extra))
    if with_num:
        cases += [case(data=literal(_TABLE), indices=literal([0, 1], _I64), segment_ids=literal([0, 3], _I64),
                       num_segments=literal(n, _I64)) for n in (2, -1, 0)]
        cases.append(case(data=literal(_TABLE), indices=literal([0], _I32), segment_ids=literal([0], _I32),
                          num_segments=literal([4], _I32)))
    return cases


for _op in FORWARD:
    _extra: dict[str, Any] = {"num_segments": literal(4, _I32)} if _op.endswith("WithNumSegments") else {}
    conformance(_op, data=values(specials=True), indices=_Rows("data"), segment_ids=_SortedSegments(),
                shapes=_Lookups("data"), compare="acc", live=15, cases=_forward_cases(_op), **_extra)
for _op in GRAD + GRAD_V2:
    _dim = "dense_output_dim0" if _op in GRAD_V2 else "output_dim0"
    _dim0: dict[str, Any] = {_dim: literal(6, _I32)}
    conformance(_op, input_domains={"grad": values()}, indices=_Rows("grad", bad=0.0), segment_ids=_GradSegments(),
                shapes=_Lookups("grad"), compare="acc", live=15, **_dim0,
                cases=[case({"grad": literal(_TABLE[:3]), "indices": literal(idx, _I32),
                             "segment_ids": literal(seg, _I32), _dim: literal(dim0, _I32)})
                       for idx, seg, dim0 in (([0, 1, 3, 1], [0, 0, 2, 2], 5), ([0, 9, 3], [0, 0, 2], 5),
                                              ([0, 1, 3], [0, 0, 5], 5), ([3, 1, 3, 1], [0, 0, 2, 2], 5),
                                              ([0, 1], [0, 1], -1), ([0, 1], [0, 1], 0), ([], [], 3))])

divergence(FORWARD + GRAD + GRAD_V2, when="half / bfloat16", tf="accumulates in the type",
           ours="accumulates in float, rounds once")
divergence(GRAD, when="no indices (an empty `indices`) and output_dim0 > 0",
           tf="returns the output uninitialised (garbage)", ours="zeros",
           applies=lambda inputs, attrs: np.size(inputs["indices"]) == 0,
           reference=reference("tfops_py.kernels.math.sparse_segment_ops:zeros_like_tf",
                               "zeros of TF's output shape: TF leaves the output uninitialised when there are no "
                               "indices"))


def zeros_like_tf(run_tf: Callable[..., Any], op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    return [np.zeros_like(out) for out in run_tf(op, inputs, attrs)]
