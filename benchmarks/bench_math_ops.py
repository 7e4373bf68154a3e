"""Math, reduction, nn and conv/pool ops: tfops_py's ClientSession.Run next to TensorFlow.

    python benchmarks/bench_math_ops.py [--reps 20] [--only SUBSTRING]

Each case feeds its tensors to Placeholders (small int inputs such as axes are Consts) and
fetches the result as a NumPy array.  TF runs as users get it: eager ``tf.raw_ops`` on
``tf.constant`` inputs with its default (oneDNN) CPU kernels, result fetched with ``.numpy()``.
The two sides alternate run by run, so load from other processes hits both alike, with a short
pause before each run so the other side's worker threads have gone idle; each prints the median
of ``--reps`` runs after warm-up, then the minimums (closer to an idle machine).
"""
from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable

import numpy as np

from tfops_py import Scope, ops
from tfops_py.framework.dtypes import DataType, as_datatype
from _harness import header, kernel_session, row, time_pair  # noqa: E402

rng = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


def const(value: np.ndarray) -> tuple[str, np.ndarray]:
    return ("const", value)


CONV = {"strides": [1, 1, 1, 1], "padding": "SAME"}
POOL = {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}
# (name, op, inputs, attrs); an input given as const(v) is a Const on both sides
CASES: list[tuple[str, str, list, dict]] = [
    ("AddV2 scalar", "AddV2", [np.float32(1), np.float32(2)], {}),
    ("AddV2 [1000,1000]+[1000]", "AddV2", [f32(1000, 1000), f32(1000)], {}),
    ("Mul [1000,1000]", "Mul", [f32(1000, 1000), f32(1000, 1000)], {}),
    ("RealDiv [1000,1000]", "RealDiv", [f32(1000, 1000), f32(1000, 1000)], {}),
    ("FloorDiv int32 [1000,1000]", "FloorDiv", [rng.integers(-100, 100, (1000, 1000), dtype=np.int32),
                                                 rng.integers(1, 100, (1000, 1000), dtype=np.int32)], {}),
    ("Exp [1M]", "Exp", [f32(1 << 20)], {}),
    ("Sigmoid [1M]", "Sigmoid", [f32(1 << 20)], {}),
    ("Tanh [1M]", "Tanh", [f32(1 << 20)], {}),
    ("Relu [1M]", "Relu", [f32(1 << 20)], {}),
    ("Cast float->int32 [1M]", "Cast", [f32(1 << 20) * 1e3], {"DstT": DataType.DT_INT32}),
    ("Cast float->half [1M]", "Cast", [f32(1 << 20)], {"DstT": DataType.DT_HALF}),
    ("Sum [1000,1000] axis 1", "Sum", [f32(1000, 1000), const(np.array([1], np.int32))], {}),
    ("Mean [1000,1000] axis 0", "Mean", [f32(1000, 1000), const(np.array([0], np.int32))], {}),
    ("Max [1000,1000] all", "Max", [f32(1000, 1000), const(np.array([0, 1], np.int32))], {}),
    ("ArgMax [1000,1000] axis 1", "ArgMax", [f32(1000, 1000), const(np.array(1, np.int32))], {}),
    ("MatMul 512x512", "MatMul", [f32(512, 512), f32(512, 512)], {}),
    ("BatchMatMulV2 [64,64,64]", "BatchMatMulV2", [f32(64, 64, 64), f32(64, 64, 64)], {}),
    ("Softmax [256,1000]", "Softmax", [f32(256, 1000)], {}),
    ("BiasAdd [32,56,56,64]", "BiasAdd", [f32(32, 56, 56, 64), f32(64)], {}),
    ("Conv2D [8,56,56,64] 3x3x64", "Conv2D", [f32(8, 56, 56, 64), f32(3, 3, 64, 64)], CONV),
    ("Conv2D [1,224,224,3] 7x7x64 s2", "Conv2D", [f32(1, 224, 224, 3), f32(7, 7, 3, 64)],
     {"strides": [1, 2, 2, 1], "padding": "SAME"}),
    ("AvgPool [8,56,56,64] 3x3 s2", "AvgPool", [f32(8, 56, 56, 64)], POOL),
    ("MaxPool [8,56,56,64] 3x3 s2", "MaxPool", [f32(8, 56, 56, 64)], POOL),
]


def _case(op: str, inputs: list, attrs: dict) -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf

    root = Scope.NewRootScope()
    feeds, args = {}, []
    for v in inputs:
        if isinstance(v, tuple):
            args.append(ops.Const(root, v[1]))
            continue
        v = np.asarray(v)
        ph = ops.Placeholder(root, as_datatype(v.dtype), ops.Placeholder.Shape(list(v.shape)))
        feeds[ph] = v
        args.append(ph)
    out = getattr(ops, op)(root, *args, **attrs).operation.output(0)
    sess = kernel_session(root)

    raw = getattr(tf.raw_ops, op)
    names = list(inspect.signature(raw).parameters)
    tf_kwargs = {n: tf.constant(v[1] if isinstance(v, tuple) else v) for n, v in zip(names, inputs)}
    tf_kwargs.update({k: (tf.as_dtype(v.numpy_dtype) if isinstance(v, DataType) else v) for k, v in attrs.items()})

    def ours() -> object:
        return sess.Run(feeds, [out])

    def theirs() -> object:
        return raw(**tf_kwargs).numpy()

    return ours, theirs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", default="")
    parser.add_argument("--pause", type=float, default=0.002,
                        help="seconds idle before each timed run, so neither side's worker threads (TF's spin "
                             "while waiting for work) steal the cores from the other")
    args = parser.parse_args()
    print(header(34))
    for name, op, inputs, attrs in CASES:
        if args.only not in name:
            continue
        ours, theirs = _case(op, inputs, attrs)
        print(row(name, time_pair(ours, theirs, args.reps, pause=args.pause), 34), flush=True)


if __name__ == "__main__":
    main()
