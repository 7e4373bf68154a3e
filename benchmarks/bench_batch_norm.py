"""Batch norm: tfops_py's ClientSession.Run next to TensorFlow in the same process.

    python benchmarks/bench_batch_norm.py [--reps 30] [--only SUBSTRING]

x = [32,56,56,64] float32 (NHWC; its NCHW twin for NCHW).  TF runs as users get it: eager
``tf.raw_ops`` with its default (oneDNN) CPU kernels.  The two sides alternate run by run, so
load from other processes hits both alike; each prints the median of ``--reps`` runs after warm-up,
then the minimums (closer to an idle machine when other processes compete for the cores).
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from tfops_py import DT_FLOAT, Scope, ops
from _harness import header, kernel_session, row, time_pair  # noqa: E402

SHAPE_NHWC = (32, 56, 56, 64)
SHAPE_NCHW = (32, 64, 56, 56)


def _case(op: str, fmt: str, is_training: bool) -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf

    rng = np.random.default_rng(0)
    shape = SHAPE_NHWC if fmt == "NHWC" else SHAPE_NCHW
    c = 64
    x = rng.standard_normal(shape, dtype=np.float32)
    dy = rng.standard_normal(shape, dtype=np.float32)
    scale = (rng.random(c, dtype=np.float32) + 0.5)
    offset = rng.standard_normal(c, dtype=np.float32)
    mean = rng.standard_normal(c, dtype=np.float32) * 0.1
    var = rng.random(c, dtype=np.float32) + 0.5

    root = Scope.NewRootScope()
    ph = {name: ops.Placeholder(root.WithOpName(name), DT_FLOAT, ops.Placeholder.Shape(list(arr.shape)))
          for name, arr in (("x", x), ("dy", dy), ("scale", scale), ("offset", offset), ("mean", mean),
                            ("var", var))}
    attrs = dict(data_format=fmt, is_training=is_training, epsilon=1e-3)
    if op.startswith("FusedBatchNormGrad"):
        extra = [ph["var"]] if op.endswith("V3") else []
        node = getattr(ops, op)(root, ph["dy"], ph["x"], ph["scale"], ph["mean"], ph["var"], *extra, **attrs)
        tf_in = dict(y_backprop=dy, x=x, scale=scale, reserve_space_1=mean, reserve_space_2=var)
        if op.endswith("V3"):
            tf_in["reserve_space_3"] = var
        feeds_of = ("dy", "x", "scale", "mean", "var")
    else:
        node = getattr(ops, op)(root, ph["x"], ph["scale"], ph["offset"], ph["mean"], ph["var"], **attrs)
        tf_in = dict(x=x, scale=scale, offset=offset, mean=mean, variance=var)
        feeds_of = ("x", "scale", "offset", "mean", "var")
    fetches = [node.operation.output(i) for i in range(3)]
    sess = kernel_session(root)
    arrays = {"x": x, "dy": dy, "scale": scale, "offset": offset, "mean": mean, "var": var}
    feeds = {ph[k]: arrays[k] for k in feeds_of}

    tf_tensors = {k: tf.constant(v) for k, v in tf_in.items()}
    raw = getattr(tf.raw_ops, op)

    def ours() -> object:
        return sess.Run(feeds, fetches)

    def theirs() -> object:
        return [t.numpy() for t in raw(**tf_tensors, **attrs)[:3]]

    return ours, theirs


CASES = [
    ("FusedBatchNormGrad", "NHWC", True), ("FusedBatchNormGrad", "NCHW", True),
    ("FusedBatchNormGradV3", "NHWC", True), ("FusedBatchNormGradV3", "NCHW", True),
    ("FusedBatchNormGradV3", "NHWC", False), ("FusedBatchNormGradV3", "NCHW", False),
    ("FusedBatchNormV3", "NHWC", True), ("FusedBatchNormV3", "NCHW", True),
    ("FusedBatchNormV3", "NHWC", False), ("FusedBatchNormV3", "NCHW", False),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    print(header(44))
    for op, fmt, is_training in CASES:
        name = f"{op} {fmt} {'training' if is_training else 'inference'}"
        if args.only not in name:
            continue
        ours, theirs = _case(op, fmt, is_training)
        print(row(name, time_pair(ours, theirs, args.reps, warmup=5), 44), flush=True)


if __name__ == "__main__":
    main()
