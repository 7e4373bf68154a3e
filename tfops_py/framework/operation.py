"""Operation, Output, Input and InputList: the handles of TF's C++ ops.h."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.dtypes import DataType

if TYPE_CHECKING:
    from tfops_py.framework.graph import Node
    from tfops_py.framework.tensor_shape import PartialTensorShape


class Operation:
    """A handle on a node (``tensorflow::Operation``); equal when it wraps the same node."""

    __slots__ = ("_node",)

    def __init__(self, node: Node | None = None):
        self._node = node

    def node(self) -> Node | None:
        return self._node

    def _checked(self) -> Node:
        if self._node is None:
            raise InvalidArgumentError("operation has no node (it was built on a scope in error)")
        return self._node

    def name(self) -> str:
        return self._checked().name

    def num_inputs(self) -> int:
        return self._checked().num_inputs()

    def input_type(self, i: int) -> DataType:
        return self._checked().input_types[i]

    def input(self, i: int) -> Output:
        return self._checked().inputs[i]

    def num_outputs(self) -> int:
        return self._checked().num_outputs()

    def output_type(self, i: int) -> DataType:
        return self._checked().output_types[i]

    def output(self, i: int) -> Output:
        node = self._checked()
        if not 0 <= i < node.num_outputs():
            raise IndexError(f"output index {i} out of range for node '{node.name}' "
                             f"with {node.num_outputs()} outputs")
        return Output(node, i)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Operation) and other._node is self._node

    def __hash__(self) -> int:
        return id(self._node)

    def __repr__(self) -> str:
        if self._node is None:
            return "<Operation (null)>"
        return f"<Operation {self._node.name!r} op={self._node.op}>"


class Output:
    """One output tensor of a node: ``(node, index)``, named ``"node:index"``."""

    __slots__ = ("_node", "_index")

    def __init__(self, node: Node | Operation | None = None, index: int = 0):
        if isinstance(node, Operation):
            node = node.node()
        self._node = node
        self._index = index

    def node(self) -> Node | None:
        return self._node

    def op(self) -> Operation:
        return Operation(self._node)

    def index(self) -> int:
        return self._index

    def type(self) -> DataType:
        return self._checked().output_types[self._index]

    def shape(self) -> PartialTensorShape:
        """The shape inferred when the node was built (unknown dims as -1)."""
        return self._checked().output_shapes[self._index]

    def name(self) -> str:
        node = self._checked()
        return f"{node.name}:{self._index}"

    def _checked(self) -> Node:
        if self._node is None:
            raise InvalidArgumentError("Output has no node (it was built on a scope in error)")
        return self._node

    def is_null(self) -> bool:
        return self._node is None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Output) and other._node is self._node and other._index == self._index

    def __hash__(self) -> int:
        return hash((id(self._node), self._index))

    def __repr__(self) -> str:
        if self._node is None:
            return "<Output (null)>"
        return f"<Output {self._node.name}:{self._index} {self.type().name}>"


OutputList = list  # ``typedef std::vector<Output> OutputList``


def NoGradient() -> Output:
    """The sentinel for 'no gradient flows to this input' (``Output(nullptr, -1)``)."""
    return Output(None, -1)


class Input:
    """What an op takes: an existing Output or a literal that becomes a Const node.

    ``Input(x)`` accepts an Output, a single-output op object, an Operation-like
    object with ``.output``, a NumPy array, a Python scalar or a nested list.
    """

    __slots__ = ("output", "tensor", "status_error")

    def __init__(self, value: Any):
        from tfops_py.framework.tensor import literal_to_array

        self.output: Output | None = None
        self.tensor = None
        self.status_error: Exception | None = None
        if isinstance(value, Input):
            self.output, self.tensor, self.status_error = value.output, value.tensor, value.status_error
            return
        out = as_output(value)
        if out is not None:
            self.output = out
            return
        try:
            self.tensor = literal_to_array(value)
        except InvalidArgumentError as e:
            self.status_error = e

    def __repr__(self) -> str:
        if self.output is not None:
            return f"Input({self.output!r})"
        return f"Input(literal {getattr(self.tensor, 'shape', None)})"


def as_output(value: Any) -> Output | None:
    """The Output a value stands for, or None if it is a literal."""
    if isinstance(value, Output):
        return value
    if isinstance(value, Operation):
        node = value.node()
        if node is not None and node.num_outputs() == 1:
            return Output(node, 0)
        raise InvalidArgumentError("an Operation can be used as an input only if it has exactly one output")
    to_output = getattr(value, "__tfops_output__", None)
    if to_output is not None:
        return to_output()
    op = getattr(value, "operation", None)
    if isinstance(op, Operation):
        node = op.node()
        n = node.num_outputs() if node is not None else 0
        raise InvalidArgumentError(
            f"{type(value).__name__} has {n} outputs and cannot be used as a single input; "
            f"pass one of its output members instead")
    return None


class InputList(list):
    """A list of Inputs (``InputList``): from an OutputList or any iterable of input-like values."""

    def __init__(self, values: Iterable[Any] = ()):
        super().__init__(v if isinstance(v, Input) else Input(v) for v in values)


InputLike = Output | Input | Any
