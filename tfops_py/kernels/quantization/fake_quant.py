"""Fake quantisation: FakeQuantWithMinMax{Args,Vars,VarsPerChannel} and their gradients.

Bit-exact with TF 2.21's CPU kernels (``fake_quant_ops_functor.h``): nudged bounds computed in
float32, the Vars op dividing by the scale where Args/PerChannel multiply by a separately
computed inverse, gradients masked against the nudged bounds inclusively, and the min/max
gradient sums added in Eigen's order (``_fake_quant_impl.SumPlan``).  The per-channel ops take
any rank >= 1 with channels last; TF 2.21 aborts on a scalar there, we raise.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.framework.dtypes import DT_BOOL, DT_FLOAT
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.quantization import _fake_quant_impl as fq
from tfops_py.kernels.quantization._fake_quant_impl import Nudged
from tfops_py.kernels._parallel import parallel_for, parallel_map
from tfops_py.kernels.registry import KernelContext, register_kernel

ARGS, ARGS_GRAD = "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient"
VARS, VARS_GRAD = "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsGradient"
PC, PC_GRAD = "FakeQuantWithMinMaxVarsPerChannel", "FakeQuantWithMinMaxVarsPerChannelGradient"


def _dims(shape: PartialTensorShape) -> tuple[int, ...] | None:
    return None if shape.unknown_rank() else shape.as_tuple()


def _check_attrs(fail: Any, attrs: dict[str, Any], op_type: str) -> None:
    fq.check_num_bits(fail, attrs["num_bits"])
    if op_type in (ARGS, ARGS_GRAD):
        fq.check_args_range(fail, attrs["min"], attrs["max"])


def _binary_same_shape(fail: Any, op_type: str, node: str, a: Any, b: Any) -> None:
    """BinaryElementWiseOp's check (FakeQuantWithMinMaxArgsGradient), in TF's words."""
    if fq.shapes_differ(a, b):
        fail(f"Inputs to operation {node} of type {op_type} must have the same size and shape.  "
             f"Input 0: {fq.fmt_shape(a)} != input 1: {fq.fmt_shape(b)}")


# -- shape functions ---------------------------------------------------------------------------

@register_shape(ARGS, ARGS_GRAD, VARS, VARS_GRAD, PC, PC_GRAD)
def _fake_quant_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    op = ctx.op_type
    fail = ctx.invalid_argument
    _check_attrs(fail, ctx.attrs, op)
    grad = op.endswith("Gradient")
    x = ctx.input(1) if grad else ctx.input(0)
    if grad:
        g = ctx.input(0)
        if op == ARGS_GRAD:
            _binary_same_shape(fail, op, ctx.node_name, _dims(g), _dims(x))
        else:
            fq.check_same_shape(fail, _dims(g), _dims(x))
        x = x.merge_with(g)
    if op in (ARGS, ARGS_GRAD):
        return [x]
    lo, hi = ctx.input(2 if grad else 1), ctx.input(3 if grad else 2)
    if op in (VARS, VARS_GRAD):
        fq.check_rank(fail, "min", _dims(lo), 0)
        fq.check_rank(fail, "max", _dims(hi), 0)
        return [x, PartialTensorShape([]), PartialTensorShape([])] if grad else [x]
    fq.check_per_channel(fail, _dims(x), _dims(lo), _dims(hi))
    depth = max([-1] + [s[-1] for s in (x, lo, hi) if not s.unknown_rank()])  # all equal when known
    return [x, PartialTensorShape([depth]), PartialTensorShape([depth])] if grad else [x]


# -- shared kernel plumbing --------------------------------------------------------------------

def _args_params(ctx: KernelContext) -> Nudged:
    """Args ops: the nudged range depends on attrs only, so it is computed once per plan."""
    p = ctx.cache.get("nudged")
    if p is None:
        _check_attrs(ctx.invalid_argument, ctx.attrs, ctx.op_type)
        a = ctx.attrs
        p = ctx.cache["nudged"] = fq.nudge(a["min"], a["max"], a["num_bits"], a["narrow_range"])
    return p


def _vars_params(ctx: KernelContext, x: Any, lo: Any, hi: Any) -> Nudged:
    """Checks of the Vars/PerChannel kernels, then the nudged parameters (on the host)."""
    fail = ctx.invalid_argument
    _check_attrs(fail, ctx.attrs, ctx.op_type)
    if ctx.op_type in (VARS, VARS_GRAD):
        fq.check_rank(fail, "min", tuple(lo.shape), 0)
        fq.check_rank(fail, "max", tuple(hi.shape), 0)
    else:
        fq.check_per_channel(fail, tuple(x.shape), tuple(lo.shape), tuple(hi.shape))
    return fq.nudge(ctx.host(lo), ctx.host(hi), ctx.attrs["num_bits"], ctx.attrs["narrow_range"])


def _check_grad_shapes(ctx: KernelContext, g: Any, x: Any) -> None:
    _check_attrs(ctx.invalid_argument, ctx.attrs, ctx.op_type)  # TF checks attrs when it builds the kernel
    if ctx.op_type == ARGS_GRAD:
        _binary_same_shape(ctx.invalid_argument, ctx.op_type, ctx.node_name, tuple(g.shape), tuple(x.shape))
    else:
        fq.check_same_shape(ctx.invalid_argument, tuple(g.shape), tuple(x.shape))


def _cost(op_type: str) -> float:
    return fq.COST_PER_CHANNEL if op_type == PC_GRAD else fq.COST_SCALAR


# -- generic kernels (any array-API namespace) -------------------------------------------------

def _on_device(ctx: KernelContext, p: Nudged) -> tuple[Any, ...]:
    return tuple(ctx.asarray(v, DT_FLOAT) for v in p.params())


def _generic_forward(ctx: KernelContext, x: Any, p: Nudged) -> Any:
    xp = ctx.xp
    with np.errstate(all="ignore"):  # NaN where TF gives NaN (min == max != 0), silently as TF
        out = fq.forward(xp, x, *_on_device(ctx, p), divide=ctx.op_type == VARS)
    if p.zero.any():  # min == max == 0: TF outputs zeros (a whole scalar op, or one channel)
        out = xp.where(ctx.asarray(p.zero, DT_BOOL), xp.zeros_like(out), out)
    return out


@register_kernel(ARGS)
def _args(ctx: KernelContext, x: Any) -> Any:
    return _generic_forward(ctx, x, _args_params(ctx))


@register_kernel(VARS, PC)
def _vars(ctx: KernelContext, x: Any, lo: Any, hi: Any) -> Any:
    return _generic_forward(ctx, x, _vars_params(ctx, x, lo, hi))


def _generic_gradient(ctx: KernelContext, g: Any, x: Any, p: Nudged) -> tuple[Any, Any, Any]:
    with np.errstate(all="ignore"):  # inf * 0 and inf - inf give NaN, silently as in TF
        return _generic_gradient_body(ctx, g, x, p)


def _generic_gradient_body(ctx: KernelContext, g: Any, x: Any, p: Nudged) -> tuple[Any, Any, Any]:
    xp = ctx.xp
    nmin, nmax = (ctx.asarray(v, DT_FLOAT) for v in p.compare_bounds())
    dx, below, above = fq.gradient(xp, g, x, nmin, nmax)
    if ctx.op_type == ARGS_GRAD:
        return dx, None, None
    depth = x.shape[-1] if ctx.op_type == PC_GRAD else 1
    rows = x.size // depth if depth else 0
    cost = _cost(ctx.op_type)
    dmin = fq.column_sums(xp, xp.reshape(below, (rows, depth)), cost)
    dmax = fq.column_sums(xp, xp.reshape(above, (rows, depth)), cost)
    if p.zero.any():  # min == max == 0: gradients pass through, nothing reaches min/max
        zero = ctx.asarray(p.zero, DT_BOOL)
        dx = xp.where(zero, g, dx)
        dmin = xp.where(zero, xp.zeros_like(dmin), dmin)
        dmax = xp.where(zero, xp.zeros_like(dmax), dmax)
    if ctx.op_type == VARS_GRAD:
        dmin, dmax = xp.reshape(dmin, ()), xp.reshape(dmax, ())
    return dx, dmin, dmax


@register_kernel(ARGS_GRAD)
def _args_grad(ctx: KernelContext, g: Any, x: Any) -> Any:
    _check_grad_shapes(ctx, g, x)
    return _generic_gradient(ctx, g, x, _args_params(ctx))[0]


@register_kernel(VARS_GRAD, PC_GRAD)
def _vars_grad(ctx: KernelContext, g: Any, x: Any, lo: Any, hi: Any) -> tuple[Any, Any, Any]:
    _check_grad_shapes(ctx, g, x)
    return _generic_gradient(ctx, g, x, _vars_params(ctx, x, lo, hi))


# -- NumPy fast path: chunks of rows on all cores, in-place ufuncs, no full-size temporaries ----

_CHUNK = 1 << 16  # elements per chunk: the chunk's few temporaries stay in the core's cache
_STREAM = _CHUNK  # leaves of at least this many elements are streamed one by one
_UNIT = 1 << 20  # elements per work unit of smaller leaves (products buffered, then summed)
_TILE = 2048  # per-channel parameters are tiled to about this many elements (long inner loops)
F32_HALF, F32_ZERO = np.float32(0.5), np.float32(0.0)


def _np_params(values: tuple[np.ndarray, ...]) -> list[Any]:
    # 0-d parameters become NumPy float32 scalars: faster than 0-d arrays in every ufunc
    return [v[()] if v.ndim == 0 else v for v in values]


def _rows(ctx: KernelContext, x: np.ndarray) -> tuple[int, int]:
    """(rows, depth) of the 2-D view TF's kernel works on ([N, 1] for the scalar ops)."""
    depth = x.shape[-1] if ctx.op_type in (PC, PC_GRAD) else 1
    return (x.size // depth if depth else 0), depth


class _Tiled:
    """Per-channel parameters repeated ``k`` times, for blocks of rows viewed as [rows/k, k*d].

    A [rows, d] op [d] broadcast runs NumPy's inner loop d elements at a time; tiling makes
    the loops k*d long.  Scalar parameters (k = 1) pass through.
    """

    def __init__(self, params: list[Any], depth: int):
        vector = any(np.ndim(v) for v in params)
        self.k = 1 << max(0, (_TILE // max(depth, 1)).bit_length() - 1) if vector else 1
        self.k = min(self.k, 32)  # divides every whole block of 4 packets (32 rows)
        self.params = [np.tile(v, self.k) if np.ndim(v) else v for v in params]
        self.plain = params
        self.depth = depth

    def views(self, rows: int, *arrays: np.ndarray) -> tuple[list[np.ndarray], list[Any]]:
        """``arrays`` ([rows, d] blocks) viewed for the tiled parameters when k divides rows
        (and every block is contiguous, so that the views are views)."""
        if self.k > 1 and rows % self.k == 0 and all(a.flags.c_contiguous for a in arrays):
            shape = (rows // self.k, self.k * self.depth)
            return [a.reshape(shape) for a in arrays], self.params
        return list(arrays), self.plain


def _np_forward(ctx: KernelContext, x: np.ndarray, p: Nudged) -> np.ndarray:
    out = np.empty_like(x)
    rows, depth = _rows(ctx, x)
    if out.size == 0:
        return out
    x2, o2 = x.reshape(rows, depth), out.reshape(rows, depth)
    tiled = _Tiled(_np_params(p.params()), depth)
    divide = ctx.op_type == VARS
    zero = p.zero if p.zero.any() else None
    step = max(1, _CHUNK // (depth * tiled.k)) * tiled.k
    # One np.clip equals TF's min-then-max clamp when the bounds are ordered (not NaN); it is
    # much faster than np.minimum/np.maximum with scalar bounds (these stay for vectors).
    clip = p.nudged_min.ndim == 0 and bool(p.nudged_min <= p.nudged_max)

    def work(c0: int, c1: int) -> None:
        with np.errstate(all="ignore"):
            for r in range(c0 * step, min(rows, c1 * step), step):
                stop = min(rows, r + step)
                (o, xc), (nmin, nmax, scale, inv_scale, quant_zero) = tiled.views(stop - r, o2[r:stop], x2[r:stop])
                if clip:
                    np.clip(xc, nmin, nmax, out=o)
                else:
                    np.minimum(xc, nmax, out=o)
                    np.maximum(o, nmin, out=o)
                np.subtract(o, nmin, out=o)
                if divide:
                    np.divide(o, scale, out=o)
                else:
                    np.multiply(o, inv_scale, out=o)
                np.subtract(o, quant_zero, out=o)
                np.add(o, F32_HALF, out=o)
                np.floor(o, out=o)
                np.multiply(o, scale, out=o)
                if zero is not None:
                    np.copyto(o2[r:stop], F32_ZERO, where=zero)

    parallel_for(work, -(-rows // step))
    return out


@register_kernel(ARGS, backend="numpy")
def _args_np(ctx: KernelContext, x: np.ndarray) -> np.ndarray:
    return _np_forward(ctx, x, _args_params(ctx))


@register_kernel(VARS, PC, backend="numpy")
def _vars_np(ctx: KernelContext, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return _np_forward(ctx, x, _vars_params(ctx, x, lo, hi))


class _GradBlock:
    """The element-wise part of a gradient on one block of rows, into caller-given buffers."""

    def __init__(self, p: Nudged, depth: int, g2: np.ndarray, x2: np.ndarray, d2: np.ndarray):
        bounds = p.compare_bounds()
        self.tiled = _Tiled(_np_params(bounds), depth)
        self.real_bounds = not any(np.isnan(b).any() for b in bounds)
        self.zero = p.zero if p.zero.any() else None
        self.g2, self.x2, self.d2 = g2, x2, d2

    def run(self, a: int, b: int, below: np.ndarray | None = None, above: np.ndarray | None = None) -> None:
        """dx for rows [a, b); ``below`` / ``above`` ([b - a, d]) get TF's g * (x < lo) and g * (x > hi).

        Every product is TF's ``g * mask`` (g * 0.0 keeps -0 and turns inf into NaN).  With the
        two outer masks at hand, x in [lo, hi] is "neither below nor above" unless x or a bound
        is NaN (a cheap min-reduce tells), which saves two comparisons.
        """
        if b <= a:
            return
        outs = () if below is None else (below, above)
        (gc, xc, dc, *outs), (lo, hi) = self.tiled.views(b - a, self.g2[a:b], self.x2[a:b], self.d2[a:b], *outs)
        with np.errstate(all="ignore"):
            if below is None:
                inside = np.greater_equal(xc, lo)
                inside &= np.less_equal(xc, hi)
            else:
                outer = np.less(xc, lo)
                np.multiply(gc, outer, out=outs[0])
                inside = np.greater(xc, hi)
                np.multiply(gc, inside, out=outs[1])
                if self.real_bounds and not np.isnan(np.minimum.reduce(xc, axis=None)):
                    inside |= outer
                    np.logical_not(inside, out=inside)
                else:
                    np.greater_equal(xc, lo, out=inside)
                    inside &= np.less_equal(xc, hi)
            np.multiply(gc, inside, out=dc)
            if self.zero is not None:
                np.copyto(self.d2[a:b], self.g2[a:b], where=self.zero)


def _leaf_streamed(block: _GradBlock, first: int, num: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """One big leaf's (below, above) sums, a chunk of whole 4-packet blocks at a time.

    Each chunk's products go to ``buf[1:]`` behind the running accumulators in ``buf[0]``, so
    one in-order ``add.reduce`` continues Eigen's sequential per-lane sums exactly.
    """
    lanes = 4 * fq.PACKET
    v4 = (num // lanes) * lanes
    per = max(1, _CHUNK // (lanes * depth))  # whole blocks per chunk
    acc = [np.zeros((4, fq.PACKET, depth), np.float32) for _ in range(2)]
    buf = [np.empty((1 + per, 4, fq.PACKET, depth), np.float32) for _ in range(2)]
    for r in range(0, v4, per * lanes):
        nb = min(per, (v4 - r) // lanes)
        outs = [b[1:1 + nb].reshape(nb * lanes, depth) for b in buf]
        block.run(first + r, first + r + nb * lanes, *outs)
        for a, b in zip(acc, buf):
            b[0] = a
            np.add.reduce(b[:1 + nb], axis=0, out=a)
    t = num - v4
    tails = [np.empty((t, depth), np.float32) for _ in range(2)]
    block.run(first + v4, first + num, *tails)
    with np.errstate(all="ignore"):
        return tuple(fq.leaf_finish(np, a[None] if v4 else None, tail[None])[0]  # type: ignore[return-value]
                     for a, tail in zip(acc, tails))


def _np_gradient(ctx: KernelContext, g: np.ndarray, x: np.ndarray, p: Nudged) -> tuple[Any, Any, Any]:
    dx = np.empty_like(g)
    rows, depth = _rows(ctx, x)
    if dx.size == 0 and ctx.op_type == ARGS_GRAD:
        return dx, None, None
    block = _GradBlock(p, depth, g.reshape(rows, depth), x.reshape(rows, depth), dx.reshape(rows, depth))
    if ctx.op_type == ARGS_GRAD:  # no sums: dx in chunks
        step = max(1, _CHUNK // depth)

        def work(c0: int, c1: int) -> None:
            for r in range(c0 * step, min(rows, c1 * step), step):
                block.run(r, min(rows, r + step))

        parallel_for(work, -(-rows // step))
        return dx, None, None
    plan = fq.sum_plan(rows, _cost(ctx.op_type), fq.tf_intra_op_threads())
    # each leaf's value: its (below, above) sums side by side, [2 * depth]
    if not depth:
        leaf_values: list[Any] = [np.zeros(0, np.float32)] * len(plan.leaves)
    elif plan.leaves and plan.n * depth >= _STREAM * len(plan.leaves):  # big leaves: stream each
        leaf_values = parallel_map(lambda leaf: np.concatenate(_leaf_streamed(block, *leaf, depth)),  # pyright: ignore[reportCallIssue]
                                   plan.leaves)
    else:  # small leaves: a unit of consecutive leaves at a time, summed by length groups
        leaf_values = [v for unit in parallel_map(lambda u: _unit_sums(block, u, depth),
                                                  _units(plan, max(1, _UNIT // depth)))
                       for v in unit]
    with np.errstate(all="ignore"):
        both = fq.evaluate(plan, leaf_values, np.zeros(2 * depth, np.float32))
    dmin, dmax = both[:depth], both[depth:]
    if block.zero is not None:
        dmin[block.zero] = 0
        dmax[block.zero] = 0
    if ctx.op_type == VARS_GRAD:
        return dx, dmin.reshape(()), dmax.reshape(())
    return dx, dmin, dmax


def _units(plan: fq.SumPlan, step: int) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Consecutive leaves grouped into work units of about ``step`` rows: (start, stop, leaves)."""
    units: list[tuple[int, int, list[tuple[int, int]]]] = []
    for first, num in plan.leaves:  # leaves are in row order and cover [0, rows)
        if units and units[-1][1] - units[-1][0] + num <= step:
            a, _, leaves = units[-1]
            units[-1] = (a, first + num, leaves + [(first, num)])
        else:
            units.append((first, first + num, [(first, num)]))
    return units


def _unit_sums(block: _GradBlock, unit: tuple[int, int, list[tuple[int, int]]], depth: int) -> list[np.ndarray]:
    """The [2 * depth] (below, above) sums of each leaf of a unit: products a chunk at a time
    into one [rows, 2, depth] buffer, then all the unit's leaves summed in a few calls."""
    a, b, leaves = unit
    buf = np.empty((b - a, 2, depth), np.float32)
    step = max(1, _CHUNK // depth)
    for r in range(a, b, step):
        stop = min(b, r + step)
        block.run(r, stop, buf[r - a:stop - a, 0, :], buf[r - a:stop - a, 1, :])
    with np.errstate(all="ignore"):
        return fq.leaf_sums(np, buf.reshape(b - a, 2 * depth), leaves, offset=a)


@register_kernel(ARGS_GRAD, backend="numpy")
def _args_grad_np(ctx: KernelContext, g: np.ndarray, x: np.ndarray) -> np.ndarray:
    _check_grad_shapes(ctx, g, x)
    return _np_gradient(ctx, g, x, _args_params(ctx))[0]


@register_kernel(VARS_GRAD, PC_GRAD, backend="numpy")
def _vars_grad_np(ctx: KernelContext, g: np.ndarray, x: np.ndarray, lo: np.ndarray,
                  hi: np.ndarray) -> tuple[Any, Any, Any]:
    _check_grad_shapes(ctx, g, x)
    return _np_gradient(ctx, g, x, _vars_params(ctx, x, lo, hi))
