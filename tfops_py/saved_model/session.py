"""TF's core ``Session`` interface (tensorflow/core/public/session.h) over a ClientSession.

Feeds and fetches are tensor *names* (``"x:0"``, ``"y"`` meaning ``"y:0"``),
targets are node names, as in C++::

    outputs = session.Run([("x:0", batch)], ["y:0"], [])
    outputs = session.Run(run_options, [("x:0", batch)], ["y:0"], [], run_metadata)
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tfops_py.client.session import ClientSession
from tfops_py.client.session_options import SessionOptions
from tfops_py.errors import AlreadyExistsError, CancelledError, InvalidArgumentError, NotFoundError
from tfops_py.framework.operation import Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.graphdef.import_ import import_graph_def, parse_tensor_name


class Session:
    """``tensorflow::Session`` on one graph: ``Create``/``Extend`` with a GraphDef, ``Run`` by names."""

    def __init__(self, options: SessionOptions | None = None, graph_def: Any = None):
        self.options = options or SessionOptions()
        self._scope = Scope.NewRootScope()
        self._client: ClientSession | None = None
        self._closed = False
        if graph_def is not None:
            self.Create(graph_def)

    def Create(self, graph_def: Any) -> None:
        """Load the graph (TF: only into an empty session)."""
        if self._scope.graph().num_nodes():
            raise AlreadyExistsError("A Graph has already been created for this session.")
        self.Extend(graph_def)

    def Extend(self, graph_def: Any) -> None:
        if self._closed:
            raise CancelledError("Session has been closed.")
        import_graph_def(self._scope, graph_def)
        if self._client is None:  # the options whole: backend, devices, config (threads, optimizer), target
            self._client = ClientSession(self._scope, self.options)

    @property
    def scope(self) -> Scope:
        """The root scope of the session's graph (to build more ops on it, or to export it)."""
        return self._scope

    @property
    def backend(self) -> Any:
        return self._client_or_raise().backend

    def _client_or_raise(self) -> ClientSession:
        if self._closed:
            raise CancelledError("Session has been closed.")
        if self._client is None:
            raise InvalidArgumentError("Session was not created with a graph before Run()!")
        return self._client

    def tensor(self, name: str) -> Output:
        """The Output a tensor name refers to; NotFoundError naming it otherwise."""
        node_name, index = parse_tensor_name(name)
        node = self._scope.graph().find_node(node_name)
        if node is None:
            raise NotFoundError(f"Tensor {name}, specified in either feed_devices or fetch_devices was not found "
                                "in the Graph" if ":" in name else f"Tensor {name} was not found in the Graph")
        if index >= node.num_outputs():
            raise NotFoundError(f"Tensor {name} was not found in the Graph: node {node_name} has "
                                f"{node.num_outputs()} outputs")
        return Output(node, index)

    def operation(self, name: str) -> Operation:
        node = self._scope.graph().find_node(name.lstrip("^"))
        if node is None:
            raise NotFoundError(f"Node {name} was not found in the Graph")
        return Operation(node)

    def Run(self, *args: Any) -> list[Any]:
        """``Run(inputs, output_tensor_names, target_node_names)`` or
        ``Run(run_options, inputs, output_tensor_names, target_node_names, run_metadata)``.

        ``inputs``: (name, value) pairs or a dict.  Returns the outputs in order.  ``run_options``
        (``timeout_in_ms``, ``trace_level``) and ``run_metadata`` work as in :meth:`ClientSession.Run`.
        """
        run_options = run_metadata = None
        if len(args) == 5:
            run_options, inputs, outputs, targets, run_metadata = args
        elif len(args) in (2, 3):
            inputs, outputs = args[0], args[1]
            targets = args[2] if len(args) == 3 else []
        else:
            raise TypeError("Run(inputs, output_tensor_names, target_node_names) or Run(run_options, inputs, "
                            "output_tensor_names, target_node_names, run_metadata)")
        client = self._client_or_raise()
        pairs = inputs.items() if isinstance(inputs, Mapping) else inputs
        feeds = {self.tensor(name): value for name, value in pairs}
        fetches = [self.tensor(name) for name in _names(outputs)]
        ops = [self.operation(name) for name in _names(targets)]
        if run_options is not None:
            return client.Run(run_options, feeds, fetches, ops, run_metadata)
        return client.Run(feeds, fetches, ops)

    def ListDevices(self) -> list[str]:
        return ["/job:localhost/replica:0/task:0/device:CPU:0"]

    def Close(self) -> None:
        self._closed = True
        self._client = None


def NewSession(options: SessionOptions | None = None) -> Session:
    """``NewSession(options)``: a session in this process (TF's direct session, the only one here:
    a non-empty ``options.target`` raises NotFoundError as TF's factory lookup does)."""
    options = options if options is not None else SessionOptions()
    if options.target:
        raise NotFoundError(f'No session factory registered for the given session options: {{target: '
                            f'"{options.target}"}} Registered factories are {{DIRECT_SESSION}}.')
    return Session(options)


def _names(value: Sequence[str] | Iterable[str] | str | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


__all__ = ["NewSession", "Session", "SessionOptions"]
