"""Ops that pass or reinterpret a tensor: Bitcast, DeepCopy, GuaranteeConst, DebugGradientIdentity, Empty.

Bitcast reads the input's bytes as another type of the same or a divisible size (the backend's
``bitcast`` primitive: a view on NumPy and CuPy, a host round trip elsewhere).  Empty with ``init=False``
returns zeros where TF leaves the memory uninitialized.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import ALLOWED, case, conformance, divergence, literal, reference, returns_inputs, values
from tfops_py.framework.dtypes import DT_STRING, DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._shape_util import host_ints, shape_from_shape_tensor
from tfops_py.kernels.array.fill_ops import checked_shape, zeros_of
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


def _type_size(dt: DataType) -> int:
    """``DataTypeSize``: bytes per element, 0 for types without a fixed size (string, resource, variant)."""
    if dt in (DT_STRING, DataType.DT_RESOURCE, DataType.DT_VARIANT):
        return 0
    return int(np.dtype(dt.numpy_dtype).itemsize)


# -- Bitcast -------------------------------------------------------------------------------------------------
@register_shape("Bitcast")
def _bitcast_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    src = ctx.input(0)
    if src.unknown_rank():
        return [unknown_shape()]
    t_in, t_out = ctx.attr("T"), ctx.attr("type")
    size_in, size_out = _type_size(t_in), _type_size(t_out)
    if size_in == 0 or size_out == 0:
        ctx.invalid_argument(f"Cannot bitcast types {t_in.short_name} to {t_out.short_name} because one of the type "
                             f"sizes is zero.")
    dims = src.as_list() or []
    if size_in == size_out:
        return [src]
    if size_in < size_out:
        if not dims:
            ctx.invalid_argument("Shape must be at least rank 1 but is rank 0")
        ratio = size_out // size_in
        if dims[-1] not in (-1, ratio):
            ctx.invalid_argument(f"Cannot bitcast from {t_in.value} to {t_out.value} due to shape. {dims[-1]} does not "
                                 f"match {ratio}")
        return [PartialTensorShape(dims[:-1])]
    return [PartialTensorShape(dims + [size_in // size_out])]


@register_kernel("Bitcast")
def _bitcast(ctx: KernelContext, input: Any) -> Any:  # noqa: A002 - TF's argument name
    t_in, t_out = ctx.attrs["T"], ctx.attrs["type"]
    size_in, size_out = _type_size(t_in), _type_size(t_out)
    shape = tuple(input.shape)
    if size_in < size_out and not (shape and shape[-1] == size_out // size_in):
        ctx.invalid_argument(f"Cannot bitcast from {t_in.value} to {t_out.value}")
    if size_in > size_out:
        shape = shape + (size_in // size_out,)
    elif size_in < size_out:
        shape = shape[:-1]
    return ctx.backend.bitcast(input, t_out, shape, ctx)


# -- identities ----------------------------------------------------------------------------------------------
register_shape("DeepCopy", "GuaranteeConst", "DebugGradientIdentity")(unchanged_shape)


@register_kernel("DeepCopy")
def _deep_copy(ctx: KernelContext, x: Any) -> Any:
    """A fresh buffer (TF's point: the output never aliases the input)."""
    if ctx.input_dtypes[0] == DT_STRING:
        return np.array(x, dtype=object, copy=True)
    return ctx.xp.asarray(x, copy=True)


@register_kernel("GuaranteeConst", "DebugGradientIdentity")
def _pass_through(ctx: KernelContext, input: Any) -> Any:  # noqa: A002 - TF's argument name
    return input


# -- Empty ---------------------------------------------------------------------------------------------------
@register_shape("Empty")
def _empty_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [shape_from_shape_tensor(ctx, 0)]


@register_kernel("Empty")
def _empty(ctx: KernelContext, shape: Any) -> Any:
    dims = ctx.host(shape)
    if dims.ndim != 1:
        ctx.invalid_argument(f"shape must be a vector of int32, got shape {format_shape(dims.shape)}")
    return zeros_of(ctx, checked_shape(ctx, host_ints(dims)), ctx.attrs["dtype"])


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_I32, _F32, _U8 = DataType.DT_INT32, DataType.DT_FLOAT, DataType.DT_UINT8

conformance("Bitcast", input=values(), type=ALLOWED, compare="exact",
            shapes=[{"input": (3, 8)}, {"input": (2, 0, 8)}, {"input": (4, 4)}, {"input": (8,)}, {"input": (2, 2)}],
            cases=[
                case(id="Bitcast/float_to_u8", T=_F32, type=_U8, input=literal([1.0, -2.5, float("nan")], _F32)),
                case(id="Bitcast/u8_to_float", T=_U8, type=_F32, input=literal([[0, 0, 128, 63], [1, 2, 3, 4]], _U8)),
                case(id="Bitcast/scalar_to_bytes", T=_I32, type=_U8, input=literal(-2, _I32)),
                case(id="Bitcast/last_dim_mismatch", T=DataType.DT_INT16, type=_F32, shapes={"input": (3,)}),
                case(id="Bitcast/scalar_to_wider", T=DataType.DT_INT16, type=_F32, shapes={"input": ()}),
                case(id="Bitcast/complex", T=DataType.DT_COMPLEX128, type=DataType.DT_INT64,
                     input=literal([1 + 2j, -0.5j], DataType.DT_COMPLEX128)),
            ])
conformance("DeepCopy", x=values(), compare="exact")
_NARROW = (DataType.DT_FLOAT8_E5M2, DataType.DT_FLOAT8_E4M3FN, DataType.DT_INT4, DataType.DT_UINT4, DataType.DT_INT2,
           DataType.DT_UINT2)
divergence("DeepCopy", when="float8, int4/uint4 and int2/uint2 inputs", tf="InvalidArgumentError (Unsupported data "
           "type), though its CPU kernel is registered for them", ours="the copy", dtypes=_NARROW,
           reference=returns_inputs(0, note="a copy of the input"))
conformance("GuaranteeConst", input=values(), compare="exact")
conformance("DebugGradientIdentity", input=values(), compare="exact")
conformance("Empty", shape=literal([2, 3], _I32), dtype=ALLOWED, init=True, compare="exact",
            shapes=[{"shape": (2,)}], cases=[
                case(id="Empty/scalar", dtype=_F32, shape=literal(np.zeros(0, np.int32)), init=True),
                case(id="Empty/empty_dim", dtype=DT_STRING, shape=literal([0, 4], _I32), init=True),
                case(id="Empty/uninitialized", dtype=_F32, shape=literal([2, 2], _I32), init=False),
                case(id="Empty/negative", dtype=_F32, shape=literal([2, -1], _I32), init=True),
                case(id="Empty/matrix", dtype=_F32, shape=literal([[2]], _I32), init=True),
            ])
divergence("Empty", when="`init=False`", tf="leaves the output uninitialized (whatever the allocator held)",
           ours="zeros", attrs={"init": False},
           reference=reference(lambda run_tf, op, inputs, attrs: run_tf(op, inputs, {**attrs, "init": True}),
                               note="TF's Empty with init=True (its init=False values are arbitrary)"))
