"""Gradients of TF1 control-flow ops, TensorList ops and the TensorArrayV3 family.

* Switch / Merge (a TF1 cond): a Merge sends its gradient to the input that was live (a Switch on
  ``value_index == i``; the others receive dead gradients), a Switch merges the gradients of its two outputs
  (one of them is dead).  TF's Python does the same with the cond's predicate.
* Enter / Exit / NextIteration belong to while loops, which ``AddSymbolicGradients`` differentiates as a whole
  (``while_gradients.py``, for loops built by ``ops.BuildWhileLoop``); reaching one on its own is an error.
* TensorList ops: TF's rules (tensorflow/python/ops/list_ops.py), in graph ops.
* TensorArrayV3: TF's rules (tensor_array_grad.py): a gradient TensorArray per forward array, found with
  TensorArrayGradV3 (source ``"gradients"``) and ordered through the ``flow`` values.
"""
from __future__ import annotations

from tfops_py import ops
from tfops_py.errors import UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.graph import Node
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.registry import register_gradient, register_no_gradient

register_no_gradient("LoopCond", "ControlTrigger", "TensorListLength", "TensorListElementShape",
                     "TensorListReserve", "EmptyTensorList", "TensorArrayV3", "TensorArrayGradV3",
                     "TensorArraySizeV3", "TensorArrayCloseV3")

# How these gradients differ from TF's C++ API (docs/gradients.md's table is generated from these).
BEYOND_TF_CC = {
    **{op: "registered (TF: Python only)" for op in (
        "Switch", "RefSwitch", "Merge", "RefMerge", "TensorListPushBack", "TensorListPopBack", "TensorListStack",
        "TensorListFromTensor", "TensorListGetItem", "TensorListSetItem", "TensorListGather", "TensorListScatter",
        "TensorListScatterV2", "TensorListScatterIntoExistingList", "TensorListResize", "TensorListConcat",
        "TensorListConcatV2", "TensorListSplit", "TensorArrayReadV3", "TensorArrayWriteV3", "TensorArrayGatherV3",
        "TensorArrayScatterV3", "TensorArrayConcatV3", "TensorArraySplitV3")},
}
CHANGED_FROM_TF_CC = {op: "differentiated only as part of a BuildWhileLoop loop (AddWhileLoopGradient)"
                      for op in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration")}
GRAD_SOURCE = "gradients"


def _node(op: Operation) -> Node:
    return op.node()  # type: ignore[return-value]


# -- TF1 conds and loops ------------------------------------------------------------------------------
@register_gradient("Switch", "RefSwitch")
def _switch_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    return [ops.Merge(scope, [grads[0], grads[1]]).output, NoGradient()]


@register_gradient("Merge", "RefMerge")
def _merge_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node = _node(op)
    index = op.output(1)
    return [ops.Switch(scope, grads[0], ops.Equal(scope, index, i)).output_true for i in range(len(node.inputs))]


def _loop_op_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node = _node(op)
    raise UnimplementedError("gradients flow through a while loop only as a whole: build the loop with "
                             "ops.BuildWhileLoop (which records its WhileContext), or use a functional While",
                             op_type=node.op, node_name=node.name)


for _op in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"):
    register_gradient(_op)(_loop_op_grad)


# -- TensorLists ---------------------------------------------------------------------------------------
def _dtype(op: Operation) -> DataType:
    return _node(op).attrs["element_dtype"]


def _tail_shape(scope: Scope, tensor: Output) -> Output:
    """Shape of ``tensor`` without its first dimension (a list element's shape)."""
    return ops.Slice(scope, ops.Shape(scope, tensor), [1], [-1]).output


@register_gradient("TensorListPushBack")
def _push_back_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    shape = ops.TensorListElementShape(scope, op.output(0), DataType.DT_INT32).element_shape
    pop = ops.TensorListPopBack(scope, grads[0], shape, _dtype(op))
    return [pop.output_handle, pop.tensor]


@register_gradient("TensorListPopBack")
def _pop_back_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    return [ops.TensorListPushBack(scope, grads[0], grads[1]).output_handle, NoGradient()]


@register_gradient("TensorListStack")
def _stack_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    return [ops.TensorListFromTensor(scope, grads[0], _tail_shape(scope, grads[0])).output_handle, NoGradient()]


@register_gradient("TensorListFromTensor")
def _from_tensor_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    tensor = _node(op).inputs[0]
    stack = ops.TensorListStack(scope, grads[0], _tail_shape(scope, tensor), _dtype(op) if "element_dtype" in
                                _node(op).attrs else tensor.type())
    return [stack.tensor, NoGradient()]


@register_gradient("TensorListGetItem")
def _get_item_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    lst, index = _node(op).inputs[0], _node(op).inputs[1]
    reserve = ops.TensorListReserve(scope, ops.Shape(scope, grads[0]), ops.TensorListLength(scope, lst).length,
                                    _dtype(op))
    return [ops.TensorListSetItem(scope, reserve.handle, index, grads[0]).output_handle, NoGradient(), NoGradient()]


@register_gradient("TensorListSetItem")
def _set_item_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    index, item = _node(op).inputs[1], _node(op).inputs[2]
    item_grad = ops.TensorListGetItem(scope, grads[0], index, ops.Shape(scope, item), _dtype(op)).item
    list_grad = ops.TensorListSetItem(scope, grads[0], index, ops.ZerosLike(scope, item)).output_handle
    return [list_grad, NoGradient(), item_grad]


@register_gradient("TensorListGather")
def _gather_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    lst, indices = _node(op).inputs[0], _node(op).inputs[1]
    reserve = ops.TensorListReserve(scope, _tail_shape(scope, grads[0]), ops.TensorListLength(scope, lst).length,
                                    _dtype(op))
    scattered = ops.TensorListScatterIntoExistingList(scope, reserve.handle, grads[0], indices)
    return [scattered.output_handle, NoGradient(), NoGradient()]


@register_gradient("TensorListScatter", "TensorListScatterV2")
def _scatter_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node = _node(op)
    tensor, indices = node.inputs[0], node.inputs[1]
    gathered = ops.TensorListGather(scope, grads[0], indices, _tail_shape(scope, tensor), tensor.type()).values
    return [gathered] + [NoGradient()] * (len(node.inputs) - 1)


@register_gradient("TensorListScatterIntoExistingList")
def _scatter_existing_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    tensor, indices = _node(op).inputs[1], _node(op).inputs[2]
    gathered = ops.TensorListGather(scope, grads[0], indices, _tail_shape(scope, tensor), tensor.type()).values
    cleared = ops.TensorListScatterIntoExistingList(scope, grads[0], ops.ZerosLike(scope, tensor), indices)
    return [cleared.output_handle, gathered, NoGradient()]


@register_gradient("TensorListResize")
def _resize_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    length = ops.TensorListLength(scope, _node(op).inputs[0]).length
    return [ops.TensorListResize(scope, grads[0], length).output_handle, NoGradient()]


@register_gradient("TensorListConcat", "TensorListConcatV2")
def _concat_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node = _node(op)
    split = ops.TensorListSplit(scope, grads[0], ops.TensorListElementShape(scope, node.inputs[0],
                                                                            DataType.DT_INT32).element_shape,
                                op.output(1))
    return [split.output_handle] + [NoGradient()] * (len(node.inputs) - 1)


@register_gradient("TensorListSplit")
def _split_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    node = _node(op)
    tensor = node.inputs[0]
    concat = ops.TensorListConcatV2(scope, grads[0], ops.Concat(scope, [[-1], _tail_shape(scope, tensor)], 0),
                                    node.inputs[2], tensor.type())
    return [concat.tensor, NoGradient(), NoGradient()]


# -- TensorArrayV3 -----------------------------------------------------------------------------------------
def _grad_array(scope: Scope, handle: Output, flow: Output) -> ops.TensorArrayGrad:
    return ops.TensorArrayGrad(scope, handle, flow, GRAD_SOURCE)


@register_gradient("TensorArrayReadV3")
def _ta_read_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    handle, index, flow = _node(op).inputs
    g = _grad_array(scope, handle, flow)
    write = ops.TensorArrayWrite(scope, g.grad_handle, index, grads[0], g.flow_out)
    return [NoGradient(), NoGradient(), write.flow_out]


@register_gradient("TensorArrayWriteV3")
def _ta_write_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    handle, index, value, _ = _node(op).inputs
    g = _grad_array(scope, handle, grads[0])
    value_grad = ops.TensorArrayRead(scope, g.grad_handle, index, g.flow_out, value.type()).value
    return [NoGradient(), NoGradient(), value_grad, grads[0]]


@register_gradient("TensorArrayGatherV3")
def _ta_gather_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    handle, indices, flow = _node(op).inputs
    g = _grad_array(scope, handle, flow)
    return [NoGradient(), NoGradient(),
            ops.TensorArrayScatter(scope, g.grad_handle, indices, grads[0], g.flow_out).flow_out]


@register_gradient("TensorArrayScatterV3")
def _ta_scatter_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    handle, indices, value, _ = _node(op).inputs
    g = _grad_array(scope, handle, grads[0])
    gathered = ops.TensorArrayGather(scope, g.grad_handle, indices, g.flow_out, value.type()).value
    return [NoGradient(), NoGradient(), gathered, grads[0]]


@register_gradient("TensorArrayConcatV3")
def _ta_concat_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    handle, flow = _node(op).inputs
    g = _grad_array(scope, handle, flow)
    return [NoGradient(), ops.TensorArraySplit(scope, g.grad_handle, grads[0], op.output(1), g.flow_out).flow_out]


@register_gradient("TensorArraySplitV3")
def _ta_split_grad(scope: Scope, op: Operation, grads: list[Output]) -> list[Output]:
    handle, value, _, _ = _node(op).inputs
    g = _grad_array(scope, handle, grads[0])
    concat = add_node(scope, get_op_def("TensorArrayConcatV3"), [g.grad_handle, g.flow_out],  # no C++ class
                      {"dtype": value.type()})
    return [NoGradient(), Output(concat, 0), NoGradient(), grads[0]]
