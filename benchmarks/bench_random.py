"""Random ops: tfops_py's ClientSession.Run next to TensorFlow in the same process.

    python benchmarks/bench_random.py [--reps 15] [--only SUBSTRING]

RandomStandardNormal of 10^7 float32, StatelessRandomUniformV2 of 10^7 float32, TruncatedNormal of 10^6
float32, Multinomial of 1000x1000 float32 logits -> 100 samples each.  Both sides produce the same bits
(seeded ops continue their stream run after run on both sides).  TF runs as users get it: eager
``tf.raw_ops`` with its default CPU kernels.  The two sides alternate run by run; each prints the median
of ``--reps`` runs after warm-up: wall time, then CPU time of the process (all threads), which stays
comparable when other processes hold the cores.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from _harness import cpu_header, cpu_row, kernel_session, time_pair  # noqa: E402
from tfops_py import DT_FLOAT, DT_INT64, Scope, ops
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output

Case = tuple[Callable[[], object], Callable[[], object]]


def _cases() -> dict[str, Case]:
    import tensorflow as tf

    root = Scope.NewRootScope()
    normal = ops.RandomNormal(root, [10**7], DT_FLOAT, seed=1, seed2=2)
    truncated = ops.TruncatedNormal(root, [10**6], DT_FLOAT, seed=1, seed2=2)
    key = ops.Const(root, np.array([7], np.uint64))
    counter = ops.Const(root, np.array([1, 2], np.uint64))
    # no C++ class for the V2 stateless ops: built from the op definition, as an imported GraphDef would be
    uniform_node = add_node(root, get_op_def("StatelessRandomUniformV2"),
                            [ops.Const(root, np.array([10**7], np.int32)), key, counter, ops.Const(root, np.int32(1))],
                            {"dtype": DT_FLOAT})
    assert uniform_node is not None
    uniform = Output(uniform_node, 0)
    logits = np.random.default_rng(0).standard_normal((1000, 1000), dtype=np.float32)
    multinomial = ops.Multinomial(root, ops.Const(root, logits), 100, seed=1, seed2=2, output_dtype=DT_INT64)
    sess = kernel_session(root)
    logits_t = tf.constant(logits)
    key_t, counter_t = tf.constant(np.array([7], np.uint64)), tf.constant(np.array([1, 2], np.uint64))

    def tf_normal() -> object:
        return tf.raw_ops.RandomStandardNormal(shape=[10**7], dtype=tf.float32, seed=1, seed2=2).numpy()

    def tf_uniform() -> object:
        return tf.raw_ops.StatelessRandomUniformV2(shape=[10**7], key=key_t, counter=counter_t, alg=1).numpy()

    def tf_truncated() -> object:
        return tf.raw_ops.TruncatedNormal(shape=[10**6], dtype=tf.float32, seed=1, seed2=2).numpy()

    def tf_multinomial() -> object:
        return tf.raw_ops.Multinomial(logits=logits_t, num_samples=100, seed=1, seed2=2,
                                      output_dtype=tf.int64).numpy()

    return {"RandomStandardNormal 1e7 float32": (lambda: sess.Run([normal]), tf_normal),
            "StatelessRandomUniformV2 1e7 float32": (lambda: sess.Run([uniform]), tf_uniform),
            "TruncatedNormal 1e6 float32": (lambda: sess.Run([truncated]), tf_truncated),
            "Multinomial 1000x1000 -> 100": (lambda: sess.Run([multinomial]), tf_multinomial)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    print(cpu_header(40))
    for name, (ours, theirs) in _cases().items():
        if args.only not in name:
            continue
        t = time_pair(ours, theirs, args.reps, warmup=2)
        print(cpu_row(name, t, 40), flush=True)


if __name__ == "__main__":
    main()
