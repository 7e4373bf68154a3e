"""The depthwise-convolution family's conformance helpers: golden cases built from arrays, the forward's
shape rule, and the reference where TF's CPU kernels give no answer.  Imported only when cases are made.

Geometry ``i`` of ``build`` draws x, w and dy from ``default_rng(i)`` and adds the forward op and both
gradients on them (dy is the upstream gradient of y), in NHWC and then in NCHW; the bad inputs follow.
Expected values are TF's native kernels' (``tf.raw_ops``), except (``expected``, each with a note):

* NCHW, which TF's CPU kernels refuse: TF's NHWC answer on transposed tensors, transposed back;
* dilations, which TF's forward CPU kernel refuses and its backprops ignore: ``tf.nn.depthwise_conv2d``
  (dilations) and its ``tf.GradientTape`` gradients for the loss ``sum(y * dy)``; with strides (where
  ``tf.nn`` takes no dilations) its stride-1 VALID convolution of the padded input, subsampled;
* an empty ``out_backprop``: zero gradients (TF may return uninitialised memory).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from tfops_py.conformance import CaseList, ShapeRule, reference
from tfops_py.kernels.nn._nn_cases import nchw, nhwc
from tfops_py.kernels.nn._nn_cases import nhwc_attrs as _nhwc_attrs

FORWARD = "DepthwiseConv2dNative"
BACKPROP_INPUT = "DepthwiseConv2dNativeBackpropInput"
BACKPROP_FILTER = "DepthwiseConv2dNativeBackpropFilter"
OPS = (FORWARD, BACKPROP_INPUT, BACKPROP_FILTER)
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
NCHW_NOTE = "TF's CPU kernels refuse NCHW: TF's NHWC answer on transposed tensors, transposed back"
DILATED_NOTE = "dilations: tf.nn.depthwise_conv2d and its tf.GradientTape gradients (TF's CPU kernels refuse them)"
EMPTY_NOTE = "empty out_backprop: tfops_py's zero gradients (TF may return uninitialised memory)"


# -- geometry ------------------------------------------------------------------------------------------
def _cpp_div(a: int, b: int) -> int:  # TF's C++ division truncates toward zero
    return abs(a) // b * (1 if a >= 0 else -1)


def out_shape(x: tuple, w: tuple, stride: int, padding: str, explicit: Any = None,
              dilations: tuple = (1, 1)) -> list[int]:
    """NHWC output shape (TF's window arithmetic; a negative size where TF refuses the geometry)."""
    n, h, wd, c = x
    kh, kw, _, m = w
    pads = explicit or (0, 0, 0, 0)
    dims = []
    for size, k, d, (p0, p1) in ((h, kh, dilations[0], pads[:2]), (wd, kw, dilations[1], pads[2:])):
        eff = (k - 1) * d + 1
        if padding == "SAME":
            dims.append((size + stride - 1) // stride)
        elif padding == "VALID":
            dims.append(_cpp_div(size - eff + stride, stride))
        else:
            dims.append(_cpp_div(size + p0 + p1 - eff + stride, stride))
    return [n, *dims, c * m]


def attrs_of(stride: int = 1, padding: str = "SAME", explicit: Any = None, dilations: tuple = (1, 1),
             fmt: str = "NHWC") -> dict[str, Any]:
    """Op attrs from NHWC-style arguments (explicit = (top, bottom, left, right))."""
    ex = [] if explicit is None else [0, 0, *explicit, 0, 0] if fmt == "NHWC" else [0, 0, 0, 0, *explicit]
    spatial = (lambda a, b: [1, a, b, 1]) if fmt == "NHWC" else (lambda a, b: [1, 1, a, b])
    return {"strides": spatial(stride, stride), "padding": padding, "explicit_paddings": ex,
            "dilations": spatial(*dilations), "data_format": fmt}


# -- the reference -------------------------------------------------------------------------------------
def dilated_reference(tf: Any, x: np.ndarray, w: np.ndarray, dy: np.ndarray, stride: int, padding: str,
                      dilations: tuple[int, int], explicit: Any = None) -> tuple:
    """y, dx, dw of a dilated depthwise conv from tf.nn.depthwise_conv2d and tf.GradientTape (NHWC).

    tf.nn.depthwise_conv2d takes dilations only with stride 1 and SAME/VALID padding; otherwise the
    stride-1 VALID convolution of tf.pad(x) (TF's SAME amounts, or the explicit ones) is subsampled.
    """
    xt, wt = tf.constant(x), tf.constant(w)
    with tf.GradientTape() as tape:
        tape.watch([xt, wt])
        if stride == 1 and padding != "EXPLICIT":
            y = tf.nn.depthwise_conv2d(xt, wt, [1, 1, 1, 1], padding, dilations=list(dilations))
        else:
            pads = [[0, 0], [0, 0], [0, 0], [0, 0]]
            for axis, k, d in ((1, w.shape[0], dilations[0]), (2, w.shape[1], dilations[1])):
                if padding == "SAME":
                    size = x.shape[axis]
                    total = max((-(-size // stride) - 1) * stride + (k - 1) * d + 1 - size, 0)
                    pads[axis] = [total // 2, total - total // 2]
                elif padding == "EXPLICIT":
                    pads[axis] = list(explicit[2 * axis - 2: 2 * axis])
            full = tf.nn.depthwise_conv2d(tf.pad(xt, pads), wt, [1, 1, 1, 1], "VALID", dilations=list(dilations))
            y = full[:, ::stride, ::stride, :]
        loss = tf.reduce_sum(y * tf.constant(dy.reshape(y.shape)))
    dx, dw = tape.gradient(loss, [xt, wt])
    return y.numpy(), dx.numpy(), dw.numpy()


def _dilated(op: str, inputs: list, attrs: dict[str, Any]) -> list[np.ndarray]:
    import tensorflow as tf  # only the golden generator and live tests get here

    a, b, c = (list(inputs) + [None])[:3]
    if op == FORWARD:
        x, w = a, b
        dy = np.zeros(out_shape(x.shape, w.shape, attrs["strides"][1], attrs["padding"],
                                _explicit(attrs), tuple(attrs["dilations"][1:3])), x.dtype)
    elif op == BACKPROP_INPUT:
        x, w, dy = np.zeros([int(v) for v in a], b.dtype), b, c
    else:
        x, w, dy = a, np.zeros([int(v) for v in b], a.dtype), c
    y, dx, dw = dilated_reference(tf, x, w, dy, attrs["strides"][1], attrs["padding"],
                                  tuple(attrs["dilations"][1:3]), _explicit(attrs))
    return [{FORWARD: y, BACKPROP_INPUT: dx, BACKPROP_FILTER: dw}[op]]


def _explicit(attrs: dict[str, Any]) -> Any:
    p = attrs.get("explicit_paddings") or []
    return tuple(p[2:6]) if len(p) == 8 else None


def expected(run_tf: Any, op: str, inputs: list, attrs: dict[str, Any]) -> list[np.ndarray]:
    """TF's value where TF's CPU kernels give none (see the module docstring)."""
    channels_first = attrs.get("data_format") == "NCHW"
    if channels_first:
        attrs = _nhwc_attrs(attrs)
        inputs = list(inputs)
        first = np.asarray(inputs[0])  # x, or input_sizes (BACKPROP_INPUT)
        inputs[0] = first[[0, 2, 3, 1]] if op == BACKPROP_INPUT else nhwc(first)
        if op != FORWARD:
            inputs[2] = nhwc(inputs[2])
    if list(attrs.get("dilations", [1, 1, 1, 1])) != [1, 1, 1, 1]:
        out = _dilated(op, inputs, attrs)
    else:
        out = run_tf(op, inputs, attrs)
    if op != FORWARD and np.size(inputs[2]) == 0:
        out = [np.zeros_like(o) for o in out]
    if channels_first and op != BACKPROP_FILTER:
        out = [nchw(o) for o in out]
    return out


def empty_out_backprop(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    return np.size(inputs["out_backprop"]) == 0


def dilated(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    return list(attrs.get("dilations", [1, 1, 1, 1])) != [1, 1, 1, 1]


def window_exceeds_input(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    """A VALID/EXPLICIT (dilated) filter larger than the (padded) input along a spatial axis."""
    x, w = np.shape(inputs["input"]), np.shape(inputs["filter"])
    if len(x) != 4 or len(w) != 4 or attrs.get("padding") == "SAME":
        return False
    a = _nhwc_attrs(attrs) if attrs.get("data_format") == "NCHW" else attrs
    x = (x[0], x[2], x[3], x[1]) if attrs.get("data_format") == "NCHW" else x
    dil = list(a.get("dilations") or [1, 1, 1, 1])
    pads = _explicit(a) or (0, 0, 0, 0)
    return any(n + pads[2 * i] + pads[2 * i + 1] < (k - 1) * d + 1
               for i, (n, k, d) in enumerate(zip(x[1:3], w[:2], dil[1:3])))


# -- the forward's shape rule ----------------------------------------------------------------------------
class DepthwiseShapes(ShapeRule):
    """input and filter with the attrs (strides, dilations, SAME/VALID/EXPLICIT), in either layout; live cases
    draw every dimension (empty ones included) and attr."""

    CONFIGS = [(g[0], g[1], g[2], g[3], g[4], (1, 1)) for g in GEOMETRIES[:6] + GEOMETRIES[13:16]] + \
        [(d[0], d[1], d[2], d[3], None, d[4]) for d in DILATED[::2]]

    @staticmethod
    def _pattern(x: tuple, w: tuple, stride: int, padding: str, explicit: Any, dilations: tuple,
                 fmt: str) -> dict[str, Any]:
        shape = x if fmt == "NHWC" else (x[0], x[3], x[1], x[2])
        return {"input": tuple(shape), "filter": tuple(w), **attrs_of(stride, padding, explicit, dilations, fmt)}

    def patterns(self) -> list[dict[str, Any]]:
        return [self._pattern(*cfg, fmt) for fmt in ("NHWC", "NCHW") for cfg in self.CONFIGS]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        def i(lo: int, hi: int) -> int:
            return int(rng.integers(lo, hi + 1))

        c = i(0, 3) if i(0, 9) == 0 else i(1, 3)
        x = (i(0, 2), i(1, 9), i(1, 9), c)
        w = (i(1, 4), i(1, 4), c, i(0, 3) if i(0, 9) == 0 else i(1, 3))
        padding = ("SAME", "VALID", "EXPLICIT")[i(0, 2)]
        explicit = tuple(i(0, 3) for _ in range(4)) if padding == "EXPLICIT" else None
        dilations = (i(1, 3), i(1, 3)) if i(0, 3) == 0 else (1, 1)
        if min(out_shape(x, w, 1, padding, explicit, dilations)) < 0:  # the reference has no dilated errors
            dilations = (1, 1)
        return self._pattern(x, w, i(1, 3), padding, explicit, dilations, ("NHWC", "NCHW")[i(0, 1)])


DEPTHWISE = DepthwiseShapes()


# -- the golden cases ------------------------------------------------------------------------------------
def _geometries() -> list[dict[str, Any]]:
    """Every geometry with its dtypes (float16 and bfloat16 on a few), then the dilated ones."""
    out = []
    for i, (xs, fs, s, pad, ex) in enumerate(GEOMETRIES):
        for dt in ["float64", "float32"] + (["float16", "bfloat16"] if i in (0, 1, 2, 4) else []):
            out.append({"dtype": dt, "x": xs, "w": fs, "stride": s, "padding": pad, "explicit": ex,
                        "dilations": (1, 1)})
    for xs, fs, s, pad, dil in DILATED:
        for dt in ("float64", "float32"):
            out.append({"dtype": dt, "x": xs, "w": fs, "stride": s, "padding": pad, "explicit": None, "dilations": dil})
    return out


def build(out: CaseList) -> None:
    for fmt in ("NHWC", "NCHW"):
        for i, g in enumerate(_geometries()):
            rng = np.random.default_rng(i)
            t = DTYPES[g["dtype"]]
            x = rng.standard_normal(g["x"]).astype(t)
            w = rng.standard_normal(g["w"]).astype(t)
            dy = rng.standard_normal(out_shape(g["x"], g["w"], g["stride"], g["padding"], g["explicit"],
                                               g["dilations"])).astype(t)
            attrs = attrs_of(g["stride"], g["padding"], g["explicit"], g["dilations"], fmt)
            if fmt == "NCHW":
                x, dy = nchw(x), nchw(dy)
            sizes = np.array(x.shape, np.int32), np.array(w.shape, np.int32)
            notes = ([NCHW_NOTE] if fmt == "NCHW" else []) + ([DILATED_NOTE] if g["dilations"] != (1, 1) else [])
            for op, inputs in ((FORWARD, [x, w]), (BACKPROP_INPUT, [sizes[0], w, dy]),
                               (BACKPROP_FILTER, [x, sizes[1], dy])):
                note = notes + ([EMPTY_NOTE] if op != FORWARD and dy.size == 0 else [])
                ref = _REFERENCE if note else None
                out.add(op, inputs, attrs, compare="acc", note="; ".join(note) or None, reference=ref,
                        id=f"{op}/{fmt}/{i}-{g['dtype']}")
    _bad_inputs(out)


_REFERENCE = reference(expected, "TF's CPU kernels give no answer here (see the case's note)")


# -- bad inputs: every check of tf_seed_ops.md 2.4 --------------------------------------------------------
BIG = 2**30
_BASE = {FORWARD: {"input": ("f", (1, 5, 5, 2)), "filter": ("f", (3, 3, 2, 1))},
         BACKPROP_INPUT: {"input_sizes": ("i", [1, 5, 5, 2]), "filter": ("f", (3, 3, 2, 1)),
                          "out_backprop": ("f", (1, 5, 5, 2))},
         BACKPROP_FILTER: {"input": ("f", (1, 5, 5, 2)), "filter_sizes": ("i", [3, 3, 2, 1]),
                           "out_backprop": ("f", (1, 5, 5, 2))}}
_DEFAULT_ATTRS = {"strides": [1, 1, 1, 1], "padding": "SAME"}
# attr checks, made by all three ops: (id, attrs)
ATTR_CASES = [
    ("strides_len3", {"strides": [1, 1, 1]}),
    ("strides_unequal", {"strides": [1, 1, 2, 1]}),
    ("strides_batch", {"strides": [2, 1, 1, 1]}),
    ("strides_depth", {"strides": [1, 1, 1, 2]}),
    ("strides_zero", {"strides": [1, 0, 0, 1]}),
    ("explicit_len", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1]}),
    ("explicit_negative", {"padding": "EXPLICIT", "explicit_paddings": [0, 0, -1, 1, 1, 1, 0, 0]}),
    ("explicit_batch", {"padding": "EXPLICIT", "explicit_paddings": [1, 0, 1, 1, 1, 1, 0, 0]}),
    ("explicit_depth_nchw", {"padding": "EXPLICIT", "data_format": "NCHW",
                             "explicit_paddings": [0, 0, 1, 0, 1, 1, 1, 1]}),
    ("explicit_not_explicit", {"explicit_paddings": [0, 0, 1, 1, 1, 1, 0, 0]}),
]
F, I = "f", "i"
# data checks: (id, op, input overrides, attrs)
DATA_CASES = [
    ("fwd_input_rank3", FORWARD, {"input": (F, (5, 5, 2))}, {}),
    ("fwd_filter_rank3", FORWARD, {"filter": (F, (3, 3, 2))}, {}),
    ("fwd_depth", FORWARD, {"filter": (F, (3, 3, 3, 1))}, {}),
    ("fwd_negative_output", FORWARD, {"input": (F, (1, 1, 1, 2))}, {"padding": "VALID"}),
    ("bi_sizes_2d", BACKPROP_INPUT, {"input_sizes": (I, [[1, 5], [5, 2]])}, {}),
    ("bi_sizes_scalar", BACKPROP_INPUT, {"input_sizes": (I, 4)}, {}),
    ("bi_sizes_negative", BACKPROP_INPUT, {"input_sizes": (I, [1, -5, 5, 2])}, {}),
    ("bi_sizes_len3", BACKPROP_INPUT, {"input_sizes": (I, [5, 5, 2])}, {}),
    ("bi_sizes_len5", BACKPROP_INPUT, {"input_sizes": (I, [1, 1, 5, 5, 2])}, {}),
    ("bi_sizes_overflow", BACKPROP_INPUT, {"input_sizes": (I, [BIG, BIG, BIG, 2])}, {}),
    ("bi_rows_too_large", BACKPROP_INPUT, {"input_sizes": (I, [1, 2**31 - 1, 5, 2])}, {}),
    ("bi_filter_rank1_89845", BACKPROP_INPUT, {"filter": (F, (2,))}, {}),
    ("bi_out_backprop_rank2_104881", BACKPROP_INPUT, {"out_backprop": (F, (5, 2))}, {}),
    ("bi_batch", BACKPROP_INPUT, {"input_sizes": (I, [2, 5, 5, 2])}, {}),
    ("bi_in_depth", BACKPROP_INPUT, {"input_sizes": (I, [1, 5, 5, 3])}, {}),
    ("bi_multiplier", BACKPROP_INPUT, {"filter": (F, (3, 3, 2, 2))}, {}),
    ("bi_rows", BACKPROP_INPUT, {"out_backprop": (F, (1, 4, 5, 2))}, {}),
    ("bi_cols", BACKPROP_INPUT, {"out_backprop": (F, (1, 5, 4, 2))}, {}),
    ("bi_rows_stride2", BACKPROP_INPUT, {"out_backprop": (F, (1, 5, 3, 2))}, {"strides": [1, 2, 2, 1]}),
    ("bf_sizes_2d", BACKPROP_FILTER, {"filter_sizes": (I, [[3, 3], [2, 1]])}, {}),
    ("bf_sizes_negative", BACKPROP_FILTER, {"filter_sizes": (I, [3, -3, 2, 1])}, {}),
    ("bf_sizes_len3", BACKPROP_FILTER, {"filter_sizes": (I, [3, 3, 2])}, {}),
    ("bf_sizes_overflow", BACKPROP_FILTER, {"filter_sizes": (I, [BIG, BIG, BIG, 2])}, {}),
    ("bf_input_rank0_58180", BACKPROP_FILTER, {"input": (F, ())}, {}),
    ("bf_input_rank3", BACKPROP_FILTER, {"input": (F, (5, 5, 2))}, {}),
    ("bf_out_backprop_rank3", BACKPROP_FILTER, {"out_backprop": (F, (5, 5, 2))}, {}),
    ("bf_batch", BACKPROP_FILTER, {"out_backprop": (F, (2, 5, 5, 2))}, {}),
    ("bf_in_depth", BACKPROP_FILTER, {"filter_sizes": (I, [3, 3, 3, 1])}, {}),
    ("bf_multiplier", BACKPROP_FILTER, {"filter_sizes": (I, [3, 3, 2, 2])}, {}),
    ("bf_rows", BACKPROP_FILTER, {"out_backprop": (F, (1, 4, 5, 2))}, {}),
    ("bf_cols_explicit", BACKPROP_FILTER, {"out_backprop": (F, (1, 5, 5, 2))},
     {"padding": "EXPLICIT", "explicit_paddings": [0, 0, 1, 1, 2, 2, 0, 0]}),
    # crash reports whose first failing check is an attr
    ("bi_rank1_strides2_89845", BACKPROP_INPUT,
     {"input_sizes": (I, [1, 1, 1, 1]), "filter": (F, (1,)), "out_backprop": (F, (1,))},
     {"strides": [1, 1], "padding": "VALID"}),
    ("bi_strides_len3", BACKPROP_INPUT, {"out_backprop": (F, (1, 5, 2))}, {"strides": [1, 1, 1]}),
]


def base_inputs(op: str, **overrides: Any) -> list[np.ndarray]:
    """Valid inputs of ``op`` (stride 1, SAME) in OpDef order, some replaced by ``(kind, shape or value)``."""
    named = {**_BASE[op], **overrides}
    return [np.ones(v, np.float32) if kind == F else np.array(v, np.int32) for kind, v in named.values()]


def bad_inputs() -> list[tuple[str, str, list[np.ndarray], dict[str, Any]]]:
    """(id, op, inputs in OpDef order, attrs) of every bad input."""
    cases = [(f"{op}/bad/{cid}", op, {}, a) for cid, a in ATTR_CASES for op in OPS]
    cases += [(f"{op}/bad/{cid}", op, ins, a) for cid, op, ins, a in DATA_CASES]
    return [(cid, op, base_inputs(op, **overrides), {**_DEFAULT_ATTRS, **a}) for cid, op, overrides, a in cases]


def _bad_inputs(out: CaseList) -> None:
    for cid, op, inputs, attrs in bad_inputs():
        if attrs.get("data_format") == "NCHW":
            out.add(op, inputs, attrs, reference=_REFERENCE, note=NCHW_NOTE, id=cid)
        else:
            out.add(op, inputs, attrs, id=cid)
