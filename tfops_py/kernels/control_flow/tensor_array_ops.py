"""The TensorArrayV3 family (TF1's tf.TensorArray): a mutable, per-Run array behind a resource handle.

``TensorArrayV3`` creates a :class:`TensorArray` and outputs it as its handle (a
DT_RESOURCE value) together with a ``flow`` scalar; every op on the array takes the
handle and threads ``flow`` through, as TF's ops do, so the dataflow orders them.
Arrays live as long as the Run that made them (TF keeps them in the step's
container).  Write-once and read semantics, gradient arrays (``TensorArrayGradV3``
aggregates repeated writes) and error messages follow TF's ``tensor_array.h`` and
``tensor_array_ops.cc``.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any

import numpy as np

from tfops_py.conformance import conformance
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

_SCALAR = PartialTensorShape([])
_counter = itertools.count()
CONFORMANCE_FAMILY = "control_flow"


class _Slot:
    __slots__ = ("value", "shape", "written", "read", "cleared")

    def __init__(self) -> None:
        self.value: Any = None  # None with written=True: zeros of ``shape`` (a gradient slot not yet summed into)
        self.shape: tuple[int, ...] = ()
        self.written = self.read = self.cleared = False


class TensorArray:
    """TF's ``TensorArray`` resource; also the handle value its ops pass around."""

    type_name = "tensorflow::TensorArray"
    shape = ()  # a scalar resource tensor
    ndim = 0

    def __init__(self, name: str, dtype: DataType, size: int, element_shape: PartialTensorShape, dynamic_size: bool,
                 clear_after_read: bool, aggregate_writes: bool = False):
        self.name = name
        self.dtype = dtype
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.aggregate_writes = aggregate_writes  # gradient arrays sum repeated writes
        self.slots = [_Slot() for _ in range(size)]
        self.closed = False
        self.grads: dict[str, TensorArray] = {}
        self.lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<TensorArray {self.name} {self.dtype.short_name}[{len(self.slots)}]>"

    # -- TF's TensorArray methods, errors included --------------------------------------------------
    def check_open(self, ctx: KernelContext) -> None:
        if self.closed:
            ctx.invalid_argument(f"TensorArray {self.name} has already been closed.")

    def write(self, ctx: KernelContext, index: int, value: Any) -> None:
        self.check_open(ctx)
        if index < 0 or (not self.dynamic_size and index >= len(self.slots)):
            ctx.invalid_argument(f"TensorArray {self.name}: Tried to write to index {index} but array is not "
                                 f"resizeable and size is: {len(self.slots)}")
        if index >= len(self.slots):
            self.slots += [_Slot() for _ in range(index + 1 - len(self.slots))]
        slot = self.slots[index]
        if slot.read:
            ctx.invalid_argument(f"TensorArray {self.name}: Could not write to TensorArray index {index} because it "
                                 "has already been read.")
        if slot.written and not self.aggregate_writes:
            ctx.invalid_argument(f"TensorArray {self.name}: Could not write to TensorArray index {index} because it "
                                 "has already been written to.")
        shape = tuple(value.shape)
        if slot.written:
            if shape != slot.shape:
                ctx.invalid_argument(f"TensorArray {self.name}: Could not aggregate to TensorArray index {index} "
                                     f"because the existing shape is {format_shape(slot.shape)} but the new input "
                                     f"shape is {format_shape(shape)}.")
            slot.value = value if slot.value is None else ctx.xp.add(slot.value, value)
            return
        slot.value, slot.shape, slot.written = value, shape, True

    def read(self, ctx: KernelContext, index: int) -> Any:
        self.check_open(ctx)
        if not 0 <= index < len(self.slots):
            ctx.invalid_argument(f"Tried to read from index {index} but array size is: {len(self.slots)}")
        slot = self.slots[index]
        if not slot.written:
            if not self.element_shape.IsFullyDefined():
                ctx.invalid_argument(
                    f"TensorArray {self.name}: Could not read from TensorArray index {index}.  Furthermore, the "
                    f"element shape is not fully defined: {self.element_shape}.  It is possible you are working with "
                    "a resizeable TensorArray and stop_gradients is not allowing the gradients to be written.  If you "
                    "set the full element_shape property on the forward TensorArray, the proper all-zeros tensor "
                    "will be returned instead of incurring this error.")
            return ctx.xp.zeros(self.element_shape.as_tuple(), dtype=ctx.dtype(self.dtype))
        if slot.cleared:
            ctx.invalid_argument(f"TensorArray {self.name}: Could not read index {index} twice because it was "
                                 "cleared after a previous read (perhaps try setting clear_after_read = false?).")
        value = slot.value
        if value is None:
            value = ctx.xp.zeros(slot.shape, dtype=ctx.dtype(self.dtype))
        if self.clear_after_read:
            slot.value, slot.cleared = None, True
        slot.read = True
        return value


def _array(ctx: KernelContext, handle: Any) -> TensorArray:
    if not isinstance(handle, TensorArray):
        ctx.invalid_argument(f"handle is not a TensorArray, got {type(handle).__name__}")
    return handle


def _check_dtype(ctx: KernelContext, ta: TensorArray, dtype: DataType) -> None:
    if dtype != ta.dtype:
        ctx.invalid_argument(f"TensorArray dtype is {ta.dtype.short_name} but Op requested dtype {dtype.short_name}.")


def _int(ctx: KernelContext, value: Any, what: str) -> int:
    host = ctx.host(value)
    if host.shape != ():
        ctx.invalid_argument(f"{what} must be a scalar, but it has shape {format_shape(host.shape)}")
    return int(host)


def _check_write_dtype(ctx: KernelContext, ta: TensorArray, dtype: DataType) -> None:
    if dtype != ta.dtype:
        ctx.invalid_argument(f"TensorArray dtype is {ta.dtype.short_name} but Op is trying to write dtype "
                             f"{dtype.short_name}.")


# -- shape functions -------------------------------------------------------------------------------
@register_shape("TensorArrayV3")
def _create_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    ctx.with_rank(ctx.input(0), 0, "size")
    return [_SCALAR, _SCALAR]


@register_shape("TensorArrayGradV3", "TensorArrayGradWithShape")
def _grad_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [_SCALAR, _SCALAR]


@register_shape("TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3", "TensorArraySizeV3")
def _scalar_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [_SCALAR]


@register_shape("TensorArrayCloseV3")
def _close_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


@register_shape("TensorArrayReadV3")
def _read_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [unknown_shape()]


@register_shape("TensorArrayGatherV3")
def _gather_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    shape = ctx.attr("element_shape")
    indices = ctx.input(1)
    n = indices.dim_size(0) if indices.dims() == 1 else -1
    return [unknown_shape() if shape.unknown_rank() else PartialTensorShape([n] + shape.as_list())]


@register_shape("TensorArrayConcatV3")
def _concat_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    shape = ctx.attr("element_shape_except0")
    return [unknown_shape() if shape.unknown_rank() else PartialTensorShape([-1] + shape.as_list()),
            PartialTensorShape([-1])]


# -- kernels ---------------------------------------------------------------------------------------
@register_kernel("TensorArrayV3")
def _create(ctx: KernelContext, size: Any) -> tuple[TensorArray, Any]:
    n = _int(ctx, size, "size")
    if n < 0:
        ctx.invalid_argument("Size should be >= 0.")
    name = f"{ctx.attrs['tensor_array_name'] or ctx.node_name}_{next(_counter)}"
    ta = TensorArray(name, ctx.attrs["dtype"], n, ctx.attrs["element_shape"], ctx.attrs["dynamic_size"],
                     ctx.attrs["clear_after_read"])
    return ta, ctx.asarray(0.0, DataType.DT_FLOAT)


@register_kernel("TensorArrayGradV3")
def _grad(ctx: KernelContext, handle: Any, flow_in: Any) -> tuple[TensorArray, Any]:
    ta = _array(ctx, handle)
    ta.check_open(ctx)
    source = ctx.attrs["source"]
    with ta.lock:
        grad = ta.grads.get(source)
        if grad is None:
            grad = TensorArray(f"{ta.name}@{source}", ta.dtype, len(ta.slots), ta.element_shape, False, True,
                               aggregate_writes=True)
            for slot, fwd in zip(grad.slots, ta.slots):  # CopyShapesFrom: written slots read as zeros until summed
                if fwd.written:
                    slot.shape, slot.written = fwd.shape, True
            ta.grads[source] = grad
            ta.dynamic_size = False  # an array with a gradient stops growing
    return grad, flow_in


@register_kernel("TensorArrayWriteV3")
def _write(ctx: KernelContext, handle: Any, index: Any, value: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_write_dtype(ctx, ta, ctx.input_dtypes[2])
    with ta.lock:
        ta.write(ctx, _int(ctx, index, "index"), value)
    return flow_in


@register_kernel("TensorArrayReadV3")
def _read(ctx: KernelContext, handle: Any, index: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_dtype(ctx, ta, ctx.attrs["dtype"])
    with ta.lock:
        return ta.read(ctx, _int(ctx, index, "index"))


@register_kernel("TensorArraySizeV3")
def _size(ctx: KernelContext, handle: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    ta.check_open(ctx)
    return ctx.asarray(len(ta.slots), DataType.DT_INT32)


@register_kernel("TensorArrayCloseV3")
def _close(ctx: KernelContext, handle: Any) -> tuple[()]:
    ta = _array(ctx, handle)
    with ta.lock:
        ta.slots = []
        ta.closed = True
    return ()


def _stack(ctx: KernelContext, ta: TensorArray, indices: list[int], element_shape: PartialTensorShape) -> Any:
    xp = ctx.xp
    if not indices:
        if not element_shape.IsFullyDefined():
            ctx.unimplemented(f"TensorArray has size zero, but element shape {element_shape} is not fully defined. "
                              "Currently only static shapes are supported when packing zero-size TensorArrays.")
        return xp.zeros((0,) + element_shape.as_tuple(), dtype=ctx.dtype(ta.dtype))
    values = [ta.read(ctx, i) for i in indices]
    first = tuple(values[0].shape)
    for i, v in zip(indices, values):
        if tuple(v.shape) != first:
            ctx.invalid_argument(f"TensorArray has inconsistent shapes.  Index 0 has shape: {format_shape(first)} but "
                                 f"index {i} has shape: {format_shape(tuple(v.shape))}")
    return xp.stack(values)


@register_kernel("TensorArrayGatherV3")
def _gather(ctx: KernelContext, handle: Any, indices: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_dtype(ctx, ta, ctx.attrs["dtype"])
    host = ctx.host(indices)
    if host.ndim != 1:
        ctx.invalid_argument(f"indices must be a vector, saw shape: {format_shape(host.shape)}")
    with ta.lock:
        ta.check_open(ctx)
        return _stack(ctx, ta, [int(i) for i in host], ctx.attrs["element_shape"])


@register_kernel("TensorArrayScatterV3")
def _scatter(ctx: KernelContext, handle: Any, indices: Any, value: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_write_dtype(ctx, ta, ctx.input_dtypes[2])
    host = ctx.host(indices)
    if host.ndim != 1:
        ctx.invalid_argument(f"Expected indices to be a vector, but received shape: {format_shape(host.shape)}")
    dims = tuple(value.shape)
    if not dims or dims[0] != host.shape[0]:
        ctx.invalid_argument(f"Expected len(indices) == values.shape[0], but saw: {host.shape[0]} vs. "
                             f"{dims[0] if dims else 0}")
    with ta.lock:
        for k, i in enumerate(int(v) for v in host):
            ta.write(ctx, i, value[k, ...])
    return flow_in


@register_kernel("TensorArrayConcatV3")
def _concat(ctx: KernelContext, handle: Any, flow_in: Any) -> tuple[Any, Any]:
    ta = _array(ctx, handle)
    _check_dtype(ctx, ta, ctx.attrs["dtype"])
    rest = ctx.attrs["element_shape_except0"]
    with ta.lock:
        ta.check_open(ctx)
        values = [ta.read(ctx, i) for i in range(len(ta.slots))]
    if not values:
        if not rest.IsFullyDefined():
            ctx.unimplemented(f"TensorArray has size zero, but element_shape_except0 {rest} is not fully defined. "
                              "Currently only static shapes are supported when concatenating zero-size "
                              "TensorArrays.")
        return (ctx.xp.zeros((0,) + rest.as_tuple(), dtype=ctx.dtype(ta.dtype)),
                ctx.asarray(np.zeros(0, np.int64), DataType.DT_INT64))
    tail = None
    for i, v in enumerate(values):
        dims = tuple(v.shape)
        if not dims:
            ctx.invalid_argument(f"Concat saw a scalar shape at index {i} but requires at least vectors.  Did you "
                                 "mean to call TensorArray::Pack instead?")
        if tail is None:
            tail = dims[1:]
        elif dims[1:] != tail:
            ctx.invalid_argument(f"TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: "
                                 f"{format_shape(tail)} but index {i} has (excepting dimension 0) shape: "
                                 f"{format_shape(dims[1:])}")
    lengths = np.asarray([int(v.shape[0]) for v in values], dtype=np.int64)
    return ctx.xp.concat(values, axis=0), ctx.asarray(lengths, DataType.DT_INT64)


@register_kernel("TensorArraySplitV3")
def _split(ctx: KernelContext, handle: Any, value: Any, lengths: Any, flow_in: Any) -> Any:
    ta = _array(ctx, handle)
    _check_write_dtype(ctx, ta, ctx.input_dtypes[1])
    sizes = ctx.host(lengths)
    if sizes.ndim != 1:
        ctx.invalid_argument(f"Expected lengths to be a vector, received shape: {format_shape(sizes.shape)}")
    dims = tuple(value.shape)
    if not dims:
        ctx.invalid_argument(f"Expected value to be at least a vector, but received shape: {format_shape(dims)}")
    total = int(sizes.sum()) if sizes.size else 0
    if total != dims[0]:
        ctx.invalid_argument(f"Expected sum of lengths to be equal to values.shape[0], but sum of lengths is {total} "
                             f"and value's shape is: {format_shape(dims)}")
    if ta.dynamic_size is False and len(sizes) > len(ta.slots):
        ctx.invalid_argument(f"TensorArray's size is not equal to the size of lengths ({len(sizes)} vs. "
                             f"{len(ta.slots)}), and the TensorArray is not marked as dynamically resizeable")
    with ta.lock:
        start = 0
        for i, n in enumerate(int(v) for v in sizes):
            if n < 0:
                ctx.invalid_argument(f"Invalid value in lengths: {n}")
            ta.write(ctx, i, value[start:start + n, ...])
            start += n
    return flow_in


def _cases(op: str) -> list:
    from tfops_py.kernels.control_flow._graph_cases import TENSOR_ARRAY_CASES, for_op

    return for_op(op, TENSOR_ARRAY_CASES)


for _op in ("TensorArrayV3", "TensorArrayGradV3", "TensorArrayWriteV3", "TensorArrayReadV3", "TensorArraySizeV3",
            "TensorArrayCloseV3", "TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArrayConcatV3",
            "TensorArraySplitV3"):
    conformance(_op, generate=False, graph_cases=_cases(_op))

__all__ = ["TensorArray"]
