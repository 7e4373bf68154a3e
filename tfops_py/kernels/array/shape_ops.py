"""Ops that read or rearrange a shape: Shape, ShapeN, Size, Rank, Reshape, ExpandDims, Squeeze, Transpose.

Reshape, ExpandDims, Squeeze and Transpose return views on NumPy (no copy).
"""
from __future__ import annotations

import math

from tfops_py.framework.dtypes import DT_INT32, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import (INT64_MAX, divide_dim, host_ints, num_elements,
                                          shape_from_shape_tensor, with_value)
from tfops_py.kernels.registry import KernelContext, register_kernel

_INT32_MAX = 2**31 - 1
_MAX_DIMS = 254  # TensorShape::MaxDimensions()


# -- Shape, ShapeN, Size, Rank ----------------------------------------------------------------------
@register_shape("Shape", "ShapeN")
def _shape_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([ctx.input(i).dims()]) for i in range(ctx.num_inputs)]


@register_shape("Size", "Rank")
def _scalar_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


def _shape_vector(ctx: KernelContext, dims: tuple[int, ...], out_type: DataType, where: str) -> object:
    if out_type == DT_INT32:
        for i, d in enumerate(dims):
            if d >= _INT32_MAX:  # TF's FastBoundsCheck(d, INT32_MAX) is strict
                ctx.invalid_argument(f"{where} dim {i} is {d}")
    return ctx.asarray(list(dims), out_type)


@register_kernel("Shape")
def _shape(ctx: KernelContext, x):
    return _shape_vector(ctx, tuple(x.shape), ctx.output_dtypes[0], "Shape output type is 32-bit  but")


@register_kernel("ShapeN")
def _shape_n(ctx: KernelContext, inputs):
    out_type = ctx.output_dtypes[0]
    return ([_shape_vector(ctx, tuple(x.shape), out_type, f"ShapeN output type is 32-bit but shape {i}")
             for i, x in enumerate(inputs)],)


@register_kernel("Size")
def _size(ctx: KernelContext, x):
    n = math.prod(x.shape)
    if ctx.output_dtypes[0] == DT_INT32 and n >= _INT32_MAX:
        ctx.invalid_argument("Number of elements was larger than representable by 32-bit output type")
    return ctx.asarray(n, ctx.output_dtypes[0])


@register_kernel("Rank")
def _rank(ctx: KernelContext, x):
    return ctx.asarray(len(x.shape), DT_INT32)


# -- Reshape -----------------------------------------------------------------------------------------
@register_shape("Reshape")
def _reshape_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's SetOutputShapeForReshape: infers one unknown dim from the element counts."""
    src = ctx.input(0)
    out = shape_from_shape_tensor(ctx, 1)
    if out.unknown_rank() or src.unknown_rank():
        return [out]

    def known_product(shape: PartialTensorShape) -> tuple[int, int, bool]:
        """(product of known dims, index of the one unknown dim or -1, more than one unknown)."""
        n = num_elements(shape)
        if n != -1:
            return n, -1, False
        prod, idx = 1, -1
        for i, d in enumerate(shape):
            if d == -1:
                if idx >= 0:
                    return prod, idx, True
                idx = i
            else:
                prod *= d
        return prod, idx, False

    out_elems, out_idx, too_many = known_product(out)
    if too_many:
        return [out]
    in_elems, in_idx, too_many = known_product(src)
    if too_many:
        return [out]
    if in_idx < 0 and out_idx < 0:
        if in_elems != out_elems:
            ctx.invalid_argument(f"Cannot reshape a tensor with {in_elems} elements to shape {out} "
                                 f"({out_elems} elements)")
    elif in_idx < 0 and out_elems > 0:
        dims = out.as_list()
        dims[out_idx] = divide_dim(ctx, in_elems, out_elems)  # type: ignore[index]
        out = PartialTensorShape(dims)
    elif out_idx < 0 and in_idx >= 0 and in_elems != 0:
        divide_dim(ctx, out_elems, in_elems)  # only checks: the unknown input dim is not an output dim
    return [out]


def reshape_dims(ctx: KernelContext, in_dims: tuple[int, ...], sizes: list[int]) -> tuple[int, ...]:
    """The output shape of Reshape(tensor of ``in_dims``, ``sizes``), validated as TF's kernel does."""
    out: list[int] = []
    product, unknown, has_zero = 1, -1, False
    for d, size in enumerate(sizes):
        if size == -1:
            if unknown != -1:
                ctx.invalid_argument(f"Only one input size may be -1, not both {unknown} and {d}")
            unknown = d
            out.append(1)
        elif size < 0:
            ctx.invalid_argument(f"Size {d} must be non-negative, not {size}")
        elif size == 0:
            out.append(0)
            has_zero = True
        else:
            if math.prod(out) * size > INT64_MAX:
                ctx.invalid_argument(f"Shape [{', '.join(map(str, sizes))}] has too many elements")
            out.append(size)
            product *= size
    total = math.prod(in_dims)
    if unknown != -1:
        # Zero-sized input dims are left out when the request has a zero too, so the other
        # dims can still be inferred (TF's rule).
        known = math.prod(d for d in in_dims if d > 0 or not has_zero)
        missing = known // product
        if not (has_zero and 0 in in_dims) and product * missing != known:
            ctx.invalid_argument(f"Input to reshape is a tensor with {known} values, but the requested shape "
                                 f"requires a multiple of {product}")
        out[unknown] = missing
    if math.prod(out) != total:
        ctx.invalid_argument(f"Input to reshape is a tensor with {total} values, but the requested shape "
                             f"has {math.prod(out)}")
    return tuple(out)


@register_kernel("Reshape")
def _reshape(ctx: KernelContext, tensor, shape):
    sizes = ctx.host(shape)
    if sizes.ndim > 1:
        ctx.invalid_argument(f"sizes input must be 1-D, not {format_shape(sizes.shape)}")
    if sizes.size >= _MAX_DIMS:
        ctx.invalid_argument(f"too many dimensions: must be < {_MAX_DIMS}, but received {sizes.size}")
    return ctx.xp.reshape(tensor, reshape_dims(ctx, tuple(tensor.shape), host_ints(sizes)))


# -- ExpandDims, Squeeze ---------------------------------------------------------------------------
@register_shape("ExpandDims")
def _expand_dims_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    dim_t = ctx.input_tensor(1)
    if dim_t is not None and dim_t.size != 1:
        ctx.invalid_argument("'dim' input must be a tensor with a single value")
    if dim_t is None or src.unknown_rank():
        return [unknown_shape()]
    dim = host_ints(dim_t)[0]
    rank = src.dims()
    if dim < -rank - 1 or dim > rank:
        ctx.invalid_argument(f"dim {dim} not in the interval [{-rank - 1}, {rank}].")
    if dim < 0:
        dim += rank + 1
    dims = src.as_list()
    return [PartialTensorShape(dims[:dim] + [1] + dims[dim:])]  # type: ignore[operator]


@register_kernel("ExpandDims")
def _expand_dims(ctx: KernelContext, x, dim):
    dim_v = ctx.host(dim)
    if dim_v.size != 1:
        ctx.invalid_argument("'dim' must be a tensor with a single value")
    d = host_ints(dim_v)[0]
    shape = tuple(x.shape)
    rank = len(shape)
    if d < -1 - rank or d > rank:
        ctx.invalid_argument(f"Tried to expand dim index {d} for tensor with {rank} dimensions.")
    if d < 0:
        d += rank + 1
    return ctx.xp.reshape(x, shape[:d] + (1,) + shape[d:])


@register_shape("Squeeze")
def _squeeze_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    if src.unknown_rank():
        return [unknown_shape()]
    rank = src.dims()
    wanted = set()
    for i, d in enumerate(ctx.attr("squeeze_dims")):
        if d < -rank or d >= rank:
            ctx.invalid_argument(f"squeeze_dims[{i}] not in [{-rank},{rank}).")
        wanted.add(d + rank if d < 0 else d)
    out = []
    for i, d in enumerate(src):
        explicit = i in wanted
        if d == -1:
            if explicit:
                continue  # assumed to be 1 at run time
            if not wanted:
                return [unknown_shape()]
        elif d == 1:
            if explicit or not wanted:
                continue
        elif explicit:
            ctx.invalid_argument(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
        out.append(d)
    return [PartialTensorShape(out)]


@register_kernel("Squeeze")
def _squeeze(ctx: KernelContext, x):
    shape = tuple(x.shape)
    rank = len(shape)
    wanted = set()
    for d in ctx.attrs["squeeze_dims"]:
        if d < -rank or d >= rank:
            ctx.invalid_argument(f"Tried to squeeze dim index {d} for tensor with {rank} dimensions.")
        wanted.add(d + rank if d < 0 else d)
    out = []
    for i, d in enumerate(shape):
        if wanted:
            if i in wanted:
                if d != 1:
                    ctx.invalid_argument(f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
                continue
        elif d == 1:
            continue
        out.append(d)
    return ctx.xp.reshape(x, tuple(out))


# -- Transpose ----------------------------------------------------------------------------------------
@register_shape("Transpose", "ConjugateTranspose")
def _transpose_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src, perm_shape = ctx.input(0), ctx.input(1)
    perm = ctx.input_tensor(1)
    perm_elems = num_elements(perm_shape)
    if src.unknown_rank() and perm_elems == -1 and perm is None:
        return [unknown_shape()]
    if not src.unknown_rank():
        rank = src.dims()
    elif perm_elems != -1:
        rank = perm_elems
    else:
        rank = perm.size  # type: ignore[union-attr]
    if src.unknown_rank() and rank < 2:
        return [src]  # a one-element perm fits a scalar and a vector alike
    src = ctx.with_rank(src, rank)
    ctx.with_rank(perm_shape, 1)
    with_value(ctx, perm_elems, rank)
    if perm is None:
        return [unknown_shape(rank)]
    dims = []
    for p in host_ints(perm)[:rank]:
        if p < -rank or p >= rank:
            ctx.invalid_argument(f"perm dim {p} is out of range of input rank {rank}")
        dims.append(src[p])
    return [PartialTensorShape(dims)]


@register_kernel("Transpose")
def _transpose(ctx: KernelContext, x, perm):
    p = ctx.host(perm)
    if p.ndim != 1:
        ctx.invalid_argument(f"perm must be rank 1, got shape {format_shape(p.shape)}")
    rank = len(x.shape)
    if p.size != rank:
        ctx.invalid_argument(f"transpose expects a vector of size {rank}. But input(1) is a vector of size {p.size}")
    permutation = [v + rank if v < 0 else v for v in host_ints(p)]
    seen = [False] * rank
    for d in permutation:
        if not 0 <= d < rank:
            ctx.invalid_argument(f"{d} is out of range [0 .. {rank})")
        seen[d] = True
    for i, ok in enumerate(seen):
        if not ok:
            ctx.invalid_argument(f"{i} is missing from {{{','.join(map(str, permutation))}}}.")
    return ctx.xp.permute_dims(x, tuple(permutation))
