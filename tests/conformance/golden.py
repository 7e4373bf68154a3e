"""The one golden-file format: schema, writer and loader (tools/conformance/gen_golden.py writes, tests read).

One file per family, ``tests/conformance/golden/<family>.npz``:

* ``meta``: a JSON string ``{"format": 1, "family", "tensorflow": version, "cases": [...]}``;
* ``data/<dtype>``: every array of one dtype, flattened and concatenated (few zip entries compress well).
  bfloat16 and float8 arrays are stored as their bits (uint16/uint8), 4-bit integers as int8/uint8,
  strings as length-prefixed bytes (a uint32 little-endian length, then the bytes) in ``data/string``.

An array is referenced as ``[dtype, shape, offset]`` (offset in elements, in bytes for strings), or (a
large input made by a formula, :class:`tfops_py.conformance.Formula`) as ``{"formula": "module:function",
"args": [...], "dtype", "shape"}``.  A case::

    {"id", "op", "attrs", "inputs": [array | [array, ...] for a list input], "compare",
     "eager": {"outputs": [array, ...]} | {"error": [class, message]},         # TF's kernel (or a reference)
     "graph": {"const": {"shapes": [dims | null, ...]} | {"error": [class, message]},  # TF's graph
               "feed":  {...}},                                                 # construction, both modes
     "note"?: why the stored value is not TF's own output, "seed"?: int, "source": "generated" | "hand" |
     "builder" | "graph", "inputs_named"?: [name, ...] (graph cases),
     "threads"?: TF's intra-op thread count, for results that depend on it (ours run with the same),
     "checked_outputs"?: [index, ...] (only these outputs are stored and compared)}

``const`` builds every input as a Const (shape functions see values), ``feed`` as a Placeholder of
unknown shape (only the kernel sees them).  Attr values are JSON with DataTypes as ``"DT_*"`` names,
shapes as ``{"shape": dims | null}`` and tensors as ``{"tensor": array}``.
"""
from __future__ import annotations

import functools
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.conformance import Formula
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.op_def import get_op_def, has_op_def
from tfops_py.framework.tensor_shape import PartialTensorShape

FORMAT = 1
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
# dtype name -> (storage dtype, real dtype) for arrays NumPy cannot save portably
_BITS = {"bfloat16": (np.uint16, ml_dtypes.bfloat16), "float8_e5m2": (np.uint8, ml_dtypes.float8_e5m2),
         "float8_e4m3fn": (np.uint8, ml_dtypes.float8_e4m3fn), "float8_e4m3fnuz": (np.uint8, ml_dtypes.float8_e4m3fnuz),
         "float8_e4m3b11fnuz": (np.uint8, ml_dtypes.float8_e4m3b11fnuz),
         "float8_e5m2fnuz": (np.uint8, ml_dtypes.float8_e5m2fnuz), "int4": (np.int8, ml_dtypes.int4),
         "uint4": (np.uint8, ml_dtypes.uint4), "int2": (np.int8, ml_dtypes.int2), "uint2": (np.uint8, ml_dtypes.uint2)}
_LEN = struct.Struct("<I")


def dtype_name(a: np.ndarray) -> str:
    """The name an array's dtype is stored under (``string`` for object arrays of bytes)."""
    return "string" if a.dtype == object else a.dtype.name


def path(family: str) -> Path:
    return GOLDEN_DIR / f"{family}.npz"


# -- writing -----------------------------------------------------------------------------------------
class GoldenWriter:
    """Collects cases (with their arrays) and writes one family file."""

    def __init__(self, family: str):
        self.family = family
        self.chunks: dict[str, list[np.ndarray]] = {}
        self.sizes: dict[str, int] = {}
        self.cases: list[dict[str, Any]] = []

    def array(self, value: Any) -> Any:
        """Store an array; returns its reference ``[dtype, shape, offset]`` (a formula's: its recipe)."""
        if isinstance(value, Formula):
            a = value.value()
            return {"formula": value.function, "args": list(value.args), "dtype": dtype_name(a), "shape": list(a.shape)}
        a = np.asarray(value) if not isinstance(value, np.ndarray) else value
        name = dtype_name(a)
        if name == "string":
            flat = np.frombuffer(b"".join(_LEN.pack(len(v)) + bytes(v) for v in a.reshape(-1)), np.uint8)
        else:
            storage = _BITS.get(name, (None,))[0]
            flat = (a.view(storage) if storage is not None else a).reshape(-1)
        offset = self.sizes.get(name, 0)
        self.chunks.setdefault(name, []).append(flat)
        self.sizes[name] = offset + flat.size
        return [name, list(a.shape), offset]

    def arrays(self, value: Any) -> Any:
        """``array`` for one array or a list of arrays (a list input)."""
        return [self.array(v) for v in value] if isinstance(value, list) else self.array(value)

    def add(self, case: dict[str, Any]) -> None:
        self.cases.append(case)

    def save(self, tensorflow: str, out: Path | None = None) -> Path:
        out = out or path(self.family)
        out.parent.mkdir(parents=True, exist_ok=True)
        data = {f"data/{name}": np.concatenate(parts) for name, parts in sorted(self.chunks.items())}
        meta = {"format": FORMAT, "family": self.family, "tensorflow": tensorflow, "cases": self.cases}
        data["meta"] = np.array(json.dumps(meta, separators=(",", ":")))
        np.savez_compressed(out, **data)
        return out


def encode_attrs(op: str | None, attrs: dict[str, Any], writer: GoldenWriter) -> dict[str, Any]:
    return {k: _encode_attr(v, writer) for k, v in attrs.items()}


def _encode_attr(v: Any, writer: GoldenWriter) -> Any:
    if isinstance(v, DataType):
        return v.name
    if isinstance(v, PartialTensorShape):
        return {"shape": v.as_list()}
    if isinstance(v, np.ndarray):
        return {"tensor": writer.array(v)}
    if isinstance(v, (list, tuple)):
        return [_encode_attr(x, writer) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


# -- reading -----------------------------------------------------------------------------------------
class GoldenFile:
    """One family's cases; arrays are decoded on access."""

    def __init__(self, family: str, file: Path):
        with np.load(file) as npz:
            self.data = {k[5:]: npz[k] for k in npz.files if k.startswith("data/")}
            meta = json.loads(str(npz["meta"]))
        if meta.get("format") != FORMAT:
            raise ValueError(f"{file}: golden format {meta.get('format')} (this loader reads {FORMAT})")
        self.family = family
        self.tensorflow: str = meta["tensorflow"]
        self.cases = [GoldenCase(self, raw) for raw in meta["cases"]]

    def of(self, op: str) -> list[GoldenCase]:
        return [c for c in self.cases if c.op == op]

    def ops(self) -> list[str]:
        return sorted({c.op for c in self.cases})

    def array(self, ref: Any) -> np.ndarray:
        if isinstance(ref, dict):
            return _formula(ref["formula"], tuple(ref["args"]))
        name, shape, offset = ref
        n = int(np.prod(shape, dtype=np.int64))
        if name == "string":
            return _strings(self.data["string"], offset, n).reshape(shape)
        flat = self.data[name][offset:offset + n]
        real = _BITS.get(name)
        return (flat.view(real[1]) if real is not None else flat).reshape(shape)


@functools.lru_cache(maxsize=4)
def _formula(function: str, args: tuple) -> np.ndarray:
    out = Formula(function=function, args=args).value()
    out.flags.writeable = False
    return out


def _strings(buf: np.ndarray, offset: int, n: int) -> np.ndarray:
    raw = buf.tobytes()
    items, pos = [], offset
    for _ in range(n):
        (k,) = _LEN.unpack_from(raw, pos)
        items.append(raw[pos + 4:pos + 4 + k])
        pos += 4 + k
    out = np.empty(n, dtype=object)
    out[:] = items
    return out


class Outcome:
    """What one run produced: output values, or an error (class name, message, at build time or not);
    plus the build-time output shapes (None per output of unknown rank)."""

    __slots__ = ("values", "error", "message", "at_build", "shapes")

    def __init__(self, values: list[np.ndarray] | None = None, error: str | None = None, message: str = "",
                 at_build: bool = False, shapes: list[list[int] | None] | None = None):
        self.values, self.error, self.message, self.at_build = values, error, message, at_build
        self.shapes = shapes

    def __repr__(self) -> str:
        if self.error:
            return f"<{self.error}{' at build' if self.at_build else ''}: {self.message}>"
        vals = "" if self.values is None else ", ".join(f"{dtype_name(v)}{list(v.shape)}" for v in self.values)
        return f"<values [{vals}] shapes {self.shapes}>"


class GoldenCase:
    """One stored case (see the module docstring for its fields)."""

    def __init__(self, file: GoldenFile, raw: dict[str, Any]):
        self.file, self.raw = file, raw
        self.id: str = raw["id"]
        self.op: str = raw["op"]
        self.compare: str = raw.get("compare", "ew")
        self.note: str | None = raw.get("note")
        self.source: str = raw.get("source", "generated")

    def __repr__(self) -> str:
        return f"<golden {self.file.family}:{self.id}>"

    @functools.cached_property
    def attrs(self) -> dict[str, Any]:
        types = get_op_def(self.op).attr_map if has_op_def(self.op) else {}
        return {k: _decode_attr(types[k].type if k in types else "", v, self.file)
                for k, v in self.raw.get("attrs", {}).items()}

    @property
    def inputs(self) -> list[Any]:
        return [[self.file.array(r) for r in ref] if _is_list_input(ref) else self.file.array(ref)
                for ref in self.raw["inputs"]]

    @functools.cached_property
    def dtypes(self) -> frozenset[str]:
        """Names of every dtype among the inputs and expected outputs."""
        return frozenset(r["dtype"] if isinstance(r, dict) else r[0]
                         for r in _refs(self.raw["inputs"]) + _refs(self.raw["eager"].get("outputs", [])))

    @property
    def eager(self) -> Outcome:
        e = self.raw["eager"]
        if "error" in e:
            return Outcome(error=e["error"][0], message=e["error"][1])
        return Outcome(values=[self.file.array(r) for r in e["outputs"]])

    def graph(self, mode: str) -> Outcome | None:
        """TF's graph-construction outcome in ``mode`` (``const``/``feed``); None if not recorded."""
        g = self.raw.get("graph", {}).get(mode)
        if g is None:
            return None
        if "error" in g:
            return Outcome(error=g["error"][0], message=g["error"][1], at_build=True)
        return Outcome(shapes=g["shapes"])


def _is_list_input(ref: Any) -> bool:
    """Whether a stored input is a list input (an array's own ref is never empty; an empty list input is)."""
    return isinstance(ref, list) and (not ref or isinstance(ref[0], (list, dict)))


def _refs(spec: list) -> list[Any]:
    out: list[Any] = []
    for r in spec:
        if _is_list_input(r):
            out.extend(r)
        else:
            out.append(r)
    return out


def _decode_attr(attr_type: str, v: Any, file: GoldenFile) -> Any:
    if isinstance(v, dict) and "shape" in v:
        return PartialTensorShape(v["shape"])
    if isinstance(v, dict) and "tensor" in v:
        return file.array(v["tensor"])
    if attr_type in ("type", "list(type)") or (isinstance(v, str) and v.startswith("DT_") and not attr_type):
        return [as_datatype(x) for x in v] if isinstance(v, list) else as_datatype(v)
    return v


@functools.cache
def load(family: str) -> GoldenFile | None:
    """The family's golden file (None when it has not been generated)."""
    file = path(family)
    return GoldenFile(family, file) if file.exists() else None


def all_cases(family: str) -> Iterator[GoldenCase]:
    g = load(family)
    yield from (g.cases if g is not None else ())
