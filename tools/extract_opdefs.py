"""Extract TensorFlow op definitions and C++ API facts into tfops_py/_data/op_defs.json.gz.

Run with TensorFlow installed (the version pinned in pyproject's `test` extra):

    TF_ENABLE_ONEDNN_OPTS=0 python tools/extract_opdefs.py

Two sources, facts only (no documentation text is copied):

* the op registry (every OpDef): inputs, outputs, attrs with types, defaults,
  allowed values and minimums;
* the generated C++ headers shipped in the wheel
  (``tensorflow/include/tensorflow/cc/ops/*.h``): class names, typedef aliases,
  ``ops::internal`` membership, constructor parameter names and order, Attrs
  setter names and output member names.

Each C++ class is matched to the graph op it builds by signature: the op with the
class's own name when its inputs and outputs agree, otherwise the op whose
inputs, required attrs, optional attrs and outputs are exactly the class's.
"""
from __future__ import annotations

import difflib
import glob
import gzip
import json
import os
import re
import sys

os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import op_def_pb2, types_pb2  # noqa: E402
from tensorflow.python.client import pywrap_tf_session as c_api  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "tfops_py", "_data", "op_defs.json.gz")


# ----------------------------------------------------------------------------- registry
def _dtype_name(enum: int) -> str:
    return types_pb2.DataType.Name(enum)


def _f32(value: float) -> float:
    """The shortest decimal that round-trips the float32 the registry holds (1e-4, not 9.9999997e-05)."""
    return float(str(np.float32(value)))


def _shape_value(shape) -> dict:
    if shape.unknown_rank:
        return {"unknown_rank": True}
    return {"dims": [d.size for d in shape.dim]}


def _tensor_value(proto) -> dict:
    arr = tf.make_ndarray(proto)
    return {"dtype": _dtype_name(proto.dtype), "shape": list(arr.shape), "values": arr.ravel().tolist()}


def _attr_value(v, attr_type: str):
    """AttrValue proto -> JSON value, interpreted with the attr's declared type."""
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "list":
        lst = v.list
        if attr_type == "list(string)":
            return [s.decode("utf-8", "replace") for s in lst.s]
        if attr_type == "list(int)":
            return list(lst.i)
        if attr_type == "list(float)":
            return [_f32(f) for f in lst.f]
        if attr_type == "list(bool)":
            return list(lst.b)
        if attr_type == "list(type)":
            return [_dtype_name(t) for t in lst.type]
        if attr_type == "list(shape)":
            return [_shape_value(s) for s in lst.shape]
        if attr_type == "list(tensor)":
            return [_tensor_value(t) for t in lst.tensor]
        if attr_type == "list(func)":
            return [{"name": f.name} for f in lst.func]
        return []
    if kind == "s":
        return v.s.decode("utf-8", "replace")
    if kind == "f":
        return _f32(v.f)
    if kind in ("i", "b"):
        return getattr(v, kind)
    if kind == "type":
        return _dtype_name(v.type)
    if kind == "shape":
        return _shape_value(v.shape)
    if kind == "tensor":
        return _tensor_value(v.tensor)
    if kind == "func":
        return {"name": v.func.name}
    raise ValueError(f"unhandled AttrValue kind {kind}")


def _arg(a) -> dict:
    d = {"name": a.name}
    if a.type:
        d["type"] = _dtype_name(a.type)
    for key in ("type_attr", "number_attr", "type_list_attr"):
        if getattr(a, key):
            d[key] = getattr(a, key)
    if a.is_ref:
        d["is_ref"] = True
    return d


def _op(o) -> dict:
    attrs = []
    for a in o.attr:
        d = {"name": a.name, "type": a.type}
        if a.HasField("default_value"):
            d["default"] = _attr_value(a.default_value, a.type)
        if a.HasField("allowed_values"):
            d["allowed"] = _attr_value(a.allowed_values, a.type if a.type.startswith("list") else f"list({a.type})")
        if a.has_minimum:
            d["minimum"] = a.minimum
        attrs.append(d)
    d = {
        "name": o.name,
        "inputs": [_arg(a) for a in o.input_arg],
        "outputs": [_arg(a) for a in o.output_arg],
        "attrs": attrs,
    }
    if o.is_stateful:
        d["is_stateful"] = True
    if o.allows_uninitialized_input:
        d["allows_uninitialized_input"] = True
    if o.HasField("deprecation"):
        d["deprecated"] = o.deprecation.version
    return d


def registry() -> dict[str, dict]:
    buf = c_api.TF_GetAllOpList()
    ol = op_def_pb2.OpList()
    ol.ParseFromString(c_api.TF_GetBuffer(buf))
    return {o.name: _op(o) for o in ol.op}


# ----------------------------------------------------------------------------- headers
_CLASS_RE = re.compile(r"^class (\w+) \{\n(.*?)^\};", re.M | re.S)
_TYPEDEF_RE = re.compile(r"^typedef (\w+) (\w+);", re.M)
_SETTER_RE = re.compile(r"TF_MUST_USE_RESULT Attrs (\w+)\((.*?) x\) \{\s*Attrs ret = \*this;\s*ret\.(\w+)_ = x;", re.S)
_FIELD_RE = re.compile(r"^    [^\n(]*? (\w+)_ = (.*?);$", re.M)
_STORAGE_RE = re.compile(r"Default_(\w+)\(\) \{\s*static const [^\n]*? kStorage\[\] = \{(.*?)\};", re.S)
_OUTPUT_RE = re.compile(r"^  ::tensorflow::(Output|OutputList) (\w+);", re.M)


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*", "", text)


def _ctor_params(cls: str, body: str) -> list[tuple[str, str]]:
    """Parameters of the constructor without Attrs: [(c++ type, name)], scope excluded."""
    ctors = re.findall(rf"^  {cls}\((.*?)\);", body, re.M | re.S)
    short = min(ctors, key=len)
    params = [" ".join(p.split()) for p in short.split(",")]
    out = []
    for p in params[1:]:  # params[0] is the scope
        ptype, name = p.rsplit(" ", 1)
        out.append((ptype, name))
    return out


def parse_header(path: str) -> tuple[list[dict], dict[str, list[str]]]:
    text = _strip_comments(open(path).read())
    internal = path.endswith("_internal.h")
    group = os.path.basename(path)[: -len(".h")].replace("_internal", "")
    classes = []
    for m in _CLASS_RE.finditer(text):
        cls, body = m.group(1), m.group(2)
        params = _ctor_params(cls, body)
        defaults = dict(_FIELD_RE.findall(body))
        storage = dict(_STORAGE_RE.findall(body))
        setters = []
        for s, t, f in _SETTER_RE.findall(body):
            default = defaults[f].strip()
            m = re.fullmatch(r"Default_(\w+)\(\)", default)
            if m:
                default = "{" + storage[m.group(1)] + "}"
            setters.append({"setter": s, "cpp_type": " ".join(t.split()), "field": f, "cpp_default": default})
        outputs = [{"member": n, "is_list": k == "OutputList"} for k, n in _OUTPUT_RE.findall(body)]
        classes.append({
            "class": cls,
            "group": group,
            "internal": internal,
            "params": [{"name": n, "cpp_type": t} for t, n in params],
            "setters": setters,
            "outputs": outputs,
        })
    aliases: dict[str, list[str]] = {}
    for target, alias in _TYPEDEF_RE.findall(text):
        aliases.setdefault(target, []).append(alias)
    return classes, aliases


def _base(name: str) -> str:
    return name[:-1] if name.endswith("_") else name


def _inferred_attrs(op: dict) -> set[str]:
    out = set()
    for a in op["inputs"]:
        for key in ("type_attr", "number_attr", "type_list_attr"):
            if key in a:
                out.add(a[key])
    return out


def _signature_matches(cls: dict, op: dict, strict: bool) -> dict | None:
    """Return the class->op argument mapping if cls wraps op, else None.

    Strict matching requires every name to agree.  Loose matching (only tried for
    the op that shares the class's name) accepts ApiDef renames (``dim`` -> ``axis``)
    as long as counts, positions and list-ness agree.
    """
    inferred = _inferred_attrs(op)
    required = [a for a in op["attrs"] if a["name"] not in inferred and "default" not in a]
    optional = [a for a in op["attrs"] if a["name"] not in inferred and "default" in a]
    n_in = len(op["inputs"])
    params = cls["params"]
    if len(params) != n_in + len(required) or len(cls["outputs"]) != len(op["outputs"]):
        return None
    if len(cls["setters"]) != len(optional):
        return None

    def same(cpp_name: str, op_name: str) -> bool:
        return cpp_name == op_name or _base(cpp_name) == op_name

    op_in = {a["name"]: a for a in op["inputs"]}
    mapping_inputs = []
    # cc_op_gen may reorder inputs (ApiDef arg_order); names decide the mapping when they agree.
    for pos, p in enumerate(params[:n_in]):
        a = op_in.get(_base(p["name"])) or op_in.get(p["name"])
        if a is None:
            if strict:
                return None
            a = op["inputs"][pos]
        is_list = "number_attr" in a or "type_list_attr" in a
        if is_list != (p["cpp_type"] == "::tensorflow::InputList"):
            return None
        mapping_inputs.append(a["name"])
    if len(set(mapping_inputs)) != n_in:
        return None
    renames = {}
    for p, a in zip(params[n_in:], required):
        if not same(p["name"], a["name"]):
            if strict:
                return None
        renames[a["name"]] = p["name"]
    fields = [s["field"] for s in cls["setters"]]
    setter_attrs = fields
    if set(fields) != {a["name"] for a in optional}:
        if strict:
            return None
        # positional fallback for renamed optional attrs (setters follow OpDef attr order)
        setter_attrs = [a["name"] for a in optional]
    for o, a in zip(cls["outputs"], op["outputs"]):
        if not same(o["member"], a["name"]) and strict:
            return None
        if o["is_list"] != ("number_attr" in a or "type_list_attr" in a):
            return None
    return {"inputs": mapping_inputs, "required_attrs": [a["name"] for a in required],
            "setter_attrs": setter_attrs}


def _names_in_common(cls: dict, op: dict) -> int:
    ours = {_base(p["name"]) for p in cls["params"]} | {_base(o["member"]) for o in cls["outputs"]}
    theirs = {a["name"] for a in op["inputs"] + op["outputs"] + op["attrs"]}
    return len(ours & theirs)


def _candidate_ops(cls: dict, ops: dict[str, dict], class_names: set[str], strict: bool) -> list[str]:
    """Ops other classes do not claim by name, that cls could wrap; best name first.

    Several ops share a signature (every unary op looks alike), so the op whose
    name is closest to the class name wins: Negate -> Neg, Concat -> ConcatV2.
    """
    hits = [n for n, op in ops.items()
            if n not in class_names and not n.startswith("_") and "deprecated" not in op
            and _signature_matches(cls, op, strict=strict)]
    key = lambda n: (_names_in_common(cls, ops[n]),
                     difflib.SequenceMatcher(None, cls["class"], n).ratio())
    return sorted(hits, key=key, reverse=True)


def match_classes(classes: list[dict], ops: dict[str, dict]) -> tuple[list, list]:
    class_names = {c["class"] for c in classes}
    loose = []
    for cls in classes:
        own = ops.get(cls["class"])
        if own is not None and "deprecated" not in own and _signature_matches(cls, own, strict=True):
            # TF's ApiDefs hide the old ref-typed op (FIFOQueue, Variable ...) and give its plain name to the
            # newest version with the same arguments (FIFOQueueV2, VariableV2): prefer that version.
            newer = [f"{cls['class']}V{k}" for k in range(9, 1, -1)]
            name = next((n for n in newer if n in ops and n not in class_names
                         and _signature_matches(cls, ops[n], strict=True)), cls["class"])
        else:
            hits = _candidate_ops(cls, ops, class_names, strict=True)
            if not hits and own is not None and _signature_matches(cls, own, strict=False):
                hits = [cls["class"]]
                loose.append(cls["class"])
            if not hits:
                hits = _candidate_ops(cls, ops, class_names, strict=False)
                loose.append(f"{cls['class']}->{hits[:1]}")
            if not hits:
                raise SystemExit(f"no op matches C++ class {cls['class']}")
            name = hits[0]
        m = _signature_matches(cls, ops[name], strict=False)
        cls["op"] = name
        cls["input_order"] = m["inputs"]
        cls["required_attrs"] = m["required_attrs"]
        for s, attr in zip(cls["setters"], m["setter_attrs"]):
            s["attr"] = attr
    return loose


def main() -> None:
    ops = registry()
    include = os.path.join(os.path.dirname(tf.__file__), "include", "tensorflow", "cc", "ops")
    classes, aliases = [], {}
    for path in sorted(glob.glob(os.path.join(include, "*.h"))):
        c, a = parse_header(path)
        classes += c
        for k, v in a.items():
            aliases.setdefault(k, []).extend(v)
    loose = match_classes(classes, ops)
    for cls in classes:
        cls["aliases"] = aliases.get(cls["class"], [])
    data = {
        "tensorflow_version": tf.__version__,
        "ops": ops,
        "cc_classes": classes,
    }
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(data, f, sort_keys=True, separators=(",", ":"))
    renamed = [(c["class"], c["op"]) for c in classes if c["class"] != c["op"]]
    print(f"TF {tf.__version__}: {len(ops)} ops, {len(classes)} C++ classes "
          f"({sum(c['internal'] for c in classes)} internal); renamed: {renamed}; "
          f"matched with argument renames: {loose}", file=sys.stderr)


if __name__ == "__main__":
    main()
