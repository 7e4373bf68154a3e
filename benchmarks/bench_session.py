"""Session overhead: Run of a 1-node graph and of a 1,000-node chain of scalar ops, next to TF.

    python benchmarks/bench_session.py

TF runs the same graph in a v1 Session in this process (its default kernels).
Prints microseconds per Run, the per-node cost, and our/TF ratios.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from tfops_py import DT_FLOAT, ClientSession, Scope, ops

CHAIN = 1000


def _time(fn, repeat: int = 7, number: int = 200) -> tuple[float, float]:
    """Median seconds per call: (wall, process CPU time; the latter holds up when other work loads
    the machine)."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        wall.append((time.perf_counter() - t0) / number)
        cpu.append((time.process_time() - c0) / number)
    return statistics.median(wall), statistics.median(cpu)


def ours() -> dict[str, tuple[float, float]]:
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, DT_FLOAT)
    one = ops.Identity(root, x)
    node = x
    for _ in range(CHAIN):
        node = ops.AddV2(root, node, 1.0)
    sess = ClientSession(root)
    feed = np.float32(1.0)
    assert sess.Run({x: feed}, [node])[0] == CHAIN + 1
    return {
        "1 node": _time(lambda: sess.Run({x: feed}, [one])),
        f"{CHAIN}-node chain": _time(lambda: sess.Run({x: feed}, [node]), number=20),
    }


def tensorflow() -> dict[str, tuple[float, float]] | None:
    try:
        import tensorflow as tf
    except ImportError:
        return None
    g = tf.Graph()
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [])
        one = tf.identity(x)
        node = x
        for _ in range(CHAIN):
            node = tf.raw_ops.AddV2(x=node, y=tf.constant(1.0))
    sess = tf.compat.v1.Session(graph=g)
    feed = np.float32(1.0)
    assert sess.run(node, {x: feed}) == CHAIN + 1
    return {
        "1 node": _time(lambda: sess.run(one, {x: feed})),
        f"{CHAIN}-node chain": _time(lambda: sess.run(node, {x: feed}), number=20),
    }


def main() -> None:
    a = ours()
    b = tensorflow()
    nan = (float("nan"), float("nan"))
    print(f"{'graph':<18}{'ours_us':>10}{'tf_us':>10}{'ratio':>8}{'ours_cpu':>10}{'tf_cpu':>10}{'ratio':>8}")
    for k, (v, vc) in a.items():
        t, tc = b[k] if b else nan
        print(f"{k:<18}{v * 1e6:>10.1f}{t * 1e6:>10.1f}{v / t:>8.2f}{vc * 1e6:>10.1f}{tc * 1e6:>10.1f}{vc / tc:>8.2f}")
    for i, what in ((0, "wall"), (1, "CPU")):
        per_node = (a[f"{CHAIN}-node chain"][i] - a["1 node"][i]) / (CHAIN - 1)
        print(f"{what}: fixed cost ~{a['1 node'][i] * 1e6:.1f} us/Run, ~{per_node * 1e6:.2f} us per extra node")


if __name__ == "__main__":
    main()
