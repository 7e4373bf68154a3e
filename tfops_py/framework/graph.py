"""Graph and Node: a NodeDef-like record per op, kept in creation order."""
from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from tfops_py.framework.dtypes import DataType
from tfops_py.framework.function import FunctionLibraryDefinition
from tfops_py.framework.op_def import OpDef
from tfops_py.framework.tensor_shape import PartialTensorShape

if TYPE_CHECKING:
    from tfops_py.framework.operation import Output

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def caller_outside_package() -> tuple[str, int] | None:
    """(file, line) of the innermost frame outside tfops_py: where the user's code built a node.

    Walks frame links only (no traceback objects, no source lines): about a microsecond per node.
    """
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


class Node:
    """One op in a graph: name, op type, data inputs, control inputs, attrs, device."""

    __slots__ = ("id", "name", "op", "op_def", "inputs", "control_inputs", "attrs",
                 "requested_device", "assigned_device", "input_types", "output_types",
                 "output_shapes", "graph", "defined_at", "__weakref__")

    def __init__(self, graph: Graph, node_id: int, name: str, op_def: OpDef, inputs: list[Output],
                 control_inputs: list[Node], attrs: dict[str, Any], input_types: list[DataType],
                 output_types: list[DataType], requested_device: str = "", assigned_device: str = ""):
        self.graph = graph
        self.id = node_id
        self.name = name
        self.op = op_def.name
        self.op_def = op_def
        self.inputs = inputs
        self.control_inputs = control_inputs
        self.attrs = attrs
        self.input_types = input_types
        self.output_types = output_types
        self.output_shapes: list[PartialTensorShape] = [PartialTensorShape() for _ in output_types]
        self.requested_device = requested_device
        self.assigned_device = assigned_device
        # (file, line) of the user's code that built the node, as TF's "defined at"; None if unknown
        self.defined_at: tuple[str, int] | None = None

    # C++-style accessors
    def type_string(self) -> str:
        return self.op

    def num_inputs(self) -> int:
        return len(self.inputs)

    def num_outputs(self) -> int:
        return len(self.output_types)

    def output_type(self, i: int) -> DataType:
        return self.output_types[i]

    def input_type(self, i: int) -> DataType:
        return self.input_types[i]

    @property
    def device(self) -> str:
        """The assigned device if any, else the requested one."""
        return self.assigned_device or self.requested_device

    def __repr__(self) -> str:
        return f"<Node {self.name!r} op={self.op}>"


class Graph:
    """Nodes in creation order plus a name index.  Adding nodes is thread-safe."""

    def __init__(self) -> None:
        self._nodes: list[Node] = []
        self._by_name: dict[str, Node] = {}
        self._lock = threading.Lock()
        # The function library (``Graph::flib_def``): functions that nodes call or that While/If/Case run.
        self.library = FunctionLibraryDefinition()
        # Loops built by ops.BuildWhileLoop, by frame name (``Graph::AddWhileContext``): gradients use them.
        self.while_contexts: dict[str, Any] = {}

    def add_node(self, name: str, op_def: OpDef, inputs: list[Output], control_inputs: list[Node],
                 attrs: dict[str, Any], input_types: list[DataType], output_types: list[DataType],
                 requested_device: str = "", assigned_device: str = "") -> Node:
        with self._lock:
            if name in self._by_name:
                from tfops_py.errors import InvalidArgumentError

                raise InvalidArgumentError(f"Duplicate node name in graph: '{name}'", op_type=op_def.name)
            node = Node(self, len(self._nodes), name, op_def, inputs, control_inputs, attrs,
                        input_types, output_types, requested_device, assigned_device)
            node.defined_at = caller_outside_package()
            self._nodes.append(node)
            self._by_name[name] = node
            return node

    def AddFunctionLibrary(self, library: Any) -> None:
        """Add functions (a FunctionLibraryDefinition or FunctionDefs) to the graph's library.

        A GraphDef's ``FunctionDefLibrary`` message converts with
        ``tfops_py.graphdef.function_library_from_proto``.
        """
        self.library.AddLibrary(library)

    def UpdateEdge(self, new_src: Any, dst: Node, dst_index: int) -> None:
        """Make input ``dst_index`` of ``dst`` read ``new_src`` (how loops close their back edges)."""
        from tfops_py.errors import InvalidArgumentError
        from tfops_py.framework.operation import as_output

        new_src = as_output(new_src)
        src = new_src.node() if new_src is not None else None
        if new_src is None or src is None or src.graph is not self or dst.graph is not self:
            raise InvalidArgumentError(f"UpdateEdge: both nodes must be in this graph (input {dst_index} of "
                                       f"'{dst.name}')")
        if not 0 <= dst_index < len(dst.inputs):
            raise InvalidArgumentError(f"UpdateEdge: node '{dst.name}' has no input {dst_index}")
        if new_src.type() != dst.input_types[dst_index]:
            raise InvalidArgumentError(
                f"UpdateEdge: input {dst_index} of '{dst.name}' is {dst.input_types[dst_index].short_name}, "
                f"'{new_src.name()}' is {new_src.type().short_name}")
        with self._lock:
            dst.inputs[dst_index] = new_src

    def AddEdge(self, source: Node, x: int, dest: Node, y: int) -> None:
        """``Graph::AddEdge``: output ``x`` of ``source`` feeds input ``y`` of ``dest`` (an input slot it has)."""
        from tfops_py.framework.operation import Output

        self.UpdateEdge(Output(source, x), dest, y)

    def truncate(self, num_nodes: int) -> None:
        """Remove every node added after the graph had ``num_nodes`` (undoing a failed import)."""
        with self._lock:
            for node in self._nodes[num_nodes:]:
                self._by_name.pop(node.name, None)
            del self._nodes[num_nodes:]

    def nodes(self) -> list[Node]:
        return list(self._nodes)

    def num_nodes(self) -> int:
        return len(self._nodes)

    def find_node(self, name: str) -> Node | None:
        return self._by_name.get(name)

    def node_by_id(self, node_id: int) -> Node:
        return self._nodes[node_id]

    def __len__(self) -> int:
        return len(self._nodes)

    def __iter__(self):
        return iter(list(self._nodes))
