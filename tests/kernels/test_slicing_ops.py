"""Slice, StridedSlice, GatherV2: live differential tests against TF and error cases (golden values and the
per-dtype cases run in tests/conformance)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.kernels import _array_strategies as S
from tests.kernels._array_strategies import differential


# -- StridedSlice ---------------------------------------------------------------------------------------
@st.composite
def strided_slice_args(draw):
    rng = np.random.default_rng(draw(S.seeds))
    shape = draw(S.shapes(0, 4, 0, 5))
    n = draw(st.integers(0, 5))
    index = draw(st.sampled_from(["int16", "int32", "int64"]))
    ends = st.integers(-7, 7)
    begin = draw(st.lists(ends, min_size=n, max_size=n))
    end = draw(st.lists(ends, min_size=n, max_size=n))
    strides = draw(st.lists(st.sampled_from([1, 1, 1, 2, 3, -1, -1, -2, -3, 0]), min_size=n, max_size=n))
    bits = st.integers(0, 2 ** (n + 1) - 1)
    one_bit = st.sampled_from([0, 0, 0] + [1 << i for i in range(n + 1)] + [3])
    attrs = {"begin_mask": draw(bits), "end_mask": draw(bits), "ellipsis_mask": draw(one_bit),
             "new_axis_mask": draw(st.sampled_from([0, 0]) | bits),
             "shrink_axis_mask": draw(st.sampled_from([0]) | bits)}
    dtype = draw(st.sampled_from(["float32", "int32", "bool", "complex64"]))
    x = S.array(rng, shape, dtype)
    return [x, S.index_array(begin, index), S.index_array(end, index), S.index_array(strides, index)], attrs


@pytest.mark.tf
@S.live(150)
@given(args=strided_slice_args(), mode=S.modes)
def test_strided_slice_matches_tf(args, mode, backend):
    inputs, attrs = args
    differential("StridedSlice", inputs, attrs, mode, backend)


@pytest.mark.tf
@S.live(60)
@given(args=strided_slice_args(), data=st.data())
def test_strided_slice_shape_function_matches_tf(args, data):
    """Partly known input shapes and spec values: our static shape is TF's (or both reject)."""
    inputs, attrs = args
    x = inputs[0]
    known = data.draw(st.lists(st.booleans(), min_size=x.ndim, max_size=x.ndim))
    x_spec = None if data.draw(st.booleans()) and x.ndim else [d if k else -1 for d, k in zip(x.shape, known)]
    spec = [x_spec] + [data.draw(st.sampled_from(["const", "const", "feed"])) for _ in range(3)]
    differential("StridedSlice", inputs, attrs, spec)


# -- Slice -------------------------------------------------------------------------------------------------
@pytest.mark.tf
@S.live(60)
@given(shape=S.shapes(0, 4, 0, 4), seed=S.seeds, mode=S.modes, data=st.data())
def test_slice_matches_tf(shape, seed, mode, data, backend):
    dtype = data.draw(st.sampled_from(["float32", "int32", "bool", "complex128"]
                                      + (["string", "bfloat16"] if backend == "numpy" else [])))
    x = S.array(np.random.default_rng(seed), shape, dtype)
    n = len(shape) if data.draw(st.integers(0, 7)) else data.draw(st.integers(0, 4))
    begin = [data.draw(st.integers(-1 if data.draw(st.integers(0, 9)) == 0 else 0, d)) for d in (shape + (2,) * n)[:n]]
    size = [data.draw(st.integers(-2 if data.draw(st.integers(0, 9)) == 0 else -1, max(d - b, 0) + 1))
            for d, b in zip((shape + (2,) * n)[:n], begin)]
    index = data.draw(st.sampled_from(S.INDEX))
    spec = "const" if mode == "const" else [
        data.draw(st.sampled_from(["feed", None, [-1] * len(shape), list(shape)])),
        data.draw(S.modes), data.draw(S.modes)]
    differential("Slice", [x, S.index_array(begin, index), S.index_array(size, index)], {}, spec, backend)


# -- GatherV2 ----------------------------------------------------------------------------------------------
@pytest.mark.tf
@S.live(60)
@given(shape=S.shapes(0, 4, 0, 4), seed=S.seeds, mode=S.modes, data=st.data())
def test_gather_matches_tf(shape, seed, mode, data, backend):
    rng = np.random.default_rng(seed)
    dtype = data.draw(st.sampled_from(["float32", "int64", "bool", "complex64"]
                                      + (["string", "float16"] if backend == "numpy" else [])))
    params = S.array(rng, shape, dtype)
    rank = len(shape)
    axis = data.draw(st.integers(-rank - 1, rank))
    batch_dims = data.draw(st.sampled_from([0, 0, 0, 1, 2, -1]))
    a = axis + rank if axis < 0 else axis
    n = shape[a] if 0 <= a < rank else 2
    bd = batch_dims if batch_dims >= 0 else 1
    ishape = list(shape[:bd]) + list(data.draw(S.shapes(0, 2, 0, 3)))
    if data.draw(st.integers(0, 9)) == 0 and ishape:
        ishape[0] += 1
    high = n + (1 if data.draw(st.integers(0, 5)) == 0 else 0)
    low = -1 if data.draw(st.integers(0, 9)) == 0 else 0
    itype = data.draw(st.sampled_from(["int16", "int32", "int64"]))
    indices = rng.integers(low, max(high, low + 1), size=ishape).astype(itype)
    ax = S.index_array(axis, data.draw(st.sampled_from(S.INDEX)))
    spec = "const" if mode == "const" else [
        data.draw(st.sampled_from(["feed", None, list(shape)])),
        data.draw(st.sampled_from(["feed", None, ishape])), data.draw(S.modes)]
    # Documented divergence: with the axis unknown, TF's static rank ignores that a negative batch_dims
    # counts from the end (it infers a rank too large); ours is the rank the kernel produces.
    tf_rank_is_off = batch_dims < 0 and spec != "const" and spec[2] == "feed"
    differential("GatherV2", [params, indices, ax], {"batch_dims": batch_dims}, spec, backend,
                 check_shapes=not tf_rank_is_off)


def test_gather_out_of_range_names_the_index(backend):
    from tfops_py import ClientSession, Scope, errors, ops
    from tfops_py.framework.dtypes import DT_INT32

    root = Scope.NewRootScope()
    idx = ops.Placeholder(root, DT_INT32)
    g = ops.GatherV2(root, np.zeros((2, 3), np.float32), idx, np.int32(1))
    sess = ClientSession(root, backend=backend, fetch_numpy=True)
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1,1\] = 5 is not in \[0, 3\)"):
        sess.Run({idx.output: np.array([[0, 1], [2, 5]], np.int32)}, [g])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices = -1 is not in \[0, 3\)"):
        sess.Run({idx.output: np.array(-1, np.int32)}, [g])


def test_gather_index_type_must_reach_the_dimension():
    """int16 indices cannot address a dimension above 32767 (TF's check, made before any index is read)."""
    from tfops_py import errors
    from tfops_py.backends import get_backend
    from tfops_py.framework.dtypes import DT_FLOAT, DT_INT16, DT_INT32
    from tfops_py.kernels.registry import KernelContext
    from tfops_py.kernels.array.slicing_ops import _gather_dims

    ctx = KernelContext("GatherV2", "g", {"batch_dims": 0}, get_backend("numpy"), [DT_FLOAT, DT_INT16, DT_INT32],
                        [DT_FLOAT])
    with pytest.raises(errors.InvalidArgumentError, match=r"params.shape\[0\] too large for int16 indexing: "
                                                          r"40000 > 32767"):
        _gather_dims(ctx, (40000, 2), (3,), np.asarray(0, np.int32))
    assert _gather_dims(ctx, (32767, 2), (3,), np.asarray(-1, np.int32)) == (1, 0)


def test_gather_batch_dims_that_abort_tf_are_rejected():
    """TF 2.21 aborts (CHECK rank >= 0) building GatherV2 with an unknown axis and batch_dims past both ranks."""
    from tfops_py import Scope, errors, ops
    from tfops_py.framework.dtypes import DT_FLOAT, DT_INT32

    root = Scope.NewRootScope()
    p = ops.Placeholder(root, DT_FLOAT, shape=[2])
    i = ops.Placeholder(root, DT_INT32, shape=[])
    a = ops.Placeholder(root, DT_INT32, shape=[])
    with pytest.raises(errors.InvalidArgumentError, match=r"Expected batch_dims in the range \[0, 0\], but got 2"):
        ops.GatherV2(root, p, i, a, batch_dims=2)
    assert ops.GatherV2(root, p, i, a, batch_dims=1).output.shape().unknown_rank()  # TF: rank -1 = unknown
