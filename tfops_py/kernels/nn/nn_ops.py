"""Activations (Relu, Relu6, Softmax, LogSoftmax) and BiasAdd.

Relu and Relu6 keep NaN, as TF's.  Softmax and LogSoftmax work on the last axis of an input of
rank >= 1; half and bfloat16 are computed in float and rounded once (TF rounds every step, so
results may differ by an ulp).  BiasAdd's NCHW adds along dimension 1 for every rank >= 2.
"""
from __future__ import annotations

from typing import Any

from tfops_py.conformance import conformance, divergence, family_cases, values
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import compute_dtype, unchanged_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "nn_ops"

register_shape("Relu", "Relu6")(unchanged_shape)


@register_kernel("Relu")
def _relu(ctx: KernelContext, features: Any) -> Any:
    return ctx.xp.maximum(features, 0)  # maximum, unlike where(x > 0), propagates NaN


@register_kernel("Relu6")
def _relu6(ctx: KernelContext, features: Any) -> Any:
    return ctx.xp.minimum(ctx.xp.maximum(features, 0), 6)  # not clip: NumPy's clip turns bfloat16 into float


# -- Softmax / LogSoftmax -------------------------------------------------------------------------

def _logits_rank_message(dims: str) -> str:
    return f"logits must have >= 1 dimension, got {dims}"


@register_shape("Softmax", "LogSoftmax")
def _softmax_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    if ctx.input(0).dims() == 0:
        ctx.invalid_argument(_logits_rank_message(str(ctx.input(0))))
    return [ctx.input(0)]


def _softmax_kernel(log: bool) -> Any:
    def kernel(ctx: KernelContext, logits: Any) -> Any:
        xp = ctx.xp
        if logits.ndim == 0:
            ctx.invalid_argument(_logits_rank_message(format_shape(logits.shape)))
        if logits.shape[-1] == 0:
            return logits
        dt = ctx.input_dtypes[0]
        wide = compute_dtype(dt)
        x = logits if wide == dt else xp.astype(logits, ctx.dtype(wide))
        shifted = x - xp.max(x, axis=-1, keepdims=True)
        e = xp.exp(shifted)
        total = xp.sum(e, axis=-1, keepdims=True)
        out = shifted - xp.log(total) if log else e / total
        return out if wide == dt else xp.astype(out, ctx.dtype(dt))

    return kernel


register_kernel("Softmax")(_softmax_kernel(log=False))
register_kernel("LogSoftmax")(_softmax_kernel(log=True))


# -- BiasAdd -------------------------------------------------------------------------------------------

def _bias_mismatch(bias: str, value: str) -> str:
    return f"Must provide as many biases as the last dimension of the input tensor: {bias} vs. {value}"


@register_shape("BiasAdd")
def _bias_add_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    value, bias = ctx.input(0), ctx.input(1)
    if bias.dims() not in (-1, 1):
        ctx.invalid_argument(f"Biases must be 1D: {bias}")
    nchw = ctx.attr("data_format") == "NCHW"
    if value.unknown_rank():
        return [value]
    if value.dims() < (3 if nchw else 2):  # TF's graph-time rule; its kernel accepts rank-2 NCHW
        ctx.invalid_argument(f"Shape must be at least rank {3 if nchw else 2} but is rank {value.dims()}"
                             if nchw else f"Input tensor must be at least 2D: {value}")
    channel = 1 if nchw else value.dims() - 1
    merged = ctx.merge_dim(value[channel], bias[0])
    if merged is None:
        ctx.invalid_argument(_bias_mismatch(str(bias), str(value)))
    dims = list(value.as_tuple())
    dims[channel] = merged
    return [PartialTensorShape(dims)]


@register_kernel("BiasAdd")
def _bias_add(ctx: KernelContext, value: Any, bias: Any) -> Any:
    xp = ctx.xp
    if bias.ndim != 1:
        ctx.invalid_argument(f"Biases must be 1D: {format_shape(bias.shape)}")
    if value.ndim < 2:
        ctx.invalid_argument(f"Input tensor must be at least 2D: {format_shape(value.shape)}")
    nchw = ctx.attrs["data_format"] == "NCHW"
    channel = 1 if nchw else value.ndim - 1
    if value.shape[channel] != bias.shape[0]:
        ctx.invalid_argument(_bias_mismatch(format_shape(bias.shape), format_shape(value.shape)))
    if nchw:
        bias = xp.reshape(bias, (bias.shape[0],) + (1,) * (value.ndim - 2))
    return xp.add(value, bias)


# -- conformance (tests/conformance) -------------------------------------------------------------------------
family_cases("tfops_py.kernels.nn._nn_cases:build")
for _op in ("Relu", "Relu6"):
    conformance(_op, features=values(specials=True), live=12)
for _op in ("Softmax", "LogSoftmax"):
    conformance(_op, logits=values(), compare="acc", live=12)
conformance("BiasAdd", value=values(specials=True), bias=values(), shapes="tfops_py.kernels.nn._nn_cases:BIAS_ADD",
            live=12)

divergence(("Softmax", "LogSoftmax"), when="half / bfloat16", tf="steps rounded in the narrow type",
           ours="computed in float, rounded once (within a few ulps)")
divergence("BiasAdd", when="NCHW value of rank 2", tf="graph-time error; its kernel adds along dimension 1",
           ours="the same error at build time; computed like TF's kernel when fed at run time")
