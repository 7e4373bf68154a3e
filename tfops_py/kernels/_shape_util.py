"""TF's ``InferenceContext`` dimension arithmetic, with TF's messages, for the array-op shape functions.

Dimensions are ints, -1 when unknown (as in PartialTensorShape).  Each helper is named after
the C++ method it mirrors and raises through ``ctx.invalid_argument`` with TF's wording, so a
build-time error reads as TF's graph construction error does.

TF runs a shape function once before constant inputs are known and again after; an input it
reads "as a shape" (``MakeShapeFromShapeTensor``) is evaluated in between, so its invalid values
are reported before the second pass.  ``shape_from_shape_tensor`` reproduces that order.
"""
from __future__ import annotations

import math

import numpy as np

from tfops_py.framework.shape_inference import InferenceContext
from tfops_py.framework.tensor_shape import PartialTensorShape, unknown_shape

INT64_MAX = 2**63 - 1


def merge_dim(ctx: InferenceContext, a: int, b: int) -> int:
    """``Merge(DimensionHandle)``."""
    if a == -1:
        return b
    if b == -1 or a == b:
        return a
    ctx.invalid_argument(f"Dimensions must be equal, but are {a} and {b}")
    raise AssertionError  # unreachable


def merge_shapes(ctx: InferenceContext, a: PartialTensorShape, b: PartialTensorShape,
                 context: str = "") -> PartialTensorShape:
    """``Merge(ShapeHandle)``; ``context`` is appended as TF's ``TF_RETURN_WITH_CONTEXT_IF_ERROR`` does."""
    suffix = f"\n\t{context}" if context else ""
    if a.unknown_rank():
        return b
    if b.unknown_rank():
        return a
    if a.dims() != b.dims():
        ctx.invalid_argument(f"Shapes must be equal rank, but are {a.dims()} and {b.dims()}{suffix}")
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != -1 and y != -1 and x != y:
            ctx.invalid_argument(f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                                 f"Shapes are {a} and {b}.{suffix}")
        out.append(y if x == -1 else x)
    return PartialTensorShape(out)


def with_value(ctx: InferenceContext, dim: int, value: int) -> int:
    """``WithValue``: ``dim`` must be ``value`` when known."""
    if dim != -1 and dim != value:
        ctx.invalid_argument(f"Dimension must be {value} but is {dim}")
    return value


def num_elements(shape: PartialTensorShape) -> int:
    """``NumElements``: 0 as soon as a known dimension is 0, else -1 when anything is unknown."""
    if shape.unknown_rank():
        return -1
    dims = shape.as_tuple()
    if 0 in dims:
        return 0
    return -1 if -1 in dims else math.prod(dims)


def add_dim(ctx: InferenceContext, a: int, b: int) -> int:
    """``Add``: ``b`` is a known value."""
    if b == 0:
        return a
    if a == 0:
        return b
    if a == -1 or b == -1:
        return -1
    if a + b > INT64_MAX:
        ctx.invalid_argument(f"Dimension size overflow from adding {a} and {b}")
    return a + b


def subtract_dim(ctx: InferenceContext, a: int, b: int) -> int:
    if b == 0:
        return a
    if a == -1 or b == -1:
        return -1
    if a < b:
        ctx.invalid_argument(f"Negative dimension size caused by subtracting {b} from {a}")
    return a - b


def multiply_dim(ctx: InferenceContext, a: int, b: int) -> int:
    if a == 0 or b == 0:
        return 0
    if a == 1:
        return b
    if b == 1:
        return a
    if a == -1 or b == -1:
        return -1
    if a * b > INT64_MAX:
        ctx.invalid_argument(f"Negative dimension size caused by overflow when multiplying {a} and {b}")
    return a * b


def divide_dim(ctx: InferenceContext, dividend: int, divisor: int, context: str = "") -> int:
    """``Divide(..., evenly_divisible=true)`` by a known divisor."""
    suffix = f"\n\t{context}" if context else ""
    if divisor == 1:
        return dividend
    if dividend == -1:
        return -1
    if divisor <= 0:
        ctx.invalid_argument(f"Divisor must be positive but is {divisor}{suffix}")
    if dividend % divisor:
        ctx.invalid_argument(f"Dimension size must be evenly divisible by {divisor} but is {dividend}{suffix}")
    return dividend // divisor


def shape_from_shape_tensor(ctx: InferenceContext, i: int) -> PartialTensorShape:
    """``MakeShapeFromShapeTensor``: input ``i`` read as a shape; -1 entries are unknown dims."""
    vec = ctx.with_rank(ctx.input(i), 1)
    value = ctx.input_tensor(i)
    if value is None:
        n = vec[0]
        return unknown_shape() if n == -1 else unknown_shape(n)
    if value.ndim != 1:
        ctx.invalid_argument(f"Input tensor must be rank 1, but was rank {value.ndim}.")
    dims = [int(v) for v in value.tolist()]
    for v in dims:
        if v < -1:
            ctx.invalid_argument(f"Invalid value in tensor used for shape: {v}")
    return PartialTensorShape(dims)


def check_scalar_inputs(ctx: InferenceContext, names: tuple[str, ...]) -> None:
    """The first ``len(names)`` inputs have rank 0 where known (TF names the input: ``for 'start'``)."""
    for i, name in enumerate(names):
        shape = ctx.input(i)
        if not shape.unknown_rank() and shape.dims() != 0:
            ctx.invalid_argument(f"Shape must be rank 0 but is rank {shape.dims()}\n\t for '{name}'")


def scalar_input(ctx: InferenceContext, i: int) -> int | None:
    """The value of a constant scalar input (``Input must be scalar`` otherwise), or None."""
    value = ctx.input_tensor(i)
    if value is None:
        return None
    if value.ndim != 0:
        ctx.invalid_argument(f"Input must be scalar but has rank {value.ndim}")
    return int(value)


def dim_from_scalar_input(ctx: InferenceContext, i: int) -> int:
    """``MakeDimForScalarInput``: a non-negative size given by a constant scalar input."""
    val = scalar_input(ctx, i)
    if val is None:
        return -1
    if val < 0:
        ctx.invalid_argument(f"Dimension size, given by scalar input {i}, must be non-negative but is {val}")
    return val


def axis_from_scalar_input(ctx: InferenceContext, i: int, rank: int) -> int:
    """``MakeDimForScalarInputWithNegativeIndexing``: an axis in [-rank, rank) made non-negative."""
    val = scalar_input(ctx, i)
    if val is None:
        return -1
    if val < 0:
        if rank < 0:
            return -1
        if val + rank < 0:
            ctx.invalid_argument(f"Dimension size, given by scalar input {val} must be in range [-{rank}, {rank})")
        return val + rank
    if rank >= 0 and val >= rank:
        ctx.invalid_argument(f"Dimension size, given by scalar input {val} must be in range [-{rank}, {rank})")
    return val


def host_ints(value: np.ndarray) -> list[int]:
    """A small integer array as a flat list of Python ints."""
    return [int(v) for v in np.asarray(value).reshape(-1).tolist()]
