"""Reordering elements: Reverse (v1, a mask of axes), ReverseSequence, Roll (ConjugateTranspose: linalg.products).

ReverseV2 and Transpose are in ``grad_support_ops`` and ``shape_ops``.  ReverseSequence reverses the
first ``seq_lengths[b]`` entries of each batch row with one gather; Roll is ``xp.roll`` with TF's
reading of the shifts (each taken as a 32-bit int, those of one axis summed modulo its size).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import axis_of, case, conformance, literal, values
from tfops_py.framework.dtypes import DT_INT64, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import host_ints, merge_dim, merge_shapes
from tfops_py.kernels.array._array_domains import axis_mask, lengths_along, shifts_for
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


# -- Reverse (v1) -------------------------------------------------------------------------------------------
@register_shape("Reverse")
def _reverse_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    dims = ctx.with_rank(ctx.input(1), 1)
    if dims[0] != -1:
        src = ctx.with_rank(src, dims[0])
    if not src.unknown_rank() and src.dims() > 8:
        ctx.invalid_argument("reverse does not work on tensors with more than 8 dimensions")
    return [src]


@register_kernel("Reverse")
def _reverse(ctx: KernelContext, tensor: Any, dims: Any) -> Any:
    if tensor.ndim > 0 and tensor.shape[0] == 0:
        ctx.invalid_argument("Invalid input first dimension. Found 0.")
    if tensor.ndim == 0:
        return tensor  # TF checks no dims here
    d = ctx.host(dims)
    if d.ndim != 1:
        ctx.invalid_argument(f"'dims' must be 1-dimension, not {d.ndim}")
    if d.size != tensor.ndim:
        ctx.invalid_argument(f"'dims' must have the same number of values as 'input' has dimensions. 'input' has "
                             f"{tensor.ndim}'dims' has {d.size} values")  # sic: TF's missing separator
    if tensor.ndim > 8:
        ctx.unimplemented("reverse is not implemented for tensors of rank > 8.")
    axes = tuple(int(i) for i in np.flatnonzero(d))
    return ctx.xp.flip(tensor, axis=axes) if axes else tensor


# -- ReverseSequence --------------------------------------------------------------------------------------
@register_shape("ReverseSequence")
def _reverse_sequence_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    lengths = ctx.with_rank(ctx.input(1), 1)
    seq_dim, batch_dim = ctx.attr("seq_dim"), ctx.attr("batch_dim")
    if src.unknown_rank():
        return [unknown_shape()]
    rank = src.dims()
    if batch_dim >= rank:
        ctx.invalid_argument(f"batch_dim must be < input rank: {batch_dim} vs. {rank}")
    if seq_dim >= rank:
        ctx.invalid_argument(f"seq_dim must be < input rank: {seq_dim} vs. {rank}")
    dims = src.as_list()
    dims[batch_dim] = merge_dim(ctx, dims[batch_dim], lengths[0])  # type: ignore[index]
    return [PartialTensorShape(dims)]


def reverse_sequence(ctx: KernelContext, x: Any, lengths: np.ndarray, seq_dim: int, batch_dim: int) -> Any:
    """``x`` with ``x[b, :lengths[b]]`` reversed along ``seq_dim`` for each ``b`` along ``batch_dim``."""
    xp = ctx.xp
    moved = xp.moveaxis(x, (batch_dim, seq_dim), (0, 1))
    n, s = moved.shape[0], moved.shape[1]
    rest = tuple(moved.shape[2:])
    j = np.arange(s)
    lens = lengths.astype(np.int64).reshape(n, 1)
    source = np.where(j < lens, lens - 1 - j, j) + np.arange(n).reshape(n, 1) * s  # (n, s) rows of the flat input
    flat = xp.reshape(moved, (n * s, -1) if rest else (n * s,))
    out = xp.reshape(xp.take(flat, ctx.asarray(source.reshape(-1), DT_INT64), axis=0), (n, s) + rest)
    return xp.moveaxis(out, (0, 1), (batch_dim, seq_dim))


@register_kernel("ReverseSequence")
def _reverse_sequence_kernel(ctx: KernelContext, input: Any, seq_lengths: Any) -> Any:  # noqa: A002
    seq_dim, batch_dim = ctx.attrs["seq_dim"], ctx.attrs["batch_dim"]
    if batch_dim < 0:
        ctx.invalid_argument(f"Invalid batch_dim {batch_dim}")
    if seq_dim < 0:
        ctx.invalid_argument(f"Invalid seq_dim {seq_dim}")
    lens = ctx.host(seq_lengths)
    if lens.ndim != 1:
        ctx.invalid_argument(f"seq_lengths must be 1-dim, not {lens.ndim}")
    rank = input.ndim
    if batch_dim == seq_dim:
        ctx.invalid_argument(f"batch_dim == seq_dim == {seq_dim}")
    if seq_dim >= rank:
        ctx.invalid_argument(f"seq_dim must be < input rank ( {seq_dim} vs. {rank})")
    if batch_dim >= rank:
        ctx.invalid_argument(f"batch_dim must be < input rank ( {batch_dim} vs. {rank})")
    if lens.size != input.shape[batch_dim]:
        ctx.invalid_argument(f"Length of seq_lengths != input.dims({batch_dim}), ({lens.size} vs. "
                             f"{input.shape[batch_dim]})")
    bad = np.flatnonzero((lens < 0) | (lens > input.shape[seq_dim]))
    if bad.size:
        d = int(bad[0])
        ctx.invalid_argument(f"seq_lens({d}) < 0" if lens[d] < 0 else f"seq_lens({d}) > input.dims({seq_dim})")
    if not 2 <= rank <= 5:
        ctx.invalid_argument(f"ReverseSequenceOp : Unhandled input dimensions: {rank}")
    return reverse_sequence(ctx, input, lens, seq_dim, batch_dim)


# -- Roll ---------------------------------------------------------------------------------------------------
@register_shape("Roll")
def _roll_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank_at_least(ctx.input(0), 1)
    ctx.with_rank_at_most(ctx.input(1), 1)
    ctx.with_rank_at_most(ctx.input(2), 1)
    merge_shapes(ctx, ctx.input(1), ctx.input(2))
    return [ctx.input(0)]


def roll_shifts(shape: tuple[int, ...], shift: list[int], axis: list[int]) -> dict[int, int] | tuple[str, int]:
    """Per axis, TF's total shift: each shift read as a C ``int``, summed per axis modulo the axis's size (an
    empty axis counts as size 1); ``("axis", a)`` names the first axis out of range."""
    rank, total = len(shape), [0] * len(shape)
    for s, a in zip(shift, axis):
        a = a + rank if a < 0 else a
        if not 0 <= a < rank:
            return ("axis", a)
        size = max(shape[a], 1)
        wrapped = (total[a] + ((s + 2**31) % 2**32 - 2**31) + 2**31) % 2**32 - 2**31  # int arithmetic
        total[a] = wrapped % size
    return {a: t for a, t in enumerate(total) if t}


@register_kernel("Roll")
def _roll(ctx: KernelContext, input: Any, shift: Any, axis: Any) -> Any:  # noqa: A002 - TF's argument name
    s, a = ctx.host(shift), ctx.host(axis)
    if input.ndim < 1:
        ctx.invalid_argument("input must be 1-D or higher")
    if s.ndim > 1:
        ctx.invalid_argument(f"shift must be a scalar or a 1-D vector. Found: {format_shape(s.shape)}")
    if a.ndim > 1:
        ctx.invalid_argument(f"axis must be a scalar or a 1-D vector. Found: {format_shape(a.shape)}")
    if s.shape != a.shape:
        ctx.invalid_argument("shift and axis must have the same size")
    shifts = roll_shifts(tuple(input.shape), host_ints(s), host_ints(a))
    if isinstance(shifts, tuple):
        ctx.invalid_argument(f"axis {shifts[1]} is out of range")
        raise AssertionError  # unreachable
    if not shifts:
        return input
    return ctx.xp.roll(input, shift=tuple(shifts.values()), axis=tuple(shifts))


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_I32, _I64 = DataType.DT_INT32, DataType.DT_INT64
_F32 = DataType.DT_FLOAT

conformance("Reverse", tensor=values(), dims=axis_mask("tensor"), compare="exact", cases=[
    case(id="Reverse/all", dims=literal([True, True, True, True]), shapes={"tensor": (2, 1, 0, 3)}),
    case(id="Reverse/empty_first", T=_F32, dims=literal([True, False]), shapes={"tensor": (0, 3)}),
    case(id="Reverse/scalar_any_dims", T=_F32, dims=literal([[True, False]]), shapes={"tensor": ()}),
    case(id="Reverse/too_few", T=_F32, dims=literal([True]), shapes={"tensor": (2, 3)}),
    case(id="Reverse/matrix", T=_F32, dims=literal([[True, False]]), shapes={"tensor": (2, 3)}),
    case(id="Reverse/rank9", T=_F32, dims=literal([True] * 9), shapes={"tensor": (1,) * 9}),
])
conformance("ReverseSequence", input=values(), seq_lengths=lengths_along("input"), seq_dim=1, compare="exact",
            shapes=[{"input": (3, 5), "seq_dim": 1, "batch_dim": 0}, {"input": (2, 4, 3), "seq_dim": 0, "batch_dim": 2},
                    {"input": (2, 3, 2, 2, 4), "seq_dim": 4, "batch_dim": 1}, {"input": (0, 3), "seq_dim": 1,
                                                                                 "batch_dim": 0}],
            cases=[case(id="ReverseSequence/too_long", T=_F32, seq_lengths=literal([1, 4], _I64), seq_dim=1,
                        shapes={"input": (2, 3)}),
                   case(id="ReverseSequence/negative", T=_F32, seq_lengths=literal([-1, 2], _I32), seq_dim=1,
                        shapes={"input": (2, 3)}),
                   case(id="ReverseSequence/count", T=_F32, seq_lengths=literal([1, 2, 3], _I32), seq_dim=1,
                        shapes={"input": (2, 3)}),
                   case(id="ReverseSequence/same_dims", T=_F32, seq_lengths=literal([1, 2], _I32), seq_dim=0,
                        batch_dim=0, shapes={"input": (2, 3)}),
                   case(id="ReverseSequence/negative_dim", T=_F32, seq_lengths=literal([1, 2], _I32), seq_dim=-1,
                        shapes={"input": (2, 3)}),
                   case(id="ReverseSequence/seq_dim_past_rank", T=_F32, seq_lengths=literal([1, 2], _I32), seq_dim=2,
                        shapes={"input": (2, 3)}),
                   case(id="ReverseSequence/rank6", T=_F32, seq_lengths=literal([1], _I32), seq_dim=1,
                        shapes={"input": (1,) * 6}),
                   case(id="ReverseSequence/lengths_matrix", T=_F32, seq_lengths=literal([[1, 2]], _I32), seq_dim=1,
                        shapes={"input": (2, 3)})])
conformance("Roll", input=values(), axis=axis_of("input", vector=True), shift=shifts_for("axis"), compare="exact",
            shapes=[{"input": s} for s in ((5,), (3, 4), (2, 0, 3), (2, 1, 3, 2))], cases=[
                case(id="Roll/repeated_axis", T=_F32, shift=literal([2, 3, -9], _I32), axis=literal([1, 1, -1], _I32),
                     shapes={"input": (2, 5)}),
                case(id="Roll/wide_shift", T=_F32, shift=literal([2**40 + 1, -(2**33) - 3], _I64),
                     axis=literal([0, 1], _I64), shapes={"input": (3, 4)}),
                case(id="Roll/scalars", T=_F32, shift=literal(2, _I32), axis=literal(-1, _I64),
                     shapes={"input": (2, 3)}),
                case(id="Roll/scalar_input", T=_F32, shift=literal(1, _I32), axis=literal(0, _I32),
                     shapes={"input": ()}),
                case(id="Roll/axis_out_of_range", T=_F32, shift=literal([1], _I32), axis=literal([2], _I32),
                     shapes={"input": (2, 3)}),
                case(id="Roll/sizes_differ", T=_F32, shift=literal([1], _I32), axis=literal([0, 1], _I32),
                     shapes={"input": (2, 3)}),
                case(id="Roll/shift_matrix", T=_F32, shift=literal([[1]], _I32), axis=literal([[0]], _I32),
                     shapes={"input": (2, 3)}),
            ])
