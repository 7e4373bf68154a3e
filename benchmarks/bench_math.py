"""The math family's heavier ops: segment reductions of embedding sizes, TopKV2, scans, special functions,
Unique; tfops_py's ClientSession.Run next to TensorFlow.

    python benchmarks/bench_math.py [--reps 10] [--only SUBSTRING]

Each case is built as bench_math_ops.py builds its own: tensors fed to Placeholders (ids, indices and
small ints are Consts on both sides), every output fetched as a NumPy array, constant folding off; TF runs
eager ``tf.raw_ops`` with its default (oneDNN) CPU kernels.  The two alternate run by run
(benchmarks/_harness.py); the table gives medians and minimums of wall time and the medians of process CPU
time (both sides use every core).
"""
from __future__ import annotations

import argparse

import numpy as np

from _harness import time_pair  # noqa: E402
from bench_math_ops import _case, const  # noqa: E402  (one way of building a case for both tables)

rng = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape, dtype=np.float32)


ROWS, WIDTH, SEGMENTS = 100_000, 64, 4_000
SORTED_IDS = np.sort(rng.integers(0, SEGMENTS, ROWS)).astype(np.int32)
UNSORTED_IDS = rng.integers(0, SEGMENTS, ROWS).astype(np.int32)
TABLE = f32(ROWS, WIDTH)
LOOKUPS = rng.integers(0, ROWS, 200_000).astype(np.int32)
LOOKUP_SEGMENTS = np.sort(rng.integers(0, SEGMENTS, 200_000)).astype(np.int32)
MILLION = 1 << 20

# (name, op, inputs in OpDef order, attrs)
CASES: list[tuple[str, str, list, dict]] = [
    ("SegmentSum 100kx64 -> 4k", "SegmentSum", [TABLE, const(SORTED_IDS)], {}),
    ("SegmentMean 100kx64 -> 4k", "SegmentMean", [TABLE, const(SORTED_IDS)], {}),
    ("SegmentMax 100kx64 -> 4k", "SegmentMax", [TABLE, const(SORTED_IDS)], {}),
    ("UnsortedSegmentSum 100kx64 -> 4k", "UnsortedSegmentSum",
     [TABLE, const(UNSORTED_IDS), const(np.int32(SEGMENTS))], {}),
    ("SparseSegmentMean 100kx64, 200k ids", "SparseSegmentMean", [TABLE, const(LOOKUPS), const(LOOKUP_SEGMENTS)],
     {}),
    ("SparseSegmentSum 100kx64, 200k ids", "SparseSegmentSum", [TABLE, const(LOOKUPS), const(LOOKUP_SEGMENTS)], {}),
    ("TopKV2 k=10 of 1000x10000", "TopKV2", [f32(1000, 10_000), const(np.int32(10))], {}),
    ("Cumsum 1000x1000 axis 1", "Cumsum", [f32(1000, 1000), const(np.int32(1))], {}),
    ("Cumprod 1000x1000 axis 0", "Cumprod", [f32(1000, 1000), const(np.int32(0))], {}),
    ("CumulativeLogsumexp 1000x1000", "CumulativeLogsumexp", [f32(1000, 1000), const(np.int32(1))], {}),
    ("Erf float32 [1M]", "Erf", [f32(MILLION)], {}),
    ("BesselI0e float32 [1M]", "BesselI0e", [f32(MILLION)], {}),
    ("BesselJ0 float32 [1M]", "BesselJ0", [f32(MILLION)], {}),
    ("Igamma float32 [1M]", "Igamma", [np.abs(f32(MILLION)) + 0.5, np.abs(f32(MILLION))], {}),
    ("Unique int64 [1M]", "Unique", [rng.integers(0, 100_000, MILLION).astype(np.int64)], {}),
    ("Bincount int32 [1M] -> 1000", "Bincount", [rng.integers(0, 1000, MILLION).astype(np.int32),
                                                const(np.int32(1000)), const(np.zeros(0, np.float32))], {}),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--only", default="")
    parser.add_argument("--pause", type=float, default=0.002, help="seconds idle before each timed run")
    args = parser.parse_args()
    width = 38
    print(f"{'name':{width}s} {'ours_ms':>9s} {'tf_ms':>9s} {'ratio':>6s}   {'ours_min':>9s} {'tf_min':>9s} "
          f"{'ratio':>6s}   {'ours_cpu':>9s} {'tf_cpu':>9s} {'ratio':>6s}")
    for name, op, inputs, attrs in CASES:
        if args.only not in name:
            continue
        t = time_pair(*_case(op, inputs, attrs), args.reps, pause=args.pause)
        print(f"{name:{width}s} {t.ours_ms:9.2f} {t.tf_ms:9.2f} {t.ratio:6.2f}   {t.ours_min_ms:9.2f} "
              f"{t.tf_min_ms:9.2f} {t.min_ratio:6.2f}   {t.ours_cpu_ms:9.2f} {t.tf_cpu_ms:9.2f} "
              f"{t.ours_cpu_ms / max(t.tf_cpu_ms, 1e-9):6.2f}", flush=True)


if __name__ == "__main__":
    main()
