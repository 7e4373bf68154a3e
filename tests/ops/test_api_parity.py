"""Meta-test: every C++ op class of TF's headers exists here with the same API.

Where TensorFlow is installed the headers are parsed afresh from the wheel, so the
test checks our classes against TF itself, not against our own data file.
"""
from __future__ import annotations

import glob
import importlib.util
import inspect
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tfops_py import ops
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.op_def import cc_classes, tensorflow_version
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.ops._wrapper import py_name

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _header_classes() -> tuple[list[dict], str]:
    """Classes parsed from the installed TF wheel's headers, else from our data file."""
    spec = importlib.util.find_spec("tensorflow")
    if spec is not None and spec.origin:
        include = os.path.join(os.path.dirname(spec.origin), "include", "tensorflow", "cc", "ops")
        if os.path.isdir(include):
            sys.path.insert(0, os.path.join(ROOT, "tools"))
            import extract_opdefs  # type: ignore[import-not-found]

            classes = []
            for path in sorted(glob.glob(os.path.join(include, "*.h"))):
                found, aliases = extract_opdefs.parse_header(path)
                for c in found:
                    c["aliases"] = aliases.get(c["class"], [])
                classes += found
            return classes, "TensorFlow headers"
    return [{
        "class": c.class_name, "internal": c.internal, "aliases": list(c.aliases),
        "params": [{"name": p.name} for p in c.params],
        "setters": [{"setter": s.setter, "field": s.field, "cpp_default": s.cpp_default} for s in c.setters],
        "outputs": [{"member": o.member, "is_list": o.is_list} for o in c.outputs],
    } for c in cc_classes()], "op definition data"


def _parse_default(text: str):
    """A C++ default from a header -> comparable Python value (None = not comparable)."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    if text.startswith("DT_"):
        return DataType[text]
    if "PartialTensorShape()" in text:
        return PartialTensorShape()
    if text.startswith("{"):
        inner = text[1:-1].strip()
        if not inner:
            return []
        return [_parse_default(x) for x in inner.split(",")]
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"-?[\d.e+-]+f?", text):
        return float(np.float32(text.rstrip("f")))
    return None


def _same(ours, theirs) -> bool:
    if theirs is None:
        return True  # tensor-valued defaults are checked by the op definitions instead
    if isinstance(ours, PartialTensorShape):
        return ours == theirs  # ``{}`` in C++ is the scalar shape
    if isinstance(theirs, list):
        return isinstance(ours, list) and len(ours) == len(theirs) and all(_same(a, b) for a, b in zip(ours, theirs))
    if isinstance(theirs, float):
        return float(np.float32(ours)) == theirs
    return ours == theirs


def _problems(c: dict) -> list[str]:
    name = c["class"]
    try:
        cls = getattr(ops.internal if c["internal"] else ops, name)
    except AttributeError:
        return [f"{name}: missing"]
    out = []
    if c["internal"] and getattr(ops, name, None) is not cls:
        out.append(f"{name}: internal class not reachable as ops.{name}")
    for alias in c["aliases"]:
        if getattr(ops, alias, None) is not cls:
            out.append(f"{name}: alias {alias} missing")
    params = list(inspect.signature(cls).parameters)
    expected = ["scope"] + [py_name(p["name"]) for p in c["params"]] + (["attrs"] if c["setters"] else [])
    if params[: len(expected)] != expected:
        out.append(f"{name}: parameters {params} != {expected}")
    attrs = cls.Attrs()
    for s in c["setters"]:
        static = getattr(cls, s["setter"], None)
        method = getattr(attrs, s["setter"], None)
        if static is None or method is None:
            out.append(f"{name}: setter {s['setter']} missing")
            continue
        ours = getattr(attrs, s["field"] + "_")
        if not _same(ours, _parse_default(s["cpp_default"])):
            out.append(f"{name}.{s['setter']}: default {ours!r} != C++ {s['cpp_default']}")
    inst = object.__new__(cls)
    inst._set_outputs(None)
    for o in c["outputs"]:
        member = getattr(inst, py_name(o["member"]), None)
        if member is None or isinstance(member, list) != o["is_list"]:
            out.append(f"{name}: output member {o['member']} missing or wrong kind")
    return out


def test_every_cpp_op_class_has_the_same_api():
    classes, source = _header_classes()
    problems = {c["class"]: _problems(c) for c in classes}
    bad = {k: v for k, v in problems.items() if v}
    ok = len(classes) - len(bad)
    print(f"\nC++ API parity ({source}, TF {tensorflow_version()}): {ok}/{len(classes)} classes "
          f"= {100.0 * ok / len(classes):.1f}%")
    assert len(classes) > 1000
    assert not bad, "\n".join(p for v in list(bad.values())[:30] for p in v)


def test_attrs_setters_chain_and_fields_read_back():
    a = ops.FusedBatchNormGrad.Epsilon(1e-3).DataFormat("NCHW")
    assert isinstance(a, ops.FusedBatchNormGrad.Attrs)
    assert a.epsilon_ == 1e-3 and a.data_format_ == "NCHW" and a.is_training_ is True
    b = a.IsTraining(False)
    assert a.is_training_ is True and b.is_training_ is False  # setters return copies
    a2 = ops.FusedBatchNormGrad.Attrs()
    a2.data_format_ = "NCHW"  # C++ grad code writes fields directly
    assert a2.data_format_ == "NCHW"


def test_renamed_classes_and_internal_namespace():
    assert ops.Concat._op_def.name == "ConcatV2"
    assert ops.Stack._op_def.name == "Pack"
    assert ops.Where3._op_def.name == "Select"
    assert ops.ReduceSum is ops.Sum and ops.Mul is ops.Multiply
    assert ops.internal.FractionalAvgPoolGrad is ops.FractionalAvgPoolGrad
    with pytest.raises(AttributeError):
        _ = ops.internal.MatMul  # public classes are not in ops::internal


def test_type_stub_is_up_to_date():
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_op_stubs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
