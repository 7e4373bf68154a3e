"""Event files TensorBoard reads: TFRecord framing (length, masked CRC-32C) around ``Event`` messages."""
from __future__ import annotations

import os
import socket
import struct
import threading
import time
from typing import Any

import numpy as np

from tfops_py.errors import FailedPreconditionError
from tfops_py.summary.histogram import fill_histogram
from tfops_py.summary.protos import Event, Summary

_MASK_DELTA = 0xA282EAD8
WRITER_NAME = "tfops_py.summary"


def _crc32c(data: bytes) -> int:
    try:
        import google_crc32c
    except ImportError:
        raise FailedPreconditionError("writing TensorBoard event files needs google-crc32c "
                                      "(pip install 'tfops_py[tensorboard]')") from None
    return google_crc32c.value(data)


def masked_crc32c(data: bytes) -> int:
    """TFRecord's checksum: CRC-32C rotated right by 15 bits plus a constant."""
    crc = _crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def tfrecord(data: bytes) -> bytes:
    """One TFRecord: length, its masked CRC, the data, its masked CRC."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc32c(length)) + data + struct.pack("<I", masked_crc32c(data))


class FileWriter:
    """Writes one ``events.out.tfevents.*`` file in ``logdir``, as ``tf.summary`` writers do.

    ``add_graph(scope)`` stores the GraphDef (TensorBoard's Graphs tab); ``add_scalar`` /
    ``add_histogram`` write values directly; ``add_summary`` writes a serialized ``Summary`` that a
    ``ScalarSummary`` / ``HistogramSummary`` / ``MergeSummary`` node returned from a Run.
    """

    def __init__(self, logdir: str | os.PathLike, filename_suffix: str = ""):
        os.makedirs(logdir, exist_ok=True)
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}{filename_suffix}"
        self.path = os.path.join(os.fspath(logdir), name)
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self._lock = threading.Lock()
        first = Event(wall_time=time.time(), file_version="brain.Event:2")
        first.source_metadata.writer = WRITER_NAME  # TF writes "tensorflow.core.util.events_writer" here
        self._write(first)

    def write_event(self, event: Any) -> None:
        """Append one ``Event`` message (the summary writer ops use this)."""
        self._write(event)

    def _write(self, event: Any) -> None:
        with self._lock:
            if self._file.closed:
                raise FailedPreconditionError(f"summary writer for {self.path} is closed")
            self._file.write(tfrecord(event.SerializeToString()))

    def add_graph(self, graph: Any, step: int = 0) -> None:
        """The graph of a Scope (or a Graph, or a GraphDef message / its bytes)."""
        if isinstance(graph, (bytes, bytearray)):
            data = bytes(graph)
        elif hasattr(graph, "SerializeToString"):
            data = graph.SerializeToString()
        else:
            from tfops_py.graphdef import graph_def_to_bytes, to_graph_def

            data = graph_def_to_bytes(to_graph_def(graph))
        self._write(Event(wall_time=time.time(), step=step, graph_def=data))

    def add_summary(self, summary: Any, step: int = 0) -> None:
        """A ``Summary`` message or its serialized bytes (a summary op's output, a NumPy bytes scalar too)."""
        if hasattr(summary, "SerializeToString"):
            message = summary
        else:
            raw = summary.item() if isinstance(summary, np.ndarray) else summary
            message = Summary.FromString(bytes(raw))
        self._write(Event(wall_time=time.time(), step=step, summary=message))

    def add_scalar(self, tag: str, value: float, step: int = 0) -> None:
        summary = Summary()
        summary.value.add(tag=tag, simple_value=float(value))
        self.add_summary(summary, step)

    def add_histogram(self, tag: str, values: Any, step: int = 0) -> None:
        summary = Summary()
        fill_histogram(np.asarray(values), summary.value.add(tag=tag).histo)
        self.add_summary(summary, step)

    def flush(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
