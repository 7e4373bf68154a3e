"""Joining, splitting and reshaping text: StringJoin, ReduceJoin, StringSplit, StringSplitV2, StringStrip,
StringLower, StringUpper, StringLength.

Strings are bytes: splitting on whitespace and stripping use ASCII whitespace (`` \\t\\n\\v\\f\\r``) as TF
does; ``encoding="utf-8"`` case mapping uses Python's full Unicode case mapping (TF uses ICU's root
locale: the same mappings, ``ß`` upper-cases to ``SS``), with each malformed byte read as U+FFFD.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from tfops_py.conformance import BOOL, choice, conformance, family_cases, one_of, reduction_axes, text, values
from tfops_py.errors import OutOfRangeError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._common import unchanged_shape
from tfops_py.kernels._shape_util import merge_shapes
from tfops_py.kernels.math.segment_ops import unsorted_segment_shape
from tfops_py.kernels.math.reduction_ops import _reduction_shape as reduction_shape
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.strings._text import (attr_bytes, flat_strings, map_strings, string_array,
                                             utf8_char_counts)

CONFORMANCE_FAMILY = "strings"


# -- StringJoin ------------------------------------------------------------------------------------------
@register_shape("StringJoin")
def _string_join_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    shapes = [ctx.input(i) for i in range(ctx.num_inputs)]
    if all(s.dims() == 0 for s in shapes):
        return [PartialTensorShape([])]
    out = unknown_shape()
    for s in shapes:
        if not s.unknown_rank() and s.dims() != 0:  # unknown ranks may be scalars
            out = merge_shapes(ctx, out, s)
    return [out]


@register_kernel("StringJoin", host=True)
def _string_join(ctx: KernelContext, inputs: list[Any]) -> Any:
    shape: tuple[int, ...] = ()
    for x in inputs:
        if np.ndim(x):
            if shape and tuple(x.shape) != shape:
                ctx.invalid_argument(f"Input shapes do not match: {format_shape(shape)} vs. {format_shape(x.shape)}")
            shape = tuple(x.shape)
    n = int(np.prod(shape, dtype=np.int64))
    columns = [flat_strings(x) if np.ndim(x) else itertools.repeat(x[()], n) for x in inputs]
    sep = attr_bytes(ctx, "separator")
    return string_array([sep.join(row) for row in zip(*columns)] if columns else [], shape)


conformance("StringJoin", inputs=text(), separator=one_of("", " ", "--"), N=one_of(1, 2, 3),
            shapes=[{"inputs": ()}, {"inputs": (3,)}, {"inputs": (2, 0)}, {"inputs": (2, 3)}])


# -- ReduceJoin --------------------------------------------------------------------------------------------
@register_shape("ReduceJoin")
def _reduce_join_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    """TF's ReductionShape: repeated axes are not a build-time error (the kernel reports them)."""
    x = ctx.input(0)
    ctx.with_rank_at_most(ctx.input(1), 1)
    keep = ctx.attr("keep_dims")
    value = ctx.input_tensor(1)
    if value is None or x.unknown_rank():
        return list(reduction_shape(ctx))  # the math family's ReductionShape, for what is not known yet
    rank = x.dims()
    axes = set()
    for a in np.asarray(value).reshape(-1).tolist():
        if not -rank <= a < rank:
            ctx.invalid_argument(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        axes.add(a % rank)
    dims = x.as_tuple()
    return [PartialTensorShape([1 if i in axes else d for i, d in enumerate(dims)] if keep else
                               [d for i, d in enumerate(dims) if i not in axes])]


@register_kernel("ReduceJoin", host=True)
def _reduce_join(ctx: KernelContext, inputs: Any, reduction_indices: Any) -> Any:
    """The first listed axis varies fastest within each joined group (TF's order)."""
    x = np.asarray(inputs, dtype=object)
    rank = x.ndim
    axes: list[int] = []
    for a in np.asarray(ctx.host(reduction_indices)).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise ctx.error(OutOfRangeError, f"Invalid reduction dimension {a} for input with {rank} dimension(s)")
        if a % rank in axes:
            ctx.invalid_argument(f"Duplicate reduction dimension {a}")
        axes.append(a % rank)
    kept = [d for d in range(rank) if d not in axes]
    out_dims = [1 if d in axes else x.shape[d] for d in range(rank)] if ctx.attrs["keep_dims"] else \
        [x.shape[d] for d in kept]
    groups = int(np.prod([x.shape[d] for d in kept], dtype=np.int64))
    rows = np.transpose(x, kept + axes[::-1]).reshape(groups, x.size // groups if groups else 0)
    sep = attr_bytes(ctx, "separator")
    return string_array([sep.join(row) for row in rows.tolist()], out_dims)


conformance("ReduceJoin", inputs=text(), reduction_indices=reduction_axes("inputs"), keep_dims=BOOL,
            separator=one_of("", " "), shapes=[{"inputs": s} for s in ((), (3,), (2, 3), (2, 0, 3), (2, 3, 2))])


# -- StringSplit, StringSplitV2 -----------------------------------------------------------------------------
def _split_shapes(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 1)
    ctx.with_rank(ctx.input(1), 0)
    return [PartialTensorShape([-1, 2]), PartialTensorShape([-1]), PartialTensorShape([2])]


register_shape("StringSplit", "StringSplitV2")(_split_shapes)


def sparse_from_rows(ctx: KernelContext, rows: list[list[bytes]]) -> tuple[Any, Any, Any]:
    """(indices, values, dense_shape) of a SparseTensor holding row ``i``'s tokens at ``[i, 0..]``."""
    counts = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    return sparse_from_counts(ctx, counts, list(itertools.chain.from_iterable(rows)))


def sparse_from_counts(ctx: KernelContext, counts: np.ndarray, tokens: list[bytes]) -> tuple[Any, Any, Any]:
    """The SparseTensor of ``tokens`` (row-major), ``counts[i]`` of them in row ``i``."""
    total = len(tokens)
    starts = np.cumsum(counts) - counts
    row_ids = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    indices = np.stack([row_ids, np.arange(total, dtype=np.int64) - starts[row_ids]], axis=1)
    shape = np.array([len(counts), int(counts.max()) if len(counts) else 0], dtype=np.int64)
    values = string_array(tokens, (total,))
    return ctx.asarray(indices.reshape(total, 2), DataType.DT_INT64), values, ctx.asarray(shape, DataType.DT_INT64)


_ASCII_SPACE = np.zeros(256, dtype=bool)
_ASCII_SPACE[list(b" \t\n\v\f\r")] = True


def _whitespace_token_counts(items: list[bytes]) -> np.ndarray:
    """Per string, its number of runs of non-whitespace bytes (the tokens of ``bytes.split()``)."""
    space = _ASCII_SPACE[np.frombuffer(b" ".join(items), dtype=np.uint8)]
    first = ~space
    first[1:] &= space[:-1]
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    row_starts = np.cumsum(lengths + 1) - (lengths + 1)
    rows = np.searchsorted(row_starts, np.flatnonzero(first), side="right") - 1
    return np.bincount(rows, minlength=len(items)).astype(np.int64)


def _check_vector_and_scalar(ctx: KernelContext, x: Any, sep: Any, sep_name: str) -> None:
    if np.ndim(x) != 1:
        ctx.invalid_argument(f"input must be a vector, got shape: {format_shape(np.shape(x))}")
    if np.ndim(sep) != 0:
        ctx.invalid_argument(f"{sep_name} must be a scalar, got shape: {format_shape(np.shape(sep))}")


@register_kernel("StringSplitV2", host=True)
def _string_split_v2(ctx: KernelContext, input: Any, sep: Any) -> tuple[Any, Any, Any]:
    _check_vector_and_scalar(ctx, input, sep, "sep")
    maxsplit = int(ctx.attrs["maxsplit"])
    items = flat_strings(input)
    if maxsplit == 0:  # every string is one token, as it is (even empty, even in whitespace mode)
        return sparse_from_rows(ctx, [[s] for s in items])
    delimiter = sep[()] or None  # empty: runs of ASCII whitespace, empty tokens dropped (bytes.split(None))
    if maxsplit < 0 and items and (delimiter is None or len(delimiter) == 1):
        # Whole tensor at once: joined on a byte that splits, one split yields every row's tokens in order
        tokens = (delimiter or b" ").join(items).split(delimiter)
        counts = _whitespace_token_counts(items) if delimiter is None else \
            np.fromiter(map(bytes.count, items, itertools.repeat(delimiter)), np.int64, len(items)) + 1
        return sparse_from_counts(ctx, counts, tokens)
    rows = [s.split(delimiter, maxsplit) for s in items]
    if delimiter is None and maxsplit > 0:  # TF keeps the (empty) rest once maxsplit tokens are taken
        rows = [row + [b""] if len(row) == maxsplit else row for row in rows]
    return sparse_from_rows(ctx, rows)


@register_kernel("StringSplit", host=True)
def _string_split(ctx: KernelContext, input: Any, delimiter: Any) -> tuple[Any, Any, Any]:
    _check_vector_and_scalar(ctx, input, delimiter, "delimiter")
    skip_empty = bool(ctx.attrs["skip_empty"])
    chars = delimiter[()]
    items = flat_strings(input)
    if not chars:  # every byte is a token
        rows = [[s[i:i + 1] for i in range(len(s))] for s in items]
    else:  # any byte of the delimiter splits: map them all to the first one
        table = bytes.maketrans(chars, chars[:1] * len(chars))
        rows = [s.translate(table).split(chars[:1]) if s else [] for s in items]  # an empty string has no tokens
    if skip_empty:
        rows = [[t for t in row if t] for row in rows]
    return sparse_from_rows(ctx, rows)


_SPLIT_SHAPES = [{"input": (4,)}, {"input": (0,)}, {"input": (1,)}]
conformance("StringSplitV2", input=text(), sep=choice(b"", b" ", b"a", b"  "), maxsplit=one_of(-1, 0, 1, 2),
            shapes=_SPLIT_SHAPES, compare="exact")
conformance("StringSplit", input=text(), delimiter=choice(b"", b" ", b"a.", b" x"), skip_empty=BOOL,
            shapes=_SPLIT_SHAPES, compare="exact")


# -- StringStrip, StringLower, StringUpper, StringLength ------------------------------------------------------
register_shape("StringStrip", "StringLower", "StringUpper", "StringLength")(unchanged_shape)


@register_kernel("StringStrip", host=True)
def _string_strip(ctx: KernelContext, input: Any) -> Any:
    return map_strings(bytes.strip, input)


def _case_mapper(ascii_fn: Any, unicode_fn: Any) -> Any:
    def kernel(ctx: KernelContext, input: Any) -> Any:
        encoding = ctx.attrs["encoding"]
        if encoding == "":
            return map_strings(ascii_fn, input)
        if encoding.lower() not in ("utf-8", "utf8"):
            ctx.invalid_argument(f"only utf-8 or '' (no encoding) is supported, received {encoding}")
        return map_strings(lambda s: unicode_fn(s.decode("utf-8", "replace")).encode("utf-8"), input)

    return kernel


register_kernel("StringLower", host=True)(_case_mapper(bytes.lower, str.lower))
register_kernel("StringUpper", host=True)(_case_mapper(bytes.upper, str.upper))


@register_kernel("StringLength", host=True)
def _string_length(ctx: KernelContext, input: Any) -> Any:
    items = flat_strings(input)
    if ctx.attrs["unit"] == "BYTE":
        lengths = np.fromiter(map(len, items), dtype=np.int32, count=len(items))
    else:
        lengths = utf8_char_counts(items).astype(np.int32)
    return ctx.asarray(lengths.reshape(np.shape(input)), DataType.DT_INT32)


_TEXT_SHAPES = [{"input": ()}, {"input": (5,)}, {"input": (2, 0)}, {"input": (2, 3)}]
conformance("StringStrip", input=text(), shapes=_TEXT_SHAPES)
conformance("StringLower", input=text(invalid=True), encoding=one_of("", "utf-8"), shapes=_TEXT_SHAPES)
conformance("StringUpper", input=text(invalid=True), encoding=one_of("", "utf-8"), shapes=_TEXT_SHAPES)
conformance("StringLength", input=text(invalid=True), unit=one_of("BYTE", "UTF8_CHAR"), shapes=_TEXT_SHAPES)
family_cases("tfops_py.kernels.strings._string_cases:build")


# -- UnsortedSegmentJoin ---------------------------------------------------------------------------------------
register_shape("UnsortedSegmentJoin")(unsorted_segment_shape)  # TF's UnsortedSegmentReductionShapeFn


@register_kernel("UnsortedSegmentJoin", host=True)
def _unsorted_segment_join(ctx: KernelContext, inputs: Any, segment_ids: Any, num_segments: Any) -> Any:
    """Row ``j`` joins, element by element, the rows of ``inputs`` whose id is ``j``, in index order."""
    n = np.asarray(ctx.host(num_segments))
    if n.ndim != 0:
        ctx.invalid_argument("Number of segments must be a scalar")
    ids = np.asarray(ctx.host(segment_ids)).astype(np.int64)
    if ids.ndim == 0:
        ctx.invalid_argument("Segment_id cannot have rank 0")
    x = np.asarray(inputs, dtype=object)
    for i, (a, b) in enumerate(zip(ids.shape, x.shape)):
        if a != b:
            # TF's message names the segment dimension twice (its text, kept as users see it)
            ctx.invalid_argument(f"Segment dimension is {a} while input dimension is {a} in rank {i}")
    if ids.ndim > x.ndim:
        ctx.invalid_argument(f"Segment_id rank {ids.ndim} is larger than input rank {x.ndim}")
    rows = int(n)
    if rows < 0:
        ctx.invalid_argument(f"Number of segments must be non-negative but got {rows}")
    flat_ids = ids.reshape(-1)
    if flat_ids.size and (flat_ids.min() < 0 or flat_ids.max() >= rows):
        ctx.invalid_argument("segment_ids are not allowed to exceed num_segments or to have negative values.")
    inner = x.shape[ids.ndim:]
    k = int(np.prod(inner, dtype=np.int64))
    order = np.argsort(flat_ids, kind="stable")
    grouped = x.reshape(flat_ids.size, k)[order].T.tolist()  # per column, the rows in segment order
    bounds = np.searchsorted(flat_ids[order], np.arange(rows + 1)).tolist()
    sep = attr_bytes(ctx, "separator")
    joined = [sep.join(column[bounds[j]:bounds[j + 1]]) for j in range(rows) for column in grouped] if k else []
    return string_array(joined, (rows,) + inner)


conformance("UnsortedSegmentJoin", inputs=text(), segment_ids=values("small"), num_segments=choice(4, 9),
            separator=one_of("", ","),
            shapes=[{"inputs": (3,), "segment_ids": (3,)}, {"inputs": (3, 2), "segment_ids": (3,)},
                    {"inputs": (2, 3), "segment_ids": (2, 3)}, {"inputs": (0, 2), "segment_ids": (0,)}])
