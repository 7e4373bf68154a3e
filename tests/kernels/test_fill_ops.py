"""Fill, ZerosLike, OnesLike, OneHot, Range: live differential tests against TF and errors (golden values and
the per-dtype cases run in tests/conformance)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.kernels import _array_strategies as S
from tests.kernels._array_strategies import differential
from tfops_py import ClientSession, Scope, errors, ops
from tfops_py.framework.dtypes import DT_INT32
from tfops_py.kernels.array.fill_ops import format_number





def _dtype(backend, data, types=S.ALL_TYPES):
    strict = [t for t in types if t not in ("float16", "bfloat16", "string")]
    return data.draw(st.sampled_from(types if backend == "numpy" else strict))


@pytest.mark.tf
@S.live(40)
@given(seed=S.seeds, mode=S.modes, data=st.data())
def test_fill_matches_tf(seed, mode, data, backend):
    dims = data.draw(st.lists(st.integers(-2 if data.draw(st.integers(0, 5)) == 0 else 0, 3), max_size=4))
    dims_arr = S.index_array(dims if data.draw(st.integers(0, 7)) else [dims], data.draw(st.sampled_from(S.INDEX)))
    vshape = data.draw(st.sampled_from([(), (), (), (1,), (2,)]))
    value = S.array(np.random.default_rng(seed), vshape, _dtype(backend, data))
    differential("Fill", [dims_arr, value], {}, mode, backend)


@pytest.mark.tf
@S.live(30)
@given(shape=S.shapes(0, 3, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_zeros_ones_like_match_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype(backend, data))
    differential("ZerosLike", [x], {}, mode, backend)
    if x.dtype != object:  # TF has no OnesLike for strings (its OpDef refuses them)
        differential("OnesLike", [x], {}, mode, backend)


@pytest.mark.tf
@S.live(50)
@given(shape=S.shapes(0, 3, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_one_hot_matches_tf(shape, seed, mode, data, backend):
    rng = np.random.default_rng(seed)
    depth = data.draw(st.integers(-1, 4))
    index = data.draw(st.sampled_from(["uint8", "int8", "int32", "int64"]))
    low = 0 if index == "uint8" else -2
    indices = rng.integers(low, max(depth, 0) + 2, size=shape).astype(index)
    dtype = _dtype(backend, data)
    on, off = S.array(rng, (), dtype), S.array(rng, data.draw(st.sampled_from([(), (), (1,)])), dtype)
    axis = data.draw(st.integers(-2, len(shape) + 1))
    d = np.asarray(depth, np.int32) if data.draw(st.integers(0, 7)) else np.asarray([depth], np.int32)
    spec = "const" if mode == "const" else [data.draw(st.sampled_from(["feed", None, list(shape)])),
                                            data.draw(S.modes), "feed", "feed"]
    differential("OneHot", [indices, d, on, off], {"axis": axis}, spec, backend)


@st.composite
def range_args(draw, dtypes):
    dtype = draw(st.sampled_from(dtypes))
    if np.dtype(S.np_dtype(dtype)).kind in "iu":
        lo = 0 if dtype.startswith("u") else -20
        start, limit = draw(st.integers(lo, 20)), draw(st.integers(lo, 20))
        delta = draw(st.integers(-4, 4))
    else:
        # TF's CPU flushes subnormal bounds to zero (a declared divergence): draw normal floats
        vals = st.one_of(st.floats(-20, 20, width=32, allow_subnormal=False), st.sampled_from([0.0, 0.1, 1e-3, -0.7]))
        start, limit, delta = draw(vals), draw(vals), draw(vals)
        if draw(st.integers(0, 20)) == 0:
            limit = draw(st.sampled_from([float("inf"), float("nan"), 1e30]))
        if abs(delta) < 1e-2 and delta != 0:
            delta = 0.5  # keep outputs small
    dt = S.np_dtype(dtype)
    with np.errstate(over="ignore"):  # 1e30 is inf in half precision, on purpose
        return [np.asarray(v).astype(dt) for v in (start, limit, delta)]


@pytest.mark.tf
@S.live(60)
@given(args=range_args(["int32", "int64", "float32", "float64", "bfloat16", "float16"]), mode=S.modes)
def test_range_matches_tf(args, mode, backend):
    if backend != "numpy" and args[0].dtype.name in ("float16", "bfloat16"):
        return
    differential("Range", args, {}, mode, backend)


def test_range_values_are_start_plus_i_times_delta():
    """TF computes start + T(i) * delta in the op's dtype (not a running sum)."""
    root = Scope.NewRootScope()
    r = ops.Range(root, np.float32(0), np.float32(1), np.float32(0.1))
    (v,) = ClientSession(root, fetch_numpy=True).Run([r])
    np.testing.assert_array_equal(v, np.arange(10, dtype=np.float32) * np.float32(0.1))
    assert r.output.shape() == [10]


def test_range_dtypes_beyond_tf_cpu_kernels(backend):
    """int8/int16/uint16/uint32/uint64 ranges: TF's OpDef allows them but its CPU has no kernel; we compute."""
    for dt in (np.int8, np.int16, np.uint16, np.uint32, np.uint64):
        root = Scope.NewRootScope()
        r = ops.Range(root, dt(1), dt(9), dt(3))
        (v,) = ClientSession(root, backend=backend, fetch_numpy=True).Run([r])
        assert v.dtype == dt and v.tolist() == [1, 4, 7]


def test_range_half_constants_rejected_at_build_as_tf():
    root = Scope.NewRootScope()
    with pytest.raises(errors.InvalidArgumentError, match="Unsupported dtype19"):
        ops.Range(root, np.float16(0), np.float16(3), np.float16(1))


def test_fill_fed_dims_checked_at_run_time(backend):
    root = Scope.NewRootScope()
    dims = ops.Placeholder(root, DT_INT32)
    f = ops.Fill(root, dims, np.float32(2))
    sess = ClientSession(root, backend=backend, fetch_numpy=True)
    assert sess.Run({dims.output: np.array([2, 1], np.int32)}, [f])[0].tolist() == [[2.0], [2.0]]
    with pytest.raises(errors.InvalidArgumentError, match="Dimension -1 must be >= 0"):
        sess.Run({dims.output: np.array([2, -1], np.int32)}, [f])


@pytest.mark.parametrize("value, text", [
    (np.float32(5.5), "5.5"), (np.float32(0), "0"), (np.float32(0.1), "0.1"), (np.float32(1e30), "1e+30"),
    (np.float32(123456789), "1.23457e+08"), (np.float64(0.1), "0.1"), (np.float32("nan"), "nan"),
    (np.float32("-inf"), "-inf"), (np.int64(-7), "-7"), (np.asarray(0.7, ml_dtypes.bfloat16)[()], "0.699219"),
    (np.float16(0.7), "0.700195"),
])
def test_numbers_print_as_tf(value, text):
    assert format_number(value) == text
