"""Moving blocks between space, batch and depth: SpaceToBatch(ND), BatchToSpace(ND), SpaceToDepth, DepthToSpace.

Each is a zero pad or crop plus one reshape, one transpose and one reshape, written once against the
array API.  TF's CPU kernels of SpaceToDepth and DepthToSpace take NHWC only; NCHW and NCHW_VECT_C
(int8 groups of four channels, TF's GPU layout) are computed here too by moving the channels last
(recorded as a divergence).  Checks and messages are TF 2.21's.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, divergence, literal, reference, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import add_dim, divide_dim, host_ints, merge_shapes, multiply_dim, subtract_dim
from tfops_py.kernels.array._array_domains import space_block, space_pads
from tfops_py.kernels.array.fill_ops import checked_shape, zeros_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"
MAX_BLOCK_DIMS = 4  # TF's kMaxSpaceToBatchBlockDims


# -- the computations -----------------------------------------------------------------------------------------
def space_to_batch(ctx: KernelContext, x: Any, block: Sequence[int], pads: Sequence[tuple[int, int]]) -> Any:
    """Zero-pad dims 1..M of ``x``, cut them into blocks and move the block offsets in front of the batch."""
    xp = ctx.xp
    m, shape = len(block), tuple(x.shape)
    spatial, rest = shape[1:m + 1], shape[m + 1:]
    padded = tuple(n + a + b for n, (a, b) in zip(spatial, pads))
    if any(a or b for a, b in pads):
        grown = zeros_of(ctx, (shape[0],) + padded + rest, ctx.output_dtypes[0])
        grown[(slice(None),) + tuple(slice(a, a + n) for n, (a, _) in zip(spatial, pads)) + (...,)] = x
        x = grown
    split = (shape[0],) + tuple(v for p, b in zip(padded, block) for v in (p // b, b)) + rest
    perm = tuple(range(2, 2 * m + 1, 2)) + (0,) + tuple(range(1, 2 * m, 2)) + tuple(range(2 * m + 1, len(split)))
    moved = xp.permute_dims(xp.reshape(x, split), perm)
    return xp.reshape(moved, (shape[0] * math.prod(block),) + tuple(p // b for p, b in zip(padded, block)) + rest)


def batch_to_space(ctx: KernelContext, x: Any, block: Sequence[int], crops: Sequence[tuple[int, int]]) -> Any:
    """The inverse: spread the batch's block offsets back over dims 1..M, then crop them."""
    xp = ctx.xp
    m, shape = len(block), tuple(x.shape)
    batch = shape[0] // math.prod(block)
    spatial, rest = shape[1:m + 1], shape[m + 1:]
    split = tuple(block) + (batch,) + spatial + rest
    perm = (m,) + tuple(v for i in range(m) for v in (m + 1 + i, i)) + tuple(range(2 * m + 1, len(split)))
    full = tuple(n * b for n, b in zip(spatial, block))
    out = xp.reshape(xp.permute_dims(xp.reshape(x, split), perm), (batch,) + full + rest)
    if any(a or b for a, b in crops):
        out = out[(slice(None),) + tuple(slice(a, n - b) for n, (a, b) in zip(full, crops)) + (...,)]
    return out


def space_to_depth_nhwc(xp: Any, x: Any, b: int) -> Any:
    n, h, w, c = x.shape
    y = xp.permute_dims(xp.reshape(x, (n, h // b, b, w // b, b, c)), (0, 1, 3, 2, 4, 5))
    return xp.reshape(y, (n, h // b, w // b, b * b * c))


def depth_to_space_nhwc(xp: Any, x: Any, b: int) -> Any:
    n, h, w, c = x.shape
    y = xp.permute_dims(xp.reshape(x, (n, h, w, b, b, c // (b * b))), (0, 1, 3, 2, 4, 5))
    return xp.reshape(y, (n, h * b, w * b, c // (b * b)))


# -- SpaceToBatchND, SpaceToBatch -------------------------------------------------------------------------
def _values(ctx: InferenceContext, i: int) -> list[int] | None:
    v = ctx.input_tensor(i)
    return None if v is None or v.size == 0 else host_ints(v)


def _block_dims(ctx: InferenceContext, block_shape: PartialTensorShape) -> int:
    if block_shape.unknown_rank() or block_shape.dims() != 1:
        ctx.invalid_argument("block_shape must have rank 1.")
    if block_shape[0] == -1:
        ctx.invalid_argument("block_shape must have known size.")
    return block_shape[0]


def _space_batch_shape(ctx: InferenceContext, src: PartialTensorShape, block_shape: PartialTensorShape,
                       block: list[int] | None, pads_at: int, to_batch: bool) -> list[PartialTensorShape]:
    """TF's SpaceToBatchShapeHelper / BatchToSpaceShapeHelper."""
    m = _block_dims(ctx, block_shape)
    src = ctx.with_rank_at_least(src, m + 1)
    merge_shapes(ctx, ctx.input(pads_at), PartialTensorShape([m, 2]))
    dims = [-1] * (m + 1) if src.unknown_rank() else list(src.as_tuple())
    batch = dims[0]
    if block is not None:
        for v in block:
            if v < 1:
                ctx.invalid_argument("block_shape must be positive")
            if batch != -1:
                batch = multiply_dim(ctx, batch, v) if to_batch else divide_dim(ctx, batch, v)
    elif m > 0:
        batch = -1
    out = [batch] + [-1] * m
    pads = _values(ctx, pads_at)
    if pads is not None:
        for i in range(m):
            a, b = pads[2 * i], pads[2 * i + 1]
            if a < 0 or b < 0:
                ctx.invalid_argument("paddings cannot be negative" if to_batch else "crops cannot be negative")
            if block is not None:
                if to_batch:
                    out[i + 1] = divide_dim(ctx, add_dim(ctx, add_dim(ctx, dims[i + 1], a), b), block[i])
                else:
                    out[i + 1] = subtract_dim(ctx, subtract_dim(ctx, multiply_dim(ctx, dims[i + 1], block[i]), a), b)
    if src.unknown_rank():
        return [unknown_shape()]
    return [PartialTensorShape(out + dims[m + 1:])]


@register_shape("SpaceToBatchND")
def _space_to_batch_nd_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return _space_batch_shape(ctx, ctx.input(0), ctx.input(1), _values(ctx, 1), 2, to_batch=True)


@register_shape("SpaceToBatch")
def _space_to_batch_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.with_rank(ctx.input(0), 4)
    size = ctx.attr("block_size")
    return _space_batch_shape(ctx, src, PartialTensorShape([2]), [size, size], 1, to_batch=True)


@register_shape("BatchToSpaceND")
def _batch_to_space_nd_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return _space_batch_shape(ctx, ctx.input(0), ctx.input(1), _values(ctx, 1), 2, to_batch=False)


@register_shape("BatchToSpace")
def _batch_to_space_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.with_rank(ctx.input(0), 4)
    size = ctx.attr("block_size")
    return _space_batch_shape(ctx, src, PartialTensorShape([2]), [size, size], 1, to_batch=False)


def _block_and_pads(ctx: KernelContext, x: Any, block_shape: np.ndarray, pads: Any,
                    what: str) -> tuple[list[int], list[tuple[int, int]], int]:
    """TF's first checks of SpaceToBatchOpCompute/BatchToSpaceOpCompute: (block, pads, product of block)."""
    if block_shape.ndim != 1:
        ctx.invalid_argument(f"block_shape rank should be 1 instead of {block_shape.ndim}")
    m = block_shape.shape[0]
    if x.ndim < 1 + m:
        ctx.invalid_argument(f"input rank should be >= {1 + m} instead of {x.ndim}")
    p = ctx.host(pads)
    if not (p.ndim == 2 and p.shape == (m, 2)):
        ctx.invalid_argument(f"{what} should have shape [{m}, 2] instead of {format_shape(p.shape)}")
    block, flat = host_ints(block_shape), host_ints(p)
    return block, [(flat[2 * i], flat[2 * i + 1]) for i in range(m)], math.prod(block)


def _internal_dims(block: list[int], pads: list[tuple[int, int]]) -> tuple[int, int]:
    """(first, end) of the block dims TF cannot fold into the batch or depth (no padding, block 1)."""
    trivial = [b == 1 and p == (0, 0) for b, p in zip(block, pads)]
    first = next((i for i, t in enumerate(trivial) if not t), len(block))
    end = len(block) - next((i for i, t in enumerate(reversed(trivial[first:])) if not t), len(block) - first)
    return first, end


def _check_internal(ctx: KernelContext, first: int, end: int) -> None:
    if end - first > MAX_BLOCK_DIMS:
        ctx.invalid_argument(f"Maximum number of non-combined block dimensions is {end - first} but must not exceed "
                             f"{MAX_BLOCK_DIMS}")


def _space_to_batch_kernel(ctx: KernelContext, x: Any, block_shape: np.ndarray, paddings: Any) -> Any:
    block, pads, product = _block_and_pads(ctx, x, block_shape, paddings, "paddings")
    first, end = _internal_dims(block, pads)
    for i, b in enumerate(block):
        if b < 1:
            ctx.invalid_argument(f"All values in block_shape must be positive, got value, {b} at index {i}.")
    _check_internal(ctx, first, end)
    if first == end:
        return x
    for i in range(first, end):
        a, b = pads[i]
        if a < 0 or b < 0:
            ctx.invalid_argument("Paddings must be non-negative")
        padded = x.shape[i + 1] + a + b
        if padded % block[i]:
            ctx.invalid_argument(f"padded_shape[{i}]={padded} is not divisible by block_shape[{i}]={block[i]}")
    checked_shape(ctx, [x.shape[0] * product] + [(x.shape[i + 1] + a + b) // block[i] for i, (a, b) in
                                                 enumerate(pads)] + list(x.shape[len(block) + 1:]))
    return space_to_batch(ctx, x, block, pads)


def _batch_to_space_kernel(ctx: KernelContext, x: Any, block_shape: np.ndarray, crops: Any) -> Any:
    block, cuts, product = _block_and_pads(ctx, x, block_shape, crops, "crops")
    first, end = _internal_dims(block, cuts)
    for i, b in enumerate(block):
        if b < 1:
            ctx.invalid_argument(f"All values in block_shape must be positive, got value, {b} at index {i}.")
    if x.shape[0] % product:
        ctx.invalid_argument(f"Input batch dimension ({x.shape[0]}) is not divisible by product of block sizes "
                             f"({product})")
    _check_internal(ctx, first, end)
    if first == end:
        return x
    for i in range(first, end):
        a, b = cuts[i]
        if a < 0 or b < 0:
            ctx.invalid_argument("Crops must be non-negative")
        size = x.shape[i + 1] * block[i] - a - b
        if size < 0:
            ctx.invalid_argument(f"cropped_shape[{i}]={size} must be non-negative")
    return batch_to_space(ctx, x, block, cuts)


@register_kernel("SpaceToBatchND")
def _space_to_batch_nd(ctx: KernelContext, input: Any, block_shape: Any, paddings: Any) -> Any:  # noqa: A002
    return _space_to_batch_kernel(ctx, input, ctx.host(block_shape), paddings)


@register_kernel("BatchToSpaceND")
def _batch_to_space_nd(ctx: KernelContext, input: Any, block_shape: Any, crops: Any) -> Any:  # noqa: A002
    return _batch_to_space_kernel(ctx, input, ctx.host(block_shape), crops)


def _rank_four(ctx: KernelContext, x: Any) -> np.ndarray:
    if x.ndim != 4:
        ctx.invalid_argument(f"Input rank should be: 4instead of: {x.ndim}")  # sic: TF's missing space
    return np.array([ctx.attrs["block_size"]] * 2, np.int64)


@register_kernel("SpaceToBatch")
def _space_to_batch_v1(ctx: KernelContext, input: Any, paddings: Any) -> Any:  # noqa: A002
    return _space_to_batch_kernel(ctx, input, _rank_four(ctx, input), paddings)


@register_kernel("BatchToSpace")
def _batch_to_space_v1(ctx: KernelContext, input: Any, crops: Any) -> Any:  # noqa: A002
    return _batch_to_space_kernel(ctx, input, _rank_four(ctx, input), crops)


# -- SpaceToDepth, DepthToSpace -----------------------------------------------------------------------------
_LAYOUT = {"NHWC": (0, 1, 2, 3), "NCHW": (0, 2, 3, 1), "NCHW_VECT_C": (0, 2, 3, 1)}  # N, H, W, C positions


def _depth_shape(ctx: InferenceContext, to_depth: bool) -> list[PartialTensorShape]:
    fmt, b = ctx.attr("data_format"), ctx.attr("block_size")
    src = ctx.with_rank(ctx.input(0), 5 if fmt == "NCHW_VECT_C" else 4)
    if src.unknown_rank():
        src = unknown_shape(5 if fmt == "NCHW_VECT_C" else 4)
    n, h, w, c = (src[i] for i in _LAYOUT[fmt])
    if to_depth:
        h, w, c = divide_dim(ctx, h, b), divide_dim(ctx, w, b), multiply_dim(ctx, c, b * b)
    else:
        h, w, c = multiply_dim(ctx, h, b), multiply_dim(ctx, w, b), divide_dim(ctx, c, b * b)
    if fmt == "NHWC":
        return [PartialTensorShape([n, h, w, c])]
    return [PartialTensorShape([n, c, h, w] + ([4] if fmt == "NCHW_VECT_C" else []))]


register_shape("SpaceToDepth")(lambda ctx: _depth_shape(ctx, to_depth=True))
register_shape("DepthToSpace")(lambda ctx: _depth_shape(ctx, to_depth=False))


def _to_nhwc(xp: Any, x: Any, fmt: str) -> Any:
    if fmt == "NCHW":
        return xp.permute_dims(x, (0, 2, 3, 1))
    if fmt == "NCHW_VECT_C":  # [N, C/4, H, W, 4]: channel c is (c // 4, c % 4)
        n, c4, h, w, v = x.shape
        return xp.reshape(xp.permute_dims(x, (0, 2, 3, 1, 4)), (n, h, w, c4 * v))
    return x


def _from_nhwc(xp: Any, y: Any, fmt: str) -> Any:
    if fmt == "NCHW":
        return xp.permute_dims(y, (0, 3, 1, 2))
    if fmt == "NCHW_VECT_C":
        n, h, w, c = y.shape
        return xp.permute_dims(xp.reshape(y, (n, h, w, c // 4, 4)), (0, 3, 1, 2, 4))
    return y


def _depth_kernel(to_depth: bool):
    def kernel(ctx: KernelContext, input: Any) -> Any:  # noqa: A002 - TF's argument name
        fmt, b, xp = ctx.attrs["data_format"], ctx.attrs["block_size"], ctx.xp
        if b <= 1:
            ctx.invalid_argument(f"Block size should be > 1, but was: {b}")
        rank = 5 if fmt == "NCHW_VECT_C" else 4
        if input.ndim != rank:
            sep = "" if to_depth else ":"  # the two kernels word it differently
            ctx.invalid_argument(f"Input rank should be{sep} {rank} instead of{sep} {input.ndim}")
        x = _to_nhwc(xp, input, fmt)
        _, h, w, c = x.shape
        if to_depth:
            if w % b or h % b:
                ctx.invalid_argument(f"Image width {w} and height {h} should be divisible by block_size: {b}")
            y = space_to_depth_nhwc(xp, x, b)
        else:
            if c % (b * b):
                ctx.invalid_argument(f"Input depth dimension {c} should be divisible by: {b * b}")
            y = depth_to_space_nhwc(xp, x, b)
        return _from_nhwc(xp, y, fmt)

    return kernel


register_kernel("SpaceToDepth")(_depth_kernel(to_depth=True))
register_kernel("DepthToSpace")(_depth_kernel(to_depth=False))


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_F32, _I32, _I64 = DataType.DT_FLOAT, DataType.DT_INT32, DataType.DT_INT64


def _i32(v: Any) -> Any:
    return literal(v, _I32)


def _nd_cases(op: str, pads_name: str) -> list:
    """Cases SpaceToBatchND and BatchToSpaceND share (``pads_name``: paddings or crops)."""
    to_batch = op == "SpaceToBatchND"
    first = (3, 4, 6, 2) if to_batch else (12, 2, 3, 2)
    ok = [  # valid calls, every dtype
        case({pads_name: _i32([[1, 0], [0, 2]])}, id=f"{op}/2d", block_shape=_i32([2, 2]),
             shapes={"input": first}),
        case({pads_name: literal([[0, 0], [1, 1], [0, 0]], _I64)}, id=f"{op}/3d_int64", block_shape=literal(
            [1, 2, 3], _I64), shapes={"input": (6, 2, 3, 6, 1) if not to_batch else (1, 2, 2, 3, 1)}),
        case({pads_name: _i32([[0, 0], [0, 0]])}, id=f"{op}/trivial", block_shape=_i32([1, 1]),
             shapes={"input": (2, 3, 4)}),
        case({pads_name: _i32(np.zeros((0, 2), np.int32).tolist())}, id=f"{op}/no_block_dims",
             block_shape=_i32(np.zeros((0,), np.int32).tolist()), shapes={"input": (2, 3)}),
        case({pads_name: _i32([[0, 1]])}, id=f"{op}/empty", block_shape=_i32([3]), shapes={"input": (0, 2, 2)}),
    ]
    bad = [  # TF's errors, float32 only
        ({pads_name: _i32([[0, 0]])}, _i32([[2]]), (4, 2)),
        ({pads_name: _i32([[0, 0], [0, 0]])}, _i32([2, 2]), (4, 2)),
        ({pads_name: _i32([[0, 0, 0]])}, _i32([2]), (4, 2)),
        ({pads_name: _i32([[0, 0]])}, _i32([0]), (4, 2)),
        ({pads_name: _i32([[0, 0]])}, _i32([-2]), (4, 2)),
        ({pads_name: _i32([[-1, 1]])}, _i32([2]), (4, 2)),
        ({pads_name: _i32([[0, 1]])}, _i32([2]), (4, 4)),
        ({pads_name: _i32([[0, 0]])}, _i32([3]), (4, 2)),
        ({pads_name: _i32([[0, 5]])}, _i32([2]), (4, 2)),
        ({pads_name: _i32([[0, 0]] * 5)}, _i32([2] * 5), (32, 1, 1, 1, 1, 1)),
    ]
    return ok + [case(named, id=f"{op}/error{k}", T=_F32, block_shape=block, shapes={"input": shape})
                 for k, (named, block, shape) in enumerate(bad)]


_ND_SHAPES = [{"input": (6, 4, 6, 2)}, {"input": (12, 3, 2)}, {"input": (2, 3, 4, 2, 2)}, {"input": (0, 2, 3)},
              {"input": (4, 1)}]
conformance("SpaceToBatchND", input=values(), block_shape=space_block("input"),
            paddings=space_pads("input", "block_shape"), shapes=_ND_SHAPES, compare="exact",
            cases=_nd_cases("SpaceToBatchND", "paddings"))
conformance("BatchToSpaceND", input=values(), block_shape=space_block("input", divides_batch=True),
            crops=space_pads("input", "block_shape", crops=True), shapes=_ND_SHAPES, compare="exact",
            cases=_nd_cases("BatchToSpaceND", "crops"))
conformance("SpaceToBatch", generate=False, compare="exact", block_size=2, cases=[
    case(id="SpaceToBatch/pad", block_size=2, paddings=_i32([[1, 1], [0, 2]]), shapes={"input": (2, 2, 4, 3)}),
    case(id="SpaceToBatch/int64", block_size=3, paddings=literal([[0, 0], [1, 2]], _I64),
         shapes={"input": (1, 3, 3, 1)}),
    case(id="SpaceToBatch/rank3", T=_F32, block_size=2, paddings=_i32([[0, 0], [0, 0]]), shapes={"input": (2, 2, 2)}),
    case(id="SpaceToBatch/indivisible", T=_F32, block_size=2, paddings=_i32([[0, 1], [0, 0]]),
         shapes={"input": (1, 2, 2, 1)}),
    case(id="SpaceToBatch/negative", T=_F32, block_size=2, paddings=_i32([[0, -2], [0, 0]]),
         shapes={"input": (1, 4, 2, 1)}),
])
conformance("BatchToSpace", generate=False, compare="exact", block_size=2, cases=[
    case(id="BatchToSpace/crop", block_size=2, crops=_i32([[1, 0], [0, 1]]), shapes={"input": (8, 2, 2, 3)}),
    case(id="BatchToSpace/int64", block_size=3, crops=literal([[0, 0], [1, 2]], _I64), shapes={"input": (9, 1, 1, 2)}),
    case(id="BatchToSpace/rank5", T=_F32, block_size=2, crops=_i32([[0, 0], [0, 0]]),
         shapes={"input": (4, 1, 1, 1, 1)}),
    case(id="BatchToSpace/indivisible", T=_F32, block_size=2, crops=_i32([[0, 0], [0, 0]]),
         shapes={"input": (6, 1, 1, 1)}),
    case(id="BatchToSpace/overcrop", T=_F32, block_size=2, crops=_i32([[0, 3], [0, 0]]),
         shapes={"input": (4, 1, 1, 1)}),
])


def _channels_last_reference(run_tf: Any, op: str, inputs: list, attrs: dict) -> list:
    """TF's NHWC kernel on the input with its channels moved last, moved back."""
    fmt = attrs["data_format"]
    x = inputs[0]
    if fmt == "NCHW_VECT_C":
        n, c4, h, w, v = x.shape
        nhwc = x.transpose(0, 2, 3, 1, 4).reshape(n, h, w, c4 * v)
    else:
        nhwc = x.transpose(0, 2, 3, 1)
    (y,) = run_tf(op, [nhwc], {**attrs, "data_format": "NHWC"})
    if fmt == "NCHW_VECT_C":
        n, h, w, c = y.shape
        return [y.reshape(n, h, w, c // 4, 4).transpose(0, 3, 1, 2, 4)]
    return [y.transpose(0, 3, 1, 2)]


for _op, _shapes in (("SpaceToDepth", [{"input": (2, 4, 6, 3), "block_size": 2},
                                       {"input": (1, 6, 3, 2), "block_size": 3},
                                       {"input": (0, 2, 2, 1), "block_size": 2}]),
                     ("DepthToSpace", [{"input": (2, 2, 3, 12), "block_size": 2},
                                       {"input": (1, 1, 2, 9), "block_size": 3},
                                       {"input": (0, 1, 1, 4), "block_size": 2}])):
    conformance(_op, input=values(), shapes=_shapes, data_format="NHWC", block_size=2, compare="exact", cases=[
        case(id=f"{_op}/nchw", block_size=2, data_format="NCHW",
             shapes={"input": (2, 3, 4, 6) if _op == "SpaceToDepth" else (1, 8, 2, 3)}),
        case(id=f"{_op}/nchw_vect_c", T=DataType.DT_INT8, block_size=2, data_format="NCHW_VECT_C",
             shapes={"input": (1, 1, 2, 4, 4) if _op == "SpaceToDepth" else (1, 4, 2, 1, 4)}),
        case(id=f"{_op}/rank3", T=_F32, block_size=2, shapes={"input": (2, 2, 4)}),
        case(id=f"{_op}/indivisible", T=_F32, block_size=2, shapes={"input": (1, 3, 3, 8)}),
        case(id=f"{_op}/block3", T=_F32, block_size=3, shapes={"input": (1, 3, 6, 9)}),
    ])
divergence(("SpaceToDepth", "DepthToSpace"), when="data_format NCHW or NCHW_VECT_C",
           tf="has no CPU kernel for them (NotFoundError; its GPU kernels take them)",
           ours="computes them: the channels are moved last, TF's NHWC rearrangement, moved back (NCHW_VECT_C for "
                "any dtype, not only qint8)", attrs={"data_format": ("NCHW", "NCHW_VECT_C")},
           reference=reference(_channels_last_reference, "TF's NHWC kernel on the input with its channels moved last"))
