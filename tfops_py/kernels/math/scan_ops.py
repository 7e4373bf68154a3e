"""Cumsum, Cumprod and CumulativeLogsumexp: scans along one axis, with TF's ``exclusive`` and ``reverse``.

``exclusive`` shifts the scan by one (the first output is the identity: 0, 1, -inf), ``reverse`` scans
from the end.  Integers wrap like TF's in-type accumulation; half and bfloat16 accumulate in their own
type, as Eigen's scans do.  CumulativeLogsumexp is ``log(cumsum(exp(x)))`` without overflow: NumPy runs
``logaddexp.accumulate`` (TF's sequential order); other namespaces a log-depth (Hillis-Steele) scan of
``logaddexp``, which rounds in another order.  The generic inclusive scan is ``inclusive_scan`` (the
segment reductions share it).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py.conformance import (BOOL, axis_of, case, conformance, divergence, int_extremes, literal, reference,
                                  values)
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._shape_util import host_ints
from tfops_py.kernels.registry import KernelContext, register_kernel

Combine = Callable[[Any, Any], Any]
SCANS = ("Cumsum", "Cumprod", "CumulativeLogsumexp")


def _along(rank: int, axis: int, start: int, stop: int | None) -> tuple:
    """An index taking ``start:stop`` of ``axis`` and everything of the other dimensions."""
    return (slice(None),) * axis + (slice(start, stop), ...)


def inclusive_scan(xp: Any, x: Any, axis: int, combine: Combine, identity: Any) -> Any:
    """``combine``-scan of ``x`` along ``axis`` in ceil(log2 n) whole-array steps (Hillis-Steele): step k
    combines each element with the one 2^k before it (``identity`` before the start)."""
    n = x.shape[axis]
    shift = 1
    while shift < n:
        pad_shape = tuple(shift if i == axis else d for i, d in enumerate(x.shape))
        before = xp.concat([xp.full(pad_shape, identity, dtype=x.dtype), x[_along(x.ndim, axis, 0, n - shift)]],
                           axis=axis)
        x = combine(before, x)
        shift *= 2
    return x


def _scan_axis(fail: Callable[[str], Any], axis: int, rank: int) -> int:
    canonical = axis + rank if axis < 0 else axis
    if not 0 <= canonical < rank:
        fail(f"ScanOp: Expected scan axis in the range [{-rank}, {rank}), but got {canonical}")
    return canonical


@register_shape(*SCANS)
def _scan_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's UnchangedShape; a constant axis out of range is reported at build time."""
    axis = ctx.input_tensor(1)
    if axis is not None and np.ndim(axis) == 0 and not ctx.input(0).unknown_rank():
        _scan_axis(ctx.invalid_argument, host_ints(axis)[0], ctx.input(0).dims())
    return unchanged_shape(ctx)


def _logaddexp_scan(xp: Any, x: Any, axis: int, numpy: bool) -> Any:
    if numpy:
        return np.logaddexp.accumulate(x, axis=axis)
    return inclusive_scan(xp, x, axis, xp.logaddexp, -math.inf)


def _scan_kernel(op: str, numpy: bool) -> Callable[..., Any]:
    def kernel(ctx: KernelContext, x: Any, axis: Any) -> Any:
        a = ctx.host(axis)
        if a.ndim != 0:
            ctx.invalid_argument(f"ScanOp: axis must be a scalar, not {format_shape(a.shape)}")
        ax = _scan_axis(ctx.invalid_argument, int(a), x.ndim)
        xp = ctx.xp
        exclusive, reverse = ctx.attrs["exclusive"], ctx.attrs["reverse"]
        n = x.shape[ax]
        if reverse:
            x = xp.flip(x, axis=ax)
        with np.errstate(all="ignore"):  # integer wrap-around, inf - inf: TF's results too
            if op == "CumulativeLogsumexp":
                if exclusive:
                    pad_shape = tuple(1 if i == ax else d for i, d in enumerate(x.shape))
                    x = xp.concat([xp.full(pad_shape, -math.inf, dtype=x.dtype),
                                   x[_along(x.ndim, ax, 0, n - 1)]], axis=ax) if n else x
                out = _logaddexp_scan(xp, x, ax, numpy)
            else:
                scan = xp.cumulative_sum if op == "Cumsum" else xp.cumulative_prod
                out = scan(x, axis=ax, dtype=x.dtype, include_initial=exclusive)
                if exclusive:
                    out = out[_along(x.ndim, ax, 0, n)]
        return xp.flip(out, axis=ax) if reverse else out

    return kernel


for _op in SCANS:
    register_kernel(_op)(_scan_kernel(_op, numpy=False))
register_kernel("CumulativeLogsumexp", backend="numpy")(_scan_kernel("CumulativeLogsumexp", numpy=True))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
_EXTREMES = [case(x=int_extremes(dt), axis=literal(0, DataType.DT_INT32), exclusive=ex, reverse=rev)
             for dt in ("int8", "int32", "int64", "uint8", "uint64") for ex, rev in ((False, False), (True, True))]
_SPECIALS = [case(x=literal([[math.nan, 1.0, 2.0], [math.inf, -math.inf, 3.0], [-math.inf, -math.inf, 0.0]], dt),
                  axis=literal(ax, DataType.DT_INT32), exclusive=ex, reverse=rev)
             for dt in (DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_HALF)
             for ax in (0, 1) for ex, rev in ((False, False), (True, False), (False, True), (True, True))]
_BAD_AXES = [case(x=[[1.0, 2.0]], axis=literal(bad, DataType.DT_INT32)) for bad in (2, -3, [0])]
for _op in SCANS:
    conformance(_op, x=values(specials=_op == "CumulativeLogsumexp"), axis=axis_of("x", out_of_range=True),
                exclusive=BOOL, reverse=BOOL, compare="acc", live=20,
                cases=_SPECIALS + _BAD_AXES + ([] if _op == "CumulativeLogsumexp" else _EXTREMES))

divergence("Cumprod", when="complex inputs with infinite or NaN parts",
           tf="Eigen's complex product", ours="NumPy's (C99's): the parts that are NaN can differ")
divergence("CumulativeLogsumexp", when="NaN or +inf inputs",
           tf="ignores a NaN (the running value a is replaced by a + log 2, or stays -inf) and gives NaN once two "
              "+inf meet (its combine computes inf - inf)",
           ours="NaN from the first NaN on, +inf from the first +inf on (``logaddexp``)",
           applies=lambda inputs, attrs: bool(np.any(np.isnan(inputs["x"]) | np.isposinf(inputs["x"]))),
           reference=reference("tfops_py.kernels.math.scan_ops:logsumexp_non_finite",
                               "TF's values where the scan has met no NaN or +inf; NaN and +inf propagate from "
                               "there on"))
divergence(SCANS, when="an out-of-range constant `axis`", tf="error when the kernel runs",
           ours="the same error at build time")


def logsumexp_non_finite(run_tf: Callable[..., Any], op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's CumulativeLogsumexp with NaN, then +inf, carried forward from where the scan first meets one."""
    x, axis = np.asarray(inputs[0]), int(np.asarray(inputs[1]))
    out = run_tf(op, inputs, attrs)[0]
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim:
        return [out]
    axis %= x.ndim

    def seen(mask: np.ndarray) -> np.ndarray:
        m = np.flip(mask, axis) if attrs.get("reverse") else mask
        hit = np.logical_or.accumulate(m, axis=axis) if m.shape[axis] else m
        if attrs.get("exclusive") and m.shape[axis]:
            hit = np.concatenate([np.zeros_like(np.take(hit, [0], axis)), np.delete(hit, -1, axis)], axis)
        return np.flip(hit, axis) if attrs.get("reverse") else hit

    out = np.where(seen(np.isposinf(x)), np.inf, out)
    return [np.where(seen(np.isnan(x)), np.nan, out).astype(x.dtype)]
