"""Conv2D, AvgPool and MaxPool: TF's attr and shape checks at build and run time, im2col kernels.

Kernels loop over filter taps / window offsets only: each tap is one strided slice of the
padded input.  Conv2D multiplies the gathered patches by the filter in one matmul (or one
matmul per tap when the patch matrix would be large); grouped convolution (input depth a
multiple of the filter's) is a batched matmul over groups.  NCHW, which TF's CPU kernels
refuse, is computed by transposing to NHWC and back.  Half and bfloat16 are computed in
float and rounded once.  See docs/ops/nn_ops.md.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from tfops_py.conformance import conformance, divergence, reference, small, values
from tfops_py.errors import UnimplementedError
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._common import compute_dtype, dtype_limits
from tfops_py.kernels._parallel import parallel_for
from tfops_py.kernels._typing import CheckContext
from tfops_py.kernels.nn import _conv_gemm
from tfops_py.kernels.nn._conv_gemm import Epilogue as BlockEpilogue
from tfops_py.kernels.nn._conv_gemm import EpilogueFactory
from tfops_py.kernels._windows import WindowError, windowed_output_size
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "nn_ops"
NCHW_NOTE = "TF's CPU kernels refuse NCHW: TF's NHWC answer on transposed inputs, transposed back"
IM2COL_MAX_ELEMENTS = 1 << 24  # above this many patch elements, Conv2D accumulates one matmul per tap


class Params(NamedTuple):
    nchw: bool
    kernel: tuple[int, int]  # filter or window size (rows, cols); (-1, -1) for Conv2D until known
    strides: tuple[int, int]
    dilations: tuple[int, int]
    padding: str
    explicit: tuple[int, int, int, int]  # top, bottom, left, right
    depth_window: int  # MaxPool across depth (1 otherwise)


class Geometry(NamedTuple):
    out: tuple[int, int]  # output rows, cols (-1 unknown)
    pads: tuple[int, int, int, int]  # top, bottom, left, right


def _unimplemented(ctx: CheckContext, message: str) -> None:
    raise ctx.error(UnimplementedError, message)


def _explicit_pads(ctx: CheckContext, nchw: bool, required: bool) -> tuple[int, int, int, int]:
    pads = list(ctx.attrs.get("explicit_paddings", []))
    if not required:
        return (0, 0, 0, 0)
    if len(pads) != 8:
        ctx.invalid_argument(f"explicit_paddings attribute must contain 8 values, but got: {len(pads)}")
    if any(p < 0 for p in pads):
        ctx.invalid_argument("All elements of explicit_paddings must be nonnegative")
    h, w, c = (2, 3, 1) if nchw else (1, 2, 3)
    if pads[0] or pads[1] or pads[2 * c] or pads[2 * c + 1]:
        ctx.invalid_argument("Nonzero explicit padding in the batch or depth dimensions is not supported")
    return pads[2 * h], pads[2 * h + 1], pads[2 * w], pads[2 * w + 1]


def conv_params(ctx: CheckContext) -> Params:
    """Conv2D's strides, dilations, padding and explicit_paddings, checked in TF's order."""
    attrs = ctx.attrs
    strides, dilations = list(attrs["strides"]), list(attrs["dilations"])
    if len(strides) != 4:
        ctx.invalid_argument("Sliding window strides field must specify 4 dimensions")
    if len(dilations) != 4:
        ctx.invalid_argument("Sliding window dilations field must specify 4 dimensions")
    nchw = attrs["data_format"] == "NCHW"
    n, h, w, c = (0, 2, 3, 1) if nchw else (0, 1, 2, 3)
    if strides[n] != 1 or strides[c] != 1:
        _unimplemented(ctx, "Current implementation does not yet support strides in the batch and depth dimensions.")
    if dilations[n] != 1 or dilations[c] != 1:
        _unimplemented(ctx, "Current implementation does not yet support dilations in the batch and depth "
                            "dimensions.")
    if strides[h] < 1 or strides[w] < 1:
        ctx.invalid_argument("Row and column strides should be larger than 0.")
    if dilations[h] < 1 or dilations[w] < 1:
        ctx.invalid_argument("Dilated rates should be larger than 0.")
    padding = attrs["padding"]
    if padding != "EXPLICIT" and attrs["explicit_paddings"]:
        ctx.invalid_argument("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT")
    return Params(nchw, (-1, -1), (strides[h], strides[w]), (dilations[h], dilations[w]), padding,
                  _explicit_pads(ctx, nchw, padding == "EXPLICIT"), 1)


def pool_params(ctx: CheckContext) -> Params:
    """AvgPool/MaxPool's ksize, strides and padding, checked as TF's CPU kernels do."""
    attrs = ctx.attrs
    ksize, strides = list(attrs["ksize"]), list(attrs["strides"])
    if len(ksize) != 4:
        ctx.invalid_argument("Sliding window ksize field must specify 4 dimensions")
    if len(strides) != 4:
        ctx.invalid_argument("Sliding window stride field must specify 4 dimensions")
    fmt = attrs["data_format"]
    if fmt == "NCHW_VECT_C":
        _unimplemented(ctx, "MaxPool with data_format NCHW_VECT_C (a qint8 layout) is not supported")
    nchw = fmt == "NCHW"
    n, h, w, c = (0, 2, 3, 1) if nchw else (0, 1, 2, 3)
    if any(k < 1 for k in ksize):
        ctx.invalid_argument(f"ksize must be a positive int32 value, got:{min(ksize)}" if ctx.op_type == "AvgPool"
                             else "Sliding window ksize must be positive. The specified or inferred ksize is: "
                             + ",".join(map(str, ksize)))
    if ksize[n] != 1 or strides[n] != 1:
        _unimplemented(ctx, "Pooling is not yet supported on the batch dimension.")
    spatial = ksize[h] != 1 or ksize[w] != 1
    if ksize[c] != 1:
        if spatial:
            _unimplemented(ctx, "MaxPooling supports exactly one of pooling across depth or pooling across "
                                "width/height.")
        if ctx.op_type == "AvgPool":
            _unimplemented(ctx, "Non-spatial pooling is not yet supported. Volunteers? :)")
        if ksize[c] != strides[c]:
            _unimplemented(ctx, "Depthwise max pooling requires the depth window to equal the depth stride")
    padding = attrs["padding"]
    explicit = _explicit_pads(ctx, nchw, padding == "EXPLICIT")
    if padding == "EXPLICIT":
        if ksize[c] != 1:
            _unimplemented(ctx, "Depthwise max pooling does not support explicit padding.")
        for name, pad, k in zip(("Top", "Bottom", "Left", "Right"), explicit,
                                (ksize[h], ksize[h], ksize[w], ksize[w])):
            if pad >= k:
                ctx.invalid_argument(f"{name} padding {pad} needs to be smaller than the window size {k}")
    if ksize[c] != 1:  # across depth, TF ignores the spatial strides
        return Params(nchw, (1, 1), (1, 1), (1, 1), "VALID", explicit, ksize[c])
    return Params(nchw, (ksize[h], ksize[w]), (strides[h], strides[w]), (1, 1), padding, explicit, 1)


def geometry(ctx: CheckContext, p: Params, size: tuple[int, int], kernel: tuple[int, int]) -> Geometry:
    """Output size and padding of both spatial axes (-1 where unknown); TF's messages on failure."""
    outs, pads = [], []
    for axis in range(2):
        explicit = (p.explicit[2 * axis], p.explicit[2 * axis + 1])
        if kernel[axis] < 0:
            outs.append(-1)
            pads.extend(explicit)
            continue
        try:
            win = windowed_output_size(size[axis], kernel[axis], p.strides[axis], p.padding, p.dilations[axis],
                                       explicit)
        except WindowError as e:
            ctx.invalid_argument(str(e))
            raise  # unreachable
        outs.append(win.out)
        pads.extend((win.pad_before, win.pad_after))
    return Geometry((outs[0], outs[1]), (pads[0], pads[1], pads[2], pads[3]))


def nhwc_dims(shape: PartialTensorShape, nchw: bool) -> tuple[int, int, int, int]:
    if shape.unknown_rank():
        return (-1, -1, -1, -1)
    n, a, b, c = shape.as_tuple()
    return (n, b, c, a) if nchw else (n, a, b, c)


def nhwc_layout_shape(n: int, h: int, w: int, c: int, nchw: bool) -> PartialTensorShape:
    return PartialTensorShape([n, c, h, w] if nchw else [n, h, w, c])


# -- Conv2D -----------------------------------------------------------------------------------------------

def _conv_checks(ctx: CheckContext, p: Params, x: PartialTensorShape, f: PartialTensorShape) -> tuple[Geometry, int]:
    """(geometry, groups) for Conv2D with TF's kernel messages."""
    if x.dims() not in (-1, 4):
        ctx.invalid_argument(f"convolution input must be 4-dimensional: {x}")
    if f.dims() not in (-1, 4):
        ctx.invalid_argument(f"convolution filter must be 4-dimensional: {f}")
    _, h, w, c = nhwc_dims(x, p.nchw)
    kh, kw, cg, out = (-1, -1, -1, -1) if f.unknown_rank() else f.as_tuple()
    if cg == 0:
        ctx.invalid_argument("filter depth must be stricly positive, got 0")
    if kh == 0 or kw == 0:
        ctx.invalid_argument("filter must not have zero elements (i.e. all dimensions must be non-zero)")
    groups = -1
    if c >= 0 and cg > 0:
        if c % cg:
            ctx.invalid_argument(f"input depth must be evenly divisible by filter depth: {c} vs {cg}")
        groups = c // cg
        if out >= 0 and groups > 0 and out % groups:
            ctx.invalid_argument(f"output depth must be evenly divisible by number of groups: {out} vs {groups}")
    return geometry(ctx, p, (h, w), (kh, kw)), groups


@register_shape("Conv2D")
def _conv2d_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    p = conv_params(ctx)
    x, f = ctx.input(0), ctx.input(1)
    geo, _ = _conv_checks(ctx, p, x, f)
    n = nhwc_dims(x, p.nchw)[0]
    out = -1 if f.unknown_rank() else f[3]
    return [nhwc_layout_shape(n, geo.out[0], geo.out[1], out, p.nchw)]


def pad_spatial(xp: Any, x: Any, pads: tuple[int, int, int, int], value: Any) -> Any:
    """NHWC ``x`` padded on rows and columns with ``value`` (concatenation: backend-neutral)."""
    top, bottom, left, right = pads
    n, h, w, c = x.shape
    if top or bottom:
        x = xp.concat([xp.full((n, top, w, c), value, dtype=x.dtype), x,
                       xp.full((n, bottom, w, c), value, dtype=x.dtype)], axis=1)
    if left or right:
        h = x.shape[1]
        x = xp.concat([xp.full((n, h, left, c), value, dtype=x.dtype), x,
                       xp.full((n, h, right, c), value, dtype=x.dtype)], axis=2)
    return x


class TapPlan(NamedTuple):
    """The window offsets that reach the input, and the padding those need (never more than TF's):
    a huge SAME window or dilation costs only the offsets that touch the input."""

    rows: range
    cols: range
    pads: tuple[int, int, int, int]  # top, bottom, left, right actually materialized
    shifts: tuple[int, int]  # TF's leading padding minus ours, per axis


def tap_plan(p: Params, geo: Geometry, size: tuple[int, int], kernel: tuple[int, int]) -> TapPlan | None:
    """None when no offset reaches the input (every output sees padding only)."""
    ranges, pads, shifts = [], [], []
    for axis in range(2):
        n, out, k = size[axis], geo.out[axis], kernel[axis]
        s, d, before = p.strides[axis], p.dilations[axis], geo.pads[2 * axis]
        first = max(0, -((-(before - (out - 1) * s)) // d))  # input row = o*s + i*d - before
        last = min(k - 1, (before + n - 1) // d)
        if first > last:
            return None
        top = max(0, before - first * d)
        ranges.append(range(first, last + 1))
        pads.extend((top, max(0, last * d + (out - 1) * s - before - (n - 1))))
        shifts.append(before - top)
    return TapPlan(ranges[0], ranges[1], (pads[0], pads[1], pads[2], pads[3]), (shifts[0], shifts[1]))


def _taps(x: Any, p: Params, plan: TapPlan, out: tuple[int, int]) -> Any:
    """Yield, per window offset of ``plan``, the strided slice of padded NHWC ``x`` it sees: (N, OH, OW, C)."""
    (sh, sw), (dh, dw) = p.strides, p.dilations
    for i in plan.rows:
        top = i * dh - plan.shifts[0]
        for j in plan.cols:
            left = j * dw - plan.shifts[1]
            yield x[:, top: top + (out[0] - 1) * sh + 1: sh, left: left + (out[1] - 1) * sw + 1: sw, :]


def to_nhwc(ctx: KernelContext, x: Any, nchw: bool) -> Any:
    return ctx.xp.permute_dims(x, (0, 2, 3, 1)) if nchw else x


def from_nhwc(ctx: KernelContext, y: Any, nchw: bool) -> Any:
    return ctx.xp.permute_dims(y, (0, 3, 1, 2)) if nchw else y


def _widen(ctx: KernelContext, *arrays: Any) -> list[Any]:
    dt = ctx.input_dtypes[0]
    wide = compute_dtype(dt)
    return list(arrays) if wide == dt else [ctx.xp.astype(a, ctx.dtype(wide)) for a in arrays]


def narrow(ctx: KernelContext, y: Any) -> Any:
    dt = ctx.output_dtypes[0]
    return y if compute_dtype(dt) == dt else ctx.xp.astype(y, ctx.dtype(dt))


Runner = Any  # (body, x, *args) -> body's NHWC result for all of x


def _whole(body: Any, x: Any, *args: Any) -> Any:
    return body(x, *args)


def _by_batch(body: Any, x: Any, *args: Any) -> Any:
    """NumPy: the batch split over the shared thread pool (NumPy and BLAS release the GIL)."""
    if x.shape[0] < 2:
        return body(x, *args)
    return np.concatenate(parallel_for(lambda a, b: body(x[a:b], *args), x.shape[0]), axis=0)


def _stacked_patches(xp: Any, padded: Any, p: Params, plan: TapPlan, out: tuple[int, int]) -> Any:
    """(N, OH, OW, taps, C): every tap's slice, stacked (one copy per tap)."""
    return xp.stack(list(_taps(padded, p, plan, out)), axis=3)


def _numpy_patches(xp: Any, padded: np.ndarray, p: Params, plan: TapPlan, out: tuple[int, int]) -> np.ndarray:
    """The same patches from one strided view of ``padded``, copied once (NumPy only)."""
    (sh, sw), (dh, dw) = p.strides, p.dilations
    top, left = plan.rows.start * dh - plan.shifts[0], plan.cols.start * dw - plan.shifts[1]
    span = ((len(plan.rows) - 1) * dh + 1, (len(plan.cols) - 1) * dw + 1)
    view = np.lib.stride_tricks.sliding_window_view(padded[:, top:, left:, :], span, axis=(1, 2))
    view = view[:, :(out[0] - 1) * sh + 1:sh, :(out[1] - 1) * sw + 1:sw, :, ::dh, ::dw]  # N, OH, OW, C, KH, KW
    n, c = padded.shape[0], padded.shape[3]
    return np.ascontiguousarray(view.transpose(0, 1, 2, 4, 5, 3)).reshape(n, out[0], out[1], -1, c)


def _conv_body(x: Any, f: Any, xp: Any, p: Params, geo: Geometry, groups: int,
               patches: Any = _stacked_patches) -> Any:
    """Conv2D of NHWC ``x`` (already in the compute type) with HWIO ``f``: im2col and matmul."""
    n, h, w, c = x.shape
    cg, out_depth = f.shape[2], f.shape[3]
    oh, ow = geo.out
    plan = tap_plan(p, geo, (h, w), (f.shape[0], f.shape[1]))
    if plan is None:
        return xp.zeros((n, oh, ow, out_depth), dtype=x.dtype)
    f = f[plan.rows.start:plan.rows.stop, plan.cols.start:plan.cols.stop, ...]
    kw = f.shape[1]
    m, taps = n * oh * ow, f.shape[0] * kw
    padded = pad_spatial(xp, x, plan.pads, 0)
    if groups == 1 and m * taps * c > IM2COL_MAX_ELEMENTS and taps > 1:
        y = None
        for k, tap in enumerate(_taps(padded, p, plan, geo.out)):
            term = xp.matmul(xp.reshape(tap, (m, c)), f[k // kw, k % kw, ...])
            y = term if y is None else y + term
    else:
        cols = xp.reshape(patches(xp, padded, p, plan, geo.out), (m, taps, groups, cg))
        og = out_depth // groups
        w = xp.permute_dims(xp.reshape(f, (taps, cg, groups, og)), (2, 0, 1, 3))
        y = xp.matmul(xp.reshape(xp.permute_dims(cols, (2, 0, 1, 3)), (groups, m, taps * cg)),
                      xp.reshape(w, (groups, taps * cg, og)))
        y = xp.permute_dims(y, (1, 0, 2))
    return xp.reshape(y, (n, oh, ow, out_depth))


def _gemm_body(x: np.ndarray, f: np.ndarray, xp: Any, p: Params, geo: Geometry, groups: int,
               epilogue: BlockEpilogue | None = None) -> np.ndarray:
    """NumPy Conv2D: blocked GEMMs (``_conv_gemm``); grouped filters (or no tap reaching the input)
    take the generic im2col per image."""
    plan = tap_plan(p, geo, (x.shape[1], x.shape[2]), (f.shape[0], f.shape[1])) if groups == 1 else None
    if plan is not None:
        f = f[plan.rows.start:plan.rows.stop, plan.cols.start:plan.cols.stop]
        offsets = (plan.rows.start * p.dilations[0] - plan.shifts[0],
                   plan.cols.start * p.dilations[1] - plan.shifts[1])
        return _conv_gemm.conv2d(x, f, p.strides, p.dilations, plan.pads, offsets, geo.out, epilogue)
    y = _by_batch(_conv_body, x, f, xp, p, geo, groups, _numpy_patches)
    if epilogue is not None:
        for i in range(y.shape[0]):
            epilogue(y[i].reshape(-1, y.shape[3]), i, 0, y.shape[1])
    return y


def conv2d_nhwc(ctx: KernelContext, x: Any, f: Any, epilogue: EpilogueFactory | None = None,
                numpy: bool = False) -> tuple[Any, Params]:
    """Conv2D checked as TF's kernel: (NHWC result in the compute type, params).

    On NumPy, ``epilogue(shape, dtype)`` gives a function run on each block of the result in place
    (a fused op's bias and activation); the caller applies it otherwise."""
    xp = ctx.xp
    p = conv_params(ctx)
    geo, groups = _conv_checks(ctx, p, PartialTensorShape(x.shape), PartialTensorShape(f.shape))
    x = to_nhwc(ctx, x, p.nchw)
    n, out_depth = x.shape[0], f.shape[3]
    x, f = _widen(ctx, x, f)
    shape = (n, *geo.out, out_depth)
    block = epilogue(shape, x.dtype) if epilogue is not None else None
    if n * geo.out[0] * geo.out[1] == 0 or out_depth == 0:
        return xp.zeros(shape, dtype=x.dtype), p
    if numpy:
        return _gemm_body(x, f, xp, p, geo, groups, block), p
    return _conv_body(x, f, xp, p, geo, groups), p


@register_kernel("Conv2D")
def _conv2d(ctx: KernelContext, x: Any, f: Any) -> Any:
    y, p = conv2d_nhwc(ctx, x, f)
    return from_nhwc(ctx, narrow(ctx, y), p.nchw)


@register_kernel("Conv2D", backend="numpy")
def _conv2d_numpy(ctx: KernelContext, x: Any, f: Any) -> Any:
    y, p = conv2d_nhwc(ctx, x, f, numpy=True)
    return from_nhwc(ctx, narrow(ctx, y), p.nchw)


# -- pooling ---------------------------------------------------------------------------------------------

def pool_checks(ctx: CheckContext, p: Params, x: PartialTensorShape) -> tuple[Geometry, int]:
    """(geometry, output depth) of a pooling op."""
    if x.dims() not in (-1, 4):
        ctx.invalid_argument(f"tensor_in_shape must have 2 spatial dimensions. {x.dims()} 0"
                             if isinstance(ctx, KernelContext) else f"Shape must be rank 4 but is rank {x.dims()}")
    _, h, w, c = nhwc_dims(x, p.nchw)
    if p.depth_window == 1:
        return geometry(ctx, p, (h, w), p.kernel), c
    if c >= 0 and c % p.depth_window:
        _unimplemented(ctx, "Depthwise max pooling requires the depth window to evenly divide the input depth")
    return Geometry((h, w), (0, 0, 0, 0)), (-1 if c < 0 else c // p.depth_window)


@register_shape("AvgPool", "MaxPool")
def pool_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    p = pool_params(ctx)
    x = ctx.input(0)
    geo, depth = pool_checks(ctx, p, x)
    return [nhwc_layout_shape(nhwc_dims(x, p.nchw)[0], geo.out[0], geo.out[1], depth, p.nchw)]


def _window_counts(ctx: KernelContext, size: tuple[int, int], p: Params, geo: Geometry) -> Any:
    """How many input elements each output position's window covers (SAME excludes the padding)."""
    key = ("counts", size, geo)
    counts = ctx.cache.get(key)
    if counts is None:
        per_axis = []
        for axis in range(2):
            start = np.arange(geo.out[axis]) * p.strides[axis] - geo.pads[2 * axis]
            end = np.minimum(start + p.kernel[axis], size[axis])
            per_axis.append(end - np.maximum(start, 0))
        table = np.outer(per_axis[0], per_axis[1]).reshape(1, geo.out[0], geo.out[1], 1)
        counts = ctx.cache[key] = ctx.asarray(table, compute_dtype(ctx.input_dtypes[0]))
    return counts


def _pool_prepare(ctx: KernelContext, x: Any) -> tuple[Params, Geometry, int, Any]:
    p = pool_params(ctx)
    geo, depth = pool_checks(ctx, p, PartialTensorShape(x.shape))
    return p, geo, depth, to_nhwc(ctx, x, p.nchw)


def _empty_pool(ctx: KernelContext, x: Any, geo: Geometry, depth: int) -> Any | None:
    n = x.shape[0]
    if n * geo.out[0] * geo.out[1] * depth == 0:
        return ctx.xp.zeros((n, geo.out[0], geo.out[1], depth), dtype=ctx.dtype(ctx.output_dtypes[0]))
    return None


def _avg_body(x: Any, xp: Any, p: Params, geo: Geometry, counts: Any) -> Any:
    plan = tap_plan(p, geo, (x.shape[1], x.shape[2]), p.kernel)  # SAME/VALID windows always reach the input
    total = None
    for tap in _taps(pad_spatial(xp, x, plan.pads, 0), p, plan, geo.out):  # type: ignore[union-attr]
        total = tap if total is None else total + tap
    return total / counts


def _avg_pool(ctx: KernelContext, value: Any, run: Runner = _whole) -> Any:
    p, geo, depth, x = _pool_prepare(ctx, value)
    empty = _empty_pool(ctx, x, geo, depth)
    if empty is not None:
        return from_nhwc(ctx, empty, p.nchw)
    (x,) = _widen(ctx, x)
    counts = _window_counts(ctx, (x.shape[1], x.shape[2]), p, geo)
    return from_nhwc(ctx, narrow(ctx, run(_avg_body, x, ctx.xp, p, geo, counts)), p.nchw)


register_kernel("AvgPool")(_avg_pool)
register_kernel("AvgPool", backend="numpy")(lambda ctx, value: _avg_pool(ctx, value, _by_batch))


def _max_body(x: Any, xp: Any, p: Params, geo: Geometry, lowest: Any, floating: bool, fmax: Any) -> Any:
    if floating and fmax is None:
        x = xp.where(x >= lowest, x, xp.asarray(lowest, dtype=x.dtype))
    combine = xp.maximum if fmax is None else fmax
    plan = tap_plan(p, geo, (x.shape[1], x.shape[2]), p.kernel)  # padding < window: always reaches the input
    result = None
    for tap in _taps(pad_spatial(xp, x, plan.pads, lowest), p, plan, geo.out):  # type: ignore[union-attr]
        result = tap if result is None else combine(result, tap)
    if floating and fmax is not None:
        result = fmax(result, xp.asarray(lowest, dtype=result.dtype))  # all-NaN or -inf windows
    return result


def max_pool(ctx: KernelContext, input: Any, run: Runner = _whole, fmax: Any = None) -> Any:  # noqa: A002
    """Spatial windows start from the type's lowest value and NaN never wins; across depth the first
    element starts (so a leading NaN stays), as in TF's two CPU loops.  ``fmax`` (NumPy's NaN-skipping
    maximum) saves the pass that replaces NaN up front."""
    xp = ctx.xp
    p, geo, depth, x = _pool_prepare(ctx, input)
    empty = _empty_pool(ctx, x, geo, depth)
    if empty is not None:
        return from_nhwc(ctx, empty, p.nchw)
    if p.depth_window > 1:  # TF's depthwise loop: the first element, then any strictly greater one
        n, h, w, _ = x.shape
        grouped = xp.reshape(x, (n, h, w, depth, p.depth_window))
        result = grouped[..., 0]
        for j in range(1, p.depth_window):
            result = xp.where(grouped[..., j] > result, grouped[..., j], result)
        return from_nhwc(ctx, result, p.nchw)
    dt = ctx.input_dtypes[0]
    result = run(_max_body, x, xp, p, geo, dtype_limits(dt)[0], dt.is_floating, fmax)
    return from_nhwc(ctx, result, p.nchw)


register_kernel("MaxPool")(max_pool)


@register_kernel("MaxPool", backend="numpy")
def max_pool_numpy(ctx: KernelContext, input: Any) -> Any:  # noqa: A002
    return max_pool(ctx, input, _by_batch, fmax=np.fmax)



# -- conformance (tests/conformance) -------------------------------------------------------------------------
_CASES = "tfops_py.kernels.nn._nn_cases"
conformance("Conv2D", input=small(), filter=small(), compare="acc", live=50, shapes=f"{_CASES}:CONV2D")
conformance("AvgPool", value=values(specials=True), compare="acc", live=30, shapes=f"{_CASES}:AVG_POOL")
conformance("MaxPool", input=values(specials=True), live=30, shapes=f"{_CASES}:MAX_POOL")

divergence(("Conv2D", "AvgPool", "MaxPool"), when="`data_format=\"NCHW\"`", tf="refused (\"only supports NHWC\")",
           ours="computed (the NHWC answer, transposed)", attrs={"data_format": "NCHW"},
           reference=reference(f"{_CASES}:nchw_via_nhwc", NCHW_NOTE))
divergence(("Conv2D", "AvgPool"), when="half / bfloat16", tf="steps rounded in the narrow type",
           ours="computed in float, rounded once (within a few ulps)")


def _spatial(attrs: dict[str, Any], values: Any) -> tuple[int, int]:
    """The (rows, cols) entries of a 4-vector in the attrs' data format."""
    return (values[2], values[3]) if attrs.get("data_format") == "NCHW" else (values[1], values[2])


def _window_exceeds_input(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    """A VALID/EXPLICIT window (dilated filter) larger than the (padded) input along some spatial axis."""
    x = np.shape(inputs["input"] if "input" in inputs else inputs["value"])
    if len(x) != 4 or attrs.get("padding") == "SAME":
        return False
    if "filter" in inputs:
        kernel = np.shape(inputs["filter"])[:2]
        dilation = _spatial(attrs, attrs.get("dilations", [1, 1, 1, 1]))
        kernel = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))
    else:
        kernel = _spatial(attrs, attrs["ksize"])
    pads = list(attrs.get("explicit_paddings") or [0] * 8)
    pads = pads[4:8] if attrs.get("data_format") == "NCHW" else pads[2:6]
    size = _spatial(attrs, x)
    return any(n + pads[2 * i] + pads[2 * i + 1] < k for i, (n, k) in enumerate(zip(size, kernel)))


def _depth_pooling_with_spatial_strides(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    depth = attrs["ksize"][1 if attrs.get("data_format") == "NCHW" else 3]
    return depth > 1 and _spatial(attrs, attrs["strides"]) != (1, 1)


divergence(("Conv2D", "AvgPool", "MaxPool"), when="a VALID or EXPLICIT window larger than the (padded) input",
           tf="graph construction refuses (\"Negative dimension size caused by subtracting 9 from 6\"); its kernel "
              "returns an empty output", ours="builds, and returns the empty output", applies=_window_exceeds_input,
           builds=True)
divergence("MaxPool", when="pooling across depth with spatial strides",
           tf="the static shape applies the spatial strides; the kernel ignores them",
           ours="the kernel's shape, at build time too", applies=_depth_pooling_with_spatial_strides,
           static_shapes=False)
