"""What every random kernel needs: the output shape from a shape tensor, the per-node generator of the
seeded ops, and the family's shape functions.

A seeded op (``seed``/``seed2`` attrs) owns a ``GuardedPhiloxRandom`` for the lifetime of its kernel:
TF creates the kernel once per session and shares it between every ``Run`` of that session (its
``OpSegment`` keeps stateful kernels), so a second ``Run`` continues the stream where the first
stopped.  Here the generator lives in the session's resource store under the node's name; a new
session starts the stream again from the seeds.  ``seed = seed2 = 0`` draws two random seeds when the
session first runs the node.
"""
from __future__ import annotations

from typing import Any

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels._philox import GuardedPhilox
from tfops_py.kernels._shape_util import host_ints, shape_from_shape_tensor
from tfops_py.kernels.array.fill_ops import checked_shape
from tfops_py.kernels.registry import KernelContext

FLOAT_TYPES = (DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT, DataType.DT_DOUBLE)


def output_shape(ctx: KernelContext, shape: Any) -> tuple[int, ...]:
    """TF's ``AllocateOutputWithShape``/``MakeShape``: a vector of int32/int64 dims, each >= 0."""
    dims = ctx.host(shape)
    if dims.ndim != 1:
        ctx.invalid_argument(f"shape must be a vector of {{int32,int64}}, got shape {format_shape(dims.shape)}")
    return checked_shape(ctx, host_ints(dims))


def generator(ctx: KernelContext) -> GuardedPhilox:
    """The node's ``GuardedPhiloxRandom`` in this session (made from ``seed``/``seed2`` on first use)."""
    key = ("GuardedPhiloxRandom", ctx.op_type, ctx.node_name)
    gen = ctx.resources.get(key)
    if gen is None:
        gen = ctx.resources[key] = GuardedPhilox(int(ctx.attrs["seed"]), int(ctx.attrs["seed2"]))
    return gen


def host_scalar(ctx: KernelContext, value: Any, name: str) -> Any:
    """A 0-D input as a host NumPy scalar (``<name> must be 0-D, got shape [..]`` otherwise)."""
    v = ctx.host(value)
    if v.ndim != 0:
        ctx.invalid_argument(f"{name} must be 0-D, got shape {format_shape(v.shape)}")
    return v[()]


# -- shape functions ---------------------------------------------------------------------------------
def random_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """``shape_inference::RandomShape``: the output's shape is the value of input 0."""
    return [shape_from_shape_tensor(ctx, 0)]


def samples_then_params_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """RandomGamma/RandomPoisson: the samples' shape (the value of input 0), then input 1's shape."""
    dims = shape_from_shape_tensor(ctx, 0)
    params = ctx.input(1)
    if dims.unknown_rank() or params.unknown_rank():
        return [PartialTensorShape()]
    return [PartialTensorShape(dims.as_tuple() + params.as_tuple())]


def scalar_input(ctx: InferenceContext, i: int, name: str) -> None:
    """Input ``i`` must be a scalar: ``<name> must be a scalar; got a tensor of shape [..]``."""
    s = ctx.input(i)
    if not s.unknown_rank() and s.dims() != 0:
        ctx.invalid_argument(f"{name} must be a scalar; got a tensor of shape {s}")
