"""Hand cases of the strings family: explicit inputs for edge cases and TF's errors."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, reference


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
    # regexes: empty matches step over whole UTF-8 characters, TF's rewrite quirks, RE2's errors
    words = strings("abc", "h\u00e9\u00e9", b"\xff\xfe", "")
    out.add("RegexReplace", [words, scalar("x*"), scalar("-")])
    out.add("RegexReplace", [strings("abc"), scalar("b*"), scalar("-")])
    out.add("RegexReplace", [strings("abab"), scalar("(a)(b)"), scalar("\\2\\1\\0\\\\")], {"replace_global": False})
    for rewrite in ("\\2", "x\\", "\\n", "a\\nb"):
        for replace_global in (True, False):
            out.add("RegexReplace", [strings("a", "ba"), scalar("a"), scalar(rewrite)],
                    {"replace_global": replace_global})
    out.add("RegexReplace", [strings("h\u00e9llo w\u00f6rld", b"h\xe9llo"), scalar("[^a-z ]"), scalar("_")])
    out.add("RegexReplace", [strings("a"), scalar("("), scalar("")], id="RegexReplace/bad_pattern")
    out.add("RegexReplace", [strings("a"), scalar("a{2000}"), scalar("")], id="RegexReplace/bad_repeat")
    out.add("RegexReplace", [strings("a"), strings("a"), scalar("")], id="RegexReplace/pattern_not_scalar")
    out.add("RegexReplace", [strings("a"), scalar("a"), strings("")], id="RegexReplace/rewrite_not_scalar")
    out.add("StaticRegexReplace", [strings("a")], {"pattern": "(", "rewrite": ""}, id="StaticRegexReplace/bad")
    out.add("RegexFullMatch", [strings("abab", "ab", "", "aba"), scalar("(ab)*")])
    out.add("RegexFullMatch", [strings("a"), scalar("\\8")], id="RegexFullMatch/bad_pattern")
    out.add("RegexFullMatch", [strings("a"), strings("a")], id="RegexFullMatch/pattern_not_scalar")
    out.add("StaticRegexFullMatch", [strings("a")], {"pattern": "("}, id="StaticRegexFullMatch/bad")
    # hashes
    out.add("StringToHashBucketStrong", [strings("a")], {"num_buckets": 10, "key": [1]}, id="Strong/short_key")
    long_text = strings(*(bytes(range(i % 256)) * (1 + i // 256) for i in range(0, 600, 7)))
    out.add("StringToHashBucket", [long_text], {"num_buckets": 2**62})
    out.add("StringToHashBucketFast", [long_text], {"num_buckets": 2**63 - 1})
    out.add("StringToHashBucketStrong", [long_text], {"num_buckets": 2**63 - 1, "key": [7, -7]})
    method = scalar("farmhash64")
    out.add("Fingerprint", [long_text, method])
    out.add("Fingerprint", [strings([["a", "b"], ["c", "d"]]), method])
    out.add("Fingerprint", [np.empty((2, 0), dtype=object), method], id="Fingerprint/string_rows_empty",
            reference=reference(empty_rows_fingerprint, "TF leaves these rows uninitialised"))
    out.add("Fingerprint", [np.zeros((2, 0), np.float32), method])
    out.add("Fingerprint", [strings("a"), scalar("md5")], id="Fingerprint/bad_method")
    out.add("Fingerprint", [strings("a"), strings("farmhash64")], id="Fingerprint/method_not_scalar")
    out.add("Fingerprint", [scalar("a"), method], id="Fingerprint/scalar_data")


def empty_rows_fingerprint(run_tf: Any, op: str, inputs: list, attrs: dict) -> list:
    """Fingerprint of string rows without elements: TF's value for numeric rows without bytes."""
    data, method = inputs
    return run_tf(op, [np.zeros(np.shape(data), np.float32), method], attrs)
