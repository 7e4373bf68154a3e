"""The nn family's conformance helpers: cases built from arrays, the shape rules of convolution, pooling
and BiasAdd, and the NCHW reference (TF's CPU kernels refuse NCHW: TF's NHWC answer, transposed).

Case ``k`` of ``build`` draws from ``default_rng(k)``: new cases go at the end.  Imported only when
cases are made (the declarations name it by string).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, ShapeRule, draw_values as values, reference
from tfops_py.framework.dtypes import DataType
from tfops_py.kernels.nn.conv_pool_ops import NCHW_NOTE

D = DataType
FLOATS = [D.DT_FLOAT, D.DT_DOUBLE, D.DT_HALF, D.DT_BFLOAT16]
SPATIAL = ("Conv2D", "AvgPool", "MaxPool")


# -- layouts --------------------------------------------------------------------------------------------
def nchw(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))


def nhwc(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(a, (0, 2, 3, 1)))


def nchw_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """NHWC attrs of a conv/pool op rewritten for NCHW."""
    out = dict(attrs, data_format="NCHW")
    for key in ("strides", "dilations", "ksize"):
        if key in attrs:
            n, h, w, c = attrs[key]
            out[key] = [n, c, h, w]
    if attrs.get("explicit_paddings"):
        p = list(attrs["explicit_paddings"])
        out["explicit_paddings"] = p[:2] + p[6:8] + p[2:6]
    return out


def nhwc_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """NCHW attrs rewritten for NHWC (the inverse of ``nchw_attrs``)."""
    out = dict(attrs, data_format="NHWC")
    for key in ("strides", "dilations", "ksize"):
        if key in attrs and len(attrs[key]) == 4:
            n, c, h, w = attrs[key]
            out[key] = [n, h, w, c]
    if attrs.get("explicit_paddings") and len(attrs["explicit_paddings"]) == 8:
        p = list(attrs["explicit_paddings"])
        out["explicit_paddings"] = p[:2] + p[4:8] + p[2:4]
    return out


def nchw_via_nhwc(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's answer for an NCHW case: the NHWC op on transposed 4-D inputs (filters keep HWIO), transposed back."""
    moved = [nhwc(a) if i == 0 and np.ndim(a) == 4 else a for i, a in enumerate(inputs)]
    return [nchw(o) if o.ndim == 4 else o for o in run_tf(op, moved, nhwc_attrs(attrs))]


NCHW = reference(nchw_via_nhwc, NCHW_NOTE)


# -- shape rules -------------------------------------------------------------------------------------------
def _int(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(rng.integers(lo, hi + 1))


class Conv2DShapes(ShapeRule):
    """Conv2D: input, filter and attrs from configurations (strides, dilations, SAME/VALID/EXPLICIT padding,
    groups, empty batch and depth); live cases draw every dimension and attr, in either layout."""

    CONFIGS: list[tuple[Any, ...]] = [  # (n, h, w, c, kh, kw, cg, out, stride, dilation, padding, explicit)
        (2, 5, 5, 3, 3, 3, 3, 4, (1, 1), (1, 1), "SAME", None),
        (2, 7, 6, 4, 3, 2, 4, 5, (2, 1), (1, 1), "VALID", None),
        (1, 8, 8, 2, 3, 3, 2, 3, (2, 2), (2, 2), "SAME", None),
        (1, 5, 5, 3, 3, 3, 3, 2, (1, 1), (1, 1), "EXPLICIT", (1, 2, 0, 1)),
        (2, 5, 5, 6, 3, 3, 2, 9, (1, 1), (1, 1), "SAME", None),  # grouped: 3 groups
        (0, 5, 5, 3, 3, 3, 3, 4, (1, 1), (1, 1), "SAME", None),  # empty batch
        (1, 4, 4, 3, 1, 1, 3, 0, (1, 1), (1, 1), "VALID", None),  # empty output depth
        (1, 3, 3, 1, 4, 1, 1, 1, (3, 3), (1, 1), "VALID", None),  # filter taller than the input
    ]

    @staticmethod
    def _pattern(n: int, h: int, w: int, c: int, kh: int, kw: int, cg: int, out: int, stride: tuple,
                 dilation: tuple, padding: str, explicit: Any, fmt: str) -> dict[str, Any]:
        attrs = {"strides": [1, *stride, 1], "padding": padding, "dilations": [1, *dilation, 1],
                 "explicit_paddings": [0, 0, *explicit, 0, 0] if explicit else []}
        x = (n, h, w, c)
        if fmt == "NCHW":
            attrs, x = nchw_attrs(attrs), (n, c, h, w)
        return {"input": x, "filter": (kh, kw, cg, out), **attrs}

    def patterns(self) -> list[dict[str, Any]]:
        return [self._pattern(*cfg, fmt=fmt) for fmt in ("NHWC", "NCHW") for cfg in self.CONFIGS]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        cg, groups, og = _int(rng, 1, 3), [1, 1, 2, 3][_int(rng, 0, 3)], _int(rng, 1, 3)
        padding = ("SAME", "VALID", "EXPLICIT")[_int(rng, 0, 2)]
        explicit = tuple(_int(rng, 0, 6) for _ in range(4)) if padding == "EXPLICIT" else None
        return self._pattern(_int(rng, 0, 2), _int(rng, 1, 8), _int(rng, 1, 8), cg * groups, _int(rng, 1, 4),
                             _int(rng, 1, 4), cg, og * groups, (_int(rng, 1, 4), _int(rng, 1, 4)),
                             (_int(rng, 1, 4), _int(rng, 1, 4)), padding, explicit, ("NHWC", "NCHW")[_int(rng, 0, 1)])


class PoolShapes(ShapeRule):
    """AvgPool and MaxPool: windows and strides, SAME/VALID (and EXPLICIT, pooling across depth for MaxPool),
    in either layout."""

    WINDOWS = [((3, 3), (2, 2)), ((2, 3), (1, 2)), ((3, 1), (3, 1)), ((1, 1), (1, 1)), ((4, 4), (1, 1))]

    def __init__(self, max_pool: bool):
        self.max_pool = max_pool
        self.input = "input" if max_pool else "value"  # the OpDefs name it differently

    def _pattern(self, shape: tuple, k: list, s: list, padding: str, explicit: Any, fmt: str) -> dict[str, Any]:
        attrs = {"ksize": k, "strides": s, "padding": padding}
        if explicit is not None:
            attrs["explicit_paddings"] = [0, 0, *explicit, 0, 0]
        if fmt == "NCHW":
            attrs, shape = nchw_attrs(attrs), (shape[0], shape[3], shape[1], shape[2])
        return {self.input: shape, **attrs}

    def patterns(self) -> list[dict[str, Any]]:
        out = [self._pattern((2, 7, 6, 3), [1, *k, 1], [1, *s, 1], padding, None, fmt)
               for fmt in ("NHWC", "NCHW") for padding in ("SAME", "VALID") for k, s in self.WINDOWS]
        out.append(self._pattern((0, 4, 4, 2), [1, 2, 2, 1], [1, 1, 1, 1], "SAME", None, "NHWC"))
        out.append(self._pattern((2, 6, 7, 3), [1, 9, 3, 1], [1, 3, 3, 1], "VALID", None, "NHWC"))  # window > input
        if self.max_pool:
            out.append(self._pattern((1, 5, 6, 2), [1, 3, 3, 1], [1, 2, 2, 1], "EXPLICIT", (1, 1, 2, 0), "NHWC"))
            out.append(self._pattern((2, 3, 3, 6), [1, 1, 1, 3], [1, 1, 1, 3], "VALID", None, "NHWC"))
            out.append(self._pattern((2, 1, 5, 6), [1, 1, 1, 2], [1, 2, 3, 2], "VALID", None, "NHWC"))
        return out

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        shape = (_int(rng, 0, 2), _int(rng, 1, 7), _int(rng, 1, 7), _int(rng, 1, 3))
        k, s = [1, _int(rng, 1, 9), _int(rng, 1, 9), 1], [1, _int(rng, 1, 3), _int(rng, 1, 3), 1]
        padding = ("SAME", "VALID", "EXPLICIT")[_int(rng, 0, 2 if self.max_pool else 1)]
        fmt = ("NHWC", "NCHW")[_int(rng, 0, 1)]
        if self.max_pool and padding != "EXPLICIT" and _int(rng, 0, 4) == 0:  # across depth
            depth = _int(rng, 1, 3)
            return self._pattern(shape[:3] + (depth * _int(rng, 1, 3),), [1, 1, 1, depth], [1, s[1], s[2], depth],
                                 padding, None, "NHWC")
        explicit = (_int(rng, 0, k[1] - 1), _int(rng, 0, k[1] - 1), _int(rng, 0, k[2] - 1),
                    _int(rng, 0, k[2] - 1)) if padding == "EXPLICIT" else None
        return self._pattern(shape, k, s, padding, explicit, fmt)


class BiasAddShapes(ShapeRule):
    """value of rank 2..5 and a bias of its channel count (last dim, or dim 1 in NCHW); sometimes not."""

    LAYOUTS = [("NHWC", (4, 3)), ("NHWC", (2, 3, 5)), ("NHWC", (2, 2, 3, 4)), ("NHWC", (1, 2, 2, 2, 3)),
               ("NCHW", (2, 3, 5)), ("NCHW", (2, 4, 3, 2)), ("NCHW", (1, 3, 2, 2, 2)), ("NHWC", (0, 3))]

    @staticmethod
    def _pattern(fmt: str, shape: tuple, c: int | None = None) -> dict[str, Any]:
        channels = shape[1] if fmt == "NCHW" else shape[-1]
        return {"value": shape, "bias": (channels if c is None else c,), "data_format": fmt}

    def patterns(self) -> list[dict[str, Any]]:
        return [self._pattern(fmt, shape) for fmt, shape in self.LAYOUTS] + [
            self._pattern("NHWC", (2, 3), 4), self._pattern("NCHW", (2, 3, 4), 4)]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        shape = tuple(_int(rng, 0, 4) for _ in range(_int(rng, 2, 4)))
        fmt = ("NHWC", "NCHW")[_int(rng, 0, 1)] if len(shape) >= 3 else "NHWC"
        return self._pattern(fmt, shape, _int(rng, 0, 4) if _int(rng, 0, 9) == 0 else None)


CONV2D = Conv2DShapes()
AVG_POOL = PoolShapes(max_pool=False)
MAX_POOL = PoolShapes(max_pool=True)
BIAS_ADD = BiasAddShapes()


# -- the cases of the first nn golden file (NHWC), then their NCHW forms ------------------------------------
def build(out: CaseList) -> None:
    _activation_cases(out)
    _bias_add_cases(out)
    _conv_cases(out)
    _pool_cases(out)
    for item in [i for i in out.items if i["op"] in SPATIAL]:  # TF refuses NCHW: its NHWC answer, transposed
        inputs = [nchw(item["inputs"][0])] + item["inputs"][1:]
        out.add(item["op"], inputs, nchw_attrs(item["attrs"]), compare=item["compare"], reference=NCHW)


def _activation_cases(out: CaseList) -> None:
    for op in ("Relu", "Relu6"):
        for dt in FLOATS + [D.DT_INT8, D.DT_INT32, D.DT_INT64, D.DT_UINT8, D.DT_UINT16, D.DT_INT16]:
            out.add(op, [values(out.rng(), dt.numpy_dtype, (3, 4, 2), specials=True)])
    for op in ("Softmax", "LogSoftmax"):
        for dt in FLOATS:
            for shape in ((5,), (3, 4), (2, 3, 6), (2, 0), (0, 3), (4, 1)):
                out.add(op, [values(out.rng(), dt.numpy_dtype, shape)], compare="acc")
        x = np.array([[np.inf, 0.0, 1.0], [-np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0], [-np.inf] * 3], np.float32)
        out.add(op, [x], compare="acc")


def _bias_add_cases(out: CaseList) -> None:
    types = FLOATS + [D.DT_INT32, D.DT_INT8, D.DT_UINT8, D.DT_INT64, D.DT_COMPLEX64]
    for dt in types:
        for fmt, shapes in (("NHWC", [(4, 3), (2, 3, 5), (2, 2, 3, 4), (1, 2, 2, 2, 3)]),
                            ("NCHW", [(2, 3, 5), (2, 4, 3, 2), (1, 3, 2, 2, 2)])):
            for shape in shapes:
                rng = out.rng()
                c = shape[1] if fmt == "NCHW" else shape[-1]
                out.add("BiasAdd", [values(rng, dt.numpy_dtype, shape, specials=True),
                                    values(rng, dt.numpy_dtype, (c,))],
                        {"data_format": fmt})


def _conv_cases(out: CaseList) -> None:
    configs = [  # (n, h, w, c, kh, kw, cg, out, stride, dilation, padding, explicit)
        (2, 5, 5, 3, 3, 3, 3, 4, (1, 1), (1, 1), "SAME", None),
        (2, 7, 6, 4, 3, 2, 4, 5, (2, 1), (1, 1), "VALID", None),
        (1, 8, 8, 2, 3, 3, 2, 3, (2, 2), (2, 2), "SAME", None),
        (2, 6, 7, 6, 2, 2, 6, 4, (1, 1), (1, 2), "VALID", None),
        (1, 5, 5, 3, 3, 3, 3, 2, (1, 1), (1, 1), "EXPLICIT", (1, 2, 0, 1)),
        (1, 6, 5, 2, 2, 3, 2, 2, (3, 2), (1, 1), "EXPLICIT", (0, 0, 2, 2)),
        (2, 5, 5, 6, 3, 3, 2, 9, (1, 1), (1, 1), "SAME", None),  # grouped: 3 groups
        (1, 6, 6, 4, 1, 1, 1, 8, (2, 2), (1, 1), "VALID", None),  # grouped, 1x1
        (1, 9, 9, 3, 1, 1, 3, 5, (3, 3), (1, 1), "SAME", None),
        (0, 5, 5, 3, 3, 3, 3, 4, (1, 1), (1, 1), "SAME", None),  # empty batch
        (1, 4, 4, 3, 1, 1, 3, 0, (1, 1), (1, 1), "VALID", None),  # empty output depth
        (1, 3, 3, 2, 3, 3, 2, 2, (1, 1), (2, 2), "SAME", None),  # dilated filter larger than input
    ]
    for dt in FLOATS + [D.DT_INT32]:
        for i, (n, h, w, c, kh, kw, cg, oc, (sh, sw), (dh, dw), padding, explicit) in enumerate(configs):
            if dt != D.DT_FLOAT and i % 3:
                continue
            rng = out.rng()
            kind = "small" if dt == D.DT_INT32 else "any"
            attrs = {"strides": [1, sh, sw, 1], "padding": padding, "dilations": [1, dh, dw, 1],
                     "explicit_paddings": [0, 0, *explicit, 0, 0] if explicit else []}
            out.add("Conv2D", [values(rng, dt.numpy_dtype, (n, h, w, c), kind),
                               values(rng, dt.numpy_dtype, (kh, kw, cg, oc), kind)], attrs, compare="acc")


def _pool_cases(out: CaseList) -> None:
    windows = [((3, 3), (2, 2)), ((2, 3), (1, 2)), ((3, 1), (3, 1)), ((1, 1), (1, 1)), ((4, 4), (1, 1))]
    for op in ("AvgPool", "MaxPool"):
        types = FLOATS + ([D.DT_INT32, D.DT_INT64, D.DT_UINT8, D.DT_INT8, D.DT_UINT16, D.DT_INT16]
                          if op == "MaxPool" else [])
        for dt in types:
            for padding in ("SAME", "VALID"):
                for i, (k, s) in enumerate(windows):
                    if dt != D.DT_FLOAT and i % 2:
                        continue
                    x = values(out.rng(), dt.numpy_dtype, (2, 7, 6, 3), specials=True)
                    out.add(op, [x], {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": padding},
                            compare="acc" if op == "AvgPool" else "ew")
    for dt in (D.DT_FLOAT, D.DT_INT32, D.DT_HALF):
        for k, s, pads in (((3, 3), (2, 2), (1, 1, 2, 0)), ((2, 2), (1, 1), (1, 0, 0, 1))):
            out.add("MaxPool", [values(out.rng(), dt.numpy_dtype, (1, 5, 6, 2), specials=True)],
                    {"ksize": [1, *k, 1], "strides": [1, *s, 1], "padding": "EXPLICIT",
                     "explicit_paddings": [0, 0, *pads, 0, 0]})
    for dt in (D.DT_FLOAT, D.DT_INT8):  # across depth
        out.add("MaxPool", [values(out.rng(), dt.numpy_dtype, (2, 3, 3, 6), specials=True)],
                {"ksize": [1, 1, 1, 3], "strides": [1, 1, 1, 3], "padding": "VALID"})
    x = np.full((1, 2, 2, 3), np.nan, np.float32)
    x[0, :, :, 1] = -np.inf
    x[0, 0, 1, 2] = 5.0
    out.add("MaxPool", [x], {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"})
    out.add("AvgPool", [np.zeros((0, 4, 4, 2), np.float32)], {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1],
                                                            "padding": "SAME"}, compare="acc")
