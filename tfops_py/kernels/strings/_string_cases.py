"""Hand cases of the strings family: explicit inputs for edge cases and TF's errors."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, reference
from tfops_py.framework.dtypes import DataType


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
    out.add("StringSplitV2", [strings("caf\u00e9", "a ", "a b", " a b  c ", ""), scalar("")], {"maxsplit": 2},
            compare="exact")
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

    # AsString: every attr and its errors
    floats = np.array([1.5, -np.nan, np.nan, np.inf, -np.inf, -0.0, 1e20, 1.23456789e-5, 0.1], np.float32)
    for attrs in ({}, {"shortest": True}, {"scientific": True, "precision": 2, "width": 12, "fill": "0"},
                  {"width": 8, "fill": "-"}, {"precision": 0, "width": 3, "fill": "+"}, {"fill": "#", "shortest": True,
                                                                                         "width": 9}):
        for dtype in (np.float32, np.float64, np.float16):
            out.add("AsString", [floats.astype(dtype)], attrs)
        pairs = floats[:4].astype(np.complex64)
        pairs.imag = floats[4:8]
        out.add("AsString", [pairs], attrs)
    ints = np.array([0, 1, -1, 127, -128], np.int8)
    for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
        info = np.iinfo(dtype)
        out.add("AsString", [np.array([info.min, info.max, 0], dtype)], {"width": 5, "fill": "0"})
    out.add("AsString", [ints.astype(np.int32)], {"width": 4, "fill": " "})
    out.add("AsString", [np.array([True, False])], {"width": 7})
    out.add("AsString", [strings("ab", "", "abcdef")], {"width": 4})
    out.add("AsString", [strings("ab", "", "abcdef")], {"width": 4, "precision": 3, "fill": "-"})
    out.add("AsString", [strings("ab", "abcdef")], {"precision": 3})
    out.add("AsString", [ints], {"precision": 2}, id="AsString/int_precision")
    out.add("AsString", [ints], {"scientific": True}, id="AsString/int_scientific")
    out.add("AsString", [floats], {"fill": "ab", "width": 3}, id="AsString/long_fill")
    out.add("AsString", [floats], {"fill": "x", "width": 3}, id="AsString/bad_fill")
    out.add("AsString", [floats], {"shortest": True, "scientific": True}, id="AsString/both")
    # StringToNumber: what parses for each type, and what does not
    numbers = ["1", " 1", "1 ", "+1", "-0", "00012", "\t5\n", "-1", "2147483647", "-2147483648", "4294967295",
               "9223372036854775807", "18446744073709551615"]
    float_only = ["0x10", "1e3", "1.5", ".5", "5.", "inf", "-Infinity", "nan", "NaN", "INF", "Nan(123)", "0x1p3",
                  "1e400", "1e-400", "3.4028236e38", "1.0e+2", "-0x.8p1"]
    for dtype, ok in ((DataType.DT_FLOAT, numbers + float_only), (DataType.DT_DOUBLE, numbers + float_only),
                      (DataType.DT_INT32, numbers[:10]), (DataType.DT_INT64, numbers[:12]),
                      (DataType.DT_UINT32, [n for n in numbers[:11] if "-" not in n]),
                      (DataType.DT_UINT64, [n for n in numbers if "-" not in n])):
        out.add("StringToNumber", [strings(*ok)], {"out_type": dtype})
    for k, bad in enumerate(["", " ", "1_0", "\uff11", "infx", "0b1", "1,5", "e5", "x"]):
        out.add("StringToNumber", [strings(bad)], {"out_type": DataType.DT_FLOAT}, id=f"StringToNumber/bad{k}")
    for k, (bad, dtype) in enumerate([("2147483648", DataType.DT_INT32), ("-1", DataType.DT_UINT32),
                                      ("-0", DataType.DT_UINT64), ("1.5", DataType.DT_INT64),
                                      ("18446744073709551616", DataType.DT_UINT64)]):
        out.add("StringToNumber", [strings(bad)], {"out_type": dtype}, id=f"StringToNumber/range{k}")
    # base64: round trips of random bytes, TF's padding rules and errors
    rng = out.rng()
    raw = strings(*(rng.integers(0, 256, n).astype(np.uint8).tobytes() for n in range(12)))
    for pad in (False, True):
        out.add("EncodeBase64", [raw], {"pad": pad})
    out.add("DecodeBase64", [strings("-_8", "-_8=", "YQ", "YQ==", "", "YR", "YR==", "YWJj", "YWJjZA")])
    for k, bad in enumerate(["YQ=", "Y", "Y===", "YQ==YQ==", "+/8=", "Y Q", "YQ\n", "====", "YQ=x", "!", "AAAA!",
                             "!AAAA"]):
        out.add("DecodeBase64", [strings(bad)], id=f"DecodeBase64/bad{k}")

    # Substr
    for dtype in (np.int32, np.int64):
        out.add("Substr", [strings("hello", "abc"), np.array([1, -2], dtype), np.array([2, 5], dtype)])
        out.add("Substr", [strings([["hello"], ["abc"]]), np.array([0, 1], dtype), np.array([1, 2], dtype)])
    out.add("Substr", [strings("hello", "abc"), np.int32(1), np.int32(2)])
    out.add("Substr", [strings("abc", ""), np.int32(0), np.int32(-1)])
    out.add("Substr", [strings("abc"), np.int32(3), np.int32(2)])
    out.add("Substr", [strings("hello"), np.array([1], np.int32), np.array([-1], np.int32)])
    utf8 = strings("h\u00e9llo", b"\xff\xfeab", "\U0001f600x")
    out.add("Substr", [utf8, np.int32(1), np.int32(2)], {"unit": "UTF8_CHAR"})
    out.add("Substr", [utf8, np.int32(-2), np.int32(5)], {"unit": "UTF8_CHAR"})
    out.add("Substr", [utf8, np.int32(1), np.int32(2)], {"unit": "BYTE"})
    for pos, length in ((1, -1), (0, -1), (-2, 0), (-1, 5), (-4, 3), (-3, -1), (4, 0)):
        for unit in ("BYTE", "UTF8_CHAR"):
            out.add("Substr", [strings("h\u00e9llo"), np.int32(pos), np.int32(length)], {"unit": unit},
                    id=f"Substr/{unit}/{pos}/{length}")
    out.add("Substr", [strings("hello", "abc"), np.array([1, 4], np.int32), np.array([2, 5], np.int32)],
            id="Substr/pos_out_of_range")
    out.add("Substr", [strings("hello", "abc"), np.array([1, -4], np.int32), np.array([2, 5], np.int32)],
            id="Substr/pos_negative_out_of_range")
    out.add("Substr", [strings("h\u00e9llo"), np.int32(6), np.int32(5)], {"unit": "UTF8_CHAR"},
            id="Substr/utf8_out_of_range")
    out.add("Substr", [strings("hello"), np.array([1, 2], np.int32), np.array([1], np.int32)],
            id="Substr/pos_len_shapes")
    out.add("Substr", [strings("hello", "a", "b"), np.array([1, 2], np.int32), np.array([1, 2], np.int32)],
            id="Substr/incompatible")
    out.add("Substr", [strings("ab", "abc"), np.array([5], np.int32), np.array([1], np.int32)], id="Substr/bcast1")
    matrix = strings([["ab", "abc"]])
    for unit in ("BYTE", "UTF8_CHAR"):
        out.add("Substr", [matrix, np.array([[0], [5]], np.int32), np.array([[1], [1]], np.int32)], {"unit": unit},
                id=f"Substr/bcast2/{unit}")

    # UnsortedSegmentJoin
    table = strings([["a", "b"], ["c", "d"], ["e", "f"]])
    out.add("UnsortedSegmentJoin", [table, np.array([1, 0, 1], np.int32), np.int32(3)], {"separator": ":"})
    out.add("UnsortedSegmentJoin", [table, np.array([[0, 1], [1, 0], [0, 0]], np.int64), np.int64(2)],
            {"separator": ","})
    out.add("UnsortedSegmentJoin", [strings("x", "y"), np.array([0, 0], np.int32), np.int32(1)])
    for k, (ids, num) in enumerate([([1, -1, 1], 2), ([1, 5, 1], 2), ([0, 1, 0], 0), ([0, 1, 0], -1)]):
        out.add("UnsortedSegmentJoin", [table, np.array(ids, np.int32), np.int32(num)],
                id=f"UnsortedSegmentJoin/bad{k}")
    out.add("UnsortedSegmentJoin", [table, np.array([0, 1], np.int32), np.int32(2)],
            id="UnsortedSegmentJoin/prefix")
    out.add("UnsortedSegmentJoin", [table, np.array([0, 1, 0], np.int32), np.array([2], np.int32)],
            id="UnsortedSegmentJoin/num_not_scalar")
    out.add("UnsortedSegmentJoin", [scalar("a"), np.int32(0), np.int32(2)], id="UnsortedSegmentJoin/scalar_ids")

    # DecodeRaw, DecodePaddedRaw: every output type, both byte orders, TF's errors
    raw16 = strings(*(rng.integers(0, 256, 16).astype(np.uint8).tobytes() for _ in range(6))).reshape(2, 3)
    raw_types = (DataType.DT_HALF, DataType.DT_FLOAT, DataType.DT_DOUBLE, DataType.DT_INT32, DataType.DT_UINT16,
                 DataType.DT_UINT8, DataType.DT_INT16, DataType.DT_INT8, DataType.DT_INT64, DataType.DT_COMPLEX64,
                 DataType.DT_COMPLEX128, DataType.DT_BOOL, DataType.DT_BFLOAT16)
    for dtype in raw_types:
        for little in (True, False):
            out.add("DecodeRaw", [raw16], {"out_type": dtype, "little_endian": little}, compare="exact")
            if dtype not in (DataType.DT_COMPLEX64, DataType.DT_COMPLEX128, DataType.DT_BOOL):
                out.add("DecodePaddedRaw", [strings(b"\x01\x02\x03", b"", b"\xff" * 20), np.int32(8)],
                        {"out_type": dtype, "little_endian": little}, compare="exact")
    out.add("DecodeRaw", [np.empty((2, 0), dtype=object)], {"out_type": DataType.DT_FLOAT})
    out.add("DecodeRaw", [strings(b"", b"")], {"out_type": DataType.DT_INT32})
    out.add("DecodeRaw", [strings(b"abcd", b"abc")], {"out_type": DataType.DT_UINT8}, id="DecodeRaw/sizes")
    out.add("DecodeRaw", [strings(b"abc", b"def")], {"out_type": DataType.DT_INT16}, id="DecodeRaw/multiple")
    out.add("DecodePaddedRaw", [strings(b"abc"), np.int32(3)], {"out_type": DataType.DT_INT16},
            id="DecodePaddedRaw/multiple")
    out.add("DecodePaddedRaw", [strings(b"abc"), np.int32(-2)], {"out_type": DataType.DT_INT16},
            id="DecodePaddedRaw/negative")
    out.add("DecodePaddedRaw", [strings(b"abc"), np.int32(0)], {"out_type": DataType.DT_INT16})


def empty_rows_fingerprint(run_tf: Any, op: str, inputs: list, attrs: dict) -> list:
    """Fingerprint of string rows without elements: TF's value for numeric rows without bytes."""
    data, method = inputs
    return run_tf(op, [np.zeros(np.shape(data), np.float32), method], attrs)
