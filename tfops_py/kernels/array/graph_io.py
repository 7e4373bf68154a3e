"""Ops that move tensors in and out of a graph: Const, Placeholder, Identity, NoOp …"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import conformance, graph_case, literal, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


@register_shape("Const")
def _const_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape(ctx.attr("value").shape)]


@register_kernel("Const")
def _const(ctx: KernelContext):
    value = ctx.cache.get("value")
    if value is None:
        value = ctx.cache["value"] = ctx.backend.from_numpy(ctx.attrs["value"])
    return value


@register_shape("Placeholder")
def _placeholder_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [ctx.attr("shape")]


@register_kernel("Placeholder")
def _placeholder(ctx: KernelContext):
    # Only reached if a plan lets an unfed placeholder through; build_plan reports it first.
    ctx.invalid_argument(f"You must feed a value for placeholder tensor '{ctx.node_name}'")


register_shape("Identity", "StopGradient", "PreventGradient", "Snapshot")(unchanged_shape)


@register_kernel("Identity", "StopGradient", "PreventGradient", "Snapshot")
def _identity(ctx: KernelContext, x):
    return x


@register_shape("PlaceholderWithDefault")
def _placeholder_with_default_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    shape = ctx.attr("shape")
    if not shape.is_compatible_with(ctx.input(0)):
        ctx.invalid_argument(f"input tensor must be compatible with {shape}, but is {ctx.input(0)}")
    return [shape]


@register_kernel("PlaceholderWithDefault")
def _placeholder_with_default(ctx: KernelContext, x):
    return x


@register_shape("IdentityN")
def _identity_n_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [ctx.input(i) for i in range(ctx.num_inputs)]


@register_kernel("IdentityN")
def _identity_n(ctx: KernelContext, inputs):
    return (list(inputs),)


@register_shape("NoOp")
def _no_op_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


@register_kernel("NoOp")
def _no_op(ctx: KernelContext):
    return ()


# -- conformance (tests/conformance) -------------------------------------------------------------------------
def _returns_input(scope: Any, x: Any) -> list[Any]:
    """A graph case's builder for Const: run_graph made ``x`` a Const; fetch it."""
    return [x]


def _tf_returns_input(tf: Any, x: Any) -> list[Any]:
    return [x]


def _unfed_placeholder(scope: Any) -> list[Any]:
    from tfops_py import ops  # noqa: PLC0415 - ops are built after the kernels are registered

    return [ops.Placeholder(scope, DataType.DT_FLOAT).output]


def _tf_unfed_placeholder(tf: Any) -> list[Any]:
    return [tf.compat.v1.placeholder(tf.float32)]


def _case_no_op(scope: Any, x: Any) -> tuple[list[Any], list[Any]]:
    from tfops_py import ops  # noqa: PLC0415

    return [x], [ops.NoOp(scope)]


def _tf_no_op(tf: Any, x: Any) -> tuple[list[Any], list[Any]]:
    return [x], [tf.raw_ops.NoOp()]


def _case_identity_n(scope: Any, a: Any, b: Any) -> list[Any]:
    from tfops_py import ops  # noqa: PLC0415

    return list(ops.IdentityN(scope, [a, b]).output)


def _tf_identity_n(tf: Any, a: Any, b: Any) -> list[Any]:
    return list(tf.raw_ops.IdentityN(input=[a, b]))


_ARRAY = dict(compare="exact", static_shapes="exact", early_errors=False)
_PYTHON_ONLY = "TF Python only (not in TF's C++ API); not ported yet"
for _op in ("Identity", "StopGradient", "PreventGradient", "Snapshot"):
    conformance(_op, input=values(specials=True), **_ARRAY,
                no_gradient="raises on purpose in TF Python (LookupError with its message); not ported yet"
                if _op == "PreventGradient" else None)
conformance("PlaceholderWithDefault", input=values(specials=True), shape=PartialTensorShape(None), **_ARRAY,
            no_gradient=_PYTHON_ONLY)
conformance("Const", generate=False, graph_cases=[
    graph_case("Const/float", _returns_input, _tf_returns_input, x=literal([[1.5, -0.0], [np.inf, 2.0]]),
               dtypes={"x": DataType.DT_FLOAT}, compare="exact"),
    graph_case("Const/string", _returns_input, _tf_returns_input, x=literal([b"a", b"", b"xyz"]),
               dtypes={"x": DataType.DT_STRING}, compare="exact")])
conformance("Placeholder", generate=False, graph_cases=[
    graph_case("Placeholder/unfed", _unfed_placeholder, _tf_unfed_placeholder)])
conformance("NoOp", generate=False, graph_cases=[
    graph_case("NoOp/target", _case_no_op, _tf_no_op, x=literal([1, 2]), dtypes={"x": DataType.DT_INT32},
               compare="exact")])
conformance("IdentityN", generate=False, no_gradient=_PYTHON_ONLY, graph_cases=[
    graph_case("IdentityN/two", _case_identity_n, _tf_identity_n, a=literal([1.0, 2.0]), b=literal([[3, 4]]),
               dtypes={"a": DataType.DT_FLOAT, "b": DataType.DT_INT64}, compare="exact")])
