"""DepthwiseConv2dNative and its input and filter gradients: checks, shape functions and kernels.

The checks follow TF 2.21's native CPU kernels (message wording and order, see
docs/ops/depthwise_conv.md), run at build time on whatever is known and again in the
kernel.  Beyond TF's CPU kernels: dilations are honoured by all three ops, NCHW is
computed rather than refused, and an empty ``out_backprop`` gives zero gradients.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, Optional

import numpy as np

from tfops_py.errors import ResourceExhaustedError, UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels.nn import _depthwise_conv_impl as impl
from tfops_py.kernels.nn import _jit
from tfops_py.kernels.nn._depthwise_conv_impl import Geometry
from tfops_py.kernels._windows import Window, WindowError, windowed_output_size
from tfops_py.kernels.registry import KernelContext, register_kernel

FORWARD = "DepthwiseConv2dNative"
BACKPROP_INPUT = "DepthwiseConv2dNativeBackpropInput"
BACKPROP_FILTER = "DepthwiseConv2dNativeBackpropFilter"
_LABEL = {BACKPROP_INPUT: "DepthwiseConv2DBackpropInput", BACKPROP_FILTER: "DepthwiseConv2DBackpropFilter"}
_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1

Ctx = Any  # InferenceContext or KernelContext: both carry attrs, op_type and invalid_argument()
Dims = Optional[list]  # a shape: list of dims (-1 unknown), or None for unknown rank


class ConvAttrs(NamedTuple):
    nchw: bool
    stride: int
    dilations: tuple[int, int]  # rows, cols
    padding: str
    explicit: tuple[int, int, int, int]  # top, bottom, left, right


def _fmt(dims: Sequence[int]) -> str:
    return str(PartialTensorShape(dims))


def conv_attrs(ctx: Ctx) -> ConvAttrs:
    """Parse and check strides, data_format, padding, explicit_paddings and dilations (TF's order)."""
    attrs = ctx.attrs
    strides = list(attrs["strides"])
    if len(strides) != 4:
        ctx.invalid_argument(f"Sliding window strides field must specify 4 dimensions, got {strides}")
    fmt = attrs.get("data_format", "NHWC")
    if fmt not in ("NHWC", "NCHW"):
        ctx.invalid_argument(f"Invalid data format: {fmt}")
    n, h, w, c = (0, 2, 3, 1) if fmt == "NCHW" else (0, 1, 2, 3)
    if strides[h] != strides[w]:
        ctx.invalid_argument("Current implementation only supports equal length strides in the row and column "
                             f"dimensions, got strides {strides}")
    if strides[n] != 1 or strides[c] != 1:
        ctx.invalid_argument("Current implementation does not yet support strides in the batch and depth "
                             f"dimensions, got strides {strides}")
    padding = attrs["padding"]
    explicit = list(attrs.get("explicit_paddings", []))
    if padding == "EXPLICIT":
        if len(explicit) != 8:
            ctx.invalid_argument(f"explicit_paddings attribute must contain 8 values, but got: {len(explicit)}")
        if any(p < 0 for p in explicit):
            ctx.invalid_argument(f"All elements of explicit_paddings must be nonnegative, got {explicit}")
        if explicit[2 * n] or explicit[2 * n + 1] or explicit[2 * c] or explicit[2 * c + 1]:
            ctx.invalid_argument("Nonzero explicit padding in the batch or depth dimensions is not supported, "
                                 f"got {explicit}")
        pads = (explicit[2 * h], explicit[2 * h + 1], explicit[2 * w], explicit[2 * w + 1])
    elif explicit:
        ctx.invalid_argument("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT, "
                             f"got {explicit} with padding {padding}")
    else:
        pads = (0, 0, 0, 0)
    # Dilations: TF's CPU kernels refuse (forward) or ignore (backprops) them; Conv2D's checks apply here.
    dilations = list(attrs.get("dilations", [1, 1, 1, 1]))
    if len(dilations) != 4:
        ctx.invalid_argument(f"Sliding window dilations field must specify 4 dimensions, got {dilations}")
    if dilations[n] != 1 or dilations[c] != 1:
        raise ctx.error(UnimplementedError, "Current implementation does not yet support dilations in the batch "
                                            f"and depth dimensions, got dilations {dilations}")
    if dilations[h] < 1 or dilations[w] < 1:
        ctx.invalid_argument(f"Dilated rates should be larger than 0, got dilations {dilations}")
    return ConvAttrs(fmt == "NCHW", strides[h], (dilations[h], dilations[w]), padding, pads)


def _nhwc(dims: Dims, nchw: bool) -> list[int]:
    if dims is None:
        return [-1] * 4
    return [dims[0], dims[2], dims[3], dims[1]] if nchw else list(dims)


def _layout(nhwc: Sequence[int], nchw: bool) -> list[int]:
    n, h, w, c = nhwc
    return [n, c, h, w] if nchw else [n, h, w, c]


def _known(*dims: int) -> bool:
    return all(d >= 0 for d in dims)


def _window(ctx: Ctx, in_size: int, k: int, a: ConvAttrs, dilation: int, pads: tuple[int, int]) -> Window:
    try:
        if not _known(in_size, k):  # still validates stride and dilation
            return Window(-1, *windowed_output_size(-1, 1, a.stride, a.padding, dilation, pads)[1:])
        return windowed_output_size(in_size, k, a.stride, a.padding, dilation, pads)
    except WindowError as e:
        ctx.invalid_argument(str(e))
        raise  # unreachable


def _too_large(ctx: Ctx, dims: Sequence[tuple[int, str]]) -> None:
    for v, what in dims:
        if v >= _INT32_MAX:
            ctx.invalid_argument(f"{what} too large: {v}")


def _geometry(a: ConvAttrs, x: list[int], f: Dims, out_rows: Window, out_cols: Window) -> Geometry:
    return Geometry(x[0], x[1], x[2], x[3], f[0] if f else -1, f[1] if f else -1, f[3] if f else -1,
                    out_rows.out, out_cols.out, a.stride, a.dilations[0], a.dilations[1],
                    out_rows.pad_before, out_cols.pad_before)


def check_forward(ctx: Ctx, a: ConvAttrs, x_dims: Dims, f_dims: Dims) -> Geometry:
    """TF's forward checks on (possibly partial) input and filter shapes; unknown results are -1."""
    if x_dims is not None and len(x_dims) != 4:
        ctx.invalid_argument(f"input must be 4-dimensional: {_fmt(x_dims)}")
    if f_dims is not None and len(f_dims) != 4:
        ctx.invalid_argument(f"filter must be 4-dimensional: {_fmt(f_dims)}")
    x = _nhwc(x_dims, a.nchw)
    f = f_dims or [-1] * 4
    if _known(x[3], f[2]) and x[3] != f[2]:
        ctx.invalid_argument(f"input and filter must have the same depth: {x[3]} vs {f[2]}")
    x[3] = x[3] if x[3] >= 0 else f[2]
    _too_large(ctx, [(x[1], "Input rows"), (x[2], "Input cols")])
    rows = _window(ctx, x[1], f[0], a, a.dilations[0], a.explicit[:2])
    cols = _window(ctx, x[2], f[1], a, a.dilations[1], a.explicit[2:])
    return _geometry(a, x, f, rows, cols)


def check_backprop(ctx: Ctx, a: ConvAttrs, x_dims: Dims, f_dims: Dims, dy_dims: Dims) -> Geometry:
    """TF's backprop checks (the EXTRACT_AND_VERIFY_DIMENSIONS macro), on partial shapes too."""
    label = _LABEL[ctx.op_type]
    for name, dims in (("input", x_dims), ("filter", f_dims), ("out_backprop", dy_dims)):
        if dims is not None and len(dims) != 4:
            ctx.invalid_argument(f"{label}: {name} must be 4-dimensional, got shape {_fmt(dims)}")
    x, dy = _nhwc(x_dims, a.nchw), _nhwc(dy_dims, a.nchw)
    f = f_dims or [-1] * 4
    if _known(x[0], dy[0]) and x[0] != dy[0]:
        ctx.invalid_argument(f"{label}: input and out_backprop must have the same batch size, got {x[0]} and {dy[0]}")
    _too_large(ctx, [(x[1], "Input rows"), (x[2], "Input cols"), (dy[1], "Output rows"), (dy[2], "Output cols")])
    if _known(x[3], f[2]) and x[3] != f[2]:
        ctx.invalid_argument(f"{label}: input and filter must have the same in_depth, got {x[3]} and {f[2]}")
    _too_large(ctx, [(dy[3], "Output depth")])
    depth = x[3] if x[3] >= 0 else f[2]
    if _known(depth, f[3], dy[3]) and depth * f[3] != dy[3]:
        ctx.invalid_argument(f"{label}: depth_multiplier * in_depth not equal to out_depth, "
                             f"got {f[3]} * {depth} != {dy[3]}")
    rows = _window(ctx, x[1], f[0], a, a.dilations[0], a.explicit[:2])
    cols = _window(ctx, x[2], f[1], a, a.dilations[1], a.explicit[2:])
    for what, actual, computed in (("rows", dy[1], rows.out), ("cols", dy[2], cols.out)):
        if _known(actual, computed) and actual != computed:
            ctx.invalid_argument(f"{label}: Number of {what} of out_backprop doesn't match computed: "
                                 f"actual = {actual}, computed = {computed}")
    x = [x[0] if x[0] >= 0 else dy[0], x[1], x[2], depth]
    if f[3] < 0 and _known(depth, dy[3]) and depth > 0:
        f = [f[0], f[1], f[2], dy[3] // depth]
    return _geometry(a, x, f, rows, cols)


def sizes_dims(ctx: Ctx, which: str, rank: int, value: np.ndarray | None) -> Dims:
    """The shape an ``input_sizes``/``filter_sizes`` tensor describes, checked like TF's MakeShape."""
    conv = "Conv2DBackpropInput" if which == "input_sizes" else "Conv2DBackpropFilter"
    if rank not in (-1, 1):
        ctx.invalid_argument(f"{conv}: {which} input must be 1-dim, not {rank}")
    if value is None:
        return None
    dims = [int(v) for v in np.asarray(value).reshape(-1)]
    total = 1
    for i, d in enumerate(dims):
        if d < 0:
            ctx.invalid_argument(f"Dimension {i} of {which} must be >= 0, got {dims}")
        if total * d > _INT64_MAX:
            ctx.invalid_argument(f"Encountered overflow when multiplying {total} with {d}, result: -1")
        total *= d
    return dims


def _dims_of(shape: PartialTensorShape) -> Dims:
    return None if shape.unknown_rank() else list(shape.as_tuple())


def _sizes_from_shape(ctx: InferenceContext, which: str) -> Dims:
    """Build-time ``*_sizes``: its value if constant, else unknown dims (as many as its length says)."""
    shape = ctx.input(0 if which == "input_sizes" else 1)
    dims = sizes_dims(ctx, which, shape.dims(), ctx.input_tensor(0 if which == "input_sizes" else 1))
    if dims is None and shape.dims() == 1 and shape[0] >= 0:
        dims = [-1] * shape[0]
    return dims


# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------

@register_shape(FORWARD)
def _forward_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = conv_attrs(ctx)
    g = check_forward(ctx, a, _dims_of(ctx.input(0)), _dims_of(ctx.input(1)))
    depth = g.depth * g.multiplier if _known(g.depth, g.multiplier) else -1
    return [PartialTensorShape(_layout([g.batch, g.out_rows, g.out_cols, depth], a.nchw))]


@register_shape(BACKPROP_INPUT)
def _backprop_input_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = conv_attrs(ctx)
    sizes = _sizes_from_shape(ctx, "input_sizes")
    g = check_backprop(ctx, a, sizes, _dims_of(ctx.input(1)), _dims_of(ctx.input(2)))
    if sizes is not None and all(d >= 0 for d in sizes):
        return [PartialTensorShape(sizes)]
    return [PartialTensorShape(_layout([g.batch, g.in_rows, g.in_cols, g.depth], a.nchw))]


@register_shape(BACKPROP_FILTER)
def _backprop_filter_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    a = conv_attrs(ctx)
    sizes = _sizes_from_shape(ctx, "filter_sizes")
    g = check_backprop(ctx, a, _dims_of(ctx.input(0)), sizes, _dims_of(ctx.input(2)))
    if sizes is not None and all(d >= 0 for d in sizes):
        return [PartialTensorShape(sizes)]
    return [PartialTensorShape([g.filter_rows, g.filter_cols, g.depth, g.multiplier])]


# ---------------------------------------------------------------------------------------------
# Kernels: a generic one per op (array API only) and a NumPy fast path
# ---------------------------------------------------------------------------------------------

def _attrs(ctx: KernelContext) -> ConvAttrs:
    a = ctx.cache.get("attrs")
    if a is None:
        a = ctx.cache["attrs"] = conv_attrs(ctx)
    return a


def _compute_type(ctx: KernelContext) -> DataType:
    """half and bfloat16 are accumulated in float32 and rounded once at the end."""
    t = ctx.output_dtypes[0]
    return DataType.DT_FLOAT if t in (DataType.DT_HALF, DataType.DT_BFLOAT16) else t


def _empty(shape: Sequence[int]) -> bool:
    return any(d == 0 for d in shape)


def _oom(ctx: KernelContext, shape: Sequence[int]) -> ResourceExhaustedError:
    t = ctx.output_dtypes[0]
    return ctx.error(ResourceExhaustedError,
                     f"OOM when allocating tensor with shape{format_shape(shape)} and type {t.short_name}")


def _alloc(ctx: KernelContext, fn: Any, shape: Sequence[int]) -> Any:
    """``fn(shape, dtype)`` of the output dtype; an impossible size is TF's OOM error, not a NumPy one."""
    try:
        return fn(tuple(shape), dtype=ctx.dtype(ctx.output_dtypes[0]))
    except (MemoryError, ValueError, OverflowError):
        raise _oom(ctx, shape) from None


@contextmanager
def _oom_guard(ctx: KernelContext, shape: Sequence[int]) -> Iterator[None]:
    """Temporaries (a padded input can dwarf x with huge paddings or dilations) fail as TF's OOM error."""
    try:
        yield
    except MemoryError:
        raise _oom(ctx, shape) from None


def _to_nhwc(xp: Any, x: Any, nchw: bool) -> Any:
    return xp.permute_dims(x, (0, 2, 3, 1)) if nchw else x


def _from_nhwc(xp: Any, x: Any, nchw: bool) -> Any:
    return xp.permute_dims(x, (0, 3, 1, 2)) if nchw else x


def _forward_prep(ctx: KernelContext, x: Any, w: Any) -> tuple[ConvAttrs, Geometry, list[int]]:
    a = _attrs(ctx)
    g = check_forward(ctx, a, list(x.shape), list(w.shape))
    return a, g, _layout([g.batch, g.out_rows, g.out_cols, g.depth * g.multiplier], a.nchw)


def _backprop_prep(ctx: KernelContext, sizes: Any, which: str, x: Any, w: Any, dy: Any
                   ) -> tuple[ConvAttrs, Geometry, list[int]]:
    """Checks for either backprop: ``sizes`` stands for the input (or filter) that is not given."""
    a = _attrs(ctx)
    host = ctx.host(sizes)
    dims = sizes_dims(ctx, which, host.ndim, host)
    if which == "input_sizes":
        g = check_backprop(ctx, a, dims, list(w.shape), list(dy.shape))
    else:
        g = check_backprop(ctx, a, list(x.shape), dims, list(dy.shape))
    return a, g, dims  # type: ignore[return-value]


@register_kernel(FORWARD)
def _forward(ctx: KernelContext, x: Any, w: Any) -> Any:
    a, g, shape = _forward_prep(ctx, x, w)
    xp = ctx.xp
    if _empty(shape) or _empty(x.shape) or _empty(w.shape):
        return _alloc(ctx, xp.zeros, shape)
    ct = ctx.dtype(_compute_type(ctx))
    with _oom_guard(ctx, shape):
        y = impl.forward(xp, _to_nhwc(xp, xp.astype(x, ct, copy=False), a.nchw), xp.astype(w, ct, copy=False), g)
        return xp.astype(_from_nhwc(xp, y, a.nchw), ctx.dtype(ctx.output_dtypes[0]), copy=False)


@register_kernel(BACKPROP_INPUT)
def _backprop_input(ctx: KernelContext, input_sizes: Any, w: Any, dy: Any) -> Any:
    a, g, shape = _backprop_prep(ctx, input_sizes, "input_sizes", None, w, dy)
    xp = ctx.xp
    if _empty(shape) or _empty(w.shape) or _empty(dy.shape):
        return _alloc(ctx, xp.zeros, shape)  # TF's native kernel leaves this uninitialised when M == 0
    ct = ctx.dtype(_compute_type(ctx))
    with _oom_guard(ctx, shape):
        dy = _to_nhwc(xp, xp.astype(dy, ct, copy=False), a.nchw)
        dx = impl.backprop_input(xp, xp.astype(w, ct, copy=False), dy, g)
        return xp.astype(_from_nhwc(xp, dx, a.nchw), ctx.dtype(ctx.output_dtypes[0]), copy=False)


@register_kernel(BACKPROP_FILTER)
def _backprop_filter(ctx: KernelContext, x: Any, filter_sizes: Any, dy: Any) -> Any:
    a, g, shape = _backprop_prep(ctx, filter_sizes, "filter_sizes", x, None, dy)
    xp = ctx.xp
    if _empty(shape) or _empty(x.shape) or _empty(dy.shape):
        return _alloc(ctx, xp.zeros, shape)  # TF's native kernel leaves this uninitialised
    ct = ctx.dtype(_compute_type(ctx))
    with _oom_guard(ctx, shape):
        dw = impl.backprop_filter(xp, _to_nhwc(xp, xp.astype(x, ct, copy=False), a.nchw),
                                  _to_nhwc(xp, xp.astype(dy, ct, copy=False), a.nchw), g)
        return xp.astype(dw, ctx.dtype(ctx.output_dtypes[0]), copy=False)


def _np_view(x: np.ndarray, nchw: bool) -> np.ndarray:
    """The NHWC view of an array: the NumPy paths read and write NCHW data through it, without copies."""
    return x.transpose(0, 2, 3, 1) if nchw else x


def forward_numpy(ctx: KernelContext, x: np.ndarray, w: np.ndarray, bias: np.ndarray | None = None,
                  activation: str | None = None) -> np.ndarray:
    """The NumPy forward; ``bias`` and ``activation`` (None, Relu, Relu6) are fused in when the compiled
    kernel (``[jit]`` extra) runs it, else applied by the caller: check ``jit_fuses`` first."""
    a, g, shape = _forward_prep(ctx, x, w)
    if _empty(shape) or _empty(x.shape) or _empty(w.shape):
        return _alloc(ctx, np.zeros, shape)
    out = _alloc(ctx, np.empty, shape)
    if _use_jit(ctx, a):
        with _oom_guard(ctx, shape):
            _jit.depthwise_forward(np.asarray(x), np.asarray(w), g, out, bias, activation)
        return out
    with _oom_guard(ctx, shape):
        impl.forward_np(_np_view(np.asarray(x), a.nchw), np.asarray(w), g, _np_view(out, a.nchw),
                        np.dtype(ctx.dtype(_compute_type(ctx))))
    return out


def _use_jit(ctx: KernelContext, a: ConvAttrs) -> bool:
    return _jit.available() and not a.nchw and ctx.output_dtypes[0] in (DataType.DT_FLOAT, DataType.DT_DOUBLE)


def jit_fuses(ctx: KernelContext, activation: str | None) -> bool:
    """Does ``forward_numpy`` apply a bias and ``activation`` itself for this node?"""
    return _use_jit(ctx, _attrs(ctx)) and activation in _jit.ACTIVATION_CODES


@register_kernel(FORWARD, backend="numpy")
def _forward_np(ctx: KernelContext, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return forward_numpy(ctx, x, w)


@register_kernel(BACKPROP_INPUT, backend="numpy")
def _backprop_input_np(ctx: KernelContext, input_sizes: Any, w: np.ndarray, dy: np.ndarray) -> np.ndarray:
    a, g, shape = _backprop_prep(ctx, input_sizes, "input_sizes", None, w, dy)
    if _empty(shape) or _empty(w.shape) or _empty(dy.shape):
        return _alloc(ctx, np.zeros, shape)
    out = _alloc(ctx, np.empty, shape)
    if _use_jit(ctx, a):
        with _oom_guard(ctx, shape):
            _jit.depthwise_backprop_input(np.asarray(w), np.asarray(dy), g, out)
        return out
    with _oom_guard(ctx, shape):
        impl.backprop_input_np(np.asarray(w), _np_view(np.asarray(dy), a.nchw), g, _np_view(out, a.nchw),
                               np.dtype(ctx.dtype(_compute_type(ctx))))
    return out


@register_kernel(BACKPROP_FILTER, backend="numpy")
def _backprop_filter_np(ctx: KernelContext, x: np.ndarray, filter_sizes: Any, dy: np.ndarray) -> np.ndarray:
    a, g, shape = _backprop_prep(ctx, filter_sizes, "filter_sizes", x, None, dy)
    if _empty(shape) or _empty(x.shape) or _empty(dy.shape):
        return _alloc(ctx, np.zeros, shape)
    if _use_jit(ctx, a):
        with _oom_guard(ctx, shape):
            dw = _jit.depthwise_backprop_filter(np.asarray(x), np.asarray(dy), g, ctx.dtype(_compute_type(ctx)))
        return dw.astype(ctx.dtype(ctx.output_dtypes[0]))
    with _oom_guard(ctx, shape):
        dw = impl.backprop_filter_np(_np_view(np.asarray(x), a.nchw), _np_view(np.asarray(dy), a.nchw), g,
                                     np.dtype(ctx.dtype(_compute_type(ctx))))
    return dw.astype(ctx.dtype(ctx.output_dtypes[0]))
