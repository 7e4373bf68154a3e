"""Relu, Relu6, Softmax, LogSoftmax, BiasAdd, Conv2D, AvgPool and MaxPool: what the conformance harness
does not cover.

Golden values (NHWC, and NCHW which TF's CPU kernels refuse: TF's NHWC answer transposed) and live
differential tests run in tests/conformance (declarations in kernels/nn/nn_ops.py and
conv_pool_ops.py, helpers in _nn_cases.py); here: what the golden file must hold, TF's errors at
build and run time with their messages, and documented behaviour.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance import golden
from tests.conformance.ours import run_ours
from tfops_py import errors

SPATIAL = {"Conv2D", "AvgPool", "MaxPool"}
OPS = {"Relu", "Relu6", "Softmax", "LogSoftmax", "BiasAdd"} | SPATIAL


def test_golden_covers_the_brief():
    cases = [c for c in golden.load("nn_ops").cases if c.op in OPS]
    assert {c.op for c in cases} == OPS
    conv = [c for c in cases if c.op == "Conv2D"]
    assert {c.attrs["padding"] for c in conv} == {"SAME", "VALID", "EXPLICIT"}
    assert any(c.attrs["dilations"] not in ([1, 1, 1, 1],) for c in conv)
    assert any(c.raw["inputs"][0][1][3] != c.raw["inputs"][1][1][2] for c in conv if
               c.attrs.get("data_format", "NHWC") == "NHWC")  # grouped
    assert {c.raw["inputs"][0][0] for c in conv} >= {"float32", "float64", "float16", "bfloat16", "int32"}
    assert {c.attrs["data_format"] for c in cases if c.op == "BiasAdd"} == {"NHWC", "NCHW"}
    assert {c.attrs.get("data_format", "NHWC") for c in cases if c.op in SPATIAL} == {"NHWC", "NCHW"}


# -- errors ---------------------------------------------------------------------------------------------
X = np.ones((2, 5, 5, 3), np.float32)
F = np.ones((3, 3, 3, 4), np.float32)
CONV = {"strides": [1, 1, 1, 1], "padding": "VALID"}


@pytest.mark.parametrize("attrs, cls, message", [
    ({"strides": [1, 1, 1]}, errors.InvalidArgumentError, "strides field must specify 4 dimensions"),
    ({"dilations": [1, 1, 1]}, errors.InvalidArgumentError, "dilations field must specify 4 dimensions"),
    ({"strides": [2, 1, 1, 1]}, errors.UnimplementedError, "strides in the batch and depth"),
    ({"dilations": [1, 1, 1, 2]}, errors.UnimplementedError, "dilations in the batch and depth"),
    ({"strides": [1, 0, 1, 1]}, errors.InvalidArgumentError, "strides should be larger than 0"),
    ({"dilations": [1, 0, 1, 1]}, errors.InvalidArgumentError, "Dilated rates should be larger than 0"),
    ({"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 2]}, errors.InvalidArgumentError, "must contain 8"),
    ({"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 0, 0, 0, 0, 0]}, errors.InvalidArgumentError,
     "nonnegative"),
    ({"padding": "EXPLICIT", "explicit_paddings": [1, 0, 0, 0, 0, 0, 0, 0]}, errors.InvalidArgumentError,
     "batch or depth dimensions"),
    ({"padding": "SAME", "explicit_paddings": [0] * 8}, errors.InvalidArgumentError, "must be empty"),
])
def test_conv2d_attr_errors_at_build_time(attrs, cls, message, backend):
    with pytest.raises(cls, match=message):
        run_ours("Conv2D", [X, F], dict(CONV, **attrs), backend)


@pytest.mark.parametrize("feed", [False, True])
@pytest.mark.parametrize("x, f, message", [
    (X, np.ones((3, 3, 2, 4), np.float32), "input depth must be evenly divisible by filter depth: 3 vs 2"),
    (np.ones((1, 5, 5, 6), np.float32), np.ones((3, 3, 2, 4), np.float32),
     "output depth must be evenly divisible by number of groups: 4 vs 3"),
    (X, np.ones((7, 3, 3, 4), np.float32), "Computed output size would be negative"),
    (X[0], F, r"convolution input must be 4-dimensional: \[5,5,3\]"),
    (X, F[0], r"convolution filter must be 4-dimensional: \[3,3,4\]"),
    (X, np.ones((3, 3, 0, 4), np.float32), "filter depth must be stricly positive, got 0"),
    (X, np.ones((0, 3, 3, 4), np.float32), "filter must not have zero elements"),
])
def test_conv2d_shape_errors(x, f, message, feed, backend):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours("Conv2D", [x, f], CONV, backend, feed=feed)


P = np.ones((1, 4, 4, 4), np.float32)


@pytest.mark.parametrize("op, attrs, cls, message", [
    ("AvgPool", {"ksize": [2, 1, 1, 1]}, errors.UnimplementedError, "batch dimension"),
    ("MaxPool", {"strides": [2, 1, 1, 1]}, errors.UnimplementedError, "batch dimension"),
    ("AvgPool", {"ksize": [1, 1, 1, 2]}, errors.UnimplementedError, "Non-spatial pooling"),
    ("MaxPool", {"ksize": [1, 2, 1, 2]}, errors.UnimplementedError, "exactly one of pooling across depth"),
    ("MaxPool", {"ksize": [1, 1, 1, 2]}, errors.UnimplementedError, "depth window to equal the depth stride"),
    ("MaxPool", {"ksize": [1, 1, 1, 3], "strides": [1, 1, 1, 3]}, errors.UnimplementedError, "evenly divide"),
    ("MaxPool", {"ksize": [1, 1, 1, 2], "strides": [1, 1, 1, 2], "padding": "EXPLICIT",
                 "explicit_paddings": [0] * 8}, errors.UnimplementedError, "does not support explicit padding"),
    ("MaxPool", {"ksize": [1, 0, 2, 1]}, errors.InvalidArgumentError, "ksize must be positive"),
    ("AvgPool", {"ksize": [1, 0, 2, 1]}, errors.InvalidArgumentError, "ksize must be a positive int32 value, got:0"),
    ("AvgPool", {"strides": [1, 0, 1, 1]}, errors.InvalidArgumentError, "Stride must be > 0, but got 0"),
    ("MaxPool", {"ksize": [1, 2, 2, 1, 1]}, errors.InvalidArgumentError, "ksize field must specify 4 dimensions"),
    ("MaxPool", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 0, 2, 0, 0, 0, 0]},
     errors.InvalidArgumentError, "Bottom padding 2 needs to be smaller than the window size 2"),
    ("MaxPool", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 0, 0, 0, 0, 0, 1]},
     errors.InvalidArgumentError, "batch or depth dimensions"),
    ("AvgPool", {"ksize": [1, 6, 6, 1]}, errors.InvalidArgumentError, "Computed output size would be negative"),
])
def test_pool_errors(op, attrs, cls, message, backend):
    full = dict({"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}, **attrs)
    with pytest.raises(cls, match=message):
        run_ours(op, [P], full, backend)
    with pytest.raises(cls, match=message):
        run_ours(op, [P], full, backend, feed=True)


def test_pool_needs_rank_4(backend):
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}
    with pytest.raises(errors.InvalidArgumentError, match="rank 4"):
        run_ours("MaxPool", [P[0]], attrs, backend)
    with pytest.raises(errors.InvalidArgumentError, match="must have 2 spatial dimensions"):
        run_ours("AvgPool", [P[0]], attrs, backend, feed=True)


@pytest.mark.parametrize("feed", [False, True])
def test_bias_add_errors(feed, backend):
    v = np.ones((1, 4, 4, 2), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match=r"as many biases as the last dimension of the input "
                                                          r"tensor: \[3\] vs. \[1,4,4,2\]"):
        run_ours("BiasAdd", [v, np.ones(3, np.float32)], {}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"\[3\] vs. \[1,4,4,2\]"):
        run_ours("BiasAdd", [v, np.ones(3, np.float32)], {"data_format": "NCHW"}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"Biases must be 1D: \[1,2\]"):
        run_ours("BiasAdd", [v, np.ones((1, 2), np.float32)], {}, backend, feed=feed)
    with pytest.raises(errors.InvalidArgumentError, match=r"Input tensor must be at least 2D: \[3\]"):
        run_ours("BiasAdd", [np.ones(3, np.float32), np.ones(3, np.float32)], {}, backend, feed=feed)


def test_bias_add_nchw_rank_2_refused_at_build_time_computed_at_run_time(backend):
    v, b = np.zeros((2, 3), np.float32), np.array([1, 2, 3], np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="at least rank 3"):
        run_ours("BiasAdd", [v, b], {"data_format": "NCHW"}, backend)
    (out,) = run_ours("BiasAdd", [v, b], {"data_format": "NCHW"}, backend, feed=True)
    np.testing.assert_array_equal(out, v + b)  # TF's kernel: the channel dimension is 1


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("feed", [False, True])
def test_softmax_needs_rank_1(op, feed, backend):
    with pytest.raises(errors.InvalidArgumentError, match=r"logits must have >= 1 dimension, got \[\]"):
        run_ours(op, [np.array(1.0, np.float32)], {}, backend, feed=feed)


# -- documented behaviour ----------------------------------------------------------------------------------
def test_relu_keeps_nan(backend):
    (out,) = run_ours("Relu6", [np.array([np.nan, -1, 7], np.float32)], {}, backend)
    np.testing.assert_array_equal(out, [np.nan, 0, 6])


def test_max_pool_ignores_nan_and_starts_from_lowest(backend):
    x = np.array([np.nan, np.nan, -np.inf, np.nan], np.float32).reshape(1, 2, 2, 1)
    (out,) = run_ours("MaxPool", [x], {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}, backend)
    assert out.item() == np.finfo(np.float32).min


def test_avg_pool_same_counts_only_valid_elements(backend):
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    attrs = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
    (out,) = run_ours("AvgPool", [x], attrs, backend)
    np.testing.assert_array_equal(out[0, :, :, 0], [[5.0, 6.5], [11.0, 12.5]])


def test_pool_depth_stride_is_ignored_like_tf(backend):
    (out,) = run_ours("AvgPool", [P], {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 2], "padding": "VALID"}, backend)
    assert out.shape == (1, 3, 3, 4)


def test_huge_windows_cost_only_the_offsets_that_reach_the_input(backend):
    """TF answers these instantly (values below are TF's); padding them fully would need gigabytes."""
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    huge = {"ksize": [1, 2**30, 1, 1], "strides": [1, 1, 1, 1], "padding": "SAME"}
    np.testing.assert_array_equal(run_ours("MaxPool", [x], huge, backend)[0][0, :, 0, 0], [12, 12, 12, 12])
    np.testing.assert_array_equal(run_ours("AvgPool", [x], huge, backend)[0][0, :, 0, 0], [6, 6, 6, 6])
    conv = {"strides": [1, 1, 1, 1], "padding": "SAME", "dilations": [1, 2**30, 1, 1]}
    (y,) = run_ours("Conv2D", [x, np.ones((3, 1, 1, 1), np.float32)], conv, backend)
    np.testing.assert_array_equal(y[0, :, 0, 0], [0, 4, 8, 12])
    gaps = {"strides": [1, 3, 1, 1], "padding": "EXPLICIT", "dilations": [1, 5, 1, 1],
            "explicit_paddings": [0, 0, 7, 7, 0, 0, 0, 0]}  # some outputs see only padding
    (y,) = run_ours("Conv2D", [x, np.ones((2, 1, 1, 1), np.float32)], gaps, backend)
    np.testing.assert_array_equal(y[0, :, 0, 0], [0, 4, 0, 8, 0])


def test_large_conv_accumulates_per_tap(monkeypatch, backend):
    """Above IM2COL_MAX_ELEMENTS the kernel takes one matmul per tap: same values."""
    from tfops_py.kernels.nn import conv_pool_ops

    rng = np.random.default_rng(0)
    x, f = rng.standard_normal((2, 9, 9, 3)).astype(np.float32), rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    attrs = {"strides": [1, 2, 1, 1], "padding": "SAME", "dilations": [1, 1, 2, 1]}
    (im2col,) = run_ours("Conv2D", [x, f], attrs, backend)
    monkeypatch.setattr(conv_pool_ops, "IM2COL_MAX_ELEMENTS", 0)
    (per_tap,) = run_ours("Conv2D", [x, f], attrs, backend)
    np.testing.assert_allclose(per_tap, im2col, rtol=1e-5, atol=1e-5)
