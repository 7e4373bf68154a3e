"""Segment reductions: what the conformance harness does not cover.

Golden and live cases against TF run in tests/conformance (declarations in kernels/math/segment_ops.py and
sparse_segment_ops.py); here: the NumPy fast paths (sparse products, runs folded slice by slice) against
the generic array-API formulation on larger inputs, hostile sizes, and documented behaviour.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance.ours import run_ours
from tfops_py import errors
from tfops_py.backends import get_backend
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels.math import _segment_reduce
from tfops_py.kernels.registry import KernelContext

rng = np.random.default_rng(11)


def _ctx(backend: str, dt: DataType = DataType.DT_FLOAT) -> KernelContext:
    return KernelContext("SegmentSum", "s", {}, get_backend(backend), [dt], [dt])


@pytest.mark.parametrize("sorted_ids", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_numpy_sum_matches_the_generic_scan(sorted_ids, dtype):
    data = (rng.standard_normal((500, 7)) * 10).astype(dtype)
    ids = rng.integers(-1 if not sorted_ids else 0, 40, 500)
    ids = np.sort(ids) if sorted_ids else ids
    numpy = _segment_reduce.segment_sum(_ctx("numpy"), data, ids, 40, sorted_ids=sorted_ids)
    generic = _segment_reduce._generic_reduce(np, data, ids, 40, "sum", 0, sorted_ids)
    single = dtype == np.complex64  # sums of N(0, 100) terms: compare with an absolute tolerance too
    np.testing.assert_allclose(numpy, generic, rtol=1e-5 if single else 1e-12, atol=1e-3 if single else 1e-9)


@pytest.mark.parametrize("reducer", ["max", "min", "prod"])
@pytest.mark.parametrize("lengths", ["short", "long", "mixed"])
def test_numpy_runs_match_the_generic_scan(reducer, lengths):
    """Short runs are folded offset by offset, long ones go to reduceat (also side by side, the last run long):
    all equal the segmented scan."""
    if lengths == "mixed":
        run_lengths = np.concatenate([rng.choice([1, 2, 5, 64, 65, 300], size=39), [300]])
        ids = np.repeat(np.arange(40) * 15, run_lengths)  # gaps: empty segments between the runs
    else:
        ids = np.sort(rng.integers(0, 600 if lengths == "short" else 3, 3000))
    n = ids.size
    data = rng.uniform(0.9, 1.1, (n, 5))
    data[7, 2] = np.nan
    empty = {"max": -np.inf, "min": np.inf, "prod": 1.0}[reducer]
    numpy = _segment_reduce.segment_extreme(_ctx("numpy"), data, ids, 610, reducer, empty, sorted_ids=True)
    generic = _segment_reduce._generic_reduce(np, data, ids, 610, reducer, empty, True)
    np.testing.assert_allclose(numpy, generic, rtol=1e-12)
    assert np.isnan(numpy[ids[7], 2])


def test_segment_max_and_min_propagate_nan(backend):
    data = np.array([2.0, np.nan, 1.0, 5.0], np.float32)
    (mx,) = run_ours("SegmentMax", [data, np.array([0, 0, 1, 1], np.int32)], {}, backend)
    (mn,) = run_ours("UnsortedSegmentMin", [data, np.array([1, 1, 0, 0], np.int32), np.int32(2)], {}, backend)
    assert np.isnan(mx[0]) and mx[1] == 5.0 and np.isnan(mn[1]) and mn[0] == 1.0


def test_unsorted_max_never_picks_minus_infinity(backend):
    """TF starts every segment at the lowest finite value."""
    data = np.array([-np.inf, -np.inf, 3.0], np.float32)
    (out,) = run_ours("UnsortedSegmentMax", [data, np.array([0, 0, 1], np.int32), np.int32(3)], {}, backend)
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(out, [lowest, 3.0, lowest])


def test_integer_sums_wrap_and_means_truncate(backend):
    (s,) = run_ours("SegmentSum", [np.array([100, 100, -7, 0], np.int8), np.array([0, 0, 1, 1], np.int32)], {},
                    backend)
    (m,) = run_ours("SegmentMean", [np.array([100, 100, -7, 0], np.int8), np.array([0, 0, 1, 1], np.int32)], {},
                    backend)
    np.testing.assert_array_equal(s, np.array([-56, -7], np.int8))
    np.testing.assert_array_equal(m, np.array([-28, -3], np.int8))


@pytest.mark.parametrize("op, inputs", [
    ("SegmentSum", [np.ones((1, 4), np.float32), np.array([2**31 - 1], np.int32)]),
    ("UnsortedSegmentProd", [np.ones((1, 4), np.float32), np.array([0], np.int32), np.int64(2**40)]),
    ("SparseSegmentMeanWithNumSegments", [np.ones((1, 4), np.float32), np.array([0], np.int32),
                                          np.array([0], np.int32), np.int64(2**40)]),
    ("SparseSegmentSqrtNGrad", [np.ones((1, 4), np.float32), np.array([0], np.int32), np.array([0], np.int32),
                                np.int32(2**31 - 1)]),
])
def test_hostile_sizes_are_refused_before_allocating(op, inputs):
    with pytest.raises(errors.ResourceExhaustedError, match=r"OOM when allocating tensor with shape\["):
        run_ours(op, inputs, {})


def test_an_empty_output_of_huge_row_count_is_fine():
    (out,) = run_ours("UnsortedSegmentSum", [np.ones((1, 0), np.float32), np.array([0], np.int32), np.int64(2**40)],
                      {})
    assert out.shape == (2**40, 0)


def test_sparse_segment_mean_fuses_the_gather():
    """Duplicate indices in a segment count twice; the table is not copied per lookup."""
    table = rng.standard_normal((6, 3)).astype(np.float32)
    indices = np.array([1, 1, 4, 0], np.int32)
    segments = np.array([0, 0, 0, 2], np.int32)
    (out,) = run_ours("SparseSegmentMean", [table, indices, segments], {})
    np.testing.assert_allclose(out, [(2 * table[1] + table[4]) / 3, np.zeros(3), table[0]], rtol=1e-6)
