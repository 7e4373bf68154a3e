"""TF's ``tensorflow/core/framework/tensor_testutil.h`` for tensors that are NumPy arrays.

``ExpectEqual``/``ExpectTensorEqual`` check dtype, then shape, then values (floating point within
4 ULPs, NaN equal to NaN); ``ExpectClose``/``ExpectTensorNear`` check ``|x - y| <= atol + rtol*|x|``
with TF's default tolerance of 5 machine epsilons of the dtype when a tolerance is negative.
As in TF, dtype and shape mismatches are fatal, value mismatches are not (up to 10 are listed).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.tensor import literal_to_array
from tfops_py.testing.gtest import _fail, ulp_distance

_MAX_LISTED = 10


def _dtype_of(x: np.ndarray) -> DataType:
    if x.dtype == object or x.dtype.kind in "SU":
        return DataType.DT_STRING
    return as_datatype(x.dtype)


def _typed(values: Any, dtype: Any) -> np.ndarray:
    if dtype is None:
        return np.asarray(literal_to_array(list(values) if isinstance(values, tuple) else values))
    dt = as_datatype(dtype)
    if dt == DataType.DT_STRING:
        flat = [v.encode("utf-8") if isinstance(v, str) else v for v in np.asarray(values, dtype=object).reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(np.shape(values))
    return np.asarray(values, dtype=dt.numpy_dtype)


def AsTensor(values: Iterable[Any], shape: Any = None, *, dtype: Any = None) -> np.ndarray:
    """``test::AsTensor<T>(values[, shape])``: ``dtype`` is ``T`` (a DataType); inferred from the values if None."""
    arr = _typed(values, dtype).reshape(-1)
    if shape is None:
        return arr
    dims = tuple(int(d) for d in shape)
    if int(np.prod(dims, dtype=np.int64)) != arr.size:
        raise InvalidArgumentError(f"AsTensor: {arr.size} values do not fill shape {list(dims)}")
    return arr.reshape(dims)


def AsScalar(value: Any, *, dtype: Any = None) -> np.ndarray:
    """``test::AsScalar<T>(value)``."""
    return _typed(value, dtype).reshape(())


def FillValues(tensor: np.ndarray, values: Iterable[Any], *, dtype: Any = None) -> None:
    """``test::FillValues<T>(&tensor, values)``: in place, as many values as the tensor has elements."""
    flat = tensor.reshape(-1)
    vals = np.asarray(list(values), dtype=tensor.dtype if dtype is None else as_datatype(dtype).numpy_dtype)
    if vals.size != flat.size:
        raise InvalidArgumentError(f"FillValues: {vals.size} values for a tensor of {flat.size} elements")
    flat[...] = vals


def FillIota(tensor: np.ndarray, start: Any) -> None:
    """``test::FillIota<T>(&tensor, start)``: start, start + 1, ..."""
    flat = tensor.reshape(-1)
    flat[...] = start + np.arange(flat.size)


def FillFn(tensor: np.ndarray, fn: Callable[[int], Any]) -> None:
    """``test::FillFn<T>(&tensor, fn)``: fn(0), fn(1), ..."""
    flat = tensor.reshape(-1)
    for i in range(flat.size):  # fn is arbitrary Python: one call per element, as in C++
        flat[i] = fn(i)


def _same_type_and_shape(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(x), np.asarray(y)
    dx, dy = _dtype_of(x), _dtype_of(y)
    if dx != dy:
        _fail(f"Tensors have different dtypes ({dx.name} vs {dy.name})", True)
    if x.shape != y.shape:
        _fail(f"Tensors have different shapes ({list(x.shape)} vs {list(y.shape)})", True)
    return x, y


def _report(mismatch: np.ndarray, x: np.ndarray, y: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(mismatch.reshape(-1))
    if bad.size == 0:
        return
    fx, fy = x.reshape(-1), y.reshape(-1)
    shown = [f"i = {i}: {fx[i]!r} {what} {fy[i]!r}" for i in bad[:_MAX_LISTED]]
    more = f"\n... and {bad.size - _MAX_LISTED} more" if bad.size > _MAX_LISTED else ""
    _fail(f"{bad.size} of {fx.size} element(s) differ:\n" + "\n".join(shown) + more, False)


def _float_kind(x: np.ndarray) -> bool:
    return x.dtype.kind in "fc" or x.dtype in (np.dtype(ml_dtypes.bfloat16),)


def ExpectEqual(x: Any, y: Any, tolerance: str = "default") -> None:
    """``test::ExpectEqual``: same dtype, same shape, equal values (floats within 4 ULPs unless ``"none"``)."""
    x, y = _same_type_and_shape(x, y)
    if _float_kind(x):
        parts = [(x.real, y.real), (x.imag, y.imag)] if x.dtype.kind == "c" else [(x, y)]
        mismatch = np.zeros(x.shape, dtype=bool)
        for a, b in parts:
            both_nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
            close = (a == b) if tolerance == "none" else ulp_distance(a, b) <= 4
            mismatch |= ~(close | both_nan)
        _report(mismatch, x, y, "not equal to")
        return
    if x.dtype == object:
        mismatch = np.array([a != b for a, b in zip(x.reshape(-1), y.reshape(-1))], dtype=bool).reshape(x.shape)
    else:
        mismatch = x != y
    _report(mismatch, x, y, "not equal to")


def _default_tolerance(x: np.ndarray, tol: float) -> float:
    if tol >= 0:
        return tol
    real = np.dtype(np.real(x).dtype) if x.dtype.kind == "c" else x.dtype
    return 5.0 * float(ml_dtypes.finfo(real).eps)


def ExpectClose(x: Any, y: Any, atol: float = -1.0, rtol: float = -1.0) -> None:
    """``test::ExpectClose``: floating-point tensors; ``|x - y| <= atol + rtol * |x|`` element-wise."""
    x, y = _same_type_and_shape(x, y)
    if not _float_kind(x):
        _fail(f"Unsupported type : {_dtype_of(x).name}", False)
        return
    a_tol, r_tol = _default_tolerance(x, atol), _default_tolerance(x, rtol)
    parts = [(x.real, y.real), (x.imag, y.imag)] if x.dtype.kind == "c" else [(x, y)]
    mismatch = np.zeros(x.shape, dtype=bool)
    for a, b in parts:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ok = (np.isnan(a64) & np.isnan(b64)) | (a64 == b64) | (np.abs(a64 - b64) <= a_tol + r_tol * np.abs(a64))
        mismatch |= ~ok
    _report(mismatch, x, y, f"not close (atol={a_tol}, rtol={r_tol}) to")


def _check_dtype(x: Any, dtype: Any) -> None:
    if dtype is not None:
        got, want = _dtype_of(np.asarray(x)), as_datatype(dtype)
        if got != want:
            _fail(f"Expected equality of these values:\n  x.dtype()\n    Which is: {got.name}\n"
                  f"  DataTypeToEnum<T>::value\n    Which is: {want.name}", False)


def ExpectTensorEqual(x: Any, y: Any, dtype: Any = None) -> None:
    """``test::ExpectTensorEqual<T>``: ``dtype`` is ``T``, checked against x's dtype."""
    _check_dtype(x, dtype)
    ExpectEqual(x, y)


def ExpectTensorNear(x: Any, y: Any, atol: float, dtype: Any = None) -> None:
    """``test::ExpectTensorNear<T>(x, y, atol)``: ExpectClose with rtol 0."""
    _check_dtype(x, dtype)
    ExpectClose(x, y, atol, 0.0)


__all__ = ["AsScalar", "AsTensor", "ExpectClose", "ExpectEqual", "ExpectTensorEqual", "ExpectTensorNear", "FillFn",
           "FillIota", "FillValues"]
