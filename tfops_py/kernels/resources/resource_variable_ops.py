"""Resource variables: VarHandleOp, ReadVariableOp, the Assign*VariableOps, gathers, scatters, slice assign.

``VarHandleOp`` outputs a :class:`~tfops_py.kernels.resources.handles.ResourceHandle`;
the variable is created by its first ``AssignVariableOp`` and lives in the session's
store as a :class:`~tfops_py.kernels.resources.state_ops.VariableRef` (the same
storage ref variables use).  Checks, error classes and messages are TF 2.21's
(``resource_variable_ops.cc``, ``scatter_op.cc``): reading a missing variable is a
FailedPreconditionError, updating one a NotFoundError, dtypes must match the
variable's.  Updates make a new array, so an array handed to a reader never
changes under it; ``value_for_update`` (state_ops) is the in-place path.

Scatters run serially in index order on NumPy (``ufunc.at``, TF's CPU loop, same
rounding, last writer wins for Update); the generic kernel uses a masked one-hot
reduction over chunks of indices (array-API only).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import conformance, divergence, family_cases
from tfops_py.errors import FailedPreconditionError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import (
    PartialTensorShape,
    format_shape,
    unknown_shape,
)
from tfops_py.kernels._shape_util import host_ints
from tfops_py.kernels.array._strided_slice import (
    check_broadcast_into,
    check_spec_shapes,
    dense_slice,
    index_tuple,
)
from tfops_py.kernels.array.grad_scatter_ops import _bad_nd_index, _nd_rows
from tfops_py.kernels.registry import KernelContext, find_kernel, register_kernel
from tfops_py.kernels.resources.handles import (
    ANONYMOUS_NAME,
    ResourceHandle,
    as_handle,
    delete,
    handle_from_attrs,
    lookup,
    lookup_or_create,
    missing,
)
from tfops_py.kernels.resources.state_ops import VariableRef, locked

VAR = "Var"


# -- the variable behind a handle --------------------------------------------------------------------
def variable_of(ctx: KernelContext, value: Any, arg: str = "resource", read: bool = False) -> VariableRef:
    """The initialised variable a handle points to; TF's error when there is none."""
    handle = as_handle(ctx, value, arg)
    var = lookup(ctx, handle)
    if not isinstance(var, VariableRef) or var.value is None:
        if read:
            err = missing(ctx, handle, FailedPreconditionError)
            raise ctx.error(FailedPreconditionError,
                            f"Could not find variable {handle.name}. This could mean that the variable has been "
                            f"deleted. In TF1, it can also mean the variable is uninitialized. Debug info: "
                            f"container={handle.container}, status error message={err.message}")
        raise missing(ctx, handle)
    return var


def _check_dtype(ctx: KernelContext, var: VariableRef, dt: DataType, verb: str) -> None:
    if var.dtype != ctx.dtype(dt):
        have = var.tf_dtype.short_name if var.tf_dtype is not None else str(var.dtype)
        if verb == "read":
            ctx.invalid_argument(f"Trying to read variable with wrong dtype. Expected {dt.short_name} got {have}")
        ctx.invalid_argument(f"Trying to {verb} variable with wrong dtype. Expected {have} got {dt.short_name}")


def _adopt(ctx: KernelContext, value: Any) -> Any:
    """The array a variable stores for ``value``: a read-only array that owns its data (what RestoreV2
    gives) is taken as is; anything else is copied, so a caller's array never aliases the variable."""
    if isinstance(value, np.ndarray) and not value.flags.writeable and value.base is None:
        return value
    return ctx.xp.asarray(value, copy=True)


# -- shape functions -----------------------------------------------------------------------------------
def _scalar(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


def _nothing(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


def _unknown(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [unknown_shape()]


register_shape("VarHandleOp", "VarIsInitializedOp")(_scalar)
register_shape("ReadVariableOp", "ResourceGather", "ResourceGatherNd")(_unknown)
register_shape("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "DestroyResourceOp",
               "ResourceStridedSliceAssign")(_nothing)


# -- handle, read, assign ------------------------------------------------------------------------------
@register_kernel("VarHandleOp")
def _var_handle(ctx: KernelContext) -> ResourceHandle:
    handle = ctx.cache.get("handle")
    if handle is None or ctx.attrs.get("shared_name") == ANONYMOUS_NAME:
        handle = ctx.cache["handle"] = handle_from_attrs(ctx, VAR, ctx.attrs["dtype"], ctx.attrs["shape"])
    return handle


@register_kernel("ReadVariableOp")
def _read_variable(ctx: KernelContext, resource: Any) -> Any:
    var = variable_of(ctx, resource, read=True)
    _check_dtype(ctx, var, ctx.attrs["dtype"], "read")
    return var.deref(ctx)


@register_kernel("VarIsInitializedOp")
def _var_is_initialized(ctx: KernelContext, resource: Any) -> Any:
    var = lookup(ctx, as_handle(ctx, resource))
    return ctx.asarray(isinstance(var, VariableRef) and var.value is not None, DataType.DT_BOOL)


@register_kernel("AssignVariableOp")
def _assign_variable(ctx: KernelContext, resource: Any, value: Any) -> tuple:
    handle = as_handle(ctx, resource)
    dt = ctx.attrs["dtype"]
    var = lookup_or_create(ctx, handle, lambda: VariableRef(handle.name, "VarHandleOp", ctx.dtype(dt),
                                                            handle.var_shape, dt))
    _check_dtype(ctx, var, dt, "assign")
    if ctx.attrs.get("validate_shape") and var.value is not None and tuple(var.value.shape) != tuple(value.shape):
        ctx.invalid_argument(f"Trying to assign to variable with tensor with wrong shape. Expected "
                             f"{format_shape(var.value.shape)} got {format_shape(value.shape)}")
    with locked(ctx, var):
        var.set(_adopt(ctx, value), shared=False)
    return ()


def _assign_update(subtract: bool):
    def kernel(ctx: KernelContext, resource: Any, value: Any) -> tuple:
        var = variable_of(ctx, resource)
        _check_dtype(ctx, var, ctx.attrs["dtype"], "update")
        if tuple(var.value.shape) != tuple(value.shape):
            ctx.invalid_argument(f"Cannot update variable with shape {format_shape(var.value.shape)} using a Tensor "
                                 f"with shape {format_shape(value.shape)}, shapes must be equal.")
        with locked(ctx, var):
            xp = ctx.xp
            var.set(xp.subtract(var.value, value) if subtract else xp.add(var.value, value), shared=False)
        return ()

    return kernel


register_kernel("AssignAddVariableOp")(_assign_update(False))
register_kernel("AssignSubVariableOp")(_assign_update(True))


@register_kernel("DestroyResourceOp")
def _destroy_resource(ctx: KernelContext, resource: Any) -> tuple:
    handle = as_handle(ctx, resource)
    if not delete(ctx, handle) and not ctx.attrs.get("ignore_lookup_error", True):
        raise ctx.error(type(missing(ctx, handle)), f"Resource {handle.container}/{handle.name}/{handle.type_name} "
                                                    "does not exist.")
    return ()


# -- gathers -------------------------------------------------------------------------------------------
@register_kernel("ResourceGather")
def _resource_gather(ctx: KernelContext, resource: Any, indices: Any) -> Any:
    var = variable_of(ctx, resource)
    _check_dtype(ctx, var, ctx.attrs["dtype"], "read")
    gather = find_kernel("GatherV2", ctx.backend.name)
    assert gather is not None  # GatherV2 has a generic kernel
    return gather(ctx, var.value, indices, ctx.asarray(ctx.attrs.get("batch_dims", 0), DataType.DT_INT32))


@register_kernel("ResourceGatherNd")
def _resource_gather_nd(ctx: KernelContext, resource: Any, indices: Any) -> Any:
    var = variable_of(ctx, resource)
    _check_dtype(ctx, var, ctx.attrs["dtype"], "read")
    gather_nd = find_kernel("GatherNd", ctx.backend.name)
    assert gather_nd is not None  # GatherNd has a generic kernel
    return gather_nd(ctx, var.value, indices)


# -- scatter reductions ----------------------------------------------------------------------------------
_UFUNCS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Min": np.minimum,
           "Max": np.maximum}


def _scatter_rows_numpy(ctx: KernelContext, mode: str, base: Any, rows: Any, values: Any) -> Any:
    """``base`` (R, K) with ``values`` (N, K) combined into ``rows`` serially, as TF's CPU loop."""
    out = np.array(base, copy=True)
    if mode == "Update":
        out[rows] = values  # duplicates: the last one wins, as in TF's loop
    elif mode == "Div" and out.dtype.kind in "iu":
        _truncating_divide_at(out, rows, values)
    else:
        _UFUNCS[mode].at(out, rows, values)
    return out


def _truncating_divide_at(out: np.ndarray, rows: np.ndarray, values: np.ndarray) -> None:
    """C-style integer division of ``out`` rows by ``values``, duplicates applied one after another.

    Each round divides every distinct row once (vectorised); rows indexed k times take k rounds.
    """
    remaining = np.arange(len(rows))
    while len(remaining):
        _, first = np.unique(rows[remaining], return_index=True)
        take = remaining[first]
        r, v = rows[take], values[take]
        q = np.abs(out[r]) // np.abs(v)
        out[r] = np.where((out[r] < 0) != (v < 0), -q, q).astype(out.dtype)
        remaining = np.delete(remaining, first)


def _scatter_rows_generic(ctx: KernelContext, mode: str, base: Any, rows: Any, values: Any) -> Any:
    """The array-API form: a masked one-hot reduction over chunks of indices."""
    xp = ctx.xp
    r, n = base.shape[0], values.shape[0]
    if n == 0 or r == 0:
        return base
    targets = xp.reshape(xp.arange(r, dtype=rows.dtype), (1, r, 1))
    step = max(1, (1 << 22) // max(1, r * values.shape[1]))
    for start in range(0, n, step):
        sl = slice(start, min(n, start + step))
        hit = xp.reshape(rows[sl], (-1, 1, 1)) == targets  # (n, R, 1)
        vals = xp.expand_dims(values[sl, ...], axis=1)  # (n, 1, K)
        touched = xp.any(hit, axis=0)  # (R, 1)
        if mode in ("Add", "Sub"):
            total = xp.sum(xp.where(hit, vals, xp.zeros((), dtype=values.dtype)), axis=0, dtype=values.dtype)
            base = base + total if mode == "Add" else base - total
        elif mode in ("Mul", "Div"):
            one = xp.ones((), dtype=values.dtype)
            total = xp.prod(xp.where(hit, vals, one), axis=0, dtype=values.dtype)
            if mode == "Mul":
                base = base * total
            elif xp.isdtype(base.dtype, "integral"):
                q = xp.abs(base) // xp.abs(total)
                base = xp.where(touched, xp.where((base < 0) != (total < 0), -q, q), base)
            else:
                base = base / total
        elif mode in ("Min", "Max"):
            pick = xp.min if mode == "Min" else xp.max
            fill = _extreme(xp, values.dtype, high=mode == "Min")
            best = pick(xp.where(hit, vals, fill), axis=0)
            base = xp.where(touched, (xp.minimum if mode == "Min" else xp.maximum)(base, best), base)
        else:  # Update: the last index in order wins
            order = xp.reshape(xp.arange(sl.stop - sl.start, dtype=rows.dtype), (-1, 1, 1))
            last = xp.max(xp.where(hit, order, xp.asarray(-1, dtype=rows.dtype)), axis=0)  # (R, 1)
            chosen = xp.take(values[sl, ...], xp.reshape(xp.where(last < 0, 0, last), (-1,)), axis=0)
            base = xp.where(last >= 0, chosen, base)
    return base


def _extreme(xp: Any, dtype: Any, high: bool) -> Any:
    if xp.isdtype(dtype, "integral"):
        info = xp.iinfo(dtype)
        return xp.asarray(info.max if high else info.min, dtype=dtype)
    return xp.asarray(math.inf if high else -math.inf, dtype=dtype)


def _scatter_rows(ctx: KernelContext, mode: str, base: Any, rows: Any, values: Any) -> Any:
    if ctx.backend.name == "numpy":
        return _scatter_rows_numpy(ctx, mode, base, rows, values)
    return _scatter_rows_generic(ctx, mode, base, rows, values)


def _check_div(ctx: KernelContext, mode: str, var: VariableRef, updates: Any) -> None:
    if mode == "Div" and ctx.xp.isdtype(updates.dtype, "integral") and bool(ctx.xp.any(updates == 0)):
        ctx.invalid_argument("updates must not contain 0")


def _resource_scatter(mode: str):
    def kernel(ctx: KernelContext, resource: Any, indices: Any, updates: Any) -> tuple:
        xp = ctx.xp
        var = variable_of(ctx, resource)
        _check_dtype(ctx, var, ctx.input_dtypes[2], "update")
        params = var.value
        ps, qs, us = tuple(params.shape), tuple(indices.shape), tuple(updates.shape)
        if not ps:
            ctx.invalid_argument("params must be at least 1-D, got shape " + format_shape(ps))
        n, first = math.prod(qs), ps[0]
        if us and us != qs + ps[1:]:
            ctx.invalid_argument(f"The shape of indices ({format_shape(qs)}) must be a prefix of the shape of "
                                 f"updates ({format_shape(us)})" if us[:len(qs)] != qs else
                                 f"Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = "
                                 f"[], got updates.shape {format_shape(us)}, indices.shape {format_shape(qs)}, "
                                 f"params.shape {format_shape(ps)}")
        if n == 0:
            return ()
        flat_idx = xp.reshape(indices, (n,))
        bad = (flat_idx < 0) | (flat_idx >= first)
        if bool(xp.any(bad)):
            host = ctx.host(flat_idx)
            at = int(np.flatnonzero((host < 0) | (host >= first))[0])
            where = "[" + ",".join(str(int(i)) for i in np.unravel_index(at, qs)) + "]"
            ctx.invalid_argument(f"indices{where} = {host[at]} is not in [0, {first})")
        _check_div(ctx, mode, var, updates)
        k = math.prod(ps[1:])
        values = xp.reshape(updates, (n, k)) if us else xp.broadcast_to(xp.reshape(updates, (1, 1)), (n, k))
        with locked(ctx, var):
            out = _scatter_rows(ctx, mode, xp.reshape(var.value, (first, k)), xp.astype(flat_idx, xp.int64), values)
            var.set(xp.reshape(out, ps), shared=False)
        return ()

    return kernel


def _resource_scatter_nd(mode: str):
    def kernel(ctx: KernelContext, ref: Any, indices: Any, updates: Any) -> tuple:
        xp = ctx.xp
        var = variable_of(ctx, ref, "ref")
        _check_dtype(ctx, var, ctx.input_dtypes[2], "update")
        ts, qs, us = tuple(var.value.shape), tuple(indices.shape), tuple(updates.shape)
        if not qs:
            ctx.invalid_argument(f"Indices shape must have rank at least one. Found:{format_shape(qs)}")
        batch = len(qs) - 1 if len(qs) > 1 else 1
        ix = qs[-1] if len(qs) > 1 else 1
        if us[:batch] != qs[:batch] or len(us) < batch:
            ctx.invalid_argument(f"Dimensions [0,{batch}) of indices[shape={format_shape(qs)}] must match dimensions "
                                 f"[0,{batch}) of updates[shape={format_shape(us)}]")
        if ix > len(ts) or us[batch:] != ts[ix:]:
            ctx.invalid_argument(f"Dimensions [{ix},{len(ts)}) of input[shape={format_shape(ts)}] must match "
                                 f"dimensions [{batch},{len(us)}) of updates[shape={format_shape(us)}]")
        n = math.prod(qs[:-1]) if len(qs) > 1 else 1
        if n == 0 or math.prod(ts) == 0:
            return ()
        if not 1 <= ix <= 7:
            ctx.invalid_argument(f"Only indices.shape[-1] values between 1 and 7 are currently supported.  "
                                 f"Requested rank: {ix}")
        index_rows = xp.reshape(indices, (n, ix))
        rows, bad = _nd_rows(ctx, index_rows, ts[:ix])
        if bool(xp.any(bad)):
            _bad_nd_index(ctx, index_rows, bad, qs[:-1], f"shape {format_shape(ts)}")
        k = math.prod(ts[ix:])
        with locked(ctx, var):
            out = _scatter_rows(ctx, mode, xp.reshape(var.value, (math.prod(ts[:ix]), k)), rows,
                                xp.reshape(updates, (n, k)))
            var.set(xp.reshape(out, ts), shared=False)
        return ()

    return kernel


for _mode in ("Add", "Sub", "Mul", "Div", "Min", "Max", "Update"):
    register_shape(f"ResourceScatter{_mode}")(_nothing)
    register_kernel(f"ResourceScatter{_mode}")(_resource_scatter(_mode))
for _mode in ("Add", "Sub", "Update", "Min", "Max"):
    register_shape(f"ResourceScatterNd{_mode}")(_nothing)
    register_kernel(f"ResourceScatterNd{_mode}")(_resource_scatter_nd(_mode))


# -- strided slice assign --------------------------------------------------------------------------------
@register_kernel("ResourceStridedSliceAssign")
def _resource_strided_slice_assign(ctx: KernelContext, ref: Any, begin: Any, end: Any, strides: Any,
                                   value: Any) -> tuple:
    xp = ctx.xp
    var = variable_of(ctx, ref, "ref")
    _check_dtype(ctx, var, ctx.attrs["T"], "assign")
    b, e, s = ctx.host(begin), ctx.host(end), ctx.host(strides)
    check_spec_shapes(ctx.invalid_argument, b.shape, e.shape, s.shape)
    masks = [ctx.attrs[m] for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")]
    spec = dense_slice(ctx.invalid_argument, tuple(var.value.shape), host_ints(b), host_ints(e), host_ints(s),
                       *masks)
    final = tuple(spec.final_shape)
    check_broadcast_into(ctx.invalid_argument, tuple(value.shape), final)
    index = index_tuple(spec)
    with locked(ctx, var):
        out = xp.asarray(var.value, copy=True)
        target = out[index + (...,)]
        out[index + (...,)] = xp.reshape(xp.broadcast_to(value, final), tuple(target.shape))
        var.set(out, shared=False)
    return ()


__all__ = ["variable_of"]


# -- copy-on-read mode ---------------------------------------------------------------------------------------
register_shape("DisableCopyOnRead")(_nothing)


@register_kernel("DisableCopyOnRead")
def _disable_copy_on_read(ctx: KernelContext, resource: Any) -> tuple:
    """A no-op here: reads never copy, and in-place updates copy when the value is shared (``value_for_update``)."""
    as_handle(ctx, resource)
    return ()


# -- conformance (tests/conformance): graph cases on TF (resources family, built in _resource_cases.py) -------
CONFORMANCE_FAMILY = "resources"
_NO_GRADIENT = {  # ReadVariableOp and ResourceGather have gradients (tfops_py/gradients)
    "ResourceGatherNd": "gradients with respect to resource variables: TF Python's (variables watched by "
                        "tf.GradientTape, not in TF's C++ API); not ported yet"}
family_cases("tfops_py.kernels.resources._resource_cases:build")
for _op in ("VarHandleOp", "ReadVariableOp", "VarIsInitializedOp", "AssignVariableOp", "AssignAddVariableOp",
            "AssignSubVariableOp", "DestroyResourceOp", "ResourceGather", "ResourceGatherNd", "DisableCopyOnRead",
            "ResourceStridedSliceAssign", *(f"ResourceScatter{m}" for m in ("Add", "Sub", "Mul", "Div", "Min", "Max",
                                                                              "Update")),
            *(f"ResourceScatterNd{m}" for m in ("Add", "Sub", "Update", "Min", "Max"))):
    conformance(_op, generate=False, no_gradient=_NO_GRADIENT.get(_op))
divergence(("AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "ReadVariableOp"),
           when="a handle whose dtype and shape are known while building",
           tf="the shape functions read them from the handle's data and refuse a mismatched update or read while "
              "building (\"Shapes must be equal rank, but are 2 and 1\"; reads: \"Trying to read variable with wrong "
              "dtype. Expected float got int32\", the variable's dtype first)",
           ours="handles carry no shape data: the kernel refuses when the op runs, with TF's kernel's message "
                "(\"Trying to read variable with wrong dtype. Expected int32 got float\", the requested dtype first)")
