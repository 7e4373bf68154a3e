"""Gradients TF defines in Python only (``math_grad.py``, ``nn_grad.py``) for the math family's scans,
segment reductions, selections and a few element-wise ops; TF's C++ API registers none of them.

Each builds the ops TF's Python function builds, in its order.  Where Python returns an
``IndexedSlices`` (SparseSegment* with ``sparse_gradient=true``) the gradient is made dense with
UnsortedSegmentSum, as TF does when such a gradient meets a dense tensor.  ApproxTopK's gradient needs
the static shape of its indices, as TF's does.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tfops_py import ops
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.math_grad import binary_grad_common, conj, const_of, reduced_shape
from tfops_py.gradients.registry import register_gradient

GradFn = Callable[[Scope, Operation, list[Output]], list[Output]]
_OPS = ("EuclideanNorm", "MulNoNan", "NextAfter", "InvGrad", "Cumprod", "CumulativeLogsumexp", "TopK", "TopKV2",
        "ApproxTopK", "NthElement", "SegmentMean", "SegmentMin", "SegmentMax", "SegmentProd", "UnsortedSegmentProd",
        "SparseSegmentSum", "SparseSegmentSumWithNumSegments", "SparseSegmentMean",
        "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtN", "SparseSegmentSqrtNWithNumSegments")
BEYOND_TF_CC: dict[str, str] = dict.fromkeys(_OPS, "TF Python's gradient (TF's C++ API registers none)")
CHANGED_FROM_TF_CC: dict[str, str] = {}


def _attr(op: Operation, name: str):  # noqa: ANN202 - any attr value
    return op.node().attrs[name]  # type: ignore[union-attr]


# -- element-wise and reductions --------------------------------------------------------------------------
@register_gradient("EuclideanNorm")
def _euclidean_norm_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """x / (norm / dy), with norm and dy brought back to the input's rank."""
    output, grad = op.output(0), grad_inputs[0]
    if not _attr(op, "keep_dims"):
        kept = reduced_shape(scope, ops.Shape(scope, op.input(0)).output, op.input(1))
        output = ops.Reshape(scope, output, kept).output
        grad = ops.Reshape(scope, grad, kept).output
    return [ops.RealDiv(scope, op.input(0), ops.RealDiv(scope, output, grad).z).z, NoGradient()]


@register_gradient("MulNoNan")
def _mul_no_nan_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    x, y, grad = op.input(0), op.input(1), grad_inputs[0]
    return binary_grad_common(scope, op, ops.MulNoNan(scope, grad, y).z, ops.MulNoNan(scope, x, grad).z)


@register_gradient("NextAfter")
def _next_after_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """1 for x1, 0 for x2, summed over broadcast dimensions."""
    x1, x2, grad = op.input(0), op.input(1), grad_inputs[0]
    s = scope.WithControlDependencies(grad)
    ones = ops.Fill(s, ops.Shape(s, x1).output, const_of(s, 1, x1.type())).output
    zeros = ops.Fill(s, ops.Shape(s, x2).output, const_of(s, 0, x2.type())).output
    return binary_grad_common(scope, op, ops.Mul(s, ones, grad).z, ops.Mul(s, zeros, grad).z)


@register_gradient("InvGrad")
def _inv_grad_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """y = -b conj(a)^2: (conj(dy) * -2 * b * conj(a), ReciprocalGrad(conj(a), dy))."""
    grad = grad_inputs[0]
    s = scope.WithControlDependencies(grad)
    ca, cg = conj(s, op.input(0)), conj(s, grad)
    minus_two = const_of(s, -2.0, grad.type())
    da = ops.Mul(s, ops.Mul(s, ops.Mul(s, cg, minus_two).z, op.input(1)).z, ca).z
    return [da, ops.internal.ReciprocalGrad(s, ca, grad).z]


# -- scans -------------------------------------------------------------------------------------------------
@register_gradient("Cumprod")
def _cumprod_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    x, axis = op.input(0), op.input(1)
    exclusive, reverse = _attr(op, "exclusive"), _attr(op, "reverse")
    prod = ops.Cumprod(scope, x, axis, exclusive=exclusive, reverse=reverse).out
    out = ops.Cumsum(scope, ops.Mul(scope, prod, grad_inputs[0]).z, axis, exclusive=exclusive,
                     reverse=not reverse).out
    return [ops.DivNoNan(scope, out, x).z, NoGradient()]


@register_gradient("CumulativeLogsumexp")
def _cumulative_logsumexp_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """The positive and negative parts of dy in log space, scanned the other way (TF's stable form)."""
    x, axis, out, grad = op.input(0), op.input(1), op.output(0), grad_inputs[0]
    exclusive, reverse = _attr(op, "exclusive"), _attr(op, "reverse")
    lowest = const_of(scope, _lowest(grad.type()), grad.type())
    zero = const_of(scope, 0, grad.type())
    log_pos = ops.SelectV2(scope, ops.Greater(scope, grad, zero).z, ops.Log(scope, grad).y, lowest).output
    log_neg = ops.SelectV2(scope, ops.Less(scope, grad, zero).z, ops.Log(scope, ops.Neg(scope, grad).y).y,
                           lowest).output

    def part(log_grad: Output) -> Output:
        scanned = ops.CumulativeLogsumexp(scope, ops.Sub(scope, log_grad, out).z, axis, reverse=not reverse,
                                          exclusive=exclusive).out
        return ops.Exp(scope, ops.Add(scope, scanned, x).z).y

    return [ops.Sub(scope, part(log_pos), part(log_neg)).z, NoGradient()]


def _lowest(dt: DataType) -> float:
    import ml_dtypes

    return float(ml_dtypes.finfo(dt.numpy_dtype).min)


# -- selection ---------------------------------------------------------------------------------------------
@register_gradient("TopK", "TopKV2")
def _top_k_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """dy scattered back to the winners' positions (flat indices into the input), zeros elsewhere."""
    grad = grad_inputs[0]
    in_shape = ops.Shape(scope, op.input(0)).output
    ind_shape = ops.Shape(scope, op.output(1)).output
    last = ops.Sub(scope, ops.Size(scope, ind_shape).output, 1).z
    ind_lastdim = ops.GatherV2(scope, ops.Cast(scope, ind_shape, DataType.DT_INT64).y, last, 0).output
    ind_2d = ops.Reshape(scope, op.output(1), ops.Stack(scope, [ops.Const(scope, np.int64(-1)), ind_lastdim]).output
                         ).output
    in_last = ops.Sub(scope, ops.Size(scope, in_shape).output, 1).z
    in_lastdim = ops.GatherV2(scope, ops.Cast(scope, in_shape, DataType.DT_INT64).y, in_last, 0).output
    outerdim = ops.GatherV2(scope, ops.Shape(scope, ind_2d).output, 0, 0).output
    starts = ops.Range(scope, ops.Const(scope, np.int64(0)),
                       ops.Mul(scope, ops.Cast(scope, outerdim, DataType.DT_INT64).y, in_lastdim).z, in_lastdim).output
    offsets = ops.Cast(scope, ops.ExpandDims(scope, starts, -1).output, DataType.DT_INT32).y
    ind = ops.Reshape(scope, ops.Add(scope, ind_2d, offsets).z, [-1]).output
    scattered = ops.ScatterNd(scope, ops.ExpandDims(scope, ind, -1).output, ops.Reshape(scope, grad, [-1]).output,
                              ops.Reshape(scope, ops.Prod(scope, in_shape, 0).output, [1]).output).output
    return [ops.Reshape(scope, scattered, in_shape).output] + [NoGradient()] * (op.num_inputs() - 1)


@register_gradient("ApproxTopK")
def _approx_top_k_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """dy scattered to the winners' coordinates (TF builds them from the indices' static shape)."""
    idx_dims, in_dims = op.output(1).shape().as_list(), op.input(0).shape().as_list()
    if idx_dims is None or in_dims is None or any(d < 0 for d in (*idx_dims, *in_dims)):
        raise ValueError("ApproxTopK's gradient needs static shapes, as in TF")
    idx_shape = [int(d) for d in idx_dims]
    rank = len(idx_shape)
    axis = _attr(op, "reduction_dimension") % rank
    lifted_shape = idx_shape + [1]
    parts = []
    for d in range(rank):
        if d == axis:
            parts.append(ops.Reshape(scope, op.output(1), lifted_shape).output)
            continue
        iota_shape = [1] * (rank + 1)
        iota_shape[d] = idx_shape[d]
        iota = ops.Reshape(scope, ops.Range(scope, 0, idx_shape[d], 1).output, iota_shape).output
        parts.append(ops.BroadcastTo(scope, iota, lifted_shape).output)
    flat_len = int(np.prod(idx_shape))
    flat_idx = ops.Reshape(scope, ops.Concat(scope, parts, rank).output, [flat_len, rank]).output
    flat_grad = ops.Reshape(scope, grad_inputs[0], [flat_len]).output
    return [ops.ScatterNd(scope, flat_idx, flat_grad, op.input(0).shape().as_list()).output]


@register_gradient("NthElement")
def _nth_element_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """dy split evenly among the entries equal to the n-th value."""
    inp, out, grad = op.input(0), op.output(0), grad_inputs[0]
    indicators = ops.Cast(scope, ops.Equal(scope, ops.ExpandDims(scope, out, -1).output, inp).z, grad.type()).y
    grad = ops.ExpandDims(scope, grad, -1).output
    num_selected = ops.ExpandDims(scope, ops.Sum(scope, indicators, -1).output, -1).output
    return [ops.Mul(scope, ops.RealDiv(scope, indicators, num_selected).z, grad).z, NoGradient()]


# -- segment reductions ------------------------------------------------------------------------------------
def _gather(scope: Scope, params: Output, indices: Output) -> Output:
    return ops.GatherV2(scope, params, indices, 0).output


@register_gradient("SegmentMean")
def _segment_mean_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad, ids = grad_inputs[0], op.input(1)
    data_rank = ops.Rank(scope, op.input(0)).output
    ids_shape = ops.Shape(scope, ids).output
    remaining = ops.Fill(scope, ops.ExpandDims(scope, ops.Sub(scope, data_rank, 1).z, 0).output,
                         ops.Const(scope, np.int32(1))).output
    ones_shape = ops.Concat(scope, [ids_shape, remaining], 0).output
    ones = ops.Fill(scope, ones_shape, const_of(scope, 1, grad.type())).output
    scaled = ops.RealDiv(scope, grad, ops.SegmentSum(scope, ones, ids).output).z
    return [_gather(scope, scaled, ids), NoGradient()]


@register_gradient("SegmentMin", "SegmentMax")
def _segment_min_max_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """dy split evenly among the entries equal to their segment's extremum."""
    grad, data, ids = grad_inputs[0], op.input(0), op.input(1)
    zeros = ops.ZerosLike(scope, data).y
    is_selected = ops.Equal(scope, data, _gather(scope, op.output(0), ids)).z
    num_selected = ops.SegmentSum(scope, ops.Cast(scope, is_selected, grad.type()).y, ids).output
    weighted = ops.RealDiv(scope, grad, num_selected).z
    return [ops.SelectV2(scope, is_selected, _gather(scope, weighted, ids), zeros).output, NoGradient()]


def _prod_grad(scope: Scope, op: Operation, grad: Output, unsorted: bool) -> Output:
    """The segment's product over each entry, zeros handled as TF (one zero: the others' product; more: 0)."""
    data, ids = op.input(0), op.input(1)

    def segment_sum(x: Output) -> Output:
        return ops.UnsortedSegmentSum(scope, x, ids, op.input(2)).output if unsorted else \
            ops.SegmentSum(scope, x, ids).output

    is_zero = ops.Equal(scope, data, const_of(scope, 0, data.type())).z
    num_zeros = segment_sum(ops.Cast(scope, is_zero, DataType.DT_INT32).y)
    grad = ops.SelectV2(scope, ops.Greater(scope, num_zeros, 1).z, ops.ZerosLike(scope, grad).y, grad).output
    non_zero_data = ops.SelectV2(scope, is_zero, ops.OnesLike(scope, data).y, data).output
    non_zero_prod = ops.UnsortedSegmentProd(scope, non_zero_data, ids, op.input(2)).output if unsorted else \
        ops.SegmentProd(scope, non_zero_data, ids).output
    gather_ids = ops.Maximum(scope, ids, ops.ZerosLike(scope, ids).y).z if unsorted else ids
    gathered_prod = _gather(scope, op.output(0), gather_ids)
    gathered_non_zero_prod = _gather(scope, non_zero_prod, gather_ids)
    divided = ops.RealDiv(scope, gathered_prod, data if unsorted else non_zero_data).z
    partial = ops.SelectV2(scope, is_zero, gathered_non_zero_prod, divided).output
    gathered_grad = _gather_drop_negatives(scope, grad, ids, gather_ids) if unsorted else _gather(scope, grad, ids)
    return ops.Mul(scope, gathered_grad, partial).z


def _gather_drop_negatives(scope: Scope, params: Output, ids: Output, clipped: Output) -> Output:
    """params gathered at ``clipped``, zero where the id is negative (TF's ``_GatherDropNegatives``)."""
    gathered = _gather(scope, params, clipped)
    is_positive = ops.GreaterEqual(scope, ids, ops.ZerosLike(scope, ids).y).z
    ones = ops.Fill(scope, ops.ExpandDims(scope, ops.Sub(scope, ops.Rank(scope, gathered).output,
                                                         ops.Rank(scope, is_positive).output).z, 0).output,
                    ops.Const(scope, np.int32(1))).output
    shape = ops.Concat(scope, [ops.Shape(scope, is_positive).output, ones], 0).output
    everywhere = ops.Fill(scope, ops.Shape(scope, gathered).output, ops.Const(scope, True)).output
    is_positive = ops.LogicalAnd(scope, ops.Reshape(scope, is_positive, shape).output, everywhere).z
    return ops.SelectV2(scope, is_positive, gathered, ops.ZerosLike(scope, gathered).y).output


@register_gradient("SegmentProd")
def _segment_prod_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [_prod_grad(scope, op, grad_inputs[0], unsorted=False), NoGradient()]


@register_gradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [_prod_grad(scope, op, grad_inputs[0], unsorted=True), NoGradient(), NoGradient()]


def _sparse_segment_grad(grad_op: type, grad_v2_op: type) -> GradFn:
    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        indices, ids = op.input(1), op.input(2)
        dim0 = ops.GatherV2(scope, ops.Shape(scope, op.input(0)).output, 0, 0).output
        if _attr(op, "sparse_gradient"):  # TF returns IndexedSlices; dense, they are this segment sum
            v2 = grad_v2_op(scope, grad_inputs[0], indices, ids, dim0)
            dense = ops.UnsortedSegmentSum(scope, v2.output, v2.sorted_unique_indices, dim0).output
        else:
            dense = grad_op(scope, grad_inputs[0], indices, ids, dim0).output
        return [dense] + [NoGradient()] * (op.num_inputs() - 1)

    return grad


for _kind in ("Sum", "Mean", "SqrtN"):
    _fn = _sparse_segment_grad(getattr(ops, f"SparseSegment{_kind}Grad"), getattr(ops, f"SparseSegment{_kind}GradV2"))
    register_gradient(f"SparseSegment{_kind}", f"SparseSegment{_kind}WithNumSegments")(_fn)
