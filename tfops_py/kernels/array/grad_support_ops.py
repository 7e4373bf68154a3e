"""Ops that gradient graphs are built from: shape plumbing, reversal and padding.

BroadcastGradientArgs, ConcatOffset, InvertPermutation, StridedSliceGrad, BroadcastTo, SplitV,
ReverseV2, PadV2, MirrorPad and MirrorPadGrad.  The index-driven ones (DynamicStitch, GatherNd,
ScatterNd, TensorScatterAdd) are in ``grad_scatter_ops``; Cumsum and UnsortedSegmentSum are math ops
(``kernels/math/scan_ops.py``, ``segment_ops.py``).

Checks and messages are TF 2.21's CPU kernels', run at build time where the shape function
knows enough.  Shape-like inputs (shapes, axes, paddings, permutations, stitch indices) are
read on the host; data stays on the backend.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfops_py.conformance import axis_of, conformance, divergence, values
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._typing import Fail
from tfops_py.kernels._shape_util import (add_dim, axis_from_scalar_input, host_ints, merge_dim,
                                          shape_from_shape_tensor, subtract_dim, with_value)
from tfops_py.kernels.array._strided_slice import check_spec_shapes, dense_slice, index_tuple
from tfops_py.kernels.array.fill_ops import checked_shape, zeros_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "grad_kernels"



def _values(ctx: InferenceContext, i: int) -> list[int] | None:
    """A constant input's values as ints, or None."""
    v = ctx.input_tensor(i)
    return None if v is None else host_ints(v)


def _join(values: Sequence[int], sep: str = ",") -> str:
    return sep.join(map(str, values))


# -- BroadcastGradientArgs ----------------------------------------------------------------------------
def broadcast_reduce_indices(x: Sequence[int], y: Sequence[int]) -> tuple[list[int], list[int]] | None:
    """TF's ``BCast::grad_x_reduce_idx`` and ``grad_y_reduce_idx``; None when the shapes do not broadcast.

    Equal shapes reduce nothing; a dimension that is 1 in both is reduced for both.
    """
    if list(x) == list(y):
        return [], []
    rank = max(len(x), len(y))
    rx, ry = [1] * (rank - len(x)) + list(x), [1] * (rank - len(y)) + list(y)
    gx, gy = [], []
    for j, (a, b) in enumerate(zip(rx, ry)):
        if a != 1 and b != 1 and a != b:
            return None
        if a == 1:
            gx.append(j)
        if b == 1:
            gy.append(j)
    return gx, gy


def _incompatible(fail: Fail, x: Sequence[int], y: Sequence[int]) -> None:
    fail(f"Incompatible shapes: [{_join(x)}] vs. [{_join(y)}]")


@register_shape("BroadcastGradientArgs")
def _bga_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 1)
    ctx.with_rank(ctx.input(1), 1)
    x, y = _values(ctx, 0), _values(ctx, 1)
    if x is not None and y is not None and broadcast_reduce_indices(x, y) is None:
        _incompatible(ctx.invalid_argument, x, y)
    return [unknown_shape(1), unknown_shape(1)]


@register_kernel("BroadcastGradientArgs")
def _bga(ctx: KernelContext, s0: Any, s1: Any) -> tuple[Any, Any]:
    shapes = []
    for i, s in enumerate((s0, s1)):
        h = ctx.host(s)
        if h.ndim != 1:
            ctx.invalid_argument(f"In[{i}] must be a vector.{format_shape(h.shape)}")
        shapes.append(host_ints(h))
    result = broadcast_reduce_indices(*shapes)
    if result is None:
        _incompatible(ctx.invalid_argument, *shapes)
        raise AssertionError  # unreachable
    dt = ctx.output_dtypes[0]
    return ctx.asarray(np.array(result[0], np.int64), dt), ctx.asarray(np.array(result[1], np.int64), dt)


# -- ConcatOffset ----------------------------------------------------------------------------------------
def _concat_offsets(fail: Fail, cdim: int, shapes: list[list[int]]) -> list[list[int]]:
    """Each input's offset in the concatenation along ``cdim``, checked as TF's ConcatOffsetOp."""
    dims = len(shapes[0])
    axis = cdim + dims if cdim < 0 else cdim
    if not 0 <= axis < dims:
        fail(f"Concat dim is out of range: {cdim} vs. {dims}")
    offsets, offset = [], 0
    for i, s in enumerate(shapes):
        if len(s) != dims:
            fail(f"input {i} should contain {dims} elements, but got {len(s)}")
        for j in range(dims):
            if j != axis and s[j] != shapes[0][j]:
                fail(f"All dimensions except {axis} must match. Input {i} has shape [{_join(s[:10], ' ')}] and "
                     f"doesn't match input 0 with shape [{_join(shapes[0][:10], ' ')}].")
        offsets.append([offset if j == axis else 0 for j in range(dims)])
        offset += s[axis]
    return offsets


@register_shape("ConcatOffset")
def _concat_offset_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 0)
    cdim, shapes = _values(ctx, 0), [_values(ctx, i) for i in range(1, ctx.num_inputs)]
    if cdim is not None and all(s is not None for s in shapes):
        _concat_offsets(ctx.invalid_argument, cdim[0], shapes)  # type: ignore[arg-type]
    return [ctx.input(i) for i in range(1, ctx.num_inputs)]


@register_kernel("ConcatOffset")
def _concat_offset(ctx: KernelContext, concat_dim: Any, shape: list[Any]) -> tuple[list[Any]]:
    c = ctx.host(concat_dim)
    if c.ndim != 0:
        ctx.invalid_argument(f"Concat dim tensor should be a scalar integer, but got shape {format_shape(c.shape)}")
    hosts = [ctx.host(s) for s in shape]
    for i, h in enumerate(hosts):
        if h.ndim != 1:
            ctx.invalid_argument(f"input {i + 1} should be a vector, but got shape {format_shape(h.shape)}")
    offsets = _concat_offsets(ctx.invalid_argument, int(c), [host_ints(h) for h in hosts])
    dt = ctx.output_dtypes[0]
    return ([ctx.asarray(np.array(o, np.int64), dt) for o in offsets],)


# -- InvertPermutation -----------------------------------------------------------------------------------
def _invert(fail: Fail, perm: np.ndarray) -> np.ndarray:
    """The inverse permutation; TF's message for the first bad entry (out of range or repeated)."""
    n = perm.size
    bad = (perm < 0) | (perm >= n)
    seen_before = np.zeros(n, bool)
    ok = np.flatnonzero(~bad)
    _, first = np.unique(perm[ok], return_index=True)
    seen_before[ok] = True
    seen_before[ok[first]] = False
    errors = np.flatnonzero(bad | seen_before)
    if errors.size:
        d = int(perm[errors[0]])
        fail(f"{d} is not between 0 and {n}" if bad[errors[0]] else f"{d} is duplicated in the input.")
    inverse = np.empty(n, np.int64)
    inverse[perm] = np.arange(n)
    return inverse


@register_shape("InvertPermutation")
def _invert_permutation_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    shape = ctx.with_rank(ctx.input(0), 1)
    value = ctx.input_tensor(0)
    if value is not None:
        _invert(ctx.invalid_argument, np.asarray(value).reshape(-1))
    return [shape]


@register_kernel("InvertPermutation")
def _invert_permutation(ctx: KernelContext, x: Any) -> Any:
    h = ctx.host(x)
    if h.ndim != 1:
        ctx.invalid_argument("invert_permutation expects a 1D vector.")
    return ctx.asarray(_invert(ctx.invalid_argument, h), ctx.output_dtypes[0])


# -- StridedSliceGrad ------------------------------------------------------------------------------------
def _masks(attrs: dict) -> tuple[int, int, int, int, int]:
    return (attrs["begin_mask"], attrs["end_mask"], attrs["ellipsis_mask"], attrs["new_axis_mask"],
            attrs["shrink_axis_mask"])


def _check_dy(fail: Fail, dy: Sequence[int], final: Sequence[int]) -> None:
    if list(dy) != list(final):
        fail(f"shape of dy was {format_shape(dy)} instead of {format_shape(final)}")


@register_shape("StridedSliceGrad")
def _strided_slice_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    out = shape_from_shape_tensor(ctx, 0)
    spec_inputs = [_values(ctx, i) for i in (1, 2, 3)]
    dy = ctx.input(4)
    if out.IsFullyDefined() and dy.IsFullyDefined() and all(v is not None for v in spec_inputs):
        b, e, s = (ctx.input_tensor(i) for i in (1, 2, 3))
        check_spec_shapes(ctx.invalid_argument, b.shape, e.shape, s.shape)  # type: ignore[union-attr]
        spec = dense_slice(ctx.invalid_argument, out.as_tuple(), *spec_inputs, *_masks(ctx.attrs))  # type: ignore
        _check_dy(ctx.invalid_argument, dy.as_tuple(), spec.final_shape)
    return [out]


@register_kernel("StridedSliceGrad")
def _strided_slice_grad(ctx: KernelContext, shape: Any, begin: Any, end: Any, strides: Any, dy: Any) -> Any:
    s = ctx.host(shape)
    if s.ndim != 1:
        ctx.invalid_argument(f"shape must be 1-D, got shape.shape = {format_shape(s.shape)}")
    out_shape = checked_shape(ctx, host_ints(s))
    b, e, st = ctx.host(begin), ctx.host(end), ctx.host(strides)
    check_spec_shapes(ctx.invalid_argument, b.shape, e.shape, st.shape)
    spec = dense_slice(ctx.invalid_argument, out_shape, host_ints(b), host_ints(e), host_ints(st), *_masks(ctx.attrs))
    _check_dy(ctx.invalid_argument, tuple(dy.shape), spec.final_shape)
    if not out_shape:  # only an ellipsis or new axes: dy is the whole (scalar) gradient
        return ctx.xp.reshape(dy, ())
    out = zeros_of(ctx, out_shape, ctx.output_dtypes[0])
    if 0 not in spec.processing_shape:  # the region the slice read, shrunk axes indexed away
        region = tuple(n for n, shrunk in zip(spec.processing_shape, spec.shrink) if not shrunk)
        out[index_tuple(spec) + (...,)] = ctx.xp.reshape(dy, region)
    return out


# -- BroadcastTo ---------------------------------------------------------------------------------------
@register_shape("BroadcastTo")
def _broadcast_to_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 1)
    out = shape_from_shape_tensor(ctx, 1)
    src = ctx.input(0)
    if out.unknown_rank() or src.unknown_rank():
        return [out]
    ctx.with_rank_at_most(src, out.dims())
    dims = list(out.as_tuple())
    for i in range(1, src.dims() + 1):
        if src[-i] > 1:  # only a 1 broadcasts
            dims[-i] = merge_dim(ctx, src[-i], dims[-i])
    return [PartialTensorShape(dims)]


@register_kernel("BroadcastTo")
def _broadcast_to(ctx: KernelContext, input: Any, shape: Any) -> Any:  # noqa: A002 - TF's argument name
    s = ctx.host(shape)
    if s.ndim != 1:
        ctx.invalid_argument(f"shape must be a vector of {{int32,int64}}, got shape {format_shape(s.shape)}")
    out = checked_shape(ctx, host_ints(s))
    src = tuple(input.shape)
    if out == src:
        return input
    if len(src) > len(out):
        ctx.invalid_argument(f"Rank of input ({len(src)}) must be no greater than rank of output shape "
                             f"({len(out)}).")
    try:
        full = tuple(np.broadcast_shapes(src, out))
    except ValueError:
        ctx.invalid_argument(f"Incompatible shapes: {format_shape(src)} vs. {format_shape(out)}")
        raise  # unreachable
    if full != out:
        ctx.invalid_argument(f"Unable to broadcast tensor of shape {format_shape(src)} to tensor of shape "
                             f"{format_shape(out)}")
    return ctx.xp.asarray(ctx.xp.broadcast_to(input, out), copy=True)


# -- SplitV ----------------------------------------------------------------------------------------------
def _split_sizes(fail: Fail, sizes: list[int], size: int) -> list[int]:
    """Resolve one -1 and check the sizes add up, with TF's kernel messages."""
    if len(sizes) == 1:
        if sizes[0] != size:
            fail(f"If there is only one output, it must have the same size as the input. Input size: {size} "
                 f"output size: {sizes[0]}")
        return sizes
    if sizes.count(-1) > 1:
        fail("There can only be one -1 in the input.")
    known = sum(v for v in sizes if v != -1)
    if not (known == size if -1 not in sizes else known <= size):
        fail("Determined shape must either match input shape along split_dim exactly if fully specified, or be "
             f"less than the size of the input along split_dim if not fully specified.  Got: {known}")
    sizes = [size - known if v == -1 else v for v in sizes]
    for i, v in enumerate(sizes):
        if v < 0:
            fail(f"Split size at index {i} must be >= 0. Got: {v}")
    return sizes


@register_shape("SplitV")
def _split_v_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src, num = ctx.input(0), ctx.num_outputs
    axis = axis_from_scalar_input(ctx, 2, src.dims())
    sizes = _values(ctx, 1)
    if src.unknown_rank():
        return [unknown_shape()] * num
    if src.dims() == 0:
        ctx.invalid_argument("Can't split scalars")
    if axis == -1:
        return [unknown_shape(src.dims())] * num
    dims = src.as_list()
    if sizes is None:
        dims[axis] = -1  # type: ignore[index]
        return [PartialTensorShape(dims)] * num
    if len(sizes) != num:
        ctx.invalid_argument(f"size of the split_tensor must be 1-D and have the same elements as outputs got 1 -D "
                             f"and {len(sizes)} elements")
    if dims[axis] != -1:  # type: ignore[index]
        sizes = _split_sizes(ctx.invalid_argument, sizes, dims[axis])  # type: ignore[index]
    out = []
    for v in sizes:
        if v < -1:
            ctx.invalid_argument(f"Split size at index {sizes.index(v)} must be >= 0. Got: {v}")
        dims[axis] = v  # type: ignore[index]
        out.append(PartialTensorShape(dims))
    return out


@register_kernel("SplitV")
def _split_v(ctx: KernelContext, value: Any, size_splits: Any, axis: Any) -> tuple[list[Any]]:
    a = ctx.host(axis)
    if a.size != 1:
        ctx.invalid_argument("split_dim_tensor must have exactly one element.")
    orig, rank, num = int(a.reshape(-1)[0]), value.ndim, ctx.attrs["num_split"]
    dim = orig + rank if orig < 0 else orig
    s = ctx.host(size_splits)
    if s.ndim != 1 or s.size != num:
        ctx.invalid_argument(f"size of the split_tensor must be 1-D and have the same elements as outputs got "
                             f"{s.ndim} -D and {s.size} elements")
    if not 0 <= dim < rank:
        ctx.invalid_argument(f"-input rank(-{rank}) <= split_dim < input rank ({rank}), but got {orig}")
    sizes = _split_sizes(ctx.invalid_argument, host_ints(s), value.shape[dim])
    starts = np.cumsum([0] + sizes).tolist()
    lead = (slice(None),) * dim
    return ([value[lead + (slice(b, b + n), ...)] for b, n in zip(starts, sizes)],)


# -- ReverseV2 -------------------------------------------------------------------------------------------
def _reverse_axes(fail: Fail, axes: list[int], rank: int) -> list[int]:
    dense: list[int] = []
    for i, ax in enumerate(axes):
        canonical = ax + rank if ax < 0 else ax
        if not 0 <= canonical < rank:
            fail(f"'axis'[{i}] = {ax} is out of valid range [0, {rank - 1}")  # sic: TF omits the bracket
        if canonical in dense:
            fail(f"axis {canonical} specified more than once.")
        dense.append(canonical)
    return dense


@register_shape("ReverseV2")
def _reverse_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 1)
    src = ctx.with_rank_at_most(ctx.input(0), 8)
    axes = _values(ctx, 1)
    if axes is not None and not src.unknown_rank():
        _reverse_axes(ctx.invalid_argument, axes, src.dims())
    return [src]


@register_kernel("ReverseV2")
def _reverse_v2(ctx: KernelContext, tensor: Any, axis: Any) -> Any:
    if tensor.ndim == 0 or math.prod(tensor.shape) == 0:
        return tensor
    a = ctx.host(axis)
    if a.ndim != 1:
        ctx.invalid_argument(f"'dims' must be 1-dimension, not {a.ndim}")
    axes = _reverse_axes(ctx.invalid_argument, host_ints(a), tensor.ndim)
    if tensor.ndim > 8:
        ctx.unimplemented("reverse is not implemented for tensors of rank > 8.")
    return ctx.xp.flip(tensor, axis=tuple(axes)) if axes else tensor


# -- PadV2, MirrorPad, MirrorPadGrad ---------------------------------------------------------------------
def _paddings(ctx: KernelContext, x: Any, paddings: Any, max_rank: int, sep: str) -> list[tuple[int, int]]:
    """(before, after) per dimension, with the checks PadOp and MirrorPadOp share."""
    if x.ndim > max_rank:
        ctx.unimplemented(f"inputs rank not in [0,{max_rank}]: {x.ndim}")
    p = ctx.host(paddings)
    if not (p.ndim == 2 and p.shape[1] == 2):
        ctx.invalid_argument(f"paddings must be a matrix with 2 columns: {format_shape(p.shape)}")
    if p.shape[0] != x.ndim:
        ctx.invalid_argument(f"The first dimension of paddings must be the rank of inputs{format_shape(p.shape)}"
                             f"{sep}{format_shape(x.shape)}")
    v = host_ints(p)
    return list(zip(v[0::2], v[1::2]))


def _mirror_limits(fail: Fail, before: int, after: int, size: int, mode: str, what: str) -> None:
    """REFLECT needs pads < size; SYMMETRIC pads <= size (``what``: "" or "output ")."""
    if mode == "REFLECT" and not (before < size and after < size):
        fail(f"paddings must be less than the {what}dimension size: {before}, {after} not less than {size}")
    if mode == "SYMMETRIC" and not (before <= size and after <= size):
        fail(f"paddings must be no greater than the {what}dimension size: {before}, {after} greater than {size}")


def _pad_like_shape(ctx: InferenceContext, grad: bool) -> list[PartialTensorShape]:
    """PadShapeFn / MirrorPadShape / MirrorPadGrad's shape: each dim grows (or, for grad, shrinks) by its pads."""
    paddings = ctx.with_rank(ctx.input(1), 2)
    with_value(ctx, paddings[1], 2)
    n = paddings[0]
    src = ctx.input(0)
    if n == -1 and src.unknown_rank():
        return [unknown_shape()]
    n = src.dims() if n == -1 else n
    src = ctx.with_rank(src, n)
    value = ctx.input_tensor(1)
    if value is None:
        return [unknown_shape(n)]
    pads = host_ints(value)
    mode = ctx.attrs.get("mode")
    dims = []
    for i, d in enumerate(src):
        before, after = pads[2 * i], pads[2 * i + 1]
        if before < 0 or after < 0:
            ctx.invalid_argument("Paddings must be non-negative")
        if grad and d != -1 and before + after >= d:
            ctx.invalid_argument(f"Total paddings must be less than the input dimension size: {before + after} was "
                                 f"not less than {d}")
        out = subtract_dim(ctx, d, before + after) if grad else add_dim(ctx, d, before + after)
        if mode and d != -1:
            _mirror_limits(ctx.invalid_argument, before, after, out if grad else d, mode, "output " if grad else "")
        dims.append(out)
    return [PartialTensorShape(dims)]


register_shape("PadV2", "MirrorPad")(lambda ctx: _pad_like_shape(ctx, grad=False))
register_shape("MirrorPadGrad")(lambda ctx: _pad_like_shape(ctx, grad=True))


@register_kernel("PadV2")
def _pad_v2(ctx: KernelContext, input: Any, paddings: Any, constant_values: Any) -> Any:  # noqa: A002
    pads = _paddings(ctx, input, paddings, 8, " ")
    if constant_values.ndim != 0:
        ctx.invalid_argument(f"constant_values must be a scalar. Found: {format_shape(constant_values.shape)}")
    for before, after in pads:
        if before < 0 or after < 0:
            ctx.invalid_argument(f"Paddings must be non-negative: {before} {after}")
    if not any(b or a for b, a in pads):
        return input
    xp = ctx.xp
    shape = tuple(b + d + a for (b, a), d in zip(pads, input.shape))
    out = xp.asarray(xp.broadcast_to(constant_values, shape), copy=True)
    out[tuple(slice(b, b + d) for (b, _), d in zip(pads, input.shape))] = input
    return out


def _axis_slice(rank: int, axis: int, start: int, stop: int) -> tuple:
    return (slice(None),) * axis + (slice(start, stop),) + (slice(None),) * (rank - axis - 1)


@register_kernel("MirrorPad")
def _mirror_pad(ctx: KernelContext, input: Any, paddings: Any) -> Any:  # noqa: A002 - TF's argument name
    pads = _paddings(ctx, input, paddings, 5, ", ")
    mode, xp, x = ctx.attrs["mode"], ctx.xp, input
    for before, after in pads:
        if before < 0 or after < 0:
            ctx.invalid_argument(f"paddings must be non-negative: {before} {after}")
    for (before, after), n in zip(pads, input.shape):
        _mirror_limits(ctx.invalid_argument, before, after, n, mode, "")
    skip = 1 if mode == "REFLECT" else 0  # REFLECT leaves out the edge element
    for axis, ((before, after), n) in enumerate(zip(pads, input.shape)):
        parts = []
        if before:
            parts.append(xp.flip(x[_axis_slice(x.ndim, axis, skip, skip + before)], axis=axis))
        parts.append(x)
        if after:
            parts.append(xp.flip(x[_axis_slice(x.ndim, axis, n - skip - after, n - skip)], axis=axis))
        if len(parts) > 1:
            x = xp.concat(parts, axis=axis)
    return x


@register_kernel("MirrorPadGrad")
def _mirror_pad_grad(ctx: KernelContext, input: Any, paddings: Any) -> Any:  # noqa: A002 - TF's argument name
    """Fold each padded border back onto the elements it mirrored (TF's order: before, then after)."""
    pads = _paddings(ctx, input, paddings, 5, " ")
    mode, xp, x = ctx.attrs["mode"], ctx.xp, input
    skip = 1 if mode == "REFLECT" else 0
    for (before, after), size in zip(pads, input.shape):
        if before < 0 or after < 0:
            ctx.invalid_argument(f"Paddings must be non-negative: {before}, {after}")
        if not before + after < size:
            ctx.invalid_argument(f"Total paddings must be less than the input dimension size: {before + after} was "
                                 f"not less than {size}")
        _mirror_limits(ctx.invalid_argument, before, after, size - before - after, mode, "output ")
    for axis, (before, after) in enumerate(pads):
        if not before and not after:
            continue
        n = x.shape[axis] - before - after
        out = xp.asarray(x[_axis_slice(x.ndim, axis, before, before + n)], copy=True)
        if before:
            where = _axis_slice(x.ndim, axis, skip, skip + before)
            out[where] = out[where] + xp.flip(x[_axis_slice(x.ndim, axis, 0, before)], axis=axis)
        if after:
            where = _axis_slice(x.ndim, axis, n - skip - after, n - skip)
            out[where] = out[where] + xp.flip(x[_axis_slice(x.ndim, axis, before + n, before + n + after)], axis=axis)
        x = out
    return x


# -- conformance (tests/conformance) -------------------------------------------------------------------------
# Inputs related in ways the golden cases of tfops_py/kernels/nn/_grad_cases.py spell out (shape vectors that
# broadcast, offsets of a concatenation, slices and their gradients …); tests/kernels/test_grad_support_ops.py
# draws live ones.
for _op in ("BroadcastGradientArgs", "ConcatOffset", "InvertPermutation", "StridedSliceGrad", "BroadcastTo", "SplitV",
            "PadV2", "MirrorPad", "MirrorPadGrad"):
    conformance(_op, generate=False, compare="acc" if _op == "MirrorPadGrad" else "ew",
                no_gradient="second-order: TF Python only (not in TF's C++ API); not ported yet"
                if _op == "StridedSliceGrad" else None)
conformance("ReverseV2", tensor=values(specials=True), axis=axis_of("tensor", vector=True))

divergence(("BroadcastGradientArgs", "ConcatOffset", "InvertPermutation", "MirrorPad"), when="constant inputs",
           tf="fail when run", ours="fail at build time with the kernel's message")
