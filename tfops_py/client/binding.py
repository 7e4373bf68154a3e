"""What every plan does before it runs anything: prune, find kernels, bind contexts and functions.

Shared by the linear plan (``plan.py``) and the dataflow executor (``executor.py``).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from tfops_py.errors import InternalError, InvalidArgumentError, OpError, ResourceExhaustedError, UnimplementedError
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.function import FunctionLibraryDefinition
from tfops_py.framework.graph import Node
from tfops_py.framework.op_def import arg_ranges
from tfops_py.framework.operation import Output
from tfops_py.framework.tensor_shape import PartialTensorShape
from tfops_py.kernels.registry import KernelContext, find_kernel

# Check every kernel output against the node's dtype and build-time shape (tests turn this on).
CHECK_KERNELS = os.environ.get("TFOPS_CHECK_KERNELS", "") not in ("", "0")
# The kernel that runs a node whose op type is a library function (its inputs as one list).
FUNCTION_CALL_OP = "PartitionedCall"
# Values of these dtypes are Python objects (TensorList, TensorArray, resource handles), not arrays.
OPAQUE_DTYPES = frozenset({DataType.DT_VARIANT, DataType.DT_RESOURCE})


def needed_nodes(feeds: set[Output], fetches: Sequence[Output], targets: Sequence[Node]) -> list[Node]:
    """Nodes the request depends on (stopping at fed tensors), in creation order."""
    seen: dict[int, Node] = {}
    stack: list[Node] = [o.node() for o in fetches if o not in feeds] + list(targets)  # type: ignore[misc]
    while stack:
        node = stack.pop()
        if node.id in seen:
            continue
        seen[node.id] = node
        for inp in node.inputs:
            if inp not in feeds:
                stack.append(inp.node())  # type: ignore[arg-type]
        stack.extend(c for c in node.control_inputs if not fed_entirely(c, feeds))
    return [seen[i] for i in sorted(seen)]


def fed_entirely(node: Node, feeds: set[Output]) -> bool:
    """A control dependency on a node whose outputs are all fed is met by the feed (as in TF)."""
    return bool(node.num_outputs()) and all(Output(node, k) in feeds for k in range(node.num_outputs()))


def is_function_call(node: Node, library: FunctionLibraryDefinition | None) -> bool:
    """True for a node whose op type is a library function (a TF1 Defun call)."""
    return library is not None and node.op in library


def kernel_for(node: Node, backend_name: str, library: FunctionLibraryDefinition | None) -> Any:
    if is_function_call(node, library):
        return find_kernel(FUNCTION_CALL_OP, backend_name)
    fn = find_kernel(node.op, backend_name)
    if fn is not None and DataType.DT_STRING in node.output_types:
        return _strings_as_arrays(fn)
    return fn


def _scalar_string(value: Any) -> Any:
    if isinstance(value, (bytes, str)):
        arr = np.empty((), dtype=object)
        arr[()] = value
        return arr
    return value


def _strings_as_arrays(fn: Any) -> Any:
    """NumPy ufuncs on 0-d object arrays return the bare object (``np.add`` of two scalar strings is
    ``bytes``): a kernel's string outputs are given back as 0-d object arrays."""

    def run(ctx: KernelContext, *args: Any) -> Any:
        result = fn(ctx, *args)
        if isinstance(result, tuple):
            return tuple(_scalar_string(r) for r in result)
        return _scalar_string(result)

    return run


def check_runnable(nodes: Sequence[Node], where: dict[int, Any], library: FunctionLibraryDefinition | None) -> None:
    """Every node has a kernel (all missing ones reported at once) and no placeholder is left unfed."""
    lacking = [n for n in nodes if kernel_for(n, where[n.id].name, library) is None]
    if lacking:
        kinds = sorted({f"{n.op} ({where[n.id].name})" for n in lacking})
        raise UnimplementedError(f"no kernel for op type(s) {', '.join(kinds)} (nodes: "
                                 f"{', '.join(n.name for n in lacking)})")
    for n in nodes:
        if n.op in ("Placeholder", "PlaceholderV2"):
            shape = n.attrs.get("shape", PartialTensorShape())
            raise InvalidArgumentError(
                f"You must feed a value for placeholder tensor '{n.name}' with dtype "
                f"{n.output_types[0].short_name}" + ("" if shape.unknown_rank() else f" and shape {shape}"),
                op_type=n.op, node_name=n.name)


def make_context(node: Node, backend: Any, resources: dict[str, Any] | None, functions: Any) -> KernelContext:
    """The node's KernelContext, with the library functions it runs compiled and bound (``ctx.funcs``)."""
    ctx = KernelContext(node.op, node.name, node.attrs, backend, list(node.input_types), list(node.output_types),
                        [i.node().name for i in node.inputs], resources)  # type: ignore[union-attr]
    if functions is not None:
        ctx.funcs = functions.bind(node)
    return ctx


def arg_groups(node: Node, library: FunctionLibraryDefinition | None = None) -> list[tuple[int, int, bool]] | None:
    """(start, stop, is_list) per kernel argument, or None when the kernel takes the flat inputs."""
    if is_function_call(node, library):
        return [(0, len(node.inputs), True)]  # the call kernel takes the arguments as one list
    args = node.op_def.inputs
    if not any(a.is_list for a in args):
        return None
    return [(a, b, arg.is_list) for arg, (a, b) in zip(args, arg_ranges(args, node.attrs))]


def output_is_flat(node: Node, library: FunctionLibraryDefinition | None = None) -> bool:
    """True when the kernel's return value is the single output itself."""
    if is_function_call(node, library):
        return False
    outs = node.op_def.outputs
    return len(outs) == 1 and not outs[0].is_list


def _flat_is_ref(args: Any, node: Node) -> list[bool]:
    return [arg.is_ref for arg, (a, b) in zip(args, arg_ranges(args, node.attrs)) for _ in range(a, b)]


def ref_inputs(node: Node) -> list[int]:
    """Input positions where ``node`` takes a reference (``Assign``'s ``ref``), not a value."""
    return [k for k, is_ref in enumerate(_flat_is_ref(node.op_def.inputs, node)) if is_ref]


def ref_outputs(node: Node) -> list[int]:
    """Output positions that are references (a ``VariableV2``'s output)."""
    return [k for k, is_ref in enumerate(_flat_is_ref(node.op_def.outputs, node)) if is_ref]


def ref_reads(node: Node) -> tuple[int, ...]:
    """Input positions where ``node`` reads a reference output as a value (TF dereferences these)."""
    takes_ref = _flat_is_ref(node.op_def.inputs, node)
    return tuple(k for k, i in enumerate(node.inputs)
                 if not takes_ref[k] and _flat_is_ref(i.node().op_def.outputs, i.node())[i.index()])  # type: ignore


def deref(value: Any, ctx: Any) -> Any:
    """A kernel's reference value (e.g. a variable) read as a tensor; other values unchanged."""
    read = getattr(value, "deref", None)
    return value if read is None else read(ctx)


def flatten(result: Any) -> list[Any]:
    flat: list[Any] = []
    for r in result:
        if isinstance(r, (list, tuple)):
            flat.extend(r)
        else:
            flat.append(r)
    return flat


def kernel_error(e: Exception, ctx: KernelContext) -> OpError:
    """What a non-OpError exception escaping a kernel becomes (a raw numpy error never reaches users)."""
    if isinstance(e, MemoryError):  # NumPy's allocation failures; TF reports OOM this way
        return ResourceExhaustedError(f"OOM when allocating an output: {e}", op_type=ctx.op_type,
                                      node_name=ctx.node_name)
    if isinstance(e, RecursionError):
        return ResourceExhaustedError("function calls or loops nest too deeply for the Python stack",
                                      op_type=ctx.op_type, node_name=ctx.node_name)
    return InternalError(f"kernel failed: {type(e).__name__}: {e}", op_type=ctx.op_type, node_name=ctx.node_name)


def check_outputs(node: Node, ctx: KernelContext, values: Sequence[Any]) -> None:
    """Test mode: the kernel returned one value per output, of the node's dtype and inferred shape."""
    if len(values) != node.num_outputs():
        raise AssertionError(f"{node.op} kernel returned {len(values)} outputs, node has {node.num_outputs()}")
    from tfops_py.kernels.control_flow.dataflow_ops import DEAD

    backend = ctx.backend
    for i, v in enumerate(values):
        dtype = node.output_types[i]
        if v is DEAD:  # the untaken output of a Switch
            continue
        if dtype in OPAQUE_DTYPES:  # a host object (ResourceHandle, TensorList ...) standing for a scalar tensor
            if getattr(v, "shape", None) != () or not hasattr(v, "type_name"):
                raise AssertionError(f"{node.op} node '{node.name}' output {i}: {v!r} is not a "
                                     f"{'resource handle' if dtype == DataType.DT_RESOURCE else 'variant value'}")
            continue
        if getattr(v, "dtype", None) != backend.dtype(dtype):
            raise AssertionError(f"{node.op} node '{node.name}' output {i}: kernel dtype "
                                 f"{getattr(v, 'dtype', type(v))} != {dtype.name}")
        shape = tuple(getattr(v, "shape", ()))
        if not node.output_shapes[i].is_compatible_with(shape):
            raise AssertionError(f"{node.op} node '{node.name}' output {i}: kernel shape {list(shape)} "
                                 f"incompatible with inferred {node.output_shapes[i]}")


def transfer(src: Any, dst: Any):
    """A step function moving a value between backends (through host memory)."""

    def move(ctx: KernelContext, x: Any) -> Any:
        return dst.from_numpy(np.asarray(src.to_numpy(x), order="C"), ctx)  # ascontiguousarray makes 0-d 1-d

    return move


def in_device(fn: Any, backend: Any) -> Any:
    """Run ``fn`` inside the backend's device context (CuPy device k)."""

    def run(ctx: KernelContext, *args: Any) -> Any:
        with backend.device_context():
            return fn(ctx, *args)

    return run


__all__ = ["CHECK_KERNELS", "OPAQUE_DTYPES", "arg_groups", "check_outputs", "check_runnable", "deref", "flatten",
           "in_device", "kernel_error", "kernel_for", "make_context", "needed_nodes", "output_is_flat", "ref_reads",
           "transfer"]
