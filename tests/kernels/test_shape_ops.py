"""Shape, ShapeN, Size, Rank, Reshape, ExpandDims, Squeeze, Transpose: live differential tests against TF and
errors (golden values and the per-dtype cases run in tests/conformance)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.kernels import _array_strategies as S
from tests.kernels._array_strategies import differential
from tfops_py import ClientSession, Scope, errors, ops
from tfops_py.backends import get_backend
from tfops_py.framework.dtypes import DT_FLOAT, DT_INT32, DT_INT64
from tfops_py.kernels.array import shape_ops
from tfops_py.kernels.registry import KernelContext





def _dtype_for(backend, data):
    return data.draw(st.sampled_from(S.ALL_TYPES if backend == "numpy" else S.NUMERIC[:9] + S.NUMERIC[11:]))


# -- Shape, ShapeN, Size, Rank -----------------------------------------------------------------------
@pytest.mark.tf
@S.live(25)
@given(shape=S.shapes(), seed=S.seeds, mode=S.modes, data=st.data())
def test_shape_size_rank_match_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype_for(backend, data))
    out_type = data.draw(st.sampled_from([DT_INT32, DT_INT64]))
    differential("Shape", [x], {"out_type": out_type}, mode, backend)
    differential("Size", [x], {"out_type": out_type}, mode, backend)
    differential("Rank", [x], {}, mode, backend)
    differential("ShapeN", [[x, x.reshape(-1)]], {"out_type": out_type}, mode, backend)


class _Shaped:
    """A stand-in tensor with only a shape: shapes too big to allocate."""

    def __init__(self, *shape: int):
        self.shape = shape


def _ctx(op: str, out_type):
    return KernelContext(op, "n", {}, get_backend("numpy"), [DT_FLOAT], [out_type])


def test_int32_outputs_overflow_as_tf():
    big = _Shaped(0, 2**31 - 1)  # TF's bound check is strict: INT32_MAX itself is refused
    with pytest.raises(errors.InvalidArgumentError, match="Shape output type is 32-bit  but dim 1 is 2147483647"):
        shape_ops._shape(_ctx("Shape", DT_INT32), big)
    with pytest.raises(errors.InvalidArgumentError, match="ShapeN output type is 32-bit but shape 1 dim 1"):
        shape_ops._shape_n(_ctx("ShapeN", DT_INT32), [_Shaped(1), big])
    assert shape_ops._shape(_ctx("Shape", DT_INT64), big).tolist() == [0, 2**31 - 1]
    assert int(shape_ops._size(_ctx("Size", DT_INT32), big)) == 0
    with pytest.raises(errors.InvalidArgumentError, match="Number of elements was larger than representable"):
        shape_ops._size(_ctx("Size", DT_INT32), _Shaped(2**16, 2**15))
    assert int(shape_ops._size(_ctx("Size", DT_INT64), _Shaped(2**16, 2**15))) == 2**31


# -- Reshape ------------------------------------------------------------------------------------------
@st.composite
def reshape_args(draw):
    """A tensor and a requested shape: a valid one, one with -1 (or two), or arbitrary numbers."""
    shape = draw(S.shapes(0, 4, 0, 4))
    n = int(np.prod(shape))
    kind = draw(st.sampled_from(["exact", "infer", "infer", "random", "two"]))
    if kind == "random":
        target = draw(st.lists(st.integers(-2, 6), max_size=4))
    else:
        target = list(draw(st.permutations(list(shape)))) if draw(st.booleans()) else [n]
        if kind != "exact" and target:
            target[draw(st.integers(0, len(target) - 1))] = -1
        if kind == "two" and len(target) > 1:
            target[0] = target[-1] = -1
    x = S.array(np.random.default_rng(draw(S.seeds)), shape, draw(st.sampled_from(["float32", "int64", "bool"])))
    return x, S.index_array(target, draw(st.sampled_from(S.INDEX)))


@pytest.mark.tf
@S.live(60)
@given(args=reshape_args(), mode=S.modes)
def test_reshape_matches_tf(args, mode, backend):
    differential("Reshape", list(args), {}, mode, backend)


@pytest.mark.tf
@S.live(40)
@given(args=reshape_args(), data=st.data())
def test_reshape_shape_function_matches_tf(args, data):
    x, target = args
    x_spec = None if data.draw(st.booleans()) else [d if data.draw(st.booleans()) else -1 for d in x.shape]
    differential("Reshape", [x, target], {}, [x_spec, "const"])


# -- ExpandDims, Squeeze, Transpose --------------------------------------------------------------------
@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 4, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_expand_dims_matches_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype_for(backend, data))
    rank = len(shape)
    dim = data.draw(st.integers(-rank - 2, rank + 1))
    form = data.draw(st.sampled_from([(), (1,), (2,)]))
    dims = S.index_array(np.full(form, dim), data.draw(st.sampled_from(S.INDEX)))
    spec = mode if mode == "const" else [data.draw(st.sampled_from(["feed", None, [-1] * rank])), "const"]
    differential("ExpandDims", [x, dims], {}, spec, backend)


@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 4, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_squeeze_matches_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype_for(backend, data))
    rank = len(shape)
    dims = data.draw(st.lists(st.integers(-rank - 1, rank), max_size=3)) if data.draw(st.booleans()) else []
    spec = mode if mode == "const" else [d if data.draw(st.booleans()) else -1 for d in shape]
    differential("Squeeze", [x], {"squeeze_dims": dims}, [spec], backend)


@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 4, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_transpose_matches_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype_for(backend, data))
    rank = len(shape)
    perm = list(data.draw(st.permutations(range(rank))))
    kind = data.draw(st.sampled_from(["ok", "ok", "negative", "corrupt", "length"]))
    if kind == "negative" and rank:
        perm = [p - rank if data.draw(st.booleans()) else p for p in perm]
    elif kind == "corrupt" and rank:
        perm[data.draw(st.integers(0, rank - 1))] = data.draw(st.integers(-rank - 1, rank))
    elif kind == "length":
        perm = perm + [rank] if data.draw(st.booleans()) else perm[:-1]
    p = S.index_array(perm, data.draw(st.sampled_from(S.INDEX)))
    spec = mode if mode == "const" else [data.draw(st.sampled_from(["feed", None, [-1] * rank])),
                                         data.draw(st.sampled_from(["const", "feed"]))]
    differential("Transpose", [x, p], {}, spec, backend)


# -- run-time validation of fed shape tensors -----------------------------------------------------------
def test_reshape_fed_shape_is_checked_at_run_time(backend):
    root = Scope.NewRootScope()
    x = ops.Const(root, np.zeros((2, 3), np.float32))
    s = ops.Placeholder(root, DT_INT32)
    y = ops.Reshape(root, x, s)
    sess = ClientSession(root, backend=backend, fetch_numpy=True)
    assert sess.Run({s.output: np.array([3, -1], np.int32)}, [y])[0].shape == (3, 2)
    with pytest.raises(errors.InvalidArgumentError, match="Only one input size may be -1, not both 0 and 1"):
        sess.Run({s.output: np.array([-1, -1], np.int32)}, [y])
    with pytest.raises(errors.InvalidArgumentError,
                       match="Input to reshape is a tensor with 6 values, but the requested shape has 4"):
        sess.Run({s.output: np.array([4], np.int32)}, [y])


def test_reshape_build_time_errors():
    root = Scope.NewRootScope()
    x = ops.Const(root, np.zeros((2, 3), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match=r"Cannot reshape a tensor with 6 elements to shape \[4\]"):
        ops.Reshape(root, x, np.array([4], np.int32))
    with pytest.raises(errors.InvalidArgumentError, match="Dimension size must be evenly divisible by 4 but is 6"):
        ops.Reshape(root, x, np.array([4, -1], np.int32))
    assert ops.Reshape(root, x, np.array([-1, 2], np.int32)).output.shape() == [3, 2]
