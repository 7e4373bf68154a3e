"""Array op gradients (array_grad.py): finite differences and tf.GradientTape on the same computations."""
from __future__ import annotations

import numpy as np
import pytest

from tests.gradients.harness import GradCase, case_tests
from tfops_py import ops
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output
from tfops_py.gradients.array_py_grad import reverse_v1

_rng = np.random.default_rng(99)


def r(*shape: int, dtype=np.float64) -> np.ndarray:
    return _rng.uniform(-1.0, 1.0, size=shape).astype(dtype)


def case(id_: str, build, tf_fn, *inputs: np.ndarray, **kw) -> GradCase:
    return GradCase(id_, build, tf_fn, tuple(inputs), **kw)


_SS = dict(begin_mask=0b001, end_mask=0b100, shrink_axis_mask=0b010)
_MASKS = dict(end_mask=0b100, shrink_axis_mask=0b010)  # a (2, 4) slice: rows 1-2, column 1, reversed
_STE = "a straight-through estimator, not the derivative of the quantized output"

CASES = [
    case("Identity", lambda s, a: ops.Identity(s, a), lambda tf, a: tf.raw_ops.Identity(input=a), r(2, 3)),
    case("Reshape", lambda s, a: ops.Reshape(s, a, [3, -1]), lambda tf, a: tf.raw_ops.Reshape(tensor=a, shape=[3, -1]),
         r(2, 3)),
    case("ExpandDims", lambda s, a: ops.ExpandDims(s, a, 1), lambda tf, a: tf.raw_ops.ExpandDims(input=a, axis=1),
         r(2, 3)),
    case("Squeeze", lambda s, a: ops.Squeeze(s, a, axis=[1]),
         lambda tf, a: tf.raw_ops.Squeeze(input=a, axis=[1]), r(2, 1, 3)),
    case("Transpose", lambda s, a: ops.Transpose(s, a, [2, 0, 1]),
         lambda tf, a: tf.raw_ops.Transpose(x=a, perm=[2, 0, 1]), r(2, 3, 4)),
    case("ConcatV2", lambda s, a, b: ops.Concat(s, [a, b], 1),
         lambda tf, a, b: tf.raw_ops.ConcatV2(values=[a, b], axis=1), r(2, 3), r(2, 2)),
    case("ConcatV2_negative_axis", lambda s, a, b, c: ops.Concat(s, [a, b, c], -3),
         lambda tf, a, b, c: tf.raw_ops.ConcatV2(values=[a, b, c], axis=-3), r(1, 2, 2), r(2, 2, 2), r(1, 2, 2)),
    case("Pack", lambda s, a, b: ops.Stack(s, [a, b], axis=1),
         lambda tf, a, b: tf.raw_ops.Pack(values=[a, b], axis=1), r(2, 3), r(2, 3)),
    case("Unpack", lambda s, a: ops.Unstack(s, a, 3, axis=1).output,
         lambda tf, a: tf.raw_ops.Unpack(value=a, num=3, axis=1), r(2, 3, 2)),
    case("Split", lambda s, a: ops.Split(s, 1, a, 2).output,
         lambda tf, a: tf.raw_ops.Split(axis=1, value=a, num_split=2), r(2, 4)),
    case("SplitV", lambda s, a: ops.SplitV(s, a, [1, 3], 1, 2).output,
         lambda tf, a: tf.raw_ops.SplitV(value=a, size_splits=[1, 3], axis=1, num_split=2), r(2, 4)),
    case("Slice", lambda s, a: ops.Slice(s, a, [1, 0, 1], [1, 2, -1]),
         lambda tf, a: tf.raw_ops.Slice(input=a, begin=[1, 0, 1], size=[1, 2, -1]), r(3, 3, 3)),
    case("StridedSlice", lambda s, a: ops.StridedSlice(s, a, [1, 1, 0], [3, 2, 4], [1, 1, 2]),
         lambda tf, a: tf.raw_ops.StridedSlice(input=a, begin=[1, 1, 0], end=[3, 2, 4], strides=[1, 1, 2]),
         r(3, 3, 4)),
    case("StridedSlice_masks_negative_stride",
         lambda s, a: ops.StridedSlice(s, a, [2, 1, 0], [0, 0, 4], [1, 1, -1], **_SS),
         lambda tf, a: tf.raw_ops.StridedSlice(input=a, begin=[2, 1, 0], end=[0, 0, 4], strides=[1, 1, -1], **_SS),
         r(3, 3, 4)),
    case("StridedSlice_ellipsis_new_axis", lambda s, a: ops.StridedSlice(s, a, [0, 0, 1], [0, 0, 3], [1, 1, 1],
                                                                        ellipsis_mask=1, new_axis_mask=2),
         lambda tf, a: tf.raw_ops.StridedSlice(input=a, begin=[0, 0, 1], end=[0, 0, 3], strides=[1, 1, 1],
                                               ellipsis_mask=1, new_axis_mask=2), r(2, 3, 4)),
    case("Tile", lambda s, a: ops.Tile(s, a, [2, 1, 3]), lambda tf, a: tf.raw_ops.Tile(input=a, multiples=[2, 1, 3]),
         r(2, 3, 1)),
    case("Pad", lambda s, a: ops.Pad(s, a, [[1, 0], [2, 1]]),
         lambda tf, a: tf.raw_ops.Pad(input=a, paddings=[[1, 0], [2, 1]]), r(2, 3)),
    case("PadV2", lambda s, a: ops.PadV2(s, a, [[0, 1], [1, 1]], np.float64(2.0)),
         lambda tf, a: tf.raw_ops.PadV2(input=a, paddings=[[0, 1], [1, 1]], constant_values=np.float64(2.0)),
         r(2, 3)),
    case("MirrorPad_reflect", lambda s, a: ops.MirrorPad(s, a, [[1, 1], [2, 0]], "REFLECT"),
         lambda tf, a: tf.raw_ops.MirrorPad(input=a, paddings=[[1, 1], [2, 0]], mode="REFLECT"), r(3, 4)),
    case("MirrorPad_symmetric", lambda s, a: ops.MirrorPad(s, a, [[2, 1], [0, 3]], "SYMMETRIC"),
         lambda tf, a: tf.raw_ops.MirrorPad(input=a, paddings=[[2, 1], [0, 3]], mode="SYMMETRIC"), r(3, 4)),
    case("GatherV2_axis0", lambda s, a: ops.GatherV2(s, a, [2, 0, 2], 0),
         lambda tf, a: tf.raw_ops.GatherV2(params=a, indices=[2, 0, 2], axis=0), r(3, 2)),
    case("GatherV2_axis1_matrix_indices", lambda s, a: ops.GatherV2(s, a, [[1, 0], [3, 3]], 1),
         lambda tf, a: tf.raw_ops.GatherV2(params=a, indices=[[1, 0], [3, 3]], axis=1), r(2, 4, 2)),
    case("GatherV2_batch_dims", lambda s, a: ops.GatherV2(s, a, [[1, 0, 1], [2, 2, 0]], 1, batch_dims=1),
         lambda tf, a: tf.raw_ops.GatherV2(params=a, indices=[[1, 0, 1], [2, 2, 0]], axis=1, batch_dims=1),
         r(2, 3, 2)),
    case("MirrorPadGrad", lambda s, a: ops.internal.MirrorPadGrad(s, a, [[1, 1], [2, 0]], "REFLECT"),
         lambda tf, a: tf.raw_ops.MirrorPadGrad(input=a, paddings=[[1, 1], [2, 0]], mode="REFLECT"), r(5, 6)),
    case("ScatterNdNonAliasingAdd", lambda s, a, u: ops.ScatterNdNonAliasingAdd(s, a, [[1], [3], [1]], u),
         lambda tf, a, u: tf.raw_ops.ScatterNdNonAliasingAdd(input=a, indices=[[1], [3], [1]], updates=u),
         r(4, 2), r(3, 2)),
    case("GatherNd", lambda s, a: ops.GatherNd(s, a, [[1, 0], [0, 2], [1, 0]]),
         lambda tf, a: tf.raw_ops.GatherNd(params=a, indices=[[1, 0], [0, 2], [1, 0]]), r(2, 3, 2)),
    case("ScatterNd", lambda s, u: ops.ScatterNd(s, [[1], [3]], u, [4, 2]),
         lambda tf, u: tf.raw_ops.ScatterNd(indices=[[1], [3]], updates=u, shape=[4, 2]), r(2, 2)),
    case("Fill", lambda s, v: ops.Fill(s, [2, 3], v), lambda tf, v: tf.raw_ops.Fill(dims=[2, 3], value=v),
         np.array(0.5)),
    case("BroadcastTo", lambda s, a: ops.BroadcastTo(s, a, [2, 3, 4]),
         lambda tf, a: tf.raw_ops.BroadcastTo(input=a, shape=[2, 3, 4]), r(3, 1)),
    case("ReverseV2", lambda s, a: ops.Reverse(s, a, [0, 2]), lambda tf, a: tf.raw_ops.ReverseV2(tensor=a, axis=[0, 2]),
         r(2, 3, 2)),
    case("ReverseSequence", lambda s, a: ops.ReverseSequence(s, a, [1, 3], 1, batch_dim=0),
         lambda tf, a: tf.raw_ops.ReverseSequence(input=a, seq_lengths=[1, 3], seq_dim=1, batch_dim=0), r(2, 4)),
    case("Diag", lambda s, a: ops.Diag(s, a), lambda tf, a: tf.raw_ops.Diag(diagonal=a), r(3)),
    case("DiagPart", lambda s, a: ops.DiagPart(s, a), lambda tf, a: tf.raw_ops.DiagPart(input=a), r(3, 3)),
    case("MatrixDiag", lambda s, a: ops.MatrixDiag(s, a), lambda tf, a: tf.raw_ops.MatrixDiag(diagonal=a), r(2, 3)),
    case("MatrixBandPart", lambda s, a: ops.MatrixBandPart(s, a, 1, 0),
         lambda tf, a: tf.raw_ops.MatrixBandPart(input=a, num_lower=1, num_upper=0), r(3, 3)),
    case("CheckNumerics", lambda s, a: ops.CheckNumerics(s, a, "bad"),
         lambda tf, a: tf.raw_ops.CheckNumerics(tensor=a, message="bad"), r(2, 3)),
    case("Reverse", lambda s, a: reverse_v1(s, a, ops.Const(s, [True, False, True])),
         lambda tf, a: tf.raw_ops.Reverse(tensor=a, dims=[True, False, True]), r(2, 3, 2)),
    case("Roll", lambda s, a: ops.Roll(s, a, [2, -1, 5], [0, 1, 0]),
         lambda tf, a: tf.raw_ops.Roll(input=a, shift=[2, -1, 5], axis=[0, 1, 0]), r(3, 4)),
    case("ConjugateTranspose", lambda s, a: ops.ConjugateTranspose(s, a, [1, 2, 0]),
         lambda tf, a: tf.raw_ops.ConjugateTranspose(x=a, perm=[1, 2, 0]), r(2, 3, 4)),
    case("TensorScatterUpdate", lambda s, a, u: ops.TensorScatterUpdate(s, a, [[1], [3]], u),
         lambda tf, a, u: tf.raw_ops.TensorScatterUpdate(tensor=a, indices=[[1], [3]], updates=u), r(4, 3), r(2, 3)),
    case("TensorScatterSub", lambda s, a, u: ops.TensorScatterSub(s, a, [[1, 0], [3, 2], [1, 0]], u),
         lambda tf, a, u: tf.raw_ops.TensorScatterSub(tensor=a, indices=[[1, 0], [3, 2], [1, 0]], updates=u),
         r(4, 3), r(3)),
    # ties (an update equal to the tensor, a repeated index) share the gradient; not differentiable there
    case("TensorScatterMax", lambda s, a, u: ops.TensorScatterMax(s, a, [[0], [2], [0]], u),
         lambda tf, a, u: tf.raw_ops.TensorScatterMax(tensor=a, indices=[[0], [2], [0]], updates=u),
         np.array([[0.5, -1.0], [2.0, 0.0], [-0.3, 0.7]]), np.array([[0.9, -2.0], [-1.0, 0.1], [0.2, -0.5]])),
    case("TensorScatterMin_ties", lambda s, a, u: ops.TensorScatterMin(s, a, [[0], [2], [0]], u),
         lambda tf, a, u: tf.raw_ops.TensorScatterMin(tensor=a, indices=[[0], [2], [0]], updates=u),
         np.array([[0.5, -1.0], [2.0, 0.0], [-0.3, 0.7]]), np.array([[0.5, -2.0], [-1.0, 0.1], [0.5, -2.0]]),
         numeric=False, why="ties: the gradient is shared between equal inputs, not a derivative"),
    case("TensorStridedSliceUpdate_broadcast",
         lambda s, a, v: ops.TensorStridedSliceUpdate(s, a, [0, 1], [3, 3], [2, 1], v),
         lambda tf, a, v: tf.raw_ops.TensorStridedSliceUpdate(input=a, begin=[0, 1], end=[3, 3], strides=[2, 1],
                                                              value=v), r(3, 4), r(1, 2)),
    case("TensorStridedSliceUpdate_masks",
         lambda s, a, v: ops.TensorStridedSliceUpdate(s, a, [1, 1, 3], [3, 0, 4], [1, 1, -1], v, **_MASKS),
         lambda tf, a, v: tf.raw_ops.TensorStridedSliceUpdate(input=a, begin=[1, 1, 3], end=[3, 0, 4],
                                                              strides=[1, 1, -1], value=v, **_MASKS),
         r(3, 3, 4), r(2, 4)),
    case("EnsureShape", lambda s, a: ops.EnsureShape(s, a, [2, -1]),
         lambda tf, a: tf.raw_ops.EnsureShape(input=a, shape=[2, None]), r(2, 3)),
    case("CheckNumericsV2", lambda s, a: ops.CheckNumericsV2(s, a, "m"),
         lambda tf, a: tf.raw_ops.CheckNumericsV2(tensor=a, message="m"), r(2, 3)),
    # no TF comparison: TF's gradient (tfdbg's GradientsDebugger) fails under tf.GradientTape (it reads op.name)
    case("DebugGradientIdentity", lambda s, a: ops.DebugGradientIdentity(s, a), None, r(2, 3)),
    case("DynamicPartition", lambda s, a: ops.DynamicPartition(s, a, [[1, 0, 1], [2, 2, 0]], 3).outputs,
         lambda tf, a: tf.raw_ops.DynamicPartition(data=a, partitions=[[1, 0, 1], [2, 2, 0]], num_partitions=3),
         r(2, 3, 2)),
    case("DynamicStitch", lambda s, a, b: ops.DynamicStitch(s, [[0, 2], [1, 3]], [a, b]).merged,
         lambda tf, a, b: tf.raw_ops.DynamicStitch(indices=[[0, 2], [1, 3]], data=[a, b]), r(2, 3), r(2, 3)),
    case("ParallelDynamicStitch", lambda s, a, b: ops.ParallelDynamicStitch(s, [[0, 2], [1, 3]], [a, b]).merged,
         lambda tf, a, b: tf.raw_ops.ParallelDynamicStitch(indices=[[0, 2], [1, 3]], data=[a, b]),
         r(2, 3), r(2, 3)),
    case("Concat_v1", lambda s, a, b: Output(add_node(s, get_op_def("Concat"), [ops.Const(s, 1), [a, b]], {})),
         lambda tf, a, b: tf.raw_ops.Concat(concat_dim=1, values=[a, b]), r(2, 3), r(2, 2)),
    case("Gather_v1", lambda s, a: Output(add_node(s, get_op_def("Gather"), [a, ops.Const(s, [[2, 0], [2, 1]])], {})),
         lambda tf, a: tf.raw_ops.Gather(params=a, indices=[[2, 0], [2, 1]]), r(3, 2)),
    case("SpaceToBatchND", lambda s, a: ops.SpaceToBatchND(s, a, [2, 2], [[0, 0], [1, 1]]),
         lambda tf, a: tf.raw_ops.SpaceToBatchND(input=a, block_shape=[2, 2], paddings=[[0, 0], [1, 1]]),
         r(1, 2, 2, 1)),
    case("BatchToSpaceND", lambda s, a: ops.BatchToSpaceND(s, a, [2, 2], [[0, 0], [1, 1]]),
         lambda tf, a: tf.raw_ops.BatchToSpaceND(input=a, block_shape=[2, 2], crops=[[0, 0], [1, 1]]),
         r(4, 1, 2, 1)),
    case("SpaceToBatch", lambda s, a: ops.SpaceToBatch(s, a, [[0, 0], [1, 1]], 2),
         lambda tf, a: tf.raw_ops.SpaceToBatch(input=a, paddings=[[0, 0], [1, 1]], block_size=2), r(1, 2, 2, 1)),
    case("BatchToSpace", lambda s, a: ops.BatchToSpace(s, a, [[0, 0], [1, 1]], 2),
         lambda tf, a: tf.raw_ops.BatchToSpace(input=a, crops=[[0, 0], [1, 1]], block_size=2), r(4, 1, 2, 1)),
    case("DepthToSpace", lambda s, a: ops.DepthToSpace(s, a, 2),
         lambda tf, a: tf.raw_ops.DepthToSpace(input=a, block_size=2), r(1, 1, 2, 4)),
    case("SpaceToDepth", lambda s, a: ops.SpaceToDepth(s, a, 2),
         lambda tf, a: tf.raw_ops.SpaceToDepth(input=a, block_size=2), r(1, 2, 4, 1)),
    case("QuantizeAndDequantizeV3", lambda s, a: ops.QuantizeAndDequantizeV3(s, a, -0.5, 0.5, 4, range_given=True),
         lambda tf, a: tf.raw_ops.QuantizeAndDequantizeV3(input=a, input_min=-0.5, input_max=0.5, num_bits=4,
                                                          range_given=True),
         r(2, 5, dtype=np.float32), numeric=False, why=_STE),
    case("QuantizeAndDequantizeV4",
         lambda s, a, lo, hi: ops.QuantizeAndDequantizeV4(s, a, lo, hi, range_given=True, num_bits=4),
         lambda tf, a, lo, hi: tf.raw_ops.QuantizeAndDequantizeV4(input=a, input_min=lo, input_max=hi,
                                                                  range_given=True, num_bits=4),
         r(2, 5, dtype=np.float32), np.array(-0.5, np.float32), np.array(0.6, np.float32), numeric=False, why=_STE),
    case("FakeQuantWithMinMaxArgs", lambda s, a: ops.FakeQuantWithMinMaxArgs(s, a, min=-0.5, max=0.6, num_bits=4),
         lambda tf, a: tf.raw_ops.FakeQuantWithMinMaxArgs(inputs=a, min=-0.5, max=0.6, num_bits=4),
         r(2, 5, dtype=np.float32), numeric=False, why=_STE),
    case("FakeQuantWithMinMaxVars", lambda s, a, lo, hi: ops.FakeQuantWithMinMaxVars(s, a, lo, hi, narrow_range=True),
         lambda tf, a, lo, hi: tf.raw_ops.FakeQuantWithMinMaxVars(inputs=a, min=lo, max=hi, narrow_range=True),
         r(2, 5, dtype=np.float32), np.array(-0.4, np.float32), np.array(0.7, np.float32), numeric=False, why=_STE),
    case("FakeQuantWithMinMaxVarsPerChannel",
         lambda s, a, lo, hi: ops.FakeQuantWithMinMaxVarsPerChannel(s, a, lo, hi, num_bits=6),
         lambda tf, a, lo, hi: tf.raw_ops.FakeQuantWithMinMaxVarsPerChannel(inputs=a, min=lo, max=hi, num_bits=6),
         r(4, 3, dtype=np.float32), np.array([-0.5, -0.2, -0.9], np.float32), np.array([0.5, 0.3, 0.1], np.float32),
         numeric=False, why=_STE),
]


test_gradient_matches_finite_differences, test_gradient_matches_tensorflow = case_tests(CASES)


def test_every_array_registration_of_tf_cc_is_present():
    from tfops_py.gradients import registered_gradient_ops

    table = registered_gradient_ops()
    with_grad = ("Pack Unpack Identity RefIdentity QuantizeAndDequantize QuantizeAndDequantizeV4 "
                 "QuantizeAndDequantizeV3 Split SplitV Fill Diag DiagPart MatrixDiag MatrixBandPart GatherNd "
                 "CheckNumerics Reshape ExpandDims Squeeze Transpose ReverseSequence ReverseV2 ScatterNd "
                 "ScatterNdNonAliasingAdd Pad PadV2 SpaceToBatch SpaceToBatchND BatchToSpace BatchToSpaceND "
                 "SpaceToDepth DepthToSpace MirrorPad MirrorPadGrad StridedSlice Slice ConcatV2 BroadcastTo Tile "
                 "GatherV2 DynamicPartition DynamicStitch ParallelDynamicStitch").split()
    no_grad = ("Const StopGradient ConcatOffset EditDistance ZerosLike InvertPermutation Shape ShapeN Rank Size "
               "BroadcastGradientArgs OneHot").split()
    assert len(with_grad) == 43 and len(no_grad) == 12
    assert all(table.get(op) is True for op in with_grad)
    assert all(table.get(op) is False for op in no_grad)
    # beyond TF's C++ API (TF registers these in Python)
    assert all(table.get(op) is True for op in ("FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars",
                                                 "FakeQuantWithMinMaxVarsPerChannel"))


@pytest.mark.parametrize("op_name", ["FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxVars",
                                     "FakeQuantWithMinMaxVarsPerChannel"])
def test_fake_quant_gradient_graph(op_name):
    """Each FakeQuant op's gradient is its ...Gradient op with the same quantization attrs."""
    from tfops_py import DT_FLOAT, Scope
    from tfops_py.gradients import AddSymbolicGradients

    scope = Scope.NewRootScope()
    x = ops.Placeholder(scope, DT_FLOAT, shape=[2, 3]).output
    if op_name == "FakeQuantWithMinMaxArgs":
        y = ops.FakeQuantWithMinMaxArgs(scope, x, min=-1.5, max=2.0, num_bits=5, narrow_range=True)
        inputs, attrs = [x], ("min", "max", "num_bits", "narrow_range")
    else:
        shape = [] if op_name == "FakeQuantWithMinMaxVars" else [3]
        lo = ops.Placeholder(scope, DT_FLOAT, shape=shape).output
        hi = ops.Placeholder(scope, DT_FLOAT, shape=shape).output
        y = getattr(ops, op_name)(scope, x, lo, hi, num_bits=7, narrow_range=True)
        inputs, attrs = [x, lo, hi], ("num_bits", "narrow_range")
    grads = AddSymbolicGradients(scope, [y], inputs)
    g = grads[0].node()
    assert g.op == f"{op_name}Gradient" and [o.index() for o in grads] == list(range(len(inputs)))
    assert all(o.node() is g for o in grads)
    assert g.inputs[0].node().op == "OnesLike" and g.inputs[1:] == inputs
    for a in attrs:
        assert g.attrs[a] == y.node().attrs[a], a
