"""TopK, TopKV2, ApproxTopK, NthElement, InTopK and InTopKV2: selection along the last dimension.

TopK returns the k largest values of each row, largest first, ties to the lower index (TF's order), and
their indices; ``sorted=False`` returns them in that same order (TF's order is then unspecified).  NaN
ranks above +inf (TF's comparisons make NaN's place depend on k and positions: see the divergences).
``tf.sort``/``tf.argsort`` build TopKV2 graphs with k = the row length, so they run on this too.
ApproxTopK on CPU is exact: TF registers it for ``reduction_dimension=-1`` and ``is_max_k=true`` only;
tfops_py also computes the other dimensions and the min-k exactly.  NthElement is the n-th order
statistic of each row (``reverse``: the n-th largest).  InTopK says whether the target's prediction
is among the k largest of its row: fewer than k predictions strictly greater, and false where the row
holds a non-finite prediction or the target is out of range.

``top_k(ctx, x, k, largest)`` is the plain function: NumPy partitions (``argpartition``, then the ties
at the k-th value resolved by index) and sorts only the k winners; other namespaces sort the rows
(stable ``argsort``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tfops_py.conformance import (BOOL, Domain, Draw, ShapeRule, case, conformance, divergence, graph_case, literal,
                                  one_of, reference, values)
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels._parallel import parallel_for
from tfops_py.kernels._shape_util import dim_from_scalar_input, merge_dim
from tfops_py.kernels.registry import KernelContext, register_kernel


# -- the core ------------------------------------------------------------------------------------------------
def _sorted_order(ctx: KernelContext, x: Any, largest: bool) -> Any:
    """Indices sorting each row, largest (smallest) first, ties to the lower index, NaN above +inf."""
    xp = ctx.xp
    if ctx.backend.name == "numpy":  # no ``descending``: a stable ascending sort of the reversed rows, reversed
        if not largest:
            return np.argsort(x, axis=-1, kind="stable")
        n = x.shape[-1]
        return (n - 1) - np.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    if x.dtype in (xp.float32, xp.float64, getattr(xp, "float16", None)):
        nan = xp.isnan(x)
        if bool(xp.any(nan)):  # rank NaN above everything: sort on (is NaN, value) in two stable passes
            filled = xp.where(nan, xp.zeros_like(x), x)
            order = xp.argsort(filled, axis=-1, descending=largest, stable=True)
            flag = xp.take_along_axis(xp.astype(nan, xp.int8), order, axis=-1)
            second = xp.argsort(flag, axis=-1, descending=largest, stable=True)
            return xp.take_along_axis(order, second, axis=-1)
    return xp.argsort(x, axis=-1, descending=largest, stable=True)


def _numpy_top_k(x: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """Indices of the k largest (smallest) per row in TF's order, sorting only the k winners."""
    n = x.shape[-1]
    key = x if largest else _negated_order(x)
    part = np.argpartition(key, n - k, axis=-1)[..., n - k:]
    threshold = np.min(np.take_along_axis(key, part, axis=-1), axis=-1, keepdims=True)  # the k-th largest
    at_least = key >= threshold
    if not np.all(np.count_nonzero(at_least, axis=-1) == k):  # ties at the k-th value: the lower indices win
        equal = key == threshold
        need = k - np.count_nonzero(key > threshold, axis=-1, keepdims=True)
        chosen = (key > threshold) | (equal & (np.cumsum(equal, axis=-1) <= need))
        part = np.nonzero(chosen.reshape(-1, n))[1].reshape(x.shape[:-1] + (k,))
    else:
        part = np.sort(part, axis=-1)
    values = np.take_along_axis(key, part, axis=-1)
    # stable sort, largest first, of candidates in index order: sort the reversed row ascending, reverse back
    order = np.argsort(values[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    return np.take_along_axis(part, (k - 1) - order, axis=-1)


def _negated_order(x: np.ndarray) -> np.ndarray:
    """A key whose descending order is ``x``'s ascending order (no overflow: bit tricks for integers)."""
    if x.dtype.kind == "u":
        return ~x
    if x.dtype.kind == "i":
        return ~x  # -x - 1: order-reversing and never overflows
    return -x


def top_k(ctx: KernelContext, x: Any, k: int, largest: bool = True) -> tuple[Any, Any]:
    """(values, int64 indices) of the k largest (smallest) entries of each row of ``x``, TF's order."""
    xp = ctx.xp
    n = x.shape[-1]
    if ctx.backend.name == "numpy" and 0 < k < n and x.dtype.kind in "fiu" and \
            not (x.dtype.kind == "f" and np.isnan(x).any()):
        rows = x.reshape(-1, n)
        parts = parallel_for(lambda a, b: _numpy_top_k(rows[a:b], k, largest), rows.shape[0],
                             min_size=max(1, (1 << 16) // n))  # rows on every core, NumPy releases the GIL
        indices = np.concatenate(parts, axis=0).reshape(x.shape[:-1] + (k,)) if parts else \
            np.zeros(x.shape[:-1] + (k,), np.intp)
    else:
        indices = _sorted_order(ctx, x, largest)[..., :k]
    indices = xp.astype(indices, xp.int64)
    return xp.take_along_axis(x, indices, axis=-1), indices


# -- TopK, TopKV2 ---------------------------------------------------------------------------------------------
def _top_k_shape_of(ctx: InferenceContext, k: int) -> list[PartialTensorShape]:
    data = ctx.with_rank_at_least(ctx.input(0), 1)
    if data.unknown_rank():
        return [unknown_shape(), unknown_shape()]
    last = data[-1]
    if last != -1 and k != -1 and last < k:
        ctx.invalid_argument(f"input must have last dimension >= k = {k} but is {last}")
    out = PartialTensorShape(list(data.as_tuple()[:-1]) + [k])
    return [out, out]


@register_shape("TopKV2")
def _top_k_v2_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return _top_k_shape_of(ctx, dim_from_scalar_input(ctx, 1))


@register_shape("TopK")
def _top_k_v1_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    k = ctx.attr("k")
    if k < 0:
        ctx.invalid_argument(f"Need k >= 0, got {k}")
    return _top_k_shape_of(ctx, k)


def _top_k_outputs(ctx: KernelContext, x: Any, k: int) -> tuple[Any, Any]:
    if k < 0:
        ctx.invalid_argument(f"Need k >= 0, got {k}")
    if x.ndim < 1:
        ctx.invalid_argument(f"input must be >= 1-D, got shape {format_shape(x.shape)}")
    n = x.shape[-1]
    if n < k:
        ctx.invalid_argument(f"input must have at least k columns. Had {n}, needed {k}")
    index_type = ctx.output_dtypes[1]
    if n > np.iinfo(index_type.numpy_dtype).max:
        ctx.invalid_argument(f"input must have at most {np.iinfo(index_type.numpy_dtype).max} columns for "
                             f"index_type {index_type.short_name}. Had {n}")
    values, indices = top_k(ctx, x, k)
    return values, ctx.xp.astype(indices, ctx.dtype(index_type))


@register_kernel("TopKV2")
def _top_k_v2(ctx: KernelContext, input: Any, k: Any) -> tuple[Any, Any]:  # noqa: A002 - TF's argument name
    kv = ctx.host(k)
    if kv.ndim != 0:
        ctx.invalid_argument(f"k must be scalar, got shape {format_shape(kv.shape)}")
    return _top_k_outputs(ctx, input, int(kv))


@register_kernel("TopK")
def _top_k_v1(ctx: KernelContext, input: Any) -> tuple[Any, Any]:  # noqa: A002 - TF's argument name
    return _top_k_outputs(ctx, input, ctx.attrs["k"])


# -- ApproxTopK ------------------------------------------------------------------------------------------------
def _approx_axis(fail: Callable[[str], Any], dim: int, rank: int) -> int:
    """TF's check (an unknown rank counts as -1, so it always fails: TF needs the rank at build time)."""
    if not -rank <= dim <= rank - 1:
        fail(f"Invalid reduction dimension: {dim}. Must be within the range of [{-rank}, {rank - 1}]")
    return dim % rank


@register_shape("ApproxTopK")
def _approx_top_k_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    data = ctx.input(0)
    k = ctx.attr("k")
    axis = _approx_axis(ctx.invalid_argument, ctx.attr("reduction_dimension"),
                        -1 if data.unknown_rank() else data.dims())
    size = data[axis]
    if size != -1 and size < k:
        ctx.invalid_argument(f"input must have last dimension >= k = {k} but was {size}")
    out = PartialTensorShape([k if i == axis else d for i, d in enumerate(data.as_tuple())])
    return [out, out]


@register_kernel("ApproxTopK")
def _approx_top_k(ctx: KernelContext, input: Any) -> tuple[Any, Any]:  # noqa: A002 - TF's argument name
    """Exact (as TF's CPU kernel): the top (or bottom, ``is_max_k=false``) k along ``reduction_dimension``."""
    xp = ctx.xp
    k = ctx.attrs["k"]
    axis = _approx_axis(ctx.invalid_argument, ctx.attrs["reduction_dimension"], input.ndim)
    if input.shape[axis] < k:
        ctx.invalid_argument(f"input must have last dimension >= k = {k} but was {input.shape[axis]}")
    moved = xp.moveaxis(input, axis, -1)
    values, indices = top_k(ctx, moved, k, largest=ctx.attrs["is_max_k"])
    return xp.moveaxis(values, -1, axis), xp.moveaxis(xp.astype(indices, xp.int32), -1, axis)


# -- NthElement ---------------------------------------------------------------------------------------------
@register_shape("NthElement")
def _nth_element_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    data = ctx.with_rank_at_least(ctx.input(0), 1)
    n = dim_from_scalar_input(ctx, 1)
    if data.unknown_rank():
        return [unknown_shape()]
    last = data[-1]
    if last != -1 and n != -1 and last <= n:
        ctx.invalid_argument(f"Input must have last dimension > n = {n} but is {last}")
    return [PartialTensorShape(data.as_tuple()[:-1])]


@register_kernel("NthElement")
def _nth_element(ctx: KernelContext, input: Any, n: Any) -> Any:  # noqa: A002 - TF's argument name
    """The n-th smallest (``reverse``: largest) of each row; NaN ranks above every number."""
    nv = ctx.host(n)
    if nv.ndim != 0:
        ctx.invalid_argument(f"N must be scalar but has rank {nv.ndim}")
    nth = int(nv)
    if nth < 0:
        ctx.invalid_argument(f"n must be non-negative but is {nth}")
    if input.ndim < 1:
        ctx.invalid_argument(f"Input must be at least rank 1 but is rank {input.ndim}")
    size = input.shape[-1]
    if size <= nth:
        ctx.invalid_argument(f"Input must have last dimension > n = {nth}")
    position = size - 1 - nth if ctx.attrs["reverse"] else nth
    if ctx.backend.name == "numpy":
        return np.partition(input, position, axis=-1)[..., position]
    xp = ctx.xp
    return xp.sort(input, axis=-1)[..., position]


# -- InTopK, InTopKV2 ---------------------------------------------------------------------------------------
def _in_top_k_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    predictions = ctx.with_rank(ctx.input(0), 2)
    targets = ctx.with_rank(ctx.input(1), 1)
    if ctx.num_inputs == 3:
        ctx.with_rank(ctx.input(2), 0)
    return [PartialTensorShape([merge_dim(ctx, predictions[0], targets[0])])]


register_shape("InTopK", "InTopKV2")(_in_top_k_shape)


def _in_top_k_of(ctx: KernelContext, predictions: Any, targets: Any, k: int) -> Any:
    if predictions.ndim != 2:
        ctx.invalid_argument(f"predictions must be 2-dimensional, got shape {format_shape(predictions.shape)}")
    if targets.ndim != 1:
        ctx.invalid_argument(f"targets must be 1-dimensional, got shape {format_shape(targets.shape)}")
    batch, classes = predictions.shape
    if targets.shape[0] != batch:
        ctx.invalid_argument(f"First dimension of predictions {batch} must match length of targets "
                             f"{targets.shape[0]}")
    xp = ctx.xp
    t = xp.astype(targets, xp.int64)
    in_range = (t >= 0) & (t < classes)
    column = xp.reshape(xp.clip(t, 0, max(classes - 1, 0)), (batch, 1))
    if classes == 0:
        return xp.zeros((batch,), dtype=xp.bool)
    target_value = xp.take_along_axis(predictions, column, axis=1)
    all_finite = xp.all(xp.isfinite(predictions), axis=1)
    more = xp.sum(xp.astype(predictions > target_value, xp.int64), axis=1)
    return in_range & all_finite & (more < k)


@register_kernel("InTopK")
def _in_top_k(ctx: KernelContext, predictions: Any, targets: Any) -> Any:
    return _in_top_k_of(ctx, predictions, targets, ctx.attrs["k"])


@register_kernel("InTopKV2")
def _in_top_k_v2(ctx: KernelContext, predictions: Any, targets: Any, k: Any) -> Any:
    kv = ctx.host(k)
    if kv.ndim != 0:
        ctx.invalid_argument(f"k must be 0-D, got shape {format_shape(kv.shape)}")
    return _in_top_k_of(ctx, predictions, targets, int(kv))


# -- conformance (tests/conformance) -------------------------------------------------------------------------
class _RowsAndK(ShapeRule):
    """Rows of length n and k in [0, n] (sometimes n + 1: TF's error)."""

    def __init__(self, k_is_input: bool):
        self.k_is_input = k_is_input

    def patterns(self) -> list[dict[str, Any]]:
        return [{"input": s} for s in ((7,), (3, 8), (2, 3, 5), (4, 0), (0, 6))]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        return {"input": tuple(int(d) for d in rng.integers(0, 9, int(rng.integers(1, 4))))}


class _K(Domain):
    """k for the rows of input ``input``: mostly within [0, n], sometimes n + 1 or negative."""

    patterned = False
    depends = ("input",)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        n = int(np.shape(d.inputs["input"])[-1]) if np.ndim(d.inputs["input"]) else 0
        roll = d.rng.uniform()
        k = n + 1 if roll < 0.05 else -1 if roll < 0.08 else int(d.rng.integers(0, n + 1))
        return np.asarray(k, d.dtype.numpy_dtype)


class _Nth(_K):
    def draw(self, d: Draw) -> np.ndarray:
        n = int(np.shape(d.inputs["input"])[-1]) if np.ndim(d.inputs["input"]) else 0
        roll = d.rng.uniform()
        nth = n if roll < 0.05 else -1 if roll < 0.08 else int(d.rng.integers(0, max(n, 1)))
        return np.asarray(nth, d.dtype.numpy_dtype)


class _Targets(Domain):
    """Class ids for the rows of ``predictions`` (sometimes out of range)."""

    depends = ("predictions",)

    def accepts(self, dtype: DataType) -> bool:
        return dtype.is_integer

    def draw(self, d: Draw) -> np.ndarray:
        classes = int(np.shape(d.inputs["predictions"])[-1]) if np.ndim(d.inputs["predictions"]) == 2 else 1
        shape = d.shape or ()
        return d.rng.integers(-1 if d.rng.uniform() < 0.2 else 0, classes + 1, shape).astype(d.dtype.numpy_dtype)


def _with_nan(inputs: Mapping[str, Any], attrs: Mapping[str, Any]) -> bool:
    x = np.asarray(inputs.get("input", inputs.get("predictions")))
    return x.dtype.kind not in "biuc" and bool(np.isnan(x.astype(np.float64)).any())


def sorted_in_tf(run_tf: Callable[..., Any], op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's TopK with ``sorted=True`` (its ``sorted=False`` order is unspecified)."""
    return run_tf(op, inputs, {**attrs, "sorted": True})


_TIES = [[1, 2, 2, 1, 2, 0, 2], [5, 5, 5, 5, 5, 5, 5], [-1, -3, -2, -3, 0, 0, -1]]
_INFS = [[math.inf, 1.0, -math.inf, 2.0, math.inf, -0.0, 0.0], [0.0, -0.0, 0.0, -0.0, -1.0, 1.0, -math.inf]]
_I32 = DataType.DT_INT32
conformance("TopKV2", input=values(), k=_K(), sorted=BOOL, index_type=one_of(DataType.DT_INT32, DataType.DT_INT64,
                                                                           DataType.DT_INT16),
            shapes=_RowsAndK(True), compare="exact", live=40,
            cases=[case(input=literal(_TIES), k=literal(k, _I32)) for k in (0, 3, 7)]
            + [case(input=literal(_INFS), k=literal(k, _I32)) for k in (2, 4, 7)]
            + [case(input=literal(1.0), k=literal(1, _I32)), case(input=literal([1.0, 2.0]), k=literal([1], _I32))])


def _v1_top_k(k: int) -> Callable[..., Any]:
    def build(scope: Any, x: Any) -> list[Any]:
        from tfops_py.framework.node_builder import add_node
        from tfops_py.framework.op_def import get_op_def
        from tfops_py.framework.operation import Output

        node = add_node(scope, get_op_def("TopK"), [x], {"k": k})
        return [Output(node, 0), Output(node, 1)]

    return build


# TF refuses to build the v1 op (removed from GraphDefs at version 7): its cases compare with TopKV2
conformance("TopK", generate=False, k=3, graph_cases=[
    graph_case(f"TopK/{name}/k{k}", _v1_top_k(k), lambda tf, x, k=k: list(tf.raw_ops.TopKV2(input=x, k=k)),
               compare="exact", x=literal(x, dt))
    for name, x, dt in (("ties", _TIES, _I32), ("infs", _INFS, DataType.DT_FLOAT),
                        ("random", np.random.default_rng(5).standard_normal((3, 9)).tolist(), DataType.DT_DOUBLE))
    for k in (0, 3, 7)])
conformance("ApproxTopK", input=values(), k=one_of(1, 3), reduction_dimension=one_of(-1, 0, 1),
            is_max_k=BOOL, shapes=[{"input": s} for s in ((4, 6), (3, 3), (5,), (2, 3, 4))], compare="exact", live=20,
            cases=[case(input=literal(_TIES), k=3), case(input=literal(_INFS), k=4),
                   case(input=literal([[1.0, 2.0]]), k=3), case(input=literal([[1.0, 2.0]]), k=1,
                                                                reduction_dimension=2)])
conformance("NthElement", input=values(), n=_Nth(), reverse=BOOL, shapes=_RowsAndK(True), compare="ew", live=30,
            cases=[case(input=literal(_TIES), n=literal(k, _I32), reverse=r) for k in (0, 3, 6) for r in (False, True)]
            + [case(input=literal(_INFS), n=literal(2, _I32)), case(input=literal(1.0), n=literal(0, _I32)),
               case(input=literal([1.0, 2.0]), n=literal([0], _I32))])
_PREDICTIONS = [[1.0, 2.0, 2.0, 0.5], [math.nan, 1.0, 2.0, 3.0], [math.inf, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0]]
for _op in ("InTopK", "InTopKV2"):
    _k: dict[str, Any] = {"k": one_of(0, 1, 2, 3)} if _op == "InTopK" else {"k": literal(2, _I32)}
    conformance(_op, predictions=values(specials=True), targets=_Targets(), live=20, compare="exact",
                shapes=[dict(predictions=p, targets=t) for p, t in (((4, 5), (4,)), ((2, 3), (2,)), ((0, 3), (0,)),
                                                                    ((3, 0), (3,)), ((3, 4), (2,)))], **_k,
                cases=[case({"predictions": literal(_PREDICTIONS), "targets": literal(t, _I32),
                             "k": k if _op == "InTopK" else literal(k, _I32)})
                       for t, k in (([1, 3, 3, 3], 1), ([2, 0, 0, 2], 2), ([4, -1, 0, 0], 1), ([0, 0, 0, 0], 0),
                                    ([1, 1, 1, 1], -1))])

divergence("TopK", when="building a graph", tf="refuses the op (removed from GraphDefs at version 7; use TopKV2)",
           ours="builds and runs it: TopKV2 with a constant k")
divergence(("TopK", "TopKV2", "ApproxTopK", "NthElement"), when="NaN inputs",
           tf="compares with NaN as if it were unordered, so where a NaN lands depends on k and the positions (a row "
              "can come out unsorted)", ours="NaN ranks above +inf (NumPy's order), ties to the lower index",
           applies=_with_nan)
divergence(("TopK", "TopKV2"), when="`sorted=false`", tf="returns the top k in an unspecified (heap) order",
           ours="the sorted order", attrs={"sorted": (False,)},
           reference=reference("tfops_py.kernels.math.selection_ops:sorted_in_tf", "TF's result with sorted=true: "
                                                                                   "its sorted=false order is "
                                                                                   "unspecified"))
divergence("ApproxTopK", when="`is_max_k=false` or a `reduction_dimension` other than -1",
           tf="no CPU kernel (NotFoundError)", ours="the exact bottom (top) k along that dimension",
           applies=lambda inputs, attrs: not attrs.get("is_max_k", True) or attrs.get("reduction_dimension", -1) != -1)
