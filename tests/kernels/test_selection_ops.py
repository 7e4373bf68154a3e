"""Selection, scans, counting and sets: what the conformance harness does not cover.

The NumPy fast paths (partitioned top-k, Unique from one unstable sort, logaddexp.accumulate) against
the generic array-API formulations on larger inputs with many ties, tf.sort/tf.argsort graphs, and the
documented NaN order.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.ours import run_ours
from tfops_py import ClientSession, DT_FLOAT, Scope, ops
from tfops_py.backends import get_backend
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels.math import scan_ops, selection_ops, unique_ops
from tfops_py.kernels.registry import KernelContext

rng = np.random.default_rng(5)


def _ctx(backend: str) -> KernelContext:
    return KernelContext("TopKV2", "t", {}, get_backend(backend), [DataType.DT_FLOAT], [DataType.DT_FLOAT])


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint16, np.int64])
@pytest.mark.parametrize("largest", [True, False])
def test_partitioned_top_k_matches_a_full_stable_sort(dtype, largest):
    x = rng.integers(0, 6, (40, 300)).astype(dtype)  # ties at the k-th value in almost every row
    for k in (1, 7, 299):
        values, indices = selection_ops.top_k(_ctx("numpy"), x, k, largest)
        order = np.argsort(-x.astype(np.float64) if largest else x, axis=-1, kind="stable")[:, :k]
        np.testing.assert_array_equal(indices, order)
        np.testing.assert_array_equal(values, np.take_along_axis(x, order, axis=-1))


def test_nan_ranks_above_infinity(backend):
    x = np.array([[1.0, np.nan, np.inf, -1.0, np.nan]], np.float32)
    values, indices = run_ours("TopKV2", [x, np.int32(3)], {}, backend)
    np.testing.assert_array_equal(indices, [[1, 4, 2]])
    (third,) = run_ours("NthElement", [x, np.int32(2)], {"reverse": True}, backend)
    assert third[0] == np.inf


def test_tf_sort_and_argsort_graphs_run(backend):
    """tf.sort / tf.argsort build TopKV2 with k = the row length (negated for ascending)."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_FLOAT, shape=[3, 6])
    k = ops.Const(root, np.int32(6))
    top = ops.TopK(root, x, k)
    ascending = ops.Neg(root, ops.TopK(root, ops.Neg(root, x).y, k).values).y
    data = rng.standard_normal((3, 6)).astype(np.float32)
    values, indices, asc = ClientSession(root, backend=backend, fetch_numpy=True).Run(
        {x: data}, [top.values, top.indices, ascending])
    np.testing.assert_array_equal(values, -np.sort(-data, axis=1))
    np.testing.assert_array_equal(indices, np.argsort(-data, axis=1, kind="stable"))
    np.testing.assert_array_equal(asc, np.sort(data, axis=1))


@pytest.mark.parametrize("dtype", [np.int64, np.float32])
def test_numpy_unique_matches_the_generic_sort(dtype):
    x = rng.integers(0, 50, 2000).astype(dtype)
    if dtype == np.float32:
        x[::97] = np.nan
    first, group, counts = unique_ops._numpy_unique(x)
    g_first, g_group, g_counts = unique_ops.unique_first_occurrence(np, x.reshape(-1, 1))
    np.testing.assert_array_equal(first, g_first)
    np.testing.assert_array_equal(group, g_group)
    np.testing.assert_array_equal(counts, g_counts)
    np.testing.assert_array_equal(x[first][group], x)  # y[idx] == x, NaN compared as equal here only


def test_generic_logsumexp_scan_matches_numpy():
    x = rng.standard_normal((5, 37)) * 20
    generic = scan_ops.inclusive_scan(np, x, 1, np.logaddexp, -np.inf)
    np.testing.assert_allclose(generic, np.logaddexp.accumulate(x, axis=1), rtol=1e-13)


def test_half_unique_keeps_signed_zeros_apart(backend):
    """TF hashes half's bits: -0.0 and 0.0 are two values there (float32: one)."""
    if backend != "numpy":
        pytest.skip("half is NumPy-only")
    y16, _ = run_ours("Unique", [np.array([0.0, -0.0, 0.0], np.float16)], {})
    y32, _ = run_ours("Unique", [np.array([0.0, -0.0, 0.0], np.float32)], {})
    assert y16.size == 2 and y32.size == 1


def test_bounds_bisection_matches_searchsorted(backend):
    rows = np.sort(rng.integers(-20, 20, (6, 50)), axis=1).astype(np.float64)
    values = rng.integers(-25, 25, (6, 30)).astype(np.float64)
    (lower,) = run_ours("LowerBound", [rows, values], {}, backend)
    (upper,) = run_ours("UpperBound", [rows, values], {}, backend)
    for b in range(6):
        np.testing.assert_array_equal(lower[b], np.searchsorted(rows[b], values[b], side="left"))
        np.testing.assert_array_equal(upper[b], np.searchsorted(rows[b], values[b], side="right"))
