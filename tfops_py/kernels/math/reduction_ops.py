"""Sum, Mean, Max, Min, Prod, All, Any, EuclideanNorm, ArgMax and ArgMin with TF's axis checks and dtype rules.

``reduction_indices`` may be any int32/int64 tensor (scalar, vector, empty; negative axes
count from the end).  Outputs keep the input's dtype: integer sums and products wrap like
TF's, integer Mean sums in 64 bits and divides toward zero, half and bfloat16 accumulate
in float.  An empty reduction gives the reducer's identity (Max: lowest, Min: highest,
Mean: NaN for real floats, 0 for integers and complex, All: true, Any: false).
EuclideanNorm is ``sqrt(sum(x * conj(x)))`` with the sum of squares in the type (integers
wrap, and their square root is truncated as C++'s ``static_cast`` of ``std::sqrt`` does).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, axis_of, conformance, divergence, reduction_axes, uniform, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import compute_dtype, dtype_limits, trunc_divide
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "math_ops"
REDUCTIONS = ("Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm")
_SIGNED_KINDS = "i"


def _normalize_axes(ctx: Any, axes: np.ndarray, rank: int, build: bool) -> tuple[int, ...]:
    """Sorted non-negative axes; TF's messages for out-of-range and repeated axes."""
    out: list[int] = []
    for a in axes.reshape(-1).tolist():
        if not -rank <= a < rank:
            ctx.invalid_argument(f"Invalid reduction dimension {a} for input with {rank} dimensions." if build else
                                 f"Invalid reduction dimension ({a} for input with {rank} dimension(s)")
        a %= rank
        if a in out:
            ctx.invalid_argument(f"Invalid reduction arguments: Axes contains duplicate dimension: {a}")
        out.append(a)
    return tuple(sorted(out))


def _reduced_dims(dims: tuple[int, ...], axes: tuple[int, ...], keep: bool) -> list[int]:
    return [1 if i in axes else d for i, d in enumerate(dims)] if keep else \
        [d for i, d in enumerate(dims) if i not in axes]


@register_shape(*REDUCTIONS)
def _reduction_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x, idx = ctx.input(0), ctx.with_rank_at_most(ctx.input(1), 1, "reduction_indices")
    keep = ctx.attr("keep_dims")
    value = ctx.input_tensor(1)
    if value is None:
        if idx.num_elements() == 0:
            return [x]
        if x.unknown_rank():
            return [unknown_shape()]
        if keep:
            return [unknown_shape(x.dims())]
        return [unknown_shape(x.dims() - 1) if idx.dims() == 0 and x.dims() > 0 else unknown_shape()]
    if x.unknown_rank():
        return [unknown_shape()]
    axes = _normalize_axes(ctx, np.asarray(value), x.dims(), build=True)
    return [PartialTensorShape(_reduced_dims(x.as_tuple(), axes, keep))]


def _sum(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool, reducer: str = "sum") -> Any:
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    fn = getattr(xp, reducer)
    if dt.is_integer:  # wraps modulo 2^bits exactly as TF's in-type accumulation
        return fn(x, axis=axes, keepdims=keep, dtype=x.dtype)
    wide = compute_dtype(dt)
    if wide != dt:
        return xp.astype(fn(xp.astype(x, ctx.dtype(wide)), axis=axes, keepdims=keep), ctx.dtype(dt))
    return fn(x, axis=axes, keepdims=keep)


def _prod(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool) -> Any:
    return _sum(ctx, x, axes, keep, reducer="prod")


def _count(x: Any, axes: tuple[int, ...]) -> int:
    n = 1
    for a in axes:
        n *= x.shape[a]
    return n


def _identity(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool, value: Any) -> Any:
    dims = _reduced_dims(tuple(x.shape), axes, keep)
    return ctx.xp.full(tuple(dims), value, dtype=ctx.dtype(ctx.output_dtypes[0]))


def _mean(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool) -> Any:
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    n = _count(x, axes)
    if n == 0:
        return _identity(ctx, x, axes, keep, float("nan") if dt.is_floating else 0)  # complex: 0, as TF
    if not dt.is_integer:
        wide = compute_dtype(dt)
        mean = xp.sum(x if wide == dt else xp.astype(x, ctx.dtype(wide)), axis=axes, keepdims=keep) / n
        return mean if wide == dt else xp.astype(mean, ctx.dtype(dt))
    signed = dt.numpy_dtype.kind in _SIGNED_KINDS
    acc = ctx.dtype(DataType.DT_INT64 if signed else DataType.DT_UINT64)
    total = xp.sum(x, axis=axes, keepdims=keep, dtype=acc)
    return xp.astype(trunc_divide(xp, total, n, signed), ctx.dtype(dt))


def _extremum(reducer: str) -> Any:
    def kernel(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool) -> Any:
        if _count(x, axes) == 0:
            dt = ctx.output_dtypes[0]
            lowest, highest = dtype_limits(dt) if dt.is_integer else (float("-inf"), float("inf"))
            return _identity(ctx, x, axes, keep, lowest if reducer == "max" else highest)
        return getattr(ctx.xp, reducer)(x, axis=axes, keepdims=keep)

    return kernel


def _logical(reducer: str) -> Any:
    def kernel(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool) -> Any:
        return getattr(ctx.xp, reducer)(x, axis=axes, keepdims=keep)  # empty: all -> true, any -> false

    return kernel


def _euclidean_norm(ctx: KernelContext, x: Any, axes: tuple[int, ...], keep: bool) -> Any:
    """``sqrt(sum(x conj(x)))``; the sum of squares in the type (integers wrap, float32 squares may overflow)."""
    xp, dt = ctx.xp, ctx.output_dtypes[0]
    if dt.is_complex:
        squares = xp.real(x) * xp.real(x) + xp.imag(x) * xp.imag(x)
        return xp.astype(xp.sqrt(xp.sum(squares, axis=axes, keepdims=keep)), x.dtype)
    total = _sum(ctx, x * x, axes, keep)
    if not dt.is_integer:
        return xp.sqrt(total) if compute_dtype(dt) == dt else \
            xp.astype(xp.sqrt(xp.astype(total, ctx.dtype(compute_dtype(dt)))), total.dtype)
    f64 = ctx.dtype(DataType.DT_DOUBLE)
    negative = total < 0 if dt.numpy_dtype.kind in _SIGNED_KINDS else xp.zeros(total.shape, dtype=xp.bool)
    root = xp.astype(xp.sqrt(xp.astype(xp.where(negative, xp.zeros_like(total), total), f64)), total.dtype)
    # sqrt of a wrapped-negative sum is NaN; C++'s cast of NaN gives INT_MIN (0 once narrowed to 8/16 bits)
    nan_as = dtype_limits(dt)[0] if dt.numpy_dtype.itemsize >= 4 else 0
    return xp.where(negative, xp.full_like(root, nan_as), root)


_IMPLS = {"Sum": _sum, "Mean": _mean, "Prod": _prod, "Max": _extremum("max"), "Min": _extremum("min"),
          "All": _logical("all"), "Any": _logical("any"), "EuclideanNorm": _euclidean_norm}


def _reduction_kernel(impl: Any) -> Any:
    def kernel(ctx: KernelContext, x: Any, indices: Any) -> Any:
        axes = _normalize_axes(ctx, ctx.host(indices), x.ndim, build=False)
        return impl(ctx, x, axes, ctx.attrs["keep_dims"])

    return kernel


for _op in REDUCTIONS:
    register_kernel(_op)(_reduction_kernel(_IMPLS[_op]))


# -- ArgMax -----------------------------------------------------------------------------------------

def _arg_axis(ctx: Any, dim: int, dims: tuple[int, ...]) -> int:
    """The axis ``dim`` names in an input of shape ``dims`` (TF's kernel messages, which name ``dim``)."""
    rank = len(dims)
    if not -rank <= dim < rank:
        ctx.invalid_argument(f"Expected dimension in the range [{-rank}, {rank}), but got {dim}")
    axis = dim % rank
    if dims[axis] == 0:
        ctx.invalid_argument(f"Reduction axis {dim} is empty in shape {PartialTensorShape(dims)}")
    return axis


@register_shape("ArgMax", "ArgMin")
def _arg_max_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's shape function: a scalar for rank <= 1, the range of a constant dimension checked (emptiness is
    the kernel's to report)."""
    x, dim = ctx.input(0), ctx.input(1)
    if dim.dims() > 0:
        ctx.invalid_argument(f"dim must be a scalar, but received tensor of shape: {dim}")
    if x.unknown_rank():
        return [unknown_shape()]
    rank = x.dims()
    if rank <= 1:
        return [PartialTensorShape([])]
    value = ctx.input_tensor(1)
    if value is None:
        return [unknown_shape(rank - 1)]
    d = int(value)
    if not -rank <= d < rank:
        ctx.invalid_argument(f"Dimension ({d}) must be in the range [{-rank}, {rank}), where {rank} is the "
                             f"number of dimensions in the input.")
    axis = d % rank
    return [PartialTensorShape([n for i, n in enumerate(x.as_tuple()) if i != axis])]


def _arg_extremum(largest: bool) -> Any:
    def kernel(ctx: KernelContext, x: Any, dimension: Any) -> Any:
        """First index of the largest (smallest) value; NaN never wins (an all-NaN slice gives 0), as TF."""
        xp = ctx.xp
        dim = ctx.host(dimension)
        if dim.ndim != 0:
            ctx.invalid_argument(f"dim must be a scalar, but received tensor of shape: {format_shape(dim.shape)}")
        axis = _arg_axis(ctx, int(dim), tuple(x.shape))
        dt = ctx.input_dtypes[0]
        if dt == DataType.DT_BOOL:
            x = xp.astype(x, ctx.dtype(DataType.DT_UINT8))
        elif dt.is_floating:
            if compute_dtype(dt) != dt:
                x = xp.astype(x, ctx.dtype(compute_dtype(dt)))
            # TF starts from (index 0, lowest) and takes strictly greater values (ArgMin: highest, smaller)
            lowest, highest = dtype_limits(dt)
            x = xp.where(x >= lowest, x, lowest) if largest else xp.where(x <= highest, x, highest)
        found = xp.argmax(x, axis=axis) if largest else xp.argmin(x, axis=axis)
        return xp.astype(found, ctx.dtype(ctx.output_dtypes[0]))

    return kernel


register_kernel("ArgMax")(_arg_extremum(largest=True))
register_kernel("ArgMin")(_arg_extremum(largest=False))


# -- conformance (tests/conformance) ------------------------------------------------------------------------
for _op in ("Sum", "Mean"):
    conformance(_op, input=values(), reduction_indices=reduction_axes("input"), keep_dims=BOOL, compare="acc",
                live=20, grad=dict(reduction_indices=axis_of("input", vector=True)))
for _op in ("Max", "Min"):
    conformance(_op, input=values(specials=True), reduction_indices=reduction_axes("input"), keep_dims=BOOL,
                compare="acc", live=20)
conformance("Prod", input=uniform(-2, 2), reduction_indices=reduction_axes("input"), keep_dims=BOOL,
            compare="acc", live=20)
for _op in ("ArgMax", "ArgMin"):
    conformance(_op, input=values(specials=True), dimension=axis_of("input", out_of_range=True), live=80,
                no_gradient="not differentiable: TF Python's gradient is None, TF's C++ API registers none")
for _op in ("All", "Any"):
    conformance(_op, input=values(), reduction_indices=reduction_axes("input"), keep_dims=BOOL, live=20)
conformance("EuclideanNorm", input=values(specials=True), reduction_indices=reduction_axes("input"), keep_dims=BOOL,
            compare="acc", live=20)

divergence(("ArgMax", "ArgMin"), when="an int16 `dimension`",
           tf="reads it as a wider integer (uninitialised bytes: spurious out-of-range errors at build and run time)",
           ours="reads the int16 value", dtypes={"Tidx": (DataType.DT_INT16,)})

divergence(("Sum", "Mean", "Prod", "EuclideanNorm"), when="half / bfloat16",
           tf="accumulate in the type (a tree of half additions)",
           ours="accumulate in float: more accurate; results can differ by a few ulps, and where a half intermediate "
                "overflows TF gives inf (`Mean([60000, 60000, 1])`)")
divergence(REDUCTIONS, when="repeated reduction axes", tf="error at run time",
           ours="error at build time when the axes are a constant")
divergence(REDUCTIONS, when="reduction axis −2⁶³ (int64)",
           tf="returns the input unreduced (overflow in TF's range check)", ours="`Invalid reduction dimension`")
