"""TensorBoard summary ops.

ScalarSummary, HistogramSummary, TensorSummaryV2, MergeSummary return serialized ``Summary`` protos
as string scalars, byte for byte as TF does.  The writer ops (SummaryWriter, CreateSummaryFileWriter,
Write{Scalar,Histogram,Graph,RawProto}Summary, WriteSummary, Flush/CloseSummaryWriter) write event
files through a writer kept in the session's resources.  Strings and handles live on the host, so
these kernels are registered for the NumPy backend only (TF runs them on the CPU); the message
classes come from ``tfops_py.summary`` (imported when a kernel first runs).
"""
from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from tfops_py.framework.shape_inference import InferenceContext, register_shape
from tfops_py.framework.tensor_shape import PartialTensorShape, format_shape
from tfops_py.kernels.registry import KernelContext, register_kernel
from tfops_py.kernels.resources.handles import (ResourceHandle, as_handle, delete, handle_from_attrs, lookup,
                                                lookup_or_create, missing)

WRITER_TYPE = "N10tensorflow22SummaryWriterInterfaceE"  # TF names the resource type so in its errors


def _string_scalar(data: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = data
    return out


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


@register_shape("ScalarSummary", "HistogramSummary", "MergeSummary", "TensorSummaryV2", "SummaryWriter")
def _summary_shape(ctx: InferenceContext) -> list[PartialTensorShape]:
    return [PartialTensorShape([])]


@register_kernel("ScalarSummary", backend="numpy")
def _scalar_summary(ctx: KernelContext, tags: Any, values: Any) -> np.ndarray:
    from tfops_py.summary.protos import Summary

    tags, values = np.asarray(tags), np.asarray(values)
    if tags.shape != values.shape:
        ctx.invalid_argument(f"tags and values are not the same shape: {format_shape(tags.shape)} != "
                             f"{format_shape(values.shape)}")
    summary = Summary()
    for tag, value in zip(tags.reshape(-1).tolist(), values.reshape(-1).astype(np.float32).tolist()):
        summary.value.add(tag=_text(tag), simple_value=value)
    return _string_scalar(summary.SerializeToString())


def _scalar_string(ctx: KernelContext, value: Any, what: str) -> str:
    value = np.asarray(value)
    if value.shape != ():
        ctx.invalid_argument(f"{what} must be scalar, got shape {format_shape(value.shape)}")
    return _text(value.item())


def _histogram_value(ctx: KernelContext, tag: str, values: Any, summary: Any) -> None:
    from tfops_py.summary.histogram import fill_histogram

    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.isfinite(flat).all():
        ctx.invalid_argument(f"Nan in summary histogram for: {tag}")
    fill_histogram(flat, summary.value.add(tag=tag).histo)


@register_kernel("HistogramSummary", backend="numpy")
def _histogram_summary(ctx: KernelContext, tag: Any, values: Any) -> np.ndarray:
    from tfops_py.summary.protos import Summary

    summary = Summary()
    _histogram_value(ctx, _scalar_string(ctx, tag, "tags"), values, summary)
    return _string_scalar(summary.SerializeToString())


def _tensor_value(ctx: KernelContext, tag: str, tensor: Any, metadata: bytes, dtype: Any) -> Any:
    """A ``Summary`` with one tensor value, encoded as TF's TensorSummaryV2 and WriteSummary encode it:
    strings as ``string_val``, everything else as raw ``tensor_content``."""
    from google.protobuf.message import DecodeError

    from tfops_py.summary.protos import Summary

    summary = Summary()
    value = summary.value.add(tag=tag)
    try:
        value.metadata.ParseFromString(metadata)
    except DecodeError:
        ctx.invalid_argument("Could not parse serialized_summary_metadata")
    arr = np.asarray(tensor)
    proto = value.tensor
    proto.dtype = int(dtype)
    proto.tensor_shape.SetInParent()
    for d in arr.shape:
        proto.tensor_shape.dim.add(size=d)
    if arr.dtype == object:
        proto.string_val.extend(v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in arr.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(arr).tobytes()
    return summary


@register_kernel("TensorSummaryV2", backend="numpy")
def _tensor_summary(ctx: KernelContext, tag: Any, tensor: Any, metadata: Any) -> np.ndarray:
    name = _scalar_string(ctx, tag, "tag")
    meta = bytes(np.asarray(metadata).item())
    return _string_scalar(_tensor_value(ctx, name, tensor, meta, ctx.input_dtypes[1]).SerializeToString())


@register_kernel("MergeSummary", backend="numpy")
def _merge_summary(ctx: KernelContext, inputs: list[Any]) -> np.ndarray:
    from google.protobuf.message import DecodeError

    from tfops_py.summary.protos import Summary

    merged = Summary()
    seen: set[str] = set()
    for i, value in enumerate(inputs):
        for item in np.asarray(value).reshape(-1).tolist():
            part = Summary()
            try:
                part.ParseFromString(bytes(item))
            except DecodeError:
                ctx.invalid_argument(f"Could not parse one of the summary inputs (input {i})")
            for v in part.value:
                if v.tag in seen:
                    ctx.invalid_argument(f"Duplicate tag {v.tag} found in summary inputs ")
                if v.tag:
                    seen.add(v.tag)
                merged.value.add().CopyFrom(v)
    return _string_scalar(merged.SerializeToString())


@register_shape("CreateSummaryFileWriter", "WriteScalarSummary", "WriteHistogramSummary", "WriteSummary",
                "WriteGraphSummary", "WriteRawProtoSummary", "FlushSummaryWriter", "CloseSummaryWriter")
def _no_outputs(ctx: InferenceContext) -> list[PartialTensorShape]:
    return []


# -- the writer resource ------------------------------------------------------------------------------
class SummaryWriterResource:
    """A session's summary writer (TF's ``SummaryWriterInterface``): created by CreateSummaryFileWriter,
    flushed after ``max_queue`` events or ``flush_millis``, closed by CloseSummaryWriter."""

    def __init__(self, name: str):
        self.name = name
        self.writer: Any = None  # a tfops_py.summary.FileWriter once CreateSummaryFileWriter ran
        self.max_queue = 10
        self.flush_millis = 120_000
        self.pending = 0
        self.last_flush = time.monotonic()
        self.lock = threading.Lock()

    def write(self, event: Any) -> None:
        with self.lock:
            self.writer.write_event(event)
            self.pending += 1
            if self.pending >= self.max_queue or (time.monotonic() - self.last_flush) * 1000 >= self.flush_millis:
                self._flush()

    def _flush(self) -> None:
        self.writer.flush()
        self.pending, self.last_flush = 0, time.monotonic()

    def flush(self) -> None:
        with self.lock:
            self._flush()

    def close(self) -> None:
        with self.lock:
            self.writer.close()


@register_kernel("SummaryWriter", backend="numpy")
def _summary_writer(ctx: KernelContext) -> ResourceHandle:
    return handle_from_attrs(ctx, WRITER_TYPE)  # the writer itself is made by CreateSummaryFileWriter


def _writer(ctx: KernelContext, handle: Any, create: bool = False) -> SummaryWriterResource:
    h = as_handle(ctx, handle, "writer")
    if create:
        return lookup_or_create(ctx, h, lambda: SummaryWriterResource(h.name))
    resource = lookup(ctx, h)
    if resource is None:  # never created, or closed (TF deletes the resource): NotFoundError as in TF
        raise missing(ctx, h)
    return resource


def _int_scalar(ctx: KernelContext, value: Any, what: str) -> int:
    value = np.asarray(value)
    if value.shape != ():
        ctx.invalid_argument(f"{what} must be scalar, got shape {format_shape(value.shape)}")
    return int(value)


@register_kernel("CreateSummaryFileWriter", backend="numpy")
def _create_file_writer(ctx: KernelContext, handle: Any, logdir: Any, max_queue: Any, flush_millis: Any,
                        filename_suffix: Any) -> tuple:
    from tfops_py.summary.writer import FileWriter

    resource = _writer(ctx, handle, create=True)
    with resource.lock:
        if resource.writer is None:  # TF: LookupOrCreate, an existing writer is kept
            resource.max_queue = max(1, _int_scalar(ctx, max_queue, "max_queue"))
            resource.flush_millis = _int_scalar(ctx, flush_millis, "flush_millis")
            resource.writer = FileWriter(_scalar_string(ctx, logdir, "logdir"),
                                         filename_suffix=_scalar_string(ctx, filename_suffix, "filename_suffix"))
    return ()


def _event(step: int, **fields: Any) -> Any:
    from tfops_py.summary.protos import Event

    return Event(wall_time=time.time(), step=step, **fields)


@register_kernel("WriteScalarSummary", backend="numpy")
def _write_scalar(ctx: KernelContext, handle: Any, step: Any, tag: Any, value: Any) -> tuple:
    from tfops_py.summary.protos import Summary

    value = np.asarray(value)
    if value.size == 0:
        ctx.invalid_argument("value must have at least one element")
    summary = Summary()
    summary.value.add(tag=_scalar_string(ctx, tag, "tag"), simple_value=float(value.reshape(-1)[0]))
    _writer(ctx, handle).write(_event(_int_scalar(ctx, step, "step"), summary=summary))
    return ()


@register_kernel("WriteHistogramSummary", backend="numpy")
def _write_histogram(ctx: KernelContext, handle: Any, step: Any, tag: Any, values: Any) -> tuple:
    from tfops_py.summary.protos import Summary

    summary = Summary()
    _histogram_value(ctx, _scalar_string(ctx, tag, "tag"), values, summary)
    _writer(ctx, handle).write(_event(_int_scalar(ctx, step, "step"), summary=summary))
    return ()


@register_kernel("WriteSummary", backend="numpy")
def _write_summary(ctx: KernelContext, handle: Any, step: Any, tensor: Any, tag: Any, metadata: Any) -> tuple:
    meta = bytes(np.asarray(metadata).item())
    summary = _tensor_value(ctx, _scalar_string(ctx, tag, "tag"), tensor, meta, ctx.input_dtypes[2])
    _writer(ctx, handle).write(_event(_int_scalar(ctx, step, "step"), summary=summary))
    return ()


@register_kernel("WriteGraphSummary", backend="numpy")
def _write_graph(ctx: KernelContext, handle: Any, step: Any, tensor: Any) -> tuple:
    from google.protobuf.message import DecodeError

    from tfops_py.graphdef.schema import GraphDef

    data = bytes(np.asarray(tensor).item()) if np.asarray(tensor).shape == () else b""
    try:
        GraphDef.FromString(data)
    except DecodeError:
        ctx.invalid_argument("Could not parse the serialized GraphDef in 'tensor'")
    _writer(ctx, handle).write(_event(_int_scalar(ctx, step, "step"), graph_def=data))
    return ()


@register_kernel("WriteRawProtoSummary", backend="numpy")
def _write_raw_proto(ctx: KernelContext, handle: Any, step: Any, tensor: Any) -> tuple:
    from google.protobuf.message import DecodeError

    from tfops_py.summary.protos import Summary

    resource, at = _writer(ctx, handle), _int_scalar(ctx, step, "step")
    for item in np.asarray(tensor).reshape(-1).tolist():
        summary = Summary()
        try:
            summary.ParseFromString(bytes(item))
        except DecodeError:
            ctx.invalid_argument("failed to parse one of the serialized Summary protos")
        resource.write(_event(at, summary=summary))
    return ()


@register_kernel("FlushSummaryWriter", backend="numpy")
def _flush_writer(ctx: KernelContext, handle: Any) -> tuple:
    _writer(ctx, handle).flush()
    return ()


@register_kernel("CloseSummaryWriter", backend="numpy")
def _close_writer(ctx: KernelContext, handle: Any) -> tuple:
    _writer(ctx, handle).close()
    delete(ctx, as_handle(ctx, handle, "writer"))  # as TF: a later write is NotFoundError
    return ()
