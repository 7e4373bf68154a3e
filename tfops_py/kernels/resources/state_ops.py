"""Variables: Variable/VariableV2, Assign, AssignAdd, AssignSub, IsVariableInitialized.

A variable's value lives in the session (``ctx.resources[<variable node name>]``, or
its ``shared_name``), so it persists across Run calls and two sessions on one graph
never share it.  ``Variable`` outputs a :class:`VariableRef`, our stand-in for TF's
reference tensor: ops taking a ``Ref(T)`` input (Assign, the Apply* optimizers)
update it; every other consumer, and a fetch, reads the value at the moment it runs
(the session dereferences it), so a read ordered after an update sees the new value.
Reading an uninitialised variable is ``FailedPreconditionError: Attempting to use
uninitialized value <name>`` naming the reading node, as in TF.

Resource variables (``VarHandleOp``, ``resource_variable_ops.py``) keep their value
in the same :class:`VariableRef` storage.  Updates either replace ``value`` with a
new array, or change it in place through :func:`value_for_update`, which copies
first when the array may be seen elsewhere (TF's copy-on-write for variables):
kernels that update variables in place (the optimizers) use it under
:func:`locked`::

    var = variable_for_update(ctx, handle_or_ref)   # either input kind
    with locked(ctx, var):
        value = value_for_update(ctx, var)          # private and writeable
        value -= lr * grad                          # NumPy; or assign var.value = ...
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any

from tfops_py.conformance import conformance
from tfops_py.errors import FailedPreconditionError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels.registry import KernelContext, register_kernel


class VariableRef:
    """The mutable storage of one variable (TF's ``LegacyVar``) and the value its ``Variable`` op outputs."""

    __slots__ = ("declared_shape", "dtype", "lock", "name", "op_type", "shared", "tf_dtype", "value")

    def __init__(self, name: str, op_type: str, dtype: Any, declared_shape: PartialTensorShape,
                 tf_dtype: DataType | None = None):
        self.name = name
        self.op_type = op_type
        self.dtype = dtype  # the backend's dtype (what kernel output checks compare)
        self.tf_dtype = tf_dtype
        self.declared_shape = declared_shape
        self.value: Any = None
        self.lock = threading.Lock()
        # True while ``value`` may be referenced outside the variable (handed to a reader, or taken
        # from an input without a copy): an in-place update must copy it first.
        self.shared = False

    @property
    def initialized(self) -> bool:
        return self.value is not None

    @property
    def shape(self) -> tuple[int, ...]:
        if self.value is not None:
            return tuple(self.value.shape)
        return () if self.declared_shape.unknown_rank() else self.declared_shape.as_tuple()

    def deref(self, ctx: KernelContext | None) -> Any:
        """The current value, read by ``ctx``'s node (None: a fetch)."""
        if self.value is None:
            raise uninitialized(ctx, self)
        self.shared = True
        return self.value

    def set(self, value: Any, shared: bool) -> None:
        """Replace the value; ``shared``: the array may also be referenced elsewhere."""
        self.value = value
        self.shared = shared

    def __repr__(self) -> str:
        state = "uninitialized" if self.value is None else f"shape {format_shape(self.value.shape)}"
        return f"<VariableRef {self.name!r} {state}>"


def uninitialized(ctx: KernelContext | None, ref: VariableRef) -> FailedPreconditionError:
    message = f"Attempting to use uninitialized value {ref.name}"
    if ctx is None:
        return FailedPreconditionError(message, op_type=ref.op_type, node_name=ref.name)
    return ctx.error(FailedPreconditionError, message)  # type: ignore[return-value]


def ref_input(ctx: KernelContext, value: Any, arg: str = "ref", initialized: bool = True) -> VariableRef:
    """The variable behind a ``Ref(T)`` input; TF's errors for a non-variable or an unset one."""
    if not isinstance(value, VariableRef):
        ctx.invalid_argument(f"Input '{arg}' of '{ctx.op_type}' Op requires l-value input")
    if initialized and value.value is None:
        raise uninitialized(ctx, value)
    return value


def locked(ctx: KernelContext, *refs: VariableRef, always: bool = False) -> contextlib.AbstractContextManager:
    """Hold the variables' locks while updating them when the op asks for ``use_locking`` (or ``always``:
    TF always locks resource variables and CountUpTo's ref)."""
    if not (always or ctx.attrs.get("use_locking", False)):
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    for ref in sorted({id(r): r for r in refs}.values(), key=id):  # one order everywhere: no deadlock
        stack.enter_context(ref.lock)
    return stack


def value_for_update(ctx: KernelContext, var: VariableRef) -> Any:
    """The variable's array made private and writeable, for an update in place (hold ``locked(ctx, var)``)."""
    value = var.value
    if value is None:
        raise uninitialized(ctx, var)
    if var.shared or not getattr(getattr(value, "flags", None), "writeable", True):
        var.value = ctx.xp.asarray(value, copy=True)
        var.shared = False
    return var.value


def variable_for_update(ctx: KernelContext, value: Any, arg: str = "var") -> VariableRef:
    """The initialised variable behind a ``Ref(T)`` input or a resource handle (optimizer kernels take both)."""
    if isinstance(value, VariableRef):
        return ref_input(ctx, value, arg)
    from tfops_py.kernels.resources.resource_variable_ops import variable_of

    return variable_of(ctx, value, arg)


# -- shape functions -------------------------------------------------------------------------------
@register_shape("Variable", "VariableV2")
def _variable_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [ctx.attr("shape")]


@register_shape("Assign")
def _assign_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    if ctx.attr("validate_shape"):
        return [ctx.merge(ctx.input(0), ctx.input(1))]
    return [ctx.input(1)]


@register_shape("AssignAdd", "AssignSub")
def _assign_update_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [ctx.merge(ctx.input(0), ctx.input(1))]


@register_shape("IsVariableInitialized")
def _is_initialized_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


# -- kernels ---------------------------------------------------------------------------------------
@register_kernel("Variable", "VariableV2")
def _variable(ctx: KernelContext) -> VariableRef:
    key = ctx.attrs.get("shared_name") or ctx.node_name
    if ctx.attrs.get("container"):
        key = f"{ctx.attrs['container']}/{key}"
    ref = ctx.resources.get(key)
    dtype = ctx.dtype(ctx.attrs["dtype"])
    if ref is None:  # setdefault: two Runs creating the variable at once get the same storage
        ref = ctx.resources.setdefault(key, VariableRef(ctx.node_name, ctx.op_type, dtype, ctx.attrs["shape"]))
    if not isinstance(ref, VariableRef) or ref.dtype != dtype:
        ctx.invalid_argument(f"variable '{key}' already exists in this session with another type")
    return ref


@register_kernel("Assign")
def _assign(ctx: KernelContext, ref: Any, value: Any) -> VariableRef:
    var = ref_input(ctx, ref, initialized=False)
    if ctx.attrs["validate_shape"]:
        rhs = tuple(value.shape)
        lhs = var.value.shape if var.initialized else var.declared_shape
        same = tuple(lhs) == rhs if var.initialized else var.declared_shape.is_compatible_with(rhs)
        if not same:
            lhs_text = format_shape(lhs) if var.initialized else str(var.declared_shape)
            ctx.invalid_argument(f"Assign requires shapes of both tensors to match. lhs shape= {lhs_text} "
                                 f"rhs shape= {format_shape(rhs)}")
    with locked(ctx, var):
        var.set(ctx.xp.asarray(value, copy=True), shared=False)  # the variable must not alias a fed array
    return var


def _assign_update(sign: int):
    def kernel(ctx: KernelContext, ref: Any, value: Any) -> VariableRef:
        var = ref_input(ctx, ref)
        if tuple(var.value.shape) != tuple(value.shape):
            ctx.invalid_argument(f"Parameters and update must be the same size: "  # TF's text, plus the shapes
                                 f"{format_shape(var.value.shape)} vs {format_shape(value.shape)}")
        with locked(ctx, var):
            var.set(ctx.xp.add(var.value, value) if sign > 0 else ctx.xp.subtract(var.value, value), shared=False)
        return var

    return kernel


register_kernel("AssignAdd")(_assign_update(1))
register_kernel("AssignSub")(_assign_update(-1))


@register_kernel("IsVariableInitialized")
def _is_variable_initialized(ctx: KernelContext, ref: Any) -> Any:
    var = ref_input(ctx, ref, initialized=False)
    return ctx.asarray(var.initialized, DataType.DT_BOOL)


__all__ = ["VariableRef", "locked", "ref_input", "uninitialized", "value_for_update", "variable_for_update"]


# -- conformance (tests/conformance): graph cases on TF (resources family, built in _resource_cases.py) -------
CONFORMANCE_FAMILY = "resources"
for _op in ("Variable", "VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized"):
    conformance(_op, generate=False)
