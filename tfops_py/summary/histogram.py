"""TensorBoard histograms as TF builds them (``tensorflow/core/lib/histogram``), vectorised.

TF's default bucket limits: ±1e-12 · 1.1^k up to 1e20, then ±DBL_MAX, and 0 in the middle; a value
goes to the first bucket whose limit is greater than it.  Runs of empty buckets are written as one
bucket (the limit of the run's last one, count 0), as ``EncodeToProto(preserve_zero_buckets=false)``.
"""
from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np

DBL_MAX = sys.float_info.max


@functools.cache
def default_bucket_limits() -> np.ndarray:
    positive = []
    v = 1.0e-12
    while v < 1.0e20:  # the same float64 products as TF's loop, so the limits are bit-identical
        positive.append(v)
        v *= 1.1
    positive.append(DBL_MAX)
    pos = np.array(positive)
    return np.concatenate([-pos[::-1], [0.0], pos])


def fill_histogram(values: np.ndarray, proto: Any) -> None:
    """Fill a HistogramProto with the histogram of ``values`` (finite, any real dtype)."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    limits = default_bucket_limits()
    counts = np.bincount(np.searchsorted(limits, v, side="right"), minlength=len(limits))[:len(limits)]
    proto.min = float(v.min()) if v.size else float(limits[-1])
    proto.max = float(v.max()) if v.size else -DBL_MAX
    proto.num = float(v.size)
    # TF adds one value at a time; cumsum's last element is that same sequential sum (np.sum is pairwise)
    proto.sum = float(np.cumsum(v)[-1]) if v.size else 0.0
    proto.sum_squares = float(np.cumsum(v * v)[-1]) if v.size else 0.0
    # keep non-empty buckets and the last bucket of each run of empty ones
    nonzero = counts > 0
    keep = nonzero | np.append(nonzero[1:], True)
    proto.bucket_limit.extend(limits[keep].tolist())
    proto.bucket.extend(counts[keep].astype(np.float64).tolist())
