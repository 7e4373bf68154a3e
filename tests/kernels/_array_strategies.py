"""Hypothesis strategies shared by the array-op tests: shapes, dtypes and arrays drawn fast from a seed, and
the array ops' contract with TF for a drawn case (``differential``)."""
from __future__ import annotations

import os

from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.conformance.live import check_against_tf

# Value dtypes TF's CPU kernels take for "T: type" array ops (strings only exist on NumPy).
NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
ALL_TYPES = NUMERIC + ["string"]
INDEX = ["int32", "int64"]


def np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16)
    if name == "string":
        return np.dtype(object)
    return np.dtype(name)


def array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    """Random values of ``dtype``: small integers, normals, or short byte strings."""
    return np.asarray(_values(rng, tuple(shape), dtype))


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: str):
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "string":
        return np.array([bytes(rng.choice(list(b"abcxyz"), size=rng.integers(0, 4)).tolist()) for _ in range(n)],
                        dtype=object).reshape(shape)
    dt = np_dtype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -50
        return rng.integers(lo, 50, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return (rng.standard_normal(shape) * 10).astype(dt)


def shapes(min_rank: int = 0, max_rank: int = 4, min_side: int = 0, max_side: int = 4):
    return st.lists(st.integers(min_side, max_side), min_size=min_rank, max_size=max_rank).map(tuple)


seeds = st.integers(0, 2**32 - 1)
modes = st.sampled_from(["const", "feed"])


def index_array(values, dtype: str) -> np.ndarray:
    return np.asarray(values, dtype=np.dtype(dtype))


def live(max_examples: int) -> settings:
    """Settings of a live differential test (TF calls are slow to start; the backend fixture is constant).

    ``ARRAY_OPS_FUZZ=k`` multiplies the example counts by k for a deeper local run.
    """
    return settings(max_examples=max_examples * int(os.environ.get("ARRAY_OPS_FUZZ", "1")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def differential(op: str, inputs: list, attrs: dict[str, Any], mode: Any, backend: str = "numpy",
                 check_message: bool = False, check_shapes: bool = True) -> None:
    """The array ops' contract with TF (tests/conformance/outcomes.py) for one drawn case: values bit for bit,
    static shapes equal to TF's (unless ``check_shapes`` is off), errors at TF's time; ``mode`` is "const",
    "feed" or per input a placeholder shape."""
    check_against_tf(op, inputs, attrs, backend, "exact", mode, messages=check_message,
                     static_shapes="exact" if check_shapes else "unchecked", early_errors=False)
