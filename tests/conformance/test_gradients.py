"""Gradients of declared ops (``conformance(..., grad=True)`` or ``grad={input: domain}``): our
registered gradient against finite differences and against ``tf.GradientTape``, through GradCase.

The case uses the op's widest floating dtype (float64 where TF takes it: finite differences are only
checked there), the first non-empty shape pattern, and the spec's domains without NaN/inf (``grad=``
overrides them per input, e.g. ``grad=dict(x=positive())`` for Log; it may also fix attrs and name the
``outputs`` differentiated, e.g. ``grad=dict(is_training=True, outputs=(0,))``).
"""
from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.cases import (attr_levels, domain_of, draw_inputs, seed_of, shape_patterns, type_levels,
                                     visible_attrs)
from tests.conformance.gradients import GradCase, check_against_tf, check_numeric
from tests.conformance.oracle import raw_op_kwargs
from tfops_py import ops
from tfops_py.conformance import Domain, Spec, specs
from tfops_py.conformance.domains import Values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.node_builder import add_node, arg_types
from tfops_py.framework.op_def import ArgDef, get_op_def
from tfops_py.framework.operation import Output

_PREFERRED = (DataType.DT_DOUBLE, DataType.DT_FLOAT, DataType.DT_COMPLEX128, DataType.DT_COMPLEX64)


def _smooth(domain: Domain) -> Domain:
    return Values(domain.kind, only=domain.only) if isinstance(domain, Values) else domain


def spec_grad_case(spec: Spec) -> GradCase:
    """The GradCase a spec's ``grad=`` asks for."""
    op_def = get_op_def(spec.op)
    types = {attr: next((t for t in _PREFERRED if t in levels), levels[0])
             for attr, levels in type_levels(spec, op_def).items()}
    covered, fixed = attr_levels(spec, op_def)
    attrs = {**fixed, **{name: levels[0] for name, levels in covered.items()}}
    patterns = shape_patterns(spec, op_def)
    pattern = next((p for p in patterns if all(0 not in s and s for s in p["shapes"].values())), patterns[0])
    attrs.update(pattern["attrs"])
    overrides = spec.grad if isinstance(spec.grad, dict) else {}
    attrs.update({k: v for k, v in overrides.items() if k in op_def.attr_map})
    domains = {a.name: overrides.get(a.name) or _smooth(domain_of(spec, a.name)) for a in op_def.inputs}
    inputs = draw_inputs(spec, op_def, domains, types, pattern["shapes"], attrs, seed_of(f"{spec.op}/grad"))
    attrs = visible_attrs(op_def, {**attrs, **types})
    wrt = [i for i, arg in enumerate(op_def.inputs) if not arg.is_list and _differentiable(_dtype(arg, types))]
    fixed_inputs = {i: v for i, v in enumerate(inputs) if i not in wrt}
    outputs = [i for i, t in enumerate(arg_types(op_def.outputs, {**attrs, **types}))
               if _differentiable(t) and i in overrides.get("outputs", (i,))]

    def build(scope: Any, *xs: Output) -> list[Output]:
        it = iter(xs)
        args = [next(it) if i in wrt else ops.Const(scope, fixed_inputs[i]) for i in range(len(inputs))]
        node = add_node(scope, op_def, args, dict(attrs))
        return [Output(node, i) for i in outputs]

    def tf_fn(tf: Any, *xs: Any) -> list[Any]:
        it = iter(xs)
        args = [next(it) if i in wrt else tf.constant(fixed_inputs[i]) for i in range(len(inputs))]
        result = getattr(tf.raw_ops, spec.tf_op or spec.op)(**raw_op_kwargs(spec.op, args, attrs))
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        return [result[i] for i in outputs]

    numeric = all(inputs[i].dtype.itemsize == 8 and inputs[i].dtype.kind == "f" for i in wrt)
    return GradCase(f"{spec.op}-grad", build, tf_fn, tuple(inputs[i] for i in wrt), numeric=numeric,
                    why="finite differences need float64 inputs")


def _dtype(arg: ArgDef, types: dict[str, DataType]) -> DataType | None:
    return arg.type if arg.type is not None else types.get(arg.type_attr or "")


def _differentiable(dt: DataType | None) -> bool:
    return dt is not None and (dt.is_floating or dt.is_complex)


GRAD_SPECS = sorted(op for op, spec in specs().items() if spec.grad)
# finite differences only where the op takes float64 (no item that could only skip)
NUMERIC = [op for op in GRAD_SPECS if spec_grad_case(specs()[op]).numeric]


@pytest.mark.parametrize("op", NUMERIC)
def test_gradient_matches_finite_differences(op: str) -> None:
    check_numeric(spec_grad_case(specs()[op]))


@pytest.mark.tf
@pytest.mark.parametrize("op", GRAD_SPECS)
def test_gradient_matches_tensorflow(op: str, backend: str) -> None:
    check_against_tf(spec_grad_case(specs()[op]), backend)
