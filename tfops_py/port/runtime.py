"""Python spellings of the C++ idioms TF client code uses that have no tfops_py counterpart.

Code written by ``tfops-port`` imports from here: string formatting (``StrCat``, ``printf``),
``CHECK_*`` and ``LOG``, C integer division, Tensor construction and element types (tensors are
NumPy arrays in tfops_py), ``thread::ThreadPool``, ``random::New64``, ``sscanf``, NodeDef access.
Everything here is small and behaves as the C++ it replaces; nothing needs TensorFlow.
"""
from __future__ import annotations

import concurrent.futures
import logging
import os
import random as _random
import re
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tfops_py.errors import InvalidArgumentError, NotFoundError
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.status import Status

_log = logging.getLogger("tfops_py.port")

# -- strings ------------------------------------------------------------------------------------------


def _piece(x: Any) -> str:
    if isinstance(x, bytes):
        return x.decode("utf-8", "replace")
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (float, np.floating)):
        return format(float(x), ".6g")
    if isinstance(x, DataType):
        return x.name[3:].lower() if x.name.startswith("DT_") else x.name
    return str(x)


def StrCat(*parts: Any) -> str:
    """``strings::StrCat`` / ``absl::StrCat`` and ``<<`` streams: floats with 6 significant digits, bools as 1/0."""
    return "".join(_piece(p) for p in parts)


def StrAppend(dest: str, *parts: Any) -> str:
    """``StrAppend(&s, ...)``: the new value of ``s``."""
    return dest + StrCat(*parts)


_C_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|L|q|j|z|t)?([diouxXeEfFgGcsp%])")


def Printf(fmt: str, *args: Any) -> str:
    """``strings::Printf`` / ``absl::StrFormat``: C printf formatting."""
    values = [a.decode("utf-8", "replace") if isinstance(a, bytes) else a for a in args]

    def spec(m: re.Match) -> str:
        flags, width, precision, _length, conv = m.groups()
        if conv == "%":
            return "%%"
        conv = {"i": "d", "u": "d", "p": "s", "F": "f"}.get(conv, conv)
        return "%" + flags + (width or "") + ("." + precision if precision is not None else "") + conv

    py_fmt = _C_SPEC.sub(spec, fmt)
    converted = [int(v) if isinstance(v, (np.integer, np.bool_)) else v for v in values]
    return py_fmt % tuple(converted)


def printf(fmt: str, *args: Any) -> int:
    """``printf``: writes to standard output; returns the number of characters written."""
    text = Printf(fmt, *args)
    sys.stdout.write(text)
    return len(text)


def fprintf(stream: Any, fmt: str, *args: Any) -> int:
    text = Printf(fmt, *args)
    stream.write(text)
    return len(text)


def sscanf(text: str | None, fmt: str, *current: Any) -> tuple:
    """``n = sscanf(s, fmt, &a, &b)``: returns ``(n, a, b)``; values not converted keep ``current``."""
    values = list(current)
    pos, count = 0, 0
    s = str(text) if text is not None else ""
    for m in re.finditer(r"%(\d*)(l|ll|h)?([dfsceg])|(\s+)|([^%\s]+)", fmt):
        if m.group(4):
            while pos < len(s) and s[pos].isspace():
                pos += 1
            continue
        if m.group(5):
            if not s.startswith(m.group(5), pos):
                break
            pos += len(m.group(5))
            continue
        conv = m.group(3)
        if conv != "c":
            while pos < len(s) and s[pos].isspace():
                pos += 1
        if pos >= len(s):
            break
        pattern = {"d": r"[-+]?\d+", "f": r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?",
                   "e": r"[-+]?\d*\.?\d+([eE][-+]?\d+)?", "g": r"[-+]?\d*\.?\d+([eE][-+]?\d+)?", "s": r"\S+",
                   "c": r"."}[conv]
        hit = re.compile(pattern, re.S).match(s, pos)
        if hit is None:
            break
        token = hit.group(0)
        if count < len(values):
            values[count] = int(token) if conv == "d" else float(token) if conv in "feg" else token
        count += 1
        pos = hit.end()
    return (count, *values)


class StringPiece:
    """``StringPiece`` / ``absl::string_view`` passed by value and consumed (``arg.Consume("--x")``)."""

    __slots__ = ("_s",)

    def __init__(self, s: Any = ""):
        self._s = s._s if isinstance(s, StringPiece) else ("" if s is None else str(s))

    def Consume(self, prefix: Any) -> bool:
        """Drop ``prefix`` from the front if it is there; True if it was."""
        p = str(prefix)
        if self._s.startswith(p):
            self._s = self._s[len(p):]
            return True
        return False

    def remove_prefix(self, n: int) -> None:
        self._s = self._s[n:]

    def remove_suffix(self, n: int) -> None:
        self._s = self._s[: len(self._s) - n]

    def data(self) -> str:
        return self._s

    def empty(self) -> bool:
        return not self._s

    def size(self) -> int:
        return len(self._s)

    def __len__(self) -> int:
        return len(self._s)

    def __str__(self) -> str:
        return self._s

    def __repr__(self) -> str:
        return f"StringPiece({self._s!r})"

    def __eq__(self, other: object) -> bool:
        return self._s == (other._s if isinstance(other, StringPiece) else other)

    def __hash__(self) -> int:
        return hash(self._s)


def to_string(value: Any) -> str:
    """``std::to_string``: a bool is ``1``/``0`` and floating point is printed as ``%f`` (``1.500000``)."""
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        return f"{value:f}"
    return str(int(value))


def substr(s: str, pos: int = 0, n: int | None = None) -> str:
    if pos > len(s):
        raise IndexError(f"substr: position {pos} is past the end of a string of length {len(s)}")
    return s[pos:] if n is None or n < 0 else s[pos:pos + n]


def resize(values: list, n: int, fill: Any = None) -> None:
    """``std::vector::resize``."""
    del values[n:]
    values.extend(fill for _ in range(n - len(values)))


# -- checks and logging ----------------------------------------------------------------------------------


def _fail(what: str, message: Sequence[Any]) -> None:
    raise AssertionError(f"Check failed: {what}" + (f" {StrCat(*message)}" if message else ""))


def CHECK(condition: Any, *message: Any) -> None:
    """TF's ``CHECK`` aborts the process; here it raises AssertionError."""
    if not condition:
        _fail("condition", message)


def _compare(op: str, test: Callable[[Any, Any], bool]) -> Callable[..., None]:
    def check(a: Any, b: Any, *message: Any) -> None:
        if not test(a, b):
            _fail(f"{a!r} {op} {b!r}", message)

    check.__name__ = {"==": "CHECK_EQ", "!=": "CHECK_NE", "<": "CHECK_LT", "<=": "CHECK_LE", ">": "CHECK_GT",
                      ">=": "CHECK_GE"}[op]
    return check


CHECK_EQ = _compare("==", lambda a, b: bool(a == b))
CHECK_NE = _compare("!=", lambda a, b: bool(a != b))
CHECK_LT = _compare("<", lambda a, b: bool(a < b))
CHECK_LE = _compare("<=", lambda a, b: bool(a <= b))
CHECK_GT = _compare(">", lambda a, b: bool(a > b))
CHECK_GE = _compare(">=", lambda a, b: bool(a >= b))


def CHECK_NEAR(a: Any, b: Any, abs_error: float, *message: Any) -> None:
    if not abs(a - b) <= abs_error:
        _fail(f"|{a!r} - {b!r}| <= {abs_error!r}", message)


def CHECK_NOTNULL(value: Any, *message: Any) -> Any:
    if value is None:
        _fail("'value' Must be non NULL", message)
    return value


def LOG(severity: str, *parts: Any) -> None:
    """``LOG(INFO) << ...`` (and ``VLOG(n)``): to the ``tfops_py.port`` logger; ``FATAL`` raises."""
    text = StrCat(*parts)
    if severity == "FATAL" or severity == "QFATAL":
        raise RuntimeError(text)
    level = {"INFO": logging.INFO, "WARNING": logging.WARNING, "ERROR": logging.ERROR}.get(severity, logging.DEBUG)
    _log.log(level, text)


# -- C integer arithmetic -------------------------------------------------------------------------------


def cdiv(a: Any, b: Any) -> Any:
    """C++ integer division truncates toward zero (Python's ``//`` floors)."""
    q = abs(int(a)) // abs(int(b))
    return q if (a >= 0) == (b >= 0) else -q


def cmod(a: Any, b: Any) -> Any:
    """C++ ``%``: the result has the sign of the dividend."""
    return int(a) - cdiv(a, b) * int(b)


# -- tensors (NumPy arrays) -------------------------------------------------------------------------------


def Initializer(value: Any, shape: Any = None) -> np.ndarray:
    """``Input::Initializer(value[, shape])``: the tensor a C++ literal makes (a scalar fills ``shape``)."""
    from tfops_py.framework.tensor import literal_to_array

    arr = literal_to_array(value)
    if shape is None:
        return arr
    dims = tuple(int(d) for d in shape)
    n = int(np.prod(dims, dtype=np.int64))
    if arr.ndim == 0:
        return np.full(dims, arr, dtype=arr.dtype)
    if arr.size != n:
        raise InvalidArgumentError(f"Cannot construct a tensor with {n} from an initializer list with "
                                   f"{arr.size} elements")
    return arr.reshape(dims)


def as_type(value: Any, dtype: Any) -> Any:
    """``T(x)`` / ``static_cast<T>(x)`` for a template parameter ``T`` that is a DataType here."""
    dt = as_datatype(dtype)
    if dt == DataType.DT_STRING:
        return value if isinstance(value, (bytes, str)) else str(value)
    return np.asarray(value).astype(dt.numpy_dtype)[()]


def new_tensor(dtype: Any = DataType.DT_FLOAT, shape: Any = None) -> np.ndarray:
    """``Tensor(dtype, shape)`` (zero-filled; C++ leaves it uninitialized); ``Tensor()`` is float of shape [0]."""
    dt = as_datatype(dtype)
    dims = [0] if shape is None else [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"Tensor shape must be fully defined, got {dims}")
    if dt == DataType.DT_STRING:
        out = np.empty(dims, dtype=object)
        out.fill(b"")
        return out
    return np.zeros(dims, dtype=dt.numpy_dtype)


def tensor_dtype(t: Any) -> DataType:
    """``Tensor::dtype()``."""
    arr = np.asarray(t)
    if arr.dtype == object or arr.dtype.kind in "SU":
        return DataType.DT_STRING
    return as_datatype(arr.dtype)


def tensor_debug_string(t: Any) -> str:
    arr = np.asarray(t)
    return f"Tensor<type: {tensor_dtype(arr).name[3:].lower()} shape: [{','.join(map(str, arr.shape))}] " \
           f"values: {tensor_summarize(arr)}>"


def tensor_summarize(t: Any, max_entries: int = 3) -> str:
    flat = np.asarray(t).reshape(-1)
    shown = " ".join(_piece(v) for v in flat[:max_entries])
    return shown + ("..." if flat.size > max_entries else "")


class numeric_limits:
    """``std::numeric_limits<T>`` for a DataType ``T``: ``numeric_limits(DT_FLOAT).max()``."""

    def __init__(self, dtype: Any):
        self._dt = np.dtype(as_datatype(dtype).numpy_dtype)
        self._info = np.iinfo(self._dt) if self._dt.kind in "iub" and self._dt.kind != "b" else None

    def _finfo(self) -> Any:
        import ml_dtypes

        return ml_dtypes.finfo(self._dt)

    def max(self) -> Any:
        return self._dt.type(self._info.max if self._info is not None else self._finfo().max)

    def min(self) -> Any:
        """The smallest value for integers, the smallest positive normal number for floats (as in C++)."""
        return self._dt.type(self._info.min if self._info is not None else self._finfo().tiny)

    def lowest(self) -> Any:
        return self._dt.type(self._info.min if self._info is not None else self._finfo().min)

    def epsilon(self) -> Any:
        return self._dt.type(self._finfo().eps)

    def infinity(self) -> Any:
        return self._dt.type(np.inf)

    def quiet_NaN(self) -> Any:
        return self._dt.type(np.nan)


_SEED = int(os.environ.get("TFOPS_PORT_SEED", "0"))
_rng = _random.Random(_SEED)
_np_rng = np.random.default_rng(_SEED)
_rng_lock = threading.Lock()


def New64() -> int:
    """``random::New64()``: 64 random bits (seeded by ``$TFOPS_PORT_SEED``, default 0, so tests repeat)."""
    with _rng_lock:
        return _rng.getrandbits(64)


def set_random(values: np.ndarray) -> None:
    """Eigen's ``setRandom()``: uniform [0, 1) for floating types, any value for integers."""
    with _rng_lock:
        if values.dtype.kind in "fc":
            values[...] = _np_rng.random(values.shape)
        elif values.dtype.kind in "iu":
            info = np.iinfo(values.dtype)
            values[...] = _np_rng.integers(info.min, info.max, values.shape, endpoint=True, dtype=values.dtype)
        elif values.dtype.kind == "b":
            values[...] = _np_rng.random(values.shape) < 0.5
        else:
            raise TypeError(f"setRandom on a {values.dtype} tensor")


# -- graphs -----------------------------------------------------------------------------------------------


def node_def(node: Any) -> Any:
    """``Node::def()``: the node as a NodeDef message."""
    from tfops_py.graphdef.export import node_to_node_def
    from tfops_py.graphdef.schema import message_classes

    out = message_classes()["NodeDef"]()
    node_to_node_def(node, out)
    return out


def in_edges(node: Any) -> list[tuple[Any, int, int]]:
    """``Node::in_edges()``: ``(source node, source output, input index)``; control edges have index -1."""
    edges = [(o.node(), o.index(), i) for i, o in enumerate(node.inputs)]
    return edges + [(c, -1, -1) for c in node.control_inputs]


def GetNodeAttr(attrs: dict, name: str) -> Any:
    """``GetNodeAttr(node->attrs(), name, &value)``: the value; NotFoundError if the node has no such attr."""
    if name not in attrs:
        raise NotFoundError(f"No attr named '{name}' in NodeDef")
    return attrs[name]


_ATTR_FIELDS = {"string": "s", "int": "i", "float": "f", "bool": "b", "type": "type", "shape": "shape",
                "tensor": "tensor", "func": "func"}


def AttrValueHasType(value: Any, attr_type: str) -> Status:
    """``AttrValueHasType``: OK when the AttrValue message holds a value of ``attr_type`` (``list(int)``...)."""
    is_list = attr_type.startswith("list(")
    base = attr_type[5:-1] if is_list else attr_type
    if base not in _ATTR_FIELDS:
        return Status(InvalidArgumentError(f"Unknown attr type '{attr_type}'"))
    held = value.WhichOneof("value")
    if is_list:
        if held != "list":
            return Status(InvalidArgumentError(f"AttrValue had value with type '{held}' when '{attr_type}' expected"))
        for name in _ATTR_FIELDS.values():
            if name != _ATTR_FIELDS[base] and len(getattr(value.list, name)):
                return Status(InvalidArgumentError(f"AttrValue had value with type 'list({name})' when "
                                                   f"'{attr_type}' expected"))
        return Status.OK()
    if held != _ATTR_FIELDS[base]:
        return Status(InvalidArgumentError(f"AttrValue had value with type '{held}' when '{attr_type}' expected"))
    return Status.OK()


def __getattr__(name: str) -> Any:
    if name in _MESSAGES:
        from tfops_py.graphdef.schema import message_classes

        return message_classes()[name]
    raise AttributeError(f"module 'tfops_py.port.runtime' has no attribute {name!r}")


_MESSAGES = ("GraphDef", "NodeDef", "AttrValue", "TensorProto", "TensorShapeProto", "NameAttrList",
             "FunctionDefLibrary", "FunctionDef")

# -- platform: threads, environment, command line --------------------------------------------------------


class Env:
    """``tensorflow::Env``: only what client programs call."""

    _default: Env | None = None

    @classmethod
    def Default(cls) -> Env:
        if cls._default is None:
            cls._default = cls()
        return cls._default

    def NowMicros(self) -> int:
        import time

        return int(time.time() * 1e6)


class ThreadPool:
    """``thread::ThreadPool(env, name, num_threads)``; closing it (the C++ destructor) waits for its work.

    An exception raised by scheduled work is re-raised by ``close`` (C++ would have crashed).
    """

    def __init__(self, env: Env | None, name: str, num_threads: int):
        if num_threads < 1:
            raise InvalidArgumentError(f"ThreadPool needs at least one thread, got {num_threads}")
        self._n = int(num_threads)
        self._executor = concurrent.futures.ThreadPoolExecutor(self._n, thread_name_prefix=f"tf_{name}")
        self._futures: list[concurrent.futures.Future] = []
        self._closed = False

    def Schedule(self, fn: Callable[[], Any]) -> None:
        if self._closed:
            raise RuntimeError("Schedule on a closed ThreadPool")
        self._futures.append(self._executor.submit(fn))

    def ScheduleWithHint(self, fn: Callable[[], Any], start: int, limit: int) -> None:
        self.Schedule(fn)

    def NumThreads(self) -> int:
        return self._n

    def CurrentThreadId(self) -> int:
        return -1

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._executor.shutdown(wait=True)
        for f in self._futures:
            f.result()

    def __enter__(self) -> ThreadPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def InitMain(usage: str | None, argc: int, argv: list) -> tuple[int, list]:
    """``port::InitMain(argv[0], &argc, &argv)``: nothing to initialize in Python."""
    return argc, argv


__all__ = ["AttrValueHasType", "CHECK", "CHECK_EQ", "CHECK_GE", "CHECK_GT", "CHECK_LE", "CHECK_LT", "CHECK_NE",
           "CHECK_NEAR", "CHECK_NOTNULL", "Env", "GetNodeAttr", "InitMain", "Initializer", "LOG", "New64", "Printf",
           "StrAppend", "StrCat", "StringPiece", "ThreadPool", "as_type", "cdiv", "cmod", "fprintf", "in_edges",
           "new_tensor", "node_def", "numeric_limits", "printf", "resize", "set_random", "sscanf", "substr",
           "tensor_debug_string", "tensor_dtype", "tensor_summarize", "to_string", *_MESSAGES]
