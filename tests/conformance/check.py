"""Checking stored cases on a backend, and which (backend, case) pairs exist at all.

A case runs on a backend only if the backend holds every dtype in it (array_api_strict has no half,
bfloat16, float8 or strings): pairs that cannot exist are not generated, rather than skipped.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable

import ml_dtypes  # noqa: F401  (registers bfloat16 and float8 names with NumPy)
import numpy as np

from tests.conformance import golden
from tests.backends import BACKENDS as TEST_BACKENDS
from tests.conformance.golden import GoldenCase
from tests.conformance.ours import run_graph, run_op
from tests.conformance.outcomes import assert_outcome
from tfops_py.backends import get_backend
from tfops_py.conformance import divergences, spec_of
from tfops_py.errors import OpError
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.op_def import get_op_def

BACKENDS = tuple(TEST_BACKENDS)  # numpy, array_api_strict, and cupy where a CUDA GPU is visible
MODES = ("const", "feed")


@functools.cache
def backend_holds(backend: str, dtype_name: str) -> bool:
    """Whether ``backend`` has the dtype stored under ``dtype_name`` in golden files."""
    dt = DataType.DT_STRING if dtype_name == "string" else as_datatype(np.dtype(dtype_name))
    try:
        get_backend(backend).dtype(dt)
    except OpError:
        return False
    return backend == "numpy" or dt != DataType.DT_STRING


def runs_on(case: GoldenCase, backend: str) -> bool:
    return all(backend_holds(backend, name) for name in case.dtypes)


def type_attrs(op: str, inputs: list, attrs: dict) -> dict[str, DataType]:
    """A case's type attrs: the explicit ones, and those the inputs' dtypes set."""
    types = {k: v for k, v in attrs.items() if isinstance(v, DataType)}
    for arg, value in zip(get_op_def(op).inputs, inputs):
        first = value[0] if isinstance(value, list) and value else value
        if arg.type_attr and not isinstance(first, list):
            types[arg.type_attr] = as_datatype(np.asarray(first).dtype)
    return types


def builds_where_tf_refuses(op: str, inputs: list, attrs: dict) -> bool:
    """Whether a declared divergence says tfops_py builds this case though TF's graph construction refuses."""
    found = [d for d in divergences(op) if d.builds]
    if not found:
        return False
    named = {a.name: v for a, v in zip(get_op_def(op).inputs, inputs)}
    types = type_attrs(op, inputs, attrs)
    return any(d.concerns(op, types, attrs, named) for d in found)


def check_case(case: GoldenCase, backend: str, modes: Iterable[str] = MODES) -> None:
    """Our runs of a stored case (each mode) keep the contract with TF's stored outcomes."""
    spec = spec_of(case.op)
    messages = spec.messages if spec is not None else True
    static_shapes = spec.static_shapes if spec is not None else "refined"
    early = spec.early_errors if spec is not None else True
    if case.source == "graph":
        graph_case = next(g for g in spec.graph_cases if g.id == case.id)  # type: ignore[union-attr]
        ours = run_graph(graph_case.build, case.inputs, "const", backend)
        assert_outcome(ours, None, case.eager, case.compare, messages, f"{case.id} [{backend}]")
        return
    inputs, attrs = case.inputs, case.attrs
    tf_refuses = builds_where_tf_refuses(case.op, inputs, attrs)
    for mode in modes:
        ours = run_op(case.op, inputs, attrs, mode, backend)
        graph = case.graph(mode)
        if tf_refuses and graph is not None and graph.error:
            graph = None
        assert_outcome(ours, graph, case.eager, case.compare, messages, f"{case.id} [{mode}, {backend}]",
                       static_shapes, early)


def failures(cases: Iterable[GoldenCase], backend: str, modes: Iterable[str] = MODES) -> list[str]:
    """Every failing case with its first message line (an item reports them all, not just the first)."""
    out = []
    for case in cases:
        try:
            check_case(case, backend, modes)
        except AssertionError as e:
            out.append(f"{case.id}: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}")
    return out


@functools.cache
def golden_families() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in golden.GOLDEN_DIR.glob("*.npz")))


@functools.cache
def cases_by_op() -> dict[str, list[GoldenCase]]:
    """Every stored case, by op."""
    out: dict[str, list[GoldenCase]] = {}
    for family in golden_families():
        for case in golden.all_cases(family):
            out.setdefault(case.op, []).append(case)
    return out
