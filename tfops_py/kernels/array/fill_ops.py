"""Ops that make new tensors from a few values: Fill, ZerosLike, OnesLike, OneHot, Range."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DT_HALF, DT_INT64, DT_STRING, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._shape_util import INT64_MAX, dim_from_scalar_input, host_ints, shape_from_shape_tensor
from tfops_py.kernels.registry import KernelContext, register_kernel


def zeros_of(ctx: KernelContext, shape: tuple[int, ...], dt: DataType):
    """A zero tensor of TF dtype ``dt`` (``b""`` for strings, which only NumPy holds)."""
    if dt == DT_STRING:
        return ctx.xp.full(shape, b"", dtype=ctx.dtype(dt))
    return ctx.xp.zeros(shape, dtype=ctx.dtype(dt))


def checked_shape(ctx: KernelContext, dims: list[int]) -> tuple[int, ...]:
    """``TensorShapeUtils::MakeShape``: non-negative dims whose product fits in int64."""
    for d in dims:
        if d < 0:
            ctx.invalid_argument(f"Dimension {d} must be >= 0")
    if 0 not in dims and math.prod(dims) > INT64_MAX:
        ctx.invalid_argument(f"Shape {format_shape(dims)} would have more than 2**63 - 1 elements")
    return tuple(dims)


# -- Fill, ZerosLike, OnesLike ---------------------------------------------------------------------
@register_shape("Fill")
def _fill_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 1)
    ctx.with_rank(ctx.input(1), 0)
    out = shape_from_shape_tensor(ctx, 0)  # rejects values < -1 first, as TF's refiner does
    if ctx.input_tensor(0) is not None and any(d < 0 for d in out):
        ctx.invalid_argument("Fill dimensions must be >= 0")
    return [out]


@register_kernel("Fill")
def _fill(ctx: KernelContext, dims, value):
    d = ctx.host(dims)
    if d.ndim > 1:
        ctx.invalid_argument(f"dims must represent a vector, got shape {format_shape(d.shape)}")
    vshape = tuple(value.shape)
    if not (vshape == () or vshape == (1,)):
        ctx.invalid_argument(f"value must represent a scalar, got shape {format_shape(vshape)}")
    shape = checked_shape(ctx, host_ints(d))
    xp = ctx.xp
    return xp.asarray(xp.broadcast_to(xp.reshape(value, ()), shape), copy=True)


register_shape("ZerosLike", "OnesLike")(unchanged_shape)


@register_kernel("ZerosLike")
def _zeros_like(ctx: KernelContext, x):
    if ctx.output_dtypes[0] == DataType.DT_VARIANT:  # a TensorList (gradients of list ops)
        from tfops_py.kernels.control_flow.list_ops import zeros_like_list

        return zeros_like_list(ctx, x)
    return zeros_of(ctx, tuple(x.shape), ctx.output_dtypes[0])


@register_kernel("OnesLike")
def _ones_like(ctx: KernelContext, x):
    return ctx.xp.ones(tuple(x.shape), dtype=ctx.dtype(ctx.output_dtypes[0]))


# -- OneHot -------------------------------------------------------------------------------------------
@register_shape("OneHot")
def _one_hot_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    axis = ctx.attr("axis")
    if axis < -1:
        ctx.invalid_argument("axis must be >= -1")
    depth = dim_from_scalar_input(ctx, 1)
    indices = ctx.input(0)
    if indices.unknown_rank():
        return [unknown_shape()]
    dims = indices.as_list()
    at = (axis + len(dims) + 1) % (len(dims) + 1)  # TF's rule, even for an axis the kernel rejects
    return [PartialTensorShape(dims[:at] + [depth] + dims[at:])]  # type: ignore[operator]


def _one_hot_checks(ctx: KernelContext, indices, depth, on_value, off_value) -> tuple[int, int]:
    """(depth, axis of the new dimension), checked as TF's kernel does."""
    axis = ctx.attrs["axis"]
    rank = len(indices.shape)
    if not (axis == -1 or 0 <= axis < rank + 1):
        ctx.invalid_argument(f"Expected axis to be -1 or between [0, {rank + 1}).  But received: {axis}")
    for name, t in (("depth", depth), ("on_value", on_value), ("off_value", off_value)):
        if len(t.shape) != 0:
            ctx.invalid_argument(f"{name} must be a scalar, but got: {format_shape(t.shape)}")
    n = int(ctx.host(depth))
    if n < 0:
        ctx.invalid_argument(f"depth must be non-negative, got: {n}")
    if math.prod(indices.shape) * n > INT64_MAX:
        ctx.invalid_argument(f"OneHot result would have shape {format_shape(indices.shape)} + [{n}], "
                             f"which exceeds 2**63 - 1 elements")
    return n, rank if axis == -1 else axis


@register_kernel("OneHot")
def _one_hot(ctx: KernelContext, indices, depth, on_value, off_value):
    xp = ctx.xp
    n, at = _one_hot_checks(ctx, indices, depth, on_value, off_value)
    where = [1] * (len(indices.shape) + 1)
    where[at] = n
    classes = xp.reshape(xp.arange(n, dtype=ctx.dtype(DT_INT64)), tuple(where))
    hot = xp.expand_dims(xp.astype(indices, ctx.dtype(DT_INT64)), axis=at) == classes
    return xp.where(hot, on_value, off_value)


@register_kernel("OneHot", backend="numpy")
def _one_hot_numpy(ctx: KernelContext, indices, depth, on_value, off_value):
    """Fill with off_value, then write on_value at the valid (index, class) pairs only."""
    n, at = _one_hot_checks(ctx, indices, depth, on_value, off_value)
    out = np.empty(indices.shape + (n,), dtype=on_value.dtype)
    out[...] = off_value
    flat = indices.reshape(-1)
    rows = np.flatnonzero((flat >= 0) & (flat < n))
    out.reshape(flat.size, n)[rows, flat[rows]] = on_value
    return out if at == indices.ndim else np.moveaxis(out, -1, at)


# -- Range ----------------------------------------------------------------------------------------------
def format_number(v: Any) -> str:
    """A number as TF's StrCat prints it: integers in full, floats as ``%.6g`` (``5``, ``0.1``, ``1e+30``)."""
    if np.issubdtype(v.dtype, np.integer):
        return str(int(v))
    return f"{float(v):.6g}"


def range_size(start: Any, limit: Any, delta: Any) -> float | int:
    """TF's element count, computed in the op's dtype (floats may give inf or nan)."""
    if np.issubdtype(start.dtype, np.integer):
        span, step = abs(int(limit) - int(start)), abs(int(delta))
        return -(-span // step)
    with np.errstate(all="ignore"):
        return float(np.ceil(np.abs((limit - start) / delta)))


@register_shape("Range")
def _range_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    for i, name in enumerate(("start", "limit", "delta")):
        s = ctx.input(i)
        if not s.unknown_rank() and s.dims() != 0:
            ctx.invalid_argument(f"Shape must be rank 0 but is rank {s.dims()}\n\t for '{name}'")
    values = [ctx.input_tensor(i) for i in range(3)]
    if any(v is None for v in values):
        return [PartialTensorShape([-1])]
    if ctx.attr("Tidx") == DT_HALF:  # TF's shape function has no half case
        ctx.invalid_argument(f"Unsupported dtype{int(DT_HALF)}")
    dt = ctx.attr("Tidx").numpy_dtype
    start, limit, delta = (np.asarray(v).astype(dt).reshape(())[()] for v in values)  # type: ignore[union-attr]
    if start > limit and delta > 0:
        ctx.invalid_argument(f"Requires start <= limit when delta > 0: {format_number(start)}/{format_number(limit)}")
    if start < limit and delta < 0:
        ctx.invalid_argument(f"Requires start >= limit when delta < 0: {format_number(start)}/{format_number(limit)}")
    if delta == 0:
        ctx.invalid_argument("Requires delta != 0")
    size = range_size(start, limit, delta)
    if size != size:  # NaN (TF makes it a dimension of INT64_MIN); the kernel will reject the values
        return [PartialTensorShape([-1])]
    if size > INT64_MAX:
        ctx.invalid_argument(f"Requires ((limit - start) / delta) <= {INT64_MAX}")
    return [PartialTensorShape([int(size)])]


def _range_checks(ctx: KernelContext, start, limit, delta) -> tuple[int, np.generic, np.generic]:
    """(element count, start, delta) as host scalars, checked as TF's kernel does."""
    vals = []
    for name, t in (("start", start), ("limit", limit), ("delta", delta)):
        h = ctx.host(t)
        if not (h.ndim == 0 or h.shape == (1,)):
            ctx.invalid_argument(f"{name} must be a scalar, not shape {format_shape(h.shape)}")
        vals.append(h.reshape(())[()])
    s, lim, d = vals
    if d == 0:
        ctx.invalid_argument(f"Requires delta != 0: {format_number(d)}")
    if d > 0:
        if not s <= lim:
            ctx.invalid_argument(f"Requires start <= limit when delta > 0: {format_number(s)}/{format_number(lim)}")
    elif not s >= lim:
        ctx.invalid_argument(f"Requires start >= limit when delta < 0: {format_number(s)}/{format_number(lim)}")
    size = range_size(s, lim, d)
    if not size <= INT64_MAX:  # also catches NaN, as TF's comparison does
        ctx.invalid_argument(f"Requires ((limit - start) / delta) <= {INT64_MAX}")
    return int(size), s, d


@register_kernel("Range")
def _range(ctx: KernelContext, start, limit, delta):
    xp = ctx.xp
    n, s, d = _range_checks(ctx, start, limit, delta)
    dtype = ctx.dtype(ctx.output_dtypes[0])
    i = xp.arange(n, dtype=ctx.dtype(DT_INT64))
    if np.issubdtype(s.dtype, np.integer):
        # start + i*delta, exact (all values lie within [start, limit]).
        return xp.astype(i * int(d) + int(s), dtype)
    # TF computes start + T(i) * delta, rounding to the op's dtype at each step.
    return xp.astype(i, dtype) * xp.reshape(delta, ()) + xp.reshape(start, ())


@register_kernel("Range", backend="numpy")
def _range_numpy(ctx: KernelContext, start, limit, delta):
    """float32/float64 in place (no int64 index array); the other dtypes as the generic kernel."""
    n, s, d = _range_checks(ctx, start, limit, delta)
    if s.dtype not in (np.float32, np.float64):
        return _range(ctx, start, limit, delta)
    out = np.arange(n, dtype=s.dtype)  # exactly T(i) for these two dtypes
    out *= d
    out += s
    return out
