"""FakeQuantWithMinMaxVarsPerChannel and its gradient at [32,56,56,64], next to TF.

    python benchmarks/bench_fake_quant.py [--repeat N] [--all]

``--all`` adds the scalar-range ops (FakeQuantWithMinMaxVars, its gradient and
FakeQuantWithMinMaxArgsGradient) at the same size.

Both sides run a graph fed from placeholders (ours: ClientSession.Run on the NumPy backend;
TF: a v1 Session with its default kernels, oneDNN as users get it).  Prints the median ms of
several runs after a warm-up, the ratio ours/TF, and the bandwidth floor: the bytes each op
must move (inputs read once, outputs written once) at the machine's ~23 GB/s.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

from tfops_py import DT_FLOAT, ClientSession, Scope, ops

SHAPE = (32, 56, 56, 64)
BANDWIDTH = 23e9  # bytes/s, measured for this machine


def _median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def _data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    d = SHAPE[-1]
    return {"x": (rng.standard_normal(SHAPE) * 2).astype(np.float32),
            "g": rng.standard_normal(SHAPE).astype(np.float32),
            "min": rng.uniform(-3, -0.5, d).astype(np.float32),
            "max": rng.uniform(0.5, 3, d).astype(np.float32)}


def ours(data: dict[str, np.ndarray], repeat: int, all_ops: bool) -> dict[str, float]:
    root = Scope.NewRootScope()
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, ops.Placeholder.Shape(list(SHAPE)))
    g = ops.Placeholder(root.WithOpName("g"), DT_FLOAT, ops.Placeholder.Shape(list(SHAPE)))
    lo, hi = ops.Const(root, data["min"]), ops.Const(root, data["max"])
    grad = ops.FakeQuantWithMinMaxVarsPerChannelGradient(root, g, x, lo, hi)
    graphs = {"per_channel_gradient": [grad.backprops_wrt_input, grad.backprop_wrt_min, grad.backprop_wrt_max],
              "per_channel_forward": [ops.FakeQuantWithMinMaxVarsPerChannel(root, x, lo, hi)]}
    if all_ops:
        vg = ops.FakeQuantWithMinMaxVarsGradient(root, g, x, -1.3, 2.1)
        graphs.update(vars_gradient=[vg.backprops_wrt_input, vg.backprop_wrt_min, vg.backprop_wrt_max],
                      vars_forward=[ops.FakeQuantWithMinMaxVars(root, x, -1.3, 2.1)],
                      args_gradient=[ops.FakeQuantWithMinMaxArgsGradient(root, g, x)])
    sess = ClientSession(root)
    times = {}
    for name, fetches in graphs.items():
        feeds = {x: data["x"], g: data["g"]} if "gradient" in name else {x: data["x"]}
        times[name] = _median_ms(lambda: sess.Run(feeds, fetches), repeat)  # noqa: B023 (called at once)
    return times


def tensorflow(data: dict[str, np.ndarray], repeat: int, all_ops: bool) -> dict[str, float] | None:
    try:
        import tensorflow as tf
    except ImportError:
        return None
    raw = tf.raw_ops
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, SHAPE)
        g = tf.compat.v1.placeholder(tf.float32, SHAPE)
        lo, hi = tf.constant(data["min"]), tf.constant(data["max"])
        graphs = {"per_channel_gradient": list(raw.FakeQuantWithMinMaxVarsPerChannelGradient(
                      gradients=g, inputs=x, min=lo, max=hi)),
                  "per_channel_forward": raw.FakeQuantWithMinMaxVarsPerChannel(inputs=x, min=lo, max=hi)}
        if all_ops:
            a, b = tf.constant(-1.3), tf.constant(2.1)
            graphs.update(vars_gradient=list(raw.FakeQuantWithMinMaxVarsGradient(gradients=g, inputs=x, min=a, max=b)),
                          vars_forward=raw.FakeQuantWithMinMaxVars(inputs=x, min=a, max=b),
                          args_gradient=raw.FakeQuantWithMinMaxArgsGradient(gradients=g, inputs=x))
    sess = tf.compat.v1.Session(graph=graph)
    times = {}
    for name, fetches in graphs.items():
        feeds = {x: data["x"], g: data["g"]} if "gradient" in name else {x: data["x"]}
        times[name] = _median_ms(lambda: sess.run(fetches, feeds), repeat)  # noqa: B023 (called at once)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--all", action="store_true", help="also the scalar-range ops")
    args = parser.parse_args()
    data = _data()
    a = ours(data, args.repeat, args.all)
    b = tensorflow(data, args.repeat, args.all)
    nbytes = data["x"].nbytes
    print(f"inputs {list(SHAPE)} float32, d={SHAPE[-1]}")
    print(f"{'name':<24}{'ours_ms':>9}{'tf_ms':>9}{'ratio':>7}{'floor_ms':>10}{'x_floor':>9}")
    for name, ms in a.items():
        t = b[name] if b else float("nan")
        # bytes that must move: the inputs read once (g and x, or x), the big output written once
        floor = (3 if "gradient" in name else 2) * nbytes / BANDWIDTH * 1e3
        print(f"{name:<24}{ms:>9.2f}{t:>9.2f}{ms / t:>7.3f}{floor:>10.2f}{ms / floor:>9.2f}")


if __name__ == "__main__":
    main()
