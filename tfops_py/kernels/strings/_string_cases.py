"""Hand cases of the strings family: explicit inputs for edge cases and TF's errors."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList


def strings(*items: Any) -> np.ndarray:
    """An object array of bytes (nested lists give its shape; ``str`` is UTF-8 encoded)."""
    arr = np.array(items if len(items) != 1 or not isinstance(items[0], list) else items[0], dtype=object)
    return np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(arr) if arr.size else arr


def scalar(value: bytes | str) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = value.encode() if isinstance(value, str) else value
    return out


def build(out: CaseList) -> None:
    # StringJoin: scalars join every element; other shapes must be equal (no broadcasting)
    out.add("StringJoin", [[strings("a", "b"), scalar("x")]], {"separator": ","})
    out.add("StringJoin", [[scalar("x"), strings([["a"], ["b"]]), scalar("")]])
    out.add("StringJoin", [[strings("a", "b"), strings("c")]], id="StringJoin/shapes_differ")
    out.add("StringJoin", [[strings([["a"], ["b"]]), strings([["c", "d"]])]], id="StringJoin/no_broadcast")
    # ReduceJoin
    grid = strings([["a", "b"], ["c", "d"]])
    out.add("ReduceJoin", [grid, np.array([], np.int32)])
    out.add("ReduceJoin", [grid, np.array(0, np.int32)], {"keep_dims": True, "separator": ","})
    out.add("ReduceJoin", [scalar("a"), np.array([], np.int32)])
    out.add("ReduceJoin", [grid, np.array([1, -1], np.int32)], id="ReduceJoin/duplicate")
    out.add("ReduceJoin", [grid, np.array([2], np.int32)], id="ReduceJoin/out_of_range")
    out.add("ReduceJoin", [grid, np.array([[0]], np.int32)], id="ReduceJoin/indices_rank2")
    # StringSplitV2 / StringSplit
    out.add("StringSplitV2", [strings(" a  b c ", "", "  ", "a\x1cb\x0bc\x00d"), scalar("")], {"maxsplit": 1},
            compare="exact")
    out.add("StringSplitV2", [strings("a,,b,", ""), scalar(",")], compare="exact")
    out.add("StringSplitV2", [strings("a<>b<><>c"), scalar("<>")], {"maxsplit": 2}, compare="exact")
    out.add("StringSplitV2", [strings([["a"]]), scalar("")], id="StringSplitV2/not_vector")
    out.add("StringSplitV2", [strings("a"), strings(" ")], id="StringSplitV2/sep_not_scalar")
    out.add("StringSplit", [strings("a,b;;c", "", ";"), scalar(",;")], {"skip_empty": False}, compare="exact")
    out.add("StringSplit", [strings("a,b;;c", "", ";"), scalar(",;")], compare="exact")
    out.add("StringSplit", [strings("abc", ""), scalar("")], {"skip_empty": False}, compare="exact")
    # StringStrip, case mapping, lengths
    out.add("StringStrip", [strings(" \t\x0b\x0ca\x1c \n", "\x00 a \x00", "", "   ")])
    unicode = strings("\u00c0BC", "\u0130x", "\u00df", b"\xffA", "\ufb01", "\u039f\u0394\u039f\u03a3 \u03a3")
    for op in ("StringLower", "StringUpper"):
        for encoding in ("", "utf-8"):
            out.add(op, [unicode], {"encoding": encoding})
        out.add(op, [strings("A")], {"encoding": "latin1"}, id=f"{op}/bad_encoding")
    out.add("StringLength", [strings("h\u00e9llo", b"\xff\xc3", "", "\U0001f600")], {"unit": "UTF8_CHAR"})
