"""Gradients of array ops that TF registers only in Python (``tensorflow/python/ops/array_grad.py``,
``manip_grad.py``): the same graphs ``tf.gradients`` builds, so results match ``tf.GradientTape``."""
from __future__ import annotations

from tfops_py import ops
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.array_grad import attr
from tfops_py.gradients.registry import register_gradient, register_no_gradient

register_no_gradient("Assert")

_PYTHON_ONLY = ("Reverse", "Roll", "TensorScatterUpdate", "TensorScatterSub", "TensorScatterMin",
                "TensorScatterMax", "TensorStridedSliceUpdate", "EnsureShape", "CheckNumericsV2",
                "DebugGradientIdentity")
# Read by tools/gen_gradient_table.py (docs/gradients.md).
BEYOND_TF_CC = {op: "registered (TF: Python only)" for op in _PYTHON_ONLY}
CHANGED_FROM_TF_CC: dict[str, str] = {}

_SLICE_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def reverse_v1(scope: Scope, tensor: Output, dims: Output) -> Output:
    """A v1 ``Reverse`` node (a bool mask of axes; TF's C++ API has no class for it)."""
    node = add_node(scope, get_op_def("Reverse"), [tensor, dims], {}, default_name="Reverse")
    scope.status().raise_if_error()
    return Output(node, 0)  # type: ignore[arg-type]


@register_gradient("Reverse")
def _reverse_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [reverse_v1(scope, grad_inputs[0], op.input(1)), NoGradient()]


@register_gradient("Roll")
def _roll_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    back = ops.Neg(scope, op.input(1)).y
    return [ops.Roll(scope, grad_inputs[0], back, op.input(2)).output, NoGradient(), NoGradient()]


@register_gradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad, indices = grad_inputs[0], op.input(1)
    zeros = ops.ZerosLike(scope, ops.Cast(scope, op.input(2), grad.type()).y).y
    tensor_grad = ops.TensorScatterUpdate(scope, ops.Identity(scope, grad).output, indices, zeros).output
    return [tensor_grad, NoGradient(), ops.GatherNd(scope, grad, indices).output]


@register_gradient("TensorScatterSub")
def _tensor_scatter_sub_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad = grad_inputs[0]
    updates_grad = ops.Neg(scope, ops.GatherNd(scope, grad, op.input(1)).output).y
    return [ops.Identity(scope, grad).output, NoGradient(), updates_grad]


@register_gradient("TensorScatterMin", "TensorScatterMax")
def _tensor_scatter_min_max_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """The gradient goes to every input equal to the result, shared evenly between ties."""
    grad, x, indices, y, out = grad_inputs[0], op.input(0), op.input(1), op.input(2), op.output(0)
    policy = attr(op, "bad_indices_policy")
    x_hit = ops.Cast(scope, ops.Equal(scope, x, out).z, grad.type()).y
    y_out = ops.GatherNd(scope, out, indices, bad_indices_policy=policy).output
    y_hit = ops.Cast(scope, ops.Equal(scope, y, y_out).z, grad.type()).y
    shape = ops.Shape(scope, x, out_type=indices.type()).output
    hits = ops.Add(scope, x_hit, ops.ScatterNd(scope, indices, y_hit, shape, bad_indices_policy=policy).output).z
    x_grad = ops.RealDiv(scope, ops.Mul(scope, grad, x_hit).z, hits).z
    shared = ops.GatherNd(scope, ops.RealDiv(scope, grad, hits).z, indices, bad_indices_policy=policy).output
    return [x_grad, NoGradient(), ops.Mul(scope, shared, y_hit).z]


@register_gradient("TensorStridedSliceUpdate")
def _tensor_strided_slice_update_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    grad, begin, end, strides = grad_inputs[0], op.input(1), op.input(2), op.input(3)
    masks = {m: attr(op, m) for m in _SLICE_MASKS}
    dy = ops.StridedSlice(scope, grad, begin, end, strides, **masks).output
    dx = ops.TensorStridedSliceUpdate(scope, grad, begin, end, strides, ops.ZerosLike(scope, dy).y, **masks).output
    # the value may have been broadcast to the slice: sum dy back to the value's shape
    slice_shape = ops.Shape(scope, dy, out_type=begin.type()).output
    value_shape = ops.Shape(scope, op.input(4), out_type=begin.type()).output
    axes = ops.internal.BroadcastGradientArgs(scope, slice_shape, value_shape).r1
    dy = ops.Reshape(scope, ops.Sum(scope, dy, axes, keep_dims=True).output, value_shape).output
    return [dx, NoGradient(), NoGradient(), NoGradient(), dy]


@register_gradient("EnsureShape", "DebugGradientIdentity")
def _ensure_shape_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [grad_inputs[0]]


@register_gradient("CheckNumericsV2")
def _check_numerics_v2_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    message = "Not a number (NaN) or infinity (Inf) values detected in gradient. " + attr(op, "message")
    return [ops.CheckNumericsV2(scope, grad_inputs[0], message).output]
