"""Golden values for the depthwise-conv family, from TF 2.21 (native CPU kernels, oneDNN off).

    python tools/golden/depthwise_conv.py    # writes tests/golden/depthwise_conv.npz

Every case draws x, w and dy from ``default_rng(case index)`` and stores the forward output y,
the input gradient dx and the filter gradient dw.  The ``source`` of each case says where they
come from:

* ``raw``: tf.raw_ops.DepthwiseConv2dNative / ...BackpropInput / ...BackpropFilter (NHWC; TF's
  CPU kernels refuse NCHW, the tests run every case in NCHW too by transposing).
* ``nn``: dilated cases, which TF's native kernels refuse (forward) or ignore (backprops):
  y = tf.nn.depthwise_conv2d(x, w, dilations=...) and dx, dw = its gradients from
  tf.GradientTape for the loss sum(y * dy).  tf.nn.depthwise_conv2d allows dilation only with
  stride 1, so a dilated *and* strided case is its stride-1 VALID convolution of the padded
  input, subsampled (see dilated_reference).

Where TF has no defined answer the documented tfops_py value is stored and the case has a note:
both gradients for an empty out_backprop are zeros (TF's native filter gradient returns
uninitialised memory there, and so does its input gradient when the depth multiplier is 0).  bfloat16 arrays are stored
as their uint16 bit patterns (``meta`` has each dtype).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "depthwise_conv.npz"
DTYPES = {"float64": np.float64, "float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

# (x shape NHWC, filter shape [KH, KW, C, M], stride, padding, explicit (top, bottom, left, right))
GEOMETRIES = [
    ((2, 5, 5, 3), (3, 3, 3, 1), 1, "SAME", None),
    ((2, 6, 7, 2), (3, 3, 2, 2), 2, "SAME", None),
    ((1, 7, 6, 3), (2, 3, 3, 3), 2, "VALID", None),
    ((2, 8, 8, 2), (3, 3, 2, 1), 3, "VALID", None),
    ((1, 5, 6, 2), (3, 2, 2, 1), 1, "EXPLICIT", (1, 2, 0, 3)),
    ((2, 6, 6, 3), (3, 3, 3, 2), 2, "EXPLICIT", (2, 0, 1, 1)),
    ((1, 4, 4, 1), (1, 1, 1, 1), 1, "SAME", None),
    ((3, 9, 9, 4), (5, 5, 4, 1), 2, "SAME", None),
    ((1, 3, 3, 2), (4, 4, 2, 1), 1, "SAME", None),
    ((2, 7, 7, 2), (3, 3, 2, 1), 4, "SAME", None),
    ((1, 3, 4, 2), (2, 2, 2, 1), 1, "EXPLICIT", (3, 1, 0, 4)),
    ((2, 10, 9, 5), (3, 3, 5, 1), 1, "VALID", None),
    # empty tensors
    ((1, 2, 2, 2), (3, 3, 2, 1), 1, "VALID", None),  # empty out_backprop, non-empty input
    ((0, 5, 5, 2), (3, 3, 2, 1), 1, "SAME", None),  # empty batch
    ((1, 5, 5, 0), (3, 3, 0, 2), 1, "SAME", None),  # no channels
    ((1, 5, 5, 2), (3, 3, 2, 0), 1, "SAME", None),  # depth multiplier 0
    ((1, 0, 3, 2), (2, 2, 2, 1), 1, "EXPLICIT", (2, 2, 1, 1)),  # empty input, padding makes an output
]
# Dilated: (x shape, filter shape, stride, padding, (dilation rows, dilation cols))
DILATED = [
    ((2, 7, 8, 3), (3, 3, 3, 1), 1, "SAME", (2, 2)),
    ((1, 9, 9, 2), (3, 2, 2, 2), 1, "VALID", (2, 3)),
    ((2, 6, 6, 2), (2, 2, 2, 1), 1, "SAME", (3, 1)),
    ((2, 9, 10, 2), (3, 3, 2, 2), 2, "SAME", (2, 2)),
    ((1, 11, 9, 3), (2, 3, 3, 1), 3, "VALID", (3, 2)),
]


def _cases() -> list[dict]:
    cases = []
    for i, (xs, fs, s, pad, ex) in enumerate(GEOMETRIES):
        dtypes = ["float64", "float32"] + (["float16", "bfloat16"] if i in (0, 1, 2, 4) else [])
        for dt in dtypes:
            cases.append({"source": "raw", "dtype": dt, "x": list(xs), "w": list(fs), "stride": s, "padding": pad,
                          "explicit": list(ex) if ex else None, "dilations": [1, 1]})
    for xs, fs, s, pad, dil in DILATED:
        for dt in ("float64", "float32"):
            cases.append({"source": "nn", "dtype": dt, "x": list(xs), "w": list(fs), "stride": s, "padding": pad,
                          "explicit": None, "dilations": list(dil)})
    return cases


def _explicit_attr(case: dict) -> list[int]:
    if case["explicit"] is None:
        return []
    t, b, l, r = case["explicit"]
    return [0, 0, t, b, l, r, 0, 0]


def _raw(tf, case: dict, x, w, dy) -> tuple:
    kw = dict(strides=[1, case["stride"], case["stride"], 1], padding=case["padding"],
              explicit_paddings=_explicit_attr(case))
    y = tf.raw_ops.DepthwiseConv2dNative(input=x, filter=w, **kw).numpy()
    dx = tf.raw_ops.DepthwiseConv2dNativeBackpropInput(input_sizes=list(x.shape), filter=w, out_backprop=dy,
                                                       **kw).numpy()
    dw = tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(input=x, filter_sizes=list(w.shape), out_backprop=dy,
                                                        **kw).numpy()
    if dy.size == 0:  # TF may return uninitialised memory for either gradient here
        case["note"] = "empty out_backprop: stored tfops_py's zero gradients, not TF's"
        dx, dw = np.zeros_like(dx), np.zeros_like(dw)
    return y, dx, dw


def dilated_reference(tf, x, w, dy, stride: int, padding: str, dilations: tuple[int, int]) -> tuple:
    """y, dx, dw of a dilated depthwise conv from tf.nn.depthwise_conv2d and tf.GradientTape.

    tf.nn.depthwise_conv2d takes dilations only with stride 1; a strided case is the stride-1
    VALID convolution of tf.pad(x) (TF's SAME padding amounts) subsampled by the stride.
    """
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        if stride == 1:
            y = tf.nn.depthwise_conv2d(xt, wt, [1, 1, 1, 1], padding, dilations=list(dilations))
        else:
            pads = [[0, 0], [0, 0], [0, 0], [0, 0]]
            if padding == "SAME":
                for axis, k, d in ((1, w.shape[0], dilations[0]), (2, w.shape[1], dilations[1])):
                    size = x.shape[axis]
                    total = max((-(-size // stride) - 1) * stride + (k - 1) * d + 1 - size, 0)
                    pads[axis] = [total // 2, total - total // 2]
            full = tf.nn.depthwise_conv2d(tf.pad(xt, pads), wt, [1, 1, 1, 1], "VALID", dilations=list(dilations))
            y = full[:, ::stride, ::stride, :]
        loss = tf.reduce_sum(y * tf.constant(dy.reshape(y.shape)))
    dx, dw = tape.gradient(loss, [xt, wt])
    return y.numpy(), dx.numpy(), dw.numpy()


def out_shape(case: dict) -> list[int]:
    """NHWC output shape of a case (TF's window arithmetic)."""
    n, h, w, c = case["x"]
    kh, kw, _, m = case["w"]
    s, (dr, dc) = case["stride"], case["dilations"]
    def cpp_div(a: int, b: int) -> int:  # TF's C++ division truncates toward zero
        return abs(a) // b * (1 if a >= 0 else -1)

    dims = []
    for size, k, d, pads in ((h, kh, dr, (case["explicit"] or [0, 0, 0, 0])[:2]),
                             (w, kw, dc, (case["explicit"] or [0, 0, 0, 0])[2:])):
        eff = (k - 1) * d + 1
        if case["padding"] == "SAME":
            dims.append((size + s - 1) // s)
        elif case["padding"] == "VALID":
            dims.append(cpp_div(size - eff + s, s))
        else:
            dims.append(cpp_div(size + pads[0] + pads[1] - eff + s, s))
    return [n, *dims, c * m]


def _store(arr: np.ndarray) -> np.ndarray:
    return arr.view(np.uint16) if arr.dtype == ml_dtypes.bfloat16 else arr


def main() -> None:
    import tensorflow as tf

    cases = _cases()
    arrays: dict[str, np.ndarray] = {}
    for i, case in enumerate(cases):
        rng = np.random.default_rng(i)
        t = DTYPES[case["dtype"]]
        x = rng.standard_normal(case["x"]).astype(t)
        w = rng.standard_normal(case["w"]).astype(t)
        dy = rng.standard_normal(out_shape(case)).astype(t)
        if case["source"] == "raw":
            y, dx, dw = _raw(tf, case, x, w, dy)
        else:
            y, dx, dw = dilated_reference(tf, x, w, dy, case["stride"], case["padding"], tuple(case["dilations"]))
        for name, arr in (("x", x), ("w", w), ("dy", dy), ("y", y), ("dx", dx), ("dw", dw)):
            assert arr.dtype == t, (i, name, arr.dtype)
            arrays[f"{i}/{name}"] = _store(arr)
    arrays["meta"] = np.array(json.dumps(cases))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(cases)} cases to {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
