"""Einsum: one or two operands, an explicit ``->`` output, ``...`` broadcasting, repeated labels (diagonals).

The kernel follows TF's plan: per operand, take the diagonal of repeated labels and sum the labels no other
subscript uses; then one batched matrix product over the labels both operands keep (batch: also in the output,
contracted: not), with the ellipsis dimensions broadcast like BatchMatMulV2's batch dimensions; finally a
transpose into the output's order.  Half and bfloat16 are summed in float and rounded once, integers wrap.
Labels are letters (case-sensitive); TF's equation and shape messages are kept.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

import numpy as np

from tfops_py.conformance import ShapeRule, conformance, divergence, family_cases
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import broadcast_shapes, compute_dtype
from tfops_py.kernels._shape_util import merge_dim
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "linalg"
ELLIPSIS = "..."


# -- parsing ---------------------------------------------------------------------------------------------
def split_equation(ctx: Any, equation: str) -> tuple[list[str], str]:
    """(input subscripts, output subscript), TF's ``ParseEinsumEquation`` errors."""
    parts = equation.split("->")
    if len(parts) != 2:
        ctx.invalid_argument(f"Expecting exactly one '->' in einsum equation: {equation}")
    inputs = parts[0].split(",")
    if len(inputs) not in (1, 2):
        ctx.invalid_argument(f"Expecting 1 or 2 input subscripts in equation '{equation}' but got: {len(inputs)}")
    return inputs, parts[1]


def _check_ellipsis(ctx: Any, subscript: str) -> bool:
    periods = subscript.count(".")
    if periods not in (0, 3):
        ctx.invalid_argument(f"Expected at most one ellipsis (...), but found {periods} periods (.) in the input "
                             f"subscript: {subscript}")
    if periods == 3 and ELLIPSIS not in subscript:
        ctx.invalid_argument(f"Periods found outside of ellipsis in subscript: {subscript}")
    return periods == 3


def _named(subscript: str) -> tuple[str, str]:
    """(labels before the ellipsis, labels after it); no ellipsis: (all, "")."""
    head, _, tail = subscript.partition(ELLIPSIS)
    return head, tail


# -- shape function (TF's EinsumShape) ---------------------------------------------------------------------
@register_shape("Einsum")
def _einsum_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    equation = ctx.attr("equation")
    inputs, output = split_equation(ctx, equation)
    if ctx.num_inputs != len(inputs):
        ctx.invalid_argument(f"Expected {len(inputs)} inputs for equation {equation} but got: {ctx.num_inputs}")
    dims: dict[str, int] = {}
    bcast: list[PartialTensorShape] = []
    for i, sub in enumerate(inputs):
        has_ellipsis = _check_ellipsis(ctx, sub)
        shape = ctx.input(i)
        if not shape.unknown_rank():
            named = len(sub) - (3 if has_ellipsis else 0)
            if has_ellipsis and shape.dims() < named:
                ctx.invalid_argument(f"Shape must be at least rank {named} but is rank {shape.dims()}"
                                     f"\n\t for {i}th input and equation: {equation}")
            if not has_ellipsis and shape.dims() != named:
                ctx.invalid_argument(f"Shape must be rank {named} but is rank {shape.dims()}\n\t for {i}th input and "
                                     f"equation: {equation}")
        head, tail = _named(sub)
        known = not shape.unknown_rank()
        if has_ellipsis:
            bcast.append(PartialTensorShape(shape.as_tuple()[len(head):shape.dims() - len(tail)]) if known
                         else unknown_shape())
        else:
            bcast.append(PartialTensorShape([]))
        axes = [(c, k) for k, c in enumerate(head)] + [(c, (shape.dims() - len(tail) + k) if known else -1)
                                                       for k, c in enumerate(tail)]
        for label, axis in axes:
            dim = shape[axis] if known else -1
            dims[label] = merge_dim(ctx, dims[label], dim) if label in dims else dim
    out_bcast = bcast[0] if len(bcast) == 1 else broadcast_shapes(ctx, bcast[0], bcast[1])
    out_has_ellipsis = _check_ellipsis(ctx, output)
    if out_has_ellipsis:
        if out_bcast.unknown_rank():
            return [unknown_shape()]
    elif not out_bcast.unknown_rank() and out_bcast.dims() > 0:
        ctx.invalid_argument(f"Shape must be at most rank 0 but is rank {out_bcast.dims()}\n\t for einsum equation "
                             f"'{equation}' without ellipsis (...) in the output subscripts where input(s) have "
                             "non-empty broadcasting shape")
    head, tail = _named(output)
    for label in head + tail:
        if label not in dims:
            ctx.invalid_argument(f"Einsum output subscripts for equation '{equation}' has label '{label}' which is not "
                                 "present in the input subscripts")
    out = [dims[c] for c in head] + (list(out_bcast.as_tuple()) if out_has_ellipsis else []) + [dims[c] for c in tail]
    return [PartialTensorShape(out)]


# -- kernel ------------------------------------------------------------------------------------------------
@dataclass
class _Operand:
    """One operand with a label per axis (broadcast axes get private labels ``0, 1, ...``)."""

    value: Any
    labels: list[str]


def _bcast_labels(n: int) -> list[str]:
    """Labels of ``n`` ellipsis axes, aligned from the right (the last is "0"): digits never clash with letters."""
    return [str(n - 1 - k) for k in range(n)]


def _label_axes(ctx: KernelContext, x: Any, i: int, sub: str, sizes: dict[str, int], max_bcast: list[int]) -> list[str]:
    """Labels of operand ``i``'s axes, checking ranks and sizes with TF's kernel messages."""
    has_ellipsis = ELLIPSIS in sub
    head, tail = _named(sub)
    named = len(head) + len(tail)
    if not has_ellipsis and x.ndim != named:
        ctx.invalid_argument(f"Expected input {i} to have rank {named} but got: {x.ndim}")
    if has_ellipsis and x.ndim < named:
        ctx.invalid_argument(f"Expected input {i} to have rank at least {named} but got: {x.ndim}")
    n_bcast = x.ndim - named
    labels = list(head) + _bcast_labels(n_bcast) + list(tail)
    max_bcast[0] = max(max_bcast[0], n_bcast)
    for axis, label in enumerate(labels):
        if label.isdigit():
            continue
        size = x.shape[axis]
        if sizes.get(label, 0) not in (0, size):
            ctx.invalid_argument(f"Expected dimension {sizes[label]} at axis {axis} of the input shaped "
                                 f"{format_shape(x.shape)} but got dimension {size}")
        sizes[label] = size
    return labels


def _diagonal(xp: Any, op: _Operand) -> _Operand:
    """Each label repeated within the operand reduced to one axis (the diagonal)."""
    labels = op.labels
    for label in dict.fromkeys(labels):
        axes = [k for k, c in enumerate(labels) if c == label]
        if len(axes) < 2:
            continue
        x = op.value
        rest = [k for k in range(x.ndim) if k not in axes]
        x = xp.permute_dims(x, tuple(rest + axes))
        n = x.shape[-1]
        r = len(axes)
        x = xp.reshape(x, tuple(x.shape[:len(rest)]) + (n ** r,))
        step = sum(n ** j for j in range(r))
        x = xp.take(x, xp.arange(n, dtype=xp.int64) * step, axis=-1)
        labels = [labels[k] for k in rest] + [label]
        op = _Operand(x, labels)
    return op


def _sum_unused(xp: Any, op: _Operand, keep: set[str]) -> _Operand:
    """Sum the axes whose labels appear nowhere in ``keep``."""
    axes = tuple(k for k, c in enumerate(op.labels) if c not in keep)
    if not axes:
        return op
    return _Operand(xp.sum(op.value, axis=axes, dtype=op.value.dtype), [c for c in op.labels if c in keep])


def _transpose_to(xp: Any, op: _Operand, order: list[str]) -> Any:
    perm = tuple(op.labels.index(c) for c in order)
    return op.value if perm == tuple(range(len(perm))) else xp.permute_dims(op.value, perm)


@register_kernel("Einsum")
def _einsum(ctx: KernelContext, inputs: list) -> Any:
    xp = ctx.xp
    equation = ctx.attrs["equation"]
    subs, output = split_equation(ctx, equation)
    if len(inputs) != len(subs):
        ctx.invalid_argument(f"Expected {len(subs)} inputs but got: {len(inputs)}")
    sizes: dict[str, int] = {}
    max_bcast = [0]
    ops = [_Operand(x, _label_axes(ctx, x, i, s, sizes, max_bcast)) for i, (x, s) in enumerate(zip(inputs, subs))]
    head, tail = _named(output)
    if ELLIPSIS in output:
        out_labels = list(head) + _bcast_labels(max_bcast[0]) + list(tail)
    elif max_bcast[0] > 0:
        ctx.invalid_argument(f"Output contains {max_bcast[0]} broadcasting dimension(s) but no ellipsis (...) was "
                             "found in the output subscripts.")
    else:
        out_labels = list(head)
    if len(ops) == 2:  # ellipsis axes broadcast as BatchMatMulV2's batch dimensions
        _check_broadcast(ctx, ops)
    dt = ctx.output_dtypes[0]
    wide = compute_dtype(dt)
    for op in ops:
        if wide != dt:
            op.value = xp.astype(op.value, ctx.dtype(wide))
    ops = [_diagonal(xp, op) for op in ops]
    for i, op in enumerate(ops):
        keep = set(out_labels) | (set(ops[1 - i].labels) if len(ops) == 2 else set())
        ops[i] = _sum_unused(xp, op, keep)
    unique = list(dict.fromkeys(out_labels))
    result = _contract(xp, ops, unique) if len(ops) == 2 else ops[0]
    out = _transpose_to(xp, result, unique)
    out_shape = tuple(_out_size(ops, c) for c in unique)
    if tuple(out.shape) != out_shape:
        out = xp.broadcast_to(out, out_shape)
    if len(unique) < len(out_labels):  # a repeated output label: values on that diagonal, zeros elsewhere
        out = _undiagonal(xp, out, unique, out_labels)
    return out if wide == dt else xp.astype(out, ctx.dtype(dt))


def _undiagonal(xp: Any, x: Any, unique: list[str], labels: list[str]) -> Any:
    """``x`` (one axis per unique label) spread onto the axes ``labels`` name, repeated ones on their diagonal."""
    first = {c: labels.index(c) for c in unique}
    expanded = xp.reshape(x, tuple(x.shape[unique.index(c)] if first[c] == k else 1 for k, c in enumerate(labels)))
    mask = None
    for k, c in enumerate(labels):
        if first[c] == k:
            continue
        n = x.shape[unique.index(c)]
        index_shape = [1] * len(labels)
        here, there = list(index_shape), list(index_shape)
        here[k], there[first[c]] = n, n
        same = xp.reshape(xp.arange(n), tuple(here)) == xp.reshape(xp.arange(n), tuple(there))
        mask = same if mask is None else mask & same
    shape = tuple(x.shape[unique.index(c)] for c in labels)
    return xp.where(xp.broadcast_to(mask, shape), xp.broadcast_to(expanded, shape), xp.zeros(shape, dtype=x.dtype))


def _out_size(ops: list[_Operand], label: str) -> int:
    sizes = [op.value.shape[op.labels.index(label)] for op in ops if label in op.labels]
    return max(sizes) if 0 not in sizes else 0


def _check_broadcast(ctx: KernelContext, ops: list[_Operand]) -> None:
    shapes = [tuple(op.value.shape[k] for k, c in enumerate(op.labels) if c.isdigit()) for op in ops]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        ctx.invalid_argument(f"Invalid broadcasting dimensions: {format_shape(ops[0].value.shape)} vs. "
                             f"{format_shape(ops[1].value.shape)}")


def _contract(xp: Any, ops: list[_Operand], out_labels: list[str]) -> _Operand:
    """The product of two operands over their shared labels: ``[batch..., free_a, free_b]`` via one matmul."""
    a, b = ops
    shared = [c for c in a.labels if c in b.labels]
    batch = [c for c in shared if c in out_labels]
    contracted = [c for c in shared if c not in out_labels]
    free_a = [c for c in a.labels if c not in shared]
    free_b = [c for c in b.labels if c not in shared]
    # Broadcast batch labels (ellipsis axes) may be 1 on one side: keep them as separate matmul batch dims.
    va = _transpose_to(xp, a, batch + free_a + contracted)
    vb = _transpose_to(xp, b, batch + contracted + free_b)
    nb = len(batch)
    sa, sb = tuple(va.shape), tuple(vb.shape)
    fa = int(np.prod(sa[nb:nb + len(free_a)], dtype=np.int64))
    fb = int(np.prod(sb[nb + len(contracted):], dtype=np.int64))
    k = int(np.prod(sa[nb + len(free_a):], dtype=np.int64))
    va = xp.reshape(va, sa[:nb] + (fa, k))
    vb = xp.reshape(vb, sb[:nb] + (k, fb))
    prod = xp.matmul(va, vb)
    batch_shape = tuple(prod.shape[:nb])
    prod = xp.reshape(prod, batch_shape + sa[nb:nb + len(free_a)] + sb[nb + len(contracted):])
    return _Operand(prod, batch + free_a + free_b)


# -- conformance -----------------------------------------------------------------------------------------
_LETTERS = string.ascii_lowercase


# Equations (with operand shapes) of every kind: products, batch products, traces, diagonals, outer products,
# reductions, ellipsis broadcasting, empty dimensions; the golden patterns and the family's value cases use them.
BASIC_EQUATIONS: list[tuple[str, list[tuple[int, ...]]]] = [
    ("ab,bc->ac", [(2, 3), (3, 4)]), ("abc,acd->abd", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("bhqk,bhkd->bhqd", [(2, 2, 3, 5), (2, 2, 5, 4)]),
    ("abcd,aecd->acbe", [(2, 3, 2, 4), (2, 5, 2, 4)]), ("ii->i", [(3, 3)]), ("ii->", [(3, 3)]),
    ("aab->ab", [(2, 2, 3)]), ("ab->ba", [(2, 3)]), ("ab,ab->", [(2, 3), (2, 3)]), ("a,b->ab", [(2,), (3,)]),
    ("ab->a", [(2, 3)]), ("ab,cd->", [(2, 3), (4, 5)]), ("...ab,...bc->...ac", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ab...,b...->a...", [(2, 3, 4), (3, 4)]), ("...,...->...", [(2, 1), (3,)]), ("Ab,bC->AC", [(2, 3), (3, 4)]),
    ("ab,bc->ac", [(2, 0), (0, 4)]), ("a->", [(0,)]), ("aba,b->ab", [(2, 3, 2), (3,)]),
]


class EinsumShapes(ShapeRule):
    """Equations with their operand shapes: products, batch products, traces, diagonals, outer products,
    reductions and ellipsis broadcasting (golden patterns); random valid two-operand equations (live)."""

    FIXED = BASIC_EQUATIONS + [
        ("ab,bc", [(2, 3), (3, 4)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]), ("ab,bc->ac", [(2, 3), (4, 4)]),
        ("ii->i", [(3, 4)]), ("...ab,...bc->...ac", [(2, 3, 4), (5, 4, 2)]), ("a..b,bc->ac", [(2, 3), (3, 4)]),
        ("ab,bc->ac", [(2, 3, 1), (3, 4)]), ("abc,bc->a", [(2, 1, 4), (3, 4)]), ("ab,bc->ac", [(2, 3), (3, 4, 1)]),
        ("ab...,bc->ac", [(2, 3, 5), (3, 4)]), ("...a,...a->a", [(2, 3), (2, 3)])]

    def patterns(self) -> list[dict[str, Any]]:
        return [{"inputs": shapes, "equation": eq, "N": len(shapes)} for eq, shapes in self.FIXED]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        letters = list(rng.permutation(list(_LETTERS[:8])))
        sizes = {c: int(rng.integers(1, 4)) for c in letters}
        a = letters[:int(rng.integers(1, 4))]
        b = letters[int(rng.integers(0, len(a) + 1)):][:int(rng.integers(1, 4))]
        used = list(dict.fromkeys(a + b))
        out = [c for c in used if rng.integers(0, 2)]
        ellipsis = bool(rng.integers(0, 3) == 0)
        bshape = tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 3))))
        sa = (bshape if ellipsis else ()) + tuple(sizes[c] for c in a)
        sb = (bshape[int(rng.integers(0, len(bshape) + 1)):] if ellipsis else ()) + tuple(sizes[c] for c in b)
        dots = ELLIPSIS if ellipsis else ""
        eq = f"{dots}{''.join(a)},{dots}{''.join(b)}->{dots}{''.join(out)}"
        return {"inputs": [sa, sb], "equation": eq, "N": 2}


# Einsum's operands have shapes of their own per equation, which generated cases cannot express: the golden
# cases come from _linalg_cases (these equations over every dtype), the live ones from tests/kernels/test_linalg.py.
conformance("Einsum", generate=False)
family_cases("tfops_py.kernels.linalg._linalg_cases:build")
divergence("Einsum", when="an output label that no input has (`ab->abc`)",
           tf="graph construction refuses it; the eager kernel aborts the process (a failed CHECK in Transpose)",
           ours="the graph's error, at build time in every mode")
