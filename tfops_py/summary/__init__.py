"""TensorBoard: event files with the graph and summaries, readable by TensorBoard and tf.summary tools.

    writer = FileWriter("logs/run1")
    writer.add_graph(root)                              # the Graphs tab
    loss_summary = ops.ScalarSummary(root, "loss", loss)
    (s,) = session.Run(feeds, [loss_summary]); writer.add_summary(s, step)   # the Scalars tab

See ``docs/tensorboard.md``.  Writing needs ``google-crc32c`` (the ``[tensorboard]`` extra).
"""
from __future__ import annotations

from tfops_py.summary.histogram import default_bucket_limits, fill_histogram
from tfops_py.summary.protos import Event, HistogramProto, Summary, SummaryMetadata
from tfops_py.summary.writer import FileWriter, masked_crc32c, tfrecord

__all__ = ["Event", "FileWriter", "HistogramProto", "Summary", "SummaryMetadata", "default_bucket_limits",
           "fill_histogram", "masked_crc32c", "tfrecord"]
