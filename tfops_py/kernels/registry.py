"""Kernel registry and the context a kernel runs with.

A kernel is written once against the array namespace ``ctx.xp`` of the session's
backend::

    @register_kernel("AddV2", "Add")
    def _add(ctx: KernelContext, x, y):
        return ctx.xp.add(x, y)

It receives one argument per OpDef input argument (a Python list for list
arguments such as AddN's ``inputs``) and returns one value per output argument:
the value itself when the op has a single output argument, else a tuple (a list
inside it for a list output).  Attrs are in ``ctx.attrs`` with TF's names.
A backend-specific variant may be registered with ``backend="numpy"``; it is
preferred over the generic kernel on that backend.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import numpy as np

from tfops_py.errors import InvalidArgumentError, OpError, UnimplementedError
from tfops_py.framework.dtypes import DataType

_E = TypeVar("_E", bound=OpError)

KernelFn = Callable[..., Any]
_GENERIC = "*"
_KERNELS: dict[str, dict[str, KernelFn]] = {}


def register_kernel(*op_types: str, backend: str = _GENERIC) -> Callable[[KernelFn], KernelFn]:
    """Decorator registering ``fn`` as the kernel of each op type (on one backend or all)."""

    def deco(fn: KernelFn) -> KernelFn:
        for op_type in op_types:
            per_backend = _KERNELS.setdefault(op_type, {})
            if backend in per_backend:
                raise ValueError(f"kernel for {op_type} on backend {backend!r} registered twice")
            per_backend[backend] = fn
        return fn

    return deco


def find_kernel(op_type: str, backend_name: str) -> KernelFn | None:
    per_backend = _KERNELS.get(op_type)
    if not per_backend:
        return None
    return per_backend.get(backend_name) or per_backend.get(_GENERIC)


def registered_kernel_ops() -> frozenset[str]:
    return frozenset(_KERNELS)


class KernelContext:
    """Per-node, per-plan facts a kernel needs; built once when a session compiles its plan."""

    __slots__ = ("op_type", "node_name", "attrs", "backend", "xp", "input_dtypes", "output_dtypes", "cache",
                 "input_nodes", "resources", "funcs")

    def __init__(self, op_type: str, node_name: str, attrs: dict[str, Any], backend: Any,
                 input_dtypes: list[DataType], output_dtypes: list[DataType],
                 input_nodes: list[str] | None = None, resources: dict[Any, Any] | None = None):
        self.op_type = op_type
        self.node_name = node_name
        self.attrs = attrs
        self.backend = backend
        self.xp = backend.xp
        self.input_dtypes = input_dtypes
        self.output_dtypes = output_dtypes
        self.cache: dict[Any, Any] = {}  # per-plan kernel state (e.g. a Const already on the device)
        # Names of the nodes producing each input (stateful ops find their variable by it).
        self.input_nodes: list[str] = input_nodes or []
        # State owned by the session (variable values …); shared by all plans of one session only.
        self.resources: dict[Any, Any] = resources if resources is not None else {}
        # Compiled library functions this node runs, by attr name (``body``, ``then_branch``, ``f``; a list for
        # ``branches``): callables mapping argument values to result values, bound when the plan is built.
        self.funcs: dict[str, Any] = {}

    def error(self, cls: type[_E], message: str) -> _E:
        return cls(message, op_type=self.op_type, node_name=self.node_name)

    def invalid_argument(self, message: str) -> NoReturn:
        """Raise InvalidArgumentError naming this node."""
        raise self.error(InvalidArgumentError, message)

    def unimplemented(self, message: str) -> NoReturn:
        raise self.error(UnimplementedError, message)

    def host(self, x: Any) -> np.ndarray:
        """A host NumPy copy of a (small, shape-like) backend array."""
        return self.backend.to_numpy(x)

    def dtype(self, dt: DataType) -> Any:
        """The backend's dtype object for a TF DataType."""
        return self.backend.dtype(dt, self)

    def asarray(self, value: Any, dt: DataType) -> Any:
        """A backend array of dtype ``dt`` from host data."""
        return self.backend.asarray(value, dt, self)
