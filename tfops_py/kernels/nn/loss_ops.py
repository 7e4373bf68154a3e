"""Losses: SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits and L2Loss.

Both cross entropies follow TF's functors step by step (shift by the row maximum, sum the
exponentials, ``loss = sum(labels * (log(sum) - shifted))``, ``backprop = exp(shifted) / sum -
labels``), so NaN and infinity propagate as in TF.  SoftmaxCrossEntropyWithLogits broadcasts
logits and labels against each other as TF 2.21 does (the broadcast shape must be a matrix).
SparseSoftmaxCrossEntropyWithLogits rejects a label outside ``[0, classes)`` as TF's CPU kernel
does (TF's GPU kernel gives NaN instead).  Half and bfloat16 are computed in float and rounded
once (TF rounds every step, so low-precision results may differ by a few ulps).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import compute_dtype
from tfops_py.kernels._shape_util import merge_dim, merge_shapes
from tfops_py.kernels.registry import KernelContext, register_kernel


def _widen(ctx: KernelContext, *arrays: Any) -> list[Any]:
    dt = ctx.input_dtypes[0]
    wide = compute_dtype(dt)
    return list(arrays) if wide == dt else [ctx.xp.astype(a, ctx.dtype(wide)) for a in arrays]


def _narrow(ctx: KernelContext, *arrays: Any) -> tuple[Any, ...]:
    dt = ctx.output_dtypes[0]
    return arrays if compute_dtype(dt) == dt else tuple(ctx.xp.astype(a, ctx.dtype(dt)) for a in arrays)


def _shifted_and_log_sum(xp: Any, logits: Any) -> tuple[Any, Any, Any]:
    """(logits - row max, exp of it, log of its row sums): the first steps of TF's functors."""
    shifted = logits - xp.max(logits, axis=1, keepdims=True)
    e = xp.exp(shifted)
    total = xp.sum(e, axis=1, keepdims=True)
    return shifted, e / total, xp.log(total)


# -- SoftmaxCrossEntropyWithLogits -------------------------------------------------------------------
def _broadcast_dims(ctx: InferenceContext, a: PartialTensorShape, b: PartialTensorShape) -> PartialTensorShape:
    """TF's BroadcastBinaryOpOutputShapeFn (its graph-time wording)."""
    if a.unknown_rank() or b.unknown_rank():
        return unknown_shape()
    rank = max(a.dims(), b.dims())
    da = [1] * (rank - a.dims()) + list(a.as_tuple())
    db = [1] * (rank - b.dims()) + list(b.as_tuple())
    out = []
    for x, y in zip(da, db):
        if x == 1 or y == 1:
            out.append(y if x == 1 else x)
        elif x == -1 or y == -1:
            out.append(y if x == -1 else x)
        elif x != y:
            ctx.invalid_argument(f"Dimensions must be equal, but are {x} and {y}")
        else:
            out.append(x)
    return PartialTensorShape(out)


@register_shape("SoftmaxCrossEntropyWithLogits")
def _xent_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    logits, labels = ctx.input(0), ctx.input(1)
    same = logits.unknown_rank() or logits.dims() == 2
    if same:  # TF first tries: logits a matrix with the labels' exact shape
        merged = unknown_shape(2) if logits.unknown_rank() else logits
        if not labels.unknown_rank() and labels.dims() != 2:
            same = False
        elif not labels.unknown_rank():
            same = all(x == -1 or y == -1 or x == y for x, y in zip(merged, labels))
            if same:
                merged = merge_shapes(ctx, merged, labels)
        if same:
            return [PartialTensorShape([merged[0]]), merged]
    out = _broadcast_dims(ctx, logits, labels)
    if out.unknown_rank():
        ctx.invalid_argument("Shape must be broadcasted with rank 2, but is rank is unknown.")
    if out.dims() != 2:
        ctx.invalid_argument(f"Shape must be broadcasted with rank 2, but is rank {out.dims()}")
    return [PartialTensorShape([out[0]]), out]


@register_kernel("SoftmaxCrossEntropyWithLogits")
def _xent(ctx: KernelContext, features: Any, labels: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    shape = tuple(features.shape)
    if shape != tuple(labels.shape):
        try:
            shape = tuple(np.broadcast_shapes(tuple(features.shape), tuple(labels.shape)))
        except ValueError:
            ctx.invalid_argument(f"logits and labels must be broadcastable: logits_size="
                                 f"{format_shape(features.shape)} labels_size={format_shape(labels.shape)}")
    if len(shape) != 2:
        ctx.invalid_argument("logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional")
    if shape[1] == 0:  # no classes: zero loss, empty backprop
        return xp.zeros(shape[:1], dtype=features.dtype), xp.zeros(shape, dtype=features.dtype)
    logits, labels = _widen(ctx, xp.broadcast_to(features, shape), xp.broadcast_to(labels, shape))
    shifted, prob, log_sum = _shifted_and_log_sum(xp, logits)
    loss = xp.sum(labels * (log_sum - shifted), axis=1)
    return _narrow(ctx, loss, prob - labels)


# -- SparseSoftmaxCrossEntropyWithLogits -------------------------------------------------------------
@register_shape("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    features = ctx.with_rank(ctx.input(0), 2)
    labels = ctx.with_rank(ctx.input(1), 1)
    batch = merge_dim(ctx, features[0], labels[0])
    return [PartialTensorShape([batch]), PartialTensorShape([batch, features[1]])]


@register_kernel("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent(ctx: KernelContext, features: Any, labels: Any) -> tuple[Any, Any]:
    xp = ctx.xp
    if features.ndim != 2:
        ctx.invalid_argument(f"logits must be 2-D, but got shape {format_shape(features.shape)}")
    if labels.ndim != 1:
        ctx.invalid_argument(f"labels must be 1-D, but got shape {format_shape(labels.shape)}")
    batch, classes = features.shape
    if batch != labels.shape[0]:
        ctx.invalid_argument(f"logits and labels must have the same first dimension, got logits shape "
                             f"{format_shape(features.shape)} and labels shape {format_shape(labels.shape)}")
    if classes == 0:
        ctx.invalid_argument(f"Must have at least one class, but got logits shape {format_shape(features.shape)}")
    if batch == 0:
        return xp.zeros((0,), dtype=features.dtype), xp.zeros((0, classes), dtype=features.dtype)
    host = ctx.host(labels)
    lo, hi = int(host.min()), int(host.max())
    if lo < 0 or hi >= classes:
        ctx.invalid_argument(f"Received a label value of {lo if lo < 0 else hi} which is outside the valid range "
                             f"of [0, {classes}).  Label values: {' '.join(map(str, host.tolist()))}")
    (logits,) = _widen(ctx, features)
    onehot = xp.reshape(labels, (batch, 1)) == xp.reshape(xp.arange(classes, dtype=labels.dtype), (1, classes))
    shifted, prob, log_sum = _shifted_and_log_sum(xp, logits)
    zero = xp.zeros_like(shifted)
    loss = xp.sum(xp.where(onehot, log_sum - shifted, zero), axis=1)
    return _narrow(ctx, loss, prob - xp.astype(onehot, prob.dtype))


# -- L2Loss ------------------------------------------------------------------------------------------
@register_shape("L2Loss")
def _l2_loss_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


@register_kernel("L2Loss")
def _l2_loss(ctx: KernelContext, t: Any) -> Any:
    xp = ctx.xp
    (x,) = _widen(ctx, t)
    return _narrow(ctx, xp.sum(x * x) * 0.5)[0]
