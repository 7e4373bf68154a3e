"""Depthwise conv family: our ClientSession.Run next to TF (its default oneDNN kernels), same run.

    python benchmarks/bench_depthwise_conv.py [--repeats 15] [--only SUBSTRING] [--batch 32] [--one-thread]

Input [batch, 56, 56, 64] float32, 3x3 filter, depth multiplier 1, SAME, strides 1 and 2.  The two
sides alternate run by run, so load from other processes hits both alike.  Prints, per op: median
wall times and their ratio (ours / tf, below 1 is faster), best wall times and their ratio, and the
median CPU time of the process (all threads; TF's includes its pool's spinning).

``--one-thread`` also times our kernels on one worker thread, best and median CPU time of the
process: the work they do, whatever the load (the machine this runs on is often shared).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TF as users get it: oneDNN left at its default
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from tfops_py import Scope, ops  # noqa: E402
from tfops_py.kernels._parallel import budget, threads  # noqa: E402
from _harness import kernel_session, time_pair  # noqa: E402

H, W, C, K, M = 56, 56, 64, 3, 1


def cases(n: int, stride: int):
    """(name, ours() -> ndarray, tf() -> ndarray) for the three ops at one stride."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    oh = -(-H // stride)
    x = rng.standard_normal((n, H, W, C), np.float32)
    w = rng.standard_normal((K, K, C, M), np.float32)
    dy = rng.standard_normal((n, oh, oh, C * M), np.float32)
    strides = [1, stride, stride, 1]
    root = Scope.NewRootScope()
    xs, ws, dys = ops.Const(root, x), ops.Const(root, w), ops.Const(root, dy)
    y = ops.DepthwiseConv2dNative(root, xs, ws, strides, "SAME")
    dx = ops.DepthwiseConv2dNativeBackpropInput(root, np.array(x.shape, np.int32), ws, dys, strides, "SAME")
    dw = ops.DepthwiseConv2dNativeBackpropFilter(root, xs, np.array(w.shape, np.int32), dys, strides, "SAME")
    sess = kernel_session(root)
    tx, tw, tdy = tf.constant(x), tf.constant(w), tf.constant(dy)
    raw = tf.raw_ops
    return [
        (f"BackpropInput s{stride}", lambda: sess.Run([dx])[0],
         lambda: raw.DepthwiseConv2dNativeBackpropInput(input_sizes=x.shape, filter=tw, out_backprop=tdy,
                                                        strides=strides, padding="SAME").numpy()),
        (f"BackpropFilter s{stride}", lambda: sess.Run([dw])[0],
         lambda: raw.DepthwiseConv2dNativeBackpropFilter(input=tx, filter_sizes=w.shape, out_backprop=tdy,
                                                         strides=strides, padding="SAME").numpy()),
        (f"Forward s{stride}", lambda: sess.Run([y])[0],
         lambda: raw.DepthwiseConv2dNative(input=tx, filter=tw, strides=strides, padding="SAME").numpy()),
    ]


def one_thread_cpu_ms(fn, repeats: int) -> tuple[float, float]:
    """Best and median CPU time of ``fn`` with our kernels on one worker thread."""
    with budget(1):
        fn()
        cpu = []
        for _ in range(repeats):
            c0 = time.process_time()
            fn()
            cpu.append(time.process_time() - c0)
    return 1e3 * min(cpu), 1e3 * statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--one-thread", action="store_true", help="also time ours on one thread (CPU time)")
    args = parser.parse_args()
    print(f"input [{args.batch}, {H}, {W}, {C}] float32, {K}x{K} filter, multiplier {M}, SAME; "
          f"{threads()} worker threads")
    extra = f" {'1thr_cpu':>9s} {'(median)':>9s}" if args.one_thread else ""
    print(f"{'name':20s} {'ours_ms':>8s} {'tf_ms':>8s} {'ratio':>6s}   {'ours_min':>8s} {'tf_min':>8s} {'ratio':>6s}"
          f"   {'ours_cpu':>8s} {'tf_cpu':>8s}{extra}")
    for stride in (1, 2):
        for name, ours, theirs in cases(args.batch, stride):
            if args.only not in name:
                continue
            a, b = ours(), theirs()
            err = float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))
            assert err < 1e-4, f"{name}: ours and TF differ by {err:.2g}"
            t = time_pair(ours, theirs, args.repeats)
            line = (f"{name:20s} {t.ours_ms:8.2f} {t.tf_ms:8.2f} {t.ratio:6.2f}   {t.ours_min_ms:8.2f} "
                    f"{t.tf_min_ms:8.2f} {t.min_ratio:6.2f}   {t.ours_cpu_ms:8.2f} {t.tf_cpu_ms:8.2f}")
            if args.one_thread:
                best, med = one_thread_cpu_ms(ours, args.repeats)
                line += f" {best:9.2f} {med:9.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
