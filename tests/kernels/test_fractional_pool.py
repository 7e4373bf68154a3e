"""FractionalAvgPool, FractionalMaxPool and their gradients.

Golden values (tools/golden/fractional_pool.py, no TF needed): pooling sequences for 160 sizes,
ratios and seeds, pool outputs and gradients for every dtype.  Then the documented semantics,
every TF check at build and run time, the CVE and crash inputs, the divergences, the NumPy fast
paths against the generic kernels, and live differential tests against tf.raw_ops (marked ``tf``).
"""
from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.tf_oracle import raw_op, require_tf, run_isolated
from tests.util import run_op
from tfops_py import ClientSession, Scope, errors, ops
from tfops_py.framework.dtypes import as_datatype
from tfops_py.gradients.checker import ComputeGradientError
from tfops_py.kernels.nn import _fractional_pool_impl as impl
from tfops_py.kernels._philox import GuardedPhilox, philox_blocks

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "fractional_pool.npz"
POOLS = {"FractionalAvgPool": ops.FractionalAvgPool, "FractionalMaxPool": ops.FractionalMaxPool}
F32_MAX = float(np.finfo(np.float32).max)


# -- helpers ------------------------------------------------------------------------------------------
@cache
def golden() -> tuple[list[dict], dict[str, np.ndarray]]:
    data = np.load(GOLDEN)
    return json.loads(str(data["meta"]))["cases"], {k: data[k] for k in data.files if k != "meta"}


def golden_ids(kind: str) -> list[int]:
    return [i for i, c in enumerate(golden()[0]) if c["kind"] == kind]


def golden_arrays(i: int) -> dict[str, np.ndarray]:
    case, arrays = golden()[0][i], golden()[1]
    return {name: arrays[f"c{i}_{name}"] for name in case["arrays"]}


def golden_sequences(i: int) -> tuple[np.ndarray, np.ndarray]:
    case, seqs = golden()[0][i], golden()[1]["sequences"]
    return tuple(seqs[a:a + n] for a, n in (case["row"], case["col"]))  # type: ignore[return-value]


def _case_id(i: int) -> str:
    c = golden()[0][i]
    if c["kind"] == "seq":
        return f"{i}-{'x'.join(map(str, c['shape'][1:3]))}-{'pseudo' if c['pseudo_random'] else 'random'}"
    return f"{i}-{c['op']}-{c['dtype']}" + ("-custom" if c.get("custom") else "") + \
        ("-overlap" if c.get("overlapping") else "")


def pool_attrs(case: dict) -> dict:
    return dict({k: case[k] for k in ("pooling_ratio", "pseudo_random", "overlapping", "seed", "seed2") if k in case},
                deterministic=True)


def assert_pool_close(ours: np.ndarray, ref: np.ndarray, x: np.ndarray) -> None:
    """Exact for integers; floats within a few roundings of the cell sums (TF adds in another order)."""
    assert ours.dtype == ref.dtype and ours.shape == ref.shape
    if ours.dtype.kind in "iu":
        np.testing.assert_array_equal(ours, ref)
    else:
        atol = 16 * np.finfo(x.dtype).eps * float(np.abs(x).max(initial=1.0))
        np.testing.assert_allclose(ours, ref, rtol=4 * np.finfo(x.dtype).eps, atol=atol)


def run_fed(op_class, inputs: list[np.ndarray], backend: str = "numpy", **attrs) -> list[np.ndarray]:
    """Like run_op, but every input is a Placeholder of unknown shape: checks happen in the kernel."""
    root = Scope.NewRootScope()
    phs = [ops.Placeholder(root, as_datatype(a.dtype)) for a in inputs]
    op = op_class(root, *phs, **attrs)
    outs = [op.operation.output(i) for i in range(op.operation.num_outputs())]
    return ClientSession(root, backend=backend, fetch_numpy=True).Run(dict(zip(phs, inputs)), outs)


def i64(*v) -> np.ndarray:
    return np.array(v, np.int64)


# -- Philox and the sequences ---------------------------------------------------------------------------
def test_philox_known_answers():
    """Random123's known-answer vectors for philox4x32_10."""
    cases = [(0, (0, 0), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
             ((1 << 128) - 1, (0xFFFFFFFF, 0xFFFFFFFF), [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
             (0x03707344_13198A2E_85A308D3_243F6A88, (0xA4093822, 0x299F31D0),
              [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1])]
    for counter, key, expected in cases:
        assert philox_blocks(counter, key, 1)[0].tolist() == expected


def test_philox_counter_carries_and_reservations():
    # The 128-bit counter carries from word 1 into word 2, as TF's Skip / SkipOne do.
    key = (5, 6)
    blocks = philox_blocks((1 << 64) - 1, key, 2)
    assert blocks[1].tolist() == philox_blocks(1 << 64, key, 1)[0].tolist()
    gen = GuardedPhilox(0x0000000700000005, 9)  # key (5, 7), counter (0, 0, 9, 0)
    first = gen.reserve_samples32(5)  # 2 blocks reserved
    second = gen.reserve_samples32(1)
    assert first.words(8).tolist() == philox_blocks(9 << 64, (5, 7), 2).reshape(-1).tolist()
    assert second.words(4).tolist() == philox_blocks((9 << 64) + 2, (5, 7), 1)[0].tolist()


@pytest.mark.parametrize("index", golden_ids("seq"), ids=_case_id)
def test_golden_sequences(index):
    case = golden()[0][index]
    _, h, w, _ = case["shape"]
    ratio = [float(np.float32(r)) for r in case["pooling_ratio"]]
    rows, cols = impl.pooling_sequences(h, w, ratio, case["pseudo_random"], case["seed"], case["seed2"])
    ref_rows, ref_cols = golden_sequences(index)
    np.testing.assert_array_equal(rows, ref_rows)
    np.testing.assert_array_equal(cols, ref_cols)


@pytest.mark.parametrize("op", POOLS)
@pytest.mark.parametrize("index", golden_ids("seq")[::10], ids=_case_id)
def test_golden_sequences_through_the_ops(index, op, backend):
    case = golden()[0][index]
    x = np.zeros(case["shape"], np.float32)
    _, rows, cols = run_op(POOLS[op], x, backend=backend, **pool_attrs(case))
    ref_rows, ref_cols = golden_sequences(index)
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(rows, ref_rows)
    np.testing.assert_array_equal(cols, ref_cols)


# -- golden pool and gradient values ------------------------------------------------------------------
@pytest.mark.parametrize("index", golden_ids("pool"), ids=_case_id)
def test_golden_pool(index, backend):
    case, g = golden()[0][index], golden_arrays(index)
    out, rows, cols = run_op(POOLS[case["op"]], g["x"], backend=backend, **pool_attrs(case))
    np.testing.assert_array_equal(rows, g["row"])
    np.testing.assert_array_equal(cols, g["col"])
    if case["op"] == "FractionalMaxPool":
        np.testing.assert_array_equal(out, g["out"])
        assert out.dtype == g["out"].dtype
    else:
        assert_pool_close(out, g["out"], g["x"])


@pytest.mark.parametrize("index", golden_ids("grad"), ids=_case_id)
def test_golden_gradients_bit_exact(index, backend):
    """Both gradients reproduce TF's arithmetic (float64 shares for the average), bit for bit."""
    case, g = golden()[0][index], golden_arrays(index)
    if case["op"] == "FractionalAvgPoolGrad":
        (dx,) = run_op(ops.FractionalAvgPoolGrad, g["orig"], g["dy"], g["row"], g["col"], backend=backend,
                       overlapping=case["overlapping"])
    else:
        (dx,) = run_op(ops.FractionalMaxPoolGrad, g["x"], g["y"], g["dy"], g["row"], g["col"], backend=backend,
                       overlapping=case["overlapping"])
    assert dx.dtype == g["dx"].dtype
    np.testing.assert_array_equal(dx, g["dx"])
    np.testing.assert_array_equal(np.signbit(dx), np.signbit(g["dx"]))


# -- semantics ------------------------------------------------------------------------------------------
def test_api_page_example(backend):
    """20 5 16 3 7 with pooling sequence [0, 2, 4] (rows [0, 2, 5], clamped) and overlapping: [41/3, 26/3]."""
    (i,) = golden_ids("example")
    case, g = golden()[0][i], golden_arrays(i)
    out, rows, _ = run_op(ops.FractionalAvgPool, g["x"], backend=backend, pooling_ratio=[1.0, 2.5, 1.0, 1.0],
                          overlapping=True, deterministic=True, seed=case["seed"], seed2=case["seed2"])
    assert rows.tolist() == [0, 2, 5]
    np.testing.assert_allclose(out.reshape(-1), [41 / 3, 26 / 3], rtol=1e-6)
    np.testing.assert_array_equal(out, g["out"])


@pytest.mark.parametrize("overlapping", [False, True])
def test_gradient_spreads_evenly_over_cells(overlapping, backend):
    (dx,) = run_op(ops.FractionalAvgPoolGrad, i64(1, 4, 4, 1), np.ones((1, 2, 2, 1), np.float64), i64(0, 2, 4),
                   i64(0, 2, 4), backend=backend, overlapping=overlapping)
    if overlapping:  # boundary rows and columns take from both neighbours
        np.testing.assert_allclose(dx[0, 0, :, 0], [1 / 9, 1 / 9, 5 / 18, 1 / 6])
        np.testing.assert_allclose(dx.sum(), 4.0)
    else:
        np.testing.assert_array_equal(dx, np.full((1, 4, 4, 1), 0.25))


def test_integer_average_truncates_toward_zero(backend):
    attrs = dict(pooling_ratio=[1.0, 2.0, 2.0, 1.0], deterministic=True, seed=1, seed2=1)
    for dt in (np.int32, np.int64):
        (out, _, _) = run_op(ops.FractionalAvgPool, np.array([[1, 2], [4, 4]], dt).reshape(1, 2, 2, 1),
                             backend=backend, **attrs)
        assert out.reshape(-1).tolist() == [2]
        (out, _, _) = run_op(ops.FractionalAvgPool, np.array([[-1, -2], [-4, -4]], dt).reshape(1, 2, 2, 1),
                             backend=backend, **attrs)
        assert out.reshape(-1).tolist() == [-2]


def test_integer_gradient_truncates_each_element(backend):
    (dx,) = run_op(ops.FractionalAvgPoolGrad, i64(1, 4, 4, 1), np.full((1, 2, 2, 1), 4, np.int32), i64(0, 2, 4),
                   i64(0, 2, 4), backend=backend, overlapping=True)
    assert dx[0, :, :, 0].tolist() == [[0, 0, 1, 0], [0, 0, 1, 0], [1, 1, 2, 1], [0, 0, 1, 1]]


def test_integer_gradient_saturates_where_tf_is_undefined(backend):
    """Divergence: three cells of 2 share row 0; 1.25 * INT32_MAX does not fit.  TF 2.21 gives INT32_MIN."""
    big = np.full((1, 3, 1, 1), 2**31 - 1, np.int32)
    (dx,) = run_op(ops.FractionalAvgPoolGrad, i64(1, 2, 2, 1), big, i64(0, 0, 0, 1), i64(0, 1), backend=backend,
                   overlapping=True)
    assert dx[0, :, :, 0].tolist() == [[2**31 - 1] * 2, [536870911] * 2]


def test_max_pool_keeps_the_first_maximum(backend):
    """Ties go to the first element of the cell in row-major order, as TF's scan does."""
    x = np.zeros((1, 4, 4, 1), np.float32)
    y, rows, cols = run_op(ops.FractionalMaxPool, x, backend=backend, pooling_ratio=[1.0, 2.0, 2.0, 1.0],
                           overlapping=True, deterministic=True, seed=1, seed2=1)
    (dx,) = run_op(ops.FractionalMaxPoolGrad, x, y, np.ones_like(y), rows, cols, backend=backend, overlapping=True)
    assert dx[0, :, :, 0].tolist() == [[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]]


def test_max_pool_nan_and_infinity(backend):
    """NaN is skipped as in TF; a cell of only NaN gives NaN and one of only -inf gives -inf
    (divergence: TF gives float32's lowest value for both)."""
    x = np.array([[np.nan, 1.0, np.nan, np.nan], [2.0, np.nan, np.nan, np.nan],
                  [-np.inf, -np.inf, 7.0, -np.inf], [-np.inf, -np.inf, np.nan, 3.0]], np.float32).reshape(1, 4, 4, 1)
    y, rows, cols = run_op(ops.FractionalMaxPool, x, backend=backend, pooling_ratio=[1.0, 2.0, 2.0, 1.0],
                           deterministic=True, seed=1, seed2=1)
    assert rows.tolist() == cols.tolist() == [0, 2, 4]
    np.testing.assert_array_equal(y[0, :, :, 0], [[2.0, np.nan], [-np.inf, 7.0]])
    # Divergence: TF refuses this gradient (its recomputed max keeps a leading NaN); ours routes to the maximum.
    (dx,) = run_op(ops.FractionalMaxPoolGrad, x, y, np.full_like(y, 5.0), rows, cols, backend=backend)
    expected = np.zeros((4, 4), np.float32)
    expected[1, 0] = expected[0, 2] = expected[2, 0] = expected[2, 2] = 5.0
    np.testing.assert_array_equal(dx[0, :, :, 0], expected)


def test_max_gradient_of_small_inputs(backend):
    """Divergence: TF refuses when len(rows) * len(cols) exceeds the input's size ("Pooling region has more
    elements than the input tensor"), which rejects every ratio-1 pooling; each element is its own cell."""
    x = np.array([[3.0, 1.0], [2.0, 4.0]], np.float32).reshape(1, 2, 2, 1)
    y, rows, cols = run_op(ops.FractionalMaxPool, x, backend=backend, pooling_ratio=[1.0, 1.0, 1.0, 1.0],
                           deterministic=True, seed=1, seed2=1)
    np.testing.assert_array_equal(y, x)
    dy = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32).reshape(1, 2, 2, 1)
    (dx,) = run_op(ops.FractionalMaxPoolGrad, x, y, dy, rows, cols, backend=backend)
    np.testing.assert_array_equal(dx, dy)


def test_gradient_too_large_to_allocate(backend):
    with pytest.raises(errors.ResourceExhaustedError):
        run_op(ops.FractionalAvgPoolGrad, i64(1, 2**20, 2**20, 1), np.ones((1, 1, 1, 1), np.float32),
               i64(0, 2**20), i64(0, 2**20), backend=backend)


def test_non_deterministic_runs_draw_fresh_sequences(backend):
    root = Scope.NewRootScope()
    x = ops.Const(root, np.zeros((1, 100, 100, 1), np.float32))
    pool = ops.FractionalAvgPool(root, x, [1.0, 1.44, 1.44, 1.0])
    sess = ClientSession(root, backend=backend, fetch_numpy=True)
    seen = set()
    for _ in range(4):
        rows, cols = sess.Run([pool.row_pooling_sequence, pool.col_pooling_sequence])
        for seq in (rows, cols):
            assert seq[0] == 0 and seq[-1] == 100 and len(seq) == 70
            assert set(np.diff(seq).tolist()) <= {1, 2}
        seen.add((tuple(rows), tuple(cols)))
    assert len(seen) == 4


@pytest.mark.parametrize("pseudo_random", [False, True])
def test_deterministic_without_seeds_is_fixed_per_session(pseudo_random):
    root = Scope.NewRootScope()
    x = ops.Const(root, np.zeros((1, 100, 100, 1), np.float32))
    pool = ops.FractionalMaxPool(root, x, [1.0, 1.44, 1.44, 1.0], deterministic=True, pseudo_random=pseudo_random)
    fetch = [pool.row_pooling_sequence, pool.col_pooling_sequence]
    runs = [tuple(map(tuple, ClientSession(root, fetch_numpy=True).Run(fetch))) for _ in range(3)]
    sess = ClientSession(root, fetch_numpy=True)
    assert len({tuple(map(tuple, sess.Run(fetch))) for _ in range(3)}) == 1
    assert len(set(runs)) > 1  # fresh seeds per session (TF: per kernel instance)


def test_inferred_shapes():
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, as_datatype(np.float32), ops.Placeholder.Shape([2, 9, -1, 3]))
    pool = ops.FractionalAvgPool(root, x, [1.0, 1.5, 1.5, 1.0])
    shapes = [pool.operation.output(i).shape().as_list() for i in range(3)]
    assert shapes == [[2, 6, -1, 3], [7], [-1]]  # TF's shape function says [6]: one short
    grad = ops.FractionalAvgPoolGrad(root, ops.Const(root, i64(2, 9, 10, 3)), pool.output,
                                     pool.row_pooling_sequence, pool.col_pooling_sequence)
    assert grad.output.shape().as_list() == [2, 9, 10, 3]
    unknown = ops.FractionalAvgPoolGrad(root, ops.Placeholder(root, as_datatype(np.int64)), pool.output,
                                        pool.row_pooling_sequence, pool.col_pooling_sequence)
    assert unknown.output.shape().as_list() == [-1, -1, -1, -1]
    mgrad = ops.FractionalMaxPoolGrad(root, x, pool.output, pool.output, pool.row_pooling_sequence,
                                      pool.col_pooling_sequence)
    assert mgrad.output.shape().as_list() == [2, 9, -1, 3]


@pytest.mark.parametrize("op", POOLS)
def test_symbolic_gradient_matches_finite_differences(op):
    root = Scope.NewRootScope()
    shape = [2, 7, 6, 2]
    x = ops.Placeholder(root, as_datatype(np.float64), ops.Placeholder.Shape(shape))
    pool = POOLS[op](root, x, [1.0, 1.7, 1.4, 1.0], overlapping=True, deterministic=True, seed=3, seed2=4)
    err = ComputeGradientError(root, [x], [shape], [pool.output], [pool.output.shape().as_list()], seed=5)
    assert err < 1e-6


# -- errors: TF's checks, the CVE inputs, and ours where TF is unsafe --------------------------------------
IA, UNIMPL = errors.InvalidArgumentError, errors.UnimplementedError
X4 = np.ones((1, 4, 4, 1), np.float32)
X_MAX = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
Y_MAX = np.array([[5, 7], [13, 15]], np.float32).reshape(1, 2, 2, 1)
SEQ = i64(0, 2, 4)
DY_21730 = np.arange(1, 13, dtype=np.int64).reshape(1, 2, 3, 2)


def _pool(op, x, ratio, **attrs):
    return (op, [x], dict(pooling_ratio=ratio, **attrs))


def _avg_grad(orig, dy, row, col, overlapping=False):
    return ("FractionalAvgPoolGrad", [np.asarray(orig, np.int64), dy, np.asarray(row, np.int64),
                                      np.asarray(col, np.int64)], dict(overlapping=overlapping))


def _max_grad(x=X_MAX, y=Y_MAX, dy=None, row=SEQ, col=SEQ, overlapping=False):
    dy = np.ones_like(y) if dy is None else dy
    return ("FractionalMaxPoolGrad", [x, y, dy, np.asarray(row, np.int64), np.asarray(col, np.int64)],
            dict(overlapping=overlapping))


# (id, (op, inputs, attrs), error class, message regex, TF 2.21 on the same input: same / accepts / unsafe)
ERROR_CASES = [
    ("CVE-2022-41900 avg", _pool("FractionalAvgPool", X4, [1.0, 0.5, 1.5, 1.0]), IA,
     r"pooling_ratio cannot be smaller than 1, got: 0\.5", "same"),
    ("CVE-2022-41900 max", _pool("FractionalMaxPool", X4, [1.0, 1.5, 0.5, 1.0]), IA,
     r"pooling_ratio cannot be smaller than 1, got: 0\.5", "same"),
    ("ratio NaN", _pool("FractionalAvgPool", X4, [1.0, math.nan, 1.5, 1.0]), IA,
     r"pooling_ratio cannot be smaller than 1, got: nan", "same"),
    ("ratio of 5", _pool("FractionalMaxPool", X4, [1.0, 1.5, 1.5, 1.0, 1.0]), IA,
     r"pooling_ratio field must specify 4 dimensions", "same"),
    ("ratio of 3", _pool("FractionalAvgPool", X4, [1.0, 1.5, 1.5]), IA,
     r"Length for attr 'pooling_ratio' of 3 must be at least minimum 4", "same"),
    ("CVE-2023-25801 avg", _pool("FractionalAvgPool", np.zeros((3, 30, 50, 3)), [2.0, 3.0, 1.0, 1.0],
                                 pseudo_random=True, overlapping=True, deterministic=True, seed=341261001), UNIMPL,
     r"Fractional average pooling is not yet supported on the batch nor channel dimension\.", "same"),
    ("CVE-2023-25801 max", _pool("FractionalMaxPool", X4, [1.0, 1.5, 1.5, 2.0]), UNIMPL,
     r"Fractional max pooling is not yet supported on the batch nor channel dimension\.", "same"),
    ("seeds without deterministic", _pool("FractionalAvgPool", X4, [1.0, 1.5, 1.5, 1.0], seed=1), IA,
     r"Both seed and seed2 should be 0 if deterministic is false\.", "same"),
    ("rank 3", _pool("FractionalMaxPool", X4[0], [1.0, 1.5, 1.5, 1.0]), IA, r"tensor_in must be 4-dimensional",
     "same"),
    ("CVE-2021-29550", _pool("FractionalAvgPool", np.full((1, 1, 1, 1), 60, np.int32),
                             [1.0, 1.0000014345305555, 1.0, 1.0]), IA,
     r"Pooling ratio is higher than input dimension size for dimension 1\. Input dim size: 1 pooling ratio: 1$",
     "same"),
    ("CVE-2022-21735", _pool("FractionalMaxPool", np.array([[[[1, 4, 2, 3]]]], np.float32),
                             [1.0, 1.44, 1.73, 1.0]), IA,
     r"for dimension 1\. Input dim size: 1 pooling ratio: 1\.44", "same"),
    ("empty batch", _pool("FractionalAvgPool", np.zeros((0, 4, 4, 1), np.float32), [1.0, 1.5, 1.5, 1.0]), IA,
     r"for dimension 0\. Input dim size: 0 pooling ratio: 1", "same"),
    ("empty depth", _pool("FractionalMaxPool", np.zeros((1, 4, 4, 0), np.float32), [1.0, 1.5, 1.5, 1.0]), IA,
     r"for dimension 3\. Input dim size: 0", "same"),
    ("CVE-2021-29578", _avg_grad([1, 3, 2, 3], np.full((1, 1, 1, 1), 2, np.int64), [1], [1]), IA,
     r"Given out_backprop shape \[1,1,1,1\], row_seq_tensor must have at least 2 elements, but got 1", "same"),
    ("CVE-2021-29578 col", _avg_grad([1, 3, 2, 3], np.full((1, 1, 1, 1), 2, np.int64), [0, 1], [1]), IA,
     r"col_seq_tensor must have at least 2 elements, but got 1", "same"),
    ("CVE-2021-37651", _avg_grad([0, 1, 2, 3], np.full((1, 2, 2, 1), 541, np.int64), [0, 0, 0, 0, 0],
                                 [-2, 0, 0, 2, 0], overlapping=True), IA,
     r"Batch dimension of input must not be 0", "same"),
    ("zero rows", _avg_grad([1, 0, 2, 3], np.ones((1, 1, 1, 1)), [0, 1], [0, 1]), IA,
     r"Rows dimension of input must not be 0", "same"),
    ("CVE-2022-21730 rows", _avg_grad([2, 2, 2, 2], DY_21730, [-10, 1, 2, 3], [1, 2, 3, 4], overlapping=True), IA,
     r"Row sequence tensor values must not be negative, got -10   1   2   3$", "same"),
    ("CVE-2022-21730 cols", _avg_grad([2, 2, 2, 2], DY_21730, [1, 2, 3, 4], [-10, 1, 2, 3], overlapping=True), IA,
     r"Column sequence tensor values must not be negative, got -10   1   2   3$", "same"),
    ("empty first cell", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 1)), [0, 0, 4], SEQ), IA,
     r"Row sequence tensor values must not be negative, got 0 0 4", "same"),
    ("CVE-2022-35963", _avg_grad(np.full(4, -1879048192), np.ones((0, 0, 0, 0)), np.ones(4), np.ones(4),
                                 overlapping=True), IA, r"out_backprop must be positive for all dimension, got:0",
     "same"),
    ("CVE-2022-35963 negative shape", _avg_grad(np.full(4, -1879048192), np.ones((1, 1, 1, 1)), np.ones(4),
                                                np.ones(4), overlapping=True), IA,
     r"Expected a non-negative size, got -1879048192", "same"),
    ("shape overflow", _avg_grad([2**40, 2**40, 2**40, 1], np.ones((1, 1, 1, 1)), [0, 1], [0, 1]), IA,
     r"Encountered overflow when multiplying 1099511627776 with 1099511627776, result: -1", "same"),
    ("shape of 5", _avg_grad([1, 4, 4, 1, 1], np.ones((1, 2, 2, 1)), SEQ, SEQ), IA,
     r"original input tensor shape must be1-dimensional and 4 elements", "same"),
    ("out_backprop rank 3", _avg_grad([1, 4, 4, 1], np.ones((2, 2, 1)), SEQ, SEQ), IA,
     r"out_backprop must be 4-dimensional", "same"),
    ("#107123 batch", _avg_grad([1, 4, 4, 1], np.ones((2, 2, 2, 1)), SEQ, SEQ), IA,
     r"out_backprop batch 2 exceeds the batch 1 of orig_input_tensor_shape \[1,4,4,1\]", "unsafe"),
    ("#107123 depth", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 2)), SEQ, SEQ), IA,
     r"out_backprop depth 2 exceeds the depth 1", "unsafe"),
    ("decreasing sequence", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 1)), [3, 1, 4], SEQ), IA,
     r"row_pooling_sequence must be non-decreasing, got 3 1 4", "accepts"),
    ("sequence past the input", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 1)), SEQ, [0, 5, 9]), IA,
     r"col_pooling_sequence must end inside the input \(at most 4\), got 0 5 9", "accepts"),
    ("CVE-2021-29580 rank", _max_grad(x=X_MAX[0]), IA, r"orig_input should be a tensor of rank 4", "same"),
    ("CVE-2021-29580 empty", _max_grad(x=np.zeros((0, 4, 4, 1), np.float32)), IA, r"orig_input must not be empty",
     "same"),
    ("orig_output rank 3", _max_grad(y=Y_MAX[0], dy=np.ones((1, 2, 2, 1), np.float32)), IA,
     r"orig_output should be a tensor of rank 4", "same"),
    ("orig_output empty", _max_grad(y=np.zeros((1, 0, 2, 1), np.float32), dy=np.ones((1, 2, 2, 1), np.float32)), IA,
     r"orig_output must not be empty", "same"),
    ("CVE-2022-35981", _max_grad(y=Y_MAX + 1), IA, r"tensor_out_dup is not the same as tensor_out", "same"),
    ("sequence not a vector", _max_grad(row=[[0, 2, 4]]), IA,
     r"row_pooling_sequence must be a vector, received shape \[1,3\]", "same"),
    ("sequence too short", _max_grad(col=[0, 2]), IA,
     r"col_pooling_sequence must have orig_output.dim_size\(2\) \+ 1 = 3 elements, got 2", "same"),
    ("sequence too long", _max_grad(row=[0, 2, 4, 6]), IA, r"row_pooling_sequence must have .* = 3 elements", "unsafe"),
    ("out_backprop larger", _max_grad(dy=np.ones((1, 4, 4, 1), np.float32)), IA,
     r"out_backprop must have the shape of orig_output \[1,2,2,1\], got \[1,4,4,1\]", "unsafe"),
    ("out_backprop smaller", _max_grad(dy=np.ones((1, 1, 2, 1), np.float32)), IA,
     r"out_backprop must have the shape of orig_output", "accepts"),
    ("batch mismatch", _max_grad(x=np.concatenate([X_MAX, X_MAX])), IA,
     r"orig_output batch 1 differs from the orig_input batch 2", "unsafe"),
    ("depth mismatch", _max_grad(x=np.concatenate([X_MAX, X_MAX], axis=3)), IA,
     r"orig_output depth 1 differs from the orig_input depth 2", "unsafe"),
    ("negative sequence", _max_grad(row=[-1, 2, 4]), IA, r"Row sequence tensor values must not be negative", "unsafe"),
    ("max sequence past the input", _max_grad(row=[0, 2, 9]), IA, r"row_pooling_sequence must end inside the input",
     "accepts"),
    ("empty max cell", _max_grad(row=[0, 2, 2], y=np.array([[5, 7], [-F32_MAX, -F32_MAX]],
                                                             np.float32).reshape(1, 2, 2, 1)), IA,
     r"row_pooling_sequence 0 2 2 leaves pooling cell 1 empty", "same"),
]
ERROR_IDS = [c[0] for c in ERROR_CASES]


@pytest.mark.parametrize("desc,case,cls,message,tf_says", ERROR_CASES, ids=ERROR_IDS)
def test_errors_with_constant_inputs(desc, case, cls, message, tf_says):
    """Consts: caught at build time where the shape function can see them, else by the kernel."""
    op, inputs, attrs = case
    with pytest.raises(cls, match=message):
        run_op(getattr(ops, op), *inputs, **attrs)


@pytest.mark.parametrize("desc,case,cls,message,tf_says", ERROR_CASES, ids=ERROR_IDS)
def test_errors_at_run_time(desc, case, cls, message, tf_says, backend):
    """Placeholders of unknown shape: the kernels check everything themselves."""
    op, inputs, attrs = case
    if desc == "ratio of 3":
        pytest.skip("an attr error: always at build time")
    with pytest.raises(cls, match=message):
        run_fed(getattr(ops, op), inputs, backend=backend, **attrs)


def test_shape_checks_at_build_time():
    root = Scope.NewRootScope()
    with pytest.raises(IA, match=r"for dimension 2\. Input dim size: 1 pooling ratio: 1\.5"):
        ops.FractionalAvgPool(root,
                              ops.Placeholder(root, as_datatype(np.float32), ops.Placeholder.Shape([2, 4, 1, -1])),
                              [1.0, 1.5, 1.5, 1.0])
    dy = ops.Placeholder(root, as_datatype(np.float32), ops.Placeholder.Shape([3, 2, 2, 1]))
    with pytest.raises(IA, match=r"out_backprop batch 3 exceeds"):
        ops.FractionalAvgPoolGrad(root, ops.Const(root, i64(1, 4, 4, 1)), dy,
                                  ops.Placeholder(root, as_datatype(np.int64)),
                                  ops.Placeholder(root, as_datatype(np.int64)))


@pytest.mark.tf
@pytest.mark.parametrize("desc,case,cls,message,tf_says", [c for c in ERROR_CASES if c[4] != "unsafe"],
                         ids=[c[0] for c in ERROR_CASES if c[4] != "unsafe"])
def test_errors_match_tf(desc, case, cls, message, tf_says):
    """TF raises the same class on the same input ("same"), or accepts an input we refuse ("accepts")."""
    tf = require_tf()
    op, inputs, attrs = case
    names = {"FractionalAvgPool": ["value"], "FractionalMaxPool": ["value"],
             "FractionalAvgPoolGrad": ["orig_input_tensor_shape", "out_backprop", "row_pooling_sequence",
                                       "col_pooling_sequence"],
             "FractionalMaxPoolGrad": ["orig_input", "orig_output", "out_backprop", "row_pooling_sequence",
                                       "col_pooling_sequence"]}[op]
    kwargs = dict(zip(names, inputs), **attrs)
    if tf_says == "accepts":
        raw_op(op, **kwargs)
        return
    tf_cls = {IA: tf.errors.InvalidArgumentError, UNIMPL: tf.errors.UnimplementedError}[cls]
    with pytest.raises(tf_cls):
        raw_op(op, **kwargs)


@pytest.mark.tf
def test_tf_corrupts_memory_where_we_refuse():
    """Issue #107123: an out_backprop deeper than the input makes TF 2.21 write into the wrong elements and
    past its buffer (run in a subprocess only); the first channel alone would sum to 4."""
    outcome = run_isolated("""
        dx = tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=np.array([1, 4, 4, 1], np.int64),
            out_backprop=np.ones((1, 2, 2, 2), np.float32), row_pooling_sequence=np.array([0, 2, 4], np.int64),
            col_pooling_sequence=np.array([0, 2, 4], np.int64))
        result["sum"] = float(np.sum(dx.numpy()))
    """)
    assert "crash" in outcome or outcome["result"]["sum"] != 4.0, outcome
    with pytest.raises(IA, match="exceeds"):
        run_op(ops.FractionalAvgPoolGrad, i64(1, 4, 4, 1), np.ones((1, 2, 2, 2), np.float32), SEQ, SEQ)


# -- the NumPy fast paths against the generic kernels ------------------------------------------------------
@pytest.fixture
def tiny_tiles(monkeypatch):
    """Many one-item tiles, shared over the threads."""
    monkeypatch.setattr(impl, "TILE_BYTES", 1)


GRAD_LAYOUTS = [  # (orig shape, out_backprop shape, rows, cols, overlapping)
    ((3, 11, 9, 5), (3, 7, 5, 5), [0, 1, 3, 5, 6, 8, 9, 11], [0, 2, 4, 5, 7, 9], True),
    ((3, 11, 9, 5), (3, 7, 5, 5), [0, 1, 3, 5, 6, 8, 9, 11], [0, 2, 4, 5, 7, 9], False),
    ((2, 8, 8, 3), (1, 3, 3, 2), [1, 3, 5, 6], [0, 3, 4, 7], True),  # uncovered rows, smaller batch and depth
    ((2, 8, 8, 3), (2, 4, 3, 3), [0, 2, 2, 5, 8], [0, 0, 3, 8], True),  # repeated values: up to 3 cells overlap
    ((2, 8, 8, 3), (2, 4, 3, 3), [0, 2, 2, 5, 8], [0, 3, 3, 8], False),  # empty cells
    ((1, 5, 1, 2), (1, 1, 1, 2), [0, 5], [0, 1], True),
]


@pytest.mark.parametrize("layout", range(len(GRAD_LAYOUTS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64], ids=str)
def test_numpy_gradient_path_matches_generic_bit_for_bit(layout, dtype, tiny_tiles):
    orig, dy_shape, rows, cols, overlapping = GRAD_LAYOUTS[layout]
    rng = np.random.default_rng(layout)
    dy = (rng.standard_normal(dy_shape) * 50).astype(dtype)
    args = (np.array(orig, np.int64), dy, np.array(rows, np.int64), np.array(cols, np.int64))
    (fast,) = run_op(ops.FractionalAvgPoolGrad, *args, backend="numpy", overlapping=overlapping)
    (generic,) = run_op(ops.FractionalAvgPoolGrad, *args, backend="array_api_strict", overlapping=overlapping)
    np.testing.assert_array_equal(fast, generic)
    np.testing.assert_array_equal(np.signbit(fast), np.signbit(generic))
    if dtype == np.float64:  # the adjoint of pooling: <pool(x), dy> = <x, grad(dy)> with fixed sequences
        rc = impl.cells(np.array(rows), dy_shape[1], orig[1], overlapping)
        cc = impl.cells(np.array(cols), dy_shape[2], orig[2], overlapping)
        w_r = [(np.arange(orig[1]) >= s) & (np.arange(orig[1]) <= e) for s, e in zip(rc.start, rc.end)]
        w_c = [(np.arange(orig[2]) >= s) & (np.arange(orig[2]) <= e) for s, e in zip(cc.start, cc.end)]
        x = rng.standard_normal(orig)[: dy_shape[0], :, :, : dy_shape[3]]
        counts = np.maximum(impl.cell_counts(rc, cc), 1)[None, :, :, None]
        pooled = np.einsum("rh,bhwd,cw->brcd", np.array(w_r, float), x, np.array(w_c, float)) / counts
        np.testing.assert_allclose(np.sum(pooled * dy), np.sum(x * fast[: dy_shape[0], :, :, : dy_shape[3]]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64], ids=str)
@pytest.mark.parametrize("overlapping", [False, True])
def test_numpy_pool_path_matches_generic(dtype, overlapping, tiny_tiles):
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((5, 23, 17, 3)) * 100).astype(dtype)
    attrs = dict(pooling_ratio=[1.0, 2.7, 1.3, 1.0], overlapping=overlapping, deterministic=True, seed=2, seed2=9)
    fast = run_op(ops.FractionalAvgPool, x, backend="numpy", **attrs)
    generic = run_op(ops.FractionalAvgPool, x, backend="array_api_strict", **attrs)
    for a, b in zip(fast[1:], generic[1:]):
        np.testing.assert_array_equal(a, b)
    assert_pool_close(fast[0], generic[0], x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64], ids=str)
@pytest.mark.parametrize("overlapping", [False, True])
def test_numpy_max_paths_match_generic(dtype, overlapping, tiny_tiles):
    """Separable argmax (columns, then rows) on the NumPy path = TF's row-major scan of the generic one,
    ties (values from a small range) and signed zeros included."""
    rng = np.random.default_rng(11)
    x = rng.integers(-2, 3, (4, 19, 14, 3)).astype(dtype)
    if dtype in (np.float32, np.float64):
        x[rng.random(x.shape) < 0.3] = -0.0
    attrs = dict(pooling_ratio=[1.0, 1.9, 1.4, 1.0], overlapping=overlapping, deterministic=True, seed=4, seed2=1)
    results = {}
    for backend in ("numpy", "array_api_strict"):
        y, rows, cols = run_op(ops.FractionalMaxPool, x, backend=backend, **attrs)
        dy = rng.standard_normal(y.shape).astype(dtype) if backend == "numpy" else results["numpy"][2]
        (dx,) = run_op(ops.FractionalMaxPoolGrad, x, y, dy, rows, cols, backend=backend, overlapping=overlapping)
        results[backend] = (y, dx, dy)
    for a, b in zip(results["numpy"][:2], results["array_api_strict"][:2]):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def test_pool_keeps_infinities_in_their_cells(backend):
    """A sparse gather, not a 0/1 matrix product: an inf or NaN does not leak into other cells."""
    x = np.zeros((1, 6, 6, 1), np.float32)
    x[0, 0, 0, 0], x[0, 5, 5, 0] = np.inf, np.nan
    out, rows, cols = run_op(ops.FractionalAvgPool, x, backend=backend, pooling_ratio=[1.0, 2.0, 2.0, 1.0],
                             deterministic=True, seed=1, seed2=2)
    expected = np.zeros((3, 3), np.float32)
    expected[0, 0], expected[2, 2] = np.inf, np.nan
    np.testing.assert_array_equal(out[0, :, :, 0], expected)


# -- live differential tests against TF --------------------------------------------------------------------
_LIVE = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def tf_loaded():
    """Import TF before hypothesis starts (TF raises the recursion limit while importing)."""
    return require_tf()


@st.composite
def pool_configs(draw):
    shape = [draw(st.integers(1, 3)), draw(st.integers(1, 24)), draw(st.integers(1, 24)), draw(st.integers(1, 4))]
    ratio = [1.0] + [float(np.float32(draw(st.floats(1.0, min(n, 4.0))))) for n in shape[1:3]] + [1.0]
    return dict(shape=shape, dtype=draw(st.sampled_from(["float32", "float64", "int32", "int64"])),
                pooling_ratio=ratio, overlapping=draw(st.booleans()), pseudo_random=draw(st.booleans()),
                seed=draw(st.integers(-2**63, 2**63 - 1)), seed2=draw(st.integers(0, 2**63 - 1)),
                data=draw(st.integers(0, 2**31)))


def _values(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    if dtype.startswith("int"):
        return rng.integers(-6, 7, shape).astype(dtype)
    return (rng.standard_normal(shape) * 4).astype(dtype)


@pytest.mark.tf
@_LIVE
@given(cfg=pool_configs())
def test_pools_and_gradients_match_tf(cfg, backend, tf_loaded):
    rng = np.random.default_rng(cfg["data"])
    x = _values(rng, cfg["shape"], cfg["dtype"])
    attrs = dict(pool_attrs(cfg))
    for op in POOLS:
        ours = run_op(POOLS[op], x, backend=backend, **attrs)
        ref = raw_op(op, value=x, **attrs)
        np.testing.assert_array_equal(ours[1], ref[1])
        np.testing.assert_array_equal(ours[2], ref[2])
        if op == "FractionalMaxPool":
            np.testing.assert_array_equal(ours[0], ref[0])
        else:
            assert_pool_close(ours[0], ref[0], x)
        dy = _values(rng, ref[0].shape, cfg["dtype"])
        if op == "FractionalAvgPool":
            grad_in = dict(orig_input_tensor_shape=np.array(x.shape, np.int64), out_backprop=dy)
            (dx,) = run_op(ops.FractionalAvgPoolGrad, grad_in["orig_input_tensor_shape"], dy, ref[1], ref[2],
                           backend=backend, overlapping=cfg["overlapping"])
        else:
            grad_in = dict(orig_input=x, orig_output=ref[0], out_backprop=dy)
            (dx,) = run_op(ops.FractionalMaxPoolGrad, x, ref[0], dy, ref[1], ref[2], backend=backend,
                           overlapping=cfg["overlapping"])
            if ref[1].size * ref[2].size > x.size:  # divergence: TF refuses these small inputs
                with pytest.raises(tf_loaded.errors.InvalidArgumentError, match="Pooling region has more"):
                    raw_op(op + "Grad", **grad_in, row_pooling_sequence=ref[1], col_pooling_sequence=ref[2],
                           overlapping=cfg["overlapping"])
                continue
        (tf_dx,) = raw_op(op + "Grad", **grad_in, row_pooling_sequence=ref[1], col_pooling_sequence=ref[2],
                          overlapping=cfg["overlapping"])
        np.testing.assert_array_equal(dx, tf_dx)


@pytest.mark.tf
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(h=st.integers(1, 3000), ratio=st.floats(1.0, 50.0), pseudo_random=st.booleans(),
       seed=st.integers(-2**63, 2**63 - 1), seed2=st.integers(-2**63, 2**63 - 1))
def test_sequences_match_tf_for_large_inputs(h, ratio, pseudo_random, seed, seed2, tf_loaded):
    ratio = float(np.float32(min(ratio, h)))
    attrs = dict(pooling_ratio=[1.0, ratio, 1.0, 1.0], pseudo_random=pseudo_random, deterministic=True,
                 seed=seed, seed2=seed2)
    if seed == 0 and seed2 == 0:
        return
    _, rows, cols = raw_op("FractionalAvgPool", value=np.zeros((1, h, 2, 1), np.float32), **attrs)
    ours = impl.pooling_sequences(h, 2, attrs["pooling_ratio"], pseudo_random, seed, seed2)
    np.testing.assert_array_equal(ours[0], rows)
    np.testing.assert_array_equal(ours[1], cols)
