"""Golden values for the fake-quant family, from TF 2.21's native CPU kernels.

    python tools/golden/fake_quant.py        # writes tests/golden/fake_quant.npz

Every case's inputs are drawn from ``default_rng(case index)`` and then seeded with the values
that matter for bit-exactness: the nudged bounds themselves and their float32 neighbours,
midpoints between quantisation levels (rounding ties), zero, +-inf and NaN.  The nudged bounds
used to place those values come from a small float32 re-implementation of TF's ``Nudge``
(``nudged_bounds`` below); the script checks with TF that each bound is exact (the bound passes
the gradient, its outer neighbour does not).  (min, max) pairs include min == max == 0,
min == max != 0 (NaN in TF), min > max, ranges not containing 0, and a zero point that is an
exact .5 tie.

"Sum" cases hold only the min/max gradients of large inputs (inputs from ``sum_case_inputs``,
a formula, so nothing big is stored); they depend on TF's intra-op thread count, which is
recorded as ``threads``.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "tests" / "golden" / "fake_quant.npz"
F32 = np.float32
ARGS, ARGS_GRAD = "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient"
VARS, VARS_GRAD = "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsGradient"
PC, PC_GRAD = "FakeQuantWithMinMaxVarsPerChannel", "FakeQuantWithMinMaxVarsPerChannelGradient"
BITS = (2, 5, 8, 16)
# (min, max): typical, TF's doc example, zero point an exact .5 tie at 8 bits (-> 11, not 10),
# range above 0, range below 0, min == max == 0, min == max != 0, min > max.
PAIRS = [(-2.3, 3.7), (-0.3, 2.7), (-10.5, 244.5), (0.5, 4.0), (-4.0, -0.5), (0.0, 0.0), (1.5, 1.5),
         (3.0, -1.0)]
ARGS_PAIRS = [(-6.0, 6.0), (-2.3, 3.7), (-0.3, 2.7), (-10.5, 244.5), (0.5, 4.0), (-4.0, -0.5)]
SHAPES = {"scalar": [[], [7], [3, 5], [2, 3, 4, 5], [1, 2, 1, 2, 3, 2], [0, 3], [40]],
          "channel": [[5], [4, 5], [2, 3, 2, 5], [2, 1, 2, 2, 5], [0, 5], [3, 0], [24, 5]]}


def nudged_bounds(mn: float, mx: float, num_bits: int, narrow: bool) -> tuple[np.float32, ...]:
    """(nudged_min, nudged_max, scale) as TF computes them, in float32."""
    qmin, qmax = F32(1 if narrow else 0), F32((1 << num_bits) - 1)
    mn, mx = F32(mn), F32(mx)
    with np.errstate(all="ignore"):
        scale = (mx - mn) / (qmax - qmin)
        zp = qmin - mn / scale
        if zp < qmin:
            nzp = qmin
        elif zp > qmax:
            nzp = qmax
        elif np.isnan(zp):
            nzp = F32(0)
        else:
            t = np.floor(zp)  # std::round: half away from zero (zp >= 0 here)
            nzp = F32(t + 1 if zp - t >= 0.5 else t)
        return (qmin - nzp) * scale, (qmax - nzp) * scale, scale


def special_values(mn: float, mx: float, num_bits: int, narrow: bool) -> list[float]:
    lo, hi, scale = nudged_bounds(mn, mx, num_bits, narrow)
    vals = [0.0, mn, mx, float("inf"), float("-inf"), float("nan")]
    if np.isfinite(lo) and np.isfinite(hi) and scale != 0:
        for b in (lo, hi):
            vals += [b, np.nextafter(b, F32(np.inf)), np.nextafter(b, F32(-np.inf))]
            if b == 0:  # TF treats denormals as 0: the first values outside a 0 bound are +-FLT_MIN
                vals += [np.finfo(F32).tiny, -np.finfo(F32).tiny]
        with np.errstate(all="ignore"):
            for k in (0, 1, 2, 7):  # midpoints between levels: rounding ties
                vals.append(lo + (F32(k) + F32(0.5)) * scale)
            vals.append(hi - F32(0.5) * scale)
    return [float(F32(v)) for v in vals]


def _cases() -> list[dict]:
    cases = []
    for op in (ARGS, ARGS_GRAD, VARS, VARS_GRAD, PC, PC_GRAD):
        pairs = ARGS_PAIRS if op in (ARGS, ARGS_GRAD) else PAIRS
        shapes = SHAPES["channel" if op in (PC, PC_GRAD) else "scalar"]
        for bits in BITS:
            for narrow in (False, True):
                for k, shape in enumerate(shapes):
                    pair = pairs[(k + bits) % len(pairs)]
                    cases.append({"op": op, "num_bits": bits, "narrow_range": narrow, "shape": shape,
                                  "pair": pair})
                if op not in (PC, PC_GRAD):  # every pair on a specials-rich vector
                    for pair in pairs:
                        cases.append({"op": op, "num_bits": bits, "narrow_range": narrow, "shape": [32],
                                      "pair": pair})
    return cases


def _minmax(case: dict, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if case["op"] in (PC, PC_GRAD):
        d = case["shape"][-1]
        idx = [(case["num_bits"] + c) % len(PAIRS) for c in range(d)]
        return (np.array([PAIRS[i][0] for i in idx], F32), np.array([PAIRS[i][1] for i in idx], F32))
    return F32(case["pair"][0]), F32(case["pair"][1])


def _inputs(case: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    op, shape = case["op"], case["shape"]
    bits, narrow = case["num_bits"], case["narrow_range"]
    x = (rng.standard_normal(shape) * 4).astype(F32)
    if op in (PC, PC_GRAD):
        mn, mx = _minmax(case, rng)
        for c in range(shape[-1] if shape else 0):
            col = x[..., c].reshape(-1)
            vals = special_values(float(mn[c]), float(mx[c]), bits, narrow)
            col[:min(len(vals), col.size)] = vals[:col.size]
            x[..., c] = col.reshape(x[..., c].shape)
        ins = {"inputs": x, "min": mn, "max": mx}
    else:
        mn, mx = case["pair"]
        flat = x.reshape(-1)
        vals = special_values(mn, mx, bits, narrow)
        flat[:min(len(vals), flat.size)] = vals[:flat.size]
        x = flat.reshape(shape)
        ins = {"inputs": x}
        if op in (VARS, VARS_GRAD):
            ins.update(min=F32(mn), max=F32(mx))
    if op.endswith("Gradient"):
        g = rng.standard_normal(shape).astype(F32)
        if g.size >= 8:
            flat = g.reshape(-1)
            flat[-4:] = [np.inf, -np.inf, np.nan, -0.0]
            g = flat.reshape(shape)
        ins = {"gradients": g, **ins}
    return ins


def _attrs(case: dict) -> dict:
    attrs = {"num_bits": case["num_bits"], "narrow_range": case["narrow_range"]}
    if case["op"] in (ARGS, ARGS_GRAD):
        attrs.update(min=case["pair"][0], max=case["pair"][1])
    return attrs


def sum_case_inputs(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(gradients, inputs) of shape [n, d] from an integer formula (no RNG: same on every machine).

    Gradients span 12 binary orders of magnitude, so any change of summation order shows;
    about half the inputs lie below -1 and a quarter above 1.
    """
    i = np.arange(n * d, dtype=np.uint64)
    u = ((i * np.uint64(2654435761) + np.uint64(seed) * np.uint64(40503)) % np.uint64(2 ** 32)).astype(np.float64)
    w = ((i * np.uint64(40503) + np.uint64(seed + 7) * np.uint64(2654435761)) % np.uint64(2 ** 32)).astype(np.float64)
    g = ((u / 2 ** 32 - 0.5) * np.exp2(np.floor(w / 2 ** 32 * 12) - 6)).astype(F32).reshape(n, d)
    x = ((w / 2 ** 32) * 4 - 3).astype(F32).reshape(n, d)
    return g, x


SUM_CASES = [{"op": VARS_GRAD, "n": 50151, "d": 1, "seed": 1}, {"op": VARS_GRAD, "n": 120001, "d": 1, "seed": 2},
             {"op": PC_GRAD, "n": 44801, "d": 2, "seed": 3}, {"op": PC_GRAD, "n": 100003, "d": 1, "seed": 4},
             {"op": PC_GRAD, "n": 9001, "d": 3, "seed": 5}]


def main() -> None:
    import tensorflow as tf

    def run(op: str, ins: dict, attrs: dict) -> list[np.ndarray]:
        with tf.device("/CPU:0"):
            res = getattr(tf.raw_ops, op)(**ins, **attrs)
        return [r.numpy() for r in (res if isinstance(res, (list, tuple)) else [res])]

    # The script's nudged bounds must be TF's: the bound passes the gradient, its outer neighbour not.
    for bits in BITS:
        for narrow in (False, True):
            for mn, mx in PAIRS[:5]:
                lo, hi, _ = nudged_bounds(mn, mx, bits, narrow)
                tiny = np.finfo(F32).tiny  # outside a bound of 0: past the denormals, which TF reads as 0
                below = -tiny if lo == 0 else np.nextafter(lo, F32(-np.inf))
                above = tiny if hi == 0 else np.nextafter(hi, F32(np.inf))
                x = np.array([lo, below, hi, above], F32)
                dx = run(VARS_GRAD, {"gradients": np.ones(4, F32), "inputs": x, "min": F32(mn), "max": F32(mx)},
                         {"num_bits": bits, "narrow_range": narrow})[0]
                assert dx.tolist() == [1, 0, 1, 0], (mn, mx, bits, narrow, dx)

    blob: list[np.ndarray] = []  # every array, flattened into one float32 vector (few zip entries)
    size = 0

    def put(arr: np.ndarray) -> list:
        nonlocal size
        arr = np.asarray(arr, F32)
        blob.append(arr.reshape(-1))
        size += arr.size
        return [size - arr.size, list(arr.shape)]

    meta = []
    for i, case in enumerate(_cases()):
        ins = _inputs(case, np.random.default_rng(i))
        outs = run(case["op"], ins, _attrs(case))
        meta.append(dict(case, inputs={k: put(v) for k, v in ins.items()}, outputs=[put(o) for o in outs]))
    arrays: dict[str, np.ndarray] = {}
    threads = tf.config.threading.get_intra_op_parallelism_threads() or len(os.sched_getaffinity(0))
    sums = []
    for _k, case in enumerate(SUM_CASES):
        g, x = sum_case_inputs(case["n"], case["d"], case["seed"])
        if case["op"] == VARS_GRAD:
            ins = {"gradients": g.reshape(-1), "inputs": x.reshape(-1), "min": F32(-1), "max": F32(1)}
        else:
            ins = {"gradients": g, "inputs": x, "min": np.full(case["d"], -1, F32), "max": np.ones(case["d"], F32)}
        outs = run(case["op"], ins, {"num_bits": 8, "narrow_range": False})
        sums.append(dict(case, outputs=[put(outs[1]), put(outs[2])]))
    arrays["data"] = np.concatenate(blob)
    arrays["meta"] = np.array(json.dumps({"tensorflow": tf.__version__, "threads": threads, "cases": meta,
                                          "sums": sums}))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {len(meta)} cases + {len(sums)} sum cases to {OUT} ({OUT.stat().st_size} bytes)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
