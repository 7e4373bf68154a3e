"""Linear algebra, Einsum and FFT: tfops_py's ClientSession.Run next to TensorFlow in the same process.

    python benchmarks/bench_linalg.py [--reps 20] [--only SUBSTRING]

Attention Einsums (batch 8, heads 8, seq 128, dim 64), Keras's "abcd,aecd->acbe", Svd and Cholesky of 64
batched 64x64 float32 matrices, MatrixSolve of the same with 64x8 right-hand sides, and RFFT of 1000 audio
frames of 512 float32 samples.  TF runs as users get it: eager ``tf.raw_ops`` with its default (oneDNN) CPU
kernels.  The sides alternate run by run; each prints the median and the best of ``--reps`` runs, then the
median process CPU time (comparable when other processes load the cores).
"""
from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import numpy as np

from tfops_py import DT_FLOAT, Scope, ops
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import Output
from _harness import cpu_header, cpu_row, kernel_session, time_pair  # noqa: E402

_rng = np.random.default_rng(0)


def _f32(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape, dtype=np.float32)


def _spd(batch: int, n: int) -> np.ndarray:
    x = _f32(batch, n, n)
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n, dtype=np.float32)


def _placeholders(root: Scope, arrays: dict[str, np.ndarray]) -> dict[str, Output]:
    return {name: ops.Placeholder(root.WithOpName(name), DT_FLOAT, ops.Placeholder.Shape(list(a.shape))).output
            for name, a in arrays.items()}


def _node(root: Scope, op_type: str, inputs: list[Output], **attrs: Any) -> list[Output]:
    """Every output of a node of ``op_type`` (RFFT has no class in TF's C++ API)."""
    node = add_node(root, get_op_def(op_type), inputs, attrs)
    root.status().raise_if_error()
    return [Output(node, i) for i in range(node.num_outputs())]


def _case(build: Callable[[Scope, dict[str, Output]], list[Output]], tf_fn: Callable[..., Any],
          **arrays: np.ndarray) -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf

    root = Scope.NewRootScope()
    ph = _placeholders(root, arrays)
    fetches = build(root, ph)
    sess = kernel_session(root)
    feeds = {ph[k]: v for k, v in arrays.items()}
    tf_inputs = {k: tf.constant(v) for k, v in arrays.items()}

    def ours() -> object:
        return sess.Run(feeds, fetches)

    def theirs() -> object:
        out = tf_fn(**tf_inputs)
        return [t.numpy() for t in (out if isinstance(out, (list, tuple)) else [out])]

    return ours, theirs


def _einsum(equation: str, x_shape: tuple[int, ...], y_shape: tuple[int, ...]):
    import tensorflow as tf

    return _case(lambda s, p: [ops.Einsum(s, [p["x"], p["y"]], equation).output],
                 lambda x, y: tf.raw_ops.Einsum(inputs=[x, y], equation=equation), x=_f32(*x_shape), y=_f32(*y_shape))


def _svd_outputs(svd: Any) -> list[Output]:
    return [svd.s, svd.u, svd.v]


def _cases() -> dict[str, Callable[[], tuple[Callable[[], object], Callable[[], object]]]]:
    import tensorflow as tf

    q = (8, 8, 128, 64)  # batch, heads, seq, dim
    keras_q, keras_k = (8, 128, 8, 64), (8, 128, 8, 64)  # Keras's [batch, seq, heads, dim]
    fft_length = np.asarray([512], np.int32)
    return {
        "Einsum bhqd,bhkd->bhqk": lambda: _einsum("bhqd,bhkd->bhqk", q, q),
        "Einsum bhqk,bhkd->bhqd": lambda: _einsum("bhqk,bhkd->bhqd", (8, 8, 128, 128), q),
        "Einsum abcd,aecd->acbe": lambda: _einsum("abcd,aecd->acbe", keras_q, keras_k),
        "Svd 64x64x64": lambda: _case(lambda s, p: _svd_outputs(ops.Svd(s, p["a"])),
                                      lambda a: tf.raw_ops.Svd(input=a), a=_f32(64, 64, 64)),
        "Svd 64x64x64 compute_uv=false": lambda: _case(
            lambda s, p: [ops.Svd(s, p["a"], compute_uv=False).s],
            lambda a: tf.raw_ops.Svd(input=a, compute_uv=False)[0], a=_f32(64, 64, 64)),
        "Cholesky 64x64x64": lambda: _case(lambda s, p: [ops.Cholesky(s, p["a"]).output],
                                           lambda a: tf.raw_ops.Cholesky(input=a), a=_spd(64, 64)),
        "MatrixSolve 64x64x64 rhs 8": lambda: _case(
            lambda s, p: [ops.MatrixSolve(s, p["a"], p["b"]).output],
            lambda a, b: tf.raw_ops.MatrixSolve(matrix=a, rhs=b), a=_spd(64, 64), b=_f32(64, 64, 8)),
        "RFFT 1000x512": lambda: _case(lambda s, p: _node(s, "RFFT", [p["x"], ops.Const(s, fft_length)]),
                                       lambda x: tf.raw_ops.RFFT(input=x, fft_length=fft_length), x=_f32(1000, 512)),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    width = 32
    print(cpu_header(width))
    for name, make in _cases().items():
        if args.only not in name:
            continue
        ours, theirs = make()
        t = time_pair(ours, theirs, args.reps)
        print(cpu_row(name, t, width), flush=True)


if __name__ == "__main__":
    main()
