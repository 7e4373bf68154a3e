"""Gradient plumbing (grad_support_ops) and index ops (grad_scatter_ops): what the conformance harness does
not cover.

Golden values run in tests/conformance (declarations in kernels/array/grad_support_ops.py and
grad_scatter_ops.py, cases in kernels/nn/_grad_cases.py).  Here: TF's kernel messages at run time and
shape-function errors at build time, properties of BroadcastGradientArgs, and live differential tests
against ``tf.raw_ops`` (marked ``tf``; their inputs are related in ways a declaration cannot draw).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance import golden
from tests.conformance.live import check_against_tf
from tests.conformance.ours import run_ours as run_any
from tfops_py import errors
from tfops_py.conformance import draw_values
from tfops_py.errors import OpError

SUPPORT = ["BroadcastGradientArgs", "ConcatOffset", "InvertPermutation", "StridedSliceGrad", "BroadcastTo", "SplitV",
           "ReverseV2", "PadV2", "MirrorPad", "MirrorPadGrad", "Cumsum"]
SCATTER = ["UnsortedSegmentSum", "DynamicStitch", "GatherNd", "ScatterNd", "TensorScatterAdd",
           "ScatterNdNonAliasingAdd"]


def fast(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def i32(*v: int) -> np.ndarray:
    return np.array(v, np.int32)


def f32(*shape: int) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def test_golden_covers_every_op():
    assert set(SUPPORT + SCATTER) <= {c.op for c in golden.load("grad_kernels").cases}


# -- BroadcastGradientArgs ---------------------------------------------------------------------------------
@given(st.lists(st.sampled_from([0, 1, 2, 3]), max_size=4), st.lists(st.booleans(), max_size=4),
       st.lists(st.booleans(), max_size=4), st.integers(0, 4), st.integers(0, 4))
@fast(100)
def test_broadcast_gradient_args_reduces_to_each_input(backend, out, ones_x, ones_y, cut_x, cut_y):
    """Summing the broadcast result over r0 (r1) and reshaping gives x's (y's) shape: what gradients rely on."""
    x = [1 if k < len(ones_x) and ones_x[k] else d for k, d in enumerate(out)][min(cut_x, len(out)):]
    y = [1 if k < len(ones_y) and ones_y[k] else d for k, d in enumerate(out)][min(cut_y, len(out)):]
    r0, r1 = run_any("BroadcastGradientArgs", [i32(*x), i32(*y)], {}, backend)
    full = np.broadcast_shapes(tuple(x), tuple(y))
    for shape, r in ((x, r0), (y, r1)):
        assert list(r) == sorted(set(r.tolist()))
        assert np.ones(full).sum(axis=tuple(r.tolist())).reshape(shape).shape == tuple(shape)
        assert set(range(len(full) - len(shape))) <= set(r.tolist())


# -- errors ----------------------------------------------------------------------------------------------
X = f32(3, 4)
Y = f32(5, 6)
P = f32(2, 3, 4)
RUN_TIME = [  # (op, inputs, attrs, TF's kernel message)
    ("BroadcastGradientArgs", [i32(2, 3), i32(4, 3)], {}, r"Incompatible shapes: \[2,3\] vs. \[4,3\]"),
    ("BroadcastGradientArgs", [np.ones((2, 2), np.int32), i32(1)], {}, r"In\[0\] must be a vector.\[2,2\]"),
    ("ConcatOffset", [np.int32(3), [i32(2, 2, 5), i32(2, 3, 5)]], {}, "Concat dim is out of range: 3 vs. 3"),
    ("ConcatOffset", [np.int32(1), [i32(2, 2, 5), i32(3, 3, 5)]], {},
     r"All dimensions except 1 must match. Input 1 has shape \[3 3 5\] and doesn't match input 0 with shape \[2 2 5\]"),
    ("ConcatOffset", [np.int32(1), [i32(2, 2, 5), i32(3, 3)]], {}, "input 1 should contain 3 elements, but got 2"),
    ("ConcatOffset", [i32(1), [i32(2, 2, 5), i32(2, 3, 5)]], {}, r"should be a scalar integer, but got shape \[1\]"),
    ("InvertPermutation", [i32(2, 0, 3)], {}, "3 is not between 0 and 3"),
    ("InvertPermutation", [i32(2, -1, 1)], {}, "-1 is not between 0 and 3"),
    ("InvertPermutation", [i32(2, 2, 0, 0)], {}, "2 is duplicated in the input."),
    ("InvertPermutation", [np.ones((2, 2), np.int32)], {}, "invert_permutation expects a 1D vector."),
    ("StridedSliceGrad", [i32(3, 4), i32(0, 1), i32(3, 4), i32(2, 2), f32(2, 3)], {},
     r"shape of dy was \[2,3\] instead of \[2,2\]"),
    ("StridedSliceGrad", [np.ones((1, 2), np.int32), i32(0, 1), i32(3, 4), i32(2, 2), f32(2, 2)], {},
     r"shape must be 1-D, got shape.shape = \[1,2\]"),
    ("StridedSliceGrad", [i32(-3, 4), i32(0, 1), i32(3, 4), i32(2, 2), f32(2, 2)], {}, "Dimension -3 must be >= 0"),
    ("BroadcastTo", [i32(1, 2, 3), i32(2, 4)], {}, r"Incompatible shapes: \[3\] vs. \[2,4\]"),
    ("BroadcastTo", [f32(3, 1), i32(1, 4)], {},
     r"Unable to broadcast tensor of shape \[3,1\] to tensor of shape \[1,4\]"),
    ("BroadcastTo", [f32(3, 1), i32(3)], {}, r"Rank of input \(2\) must be no greater than rank of output shape \(1\)"),
    ("BroadcastTo", [f32(3), np.ones((1, 1), np.int32)], {}, r"shape must be a vector of \{int32,int64\}, got shape"),
    ("SplitV", [X, i32(-1, -1, 1), np.int32(1)], {"num_split": 3}, "There can only be one -1 in the input."),
    ("SplitV", [X, i32(1, 1, 1), np.int32(1)], {"num_split": 3}, "if not fully specified.  Got: 3"),
    ("SplitV", [X, i32(5, -2, 1), np.int32(1)], {"num_split": 3}, "Split size at index 1 must be >= 0. Got: -2"),
    ("SplitV", [X, i32(1, 3), np.int32(2)], {"num_split": 2}, r"-input rank\(-2\) <= split_dim < input rank \(2\), but "
                                                               "got 2"),
    ("SplitV", [X, i32(3), np.int32(1)], {"num_split": 1}, "Input size: 4 output size: 3"),
    ("SplitV", [X, i32(1, 3), i32(1, 1)], {"num_split": 2}, "split_dim_tensor must have exactly one element."),
    ("ReverseV2", [X, i32(2)], {}, r"'axis'\[0\] = 2 is out of valid range \[0, 1"),
    ("ReverseV2", [X, i32(1, -1)], {}, "axis 1 specified more than once."),
    ("ReverseV2", [X, np.ones((1, 1), np.int32)], {}, "'dims' must be 1-dimension, not 2"),
    ("PadV2", [X, np.array([[1, -1], [0, 2]], np.int32), np.float32(7)], {}, "Paddings must be non-negative: 1 -1"),
    ("PadV2", [X, np.array([[1, 0], [0, 2]], np.int32), np.ones(1, np.float32)], {},
     r"constant_values must be a scalar. Found: \[1\]"),
    ("MirrorPad", [X, np.array([[3, 1], [0, 0]], np.int32)], {"mode": "REFLECT"},
     "paddings must be less than the dimension size: 3, 1 not less than 3"),
    ("MirrorPad", [X, np.array([[4, 1], [0, 0]], np.int32)], {"mode": "SYMMETRIC"},
     "paddings must be no greater than the dimension size: 4, 1 greater than 3"),
    ("MirrorPad", [X, np.array([[1, 1]], np.int32)], {"mode": "SYMMETRIC"},
     r"The first dimension of paddings must be the rank of inputs\[1,2\], \[3,4\]"),
    ("MirrorPad", [X, np.ones((2, 3), np.int32)], {"mode": "SYMMETRIC"}, r"must be a matrix with 2 columns: \[2,3\]"),
    ("MirrorPadGrad", [Y, np.array([[3, 2], [0, 0]], np.int32)], {"mode": "SYMMETRIC"},
     "Total paddings must be less than the input dimension size: 5 was not less than 5"),
    ("MirrorPadGrad", [Y, np.array([[2, 1], [0, 0]], np.int32)], {"mode": "REFLECT"},
     "paddings must be less than the output dimension size: 2, 1 not less than 2"),
    ("MirrorPadGrad", [Y, np.array([[-1, 1], [0, 0]], np.int32)], {"mode": "SYMMETRIC"},
     "Paddings must be non-negative: -1, 1"),
    ("Cumsum", [X, np.int32(-3)], {}, r"ScanOp: Expected scan axis in the range \[-2, 2\), but got -1"),
    ("Cumsum", [X, i32(1)], {}, r"ScanOp: axis must be a scalar, not \[1\]"),
    ("UnsortedSegmentSum", [f32(3, 2), i32(0, 5, 0), np.int32(2)], {},
     r"segment_ids\[1\] = 5 is out of range \[0, 2\)"),
    ("UnsortedSegmentSum", [f32(3, 2), np.array([[0, 1], [0, 7], [1, 1]], np.int32), np.int32(2)], {},
     r"segment_ids\[1,1\] = 7 is out of range \[0, 2\)"),
    ("UnsortedSegmentSum", [f32(3, 2), i32(0, 1), np.int32(2)], {},
     r"data.shape = \[3,2\] does not start with segment_ids.shape = \[2\]"),
    ("UnsortedSegmentSum", [f32(3, 2), i32(0, 1, 0), np.int32(-1)], {},
     "Input num_segments == -1 must not be negative"),
    ("UnsortedSegmentSum", [f32(3, 2), i32(0, 1, 0), i32(2)], {}, r"num_segments should be a scalar, not shape \[1\]"),
    ("DynamicStitch", [[i32(0, 1), i32(-1)], [f32(2), f32(1)]], {}, r"indices\[0\] is out of range"),
    ("DynamicStitch", [[i32(0, 1)], [f32(3)]], {}, r"data\[0\].shape = \[3\] does not start with indices\[0\].shape"),
    ("DynamicStitch", [[i32(0, 1), i32(2)], [f32(2, 3), f32(1, 4)]], {}, r"Need data\[0\].shape\[1:\] = data\[1\]"),
    ("GatherNd", [P, np.array([[1, 2], [0, 3]], np.int32)], {},
     r"indices\[1\] = \[0, 3\] does not index into param shape \[2,3,4\], node name: GatherNd"),
    ("GatherNd", [f32(2, 3), np.array([[5], [1], [7]], np.int32)], {}, r"indices\[2\] = \[7\] does not index"),
    ("GatherNd", [f32(2, 3), i32(5)], {}, r"indices = \[5\] does not index into param shape \[2,3\]"),
    ("GatherNd", [P, np.array([[1, 2, 1, 1]], np.int32)], {},
     "index innermost dimension length must be <= params rank"),
    ("GatherNd", [np.zeros((0, 3), np.float32), i32(0)], {}, r"params is empty.  Params shape: \[0,3\]"),
    ("GatherNd", [np.float32(1), i32(0)], {}, "params must be at least a vector"),
    ("ScatterNd", [np.array([[7], [1], [9]], np.int32), f32(3), i32(5)], {},
     r"indices\[2\] = \[9\] does not index into shape \[5\]"),
    ("ScatterNd", [np.array([[1], [3]], np.int32), f32(3), i32(5)], {},
     r"Dimensions \[0,1\) of indices\[shape=\[2,1\]\] must match dimensions \[0,1\) of updates\[shape=\[3\]\]"),
    ("ScatterNd", [np.array([[1], [3]], np.int32), f32(2, 3), i32(5, 4)], {},
     r"Dimensions \[1,2\) of input\[shape=\[5,4\]\] must match dimensions \[1,2\) of updates\[shape=\[2,3\]\]"),
    ("ScatterNd", [np.array([[1]], np.int32), f32(1), i32(0)], {},
     r"Indices and updates specified for empty output.  indices shape: \[1,1\]"),
    ("ScatterNd", [np.int32(1), f32(1), i32(5)], {}, r"Indices shape must have rank at least one. Found:\[\]"),
    ("TensorScatterAdd", [np.ones((4, 2), np.float32), np.array([[9], [1], [7]], np.int32), f32(3, 2)], {},
     r"indices\[2\] = \[7\] does not index into shape \[4,2\]"),
    ("TensorScatterAdd", [np.ones((4, 2), np.float32), np.array([[1], [2]], np.int32), f32(3, 2)], {},
     r"Outer dimensions of indices and update must match. Indices shape: \[2,1\], updates shape:\[3,2\]"),
    ("TensorScatterAdd", [np.ones((4, 2), np.float32), np.array([[1], [3]], np.int32), f32(2, 3)], {},
     r"The inner 1 dimensions of output.shape=\[4,2\] must match the inner 1 dimensions of updates.shape=\[2,3\]"),
    ("TensorScatterAdd", [np.ones((4, 2), np.float32), np.array([[1, 1, 1]], np.int32), f32(1)], {},
     "Inner dimensions of output shape must match inner dimensions of updates shape"),
    ("ScatterNdNonAliasingAdd", [np.ones((4, 2), np.float32), np.array([[9], [1], [7]], np.int32), f32(3, 2)], {},
     r"indices\[2\] = \[7\] does not index into shape \[4,2\]"),
    ("ScatterNdNonAliasingAdd", [np.ones((4, 2), np.float32), np.array([[1], [2]], np.int32), f32(3, 2)], {},
     r"Dimensions \[0,1\) of indices\[shape=\[2,1\]\] = 2 must match dimensions \[0,1\) of updates"
     r"\[shape=\[3,2\]\] = 3"),
    ("ScatterNdNonAliasingAdd", [np.ones((4, 2), np.float32), np.array([[1, 1, 1]], np.int32), f32(1)], {},
     r"Dimensions \[3,2\) of input\[shape=\[4,2\]\] must match dimensions \[3,1\) of updates\[shape=\[1\]\]"),
    ("ScatterNdNonAliasingAdd", [np.float32(1), np.array([[1]], np.int32), f32(1)], {},
     r"Output must be at least 1-D, got shape: \[\]"),
]
# Where the build-time shape function words it as TF's graph construction does (checked against TF's
# shape functions by hand: ranks, merges, MakeShapeFromShapeTensor, ScatterNdShapeHelper).
BUILD_TIME = {
    1: "Shape must be rank 1 but is rank 2", 5: "Shape must be rank 0 but is rank 1",
    9: "Shape must be rank 1 but is rank 2", 11: "Shape must be rank 1 but is rank 2",
    12: "Invalid value in tensor used for shape: -3", 13: "Dimensions must be equal, but are 3 and 4",
    14: "Dimensions must be equal, but are 3 and 1", 15: "Shape must be at most rank 1 but is rank 2",
    16: "Shape must be rank 1 but is rank 2", 20: r"given by scalar input 2 must be in range \[-2, 2\)",
    22: "Input must be scalar but has rank 1", 25: "Shape must be rank 1 but is rank 2",
    26: "Paddings must be non-negative", 30: "Shape must be rank 1 but is rank 2", 31: "Dimension must be 2 but is 3",
    34: "Paddings must be non-negative", 39: "Dimensions must be equal, but are 3 and 2",
    40: "given by scalar input 2, must be non-negative but is -1", 41: "Shape must be rank 0 but is rank 1",
    43: "Dimensions must be equal, but are 3 and 2",
    44: r"Dimension 0 in both shapes must be equal, but are 3 and 4. Shapes are \[3\] and \[4\]",
    48: r"indices.shape\[-1\] must be <= params.rank, but saw indices shape: \[1,4\] and params shape: \[2,3,4\]",
    50: r"indices.shape\[-1\] must be <= params.rank",
    52: r"\[shape=\[2,1\]\] = \[2\] must match dimensions \[0,1\) of updates\[shape=\[3\]\] = \[3\]",
    53: r"\[shape=\[5,4\]\] = \[4\] must match dimensions \[1,2\) of updates\[shape=\[2,3\]\] = \[3\]",
    54: "Indices and updates specified for empty input", 55: "Shape must be at least rank 1 but is rank 0",
    57: r"\[shape=\[2,1\]\] = \[2\] must match dimensions \[0,1\) of updates\[shape=\[3,2\]\] = \[3\]",
    58: r"\[shape=\[4,2\]\] = \[2\] must match dimensions \[1,2\) of updates\[shape=\[2,3\]\] = \[3\]",
    61: r"\[shape=\[2,1\]\] = \[2\] must match dimensions \[0,1\) of updates\[shape=\[3,2\]\] = \[3\]",
    63: "Shape must be at least rank 1 but is rank 0",
}


@pytest.mark.parametrize("case", range(len(RUN_TIME)), ids=lambda k: f"{k}-{RUN_TIME[k][0]}")
def test_kernel_errors(case, backend):
    op, inputs, attrs, message = RUN_TIME[case]
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_any(op, inputs, attrs, backend, feed=True)


@pytest.mark.parametrize("case", range(len(RUN_TIME)), ids=lambda k: f"{k}-{RUN_TIME[k][0]}")
def test_errors_with_constant_inputs(case, backend):
    op, inputs, attrs, message = RUN_TIME[case]
    with pytest.raises(errors.InvalidArgumentError, match=BUILD_TIME.get(case) or message):
        run_any(op, inputs, attrs, backend)


def test_mirror_pad_rank_above_five_is_unimplemented(backend):
    x = np.ones((1,) * 6, np.float32)
    with pytest.raises(errors.UnimplementedError, match=r"inputs rank not in \[0,5\]: 6"):
        run_any("MirrorPad", [x, np.zeros((6, 2), np.int32)], {"mode": "SYMMETRIC"}, backend, feed=True)


# -- documented behaviour ----------------------------------------------------------------------------------
def test_scatters_keep_nan_and_inf_in_their_own_rows(backend):
    data = np.array([[np.nan, 1], [np.inf, 2], [3, 4]], np.float32)
    (out,) = run_any("UnsortedSegmentSum", [data, i32(0, 1, 2), np.int32(4)], {}, backend)
    np.testing.assert_array_equal(out, [[np.nan, 1], [np.inf, 2], [3, 4], [0, 0]])
    (out,) = run_any("ScatterNd", [np.array([[2], [0]], np.int32), data[:2], i32(3, 2)], {}, backend)
    np.testing.assert_array_equal(out, [[np.inf, 2], [0, 0], [np.nan, 1]])


def test_dynamic_stitch_later_indices_win_and_gaps_are_zero(backend):
    (out,) = run_any("DynamicStitch", [[i32(0, 3), i32(3)], [f32(2) + 1, np.float32([9])]], {}, backend)
    np.testing.assert_array_equal(out, [1, 0, 0, 9])


def test_ignored_bad_indices(backend):
    (out,) = run_any("GatherNd", [f32(2, 2), np.array([[1], [5]], np.int32)], {"bad_indices_policy": "IGNORE"},
                     backend)
    np.testing.assert_array_equal(out, [[2, 3], [0, 0]])
    (out,) = run_any("TensorScatterAdd", [np.zeros(3, np.float32), np.array([[1], [-1]], np.int32), f32(2) + 1],
                     {"bad_indices_policy": "IGNORE"}, backend)
    np.testing.assert_array_equal(out, [0, 1, 0])


# -- live differential tests against TF ------------------------------------------------------------------
def _draw_case(data, rng) -> tuple[str, list, dict]:
    """One random case: mostly valid inputs, sometimes bad ones (TF must then raise the same error class)."""
    op = data.draw(st.sampled_from(SUPPORT + SCATTER))
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple))
    dtype = data.draw(st.sampled_from([np.float32, np.float64, np.int32, np.int64, np.complex64]))
    x = draw_values(rng, dtype, shape, "small")
    rank = len(shape)
    ints = lambda lo, hi, n: rng.integers(lo, hi + 1, n).astype(np.int32)  # noqa: E731
    if op == "BroadcastGradientArgs":
        return op, [ints(0, 2, data.draw(st.integers(0, 3))), ints(0, 2, data.draw(st.integers(0, 3)))], {}
    if op == "ConcatOffset":
        return op, [np.int32(data.draw(st.integers(-rank - 1, rank))),
                    [np.array(shape, np.int32), np.array([d + (k == 0) for k, d in enumerate(shape)], np.int32)]], {}
    if op == "InvertPermutation":
        perm = rng.permutation(rank + 2).astype(np.int32)
        perm[0] = perm[0] if data.draw(st.integers(0, 5)) else perm[-1]
        return op, [perm], {}
    if op == "StridedSliceGrad":
        begin, end = ints(-3, 3, rank), ints(-3, 4, rank)
        strides = np.where(ints(0, 1, rank) == 1, 1, data.draw(st.sampled_from([-2, -1, 2]))).astype(np.int32)
        masks = {k: data.draw(st.integers(0, 7)) for k in ("begin_mask", "end_mask", "shrink_axis_mask")}
        try:
            (dy,) = run_any("StridedSlice", [x, begin, end, strides], masks)
        except OpError:  # an invalid slice: try the gradient with a made-up dy
            dy = x
        return op, [np.array(shape, np.int32), begin, end, strides, dy], masks
    if op == "BroadcastTo":
        return op, [x, np.array([d if data.draw(st.integers(0, 5)) else 2 for d in (2,) + shape], np.int32)], {}
    if op == "SplitV":
        axis = data.draw(st.integers(-rank, rank - 1))
        n = shape[axis]
        sizes = [data.draw(st.integers(0, n)), -1] if data.draw(st.booleans()) else [n]
        return op, [x, np.array(sizes, np.int64), np.int32(axis)], {"num_split": len(sizes)}
    if op == "ReverseV2":
        # distinct axes: on an empty tensor TF's eager kernel skips the check its graph shape function makes
        axes = st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda a: a % rank)
        return op, [x, np.array(data.draw(axes), np.int32)], {}
    if op in ("PadV2", "MirrorPad", "MirrorPadGrad"):
        pads = ints(0, 3, (rank, 2))
        if op == "PadV2":
            return op, [x, pads, x.reshape(-1)[0] if x.size else np.zeros((), x.dtype)], {}
        return op, [x, pads], {"mode": data.draw(st.sampled_from(["REFLECT", "SYMMETRIC"]))}
    if op == "Cumsum":
        return op, [x, np.int32(data.draw(st.integers(-rank, rank - 1)))], {
            "exclusive": data.draw(st.booleans()), "reverse": data.draw(st.booleans())}
    if op == "UnsortedSegmentSum":
        lead = data.draw(st.integers(1, rank))
        return op, [x, ints(-1, 3, shape[:lead]), np.int32(data.draw(st.integers(0, 4)))], {}
    if op == "DynamicStitch":
        n = shape[0]
        idx = [rng.permutation(n + 1)[:n].astype(np.int32), ints(0, n, 1)]
        return op, [idx, [x, draw_values(rng, dtype, (1,) + shape[1:], "small")]], {}
    depth = data.draw(st.integers(0, rank))
    index_rows = data.draw(st.integers(0, 3))
    indices = np.stack([ints(0, d, index_rows) for d in shape[:depth]], axis=-1) if depth else \
        np.zeros((index_rows, 0), np.int32)
    if op == "GatherNd":
        return op, [x, indices], {}
    updates = draw_values(rng, dtype, (index_rows,) + shape[depth:], "small")
    if op == "ScatterNd":
        return op, [indices, updates, np.array(shape, np.int32)], {}
    return op, [x, indices, updates], {}


@pytest.mark.tf
@fast(150)
@given(data=st.data())
def test_matches_tf(backend, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    op, inputs, attrs = _draw_case(data, rng)
    if backend != "numpy" and op in SCATTER + ["MirrorPadGrad", "Cumsum"]:
        kind = "acc"  # the generic scatter sums in another order
    else:
        kind = "ew"
    check_against_tf(op, inputs, attrs, backend, kind, "feed" if data.draw(st.booleans()) else "const")
