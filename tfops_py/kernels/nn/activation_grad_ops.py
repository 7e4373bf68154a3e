"""Activation gradients (ReluGrad … ReciprocalGrad) and the activations TF's nn gradients touch.

Elu, Selu, Softplus, Softsign and LeakyRelu with their ``*Grad`` ops, plus ReluGrad, Relu6Grad
and the ``(y, dy)`` gradients of Sigmoid, Tanh, Sqrt, Rsqrt and Reciprocal.  Every op is one
formula in a table, written in the order Eigen's functors evaluate it, in the op's own type:
NumPy rounds half and bfloat16 after every operation (exp included) exactly as Eigen does, so
results match TF bit for bit in almost every case (a libm may differ by an ulp in exp/log1p).

Shapes follow TF: the activation gradients need equal shapes (merged at build time, "must have
the same size and shape" at run time); the ``(y, dy)`` gradients only need equal element counts
and take ``y``'s shape.  Complex ``(y, dy)`` gradients use ``conj(y)`` where TF does (Sqrt,
Rsqrt, Reciprocal; not Sigmoid, Tanh), and Sqrt/Rsqrt/Reciprocal give 0 where ``dy`` is 0 (even
when ``y`` is 0, inf or NaN), as TF's functors do.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.conformance import conformance, divergence, family_cases, one_of, values
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._shape_util import merge_shapes
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "grad_kernels"
Formula = Callable[..., Any]  # (xp, *inputs, ctx) -> array
Kernel = Callable[..., Any]

SELU_SCALE = 1.0507009873554804934193349852946
SELU_SCALE_ALPHA = 1.7580993408473768599402175208123  # scale * alpha


def typed(value: float, like: Any) -> Any:
    """``value`` in ``like``'s type, as Eigen's ``static_cast<T>`` (a Python float would widen bfloat16)."""
    return like.dtype.type(value) if isinstance(like, (np.ndarray, np.generic)) else value


def _mask(xp: Any, cond: Any, like: Any) -> Any:
    return xp.astype(cond, like.dtype)


def _conj(xp: Any, y: Any, ctx: KernelContext) -> Any:
    return xp.conj(y) if ctx.output_dtypes[0].is_complex else y


def _alpha(x: Any, ctx: KernelContext) -> Any:
    """LeakyRelu's float32 alpha cast to the op's type."""
    return typed(float(np.float32(ctx.attrs["alpha"])), x)


def _softplus(xp: Any, x: Any, ctx: KernelContext) -> Any:
    """Eigen's three branches: x when large, exp(x) when small, log1p(exp(x)) between.

    The threshold ``log(eps) + 2`` uses the epsilon of the op's own type (half and bfloat16 too).
    """
    np_type = np.dtype(ctx.output_dtypes[0].numpy_dtype)
    wide = np.float64 if np_type == np.float64 else np.float32
    log_eps = np_type.type(np.log(wide(ml_dtypes.finfo(np_type).eps)))  # rounded to T, then + 2 in T
    threshold = float(log_eps + np_type.type(2))
    e = xp.exp(x)
    return xp.where(x > typed(-threshold, x), x, xp.where(x < typed(threshold, x), e, xp.log1p(e)))


def _dy_zero_is_zero(formula: Formula) -> Formula:
    """TF's Sqrt/Rsqrt/Reciprocal gradient functors return 0 where ``dy == 0``."""

    def safe(xp: Any, y: Any, dy: Any, ctx: KernelContext) -> Any:
        return xp.where(dy == 0, xp.zeros_like(dy), formula(xp, y, dy, ctx))

    return safe


# Activations: (features) -> activations.
_ACTIVATIONS: dict[str, Formula] = {
    "Elu": lambda xp, x, c: xp.where(x < 0, xp.exp(x) - typed(1, x), x),
    "Selu": lambda xp, x, c: xp.where(x < 0, typed(SELU_SCALE_ALPHA, x) * (xp.exp(x) - typed(1, x)),
                                      typed(SELU_SCALE, x) * x),
    "Softplus": _softplus,
    "Softsign": lambda xp, x, c: x / (xp.abs(x) + typed(1, x)),
    "LeakyRelu": lambda xp, x, c: xp.where(x > 0, x, x * _alpha(x, c)),
}

# Activation gradients: (gradients, features or outputs) -> backprops.  ReluGrad and Relu6Grad
# multiply by a mask (NaN * 0 is NaN, as in TF); the others select.
_ACTIVATION_GRADS: dict[str, Formula] = {
    "ReluGrad": lambda xp, g, x, c: g * _mask(xp, x > 0, g),
    "Relu6Grad": lambda xp, g, x, c: g * _mask(xp, (x > 0) & (x < 6), g),
    "EluGrad": lambda xp, g, y, c: xp.where(y < 0, g * (y + typed(1, y)), g),
    "SeluGrad": lambda xp, g, y, c: xp.where(y < 0, g * (y + typed(SELU_SCALE_ALPHA, y)), g * typed(SELU_SCALE, g)),
    "SoftplusGrad": lambda xp, g, x, c: g / (xp.exp(-x) + typed(1, x)),
    "SoftsignGrad": lambda xp, g, x, c: g / xp.square(xp.abs(x) + typed(1, x)),
    "LeakyReluGrad": lambda xp, g, x, c: xp.where(x > 0, g, g * _alpha(g, c)),
}

# (y, dy) gradients of unary ops, in terms of the forward output y.
_OUTPUT_GRADS: dict[str, Formula] = {
    "SigmoidGrad": lambda xp, y, dy, c: dy * y * (typed(1, y) - y),
    "TanhGrad": lambda xp, y, dy, c: dy * (typed(1, y) - y * y),
    "SqrtGrad": _dy_zero_is_zero(lambda xp, y, dy, c: typed(0.5, dy) * dy / _conj(xp, y, c)),
    "RsqrtGrad": _dy_zero_is_zero(
        lambda xp, y, dy, c: typed(-0.5, dy) * (dy * _conj(xp, y, c)) * (_conj(xp, y, c) * _conj(xp, y, c))),
    "ReciprocalGrad": _dy_zero_is_zero(lambda xp, y, dy, c: -dy * _conj(xp, y, c) * _conj(xp, y, c)),
}
_OUTPUT_GRADS["InvGrad"] = _OUTPUT_GRADS["ReciprocalGrad"]  # TF's deprecated name for the same functor


# -- shape functions ----------------------------------------------------------------------------------
@register_shape(*_ACTIVATION_GRADS)
def _merge_both_inputs(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's MergeBothInputsShapeFn."""
    return [merge_shapes(ctx, ctx.input(0), ctx.input(1))]


register_shape(*_ACTIVATIONS, *_OUTPUT_GRADS)(unchanged_shape)


# -- kernels -----------------------------------------------------------------------------------------
def _run(ctx: KernelContext, formula: Formula, *arrays: Any) -> Any:
    with np.errstate(all="ignore"):  # inf/NaN arrive silently, as in TF (no effect off NumPy)
        return formula(ctx.xp, *arrays, ctx)


def _activation_kernel(formula: Formula) -> Kernel:
    def kernel(ctx: KernelContext, features: Any) -> Any:
        return _run(ctx, formula, features)

    return kernel


def _activation_grad_kernel(formula: Formula) -> Kernel:
    def kernel(ctx: KernelContext, gradients: Any, features: Any) -> Any:
        if tuple(gradients.shape) != tuple(features.shape):
            ctx.invalid_argument(f"Inputs to operation {ctx.node_name} of type {ctx.op_type} must have the same "
                                 f"size and shape.  Input 0: {format_shape(gradients.shape)} != input 1: "
                                 f"{format_shape(features.shape)}")
        return _run(ctx, formula, gradients, features)

    return kernel


def _output_grad_kernel(formula: Formula) -> Kernel:
    def kernel(ctx: KernelContext, y: Any, dy: Any) -> Any:
        n, m = math.prod(y.shape), math.prod(dy.shape)
        if n != m:
            ctx.invalid_argument(f"The two arguments to a cwise op must have same number of elements, got {n} "
                                 f"and {m}")
        if tuple(dy.shape) != tuple(y.shape):
            dy = ctx.xp.reshape(dy, tuple(y.shape))
        return _run(ctx, formula, y, dy)

    return kernel


for _name, _formula in _ACTIVATIONS.items():
    register_kernel(_name)(_activation_kernel(_formula))
for _name, _formula in _ACTIVATION_GRADS.items():
    register_kernel(_name)(_activation_grad_kernel(_formula))
for _name, _formula in _OUTPUT_GRADS.items():
    register_kernel(_name)(_output_grad_kernel(_formula))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
family_cases("tfops_py.kernels.nn._grad_cases:build")
_ANY = values(specials=True)
_EXP = ("Elu", "Selu", "Softplus", "SoftplusGrad")  # exp may differ by an ulp from Eigen's where exp(x) - 1 cancels
_ALPHAS = one_of(0.2, 0.0, 1.0, 2.5)
for _name in _ACTIVATIONS:
    conformance(_name, features=_ANY, compare="exp" if _name in _EXP else "ew", live=16,
                **({"alpha": _ALPHAS} if _name == "LeakyRelu" else {}))
for _name in _ACTIVATION_GRADS:
    second = "outputs" if _name in ("EluGrad", "SeluGrad") else "features"
    conformance(_name, gradients=_ANY, **{second: _ANY}, compare="exp" if _name in _EXP else "ew", live=16,
                no_gradient=None if _name == "LeakyReluGrad" else
                "second-order: TF Python only (not in TF's C++ API); not ported yet",
                **({"alpha": _ALPHAS} if _name == "LeakyReluGrad" else {}))
for _name in (n for n in _OUTPUT_GRADS if n != "InvGrad"):  # InvGrad: declared with its gradient, math_extra_ops
    conformance(_name, y=_ANY, dy=_ANY, live=16,
                no_gradient="second-order: TF Python only (not in TF's C++ API); not ported yet")

divergence(tuple(_ACTIVATIONS) + tuple(_ACTIVATION_GRADS), when="subnormal inputs or `alpha`",
           tf="flushed to zero (FTZ/DAZ)", ours="kept")
