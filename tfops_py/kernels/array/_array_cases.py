"""The array family's cases built from arrays: every op's edge cases (shape functions' and kernels' errors
included), then a small valid call of each op on every dtype TF's CPU kernels take for it.

Case ``k`` draws from ``default_rng(k)``: new cases go at the end.  Imported only when cases are made.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from tfops_py.conformance import CaseList
from tfops_py.framework.dtypes import DT_INT64

VALUE_TYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
               "bfloat16", "float32", "float64", "complex64", "complex128", "string"]


def _x(rng: np.random.Generator, shape, dtype: str = "float32") -> np.ndarray:
    shape = tuple(shape)
    n = int(np.prod(shape))
    if dtype == "string":
        return np.array([b"s%d" % rng.integers(0, 100) for _ in range(n)], dtype=object).reshape(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "bfloat16":
        return (rng.standard_normal(shape) * 4).astype(ml_dtypes.bfloat16)
    if dtype in ("float8_e5m2", "float8_e4m3fn"):
        return rng.standard_normal(shape).astype(getattr(ml_dtypes, dtype))
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -9, 10, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return (rng.standard_normal(shape) * 4).astype(dt)


def i32(v) -> np.ndarray:
    return np.asarray(v, np.int32)


def i64(v) -> np.ndarray:
    return np.asarray(v, np.int64)


def _cases() -> list[tuple[str, object, dict]]:
    """(op, inputs builder taking an rng, attrs); errors included on purpose."""
    c: list[tuple[str, object, dict]] = []
    add = c.append
    # Shape, ShapeN, Size, Rank
    for dt in VALUE_TYPES:
        add(("Shape", lambda r, dt=dt: [_x(r, (2, 0, 3), dt)], {}))
    add(("Shape", lambda r: [_x(r, ())], {"out_type": DT_INT64}))
    add(("ShapeN", lambda r: [[_x(r, (2, 3), "int8"), _x(r, (4,), "int8"), _x(r, (), "int8")]], {"out_type": DT_INT64}))
    add(("Size", lambda r: [_x(r, (2, 3, 4), "string")], {}))
    add(("Size", lambda r: [_x(r, (2, 0))], {"out_type": DT_INT64}))
    add(("Rank", lambda r: [_x(r, (1, 2, 1, 2), "bool")], {}))
    # Reshape
    for dt in ("float32", "bfloat16", "string", "complex128", "float8_e5m2", "int64"):
        add(("Reshape", lambda r, dt=dt: [_x(r, (2, 3, 2), dt), i32([3, -1])], {}))
    for target in ([4], [4, -1], [-1, -1], [-2, 3], [0, -1], [6, 1, 1], [], [-1]):
        add(("Reshape", lambda r, t=target: [_x(r, (2, 3)), i64(t)], {}))
    add(("Reshape", lambda r: [_x(r, (0, 3)), i32([-1, 0])], {}))
    add(("Reshape", lambda r: [_x(r, (1,)), i32([])], {}))
    add(("Reshape", lambda r: [_x(r, (2, 3)), i32([[6]])], {}))
    # ExpandDims, Squeeze
    for dim in (0, -1, 2, -3, 3, -4):
        add(("ExpandDims", lambda r, d=dim: [_x(r, (2, 3), "int16"), i32(d)], {}))
    add(("ExpandDims", lambda r: [_x(r, (2,)), i64([1])], {}))
    add(("ExpandDims", lambda r: [_x(r, (2,)), i32([0, 1])], {}))
    for dims in ([], [0], [-1], [0, 2], [1], [3]):
        add(("Squeeze", lambda r: [_x(r, (1, 2, 1), "uint8")], {"squeeze_dims": dims}))
    add(("Squeeze", lambda r: [_x(r, (), "string")], {}))
    # Transpose
    for perm in ([2, 0, 1], [-1, 0, 1], [0, 0, 1], [3, 0, 1], [-4, 0, 1], [0, 1], [[0, 1, 2]]):
        add(("Transpose", lambda r, p=perm: [_x(r, (2, 3, 4), "complex64"), i32(p)], {}))
    add(("Transpose", lambda r: [_x(r, (2, 3), "string"), i64([1, 0])], {}))
    add(("Transpose", lambda r: [_x(r, ()), np.zeros((0,), np.int32)], {}))
    # ConcatV2
    for dt in VALUE_TYPES:
        add(("ConcatV2", lambda r, dt=dt: [[_x(r, (2, 1), dt), _x(r, (2, 3), dt)], i32(-1)], {}))
    for axis, shapes in ((0, [(2, 3), (3, 3)]), (1, [(2, 3), (3, 3)]), (2, [(2, 3), (2, 3)]),
                         (-3, [(2, 3), (2, 3)]), (0, [(2, 3), (2, 3, 1)]), (0, [(), ()]),
                         (1, [(2, 0), (2, 3), (2, 1)])):
        add(("ConcatV2", lambda r, a=axis, s=shapes: [[_x(r, sh) for sh in s], i64(a)], {}))
    add(("ConcatV2", lambda r: [[_x(r, (2, 3)), _x(r, (2, 3))], i32([0])], {}))
    # Pack, Unpack
    for axis in (0, 2, -1, -3, 3):
        add(("Pack", lambda r: [[_x(r, (2, 3), "bfloat16"), _x(r, (2, 3), "bfloat16")]], {"axis": axis}))
    add(("Pack", lambda r: [[_x(r, (2, 3)), _x(r, (3, 2))]], {}))
    add(("Pack", lambda r: [[_x(r, (), "string")]], {"axis": -1}))
    for num, axis in ((2, 0), (3, 1), (3, -1), (3, 0), (2, 2), (2, -3)):
        add(("Unpack", lambda r: [_x(r, (2, 3), "float64")], {"num": num, "axis": axis}))
    add(("Unpack", lambda r: [_x(r, ())], {"num": 1}))
    add(("Unpack", lambda r: [_x(r, (0, 2))], {"num": 0}))
    # Split
    for axis, num in ((1, 3), (-1, 1), (0, 2), (1, 2), (2, 1), (-3, 1)):
        add(("Split", lambda r, a=axis: [i32(a), _x(r, (2, 3), "int64")], {"num_split": num}))
    add(("Split", lambda r: [i32(0), _x(r, ())], {"num_split": 1}))
    add(("Split", lambda r: [i32([0]), _x(r, (2,))], {"num_split": 1}))
    # Fill, ZerosLike, OnesLike
    for dt in VALUE_TYPES:
        add(("Fill", lambda r, dt=dt: [i32([2, 3]), _x(r, (), dt)], {}))
        add(("ZerosLike", lambda r, dt=dt: [_x(r, (3, 1), dt)], {}))
        if dt != "string":
            add(("OnesLike", lambda r, dt=dt: [_x(r, (1, 2), dt)], {}))
    for dims, vshape in (([-1, 2], ()), ([-2, 2], ()), ([[2]], ()), ([2], (1,)), ([2], (2,)), ([], ()), ([0, 4], ())):
        add(("Fill", lambda r, d=dims, v=vshape: [i64(d), _x(r, v)], {}))
    # Slice
    for begin, size in (([0, 1], [2, 2]), ([1, 0], [-1, -1]), ([0, 4], [1, 1]), ([0, 1], [1, 3]),
                        ([0, 1], [1, -2]), ([0, -1], [1, 1]), ([0], [1]), ([0, 0], [1])):
        add(("Slice", lambda r, b=begin, s=size: [_x(r, (2, 3), "string"), i32(b), i32(s)], {}))
    add(("Slice", lambda r: [_x(r, (0, 3)), i64([1, 0]), i64([0, 1])], {}))
    add(("Slice", lambda r: [_x(r, (4, 3), "bfloat16"), i64([1, 1]), i64([2, -1])], {}))
    # StridedSlice: masks, ellipsis, new axes, negative strides, clamping, errors
    ss = [
        ([0], [3], [1], {}), ([-1], [-4], [-1], {}), ([1, 0], [10, 10], [2, 3], {}),
        ([-10, 5], [10, -10], [1, -2], {}), ([1], [0], [1], {"shrink_axis_mask": 1}),
        ([-1, 0], [0, 0], [1, 1], {"shrink_axis_mask": 1, "end_mask": 2}),
        ([0, 0, 0], [0, 0, 0], [1, 1, 1], {"ellipsis_mask": 2, "new_axis_mask": 1, "shrink_axis_mask": 4}),
        ([0, 1], [0, 3], [1, 1], {"ellipsis_mask": 1}), ([0, 0], [1, 1], [1, 1], {"new_axis_mask": 3}),
        ([2, 1], [0, 0], [-1, -1], {"begin_mask": 1, "end_mask": 3}),
        ([5], [6], [1], {"shrink_axis_mask": 1}), ([-5], [0], [1], {"shrink_axis_mask": 1}),
        ([0], [1], [0], {}), ([0, 0], [1, 1], [1, 1], {"ellipsis_mask": 3}),
        ([0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], {}), ([1], [0], [-1], {"shrink_axis_mask": 1}),
        ([0, 0], [1, 1], [1, 1], {"ellipsis_mask": 1, "new_axis_mask": 2}),
    ]
    for begin, end, strides, attrs in ss:
        add(("StridedSlice", lambda r, b=begin, e=end, s=strides: [_x(r, (3, 4, 2), "int32"), i32(b), i32(e),
                                                                   i32(s)], attrs))
    add(("StridedSlice", lambda r: [_x(r, (), "float64"), i32([0]), i32([1]), i32([1])], {}))
    add(("StridedSlice", lambda r: [_x(r, (), "float64"), i32([0]), i32([1]), i32([1])], {"new_axis_mask": 1}))
    add(("StridedSlice", lambda r: [_x(r, (4, 2), "string"), np.asarray([3], np.int16), np.asarray([0], np.int16),
                                    np.asarray([-2], np.int16)], {}))
    add(("StridedSlice", lambda r: [_x(r, (4, 2)), i64([0, 0]), i64([1]), i64([1])], {}))
    add(("StridedSlice", lambda r: [_x(r, (4, 2)), i32([[0]]), i32([[1]]), i32([[1]])], {}))
    # Tile, Pad
    for mult in ([2, 1], [0, 3], [1, 1], [-1, 1], [2], [[1, 1]]):
        add(("Tile", lambda r, m=mult: [_x(r, (2, 3), "int8"), i32(m)], {}))
    add(("Tile", lambda r: [_x(r, (2,), "string"), i64([3])], {}))
    add(("Tile", lambda r: [_x(r, ()), np.zeros((0,), np.int32)], {}))
    for pads in ([[1, 0], [0, 2]], [[0, 0], [0, 0]], [[1, -1], [0, 0]], [[1, 1]], [[1, 1, 1], [0, 0, 0]]):
        add(("Pad", lambda r, p=pads: [_x(r, (2, 3), "complex128"), i32(p)], {}))
    add(("Pad", lambda r: [_x(r, (2,), "string"), i64([[2, 1]])], {}))
    add(("Pad", lambda r: [_x(r, (1, 2), "bfloat16"), i32([[0, 1], [1, 0]])], {}))
    # GatherV2
    for idx, axis, bd in (([[0, 2], [1, 1]], 1, 0), ([2, 0], -1, 0), ([[0], [1]], 1, 1), ([[0], [1]], 2, -1),
                          ([[0, 5]], 1, 0), ([-1], 0, 0), (7, 0, 0), ([0], 3, 0), ([[0], [1]], 0, 1),
                          ([[0], [1], [1]], 1, 1), ([[0], [1]], 1, 3)):
        add(("GatherV2", lambda r, i=idx, a=axis, b=bd: [_x(r, (2, 3, 2), "float16"), i32(i), i32(a)],
             {"batch_dims": bd}))
    add(("GatherV2", lambda r: [_x(r, (3,), "string"), i64([[2, 2], [0, 1]]), i64(0)], {}))
    add(("GatherV2", lambda r: [_x(r, (0, 3)), np.asarray([0, 0], np.int16), i32(0)], {}))
    add(("GatherV2", lambda r: [_x(r, ()), i32([0]), i32(0)], {}))
    # OneHot
    for axis in (-1, 0, 1, 2, -2):
        add(("OneHot", lambda r, a=axis: [i64([0, 2, -1, 5]), i32(3), np.float32(1), np.float32(-1)],
             {"axis": axis}))
    add(("OneHot", lambda r: [np.asarray([[1, 0], [3, 2]], np.uint8), i32(4), _x(r, (), "string"),
                              _x(r, (), "string")], {"axis": 1}))
    add(("OneHot", lambda r: [np.asarray([1, 0], np.int8), i32(-1), np.int32(1), np.int32(0)], {}))
    add(("OneHot", lambda r: [i32([1, 0]), i32([2]), np.int32(1), np.int32(0)], {}))
    add(("OneHot", lambda r: [i32([1, 0]), i32(2), np.asarray([1], np.int32), np.int32(0)], {}))
    # Range
    for s, lim, d, dt in ((0, 10, 3, np.int32), (10, 0, -3, np.int64), (0, 1, 0.1, np.float32),
                          (1.5, -2.5, -0.25, np.float64), (0, 3, 0.7, ml_dtypes.bfloat16),
                          (0, 5, 0, np.int32), (5, 0, 1, np.int32), (0, 5, -1, np.int64),
                          (5.5, 0.5, 1.5, np.float32), (0, 1e30, 1e-10, np.float32),
                          (0, float("nan"), 1, np.float32), (0.1, 3, 0.7, np.float16), (3, 3, 1, np.int32)):
        add(("Range", lambda r, s=s, lim=lim, d=d, dt=dt: [np.asarray(s, dt), np.asarray(lim, dt),
                                                           np.asarray(d, dt)], {}))
    add(("Range", lambda r: [i32([0]), i32(4), i32(1)], {}))
    # Select, SelectV2
    for cshape, tshape, eshape in (((2, 3), (2, 3), (2, 3)), ((2,), (2, 3), (2, 3)), ((), (2, 3), (2, 3)),
                                   ((3,), (2, 3), (2, 3)), ((3, 2), (2, 3), (2, 3)), ((2,), (2, 3), (2, 4)),
                                   ((2,), (), ()), ((2,), (2,), (2,)), ((1, 1), (), ())):
        add(("Select", lambda r, c=cshape, t=tshape, e=eshape: [_x(r, c, "bool"), _x(r, t, "string"),
                                                                _x(r, e, "string")], {}))
    for cshape, tshape, eshape in (((4, 1, 1), (2, 3), (3,)), ((3, 2), (2, 3), (2, 3)), ((), (2, 1), (1, 3)),
                                   ((2, 3), (), ())):
        add(("SelectV2", lambda r, c=cshape, t=tshape, e=eshape: [_x(r, c, "bool"), _x(r, t, "uint64"),
                                                                  _x(r, e, "uint64")], {}))
    return c


# -- the value dtypes TF 2.21's CPU kernels take, per op (probed with tf.raw_ops) ----------------------------
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


def dtype_case(op: str, name: str) -> tuple[list, dict]:
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


def build(out: CaseList) -> None:
    counts: dict[str, int] = {}
    for op, make, attrs in _cases():
        counts[op] = counts.get(op, 0) + 1
        out.add(op, make(out.rng()), attrs, compare="exact", id=f"{op}/{counts[op]}")  # type: ignore[operator]
    for op, names in CPU_DTYPES.items():
        for name in names:
            inputs, attrs = dtype_case(op, name)
            out.add(op, inputs, attrs, compare="exact", id=f"{op}/dtype/{name}")
