"""Functional updates of a tensor: TensorScatterUpdate/Sub/Min/Max, InplaceUpdate/Add/Sub, TensorStridedSliceUpdate.

Each returns a new tensor equal to its input with some rows, index tuples or a strided slice replaced or
combined with new values.  TensorScatterAdd (and the ScatterNd checks all of them share) is in
``grad_scatter_ops``; the row scatter itself, serial as TF's CPU loop, in ``kernels/_scatter.py``.

TF's Inplace* kernels write into their input's buffer (``Tensor y = x``, on purpose): whoever else reads
``x`` after them sees the update.  Here the output is a new array and ``x`` never changes.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, literal, values
from tfops_py.framework.dtypes import DT_BOOL, DT_INT64, DT_STRING, DataType
from tfops_py.framework.shape_inference import register_shape
from tfops_py.framework.tensor_shape import format_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._scatter import scatter_rows
from tfops_py.kernels._shape_util import host_ints
from tfops_py.kernels.array._array_domains import nd_indices, row_indices
from tfops_py.kernels.array._strided_slice import check_broadcast_into, check_spec_shapes, dense_slice, index_tuple
from tfops_py.kernels.array.grad_scatter_ops import tensor_scatter, tensor_scatter_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "array_ops"


# -- TensorScatterUpdate, TensorScatterSub, TensorScatterMin, TensorScatterMax ---------------------------
def _tensor_scatter_kernel(mode: str):
    def scatter(ctx: KernelContext, base: Any, rows: Any, keep: Any, values: Any) -> Any:
        return scatter_rows(ctx, mode, base, rows, values, keep)

    def kernel(ctx: KernelContext, tensor: Any, indices: Any, updates: Any) -> Any:
        return tensor_scatter(ctx, scatter, tensor, indices, updates)

    return kernel


for _mode in ("Update", "Sub", "Min", "Max"):
    register_shape(f"TensorScatter{_mode}")(tensor_scatter_shape)
    register_kernel(f"TensorScatter{_mode}")(_tensor_scatter_kernel(_mode))


# -- InplaceUpdate, InplaceAdd, InplaceSub -----------------------------------------------------------------
def is_number_type(dt: DataType) -> bool:
    """TF's ``TF_CALL_NUMBER_TYPES``: the integer, real floating and complex types (no float8, no 4-bit)."""
    return dt.is_integer or dt.is_complex or dt in (DataType.DT_HALF, DataType.DT_BFLOAT16, DataType.DT_FLOAT,
                                                    DataType.DT_DOUBLE)


def check_copyable(ctx: KernelContext, dt: DataType) -> None:
    """TF's ``DoCopy`` (DeepCopy, TensorStridedSliceUpdate) copies numbers, bools and strings only."""
    if not (is_number_type(dt) or dt in (DT_BOOL, DT_STRING)):
        ctx.invalid_argument(f"Unsupported data type: {dt.short_name}")


register_shape("InplaceUpdate", "InplaceAdd", "InplaceSub")(unchanged_shape)


def _inplace_kernel(mode: str):
    def kernel(ctx: KernelContext, x: Any, i: Any, v: Any) -> Any:
        idx = ctx.host(i)
        xs, vs = tuple(x.shape), tuple(v.shape)
        if idx.ndim != 1:
            ctx.invalid_argument(f"i must be a vector. {format_shape(idx.shape)}")
        if len(xs) != len(vs):
            ctx.invalid_argument(f"x and v shape doesn't match (ranks differ): {format_shape(xs)} vs. "
                                 f"{format_shape(vs)}")
        for k in range(1, len(xs)):
            if xs[k] != vs[k]:
                ctx.invalid_argument(f"x and v shape doesn't match at index {k} : {format_shape(xs)} vs. "
                                     f"{format_shape(vs)}")
        if idx.shape[0] != vs[0]:
            ctx.invalid_argument(f"i and x shape doesn't match at index 0: {format_shape(idx.shape)} vs. "
                                 f"{format_shape(vs)}")
        if math.prod(xs) == 0 or math.prod(vs) == 0:
            return x
        dt = ctx.input_dtypes[0]
        if not (is_number_type(dt) or mode == "Update" and dt in (DT_BOOL, DT_STRING)):
            ctx.invalid_argument(f"Unsupported data type: {dt.short_name}")
        xp, rows = ctx.xp, xs[0]
        wrapped = (idx.astype(np.int64) % rows + rows) % rows  # TF's index guard: indices wrap around
        k = math.prod(xs[1:])
        out = scatter_rows(ctx, mode, xp.reshape(x, (rows, k)), ctx.asarray(wrapped, DT_INT64),
                           xp.reshape(v, (vs[0], k)))
        return xp.reshape(out, xs)

    return kernel


for _mode in ("Update", "Add", "Sub"):
    register_kernel(f"Inplace{_mode}")(_inplace_kernel(_mode))


# -- TensorStridedSliceUpdate --------------------------------------------------------------------------
def strided_slice_update(ctx: KernelContext, base: Any, begin: Any, end: Any, strides: Any, value: Any) -> Any:
    """``base`` with its strided slice (the op's begin/end/strides inputs and mask attrs) set to ``value``,
    which must broadcast to the slice's shape; a new array."""
    xp = ctx.xp
    check_copyable(ctx, ctx.input_dtypes[0])  # TF copies the input first (DoCopy)
    b, e, s = ctx.host(begin), ctx.host(end), ctx.host(strides)
    check_spec_shapes(ctx.invalid_argument, b.shape, e.shape, s.shape)
    masks = [ctx.attrs[m] for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")]
    spec = dense_slice(ctx.invalid_argument, tuple(base.shape), host_ints(b), host_ints(e), host_ints(s), *masks)
    out = xp.asarray(base, copy=True)
    if math.prod(spec.processing_shape) == 0:
        return out
    final = tuple(spec.final_shape)
    check_broadcast_into(ctx.invalid_argument, tuple(value.shape), final)
    index = index_tuple(spec) + (...,)
    region = tuple(out[index].shape)
    out[index] = xp.reshape(xp.broadcast_to(value, final), region)
    return out


register_shape("TensorStridedSliceUpdate")(unchanged_shape)
register_kernel("TensorStridedSliceUpdate")(strided_slice_update)


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_SCATTER_SHAPES = [
    {"tensor": (5,), "indices": (3, 1), "updates": (3,)},
    {"tensor": (4, 3), "indices": (6, 1), "updates": (6, 3)},
    {"tensor": (4, 3), "indices": (5, 2), "updates": (5,)},
    {"tensor": (2, 3, 4), "indices": (2, 2, 2), "updates": (2, 2, 4)},
    {"tensor": (3, 0), "indices": (2, 1), "updates": (2, 0)},
    {"tensor": (4, 3), "indices": (0, 1), "updates": (0, 3)},
]
_I32, _I64 = DataType.DT_INT32, DataType.DT_INT64


def _scatter_cases(op: str) -> list:
    """Hand cases every TensorScatter* op shares: repeated rows, bad indices and TF's shape errors."""
    return [
        case(id=f"{op}/repeated", tensor=[1, 2, 3, 4, 5], indices=literal([[1], [1], [3], [1]], _I32),
             updates=[10, 2, 30, 7]),
        case(id=f"{op}/out_of_range", tensor=[1, 2, 3], indices=literal([[0], [3]], _I64), updates=[1, 1]),
        case(id=f"{op}/negative", tensor=[[1, 2], [3, 4]], indices=literal([[0, 1], [-1, 0]], _I32),
             updates=[5, 6]),
        case(id=f"{op}/ignore_bad", tensor=[1, 2, 3], indices=literal([[4], [1], [-2]], _I32), updates=[7, 8, 9],
             bad_indices_policy="IGNORE"),
        case(id=f"{op}/lone_tuple", tensor=[[1, 2], [3, 4]], indices=literal([1, 0], _I32), updates=[9]),
        case(id=f"{op}/rank1_indices", tensor=[1, 2, 3, 4], indices=literal([2, 0], _I32), updates=[8, 9]),
        case(id=f"{op}/depth_too_large", tensor=[1, 2, 3], indices=literal([[0, 0]], _I32), updates=[1]),
        case(id=f"{op}/outer_mismatch", tensor=[1, 2, 3], indices=literal([[0], [1]], _I32), updates=[1, 2, 3]),
        case(id=f"{op}/inner_mismatch", tensor=[[1, 2], [3, 4]], indices=literal([[0]], _I32),
             updates=[[1, 2, 3]]),
        case(id=f"{op}/scalar_indices", tensor=[1, 2, 3], indices=literal(1, _I32), updates=[1]),
        case(id=f"{op}/empty_tensor", tensor=literal(np.zeros((0, 2)).tolist()), indices=literal([[0]], _I32),
             updates=[[1, 2]]),
    ]


_SPECIALS = [math.nan, -math.inf, math.inf, -0.0, 0.0, 1.5]
for _mode in ("Update", "Sub", "Min", "Max"):
    _op = f"TensorScatter{_mode}"
    _extra = []
    if _mode in ("Min", "Max"):  # Eigen's cwiseMin/Max: a NaN update never wins, a NaN in the tensor stays
        _extra = [case(id=f"{_op}/specials", tensor=_SPECIALS, indices=literal([[0], [0], [1], [2], [3], [4], [5], [5]],
                                                                            _I32),
                       updates=[1.0, math.nan, math.nan, 2.0, -0.0, 0.0, math.inf, -math.inf])]
    if _mode == "Update":
        _extra = [case(id=f"{_op}/strings", tensor=[b"a", b"b", b"c"], indices=literal([[2], [0], [2]], _I32),
                       updates=[b"x", b"yy", b"z"])]
    conformance(_op, tensor=values(specials=True), indices=nd_indices("tensor"), updates=values(specials=True),
                shapes=_SCATTER_SHAPES, cases=_scatter_cases(_op) + _extra, compare="exact")


_INPLACE_SHAPES = [{"x": (4, 3), "i": (2,), "v": (2, 3)}, {"x": (5,), "i": (3,), "v": (3,)},
                   {"x": (3, 2, 2), "i": (4,), "v": (4, 2, 2)}, {"x": (0, 3), "i": (0,), "v": (0, 3)},
                   {"x": (2, 0), "i": (2,), "v": (2, 0)}]
for _mode in ("Update", "Add", "Sub"):
    _op = f"Inplace{_mode}"
    conformance(_op, x=values(), i=row_indices("x", bad=True), v=values(), shapes=_INPLACE_SHAPES, compare="exact",
                cases=[case(id=f"{_op}/wrapped", x=[[1, 2], [3, 4], [5, 6]], i=literal([-1, 4, 1, -1], _I32),
                            v=[[1, 1], [2, 2], [3, 3], [4, 4]]),
                       case(id=f"{_op}/i_matrix", x=[1, 2], i=literal([[0]], _I32), v=[1]),
                       case(id=f"{_op}/ranks_differ", x=[[1, 2]], i=literal([0], _I32), v=[1]),
                       case(id=f"{_op}/inner_differs", x=[[1, 2]], i=literal([0], _I32), v=[[1, 2, 3]]),
                       case(id=f"{_op}/count_differs", x=[[1, 2]], i=literal([0, 0], _I32), v=[[1, 2]]),
                       case(id=f"{_op}/strings", x=[b"a", b"b"], i=literal([1], _I32), v=[b"z"])])

_SLICE = {"input": (4, 5), "value": (2, 5)}
conformance("TensorStridedSliceUpdate", generate=False, compare="exact", cases=[
    case(id="TensorStridedSliceUpdate/rows", begin=literal([0], _I32), end=literal([4], _I32),
         strides=literal([2], _I32), shapes=_SLICE),
    case(id="TensorStridedSliceUpdate/broadcast", begin=literal([1, 0], _I64), end=literal([3, 5], _I64),
         strides=literal([1, 2], _I64), shapes={"input": (4, 5), "value": (1, 3)}),
    case(id="TensorStridedSliceUpdate/shrink_negative", begin=literal([-1, 4], _I32), end=literal([0, 0], _I32),
         strides=literal([1, -1], _I32), shrink_axis_mask=1, shapes={"input": (4, 5), "value": (4,)}),
    case(id="TensorStridedSliceUpdate/ellipsis_new_axis", begin=literal([0, 0, 1], _I32),
         end=literal([0, 0, 3], _I32), strides=literal([1, 1, 1], _I32), ellipsis_mask=1, new_axis_mask=2,
         shapes={"input": (2, 3, 4), "value": (2, 3, 1, 2)}),
    case(id="TensorStridedSliceUpdate/empty_slice", begin=literal([2], _I32), end=literal([2], _I32),
         strides=literal([1], _I32), shapes={"input": (4, 5), "value": (7,)}),
    case(id="TensorStridedSliceUpdate/no_broadcast", begin=literal([0], _I32), end=literal([2], _I32),
         strides=literal([1], _I32), shapes={"input": (4, 5), "value": (3, 5)}),
    case(id="TensorStridedSliceUpdate/zero_stride", begin=literal([0], _I32), end=literal([2], _I32),
         strides=literal([0], _I32), shapes=_SLICE),
    case(id="TensorStridedSliceUpdate/scalar", input=7, begin=literal([0], _I32), end=literal([0], _I32),
         strides=literal([1], _I32), value=3, ellipsis_mask=1),
])
