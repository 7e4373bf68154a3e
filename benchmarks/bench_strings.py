"""String ops on 100,000 sentences: tfops_py's ClientSession.Run next to TensorFlow in the same process.

    python benchmarks/bench_strings.py [--reps 10] [--only SUBSTRING] [--sentences 100000]

Ours feeds the sentences (an object array of bytes) through a Placeholder; TF runs eager ``tf.raw_ops`` on a
string tensor made once, outputs fetched with ``.numpy()``.  The two sides alternate run by run; each row is
the median of ``--reps`` runs after warm-up, then CPU time (both are single-threaded host kernels).
"""
from __future__ import annotations

import argparse

import numpy as np

from tfops_py import DT_STRING, Scope, ops
from _harness import header, kernel_session, row, time_pair  # noqa: E402

VOCAB = [w.encode() for w in ("the quick brown fox jumps over lazy dog Hello, world! TensorFlow's graphs run "
                              "here too: 42 apples; 3.5 pears? caf\u00e9 \u00dcber na\u00efve").split()]


def sentences(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    words = np.array(VOCAB, dtype=object)[rng.integers(0, len(VOCAB), (n, 12))]
    out = np.empty(n, dtype=object)
    out[:] = [b" ".join(row) for row in words.tolist()]
    return out


def _cases(root: Scope, text: object) -> dict[str, tuple[list, object]]:
    """name -> (our fetches, TF function of the TF string tensor)."""
    import tensorflow as tf

    raw = tf.raw_ops
    split = ops.StringSplitV2(root, text, " ")
    return {
        "StringSplitV2 + StringToHashBucketFast": (
            [split.indices, ops.StringToHashBucketFast(root, split.values, 1 << 20)],
            lambda t: [(s := raw.StringSplitV2(input=t, sep=" ")).indices.numpy(),
                       raw.StringToHashBucketFast(input=s.values, num_buckets=1 << 20).numpy()]),
        "RegexReplace [[:punct:]] -> ''": (
            [ops.RegexReplace(root, text, "[[:punct:]]", "")],
            lambda t: raw.RegexReplace(input=t, pattern="[[:punct:]]", rewrite="").numpy()),
        "StringLower utf-8": (
            [ops.StringLower(root, text, ops.StringLower.Encoding("utf-8"))],
            lambda t: raw.StringLower(input=t, encoding="utf-8").numpy()),
        "StringLength UTF8_CHAR": (
            [ops.StringLength(root, text, ops.StringLength.Unit("UTF8_CHAR"))],
            lambda t: raw.StringLength(input=t, unit="UTF8_CHAR").numpy()),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--only", default="")
    parser.add_argument("--sentences", type=int, default=100_000)
    args = parser.parse_args()
    import tensorflow as tf

    data = sentences(args.sentences)
    theirs_input = tf.constant(data)
    root = Scope.NewRootScope()
    text = ops.Placeholder(root, DT_STRING)
    sess = kernel_session(root)
    width = 44
    print(header(width) + f" {'ours_cpu':>9s} {'tf_cpu':>9s}")
    for name, (fetches, theirs) in _cases(root, text).items():
        if args.only not in name:
            continue
        timing = time_pair(lambda f=fetches: sess.Run({text: data}, f), lambda g=theirs: g(theirs_input),
                           args.reps, warmup=2)
        print(row(name, timing, width) + f" {timing.ours_cpu_ms:9.1f} {timing.tf_cpu_ms:9.1f}", flush=True)


if __name__ == "__main__":
    main()
