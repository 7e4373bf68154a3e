"""Gradients of Einsum, Cross, ConjugateTranspose and the diagonal ops (MatrixDiagPart, MatrixDiag/-Part/SetDiag
V2 and V3, MatrixSetDiag): TF's Python gradients (``linalg_grad.py``, ``array_grad.py``, ``math_grad.py``),
built from the same ops.  TF's C++ API registers Einsum's only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py import ops
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.array_grad import attr
from tfops_py.gradients.math_grad import conj, const_of
from tfops_py.gradients.linalg_grad import concat, stack
from tfops_py.gradients.registry import register_gradient

ELLIPSIS = "..."
_COMPLEX = (DataType.DT_COMPLEX64, DataType.DT_COMPLEX128)
# Where these gradients differ from TF's C++ API (listed in docs/gradients.md by tools/gen_gradient_table.py).
BEYOND_TF_CC = {op: "registered (TF: Python only)" for op in (
    "Cross", "ConjugateTranspose", "MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3", "MatrixDiagV2",
    "MatrixDiagV3", "MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3")}
CHANGED_FROM_TF_CC: dict[str, str] = {}


def _dim(scope: Scope, shape: Output, axis: int) -> Output:
    """``shape[axis]`` as a scalar (negative axes count from the end)."""
    end = axis + 1
    return ops.StridedSlice(scope, shape, np.asarray([axis], np.int32), np.asarray([end], np.int32),
                            np.asarray([1], np.int32), end_mask=1 if end == 0 else 0, shrink_axis_mask=1).output


def _subshape(scope: Scope, shape: Output, start: int, end: int | None) -> Output:
    return ops.StridedSlice(scope, shape, np.asarray([start], np.int32), np.asarray([end or 0], np.int32),
                            np.asarray([1], np.int32), end_mask=1 if end is None else 0).output


# -- Einsum ----------------------------------------------------------------------------------------------
def _axis_of(subscripts: str, label: str) -> int | None:
    """The axis of ``label`` (negative after an ellipsis; the leftmost of repeats), or None."""
    parts = subscripts.split(ELLIPSIS)
    if label in parts[0]:
        return parts[0].index(label)
    if len(parts) > 1 and label in parts[1]:
        return parts[1].index(label) - len(parts[1])
    return None


def _bcast_range(subscripts: str) -> tuple[int, int | None]:
    """(start, end) of the axes the ellipsis covers: ``x[start:end]``; (0, 0) without one."""
    start = subscripts.find(ELLIPSIS)
    if start == -1:
        return 0, 0
    remaining = len(subscripts) - (start + len(ELLIPSIS))
    return start, (-remaining if remaining > 0 else None)


def _grad_reduced(scope: Scope, grad: Output, out_subs: str, in_subs: str, in_shape: Output,
                  reduced: set[str], rank: int) -> Output:
    """The gradient of the unary einsum ``in_subs -> out_subs`` that sums the ``reduced`` labels (``rank``: the
    input's static rank, -1 if unknown)."""
    reduced_subs = "".join(sorted(reduced))
    axes = [_axis_of(in_subs, c) for c in reduced_subs]
    repeated = len(set(in_subs)) + len(set(out_subs)) < len(in_subs) + len(out_subs)
    kept = "".join(c for c in in_subs if c not in reduced)
    if not repeated and kept == out_subs and rank >= 0:  # a plain reduction: broadcast the gradient back
        positions = sorted(a % rank for a in axes)  # type: ignore[operator]
        pieces: list[Any] = []
        start = 0
        for p in positions:
            pieces += [_subshape(scope, in_shape, start, p), np.ones(1, np.int32)]
            start = p + 1
        pieces.append(_subshape(scope, in_shape, start, None))
        kept_shape = concat(scope, pieces, 0)
        return ops.BroadcastTo(scope, ops.Reshape(scope, grad, kept_shape).output, in_shape).output
    dims = stack(scope, [_dim(scope, in_shape, ax) for ax in axes])  # type: ignore[arg-type]
    grad_shape = ops.Shape(scope, grad).output
    with_reduced = concat(scope, [dims, grad_shape], 0)
    ones_shape = concat(scope, [np.ones(len(reduced), np.int32), grad_shape], 0)
    spread = ops.BroadcastTo(scope, ops.Reshape(scope, grad, ones_shape).output, with_reduced).output
    return ops.Einsum(scope, [spread], f"{reduced_subs + out_subs}->{in_subs}").output


def _grad_wrt(scope: Scope, grad: Output, other: Output, x: Output, in_shape: Output, in_subs: str,
              other_subs: str, out_subs: str) -> Output:
    reduced = set(in_subs) - set(out_subs + other_subs + ".")
    left = "".join(c for c in in_subs if c not in reduced)
    partial = ops.Einsum(scope, [grad, other], f"{out_subs},{other_subs}->{left}").output
    return partial if not reduced else _grad_reduced(scope, partial, left, in_subs, in_shape, reduced,
                                                     x.shape().dims())


@register_gradient("Einsum")
def _einsum_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad = grad_inputs[0]
    in_subs, out_subs = attr(op, "equation").split("->")
    if op.num_inputs() == 1:
        reduced = set(in_subs) - set(out_subs + ELLIPSIS)
        if not reduced:
            return [ops.Einsum(scope, [grad], f"{out_subs}->{in_subs}").output]
        return [_grad_reduced(scope, grad, out_subs, in_subs, ops.Shape(scope, op.input(0)).output, reduced,
                              op.input(0).shape().dims())]
    x_subs, y_subs = in_subs.split(",")
    if ELLIPSIS in out_subs:  # "...ij,jk->...ik": the other operand's gradient needs the ellipsis too
        x_subs += "" if ELLIPSIS in x_subs else ELLIPSIS
        y_subs += "" if ELLIPSIS in y_subs else ELLIPSIS
    x, y = op.input(0), op.input(1)
    if grad.type() in _COMPLEX:
        x, y = conj(scope, x), conj(scope, y)
    x_shape, y_shape = ops.Shape(scope, x).output, ops.Shape(scope, y).output
    grad_x = _grad_wrt(scope, grad, y, x, x_shape, x_subs, y_subs, out_subs)
    grad_y = _grad_wrt(scope, grad, x, y, y_shape, y_subs, x_subs, out_subs)
    if ELLIPSIS not in out_subs:
        return [grad_x, grad_y]
    (bx, ex), (by, ey) = _bcast_range(x_subs), _bcast_range(y_subs)
    sx, sy = x.shape(), y.shape()
    if sx.IsFullyDefined() and sy.IsFullyDefined() and sx.as_tuple()[bx:ex] == sy.as_tuple()[by:ey]:
        return [grad_x, grad_y]
    r = ops.internal.BroadcastGradientArgs(scope, _subshape(scope, x_shape, bx, ex), _subshape(scope, y_shape, by, ey))
    grad_x = ops.Reshape(scope, ops.Sum(scope, grad_x, ops.AddV2(scope, r.r0, np.int32(bx)).z).output, x_shape).output
    grad_y = ops.Reshape(scope, ops.Sum(scope, grad_y, ops.AddV2(scope, r.r1, np.int32(by)).z).output, y_shape).output
    return [grad_x, grad_y]


# -- Cross, ConjugateTranspose -------------------------------------------------------------------------------
@register_gradient("Cross")
def _cross_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    u, v = op.input(0), op.input(1)
    return [ops.Cross(scope, v, grad_inputs[0]).product, ops.Cross(scope, grad_inputs[0], u).product]


@register_gradient("ConjugateTranspose")
def _conjugate_transpose_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    inverse = ops.InvertPermutation(scope, op.input(1)).y
    return [ops.ConjugateTranspose(scope, grad_inputs[0], inverse).y, NoGradient()]


# -- diagonals ------------------------------------------------------------------------------------------------
def _zero(scope: Scope, grad: Output) -> Output:
    return const_of(scope, 0, grad.type())


@register_gradient("MatrixDiagPart")
def _matrix_diag_part_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    shape = op.input(0).shape()
    if not shape.unknown_rank() and shape[-2] != -1 and shape[-2] == shape[-1]:
        return [ops.MatrixDiag(scope, grad_inputs[0]).output]
    return [ops.MatrixSetDiag(scope, ops.ZerosLike(scope, op.input(0)).y, grad_inputs[0]).output]


def _align(op: Operation) -> dict[str, Any]:
    """V3's alignment; V2 (no ``align`` attr) gets TF's Python default, RIGHT_LEFT, as TF's gradient."""
    return {"align": attr(op, "align")} if "align" in op.node().attrs else {}  # type: ignore[union-attr]


@register_gradient("MatrixDiagPartV2", "MatrixDiagPartV3")
def _matrix_diag_part_v3_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad, x, k = grad_inputs[0], op.input(0), op.input(1)
    shape = x.shape()
    if not shape.unknown_rank() and shape[-2] != -1 and shape[-1] != -1:
        out = ops.MatrixDiagV3(scope, grad, k, np.int32(shape[-2]), np.int32(shape[-1]), _zero(scope, grad),
                               **_align(op)).output
    else:
        out = ops.MatrixSetDiagV3(scope, ops.ZerosLike(scope, x).y, grad, k, **_align(op)).output
    return [out, NoGradient(), NoGradient()]


@register_gradient("MatrixDiagV2", "MatrixDiagV3")
def _matrix_diag_v3_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad = grad_inputs[0]
    part = ops.MatrixDiagPartV3(scope, grad, op.input(1), _zero(scope, grad), **_align(op)).diagonal
    return [part] + [NoGradient()] * 4


@register_gradient("MatrixSetDiag")
def _matrix_set_diag_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad = grad_inputs[0]
    cleared = ops.MatrixSetDiag(scope, grad, ops.ZerosLike(scope, op.input(1)).y).output
    return [cleared, ops.MatrixDiagPart(scope, grad).diagonal]


@register_gradient("MatrixSetDiagV2", "MatrixSetDiagV3")
def _matrix_set_diag_v3_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad, k = grad_inputs[0], op.input(2)
    cleared = ops.MatrixSetDiagV3(scope, grad, ops.ZerosLike(scope, op.input(1)).y, k, **_align(op)).output
    part = ops.MatrixDiagPartV3(scope, grad, k, _zero(scope, grad), **_align(op)).diagonal
    return [cleared, part, NoGradient()]
