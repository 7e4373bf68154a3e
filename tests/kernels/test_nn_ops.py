"""Relu, Relu6, Softmax, LogSoftmax, BiasAdd, Conv2D, AvgPool and MaxPool against TF 2.21.

Golden values (tools/golden/nn_ops.py, no TF needed) in NHWC and, for convolution and pooling,
NCHW (which TF's CPU kernels refuse: the same values transposed), TF's errors at build and run
time, and live differential tests against ``tf.raw_ops`` (marked ``tf``).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.kernels._math_testing import (GOLDEN_DIR, assert_matches, check_against_tf, decode_attrs, fast, golden,
                                         golden_case, golden_id, golden_indices, run_ours, run_tf,
                                         skip_unsupported, tools)
from tests.tf_oracle import require_tf
from tfops_py import errors
from tfops_py.framework.dtypes import DataType

D = DataType
SPATIAL = {"Conv2D", "AvgPool", "MaxPool"}
OPS = {"Relu", "Relu6", "Softmax", "LogSoftmax", "BiasAdd"} | SPATIAL
GOLDEN = golden_indices("nn_ops", OPS)
LOW = (D.DT_HALF, D.DT_BFLOAT16)


def nchw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def nhwc(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def nchw_attrs(attrs: dict) -> dict:
    """NHWC attrs of a conv/pool op rewritten for NCHW."""
    out = dict(attrs, data_format="NCHW")
    for key in ("strides", "dilations", "ksize"):
        if key in attrs:
            n, h, w, c = attrs[key]
            out[key] = [n, c, h, w]
    if attrs.get("explicit_paddings"):
        p = attrs["explicit_paddings"]
        out["explicit_paddings"] = p[:2] + p[6:8] + p[2:6]
    return out


def run_layout(op: str, inputs: list, attrs: dict, backend: str, fmt: str, feed: bool = False) -> np.ndarray:
    """Our output of an NHWC-described conv/pool case, computed in ``fmt`` and returned as NHWC."""
    if fmt == "NHWC":
        return run_ours(op, inputs, attrs, backend, feed)[0]
    moved = [nchw(inputs[0])] + inputs[1:]
    return nhwc(run_ours(op, moved, nchw_attrs(attrs), backend, feed)[0])


# -- golden values -------------------------------------------------------------------------------------
# convolution and pooling cases also run in NCHW (BiasAdd cases carry their own data_format)
LAYOUTS = [(i, fmt) for i in GOLDEN for fmt in ("NHWC", "NCHW")
           if fmt == "NHWC" or golden("nn_ops")[0][i]["op"] in SPATIAL]


@pytest.mark.parametrize("index, fmt", LAYOUTS, ids=lambda v: golden_id("nn_ops", v) if isinstance(v, int) else v)
def test_golden(index, fmt, backend):
    case, inputs, expected = golden_case("nn_ops", index)
    skip_unsupported(backend, inputs, expected)
    got = run_layout(case["op"], inputs, decode_attrs(case["attrs"]), backend, fmt)
    assert_matches(got, expected[0], case["kind"], f"case {index} ({fmt})")


@pytest.mark.parametrize("index", GOLDEN[::3], ids=lambda i: golden_id("nn_ops", i))
def test_golden_fed_with_unknown_shapes(index):
    case, inputs, expected = golden_case("nn_ops", index)
    got = run_layout(case["op"], inputs, decode_attrs(case["attrs"]), "numpy", "NHWC", feed=True)
    assert_matches(got, expected[0], case["kind"], f"case {index}")


def test_golden_covers_the_brief():
    cases = [golden("nn_ops")[0][i] for i in GOLDEN]
    assert {c["op"] for c in cases} == OPS
    conv = [c for c in cases if c["op"] == "Conv2D"]
    assert {c["attrs"]["padding"] for c in conv} == {"SAME", "VALID", "EXPLICIT"}
    assert any(c["attrs"]["dilations"] != [1, 1, 1, 1] for c in conv)
    assert any(c["inputs"][0][1][3] != c["inputs"][1][1][2] for c in conv)  # grouped
    assert {c["inputs"][0][0] for c in conv} == {"float32", "float64", "float16", "bfloat16", "int32"}
    assert {c["attrs"]["data_format"] for c in cases if c["op"] == "BiasAdd"} == {"NHWC", "NCHW"}
    assert (GOLDEN_DIR / "nn_ops.npz").stat().st_size < 1_000_000


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


# -- live differential tests against TF ------------------------------------------------------------------
def _float_types(backend: str) -> list[DataType]:
    return [t for t in (D.DT_FLOAT, D.DT_DOUBLE, D.DT_HALF, D.DT_BFLOAT16) if backend == "numpy" or t not in LOW]


def check_layout_against_tf(op: str, inputs: list, attrs: dict, backend: str, kind: str, fmt: str) -> None:
    """TF runs the NHWC case; ours runs it in ``fmt`` and must match, or raise TF's error class."""
    tf = require_tf()
    try:
        (expected,) = run_tf(op, inputs, attrs)
    except tf.errors.OpError as e:
        with pytest.raises(getattr(errors, type(e).__name__)):
            run_layout(op, inputs, attrs, backend, fmt)
        return
    assert_matches(run_layout(op, inputs, attrs, backend, fmt), expected, kind, f"{op} {fmt}")


@pytest.mark.tf
@fast(50)
@given(data=st.data())
def test_conv2d_matches_tf(backend, data):
    dt = data.draw(st.sampled_from(_float_types(backend) + [D.DT_INT32]))
    n, h, w = data.draw(st.integers(0, 2)), data.draw(st.integers(1, 8)), data.draw(st.integers(1, 8))
    cg, groups = data.draw(st.integers(1, 3)), data.draw(st.sampled_from([1, 1, 2, 3]))
    og = data.draw(st.integers(1, 3))
    kh, kw = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    padding = data.draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    attrs = {"strides": [1, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), 1], "padding": padding,
             "dilations": [1, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), 1],
             "explicit_paddings": [0, 0, *data.draw(st.lists(st.integers(0, 6), min_size=4, max_size=4)), 0, 0]
             if padding == "EXPLICIT" else []}
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    kind = "small" if dt == D.DT_INT32 else "any"
    x = tools().values(rng, dt.numpy_dtype, (n, h, w, cg * groups), kind)
    f = tools().values(rng, dt.numpy_dtype, (kh, kw, cg, og * groups), kind)
    check_layout_against_tf("Conv2D", [x, f], attrs, backend, "acc", data.draw(st.sampled_from(["NHWC", "NCHW"])))


@pytest.mark.tf
@fast(60)
@given(data=st.data())
def test_pooling_matches_tf(backend, data):
    op = data.draw(st.sampled_from(["AvgPool", "MaxPool"]))
    ints = [D.DT_INT32, D.DT_UINT8, D.DT_INT64] if op == "MaxPool" else []
    dt = data.draw(st.sampled_from(_float_types(backend) + ints))
    shape = (data.draw(st.integers(0, 2)), data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7)),
             data.draw(st.integers(1, 3)))
    k = [1, data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9)), 1]
    s = [1, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), 1]
    padding = data.draw(st.sampled_from(["SAME", "VALID"] + (["EXPLICIT"] if op == "MaxPool" else [])))
    attrs = {"ksize": k, "strides": s, "padding": padding}
    if op == "MaxPool" and padding != "EXPLICIT" and data.draw(st.integers(0, 4)) == 0:  # across depth
        depth = data.draw(st.integers(1, 3))
        shape = shape[:3] + (depth * data.draw(st.integers(1, 3)),)
        attrs.update(ksize=[1, 1, 1, depth], strides=[1, s[1], s[2], depth])
    elif padding == "EXPLICIT":
        attrs["explicit_paddings"] = [0, 0, *(data.draw(st.integers(0, k[1] - 1)) for _ in range(2)),
                                      *(data.draw(st.integers(0, k[2] - 1)) for _ in range(2)), 0, 0]
    x = tools().values(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), dt.numpy_dtype, shape,
                       specials=True)
    check_layout_against_tf(op, [x], attrs, backend, "acc" if op == "AvgPool" else "ew",
                            data.draw(st.sampled_from(["NHWC", "NCHW"])))


@pytest.mark.tf
@fast(60)
@given(data=st.data())
def test_activations_and_bias_add_match_tf(backend, data):
    op = data.draw(st.sampled_from(["Relu", "Relu6", "Softmax", "LogSoftmax", "BiasAdd"]))
    types = _float_types(backend) + ([D.DT_INT32, D.DT_INT8, D.DT_UINT8] if op != "Softmax" and
                                     op != "LogSoftmax" else [])
    dt = data.draw(st.sampled_from(types))
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1 if op != "BiasAdd" else 2, max_size=4).map(tuple))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = tools().values(rng, dt.numpy_dtype, shape, specials=op in ("Relu", "Relu6", "BiasAdd"))
    feed = data.draw(st.booleans())
    if op != "BiasAdd":
        check_against_tf(op, [x], {}, backend, kind="acc" if "Softmax" in op else "ew", feed=feed)
        return
    fmt = data.draw(st.sampled_from(["NHWC", "NCHW"])) if len(shape) >= 3 else "NHWC"
    bias = tools().values(rng, dt.numpy_dtype, (shape[1] if fmt == "NCHW" else shape[-1],))
    check_against_tf(op, [x, bias], {"data_format": fmt}, backend, feed=feed)
