"""TF1 (dataflow) control flow: Switch, Merge, Enter, Exit, NextIteration, LoopCond, ControlTrigger.

The kernels only move values; what makes them control flow (dead tensors, frames,
iterations) is the dataflow executor (``tfops_py/client/executor.py``), which every
graph containing one of these ops runs on.  A Switch returns :data:`DEAD` for its
untaken output; a Merge receives ``None`` (not arrived) or a value per input and
forwards the one live value.  The Ref* variants pass a variable's reference
through unchanged, as TF forwards ref inputs.
"""
from __future__ import annotations

from typing import Any

from tfops_py.conformance import conformance, divergence
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels.registry import KernelContext, register_kernel


class _Dead:
    """The value of a dead tensor (TF's ``Entry`` with no value)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"

    def __reduce__(self) -> str:
        return "DEAD"


DEAD: Any = _Dead()

CONFORMANCE_FAMILY = "control_flow"

_SCALAR = PartialTensorShape([])


# -- shape functions -------------------------------------------------------------------------------
@register_shape("Switch", "RefSwitch")
def _switch_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    return [ctx.input(0), ctx.input(0)]


@register_shape("_SwitchN")
def _switch_n_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(1), 0)
    return [ctx.input(0)] * ctx.num_outputs


@register_shape("Merge", "RefMerge")
def _merge_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's MergeShape: the inputs' common shape, unknown dims where they differ, unknown rank if ranks do."""
    out = ctx.input(0)
    if out.unknown_rank():
        return [out, _SCALAR]
    dims = out.as_list()
    for i in range(1, ctx.num_inputs):
        shape = ctx.input(i)
        if shape.unknown_rank() or shape.dims() != len(dims):  # type: ignore[arg-type]
            return [PartialTensorShape(), _SCALAR]
        dims = [d if d == e else -1 for d, e in zip(dims, shape.as_list())]  # type: ignore[union-attr,arg-type]
    return [PartialTensorShape(dims), _SCALAR]


@register_shape("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration")
def _forward_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [ctx.input(0)]


@register_shape("LoopCond")
def _loop_cond_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [ctx.with_rank(ctx.input(0), 0)]


@register_shape("ControlTrigger")
def _no_outputs(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


# -- kernels ---------------------------------------------------------------------------------------
def _scalar_flag(ctx: KernelContext, value: Any, message: str) -> bool:
    shape = tuple(value.shape)
    if shape:
        ctx.invalid_argument(f"{message}, but it has shape {format_shape(shape)}")
    return bool(value)


@register_kernel("Switch", "RefSwitch")
def _switch(ctx: KernelContext, data: Any, pred: Any) -> tuple[Any, Any]:
    if _scalar_flag(ctx, pred, "The second input must be a scalar"):
        return DEAD, data
    return data, DEAD


@register_kernel("_SwitchN")
def _switch_n(ctx: KernelContext, data: Any, output_index: Any) -> tuple[list[Any]]:
    """The N-way Switch TF writes when it lowers a Case: output ``output_index`` live, the others dead."""
    shape = tuple(output_index.shape)
    if shape:
        ctx.invalid_argument(f"output_index must be a scalar, but it has shape {format_shape(shape)}")
    n = ctx.attrs["num_outs"]
    index = int(output_index)
    if not 0 <= index < n:
        index = n - 1  # TF: an out-of-range index selects the last output
    return ([data if k == index else DEAD for k in range(n)],)


@register_kernel("Merge", "RefMerge")
def _merge(ctx: KernelContext, inputs: list[Any]) -> tuple[Any, Any]:
    for k, value in enumerate(inputs):
        if value is not None and value is not DEAD:
            index = ctx.cache.get(k)
            if index is None:
                index = ctx.cache[k] = ctx.asarray(k, DataType.DT_INT32)
            return value, index
    ctx.invalid_argument("Merge ran without a live input")  # the executor never runs a dead Merge
    raise AssertionError  # pragma: no cover


@register_kernel("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond")
def _forward(ctx: KernelContext, data: Any) -> Any:
    return data


@register_kernel("ControlTrigger")
def _control_trigger(ctx: KernelContext) -> tuple[()]:
    return ()


# -- conformance: loops and branches are graphs, not one op on constants ------------------------------------------
def _cases(op: str, name: str) -> list:
    from tfops_py.kernels.control_flow import _graph_cases

    return _graph_cases.for_op(op, getattr(_graph_cases, name))


for _op in ("Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "ControlTrigger"):
    conformance(_op, generate=False, graph_cases=_cases(_op, "DATAFLOW_CASES"))
conformance("_SwitchN", generate=False, graph_cases=_cases("_SwitchN", "SWITCH_N_CASES"))
for _op in ("RefSwitch", "RefMerge", "RefEnter"):
    conformance(_op, generate=False, graph_cases=_cases(_op, "REF_CASES") + _cases(_op, "REF_LOOP_CASES"))
for _op in ("RefExit", "RefNextIteration"):
    conformance(_op, generate=False, graph_cases=_cases(_op, "REF_LOOP_CASES"))
divergence("Merge", when="two inputs are live in one iteration (a malformed graph)",
           tf="forwards whichever arrives first and ignores the other",
           ours="InternalError \"Merge can not have more than one valid input.\" (TF's Merge message)")
divergence("NextIteration", when="outside any while loop frame (no Enter leads to it)",
           tf="runs it as an identity in the root frame", ours="InvalidArgumentError when the plan is built")

__all__ = ["DEAD"]
