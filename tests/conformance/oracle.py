"""TensorFlow's side of a case: graph construction (its shape function) and eager ``tf.raw_ops`` on the
native CPU kernels (``TF_ENABLE_ONEDNN_OPTS=0``), each captured as an :class:`Outcome`.

Used by the golden generator and the live tests; imports TensorFlow only when called.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tests.conformance.golden import Outcome
from tests.conformance.ours import Mode, specs_for
from tests.conformance.outcomes import core_message
from tests.tf_oracle import require_tf
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.tensor_shape import PartialTensorShape


def _tf_dtype(dt: DataType) -> Any:
    tf = require_tf()
    return tf.string if dt == DataType.DT_STRING else tf.as_dtype(dt.numpy_dtype)


def _tf_attr(v: Any) -> Any:
    if isinstance(v, DataType):
        return _tf_dtype(v)
    if isinstance(v, list) and v and isinstance(v[0], DataType):
        return [_tf_dtype(x) for x in v]
    if isinstance(v, PartialTensorShape):  # graph construction reads -1 as a bad dimension, not an unknown one
        return require_tf().TensorShape(v.as_list() and [None if d == -1 else d for d in v.as_list()])
    return v


@functools.cache
def _parameters(op: str) -> tuple[list[str], dict[str, str]]:
    """(raw-op parameter names of the inputs in OpDef order, OpDef attr name -> parameter name)."""
    tf = require_tf()
    params = [p for p in inspect.signature(getattr(tf.raw_ops, op)).parameters if p != "name"]
    op_def = get_op_def(op)
    names = [a.name for a in op_def.inputs]
    inputs = [n if n in params else params[i] for i, n in enumerate(names)]
    attrs = {a.name: a.name if a.name in params else f"{a.name}_" for a in op_def.attrs
             if a.name in params or f"{a.name}_" in params}
    return inputs, attrs


def _kwargs(op: str, args: Sequence[Any], attrs: dict[str, Any]) -> dict[str, Any]:
    inputs, attr_names = _parameters(op)
    kwargs = dict(zip(inputs, args))
    kwargs.update({attr_names[k]: _tf_attr(v) for k, v in attrs.items() if k in attr_names})
    return kwargs


def _constant(tf: Any, v: Any) -> Any:
    v = np.asarray(v) if not isinstance(v, np.ndarray) else v
    if v.dtype != object:
        return tf.constant(v)
    return tf.constant(v.reshape(-1).tolist(), tf.string, shape=v.shape)


def _numpy(t: Any) -> np.ndarray:
    tf = require_tf()
    if t.dtype == tf.string:
        return np.asarray(t.numpy(), dtype=object)
    return np.asarray(t.numpy())


def _error(e: BaseException) -> tuple[str, str]:
    tf = require_tf()
    cls = type(e).__name__ if isinstance(e, tf.errors.OpError) else "InvalidArgumentError"
    return cls, core_message(str(e))


def run_tf(op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> list[np.ndarray]:
    """TF eager outputs (TF's exceptions propagate): what references call."""
    tf = require_tf()
    with tf.device("/CPU:0"):
        args = [[_constant(tf, v) for v in x] if isinstance(x, list) else _constant(tf, x) for x in inputs]
        result = getattr(tf.raw_ops, op)(**_kwargs(op, args, attrs))
    outs = result if isinstance(result, (list, tuple)) else [result]
    flat = [o for out in outs for o in (out if isinstance(out, (list, tuple)) else [out])]
    return [_numpy(o) for o in flat]


def tf_eager(op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> Outcome:
    tf = require_tf()
    try:
        return Outcome(values=run_tf(op, inputs, attrs))
    except (tf.errors.OpError, ValueError, TypeError) as e:
        cls, message = _error(e)
        return Outcome(error=cls, message=message)


class _TFRaised(Exception):
    def __init__(self, cls: str, message: str):
        super().__init__(message)
        self.cls, self.message = cls, message


def _run_tf_for_reference(op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> list[np.ndarray]:
    tf = require_tf()
    try:
        return run_tf(op, inputs, attrs)
    except (tf.errors.OpError, ValueError, TypeError) as e:
        raise _TFRaised(*_error(e)) from e


def reference_outcome(reference: Callable[..., Any], op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> Outcome:
    """A reference's expected value, or the TF error it ran into (integer RealDiv by zero is Div's error);
    any other exception is the reference's own bug and propagates."""
    try:
        return Outcome(values=[np.asarray(v) for v in reference(_run_tf_for_reference, op, list(inputs), attrs)])
    except _TFRaised as e:
        return Outcome(error=e.cls, message=e.message)


def tf_graph(op: str, inputs: Sequence[Any], attrs: dict[str, Any], mode: Mode = "const") -> Outcome:
    """TF's graph construction only: a build-time error, or the static output shapes."""
    tf = require_tf()
    with tf.Graph().as_default():
        def node(v: Any, spec: Any) -> Any:
            if spec == "const":
                return _constant(tf, v)
            shape = None if spec in ("feed", None) else [None if d == -1 else d for d in spec]
            return tf.compat.v1.placeholder(_tf_dtype(as_datatype(np.asarray(v).dtype)), shape)

        try:
            args = [[node(v, s) for v, s in zip(x, spec)] if isinstance(x, list) else node(x, spec)
                    for x, spec in zip(inputs, specs_for(inputs, mode))]
            result = getattr(tf.raw_ops, op)(**_kwargs(op, args, attrs))
        except (ValueError, TypeError, tf.errors.OpError) as e:
            cls, message = _error(e)
            return Outcome(error=cls, message=message, at_build=True)
    outs = result if isinstance(result, (list, tuple)) else [result]
    flat = [o for out in outs for o in (out if isinstance(out, (list, tuple)) else [out])]
    try:
        return Outcome(shapes=[o.shape.as_list() if o.shape.rank is not None else None for o in flat])
    except ValueError:  # a dimension TF's Python cannot represent (Range over NaN gives INT64_MIN)
        return Outcome(shapes=None)


def tf_graph_case(build: Callable[..., Any], inputs: Sequence[np.ndarray]) -> Outcome:
    """A graph case on TF: ``build(tf, *inputs)`` in a TF1 graph returns fetches (or ``(fetches, targets)``)."""
    tf = require_tf()
    graph = tf.Graph()
    with graph.as_default(), tf.device("/CPU:0"):
        try:
            built = build(tf, *[_constant(tf, v) for v in inputs])
        except (ValueError, TypeError, tf.errors.OpError) as e:
            cls, message = _error(e)
            return Outcome(error=cls, message=message, at_build=True)
        fetches, targets = built if isinstance(built, tuple) else (built, [])
        fetches = list(fetches)
        shapes = [f.shape.as_list() if f.shape.rank is not None else None for f in fetches]
        with tf.compat.v1.Session(graph=graph) as sess:
            try:
                if targets:
                    sess.run(list(targets))
                values = sess.run(fetches)
            except tf.errors.OpError as e:
                cls, message = _error(e)
                return Outcome(error=cls, message=message, shapes=shapes)
    return Outcome(values=[np.asarray(v, dtype=object if getattr(v, "dtype", None) == np.dtype(object) else None)
                           for v in values], shapes=shapes)


def no_kernel(outcome: Outcome) -> bool:
    """TF has no CPU kernel for this case (a NotFoundError from kernel lookup)."""
    return outcome.error == "NotFoundError" and ("kernel" in outcome.message or "device" in outcome.message)
