"""FractionalAvgPool, FractionalMaxPool and their gradients: shape functions, TF's checks, kernels.

The pooling sequences are TF 2.21's, bit for bit (``_philox`` + ``_fractional_pool_impl``); they are
host values, computed once per plan and input size when ``deterministic`` is set, on every run
otherwise.  A sequence gives, per axis, cells ``[seq[i], seq[i+1] - 1]`` (``seq[i+1]`` when
overlapping) clamped to the input, so pooling is a fixed sparse linear map per axis: the kernels
gather the few input rows (columns) of each cell with ``take`` rather than multiplying by 0/1
matrices, so that an inf or NaN stays in its own cell.

Checks follow TF's kernels (``fractional_avg_pool_op.cc``, ``fractional_max_pool_op.cc``) and run at
build time wherever shapes or constant inputs are known.  Where TF reads or writes out of bounds,
these kernels refuse the input (docs/ops/fractional_pool.md, "Divergences from TF").
"""
from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np

from tfops_py.errors import ResourceExhaustedError, UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels.nn import _fractional_pool_impl as impl
from tfops_py.kernels.nn._fractional_pool_impl import Cells, Coverage
from tfops_py.kernels._philox import fresh_seeds
from tfops_py.kernels.registry import KernelContext, register_kernel

Dims = Optional[tuple[int, ...]]  # None: unknown rank; -1: unknown dimension
Ctx = Union[InferenceContext, KernelContext]
_I64 = DataType.DT_INT64
_DIM_NAMES = ("Batch", "Rows", "Columns", "Depth")
_SEQ_CACHE_LIMIT = 64


# -- checks shared by shape functions (partial facts) and kernels (concrete facts) --------------------
def _dims(shape: PartialTensorShape) -> Dims:
    return None if shape.unknown_rank() else shape.as_tuple()


def _shape_str(d: Dims) -> str:
    return str(PartialTensorShape(d))


def check_pool_attrs(ctx: Ctx, attrs: dict[str, Any], kind: str) -> list[float]:
    """TF's constructor checks of FractionalAvgPool / FractionalMaxPool; returns the pooling ratio."""
    ratio = list(attrs["pooling_ratio"])
    if len(ratio) != 4:
        ctx.invalid_argument("pooling_ratio field must specify 4 dimensions")
    for r in ratio:
        if not r >= 1:  # NaN fails too
            ctx.invalid_argument(f"pooling_ratio cannot be smaller than 1, got: {r:g}")
    if not (ratio[0] == 1 and ratio[3] == 1):
        raise ctx.error(UnimplementedError,
                        f"Fractional {kind} pooling is not yet supported on the batch nor channel dimension.")
    if not attrs["deterministic"] and (attrs["seed"] != 0 or attrs["seed2"] != 0):
        ctx.invalid_argument("Both seed and seed2 should be 0 if deterministic is false.")
    return ratio


def check_pool_input(ctx: Ctx, x: Dims, ratio: list[float]) -> Dims:
    """Rank and size checks of the input; returns the output dims (-1 where unknown)."""
    if x is None:
        return None
    if len(x) != 4:
        ctx.invalid_argument("tensor_in must be 4-dimensional")
    out = []
    for i, (d, r) in enumerate(zip(x, ratio)):
        if d == -1:
            out.append(-1)
            continue
        if not np.float32(d) >= np.float32(r):
            ctx.invalid_argument(f"Pooling ratio is higher than input dimension size for dimension {i}. "
                                 f"Input dim size: {d} pooling ratio: {r:g}")
        out.append(impl.output_size(d, r))
    return tuple(out)


def _format_seq(seq: np.ndarray) -> str:
    """A flat int64 tensor as TF prints it (Eigen: right-aligned to the widest value)."""
    text = [str(int(v)) for v in seq]
    width = max((len(t) for t in text), default=0)
    return " ".join(t.rjust(width) for t in text)


def check_sequences(ctx: Ctx, row_seq: np.ndarray, col_seq: np.ndarray, n_rows: int, n_cols: int,
                    rows_in: int, cols_in: int, overlapping: bool, nonempty: bool) -> tuple[Cells, Cells]:
    """Sequence values: TF's sign check (its order: row cell 0, then every column cell, then the
    other rows), then ours: non-decreasing, ending inside the input, and (max pooling) no empty cell."""
    rows = impl.cells(row_seq, n_rows, rows_in, overlapping)
    cols = impl.cells(col_seq, n_cols, cols_in, overlapping)
    row_neg = (rows.start < 0) | (rows.end < 0)
    col_neg = (cols.start < 0) | (cols.end < 0)
    row_msg = f"Row sequence tensor values must not be negative, got {_format_seq(row_seq)}"
    if row_neg[:1].any():
        ctx.invalid_argument(row_msg)
    if col_neg.any():
        ctx.invalid_argument(f"Column sequence tensor values must not be negative, got {_format_seq(col_seq)}")
    if row_neg.any():
        ctx.invalid_argument(row_msg)
    for name, seq, c, n, size in (("row", row_seq, rows, n_rows, rows_in), ("col", col_seq, cols, n_cols, cols_in)):
        used = seq[: n + 1]
        if (np.diff(used) < 0).any():
            ctx.invalid_argument(f"{name}_pooling_sequence must be non-decreasing, got {_format_seq(used)}")
        if used[-1] > size:
            ctx.invalid_argument(f"{name}_pooling_sequence must end inside the input (at most {size}), "
                                 f"got {_format_seq(used)}")
        if nonempty and (c.end < c.start).any():
            i = int(np.argmax(c.end < c.start))
            ctx.invalid_argument(f"{name}_pooling_sequence {_format_seq(used)} leaves pooling cell {i} empty")
    return rows, cols


def check_avg_grad(ctx: Ctx, shape_dims: Dims, orig: Any, dy: Dims,
                   row_len: int, col_len: int) -> Dims:
    """TF's FractionalAvgPoolGrad checks up to the sequence values, plus ours on batch and depth.

    ``orig`` is the value of orig_input_tensor_shape when known; returns the input dims.
    """
    if shape_dims is not None and (len(shape_dims) != 1 or shape_dims[0] not in (4, -1)):
        ctx.invalid_argument("original input tensor shape must be1-dimensional and 4 elements")
    if dy is not None:
        if len(dy) != 4:
            ctx.invalid_argument("out_backprop must be 4-dimensional")
        for d in dy:
            if d == 0:  # TF: "must be positive"; a dim can only be 0 here
                ctx.invalid_argument(f"out_backprop must be positive for all dimension, got:{d}")
        for name, i, n in (("row", 1, row_len), ("col", 2, col_len)):
            if dy[i] != -1 and n != -1 and n <= dy[i]:
                ctx.invalid_argument(f"Given out_backprop shape {_shape_str(dy)}, {name}_seq_tensor must have "
                                     f"at least {dy[i] + 1} elements, but got {n}")
    if orig is None:
        return (-1,) * 4
    orig = [int(v) for v in np.asarray(orig).reshape(-1)]
    for name, v in zip(_DIM_NAMES, orig):
        if v == 0:
            ctx.invalid_argument(f"{name} dimension of input must not be 0")
    total = 1
    for v in orig:
        if v < 0:
            ctx.invalid_argument(f"Expected a non-negative size, got {v}")
        if total * v > (1 << 63) - 1:
            ctx.invalid_argument(f"Encountered overflow when multiplying {total} with {v}, result: -1")
        total *= v
    if dy is not None:
        for name, i in (("batch", 0), ("depth", 3)):
            if dy[i] > orig[i]:
                ctx.invalid_argument(f"out_backprop {name} {dy[i]} exceeds the {name} {orig[i]} of "
                                     f"orig_input_tensor_shape {format_shape(orig)}")
    return tuple(orig)


def check_max_grad(ctx: Ctx, x: Dims, y: Dims, dy: Dims, row: Dims, col: Dims) -> None:
    """TF's FractionalMaxPoolGrad shape checks, plus ours where TF reads or writes out of bounds."""
    for name, d in (("orig_input", x), ("orig_output", y)):
        if d is None:
            continue
        if len(d) != 4:
            ctx.invalid_argument(f"{name} should be a tensor of rank 4, got shape {_shape_str(d)}")
        if 0 in d:
            ctx.invalid_argument(f"{name} must not be empty, got shape {_shape_str(d)}")
    for name, d in (("row_pooling_sequence", row), ("col_pooling_sequence", col)):
        if d is not None and len(d) != 1:
            ctx.invalid_argument(f"{name} must be a vector, received shape {_shape_str(d)}")
    if y is not None and dy is not None and not PartialTensorShape(y).is_compatible_with(dy):
        ctx.invalid_argument(f"out_backprop must have the shape of orig_output {_shape_str(y)}, "
                             f"got {_shape_str(dy)}")
    if y is None:
        return
    if x is not None:
        for name, i in (("batch", 0), ("depth", 3)):
            if -1 not in (x[i], y[i]) and x[i] != y[i]:
                ctx.invalid_argument(f"orig_output {name} {y[i]} differs from the orig_input {name} {x[i]}")
    for name, d, i in (("row_pooling_sequence", row, 1), ("col_pooling_sequence", col, 2)):
        if d is not None and -1 not in (d[0], y[i]) and d[0] != y[i] + 1:
            ctx.invalid_argument(f"{name} must have orig_output.dim_size({i}) + 1 = {y[i] + 1} elements, "
                                 f"got {d[0]}")


# -- shape functions ------------------------------------------------------------------------------------
def _pool_shape(kind: str):
    def shape_fn(ctx: InferenceContext) -> list[PartialTensorShape]:
        ratio = check_pool_attrs(ctx, ctx.attrs, kind)
        out = check_pool_input(ctx, _dims(ctx.input(0)), ratio)
        if out is None:
            return [PartialTensorShape([-1] * 4), PartialTensorShape([-1]), PartialTensorShape([-1])]
        # TF's shape function says [out]; the kernel returns out + 1 entries (the cell boundaries).
        seq = [PartialTensorShape([-1 if d == -1 else d + 1]) for d in out[1:3]]
        return [PartialTensorShape(out), *seq]

    return shape_fn


register_shape("FractionalAvgPool")(_pool_shape("average"))
register_shape("FractionalMaxPool")(_pool_shape("max"))


def _seq_len(ctx: InferenceContext, i: int) -> int:
    d = _dims(ctx.input(i))
    return -1 if d is None or -1 in d else int(np.prod(d, dtype=np.int64))


@register_shape("FractionalAvgPoolGrad")
def _avg_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    dy = _dims(ctx.input(1))
    orig = ctx.input_tensor(0)
    dims = check_avg_grad(ctx, _dims(ctx.input(0)), orig, dy, _seq_len(ctx, 2), _seq_len(ctx, 3))
    row_seq, col_seq = ctx.input_tensor(2), ctx.input_tensor(3)
    if orig is not None and dy is not None and -1 not in dy and row_seq is not None and col_seq is not None:
        check_sequences(ctx, np.ravel(row_seq), np.ravel(col_seq), dy[1], dy[2], dims[1], dims[2],
                        ctx.attr("overlapping"), nonempty=False)
    return [PartialTensorShape(dims)]


@register_shape("FractionalMaxPoolGrad")
def _max_grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    x = _dims(ctx.input(0))
    check_max_grad(ctx, x, *(_dims(ctx.input(i)) for i in range(1, 5)))
    return [PartialTensorShape(x if x is not None else [-1] * 4)]


# -- sequences per run ----------------------------------------------------------------------------------
def _sequences(ctx: KernelContext, rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """TF draws fresh sequences per Compute; with ``deterministic`` they depend only on the input size,
    so they are kept per plan.  Zero seeds with ``deterministic`` are replaced once per plan (TF: once
    per kernel instance)."""
    a = ctx.attrs
    if not a["deterministic"]:
        return impl.pooling_sequences(rows, cols, a["pooling_ratio"], a["pseudo_random"], 0, 0)
    seeds = ctx.cache.get("seeds")
    if seeds is None:  # setdefault: concurrent first runs of a plan agree on the seeds
        drawn = (a["seed"], a["seed2"]) if (a["seed"], a["seed2"]) != (0, 0) else fresh_seeds()
        seeds = ctx.cache.setdefault("seeds", drawn)
    store = ctx.cache.setdefault("sequences", {})
    seqs = store.get((rows, cols))
    if seqs is None:
        seqs = impl.pooling_sequences(rows, cols, a["pooling_ratio"], a["pseudo_random"], *seeds)
        if len(store) < _SEQ_CACHE_LIMIT:
            store[(rows, cols)] = seqs
    return seqs


def _prepare_pool(ctx: KernelContext, x: Any, kind: str) -> tuple[Cells, Cells, Any, Any]:
    ratio = check_pool_attrs(ctx, ctx.attrs, kind)
    check_pool_input(ctx, tuple(int(d) for d in x.shape), ratio)
    row_seq, col_seq = _sequences(ctx, int(x.shape[1]), int(x.shape[2]))
    overlapping = ctx.attrs["overlapping"]
    rows = impl.cells(row_seq, len(row_seq) - 1, int(x.shape[1]), overlapping)
    cols = impl.cells(col_seq, len(col_seq) - 1, int(x.shape[2]), overlapping)
    return rows, cols, ctx.asarray(row_seq, _I64), ctx.asarray(col_seq, _I64)


# -- generic kernels (array API only) -------------------------------------------------------------------
_FLOATS = (DataType.DT_FLOAT, DataType.DT_DOUBLE)


def _along(values: np.ndarray, axis: int) -> np.ndarray:
    """A host vector shaped to broadcast along ``axis`` of an NHWC tensor."""
    return values.reshape(tuple(-1 if i == axis else 1 for i in range(4)))


def _pool_axis(ctx: KernelContext, x: Any, c: Cells, axis: int, op: str) -> Any:
    """Sum or max of every cell along one axis: term t of all cells is one ``take``."""
    xp = ctx.xp
    floating = ctx.input_dtypes[0] in _FLOATS
    acc = None
    for t in range(c.max_length):
        g = xp.take(x, ctx.asarray(np.minimum(c.start + t, c.end), _I64), axis=axis)
        if acc is None:
            acc = g
        elif op == "sum":
            done = c.length <= t  # cells shorter than t + 1 add nothing
            if done.any():
                g = xp.where(ctx.asarray(_along(done, axis), DataType.DT_BOOL), xp.zeros((), dtype=g.dtype), g)
            acc = acc + g
        else:  # TF's scan keeps the first maximum and skips NaN; re-reading a cell's last element is harmless
            take = acc < g
            if floating:
                take = take | (xp.isnan(acc) & ~xp.isnan(g))
            acc = xp.where(take, g, acc)
    return acc


@register_kernel("FractionalAvgPool")
def _avg_pool(ctx: KernelContext, x: Any) -> tuple[Any, Any, Any]:
    rows, cols, row_seq, col_seq = _prepare_pool(ctx, x, "average")
    total = _pool_axis(ctx, _pool_axis(ctx, x, cols, 2, "sum"), rows, 1, "sum")
    counts = ctx.asarray(impl.cell_counts(rows, cols)[None, :, :, None], ctx.input_dtypes[0])
    if ctx.input_dtypes[0] in _FLOATS:
        return total / counts, row_seq, col_seq
    return impl.truncating_divide(ctx.xp, total, counts), row_seq, col_seq


@register_kernel("FractionalAvgPool", backend="numpy")
def _avg_pool_numpy(ctx: KernelContext, x: np.ndarray) -> tuple[Any, Any, Any]:
    rows, cols, row_seq, col_seq = _prepare_pool(ctx, x, "average")
    return impl.avg_pool_numpy(x, rows, cols), row_seq, col_seq


@register_kernel("FractionalMaxPool")
def _max_pool(ctx: KernelContext, x: Any) -> tuple[Any, Any, Any]:
    rows, cols, row_seq, col_seq = _prepare_pool(ctx, x, "max")
    return _pool_axis(ctx, _pool_axis(ctx, x, cols, 2, "max"), rows, 1, "max"), row_seq, col_seq


def _has_nan(x: np.ndarray) -> bool:
    return x.dtype.kind == "f" and bool(np.isnan(x).any())


@register_kernel("FractionalMaxPool", backend="numpy")
def _max_pool_numpy(ctx: KernelContext, x: np.ndarray) -> tuple[Any, Any, Any]:
    if _has_nan(x):  # NaN-skipping needs the generic scan
        return _max_pool(ctx, x)
    rows, cols, row_seq, col_seq = _prepare_pool(ctx, x, "max")
    return impl.max_pool_numpy(x, rows, cols), row_seq, col_seq


def _cover_terms(ctx: KernelContext, rcov: Coverage, ccov: Coverage, n_rows: int, n_cols: int):
    """(row cells, col cells, mask) of every cell pair covering each input element, in TF's order of
    accumulation (row cell, then column cell); the mask drops pairs past an element's covering cells."""
    for tr in range(rcov.depth):
        r_idx = ctx.asarray(np.minimum(rcov.first + tr, n_rows - 1), _I64)
        for tc in range(ccov.depth):
            mask = np.logical_and.outer(rcov.count > tr, ccov.count > tc)[None, :, :, None]
            yield r_idx, ctx.asarray(np.minimum(ccov.first + tc, n_cols - 1), _I64), \
                ctx.asarray(mask, DataType.DT_BOOL)


def _gather2(xp: Any, v: Any, r_idx: Any, c_idx: Any) -> Any:
    return xp.take(xp.take(v, r_idx, axis=1), c_idx, axis=2)


def _pad_to(ctx: KernelContext, v: Any, shape: tuple[int, ...]) -> Any:
    """``v`` in the leading corner of zeros of ``shape`` (out_backprop with a smaller batch or depth)."""
    xp = ctx.xp
    if v.shape[3] < shape[3]:
        v = xp.concat([v, xp.zeros(tuple(v.shape[:3]) + (shape[3] - v.shape[3],), dtype=v.dtype)], axis=3)
    if v.shape[0] < shape[0]:
        v = xp.concat([v, xp.zeros((shape[0] - v.shape[0],) + tuple(v.shape[1:]), dtype=v.dtype)], axis=0)
    return v


def _host_vector(ctx: KernelContext, v: Any) -> np.ndarray:
    return np.asarray(ctx.host(v), np.int64).reshape(-1)


def _shape(v: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in v.shape)


def _oom_guard(fn):
    """Report an allocation failure as TF does (ResourceExhausted), not as a kernel bug."""
    def kernel(ctx: KernelContext, *args: Any) -> Any:
        try:
            return fn(ctx, *args)
        except MemoryError:
            raise ctx.error(ResourceExhaustedError, "OOM when allocating the gradient tensor") from None

    kernel.__name__, kernel.__doc__ = fn.__name__, fn.__doc__
    return kernel


def _prepare_avg_grad(ctx: KernelContext, orig: Any, dy: Any, row: Any, col: Any):
    dy_dims = _shape(dy)
    dims = check_avg_grad(ctx, _shape(orig), _host_vector(ctx, orig), dy_dims,
                          int(np.prod(_shape(row), dtype=np.int64)), int(np.prod(_shape(col), dtype=np.int64)))
    rows, cols = check_sequences(ctx, _host_vector(ctx, row), _host_vector(ctx, col), dy_dims[1], dy_dims[2],
                                 dims[1], dims[2], ctx.attrs["overlapping"], nonempty=False)
    return dims, rows, cols, impl.coverage(rows), impl.coverage(cols)


def _avg_grad_generic(ctx: KernelContext, dy: Any, dims: tuple[int, ...], rows: Cells, cols: Cells,
                      rcov: Coverage, ccov: Coverage) -> Any:
    """TF's arithmetic exactly: ``float64(dy) / count`` summed from +0.0 in TF's order, then cast."""
    xp = ctx.xp
    f64 = DataType.DT_DOUBLE
    counts = impl.cell_counts(rows, cols).astype(np.float64)
    counts[counts <= 0] = 1.0  # empty cells cover nothing
    v = xp.astype(dy, ctx.dtype(f64)) / ctx.asarray(counts[None, :, :, None], f64)
    acc = xp.zeros((dy.shape[0], dims[1], dims[2], dy.shape[3]), dtype=ctx.dtype(f64))
    zero = xp.zeros((), dtype=acc.dtype)
    for r_idx, c_idx, mask in _cover_terms(ctx, rcov, ccov, len(rows.start), len(cols.start)):
        acc = acc + xp.where(mask, _gather2(xp, v, r_idx, c_idx), zero)
    t = ctx.output_dtypes[0]
    if t not in _FLOATS:  # truncation toward zero; saturate where C++ is undefined
        info = np.iinfo(t.numpy_dtype)
        acc = xp.clip(acc, float(info.min), float(np.nextafter(float(info.max) + 1.0, 0.0)))
    return _pad_to(ctx, xp.astype(acc, ctx.dtype(t)), dims)


@register_kernel("FractionalAvgPoolGrad")
@_oom_guard
def _avg_pool_grad(ctx: KernelContext, orig: Any, dy: Any, row: Any, col: Any) -> Any:
    return _avg_grad_generic(ctx, dy, *_prepare_avg_grad(ctx, orig, dy, row, col))


@register_kernel("FractionalAvgPoolGrad", backend="numpy")
@_oom_guard
def _avg_pool_grad_numpy(ctx: KernelContext, orig: Any, dy: np.ndarray, row: Any, col: Any) -> Any:
    dims, rows, cols, rcov, ccov = _prepare_avg_grad(ctx, orig, dy, row, col)
    if rcov.depth > 2 or ccov.depth > 2:  # repeated sequence values: more than two cells overlap
        return _avg_grad_generic(ctx, dy, dims, rows, cols, rcov, ccov)
    return impl.avg_pool_grad_numpy(dy, rows, cols, rcov, ccov, dims)


def _prepare_max_grad(ctx: KernelContext, x: Any, y: Any, dy: Any, row: Any, col: Any) -> tuple[Cells, Cells]:
    x_dims, y_dims = _shape(x), _shape(y)
    check_max_grad(ctx, x_dims, y_dims, _shape(dy), _shape(row), _shape(col))
    return check_sequences(ctx, _host_vector(ctx, row), _host_vector(ctx, col), y_dims[1], y_dims[2],
                           x_dims[1], x_dims[2], ctx.attrs["overlapping"], nonempty=True)


@register_kernel("FractionalMaxPoolGrad")
@_oom_guard
def _max_pool_grad(ctx: KernelContext, x: Any, y: Any, dy: Any, row: Any, col: Any) -> Any:
    """Recompute each cell's maximum and where it is (TF's scan: first maximum, NaN skipped), check it
    against orig_output, then add each out_backprop value at its cell's argmax, in TF's order."""
    return _max_grad_generic(ctx, x, y, dy, *_prepare_max_grad(ctx, x, y, dy, row, col))


@register_kernel("FractionalMaxPoolGrad", backend="numpy")
@_oom_guard
def _max_pool_grad_numpy(ctx: KernelContext, x: np.ndarray, y: np.ndarray, dy: np.ndarray, row: Any,
                         col: Any) -> Any:
    rows, cols = _prepare_max_grad(ctx, x, y, dy, row, col)
    if _has_nan(x):
        return _max_grad_generic(ctx, x, y, dy, rows, cols)
    dx = impl.max_pool_grad_numpy(x, y, dy, rows, cols)
    if dx is None:
        ctx.invalid_argument("tensor_out_dup is not the same as tensor_out")
    return dx


def _max_grad_generic(ctx: KernelContext, x: Any, y: Any, dy: Any, rows: Cells, cols: Cells) -> Any:
    xp = ctx.xp
    x_dims = _shape(x)
    floating = ctx.input_dtypes[0] in _FLOATS
    best = arg_r = arg_c = None
    for tr in range(rows.max_length):
        r_pos = np.minimum(rows.start + tr, rows.end)
        x_r = xp.take(x, ctx.asarray(r_pos, _I64), axis=1)
        for tc in range(cols.max_length):
            c_pos = np.minimum(cols.start + tc, cols.end)
            g = xp.take(x_r, ctx.asarray(c_pos, _I64), axis=2)
            here_r, here_c = ctx.asarray(_along(r_pos, 1), _I64), ctx.asarray(_along(c_pos, 2), _I64)
            if best is None:
                best = g
                arg_r = xp.broadcast_to(here_r, g.shape)
                arg_c = xp.broadcast_to(here_c, g.shape)
                continue
            take = best < g  # a re-read element equals the kept one: never taken
            if floating:
                take = take | (xp.isnan(best) & ~xp.isnan(g))
            best = xp.where(take, g, best)
            arg_r = xp.where(take, here_r, arg_r)
            arg_c = xp.where(take, here_c, arg_c)
    same = best == y
    if floating:
        same = same | (xp.isnan(best) & xp.isnan(y))
    if not bool(xp.all(same)):
        ctx.invalid_argument("tensor_out_dup is not the same as tensor_out")
    rcov, ccov = impl.coverage(rows), impl.coverage(cols)
    h = ctx.asarray(_along(np.arange(x_dims[1]), 1), _I64)
    w = ctx.asarray(_along(np.arange(x_dims[2]), 2), _I64)
    dx = xp.zeros(x_dims, dtype=dy.dtype)
    zero = xp.zeros((), dtype=dy.dtype)
    for r_idx, c_idx, mask in _cover_terms(ctx, rcov, ccov, len(rows.start), len(cols.start)):
        hit = mask & (_gather2(xp, arg_r, r_idx, c_idx) == h) & (_gather2(xp, arg_c, r_idx, c_idx) == w)
        dx = dx + xp.where(hit, _gather2(xp, dy, r_idx, c_idx), zero)
    return dx
