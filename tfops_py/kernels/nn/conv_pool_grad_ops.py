"""Convolution and pooling gradients: Conv2DBackpropInput/Filter, MaxPoolGrad(V2), MaxPoolV2, AvgPoolGrad, BiasAddGrad.

Attr parsing, window arithmetic and padding come from ``conv_pool_ops`` (the forward ops); the
backprop checks and messages are TF 2.21's (``ConvBackpropComputeDimensionsV2``, the pooling
grad kernels).  Kernels loop over window offsets only: the input gradients scatter each offset's
contribution into a padded buffer through one strided slice, the filter gradient multiplies each
offset's input slice by the output gradient.

Beyond TF's CPU kernels (which refuse them): NCHW (computed by transposing), dilations in both
convolution backprops, and grouped convolutions (input depth a multiple of the filter's).  Half
and bfloat16 convolution gradients are computed in float and rounded once; the pooling gradients
add in the op's type in TF's order (MaxPoolGrad: the first maximum of each window in row-major
order takes the gradient, a leading NaN included, as TF's CPU loop).  AvgPoolGrad requires the
gradient to have the forward output's shape (TF reads whatever it is given).
"""
from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from tfops_py.errors import UnimplementedError
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import compute_dtype
from tfops_py.kernels._shape_util import host_ints, shape_from_shape_tensor
from tfops_py.kernels.nn.conv_pool_ops import (Geometry, Params, conv_params, from_nhwc, geometry, max_pool,
                                            max_pool_numpy, nhwc_dims, nhwc_layout_shape, pad_spatial, pool_checks,
                                            pool_params, pool_shape, to_nhwc)
from tfops_py.kernels.array.fill_ops import checked_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

Ctx = Any  # InferenceContext or KernelContext
Dims = tuple[int, int, int, int]  # NHWC, -1 where unknown
INPUT_LABEL, FILTER_LABEL = "Conv2DCustomBackpropInput", "Conv2DCustomBackpropFilter"


def _nhwc(dims: Any, nchw: bool) -> Dims:
    return nhwc_dims(PartialTensorShape(dims), nchw)


def _tap_index(p: Params, i: int, j: int, out: tuple[int, int]) -> tuple:
    """The strided slice of a padded NHWC tensor that window offset (i, j) reads for every output position."""
    (sh, sw), (dh, dw) = p.strides, p.dilations
    return (slice(None), slice(i * dh, i * dh + (out[0] - 1) * sh + 1, sh),
            slice(j * dw, j * dw + (out[1] - 1) * sw + 1, sw), slice(None))


def _offsets_reversed(kernel: tuple[int, int]) -> Iterator[tuple[int, int, int]]:
    """(k, i, j) from the last window offset to the first: adding in this order gives every input element
    its contributions in row-major output order, as TF's CPU loops add them."""
    for k in range(kernel[0] * kernel[1] - 1, -1, -1):
        yield k, k // kernel[1], k % kernel[1]


def _padded_buffer(ctx: KernelContext, geo: Geometry, size: Dims, like: Any) -> tuple[Any, tuple]:
    """Zeros shaped like the padded NHWC input of ``size`` (the offsets' contributions are added into it),
    and the index that crops the padding off."""
    n, h, w, c = size
    top, bottom, left, right = geo.pads
    padded = ctx.xp.zeros((n, h + top + bottom, w + left + right, c), dtype=like.dtype)
    return padded, (slice(None), slice(top, top + h), slice(left, left + w), slice(None))


def _wide(ctx: KernelContext, *arrays: Any) -> list[Any]:
    """Inputs in the type the result is computed in (float for half and bfloat16)."""
    dt = ctx.output_dtypes[0]
    wide = compute_dtype(dt)
    return list(arrays) if wide == dt else [ctx.xp.astype(a, ctx.dtype(wide)) for a in arrays]


def _narrow(ctx: KernelContext, y: Any) -> Any:
    dt = ctx.output_dtypes[0]
    return y if compute_dtype(dt) == dt else ctx.xp.astype(y, ctx.dtype(dt))


def _zeros(ctx: KernelContext, shape: tuple[int, ...]) -> Any:
    return ctx.xp.zeros(shape, dtype=ctx.dtype(ctx.output_dtypes[0]))


# -- Conv2DBackpropInput / Conv2DBackpropFilter ----------------------------------------------------------
def _backprop_dims(ctx: Ctx, label: str, p: Params, x: Any, f: Any, dy: Any) -> tuple[Geometry, int]:
    """TF's ConvBackpropComputeDimensionsV2 on whatever is known; (geometry, groups)."""
    for what, s in (("input", x), ("filter", f), ("out_backprop", dy)):
        if s is not None and len(s) != 4:
            ctx.invalid_argument(f"{label}: {what} must be 4-dimensional")
    if x is None or f is None or dy is None:
        return Geometry((-1, -1), (0, 0, 0, 0)), -1
    xn, dn = _nhwc(x, p.nchw), _nhwc(dy, p.nchw)
    if -1 not in (xn[0], dn[0]) and xn[0] != dn[0]:
        ctx.invalid_argument(f"{label}: input and out_backprop must have the same batch size. Input batch: {xn[0]}, "
                             f"outbackprop batch: {dn[0]}, batch_dim: 0")
    if f[2] == 0 or f[2] < -1:
        ctx.invalid_argument(f"{label}: filter depth must be strictly greated than zero")
    groups = -1
    if xn[3] >= 0 and f[2] > 0:
        if xn[3] % f[2]:
            ctx.invalid_argument(f"{label}: input depth must be evenly divisible by filter depth")
        groups = xn[3] // f[2]
    if -1 not in (f[3], dn[3]) and f[3] != dn[3]:
        ctx.invalid_argument(f"{label}: filter and out_backprop must have the same out_depth")
    if groups > 0 and f[3] >= 0 and f[3] % groups:  # grouped gradients: beyond TF's CPU kernels
        ctx.invalid_argument(f"output depth must be evenly divisible by number of groups: {f[3]} vs {groups}")
    geo = geometry(ctx, p, (xn[1], xn[2]), (f[0], f[1]))
    for axis in range(2):
        got, want = dn[1 + axis], geo.out[axis]
        if -1 not in (got, want) and got != want:
            ctx.invalid_argument(
                f"{label}: Size of out_backprop doesn't match computed: actual = {got}, computed = {want} "
                f"spatial_dim: {(2 if p.nchw else 1) + axis} input: {xn[1 + axis]} filter: {f[axis]} output: {got} "
                f"stride: {p.strides[axis]} dilation: {p.dilations[axis]}")
    return geo, groups


def _input_sizes(ctx: Ctx, sizes: list[int], f: Any, dy: Any, nchw: bool) -> list[int]:
    """Conv2DBackpropComputeInputShape: 4 sizes, or [H, W] with batch from dy and depth from the filter."""
    if len(sizes) == 4:
        return sizes
    if len(sizes) != 2:
        ctx.invalid_argument(f"Conv2DBackpropInput requires input_sizes to contain 4 values or 2 values, but got: "
                             f"{len(sizes)}")
    if sizes[0] < 0 or sizes[1] < 0:
        ctx.invalid_argument(f"Conv2DBackpropInput: elements of input_sizes must be >= 0, not {sizes[0]}x{sizes[1]}")
    n = -1 if dy is None else _nhwc(dy, nchw)[0]
    depth = -1 if f is None or len(f) < 3 else f[2]
    return list(nhwc_layout_shape(n, sizes[0], sizes[1], depth, nchw).as_tuple())


def _known(shape: PartialTensorShape) -> tuple[int, ...] | None:
    return None if shape.unknown_rank() else shape.as_tuple()


@register_shape("Conv2DBackpropInput")
def _conv_backprop_input_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    p = conv_params(ctx)
    dy, f = ctx.with_rank(ctx.input(2), 4), ctx.with_rank(ctx.input(1), 4)
    count = ctx.with_rank(ctx.input(0), 1)[0]
    sizes = ctx.input_tensor(0)
    if sizes is None:  # batch from dy; depth from the filter when only [H, W] is given
        depth = f[2] if count == 2 and not f.unknown_rank() else -1
        return [nhwc_layout_shape(nhwc_dims(dy, p.nchw)[0], -1, -1, depth, p.nchw)]
    x = _input_sizes(ctx, host_ints(sizes), _known(f), _known(dy), p.nchw)
    if any(d < -1 for d in x):
        ctx.invalid_argument(f"Dimension {min(x)} must be >= 0")
    _backprop_dims(ctx, INPUT_LABEL, p, x, _known(f), _known(dy))
    return [PartialTensorShape(x)]


@register_shape("Conv2DBackpropFilter")
def _conv_backprop_filter_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    p = conv_params(ctx)
    out = ctx.with_rank(shape_from_shape_tensor(ctx, 1), 4)
    _backprop_dims(ctx, FILTER_LABEL, p, _known(ctx.input(0)), _known(out), _known(ctx.input(2)))
    return [out]


def _group_slices(groups: int, width: int) -> list[slice]:
    """The channel range of each group (one 2-D matmul per group: NumPy's stacked matmul is slow on
    transposed operands)."""
    return [slice(g * width, (g + 1) * width) for g in range(groups)]


def _per_group(xp: Any, parts: list[Any]) -> Any:
    return parts[0] if len(parts) == 1 else xp.concat(parts, axis=1)


@register_kernel("Conv2DBackpropInput")
def _conv_backprop_input(ctx: KernelContext, input_sizes: Any, filter: Any, out_backprop: Any) -> Any:  # noqa: A002
    xp, p = ctx.xp, conv_params(ctx)
    if out_backprop.ndim != 4:
        ctx.invalid_argument(f"input_sizes must be 4-dimensional, got: {out_backprop.ndim}")  # sic (TF)
    s = ctx.host(input_sizes)
    if s.ndim != 1:
        ctx.invalid_argument(f"Conv2DBackpropInput: input_sizes input must be 1-dim, not {s.ndim}")
    x_shape = checked_shape(ctx, _input_sizes(ctx, host_ints(s), tuple(filter.shape), tuple(out_backprop.shape),
                                              p.nchw))
    geo, groups = _backprop_dims(ctx, INPUT_LABEL, p, x_shape, tuple(filter.shape), tuple(out_backprop.shape))
    size = _nhwc(x_shape, p.nchw)
    if math.prod(x_shape) == 0 or math.prod(out_backprop.shape) == 0:
        return _zeros(ctx, x_shape)
    dy, f = _wide(ctx, to_nhwc(ctx, out_backprop, p.nchw), filter)
    kh, kw, cg, out_depth = f.shape
    m = dy.shape[0] * geo.out[0] * geo.out[1]
    dy2, outs = xp.reshape(dy, (m, out_depth)), _group_slices(groups, out_depth // groups)
    padded, crop = _padded_buffer(ctx, geo, size, dy)
    for _, i, j in _offsets_reversed((kh, kw)):
        term = _per_group(xp, [xp.matmul(dy2[:, go], xp.matrix_transpose(f[i, j, :, go])) for go in outs])
        term = xp.reshape(term, (size[0], geo.out[0], geo.out[1], size[3]))
        where = _tap_index(p, i, j, geo.out)
        padded[where] = padded[where] + term
    return from_nhwc(ctx, _narrow(ctx, padded[crop]), p.nchw)


@register_kernel("Conv2DBackpropFilter")
def _conv_backprop_filter(ctx: KernelContext, input: Any, filter_sizes: Any, out_backprop: Any) -> Any:  # noqa: A002
    xp, p = ctx.xp, conv_params(ctx)
    s = ctx.host(filter_sizes)
    if s.ndim != 1:
        ctx.invalid_argument(f"{FILTER_LABEL}: filter_sizes input must be 1-dim, not {s.ndim}")
    f_shape = checked_shape(ctx, host_ints(s))
    geo, groups = _backprop_dims(ctx, FILTER_LABEL, p, tuple(input.shape), f_shape, tuple(out_backprop.shape))
    if math.prod(f_shape) == 0 or math.prod(input.shape) == 0 or math.prod(out_backprop.shape) == 0:
        return _zeros(ctx, f_shape)
    x, dy = _wide(ctx, to_nhwc(ctx, input, p.nchw), to_nhwc(ctx, out_backprop, p.nchw))
    kh, kw, cg, out_depth = f_shape
    m = x.shape[0] * geo.out[0] * geo.out[1]
    dy2 = xp.reshape(dy, (m, out_depth))
    pairs = list(zip(_group_slices(groups, cg), _group_slices(groups, out_depth // groups)))
    padded = pad_spatial(xp, x, geo.pads, 0)
    taps = []
    for i in range(kh):
        for j in range(kw):
            tap = xp.reshape(padded[_tap_index(p, i, j, geo.out)], (m, x.shape[3]))
            taps.append(_per_group(xp, [xp.matmul(xp.matrix_transpose(tap[:, gi]), dy2[:, go]) for gi, go in pairs]))
    return _narrow(ctx, xp.reshape(xp.stack(taps, axis=0), f_shape))


# -- pooling gradients ----------------------------------------------------------------------------------
def _grad_pool_params(ctx: Ctx, op: str) -> Params:
    """pool_params after the checks TF's pooling-gradient kernels make first (batch, then depth)."""
    ksize, strides = list(ctx.attrs["ksize"]), list(ctx.attrs["strides"])
    if len(ksize) != 4:
        ctx.invalid_argument("Sliding window ksize field must specify 4 dimensions")
    if len(strides) != 4:
        ctx.invalid_argument("Sliding window strides field must specify 4 dimensions")
    c = 1 if ctx.attrs["data_format"] == "NCHW" else 3
    if ksize[0] != 1 or strides[0] != 1:
        raise ctx.error(UnimplementedError, "Pooling is not yet supported on the batch dimension.")
    if op == "MaxPoolGrad" and (ksize[c] != 1 or strides[c] != 1):
        raise ctx.error(UnimplementedError, "MaxPoolingGrad is not yet supported on the depth dimension.")
    if op == "AvgPoolGrad" and ksize[c] != 1:
        raise ctx.error(UnimplementedError, "Non-spatial pooling is not yet supported. Volunteers? :)")
    return pool_params(ctx)


def _forward_shape(ctx: Ctx, p: Params, x: PartialTensorShape) -> PartialTensorShape:
    geo, depth = pool_checks(ctx, p, x)
    return nhwc_layout_shape(nhwc_dims(x, p.nchw)[0], geo.out[0], geo.out[1], depth, p.nchw)


def _expect(ctx: Ctx, what: str, want: PartialTensorShape, got: PartialTensorShape) -> None:
    if not want.is_compatible_with(got):
        ctx.invalid_argument(f"Expected {what} shape to be {want}, but got {got}")


def _with_window(ctx: Ctx, ksize: Any, strides: Any) -> Ctx:
    """``ctx`` with ksize/strides attrs taken from the V2 ops' inputs (then the V1 code applies)."""
    c = copy.copy(ctx)
    c.attrs = dict(ctx.attrs, ksize=ksize, strides=strides)
    return c


@register_shape("MaxPoolGrad")
def _max_pool_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank(ctx.input(0), 4)
    out, grad = ctx.with_rank(ctx.input(1), 4), ctx.with_rank(ctx.input(2), 4)
    if ctx.op_type == "MaxPoolGradV2":
        ksize, strides = ctx.input_tensor(3), ctx.input_tensor(4)
        if ksize is None or strides is None:
            return [x]
        ctx = _with_window(ctx, host_ints(ksize), host_ints(strides))
    fwd = _forward_shape(ctx, _grad_pool_params(ctx, "MaxPoolGrad"), x)
    _expect(ctx, "orig_output", fwd, out)
    _expect(ctx, "grad", fwd, grad)
    return [x]


register_shape("MaxPoolGradV2")(_max_pool_grad_shape)


def _first_max_offsets(ctx: KernelContext, p: Params, geo: Geometry, x: Any) -> Any:
    """Per output element, the window offset TF's CPU loop picks: the first valid one, then any strictly greater."""
    xp = ctx.xp
    n, h, w, c = x.shape
    padded = pad_spatial(xp, x, geo.pads, 0)
    valid = pad_spatial(xp, xp.ones((1, h, w, 1), dtype=xp.bool), geo.pads, False)
    best, arg = None, xp.full((n, geo.out[0], geo.out[1], c), -1, dtype=xp.int32)
    for k in range(p.kernel[0] * p.kernel[1]):
        where = _tap_index(p, k // p.kernel[1], k % p.kernel[1], geo.out)
        tap, ok = padded[where], valid[where]
        take = ok & ((arg < 0) | (best < tap)) if best is not None else ok & (arg < 0)
        best = tap if best is None else xp.where(take, tap, best)
        arg = xp.where(take, xp.asarray(k, dtype=xp.int32), arg)
    return arg


def _max_pool_grad_impl(ctx: KernelContext, orig_input: Any, orig_output: Any, grad: Any) -> Any:
    for what, t in (("tensor_in", orig_input), ("tensor_out", orig_output), ("out_backprop", grad)):
        if t.ndim != 4:
            ctx.invalid_argument(f"{what} must be 4-dimensional")
    p = _grad_pool_params(ctx, "MaxPoolGrad")
    fwd = _forward_shape(ctx, p, PartialTensorShape(orig_input.shape))
    _expect(ctx, "orig_output", fwd, PartialTensorShape(orig_output.shape))
    _expect(ctx, "grad", fwd, PartialTensorShape(grad.shape))
    if math.prod(orig_input.shape) == 0 or math.prod(grad.shape) == 0:
        return _zeros(ctx, tuple(orig_input.shape))
    xp = ctx.xp
    x, dy = to_nhwc(ctx, orig_input, p.nchw), to_nhwc(ctx, grad, p.nchw)
    geo = pool_checks(ctx, p, PartialTensorShape(orig_input.shape))[0]
    arg = _first_max_offsets(ctx, p, geo, x)
    padded, crop = _padded_buffer(ctx, geo, tuple(x.shape), dy)
    zero = xp.zeros((), dtype=dy.dtype)
    for k, i, j in _offsets_reversed(p.kernel):
        where = _tap_index(p, i, j, geo.out)
        padded[where] = padded[where] + xp.where(arg == k, dy, zero)
    return from_nhwc(ctx, padded[crop], p.nchw)


@register_kernel("MaxPoolGrad")
def _max_pool_grad(ctx: KernelContext, orig_input: Any, orig_output: Any, grad: Any) -> Any:
    return _max_pool_grad_impl(ctx, orig_input, orig_output, grad)


def _window_inputs(ctx: KernelContext, ksize: Any, strides: Any) -> Ctx:
    k, s = ctx.host(ksize), ctx.host(strides)
    key = ("window", k.tobytes(), s.tobytes())
    derived = ctx.cache.get(key)
    if derived is None:
        derived = ctx.cache[key] = _with_window(ctx, host_ints(k), host_ints(s))
    return derived


@register_kernel("MaxPoolGradV2")
def _max_pool_grad_v2(ctx: KernelContext, orig_input: Any, orig_output: Any, grad: Any, ksize: Any,
                      strides: Any) -> Any:
    return _max_pool_grad_impl(_window_inputs(ctx, ksize, strides), orig_input, orig_output, grad)


# -- MaxPoolV2 -------------------------------------------------------------------------------------------
@register_shape("MaxPoolV2")
def _max_pool_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    for i in (1, 2):
        v = ctx.with_rank(ctx.input(i), 1)
        if v[0] not in (-1, 4):
            ctx.invalid_argument(f"Dimension must be 4 but is {v[0]}")
    ksize, strides = ctx.input_tensor(1), ctx.input_tensor(2)
    if ksize is None or strides is None:
        return [unknown_shape()]
    return list(pool_shape(_with_window(ctx, host_ints(ksize), host_ints(strides))))


register_kernel("MaxPoolV2")(
    lambda ctx, input, ksize, strides: max_pool(_window_inputs(ctx, ksize, strides), input))
register_kernel("MaxPoolV2", backend="numpy")(
    lambda ctx, input, ksize, strides: max_pool_numpy(_window_inputs(ctx, ksize, strides), input))


# -- AvgPoolGrad ---------------------------------------------------------------------------------------
@register_shape("AvgPoolGrad")
def _avg_pool_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    out = ctx.with_rank(shape_from_shape_tensor(ctx, 0), 4)
    grad = ctx.with_rank(ctx.input(1), 4)
    p = _grad_pool_params(ctx, "AvgPoolGrad")
    if out.IsFullyDefined():
        _expect(ctx, "grad", _forward_shape(ctx, p, out), grad)
    return [out]


def _reciprocal_counts(ctx: KernelContext, p: Params, geo: Geometry, size: tuple[int, int]) -> Any:
    """1 / (input elements each window covers), rounded from double to the op's type as TF does."""
    per_axis = []
    for axis in range(2):
        start = np.arange(geo.out[axis]) * p.strides[axis] - geo.pads[2 * axis]
        per_axis.append(np.minimum(start + p.kernel[axis], size[axis]) - np.maximum(start, 0))
    table = 1.0 / np.outer(per_axis[0], per_axis[1]).reshape(1, geo.out[0], geo.out[1], 1)
    return ctx.asarray(table, ctx.output_dtypes[0])


@register_kernel("AvgPoolGrad")
def _avg_pool_grad(ctx: KernelContext, orig_input_shape: Any, grad: Any) -> Any:
    s = ctx.host(orig_input_shape)
    if not (s.ndim == 1 and s.size == 4):
        ctx.invalid_argument("out_backprop must be 1-dimensional and 4 elements")  # sic (TF)
    if grad.ndim != 4:
        ctx.invalid_argument("out_backprop must be 4-dimensional")
    shape = tuple(host_ints(s))
    for d in shape:
        if d < 0:
            ctx.invalid_argument(f"Expected a non-negative size, got {d}")
    p = _grad_pool_params(ctx, "AvgPoolGrad")
    _expect(ctx, "grad", _forward_shape(ctx, p, PartialTensorShape(shape)), PartialTensorShape(grad.shape))
    if math.prod(shape) == 0 or math.prod(grad.shape) == 0:
        return _zeros(ctx, shape)
    size = _nhwc(shape, p.nchw)
    geo = geometry(ctx, p, (size[1], size[2]), p.kernel)
    dy = to_nhwc(ctx, grad, p.nchw) * _reciprocal_counts(ctx, p, geo, (size[1], size[2]))
    padded, crop = _padded_buffer(ctx, geo, size, dy)
    for _, i, j in _offsets_reversed(p.kernel):
        where = _tap_index(p, i, j, geo.out)
        padded[where] = padded[where] + dy
    return from_nhwc(ctx, padded[crop], p.nchw)


# -- BiasAddGrad ---------------------------------------------------------------------------------------
@register_shape("BiasAddGrad")
def _bias_add_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    nchw = ctx.attrs["data_format"] == "NCHW"
    x = ctx.with_rank_at_least(ctx.input(0), 3 if nchw else 2)
    if x.unknown_rank():
        return [unknown_shape(1)]
    return [PartialTensorShape([x[1] if nchw else x[-1]])]


@register_kernel("BiasAddGrad")
def _bias_add_grad(ctx: KernelContext, out_backprop: Any) -> Any:
    """Sums over every axis but the channel one, in float for half/bfloat16 (TF's accumulator type)."""
    if out_backprop.ndim < 2:
        ctx.invalid_argument(f"Input tensor must be at least 2D: {format_shape(out_backprop.shape)}")
    channel = 1 if ctx.attrs["data_format"] == "NCHW" else out_backprop.ndim - 1
    (x,) = _wide(ctx, out_backprop)
    axes = tuple(a for a in range(x.ndim) if a != channel)
    return _narrow(ctx, ctx.xp.sum(x, axis=axes, dtype=x.dtype))
