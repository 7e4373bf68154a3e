"""DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter.

The golden cases (NHWC and NCHW, dilations, every bad input of TF's validation and the crash reports, TF's
class and message at build and run time) are the conformance harness's (tests/conformance, built in
tfops_py/kernels/nn/_depthwise_conv_cases.py).  Here: the chunked NumPy path against the generic one,
adjoint identities, the op type and node name of errors, the documented divergences, and live differential
tests of the gradients against TF (marked ``tf``).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conformance.check import cases_by_op
from tests.conformance.tolerances import assert_values
from tests.tf_oracle import require_tf
from tfops_py import DT_DOUBLE, DT_FLOAT, DT_INT32, ClientSession, Scope, errors, ops
from tfops_py.kernels.nn import _depthwise_conv_cases as cases
from tfops_py.kernels.nn import _depthwise_conv_impl as impl
from tfops_py.kernels.nn._depthwise_conv_cases import OPS, attrs_of as attrs, nchw, nhwc
from tfops_py.kernels._parallel import threads
from tfops_py.kernels.registry import find_kernel

BF16 = np.dtype(ml_dtypes.bfloat16)


def fast(examples: int) -> settings:
    """Hypothesis settings for kernel property tests (the backend fixture is a constant string)."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# -- helpers ----------------------------------------------------------------------------------------
def assert_close(ours: np.ndarray, ref: np.ndarray, what: str = "") -> None:
    """Same shape and dtype; values within the dtype's accumulating-op tolerance (tests/conformance/tolerances.py)."""
    assert_values(ours, ref, "acc", what)


def run_all(x: np.ndarray, w: np.ndarray, dy: np.ndarray, backend: str, **a) -> list[np.ndarray]:
    """[y, dx, dw] from our three ops, input_sizes and filter_sizes as int32 Consts."""
    root = Scope.NewRootScope()
    kw = {k: v for k, v in a.items() if k not in ("strides", "padding")}
    args = (a["strides"], a["padding"])
    y = ops.DepthwiseConv2dNative(root, x, w, *args, **kw)
    dx = ops.DepthwiseConv2dNativeBackpropInput(root, np.array(x.shape, np.int32), w, dy, *args, **kw)
    dw = ops.DepthwiseConv2dNativeBackpropFilter(root, x, np.array(w.shape, np.int32), dy, *args, **kw)
    return ClientSession(root, backend=backend, fetch_numpy=True).Run([y, dx, dw])


# -- the NumPy fast path against the generic kernels, and adjoint identities -------------------------
configs = st.fixed_dictionaries({
    "n": st.integers(0, 5), "h": st.integers(0, 9), "w": st.integers(1, 9), "c": st.integers(1, 4),
    "kh": st.integers(1, 4), "kw": st.integers(1, 4), "m": st.integers(1, 3), "stride": st.integers(1, 3),
    "padding": st.sampled_from(["SAME", "VALID", "EXPLICIT"]), "explicit": st.tuples(*[st.integers(0, 4)] * 4),
    "dilations": st.tuples(st.integers(1, 3), st.integers(1, 3)), "fmt": st.sampled_from(["NHWC", "NCHW"]),
    "seed": st.integers(0, 2**16),
})


def draw_case(cfg: dict, dtype=np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict] | None:
    """Random x, w, dy (in cfg's layout) and attrs; None when the geometry has no valid output."""
    a = attrs(cfg["stride"], cfg["padding"], cfg["explicit"] if cfg["padding"] == "EXPLICIT" else None,
              cfg["dilations"], cfg["fmt"])
    xs, ws = (cfg["n"], cfg["h"], cfg["w"], cfg["c"]), (cfg["kh"], cfg["kw"], cfg["c"], cfg["m"])
    out = cases.out_shape(xs, ws, cfg["stride"], cfg["padding"],
                          cfg["explicit"] if cfg["padding"] == "EXPLICIT" else None, cfg["dilations"])
    if out[1] < 0 or out[2] < 0:
        return None
    rng = np.random.default_rng(cfg["seed"])
    x, w, dy = (rng.standard_normal(s).astype(dtype) for s in (xs, ws, out))
    if cfg["fmt"] == "NCHW":
        x, dy = nchw(x), nchw(dy)
    return x, w, dy, a


@pytest.fixture(params=["row bands", "image groups"])
def tiny_chunks(request, monkeypatch):
    """Chunks of one row of one image (and two threads even for tiny inputs), or of a few whole images:
    each worker walks several chunks, reuses its buffers and (bands) re-pads rows another band filled."""
    if request.param == "row bands":
        monkeypatch.setattr(impl, "CHUNK_BYTES", 1)
        monkeypatch.setattr(impl, "PARALLEL_BYTES", 1)
    else:
        monkeypatch.setattr(impl, "CHUNK_BYTES", 4096)


@fast(60)
@given(cfg=configs)
def test_fast_path_matches_generic(cfg, tiny_chunks):
    drawn = draw_case(cfg)
    assume(drawn is not None)
    x, w, dy, a = drawn
    fast = run_all(x, w, dy, "numpy", **a)
    generic = run_all(x, w, dy, "array_api_strict", **a)
    for f, g, name in zip(fast, generic, ("y", "dx", "dw")):
        np.testing.assert_allclose(f, g, rtol=1e-12, atol=1e-12, err_msg=name)


@fast(30)
@given(cfg=configs)
def test_backprops_are_adjoints_of_the_forward(cfg, backend):
    """<conv(x, w), dy> == <x, dx(w, dy)> == <w, dw(x, dy)>, dilations and NCHW included."""
    drawn = draw_case(cfg)
    assume(drawn is not None)
    x, w, dy, a = drawn
    y, dx, dw = run_all(x, w, dy, backend, **a)
    lhs = float(np.vdot(y, dy))
    np.testing.assert_allclose(float(np.vdot(x, dx)), lhs, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(float(np.vdot(w, dw)), lhs, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
def test_low_precision_fast_path_matches_generic_in_float32(dtype, tiny_chunks):
    """half and bfloat16 are accumulated in float32 and rounded once, by both kernels."""
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((3, 6, 5, 2)).astype(dtype), rng.standard_normal((3, 3, 2, 2)).astype(dtype)
    dy = rng.standard_normal((3, 3, 3, 4)).astype(dtype)
    a = attrs(2, "SAME")
    fast = run_all(x, w, dy, "numpy", **a)
    ref = run_all(x.astype(np.float32), w.astype(np.float32), dy.astype(np.float32), "array_api_strict", **a)
    ulp = {np.dtype(np.float16): 2.0**-10, BF16: 2.0**-7, np.dtype(np.float32): 2.0**-23}[np.dtype(dtype)]
    for f, r in zip(fast, ref):
        assert f.dtype == dtype
        np.testing.assert_allclose(f.astype(np.float32), r, rtol=2 * ulp, atol=2 * ulp * np.abs(r).max())


@pytest.mark.parametrize("s,k,d", [(s, k, d) for s in (1, 2, 3, 5) for k in (1, 2, 3, 5) for d in (1, 2, 3)])
def test_lanes_decompose_every_column_tap(s, k, d):
    """Filter column f reads padded column (j + a*ustep)*s + l*hstep of output column j: each tap is one
    (tuple offset, lane) pair, and the lanes stored are at most those the filter spans."""
    lanes = impl._lanes(s, k, d)
    assert len(set(lanes.taps)) == len(lanes.taps) == k
    for f, (a, l) in enumerate(lanes.taps):
        assert f * d == a * lanes.ustep * s + l * lanes.hstep
        assert 0 <= a < lanes.nu and 0 <= l < lanes.nl
    assert lanes.nl <= min(s, (k - 1) * d + 1)


def test_lanes_of_common_geometries():
    """(tuple offsets, their step, lanes, their step): no zero taps at stride 1 (dilated too); stride 2 with
    3 taps reads 2 offsets x 2 lanes; lanes never read are not stored (stride 2 dilation 2, huge strides)."""
    assert impl._lanes(1, 3, 1)[1:5] == (3, 1, 1, 1)
    assert impl._lanes(1, 3, 2)[1:5] == (3, 2, 1, 1)
    assert impl._lanes(2, 3, 1)[1:5] == (2, 1, 2, 1)
    assert impl._lanes(2, 3, 2)[1:5] == (3, 1, 1, 1)
    assert impl._lanes(10**6, 2, 1)[1:5] == (1, 1, 2, 1)


@pytest.mark.parametrize("n,rows,row_bytes", [(32, 56, 30_000), (1, 56, 30_000), (1, 300, 30_000), (3, 700, 20_000),
                                              (5, 7, 100), (2, 3, 10**7)])
def test_chunks_cover_every_row_once(n, rows, row_bytes):
    """Whole images while they fit the chunk budget, else bands of rows; a single large image is cut
    into bands so that every thread gets work, a small call stays one chunk (no thread dispatch)."""
    nb, band, chunks = impl._chunks(n, rows, row_bytes, 2 * row_bytes)
    seen = np.zeros((n, rows), int)
    for n0, m, r0, r1 in chunks:
        assert 1 <= m <= nb and 1 <= r1 - r0 <= band
        seen[n0:n0 + m, r0:r1] += 1
    assert (seen == 1).all()
    if band < rows and band > 1:
        assert band * row_bytes + 2 * row_bytes <= impl.CHUNK_BYTES
    total = n * (rows + 2) * row_bytes
    if total >= impl.PARALLEL_BYTES:
        assert len(chunks) >= min(2 * threads(), n * rows)
    elif total <= impl.CHUNK_BYTES:
        assert len(chunks) == 1


@pytest.mark.parametrize("stride,fmt,dtype", [(1, "NHWC", np.float64), (2, "NHWC", np.float64),
                                              (3, "NCHW", np.float64), (2, "NHWC", np.float16)])
def test_single_image_in_bands_matches_generic(stride, fmt, dtype, monkeypatch):
    """One image, default chunk budget, cut into row bands for the threads: same values as the generic kernels."""
    monkeypatch.setattr(impl, "PARALLEL_BYTES", 1)
    cfg = {"n": 1, "h": 29, "w": 23, "c": 3, "kh": 3, "kw": 3, "m": 2, "stride": stride, "padding": "SAME",
           "explicit": (0, 0, 0, 0), "dilations": (1, 1), "fmt": fmt, "seed": stride}
    x, w, dy, a = draw_case(cfg, dtype)
    fast = run_all(x, w, dy, "numpy", **a)
    cast = (lambda v: v.astype(np.float32)) if dtype == np.float16 else (lambda v: v)
    generic = run_all(cast(x), cast(w), cast(dy), "array_api_strict", **a)
    tol = 1e-12 if dtype == np.float64 else 2.0**-9
    for f, g, name in zip(fast, generic, ("y", "dx", "dw")):
        np.testing.assert_allclose(cast(f), g, rtol=tol, atol=tol * np.abs(g).max(), err_msg=name)


# -- validation: every check of tf_seed_ops.md 2.4 ----------------------------------------------------------
# The bad inputs are golden cases (TF's class and message, at build and at run time): here, what else an error says.
BAD = [c for op in OPS for c in cases_by_op().get(op, []) if "/bad/" in c.id]


def build_case(root: Scope, op: str, inputs: list, a: dict, feed: dict | None = None):
    """Our op on the case's inputs: Consts, or (when ``feed`` is a dict) unshaped Placeholders it fills."""
    args = []
    for value in inputs:
        if feed is None:
            args.append(ops.Const(root, value))
        else:
            ph = ops.Placeholder(root, DT_INT32 if value.dtype == np.int32 else DT_FLOAT)
            feed[ph] = value
            args.append(ph)
    full = dict(a)
    return getattr(ops, op)(root, *args, full.pop("strides"), full.pop("padding"), **full)


def test_every_bad_input_is_a_golden_case():
    assert len(BAD) == 3 * len(cases.ATTR_CASES) + len(cases.DATA_CASES)
    assert all(c.eager.error for c in BAD)


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.id)
def test_errors_name_the_op_and_its_node(case, backend):
    """At build time (Consts) and, where the shapes are needed, at run time (unshaped Placeholders)."""
    with pytest.raises(errors.OpError) as info:
        build_case(Scope.NewRootScope(), case.op, case.inputs, case.attrs)
    assert info.value.op_type == case.op and info.value.node_name == case.op
    root, feed = Scope.NewRootScope(), {}
    with pytest.raises(errors.OpError) as info:
        ClientSession(root, backend=backend).Run(feed, [build_case(root, case.op, case.inputs, case.attrs, feed)])
    assert info.value.node_name == case.op


@pytest.mark.parametrize("dilations,cls,phrase", [
    ([1, 2, 2], errors.InvalidArgumentError, "Sliding window dilations field must specify 4 dimensions"),
    ([2, 1, 1, 1], errors.UnimplementedError, "does not yet support dilations in the batch and depth dimensions"),
    ([1, 1, 1, 2], errors.UnimplementedError, "does not yet support dilations in the batch and depth dimensions"),
    ([1, 0, 1, 1], errors.InvalidArgumentError, "Dilated rates should be larger than 0"),
])
@pytest.mark.parametrize("op", OPS)
def test_bad_dilations_are_rejected(op, dilations, cls, phrase):
    """TF's backprops accept any dilations (and ignore them); ours use them, so check them like Conv2D."""
    with pytest.raises(cls, match=phrase):
        build_case(Scope.NewRootScope(), op, cases.base_inputs(op), {"strides": [1, 1, 1, 1], "padding": "SAME",
                                                                      "dilations": dilations})


def test_huge_input_sizes_are_an_oom_error(backend):
    """A valid but unallocatable input gradient (4 TiB) is TF's ResourceExhausted, not a NumPy error."""
    root = Scope.NewRootScope()
    n = 2**20
    out = ops.DepthwiseConv2dNativeBackpropInput(root, np.array([1, n, n, 1], np.int32),
                                                 np.ones((1, 1, 1, 1), np.float32),
                                                 np.ones((1, 1, 1, 1), np.float32), [1, n, n, 1], "SAME")
    assert out.output.shape() == [1, n, n, 1]
    with pytest.raises(errors.ResourceExhaustedError, match=r"OOM when allocating tensor with shape\[1,1048576"):
        ClientSession(root, backend=backend).Run([out])


# -- shapes: build-time inference, run-time sizes ------------------------------------------------------
def test_const_sizes_give_the_output_shape_at_build_time():
    root = Scope.NewRootScope()
    w, dy = np.ones((3, 3, 2, 2), np.float32), np.ones((1, 4, 1, 2), np.float32)
    dx = ops.DepthwiseConv2dNativeBackpropInput(root, np.array([1, 2, 4, 5], np.int32), w, dy, [1, 1, 2, 2], "VALID",
                                                data_format="NCHW")
    assert dx.output.shape() == [1, 2, 4, 5]
    dw = ops.DepthwiseConv2dNativeBackpropFilter(root, np.ones((1, 4, 6, 2), np.float32),
                                                 np.array([3, 2, 2, 2], np.int32),
                                                 np.ones((1, 2, 5, 4), np.float32), [1, 1, 1, 1], "VALID")
    assert dw.output.shape() == [3, 2, 2, 2]


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_forward_shape_inference_with_unknown_dims(fmt):
    root = Scope.NewRootScope()
    shape = [-1, 9, -1, 3] if fmt == "NHWC" else [-1, 3, 9, -1]
    x = ops.Placeholder(root, DT_FLOAT, ops.Placeholder.Shape(shape))
    y = ops.DepthwiseConv2dNative(root, x, np.ones((3, 3, 3, 2), np.float32), **attrs(2, "SAME", fmt=fmt))
    assert y.output.shape() == ([-1, 5, -1, 6] if fmt == "NHWC" else [-1, 6, 5, -1])
    w = ops.Placeholder(root, DT_FLOAT)  # unknown rank: depth from the input only
    assert ops.DepthwiseConv2dNative(root, x, w, **attrs(1, "VALID", fmt=fmt)).output.shape() == [-1] * 4


def test_runtime_input_sizes_from_a_placeholder(backend):
    """input_sizes fed at run time: batch and depth still inferred from out_backprop and filter."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 3, 3, 2))
    dy = rng.standard_normal((2, 4, 3, 6))
    root = Scope.NewRootScope()
    sizes = ops.Placeholder(root, DT_INT32, ops.Placeholder.Shape([4]))
    dx = ops.DepthwiseConv2dNativeBackpropInput(root, sizes, w, dy, [1, 2, 2, 1], "SAME")
    assert dx.output.shape() == [2, -1, -1, 3]
    sizes_f = ops.Placeholder(root, DT_INT32)
    dw = ops.DepthwiseConv2dNativeBackpropFilter(root, x, sizes_f, dy, [1, 2, 2, 1], "SAME")
    assert dw.output.shape() == [-1, -1, 3, 2]
    got_dx, got_dw = ClientSession(root, backend=backend, fetch_numpy=True).Run(
        {sizes: np.array(x.shape, np.int32), sizes_f: np.array(w.shape, np.int32)}, [dx, dw])
    _, ref_dx, ref_dw = run_all(x, w, dy, backend, **attrs(2, "SAME"))
    np.testing.assert_array_equal(got_dx, ref_dx)
    np.testing.assert_array_equal(got_dw, ref_dw)


def test_input_sizes_from_shape_of_a_runtime_tensor(backend):
    """input_sizes = Shape(x) for an x whose spatial size is only known when it is fed."""
    if find_kernel("Shape", "numpy") is None:
        pytest.skip("no Shape kernel registered yet")
    rng = np.random.default_rng(4)
    xv, w, dy = rng.standard_normal((2, 5, 6, 2)), rng.standard_normal((2, 2, 2, 1)), rng.standard_normal((2, 5, 6, 2))
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_DOUBLE, ops.Placeholder.Shape([2, -1, -1, 2]))
    dx = ops.DepthwiseConv2dNativeBackpropInput(root, ops.Shape(root, x), w, dy, [1, 1, 1, 1], "SAME")
    assert dx.output.shape() == [2, -1, -1, 2]
    (got,) = ClientSession(root, backend=backend, fetch_numpy=True).Run({x: xv}, [dx])
    np.testing.assert_array_equal(got, run_all(xv, w, dy, backend, **attrs())[1])
    # With the shape known at build time, Shape(x) folds to a constant: the output shape is known.
    root2 = Scope.NewRootScope()
    x2 = ops.Placeholder(root2, DT_DOUBLE, ops.Placeholder.Shape([2, 5, 6, 2]))
    dx2 = ops.DepthwiseConv2dNativeBackpropInput(root2, ops.Shape(root2, x2), w, dy, [1, 1, 1, 1], "SAME")
    assert dx2.output.shape() == [2, 5, 6, 2]


def test_stride_far_larger_than_the_filter(backend):
    """Most input positions get no gradient; no per-phase loop (stride 10**6 must be instant)."""
    s = 10**6
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 3, 2 * s, 1)), rng.standard_normal((1, 2, 1, 1))
    dy = rng.standard_normal((1, 1, 2, 1))
    y, dx, dw = run_all(x, w, dy, backend, **attrs(s, "VALID"))
    assert y.shape == (1, 1, 2, 1) and dx.shape == x.shape
    np.testing.assert_allclose(y[0, 0, :, 0], [x[0, 0, j * s, 0] * w[0, 0, 0, 0] + x[0, 0, j * s + 1, 0] * w[0, 1, 0, 0]
                                               for j in range(2)])
    assert np.count_nonzero(dx) == 4
    np.testing.assert_allclose(dw[0, :, 0, 0],
                               [dy[0, 0, :, 0] @ x[0, 0, [0, s], 0], dy[0, 0, :, 0] @ x[0, 0, [1, s + 1], 0]])


# -- divergences from TF's CPU kernels (docs/ops/depthwise_conv.md) -----------------------------------
def test_empty_out_backprop_gives_zero_gradients(backend):
    """TF's native filter gradient returns uninitialised memory here (PR #126484), its input gradient too when M = 0."""
    x = np.full((0, 4, 4, 2), 3.0, np.float32)
    y, dx, dw = run_all(x, np.ones((3, 3, 2, 1), np.float32), np.ones((0, 2, 2, 2), np.float32), backend,
                        **attrs(1, "VALID"))
    assert y.shape == (0, 2, 2, 2) and dx.shape == (0, 4, 4, 2)
    np.testing.assert_array_equal(dw, np.zeros((3, 3, 2, 1), np.float32))
    y, dx, dw = run_all(np.ones((1, 4, 4, 2), np.float32), np.ones((3, 3, 2, 0), np.float32),
                        np.ones((1, 4, 4, 0), np.float32), backend, **attrs())
    assert y.shape == (1, 4, 4, 0) and dw.shape == (3, 3, 2, 0)
    np.testing.assert_array_equal(dx, np.zeros((1, 4, 4, 2), np.float32))


@pytest.mark.tf
def test_dilated_backprops_where_tf_ignores_dilations(backend):
    """tf_seed_ops.md 2.4: TF's backprops size out_backprop as if undilated and return the undilated gradient."""
    tf = require_tf()
    rng = np.random.default_rng(11)
    x, w, dy = rng.standard_normal((1, 5, 5, 2)), rng.standard_normal((3, 3, 2, 1)), rng.standard_normal((1, 1, 1, 2))
    a = attrs(1, "VALID", dilations=(2, 2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="actual = 1, computed = 3"):
        tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=x.shape, filter=w, out_backprop=dy, **a)
    y, dx, dw = run_all(x, w, dy, backend, **a)
    ref = cases.dilated_reference(tf, x, w, dy, 1, "VALID", (2, 2))
    for ours, theirs in zip((y, dx, dw), ref):
        assert_close(ours, theirs)
    # An undilated-shape out_backprop is wrong for a dilated conv: TF answers anyway, we refuse.
    dy3 = rng.standard_normal((1, 3, 3, 2))
    tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=w.shape, out_backprop=dy3, **a)
    with pytest.raises(errors.InvalidArgumentError, match="actual = 3, computed = 1"):
        run_all(x, w, dy3, backend, **a)


@pytest.mark.tf
def test_tf_cpu_refuses_what_we_compute():
    """TF's native CPU kernels: Unimplemented for NCHW (all three) and for a dilated forward."""
    tf = require_tf()
    x, w = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 3, 2, 1), np.float32)
    a = attrs(fmt="NCHW")
    calls = [lambda: tf.raw_ops.DepthwiseConv2dNative(input=x, filter=w, **a),
             lambda: tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=x.shape, filter=w, out_backprop=x, **a),
             lambda: tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=w.shape, out_backprop=x, **a),
             lambda: tf.raw_ops.DepthwiseConv2dNative(input=nhwc(x), filter=w, **attrs(dilations=(2, 2)))]
    for call in calls:
        with pytest.raises(tf.errors.UnimplementedError):
            call()


# -- live differential tests against TF -------------------------------------------------------------
@pytest.mark.tf
@fast(40)
@given(cfg=configs, dtype=st.sampled_from([np.float32, np.float64]))
def test_live_against_tf_native_kernels(cfg, dtype, backend):
    """Random geometry, both layouts (TF's side in NHWC); invalid geometries must fail alike."""
    tf = require_tf()
    cfg = {**cfg, "dilations": (1, 1)}
    drawn = draw_case(cfg, dtype)
    nhwc_cfg = {**cfg, "fmt": "NHWC"}
    if drawn is None:  # no valid output size: TF and we both say so
        x = np.ones((cfg["n"], cfg["h"], cfg["w"], cfg["c"]), dtype)
        w = np.ones((cfg["kh"], cfg["kw"], cfg["c"], cfg["m"]), dtype)
        a = attrs(cfg["stride"], cfg["padding"], cfg["explicit"] if cfg["padding"] == "EXPLICIT" else None)
        with pytest.raises(tf.errors.InvalidArgumentError, match="Computed output size would be negative"):
            tf.raw_ops.DepthwiseConv2dNative(input=x, filter=w, **a)
        with pytest.raises(errors.InvalidArgumentError, match="Computed output size would be negative"):
            run_all(x, w, x, backend, **a)
        return
    x, w, dy, a = drawn
    xt, dyt = (nhwc(x), nhwc(dy)) if cfg["fmt"] == "NCHW" else (x, dy)
    ta = draw_case(nhwc_cfg, dtype)[3]  # type: ignore[index]
    ref = [tf.raw_ops.DepthwiseConv2dNative(input=xt, filter=w, **ta).numpy(),
           tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=xt.shape, filter=w, out_backprop=dyt,
                                                         **ta).numpy(),
           tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=xt, filter_sizes=w.shape, out_backprop=dyt,
                                                          **ta).numpy()]
    if dyt.size == 0:
        ref[1:] = [np.zeros_like(r) for r in ref[1:]]  # TF: undefined values
    y, dx, dw = run_all(x, w, dy, backend, **a)
    if cfg["fmt"] == "NCHW":
        y, dx = nhwc(y), nhwc(dx)
    for ours, theirs, what in zip((y, dx, dw), ref, ("y", "dx", "dw")):
        assert_close(ours, theirs, what)


@pytest.mark.tf
@fast(12)
@given(cfg=configs)
def test_live_dilated_against_tf_gradient_tape(cfg, backend):
    """Dilations (with strides) against tf.nn.depthwise_conv2d and its GradientTape gradients."""
    tf = require_tf()
    assume(cfg["padding"] != "EXPLICIT" and cfg["n"] > 0 and cfg["h"] > 0)
    drawn = draw_case(cfg)
    assume(drawn is not None)
    x, w, dy, a = drawn
    xt, dyt = (nhwc(x), nhwc(dy)) if cfg["fmt"] == "NCHW" else (x, dy)
    assume(dyt.size > 0)
    ref = cases.dilated_reference(tf, xt, w, dyt, cfg["stride"], cfg["padding"], cfg["dilations"])
    y, dx, dw = run_all(x, w, dy, backend, **a)
    if cfg["fmt"] == "NCHW":
        y, dx = nhwc(y), nhwc(dx)
    for ours, theirs, what in zip((y, dx, dw), ref, ("y", "dx", "dw")):
        assert_close(ours, theirs, what)


def test_valid_window_size_truncates_like_tf(backend):
    """TF computes (in - k + s) / s in C++: in=1, k=4, s=2 gives 0 columns, not a negative-size error."""
    x = np.ones((1, 5, 1, 1), np.float32)
    y, dx, dw = run_all(x, np.ones((1, 4, 1, 1), np.float32), np.ones((1, 3, 0, 1), np.float32), backend,
                        **attrs(2, "VALID"))
    assert y.shape == (1, 3, 0, 1)
    np.testing.assert_array_equal(dx, np.zeros_like(x))
    np.testing.assert_array_equal(dw, np.zeros((1, 4, 1, 1), np.float32))
