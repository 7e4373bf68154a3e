"""Live differential cases: hypothesis draws a case from a spec (dtypes TF's CPU kernels take and the
backend holds, random shapes under the spec's shape rule, attr values, a seed for the domains) and
TF runs it next to tfops_py.  The contract is the golden files' (outcomes.py)."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from hypothesis import HealthCheck, reject, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from tests.conformance import oracle
from tests.conformance.cases import (attr_levels, divergence_for, domain_of, draw_inputs, named, pattern,
                                     patterned_inputs, runs, shape_patterns, shape_rule, type_levels)
from tests.conformance.check import backend_holds, graph_as_declared, type_attrs
from tests.conformance.ours import run_op
from tests.conformance.outcomes import assert_outcome
from tests.tf_oracle import require_tf
from tfops_py.conformance import BROADCAST, SAME, ShapeRule, Spec
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.op_def import get_op_def


def _holds(backend: str, dt: DataType) -> bool:
    return backend_holds(backend, "string" if dt == DataType.DT_STRING else np.dtype(dt.numpy_dtype).name)


def type_combos(spec: Spec, backend: str) -> list[dict[str, DataType]]:
    """Every assignment of the spec's type attrs TF's CPU kernels take and ``backend`` holds (none when the
    backend lacks the fixed type of an input, such as a string tag)."""
    op_def = get_op_def(spec.op)
    if not all(_holds(backend, a.type) for a in op_def.inputs if a.type is not None):
        return []
    levels = type_levels(spec, op_def)
    names = list(levels)
    out = []
    for combo in itertools.product(*(levels[n] for n in names)):
        types = dict(zip(names, combo))
        if all(_holds(backend, t) for t in combo) and runs(spec, types):
            out.append(types)
    return out


def _shapes(data: Any, spec: Spec, names: list[str]) -> tuple[dict[str, tuple[int, ...]], dict[str, Any]]:
    side = st.integers(0, 4)
    rule = shape_rule(spec)
    if rule == SAME:
        shape = tuple(data.draw(st.lists(side, max_size=4), label="shape"))
        return dict.fromkeys(names, shape), {}
    if rule == BROADCAST:
        if data.draw(st.integers(0, 9), label="unbroadcastable") == 0:
            return {n: tuple(data.draw(st.lists(side, max_size=3))) for n in names}, {}
        drawn = data.draw(mutually_broadcastable_shapes(num_shapes=max(len(names), 1), max_dims=4, max_side=4))
        return dict(zip(names, drawn.input_shapes)), {}
    op_def = get_op_def(spec.op)
    if isinstance(rule, ShapeRule):
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="shape seed"))
        drawn = pattern(spec, op_def, names, rule.sample(rng))
    else:
        drawn = data.draw(st.sampled_from(shape_patterns(spec, op_def)), label="pattern")
    return drawn["shapes"], drawn["attrs"]


def check_live(spec: Spec, backend: str, data: Any) -> None:
    """One drawn case of ``spec``: ours against TF (graph construction and eager)."""
    require_tf()
    op_def = get_op_def(spec.op)
    types = data.draw(st.sampled_from(type_combos(spec, backend)), label="types")
    covered, fixed = attr_levels(spec, op_def)
    attrs = dict(fixed)
    for name, levels in covered.items():
        attrs[name] = data.draw(st.sampled_from(levels), label=name)
    shapes, pattern_attrs = _shapes(data, spec, patterned_inputs(spec, op_def))
    attrs.update(pattern_attrs)
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    domains = {a.name: domain_of(spec, a.name) for a in op_def.inputs}
    inputs = draw_inputs(spec, op_def, domains, types, shapes, attrs, seed)
    excluded, ref = divergence_for(spec.op, types, attrs, named(op_def, inputs))
    if excluded:
        reject()
    attrs = {k: v for k, v in {**attrs, **types}.items() if k not in op_def.inferred_attrs}
    mode = data.draw(st.sampled_from(["const", "feed"]), label="mode")
    if ref is not None:
        eager = oracle.reference_outcome(ref, spec.op, inputs, attrs)
    else:
        eager = oracle.tf_eager(spec.tf_op or spec.op, inputs, attrs)
    if oracle.no_kernel(eager):
        reject()
    graph = graph_as_declared(oracle.tf_graph(spec.tf_op or spec.op, inputs, attrs, mode), spec.op, inputs, attrs)
    ours = run_op(spec.op, inputs, attrs, mode, backend)
    assert_outcome(ours, graph, eager, spec.compare, spec.messages, f"{spec.op} {types} {attrs} seed {seed} [{mode}]",
                   spec.static_shapes, spec.early_errors)


def live_settings(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.function_scoped_fixture])


def check_against_tf(op: str, inputs: list, attrs: dict[str, Any], backend: str = "numpy", compare: str = "ew",
                     mode: Any = "const", messages: bool = True, static_shapes: str = "refined",
                     early_errors: bool = True) -> None:
    """One hand-drawn case (family tests' own strategies): ours against TF's graph construction and eager run;
    a declared divergence's reference gives the expected value where it applies."""
    require_tf()
    op_def = get_op_def(op)
    excluded, ref = divergence_for(op, type_attrs(op, inputs, attrs), attrs, named(op_def, inputs))
    if excluded:
        reject()
    eager = oracle.reference_outcome(ref, op, inputs, attrs) if ref is not None else oracle.tf_eager(op, inputs, attrs)
    if oracle.no_kernel(eager):
        reject()
    graph = graph_as_declared(oracle.tf_graph(op, inputs, attrs, mode), op, inputs, attrs)
    assert_outcome(run_op(op, inputs, attrs, mode, backend), graph, eager, compare, messages, f"{op} {attrs} [{mode}]",
                   static_shapes, early_errors)
