"""Diagonals and bands: MatrixDiag / MatrixDiagPart / MatrixSetDiag (V1, V2, V3 with ``align``), MatrixBandPart,
Diag, DiagPart, and the deprecated BatchMatrixDiag / BatchMatrixDiagPart / BatchMatrixSetDiag /
BatchMatrixBandPart.

Every kernel is one gather (or a select between a gather and the input): the positions a diagonal reads or
writes are computed on the host from the (small) shapes and ``k``, then applied to the whole batch with
``xp.take``.  Diagonal ``d`` (``k[0] <= d <= k[1]``) of a ``[M, N]`` matrix holds ``diag_len(d) =
min(M + min(d, 0), N - max(d, 0))`` entries; packed into rows of ``max_diag_len`` entries it starts at
``offset = max_diag_len - diag_len(d)`` when it is right-aligned (``align``: superdiagonals right in
``RIGHT_*``, subdiagonals right in ``*_RIGHT``; V2 left-aligns both, V3 defaults to ``RIGHT_LEFT``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, literal, values
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._shape_util import host_ints, merge_dim, merge_shapes
from tfops_py.kernels.linalg._linalg_domains import scalar
from tfops_py.kernels.linalg._linalg_util import batch_of, concat, min_dim
from tfops_py.kernels.registry import KernelContext, register_kernel

CONFORMANCE_FAMILY = "linalg"
D = DataType


# -- geometry (host) ---------------------------------------------------------------------------------
def diag_len(d: int, rows: int, cols: int) -> int:
    return min(rows + min(d, 0), cols - max(d, 0))


def _alignment(align: str | None) -> tuple[bool, bool]:
    """(left-align superdiagonals, left-align subdiagonals); V1/V2 (no ``align``) left-align both."""
    if align is None:
        return True, True
    return align in ("LEFT_LEFT", "LEFT_RIGHT"), align in ("LEFT_LEFT", "RIGHT_LEFT")


def _offset(d: int, max_len: int, rows: int, cols: int, align: str | None) -> int:
    left_super, left_sub = _alignment(align)
    left = (d >= 0 and left_super) or (d <= 0 and left_sub)
    return 0 if left else max_len - diag_len(d, rows, cols)


def part_positions(lo: int, hi: int, rows: int, cols: int, align: str | None) -> tuple[np.ndarray, np.ndarray]:
    """For the packed diagonals ``[hi - lo + 1, max_diag_len]``: flat matrix positions and which are real."""
    max_len = max(min(rows + min(hi, 0), cols - max(lo, 0)), 0)
    d = hi - np.arange(hi - lo + 1)[:, None]  # row m holds diagonal hi - m
    p = np.arange(max_len)[None, :]
    lengths = np.minimum(rows + np.minimum(d, 0), cols - np.maximum(d, 0))
    offsets = np.array([[_offset(int(v), max_len, rows, cols, align)] for v in d[:, 0]]).reshape(d.shape)
    n = p - offsets
    valid = (n >= 0) & (n < lengths)
    flat = (n + np.maximum(-d, 0)) * cols + n + np.maximum(d, 0)
    return np.where(valid, flat, 0), valid


def matrix_positions(lo: int, hi: int, rows: int, cols: int, max_len: int,
                     align: str | None) -> tuple[np.ndarray, np.ndarray]:
    """For a ``[rows, cols]`` matrix: the flat position in the packed diagonals ``[hi - lo + 1, max_len]`` each
    entry comes from, and which entries lie in the band ``lo <= col - row <= hi``."""
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    d = c - r
    inside = (d >= lo) & (d <= hi)
    offsets = np.zeros((rows, cols), np.int64)
    for v in range(max(lo, -rows + 1), min(hi, cols - 1) + 1):
        offsets[d == v] = _offset(v, max_len, rows, cols, align)
    p = r - np.maximum(-d, 0) + offsets
    inside &= (p >= 0) & (p < max_len)
    flat = (hi - d) * max_len + p
    return np.where(inside, flat, 0), inside


def _gather(ctx: KernelContext, x: Any, positions: np.ndarray, inner: int) -> Any:
    """``x``'s innermost ``inner`` dimensions flattened, then taken at ``positions`` (any shape)."""
    xp = ctx.xp
    batch = tuple(x.shape[:x.ndim - inner])
    size = int(np.prod(x.shape[x.ndim - inner:], dtype=np.int64))
    flat = xp.reshape(x, batch + (size,))
    idx = xp.asarray(positions.reshape(-1).astype(np.int64))
    if size == 0:
        return xp.zeros(batch + positions.shape, dtype=x.dtype)
    return xp.reshape(xp.take(flat, idx, axis=-1), batch + positions.shape)


def _pad(ctx: KernelContext, like: Any, padding: Any) -> Any:
    return ctx.xp.broadcast_to(ctx.xp.astype(padding, like.dtype), tuple(like.shape))


# -- reading k, num_rows, num_cols, padding_value (kernels) --------------------------------------------------
def _read_k(ctx: KernelContext, k: Any, empty_message: str) -> tuple[int, int]:
    value = ctx.host(k)
    if value.ndim > 1:
        ctx.invalid_argument(f"diag_index must be a scalar or vector, received shape: {format_shape(value.shape)}")
    if value.size == 0:
        ctx.invalid_argument(empty_message)
    if value.ndim == 1 and value.size > 2:
        ctx.invalid_argument(f"diag_index must have only one or two elements, received {value.size} elements.")
    ks = host_ints(value)
    return ks[0], ks[-1]


def _scalar(ctx: KernelContext, x: Any, message: str) -> Any:
    if len(x.shape) != 0:
        ctx.invalid_argument(message)
    return x


def _check_k_in_matrix(ctx: KernelContext, lo: int, hi: int, rows: int, cols: int, stop: str = ".") -> None:
    """TF's bounds on k (MatrixSetDiag's message lacks the full stop after the lower index)."""
    if not (-rows < lo < cols or lo == 0):
        ctx.invalid_argument(f"lower_diag_index is out of bound: {lo}{stop} It must be between {-rows} and {cols}")
    if not (-rows < hi < cols or hi == 0):
        ctx.invalid_argument(f"upper_diag_index is out of bound: {hi} It must be between {-rows} and {cols}")
    if lo > hi:
        ctx.invalid_argument(f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")


# -- MatrixDiagPart --------------------------------------------------------------------------------------
def _k_of(ctx: InferenceContext, i: int) -> tuple[int, int] | None:
    """``ReadDiagIndex`` at build time: (lo, hi) of a constant ``k``, else None."""
    ctx.with_rank_at_most(ctx.input(i), 1)
    value = ctx.input_tensor(i)
    if value is None:
        return None
    ks = host_ints(value)
    if value.ndim == 1 and len(ks) not in (1, 2):
        ctx.invalid_argument(f"diag_index must be a vector with one or two elements. It has {len(ks)} elements.")
    lo, hi = ks[0], ks[-1]
    if lo > hi:
        ctx.invalid_argument("lower_diag_index is greater than upper_diag_index")
    return lo, hi


def _check_k_bounds(ctx: InferenceContext, lo: int, hi: int, rows: int, cols: int) -> None:
    if rows == -1 or cols == -1:
        return
    if lo != 0 and (-rows >= lo or lo >= cols):
        ctx.invalid_argument("lower_diag_index is out of bound.")
    if hi != 0 and (-rows >= hi or hi >= cols):
        ctx.invalid_argument("upper_diag_index is out of bound.")


@register_shape("MatrixDiagPart")
def _diag_part_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 2)
    if x.unknown_rank():
        return [x]
    return [concat(batch_of(x), min_dim(x[-2], x[-1]))]


@register_shape("MatrixDiagPartV2", "MatrixDiagPartV3")
def _matrix_diag_part_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 2)
    ctx.with_rank_at_most(ctx.input(1), 1)
    ctx.with_rank(ctx.input(2), 0)
    k = _k_of(ctx, 1) if ctx.input(1).IsFullyDefined() else None
    if x.unknown_rank() or k is None:
        return [unknown_shape()]
    lo, hi = k
    rows, cols = x[-2], x[-1]
    _check_k_bounds(ctx, lo, hi, rows, cols)
    max_len = -1 if -1 in (rows, cols) else min(rows + min(hi, 0), cols - max(lo, 0))
    return [concat(batch_of(x), *((hi - lo + 1,) if lo < hi else ()), max_len)]


def diag_part(ctx: KernelContext, x: Any, lo: int, hi: int, padding: Any, align: str | None) -> Any:
    """The packed diagonals ``lo..hi`` of ``x``'s matrices (``[..., max_diag_len]`` for one diagonal)."""
    rows, cols = x.shape[-2], x.shape[-1]
    positions, valid = part_positions(lo, hi, rows, cols, align)
    out = _gather(ctx, x, positions, 2)
    if not valid.all():
        out = ctx.xp.where(ctx.xp.asarray(valid), out, _pad(ctx, out, padding))
    return out if lo < hi else out[..., 0, :]


@register_kernel("MatrixDiagPart", "MatrixDiagPartV2", "MatrixDiagPartV3")
def _matrix_diag_part(ctx: KernelContext, x: Any, k: Any = None, padding_value: Any = None) -> Any:
    lo = hi = 0
    padding = ctx.xp.zeros((), dtype=x.dtype)
    if k is not None:
        lo, hi = _read_k(ctx, k, "Expected diag_index to have at least 1 element")
        padding = _scalar(ctx, padding_value, "Padding must be scalar.")
    if x.ndim < 2:
        ctx.invalid_argument(f"input must be at least 2-dim, received shape: {format_shape(x.shape)}")
    _check_k_in_matrix(ctx, lo, hi, x.shape[-2], x.shape[-1])
    return diag_part(ctx, x, lo, hi, padding, ctx.attrs.get("align"))


# -- MatrixDiag ------------------------------------------------------------------------------------------
@register_shape("MatrixDiag")
def _matrix_diag_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 1)
    return [x if x.unknown_rank() else concat(x, x[-1])]


@register_shape("MatrixDiagV2", "MatrixDiagV3")
def _matrix_diag_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 1)
    ctx.with_rank_at_most(ctx.input(1), 1)
    for i in (2, 3, 4):
        ctx.with_rank(ctx.input(i), 0)
    k = _k_of(ctx, 1) if ctx.input(1).IsFullyDefined() else None
    if x.unknown_rank() or k is None:
        return [unknown_shape()]
    lo, hi = k
    dims = list(x.as_tuple())
    if lo < hi:
        num_diags, other = (dims[-2] if len(dims) >= 2 else -1), dims[-1]
        if num_diags != hi - lo + 1:
            ctx.invalid_argument(f"The number of rows of `diagonal` doesn't match the number of diagonals implied from "
                                 f"`d_lower` and `d_upper`.\nnum_diags = {num_diags}, d_lower = {lo}, d_upper = {hi} "
                                 f"{len(dims)} {other}")
    sizes = [ctx.input_tensor(i) for i in (2, 3)]
    max_len = dims[-1]
    if any(s is None for s in sizes) or max_len == -1:
        return [unknown_shape(len(dims) + (1 if lo == hi else 0))]
    rows, cols = (int(s) for s in sizes)  # type: ignore[arg-type]
    rows, cols = _output_size(ctx, rows, cols, max_len, lo, hi, build=True)
    out = list(dims[:-1] if lo == hi else dims[:-2]) + [rows, cols]
    return [PartialTensorShape(out)]


def _output_size(ctx: Any, rows: int, cols: int, max_len: int, lo: int, hi: int, build: bool) -> tuple[int, int]:
    """num_rows / num_cols with -1 inferred (square when both are), checked against the diagonals' extent."""
    min_rows, min_cols = max_len - min(hi, 0), max_len + max(lo, 0)
    if not build:
        if rows != -1 and rows < min_rows:
            ctx.invalid_argument("The number of rows is too small.")
        if cols != -1 and cols < min_cols:
            ctx.invalid_argument("The number of columns is too small.")
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if build:
        if rows < min_rows:
            ctx.invalid_argument("num_rows is too small")
        if cols < min_cols:
            ctx.invalid_argument("num_cols is too small.")
        if rows != min_rows and cols != min_cols:
            ctx.invalid_argument(f"num_rows and num_cols are not consistent with lower_diag_index, upper_diag_index, "
                                 f"and the length of the given diagonals.\nnum_rows = {rows} != min_num_rows = "
                                 f"{min_rows}, num_cols = {cols} != min_num_cols = {min_cols}")
    elif rows != min_rows and cols != min_cols:
        ctx.invalid_argument("The number of rows or columns is not consistent with the specified d_lower, d_upper, "
                             "and diagonal.")
    return rows, cols


def matrix_diag(ctx: KernelContext, diagonal: Any, lo: int, hi: int, rows: int, cols: int, padding: Any,
                align: str | None) -> Any:
    """Matrices ``[..., rows, cols]`` with the packed diagonals ``lo..hi`` in place, ``padding`` elsewhere."""
    xp = ctx.xp
    packed = diagonal if lo < hi else diagonal[..., None, :]
    max_len = packed.shape[-1]
    positions, inside = matrix_positions(lo, hi, rows, cols, max_len, align)
    out = _gather(ctx, packed, positions, 2)
    if not inside.all():
        out = xp.where(xp.asarray(inside), out, _pad(ctx, out, padding))
    return out


@register_kernel("MatrixDiag", "MatrixDiagV2", "MatrixDiagV3")
def _matrix_diag(ctx: KernelContext, diagonal: Any, k: Any = None, num_rows: Any = None, num_cols: Any = None,
                 padding_value: Any = None) -> Any:
    xp = ctx.xp
    lo = hi = 0
    rows = cols = -1
    padding = xp.zeros((), dtype=diagonal.dtype)
    if k is not None:
        lo, hi = _read_k(ctx, k, "Expected diag_index to have at least 1 element")
        rows = int(ctx.host(_scalar(ctx, num_rows, "num_rows must be a scalar")))
        cols = int(ctx.host(_scalar(ctx, num_cols, "num_cols must be a scalar")))
        padding = _scalar(ctx, padding_value, "padding_value must be a scalar")
    if diagonal.ndim < 1:
        ctx.invalid_argument(f"diagonal must be at least 1-dim, received shape: {format_shape(diagonal.shape)}")
    if lo > hi:
        ctx.invalid_argument(f"lower_diag_index must not be larger than upper_diag_index: {lo} > {hi}")
    if lo != hi and (diagonal.ndim < 2 or diagonal.shape[-2] != hi - lo + 1):
        ctx.invalid_argument("The number of diagonals provided in the input does not match the lower_diag_index and "
                             "upper_diag_index range.")
    rows, cols = _output_size(ctx, rows, cols, diagonal.shape[-1], lo, hi, build=False)
    return matrix_diag(ctx, diagonal, lo, hi, rows, cols, padding, ctx.attrs.get("align"))


# -- MatrixSetDiag ---------------------------------------------------------------------------------------
@register_shape("MatrixSetDiag")
def _set_diag_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 2)
    diag = ctx.with_rank_at_least(ctx.input(1), 1)
    if not x.unknown_rank():
        diag = ctx.with_rank(ctx.input(1), x.dims() - 1)
    merge_dim(ctx, min_dim(x[-2], x[-1]), diag[-1])
    return [_refine_from_diagonal(ctx, x, diag, 1)]


def _refine_from_diagonal(ctx: InferenceContext, x: PartialTensorShape, diag: PartialTensorShape,
                          inner: int) -> PartialTensorShape:
    """The input's shape, with batch dimensions it does not know taken from the diagonal's."""
    if diag.unknown_rank() or x.IsFullyDefined():
        return x
    guess = PartialTensorShape(diag.as_tuple()[:-inner] + (-1, -1))
    return merge_shapes(ctx, x, guess)


@register_shape("MatrixSetDiagV2", "MatrixSetDiagV3")
def _set_diag_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 2)
    diag = ctx.with_rank_at_least(ctx.input(1), 1)
    ctx.with_rank_at_most(ctx.input(2), 1)
    k = _k_of(ctx, 2) if ctx.input(2).IsFullyDefined() else None
    lo, hi = k if k is not None else (0, 0)
    if not x.unknown_rank():
        rank = x.dims()
        if k is not None:
            diag = ctx.with_rank(ctx.input(1), rank - 1 if lo == hi else rank)
        else:
            diag = ctx.with_rank_at_most(ctx.with_rank_at_least(ctx.input(1), rank - 1), rank)
        _check_k_bounds(ctx, lo, hi, x[-2], x[-1])
    return [_refine_from_diagonal(ctx, x, diag, 1 if lo == hi else 2)]


@register_kernel("MatrixSetDiag", "MatrixSetDiagV2", "MatrixSetDiagV3")
def _matrix_set_diag(ctx: KernelContext, x: Any, diagonal: Any, k: Any = None) -> Any:
    """``x`` with the diagonals ``k[0]..k[1]`` replaced by ``diagonal`` (packed as MatrixDiagPart gives them)."""
    lo = hi = 0
    if k is not None:
        lo, hi = _read_k(ctx, k, "diag_index must have at least one element")
    if x.ndim < 2:
        ctx.invalid_argument(f"input must be at least 2-dim, received shape: {format_shape(x.shape)}")
    if diagonal.ndim < 1:
        ctx.invalid_argument(f"diagonal must be at least 1-dim, received shape: {format_shape(diagonal.shape)}")
    rows, cols = x.shape[-2], x.shape[-1]
    _check_k_in_matrix(ctx, lo, hi, rows, cols, stop="")
    num = hi - lo + 1
    if lo != hi and (diagonal.ndim < x.ndim or diagonal.shape[x.ndim - 2] != num):
        ctx.invalid_argument("The number of diagonals provided in `diag` is not consistent with `lower_diag_index` "
                             "and `upper_diag_index`")
    max_len = min(rows + min(hi, 0), cols - max(lo, 0))
    expected = tuple(x.shape[:-2]) + ((num,) if num > 1 else ()) + (max_len,)
    if tuple(diagonal.shape) != expected:
        ctx.invalid_argument("Either first dimensions of diagonal don't match input.shape[:-2], or diagonal.shape[:-1] "
                             "is not equal to the longests diagonal in range [lower_diag_index:upper_diag_index].\n"
                             f"Input shape: {format_shape(x.shape)}\nDiagonal shape: {format_shape(diagonal.shape)}\n"
                             f"Expected diagonal shape: {format_shape(expected)}")
    if x.size == 0:
        return x
    packed = diagonal if lo < hi else diagonal[..., None, :]
    positions, inside = matrix_positions(lo, hi, rows, cols, max_len, ctx.attrs.get("align"))
    return ctx.xp.where(ctx.xp.asarray(inside), _gather(ctx, packed, positions, 2), x)


# -- MatrixBandPart ------------------------------------------------------------------------------------------
register_shape("MatrixBandPart")(lambda ctx: [ctx.input(0)])


def band_mask(rows: int, cols: int, lower: int, upper: int) -> np.ndarray:
    """Entries ``(i, j)`` with ``i - j <= lower`` and ``j - i <= upper`` (a negative bound: no limit)."""
    d = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    return ((lower < 0) | (-d <= lower)) & ((upper < 0) | (d <= upper))


@register_kernel("MatrixBandPart")
def _matrix_band_part(ctx: KernelContext, x: Any, num_lower: Any, num_upper: Any) -> Any:
    """``x`` with the entries outside the band set to zero."""
    if x.ndim < 2:
        ctx.invalid_argument(f"input must be at least 2-dim, received shape: {format_shape(x.shape)}")
    rows, cols = x.shape[-2], x.shape[-1]
    bounds = []
    for value, name, what, size in ((num_lower, "num_lower", "rows", rows), (num_upper, "num_upper", "columns", cols)):
        v = ctx.host(value)
        if v.ndim != 0:
            ctx.invalid_argument(f"{name} must be scalar, got shape {format_shape(v.shape)}")
        b = int(v)
        if b > size:
            ctx.invalid_argument(f"{name} must be negative or less or equal to number of {what} ({size}) got: {b}")
        bounds.append(b)
    mask = band_mask(rows, cols, *bounds)
    if mask.all():
        return x
    xp = ctx.xp
    return xp.where(xp.asarray(mask), x, xp.zeros_like(x))


# -- Diag, DiagPart ------------------------------------------------------------------------------------------
@register_shape("Diag")
def _diag_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.with_rank_at_least(ctx.input(0), 1)
    return [x if x.unknown_rank() else PartialTensorShape(x.as_tuple() * 2)]


@register_kernel("Diag")
def _diag(ctx: KernelContext, diagonal: Any) -> Any:
    """``[d1..dk] -> [d1..dk, d1..dk]``, the input on the diagonal."""
    if diagonal.ndim < 1:
        ctx.invalid_argument(f"Input must be at least rank 1, got {diagonal.ndim}")
    xp = ctx.xp
    n = int(np.prod(diagonal.shape, dtype=np.int64))
    flat = xp.reshape(diagonal, (1, n))
    out = xp.where(xp.eye(n, dtype=xp.bool), xp.broadcast_to(flat, (n, n)), xp.zeros((n, n), dtype=diagonal.dtype))
    return xp.reshape(out, tuple(diagonal.shape) * 2)


@register_shape("DiagPart")
def _diag_part_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = ctx.input(0)
    if x.unknown_rank():
        return [x]
    rank = x.dims()
    if rank % 2 or rank <= 0:
        ctx.invalid_argument(f"Input must have even and non-zero rank, input rank is {rank}")
    mid = rank // 2
    return [PartialTensorShape([merge_dim(ctx, x[i], x[i + mid]) for i in range(mid)])]


@register_kernel("DiagPart")
def _diag_part(ctx: KernelContext, x: Any) -> Any:
    """``[d1..dk, d1..dk] -> [d1..dk]``."""
    rank = x.ndim
    if rank % 2:
        ctx.invalid_argument(f"The rank of the tensor should be {' ' * 41}even and positive, got shape "
                             f"{format_shape(x.shape)}")
    mid = rank // 2
    for i in range(mid):
        if x.shape[i] != x.shape[i + mid]:
            ctx.invalid_argument(f"Invalid shape {format_shape(x.shape)}: dimensions {i} and {i + mid} do not match.")
    out_shape = tuple(x.shape[:mid])
    n = int(np.prod(out_shape, dtype=np.int64))
    return ctx.xp.reshape(_gather(ctx, x, np.arange(n) * (n + 1), rank), out_shape)


# -- conformance -------------------------------------------------------------------------------------------
conformance("MatrixBandPart", num_lower=scalar(-1, 4), num_upper=scalar(-1, 4), live=10,
            cases=[case(input=values(), num_lower=literal(n, D.DT_INT64), num_upper=literal(m, D.DT_INT64),
                        shapes={"input": (3, 4)}, id=f"MatrixBandPart/bounds/{n}/{m}")
                   for n, m in ((5, 1), (1, 5), (3, 4), (-5, -7), (0, 0))]
            + [case(input=values(), num_lower=literal([1], D.DT_INT64), num_upper=literal(1, D.DT_INT64),
                    shapes={"input": (3, 4)}, id="MatrixBandPart/vector_bound")])
conformance("MatrixDiag", live=10)
conformance("MatrixDiagPart", live=10)
conformance("MatrixSetDiag", live=10, shapes=[
    dict(input=(3, 4), diagonal=(3,)), dict(input=(2, 4, 3), diagonal=(2, 3)),
    dict(input=(2, 1, 2, 2), diagonal=(2, 1, 2)),
    dict(input=(0, 3), diagonal=(0,)), dict(input=(2, 0, 3), diagonal=(2, 0)), dict(input=(3, 4), diagonal=(4,)),
    dict(input=(3,), diagonal=(3,)), dict(input=(2, 3, 3), diagonal=(3, 3)), dict(input=(3, 3), diagonal=())])
conformance("Diag", live=10)
conformance("DiagPart", live=10, shapes=[dict(input=s) for s in ((3, 3), (2, 3, 2, 3), (0, 0), (1, 2, 1, 2),
                                                                  (2, 3), (2,), (), (2, 2, 2))])
# V2 and V3 read k, num_rows and num_cols from inputs the diagonals' shapes must agree with: their cases are built
# in _linalg_cases (every alignment, k range and dtype, and TF's errors).
for _op in ("MatrixDiagV2", "MatrixDiagV3", "MatrixDiagPartV2", "MatrixDiagPartV3", "MatrixSetDiagV2",
            "MatrixSetDiagV3"):
    conformance(_op, generate=False)
