"""TensorList ops: the variant lists TF2 loops accumulate into (Keras RNNs, TensorArray in tf.function, map_fn).

A DT_VARIANT tensor here is a :class:`TensorList` object the plans carry like any
value.  Lists are values: an op that "modifies" a list returns a new TensorList
sharing the element arrays (a shallow copy of the element list, TF's copy-on-write
without the refcount check), so a list fed to two consumers never changes under
either.  An element never written is ``None`` (TF's DT_INVALID tensor) and reads as
zeros of the element shape when that shape is known.  Messages and error classes
are TF's (``list_kernels.{h,cc}``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tfops_py.conformance import conformance, divergence
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape, unknown_shape
from tfops_py.kernels.registry import KernelContext, register_kernel

_SCALAR = PartialTensorShape([])
CONFORMANCE_FAMILY = "control_flow"


class TensorList:
    """TF's ``TensorList``: element arrays (``None`` where unset), element dtype and (partial) shape."""

    __slots__ = ("tensors", "element_shape", "element_dtype", "max_num_elements")
    type_name = "tensorflow::TensorList"
    shape = ()  # a scalar variant tensor
    ndim = 0

    def __init__(self, element_dtype: DataType, element_shape: PartialTensorShape, tensors: list[Any] | None = None,
                 max_num_elements: int = -1):
        self.element_dtype = element_dtype
        self.element_shape = element_shape
        self.tensors: list[Any] = tensors if tensors is not None else []
        self.max_num_elements = max_num_elements

    def copy(self) -> TensorList:
        """A new list holding the same element arrays (what a modifying op returns)."""
        return TensorList(self.element_dtype, self.element_shape, list(self.tensors), self.max_num_elements)

    def __len__(self) -> int:
        return len(self.tensors)

    def __repr__(self) -> str:
        return (f"<TensorList {self.element_dtype.short_name} {self.element_shape} "
                f"[{len(self.tensors)} elements]>")


# -- helpers ---------------------------------------------------------------------------------------
def shape_from_tensor(ctx: KernelContext, value: Any) -> PartialTensorShape:
    """TF's TensorShapeFromTensor: -1 (scalar) is unknown rank, a vector lists dims (-1 unknown)."""
    host = ctx.host(value)
    if host.shape == ():
        if int(host) == -1:
            return PartialTensorShape()
        ctx.invalid_argument("The only valid scalar shape tensor is the fully unknown shape specified as -1.")
    if host.ndim != 1:
        ctx.invalid_argument(f"Shape must be rank 1 but is rank {host.ndim}")
    dims = [int(d) for d in host]
    bad = [d for d in dims if d < -1]
    if bad:
        ctx.invalid_argument(f"Dimension {bad[0]} must be >= -1")
    return PartialTensorShape(dims)


def _merge(ctx: KernelContext, a: PartialTensorShape, b: Any) -> PartialTensorShape:
    try:
        return a.merge_with(b)
    except ValueError:
        ctx.invalid_argument(f"Incompatible shapes during merge: {a} vs. {PartialTensorShape(b)}")
        raise  # unreachable


def input_list(ctx: KernelContext, value: Any) -> TensorList:
    """TF's GetInputList: the TensorList a variant input holds."""
    if not isinstance(value, TensorList):
        ctx.invalid_argument(f"Input handle is not a list. Saw: '{type(value).__name__}'")
    return value


def _check_dtype(ctx: KernelContext, lst: TensorList) -> None:
    want = ctx.attrs["element_dtype"]
    if want != lst.element_dtype:
        ctx.invalid_argument(f"Invalid data types; op elements {want.short_name} but list elements "
                             f"{lst.element_dtype.short_name}")


def _scalar_int(ctx: KernelContext, value: Any, what: str) -> int:
    host = ctx.host(value)
    if host.shape != ():
        ctx.invalid_argument(f"{what} must be a scalar, but it has shape {format_shape(host.shape)}")
    return int(host)


def _zeros(ctx: KernelContext, shape: tuple[int, ...]) -> Any:
    return ctx.xp.zeros(shape, dtype=ctx.dtype(ctx.attrs["element_dtype"]))


def _element_shape_for_read(ctx: KernelContext, lst: TensorList, shape_input: Any,
                            indices: Sequence[int] | None = None) -> PartialTensorShape:
    """The element_shape input merged with the list's, then with the set elements' shapes (TF's order)."""
    shape = _merge(ctx, shape_from_tensor(ctx, shape_input), lst.element_shape)
    if not lst.element_shape.IsFullyDefined():
        for i in (range(len(lst.tensors)) if indices is None else indices):
            t = lst.tensors[i]
            if t is not None:
                shape = _merge(ctx, shape, tuple(t.shape))
    return shape


def _stacked(ctx: KernelContext, lst: TensorList, indices: Sequence[int], element_shape: PartialTensorShape) -> Any:
    xp = ctx.xp
    dims = element_shape.as_tuple()
    if not indices:
        return _zeros(ctx, (0,) + dims)
    zeros = None
    parts = []
    for i in indices:
        t = lst.tensors[i]
        if t is None:
            if zeros is None:
                zeros = _zeros(ctx, dims)
            t = zeros
        parts.append(t)
    return xp.stack(parts)


def _check_element(ctx: KernelContext, lst: TensorList, value: Any, message: str) -> None:
    if not lst.element_shape.is_compatible_with(tuple(value.shape)):
        ctx.invalid_argument(f"{message} Item element shape: {format_shape(tuple(value.shape))} list shape: "
                             f"{lst.element_shape}")


# -- shape functions -------------------------------------------------------------------------------
def _shape_input(ctx: InferenceContext, i: int) -> PartialTensorShape:
    """The shape a constant element_shape input stands for (unknown when not constant)."""
    value = ctx.input_tensor(i)
    if value is None or value.ndim != 1:  # not constant, or the scalar -1 (unknown rank)
        return unknown_shape()
    return PartialTensorShape([max(int(d), -1) for d in value])


def _prepend(dim: int, shape: PartialTensorShape) -> PartialTensorShape:
    return unknown_shape() if shape.unknown_rank() else PartialTensorShape([dim] + shape.as_list())  # type: ignore


@register_shape("EmptyTensorList", "TensorListReserve", "TensorListFromTensor", "TensorListScatter",
                "TensorListScatterV2", "TensorListScatterIntoExistingList", "TensorListSplit", "TensorListPushBack",
                "TensorListSetItem", "TensorListResize", "TensorListLength")
def _scalar_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [_SCALAR]


@register_shape("TensorListElementShape")
def _element_shape_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [unknown_shape()]  # [rank] or a scalar -1: known only when the list is


@register_shape("TensorListGetItem")
def _get_item_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [_shape_input(ctx, 2)]


@register_shape("TensorListPopBack")
def _pop_back_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [_SCALAR, _shape_input(ctx, 1)]


@register_shape("TensorListStack")
def _stack_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    n = ctx.attr("num_elements")
    return [_prepend(n if n >= 0 else -1, _shape_input(ctx, 1))]


@register_shape("TensorListGather")
def _gather_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    indices = ctx.input(1)
    n = indices.dim_size(0) if indices.dims() == 1 else -1
    return [_prepend(n, _shape_input(ctx, 2))]


@register_shape("TensorListConcat", "TensorListConcatV2")
def _concat_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    shape = ctx.attr("element_shape") if ctx.op_type == "TensorListConcat" else _shape_input(ctx, 1)
    out = unknown_shape() if shape.unknown_rank() or shape.dims() < 1 else \
        PartialTensorShape([-1] + shape.as_list()[1:])  # type: ignore[operator]
    return [out, PartialTensorShape([-1])]


# -- kernels: making lists ---------------------------------------------------------------------------
@register_kernel("EmptyTensorList")
def _empty(ctx: KernelContext, element_shape: Any, max_num_elements: Any) -> TensorList:
    host = ctx.host(max_num_elements)
    if host.shape != ():
        ctx.invalid_argument(f"max_num_elements expected to be a scalar but got shape: {format_shape(host.shape)}")
    limit = int(host)
    return TensorList(ctx.attrs["element_dtype"], shape_from_tensor(ctx, element_shape), [], limit)


@register_kernel("TensorListReserve")
def _reserve(ctx: KernelContext, element_shape: Any, num_elements: Any) -> TensorList:
    shape = shape_from_tensor(ctx, element_shape)
    n = _scalar_int(ctx, num_elements, "num_elements")
    if n < 0:
        ctx.invalid_argument(f"The num_elements to reserve must be a non negative number, but got {n}")
    return TensorList(ctx.attrs["element_dtype"], shape, [None] * n)


def _rows_source(tensor: Any) -> Any:
    """``tensor`` laid out so that its rows are contiguous: TF copies each row into an aligned buffer, and BLAS
    kernels reading the rows later (an RNN's MatMul per step) are many times slower on strided views."""
    if isinstance(tensor, np.ndarray) and not tensor.flags.c_contiguous:
        return np.ascontiguousarray(tensor)
    return tensor


def _at_least_vector(ctx: KernelContext, value: Any) -> tuple[int, ...]:
    shape = tuple(value.shape)
    if not shape:
        ctx.invalid_argument(f"Tensor must be at least a vector, but saw shape: {format_shape(shape)}")
    return shape


@register_kernel("TensorListFromTensor")
def _from_tensor(ctx: KernelContext, tensor: Any, element_shape: Any) -> TensorList:
    shape = shape_from_tensor(ctx, element_shape)
    dims = _at_least_vector(ctx, tensor)
    if not shape.is_compatible_with(dims[1:]):
        ctx.invalid_argument(f"Specified a list with shape {shape} from a tensor with shape {format_shape(dims[1:])}")
    tensor = _rows_source(tensor)
    return TensorList(ctx.attrs["element_dtype"], shape, [tensor[i, ...] for i in range(dims[0])])


def _scatter(ctx: KernelContext, lst: TensorList, tensor: Any, indices: list[int]) -> None:
    tensor = _rows_source(tensor)
    for k, i in enumerate(indices):
        lst.tensors[i] = tensor[k, ...]


@register_kernel("TensorListScatter", "TensorListScatterV2")
def _scatter_new(ctx: KernelContext, tensor: Any, indices: Any, element_shape: Any, *rest: Any) -> TensorList:
    shape = shape_from_tensor(ctx, element_shape)
    num_elements = _scalar_int(ctx, rest[0], "num_elements") if rest else -1
    if num_elements < -1:
        ctx.invalid_argument(f"TensorListScatter expects num_elements >= -1, found: {num_elements}")
    dims = _at_least_vector(ctx, tensor)
    if not shape.is_compatible_with(dims[1:]):
        ctx.invalid_argument(f"Specified a list with shape {shape} from a tensor with shape {format_shape(dims[1:])}")
    index = [int(i) for i in ctx.host(indices).reshape(-1)]
    if len(index) != dims[0]:
        ctx.invalid_argument(f"Invalid number of rows in input tensor. Expected: {len(index)} Actual: {dims[0]}")
    for i in index:
        if i < 0:
            ctx.invalid_argument("Indices in TensorListScatter must all be non-negative.")
        if num_elements != -1 and i >= num_elements:
            ctx.invalid_argument(f"TensorListScatter: Trying to scatter at index {i} in list with size {num_elements}")
    lst = TensorList(ctx.attrs["element_dtype"], shape, [None] * max(max(index, default=-1) + 1, num_elements))
    _scatter(ctx, lst, tensor, index)
    return lst


@register_kernel("TensorListSplit")
def _split(ctx: KernelContext, tensor: Any, element_shape: Any, lengths: Any) -> TensorList:
    shape = shape_from_tensor(ctx, element_shape)
    if not shape.unknown_rank() and shape.dims() < 1:
        ctx.invalid_argument(f"TensorListSplit requires element_shape to be at least of rank 1, but saw: {shape}")
    dims = _at_least_vector(ctx, tensor)
    rest = PartialTensorShape() if shape.unknown_rank() else PartialTensorShape(shape.as_list()[1:])  # type: ignore
    if not rest.is_compatible_with(dims[1:]):
        ctx.invalid_argument(f"tensor shape {format_shape(dims)} is not compatible with element_shape {shape}")
    sizes = ctx.host(lengths)
    if sizes.ndim != 1:
        ctx.invalid_argument(f"Expected lengths to be a vector, received shape: {format_shape(sizes.shape)}")
    parts, start = [], 0
    tensor = _rows_source(tensor)
    for length in (int(v) for v in sizes):
        if length < 0:
            ctx.invalid_argument(f"Invalid value in lengths: {length}")
        if start + length > dims[0]:
            ctx.invalid_argument(f"Attempting to slice [{start}, {start + length}] from tensor with length {dims[0]}")
        parts.append(tensor[start:start + length, ...])
        start += length
    if start != dims[0]:
        ctx.invalid_argument(f"Unused values in tensor. Length of tensor: {dims[0]} Values used: {start}")
    return TensorList(ctx.attrs["element_dtype"], shape, parts)


# -- kernels: updating lists -----------------------------------------------------------------------------
@register_kernel("TensorListPushBack")
def _push_back(ctx: KernelContext, handle: Any, tensor: Any) -> TensorList:
    lst = input_list(ctx, handle)
    if ctx.input_dtypes[1] != ctx.attrs["element_dtype"]:  # pragma: no cover - the builder infers element_dtype
        ctx.invalid_argument("Invalid data types")
    if not lst.element_shape.is_compatible_with(tuple(tensor.shape)):
        ctx.invalid_argument(f"Tried to append a tensor with incompatible shape to a list. Op element shape: "
                             f"{format_shape(tuple(tensor.shape))} list shape: {lst.element_shape}")
    _check_dtype(ctx, lst)
    if lst.max_num_elements != -1 and len(lst.tensors) >= lst.max_num_elements:
        ctx.invalid_argument(f"Tried to push item into a full list list size: {len(lst.tensors)} max_num_elements: "
                             f"{lst.max_num_elements}")
    out = lst.copy()
    out.tensors.append(tensor)
    return out


@register_kernel("TensorListPopBack")
def _pop_back(ctx: KernelContext, handle: Any, element_shape: Any) -> tuple[TensorList, Any]:
    lst = input_list(ctx, handle)
    _check_dtype(ctx, lst)
    if not lst.tensors:
        ctx.invalid_argument("Trying to pop from an empty list.")
    value = lst.tensors[-1]
    if value is None:
        shape = _merge(ctx, shape_from_tensor(ctx, element_shape), lst.element_shape)
        if not shape.IsFullyDefined():
            ctx.invalid_argument("Trying to read an uninitialized tensor but element_shape is not fully defined."
                                 f"{shape}")
        value = _zeros(ctx, shape.as_tuple())
    out = lst.copy()
    out.tensors.pop()
    return out, value


def _index(ctx: KernelContext, lst: TensorList, index: Any, verb: str) -> int:
    i = _scalar_int(ctx, index, "index")
    if not 0 <= i < len(lst.tensors):
        ctx.invalid_argument(f"Trying to {verb} element {i} in a list with {len(lst.tensors)} elements.")
    return i


@register_kernel("TensorListSetItem")
def _set_item(ctx: KernelContext, handle: Any, index: Any, item: Any) -> TensorList:
    lst = input_list(ctx, handle)
    _check_dtype(ctx, lst)
    i = _scalar_int(ctx, index, "index")
    if ctx.attrs.get("resize_if_index_out_of_bounds", False) and i >= len(lst.tensors):
        out = lst.copy()
        out.tensors += [None] * (i + 1 - len(out.tensors))
    else:
        if not 0 <= i < len(lst.tensors):
            ctx.invalid_argument(f"Trying to modify element {i} in a list with {len(lst.tensors)} elements.")
        out = lst.copy()
    _check_element(ctx, lst, item, "Tried to set a tensor with incompatible shape at a list index.")
    out.tensors[i] = item
    return out


@register_kernel("TensorListResize")
def _resize(ctx: KernelContext, handle: Any, size: Any) -> TensorList:
    lst = input_list(ctx, handle)
    n = _scalar_int(ctx, size, "size")
    if n < 0:
        ctx.invalid_argument(f"TensorListSlice expects size to be non-negative. Got: {n}")
    out = lst.copy()
    out.tensors = out.tensors[:n] + [None] * max(0, n - len(out.tensors))
    return out


@register_kernel("TensorListScatterIntoExistingList")
def _scatter_existing(ctx: KernelContext, handle: Any, tensor: Any, indices: Any) -> TensorList:
    lst = input_list(ctx, handle)
    if ctx.input_dtypes[1] != lst.element_dtype:
        ctx.invalid_argument(f"Invalid data types; input tensor type: {ctx.input_dtypes[1].short_name} list "
                             f"element_type: {lst.element_dtype.short_name}")
    dims = _at_least_vector(ctx, tensor)
    host = ctx.host(indices)
    if host.ndim != 1:
        ctx.invalid_argument(f"Expected indices to be a vector, but received shape: {format_shape(host.shape)}")
    index = [int(i) for i in host]
    if len(index) != dims[0]:
        ctx.invalid_argument(f"Expected len(indices) == tensor.shape[0], but saw: {len(index)} vs. {dims[0]}")
    if any(i < 0 for i in index):
        ctx.invalid_argument("Indices in TensorListScatter must all be non-negative.")
    out = lst.copy()
    need = max(index, default=-1) + 1
    if need > len(out.tensors):
        out.tensors += [None] * (need - len(out.tensors))
    _scatter(ctx, out, tensor, index)
    return out


# -- kernels: reading lists ----------------------------------------------------------------------------
@register_kernel("TensorListLength")
def _length(ctx: KernelContext, handle: Any) -> Any:
    return ctx.asarray(len(input_list(ctx, handle).tensors), DataType.DT_INT32)


@register_kernel("TensorListElementShape")
def _element_shape(ctx: KernelContext, handle: Any) -> Any:
    shape = input_list(ctx, handle).element_shape
    value = -1 if shape.unknown_rank() else np.asarray(shape.as_list(), dtype=np.int64)
    return ctx.asarray(value, ctx.attrs["shape_type"])


@register_kernel("TensorListGetItem")
def _get_item(ctx: KernelContext, handle: Any, index: Any, element_shape: Any) -> Any:
    lst = input_list(ctx, handle)
    _check_dtype(ctx, lst)
    i = _index(ctx, lst, index, "access")
    value = lst.tensors[i]
    if value is not None:
        return value
    shape = _element_shape_for_read(ctx, lst, element_shape)
    if not shape.IsFullyDefined():
        ctx.invalid_argument(f"Trying to read an uninitialized tensor but element_shape is not fully defined: "
                             f"{shape} and no list element is set.")
    return _zeros(ctx, shape.as_tuple())


@register_kernel("TensorListStack")
def _stack(ctx: KernelContext, handle: Any, element_shape: Any) -> Any:
    lst = input_list(ctx, handle)
    _check_dtype(ctx, lst)
    n = ctx.attrs["num_elements"]
    if n != -1 and len(lst.tensors) != n:
        ctx.invalid_argument(f"Operation expected a list with {n} elements but got a list with {len(lst.tensors)} "
                             "elements.")
    shape = _merge(ctx, shape_from_tensor(ctx, element_shape), lst.element_shape)
    if not shape.IsFullyDefined() and not lst.tensors:
        ctx.invalid_argument(f"Tried to stack elements of an empty list with non-fully-defined element_shape: {shape}")
    shape = _element_shape_for_read(ctx, lst, element_shape)
    if not shape.IsFullyDefined():
        ctx.invalid_argument(f"Tried to stack list which only contains uninitialized tensors and has a "
                             f"non-fully-defined element_shape: {shape}")
    return _stacked(ctx, lst, range(len(lst.tensors)), shape)  # type: ignore[arg-type]


@register_kernel("TensorListGather")
def _gather(ctx: KernelContext, handle: Any, indices: Any, element_shape: Any) -> Any:
    lst = input_list(ctx, handle)
    _check_dtype(ctx, lst)
    index = [int(i) for i in ctx.host(indices).reshape(-1)]
    for i in index:
        if not 0 <= i < len(lst.tensors):
            ctx.invalid_argument(f"Index {i} out o range; list only has {len(lst.tensors)} elements.")
    shape = _merge(ctx, shape_from_tensor(ctx, element_shape), lst.element_shape)
    if not shape.IsFullyDefined() and not index:
        ctx.invalid_argument(f"Tried to gather 0-elements from a list with non-fully-defined shape: {shape}")
    shape = _element_shape_for_read(ctx, lst, element_shape, index)
    if not shape.IsFullyDefined():
        ctx.invalid_argument(f"Tried to gather uninitialized tensors from a list with non-fully-defined "
                             f"element_shape: {shape}")
    return _stacked(ctx, lst, index, shape)


@register_kernel("TensorListConcat", "TensorListConcatV2")
def _concat(ctx: KernelContext, handle: Any, *shape_and_dims: Any) -> tuple[Any, Any]:
    lst = input_list(ctx, handle)
    _check_dtype(ctx, lst)
    if shape_and_dims:  # V2: element_shape and leading_dims inputs
        element_shape = _merge(ctx, shape_from_tensor(ctx, shape_and_dims[0]), lst.element_shape)
        leading = [int(v) for v in ctx.host(shape_and_dims[1]).reshape(-1)]
    else:
        element_shape, leading = ctx.attrs["element_shape"], []
    if not element_shape.unknown_rank() and element_shape.dims() < 1:
        ctx.invalid_argument("Concat requires elements to be at least vectors, found scalars instead.")
    first = -1 if element_shape.unknown_rank() else element_shape.dim_size(0)
    rest = PartialTensorShape() if element_shape.unknown_rank() else \
        PartialTensorShape(element_shape.as_list()[1:])  # type: ignore[index]
    if not lst.tensors and not rest.IsFullyDefined():
        ctx.invalid_argument(f"All except the first dimension must be fully defined when concating an empty tensor "
                             f"list. element_shape: {rest}")
    inferred = first
    uniform = first == -1
    for i, t in enumerate(lst.tensors):
        if t is None:
            continue
        dims = tuple(t.shape)
        if not dims:
            ctx.invalid_argument(f"Concat saw a scalar shape at index {i} but requires at least vectors.")
        rest = _merge(ctx, rest, dims[1:])
        if first != -1 and first != dims[0]:
            ctx.invalid_argument(f"First entry of element_shape input does not match the first dim of list element "
                                 f"at index: {i} Expected: {first} Actual: {dims[0]}")
        if uniform:
            if inferred == -1:
                inferred = dims[0]
            elif inferred != dims[0]:
                inferred, uniform = -1, False
    if not rest.IsFullyDefined():
        ctx.invalid_argument(f"Trying to concat list with only uninitialized tensors but "
                             f"element_shape_except_first_dim_ is not fully defined: {rest}")
    lengths, parts = [], []
    for i, t in enumerate(lst.tensors):
        if t is None:
            if i < len(leading):
                dim = leading[i]
            elif inferred != -1:
                dim = inferred
            elif not shape_and_dims:
                ctx.invalid_argument("Concating lists with uninitialized tensors is not supported in this version "
                                     "of TensorListConcat. Consider updating your GraphDef to run the newer version.")
            else:
                ctx.invalid_argument(f"List contains uninitialized tensor at index {i} but leading_dims has only "
                                     f"{len(leading)} elements.")
            t = _zeros(ctx, (dim,) + rest.as_tuple())
        lengths.append(int(t.shape[0]))
        parts.append(t)
    value = ctx.xp.concat(parts, axis=0) if parts else _zeros(ctx, (0,) + rest.as_tuple())
    return value, ctx.asarray(np.asarray(lengths, dtype=np.int64), DataType.DT_INT64)


# -- variant arithmetic (what ZerosLike and AddN do to lists: gradients of list ops sum and zero them) ---------
def zeros_like_list(ctx: KernelContext, value: Any) -> TensorList:
    """TF's TensorListZerosLike: same length and shapes, every set element zeros."""
    lst = input_list(ctx, value)
    xp = ctx.xp
    return TensorList(lst.element_dtype, lst.element_shape,
                      [None if t is None else xp.zeros_like(t) for t in lst.tensors], lst.max_num_elements)


def add_lists(ctx: KernelContext, values: Sequence[Any]) -> TensorList:
    """TF's TensorListBinaryAdd over several lists: element-wise sums (an unset element adds as zeros)."""
    total = input_list(ctx, values[0])
    for value in values[1:]:
        other = input_list(ctx, value)
        if other.element_dtype != total.element_dtype:
            ctx.invalid_argument(f"Trying to add two lists of tensors of different dtypes. One is "
                                 f"{total.element_dtype.short_name} and the other is {other.element_dtype.short_name}")
        if not total.element_shape.is_compatible_with(other.element_shape):
            ctx.invalid_argument(f"Trying to add two lists of tensors with incompatible element shapes. One is "
                                 f"{total.element_shape} and the other is {other.element_shape}")
        if len(total.tensors) != len(other.tensors):
            ctx.invalid_argument(f"Trying to add two lists of tensors with different lengths. One is "
                                 f"{len(total.tensors)} and the other is {len(other.tensors)}")
        sums = [b if a is None else a if b is None else ctx.xp.add(a, b) for a, b in zip(total.tensors, other.tensors)]
        total = TensorList(total.element_dtype, total.element_shape.merge_with(other.element_shape), sums,
                           total.max_num_elements)
    return total


# -- conformance: lists only make sense in sequence (raw-op programs in tests/control_flow check their errors) -----
def _cases(op: str) -> list:
    from tfops_py.kernels.control_flow._graph_cases import LIST_CASES, for_op

    return for_op(op, LIST_CASES)


for _op in ("EmptyTensorList", "TensorListReserve", "TensorListFromTensor", "TensorListScatter", "TensorListScatterV2",
            "TensorListScatterIntoExistingList", "TensorListSplit", "TensorListPushBack", "TensorListPopBack",
            "TensorListSetItem", "TensorListResize", "TensorListLength", "TensorListElementShape", "TensorListGetItem",
            "TensorListStack", "TensorListGather", "TensorListConcat", "TensorListConcatV2"):
    conformance(_op, generate=False, graph_cases=_cases(_op))
divergence("TensorListScatterIntoExistingList", when="an index at or past the list's end",
           tf="grows the list but writes the row to its first new slot (indices [5, 1] on a 4-element list put "
              "row 0 at index 4)", ours="writes each row at its index")

__all__ = ["TensorList", "add_lists", "input_list", "shape_from_tensor", "zeros_like_list"]
