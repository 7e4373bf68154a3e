"""Name resolution for Run and callables: TF's tensor names ("x:0", "x") and op names next to Outputs.

``CallableOptions`` mirrors TF's message (``feed``, ``fetch``, ``target``, ``run_options``), and also
takes Outputs and ops where TF takes names.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from tfops_py.errors import InvalidArgumentError, NotFoundError
from tfops_py.framework.graph import Graph
from tfops_py.framework.operation import Operation, Output, as_output


@dataclasses.dataclass
class CallableOptions:
    feed: list[Any] = dataclasses.field(default_factory=list)
    fetch: list[Any] = dataclasses.field(default_factory=list)
    target: list[Any] = dataclasses.field(default_factory=list)
    run_options: Any = None


def tensor_by_name(graph: Graph, name: str) -> Output:
    """``"node:k"`` (or ``"node"``: output 0) in ``graph``; NotFoundError as TF's Session."""
    node_name, sep, index = name.partition(":")
    node = graph.find_node(node_name)
    if node is None:
        raise NotFoundError(f"Tensor {name}, specified in either feed_devices or fetch_devices was not in the Graph"
                            if sep else f"FetchOutputs node {name}: not found")
    if sep and not index.isdigit():
        raise InvalidArgumentError(f"Invalid tensor name: {name}")
    k = int(index) if sep else 0
    if k >= node.num_outputs():
        raise InvalidArgumentError(f"Tensor {node_name}:{k}, specified in either feed_devices or fetch_devices "
                                   f"was not in the Graph")
    return Output(node, k)


def output_of(graph: Graph, value: Any, what: str) -> Output:
    if isinstance(value, str):
        return tensor_by_name(graph, value)
    out = as_output(value)
    if out is None or out.node() is None:
        shown = type(value).__name__ if what == "fetch" else repr(value)
        raise InvalidArgumentError(f"{what} must be an Output or a single-output op (or a tensor name), got {shown}")
    return out


def node_of(graph: Graph, value: Any) -> Any:
    if isinstance(value, str):
        node = graph.find_node(value)
        if node is None:
            raise NotFoundError(f"Run target {value} not found in the graph")
        return node
    if isinstance(value, Output):
        value = value.op()
    op = value if isinstance(value, Operation) else getattr(value, "operation", None)
    if not isinstance(op, Operation) or op.node() is None:
        raise InvalidArgumentError(f"run target must be an Operation or op object (or an op name), got {value!r}")
    return op.node()
