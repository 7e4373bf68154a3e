"""The dataflow control-flow ops' graph cases, written once for tfops_py and TF (recipes, see
tfops_py/conformance/graphs.py): a cond made of Switch and Merge (dead branches, either predicate), a
while loop made of Enter, Merge, LoopCond, Switch, NextIteration and Exit (zero and several iterations),
the same with a variable's reference carried through the Ref* variants, _SwitchN, and ControlTrigger as a control
input.  Imported only when cases are made.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList
from tfops_py.framework.dtypes import DataType
from tfops_py.framework.tensor_shape import PartialTensorShape


def cond(g: Any, x: Any, pred: Any) -> list:
    """Merge(Neg(Switch false), Square(Switch true)): the output and the index of the branch taken."""
    false, true = g.op("Switch", x, pred)
    return list(g.op("Merge", [g.op("Neg", false), g.op("Square", true)]))


def dead_fetch(g: Any, x: Any, pred: Any) -> list:
    """The branch a Switch does not take, fetched."""
    return [g.op("Switch", x, pred)[0]]


def loop(g: Any, x: Any, limit: Any, step: Any) -> list:
    """``while x < limit: x += step``."""
    frame = "count"
    limit_in = g.op("Enter", limit, frame_name=frame, is_constant=True)
    step_in = g.op("Enter", step, frame_name=frame, is_constant=True)
    merged, _ = g.loop_merge(g.op("Enter", x, frame_name=frame))
    pred = g.op("LoopCond", g.op("Less", merged, limit_in))
    false, true = g.op("Switch", merged, pred)
    g.close_loop(merged, g.op("NextIteration", g.op("AddV2", true, step_in)))
    return [g.op("Exit", false)]


def ref_loop(g: Any, init: Any, limit: Any) -> list:
    """A counter loop carrying a variable's reference through RefEnter, RefMerge, RefSwitch, RefNextIteration
    and RefExit; the counter and the variable's value after it."""
    frame = "ref_count"
    var = g.op("VariableV2", shape=PartialTensorShape([3]), dtype=DataType.DT_FLOAT)
    assign = g.op("Assign", var, init)
    with g.after(assign):
        ref_in = g.op("RefEnter", var, frame_name=frame)
    limit_in = g.op("Enter", limit, frame_name=frame, is_constant=True)
    one = g.op("Enter", g.const(np.int32(1)), frame_name=frame, is_constant=True)
    count, _ = g.loop_merge(g.op("Enter", g.const(np.int32(0)), frame_name=frame))
    ref, _ = g.loop_merge(ref_in, ref=True)
    pred = g.op("LoopCond", g.op("Less", count, limit_in))
    count_false, count_true = g.op("Switch", count, pred)
    ref_false, ref_true = g.op("RefSwitch", ref, pred)
    g.close_loop(count, g.op("NextIteration", g.op("AddV2", count_true, one)))
    g.close_loop(ref, g.op("RefNextIteration", ref_true))
    return [g.op("Exit", count_false), g.op("Identity", g.op("RefExit", ref_false))]


def ref_cond(g: Any, init: Any, pred: Any) -> list:
    """RefSwitch of a variable's reference and RefMerge of both branches."""
    var = g.op("VariableV2", shape=PartialTensorShape([3]), dtype=DataType.DT_FLOAT)
    with g.after(g.op("Assign", var, init)):
        false, true = g.op("RefSwitch", var, pred)
    merged, index = g.op("RefMerge", [false, true])
    return [g.op("Identity", merged), index]


def switch_n(g: Any, x: Any, index: Any) -> list:
    """_SwitchN to three branches (Neg, Square, Identity), merged: the output and the branch taken."""
    first, second, third = g.op("_SwitchN", x, index, num_outs=3)
    return list(g.op("Merge", [g.op("Neg", first), g.op("Square", second), g.op("Identity", third)]))


def trigger(g: Any, x: Any) -> list:
    with g.after(g.op("ControlTrigger")):
        return [g.op("Identity", x)]


def build(out: CaseList) -> None:
    x = np.array([1.5, -2.0, 3.0], np.float32)
    for pred in (True, False):
        for op in ("Switch", "Merge"):
            out.add_graph(op, cond, [x, np.bool_(pred)], id=f"{op}/cond-{str(pred).lower()}", compare="exact")
        out.add_graph("RefSwitch", ref_cond, [x, np.bool_(pred)], id=f"RefSwitch/cond-{str(pred).lower()}",
                      compare="exact")
    out.add_graph("Switch", cond, [np.arange(6, dtype=np.int64).reshape(2, 3), np.bool_(True)], id="Switch/int64",
                  compare="exact")
    out.add_graph("Switch", cond, [x, np.array([True, False])], id="Switch/vector-pred")
    out.add_graph("Switch", dead_fetch, [x, np.bool_(True)], id="Switch/dead-fetch")
    out.add_graph("RefMerge", ref_cond, [x, np.bool_(True)], id="RefMerge/cond", compare="exact")
    for op in ("Enter", "Merge", "LoopCond", "NextIteration", "Exit"):
        out.add_graph(op, loop, [np.int32(0), np.int32(10), np.int32(3)], id=f"{op}/loop-4", compare="exact")
    out.add_graph("Exit", loop, [np.int32(20), np.int32(10), np.int32(3)], id="Exit/loop-0", compare="exact")
    out.add_graph("LoopCond", loop, [np.float64(0.5), np.float64(100.0), np.float64(7.25)], id="LoopCond/loop-double",
                  compare="exact")
    for op in ("RefEnter", "RefMerge", "RefSwitch", "RefNextIteration", "RefExit"):
        out.add_graph(op, ref_loop, [x, np.int32(3)], id=f"{op}/loop-3", compare="exact")
    for index in (0, 1, 2, 7, -1):  # out of range: the last output, as TF
        out.add_graph("_SwitchN", switch_n, [x, np.int32(index)], id=f"_SwitchN/index-{index}", compare="exact")
    out.add_graph("ControlTrigger", trigger, [x], id="ControlTrigger/control-input", compare="exact")
