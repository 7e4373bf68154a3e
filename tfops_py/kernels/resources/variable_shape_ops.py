"""VariableShape: the shape of a resource variable's value, without reading (copying) the value.

The gradient of ``ResourceGather`` needs the variable's shape at run time; TF's ``VariableShapeOp``
looks the variable up (NotFoundError when there is none) and returns its shape as ``out_type``.
"""
from __future__ import annotations

from typing import Any

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.resources.resource_variable_ops import variable_of

_TYPES = (DataType.DT_INT32, DataType.DT_INT64)


@register_shape("VariableShape")
def _variable_shape_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([-1])]


@register_kernel("VariableShape")
def _variable_shape(ctx: KernelContext, resource: Any) -> Any:
    var = variable_of(ctx, resource)
    out_type = ctx.attrs.get("out_type", DataType.DT_INT32)
    shape = tuple(var.value.shape)
    if out_type == DataType.DT_INT32 and any(d > 2**31 - 1 for d in shape):
        ctx.invalid_argument("Shape does not fit in int32")
    return ctx.asarray(list(shape), out_type)


# -- conformance: a variable of each shape and dtype, its shape as int32 and int64 -------------------------
CONFORMANCE_FAMILY = "resources"


def _case(shape: tuple[int, ...], out_type: DataType):
    def ours(scope: Any, value: Any) -> tuple[list, list]:
        from tfops_py import ops

        var = ops.VarHandleOp(scope.WithOpName("var"), value.type(), shape, shared_name="var")
        init = ops.AssignVariableOp(scope, var, value).operation
        return [ops.VariableShape(scope, var, ops.VariableShape.OutType(out_type)).output], [init]

    def theirs(tf: Any, value: Any) -> tuple[list, list]:
        var = tf.raw_ops.VarHandleOp(dtype=value.dtype, shape=shape, shared_name="var")
        init = tf.raw_ops.AssignVariableOp(resource=var, value=value)
        return [tf.raw_ops.VariableShape(input=var, out_type=out_type.numpy_dtype)], [init]

    return ours, theirs


def _declare() -> None:
    from tfops_py.conformance import conformance, graph_case, literal

    import numpy as np

    cases = []
    for shape in ((), (3,), (2, 0, 4)):
        for dt in (DataType.DT_FLOAT, DataType.DT_INT64, DataType.DT_BOOL):
            for out_type in _TYPES:
                ours, theirs = _case(shape, out_type)
                value = literal(np.zeros(shape, dt.numpy_dtype), dt)
                cases.append(graph_case(f"VariableShape/{dt.short_name}{list(shape)}/{out_type.short_name}", ours,
                                        theirs, compare="exact", value=value))
    conformance("VariableShape", generate=False, graph_cases=cases)


_declare()
