"""Build-time shape inference: a registry of shape functions keyed by op type.

A shape function receives an :class:`InferenceContext` and returns one
PartialTensorShape per output (list outputs flattened).  It raises through
``ctx.invalid_argument`` when the known shapes or constant inputs are invalid, so
the error reaches the user at the line that built the op.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

import numpy as np

from tfops_py.errors import InvalidArgumentError, OpError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import PartialTensorShape, as_shape, unknown_shape

_E = TypeVar("_E", bound=OpError)

ShapeFn = Callable[["InferenceContext"], Sequence[PartialTensorShape]]
_SHAPE_FNS: dict[str, ShapeFn] = {}


def register_shape(*op_types: str) -> Callable[[ShapeFn], ShapeFn]:
    """Decorator: register ``fn`` as the shape function of each op type."""

    def deco(fn: ShapeFn) -> ShapeFn:
        for op_type in op_types:
            if op_type in _SHAPE_FNS:
                raise ValueError(f"shape function for {op_type} registered twice")
            _SHAPE_FNS[op_type] = fn
        return fn

    return deco


def get_shape_fn(op_type: str) -> ShapeFn | None:
    return _SHAPE_FNS.get(op_type)


def registered_shape_ops() -> frozenset[str]:
    return frozenset(_SHAPE_FNS)


class InferenceContext:
    """What a shape function may know about a node being built."""

    def __init__(self, op_type: str, node_name: str, attrs: dict[str, Any],
                 input_shapes: Sequence[PartialTensorShape], input_dtypes: Sequence[DataType],
                 input_values: Callable[[int], np.ndarray | None], num_outputs: int):
        self.op_type = op_type
        self.node_name = node_name
        self.attrs = attrs
        self._shapes = list(input_shapes)
        self.input_dtypes = list(input_dtypes)
        self._values = input_values
        self.num_outputs = num_outputs

    @property
    def num_inputs(self) -> int:
        return len(self._shapes)

    def input(self, i: int) -> PartialTensorShape:
        return self._shapes[i]

    def input_tensor(self, i: int) -> np.ndarray | None:
        """The value of input i when it is known at build time (a Const, a Shape of a known shape …)."""
        return self._values(i)

    def attr(self, name: str) -> Any:
        return self.attrs[name]

    # -- errors -------------------------------------------------------------------------
    def error(self, cls: type[_E], message: str) -> _E:
        return cls(message, op_type=self.op_type, node_name=self.node_name)

    def invalid_argument(self, message: str) -> NoReturn:
        """Raise InvalidArgumentError naming this node (``raise ctx.invalid_argument(...)`` reads well too)."""
        raise self.error(InvalidArgumentError, message)

    # -- helpers mirroring tensorflow::shape_inference::InferenceContext --------------------
    def with_rank(self, shape: PartialTensorShape, rank: int, what: str = "Shape") -> PartialTensorShape:
        if shape.unknown_rank():
            return unknown_shape(rank)
        if shape.dims() != rank:
            self.invalid_argument(f"{what} must be rank {rank} but is rank {shape.dims()}")
        return shape

    def with_rank_at_least(self, shape: PartialTensorShape, rank: int, what: str = "Shape") -> PartialTensorShape:
        if not shape.unknown_rank() and shape.dims() < rank:
            self.invalid_argument(f"{what} must be at least rank {rank} but is rank {shape.dims()}")
        return shape

    def with_rank_at_most(self, shape: PartialTensorShape, rank: int, what: str = "Shape") -> PartialTensorShape:
        if not shape.unknown_rank() and shape.dims() > rank:
            self.invalid_argument(f"{what} must be at most rank {rank} but is rank {shape.dims()}")
        return shape

    def merge(self, a: PartialTensorShape, b: PartialTensorShape, what: str = "") -> PartialTensorShape:
        try:
            return a.merge_with(b)
        except ValueError:
            prefix = f"{what}: " if what else ""
            self.invalid_argument(f"{prefix}Shapes must be equal rank, but are {a.dims()} and {b.dims()}"
                                  if a.dims() != b.dims() else
                                  f"{prefix}Dimensions must be equal, but for shapes {a} and {b}")
            raise  # unreachable

    @staticmethod
    def merge_dim(a: int, b: int) -> int | None:
        """Merged dimension, or None when both are known and differ."""
        if a == -1:
            return b
        if b == -1 or a == b:
            return a
        return None


def run_shape_fn(ctx: InferenceContext) -> list[PartialTensorShape]:
    """Inferred output shapes; unknown for ops without a shape function."""
    fn = _SHAPE_FNS.get(ctx.op_type)
    if fn is None:
        return [unknown_shape() for _ in range(ctx.num_outputs)]
    shapes = [as_shape(s) for s in fn(ctx)]
    if len(shapes) != ctx.num_outputs:
        raise AssertionError(f"shape function of {ctx.op_type} returned {len(shapes)} shapes "
                             f"for {ctx.num_outputs} outputs")
    return shapes
