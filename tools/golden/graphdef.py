"""Record GraphDefs made by TensorFlow, with TF's outputs, for tests/golden/graphdef/.

Run with TensorFlow 2.21 installed (``python tools/golden/graphdef.py``).  For each
case it writes ``<case>.pb`` (and ``.pbtxt`` where noted), ``<case>.npz`` holding
the feeds and TF's values of the fetches, and one ``manifest.json`` listing feeds,
fetches and files.  The tests import these without TensorFlow.
"""
from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "golden", "graphdef")
rng = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def tf1_basic():
    """A TF1-style graph: placeholders, consts, MatMul, AddV2/Add, IdentityN, NoOp, control deps, device, _class."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [2, 3], name="x")
        w = tf.constant(f32(3, 2), name="w")
        with tf.device("/device:CPU:0"):
            y = tf.raw_ops.MatMul(a=x, b=w, name="y")
        b = tf.constant([0.5, -1.0], name="b")
        z = tf.raw_ops.AddV2(x=y, y=b, name="z")
        z2 = tf.raw_ops.Add(x=z, y=z, name="z2")
        idn = tf.raw_ops.IdentityN(input=[z, y], name="idn")
        with g.colocate_with(z):
            snap = tf.raw_ops.Snapshot(input=idn[0], name="snap")
        d = tf.raw_ops.PlaceholderWithDefault(input=tf.constant([[1.0, 2.0], [3.0, 4.0]]), shape=[None, 2],
                                              name="d")
        sg = tf.raw_ops.StopGradient(input=d, name="sg")
        with tf.control_dependencies([z2]):
            init = tf.raw_ops.NoOp(name="init")
        with tf.control_dependencies([init]):
            tf.raw_ops.AddV2(x=snap, y=sg, name="out")
        tf.identity(idn[1], name="second")
    return g.as_graph_def(), {"x:0": f32(2, 3)}, ["out:0", "z2:0", "idn:1", "second:0", "d:0"], True


def consts():
    """Const tensors of every encoding TF uses: tensor_content, typed fields, half_val, splat, strings, empty."""
    g = tf.Graph()
    values = {
        "f32": f32(2, 3), "f32_scalar": np.float32(2.5), "f64": rng.normal(size=(3,)),
        "f16": f32(2, 2).astype(np.float16), "bf16": tf.constant([1.5, -2.0, 3.25], dtype=tf.bfloat16),
        "i8": np.array([-3, 4], np.int8), "u8": np.array([200, 1, 7], np.uint8),
        "i16": np.array([-300, 4], np.int16), "u16": np.array([60000, 1], np.uint16),
        "i32": np.arange(6, dtype=np.int32).reshape(2, 3), "i64": np.array([2**40, -5], np.int64),
        "u32": np.array([4000000000, 1], np.uint32), "u64": np.array([2**63 + 5, 2], np.uint64),
        "bool": np.array([[True, False], [False, True]]), "c64": np.array([1 + 2j, -3j], np.complex64),
        "c128": np.array([0.5 - 1j], np.complex128), "str": np.array([b"ab", b"", b"\xff\x00z"], object),
        "str_scalar": b"hello", "empty": np.zeros((0, 3), np.float32), "f16_scalar": np.float16(-1.5),
    }
    with g.as_default():
        for name, v in values.items():
            tf.constant(v, name=name)
        tf.constant(7, shape=[2, 3], name="splat_i32")  # one int_val, repeated
        tf.constant(1.25, shape=[4], name="splat_f32")
        tf.constant(True, shape=[3], name="splat_bool")
    fetches = [f"{n}:0" for n in values] + ["splat_i32:0", "splat_f32:0", "splat_bool:0"]
    return g.as_graph_def(), {}, fetches, True


def frozen_dense():
    """A frozen TF1 inference graph: variables folded into Consts by convert_variables_to_constants."""
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="input")
        kernel = tf.compat.v1.get_variable("dense/kernel", initializer=tf.constant(f32(3, 4)))
        bias = tf.compat.v1.get_variable("dense/bias", initializer=tf.constant(f32(4)))
        hidden = tf.raw_ops.AddV2(x=tf.matmul(x, kernel), y=bias, name="dense/BiasAdd")
        tf.identity(tf.matmul(hidden, tf.constant(f32(4, 2))), name="output")
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            frozen = tf.compat.v1.graph_util.convert_variables_to_constants(sess, g.as_graph_def(), ["output"])
    return frozen, {"input:0": f32(5, 3)}, ["output:0"], False


@tf.function
def _inner(a, b):
    return tf.matmul(a, b) + 1.0, tf.identity(a)


@tf.function
def _outer(x, w):
    y, z = _inner(x, w)
    return tf.identity(y + z)


def function_nested():
    """A tf.function's concrete graph: a PartitionedCall of another function, with the function library."""
    cf = _outer.get_concrete_function(tf.TensorSpec([2, 2], tf.float32), tf.TensorSpec([2, 2], tf.float32))
    return cf.graph.as_graph_def(), {"x:0": f32(2, 2), "w:0": f32(2, 2)}, ["Identity_1:0"], False


def function_frozen():
    """convert_variables_to_constants_v2 of a tf.function with a variable (TF inlines the call itself)."""
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    v = tf.Variable(f32(2, 2))

    @tf.function
    def f(x):
        y, z = _inner(x, v)
        return tf.identity(y + z)

    cf = f.get_concrete_function(tf.TensorSpec([2, 2], tf.float32))
    frozen = convert_variables_to_constants_v2(cf)
    out = frozen.outputs[0].name
    return frozen.graph.as_graph_def(), {"x:0": f32(2, 2)}, [out], False


def seed_ops():
    """The five seed ops (and the FusedBatchNormV3 forward pass feeding one), inputs as Consts."""
    g = tf.Graph()
    with g.as_default():
        x = tf.constant(f32(2, 3, 3, 4), name="x")
        dy = tf.constant(f32(2, 3, 3, 4), name="dy")
        scale = tf.constant(f32(4) + 1.5, name="scale")
        offset = tf.constant(f32(4), name="offset")
        fwd = tf.raw_ops.FusedBatchNormV3(x=x, scale=scale, offset=offset, mean=tf.zeros([0]),
                                          variance=tf.zeros([0]), epsilon=1e-3, is_training=True, name="bn")
        tf.raw_ops.FusedBatchNormGradV3(y_backprop=dy, x=x, scale=scale, reserve_space_1=fwd.reserve_space_1,
                                        reserve_space_2=fwd.reserve_space_2, reserve_space_3=fwd.reserve_space_3,
                                        epsilon=1e-3, is_training=True, name="bn_grad_v3")
        tf.raw_ops.FusedBatchNormGrad(y_backprop=dy, x=x, scale=scale, reserve_space_1=fwd.batch_mean,
                                      reserve_space_2=fwd.batch_variance, epsilon=1e-3, is_training=False,
                                      name="bn_grad")
        inputs = tf.constant(f32(3, 4) * 4, name="fq_inputs")
        tf.raw_ops.FakeQuantWithMinMaxVarsPerChannelGradient(
            gradients=tf.constant(f32(3, 4), name="fq_grads"), inputs=inputs,
            min=tf.constant([-1.0, -2.0, -0.5, -3.0]), max=tf.constant([1.0, 2.0, 0.5, 3.0]), num_bits=8,
            narrow_range=False, name="fq_grad")
        tf.raw_ops.DepthwiseConv2dNativeBackpropInput(
            input_sizes=tf.constant([1, 5, 5, 2], name="dw_sizes"), filter=tf.constant(f32(3, 3, 2, 2)),
            out_backprop=tf.constant(f32(1, 5, 5, 4)), strides=[1, 1, 1, 1], padding="SAME", name="dw_grad")
        tf.raw_ops.FractionalAvgPoolGrad(
            orig_input_tensor_shape=tf.constant([1, 4, 4, 1], tf.int64), out_backprop=tf.constant(f32(1, 2, 2, 1)),
            row_pooling_sequence=tf.constant([0, 2, 4], tf.int64),
            col_pooling_sequence=tf.constant([0, 2, 4], tf.int64),
            overlapping=False, name="fap_grad")
    fetches = ["bn_grad_v3:0", "bn_grad_v3:1", "bn_grad_v3:2", "bn_grad:0", "bn_grad:1", "bn_grad:2",
               "fq_grad:0", "fq_grad:1", "fq_grad:2", "dw_grad:0", "fap_grad:0"]
    return g.as_graph_def(), {}, fetches, False


CASES = [tf1_basic, consts, frozen_dense, function_nested, function_frozen, seed_ops]


def run_in_tf(graph_def, feeds: dict, fetches: list[str]) -> list[np.ndarray]:
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run(fetches, {k: v for k, v in feeds.items()})


def _storable(value) -> np.ndarray:
    """npz keeps no bfloat16 and turns bytes into fixed-width strings: store float32 / object arrays."""
    arr = np.asarray(value)
    if arr.dtype == tf.bfloat16.as_numpy_dtype:
        return arr.astype(np.float32)
    if arr.dtype.kind == "S":
        return arr.astype(object)
    return arr


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    manifest = {"tensorflow": tf.__version__, "cases": {}}
    for case in CASES:
        name = case.__name__
        graph_def, feeds, fetches, also_text = case()
        values = run_in_tf(graph_def, feeds, fetches)
        files = [f"{name}.pb"]
        with open(os.path.join(OUT, f"{name}.pb"), "wb") as f:
            f.write(graph_def.SerializeToString(deterministic=True))
        if also_text:
            files.append(f"{name}.pbtxt")
            with open(os.path.join(OUT, f"{name}.pbtxt"), "w") as f:
                f.write(str(graph_def))
        arrays = {f"feed_{i}": _storable(v) for i, v in enumerate(feeds.values())}
        arrays.update({f"fetch_{i}": _storable(v) for i, v in enumerate(values)})
        np.savez(os.path.join(OUT, f"{name}.npz"), **arrays, allow_pickle=True)
        manifest["cases"][name] = {"doc": case.__doc__, "files": files, "feeds": list(feeds), "fetches": fetches,
                                   "fetch_dtypes": [tf.as_dtype(np.asarray(v).dtype).name for v in values],
                                   "ops": sorted({n.op for n in graph_def.node})}
        print(f"{name}: {len(graph_def.node)} nodes, {len(graph_def.library.function)} functions", file=sys.stderr)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
