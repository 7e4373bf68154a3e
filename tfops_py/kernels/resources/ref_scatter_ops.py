"""Scatters into ref variables (TF1 ``VariableV2``): ScatterUpdate/Add/Sub/Mul/Div/Min/Max (rows picked by
``indices``) and ScatterNdUpdate/Add/Sub/Min/Max (index tuples), in place, under the variable's lock when
``use_locking``; the output is the variable's ref.

Duplicate indices combine in index order, as TF's serial CPU loop does (``kernels/_scatter.py``).  On a bad
index TF has already applied the updates before it when it fails; here the variable is left unchanged
(recorded as a divergence).
"""
from __future__ import annotations

import math
from typing import Any

from tfops_py.conformance import conformance, divergence, graph_case, literal
from tfops_py.errors import FailedPreconditionError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._scatter import scatter_rows
from tfops_py.kernels._shape_util import merge_shapes
from tfops_py.kernels.array.grad_scatter_ops import (do_scatter_nd_checks, scatter_into, slice_debug_string,
                                                      tensor_scatter_shape)
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.resources.state_ops import VariableRef, locked, ref_input, value_for_update

CONFORMANCE_FAMILY = "array_ops"

ROW_MODES = ("Update", "Add", "Sub", "Mul", "Div", "Min", "Max")
ND_MODES = ("Update", "Add", "Sub", "Min", "Max")


def _params(ctx: KernelContext, ref: Any) -> VariableRef:
    var = ref_input(ctx, ref, initialized=False)
    if not var.initialized:
        raise ctx.error(FailedPreconditionError, "Null ref for params")
    return var


# -- Scatter{Update,Add,Sub,Mul,Div,Min,Max} ---------------------------------------------------------------
def _scatter_update_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's ``ScatterUpdateShape``: updates is a scalar or indices.shape + ref.shape[1:]."""
    var, indices, updates = ctx.input(0), ctx.input(1), ctx.input(2)
    if not var.unknown_rank() and var.dims() < 1:
        ctx.invalid_argument(f"Subshape start out of bounds: 1, for shape with rank {var.dims()}")
    if not (updates.unknown_rank() or updates.dims() == 0):
        if not (var.unknown_rank() or indices.unknown_rank()):
            merge_shapes(ctx, updates, PartialTensorShape(indices.as_list() + var.as_list()[1:]))  # type: ignore
    return [var]


def _row_scatter(mode: str):
    def kernel(ctx: KernelContext, ref: Any, indices: Any, updates: Any) -> VariableRef:
        xp = ctx.xp
        var = _params(ctx, ref)
        ps, qs, us = tuple(var.value.shape), tuple(indices.shape), tuple(updates.shape)
        if not ps:
            ctx.invalid_argument(f"params must be at least 1-D, got shape {format_shape(ps)}")
        if not (us == () or us == qs + ps[1:]):
            ctx.invalid_argument(f"Must have updates.shape = indices.shape + params.shape[1:] or updates.shape = [], "
                                 f"got updates.shape {format_shape(us)}, indices.shape {format_shape(qs)}, "
                                 f"params.shape {format_shape(ps)}")
        n = math.prod(qs)
        if n == 0:
            return var
        rows = xp.reshape(indices, (n,))
        bad = (rows < 0) | (rows >= ps[0])
        if bool(xp.any(bad)):
            host = ctx.host(indices).reshape(-1)
            first = int(((host < 0) | (host >= ps[0])).argmax())
            ctx.invalid_argument(f"indices{slice_debug_string(qs, first)} = {int(host[first])} is not in "
                                 f"[0, {ps[0]})")
        if mode == "Div" and ctx.input_dtypes[2].is_integer and bool(xp.any(updates == 0)):
            ctx.invalid_argument("Integer division by zero")  # TF dies of SIGFPE
        k = math.prod(ps[1:])
        values = xp.reshape(updates, (n, k)) if us else xp.broadcast_to(xp.reshape(updates, (1, 1)), (n, k))
        with locked(ctx, var):
            base = xp.reshape(value_for_update(ctx, var), (ps[0], k))
            var.set(xp.reshape(scatter_rows(ctx, mode, base, rows, values, inplace=True), ps), shared=False)
        return var

    return kernel


for _mode in ROW_MODES:
    register_shape(f"Scatter{_mode}")(_scatter_update_shape)
    register_kernel(f"Scatter{_mode}")(_row_scatter(_mode))


# -- ScatterNd{Update,Add,Sub,Min,Max} ---------------------------------------------------------------------
def _nd_scatter(mode: str):
    def scatter(ctx: KernelContext, base: Any, rows: Any, keep: Any, values: Any) -> Any:
        return scatter_rows(ctx, mode, base, rows, values, keep, inplace=True)

    def kernel(ctx: KernelContext, ref: Any, indices: Any, updates: Any) -> VariableRef:
        var = _params(ctx, ref)
        do_scatter_nd_checks(ctx, tuple(var.value.shape), tuple(indices.shape), tuple(updates.shape))
        with locked(ctx, var):
            out = scatter_into(ctx, scatter, value_for_update(ctx, var), indices, updates)
            var.set(out, shared=False)
        return var

    return kernel


for _mode in ND_MODES:
    register_shape(f"ScatterNd{_mode}")(tensor_scatter_shape)
    register_kernel(f"ScatterNd{_mode}")(_nd_scatter(_mode))


# -- conformance (tests/conformance): a variable set, scattered into twice, read ------------------------------
def _case(op: str, case_id: str, start: Any, indices: Any, updates: Any, dt: DataType) -> Any:
    def ours(scope: Any, x: Any, i: Any, u: Any) -> tuple[list, list]:
        from tfops_py import ops

        scatter = getattr(ops, op)
        var = ops.Variable(scope.WithOpName("var"), list(start.shape), dt)
        init = ops.Assign(scope, var, x).operation
        first = scatter(scope, var, i, u, use_locking=True).operation
        second = scatter(scope.WithControlDependencies([first]), var, i, u).operation
        read = ops.Identity(scope.WithControlDependencies([second]), var)
        return [read.output], [init]

    def theirs(tf: Any, x: Any, i: Any, u: Any) -> tuple[list, list]:
        var = tf.raw_ops.VariableV2(shape=x.shape, dtype=x.dtype)
        init = tf.raw_ops.Assign(ref=var, value=x)
        first = getattr(tf.raw_ops, op)(ref=var, indices=i, updates=u)
        with tf.control_dependencies([first]):
            second = getattr(tf.raw_ops, op)(ref=var, indices=i, updates=u)
        with tf.control_dependencies([second]):
            read = tf.identity(var)
        return [read], [init]

    return graph_case(case_id, ours, theirs, compare="exact", x=literal(start, dt), i=literal(indices, _I32),
                      u=literal(updates, dt))


_I32, _F32, _I64 = DataType.DT_INT32, DataType.DT_FLOAT, DataType.DT_INT64


def _declare() -> None:
    import numpy as np

    start = np.arange(12, dtype=np.float32).reshape(4, 3) - 5.0
    rows = np.array([[2, 0], [2, 3]], np.int32)
    # no zero once cast to int64: TF's integer ScatterDiv by zero kills the process
    row_updates = np.array([-3.5, -2.5, -1.5, 1.5, 2.5, 3.5, -4.5, 4.5, -1.5, 1.5, 2.5, -2.5],
                           np.float32).reshape(2, 2, 3)
    tuples = np.array([[1, 2], [3, 0], [1, 2]], np.int32)
    nd_updates = np.array([2.5, -7.0, 0.5], np.float32)
    for mode in ROW_MODES:
        op = f"Scatter{mode}"
        cases = [_case(op, f"{op}/{dt.short_name}/rows", start, rows, row_updates, dt) for dt in (_F32, _I64)]
        cases.append(_case(op, f"{op}/scalar_update", start, rows, np.float32(1.5), _F32))
        cases.append(_case(op, f"{op}/out_of_range", start, np.array([1, 4], np.int32), start[:2], _F32))
        cases.append(_case(op, f"{op}/bad_updates", start, rows, start[:2], _F32))
        conformance(op, generate=False, graph_cases=cases, T=_F32, compare="exact")
    for mode in ND_MODES:
        op = f"ScatterNd{mode}"
        cases = [_case(op, f"{op}/{dt.short_name}/tuples", start, tuples, nd_updates, dt) for dt in (_F32, _I64)]
        cases.append(_case(op, f"{op}/rows", start, np.array([[3], [0]], np.int32), start[:2], _F32))
        cases.append(_case(op, f"{op}/out_of_range", start, np.array([[0, 3]], np.int32), nd_updates[:1], _F32))
        conformance(op, generate=False, graph_cases=cases, T=_F32, compare="exact")


_declare()
divergence("ScatterDiv", when="an integer update of zero", tf="kills the process (SIGFPE)",
           ours="InvalidArgumentError: Integer division by zero (the variable is unchanged)")
divergence([f"Scatter{m}" for m in ROW_MODES] + [f"ScatterNd{m}" for m in ND_MODES], when="an index out of range",
           tf="InvalidArgumentError after applying the updates before the bad index (the variable is left "
              "partly updated)", ours="the same error; the variable is unchanged")
