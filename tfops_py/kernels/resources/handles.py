"""Resource handles: the value a ``DT_RESOURCE`` tensor holds, and the session's store they point into.

A :class:`ResourceHandle` names a resource as TF's does (container, name, type)
and carries the dtype and shape a variable was declared with.  The resource itself
(a variable's storage, a lookup table) lives in the session's store
``ctx.resources`` under ``(type, container, name)``: two handle ops with the same
``shared_name`` and container reach the same resource, two sessions never share
one, and a handle is a plain value that flows through Identity, function calls and
plan slots like any tensor.  Handle ops with an empty ``shared_name`` all name the
resource ``""`` -- TF 2.21's VarHandleOp does exactly that.
"""
from __future__ import annotations

import itertools
from typing import Any

from tfops_py.errors import NotFoundError, OpError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.registry import KernelContext

DEFAULT_CONTAINER = "localhost"
ANONYMOUS_NAME = "cd2c89b7-88b7-44c8-ad83-06c2a9158347"  # ResourceHandle::ANONYMOUS_NAME
_anonymous = itertools.count()


class ResourceHandle:
    """TF's ``ResourceHandle``: which resource a DT_RESOURCE scalar points to.

    ``shape`` is the handle tensor's own shape (a scalar, ``()``); the variable's
    declared dtype and shape are ``dtype`` and ``var_shape``.
    """

    __slots__ = ("container", "dtype", "name", "type_name", "var_shape")
    shape = ()
    ndim = 0

    def __init__(self, container: str, name: str, type_name: str, dtype: DataType = DataType.DT_INVALID,
                 var_shape: PartialTensorShape | None = None):
        self.container = container
        self.name = name
        self.type_name = type_name
        self.dtype = dtype
        self.var_shape = var_shape if var_shape is not None else PartialTensorShape()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.type_name, self.container, self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ResourceHandle) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __repr__(self) -> str:
        return f"<ResourceHandle {self.container}/{self.name} ({self.type_name})>"


def handle_from_attrs(ctx: KernelContext, type_name: str, dtype: DataType = DataType.DT_INVALID,
                      shape: PartialTensorShape | None = None) -> ResourceHandle:
    """The handle a handle op (VarHandleOp, HashTableV2 ...) outputs, from its container/shared_name attrs."""
    name = ctx.attrs.get("shared_name", "")
    if name == ANONYMOUS_NAME:  # a fresh resource on every run
        name = f"{ctx.node_name}_{next(_anonymous)}"
    return ResourceHandle(ctx.attrs.get("container") or DEFAULT_CONTAINER, name, type_name, dtype, shape)


def as_handle(ctx: KernelContext, value: Any, arg: str = "resource") -> ResourceHandle:
    if not isinstance(value, ResourceHandle):
        ctx.invalid_argument(f"Input '{arg}' of '{ctx.op_type}' must be a resource handle, got "
                             f"{type(value).__name__}")
    return value


def missing(ctx: KernelContext | None, handle: ResourceHandle, cls: type[OpError] = NotFoundError) -> OpError:
    """TF's error for a handle whose resource does not exist (NotFoundError unless ``cls`` says otherwise)."""
    store = ctx.resources if ctx is not None else {}
    if any(isinstance(k, tuple) and len(k) == 3 and k[1] == handle.container for k in store):
        detail = f"Resource {handle.container}/{handle.name}/{handle.type_name} does not exist."
    else:
        detail = f"Container {handle.container} does not exist. (Could not find resource: " \
                 f"{handle.container}/{handle.name})"
    if ctx is None:
        return cls(detail)
    return ctx.error(cls, detail)


def lookup(ctx: KernelContext, handle: ResourceHandle) -> Any:
    """The resource ``handle`` points to, or None."""
    return ctx.resources.get(handle.key)


def lookup_or_create(ctx: KernelContext, handle: ResourceHandle, create: Any) -> Any:
    """The resource, made by ``create()`` when absent (setdefault: two Runs racing get one)."""
    found = ctx.resources.get(handle.key)
    if found is None:
        found = ctx.resources.setdefault(handle.key, create())
    return found


def delete(ctx: KernelContext, handle: ResourceHandle) -> bool:
    """Remove the resource; False when there was none."""
    return ctx.resources.pop(handle.key, None) is not None


__all__ = ["ANONYMOUS_NAME", "DEFAULT_CONTAINER", "ResourceHandle", "as_handle", "delete", "handle_from_attrs",
           "lookup", "lookup_or_create", "missing"]
