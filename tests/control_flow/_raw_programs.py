"""Run a short program of raw ops both here (a graph, one Run) and in TF (eager ``tf.raw_ops``), for ops whose
values only make sense in sequence (TensorList / TensorArray handles).

A program is a list of steps ``(op_type, {arg: value})``; a value ``"$k"`` names output 0 of step k, ``"$k:i"``
output i.  ``fetch`` lists the references whose values are compared.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tests.tf_oracle import require_tf
from tfops_py import ClientSession, Scope
from tfops_py.errors import OpError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Operation, Output
from tfops_py.ops._wrapper import as_node_out

Program = list[tuple[str, dict[str, Any]]]


def _ref(value: Any) -> tuple[int, int] | None:
    if isinstance(value, str) and value.startswith("$"):
        step, _, index = value[1:].partition(":")
        return int(step), int(index or 0)
    return None


def run_ours(program: Program, fetch: list[str], backend: str = "numpy") -> list[np.ndarray]:
    root = Scope.NewRootScope()
    nodes = []
    for op_type, args in program:
        op_def = get_op_def(op_type)
        inputs = []
        for arg in op_def.inputs:
            value = args[arg.name]
            ref = _ref(value)
            inputs.append(Output(nodes[ref[0]], ref[1]) if ref else as_node_out(root, np.asarray(value)))
        attrs = {k: v for k, v in args.items() if k not in {a.name for a in op_def.inputs}}
        nodes.append(add_node(root, op_def, inputs, attrs))
    outs = [Output(nodes[r[0]], r[1]) for r in map(_ref, fetch)]  # type: ignore[index]
    every_step = [Operation(n) for n in nodes]  # run every step, in program order, as eager TF does
    return ClientSession(root, backend=backend, fetch_numpy=True).Run({}, outs, every_step)


def run_tf(program: Program, fetch: list[str]) -> list[np.ndarray]:
    tf = require_tf()
    results: list[Any] = []
    with tf.device("/CPU:0"):
        for op_type, args in program:
            inputs = {a.name for a in get_op_def(op_type).inputs}
            kwargs = {}
            for k, v in args.items():
                ref = _ref(v)
                if ref:
                    r = results[ref[0]]
                    kwargs[k] = r[ref[1]] if isinstance(r, (list, tuple)) else r
                elif k in inputs:
                    kwargs[k] = tf.constant(v)
                else:
                    kwargs[k] = _tf_attr(tf, v)
            results.append(getattr(tf.raw_ops, op_type)(**kwargs))
    out = []
    for r in map(_ref, fetch):
        value = results[r[0]]  # type: ignore[index]
        value = value[r[1]] if isinstance(value, (list, tuple)) else value  # type: ignore[index]
        out.append(value.numpy())
    return out


def _tf_attr(tf, value: Any) -> Any:
    from tfops_py.framework.dtypes import DataType
    from tfops_py.framework.tensor_shape import PartialTensorShape

    if isinstance(value, DataType):
        return tf.dtypes.as_dtype(int(value))
    if isinstance(value, PartialTensorShape):
        return tf.TensorShape(value.as_list())
    return value


def outcome(fn, *args) -> tuple[str, Any]:
    """("ok", values) or ("error", (error class name, message))."""
    try:
        return "ok", fn(*args)
    except OpError as e:
        return "error", (type(e).__name__, e.message)
    except Exception as e:  # TF's errors
        if type(e).__module__.startswith("tensorflow"):
            return "error", (type(e).__name__, getattr(e, "message", str(e)))
        raise
