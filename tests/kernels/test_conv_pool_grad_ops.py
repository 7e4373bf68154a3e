"""Convolution and pooling gradients: what the conformance harness does not cover.

Golden values (NHWC and NCHW) run in tests/conformance (declarations in kernels/nn/conv_pool_grad_ops.py,
cases in _grad_cases.py).  Here: what the golden file must hold, TF's errors at build and run time with
their messages, adjoint identities for what TF's CPU kernels cannot compute (dilations, groups), and live
differential tests against ``tf.raw_ops`` (marked ``tf``; their inputs come from a forward op).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance import golden
from tests.conformance.live import check_against_tf
from tests.conformance.ours import run_ours
from tfops_py import errors
from tfops_py.conformance import draw_values
from tfops_py.errors import OpError
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels.nn._grad_cases import SPATIAL, to_nchw
from tfops_py.kernels.nn._nn_cases import nchw_attrs, nhwc

D = DataType
OPS = set(SPATIAL) | {"BiasAddGrad"}
I32 = np.int32


def _nchw_attrs(op: str, attrs: dict) -> dict:
    return dict(attrs, data_format="NCHW") if op in ("MaxPoolV2", "MaxPoolGradV2") else nchw_attrs(attrs)


def run_layout(op: str, inputs: list, attrs: dict, backend: str, fmt: str, feed: bool = False) -> list:
    """Our outputs of an NHWC-described case computed in ``fmt``, returned in NHWC."""
    if fmt == "NHWC":
        return run_ours(op, inputs, attrs, backend, feed)
    got = run_ours(op, to_nchw(op, inputs), _nchw_attrs(op, attrs), backend, feed)
    return [g if op == "Conv2DBackpropFilter" else nhwc(g) for g in got]


def check_layout(op: str, inputs: list, attrs: dict, backend: str, compare: str, feed: bool, fmt: str) -> None:
    """TF's answer (NHWC; NCHW through the declared divergence's reference) against ours in ``fmt``."""
    if fmt == "NCHW":
        inputs, attrs = to_nchw(op, inputs), _nchw_attrs(op, attrs)
    check_against_tf(op, inputs, attrs, backend, compare, "feed" if feed else "const")


def fast(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_golden_covers_the_brief():
    cases = [c for c in golden.load("grad_kernels").cases if c.op in OPS]
    assert {c.op for c in cases} == OPS
    conv = [c for c in cases if c.op.startswith("Conv2D")]
    assert {c.attrs["padding"] for c in conv} == {"SAME", "VALID", "EXPLICIT"}
    assert {c.raw["inputs"][1][0] for c in conv if c.op == "Conv2DBackpropInput"} >= {"float32", "float16", "int32"}
    assert {c.attrs.get("data_format", "NHWC") for c in cases if c.op in SPATIAL} == {"NHWC", "NCHW"}


# -- errors ----------------------------------------------------------------------------------------------
F = np.ones((3, 3, 3, 4), np.float32)
DY = np.ones((2, 3, 3, 4), np.float32)
X = np.ones((2, 5, 5, 3), np.float32)
VALID = {"strides": [1, 1, 1, 1], "padding": "VALID"}


def sizes(*v: int) -> np.ndarray:
    return np.array(v, I32)


@pytest.mark.parametrize("feed", [False, True])
@pytest.mark.parametrize("inputs, message", [
    ([sizes(5, 5, 3), F, DY], "requires input_sizes to contain 4 values or 2 values, but got: 3"),
    ([sizes(-5, 5), F, DY], "elements of input_sizes must be >= 0, not -5x5"),
    ([sizes(2, 5, 5, 3), F, np.ones((2, 4, 3, 4), np.float32)],
     "Conv2DCustomBackpropInput: Size of out_backprop doesn't match computed: actual = 4, computed = 3 spatial_dim: "
     "1 input: 5 filter: 3 output: 4 stride: 1 dilation: 1"),
    ([sizes(3, 5, 5, 3), F, DY], "input and out_backprop must have the same batch size. Input batch: 3, outbackprop "
                                 "batch: 2, batch_dim: 0"),
    ([sizes(2, 5, 5, 3), F, np.ones((2, 3, 3, 5), np.float32)], "filter and out_backprop must have the same out_depth"),
    ([sizes(2, 5, 5, 4), F, DY], "input depth must be evenly divisible by filter depth"),
    ([sizes(2, 5, 5, 3), F[0], DY], ("Shape must be rank 4 but is rank 3", "filter must be 4-dimensional")),
    ([sizes(2, 5, 5, 0), np.ones((3, 3, 0, 4), np.float32), DY], "filter depth must be strictly greated than zero"),
])
def test_backprop_input_errors(inputs, message, feed, backend):
    """Shape functions give TF's kernel messages where TF's graph-time messages are vaguer (except ranks)."""
    if isinstance(message, tuple):
        message = message[feed]
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours("Conv2DBackpropInput", inputs, VALID, backend, feed=feed)


def test_backprop_input_run_time_only_errors(backend):
    with pytest.raises(errors.InvalidArgumentError, match="input_sizes input must be 1-dim, not 2"):
        run_ours("Conv2DBackpropInput", [np.ones((1, 4), I32), F, DY], VALID, backend, feed=True)
    with pytest.raises(errors.InvalidArgumentError, match="input_sizes must be 4-dimensional, got: 3"):  # sic (TF)
        run_ours("Conv2DBackpropInput", [sizes(2, 5, 5, 3), F, DY[0]], VALID, backend, feed=True)


@pytest.mark.parametrize("feed", [False, True])
@pytest.mark.parametrize("inputs, message", [
    ([X, sizes(3, 3), DY], ("Shape must be rank 4 but is rank 2", "Conv2DCustomBackpropFilter: filter must be 4-dim")),
    ([X, sizes(3, 3, 3, 4), np.ones((2, 4, 3, 4), np.float32)], "Size of out_backprop doesn't match computed"),
    ([np.ones((2, 5, 5, 4), np.float32), sizes(3, 3, 3, 4), DY], "input depth must be evenly divisible"),
    ([X[0], sizes(3, 3, 3, 4), DY], "Conv2DCustomBackpropFilter: input must be 4-dimensional"),
    ([X, sizes(3, -3, 3, 4), DY], ("Invalid value in tensor used for shape: -3", "Dimension -3 must be >= 0")),
])
def test_backprop_filter_errors(inputs, message, feed, backend):
    if isinstance(message, tuple):
        message = message[feed]
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours("Conv2DBackpropFilter", inputs, VALID, backend, feed=feed)


P = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
POOL = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}
O = np.ones((1, 3, 3, 1), np.float32)


@pytest.mark.parametrize("feed", [False, True])
@pytest.mark.parametrize("inputs, attrs, cls, message", [
    ([P, np.ones((1, 2, 3, 1), np.float32), O], {}, errors.InvalidArgumentError,
     r"Expected orig_output shape to be \[1,3,3,1\], but got \[1,2,3,1\]"),
    ([P, O, np.ones((1, 3, 2, 1), np.float32)], {}, errors.InvalidArgumentError,
     r"Expected grad shape to be \[1,3,3,1\], but got \[1,3,2,1\]"),
    ([np.ones((1, 4, 4, 2), np.float32), np.ones((1, 4, 4, 1), np.float32), np.ones((1, 4, 4, 1), np.float32)],
     {"ksize": [1, 1, 1, 2], "strides": [1, 1, 1, 2]}, errors.UnimplementedError, "not yet supported on the depth"),
    ([P, O, O], {"ksize": [2, 1, 1, 1]}, errors.UnimplementedError, "not yet supported on the batch dimension"),
    ([P, O, O], {"strides": [1, 0, 1, 1]}, errors.InvalidArgumentError, "Stride must be > 0, but got 0"),
    ([P, np.ones((1, 4, 4, 1), np.float32), np.ones((1, 4, 4, 1), np.float32)],
     {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 2, 0, 0, 0, 0, 0]}, errors.InvalidArgumentError,
     "Top padding 2 needs to be smaller than the window size 2"),
])
def test_max_pool_grad_errors(inputs, attrs, cls, message, feed, backend):
    with pytest.raises(cls, match=message):
        run_ours("MaxPoolGrad", inputs, dict(POOL, **attrs), backend, feed=feed)


def test_max_pool_grad_rank_errors(backend):
    for k, name in enumerate(("tensor_in", "tensor_out", "out_backprop")):
        inputs = [P, O, O]
        inputs[k] = inputs[k][0]
        with pytest.raises(errors.InvalidArgumentError, match=f"{name} must be 4-dimensional"):
            run_ours("MaxPoolGrad", inputs, POOL, backend, feed=True)


@pytest.mark.parametrize("inputs, attrs, cls, message", [
    ([sizes(4, 4, 1), O], {}, errors.InvalidArgumentError, "out_backprop must be 1-dimensional and 4 elements"),
    ([sizes(1, 4, 4, 1), O[0]], {}, errors.InvalidArgumentError, "out_backprop must be 4-dimensional"),
    ([sizes(1, -4, 4, 1), O], {}, errors.InvalidArgumentError, "Expected a non-negative size, got -4"),
    ([sizes(1, 4, 4, 2), np.ones((1, 4, 4, 1), np.float32)], {"ksize": [1, 1, 1, 2], "strides": [1, 1, 1, 2]},
     errors.UnimplementedError, "Non-spatial pooling is not yet supported"),
    ([sizes(1, 4, 4, 1), O], {"ksize": [2, 2, 2, 1]}, errors.UnimplementedError, "batch dimension"),
    # TF reads a gradient of the wrong shape anyway (garbage or a partial sum); we refuse it
    ([sizes(1, 4, 4, 1), np.ones((1, 2, 2, 1), np.float32)], {}, errors.InvalidArgumentError,
     r"Expected grad shape to be \[1,3,3,1\], but got \[1,2,2,1\]"),
])
def test_avg_pool_grad_errors(inputs, attrs, cls, message, backend):
    with pytest.raises(cls, match=message):
        run_ours("AvgPoolGrad", inputs, dict(POOL, **attrs), backend, feed=True)


def test_bias_add_grad_errors(backend):
    with pytest.raises(errors.InvalidArgumentError, match="rank 2"):
        run_ours("BiasAddGrad", [np.ones(3, np.float32)], {}, backend)
    with pytest.raises(errors.InvalidArgumentError, match=r"Input tensor must be at least 2D: \[3\]"):
        run_ours("BiasAddGrad", [np.ones(3, np.float32)], {}, backend, feed=True)


def test_max_pool_v2_errors(backend):
    with pytest.raises(errors.InvalidArgumentError, match="ksize field must specify 4 dimensions"):
        run_ours("MaxPoolV2", [P, sizes(1, 2, 2), sizes(1, 1, 1, 1)], {"padding": "VALID"}, backend, feed=True)
    with pytest.raises(errors.InvalidArgumentError, match="Dimension must be 4 but is 3"):
        run_ours("MaxPoolV2", [P, sizes(1, 2, 2), sizes(1, 1, 1, 1)], {"padding": "VALID"}, backend)


# -- documented behaviour ----------------------------------------------------------------------------------
def test_max_pool_grad_first_maximum_and_leading_nan_take_the_gradient(backend):
    x = np.array([3, 3, 3, 3, np.nan, 1, 2, np.nan], np.float32).reshape(2, 2, 2, 1)
    g = np.array([5, 7], np.float32).reshape(2, 1, 1, 1)
    (out,) = run_ours("MaxPoolGrad", [x, np.zeros((2, 1, 1, 1), np.float32), g], POOL, backend)
    np.testing.assert_array_equal(out.reshape(2, 4), [[5, 0, 0, 0], [7, 0, 0, 0]])


@pytest.mark.parametrize("op", ["Conv2DBackpropInput", "Conv2DBackpropFilter"])
def test_empty_out_backprop_gives_zeros(op, backend):
    """TF 2.21's CPU filter gradient segfaults on x [1,2,1,3], filter [2,2,3,1], strides [1,1,3,1], VALID
    (an out_backprop [1,1,0,1]); we return zeros."""
    x, f = np.ones((1, 2, 1, 3), np.float32), np.ones((2, 2, 3, 1), np.float32)
    dy = np.ones((1, 1, 0, 1), np.float32)
    attrs = {"strides": [1, 1, 3, 1], "padding": "VALID"}
    inputs = [sizes(*x.shape), f, dy] if op == "Conv2DBackpropInput" else [x, sizes(*f.shape), dy]
    (out,) = run_ours(op, inputs, attrs, backend)
    np.testing.assert_array_equal(out, np.zeros(x.shape if op == "Conv2DBackpropInput" else f.shape))


def test_empty_pool_grad_is_zero(backend):
    """A window wider than the input (VALID) leaves no output; TF's MaxPoolGrad then returns uninitialized memory."""
    x = np.ones((1, 1, 1, 1), np.float32)
    empty = np.ones((1, 1, 0, 1), np.float32)
    attrs = {"ksize": [1, 1, 2, 1], "strides": [1, 1, 2, 1], "padding": "VALID"}
    (out,) = run_ours("MaxPoolGrad", [x, empty, empty], attrs, backend)
    np.testing.assert_array_equal(out, np.zeros_like(x))


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
def test_bias_add_grad_low_precision_is_the_rounded_exact_sum(dtype):
    """Accumulated in float (TF: in the narrow type for some layouts, so TF can be a few ulps off)."""
    import ml_dtypes

    dt = np.dtype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    x = draw_values(np.random.default_rng(3), dt, (5, 3, 7))
    for fmt, axes in (("NHWC", (0, 1)), ("NCHW", (0, 2))):
        (out,) = run_ours("BiasAddGrad", [x], {"data_format": fmt})
        exact = x.astype(np.float64).sum(axis=axes).astype(np.float32).astype(dt)
        np.testing.assert_array_equal(out, exact)


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sum(a.astype(np.float64) * b.astype(np.float64)))


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("stride, dilation, groups, padding", [
    ((1, 1), (2, 2), 1, "SAME"), ((2, 1), (1, 3), 1, "VALID"), ((1, 2), (1, 1), 3, "SAME"),
    ((2, 2), (2, 1), 2, "EXPLICIT"),
])
def test_backprops_are_the_adjoints_of_conv2d(stride, dilation, groups, padding, fmt, backend):
    """<Conv2D(x, f), dy> = <x, dx> = <f, df>: checks what TF's CPU kernels refuse (dilations, groups, NCHW)."""
    rng = np.random.default_rng(sum(stride) + groups)
    x = rng.standard_normal((2, 7, 8, 2 * groups)).astype(np.float64)
    f = rng.standard_normal((3, 2, 2, 2 * groups)).astype(np.float64)
    attrs = {"strides": [1, *stride, 1], "padding": padding, "dilations": [1, *dilation, 1],
             "explicit_paddings": [0, 0, 1, 2, 0, 1, 0, 0] if padding == "EXPLICIT" else []}
    (y,) = run_ours("Conv2D", [x, f], attrs, backend)
    dy = rng.standard_normal(y.shape)
    (dx,) = run_layout("Conv2DBackpropInput", [np.array(x.shape, I32), f, dy], attrs, backend, fmt)
    (df,) = run_layout("Conv2DBackpropFilter", [x, np.array(f.shape, I32), dy], attrs, backend, fmt)
    assert _dot(y, dy) == pytest.approx(_dot(x, dx), rel=1e-10)
    assert _dot(y, dy) == pytest.approx(_dot(f, df), rel=1e-10)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_pool_grads_are_the_adjoints_of_pooling(padding, backend):
    rng = np.random.default_rng(7)
    x = rng.permutation(2 * 7 * 6 * 3).astype(np.float64).reshape(2, 7, 6, 3)  # no ties: max pooling is linear nearby
    attrs = {"ksize": [1, 3, 2, 1], "strides": [1, 2, 1, 1], "padding": padding}
    for fwd in ("AvgPool", "MaxPool"):
        (y,) = run_ours(fwd, [x], attrs, backend)
        dy = rng.standard_normal(y.shape)
        grad = run_ours(fwd + "Grad", [np.array(x.shape, I32), dy] if fwd == "AvgPool" else [x, y, dy], attrs,
                        backend)[0]
        if fwd == "AvgPool":
            assert _dot(y, dy) == pytest.approx(_dot(x, grad), rel=1e-10)
        else:  # d/dt <MaxPool(x + t*dx), dy> at t = 0 is <grad, dx>
            dx = rng.standard_normal(x.shape) * 1e-3
            moved = run_ours(fwd, [x + dx], attrs, backend)[0]
            assert _dot(moved - y, dy) == pytest.approx(_dot(grad, dx), rel=1e-9)


# -- live differential tests against TF --------------------------------------------------------------------
def _floats(backend: str) -> list[DataType]:
    return [D.DT_FLOAT, D.DT_DOUBLE] + ([D.DT_HALF, D.DT_BFLOAT16] if backend == "numpy" else [])


@pytest.mark.tf
@fast(40)
@given(data=st.data())
def test_conv_backprops_match_tf(backend, data):
    dt = data.draw(st.sampled_from(_floats(backend)))
    n, h, w = data.draw(st.integers(0, 2)), data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7))
    c, out = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    kh, kw = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    padding = data.draw(st.sampled_from(["SAME", "VALID", "EXPLICIT"]))
    attrs = {"strides": [1, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), 1], "padding": padding,
             "explicit_paddings": [0, 0, *data.draw(st.lists(st.integers(0, 2), min_size=4, max_size=4)), 0, 0]
             if padding == "EXPLICIT" else []}
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x, f = draw_values(rng, dt.numpy_dtype, (n, h, w, c)), draw_values(rng, dt.numpy_dtype, (kh, kw, c, out))
    try:
        (y,) = run_ours("Conv2D", [x, f], attrs)
    except OpError:  # a window larger than the input: nothing to differentiate
        return
    dy = draw_values(rng, dt.numpy_dtype, y.shape)
    fmt = data.draw(st.sampled_from(["NHWC", "NCHW"]))
    feed = data.draw(st.booleans())
    if y.size == 0:  # TF's filter gradient can crash here (see test_empty_out_backprop_gives_zeros)
        return
    if data.draw(st.booleans()):
        check_layout("Conv2DBackpropInput", [np.array(x.shape, I32), f, dy], attrs, backend, "acc", feed, fmt)
    else:
        check_layout("Conv2DBackpropFilter", [x, np.array(f.shape, I32), dy], attrs, backend, "acc", feed, fmt)


@pytest.mark.tf
@fast(50)
@given(data=st.data())
def test_pool_grads_match_tf(backend, data):
    op = data.draw(st.sampled_from(["MaxPoolGrad", "AvgPoolGrad", "MaxPoolGradV2", "BiasAddGrad"]))
    ints = [D.DT_INT32, D.DT_INT64] if op != "AvgPoolGrad" else []
    dt = data.draw(st.sampled_from(_floats(backend) + ints))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    feed = data.draw(st.booleans())
    if op == "BiasAddGrad":
        if dt in (D.DT_HALF, D.DT_BFLOAT16):  # TF sums these in the narrow type: test_bias_add_grad_low_precision
            dt = D.DT_FLOAT
        shape = data.draw(st.lists(st.integers(0, 4), min_size=2, max_size=4).map(tuple))
        fmt = data.draw(st.sampled_from(["NHWC", "NCHW"])) if len(shape) >= 3 else "NHWC"
        check_against_tf(op, [draw_values(rng, dt.numpy_dtype, shape, "small")], {"data_format": fmt}, backend,
                         "acc", "feed" if feed else "const")
        return
    shape = (data.draw(st.integers(0, 2)), data.draw(st.integers(1, 7)), data.draw(st.integers(1, 7)),
             data.draw(st.integers(1, 3)))
    k = [1, data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), 1]
    s = [1, data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), 1]
    padding = data.draw(st.sampled_from(["SAME", "VALID"] + (["EXPLICIT"] if op == "MaxPoolGrad" else [])))
    attrs = {"ksize": k, "strides": s, "padding": padding}
    if padding == "EXPLICIT":
        attrs["explicit_paddings"] = [0, 0, *(data.draw(st.integers(0, k[1] - 1)) for _ in range(2)),
                                      *(data.draw(st.integers(0, k[2] - 1)) for _ in range(2)), 0, 0]
    x = draw_values(rng, dt.numpy_dtype, shape, "small", specials=data.draw(st.booleans()))
    try:
        (y,) = run_ours("MaxPool" if op.startswith("Max") else "AvgPool", [x], attrs)
    except OpError:  # a window larger than the input
        return
    dy = draw_values(rng, dt.numpy_dtype, y.shape, "small")
    fmt = data.draw(st.sampled_from(["NHWC", "NCHW"]))
    if y.size == 0 and op != "AvgPoolGrad":  # TF returns uninitialized memory (test_empty_pool_grad_is_zero)
        return
    if op == "AvgPoolGrad":
        check_layout(op, [np.array(shape, I32), dy], attrs, backend, "acc", feed, fmt)
    elif op == "MaxPoolGrad":
        check_layout(op, [x, y, dy], attrs, backend, "ew", feed, fmt)
    else:
        check_layout(op, [x, y, dy, np.array(k, I32), np.array(s, I32)], {"padding": padding}, backend, "ew",
                     feed, fmt)
