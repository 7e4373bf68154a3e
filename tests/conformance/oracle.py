"""TensorFlow's side of a case: graph construction (its shape function) and eager ``tf.raw_ops`` on the
native CPU kernels (``TF_ENABLE_ONEDNN_OPTS=0``), each captured as an :class:`Outcome`.

Used by the golden generator and the live tests; imports TensorFlow only when called.
"""
from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tests.conformance.golden import Outcome
from tests.conformance.ours import Mode, specs_for
from tests.conformance.outcomes import core_message
from tests.tf_oracle import require_tf
from tfops_py.conformance.graphs import import_node
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.tensor_shape import PartialTensorShape


class OracleError(Exception):
    """A case the oracle cannot hand to TF (not TF's error: it propagates)."""


def _tf_dtype(dt: DataType) -> Any:
    tf = require_tf()
    return tf.string if dt == DataType.DT_STRING else tf.as_dtype(dt.numpy_dtype)


def _tf_attr(v: Any) -> Any:
    if isinstance(v, DataType):
        return _tf_dtype(v)
    if isinstance(v, PartialTensorShape):
        dims = v.as_list()
        return require_tf().TensorShape(None if dims is None else [None if d == -1 else d for d in dims])
    if isinstance(v, list) and v and isinstance(v[0], DataType):
        return [_tf_dtype(x) for x in v]
    if isinstance(v, PartialTensorShape):  # graph construction reads -1 as a bad dimension, not an unknown one
        return require_tf().TensorShape(v.as_list() and [None if d == -1 else d for d in v.as_list()])
    return v


@functools.cache
def _parameters(op: str) -> tuple[list[str], dict[str, str]]:
    """(raw-op parameter names of the inputs in OpDef order, OpDef attr name -> parameter name).

    TF's Python wrappers keep the OpDef's names but for keywords (``lambda_``) and a few renames
    (Squeeze's ``squeeze_dims`` is ``axis``): attrs left unmatched pair with parameters left unmatched,
    in order.
    """
    tf = require_tf()
    params = [p for p in inspect.signature(getattr(tf.raw_ops, op)).parameters if p != "name"]
    op_def = get_op_def(op)
    names = [a.name for a in op_def.inputs]
    inputs = [n if n in params else params[i] for i, n in enumerate(names)]
    attrs = {a.name: a.name if a.name in params else f"{a.name}_" for a in op_def.attrs
             if a.name in params or f"{a.name}_" in params}
    left_params = [p for p in params if p not in inputs and p not in attrs.values()]
    left_attrs = [a.name for a in op_def.attrs if a.name not in attrs and a.name not in op_def.inferred_attrs]
    attrs.update(zip(left_attrs, left_params))
    return inputs, attrs


def raw_op_kwargs(op: str, args: Sequence[Any], attrs: dict[str, Any]) -> dict[str, Any]:
    inputs, attr_names = _parameters(op)
    kwargs = dict(zip(inputs, args))
    unknown = [k for k in attrs if k not in attr_names and k not in get_op_def(op).inferred_attrs]
    if unknown:
        raise OracleError(f"tf.raw_ops.{op} has no parameter for attrs {unknown}")
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
    if isinstance(e, tf.errors.OpError):
        cls = type(e).__name__
    else:  # graph construction: TF's Python raises ValueError/TypeError, NotImplementedError for a removed op
        cls = "UnimplementedError" if isinstance(e, NotImplementedError) else "InvalidArgumentError"
    return cls, core_message(str(e))


def seeded_stateful(op: str) -> bool:
    """A stateful op with ``seed``/``seed2`` attrs (RandomUniform …): its kernel owns a generator, and
    TF's eager kernel cache keeps one kernel per (op, attrs) for the whole process, so a second eager call
    with the same attrs continues the first one's stream.  Such ops run in a graph of their own (a fresh
    kernel, as a new session or our ``run_op`` gets)."""
    op_def = get_op_def(op)
    return op_def.is_stateful and {"seed", "seed2"} <= {a.name for a in op_def.attrs}


def _run_fresh_kernel(op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> list[np.ndarray]:
    """``op`` in a new TF1 graph and session, its inputs fed to unknown-shape placeholders (so that only
    the kernel sees them, as in eager)."""
    tf = require_tf()
    feeds: dict[Any, np.ndarray] = {}
    with tf.Graph().as_default() as graph, tf.device("/CPU:0"):
        def node(v: Any) -> Any:
            v = np.asarray(v)
            ph = tf.compat.v1.placeholder(_tf_dtype(DataType.DT_STRING if v.dtype == object else as_datatype(v.dtype)))
            feeds[ph] = v
            return ph

        args = [[node(v) for v in x] if isinstance(x, list) else node(x) for x in inputs]
        result = _call(tf, op, args, attrs)
        outs = result if isinstance(result, (list, tuple)) else [result]
        flat = [o for out in outs for o in (out if isinstance(out, (list, tuple)) else [out])]
        with tf.compat.v1.Session(graph=graph) as sess:
            values = sess.run(flat, feeds)
    return [np.asarray(v).astype(object) if np.asarray(v).dtype.kind in "SO" else np.asarray(v) for v in values]


def _call(tf: Any, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """``tf.raw_ops.<op>`` on ``args``; an op TF's Python has no wrapper for (the internal ``_Fused*`` ops) is
    its NodeDef imported into the current graph instead (``import_node``)."""
    if hasattr(tf.raw_ops, op):
        return getattr(tf.raw_ops, op)(**raw_op_kwargs(op, args, attrs))
    return import_node(tf, op, args, attrs)


def run_tf(op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> list[np.ndarray]:
    """TF eager outputs (TF's exceptions propagate): what references call.  An op without a Python wrapper runs
    in a TF1 session instead (its import needs a graph); seeded stateful ops run on a fresh kernel
    (:func:`seeded_stateful`)."""
    tf = require_tf()
    if seeded_stateful(op):
        return _run_fresh_kernel(op, inputs, attrs)
    if not hasattr(tf.raw_ops, op):
        return _run_in_session(op, inputs, attrs)
    with tf.device("/CPU:0"):
        args = [[_constant(tf, v) for v in x] if isinstance(x, list) else _constant(tf, x) for x in inputs]
        result = _call(tf, op, args, attrs)
    outs = result if isinstance(result, (list, tuple)) else [result]
    flat = [o for out in outs for o in (out if isinstance(out, (list, tuple)) else [out])]
    return [_numpy(o) for o in flat]


def _run_in_session(op: str, inputs: Sequence[Any], attrs: dict[str, Any]) -> list[np.ndarray]:
    tf = require_tf()
    graph = tf.Graph()
    with graph.as_default(), tf.device("/CPU:0"):
        args = [[_constant(tf, v) for v in x] if isinstance(x, list) else _constant(tf, x) for x in inputs]
        result = _call(tf, op, args, attrs)
        outs = result if isinstance(result, list) else [result]
        with tf.compat.v1.Session(graph=graph) as sess:
            return [_session_value(v) for v in sess.run(outs)]


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
            result = _call(tf, op, args, attrs)
        except (ValueError, TypeError, NotImplementedError, tf.errors.OpError) as e:
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
    return Outcome(values=[_session_value(v) for v in values], shapes=shapes)


def _session_value(v: Any) -> np.ndarray:
    """A TF1 session's fetched value as an array; strings (a string scalar comes back as ``bytes``) as objects."""
    if isinstance(v, bytes) or getattr(v, "dtype", None) == np.dtype(object):
        return np.asarray(v, dtype=object)
    return np.asarray(v)


def intra_op_threads() -> int:
    """The intra-op thread count TF runs kernels with here."""
    tf = require_tf()
    return tf.config.threading.get_intra_op_parallelism_threads() or len(os.sched_getaffinity(0))


def no_kernel(outcome: Outcome) -> bool:
    """TF cannot run this case: no CPU kernel (a NotFoundError from kernel lookup), or a dtype its Python
    cannot make tensors of (the float8 "fnuz" types)."""
    if outcome.error == "NotFoundError" and ("kernel" in outcome.message or "device" in outcome.message):
        return True
    return "not supported in TensorProto" in outcome.message
