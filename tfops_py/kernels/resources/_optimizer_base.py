"""The machinery every optimizer kernel shares: specs, TF's checks, shape functions, dense and sparse drivers.

An optimizer is declared once as an :class:`Optimizer` (its variables, its inputs in OpDef order, the
dtypes TF's CPU kernels take, its checks in TF's order, its update formulas) and registered under
every op name TF gives it: ``ApplyX`` (ref variables, outputs the updated ``var``), ``ResourceApplyX``
(resource handles, no output) and their ``SparseApply``/``ResourceSparseApply`` twins.

A formula is a pure element-wise function ``f(xp, slots, hyper, grad, attrs) -> {slot: new value}``
written against any array namespace, in TF's operation order (``training_ops.cc``: the order decides
the float32 rounding).  The drivers run it

* on whole arrays (the generic kernel: any array-API backend), then store the new arrays;
* on NumPy, in place on cache-sized chunks of the flattened variables, on all cores
  (``_parallel``), so a step reads and writes each array once, as TF's fused kernels do;
* for the sparse ops, on the gathered rows of each round of distinct indices
  (:mod:`._sparse_rows`), so duplicate indices update one after another as in TF's serial loop.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tfops_py.errors import InternalError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import (
    PartialTensorShape,
    format_shape,
    unknown_shape,
)
from tfops_py.kernels._parallel import parallel_for
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.resources import _sparse_rows
from tfops_py.kernels.resources.handles import ResourceHandle, lookup
from tfops_py.kernels.resources.state_ops import (
    VariableRef,
    locked,
    ref_input,
    value_for_update,
)

Formula = Callable[..., dict[str, Any]]
Check = Callable[["Step"], None]

FLOATS = frozenset({DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE})
FLOATS_COMPLEX = FLOATS | {DataType.DT_COMPLEX64, DataType.DT_COMPLEX128}
FLOAT_DOUBLE = frozenset({DataType.DT_FLOAT, DataType.DT_DOUBLE})

CHUNK = 1 << 14  # elements per NumPy chunk: a formula's temporaries stay in L2
_PARALLEL_MIN = 1 << 17  # below this many elements one thread does it all


@dataclass(frozen=True)
class Optimizer:
    """One optimizer as TF declares it; see the module docstring.

    ``inputs``/``sparse_inputs`` are the OpDef input names (variables first); ``checks`` the kernel's
    validations in TF's order (``sparse_checks`` for the sparse kernel).  ``sparse_flat`` is the formula
    TF uses when a row holds one element (its scalar loop), where that differs from ``sparse``.
    ``no_rank_check``: scalar inputs TF's shape function leaves unchecked.
    """

    name: str
    variables: tuple[str, ...]
    inputs: tuple[str, ...]
    dtypes: frozenset[DataType]
    checks: tuple[Check, ...]
    dense: Formula
    sparse_inputs: tuple[str, ...] = ()
    sparse_dtypes: frozenset[DataType] = frozenset()
    sparse_checks: tuple[Check, ...] = ()
    sparse: Formula | None = None
    sparse_flat: Formula | None = None
    ref_ops: bool = True  # TF has ApplyX / SparseApplyX (KerasMomentum and AdamWithAmsgrad: resource only)
    no_rank_check: tuple[str, ...] = ()
    keras_index_message: bool = False  # ResourceSparseApplyKerasMomentum words a bad index like a gather

    def dense_ops(self) -> list[str]:
        return ([f"Apply{self.name}"] if self.ref_ops else []) + [f"ResourceApply{self.name}"]

    def sparse_ops(self) -> list[str]:
        if self.sparse is None:
            return []
        return ([f"SparseApply{self.name}"] if self.ref_ops else []) + [f"ResourceSparseApply{self.name}"]


@dataclass
class Step:
    """One kernel call: its variables and its other inputs by OpDef name."""

    ctx: KernelContext
    variables: dict[str, VariableRef]
    values: dict[str, Any]
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def shape(self, name: str) -> tuple[int, ...]:
        if name not in self.shapes:
            source = self.variables[name].value if name in self.variables else self.values[name]
            self.shapes[name] = tuple(source.shape)
        return self.shapes[name]

    def fail(self, message: str) -> None:
        self.ctx.invalid_argument(message)


# -- checks, in the words of training_ops.cc --------------------------------------------------------------
def scalar(name: str, text: str | None = None) -> Check:
    """``name`` must be a scalar: ``lr is not a scalar: [2]``."""
    text = text if text is not None else f"{name} is not a scalar: "

    def check(step: Step) -> None:
        if step.shape(name):
            step.fail(text + format_shape(step.shape(name)))

    return check


def bounded(name: str, text: str, test: Callable[[float], bool]) -> Check:
    """A scalar whose value TF's CPU kernel also checks (``lr is not a positive scalar: []``)."""

    def check(step: Step) -> None:
        shape = step.shape(name)
        if shape or not test(step.ctx.host(step.values[name]).item()):
            step.fail(text + format_shape(shape))

    return check


def positive(name: str, text: str) -> Check:
    return bounded(name, text, lambda v: v > 0)


def non_negative(name: str, text: str) -> Check:
    return bounded(name, text, lambda v: v >= 0)


def non_positive(name: str, text: str) -> Check:
    return bounded(name, text, lambda v: v <= 0)


def same_shape(name: str, label: str | None = None) -> Check:
    """``name`` has var's shape: ``var and grad do not have the same shape[2] [3]``."""
    label = label or name

    def check(step: Step) -> None:
        if step.shape("var") != step.shape(name):
            step.fail(f"var and {label} do not have the same shape"
                      f"{format_shape(step.shape('var'))} {format_shape(step.shape(name))}")

    return check


def var_is_matrix_or_more(step: Step) -> None:
    if not step.shape("var"):
        step.fail("var must be at least 1 dimensional")


def indices_vector(step: Step) -> None:
    if len(step.shape("indices")) != 1:
        step.fail("indices must be one-dimensional")


def grad_rows(step: Step) -> None:
    """grad is ``[len(indices)] + var.shape[1:]``.  TF reads past grad's shape when its rank differs
    (out of bounds); here that is an error naming both shapes."""
    var, grad = step.shape("var"), step.shape("grad")
    if len(grad) != len(var):
        step.fail(f"var and grad must have the same rank: var shape {format_shape(var)}, grad shape "
                  f"{format_shape(grad)}")
    for d in range(1, len(var)):
        if var[d] != grad[d]:
            step.fail(f"var and grad must match in dimension {d}")
    if grad[0] != step.shape("indices")[0]:
        step.fail("grad must be the same size as indices in the first dimension.")


def inner_dimension(step: Step) -> None:
    if math.prod(step.shape("var")[1:]) <= 0:
        step.fail("Inner dimension should be greater than zero.")


LR = scalar("lr")
LR_SPACED = scalar("lr", "lr is not a scalar : ")  # TF's wording in Adam, AdaMax, RMSProp, SparseMomentum
L1 = scalar("l1", "l1 regularization strength is not a scalar: ")
L2 = scalar("l2", "l2 regularization strength is not a scalar: ")
LR_POSITIVE = positive("lr", "lr is not a positive scalar: ")
L1_NON_NEGATIVE = non_negative("l1", "l1 regularization strength is not a non-negative scalar: ")
L2_NON_NEGATIVE = non_negative("l2", "l2 regularization strength is not a non-negative scalar: ")
SPARSE_ROWS = (indices_vector, grad_rows)


# -- shape functions (training_ops.cc in tensorflow/core/ops) -------------------------------------------------
def _shape_fn(spec: Optimizer, inputs: tuple[str, ...], resource: bool, sparse: bool):
    def fn(ctx: InferenceContext) -> list[PartialTensorShape]:
        s: PartialTensorShape | None = None
        for i, name in enumerate(inputs):
            if name in spec.variables:
                shape = unknown_shape() if resource else ctx.input(i)  # no handle shapes here: unknown
                s = shape if s is None else ctx.merge(s, shape)
            elif name in ("grad", "delta"):
                s = _merge_grad(ctx, s, ctx.input(i), ctx.input(i + 1) if sparse else None)
            elif name != "indices" and name not in spec.no_rank_check:
                ctx.with_rank(ctx.input(i), 0)
        return [] if resource else [s if s is not None else unknown_shape()]

    return fn


def _merge_grad(ctx: InferenceContext, s: PartialTensorShape, grad: PartialTensorShape,
                indices: PartialTensorShape | None) -> PartialTensorShape:
    if indices is None:
        return ctx.merge(s, grad)
    indices = ctx.with_rank(indices, 1)
    if grad.unknown_rank():
        return s
    if grad.dims() == 0:
        ctx.invalid_argument("Argument grad must not be a scalar. Got grad with rank 0")
    if ctx.merge_dim(indices.dim_size(0), grad.dim_size(0)) is None:
        ctx.invalid_argument(f"Dimensions must be equal, but are {indices.dim_size(0)} and {grad.dim_size(0)}")
    return ctx.merge(s, PartialTensorShape([-1] + list(grad.as_list())[1:]))


# -- reading the variables ---------------------------------------------------------------------------------
def _variable(ctx: KernelContext, value: Any, name: str, dtype: DataType) -> VariableRef:
    """The initialised variable behind a Ref(T) input or a resource handle, with TF's errors."""
    if not isinstance(value, ResourceHandle):
        return ref_input(ctx, value, name)  # an uninitialised ref: "Attempting to use uninitialized value"
    var = lookup(ctx, value)
    if not isinstance(var, VariableRef) or var.value is None:
        raise ctx.error(InternalError, "Invalid variable reference.")
    if var.dtype != ctx.dtype(dtype):  # TF aborts on a CHECK here; a clear error instead
        have = var.tf_dtype.short_name if var.tf_dtype is not None else str(var.dtype)
        ctx.invalid_argument(f"Trying to update variable with wrong dtype. Expected {have} got {dtype.short_name}")
    return var


def _check_kernel(ctx: KernelContext, dtypes: frozenset[DataType]) -> None:
    dt = ctx.attrs["T"]
    if dt not in dtypes:
        attrs = ", ".join(f"{k}={ctx.attrs[k].name}" for k in ("T", "Tindices") if k in ctx.attrs)
        ctx.invalid_argument(f"No OpKernel was registered to support Op '{ctx.op_type}' used by "
                             f"{{{{node {ctx.node_name}}}}} with these attrs: [{attrs}]")


# -- running a formula ---------------------------------------------------------------------------------------
def _host_hyper(ctx: KernelContext, hyper: dict[str, Any]) -> dict[str, Any]:
    return {k: np.asarray(ctx.host(v)) for k, v in hyper.items()}


def _writable_flat(ctx: KernelContext, var: VariableRef, rows: int | None = None) -> np.ndarray:
    """The variable's own C-ordered array, as a flat (or ``rows``-row) view to update in place."""
    value = value_for_update(ctx, var)
    if not value.flags.c_contiguous:
        var.value = value = np.ascontiguousarray(value)
    return value.reshape(-1) if rows is None else value.reshape(rows, -1)


def dense_numpy(ctx: KernelContext, formula: Formula, variables: dict[str, VariableRef], hyper: dict[str, Any],
                grad: np.ndarray) -> None:
    """The formula over chunks of the flattened arrays, written back in place, chunks spread over threads."""
    targets = {k: _writable_flat(ctx, v) for k, v in variables.items()}
    g = np.reshape(grad, -1)
    hyper = _host_hyper(ctx, hyper)
    attrs = ctx.attrs

    def work(start: int, stop: int) -> None:
        with np.errstate(all="ignore"):  # inf/NaN arrive silently, as in TF (errstate is per thread)
            for a in range(start, stop, CHUNK):
                b = min(stop, a + CHUNK)
                new = formula(np, {k: t[a:b] for k, t in targets.items()}, hyper, g[a:b], attrs)
                for k, value in new.items():
                    targets[k][a:b] = value

    parallel_for(work, g.size, min_size=_PARALLEL_MIN)


def dense_generic(ctx: KernelContext, formula: Formula, variables: dict[str, VariableRef], hyper: dict[str, Any],
                  grad: Any) -> None:
    new = formula(ctx.xp, {k: v.value for k, v in variables.items()}, hyper, grad, ctx.attrs)
    for k, value in new.items():
        variables[k].set(value, shared=False)


def sparse_numpy(ctx: KernelContext, formula: Formula, variables: dict[str, VariableRef], hyper: dict[str, Any],
                 grad: np.ndarray, rounds: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Each round's rows gathered, updated and scattered back in place, in chunks of rows over threads."""
    first = variables["var"].value.shape[0]
    targets = {k: _writable_flat(ctx, v, first) for k, v in variables.items()}
    g = np.reshape(grad, (grad.shape[0], -1))
    hyper = _host_hyper(ctx, hyper)
    attrs = ctx.attrs
    step = max(1, CHUNK // max(1, g.shape[1]))
    for rows, positions in rounds:  # a round's rows are distinct: its chunks write disjoint rows
        def work(start: int, stop: int, rows: np.ndarray = rows, positions: np.ndarray = positions) -> None:
            with np.errstate(all="ignore"):
                for a in range(start, stop, step):
                    r = rows[a:a + step]
                    new = formula(np, {k: t[r] for k, t in targets.items()}, hyper, g[positions[a:a + step]], attrs)
                    for k, value in new.items():
                        targets[k][r] = value

        parallel_for(work, len(rows), min_size=max(1, _PARALLEL_MIN // max(1, g.shape[1])))


def sparse_generic(ctx: KernelContext, formula: Formula, variables: dict[str, VariableRef], hyper: dict[str, Any],
                   grad: Any, rounds: list[tuple[Any, Any]]) -> None:
    xp = ctx.xp
    shape = tuple(variables["var"].value.shape)
    first, inner = shape[0], math.prod(shape[1:])
    arrays = {k: xp.reshape(v.value, (first, inner)) for k, v in variables.items()}
    g = xp.reshape(grad, (grad.shape[0], inner))
    for rows, positions in rounds:
        gathered = {k: xp.take(a, rows, axis=0) for k, a in arrays.items()}
        new = formula(xp, gathered, hyper, xp.take(g, positions, axis=0), ctx.attrs)
        for k, value in new.items():
            arrays[k] = _sparse_rows.set_rows(xp, arrays[k], rows, value)
    for k, a in arrays.items():
        variables[k].set(xp.reshape(a, shape), shared=False)


# -- kernels -------------------------------------------------------------------------------------------------
def _kernel(spec: Optimizer, sparse: bool):
    names = spec.sparse_inputs if sparse else spec.inputs
    dtypes = spec.sparse_dtypes if sparse else spec.dtypes
    checks = spec.sparse_checks if sparse else spec.checks

    def kernel(ctx: KernelContext, *args: Any) -> Any:
        _check_kernel(ctx, dtypes)
        dt = ctx.attrs["T"]
        resource = isinstance(args[0], ResourceHandle)
        variables = {n: _variable(ctx, a, n, dt) for n, a in zip(names, args) if n in spec.variables}
        values = {n: a for n, a in zip(names, args) if n not in spec.variables}
        with locked(ctx, *variables.values(), always=resource):
            step = Step(ctx, variables, values)
            for check in checks:
                check(step)
            hyper = {k: v for k, v in values.items() if k not in ("grad", "delta", "indices")}
            if sparse:
                _apply_sparse(spec, step, hyper)
            else:
                _apply_dense(spec, step, hyper)
        return () if resource else variables["var"]

    return kernel


def _apply_dense(spec: Optimizer, step: Step, hyper: dict[str, Any]) -> None:
    ctx, values = step.ctx, step.values
    grad = values["grad"] if "grad" in values else values["delta"]  # GradientDescent's name for it
    if ctx.backend.name == "numpy":
        dense_numpy(ctx, spec.dense, step.variables, hyper, grad)
    else:
        dense_generic(ctx, spec.dense, step.variables, hyper, grad)


def _apply_sparse(spec: Optimizer, step: Step, hyper: dict[str, Any]) -> None:
    ctx, xp = step.ctx, step.ctx.xp
    indices, grad = step.values["indices"], step.values["grad"]
    first = step.shape("var")[0]
    if not step.shape("indices")[0]:
        return
    bad = _sparse_rows.first_out_of_range(ctx, indices, first)
    if bad is not None:
        offset, value = bad
        if spec.keras_index_message:
            step.fail(f"indices[{offset}] = {value} is not in [0, {first})")
        step.fail(f"Index {value} at offset {offset} in indices is out of range")
    flat = spec.sparse_flat is not None and math.prod(step.shape("var")[1:]) == 1
    formula = spec.sparse_flat if flat else spec.sparse
    rounds = _sparse_rows.rounds(xp, indices)
    if ctx.backend.name == "numpy":
        sparse_numpy(ctx, formula, step.variables, hyper, grad, rounds)
    else:
        sparse_generic(ctx, formula, step.variables, hyper, grad, rounds)


def _register(spec: Optimizer, ops: list[str], sparse: bool) -> Optimizer:
    inputs = spec.sparse_inputs if sparse else spec.inputs
    for op in ops:
        register_shape(op)(_shape_fn(spec, inputs, op.startswith("Resource"), sparse))
        register_kernel(op)(_kernel(spec, sparse))
    return spec


def register_dense(spec: Optimizer) -> Optimizer:
    """Register ``ApplyX`` (where TF has it) and ``ResourceApplyX``: shape functions and kernels."""
    return _register(spec, spec.dense_ops(), sparse=False)


def register_sparse(spec: Optimizer) -> Optimizer:
    """Register ``SparseApplyX`` (where TF has it) and ``ResourceSparseApplyX``."""
    return _register(spec, spec.sparse_ops(), sparse=True)


__all__ = ["CHUNK", "FLOATS", "FLOATS_COMPLEX", "FLOAT_DOUBLE", "L1", "L1_NON_NEGATIVE", "L2", "L2_NON_NEGATIVE",
           "LR", "LR_POSITIVE", "LR_SPACED", "SPARSE_ROWS", "Optimizer", "Step", "bounded", "dense_generic",
           "dense_numpy", "grad_rows", "indices_vector", "inner_dimension", "non_negative", "non_positive",
           "positive", "register_dense", "register_sparse", "same_shape", "scalar", "var_is_matrix_or_more"]
