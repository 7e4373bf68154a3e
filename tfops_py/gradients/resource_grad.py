"""Gradients through resource variables: ``ReadVariableOp`` and ``ResourceGather``.

``AddSymbolicGradients(scope, {y}, {handle}, ...)`` differentiates with respect to a variable's handle,
as TF's C++ ``ReadVariableOpGrad`` does: the gradient of a read is the gradient of the value read.
TF's Python gradient of ``ResourceGather`` is an ``IndexedSlices``; graphs here have dense tensors only, so
it is the equivalent dense gradient: the rows' gradients summed into a zero tensor of the variable's shape
(``UnsortedSegmentSum``), which is what TF produces when the slices meet a dense consumer.
"""
from __future__ import annotations

from tfops_py import ops
from tfops_py.errors import UnimplementedError
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.registry import register_gradient


@register_gradient("ReadVariableOp")
def _read_variable_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.Identity(scope, grad_inputs[0]).output]


@register_gradient("ResourceGather")
def _resource_gather_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    if op.node().attrs.get("batch_dims", 0):  # type: ignore[union-attr]
        raise UnimplementedError("the gradient of ResourceGather with batch_dims != 0 (TF's Python gradient "
                                 "does not support it either)", op_type="ResourceGather", node_name=op.name())
    handle, indices = op.input(0), op.input(1)
    shape = ops.VariableShape(scope, handle, ops.VariableShape.OutType(indices.type())).output
    rows = ops.Slice(scope, shape, [0], [1]).output
    row_shape = ops.Slice(scope, shape, [1], [-1]).output
    flat_indices = ops.Reshape(scope, indices, [-1]).output
    count = ops.ExpandDims(scope, ops.Size(scope, flat_indices, ops.Size.OutType(indices.type())), 0).output
    values = ops.Reshape(scope, grad_inputs[0], ops.Concat(scope, [count, row_shape], 0)).output
    dense = ops.UnsortedSegmentSum(scope, values, flat_indices, ops.Squeeze(scope, rows)).output
    return [dense, NoGradient()]
