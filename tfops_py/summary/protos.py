"""TensorBoard's messages (TF's ``summary.proto`` and ``event.proto``), described as data like the GraphDef ones.

Field names and numbers are facts of TF's wire format; only the fields tfops_py writes are listed
(a reader skips nothing it needs: TensorBoard parses these messages with its own classes).
"""
from __future__ import annotations

from tfops_py.graphdef import schema

_MESSAGES = {
    "HistogramProto": [("min", 1, "double", ""), ("max", 2, "double", ""), ("num", 3, "double", ""),
                       ("sum", 4, "double", ""), ("sum_squares", 5, "double", ""),
                       ("bucket_limit", 6, "double", "r"), ("bucket", 7, "double", "r")],
    "SummaryMetadata": [("plugin_data", 1, "SummaryMetadata.PluginData", ""), ("display_name", 2, "string", ""),
                        ("summary_description", 3, "string", "")],
    "SummaryMetadata.PluginData": [("plugin_name", 1, "string", ""), ("content", 2, "bytes", "")],
    "Summary": [("value", 1, "Summary.Value", "r")],
    "Summary.Value": [("node_name", 7, "string", ""), ("tag", 1, "string", ""),
                      ("metadata", 9, "SummaryMetadata", ""), ("simple_value", 2, "float", "o:value"),
                      ("histo", 5, "HistogramProto", "o:value"), ("tensor", 8, "TensorProto", "o:value")],
    "Event": [("wall_time", 1, "double", ""), ("step", 2, "int64", ""), ("file_version", 3, "string", "o:what"),
              ("graph_def", 4, "bytes", "o:what"), ("summary", 5, "Summary", "o:what"),
              ("source_metadata", 10, "SourceMetadata", "")],
    "SourceMetadata": [("writer", 1, "string", "")],
}


# In the shared pool of TF messages, next to TensorProto (which Summary.Value.tensor uses).
_CLASSES = schema.add_proto_file("tfops_py/summary/summary.proto", _MESSAGES)
Summary = _CLASSES["Summary"]
HistogramProto = _CLASSES["HistogramProto"]
SummaryMetadata = _CLASSES["SummaryMetadata"]
Event = _CLASSES["Event"]

__all__ = ["Event", "HistogramProto", "Summary", "SummaryMetadata"]
