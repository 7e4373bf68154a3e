"""DepthwiseConv2dNative, DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter.

Golden values (tools/golden/depthwise_conv.py, no TF needed) in NHWC and NCHW, the chunked NumPy
path against the generic one, adjoint identities, every TF validation at build and run time, the
crash reports, the documented divergences, and live differential tests against TF (marked ``tf``).
"""
from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.tf_oracle import require_tf, run_isolated
from tfops_py import DT_DOUBLE, DT_FLOAT, DT_INT32, ClientSession, Scope, errors, ops
from tfops_py.kernels.nn import _depthwise_conv_impl as impl
from tfops_py.kernels._parallel import threads
from tfops_py.kernels.registry import find_kernel

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "depthwise_conv.npz"
BF16 = np.dtype(ml_dtypes.bfloat16)
TOL = {"float64": 1e-12, "float32": 3e-6, "float16": 4e-3, "bfloat16": 4e-2}
NO_HALF = "float16 and bfloat16 are not array-API standard dtypes: numpy only (bfloat16 via ml_dtypes)"


def fast(examples: int) -> settings:
    """Hypothesis settings for kernel property tests (the backend fixture is a constant string)."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# -- helpers ----------------------------------------------------------------------------------------
def assert_close(ours: np.ndarray, ref: np.ndarray, dtype: str, what: str = "") -> None:
    """Same shape and dtype; values within the dtype's tolerance relative to the output's magnitude."""
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    assert ours.dtype == ref.dtype, f"{what}: dtype {ours.dtype} != {ref.dtype}"
    a, b = ours.astype(np.float64), ref.astype(np.float64)
    scale = max(1.0, float(np.abs(b).max(initial=0.0)))
    err = float(np.abs(a - b).max(initial=0.0)) / scale
    assert err <= TOL[dtype], f"{what}: error {err:.3g} > {TOL[dtype]} (relative to {scale:.3g})"


def nchw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def nhwc(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def attrs(stride: int = 1, padding: str = "SAME", explicit=None, dilations=(1, 1), fmt: str = "NHWC") -> dict:
    """Op attrs from NHWC-style arguments (explicit = (top, bottom, left, right))."""
    ex = [] if explicit is None else [0, 0, *explicit, 0, 0] if fmt == "NHWC" else [0, 0, 0, 0, *explicit]
    spatial = (lambda a, b: [1, a, b, 1]) if fmt == "NHWC" else (lambda a, b: [1, 1, a, b])
    return {"strides": spatial(stride, stride), "padding": padding, "explicit_paddings": ex,
            "dilations": spatial(*dilations), "data_format": fmt}


def run_all(x: np.ndarray, w: np.ndarray, dy: np.ndarray, backend: str, **a) -> list[np.ndarray]:
    """[y, dx, dw] from our three ops, input_sizes and filter_sizes as int32 Consts."""
    root = Scope.NewRootScope()
    kw = {k: v for k, v in a.items() if k not in ("strides", "padding")}
    args = (a["strides"], a["padding"])
    y = ops.DepthwiseConv2dNative(root, x, w, *args, **kw)
    dx = ops.DepthwiseConv2dNativeBackpropInput(root, np.array(x.shape, np.int32), w, dy, *args, **kw)
    dw = ops.DepthwiseConv2dNativeBackpropFilter(root, x, np.array(w.shape, np.int32), dy, *args, **kw)
    return ClientSession(root, backend=backend, fetch_numpy=True).Run([y, dx, dw])


def skip_unsupported(backend: str, *arrays: np.ndarray) -> None:
    if backend != "numpy" and any(a.dtype in (BF16, np.float16) for a in arrays):
        pytest.skip(NO_HALF)


@cache
def golden() -> tuple[list[dict], dict[str, np.ndarray]]:
    data = np.load(GOLDEN)
    return json.loads(str(data["meta"])), {k: data[k] for k in data.files if k != "meta"}


def golden_case(i: int) -> tuple[dict, dict[str, np.ndarray]]:
    cases, arrays = golden()
    case = cases[i]
    return case, {k: arrays[f"{i}/{k}"].view(BF16) if case["dtype"] == "bfloat16" else arrays[f"{i}/{k}"]
                  for k in ("x", "w", "dy", "y", "dx", "dw")}


def _case_id(i: int) -> str:
    c = golden()[0][i]
    dil = "" if c["dilations"] == [1, 1] else f"-d{c['dilations'][0]}{c['dilations'][1]}"
    return (f"{i}-{c['source']}-{c['dtype']}-{'x'.join(map(str, c['x']))}-k{'x'.join(map(str, c['w']))}"
            f"-s{c['stride']}-{c['padding']}{dil}")


@cache
def reference_module():
    """tools/golden/depthwise_conv.py: its dilated TF reference and window arithmetic."""
    spec = importlib.util.spec_from_file_location("golden_depthwise_conv", ROOT / "tools/golden/depthwise_conv.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


# -- golden values ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("index", range(len(golden()[0])), ids=_case_id)
def test_golden(index, fmt, backend):
    """TF's values in NHWC; in NCHW (which TF's CPU kernels refuse) the same values transposed."""
    case, v = golden_case(index)
    skip_unsupported(backend, v["x"])
    a = attrs(case["stride"], case["padding"], case["explicit"], case["dilations"], fmt)
    t = (lambda arr: arr) if fmt == "NHWC" else nchw
    y, dx, dw = run_all(t(v["x"]), v["w"], t(v["dy"]), backend, **a)
    back = (lambda arr: arr) if fmt == "NHWC" else nhwc
    assert_close(back(y), v["y"], case["dtype"], "y")
    assert_close(back(dx), v["dx"], case["dtype"], "dx")
    assert_close(dw, v["dw"], case["dtype"], "dw")


def test_golden_covers_the_brief():
    cases = golden()[0]
    assert {c["padding"] for c in cases} == {"SAME", "VALID", "EXPLICIT"}
    assert {c["dtype"] for c in cases} == {"float16", "bfloat16", "float32", "float64"}
    assert {c["stride"] for c in cases} >= {1, 2, 3, 4}
    assert {c["w"][3] for c in cases} >= {0, 1, 2, 3}
    assert any(c["source"] == "nn" and c["stride"] > 1 for c in cases)
    assert GOLDEN.stat().st_size < 1_000_000


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
    case = {"x": [cfg["n"], cfg["h"], cfg["w"], cfg["c"]], "w": [cfg["kh"], cfg["kw"], cfg["c"], cfg["m"]],
            "stride": cfg["stride"], "padding": cfg["padding"], "dilations": list(cfg["dilations"]),
            "explicit": list(cfg["explicit"]) if cfg["padding"] == "EXPLICIT" else None}
    out = reference_module().out_shape(case)
    if out[1] < 0 or out[2] < 0:
        return None
    rng = np.random.default_rng(cfg["seed"])
    x, w, dy = (rng.standard_normal(s).astype(dtype) for s in (case["x"], case["w"], out))
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


# -- validation: every check of tf_seed_ops.md 2.4, at build time and at run time ----------------------
OPS = {"fwd": "DepthwiseConv2dNative", "bi": "DepthwiseConv2dNativeBackpropInput",
       "bf": "DepthwiseConv2dNativeBackpropFilter"}
BIG = 2**30


def F(*shape: int) -> list:
    return ["f", list(shape)]


def I(value) -> list:  # noqa: E743 - an int32 tensor in the case tables
    return ["i", value]


BASE = {"fwd": {"input": F(1, 5, 5, 2), "filter": F(3, 3, 2, 1)},
        "bi": {"input_sizes": I([1, 5, 5, 2]), "filter": F(3, 3, 2, 1), "out_backprop": F(1, 5, 5, 2)},
        "bf": {"input": F(1, 5, 5, 2), "filter_sizes": I([3, 3, 2, 1]), "out_backprop": F(1, 5, 5, 2)}}
DEFAULT_ATTRS = {"strides": [1, 1, 1, 1], "padding": "SAME"}

# Attr checks, made by all three ops: (id, attrs, TF error class, phrase of TF's message)
ATTR_CASES = [
    ("strides_len3", {"strides": [1, 1, 1]}, "InvalidArgumentError",
     "Sliding window strides field must specify 4 dimensions"),
    ("strides_unequal", {"strides": [1, 1, 2, 1]}, "InvalidArgumentError",
     "Current implementation only supports equal length strides in the row and column dimensions"),
    ("strides_batch", {"strides": [2, 1, 1, 1]}, "InvalidArgumentError",
     "Current implementation does not yet support strides in the batch and depth dimensions"),
    ("strides_depth", {"strides": [1, 1, 1, 2]}, "InvalidArgumentError",
     "Current implementation does not yet support strides in the batch and depth dimensions"),
    ("strides_zero", {"strides": [1, 0, 0, 1]}, "InvalidArgumentError", "Stride must be > 0, but got 0"),
    ("explicit_len", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}, "InvalidArgumentError",
     "explicit_paddings attribute must contain 8 values, but got: 4"),
    ("explicit_negative", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 1, 1, 1, 0, 0]},
     "InvalidArgumentError", "All elements of explicit_paddings must be nonnegative"),
    ("explicit_batch", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]},
     "InvalidArgumentError", "Nonzero explicit padding in the batch or depth dimensions is not supported"),
    ("explicit_depth_nchw",
     {"padding": "EXPLICIT", "data_format": "NCHW", "explicit_paddings": [0, 0, 1, 0, 1, 1, 1, 1]},
     "InvalidArgumentError", "Nonzero explicit padding in the batch or depth dimensions is not supported"),
    ("explicit_not_explicit", {"explicit_paddings": [0, 0, 1, 1, 1, 1, 0, 0]}, "InvalidArgumentError",
     "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"),
]
# Data checks: (id, op, input overrides, attrs, TF error class, phrase of TF's message)
DATA_CASES = [
    ("fwd_input_rank3", "fwd", {"input": F(5, 5, 2)}, {}, "InvalidArgumentError", "input must be 4-dimensional"),
    ("fwd_filter_rank3", "fwd", {"filter": F(3, 3, 2)}, {}, "InvalidArgumentError", "filter must be 4-dimensional"),
    ("fwd_depth", "fwd", {"filter": F(3, 3, 3, 1)}, {}, "InvalidArgumentError",
     "input and filter must have the same depth: 2 vs 3"),
    ("fwd_negative_output", "fwd", {"input": F(1, 1, 1, 2)}, {"padding": "VALID"}, "InvalidArgumentError",
     "Computed output size would be negative: -1 [input_size: 1, effective_filter_size: 3, stride: 1]"),
    ("bi_sizes_2d", "bi", {"input_sizes": I([[1, 5], [5, 2]])}, {}, "InvalidArgumentError",
     "Conv2DBackpropInput: input_sizes input must be 1-dim, not 2"),
    ("bi_sizes_scalar", "bi", {"input_sizes": I(4)}, {}, "InvalidArgumentError",
     "Conv2DBackpropInput: input_sizes input must be 1-dim, not 0"),
    ("bi_sizes_negative", "bi", {"input_sizes": I([1, -5, 5, 2])}, {}, "InvalidArgumentError",
     "Dimension 1 of input_sizes must be >= 0"),
    ("bi_sizes_len3", "bi", {"input_sizes": I([5, 5, 2])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: input must be 4-dimensional"),
    ("bi_sizes_len5", "bi", {"input_sizes": I([1, 1, 5, 5, 2])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: input must be 4-dimensional"),
    ("bi_sizes_overflow", "bi", {"input_sizes": I([BIG, BIG, BIG, 2])}, {}, "InvalidArgumentError",
     "Encountered overflow when multiplying 1152921504606846976 with 1073741824, result: -1"),
    ("bi_rows_too_large", "bi", {"input_sizes": I([1, 2**31 - 1, 5, 2])}, {}, "InvalidArgumentError",
     "Input rows too large"),
    ("bi_filter_rank1_89845", "bi", {"filter": F(2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: filter must be 4-dimensional"),
    ("bi_out_backprop_rank2_104881", "bi", {"out_backprop": F(5, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: out_backprop must be 4-dimensional"),
    ("bi_batch", "bi", {"input_sizes": I([2, 5, 5, 2])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: input and out_backprop must have the same batch size"),
    ("bi_in_depth", "bi", {"input_sizes": I([1, 5, 5, 3])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: input and filter must have the same in_depth"),
    ("bi_multiplier", "bi", {"filter": F(3, 3, 2, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: depth_multiplier * in_depth not equal to out_depth"),
    ("bi_rows", "bi", {"out_backprop": F(1, 4, 5, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: Number of rows of out_backprop doesn't match computed: actual = 4, computed = 5"),
    ("bi_cols", "bi", {"out_backprop": F(1, 5, 4, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropInput: Number of cols of out_backprop doesn't match computed: actual = 4, computed = 5"),
    ("bi_rows_stride2", "bi", {"out_backprop": F(1, 5, 3, 2)}, {"strides": [1, 2, 2, 1]}, "InvalidArgumentError",
     "Number of rows of out_backprop doesn't match computed: actual = 5, computed = 3"),
    ("bf_sizes_2d", "bf", {"filter_sizes": I([[3, 3], [2, 1]])}, {}, "InvalidArgumentError",
     "Conv2DBackpropFilter: filter_sizes input must be 1-dim, not 2"),
    ("bf_sizes_negative", "bf", {"filter_sizes": I([3, -3, 2, 1])}, {}, "InvalidArgumentError",
     "Dimension 1 of filter_sizes must be >= 0"),
    ("bf_sizes_len3", "bf", {"filter_sizes": I([3, 3, 2])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: filter must be 4-dimensional"),
    ("bf_sizes_overflow", "bf", {"filter_sizes": I([BIG, BIG, BIG, 2])}, {}, "InvalidArgumentError",
     "Encountered overflow when multiplying"),
    ("bf_input_rank0_58180", "bf", {"input": F()}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: input must be 4-dimensional"),
    ("bf_input_rank3", "bf", {"input": F(5, 5, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: input must be 4-dimensional"),
    ("bf_out_backprop_rank3", "bf", {"out_backprop": F(5, 5, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: out_backprop must be 4-dimensional"),
    ("bf_batch", "bf", {"out_backprop": F(2, 5, 5, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: input and out_backprop must have the same batch size"),
    ("bf_in_depth", "bf", {"filter_sizes": I([3, 3, 3, 1])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: input and filter must have the same in_depth"),
    ("bf_multiplier", "bf", {"filter_sizes": I([3, 3, 2, 2])}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: depth_multiplier * in_depth not equal to out_depth"),
    ("bf_rows", "bf", {"out_backprop": F(1, 4, 5, 2)}, {}, "InvalidArgumentError",
     "DepthwiseConv2DBackpropFilter: Number of rows of out_backprop doesn't match computed: actual = 4, computed = 5"),
    ("bf_cols_explicit", "bf", {"out_backprop": F(1, 5, 5, 2)},
     {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1, 2, 2, 0, 0]}, "InvalidArgumentError",
     "Number of cols of out_backprop doesn't match computed: actual = 5, computed = 7"),
]
# Crash reports whose first failing check is an attr (so always at build time here)
CRASH_ATTR_CASES = [
    ("bi_rank1_strides2_89845", "bi", {"input_sizes": I([1, 1, 1, 1]), "filter": F(1), "out_backprop": F(1)},
     {"strides": [1, 1], "padding": "VALID"}, "InvalidArgumentError",
     "Sliding window strides field must specify 4 dimensions"),
    ("bi_strides_len3", "bi", {"out_backprop": F(1, 5, 2)}, {"strides": [1, 1, 1]}, "InvalidArgumentError",
     "Sliding window strides field must specify 4 dimensions"),
]
ALL_CASES = ([(f"{op}_{cid}", op, {}, a, cls, phrase) for cid, a, cls, phrase in ATTR_CASES for op in OPS]
             + DATA_CASES + CRASH_ATTR_CASES)


def materialize(spec: list) -> np.ndarray:
    kind, value = spec
    return np.ones(value, np.float32) if kind == "f" else np.array(value, np.int32)


def build_case(root: Scope, op: str, inputs: dict, a: dict, feed: dict | None = None):
    """Our op on the case's inputs: Consts, or (when ``feed`` is a dict) unshaped Placeholders it fills."""
    values = {k: materialize(v) for k, v in {**BASE[op], **inputs}.items()}
    args = []
    for _name, value in values.items():
        if feed is None:
            args.append(ops.Const(root, value))
        else:
            ph = ops.Placeholder(root, DT_INT32 if value.dtype == np.int32 else DT_FLOAT)
            feed[ph] = value
            args.append(ph)
    full = {**DEFAULT_ATTRS, **a}
    return getattr(ops, OPS[op])(root, *args, full.pop("strides"), full.pop("padding"), **full)


@pytest.mark.parametrize("cid,op,inputs,a,cls,phrase", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_bad_input_is_rejected_at_build_time(cid, op, inputs, a, cls, phrase):
    with pytest.raises(getattr(errors, cls)) as info:
        build_case(Scope.NewRootScope(), op, inputs, a)
    assert phrase in info.value.message
    assert info.value.op_type == OPS[op] and info.value.node_name == OPS[op]


@pytest.mark.parametrize("cid,op,inputs,a,cls,phrase", DATA_CASES, ids=[c[0] for c in DATA_CASES])
def test_bad_input_is_rejected_at_run_time(cid, op, inputs, a, cls, phrase, backend):
    """Shapes unknown until run time: the kernel makes the same check (attr checks stay at build time)."""
    root = Scope.NewRootScope()
    feed: dict = {}
    out = build_case(root, op, inputs, a, feed)
    with pytest.raises(getattr(errors, cls)) as info:
        ClientSession(root, backend=backend).Run(feed, [out])
    assert phrase in info.value.message
    assert info.value.node_name == OPS[op]


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
        build_case(Scope.NewRootScope(), op, {}, {"dilations": dilations})


@pytest.mark.tf
def test_bad_inputs_match_tf_error_classes():
    """Every case above, run on TF's native kernels in one subprocess: same class, same wording."""
    require_tf()
    code = f"""
cases = {json.dumps([[c[0], OPS[c[1]], {**BASE[c[1]], **c[2]}, {**DEFAULT_ATTRS, **c[3]}] for c in ALL_CASES])}
for cid, op, inputs, a in cases:
    args = {{k: (np.ones(v, np.float32) if kind == "f" else np.array(v, np.int32)) for k, (kind, v) in inputs.items()}}
    try:
        getattr(tf.raw_ops, op)(**args, **a)
        result[cid] = ["ok", ""]
    except Exception as e:
        result[cid] = [type(e).__name__, str(e)]
"""
    out = run_isolated(code)
    assert out.get("ok"), out
    for cid, _, _, _, cls, phrase in ALL_CASES:
        tf_cls, tf_msg = out["result"][cid]
        assert tf_cls == cls, (cid, tf_cls, tf_msg)
        assert phrase in tf_msg, (cid, tf_msg)


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
    ref = reference_module().dilated_reference(tf, x, w, dy, 1, "VALID", (2, 2))
    for ours, theirs in zip((y, dx, dw), ref):
        assert_close(ours, theirs, "float64")
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
    skip_unsupported(backend, x)
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
    name = np.dtype(dtype).name
    for ours, theirs, what in zip((y, dx, dw), ref, ("y", "dx", "dw")):
        assert_close(ours, theirs, name if name == "float64" else "float32", what)


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
    ref = reference_module().dilated_reference(tf, xt, w, dyt, cfg["stride"], cfg["padding"], cfg["dilations"])
    y, dx, dw = run_all(x, w, dy, backend, **a)
    if cfg["fmt"] == "NCHW":
        y, dx = nhwc(y), nhwc(dx)
    for ours, theirs, what in zip((y, dx, dw), ref, ("y", "dx", "dw")):
        assert_close(ours, theirs, "float64", what)


def test_valid_window_size_truncates_like_tf(backend):
    """TF computes (in - k + s) / s in C++: in=1, k=4, s=2 gives 0 columns, not a negative-size error."""
    x = np.ones((1, 5, 1, 1), np.float32)
    y, dx, dw = run_all(x, np.ones((1, 4, 1, 1), np.float32), np.ones((1, 3, 0, 1), np.float32), backend,
                        **attrs(2, "VALID"))
    assert y.shape == (1, 3, 0, 1)
    np.testing.assert_array_equal(dx, np.zeros_like(x))
    np.testing.assert_array_equal(dw, np.zeros((1, 4, 1, 1), np.float32))
