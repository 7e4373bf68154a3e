"""Fractional pooling: tfops_py's ClientSession.Run next to TensorFlow in the same process.

    python benchmarks/bench_fractional_pool.py [--reps 30] [--only SUBSTRING]

Input [32,56,56,64] float32, pooling_ratio [1,1.44,1.44,1], overlapping, deterministic seeds
(output [32,38,38,64]); the max-pool rows are for information.  TF runs as users get it: eager ``tf.raw_ops`` with its
default CPU
kernels.  The two sides alternate run by run, so load from other processes hits both alike; each
prints the median of ``--reps`` runs after warm-up: wall time, then CPU time of the process (all
threads), which stays comparable when other processes hold the cores.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from tfops_py import DT_FLOAT, DT_INT64, ClientSession, Scope, ops
from _harness import cpu_header, cpu_row, time_pair  # noqa: E402

SHAPE = (32, 56, 56, 64)
ATTRS = dict(pooling_ratio=[1.0, 1.44, 1.44, 1.0], overlapping=True, deterministic=True, seed=7, seed2=11)


def _cases(pseudo_random: bool) -> dict[str, tuple[Callable[[], object], Callable[[], object]]]:
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE, dtype=np.float32)
    attrs = dict(ATTRS, pseudo_random=pseudo_random)
    _, row, col = (t.numpy() for t in tf.raw_ops.FractionalAvgPool(value=x, **attrs))
    dy = rng.standard_normal((SHAPE[0], len(row) - 1, len(col) - 1, SHAPE[3]), dtype=np.float32)

    root = Scope.NewRootScope()
    x_ph = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, ops.Placeholder.Shape(list(SHAPE)))
    dy_ph = ops.Placeholder(root.WithOpName("dy"), DT_FLOAT, ops.Placeholder.Shape(list(dy.shape)))
    row_ph = ops.Placeholder(root.WithOpName("row"), DT_INT64, ops.Placeholder.Shape([len(row)]))
    col_ph = ops.Placeholder(root.WithOpName("col"), DT_INT64, ops.Placeholder.Shape([len(col)]))
    shape_ph = ops.Placeholder(root.WithOpName("shape"), DT_INT64, ops.Placeholder.Shape([4]))
    pool = ops.FractionalAvgPool(root, x_ph, **attrs)
    grad = ops.FractionalAvgPoolGrad(root, shape_ph, dy_ph, row_ph, col_ph, overlapping=True)
    max_pool = ops.FractionalMaxPool(root, x_ph, **attrs)
    y = tf.raw_ops.FractionalMaxPool(value=x, **attrs)[0].numpy()
    y_ph = ops.Placeholder(root.WithOpName("y"), DT_FLOAT, ops.Placeholder.Shape(list(y.shape)))
    max_grad = ops.FractionalMaxPoolGrad(root, x_ph, y_ph, dy_ph, row_ph, col_ph, overlapping=True)
    sess = ClientSession(root)
    shape = np.array(SHAPE, np.int64)
    x_t, y_t, dy_t, row_t, col_t, shape_t = (tf.constant(v) for v in (x, y, dy, row, col, shape))

    def ours_grad() -> object:
        return sess.Run({shape_ph: shape, dy_ph: dy, row_ph: row, col_ph: col}, [grad.output])

    def tf_grad() -> object:
        return tf.raw_ops.FractionalAvgPoolGrad(orig_input_tensor_shape=shape_t, out_backprop=dy_t,
                                                row_pooling_sequence=row_t, col_pooling_sequence=col_t,
                                                overlapping=True).numpy()

    def ours_pool() -> object:
        return sess.Run({x_ph: x}, [pool.output, pool.row_pooling_sequence, pool.col_pooling_sequence])

    def tf_pool() -> object:
        return [t.numpy() for t in tf.raw_ops.FractionalAvgPool(value=x_t, **attrs)]

    def ours_max() -> object:
        return sess.Run({x_ph: x}, [max_pool.output])

    def tf_max() -> object:
        return tf.raw_ops.FractionalMaxPool(value=x_t, **attrs)[0].numpy()

    def ours_max_grad() -> object:
        return sess.Run({x_ph: x, y_ph: y, dy_ph: dy, row_ph: row, col_ph: col}, [max_grad.output])

    def tf_max_grad() -> object:
        return tf.raw_ops.FractionalMaxPoolGrad(orig_input=x_t, orig_output=y_t, out_backprop=dy_t,
                                                row_pooling_sequence=row_t, col_pooling_sequence=col_t,
                                                overlapping=True).numpy()

    mode = "pseudo_random" if pseudo_random else "random"
    return {f"FractionalAvgPoolGrad {mode}": (ours_grad, tf_grad),
            f"FractionalAvgPool {mode}": (ours_pool, tf_pool),
            f"FractionalMaxPool {mode}": (ours_max, tf_max),
            f"FractionalMaxPoolGrad {mode}": (ours_max_grad, tf_max_grad)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    print(cpu_header(40))
    for pseudo_random in (False, True):
        for name, (ours, theirs) in _cases(pseudo_random).items():
            if args.only not in name:
                continue
            t = time_pair(ours, theirs, args.reps, warmup=5)
            print(cpu_row(name, t, 40), flush=True)


if __name__ == "__main__":
    main()
