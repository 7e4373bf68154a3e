"""Gradients of array ops: a port of ``tensorflow/cc/gradients/array_grad.cc``.

Beyond TF's C++ API: the FakeQuant gradients (``FakeQuantWithMinMaxArgs``, ``Vars``
and ``VarsPerChannel``), which TF registers only in Python (array_grad.py).
Where C++ uses the v1 ``Gather`` op we use ``GatherV2`` on axis 0, as TF's Python does.
"""
from __future__ import annotations

from typing import Any

from tfops_py import ops
from tfops_py.errors import InternalError, InvalidArgumentError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Node
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.registry import register_gradient, register_no_gradient

register_no_gradient("Const", "StopGradient", "ConcatOffset", "EditDistance", "ZerosLike", "InvertPermutation",
                     "Shape", "ShapeN", "Rank", "Size", "BroadcastGradientArgs", "OneHot")


# Where these gradients differ from TF's C++ API (listed in docs/gradients.md by tools/gen_gradient_table.py).
BEYOND_TF_CC = {op: f"registered (TF: Python only); emits {op}Gradient" for op in (
    "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsPerChannel")}
BEYOND_TF_CC["Concat"] = "registered (TF: Python only); ConcatV2's slices with the axis first"
BEYOND_TF_CC["Gather"] = "registered (TF: Python only, as IndexedSlices); a dense UnsortedSegmentSum"
CHANGED_FROM_TF_CC = {"GatherV2": "uses GatherV2 where C++ uses the v1 Gather op",
                      "DynamicStitch": "gathers with GatherV2 where C++ uses the v1 Gather op",
                      "ParallelDynamicStitch": "gathers with GatherV2 where C++ uses the v1 Gather op",
                      "QuantizeAndDequantizeV4": "passes the input, not Shape(input) (a type error in C++)"}


def attr(op: Operation, name: str) -> Any:
    """A node attr by its TF name (``GetNodeAttr``)."""
    return op.node().attrs[name]  # type: ignore[union-attr]


@register_gradient("Pack")
def _pack_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return list(ops.Unstack(scope, grad_inputs[0], attr(op, "N"), axis=attr(op, "axis")).output)


@register_gradient("Unpack")
def _unpack_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.Stack(scope, grad_inputs, axis=attr(op, "axis")).output]


@register_gradient("Identity", "RefIdentity", "QuantizeAndDequantize")
def _identity_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.Identity(scope, grad_inputs[0]).output]


@register_gradient("QuantizeAndDequantizeV4")
def _quantize_and_dequantize_v4_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    # C++ passes Shape(input) where the gradient op wants the input itself (a type error); Python passes the input
    g = ops.QuantizeAndDequantizeV4Grad(scope, grad_inputs[0], op.input(0), op.input(1), op.input(2),
                                        axis=attr(op, "axis"))
    return [g.input_backprop, g.input_min_backprop, g.input_max_backprop]


@register_gradient("QuantizeAndDequantizeV3")
def _quantize_and_dequantize_v3_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.Identity(scope, grad_inputs[0]).output, NoGradient(), NoGradient(), NoGradient()]


@register_gradient("Split")
def _split_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [NoGradient(), ops.Concat(scope, grad_inputs, op.input(0)).output]


@register_gradient("SplitV")
def _split_v_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    if op.num_inputs() < 3:
        raise InvalidArgumentError("SplitV requires 3 arguments")
    return [ops.Concat(scope, grad_inputs, op.input(2)).output] + [NoGradient()] * (op.num_inputs() - 1)


@register_gradient("Fill")
def _fill_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    # The scalar fill value gets the sum of every gradient it was copied to.
    all_dims = ops.Range(scope, ops.Const(scope, 0), ops.Rank(scope, grad_inputs[0]).output,
                         ops.Const(scope, 1)).output
    return [NoGradient(), ops.ReduceSum(scope, grad_inputs[0], all_dims).output]


def _pass_through(grad_op: type, member: str):
    """dx = <grad_op>(dy): Diag, DiagPart, MatrixDiag."""

    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        return [getattr(grad_op(scope, grad_inputs[0]), member)]

    return grad


register_gradient("Diag")(_pass_through(ops.DiagPart, "diagonal"))
register_gradient("DiagPart")(_pass_through(ops.Diag, "output"))
register_gradient("MatrixDiag")(_pass_through(ops.MatrixDiagPart, "diagonal"))


@register_gradient("MatrixBandPart")
def _matrix_band_part_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    band = ops.MatrixBandPart(scope, grad_inputs[0], op.input(1), op.input(2)).band
    return [band, NoGradient(), NoGradient()]


@register_gradient("GatherNd")
def _gather_nd_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    ref, indices = op.input(0), op.input(1)
    ref_shape = ops.Shape(scope, ref, out_type=indices.type()).output
    return [ops.ScatterNd(scope, indices, grad_inputs[0], ref_shape).output, NoGradient()]


@register_gradient("CheckNumerics")
def _check_numerics_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    message = ("Not a number (NaN) or infinity (Inf) values detected in gradient. " + attr(op, "message"))
    return [ops.CheckNumerics(scope, grad_inputs[0], message).output]


@register_gradient("Reshape", "ExpandDims")
def _reshape_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    input_shape = ops.Shape(scope, op.input(0)).output
    return [ops.Reshape(scope, grad_inputs[0], input_shape).output, NoGradient()]


@register_gradient("Squeeze")
def _squeeze_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    input_shape = ops.Shape(scope, op.input(0)).output
    return [ops.Reshape(scope, grad_inputs[0], input_shape).output]


@register_gradient("Transpose")
def _transpose_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    inverted_perm = ops.InvertPermutation(scope, op.input(1)).y
    return [ops.Transpose(scope, grad_inputs[0], inverted_perm).y, NoGradient()]


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    out = ops.ReverseSequence(scope, grad_inputs[0], op.input(1), attr(op, "seq_dim"),
                              batch_dim=attr(op, "batch_dim")).output
    return [out, NoGradient()]


@register_gradient("ReverseV2")
def _reverse_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.Reverse(scope, grad_inputs[0], op.input(1)).output, NoGradient()]


@register_gradient("ScatterNd")
def _scatter_nd_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [NoGradient(), ops.GatherNd(scope, grad_inputs[0], op.input(0)).output, NoGradient()]


@register_gradient("ScatterNdNonAliasingAdd")
def _scatter_nd_non_aliasing_add_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.Identity(scope, grad_inputs[0]).output, NoGradient(),
            ops.GatherNd(scope, grad_inputs[0], op.input(1)).output]


@register_gradient("Pad", "PadV2")
def _pad_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    x, a = op.input(0), op.input(1)  # a: [Rank(x), 2]
    size = ops.Stack(scope, [ops.Rank(scope, x).output, 1]).output
    pad_before = ops.Slice(scope, a, [0, 0], size).output
    begin = ops.Reshape(scope, pad_before, [-1]).output
    dx = ops.Slice(scope, grad_inputs[0], begin, ops.Shape(scope, x).output).output
    return [dx, NoGradient()] + ([NoGradient()] if op.node().op == "PadV2" else [])  # type: ignore[union-attr]


@register_gradient("SpaceToBatch")
def _space_to_batch_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.BatchToSpace(scope, grad_inputs[0], op.input(1), attr(op, "block_size")).output, NoGradient()]


@register_gradient("SpaceToBatchND")
def _space_to_batch_nd_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.BatchToSpaceND(scope, grad_inputs[0], op.input(1), op.input(2)).output, NoGradient(), NoGradient()]


@register_gradient("BatchToSpace")
def _batch_to_space_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.SpaceToBatch(scope, grad_inputs[0], op.input(1), attr(op, "block_size")).output, NoGradient()]


@register_gradient("BatchToSpaceND")
def _batch_to_space_nd_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.SpaceToBatchND(scope, grad_inputs[0], op.input(1), op.input(2)).output, NoGradient(), NoGradient()]


@register_gradient("SpaceToDepth")
def _space_to_depth_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.DepthToSpace(scope, grad_inputs[0], attr(op, "block_size")).output]


@register_gradient("DepthToSpace")
def _depth_to_space_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.SpaceToDepth(scope, grad_inputs[0], attr(op, "block_size")).output]


@register_gradient("MirrorPad")
def _mirror_pad_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.internal.MirrorPadGrad(scope, grad_inputs[0], op.input(1), attr(op, "mode")).output, NoGradient()]


@register_gradient("MirrorPadGrad")
def _mirror_pad_grad_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return [ops.MirrorPad(scope, grad_inputs[0], op.input(1), attr(op, "mode")).output, NoGradient()]


@register_gradient("StridedSlice")
def _strided_slice_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    x = ops.Shape(scope, op.input(0)).output
    masks = {k: attr(op, k) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                      "shrink_axis_mask")}
    dx = ops.StridedSliceGrad(scope, x, op.input(1), op.input(2), op.input(3), grad_inputs[0], **masks).output
    return [dx, NoGradient(), NoGradient(), NoGradient()]


@register_gradient("Slice")
def _slice_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    # Pad the gradient with zeros: begin before, shape(input) - size - begin after.
    inp, begin = op.input(0), op.input(1)
    input_rank = ops.Rank(scope, inp).output
    slice_size = ops.Shape(scope, op.output(0)).output
    padding_shape = ops.Stack(scope, [input_rank, 1]).output
    before_padding = ops.Reshape(scope, begin, padding_shape).output
    after_sizes = ops.Sub(scope, ops.Sub(scope, ops.Shape(scope, inp).output, slice_size).z, begin).z
    after_padding = ops.Reshape(scope, after_sizes, padding_shape).output
    paddings = ops.Concat(scope, [before_padding, after_padding], ops.Const(scope, 1)).output
    return [ops.Pad(scope, grad_inputs[0], paddings).output, NoGradient(), NoGradient()]


def concat_offset(scope: Scope, concat_dim: Output, shapes: list[Output]) -> Node:
    """A ``ConcatOffset`` node (no op class in TF's C++ API: C++ uses NodeBuilder directly)."""
    node = add_node(scope, get_op_def("ConcatOffset"), [concat_dim, shapes], {}, default_name="ConcatOffset")
    scope.status().raise_if_error()
    return node  # type: ignore[return-value]


@register_gradient("ConcatV2")
def _concat_v2_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    dim_index = op.num_inputs() - 1
    return _concat_grad(scope, op, grad_inputs, dim_index, [op.input(i) for i in range(dim_index)])


@register_gradient("Concat")
def _concat_v1_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """v1 Concat (axis first): as TF's Python registers it."""
    grads = _concat_grad(scope, op, grad_inputs, 0, [op.input(i) for i in range(1, op.num_inputs())])
    return [grads[-1]] + grads[:-1]


def _concat_grad(scope: Scope, op: Operation, grad_inputs: list[Output], dim_index: int,
                 inputs: list[Output]) -> list[Output]:
    """Slices of the gradient at ConcatOffset's offsets, then NoGradient for the axis."""
    shapes = ops.ShapeN(scope, inputs).output
    offsets = concat_offset(scope, op.input(dim_index), shapes)
    if offsets.num_outputs() != len(inputs):
        raise InternalError("ConcatOffset has invalid output count")
    if len(grad_inputs) != 1:
        raise InvalidArgumentError("Concat grad should have 1 input")
    dx = [ops.Slice(scope, grad_inputs[0], Output(offsets, i), shapes[i]).output for i in range(len(inputs))]
    return dx + [NoGradient()]


@register_gradient("BroadcastTo")
def _broadcast_to_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    x_shape = ops.Shape(scope, op.input(0)).output
    args = ops.internal.BroadcastGradientArgs(scope, x_shape, op.input(1))
    sum_gx = ops.Sum(scope, grad_inputs[0], args.r0).output
    return [ops.Reshape(scope, sum_gx, x_shape).output, NoGradient()]


@register_gradient("Tile")
def _tile_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    # Reshape dy to interleaved [multiples[0], shape[0], multiples[1], ...] and sum the tiled axes.
    input_shape = ops.Shape(scope, op.input(0), out_type=op.input_type(1)).output
    stack = ops.Stack(scope, [op.input(1), input_shape]).output
    perm = ops.Range(scope, ops.Sub(scope, ops.Rank(scope, stack).output, 1).z, -1, -1).output
    split_shape = ops.Reshape(scope, ops.Transpose(scope, stack, perm).y, [-1]).output
    axes = ops.Range(scope, ops.Const(scope, 0), ops.Size(scope, split_shape).output, 2).output
    input_grad = ops.ReduceSum(scope, ops.Reshape(scope, grad_inputs[0], split_shape).output, axes).output
    return [input_grad, NoGradient()]


def _const_as(scope: Scope, value: int, dtype: DataType) -> Output:
    return ops.Cast(scope, ops.Const(scope, value), dtype).y


def _batch_indices(scope: Scope, params_shape: Output, indices: Output, batch_dims: int) -> Output:
    """Indices offset by their batch position (``GetBatchIndices``)."""
    batch_indices = indices
    indices_ndims = ops.Rank(scope, indices).output
    casted_params_shape = ops.Cast(scope, params_shape, indices.type()).y
    accum_dim_value = _const_as(scope, 1, indices.type())
    for dim in range(batch_dims, 0, -1):
        dim_value = ops.Slice(scope, casted_params_shape, [dim - 1], [1]).output
        accum_dim_value = ops.Multiply(scope, accum_dim_value,
                                       ops.Slice(scope, casted_params_shape, [dim], [1]).output).z
        start = _const_as(scope, 0, indices.type())
        step = _const_as(scope, 1, indices.type())
        dim_indices = ops.Range(scope, start, ops.Squeeze(scope, dim_value).output, step).output
        dim_indices = ops.Multiply(scope, dim_indices, accum_dim_value).z
        one = ops.Cast(scope, ops.Const(scope, [1]), indices.type()).y
        dim_shape = ops.Concat(scope, [
            ops.Tile(scope, one, ops.Const(scope, [dim - 1])).output, dim_value,
            ops.Tile(scope, one, ops.ExpandDims(scope, ops.Sub(scope, indices_ndims, dim).z, 0).output).output,
        ], 0).output
        batch_indices = ops.Add(scope, batch_indices, ops.Reshape(scope, dim_indices, dim_shape).output).z
    return batch_indices


def _batch_gather_grad(scope: Scope, params_shape: Output, values: Output, indices: Output, batch_dims: int,
                       gather_dim_size: Output) -> Output:
    indices_size = ops.ExpandDims(scope, ops.Size(scope, indices).output, 0).output
    if batch_dims != 0:
        values_shape = ops.Shape(scope, values).output
        outer_shape = ops.Slice(scope, values_shape, [0], [batch_dims]).output
        inner_shape = ops.Slice(scope, ops.Slice(scope, values_shape, [batch_dims], [-1]).output,
                                [1], [-1]).output
        batch_size = ops.Prod(scope, outer_shape, 0).output
        flat_values_shape = ops.Concat(scope, [[-1], inner_shape], 0).output
        gather_dim_size = ops.Multiply(scope, gather_dim_size, batch_size).z
        indices = _batch_indices(scope, params_shape, indices, batch_dims)
        values = ops.Reshape(scope, values, flat_values_shape).output
    indices = ops.Reshape(scope, indices, indices_size).output
    params_grad = ops.UnsortedSegmentSum(scope, values, indices, gather_dim_size).output
    if batch_dims != 0:
        params_grad = ops.Reshape(scope, params_grad, params_shape).output
    return params_grad


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """Partition the flat positions as the data was, then stitch the gradients back to those positions."""
    data, partitions = op.input(0), op.input(1)
    partitions_shape = ops.Shape(scope, partitions).output
    count = ops.Prod(scope, partitions_shape, 0).output
    positions = ops.Reshape(scope, ops.Range(scope, 0, count, 1).output, partitions_shape).output
    parts = ops.DynamicPartition(scope, positions, partitions, attr(op, "num_partitions")).outputs
    stitched = ops.DynamicStitch(scope, parts, grad_inputs).merged
    return [ops.Reshape(scope, stitched, ops.Shape(scope, data).output).output, NoGradient()]


@register_gradient("DynamicStitch", "ParallelDynamicStitch")
def _dynamic_stitch_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    n = op.num_inputs() // 2
    grads: list[Output] = [NoGradient() for _ in range(n)]
    for i in range(n):
        index = op.input(i)
        if index.type() != DataType.DT_INT32:
            index = ops.Cast(scope, index, DataType.DT_INT32).y
        grads.append(ops.GatherV2(scope, grad_inputs[0], index, 0).output)
    return grads


@register_gradient("Gather")
def _gather_v1_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """The dense form of TF's IndexedSlices gradient: gradient rows summed per gathered index."""
    params, indices = op.input(0), op.input(1)
    params_shape = ops.Shape(scope, params).output
    size = ops.ExpandDims(scope, ops.Size(scope, indices).output, 0).output
    values_shape = ops.Concat(scope, [size, ops.Slice(scope, params_shape, [1], [-1]).output], 0).output
    values = ops.Reshape(scope, grad_inputs[0], values_shape).output
    rows = ops.Squeeze(scope, ops.Slice(scope, params_shape, [0], [1]).output).output
    flat = ops.Reshape(scope, indices, size).output
    return [ops.UnsortedSegmentSum(scope, values, flat, rows).output, NoGradient()]


@register_gradient("GatherV2")
def _gather_v2_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    # Move the gathered axis to the front (after the batch dims), segment-sum, move it back.
    params = op.input(0)
    colocate = scope.ColocateWith(params)
    params_shape64 = ops.Shape(colocate, params, out_type=DataType.DT_INT64).output
    params_shape = ops.Cast(colocate, params_shape64, DataType.DT_INT32).y
    indices = op.input(1)
    ops.ExpandDims(scope, ops.Size(scope, indices).output, 0)  # built (and unused) as in C++
    axis_expand = ops.ExpandDims(scope, op.input(2), 0).output
    batch_dims = attr(op, "batch_dims")
    if batch_dims < 0:
        raise InvalidArgumentError("C++ GatherV2 gradient does not support negative batch_dims.",
                                   op_type=op.node().op, node_name=op.name())  # type: ignore[union-attr]
    outer_shape = ops.Slice(scope, params_shape, [0], axis_expand).output
    inner_shape = ops.Slice(scope, ops.Slice(scope, params_shape, axis_expand, [-1]).output, [1], [-1]).output
    values_shape = ops.Concat(scope, [outer_shape, [-1], inner_shape], 0).output
    values_dims = ops.Size(scope, values_shape).output
    axis_dims = ops.Size(scope, outer_shape).output
    outer_batches_indices = ops.Range(scope, 0, batch_dims, 1).output
    batch_axis_indices = ops.Range(scope, batch_dims, axis_dims, 1).output
    inner_axes_indices = ops.Range(scope, ops.Add(scope, axis_dims, 1).z, values_dims, 1).output
    axis_dims_expand = ops.ExpandDims(scope, axis_dims, 0).output
    values = ops.Reshape(scope, grad_inputs[0], values_shape).output
    transpose_dims = ops.Concat(scope, [outer_batches_indices, axis_dims_expand, batch_axis_indices,
                                        inner_axes_indices], 0).output
    values_transpose = ops.Transpose(scope, values, transpose_dims).y
    gather_dim_size = ops.Squeeze(scope, ops.Slice(scope, params_shape, axis_expand, [1]).output).output
    params_shape = ops.GatherV2(scope, params_shape, transpose_dims, 0).output
    params_grad = _batch_gather_grad(scope, params_shape, values_transpose, indices, batch_dims, gather_dim_size)
    invert_transpose_dims = ops.Concat(scope, [outer_batches_indices, ops.Add(scope, batch_axis_indices, 1).z,
                                               [batch_dims], inner_axes_indices], 0).output
    params_grad = ops.Transpose(scope, params_grad, invert_transpose_dims).y
    return [params_grad, NoGradient(), NoGradient()]


# -- beyond TF's C++ API: FakeQuant (TF registers these in Python only) --------------------------------
@register_gradient("FakeQuantWithMinMaxArgs")
def _fake_quant_args_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    attrs = {k: attr(op, k) for k in ("min", "max", "num_bits", "narrow_range")}
    return [ops.FakeQuantWithMinMaxArgsGradient(scope, grad_inputs[0], op.input(0), **attrs).backprops]


def _fake_quant_vars_grad(grad_op: type):
    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        g = grad_op(scope, grad_inputs[0], op.input(0), op.input(1), op.input(2),
                    num_bits=attr(op, "num_bits"), narrow_range=attr(op, "narrow_range"))
        return [g.backprops_wrt_input, g.backprop_wrt_min, g.backprop_wrt_max]

    return grad


register_gradient("FakeQuantWithMinMaxVars")(_fake_quant_vars_grad(ops.FakeQuantWithMinMaxVarsGradient))
register_gradient("FakeQuantWithMinMaxVarsPerChannel")(
    _fake_quant_vars_grad(ops.FakeQuantWithMinMaxVarsPerChannelGradient))
