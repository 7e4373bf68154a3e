"""The hand-written ``Const`` op (``tensorflow/cc/ops/const_op.h``)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Input, Output
from tfops_py.framework.scope import Scope
from tfops_py.framework.status import Status
from tfops_py.framework.tensor import literal_to_array, datatype_of
from tfops_py.framework.tensor_shape import PartialTensorShape, ShapeLike


def _as_array(value: Any, dtype: DataType | None, shape: ShapeLike) -> np.ndarray:
    if isinstance(value, Input):
        if value.status_error is not None:
            raise value.status_error
        value = value.tensor
    arr = literal_to_array(value)
    if dtype is not None:
        dt = as_datatype(dtype)
        if dt == DataType.DT_STRING:
            arr = arr.astype(object)
        else:
            arr = np.asarray(arr, dtype=dt.numpy_dtype) if arr.dtype != dt.numpy_dtype else arr
    if shape is not None:
        dims = PartialTensorShape(shape).as_tuple()
        n = int(np.prod(dims, dtype=np.int64))
        if arr.ndim == 0:
            arr = np.full(dims, arr, dtype=arr.dtype)
        elif arr.size != n:
            raise InvalidArgumentError(
                f"Cannot construct a tensor with {n} from an initializer list with {arr.size} elements")
        else:
            arr = arr.reshape(dims)
    return arr


def Const(scope: Scope, value: Any, dtype: DataType | Any | None = None, shape: ShapeLike = None) -> Output:
    """A ``Const`` node holding ``value`` (literal, nested list, NumPy array).

    ``dtype`` converts the value (C++ ``Const<T>`` adds a Cast node instead);
    ``shape`` fills a scalar or reshapes a list, as ``Const(scope, v, TensorShape)``
    — a shape given as the third positional argument (C++'s form) is accepted too.
    On a scope in error (record mode) it returns a null Output.
    """
    if not isinstance(scope, Scope):
        raise TypeError(f"Const(): the first argument must be a Scope (ops.Const(scope, value)), "
                        f"got {type(scope).__name__}")
    if isinstance(dtype, (PartialTensorShape, list, tuple)) and shape is None:
        dtype, shape = None, dtype
    try:
        arr = _as_array(value, dtype, shape)
    except InvalidArgumentError as e:
        if e.op_type is None:
            e = InvalidArgumentError(e.message, op_type="Const", node_name=None)
        scope.UpdateStatus(Status(e))
        return Output()
    if not scope.ok() and not scope.raises_errors:
        return Output()
    node = add_node(scope, get_op_def("Const"), [], {"value": arr, "dtype": datatype_of(arr)}, "Const")
    return Output() if node is None else Output(node, 0)
