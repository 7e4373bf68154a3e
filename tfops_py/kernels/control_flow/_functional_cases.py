"""The functional control-flow ops' graph cases: While, If, Case (and their Stateless and internal forms)
and PartitionedCall over library functions made with ``Function.from_callable``.  TF runs the same graph,
exported as a GraphDef with its library (``via_graph_def``): TF's Python makes function-valued attrs only
from its own functions.  Imported only when cases are made.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList
from tfops_py.conformance.graphs import via_graph_def
from tfops_py.framework.dtypes import DataType

F, I = DataType.DT_FLOAT, DataType.DT_INT32


def _named(scope: Any) -> Any:
    """The op's node named plainly: TF refuses node names starting with "_" (the default for _If, _While)."""
    return scope.WithOpName("node")


def _loop_functions(scope: Any) -> tuple[Any, Any]:
    from tfops_py import Function, ops

    cond = Function.from_callable(scope, "cond", [F, I], lambda s, x, i: ops.Less(s, i, 5))
    body = Function.from_callable(scope, "body", [F, I],
                                  lambda s, x, i: [ops.AddV2(s, ops.Mul(s, x, 2.0), 1.0), ops.Add(s, i, 1)])
    return cond, body


def _branches(scope: Any) -> list[Any]:
    from tfops_py import Function, ops

    return [Function.from_callable(scope, "double", [F], lambda s, x: [ops.Mul(s, x, 2.0)]),
            Function.from_callable(scope, "negate", [F], lambda s, x: [ops.Neg(s, x)]),
            Function.from_callable(scope, "square", [F], lambda s, x: [ops.Square(s, x)])]


def while_loop(op: str) -> Any:
    """``while i < 5: x, i = 2x + 1, i + 1`` with the While op ``op``."""
    def build(scope: Any, x: Any, i: Any) -> list:
        from tfops_py import ops

        cond, body = _loop_functions(scope)
        return list(getattr(ops, op)(_named(scope), [x, i], cond, body).output)
    return build


def if_branch(op: str) -> Any:
    """``double(x) if pred else negate(x)`` with the If op ``op``."""
    def build(scope: Any, pred: Any, x: Any) -> list:
        from tfops_py import ops

        double, negate, _ = _branches(scope)
        return list(getattr(ops, op)(_named(scope), pred, [x], [F], double, negate).output)
    return build


def case_branch(op: str) -> Any:
    """Branch ``index`` of (double, negate, square); out of range: the last."""
    def build(scope: Any, index: Any, x: Any) -> list:
        from tfops_py import ops

        return list(getattr(ops, op)(scope, index, [x], [F], _branches(scope)).output)
    return build


def call(op: str) -> Any:
    """``affine(x, b) = (3x + b, b)`` called with ``op``."""
    def build(scope: Any, x: Any, b: Any) -> list:
        from tfops_py import Function, ops

        affine = Function.from_callable(scope, "affine", [F, F],
                                        lambda s, x, b: [ops.AddV2(s, ops.Mul(s, x, 3.0), b), ops.Identity(s, b)])
        return list(getattr(ops, op)(scope, [x, b], [F, F], affine).output)
    return build


def _add(out: CaseList, op: str, build: Any, inputs: list, id: str) -> None:
    out.add_graph_case(op, build, via_graph_def(build), inputs, id=f"{op}/{id}", compare="exact")


def build(out: CaseList) -> None:
    x = np.array([0.5, -1.25], np.float32)
    for op in ("While", "StatelessWhile", "_While"):
        _add(out, op, while_loop(op), [x, np.int32(0)], "five-iterations")
    _add(out, "While", while_loop("While"), [x, np.int32(7)], "no-iteration")
    for op in ("If", "StatelessIf", "_If"):
        for pred in (True, False):
            _add(out, op, if_branch(op), [np.bool_(pred), x], f"pred-{str(pred).lower()}")
    # predicates convert as TF's ToBool: a scalar when non-zero, any other tensor when it has elements
    for name, pred in (("int-zero", np.int32(0)), ("int-seven", np.int32(7)), ("empty", np.zeros(0, np.float32)),
                       ("vector", np.zeros(3, np.float32)), ("string", np.array(b"", dtype=object))):
        _add(out, "If", if_branch("If"), [pred, x], f"pred-{name}")
    for op in ("Case", "StatelessCase"):
        for index in (0, 1, 2, 3, -1):
            _add(out, op, case_branch(op), [np.int32(index), x], f"index-{index}")
    for op in ("PartitionedCall", "StatefulPartitionedCall"):
        _add(out, op, call(op), [x, np.float32(1.5)], "affine")
