"""One table of the array ops, run on tfops_py and on TensorFlow, and the rule comparing the two.

Each op is run three ways on each side:

* ``const``: every input a Const, so both shape functions see the values (build-time errors);
* ``feed``: every input a Placeholder of unknown shape, so only the kernel can check values;
* TF eager (``tf.raw_ops``, native CPU kernels) gives the kernel's answer or error.

The contract: where TF's graph construction fails, ours fails at build time with the same
class; otherwise both produce TF eager's values (dtype, shape, bits) or its error class, and our
build-time shape equals TF's static shape.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from tfops_py import ClientSession, Scope, ops
from tfops_py.errors import OpError
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.tensor_shape import PartialTensorShape
from tests.tf_oracle import require_tf


@dataclass
class Outcome:
    """What one run produced: values, or an error class name and message; plus build-time shapes."""

    values: list[np.ndarray] | None = None
    error: str | None = None
    message: str = ""
    at_build: bool = False
    shapes: list[list[int] | None] = field(default_factory=list)


def _tf_dtype(dt: DataType):
    tf = require_tf()
    return tf.as_dtype(dt.numpy_dtype) if dt != DataType.DT_STRING else tf.string


def _ours_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {"axis" if k == "squeeze_dims" else k: v for k, v in attrs.items()}


def _tf_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {("axis" if k == "squeeze_dims" else k): (_tf_dtype(v) if isinstance(v, DataType) else v)
            for k, v in attrs.items()}


# name -> (our op class, TF raw op name, TF keyword names of the inputs in OpDef order)
SPECS: dict[str, tuple[Any, str, tuple[str, ...]]] = {
    "Shape": (ops.Shape, "Shape", ("input",)),
    "ShapeN": (ops.ShapeN, "ShapeN", ("input",)),
    "Size": (ops.Size, "Size", ("input",)),
    "Rank": (ops.Rank, "Rank", ("input",)),
    "Reshape": (ops.Reshape, "Reshape", ("tensor", "shape")),
    "ExpandDims": (ops.ExpandDims, "ExpandDims", ("input", "axis")),
    "Squeeze": (ops.Squeeze, "Squeeze", ("input",)),
    "Transpose": (ops.Transpose, "Transpose", ("x", "perm")),
    "ConcatV2": (ops.Concat, "ConcatV2", ("values", "axis")),
    "Pack": (ops.Stack, "Pack", ("values",)),
    "Unpack": (ops.Unstack, "Unpack", ("value",)),
    "Split": (ops.Split, "Split", ("axis", "value")),
    "Fill": (ops.Fill, "Fill", ("dims", "value")),
    "ZerosLike": (ops.ZerosLike, "ZerosLike", ("x",)),
    "OnesLike": (ops.OnesLike, "OnesLike", ("x",)),
    "Slice": (ops.Slice, "Slice", ("input", "begin", "size")),
    "StridedSlice": (ops.StridedSlice, "StridedSlice", ("input", "begin", "end", "strides")),
    "Tile": (ops.Tile, "Tile", ("input", "multiples")),
    "Pad": (ops.Pad, "Pad", ("input", "paddings")),
    "GatherV2": (ops.GatherV2, "GatherV2", ("params", "indices", "axis")),
    "OneHot": (ops.OneHot, "OneHot", ("indices", "depth", "on_value", "off_value")),
    "Range": (ops.Range, "Range", ("start", "limit", "delta")),
    "Select": (ops.Where3, "Select", ("condition", "x", "y")),
    "SelectV2": (ops.SelectV2, "SelectV2", ("condition", "t", "e")),
}
# Required attrs are positional in the C++ API (after the inputs).
_POSITIONAL = {"Unpack": ("num",), "Split": ("num_split",)}


def _dims(shape) -> list[int] | None:
    return None if shape.unknown_rank() else [int(d) for d in shape.as_list()]


def _specs(inputs: list, mode: Any) -> list:
    """Per input (per element for list inputs): "const", "feed" (any shape) or a placeholder shape."""
    if isinstance(mode, str):
        return [[mode] * len(x) if isinstance(x, list) else mode for x in inputs]
    return [[m] * len(x) if isinstance(x, list) and not isinstance(m, list) else m for x, m in zip(inputs, mode)]


def _is_shape_spec(spec: Any) -> bool:
    return not isinstance(spec, str)


def run_ours(op: str, inputs: list, attrs: dict[str, Any], mode: Any, backend: str = "numpy") -> Outcome:
    """Build ``op`` with inputs as Consts or Placeholders (see ``_specs``), run it on ``backend``."""
    cls, _, _ = SPECS[op]
    attrs = dict(attrs)
    positional = [attrs.pop(k) for k in _POSITIONAL.get(op, ())]
    root = Scope.NewRootScope()
    feeds: dict = {}

    def node(v: Any, spec: Any):
        if spec == "const":
            return ops.Const(root, v)
        shape = None if spec == "feed" else spec
        ph = ops.Placeholder(root, as_datatype(np.asarray(v).dtype), shape=PartialTensorShape(shape)).output
        feeds[ph] = np.asarray(v)
        return ph

    try:
        args = [[node(v, m) for v, m in zip(x, spec)] if isinstance(x, list) else node(x, spec)
                for x, spec in zip(inputs, _specs(inputs, mode))]
        built = cls(root, *args, *positional, **_ours_attrs(attrs))
    except OpError as e:
        return Outcome(error=type(e).__name__, message=e.message, at_build=True)
    operation = built.operation
    outs = [operation.output(i) for i in range(operation.num_outputs())]
    shapes = [_dims(o.shape()) for o in outs]
    try:
        values = ClientSession(root, backend=backend, fetch_numpy=True).Run(feeds, outs)
    except OpError as e:
        return Outcome(error=type(e).__name__, message=e.message, shapes=shapes)
    return Outcome(values=[np.asarray(v) for v in values], shapes=shapes)


def _core_message(text: str) -> str:
    """TF's message without the node/function decorations it adds around the kernel's text."""
    text = text.split(" for '{{node")[0]
    if "}} " in text:
        text = text.split("}} ", 1)[1]
    return text.split(" [Op:")[0]


def run_tf_eager(op: str, inputs: list, attrs: dict[str, Any]) -> Outcome:
    tf = require_tf()
    _, name, keys = SPECS[op]
    try:
        with tf.device("/CPU:0"):
            # tf.constant keeps NumPy's dtype (a bare array would be converted to an attr's default)
            args = [[tf.constant(v) for v in x] if isinstance(x, list) else tf.constant(x) for x in inputs]
            result = getattr(tf.raw_ops, name)(**dict(zip(keys, args)), **_tf_attrs(attrs))
    except (tf.errors.OpError, ValueError, TypeError) as e:
        err = type(e).__name__ if isinstance(e, tf.errors.OpError) else "InvalidArgumentError"
        return Outcome(error=err, message=_core_message(str(e)))
    outs = result if isinstance(result, (list, tuple)) else [result]
    return Outcome(values=[np.asarray(o.numpy(), dtype=object if o.dtype == tf.string else None) for o in outs])


def run_tf_graph(op: str, inputs: list, attrs: dict[str, Any], mode: Any) -> Outcome:
    """TF's graph construction only (its shape function): an error, or the static output shapes."""
    tf = require_tf()
    _, name, keys = SPECS[op]
    with tf.Graph().as_default():
        def node(v: Any, spec: Any):
            if spec == "const":
                return tf.constant(v)
            shape = None if spec in ("feed", None) else [None if d == -1 else d for d in spec]
            return tf.compat.v1.placeholder(_tf_dtype(as_datatype(np.asarray(v).dtype)), shape)

        args = [[node(v, m) for v, m in zip(x, spec)] if isinstance(x, list) else node(x, spec)
                for x, spec in zip(inputs, _specs(inputs, mode))]
        try:
            result = getattr(tf.raw_ops, name)(**dict(zip(keys, args)), **_tf_attrs(attrs))
        except (ValueError, TypeError, tf.errors.OpError) as e:
            return Outcome(error="InvalidArgumentError", message=_core_message(str(e)), at_build=True)
    outs = result if isinstance(result, (list, tuple)) else [result]
    try:
        return Outcome(shapes=[o.shape.as_list() if o.shape.rank is not None else None for o in outs])
    except ValueError:  # a dimension TF's Python cannot represent (Range over NaN gives INT64_MIN)
        return Outcome(shapes=None)  # type: ignore[arg-type]


def _norm_shape(s: list[int] | None) -> list[int] | None:
    return None if s is None else [-1 if d is None else d for d in s]


def same_message(ours: str, theirs: str) -> bool:
    """Equal messages, allowing two known wordings (both listed in docs/ops/array_ops.md)."""
    # Eager TF names a Select node "Select"; the C++ class (and so our default node name) is Where3.
    ours = ours.replace("Inputs to operation Where3 of type", "Inputs to operation Select of type")
    if ours.startswith("Incompatible shapes:") and theirs.startswith("Dimensions must be equal"):
        return True  # the shared broadcast helper (kernels/_common.py) words build-time broadcasting errors so
    return ours == theirs


def assert_outcome(ours: Outcome, graph: Outcome, eager: Outcome, check_message: bool = False,
                   check_shapes: bool = True) -> None:
    """Ours must fail where TF's graph does, else match TF eager (and TF's static shapes)."""
    if graph.error:
        assert ours.error and ours.at_build, f"TF rejects at build ({graph.message!r}); ours: {ours}"
        if check_message:
            assert same_message(ours.message, graph.message), f"{ours.message!r} != TF's {graph.message!r}"
        return
    if ours.at_build:
        raise AssertionError(f"ours rejects at build ({ours.error}: {ours.message}); TF builds, eager: {eager}")
    if check_shapes and graph.shapes is not None:
        assert [_norm_shape(s) for s in ours.shapes] == [_norm_shape(s) for s in graph.shapes], \
            f"inferred shapes {ours.shapes} != TF's {graph.shapes}"
    if eager.error:
        assert ours.error == eager.error, f"TF: {eager.error}: {eager.message}; ours: {ours}"
        if check_message:
            assert same_message(ours.message, eager.message), f"{ours.message!r} != TF's {eager.message!r}"
        return
    assert ours.error is None, f"ours: {ours.error}: {ours.message}; TF gives values"
    assert len(ours.values) == len(eager.values)  # type: ignore[arg-type]
    for a, b in zip(ours.values, eager.values):  # type: ignore[arg-type]
        assert a.dtype == b.dtype, f"dtype {a.dtype} != TF's {b.dtype}"
        assert a.shape == b.shape, f"shape {a.shape} != TF's {b.shape}"
        if a.dtype.kind in "fV":  # float16/32/64, bfloat16, float8: same values and same zero signs
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            np.testing.assert_array_equal(a64, b64)
            np.testing.assert_array_equal(np.signbit(a64), np.signbit(b64))
        else:
            np.testing.assert_array_equal(a, b)


def differential(op: str, inputs: list, attrs: dict[str, Any], mode: Any, backend: str = "numpy",
                 check_message: bool = False, check_shapes: bool = True) -> Outcome:
    """Run ``op`` both ways and assert the contract; returns our outcome."""
    ours = run_ours(op, inputs, attrs, mode, backend)
    assert_outcome(ours, run_tf_graph(op, inputs, attrs, mode), run_tf_eager(op, inputs, attrs),
                   check_message=check_message, check_shapes=check_shapes)
    return ours


def strict_supports(*arrays: Any) -> bool:
    """Whether array_api_strict runs every dtype involved (no half, bfloat16, float8; strings run on the host)."""
    flat = [a for x in arrays for a in (x if isinstance(x, list) else [x])]
    return all(np.asarray(a).dtype.name in _STRICT for a in flat)


_STRICT = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
           "float64", "complex64", "complex128", "object"}


# -- golden values (tools/golden/array_ops.py writes them with TF; reading them needs no TF) -------------
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "array_ops.npz"
# Arrays NumPy cannot save portably are stored as bits: name -> (storage dtype, real dtype)
_BIT_STORED = {"bfloat16": (np.uint16, ml_dtypes.bfloat16), "float8_e5m2": (np.uint8, ml_dtypes.float8_e5m2),
               "float8_e4m3fn": (np.uint8, ml_dtypes.float8_e4m3fn)}


def encode_array(a: np.ndarray) -> tuple[np.ndarray, str]:
    """(storable array, dtype name) for one tensor value."""
    a = np.asarray(a)
    name = "string" if a.dtype == object else a.dtype.name
    if name == "string":
        return np.array(a.tolist() if a.size else [], dtype="S").reshape(a.shape), name
    if name in _BIT_STORED:
        return a.view(_BIT_STORED[name][0]), name
    return a, name


def decode_array(stored: np.ndarray, name: str) -> np.ndarray:
    if name == "string":
        return np.array(stored.tolist(), dtype=object).reshape(stored.shape) if stored.size else \
            np.zeros(stored.shape, dtype=object)
    if name in _BIT_STORED:
        return stored.view(_BIT_STORED[name][1])
    return stored


def encode_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: {"dtype": v.name} if isinstance(v, DataType) else v for k, v in attrs.items()}


def decode_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: DataType[v["dtype"]] if isinstance(v, dict) else v for k, v in attrs.items()}


@functools.cache
def _golden() -> tuple[Any, list[dict]] | None:
    if not GOLDEN.exists():
        return None
    data = np.load(GOLDEN)
    return data, json.loads(str(data["meta"]))


def golden_cases(*op_names: str) -> list:
    """The stored cases of these ops (a single skipped param when the file is missing)."""
    g = _golden()
    if g is None:
        return [pytest.param(None, id="missing", marks=pytest.mark.skip(
            reason=f"{GOLDEN.name} missing: run tools/golden/array_ops.py"))]
    return [pytest.param(c, id=c["id"]) for c in g[1] if c["op"] in op_names]


def _load(ref: Any) -> Any:
    data = _golden()[0]  # type: ignore[index]
    if isinstance(ref, list):
        return [_load(r) for r in ref]
    return decode_array(data[ref["key"]], ref["dtype"])


def _outcome(d: dict) -> Outcome:
    values = None if d.get("outputs") is None else [_load(r) for r in d["outputs"]]
    return Outcome(values=values, error=d.get("error"), message=d.get("message", ""),
                   at_build=d.get("at_build", False), shapes=d.get("shapes", []))


def run_golden(case: dict, backend: str) -> None:
    """Our const and feed runs of a stored case against TF's stored graph and eager outcomes."""
    inputs = _load(case["inputs"])
    if backend != "numpy" and not strict_supports(*inputs):
        pytest.skip("dtype not in array_api_strict (half, bfloat16, float8 are NumPy-only)")
    attrs = decode_attrs(case["attrs"])
    for mode in ("const", "feed"):
        ours = run_ours(case["op"], inputs, attrs, mode, backend)
        assert_outcome(ours, _outcome(case["graph"][mode]), _outcome(case["eager"]), check_message=True)


# -- dtype coverage: the value dtypes TF 2.21's CPU kernels take, per op (probed with tf.raw_ops) ----------
_BASE = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16",
         "float32", "float64", "complex64", "complex128", "string"]
_F8 = ["float8_e5m2", "float8_e4m3fn"]
_I4 = ["int4", "uint4"]
CPU_DTYPES: dict[str, list[str]] = {
    **{op: _BASE + _F8 + _I4 for op in ("Shape", "ShapeN", "Size", "Rank", "Reshape", "ExpandDims", "Squeeze",
                                         "Split")},
    **{op: _BASE + _F8 for op in ("Transpose", "ConcatV2", "Pack", "Unpack", "Slice", "StridedSlice", "GatherV2")},
    **{op: list(_BASE) for op in ("Fill", "ZerosLike", "Pad", "OneHot", "Select", "SelectV2")},
    "OnesLike": [t for t in _BASE if t != "string"],
    "Tile": [t for t in _BASE if t != "uint16"],
    "Range": ["float16", "bfloat16", "float32", "float64", "int32", "int64"],
}


def typed(rng: np.random.Generator, shape: tuple[int, ...], name: str) -> np.ndarray:
    """Small random values of any dtype name above (float8 and int4 included)."""
    if name == "string":
        return np.array([b"v%d" % i for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    dt = np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) and name not in np.sctypeDict \
        else np.dtype(name)
    if name in ("int4", "uint4") or dt.kind in "iu":
        return rng.integers(0, 7, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def dtype_case(op: str, name: str) -> tuple[list, dict[str, Any]]:
    """A small valid call of ``op`` on values of dtype ``name``."""
    rng = np.random.default_rng(0)
    x = typed(rng, (2, 3), name)
    i = lambda v: np.asarray(v, np.int32)  # noqa: E731
    scalar = typed(rng, (), name)
    return {
        "Shape": ([x], {}), "ShapeN": ([[x, x]], {}), "Size": ([x], {}), "Rank": ([x], {}),
        "Reshape": ([x, i([3, -1])], {}), "ExpandDims": ([x, i(1)], {}), "Squeeze": ([x[:1]], {}),
        "Split": ([i(1), x], {"num_split": 3}), "Transpose": ([x, i([1, 0])], {}),
        "ConcatV2": ([[x, x[:, :1]], i(1)], {}), "Pack": ([[x, x]], {"axis": 1}), "Unpack": ([x], {"num": 2}),
        "Slice": ([x, i([0, 1]), i([2, -1])], {}), "StridedSlice": ([x, i([1, -1]), i([0, 0]), i([-1, -2])], {}),
        "GatherV2": ([x, i([2, 0, 0]), i(1)], {}), "Fill": ([i([2, 2]), scalar], {}), "ZerosLike": ([x], {}),
        "OnesLike": ([x], {}), "Pad": ([x, i([[1, 0], [0, 2]])], {}),
        "OneHot": ([i([0, 2, -1]), i(3), scalar, typed(rng, (), name)], {}),
        "Select": ([np.array([True, False]), x, typed(rng, (2, 3), name)], {}),
        "SelectV2": ([np.array([True, False, True]), x, scalar], {}), "Tile": ([x, i([2, 1])], {}),
        "Range": ([np.asarray(v).astype(x.dtype) for v in (1, 4, 0.5 if x.dtype.kind == "f" or
                                                            x.dtype.kind == "V" else 1)], {}),
    }[op]


def dtype_params(*op_names: str) -> list:
    return [pytest.param(op, name, id=f"{op}-{name}") for op in op_names for name in CPU_DTYPES[op]]


def run_dtype_case(op: str, name: str, backend: str) -> None:
    """Our const and feed runs on one dtype against live TF (values, dtype, errors)."""
    inputs, attrs = dtype_case(op, name)
    if backend != "numpy" and not strict_supports(*inputs):
        pytest.skip(f"{name} is not an array_api_strict dtype")
    for mode in ("const", "feed"):
        differential(op, inputs, attrs, mode, backend, check_message=True)
