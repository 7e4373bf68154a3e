"""Attr values, shapes and tensors: Python values <-> AttrValue / TensorShapeProto / TensorProto.

Encoding follows what TensorFlow writes (``tensor_util.make_tensor_proto``):
multi-element tensors of the types TF packs as raw bytes go into
``tensor_content``; everything else (scalars, bool, complex, uint16, 4-bit ints,
strings) goes into the typed ``*_val`` fields, half and bfloat16 as their 16-bit
patterns in ``half_val``.  Decoding accepts every encoding TF accepts and checks
everything before allocating: a bad value raises a ``tfops_py.errors`` class.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tfops_py.errors import InvalidArgumentError, ResourceExhaustedError, UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import PartialTensorShape

# The largest rank TF's TensorShape allows.
MAX_RANK = 254
# A tensor decoded from a graph may not need more than this many bytes (a TensorProto of a few
# bytes can ask for any size by giving a big shape and one value to repeat).
DEFAULT_MAX_TENSOR_BYTES = 1 << 30

_D = DataType
# Types TF writes as raw bytes in tensor_content when a tensor has more than one element.
_CONTENT_TYPES = frozenset({
    _D.DT_HALF, _D.DT_FLOAT, _D.DT_DOUBLE, _D.DT_INT32, _D.DT_UINT8, _D.DT_INT16, _D.DT_INT8, _D.DT_INT64,
    _D.DT_UINT32, _D.DT_UINT64, _D.DT_BFLOAT16, _D.DT_FLOAT8_E5M2, _D.DT_FLOAT8_E4M3FN,
    _D.DT_FLOAT8_E4M3FNUZ, _D.DT_FLOAT8_E4M3B11FNUZ, _D.DT_FLOAT8_E5M2FNUZ,
})
# The typed field holding the values of each dtype.
_FIELD = {
    _D.DT_FLOAT: "float_val", _D.DT_DOUBLE: "double_val", _D.DT_INT64: "int64_val",
    _D.DT_UINT32: "uint32_val", _D.DT_UINT64: "uint64_val", _D.DT_BOOL: "bool_val",
    _D.DT_HALF: "half_val", _D.DT_BFLOAT16: "half_val", _D.DT_COMPLEX64: "scomplex_val",
    _D.DT_COMPLEX128: "dcomplex_val", _D.DT_STRING: "string_val",
    **{t: "int_val" for t in (_D.DT_INT32, _D.DT_INT16, _D.DT_INT8, _D.DT_UINT8, _D.DT_UINT16,
                              _D.DT_INT4, _D.DT_UINT4, _D.DT_INT2, _D.DT_UINT2)},
    **{t: "float8_val" for t in (_D.DT_FLOAT8_E5M2, _D.DT_FLOAT8_E4M3FN, _D.DT_FLOAT8_E4M3FNUZ,
                                 _D.DT_FLOAT8_E4M3B11FNUZ, _D.DT_FLOAT8_E5M2FNUZ)},
}
_VALUE_FIELDS = ("half_val", "float_val", "double_val", "int_val", "string_val", "scomplex_val", "int64_val",
                 "bool_val", "dcomplex_val", "uint32_val", "uint64_val", "float8_val")

_SCALAR_KINDS = {"string": "s", "int": "i", "float": "f", "bool": "b", "type": "type", "shape": "shape",
                 "tensor": "tensor", "func": "func"}
_KIND_NAMES = {v: k for k, v in _SCALAR_KINDS.items()}

assert sys.byteorder == "little", "tensor_content is little-endian; big-endian hosts are not supported"


# ----------------------------------------------------------------------------- dtypes
def dtype_from_enum(value: int, what: str = "dtype") -> DataType:
    """Our DataType for a proto enum value; InvalidArgumentError for refs and unknown values."""
    try:
        return DataType(value)
    except ValueError:
        if 100 < value < 200:
            raise InvalidArgumentError(f"{what} is a reference type ({value}), which tfops_py does not "
                                       "support") from None
        raise InvalidArgumentError(f"{what} has an unknown or unsupported DataType value {value}") from None


# ----------------------------------------------------------------------------- shapes
def shape_to_proto(shape: PartialTensorShape, out: Any) -> None:
    """Fill a TensorShapeProto (unknown rank -> ``unknown_rank: true``, unknown dims -> -1)."""
    out.SetInParent()  # a scalar is an empty but present message
    if shape.unknown_rank():
        out.unknown_rank = True
        return
    for d in shape.as_list():  # type: ignore[union-attr]
        out.dim.add(size=d)


def shape_from_proto(proto: Any, *, allow_unknown: bool = True) -> PartialTensorShape:
    """PartialTensorShape of a TensorShapeProto; InvalidArgumentError for a malformed one."""
    if len(proto.dim) > MAX_RANK:
        raise InvalidArgumentError(f"shape has rank {len(proto.dim)}, more than the maximum {MAX_RANK}")
    if proto.unknown_rank:
        if proto.dim:
            raise InvalidArgumentError("shape has unknown_rank set and also lists dimensions")
        if not allow_unknown:
            raise InvalidArgumentError("tensor shape must have a known rank")
        return PartialTensorShape()
    dims = [d.size for d in proto.dim]
    bad = [d for d in dims if d < -1 or (d == -1 and not allow_unknown)]
    if bad:
        raise InvalidArgumentError(f"shape [{','.join(map(str, dims))}] has an invalid dimension {bad[0]}")
    return PartialTensorShape(dims)


# ----------------------------------------------------------------------------- tensors
def tensor_to_proto(arr: np.ndarray, out: Any) -> None:
    """Fill a TensorProto from an array, encoded as TF encodes it."""
    from tfops_py.framework.dtypes import as_datatype

    dtype = as_datatype(arr.dtype)
    out.dtype = int(dtype)
    out.tensor_shape.SetInParent()
    for d in arr.shape:
        out.tensor_shape.dim.add(size=d)
    if dtype in _CONTENT_TYPES and arr.size > 1:
        out.tensor_content = np.ascontiguousarray(arr).tobytes()
        return
    flat = arr.reshape(-1)
    field = _FIELD.get(dtype)
    if field is None:
        raise UnimplementedError(f"cannot write a tensor of dtype {dtype.short_name} to a GraphDef")
    if dtype == _D.DT_STRING:
        out.string_val.extend(v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in flat)
    elif field == "half_val":
        out.half_val.extend(flat.view(np.uint16).astype(np.int32).tolist())
    elif field == "float8_val":
        out.float8_val = flat.view(np.uint8).tobytes()
    elif dtype.is_complex:
        getattr(out, field).extend(np.stack([np.real(flat), np.imag(flat)], axis=-1).reshape(-1).tolist())
    elif field == "int_val":
        out.int_val.extend(flat.astype(np.int32).tolist())
    else:
        getattr(out, field).extend(flat.tolist())


def _num_elements(dims: list[int]) -> int:
    n = 1
    for d in dims:
        n *= d
        if n >= 2**63:
            raise InvalidArgumentError(f"tensor shape [{','.join(map(str, dims))}] has more than 2**63-1 elements")
    return n


def _decode_string_list(content: bytes, n: int) -> list[bytes]:
    """TF's EncodeStringList: n varint32 lengths, then the bytes of each string."""
    pos, lengths = 0, []
    for _ in range(n):
        value, shift = 0, 0
        while True:
            if pos >= len(content) or shift > 28:
                raise InvalidArgumentError("string tensor_content is truncated or malformed")
            byte = content[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        lengths.append(value)
    if pos + sum(lengths) != len(content):
        raise InvalidArgumentError(f"string tensor_content has {len(content) - pos} bytes of data, "
                                   f"the lengths ask for {sum(lengths)}")
    out = []
    for length in lengths:
        out.append(content[pos:pos + length])
        pos += length
    return out


def _typed_values(proto: Any, dtype: DataType, np_dtype: np.dtype) -> np.ndarray:
    field = _FIELD[dtype]
    others = [f for f in _VALUE_FIELDS if f != field and len(getattr(proto, f))]
    if others:
        raise InvalidArgumentError(f"{dtype.short_name} tensor has values in {others[0]}, expected {field}")
    raw = getattr(proto, field)
    if dtype == _D.DT_STRING:
        strings = np.empty(len(raw), dtype=object)
        strings[:] = list(raw)
        return strings
    if field == "half_val":
        return (np.asarray(raw, dtype=np.int64) & 0xFFFF).astype(np.uint16).view(np_dtype)
    if field == "float8_val":
        return np.frombuffer(raw, dtype=np.uint8).view(np_dtype)
    if dtype.is_complex:
        if len(raw) % 2:
            raise InvalidArgumentError(f"{field} has an odd number of values ({len(raw)}); it holds "
                                       "(real, imaginary) pairs")
        parts = np.asarray(raw, dtype=np.float64).reshape(-1, 2)
        return (parts[:, 0] + 1j * parts[:, 1]).astype(np_dtype)
    if field == "int_val":
        return np.asarray(raw, dtype=np.int64).astype(np_dtype)
    return np.asarray(raw, dtype=np_dtype)


def tensor_from_proto(proto: Any, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> np.ndarray:
    """The array a TensorProto stands for.  Checks dtype, shape, content size and the memory it needs."""
    dtype = dtype_from_enum(proto.dtype, "tensor dtype")
    try:
        np_dtype = dtype.numpy_dtype
    except KeyError:
        raise UnimplementedError(f"tensors of dtype {dtype.short_name} are not supported") from None
    shape = shape_from_proto(proto.tensor_shape, allow_unknown=False)
    dims = shape.as_list()
    n = _num_elements(dims)  # type: ignore[arg-type]
    itemsize = 8 if dtype == _D.DT_STRING else np_dtype.itemsize
    if n * itemsize > max_bytes:
        raise ResourceExhaustedError(
            f"tensor of dtype {dtype.short_name} and shape {shape} needs {n * itemsize} bytes, more than the "
            f"{max_bytes} allowed for one tensor in a GraphDef (max_tensor_bytes)")
    content = proto.tensor_content
    if content:
        if dtype == _D.DT_STRING:
            flat = np.empty(n, dtype=object)
            flat[:] = _decode_string_list(content, n)
        else:
            if len(content) != n * itemsize:
                raise InvalidArgumentError(
                    f"tensor_content has {len(content)} bytes, but a {dtype.short_name} tensor of shape "
                    f"{shape} needs {n * itemsize}")
            flat = np.frombuffer(content, dtype=np_dtype).copy()
            if dtype == _D.DT_BOOL:
                flat = flat.view(np.uint8) != 0
        return flat.reshape(dims)
    if dtype not in _FIELD:
        raise UnimplementedError(f"tensors of dtype {dtype.short_name} are not supported")
    values = _typed_values(proto, dtype, np_dtype)
    count = len(values)
    if count > n:
        raise InvalidArgumentError(f"{_FIELD[dtype]} has {count} values, more than the {n} elements of "
                                   f"shape {shape}")
    if count == n:
        return values.reshape(dims)
    flat = np.empty(n, dtype=np_dtype)
    if count == 0:  # TF: all zeros (empty strings)
        flat[...] = b"" if dtype == _D.DT_STRING else 0
    else:  # TF: the last value repeats
        flat[:count] = values
        flat[count:] = values[-1]
    return flat.reshape(dims)


# ----------------------------------------------------------------------------- attr values
def _kind_of_python(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "b"
    if isinstance(value, DataType):
        return "type"
    if isinstance(value, (int, np.integer)):
        return "i"
    if isinstance(value, (float, np.floating)):
        return "f"
    if isinstance(value, (str, bytes)):
        return "s"
    if isinstance(value, PartialTensorShape):
        return "shape"
    if isinstance(value, np.ndarray):
        return "tensor"
    if isinstance(value, dict) and "name" in value:
        return "func"
    if isinstance(value, (list, tuple)):
        return "list"
    raise InvalidArgumentError(f"cannot write a {type(value).__name__} value {value!r} as an AttrValue")


def _scalar_kind(attr_type: str | None, value: Any) -> str:
    return _SCALAR_KINDS[attr_type] if attr_type else _kind_of_python(value)


def func_to_proto(value: dict, out: Any) -> None:
    out.SetInParent()
    out.name = value["name"]
    for k, v in (value.get("attr") or {}).items():
        attr_to_proto(v, None, out.attr[k])


def _set_one(kind: str, value: Any, out: Any) -> None:
    """Set a scalar attr value: ``out`` is an AttrValue."""
    if kind == "s":
        out.s = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    elif kind == "i":
        out.i = int(value)
    elif kind == "f":
        out.f = float(value)
    elif kind == "b":
        out.b = bool(value)
    elif kind == "type":
        out.type = int(value)
    elif kind == "shape":
        shape_to_proto(value, out.shape)
    elif kind == "tensor":
        tensor_to_proto(value, out.tensor)
    elif kind == "func":
        func_to_proto(value, out.func)
    else:
        raise InvalidArgumentError(f"cannot write attr kind {kind}")


def attr_to_proto(value: Any, attr_type: str | None, out: Any) -> None:
    """Fill an AttrValue from a Python attr value; ``attr_type`` is the OpDef type (None: from the value)."""
    is_list = attr_type.startswith("list(") if attr_type else isinstance(value, (list, tuple))
    if not is_list:
        _set_one(_scalar_kind(attr_type, value), value, out)
        return
    lst = out.list
    out.list.SetInParent()  # an empty list is still a list
    items = list(value)
    if not items:
        return
    kind = _SCALAR_KINDS[attr_type[5:-1]] if attr_type else _kind_of_python(items[0])
    if kind == "s":
        lst.s.extend(v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v) for v in items)
    elif kind in ("i", "f", "b", "type"):
        conv = {"i": int, "f": float, "b": bool, "type": int}[kind]
        getattr(lst, kind).extend(conv(v) for v in items)
    else:
        for v in items:
            item = getattr(lst, kind).add()
            if kind == "shape":
                shape_to_proto(v, item)
            elif kind == "tensor":
                tensor_to_proto(v, item)
            else:
                func_to_proto(v, item)


def attr_kind(value: Any) -> str:
    """TF's name for the kind an AttrValue holds: ``int``, ``list(string)``, ``placeholder`` or ``""``."""
    case = value.WhichOneof("value")
    if case is None:
        return ""
    if case == "placeholder":
        return "placeholder"
    if case != "list":
        return _KIND_NAMES[case]
    present = [k for k in ("s", "i", "f", "b", "type", "shape", "tensor", "func") if len(getattr(value.list, k))]
    if len(present) > 1:
        return "list(" + "|".join(_KIND_NAMES[k] for k in present) + ")"
    return f"list({_KIND_NAMES[present[0]]})" if present else "list()"


def check_attr_kind(value: Any, attr_type: str) -> None:
    """InvalidArgumentError in TF's words when an AttrValue does not hold a value of ``attr_type``."""
    kind = attr_kind(value)
    if kind == "":
        raise InvalidArgumentError(f"AttrValue missing value with expected type '{attr_type}'")
    if kind == attr_type or (kind == "list()" and attr_type.startswith("list(")):
        return
    if "|" in kind:
        raise InvalidArgumentError(f"AttrValue had value with more than one list type: {kind}")
    if kind == "placeholder":
        raise InvalidArgumentError(f"AttrValue has placeholder '{value.placeholder}' outside a function body")
    raise InvalidArgumentError(f"AttrValue had value with type '{kind}' when '{attr_type}' expected")


def _string(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def func_from_proto(proto: Any, max_bytes: int) -> dict[str, Any]:
    return {"name": proto.name, "attr": {k: attr_from_proto(v, None, max_bytes) for k, v in proto.attr.items()}}


def attr_from_proto(value: Any, attr_type: str | None, max_bytes: int = DEFAULT_MAX_TENSOR_BYTES) -> Any:
    """The Python value of an AttrValue (its kind checked against ``attr_type`` when given)."""
    if attr_type is not None:
        check_attr_kind(value, attr_type)
    kind = attr_kind(value)
    if kind in ("", "placeholder") or "|" in kind:
        check_attr_kind(value, attr_type or "a single kind")
    if kind.startswith("list("):
        inner = kind[5:-1]
        lst = value.list
        if inner == "":
            return []
        if inner == "string":
            return [_string(v) for v in lst.s]
        if inner in ("int", "float", "bool"):
            conv = {"int": int, "float": float, "bool": bool}[inner]
            return [conv(v) for v in getattr(lst, _SCALAR_KINDS[inner])]
        if inner == "type":
            return [dtype_from_enum(v, "type in list") for v in lst.type]
        if inner == "shape":
            return [shape_from_proto(s) for s in lst.shape]
        if inner == "tensor":
            return [tensor_from_proto(t, max_bytes) for t in lst.tensor]
        return [func_from_proto(f, max_bytes) for f in lst.func]
    if kind == "string":
        return _string(value.s)
    if kind == "int":
        return int(value.i)
    if kind == "float":
        return float(value.f)
    if kind == "bool":
        return bool(value.b)
    if kind == "type":
        return dtype_from_enum(value.type, "type")
    if kind == "shape":
        return shape_from_proto(value.shape)
    if kind == "tensor":
        return tensor_from_proto(value.tensor, max_bytes)
    return func_from_proto(value.func, max_bytes)


__all__ = ["DEFAULT_MAX_TENSOR_BYTES", "MAX_RANK", "attr_from_proto", "attr_kind", "attr_to_proto",
           "check_attr_kind", "dtype_from_enum", "func_to_proto", "shape_from_proto", "shape_to_proto",
           "tensor_from_proto", "tensor_to_proto"]
