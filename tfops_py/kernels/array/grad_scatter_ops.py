"""Index-driven ops of gradient graphs: DynamicStitch, GatherNd and the scatter-adds (UnsortedSegmentSum is a
math op: kernels/math/segment_ops.py).

ScatterNd, TensorScatterAdd and ScatterNdNonAliasingAdd (the gradient of TensorScatterUpdate and
friends); the last two differ only in their checks' wording, as in TF.

Split from ``grad_support_ops`` to keep modules small.  Checks and messages are TF 2.21's CPU
kernels'.  Index tensors are validated on the backend and read on the host only to word an
error (or, for DynamicStitch, to find each row's last writer).

Scatter-adds come in two kernels: NumPy adds in index order with ``np.add.at``, exactly as TF's
serial CPU loop does (same rounding); the generic kernel sums a masked one-hot product, which
keeps NaN and infinity in their own rows (a one-hot matmul would spread them) and may round
differently.  Out-of-range indices are errors, as on TF's CPU, unless ``bad_indices_policy`` is
IGNORE (GatherNd: a zero slice; ScatterNd/TensorScatterAdd: the update is dropped).  TF reports
the last bad index tuple its loop met; so do we.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfops_py.conformance import conformance, divergence
from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.dtypes import DT_BOOL, DT_INT64
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import merge_dim, merge_shapes, shape_from_shape_tensor
from tfops_py.kernels.array.fill_ops import checked_shape, zeros_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "grad_kernels"

Scatter = Callable[[KernelContext, Any, Any, Any, Any], Any]


def merge_prefix(ctx: InferenceContext, shape: PartialTensorShape, prefix: PartialTensorShape) -> None:
    """``InferenceContext::MergePrefix``: ``shape`` must start with ``prefix`` where both are known."""
    if shape.unknown_rank() or prefix.unknown_rank():
        return
    ctx.with_rank_at_least(shape, prefix.dims())
    for a, b in zip(shape, prefix):
        merge_dim(ctx, a, b)


def slice_debug_string(shape: Sequence[int], flat: int) -> str:
    """TF's ``SliceDebugString``: ``[1,2]`` for flat index ``flat`` of ``shape`` ("" for a scalar)."""
    if not shape:
        return ""
    return "[" + ",".join(str(int(i)) for i in np.unravel_index(flat, tuple(shape))) + "]"


# -- scatter primitives ---------------------------------------------------------------------------------
def _scatter_generic(ctx: KernelContext, base: Any, rows: Any, keep: Any, values: Any) -> Any:
    """``base`` (R, K) plus each row of ``values`` (N, K) at ``rows`` where ``keep``: a masked one-hot sum.

    N is taken in chunks to bound memory (chunks of index tuples, not a loop over elements).
    """
    xp = ctx.xp
    r, n = base.shape[0], values.shape[0]
    if n == 0 or r == 0:
        return base
    targets = xp.reshape(xp.arange(r, dtype=rows.dtype), (1, r, 1))
    zero = xp.zeros((), dtype=values.dtype)
    step = max(1, (1 << 24) // max(1, r * values.shape[1]))
    boolean = ctx.output_dtypes[0] == DT_BOOL
    for start in range(0, n, step):
        sl = slice(start, min(n, start + step))
        hit = (xp.reshape(rows[sl], (-1, 1, 1)) == targets) & xp.reshape(keep[sl], (-1, 1, 1))
        picked = xp.where(hit, xp.expand_dims(values[sl, ...], axis=1), zero)
        base = (base | xp.any(picked, axis=0)) if boolean else base + xp.sum(picked, axis=0, dtype=values.dtype)
    return base


def _scatter_numpy(ctx: KernelContext, base: Any, rows: Any, keep: Any, values: Any) -> Any:
    """In index order, as TF's serial CPU loop (identical rounding)."""
    out = np.array(base, copy=True)
    if ctx.output_dtypes[0] == DT_BOOL:
        np.logical_or.at(out, rows[keep], values[keep])
    else:
        np.add.at(out, rows[keep], values[keep])
    return out


def _register_both(op: str, impl: Callable[..., Any]) -> None:
    """A generic kernel and a NumPy one, differing only in the scatter primitive."""
    register_kernel(op)(lambda ctx, *args: impl(ctx, _scatter_generic, *args))
    register_kernel(op, backend="numpy")(lambda ctx, *args: impl(ctx, _scatter_numpy, *args))


# -- DynamicStitch ---------------------------------------------------------------------------------------
@register_shape("DynamicStitch")
def _dynamic_stitch_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    n = ctx.attrs["N"]
    extra, max_index, all_constant = unknown_shape(), -1, True
    for i in range(n):
        values, indices, data = ctx.input_tensor(i), ctx.input(i), ctx.input(n + i)
        if values is None:
            all_constant = False
        elif values.size:
            max_index = max(max_index, int(np.max(values)))
        if indices.unknown_rank():
            continue
        merge_prefix(ctx, data, indices)
        if not data.unknown_rank():
            extra = merge_shapes(ctx, extra, PartialTensorShape(data.as_tuple()[indices.dims():]))
    first = max_index + 1 if all_constant else -1
    return [unknown_shape() if extra.unknown_rank() else PartialTensorShape([first] + list(extra.as_tuple()))]


@register_kernel("DynamicStitch")
def _dynamic_stitch(ctx: KernelContext, indices: list[Any], data: list[Any]) -> Any:
    """Later indices win (TF's serial CPU kernel); rows no index names are zero."""
    hosts = [ctx.host(i) for i in indices]
    size = max([int(h.max()) for h in hosts if h.size] + [-1]) + 1
    for h in hosts:
        bad = np.flatnonzero((h.reshape(-1) < 0) | (h.reshape(-1) >= size))
        if bad.size:
            ctx.invalid_argument(f"indices[{bad[0]}] is out of range")
    i0, d0 = hosts[0].shape, tuple(data[0].shape)
    for k, (h, d) in enumerate(zip(hosts, data)):
        ds = tuple(d.shape)
        if ds[:h.ndim] != h.shape:
            ctx.invalid_argument(f"data[{k}].shape = {format_shape(ds)} does not start with indices[{k}].shape = "
                                 f"{format_shape(h.shape)}")
        if k and ds[h.ndim:] != d0[len(i0):]:
            ctx.invalid_argument(f"Need data[0].shape[{len(i0)}:] = data[{k}].shape[{h.ndim}:], got data[0].shape = "
                                 f"{format_shape(d0)}, data[{k}].shape = {format_shape(ds)}, indices[0].shape = "
                                 f"{format_shape(i0)}, indices[{k}].shape = {format_shape(h.shape)}")
    inner, dt, xp = d0[len(i0):], ctx.output_dtypes[0], ctx.xp
    flat_idx = np.concatenate([h.reshape(-1) for h in hosts]).astype(np.int64)
    if size == 0 or flat_idx.size == 0:
        return zeros_of(ctx, (size,) + inner, dt)
    rows = xp.concat([xp.reshape(d, (h.size,) + inner) for h, d in zip(hosts, data)], axis=0)
    source = np.full(size, -1, np.int64)
    np.maximum.at(source, flat_idx, np.arange(flat_idx.size))  # the last writer of each row
    if (source < 0).any():  # rows never written are zeros: gather them from an appended zero row
        rows = xp.concat([rows, zeros_of(ctx, (1,) + inner, dt)], axis=0)
        source[source < 0] = flat_idx.size
    return xp.take(rows, ctx.asarray(source, DT_INT64), axis=0)


# -- N-d indexing helpers -------------------------------------------------------------------------------
def _nd_rows(ctx: KernelContext, index_rows: Any, prefix: Sequence[int]) -> tuple[Any, Any]:
    """Linear row of each index tuple of ``index_rows`` (N, r) into ``prefix``, and which are out of range."""
    xp = ctx.xp
    idx = xp.astype(index_rows, ctx.dtype(DT_INT64))
    rows = xp.zeros((idx.shape[0],), dtype=idx.dtype)
    bad = xp.zeros((idx.shape[0],), dtype=xp.bool)
    stride = 1
    for k in range(len(prefix) - 1, -1, -1):  # over the index depth (at most 7)
        col = idx[:, k]
        rows = rows + col * stride
        bad = bad | (col < 0) | (col >= prefix[k])
        stride *= prefix[k]
    return rows, bad


def _bad_nd_index(ctx: KernelContext, index_rows: Any, bad: Any, batch: Sequence[int], into: str) -> None:
    rows, flags = ctx.host(index_rows), ctx.host(bad)
    loc = int(np.flatnonzero(flags)[-1])
    ctx.invalid_argument(f"indices{slice_debug_string(batch, loc)} = ["
                         f"{', '.join(str(int(v)) for v in rows[loc].tolist())}] does not index into {into}")


def _policy_ignores(ctx: KernelContext) -> bool:
    return ctx.attrs.get("bad_indices_policy", "") == "IGNORE"


# -- GatherNd --------------------------------------------------------------------------------------------
@register_shape("GatherNd")
def _gather_nd_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    params, indices = ctx.input(0), ctx.with_rank_at_least(ctx.input(1), 1)
    if params.unknown_rank() or indices.unknown_rank() or indices[-1] == -1:
        return [unknown_shape()]
    r = indices[-1]
    if r > params.dims():
        ctx.invalid_argument(f"indices.shape[-1] must be <= params.rank, but saw indices shape: {indices} and "
                             f"params shape: {params}")
    return [PartialTensorShape(list(indices.as_tuple()[:-1]) + list(params.as_tuple()[r:]))]


@register_kernel("GatherNd")
def _gather_nd(ctx: KernelContext, params: Any, indices: Any) -> Any:
    xp = ctx.xp
    if params.ndim < 1:
        ctx.invalid_argument("params must be at least a vector")
    if indices.ndim < 1:
        ctx.invalid_argument("indices must be at least a vector")
    ps, qs = tuple(params.shape), tuple(indices.shape)
    r = qs[-1]
    if r > len(ps):
        ctx.invalid_argument(f"index innermost dimension length must be <= params rank; saw: {r} vs. {len(ps)}")
    out_shape, n = qs[:-1] + ps[r:], math.prod(qs[:-1])
    if n == 0:
        return zeros_of(ctx, out_shape, ctx.output_dtypes[0])
    if math.prod(ps) == 0:
        ctx.invalid_argument(f"Requested more than 0 entries, but params is empty.  Params shape: {format_shape(ps)}")
    if r > 7:
        ctx.invalid_argument(f"Only indices.shape[-1] values between 1 and 7 are currently supported.  Requested "
                             f"rank: {r}")
    index_rows = xp.reshape(indices, (n, r))
    rows, bad = _nd_rows(ctx, index_rows, ps[:r])
    any_bad = bool(xp.any(bad))
    if any_bad and not _policy_ignores(ctx):
        _bad_nd_index(ctx, index_rows, bad, qs[:-1], f"param shape {format_shape(ps)}, node name: {ctx.node_name}")
    flat = xp.reshape(params, (math.prod(ps[:r]), math.prod(ps[r:])))
    out = xp.take(flat, xp.where(bad, xp.zeros_like(rows), rows), axis=0)
    if any_bad:  # IGNORE: a zero slice
        out = xp.where(xp.reshape(bad, (-1, 1)), zeros_of(ctx, (), ctx.output_dtypes[0]), out)
    return xp.reshape(out, out_shape)


# -- ScatterNd, TensorScatterAdd -------------------------------------------------------------------------
def _scatter_nd_shape_checks(ctx: InferenceContext, indices: PartialTensorShape, updates: PartialTensorShape,
                             out: PartialTensorShape) -> None:
    """TF's ScatterNdShapeHelper."""
    if out.num_elements() == 0 and (indices.num_elements() > 0 or updates.num_elements() > 0):
        ctx.invalid_argument("Indices and updates specified for empty input")
    if indices.unknown_rank() or updates.unknown_rank() or updates.dims() == 0 or indices[-1] == -1:
        return
    outer, ix = indices.dims() - 1, indices[-1]
    pi, pu = PartialTensorShape(indices.as_tuple()[:outer]), PartialTensorShape(updates.as_tuple()[:outer])
    why = _merge_failure(ctx, pi, pu)
    if why:
        ctx.invalid_argument(f"Dimensions [0,{outer}) of indices[shape={indices}] = {pi} must match dimensions "
                             f"[0,{outer}) of updates[shape={updates}] = {pu}: {why}")
    if out.unknown_rank():
        return
    so, su = PartialTensorShape(out.as_tuple()[ix:]), PartialTensorShape(updates.as_tuple()[outer:])
    why = _merge_failure(ctx, so, su)
    if why:
        ctx.invalid_argument(f"Dimensions [{ix},{out.dims()}) of input[shape={out}] = {so} must match dimensions "
                             f"[{outer},{updates.dims()}) of updates[shape={updates}] = {su}: {why}")


def _merge_failure(ctx: InferenceContext, a: PartialTensorShape, b: PartialTensorShape) -> str:
    """Why ``Merge(a, b)`` fails (TF appends it to the ScatterNd shape errors), or ""."""
    try:
        merge_shapes(ctx, a, b)
    except InvalidArgumentError as e:
        return e.message
    return ""


@register_shape("ScatterNd")
def _scatter_nd_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    indices = ctx.with_rank_at_least(ctx.input(0), 1)
    updates = ctx.with_rank_at_least(ctx.input(1), 1)
    out = shape_from_shape_tensor(ctx, 2)
    _scatter_nd_shape_checks(ctx, indices, updates, out)
    return [out]


@register_shape("TensorScatterAdd")
def tensor_scatter_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    out = ctx.with_rank_at_least(ctx.input(0), 1)
    indices = ctx.with_rank_at_least(ctx.input(1), 1)
    updates = ctx.with_rank_at_least(ctx.input(2), 1)
    _scatter_nd_shape_checks(ctx, indices, updates, out)
    return [out]


def _valid_empty(out_count: int, indices: Any, updates: Any) -> bool:
    """TF's ValidEmptyOutputShape."""
    ni, nu = math.prod(indices.shape), math.prod(updates.shape)
    return (ni == 0 and nu == 0) or (out_count != 0 and ni != 0 and nu != 0)


def _ranks_at_least_one(ctx: KernelContext, indices: Any, updates: Any) -> None:
    for name, t in (("Indices", indices), ("Updates", updates)):
        if t.ndim < 1:
            ctx.invalid_argument(f"{name} shape must have rank at least one. Found:{format_shape(t.shape)}")


def scatter_into(ctx: KernelContext, scatter: Scatter, base: Any, indices: Any, updates: Any) -> Any:
    """``base`` combined with ``updates`` at the index tuples of ``indices`` (shapes already checked).

    Indices of rank 1 are that many tuples of depth 1, as in TF's ``DoScatterNd``.
    """
    xp = ctx.xp
    shape, qs = tuple(base.shape), tuple(indices.shape)
    r, batch = (qs[-1], qs[:-1]) if len(qs) > 1 else (1, qs)
    n = math.prod(batch)
    if math.prod(shape) == 0:
        return base
    if not 1 <= r <= 7:  # sic: TF's message says 5 while its CPU kernels take up to 7
        ctx.invalid_argument(f"Only indices.shape[-1] values between 1 and 5 are currently supported.  Requested "
                             f"rank: {r}")
    if n == 0:
        return base
    index_rows = xp.reshape(indices, (n, r))
    rows, bad = _nd_rows(ctx, index_rows, shape[:r])
    if bool(xp.any(bad)) and not _policy_ignores(ctx):
        _bad_nd_index(ctx, index_rows, bad, batch, f"shape {format_shape(shape)}")
    k = math.prod(shape[r:])
    out = scatter(ctx, xp.reshape(base, (math.prod(shape[:r]), k)), rows, ~bad, xp.reshape(updates, (n, k)))
    return xp.reshape(out, shape)


def _scatter_nd(ctx: KernelContext, scatter: Scatter, indices: Any, updates: Any, shape: Any) -> Any:
    _ranks_at_least_one(ctx, indices, updates)
    s = ctx.host(shape)
    out_shape = checked_shape(ctx, [int(v) for v in s.reshape(-1).tolist()])
    if not _valid_empty(s.size, indices, updates):
        ctx.invalid_argument("Indices and updates specified for empty output shape")
    qs, us = tuple(indices.shape), tuple(updates.shape)
    outer, ix = len(qs) - 1, qs[-1]
    if us[:outer] != qs[:outer]:
        ctx.invalid_argument(f"Dimensions [0,{outer}) of indices[shape={format_shape(qs)}] must match dimensions "
                             f"[0,{outer}) of updates[shape={format_shape(us)}]")
    if len(us) - outer != len(out_shape) - ix or us[outer:] != out_shape[ix:]:
        ctx.invalid_argument(f"Dimensions [{ix},{len(out_shape)}) of input[shape={format_shape(out_shape)}] must "
                             f"match dimensions [{outer},{len(us)}) of updates[shape={format_shape(us)}]")
    if s.ndim != 1:
        ctx.invalid_argument("Shape must be a vector")
    if not _valid_empty(math.prod(out_shape), indices, updates):
        ctx.invalid_argument(f"Indices and updates specified for empty output.  indices shape: {format_shape(qs)}")
    return scatter_into(ctx, scatter, zeros_of(ctx, out_shape, ctx.output_dtypes[0]), indices, updates)


def tensor_scatter(ctx: KernelContext, scatter: Scatter, tensor: Any, indices: Any, updates: Any) -> Any:
    """TensorScatter*: TF's own checks (``indices`` is a batch of tuples of depth ``indices.shape[-1]``), then
    those of ``DoScatterNd``, which reads indices of rank 1 as tuples of depth 1 (so those always fail one)."""
    _ranks_at_least_one(ctx, indices, updates)
    ts, qs, us = tuple(tensor.shape), tuple(indices.shape), tuple(updates.shape)
    if not _valid_empty(math.prod(ts), indices, updates):
        ctx.invalid_argument("Indices and updates specified for empty output shape")
    outer, depth = len(qs) - 1, qs[-1]
    if len(us) - outer != len(ts) - depth:
        ctx.invalid_argument(f"Inner dimensions of output shape must match inner dimensions of updates shape. "
                             f"Output: {format_shape(ts)} updates: {format_shape(us)}")
    if us[:outer] != qs[:outer]:
        ctx.invalid_argument(f"Outer dimensions of indices and update must match. Indices shape: {format_shape(qs)}, "
                             f"updates shape:{format_shape(us)}")
    inner = len(ts) - depth
    if us[outer:] != ts[depth:]:
        ctx.invalid_argument(f"The inner {inner} dimensions of output.shape={format_shape(ts)} must match the inner "
                             f"{inner} dimensions of updates.shape={format_shape(us)}")
    do_scatter_nd_checks(ctx, ts, qs, us)
    return scatter_into(ctx, scatter, tensor, indices, updates)


def do_scatter_nd_checks(ctx: KernelContext, ts: tuple[int, ...], qs: tuple[int, ...], us: tuple[int, ...]) -> None:
    """The shape checks of TF's ``DoScatterNd`` (ScatterNd*Update ops and, after their own, TensorScatter*)."""
    if not ts:
        ctx.invalid_argument(f"Output must be at least 1-D, got shape: {format_shape(ts)}")
    nq, nu = math.prod(qs), math.prod(us)
    if not (nq == 0 and nu == 0) and not (math.prod(ts) and nq and nu):  # TF's ValidEmptyOutputShape, checked next
        ctx.invalid_argument(f"Indices and updates specified for empty output.  indices shape: {format_shape(qs)}")
    batch = len(qs) - 1 if len(qs) > 1 else 1
    ix = qs[-1] if len(qs) > 1 else 1
    for i in range(batch):
        if i >= len(qs) or i >= len(us) or qs[i] != us[i]:
            ctx.invalid_argument(f"Dimensions [0,{batch}) of indices[shape={format_shape(qs)}] = "
                                 f"{qs[i] if i < len(qs) else '?'} must match dimensions [0,{batch}) of updates[shape="
                                 f"{format_shape(us)}] = {us[i] if i < len(us) else '?'}")
    if len(us) - batch != len(ts) - ix or us[batch:] != ts[ix:]:
        ctx.invalid_argument(f"Dimensions [{ix},{len(ts)}) of input[shape={format_shape(ts)}] must match dimensions "
                             f"[{ix},{len(us)}) of updates[shape={format_shape(us)}]")  # sic: TF prints ix twice


def _non_aliasing_add(ctx: KernelContext, scatter: Scatter, input: Any,  # noqa: A002 - TF's argument name
                      indices: Any, updates: Any) -> Any:
    """ScatterNdNonAliasingAdd: TensorScatterAdd with the checks (and wording) of TF's ScatterNd update ops."""
    do_scatter_nd_checks(ctx, tuple(input.shape), tuple(indices.shape), tuple(updates.shape))
    return scatter_into(ctx, scatter, input, indices, updates)


_register_both("ScatterNd", _scatter_nd)
_register_both("TensorScatterAdd", tensor_scatter)
_register_both("ScatterNdNonAliasingAdd", _non_aliasing_add)
register_shape("ScatterNdNonAliasingAdd")(tensor_scatter_shape)


# -- conformance (tests/conformance) -------------------------------------------------------------------------
# Index relations (segment ids, stitch indices, index depths) are spelled out by the golden cases of
# tfops_py/kernels/nn/_grad_cases.py; tests/kernels/test_grad_support_ops.py draws live ones.
for _op in ("DynamicStitch", "GatherNd", "ScatterNd", "TensorScatterAdd", "ScatterNdNonAliasingAdd"):
    conformance(_op, generate=False, no_gradient={
        "TensorScatterAdd": "TF Python only (not in TF's C++ API); not ported yet",
    }.get(_op))

divergence("ScatterNd", when="constant inputs", tf="fail when run", ours="fail at build time with the kernel's message")
divergence(("ScatterNd", "TensorScatterAdd"), when="index depth 6 or 7",
           tf="accepted (the message says \"between 1 and 5\")", ours="accepted, the same message for 0 or > 7")
