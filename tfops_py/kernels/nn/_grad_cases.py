"""The gradient kernels' conformance helpers (activation and output gradients, losses, convolution and
pooling gradients, the gradient plumbing of array ops): cases built from arrays, NCHW forms of the
spatial ones (TF's CPU kernels refuse NCHW: TF's NHWC answer, transposed) and shape rules.

Case ``k`` of ``build`` draws from ``default_rng(k)``: new cases go at the end.  Where a case needs a
forward result (the pooling output a MaxPoolGrad takes, the shape of a convolution's output) it is
computed with tfops_py's own kernels, which give TF's values exactly there (max, slicing, padding).
Imported only when cases are made.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, ShapeRule, draw_values as values, reference
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels.nn._nn_cases import nchw, nchw_attrs, nhwc, nhwc_attrs

D = DataType
FLOATS = [D.DT_FLOAT, D.DT_DOUBLE, D.DT_HALF, D.DT_BFLOAT16]
ACTIVATIONS = ["Elu", "Selu", "Softplus", "Softsign", "LeakyRelu"]
ACTIVATION_GRADS = ["ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad", "LeakyReluGrad"]
OUTPUT_GRADS = ["SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]
EXP_OPS = {"Elu", "Selu", "Softplus", "SoftplusGrad"}  # exp may differ by an ulp from Eigen's; exp(x) - 1 cancels
SPATIAL = ("Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPoolGrad", "MaxPoolGradV2", "MaxPoolV2",
           "AvgPoolGrad")
NCHW_NOTE = "TF's CPU kernels refuse NCHW: TF's NHWC answer on transposed inputs, transposed back"
I32 = np.int32


def i32(*v: int) -> np.ndarray:
    return np.array(v, I32)


def ours(op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """tfops_py's outputs of one op on Consts (forward results some gradient cases take as inputs)."""
    from tfops_py import ClientSession, Scope, ops  # noqa: PLC0415 - not needed to declare cases
    from tfops_py.framework.node_builder import add_node  # noqa: PLC0415
    from tfops_py.framework.op_def import get_op_def  # noqa: PLC0415
    from tfops_py.framework.operation import Output  # noqa: PLC0415

    root = Scope.NewRootScope()
    node = add_node(root, get_op_def(op), [ops.Const(root, a) for a in inputs], dict(attrs))
    return ClientSession(root, fetch_numpy=True).Run([Output(node, i) for i in range(node.num_outputs())])


def _compare(op: str, dt: DataType, kind: str = "ew") -> str:
    return "exp" if op in EXP_OPS and dt.is_floating and kind == "ew" else kind


# -- NCHW -------------------------------------------------------------------------------------------------
def _permute_vector(v: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    return v[list(order)] if v.size == 4 else v


def to_nchw(op: str, inputs: list) -> list:
    """The NCHW form of an NHWC case's inputs (sizes and window vectors permuted, 4-D tensors transposed)."""
    x = list(inputs)
    if op in ("Conv2DBackpropInput", "AvgPoolGrad"):
        x[0] = _permute_vector(x[0], (0, 3, 1, 2))
    if op in ("MaxPoolV2", "MaxPoolGradV2"):
        x[-2:] = [_permute_vector(v, (0, 3, 1, 2)) for v in x[-2:]]
    if op == "Conv2DBackpropFilter":
        return [nchw(x[0]), x[1], nchw(x[2])]
    if op == "Conv2DBackpropInput":  # the filter keeps its HWIO layout
        return [x[0], x[1], nchw(x[2])]
    return [nchw(a) if isinstance(a, np.ndarray) and a.ndim == 4 else a for a in x]


def _to_nhwc(op: str, inputs: list) -> list:
    x = list(inputs)
    if op in ("Conv2DBackpropInput", "AvgPoolGrad"):
        x[0] = _permute_vector(x[0], (0, 2, 3, 1))
    if op in ("MaxPoolV2", "MaxPoolGradV2"):
        x[-2:] = [_permute_vector(v, (0, 2, 3, 1)) for v in x[-2:]]
    if op == "Conv2DBackpropFilter":
        return [nhwc(x[0]), x[1], nhwc(x[2])]
    if op == "Conv2DBackpropInput":
        return [x[0], x[1], nhwc(x[2])]
    return [nhwc(a) if isinstance(a, np.ndarray) and a.ndim == 4 else a for a in x]


def nchw_via_nhwc(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's answer for an NCHW gradient case: the NHWC op on converted inputs, its output transposed back
    (a filter gradient keeps HWIO)."""
    outs = run_tf(op, _to_nhwc(op, inputs), nhwc_attrs(attrs))
    return [o if op == "Conv2DBackpropFilter" or o.ndim != 4 else nchw(o) for o in outs]


NCHW = reference(nchw_via_nhwc, NCHW_NOTE)


# -- shape rules --------------------------------------------------------------------------------------------
class XentShapes(ShapeRule):
    """SoftmaxCrossEntropyWithLogits: features and labels [batch, classes] that broadcast (and sometimes not)."""

    PAIRS = [((4, 5), (4, 5)), ((4, 5), (1, 5)), ((4, 5), (5,)), ((5,), (3, 5)), ((4, 1), (4, 6)), ((3, 0), (3, 0)),
             ((0, 3), (0, 3)), ((2, 3), ()), ((2, 3), (2, 4))]

    def patterns(self) -> list[dict[str, Any]]:
        return [{"features": f, "labels": lab} for f, lab in self.PAIRS]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        full = [int(rng.integers(0, 5)), int(rng.integers(0, 6))]
        logits = [d if rng.integers(0, 5) else 1 for d in full][int(rng.integers(0, 2)):]
        labels = [d if rng.integers(0, 5) else 1 for d in full][int(rng.integers(0, 3)):]
        if rng.integers(0, 10) == 0:
            labels = labels + [2]  # sometimes not broadcastable
        return {"features": tuple(logits), "labels": tuple(labels)}


class SparseXentShapes(ShapeRule):
    """SparseSoftmaxCrossEntropyWithLogits: features [batch, classes], labels [batch]."""

    def patterns(self) -> list[dict[str, Any]]:
        return [{"features": (6, 4), "labels": (6,)}, {"features": (0, 3), "labels": (0,)},
                {"features": (3, 1), "labels": (3,)}, {"features": (2, 3), "labels": (3,)}]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        b, c = int(rng.integers(0, 5)), int(rng.integers(1, 6))
        return {"features": (b, c), "labels": (b,)}


class BiasAddGradShapes(ShapeRule):
    """out_backprop of rank 2..5, channels last (NHWC) or at dimension 1 (NCHW, rank >= 3)."""

    def patterns(self) -> list[dict[str, Any]]:
        return [{"out_backprop": shape, "data_format": fmt} for shape, fmt in (
            ((4, 3), "NHWC"), ((2, 3, 5), "NHWC"), ((2, 3, 5), "NCHW"), ((2, 4, 3, 2), "NCHW"),
            ((1, 2, 2, 2, 3), "NHWC"), ((0, 3), "NHWC"))]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        shape = tuple(int(d) for d in rng.integers(0, 5, int(rng.integers(2, 5))))
        return {"out_backprop": shape, "data_format": ("NHWC", "NCHW")[int(rng.integers(0, 2))] if len(shape) >= 3
                else "NHWC"}


BIAS_ADD_GRAD = BiasAddGradShapes()
XENT = XentShapes()
SPARSE_XENT = SparseXentShapes()


# -- the cases of the first gradient-kernel golden file, then the NCHW forms of the spatial ones ------------
def build(out: CaseList) -> None:
    _activation_cases(out)
    _loss_cases(out)
    _conv_cases(out)
    _pool_cases(out)
    _support_cases(out)
    _scatter_cases(out)
    for item in [i for i in out.items if i["op"] in SPATIAL]:
        attrs = nchw_attrs(item["attrs"]) if item["op"] != "MaxPoolV2" and item["op"] != "MaxPoolGradV2" else \
            dict(item["attrs"], data_format="NCHW")
        out.add(item["op"], to_nchw(item["op"], item["inputs"]), attrs, compare=item["compare"], reference=NCHW)


def _activation_cases(out: CaseList) -> None:
    ramp = np.linspace(-40, 40, 33)
    for dt in FLOATS:
        for op in ACTIVATIONS:
            x = values(out.rng(), dt.numpy_dtype, (4, 6), specials=True)
            x.reshape(-1)[:24] = ramp[:24].astype(dt.numpy_dtype)  # both branches and the softplus thresholds
            out.add(op, [x], {"alpha": 0.3} if op == "LeakyRelu" else {}, compare=_compare(op, dt))
        for op in ACTIVATION_GRADS:
            rng = out.rng()
            out.add(op, [values(rng, dt.numpy_dtype, (3, 5), specials=True),
                         values(rng, dt.numpy_dtype, (3, 5), specials=True)], {"alpha": 0.1} if "Leaky" in op else {},
                    compare=_compare(op, dt))
    for dt in [D.DT_INT32, D.DT_UINT8, D.DT_INT64]:
        for op in ("ReluGrad", "Relu6Grad"):
            rng = out.rng()
            out.add(op, [values(rng, dt.numpy_dtype, (12,), "small"), values(rng, dt.numpy_dtype, (12,), "small")])
    for dt in FLOATS + [D.DT_COMPLEX64, D.DT_COMPLEX128]:
        for op in OUTPUT_GRADS:
            rng = out.rng()
            special = not dt.is_complex
            y, dy = values(rng, dt.numpy_dtype, (4, 5), specials=special), values(rng, dt.numpy_dtype, (4, 5),
                                                                                   specials=special)
            out.add(op, [y, dy])
    out.add("SigmoidGrad", [np.full((2, 3), 0.25, np.float32), np.arange(6, dtype=np.float32).reshape(3, 2)])


def _loss_cases(out: CaseList) -> None:
    pairs = [((4, 5), (4, 5)), ((4, 5), (1, 5)), ((4, 5), (5,)), ((5,), (3, 5)), ((4, 1), (4, 6)), ((3, 0), (3, 0)),
             ((0, 3), (0, 3)), ((2, 3), ())]
    for dt in FLOATS:
        for fs, ls in pairs:
            rng = out.rng()
            labels = np.abs(values(rng, np.float64, ls))
            out.add("SoftmaxCrossEntropyWithLogits", [values(rng, dt.numpy_dtype, fs), labels.astype(dt.numpy_dtype)],
                    compare="acc")
        for lt in (D.DT_INT32, D.DT_INT64):
            rng = out.rng()
            out.add("SparseSoftmaxCrossEntropyWithLogits",
                    [values(rng, dt.numpy_dtype, (6, 4)), rng.integers(0, 4, 6).astype(lt.numpy_dtype)], compare="acc")
        for shape in ((3, 4), (), (0,), (40, 30)):
            out.add("L2Loss", [values(out.rng(), dt.numpy_dtype, shape)], compare="acc")
    inf = np.array([[np.inf, 0, 1], [-np.inf, 0, 1], [np.nan, 0, 1], [-np.inf] * 3], np.float32)
    out.add("SoftmaxCrossEntropyWithLogits", [inf, np.array([[0, 0, 1]] * 4, np.float32)], compare="acc")
    out.add("SparseSoftmaxCrossEntropyWithLogits", [inf, i32(2, 0, 1, 1)], compare="acc")
    out.add("SparseSoftmaxCrossEntropyWithLogits", [np.zeros((0, 3), np.float32), i32()], compare="acc")


CONV = [  # (n, h, w, c, kh, kw, cg, out, stride, padding, explicit)
    (2, 5, 5, 3, 3, 3, 3, 4, (1, 1), "SAME", None),
    (2, 7, 6, 4, 3, 2, 4, 5, (2, 1), "VALID", None),
    (1, 8, 8, 2, 3, 3, 2, 3, (2, 2), "SAME", None),
    (1, 5, 5, 3, 3, 3, 3, 2, (1, 1), "EXPLICIT", (1, 2, 0, 1)),
    (1, 6, 5, 2, 2, 3, 2, 2, (3, 2), "EXPLICIT", (0, 0, 2, 2)),
    (1, 9, 9, 3, 1, 1, 3, 5, (3, 3), "SAME", None),
    (1, 4, 4, 3, 4, 4, 3, 2, (1, 1), "SAME", None),
    (0, 5, 5, 3, 3, 3, 3, 4, (1, 1), "SAME", None),
]


def _conv_cases(out: CaseList) -> None:
    for dt in FLOATS + [D.DT_INT32]:
        for i, (n, h, w, c, kh, kw, cg, oc, (sh, sw), padding, explicit) in enumerate(CONV):
            if dt != D.DT_FLOAT and i % 3:
                continue
            rng = out.rng()
            kind = "small" if dt == D.DT_INT32 else "any"
            attrs = {"strides": [1, sh, sw, 1], "padding": padding,
                     "explicit_paddings": [0, 0, *explicit, 0, 0] if explicit else []}
            x = values(rng, dt.numpy_dtype, (n, h, w, c), kind)
            f = values(rng, dt.numpy_dtype, (kh, kw, cg, oc), kind)
            y_shape = ours("Conv2D", [x.astype(np.float32), f.astype(np.float32)], attrs)[0].shape
            dy = values(rng, dt.numpy_dtype, y_shape, kind)
            out.add("Conv2DBackpropInput", [i32(*x.shape), f, dy], attrs, compare="acc")
            if dt != D.DT_INT32:  # TF has no int32 filter gradient
                out.add("Conv2DBackpropFilter", [x, i32(*f.shape), dy], attrs, compare="acc")
    rng = out.rng()  # input_sizes given as [H, W]
    f, dy = values(rng, np.float32, (3, 3, 2, 4)), values(rng, np.float32, (2, 3, 3, 4))
    out.add("Conv2DBackpropInput", [i32(5, 5), f, dy], {"strides": [1, 1, 1, 1], "padding": "VALID"}, compare="acc")


POOL = [((3, 3), (2, 2)), ((2, 3), (1, 2)), ((3, 1), (3, 1)), ((1, 1), (1, 1)), ((4, 4), (1, 1)), ((2, 2), (2, 2))]


def _pool_cases(out: CaseList) -> None:
    for op, fwd in (("MaxPoolGrad", "MaxPool"), ("AvgPoolGrad", "AvgPool")):
        types = FLOATS + ([D.DT_INT32, D.DT_INT64] if op == "MaxPoolGrad" else [])
        for dt in types:
            for padding in ("SAME", "VALID"):
                for i, (k, s) in enumerate(POOL):
                    if dt != D.DT_FLOAT and i % 2:
                        continue
                    rng = out.rng()
                    x = values(rng, dt.numpy_dtype, (2, 7, 6, 3), "small", specials=op == "MaxPoolGrad")
                    x[0, :3, :3, 0] = 1  # ties: the first maximum takes the gradient
                    attrs = {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": padding}
                    y = ours(fwd, [x], attrs)[0]
                    dy = values(rng, dt.numpy_dtype, y.shape, "small")
                    inputs = [x, y, dy] if op == "MaxPoolGrad" else [i32(*x.shape), dy]
                    out.add(op, inputs, attrs, compare="ew" if op == "MaxPoolGrad" else "acc")
    for dt in (D.DT_FLOAT, D.DT_HALF):
        for k, s, pads in (((3, 3), (2, 2), (1, 1, 2, 0)), ((2, 2), (1, 1), (1, 0, 0, 1))):
            rng = out.rng()
            x = values(rng, dt.numpy_dtype, (1, 5, 6, 2), specials=True)
            attrs = {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": "EXPLICIT",
                     "explicit_paddings": [0, 0, *pads, 0, 0]}
            y = ours("MaxPool", [x], attrs)[0]
            out.add("MaxPoolGrad", [x, y, values(rng, dt.numpy_dtype, y.shape)], attrs)
    nan = np.array([np.nan, 1, 2, np.nan, 5, 5, 5, 5], np.float32).reshape(2, 2, 2, 1)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}
    out.add("MaxPoolGrad", [nan, ours("MaxPool", [nan], attrs)[0], np.full((2, 1, 1, 1), 3, np.float32)], attrs)
    for k, s in (((3, 3), (2, 2)), ((2, 3), (1, 2))):
        rng = out.rng()
        x = values(rng, np.float32, (2, 7, 6, 3))
        attrs = {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": "SAME"}
        y = ours("MaxPool", [x], attrs)[0]
        out.add("MaxPoolV2", [x, i32(1, *k, 1), i32(1, *s, 1)], {"padding": "SAME"})
        out.add("MaxPoolGradV2", [x, y, values(rng, np.float32, y.shape), i32(1, *k, 1), i32(1, *s, 1)],
                {"padding": "SAME"})
    for dt in FLOATS + [D.DT_INT32, D.DT_INT8, D.DT_COMPLEX64]:
        for shape, fmt in (((4, 3), "NHWC"), ((2, 3, 5), "NHWC"), ((2, 3, 5), "NCHW"), ((2, 4, 3, 2), "NCHW"),
                           ((1, 2, 2, 2, 3), "NHWC"), ((0, 3), "NHWC")):
            out.add("BiasAddGrad", [values(out.rng(), dt.numpy_dtype, shape, "small")], {"data_format": fmt},
                    compare="acc")


def _support_cases(out: CaseList) -> None:
    for a, b in [((2, 3), (3,)), ((2, 3), (2, 3)), ((1, 1), (1,)), ((), ()), ((2, 1, 3), (1, 4, 1)), ((1, 3), (1, 1)),
                 ((5, 1, 1, 3), (1, 1, 3)), ((0,), (1,)), ((), (2, 1)), ((1,), (1,)), ((1, 2, 1), (1, 1, 1))]:
        for t in (np.int32, np.int64):
            out.add("BroadcastGradientArgs", [np.array(a, t), np.array(b, t)])
    out.add("ConcatOffset", [np.int32(1), [i32(2, 2, 5), i32(2, 3, 5), i32(2, 4, 5)]])
    out.add("ConcatOffset", [np.int32(-1), [np.array([3, 1], np.int64), np.array([3, 7], np.int64)]])
    for perm in ([2, 0, 1], [], [0], [4, 3, 0, 1, 2]):
        out.add("InvertPermutation", [np.array(perm, I32)])
    x = values(np.random.default_rng(0), np.float32, (3, 4, 5))
    for spec, masks in [(((0, 1), (3, 4), (2, 2)), {}), (((1, -1), (2, 0), (1, -1)), {"shrink_axis_mask": 1,
                                                                                      "end_mask": 2}),
                        (((0, 0), (1, 1), (1, 1)), {"new_axis_mask": 2}), (((-1,), (0,), (-2,)), {}),
                        (((0, 2), (0, 4), (1, 1)), {"ellipsis_mask": 1})]:
        begin, end, strides = (i32(*v) for v in spec)
        dy = ours("StridedSlice", [x, begin, end, strides], masks)[0]
        out.add("StridedSliceGrad", [i32(*x.shape), begin, end, strides, dy + 1], masks)
    out.add("BroadcastTo", [i32(1, 2, 3), i32(2, 3)])
    out.add("BroadcastTo", [np.ones((3, 1), np.float16), i32(2, 3, 4)])
    out.add("BroadcastTo", [np.array(True), np.array([2, 2], np.int64)])
    out.add("SplitV", [x, i32(1, -1, 1), np.int32(1)], {"num_split": 3})
    out.add("SplitV", [x, np.array([2, 3], np.int64), np.int32(-1)], {"num_split": 2})
    out.add("SplitV", [x, i32(0, 3, 0), np.int32(0)], {"num_split": 3})
    for axes in ([0, -1], [1], [], [2, 0, 1]):
        out.add("ReverseV2", [x, np.array(axes, I32)])
    out.add("PadV2", [x, i32(1, 0, 0, 2, 1, 1).reshape(3, 2), np.float32(7)])
    out.add("PadV2", [np.arange(6, dtype=np.int8).reshape(2, 3), np.array([[0, 1], [2, 0]], np.int64), np.int8(-3)])
    for mode in ("REFLECT", "SYMMETRIC"):
        for pads in ([[2, 1], [3, 3], [0, 1]], [[1, 1], [0, 0], [4, 3]]):
            p = np.array(pads, I32)
            if mode == "REFLECT" and p.max(initial=0) >= 4:
                p = np.minimum(p, 2)
            out.add("MirrorPad", [x, p], {"mode": mode})
            y = ours("MirrorPad", [x, p], {"mode": mode})[0]
            out.add("MirrorPadGrad", [y + 0.5, p], {"mode": mode}, compare="acc")
    for exclusive in (False, True):
        for reverse in (False, True):
            out.add("Cumsum", [x, np.int32(1)], {"exclusive": exclusive, "reverse": reverse}, compare="acc")
    out.add("Cumsum", [np.array([100, 100, 100], np.int8), np.int64(-1)])
    out.add("Cumsum", [values(np.random.default_rng(1), np.float16, (7, 3)), np.int32(0)], {"reverse": True},
            compare="acc")


def _scatter_cases(out: CaseList) -> None:
    rng = np.random.default_rng(5)
    data = values(rng, np.float32, (6, 3), specials=True)
    for ids in ([0, -1, 0, 2, 2, 4], [[0, 1], [1, 1], [-1, 0]]):
        ids = np.array(ids, I32)
        out.add("UnsortedSegmentSum", [data.reshape(ids.shape + (-1,)), ids, np.int32(5)])
    out.add("UnsortedSegmentSum", [np.array([100, 100, 100], np.int8), np.array([1, 1, 1], np.int64), np.int64(2)])
    out.add("UnsortedSegmentSum", [np.zeros((3, 0), np.float32), i32(0, 9, 0), np.int32(2)])
    out.add("DynamicStitch", [[i32(0, 2), i32(1, 2)], [np.float32([1.0, 2.0]), np.float32([3.0, 4.0])]])
    out.add("DynamicStitch", [[i32(0, 3), np.int32(5)], [np.ones((2, 2), np.float64), np.full((2,), 7.0)]])
    out.add("DynamicStitch", [[np.array([[1], [0]], I32)], [np.array([[[True]], [[False]]])]])
    p = values(rng, np.float32, (2, 3, 4))
    for idx, attrs in ((np.array([[1, 2], [0, 0]], I32), {}), (np.array([[[1], [0]]], np.int64), {}),
                       (np.zeros((2, 0), I32), {}), (np.array([[1, 2, 3], [1, 5, 0]], I32),
                                                     {"bad_indices_policy": "IGNORE"})):
        out.add("GatherNd", [p, idx], attrs)
    out.add("ScatterNd", [np.array([[1], [3], [1]], I32), np.array([1.0, 2.0, 3.0], np.float32), i32(5)])
    out.add("ScatterNd", [np.array([[1, 0], [1, 0], [0, 1]], np.int64), values(rng, np.float32, (3, 4)),
                          np.array([2, 2, 4], np.int64)])
    out.add("ScatterNd", [np.array([[1], [7], [1]], I32), np.array([1, 2, 3], np.int32), i32(5)],
            {"bad_indices_policy": "IGNORE"})
    out.add("TensorScatterAdd", [values(rng, np.float32, (4, 2)), np.array([[1], [3], [1]], I32),
                                 values(rng, np.float32, (3, 2))])
    out.add("TensorScatterAdd", [np.ones((4, 2), np.int32), np.array([[1, 1], [1, 1]], I32), i32(5, 6)])
    out.add("ScatterNdNonAliasingAdd", [values(rng, np.float64, (4, 2)), np.array([[1], [3], [1]], np.int64),
                                        values(rng, np.float64, (3, 2))])
    out.add("ScatterNdNonAliasingAdd", [np.zeros(3, bool), np.array([[1], [1]], I32), np.array([True, False])])
