"""TF's fused ops: _FusedConv2D, _FusedDepthwiseConv2dNative, _FusedMatMul and _FusedBatchNormEx.

TF's Grappler writes these into graphs (and some saved graphs carry them); our graph optimizer
emits them too.  Each computes its base op (same attrs, same checks) followed by the epilogue of
``_epilogue.py``.  On NumPy, Conv2D's epilogue runs on each output block while it is in cache and
the others run in place on the product; on other backends it is ordinary array code.  Beyond
TF's CPU kernels (which accept fewer combinations, and some only with oneDNN): every backend and
every float type take any ``fused_ops`` of the grammar in ``_epilogue.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import divergence
from tfops_py.errors import UnimplementedError
from tfops_py.framework.shape_inference import InferenceContext, get_shape_fn, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._common import compute_dtype
from tfops_py.kernels._parallel import parallel_map
from tfops_py.kernels.nn import _epilogue, depthwise_conv
from tfops_py.kernels.nn.batch_norm import FORWARD_OPS
from tfops_py.kernels.nn.conv_pool_ops import conv2d_nhwc, from_nhwc, narrow
from tfops_py.kernels.registry import KernelContext, find_kernel, register_kernel

divergence("_FusedConv2D", when="`fused_ops` with `Tanh`, `Sigmoid`, `_MklSwish` or `Add`",
           tf="the native CPU kernel refuses them (\"Fusion is not implemented\"; oneDNN builds take some)",
           ours="computes every combination of the grammar in docs/optimizer.md, on every backend and float type")
divergence("_FusedDepthwiseConv2dNative", when="any input",
           tf="no native CPU kernel: \"Missing 0-th output\" (oneDNN builds have one)", ours="computed")
divergence(("_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul"),
           when="unsupported `fused_ops` or a wrong `num_args`", tf="an error when the kernel runs",
           ours="the same error class and wording, when the node is built")
divergence("_FusedBatchNormEx", when="`activation_mode` `Relu6` or `Elu`", tf="refused (`Identity` and `Relu` only)",
           ours="computed")

_BASE = {"_FusedConv2D": "Conv2D", "_FusedDepthwiseConv2dNative": "DepthwiseConv2dNative",
         "_FusedMatMul": "MatMul"}
_ACTIVATION_MODES = ("Identity", "Relu", "Relu6", "Elu")


def _check_attrs(ctx: Any) -> None:
    if ctx.op_type == "_FusedConv2D":
        if ctx.attrs.get("filter_format", "HWIO") != "HWIO":
            raise ctx.error(UnimplementedError, f"filter_format {ctx.attrs['filter_format']} is not supported "
                                                "(only HWIO)")
        if ctx.attrs.get("num_host_args", 0):
            raise ctx.error(UnimplementedError, "host_args are not supported")
    _epilogue.check_fused_ops(ctx, ctx.attrs["fused_ops"], ctx.attrs["num_args"],
                              allow_batch_norm=ctx.op_type != "_FusedMatMul")


@register_shape(*_BASE)
def _fused_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    _check_attrs(ctx)
    base = get_shape_fn(_BASE[ctx.op_type])
    assert base is not None
    return list(base(ctx))


def _channel_axis(ctx: KernelContext) -> int:
    return 1 if ctx.attrs.get("data_format", "NHWC") == "NCHW" else -1


def _finish(ctx: KernelContext, y: Any, args: list[Any], numpy: bool) -> Any:
    """Apply the epilogue to the base op's output ``y`` (in the output type)."""
    xp = ctx.xp
    axis = _channel_axis(ctx)
    e = _epilogue.build(ctx, list(args), y.shape[axis], tuple(y.shape))
    dt = ctx.output_dtypes[0]
    wide = ctx.dtype(compute_dtype(dt))
    if y.dtype != wide:
        y = xp.astype(y, wide)
    e = _epilogue.widened(ctx, e, wide)
    if numpy and axis == -1:
        _epilogue.apply_inplace(y, e, e.addend)
    elif numpy:  # NCHW: the channels-last view, in place
        _epilogue.apply_inplace(np.moveaxis(y, 1, -1), e._replace(addend=None),
                                None if e.addend is None else np.moveaxis(e.addend, 1, -1))
    else:
        y = _epilogue.apply(xp, y, e, axis)
    return y if y.dtype == ctx.dtype(dt) else xp.astype(y, ctx.dtype(dt))


def _fused(numpy: bool) -> Any:
    def kernel(ctx: KernelContext, a: Any, b: Any, args: list[Any], *host_args: Any) -> Any:
        _check_attrs(ctx)
        base = find_kernel(_BASE[ctx.op_type], ctx.backend.name)
        assert base is not None
        return _finish(ctx, base(ctx, a, b), args, numpy)

    return kernel


register_kernel(*_BASE)(_fused(numpy=False))
register_kernel("_FusedMatMul", backend="numpy")(_fused(numpy=True))
_numpy_fused = _fused(numpy=True)


@register_kernel("_FusedDepthwiseConv2dNative", backend="numpy")
def _fused_depthwise_numpy(ctx: KernelContext, x: Any, w: Any, args: list[Any]) -> Any:
    """With the compiled kernel, BiasAdd [+ Relu/Relu6] is applied to each pixel before it is stored."""
    _check_attrs(ctx)
    ops = list(ctx.attrs["fused_ops"])
    act = ops[1] if len(ops) == 2 else None
    if ops[0] != "BiasAdd" or "Add" in ops or not depthwise_conv.jit_fuses(ctx, act):
        return _numpy_fused(ctx, x, w, args)
    channels = w.shape[2] * w.shape[3] if len(w.shape) == 4 else -1
    _epilogue.build(ctx, list(args), channels, ())  # the bias checks
    return depthwise_conv.forward_numpy(ctx, x, w, np.asarray(args[0]), act)


@register_kernel("_FusedConv2D", backend="numpy")
def _fused_conv2d_numpy(ctx: KernelContext, x: Any, f: Any, args: list[Any], *host_args: Any) -> Any:
    """The epilogue runs on each block of the GEMM output while it is in cache."""
    _check_attrs(ctx)
    if ctx.attrs["data_format"] == "NCHW" or len(x.shape) != 4 or len(f.shape) != 4:
        return _finish(ctx, find_kernel("Conv2D", "numpy")(ctx, x, f), args, numpy=True)  # type: ignore[misc]

    def factory(shape: tuple[int, ...], dtype: Any) -> Any:
        e = _epilogue.widened(ctx, _epilogue.build(ctx, list(args), shape[-1], shape), dtype)

        def block(y: np.ndarray, i: int, r0: int, r1: int) -> None:
            _epilogue.apply_inplace(y, e, None if e.addend is None else e.addend[i, r0:r1].reshape(y.shape))

        return block

    y, p = conv2d_nhwc(ctx, x, f, factory, numpy=True)
    return from_nhwc(ctx, narrow(ctx, y), p.nchw)


# -- _FusedBatchNormEx -------------------------------------------------------------------------------------

@register_shape("_FusedBatchNormEx")
def _batch_norm_ex_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    _check_batch_norm_ex(ctx)
    base = get_shape_fn("FusedBatchNormV3")
    assert base is not None
    shapes = list(base(ctx))
    return shapes + [PartialTensorShape([])] * (6 - len(shapes))  # reserve_space_3


def _check_batch_norm_ex(ctx: Any) -> None:
    mode = ctx.attrs.get("activation_mode", "Identity")
    if mode not in _ACTIVATION_MODES:
        ctx.invalid_argument(f"Unsupported activation mode: {mode}")
    if ctx.attrs.get("num_side_inputs", 0) > 1:
        ctx.invalid_argument("_FusedBatchNorm supports only 1 side input.")


def _batch_norm_ex(ctx: KernelContext, x: Any, scale: Any, offset: Any, mean: Any, variance: Any,
                   side_inputs: list[Any]) -> tuple:
    """FusedBatchNormV3, then ``y += side_input`` and the activation (in the compute type)."""
    _check_batch_norm_ex(ctx)
    xp = ctx.xp
    base = find_kernel("FusedBatchNormV3", ctx.backend.name)
    assert base is not None and "FusedBatchNormV3" in FORWARD_OPS
    outs = list(base(ctx, x, scale, offset, mean, variance))
    if len(outs) == 5:  # reserve_space_3, as FusedBatchNormV3's
        outs.append(xp.zeros((), dtype=ctx.dtype(ctx.output_dtypes[5])))
    mode = ctx.attrs.get("activation_mode", "Identity")
    if not side_inputs and mode == "Identity":
        return tuple(outs)
    y = outs[0]
    if side_inputs and tuple(side_inputs[0].shape) != tuple(y.shape):
        ctx.invalid_argument(f"side_input shape {list(side_inputs[0].shape)} must equal x's {list(y.shape)}")
    dt = ctx.output_dtypes[0]
    wide = ctx.dtype(compute_dtype(dt))
    y = xp.astype(y, wide) if y.dtype != wide else y
    if side_inputs:
        y = y + (side_inputs[0] if side_inputs[0].dtype == wide else xp.astype(side_inputs[0], wide))
    y = _epilogue.activate(xp, y, None if mode == "Identity" else mode, 0.0)
    outs[0] = y if y.dtype == ctx.dtype(dt) else xp.astype(y, ctx.dtype(dt))
    return tuple(outs)


register_kernel("_FusedBatchNormEx")(_batch_norm_ex)


@register_kernel("_FusedBatchNormEx", backend="numpy")
def _batch_norm_ex_numpy(ctx: KernelContext, x: Any, scale: Any, offset: Any, mean: Any, variance: Any,
                         side_inputs: list[Any]) -> tuple:
    """Inference on NHWC float32: normalize, side input and activation on cache-sized blocks of rows in
    one pass (the generic kernel makes three)."""
    attrs = ctx.attrs
    if (attrs["is_training"] or attrs.get("data_format", "NHWC") != "NHWC" or x.dtype != np.float32
            or x.ndim != 4 or any(v.shape != (x.shape[3],) for v in (scale, offset, mean, variance))
            or (side_inputs and side_inputs[0].shape != x.shape)):
        return _batch_norm_ex(ctx, x, scale, offset, mean, variance, side_inputs)  # checks and errors there
    _check_batch_norm_ex(ctx)
    f32 = np.float32
    mean32, var32 = mean.astype(f32, copy=False), variance.astype(f32, copy=False)
    factor = (1 / np.sqrt(var32 + f32(attrs["epsilon"]))).astype(f32) * scale.astype(f32, copy=False)
    mode = attrs.get("activation_mode", "Identity")
    e = _epilogue.Epilogue(None, None, None, None if mode == "Identity" else mode, 0.0)
    out = np.empty_like(x)
    rows = x.reshape(-1, x.shape[3])
    flat, side = out.reshape(rows.shape), side_inputs[0].reshape(rows.shape) if side_inputs else None
    step = max(1, (1 << 18) // max(1, x.shape[3]))

    def block(k: int) -> None:
        a, b = k * step, min((k + 1) * step, rows.shape[0])
        y = flat[a:b]
        np.subtract(rows[a:b], mean32, out=y)
        y *= factor
        y += offset.astype(f32, copy=False)
        _epilogue.apply_inplace(y, e, None if side is None else side[a:b])

    blocks = -(-rows.shape[0] // step)
    if blocks == 1:
        block(0)
    else:
        parallel_map(block, range(blocks))
    u = ctx.dtype(ctx.output_dtypes[1])
    stats = [v.astype(u, copy=False) for v in (mean32, var32, mean32, var32)]
    return (out, *stats, np.zeros((), u))
