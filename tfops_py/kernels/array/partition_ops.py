"""DynamicPartition (rows of ``data`` sent to ``num_partitions`` outputs by id) and ParallelDynamicStitch.

DynamicPartition groups the ids on the host (a scan per partition, or a radix sort when there are many)
and gathers the rows once; each output is a slice of the gathered rows, in input order within a
partition as TF's serial loop gives.
ParallelDynamicStitch is DynamicStitch (``grad_scatter_ops``): where indices repeat, TF leaves the winner
unspecified; here the last one wins, as in DynamicStitch.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import case, conformance, graph_case, literal, values
from tfops_py.framework.dtypes import DT_INT64, DataType
from tfops_py.framework.shape_inference import InferenceContext, get_shape_fn, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels.array._array_domains import partition_ids
from tfops_py.kernels.array.grad_scatter_ops import merge_prefix, slice_debug_string
from tfops_py.kernels.registry import KernelContext, find_kernel, register_kernel

CONFORMANCE_FAMILY = "array_ops"


# -- DynamicPartition ----------------------------------------------------------------------------------------
@register_shape("DynamicPartition")
def _dynamic_partition_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    data, ids = ctx.input(0), ctx.input(1)
    count = ctx.attr("num_partitions")
    if ids.unknown_rank():
        return [unknown_shape()] * count
    merge_prefix(ctx, data, ids)
    if data.unknown_rank():
        return [unknown_shape()] * count
    return [PartialTensorShape([-1] + list(data.as_tuple()[ids.dims():]))] * count


def _partition_order(ids: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``ids`` grouped by id (input order within a group) and the group sizes; ids lie in
    ``[0, count)``.  A few partitions: one scan each; many: a stable radix sort of the narrowest key."""
    if count <= 16:
        groups = [np.flatnonzero(ids == p) for p in range(count)]
        return (np.concatenate(groups) if groups else np.zeros(0, np.int64)), np.array([g.size for g in groups])
    key = ids.astype(np.uint8 if count <= 2**8 else np.uint16 if count <= 2**16 else np.int64)
    order = np.argsort(key, kind="stable")
    return order, np.diff(np.searchsorted(key[order], np.arange(count + 1), side="left"))


def dynamic_partition(ctx: KernelContext, data: Any, ids: np.ndarray, count: int) -> list[Any]:
    """``data``'s rows (the dims of ``ids`` flattened) split by id into ``count`` arrays, input order kept."""
    xp = ctx.xp
    flat_ids = ids.reshape(-1)
    rest = tuple(data.shape[ids.ndim:])
    rows = xp.reshape(data, (flat_ids.size, math.prod(rest)))
    order, sizes = _partition_order(flat_ids, count)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    grouped = xp.take(rows, ctx.asarray(order, DT_INT64), axis=0) if flat_ids.size else rows
    return [xp.reshape(grouped[int(starts[p]):int(starts[p + 1]), ...], (int(sizes[p]),) + rest)
            for p in range(count)]


@register_kernel("DynamicPartition")
def _dynamic_partition(ctx: KernelContext, data: Any, partitions: Any) -> list[Any]:
    count = ctx.attrs["num_partitions"]
    ids = ctx.host(partitions)
    shape = tuple(data.shape)
    if shape[:ids.ndim] != ids.shape:
        ctx.invalid_argument(f"data.shape must start with partitions.shape, got data.shape = {format_shape(shape)}, "
                             f"partitions.shape = {format_shape(ids.shape)}")
    flat = ids.reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= count))
    if bad.size:
        i = int(bad[0])
        ctx.invalid_argument(f"partitions{slice_debug_string(ids.shape, i)} = {int(flat[i])} is not in [0, {count})")
    return dynamic_partition(ctx, data, ids, count)


# -- ParallelDynamicStitch -----------------------------------------------------------------------------------
register_shape("ParallelDynamicStitch")(get_shape_fn("DynamicStitch"))  # type: ignore[arg-type]


@register_kernel("ParallelDynamicStitch")
def _parallel_dynamic_stitch(ctx: KernelContext, indices: list[Any], data: list[Any]) -> Any:
    return find_kernel("DynamicStitch", "")(ctx, indices, data)  # type: ignore[misc]


# -- conformance (tests/conformance) ------------------------------------------------------------------------
_I32, _F32 = DataType.DT_INT32, DataType.DT_FLOAT

conformance("DynamicPartition", data=values(), partitions=partition_ids(), num_partitions=3, compare="exact",
            shapes=[{"data": (6,), "partitions": (6,), "num_partitions": 3},
                    {"data": (4, 3), "partitions": (4,), "num_partitions": 2},
                    {"data": (2, 3, 2), "partitions": (2, 3), "num_partitions": 4},
                    {"data": (0, 2), "partitions": (0,), "num_partitions": 2},
                    {"data": (3, 0), "partitions": (3,), "num_partitions": 1},
                    {"data": (40, 2), "partitions": (40,), "num_partitions": 20},
                    {"data": (), "partitions": (), "num_partitions": 2}],
            cases=[
                case(id="DynamicPartition/out_of_range", T=_F32, partitions=literal([[0, 1], [2, 5]], _I32),
                     num_partitions=3, shapes={"data": (2, 2)}),
                case(id="DynamicPartition/negative", T=_F32, partitions=literal([0, -1], _I32), num_partitions=2,
                     shapes={"data": (2,)}),
                case(id="DynamicPartition/prefix", T=_F32, partitions=literal([0, 1, 0], _I32), num_partitions=2,
                     shapes={"data": (2, 3)}),
                case(id="DynamicPartition/empty_partition", T=_F32, partitions=literal([2, 2, 0], _I32),
                     num_partitions=4, shapes={"data": (3, 2)}),
            ])


def _stitch_case(case_id: str, idx: list[Any], data: list[Any]) -> Any:
    n = len(idx)

    def ours(scope: Any, *xs: Any) -> list:
        from tfops_py import ops

        return [ops.ParallelDynamicStitch(scope, list(xs[:n]), list(xs[n:])).merged]

    def theirs(tf: Any, *xs: Any) -> list:
        return [tf.raw_ops.ParallelDynamicStitch(indices=list(xs[:n]), data=list(xs[n:]))]

    names: dict[str, Any] = {f"i{k}": literal(v, _I32) for k, v in enumerate(idx)}
    names.update({f"d{k}": literal(v, _F32) for k, v in enumerate(data)})
    return graph_case(case_id, ours, theirs, compare="exact", **names)


conformance("ParallelDynamicStitch", generate=False, N=2, compare="exact", graph_cases=[
    _stitch_case("ParallelDynamicStitch/rows", [[0, 2], [1]], [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]]),
    _stitch_case("ParallelDynamicStitch/gap", [[4], [0, 1]], [[7.0], [1.0, 2.0]]),
    _stitch_case("ParallelDynamicStitch/matrix_indices", [[[0, 1], [3, 2]]], [[[1.0, 2.0], [3.0, 4.0]]]),
    _stitch_case("ParallelDynamicStitch/out_of_shape", [[0, 1]], [[1.0, 2.0, 3.0]]),
])
