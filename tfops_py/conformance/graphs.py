"""Graph cases written once for both sides: a *recipe* ``recipe(g, *inputs)`` builds a small graph through
``g`` and returns its fetches (or ``(fetches, targets)``, the targets run first), and runs unchanged on
tfops_py (``g`` adds nodes to a Scope) and on TensorFlow (``g`` calls ``tf.raw_ops`` in a TF1 graph)::

    def read_after_add(g, init, delta):
        v = g.op("VarHandleOp", dtype=DT_FLOAT, shape=[3], shared_name="v")
        with g.after(g.op("AssignVariableOp", v, init)):
            add = g.op("AssignAddVariableOp", v, delta)
        with g.after(add):
            return [g.op("ReadVariableOp", v, dtype=DT_FLOAT)]

    out.add_graph("AssignAddVariableOp", read_after_add, [np.zeros(3, np.float32), np.ones(3, np.float32)])

``g.op(name, *inputs, **attrs)`` takes inputs in OpDef order and attrs by name (DataTypes as ours); it
returns the op's one output, a tuple of several, or the op itself when it has none.  ``g.after(*ops)``
adds control dependencies to the ops built inside it; ``g.const(value)`` makes a constant (paths made
at build time).  For stateful ops, list inputs/outputs, resource handles: what one op on constants
cannot express.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

Recipe = Callable[..., Any]


class OursGraph:
    """``g`` on tfops_py: nodes added to a Scope with the generic node builder (the OpDef's names)."""

    tf = False

    def __init__(self, scope: Any):
        self.scope = scope

    def op(self, name: str, *inputs: Any, **attrs: Any) -> Any:
        from tfops_py.framework.node_builder import add_node
        from tfops_py.framework.op_def import get_op_def
        from tfops_py.framework.operation import Operation, Output

        node = add_node(self.scope, get_op_def(name), list(inputs), dict(attrs))
        outs = tuple(Output(node, i) for i in range(node.num_outputs()))
        return Operation(node) if not outs else outs[0] if len(outs) == 1 else outs

    def const(self, value: Any) -> Any:
        from tfops_py import ops

        return ops.Const(self.scope, value)

    @contextlib.contextmanager
    def after(self, *deps: Any) -> Iterator[None]:
        old = self.scope
        self.scope = old.WithControlDependencies(list(deps))
        try:
            yield
        finally:
            self.scope = old


class TFGraph:
    """``g`` on TensorFlow: ``tf.raw_ops`` in the TF1 graph being built."""

    def __init__(self, tf: Any):
        self.tf = tf

    def _attr(self, v: Any) -> Any:
        from tfops_py.framework.dtypes import DataType
        from tfops_py.framework.tensor_shape import PartialTensorShape

        if isinstance(v, PartialTensorShape):
            return self.tf.TensorShape(None if v.unknown_rank() else [None if d < 0 else d for d in v.as_list()])
        if isinstance(v, DataType):
            return self.tf.dtypes.as_dtype(int(v.value))
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, DataType) for x in v):
            return [self._attr(x) for x in v]
        return v

    def op(self, name: str, *inputs: Any, **attrs: Any) -> Any:
        from tfops_py.framework.op_def import get_op_def

        if not hasattr(self.tf.raw_ops, name):
            out = import_node(self.tf, name, list(inputs), attrs)
            return tuple(out) if isinstance(out, list) else out
        kwargs = {arg.name: value for arg, value in zip(get_op_def(name).inputs, inputs)}
        kwargs.update({k: self._attr(v) for k, v in attrs.items()})
        out = getattr(self.tf.raw_ops, name)(**kwargs)
        if not isinstance(out, (list, tuple)):
            return out
        flat = tuple(t for o in out for t in (o if isinstance(o, (list, tuple)) else [o]))
        return flat[0] if len(flat) == 1 else flat

    def const(self, value: Any) -> Any:
        return self.tf.constant(value)

    def after(self, *deps: Any) -> Any:
        return self.tf.control_dependencies(list(deps))



def import_node(tf: Any, op: str, args: list[Any], attrs: dict[str, Any]) -> Any:
    """``op`` on TF tensors ``args`` where TF's Python has no wrapper for it (internal ops: ``_Fused*``,
    ``_SwitchN``): the node tfops_py's node builder makes (on placeholders of the inputs' dtypes, without our
    shape inference: TF's import runs its own), imported into TF's current graph with the inputs mapped.
    Returns its output, a list of several, or the operation when it has none."""
    from tfops_py import Scope, ops
    from tfops_py.framework.dtypes import DataType
    from tfops_py.framework.node_builder import add_node
    from tfops_py.framework.op_def import get_op_def

    scope = Scope.DisabledShapeInferenceScope()
    input_map: dict[str, Any] = {}

    def placeholder(t: Any) -> Any:
        name = f"input_{len(input_map)}"
        input_map[f"{name}:0"] = t
        return ops.Placeholder(scope.WithOpName(name), DataType(t.dtype.as_datatype_enum)).output

    placeholders = [[placeholder(t) for t in a] if isinstance(a, list) else placeholder(a) for a in args]
    node = add_node(scope.WithOpName("node"), get_op_def(op), placeholders, dict(attrs))
    assert node is not None
    graph_def = tf.compat.v1.GraphDef.FromString(scope.ToGraphDef().SerializeToString())
    names = [f"node:{i}" for i in range(node.num_outputs())] or ["node"]
    out = tf.compat.v1.import_graph_def(graph_def, input_map=input_map, return_elements=names, name="imported")
    return out[0] if len(out) == 1 else list(out)


def ours(recipe: Recipe) -> Callable[..., Any]:
    """The recipe as a graph case's ``build(scope, *inputs)``."""
    return lambda scope, *inputs: recipe(OursGraph(scope), *inputs)


def on_tf(recipe: Recipe) -> Callable[..., Any]:
    """The recipe as a graph case's ``tf(tf, *inputs)``."""
    return lambda tf, *inputs: recipe(TFGraph(tf), *inputs)
