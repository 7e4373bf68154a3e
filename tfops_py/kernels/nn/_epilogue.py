"""What TF's fused ops (_FusedConv2D, _FusedDepthwiseConv2dNative, _FusedMatMul) do after the product.

``fused_ops`` names the steps: ``BiasAdd`` (args: bias) or ``FusedBatchNorm`` (args: scale, offset,
mean, variance; ``epsilon``), then optionally ``Add`` (one more arg: a tensor of the output's shape,
the residual), then optionally one activation (``Relu``, ``Relu6``, ``Elu``, ``LeakyRelu`` with
``leakyrelu_alpha``, ``Tanh``, ``Sigmoid``, ``_MklSwish``).  The batch-norm step is folded into one
per-channel multiply-add: ``y * (scale * rsqrt(variance + epsilon)) + (offset - mean * that)``.

On NumPy the epilogue is applied in place on blocks of the product while they are in cache
(``apply_inplace``); on other backends it is ordinary array code (``apply``), with the same
activation formulas as the standalone kernels.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tfops_py.errors import UnimplementedError
from tfops_py.framework.tensor_shape import format_shape
from tfops_py.kernels.registry import KernelContext

ACTIVATIONS = ("Relu", "Relu6", "Elu", "LeakyRelu", "Tanh", "Sigmoid", "_MklSwish")
FIRST_STEPS = {"BiasAdd": 1, "FusedBatchNorm": 4}


class Epilogue(NamedTuple):
    scale: Any | None  # per output channel, or None
    shift: Any | None  # per output channel, or None
    addend: Any | None  # a tensor of the output's shape (the ``Add`` step), or None
    activation: str | None
    alpha: float  # LeakyRelu's


def check_fused_ops(ctx: Any, fused_ops: list[str], num_args: int, allow_batch_norm: bool = True) -> None:
    """TF's attr checks on ``fused_ops`` and ``num_args``, at build time and in the kernel."""
    ops = list(fused_ops)
    rest = ops[1:]
    ok = bool(ops) and ops[0] in FIRST_STEPS and (allow_batch_norm or ops[0] == "BiasAdd")
    if ok and rest and rest[0] == "Add":
        ok = ops[0] == "BiasAdd"
        rest = rest[1:]
    ok = ok and len(rest) <= 1 and all(a in ACTIVATIONS for a in rest)
    if not ok:
        raise ctx.error(UnimplementedError, f"Fusion is not implemented: [{','.join(ops)}]")
    label = ctx.op_type.removeprefix("_Fused")
    if ops[0] == "FusedBatchNorm" and num_args != 4:
        ctx.invalid_argument(f"Fused {label} with FusedBatchNorm must have four extra arguments: scale, offset, "
                             "mean, variance.")
    if ops[0] == "BiasAdd" and "Add" in ops and num_args != 2:
        ctx.invalid_argument(f"Fused {label} with BiasAdd and Add must have two extra arguments: bias, addend")
    if ops[0] == "BiasAdd" and "Add" not in ops and num_args != 1:
        ctx.invalid_argument(f"Fused {label} with BiasAdd must have one extra argument: bias or 4 extra "
                             "arguments: bias, side_input, conv_input_scale and side_input_scale")


def build(ctx: KernelContext, args: list[Any], channels: int, out_shape: tuple[int, ...]) -> Epilogue:
    """The epilogue of ``ctx``'s fused op for ``args``, checked against the output's shape."""
    xp = ctx.xp
    ops = list(ctx.attrs["fused_ops"])
    check_fused_ops(ctx, ops, len(args))
    for i, a in enumerate(args[:FIRST_STEPS[ops[0]]]):
        if a.ndim != 1 or a.shape[0] != channels:
            what = "bias" if ops[0] == "BiasAdd" else ("scale", "offset", "mean", "variance")[i]
            ctx.invalid_argument(f"{what} must be 1-D with {channels} elements (the output depth), got shape "
                                 f"{format_shape(a.shape)}")
    if ops[0] == "BiasAdd":
        scale, shift = None, args[0]
    else:
        s, offset, mean, var = args[:4]
        eps = xp.asarray(ctx.attrs.get("epsilon", 1e-4), dtype=var.dtype)
        scale = s / xp.sqrt(var + eps)
        shift = offset - mean * scale
    addend = None
    if "Add" in ops:
        addend = args[1]
        if tuple(addend.shape) != tuple(out_shape):
            ctx.invalid_argument(f"the Add operand must have the output's shape {format_shape(out_shape)}, got "
                                 f"{format_shape(addend.shape)}")
    act = next((a for a in ops if a in ACTIVATIONS), None)
    return Epilogue(scale, shift, addend, act, float(ctx.attrs.get("leakyrelu_alpha", 0.2)))


def widened(ctx: KernelContext, e: Epilogue, dtype: Any) -> Epilogue:
    """``e`` with its tensors in ``dtype`` (the compute type of half and bfloat16)."""

    def cast(a: Any) -> Any:
        return a if a is None or a.dtype == dtype else ctx.xp.astype(a, dtype)

    return e._replace(scale=cast(e.scale), shift=cast(e.shift), addend=cast(e.addend))


def activate(xp: Any, y: Any, act: str | None, alpha: float) -> Any:
    """The activation as array code (the standalone kernels' formulas)."""
    if act is None:
        return y
    if act == "Relu":
        return xp.maximum(y, 0)
    if act == "Relu6":
        return xp.minimum(xp.maximum(y, 0), 6)
    if act == "Elu":
        return xp.where(y < 0, xp.expm1(y), y)
    if act == "LeakyRelu":
        return xp.where(y > 0, y, y * alpha)
    if act == "Tanh":
        return xp.tanh(y)
    sig = 1 / (1 + xp.exp(-y))
    return sig if act == "Sigmoid" else y * sig


def apply(xp: Any, y: Any, e: Epilogue, channel_axis: int = -1) -> Any:
    """The epilogue on the whole product ``y`` (any backend)."""
    shape = [1] * y.ndim
    shape[channel_axis] = -1
    if e.scale is not None:
        y = y * xp.reshape(e.scale, tuple(shape))
    if e.shift is not None:
        y = y + xp.reshape(e.shift, tuple(shape))
    if e.addend is not None:
        y = y + e.addend
    return activate(xp, y, e.activation, e.alpha)


def apply_inplace(y: np.ndarray, e: Epilogue, addend: np.ndarray | None = None) -> None:
    """The epilogue on a block ``y`` (channels last) in place; ``addend`` is the block's part of e.addend."""
    if e.scale is not None:
        y *= e.scale
    if e.shift is not None:
        y += e.shift
    if addend is not None:
        y += addend
    act = e.activation
    if act is None:
        return
    if act == "Relu":
        np.maximum(y, 0, out=y)
    elif act == "Relu6":
        np.maximum(y, 0, out=y)
        np.minimum(y, 6, out=y)
    elif act == "Elu":
        neg = np.minimum(y, 0)
        np.expm1(neg, out=neg)
        np.copyto(y, neg, where=y < 0)
    elif act == "LeakyRelu":
        np.multiply(y, y.dtype.type(e.alpha), out=y, where=~(y > 0))
    elif act == "Tanh":
        np.tanh(y, out=y)
    else:  # Sigmoid, _MklSwish
        sig = np.negative(y)
        np.exp(sig, out=sig)
        sig += 1
        np.reciprocal(sig, out=sig)
        if act == "Sigmoid":
            y[...] = sig
        else:
            y *= sig
