"""Array ops: tfops_py's ClientSession.Run next to TensorFlow in the same process.

    python benchmarks/bench_array_ops.py [--reps 30] [--only SUBSTRING]

Inputs are fed through Placeholders (so nothing is cached between runs); TF runs as users get it:
eager ``tf.raw_ops`` with its default (oneDNN) CPU kernels, outputs fetched with ``.numpy()``.
The two sides alternate run by run; each prints the median of ``--reps`` runs after warm-up.
Rows marked ``(view)`` return a NumPy view of the input on our side (no copy is made), as
TF's Reshape does; TF's Transpose and StridedSlice copy.
"""
from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np

from tfops_py import Scope, ops
from tfops_py.framework.dtypes import as_datatype
from _harness import header, kernel_session, row, time_pair  # noqa: E402

Case = tuple[str, Callable[..., object], str, list[np.ndarray], dict]


def _cases() -> list[Case]:
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s, dtype=np.float32)  # noqa: E731
    i32 = lambda v: np.asarray(v, np.int32)  # noqa: E731
    big = f32(128, 256, 64)
    return [
        ("Shape [128,256,64] (per-op overhead)", ops.Shape, "Shape", [big], {}),
        ("Reshape [128,256,64]->[-1,64] (view)", ops.Reshape, "Reshape", [big, i32([-1, 64])], {}),
        ("Transpose [128,256,64] perm 2,0,1 (view)", ops.Transpose, "Transpose", [big, i32([2, 0, 1])], {}),
        ("StridedSlice [128,256,64] [:, ::2, 1:-1] (view)", ops.StridedSlice, "StridedSlice",
         [big, i32([0, 0, 1]), i32([0, 0, -1]), i32([1, 2, 1])], {"begin_mask": 3, "end_mask": 3}),
        ("Slice [128,256,64] [8:120, :, 4:60] (view)", ops.Slice, "Slice",
         [big, i32([8, 0, 4]), i32([112, -1, 56])], {}),
        ("ConcatV2 4x[512,512] axis 1", ops.Concat, "ConcatV2", [[f32(512, 512) for _ in range(4)], i32(1)], {}),
        ("Pack 8x[256,256] axis 1", ops.Stack, "Pack", [[f32(256, 256) for _ in range(8)]], {"axis": 1}),
        ("Tile [256,256] x [4,2]", ops.Tile, "Tile", [f32(256, 256), i32([4, 2])], {}),
        ("Pad [128,128,32] by 2 on H,W", ops.Pad, "Pad", [f32(128, 128, 32), i32([[2, 2], [2, 2], [0, 0]])], {}),
        ("GatherV2 [10000,128] 4096 rows", ops.GatherV2, "GatherV2",
         [f32(10000, 128), rng.integers(0, 10000, 4096).astype(np.int32), i32(0)], {}),
        ("GatherV2 [64,1000,32] batch_dims=1 axis 1", ops.GatherV2, "GatherV2",
         [f32(64, 1000, 32), rng.integers(0, 1000, (64, 100)).astype(np.int32), i32(1)], {"batch_dims": 1}),
        ("OneHot 65536 indices depth 100", ops.OneHot, "OneHot",
         [rng.integers(0, 100, 65536).astype(np.int32), i32(100), np.float32(1), np.float32(0)], {}),
        ("Range float32 1e6", ops.Range, "Range", [np.float32(0), np.float32(1e6), np.float32(1)], {}),
        ("Fill [1024,1024]", ops.Fill, "Fill", [i32([1024, 1024]), np.float32(3)], {}),
        ("SelectV2 [1024,1024] cond [1024,1]", ops.SelectV2, "SelectV2",
         [rng.random((1024, 1)) < 0.5, f32(1024, 1024), f32(1024, 1024)], {}),
        ("Where 1e7 bools (half true)", ops.Where, "Where", [rng.random(10**7) < 0.5], {}),
        ("TensorScatterUpdate 1e5 rows into [1e6,16]", ops.TensorScatterUpdate, "TensorScatterUpdate",
         [f32(10**6, 16), rng.permutation(10**6)[:10**5].reshape(-1, 1).astype(np.int32), f32(10**5, 16)], {}),
        ("SpaceToBatchND [8,64,64,32] block 2x2 pad 2", ops.SpaceToBatchND, "SpaceToBatchND",
         [f32(8, 64, 64, 32), i32([2, 2]), i32([[2, 2], [2, 2]])], {}),
        ("BatchToSpaceND [32,34,34,32] block 2x2 crop 2", ops.BatchToSpaceND, "BatchToSpaceND",
         [f32(32, 34, 34, 32), i32([2, 2]), i32([[2, 2], [2, 2]])], {}),
        ("ReverseSequence [64,256,128] seq 1 batch 0", ops.ReverseSequence, "ReverseSequence",
         [f32(64, 256, 128), rng.integers(0, 257, 64).astype(np.int64)], {"seq_dim": 1, "batch_dim": 0}),
        ("Roll [1024,1024] by (3, -100)", ops.Roll, "Roll", [f32(1024, 1024), i32([3, -100]), i32([0, 1])], {}),
        ("DynamicPartition 1e6 floats into 4", ops.DynamicPartition, "DynamicPartition",
         [f32(10**6), rng.integers(0, 4, 10**6).astype(np.int32)], {"num_partitions": 4}),
        ("UnravelIndex 1e6 into [1000,1000]", ops.UnravelIndex, "UnravelIndex",
         [rng.integers(0, 10**6, 10**6).astype(np.int32), i32([1000, 1000])], {}),
    ]


_TF_KEYS = {"Shape": ("input",), "Reshape": ("tensor", "shape"), "Transpose": ("x", "perm"),
            "StridedSlice": ("input", "begin", "end", "strides"), "Slice": ("input", "begin", "size"),
            "ConcatV2": ("values", "axis"), "Pack": ("values",), "Tile": ("input", "multiples"),
            "Pad": ("input", "paddings"), "GatherV2": ("params", "indices", "axis"),
            "OneHot": ("indices", "depth", "on_value", "off_value"), "Range": ("start", "limit", "delta"),
            "Fill": ("dims", "value"), "SelectV2": ("condition", "t", "e"), "Where": ("condition",),
            "TensorScatterUpdate": ("tensor", "indices", "updates"),
            "SpaceToBatchND": ("input", "block_shape", "paddings"), "BatchToSpaceND": ("input", "block_shape", "crops"),
            "ReverseSequence": ("input", "seq_lengths"), "Roll": ("input", "shift", "axis"),
            "DynamicPartition": ("data", "partitions"), "UnravelIndex": ("indices", "dims")}


def _pair(op_class, tf_name: str, inputs: list, attrs: dict) -> tuple[Callable[[], object], Callable[[], object]]:
    import tensorflow as tf

    root = Scope.NewRootScope()
    feeds = {}

    def placeholder(v: np.ndarray):
        ph = ops.Placeholder(root, as_datatype(np.asarray(v).dtype), shape=list(np.shape(v)))
        feeds[ph.output] = np.asarray(v)
        return ph

    args = [[placeholder(v) for v in x] if isinstance(x, list) else placeholder(x) for x in inputs]
    node = op_class(root, *args, **attrs)
    fetches = [node.operation.output(i) for i in range(node.operation.num_outputs())]
    sess = kernel_session(root)
    tf_args = {k: [tf.constant(v) for v in x] if isinstance(x, list) else tf.constant(x)
               for k, x in zip(_TF_KEYS[tf_name], inputs)}
    raw = getattr(tf.raw_ops, tf_name)

    def ours() -> object:
        return sess.Run(feeds, fetches)

    def theirs() -> object:
        out = raw(**tf_args, **attrs)
        return [t.numpy() for t in out] if isinstance(out, list) else out.numpy()

    return ours, theirs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    print(header(50))
    for name, op_class, tf_name, inputs, attrs in _cases():
        if args.only not in name:
            continue
        ours, theirs = _pair(op_class, tf_name, inputs, attrs)
        print(row(name, time_pair(ours, theirs, args.reps, warmup=5), 50), flush=True)


if __name__ == "__main__":
    main()
