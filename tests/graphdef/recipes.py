"""A small test graph for every op that has a kernel: a recipe where the op needs particular inputs,
otherwise a generic one (float tensors of shape [2,3], bools where the op wants bools).

``build_case(op_type)`` returns a Case (a root scope, fetches, feeds, targets) or raises
``NoRecipe`` saying why the op cannot be built generically.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from tfops_py import DT_FLOAT, DT_INT32, ClientSession, DataType, Operation, Output, Scope, ops
from tfops_py.errors import OpError
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def


class Case(NamedTuple):
    root: Scope
    fetches: list[Output]
    feeds: dict[Output, np.ndarray]
    targets: list[Any]


class NoRecipe(Exception):
    """The op has no recipe and the generic inputs do not build or run."""


_RECIPES: dict[str, Callable[[Scope], tuple]] = {}
_rng = np.random.default_rng(7)


def recipe(*op_types: str):
    def deco(fn):
        for t in op_types:
            _RECIPES[t] = fn
        return fn

    return deco


def f32(*shape: int, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return _rng.uniform(lo, hi, size=shape).astype(np.float32)


def c(s: Scope, value: Any) -> Output:
    return ops.Const(s, value)


def outs(op: Any) -> list[Output]:
    return [op.operation.output(i) for i in range(op.operation.num_outputs())]


# ----------------------------------------------------------------------------- recipes
@recipe("Placeholder")
def _placeholder(s):
    x = ops.Placeholder(s.WithOpName("x"), DT_FLOAT, shape=[2, 3])
    return [ops.Identity(s, x).output], {x.output: f32(2, 3)}


@recipe("PlaceholderWithDefault")
def _placeholder_with_default(s):
    d = ops.PlaceholderWithDefault(s.WithOpName("d"), c(s, f32(2, 2)), [-1, 2])
    return [d.output]


@recipe("Const")
def _const(s):
    values = [f32(2, 3), np.float32(1.5), np.arange(4, dtype=np.int64), np.array([True, False]),
              np.array([b"a", b"bc"], dtype=object), np.float16(0.5), np.array([1, 2], np.float16),
              np.array([1 + 2j, 3j], np.complex64), np.array([7, 8], np.uint16), np.array([[-1, 2]], np.int8),
              np.zeros((0, 2), np.float32), np.array([1.25, -3.5], np.float64)]
    import ml_dtypes

    values.append(np.array([1.5, 2.0], ml_dtypes.bfloat16))
    return [c(s, v) for v in values]


@recipe("IdentityN")
def _identity_n(s):
    return outs(ops.IdentityN(s, [c(s, f32(2)), c(s, np.array([1, 2], np.int32))]))


@recipe("NoOp")
def _no_op(s):
    a = ops.AddV2(s, c(s, f32(2)), c(s, f32(2)))
    n = ops.NoOp(s.WithControlDependencies(a).WithOpName("done"))
    out = ops.Identity(s.WithControlDependencies(n), a)
    return [out.output], {}, [n]


@recipe("MatMul")
def _matmul(s):
    return [ops.MatMul(s, c(s, f32(2, 3)), c(s, f32(2, 3)), transpose_b=True).product]


@recipe("BatchMatMulV2")
def _batch_matmul(s):
    return [ops.BatchMatMulV2(s, c(s, f32(2, 2, 3)), c(s, f32(1, 3, 2))).output]


@recipe("ArgMax", "ArgMin")
def _argmax(s, op_type="ArgMax"):
    return [ops.ArgMax(s, c(s, f32(3, 4)), c(s, 1)).output]


@recipe("AvgPool", "MaxPool")
def _pool(s):
    x = c(s, f32(1, 4, 4, 2))
    return [ops.AvgPool(s, x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID").output,
            ops.MaxPool(s, x, [1, 3, 3, 1], [1, 1, 1, 1], "SAME").output]


@recipe("BiasAdd")
def _bias_add(s):
    return [ops.BiasAdd(s, c(s, f32(2, 3)), c(s, f32(3))).output]


@recipe("Cast")
def _cast(s):
    x = c(s, f32(2, 3, lo=-5, hi=5))
    return [ops.Cast(s, x, DT_INT32).y, ops.Cast(s, x, DataType.DT_HALF).y]


@recipe("ConcatV2")
def _concat(s):
    return [ops.Concat(s, [c(s, f32(2, 3)), c(s, f32(2, 1))], c(s, 1)).output]


@recipe("Conv2D")
def _conv2d(s):
    return [ops.Conv2D(s, c(s, f32(1, 5, 5, 2)), c(s, f32(3, 3, 2, 3)), [1, 1, 1, 1], "SAME").output]


@recipe("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropInput")
def _depthwise(s):
    x, w, dy = c(s, f32(1, 5, 5, 2)), c(s, f32(3, 3, 2, 2)), c(s, f32(1, 3, 3, 4))
    return [ops.DepthwiseConv2dNative(s, x, w, [1, 1, 1, 1], "VALID").output,
            ops.DepthwiseConv2dNativeBackpropFilter(s, x, c(s, [3, 3, 2, 2]), dy, [1, 1, 1, 1], "VALID").output,
            ops.DepthwiseConv2dNativeBackpropInput(s, c(s, [1, 5, 5, 2]), w, dy, [1, 1, 1, 1], "VALID").output]


@recipe("ExpandDims")
def _expand_dims(s):
    return [ops.ExpandDims(s, c(s, f32(2, 3)), c(s, 1)).output]


@recipe("FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient", "FakeQuantWithMinMaxVars",
        "FakeQuantWithMinMaxVarsGradient", "FakeQuantWithMinMaxVarsPerChannel",
        "FakeQuantWithMinMaxVarsPerChannelGradient")
def _fake_quant(s):
    x, g = c(s, f32(3, 4, lo=-3, hi=3)), c(s, f32(3, 4))
    lo, hi = c(s, np.float32(-2.0)), c(s, np.float32(1.5))
    plo, phi = c(s, np.array([-1, -2, -0.5, -3], np.float32)), c(s, np.array([1, 2, 0.5, 3], np.float32))
    return ([ops.FakeQuantWithMinMaxArgs(s, x, min=-1.0, max=2.0, num_bits=6).outputs]
            + outs(ops.FakeQuantWithMinMaxArgsGradient(s, g, x, narrow_range=True))
            + [ops.FakeQuantWithMinMaxVars(s, x, lo, hi).outputs]
            + outs(ops.FakeQuantWithMinMaxVarsGradient(s, g, x, lo, hi))
            + [ops.FakeQuantWithMinMaxVarsPerChannel(s, x, plo, phi).outputs]
            + outs(ops.FakeQuantWithMinMaxVarsPerChannelGradient(s, g, x, plo, phi)))


@recipe("Fill")
def _fill(s):
    return [ops.Fill(s, c(s, [2, 3]), c(s, 1.5)).output]


@recipe("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def _fused_bn(s):
    x, scale, offset = c(s, f32(2, 3, 3, 4)), c(s, f32(4, lo=0.5, hi=2)), c(s, f32(4))
    empty = c(s, np.zeros(0, np.float32))
    fetched = []
    for cls in (ops.FusedBatchNorm, ops.FusedBatchNormV2, ops.FusedBatchNormV3):
        bn = cls(s, x, scale, offset, empty, empty, epsilon=1e-3)
        fetched += [bn.y, bn.batch_mean, bn.batch_variance]
    inference = ops.FusedBatchNormV3(s, x, scale, offset, c(s, f32(4)), c(s, f32(4, lo=0.5, hi=1)),
                                     is_training=False, data_format="NHWC")
    return fetched + [inference.y]


@recipe("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3")
def _fused_bn_grad(s):
    x, dy, scale = c(s, f32(2, 3, 3, 4)), c(s, f32(2, 3, 3, 4)), c(s, f32(4, lo=0.5, hi=2))
    mean, var = c(s, f32(4)), c(s, f32(4, lo=0.5, hi=1.5))
    g1 = ops.FusedBatchNormGrad(s, dy, x, scale, mean, var, epsilon=1e-3, is_training=False)
    g2 = ops.FusedBatchNormGradV2(s, dy, x, scale, mean, var, epsilon=1e-3, is_training=False)
    fwd = ops.FusedBatchNormV3(s, x, scale, c(s, f32(4)), c(s, np.zeros(0, np.float32)),
                               c(s, np.zeros(0, np.float32)), epsilon=1e-3)
    g3 = ops.FusedBatchNormGradV3(s, dy, x, scale, fwd.reserve_space_1, fwd.reserve_space_2,
                                  fwd.reserve_space_3, epsilon=1e-3)
    return [g.x_backprop for g in (g1, g2, g3)] + [g.scale_backprop for g in (g1, g2, g3)] + \
        [g.offset_backprop for g in (g1, g2, g3)]


@recipe("GatherV2")
def _gather(s):
    return [ops.GatherV2(s, c(s, f32(4, 3)), c(s, [3, 0, 1]), c(s, 0)).output]


@recipe("Max", "Min", "Mean", "Sum", "Prod", "All", "Any")
def _reductions(s):
    x = c(s, f32(2, 3, 2))
    return [ops.Max(s, x, c(s, 1)).output, ops.Min(s, x, c(s, [0, 2]), keep_dims=True).output,
            ops.Mean(s, x, c(s, -1)).output, ops.Sum(s, x, c(s, [1])).output, ops.Prod(s, x, c(s, 0)).output]


@recipe("OneHot")
def _one_hot(s):
    return [ops.OneHot(s, c(s, [0, 3, 1, -1]), c(s, 4), c(s, 1.0), c(s, 0.0)).output]


@recipe("Pack", "Unpack")
def _pack(s):
    packed = ops.Stack(s, [c(s, f32(3)), c(s, f32(3))], axis=1)
    return [packed.output] + list(ops.Unstack(s, c(s, f32(2, 3)), 3, axis=1).output)


@recipe("Pad")
def _pad(s):
    return [ops.Pad(s, c(s, f32(2, 3)), c(s, [[1, 0], [0, 2]])).output]


@recipe("Range")
def _range(s):
    return [ops.Range(s, c(s, 1), c(s, 10), c(s, 3)).output, ops.Range(s, c(s, 0.5), c(s, 2.0), c(s, 0.25)).output]


@recipe("Reshape")
def _reshape(s):
    return [ops.Reshape(s, c(s, f32(2, 3)), c(s, [3, -1])).output]


@recipe("Slice", "StridedSlice")
def _slice(s):
    x = c(s, f32(3, 4))
    return [ops.Slice(s, x, c(s, [1, 0]), c(s, [2, -1])).output,
            ops.StridedSlice(s, x, c(s, [0, 3]), c(s, [3, 0]), c(s, [2, -1])).output]


@recipe("Split")
def _split(s):
    return list(ops.Split(s, c(s, 1), c(s, f32(2, 4)), 2).output)


@recipe("Squeeze")
def _squeeze(s):
    return [ops.Squeeze(s, c(s, f32(2, 1, 3))).output]


@recipe("Tile")
def _tile(s):
    return [ops.Tile(s, c(s, f32(2, 3)), c(s, [2, 1])).output]


@recipe("Transpose")
def _transpose(s):
    return [ops.Transpose(s, c(s, f32(2, 3, 4)), c(s, [2, 0, 1])).y]


@recipe("FractionalAvgPoolGrad")
def _fractional_avg_pool_grad(s):
    return [ops.FractionalAvgPoolGrad(s, c(s, np.array([1, 4, 4, 1], np.int64)), c(s, f32(1, 2, 2, 1)),
                                      c(s, np.array([0, 2, 4], np.int64)), c(s, np.array([0, 2, 4], np.int64))).output]


@recipe("FractionalAvgPool", "FractionalMaxPool", "FractionalMaxPoolGrad")
def _fractional_pool(s):
    x = c(s, f32(1, 6, 6, 2))
    ratio = [1.0, 1.44, 1.73, 1.0]
    avg = ops.FractionalAvgPool(s, x, ratio, deterministic=True, seed=1, seed2=2)
    mx = ops.FractionalMaxPool(s, x, ratio, deterministic=True, seed=3, seed2=4, overlapping=True)
    grad = ops.FractionalMaxPoolGrad(s, x, mx.output, c(s, f32(1, 4, 3, 2)), mx.row_pooling_sequence,
                                     mx.col_pooling_sequence, overlapping=True)
    return outs(avg) + outs(mx) + [grad.output]


@recipe("Variable", "VariableV2", "Assign", "AssignAdd", "AssignSub", "IsVariableInitialized",
        "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam")
def _variables(s):
    """TF1 variables: the Assign initializers are run first (as targets), then the fetches."""
    inits = []

    def var(name: str, value: np.ndarray) -> Output:
        v = ops.Variable(s.WithOpName(name), list(value.shape), DT_FLOAT)
        inits.append(ops.Assign(s.WithOpName(f"{name}/init"), v, c(s, value)))
        return v.ref

    grad = c(s, f32(2, 3))
    lr, scalar = c(s, np.float32(0.1)), (lambda v: c(s, np.float32(v)))
    fetched = [ops.AssignAdd(s, var("v_add", f32(2, 3)), grad).output_ref,
               ops.AssignSub(s, var("v_sub", f32(2, 3)), grad).output_ref,
               ops.IsVariableInitialized(s, var("v_init", f32(2))).is_initialized,
               ops.ApplyGradientDescent(s, var("v_gd", f32(2, 3)), lr, grad).out,
               ops.ApplyMomentum(s, var("v_mom", f32(2, 3)), var("v_mom_acc", f32(2, 3)), lr, grad,
                                 scalar(0.9)).out,
               ops.ApplyAdam(s, var("v_adam", f32(2, 3)), var("v_adam_m", f32(2, 3)),
                             var("v_adam_v", f32(2, 3, lo=0, hi=1)), scalar(0.9), scalar(0.99), lr, scalar(0.9),
                             scalar(0.999), scalar(1e-7), grad).out]
    return fetched, {}, inits


# ----------------------------------------------------------------------------- generic
def _generic_value(dtype: DataType, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == DataType.DT_BOOL:
        return _rng.integers(0, 2, size=shape).astype(bool)
    if dtype.is_integer:
        return _rng.integers(1, 4, size=shape).astype(dtype.numpy_dtype)
    return _rng.uniform(0.5, 2.0, size=shape).astype(dtype.numpy_dtype)


def _generic(s: Scope, op_type: str) -> list[Output]:
    """Every input a [2,3] tensor: float32 where the op allows it, else its fixed type."""
    op_def = get_op_def(op_type)
    required = [a for a in op_def.attrs if not a.has_default and a.name not in op_def.inferred_attrs]
    if required:
        raise NoRecipe(f"needs attrs {[a.name for a in required]}")
    inputs: list[Any] = []
    for arg in op_def.inputs:
        if arg.type_list_attr:
            raise NoRecipe(f"input '{arg.name}' is a list of mixed types")
        if arg.type is not None:
            dtype = arg.type
        else:
            allowed = op_def.attr_map[arg.type_attr].allowed  # type: ignore[index]
            dtype = next((t for t in (DataType.DT_FLOAT, DataType.DT_INT32, DataType.DT_BOOL)
                          if allowed is None or t in allowed), None)
            if dtype is None:
                raise NoRecipe(f"input '{arg.name}' allows none of float, int32, bool")
        if dtype.name in ("DT_RESOURCE", "DT_STRING", "DT_VARIANT"):
            raise NoRecipe(f"input '{arg.name}' is a {dtype.short_name} (tested in tests/kernels/test_resource_ops.py)")
        values = [c(s, _generic_value(dtype, (2, 3))) for _ in range(2 if arg.is_list else 1)]
        inputs.append(values if arg.is_list else values[0])
    node = add_node(s, op_def, inputs, {}, op_type)
    return [Output(node, i) for i in range(node.num_outputs())]  # type: ignore[union-attr]


def build_case(op_type: str) -> Case:
    """The test graph for ``op_type``; run once here to make sure it runs (NoRecipe otherwise)."""
    root = Scope.NewRootScope()
    fn = _RECIPES.get(op_type)
    try:
        result = fn(root) if fn else _generic(root, op_type)
    except OpError as e:
        if fn:
            raise
        raise NoRecipe(f"generic [2,3] inputs rejected: {e}") from None
    if not isinstance(result, tuple):
        result = (result,)
    fetches = list(result[0])
    feeds = dict(result[1]) if len(result) > 1 else {}
    targets = list(result[2]) if len(result) > 2 else []
    if not fn:
        try:
            run(root, feeds, fetches, targets)
        except OpError as e:
            raise NoRecipe(f"generic [2,3] inputs do not run: {e}") from None
    return Case(root, fetches, feeds, targets)


def run(root: Scope, feeds: dict, fetches: list, targets: list) -> list[np.ndarray]:
    """Run ``targets`` (initializers) first, then fetch, in one session (NumPy results)."""
    sess = ClientSession(root, fetch_numpy=True)
    if targets:
        sess.Run(feeds, [], targets)
    return sess.Run(feeds, fetches)


def has_recipe(op_type: str) -> bool:
    return op_type in _RECIPES


@recipe("SummaryWriter", "CreateSummaryFileWriter", "WriteScalarSummary", "WriteHistogramSummary", "WriteSummary",
        "WriteGraphSummary", "WriteRawProtoSummary", "FlushSummaryWriter", "CloseSummaryWriter")
def _summary_writer(s):
    """Create, write each kind of event, flush, close: a chain of control dependencies (TF runs targets in
    any order), ending in a fetch of the log directory."""
    import atexit
    import shutil
    import tempfile

    def node(scope, op_type, *inputs, **attrs):
        outs = [v if isinstance(v, Output) else c(scope, v) for v in inputs]
        return add_node(scope, get_op_def(op_type), outs, attrs)

    logdir = tempfile.mkdtemp(prefix="tfops_summary_")
    atexit.register(shutil.rmtree, logdir, True)
    writer = Output(node(s, "SummaryWriter", shared_name="export_test"), 0)
    step = np.int64(1)
    last = node(s, "CreateSummaryFileWriter", writer, logdir, np.int32(5), np.int32(100), ".test")
    summary = ops.ScalarSummary(s, "raw", 2.0).summary
    metadata = b"\x12\x05shown"  # SummaryMetadata(display_name="shown")
    for op_type, inputs in (("WriteScalarSummary", ("loss", f32())), ("WriteHistogramSummary", ("h", f32(3, 4))),
                            ("WriteSummary", (f32(2, 2), "t", metadata)), ("WriteGraphSummary", (b"",)),
                            ("WriteRawProtoSummary", (summary,)), ("FlushSummaryWriter", ()),
                            ("CloseSummaryWriter", ())):
        scope = s.WithControlDependencies(Operation(last))
        last = node(scope, op_type, writer, *inputs) if op_type in ("FlushSummaryWriter", "CloseSummaryWriter") \
            else node(scope, op_type, writer, step, *inputs)
    return [ops.Identity(s.WithControlDependencies(Operation(last)), c(s, logdir)).output]


@recipe("ScalarSummary", "HistogramSummary", "MergeSummary", "TensorSummaryV2")
def _summaries(s):
    scalar = ops.ScalarSummary(s, ["a", "b"], c(s, f32(2)))
    histogram = ops.HistogramSummary(s, "h", c(s, f32(3, 4)))
    tensor = ops.TensorSummaryV2(s, "t", c(s, f32(2, 2)), b"")
    return [scalar.summary, histogram.summary, tensor.summary,
            ops.MergeSummary(s, [scalar, histogram, tensor]).summary]
