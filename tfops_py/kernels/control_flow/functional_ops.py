"""Functional (TF2) control flow and calls: While, If, Case (and Stateless*), PartitionedCall.

Each node runs library functions that the session compiled when it built the plan
(``ctx.funcs``: callables from argument values to result values; see
``tfops_py/client/function_runtime.py``), so the loop below is all that runs per
iteration.  A node whose op type is a library function runs through the
PartitionedCall kernel with its inputs as one list.  Predicates convert to bool as
TF's ``ToBool`` does: a scalar is true when non-zero (a string when non-empty), any
other tensor when it has elements.
"""
from __future__ import annotations

from typing import Any

from tfops_py.conformance import conformance
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

_D = DataType
_TO_BOOL_TYPES = frozenset({_D.DT_FLOAT, _D.DT_DOUBLE, _D.DT_INT32, _D.DT_UINT8, _D.DT_INT16, _D.DT_INT8, _D.DT_INT64,
                            _D.DT_BOOL, _D.DT_STRING})
WHILE_OPS = ("While", "StatelessWhile")
IF_OPS = ("If", "StatelessIf")
CASE_OPS = ("Case", "StatelessCase")
CALL_OPS = ("PartitionedCall", "StatefulPartitionedCall")
CONFORMANCE_FAMILY = "control_flow"


# -- shape functions -------------------------------------------------------------------------------
def _declared_shapes(ctx: InferenceContext) -> list[PartialTensorShape] | None:
    shapes = ctx.attrs.get("output_shapes") or []
    if not shapes:
        return None
    if len(shapes) != ctx.num_outputs:
        ctx.invalid_argument(f"output_shapes has {len(shapes)} shapes for {ctx.num_outputs} outputs")
    return list(shapes)


@register_shape(*WHILE_OPS)
def _while_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's WhileShapeInferenceFn: ``output_shapes`` when set, else the loop variables' input shapes."""
    declared = _declared_shapes(ctx)
    return declared if declared is not None else [ctx.input(i) for i in range(ctx.num_inputs)]


@register_shape(*IF_OPS, *CASE_OPS)
def _branch_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    declared = _declared_shapes(ctx)
    return declared if declared is not None else [unknown_shape() for _ in range(ctx.num_outputs)]


@register_shape(*CALL_OPS)
def _call_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [unknown_shape() for _ in range(ctx.num_outputs)]


# -- kernels ---------------------------------------------------------------------------------------
def to_bool(ctx: KernelContext, value: Any, dtype: DataType) -> bool:
    """TF's ToBool for a predicate tensor of ``dtype``."""
    shape = tuple(value.shape)
    if shape:
        n = 1
        for d in shape:
            n *= d
        return n > 0
    if dtype not in _TO_BOOL_TYPES:
        ctx.invalid_argument(f"{dtype.short_name} cannot be converted to a boolean")
    if dtype == _D.DT_STRING:
        return len(ctx.host(value).item()) > 0
    return bool(value)


@register_kernel(*WHILE_OPS)
def _while(ctx: KernelContext, inputs: list[Any]) -> tuple[list[Any]]:
    cond, body = ctx.funcs["cond"], ctx.funcs["body"]
    cond_type = cond.ret_types[0]
    args = list(inputs)
    while True:
        (pred,) = cond(args)
        if not to_bool(ctx, pred, cond_type):
            return (args,)
        args = body(args)


@register_kernel(*IF_OPS)
def _if(ctx: KernelContext, pred: Any, inputs: list[Any]) -> tuple[list[Any]]:
    branch = ctx.funcs["then_branch"] if to_bool(ctx, pred, ctx.input_dtypes[0]) else ctx.funcs["else_branch"]
    return (branch(inputs),)


@register_kernel(*CASE_OPS)
def _case(ctx: KernelContext, branch_index: Any, inputs: list[Any]) -> tuple[list[Any]]:
    shape = tuple(branch_index.shape)
    if shape:
        ctx.invalid_argument(f"branch_index must be scalar, but it has shape {format_shape(shape)}")
    branches = ctx.funcs["branches"]
    index = int(branch_index)
    if not 0 <= index < len(branches):
        index = len(branches) - 1  # TF: an out-of-range index runs the last (default) branch
    return (branches[index](inputs),)


@register_kernel(*CALL_OPS)
def _call(ctx: KernelContext, args: list[Any]) -> tuple[list[Any]]:
    return (ctx.funcs["f"](args),)


def _cases(op: str) -> list:
    from tfops_py.kernels.control_flow._graph_cases import FUNCTIONAL_CASES, for_op

    return for_op(op, FUNCTIONAL_CASES)


for _op in WHILE_OPS + IF_OPS + CASE_OPS + CALL_OPS:
    conformance(_op, generate=False, graph_cases=_cases(_op))

__all__ = ["CALL_OPS", "CASE_OPS", "IF_OPS", "WHILE_OPS", "to_bool"]
