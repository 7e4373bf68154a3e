"""ConcatV2, Pack, Unpack, Split, Tile, Pad, Select, SelectV2: live differential tests against TF and errors
(golden values and the per-dtype cases run in tests/conformance)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.kernels import _array_strategies as S
from tests.kernels._array_strategies import differential
from tfops_py import ClientSession, Scope, errors, ops
from tfops_py.framework.dtypes import DT_FLOAT, DT_INT32





def _dtype(backend, data):
    return data.draw(st.sampled_from(S.ALL_TYPES if backend == "numpy" else S.NUMERIC[:9] + S.NUMERIC[11:]))


def _partial(data, shape):
    """A placeholder shape for ``shape``: unknown rank, or each dim kept or made unknown."""
    if data.draw(st.booleans()):
        return None
    return [d if data.draw(st.booleans()) else -1 for d in shape]


def _spec(data, mode, shapes):
    return "const" if mode == "const" else [_partial(data, s) for s in shapes]


# -- ConcatV2, Pack, Unpack, Split ------------------------------------------------------------------------
@pytest.mark.tf
@S.live(50)
@given(shape=S.shapes(0, 4, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_concat_matches_tf(shape, seed, mode, data, backend):
    rng = np.random.default_rng(seed)
    dtype = _dtype(backend, data)
    rank = len(shape)
    axis = data.draw(st.integers(-rank - 1, rank))
    shapes = []
    for _ in range(data.draw(st.integers(2, 4))):
        s = list(shape)
        if rank and data.draw(st.booleans()):
            s[axis % rank if -rank <= axis < rank else 0] = data.draw(st.integers(0, 3))
        if data.draw(st.integers(0, 9)) == 0:
            s = s[:-1] if s and data.draw(st.booleans()) else s + [2]
        shapes.append(tuple(s))
    values = [S.array(rng, s, dtype) for s in shapes]
    a = S.index_array(axis, data.draw(st.sampled_from(S.INDEX)))
    spec = "const" if mode == "const" else [[_partial(data, s) for s in shapes], data.draw(S.modes)]
    differential("ConcatV2", [values, a], {}, spec, backend)


@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 3, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_pack_matches_tf(shape, seed, mode, data, backend):
    rng = np.random.default_rng(seed)
    dtype = _dtype(backend, data)
    n = data.draw(st.integers(1, 3))
    shapes = [shape if data.draw(st.integers(0, 5)) else shape + (1,) for _ in range(n)]
    values = [S.array(rng, s, dtype) for s in shapes]
    axis = data.draw(st.integers(-len(shape) - 2, len(shape) + 1))
    spec = "const" if mode == "const" else [[_partial(data, s) for s in shapes]]
    differential("Pack", [values], {"axis": axis}, spec, backend)


@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 3, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_unpack_matches_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype(backend, data))
    rank = len(shape)
    axis = data.draw(st.integers(-rank - 1, rank))
    num = shape[axis] if -rank <= axis < rank and data.draw(st.integers(0, 4)) else data.draw(st.integers(0, 3))
    differential("Unpack", [x], {"num": num, "axis": axis}, _spec(data, mode, [shape]), backend)


@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 3, 0, 6), seed=S.seeds, mode=S.modes, data=st.data())
def test_split_matches_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype(backend, data))
    rank = len(shape)
    axis = data.draw(st.integers(-rank - 1, rank))
    num = data.draw(st.integers(1, 4))
    spec = "const" if mode == "const" else [data.draw(S.modes), _partial(data, shape)]
    differential("Split", [np.asarray(axis, np.int32), x], {"num_split": num}, spec, backend)


# -- Tile, Pad ---------------------------------------------------------------------------------------------
@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 4, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_tile_matches_tf(shape, seed, mode, data, backend):
    dtype = data.draw(st.sampled_from(["float32", "int8", "bool", "complex128", "int64"]
                                      + (["string", "bfloat16"] if backend == "numpy" else [])))
    x = S.array(np.random.default_rng(seed), shape, dtype)
    n = len(shape) if data.draw(st.integers(0, 5)) else data.draw(st.integers(0, 4))
    mult = data.draw(st.lists(st.integers(-1 if data.draw(st.integers(0, 5)) == 0 else 0, 3), min_size=n, max_size=n))
    m = S.index_array(mult, data.draw(st.sampled_from(S.INDEX)))
    spec = "const" if mode == "const" else [_partial(data, shape), data.draw(S.modes)]
    differential("Tile", [x, m], {}, spec, backend)


@pytest.mark.tf
@S.live(40)
@given(shape=S.shapes(0, 4, 0, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_pad_matches_tf(shape, seed, mode, data, backend):
    x = S.array(np.random.default_rng(seed), shape, _dtype(backend, data))
    n = len(shape) if data.draw(st.integers(0, 5)) else data.draw(st.integers(0, 4))
    low = -1 if data.draw(st.integers(0, 5)) == 0 else 0
    pads = np.asarray(data.draw(st.lists(st.integers(low, 2), min_size=2 * n, max_size=2 * n))).reshape(n, 2)
    if data.draw(st.integers(0, 9)) == 0:
        pads = pads.reshape(-1)[: 3 * (pads.size // 3)].reshape(-1, 3) if pads.size >= 3 else pads.reshape(-1)
    p = S.index_array(pads, data.draw(st.sampled_from(S.INDEX)))
    spec = "const" if mode == "const" else [_partial(data, shape), data.draw(S.modes)]
    differential("Pad", [x, p], {}, spec, backend)


# -- Select, SelectV2 ------------------------------------------------------------------------------------
@pytest.mark.tf
@S.live(50)
@given(shape=S.shapes(0, 3, 1, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_select_matches_tf(shape, seed, mode, data, backend):
    rng = np.random.default_rng(seed)
    dtype = _dtype(backend, data)
    kind = data.draw(st.sampled_from(["same", "vector", "scalar", "random"]))
    cshape = {"same": shape, "vector": shape[:1], "scalar": ()}.get(kind) or data.draw(S.shapes(0, 3, 1, 3))
    eshape = shape if data.draw(st.integers(0, 6)) else data.draw(S.shapes(0, 3, 1, 3))
    inputs = [S.array(rng, cshape, "bool"), S.array(rng, shape, dtype), S.array(rng, eshape, dtype)]
    differential("Select", inputs, {}, _spec(data, mode, [cshape, shape, eshape]), backend)


@pytest.mark.tf
@S.live(50)
@given(shape=S.shapes(0, 3, 1, 3), seed=S.seeds, mode=S.modes, data=st.data())
def test_select_v2_matches_tf(shape, seed, mode, data, backend):
    rng = np.random.default_rng(seed)
    dtype = _dtype(backend, data)

    def broadcastable():
        s = [d if data.draw(st.integers(0, 3)) else 1 for d in shape][data.draw(st.integers(0, len(shape))):]
        return tuple(s) if data.draw(st.integers(0, 7)) else data.draw(S.shapes(0, 3, 1, 3))

    shapes = [broadcastable() for _ in range(3)]
    inputs = [S.array(rng, shapes[0], "bool"), S.array(rng, shapes[1], dtype), S.array(rng, shapes[2], dtype)]
    differential("SelectV2", inputs, {}, _spec(data, mode, shapes), backend)


# -- specific behaviour -------------------------------------------------------------------------------------
def test_concat_partial_shapes_merge():
    root = Scope.NewRootScope()
    a = ops.Placeholder(root, DT_FLOAT, shape=[2, -1, 3])
    b = ops.Placeholder(root, DT_FLOAT, shape=[-1, 4, -1])
    assert ops.Concat(root, [a, b], 1).output.shape() == [2, -1, 3]
    assert ops.Concat(root, [a, b], -1).output.shape() == [2, 4, -1]
    c = ops.Placeholder(root, DT_FLOAT, shape=[-1, 1, 5])
    with pytest.raises(errors.InvalidArgumentError, match=r"Dimension 0 in both shapes must be equal, but are 3 and 5"):
        ops.Concat(root, [a, b, c], 1)


def test_split_fed_axis_checked_at_run_time(backend):
    root = Scope.NewRootScope()
    axis = ops.Placeholder(root, DT_INT32)
    parts = ops.Split(root, axis, np.arange(12, dtype=np.float32).reshape(3, 4), 2)
    assert [p.shape() for p in parts.output] == [[-1, -1]] * 2
    sess = ClientSession(root, backend=backend, fetch_numpy=True)
    a, b = sess.Run({axis.output: np.asarray(1, np.int32)}, parts.output)
    np.testing.assert_array_equal(a, [[0, 1], [4, 5], [8, 9]])
    with pytest.raises(errors.InvalidArgumentError, match=r"split_dim 0 \(size = 3\) and num_split 2"):
        sess.Run({axis.output: np.asarray(0, np.int32)}, parts.output)


def test_pad_strings_with_empty_bytes():
    root = Scope.NewRootScope()
    out = ops.Pad(root, np.array([b"a", b"b"], dtype=object), np.array([[1, 2]], np.int32))
    (v,) = ClientSession(root, fetch_numpy=True).Run([out])
    assert v.tolist() == [b"", b"a", b"b", b"", b""]
