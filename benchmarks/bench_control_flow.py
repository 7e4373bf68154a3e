"""Control flow: a 100-step Keras LSTM and a 10,000-iteration scalar while loop, next to TF in the same process.

    python benchmarks/bench_control_flow.py [--reps 10] [--only SUBSTRING]

LSTM (batch 32, 128 units, 100 steps, 128 features), frozen by TF as users export it: with its control flow
functional (While + function library) and lowered to TF1 dataflow (``lower_control_flow=True``); both run here
from the GraphDef and in TF as the concrete function (TF's default build: oneDNN on).  The scalar loop
``while i < 10000: i += 1; x = x * 0.999 + 1`` is built with ops.BuildWhileLoop (TF1 dataflow: TF runs the
exported GraphDef in a Session) and as a functional While (TF runs it as a tf.function).  The two sides
alternate run by run; the table gives median and best wall time and median process CPU time, and the
per-iteration cost for the scalar loops.
"""
from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import numpy as np

from _harness import cpu_header, cpu_row, time_pair  # noqa: E402
from tfops_py import DT_FLOAT, DT_INT32, ClientSession, Function, Scope, ops
from tfops_py.graphdef import graph_def_to_bytes, import_graph_def

STEPS, BATCH, UNITS, FEATURES = 100, 32, 128, 128
ITERATIONS = 10_000


def _lstm(lower: bool) -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    tf.keras.utils.set_random_seed(0)
    inp = tf.keras.Input((STEPS, FEATURES), batch_size=BATCH)
    model = tf.keras.Model(inp, tf.keras.layers.LSTM(UNITS)(inp))
    concrete = tf.function(lambda x: model(x)).get_concrete_function(tf.TensorSpec([BATCH, STEPS, FEATURES]))
    frozen = convert_variables_to_constants_v2(concrete, lower_control_flow=lower)
    x = np.random.default_rng(0).standard_normal((BATCH, STEPS, FEATURES), dtype=np.float32)
    root = Scope.NewRootScope()
    imported = import_graph_def(root, frozen.graph.as_graph_def())
    feed, fetch = imported[frozen.graph.inputs[0].name], imported[frozen.graph.outputs[0].name]
    session = ClientSession(root)
    ours = session.Run({feed: x}, [fetch])[0]
    tx = tf.constant(x)
    theirs = frozen(tx)[0].numpy()
    assert np.allclose(ours, theirs, atol=1e-4), "LSTM outputs differ from TF's"
    return (lambda: session.Run({feed: x}, [fetch])), (lambda: frozen(tx))


def _scalar_loop_dataflow() -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf

    root = Scope.NewRootScope()
    n = ops.Placeholder(root.WithOpName("n"), DT_INT32)
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT)
    outs = ops.BuildWhileLoop(root, [ops.Const(root, 0), x, n], lambda s, v: ops.Less(s, v[0], v[2]),
                              lambda s, v: [ops.Add(s, v[0], 1), ops.AddV2(s, ops.Mul(s, v[1], 0.999), 1.0),
                                            ops.Identity(s, v[2])], "loop")
    session = ClientSession(root)
    feeds = {n: np.int32(ITERATIONS), x: np.float32(0.0)}
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.import_graph_def(tf.compat.v1.GraphDef.FromString(graph_def_to_bytes(root)), name="")
    sess = tf.compat.v1.Session(graph=g)
    names = [o.name() for o in outs[:2]]
    tf_feeds = {"n:0": ITERATIONS, "x:0": 0.0}
    assert np.allclose(session.Run(feeds, outs[:2])[1], sess.run(names, tf_feeds)[1], rtol=1e-4)
    return (lambda: session.Run(feeds, outs[:2])), (lambda: sess.run(names, tf_feeds))


def _scalar_loop_functional() -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf

    root = Scope.NewRootScope()
    cond = Function.from_callable(root, "cond", [DT_INT32, DT_FLOAT, DT_INT32], lambda s, i, v, k: ops.Less(s, i, k))
    body = Function.from_callable(root, "body", [DT_INT32, DT_FLOAT, DT_INT32],
                                  lambda s, i, v, k: [ops.Add(s, i, 1), ops.AddV2(s, ops.Mul(s, v, 0.999), 1.0),
                                                      ops.Identity(s, k)])
    n = ops.Placeholder(root, DT_INT32)
    x = ops.Placeholder(root, DT_FLOAT)
    loop = ops.While(root, [ops.Const(root, 0), x, n], cond, body)
    session = ClientSession(root)
    feeds = {n: np.int32(ITERATIONS), x: np.float32(0.0)}

    @tf.function
    def tf_loop(v, k):
        return tf.while_loop(lambda i, v, k: i < k, lambda i, v, k: (i + 1, v * 0.999 + 1.0, k), [0, v, k])[:2]

    args = (tf.constant(0.0), tf.constant(ITERATIONS))
    assert np.allclose(session.Run(feeds, list(loop.output[:2]))[1], tf_loop(*args)[1].numpy(), rtol=1e-4)
    return (lambda: session.Run(feeds, list(loop.output[:2]))), (lambda: tf_loop(*args))


CASES = {
    "LSTM 100x32x128 functional": lambda: _lstm(False),
    "LSTM 100x32x128 TF1-lowered": lambda: _lstm(True),
    "scalar while 10k, TF1 dataflow": _scalar_loop_dataflow,
    "scalar while 10k, functional": _scalar_loop_functional,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    width = 32
    print(cpu_header(width))
    for name, make in CASES.items():
        if args.only not in name:
            continue
        ours, theirs = make()
        t = time_pair(ours, theirs, args.reps, warmup=2)
        print(cpu_row(name, t, width))
        if "scalar" in name:
            print(f"{'':{width}s} per iteration: ours {t.ours_ms / ITERATIONS * 1e3:.2f} us, "
                  f"TF {t.tf_ms / ITERATIONS * 1e3:.2f} us")


if __name__ == "__main__":
    main()
