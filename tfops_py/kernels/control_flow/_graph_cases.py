"""Graph cases of the control-flow family for the conformance harness: each builds one small program twice,
with tfops_py ops on a Scope and with TF ops in a TF1 graph (TensorLists, TensorArrays, loops and branches are
not one op on constants).  Imported lazily (the builders use the op classes, a layer above kernels)."""
from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from tfops_py.conformance import graph_case, values
from tfops_py.framework.dtypes import DataType

F, I32 = DataType.DT_FLOAT, DataType.DT_INT32


def for_op(op: str, cases: list) -> list:
    """The shared program cases under ids of ``op``'s own (ids are unique per family; the inputs stay the same,
    so the generator runs each program on TF once)."""
    return [graph_case(f"{op}/{c.id}", c.build, c.tf, compare=c.compare, note=c.note, seed=c.seed,
                       dtypes=c.dtypes, shapes=c.shapes, **c.inputs) for c in cases]


@contextlib.contextmanager
def tf1_control_flow():
    """While building TF graphs: TF1 dataflow control flow (Enter/Merge/Switch ...), not functional While/If."""
    from tensorflow.python.ops import control_flow_util

    saved = control_flow_util.ENABLE_CONTROL_FLOW_V2
    control_flow_util.ENABLE_CONTROL_FLOW_V2 = False
    try:
        yield
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = saved


# -- TensorLists ---------------------------------------------------------------------------------------------
def list_basics(s: Any, x: Any) -> list:
    from tfops_py import ops

    lst = ops.TensorListFromTensor(s, x, [3]).output_handle
    item = ops.TensorListGetItem(s, lst, 1, [3], F).item
    lst = ops.TensorListSetItem(s, lst, 0, ops.Mul(s, item, 2.0)).output_handle
    lst = ops.TensorListPushBack(s, lst, ops.Sin(s, item)).output_handle
    pop = ops.TensorListPopBack(s, lst, [3], F)
    return [ops.TensorListStack(s, pop.output_handle, [3], F).tensor, pop.tensor,
            ops.TensorListGather(s, lst, [4, 0], [3], F).values, ops.TensorListLength(s, lst).length,
            ops.TensorListElementShape(s, lst, I32).element_shape]


def tf_list_basics(tf: Any, x: Any) -> list:
    r = tf.raw_ops
    lst = r.TensorListFromTensor(tensor=x, element_shape=[3])
    item = r.TensorListGetItem(input_handle=lst, index=1, element_shape=[3], element_dtype=tf.float32)
    lst = r.TensorListSetItem(input_handle=lst, index=0, item=item * 2.0)
    lst = r.TensorListPushBack(input_handle=lst, tensor=tf.sin(item))
    handle, popped = r.TensorListPopBack(input_handle=lst, element_shape=[3], element_dtype=tf.float32)
    return [r.TensorListStack(input_handle=handle, element_shape=[3], element_dtype=tf.float32), popped,
            r.TensorListGather(input_handle=lst, indices=[4, 0], element_shape=[3], element_dtype=tf.float32),
            r.TensorListLength(input_handle=lst), r.TensorListElementShape(input_handle=lst, shape_type=tf.int32)]


def list_scatter_concat(s: Any, x: Any) -> list:
    from tfops_py import ops

    reserved = ops.TensorListReserve(s, [3], 3, F).handle
    first = ops.TensorListScatterIntoExistingList(s, reserved, ops.Slice(s, x, [0, 0], [2, 3]), [2, 0])
    empty = ops.EmptyTensorList(s, [3], 2, F).handle
    pushed = ops.TensorListPushBack(s, empty, ops.Reshape(s, ops.Slice(s, x, [3, 0], [1, 3]), [3])).output_handle
    scattered = ops.TensorListScatterV2(s, x, [1, 0, 3, 2], [3], 5).output_handle
    resized = ops.TensorListResize(s, scattered, 3).output_handle
    v1 = ops.TensorListScatter(s, x, [3, 2, 1, 0], [3]).output_handle
    split = ops.TensorListSplit(s, ops.Reshape(s, x, [-1]), [-1], np.int64([5, 7])).output_handle
    concat_v2 = ops.TensorListConcatV2(s, split, [-1], np.zeros(0, np.int64), F)
    return [ops.TensorListStack(s, first.output_handle, [3], F).tensor, ops.TensorListStack(s, pushed, [3], F).tensor,
            ops.TensorListStack(s, resized, [3], F).tensor,
            ops.TensorListConcat(s, v1, F, element_shape=[3]).tensor, concat_v2.tensor, concat_v2.lengths]


def tf_list_scatter_concat(tf: Any, x: Any) -> list:
    r = tf.raw_ops
    reserved = r.TensorListReserve(element_shape=[3], num_elements=3, element_dtype=tf.float32)
    first = r.TensorListScatterIntoExistingList(input_handle=reserved, tensor=x[:2], indices=[2, 0])
    empty = r.EmptyTensorList(element_shape=[3], max_num_elements=2, element_dtype=tf.float32)
    pushed = r.TensorListPushBack(input_handle=empty, tensor=x[3])
    scattered = r.TensorListScatterV2(tensor=x, indices=[1, 0, 3, 2], element_shape=[3], num_elements=5)
    resized = r.TensorListResize(input_handle=scattered, size=3)
    v1 = r.TensorListScatter(tensor=x, indices=[3, 2, 1, 0], element_shape=[3])
    split = r.TensorListSplit(tensor=tf.reshape(x, [-1]), element_shape=[-1], lengths=tf.constant([5, 7], tf.int64))
    concat_v2 = r.TensorListConcatV2(input_handle=split, element_shape=[-1], leading_dims=tf.zeros([0], tf.int64),
                                     element_dtype=tf.float32)
    stack = r.TensorListStack
    return [stack(input_handle=first, element_shape=[3], element_dtype=tf.float32),
            stack(input_handle=pushed, element_shape=[3], element_dtype=tf.float32),
            stack(input_handle=resized, element_shape=[3], element_dtype=tf.float32),
            r.TensorListConcat(input_handle=v1, element_dtype=tf.float32, element_shape=[3]).tensor,
            concat_v2.tensor, concat_v2.lengths]


LIST_CASES = [graph_case("list_basics", list_basics, tf_list_basics, x=values(), dtypes={"x": F}, shapes={"x": (4, 3)},
                         seed=1),
              graph_case("list_scatter_concat", list_scatter_concat, tf_list_scatter_concat, x=values(),
                         dtypes={"x": F}, shapes={"x": (4, 3)}, seed=2)]


# -- TensorArrays ---------------------------------------------------------------------------------------------
def tensor_array(s: Any, x: Any) -> tuple:
    from tfops_py import ops
    from tfops_py.framework.node_builder import add_node
    from tfops_py.framework.op_def import get_op_def
    from tfops_py.framework.operation import Output

    ta = ops.TensorArray(s, 4, F, element_shape=[3], clear_after_read=False)
    flow = ops.TensorArrayScatter(s, ta.handle, [3, 1, 0, 2], x, ta.flow).flow_out
    read = ops.TensorArrayRead(s, ta.handle, 1, flow, F).value
    gathered = ops.TensorArrayGather(s, ta.handle, [2, 1], flow, F, element_shape=[3]).value
    size = ops.TensorArraySize(s, ta.handle, flow).size
    grad = ops.TensorArrayGrad(s, ta.handle, flow, "g")
    gflow = ops.TensorArrayWrite(s, grad.grad_handle, 2, read, grad.flow_out).flow_out
    grad_read = ops.TensorArrayRead(s, grad.grad_handle, 2, gflow, F).value
    other = ops.TensorArray(s, 2, F)
    oflow = ops.TensorArraySplit(s, other.handle, ops.Reshape(s, x, [6, 2]), np.int64([2, 4]), other.flow).flow_out
    concat = add_node(s, get_op_def("TensorArrayConcatV3"), [other.handle, oflow], {"dtype": F})
    close = ops.TensorArrayClose(s.WithControlDependencies([Output(concat, 0), size]), other.handle)
    return [read, gathered, size, grad_read, Output(concat, 0), Output(concat, 1)], [close.operation]


def tf_tensor_array(tf: Any, x: Any) -> tuple:
    r = tf.raw_ops
    handle, flow = r.TensorArrayV3(size=4, dtype=tf.float32, element_shape=[3], clear_after_read=False)
    flow = r.TensorArrayScatterV3(handle=handle, indices=[3, 1, 0, 2], value=x, flow_in=flow)
    read = r.TensorArrayReadV3(handle=handle, index=1, flow_in=flow, dtype=tf.float32)
    gathered = r.TensorArrayGatherV3(handle=handle, indices=[2, 1], flow_in=flow, dtype=tf.float32,
                                     element_shape=[3])
    size = r.TensorArraySizeV3(handle=handle, flow_in=flow)
    ghandle, gflow = r.TensorArrayGradV3(handle=handle, flow_in=flow, source="g")
    gflow = r.TensorArrayWriteV3(handle=ghandle, index=2, value=read, flow_in=gflow)
    grad_read = r.TensorArrayReadV3(handle=ghandle, index=2, flow_in=gflow, dtype=tf.float32)
    other, oflow = r.TensorArrayV3(size=2, dtype=tf.float32)
    oflow = r.TensorArraySplitV3(handle=other, value=tf.reshape(x, [6, 2]), lengths=tf.constant([2, 4], tf.int64),
                                 flow_in=oflow)
    value, lengths = r.TensorArrayConcatV3(handle=other, flow_in=oflow, dtype=tf.float32)
    with tf.control_dependencies([value, size]):
        close = r.TensorArrayCloseV3(handle=other)
    return [read, gathered, size, grad_read, value, lengths], [close]


TENSOR_ARRAY_CASES = [graph_case("tensor_array", tensor_array, tf_tensor_array, x=values(), dtypes={"x": F},
                                 shapes={"x": (4, 3)}, seed=3)]


# -- TF1 dataflow ------------------------------------------------------------------------------------------------
def dataflow(s: Any, x: Any, n: Any) -> list:
    from tfops_py import ops

    loop = ops.BuildWhileLoop(s, [ops.Const(s, 0), x, n], lambda sc, v: ops.Less(sc, v[0], v[2]),
                              lambda sc, v: [ops.Add(sc, v[0], 1), ops.Mul(sc, v[1], 1.5), ops.Identity(sc, v[2])],
                              "loop")
    sw = ops.Switch(s, loop[1], ops.Greater(s, loop[0], 2))
    merge = ops.Merge(s, [ops.Neg(s, sw.output_false), ops.Exp(s, sw.output_true)])
    dead = ops.Identity(s, sw.output_false)
    trigger = ops.ControlTrigger(s.WithControlDependencies([dead]))
    after = ops.Identity(s.WithControlDependencies([trigger]), loop[0]).output
    return [loop[0], merge.output, merge.value_index, after]


def tf_dataflow(tf: Any, x: Any, n: Any) -> list:
    from tensorflow.python.ops import gen_control_flow_ops

    with tf1_control_flow():
        i, v = tf.compat.v1.while_loop(lambda i, v: i < n, lambda i, v: (i + 1, v * 1.5), [tf.constant(0), x])
    false, true = gen_control_flow_ops.switch(v, i > 2)
    merge = gen_control_flow_ops.merge([-false, tf.exp(true)])
    dead = tf.identity(false)
    with tf.control_dependencies([dead]):
        trigger = gen_control_flow_ops.control_trigger()
    with tf.control_dependencies([trigger]):
        after = tf.identity(i)
    return [i, merge.output, merge.value_index, after]


def ref_dataflow(s: Any, x: Any) -> tuple:
    from tfops_py import ops

    var = ops.Variable(s, [3], F)
    init = ops.Assign(s, var, x)
    sw = ops.RefSwitch(s.WithControlDependencies([init]), var, ops.Const(s, True))
    merged = ops.RefMerge(s, [sw.output_false, sw.output_true])
    entered = ops.internal.RefEnter(s, merged.output, "frame", is_constant=True)
    out = ops.internal.Exit(s, ops.Identity(s, entered))
    return [ops.Identity(s, out).output, merged.value_index], [init.operation]


def tf_ref_dataflow(tf: Any, x: Any) -> tuple:
    from tensorflow.python.ops import gen_control_flow_ops

    var = tf.compat.v1.Variable(tf.zeros([3]), use_resource=False)
    init = tf.compat.v1.assign(var, x)
    with tf.control_dependencies([init]):
        false, true = gen_control_flow_ops.ref_switch(var._ref(), tf.constant(True))
    merged = gen_control_flow_ops.ref_merge([false, true])
    entered = gen_control_flow_ops.ref_enter(merged.output, "frame", is_constant=True)
    out = gen_control_flow_ops._exit(tf.identity(entered))
    return [tf.identity(out), merged.value_index], [init]


def ref_loop(s: Any, x: Any, n: Any) -> tuple:
    """A loop carrying a variable's reference (RefEnter, RefMerge, RefSwitch, RefNextIteration, RefExit),
    adding 1 to it each iteration through the reference."""
    from tfops_py.framework.node_builder import add_node
    from tfops_py.framework.op_def import get_op_def
    from tfops_py.framework.operation import Output
    from tfops_py import ops

    var = ops.Variable(s, [3], F)
    init = ops.Assign(s, var, x)
    c = s.WithControlDependencies([init])
    i_enter = ops.internal.Enter(c, ops.Const(s, 0), "ref_loop").output
    v_enter = ops.internal.RefEnter(c, var, "ref_loop").output
    n_enter = ops.internal.Enter(s, n, "ref_loop", is_constant=True).output
    one = ops.internal.Enter(s, ops.Const(s, 1), "ref_loop", is_constant=True).output
    ones = ops.internal.Enter(s, ops.Const(s, [1.0, 1.0, 1.0]), "ref_loop", is_constant=True).output
    i_merge = add_node(s, get_op_def("Merge"), [[i_enter, i_enter]], {}, back_edges=frozenset({1}))
    v_merge = add_node(s, get_op_def("RefMerge"), [[v_enter, v_enter]], {}, back_edges=frozenset({1}))
    cond = ops.LoopCond(s, ops.Less(s, Output(i_merge, 0), n_enter))
    i_switch = ops.Switch(s, Output(i_merge, 0), cond)
    v_switch = ops.RefSwitch(s, Output(v_merge, 0), cond)
    i_next = ops.NextIteration(s, ops.Add(s, i_switch.output_true, one))
    v_next = ops.RefNextIteration(s, ops.AssignAdd(s, v_switch.output_true, ones))
    s.graph().UpdateEdge(i_next.output, i_merge, 1)
    s.graph().UpdateEdge(v_next.output, v_merge, 1)
    i_exit = ops.internal.Exit(s, i_switch.output_false)
    v_exit = ops.RefExit(s, v_switch.output_false)
    return [i_exit.output, ops.Identity(s, v_exit).output], [init.operation]


def tf_ref_loop(tf: Any, x: Any, n: Any) -> tuple:
    from tensorflow.python.ops import gen_control_flow_ops as cf

    var = tf.compat.v1.Variable(tf.zeros([3]), use_resource=False)
    init = tf.compat.v1.assign(var, x)
    with tf.control_dependencies([init]):
        i_enter = cf.enter(tf.constant(0), "ref_loop")
        v_enter = cf.ref_enter(var._ref(), "ref_loop")
    n_enter = cf.enter(n, "ref_loop", is_constant=True)
    one = cf.enter(tf.constant(1), "ref_loop", is_constant=True)
    ones = cf.enter(tf.ones([3]), "ref_loop", is_constant=True)
    i_merge = cf.merge([i_enter, i_enter])
    v_merge = cf.ref_merge([v_enter, v_enter])
    cond = cf.loop_cond(i_merge.output < n_enter)
    i_false, i_true = cf.switch(i_merge.output, cond)
    v_false, v_true = cf.ref_switch(v_merge.output, cond)
    i_next = cf.next_iteration(i_true + one)
    v_next = cf.ref_next_iteration(tf.compat.v1.assign_add(v_true, ones))
    i_merge.output.op._update_input(1, i_next)
    v_merge.output.op._update_input(1, v_next)
    return [cf._exit(i_false), tf.identity(cf.ref_exit(v_false))], [init]


def switch_n(s: Any, x: Any, k: Any) -> list:
    from tfops_py.framework.node_builder import add_node
    from tfops_py.framework.op_def import get_op_def
    from tfops_py.framework.operation import Output
    from tfops_py import ops

    node = add_node(s, get_op_def("_SwitchN"), [x, k], {"num_outs": 3})
    scaled = [ops.Mul(s, Output(node, j), float(j + 1)) for j in range(3)]
    return [ops.Merge(s, scaled).output]


def tf_switch_n(tf: Any, x: Any, k: Any) -> list:
    from tensorflow.python.ops import gen_control_flow_ops

    graph = tf.compat.v1.get_default_graph()
    attr = tf.compat.v1.AttrValue
    attrs = {"num_outs": attr(i=3), "T": attr(type=x.dtype.as_datatype_enum)}
    op = graph.create_op("_SwitchN", [x, k], [x.dtype] * 3, name="SwitchN", attrs=attrs)
    return [gen_control_flow_ops.merge([op.outputs[j] * float(j + 1) for j in range(3)]).output]


SWITCH_N_CASES = [graph_case(f"switch_n_{k}", switch_n, tf_switch_n, x=values(), k=np.int32(k), dtypes={"x": F},
                             shapes={"x": (2,)}, seed=4) for k in (0, 2, 7)]
DATAFLOW_CASES = [graph_case(f"dataflow_{n}", dataflow, tf_dataflow, x=values(), n=np.int32(n), dtypes={"x": F},
                             shapes={"x": (2,)}, seed=5) for n in (0, 4)]
REF_CASES = [graph_case("ref_dataflow", ref_dataflow, tf_ref_dataflow, x=values(), dtypes={"x": F},
                        shapes={"x": (3,)}, seed=6)]
REF_LOOP_CASES = [graph_case(f"ref_loop_{n}", ref_loop, tf_ref_loop, x=values(), n=np.int32(n), dtypes={"x": F},
                             shapes={"x": (3,)}, seed=8) for n in (0, 3)]


# -- functional control flow ----------------------------------------------------------------------------------------
def functional(s: Any, x: Any, k: Any) -> list:
    from tfops_py import Function, ops

    types = [I32, F]
    cond = Function.from_callable(s, "cond", types, lambda sc, i, v: ops.Less(sc, i, 3))
    body = Function.from_callable(s, "body", types, lambda sc, i, v: [ops.Add(sc, i, 1), ops.Mul(sc, ops.Sin(sc, v),
                                                                                                 2.0)])
    neg = Function.from_callable(s, "neg", [F], lambda sc, v: [ops.Neg(sc, v)])
    exp = Function.from_callable(s, "exp", [F], lambda sc, v: [ops.Exp(sc, v)])
    loop = ops.StatelessWhile(s, [ops.Const(s, 0), x], cond, body).output[1]
    stateful = ops.While(s, [ops.Const(s, 0), x], cond, body).output[1]
    pred = ops.Greater(s, ops.Sum(s, x, [0]), 0.0)
    branch = ops.StatelessIf(s, pred, [loop], [F], neg, exp).output[0]
    stateful_branch = ops.If(s, pred, [loop], [F], exp, neg).output[0]
    case = ops.StatelessCase(s, k, [branch], [F], [neg, exp]).output[0]
    stateful_case = ops.Case(s, k, [branch], [F], [exp, neg]).output[0]
    call = ops.PartitionedCall(s, [case], [F], exp).output[0]
    stateful_call = ops.StatefulPartitionedCall(s, [stateful], [F], neg).output[0]
    return [loop, stateful, branch, stateful_branch, case, stateful_case, call, stateful_call]


def tf_functional(tf: Any, x: Any, k: Any) -> list:
    def body(i, v):
        return i + 1, tf.sin(v) * 2.0

    loop = tf.while_loop(lambda i, v: i < 3, body, [0, x])[1]
    pred = tf.reduce_sum(x) > 0
    branch = tf.cond(pred, lambda: -loop, lambda: tf.exp(loop))
    other = tf.cond(pred, lambda: tf.exp(loop), lambda: -loop)
    case = tf.switch_case(k, [lambda: -branch, lambda: tf.exp(branch)])
    case2 = tf.switch_case(k, [lambda: tf.exp(branch), lambda: -branch])
    call = tf.function(lambda v: tf.exp(v))(case)
    stateful_call = tf.function(lambda v: -v)(loop)
    return [loop, loop, branch, other, case, case2, call, stateful_call]


FUNCTIONAL_CASES = [graph_case(f"functional_k{k}", functional, tf_functional, x=values(), k=np.int32(k),
                               dtypes={"x": F}, shapes={"x": (3,)}, seed=7) for k in (0, 1, 5)]
