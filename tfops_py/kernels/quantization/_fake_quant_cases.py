"""The fake-quant family's golden cases, bit for bit against TF 2.21's native CPU kernels.  Imported only
when cases are made.

Case ``i`` draws its inputs from ``default_rng(i)`` and then seeds them with the values that matter for
bit-exactness: the nudged bounds themselves and their float32 neighbours, midpoints between quantisation
levels (rounding ties), zero, +-inf and NaN.  The nudged bounds used to place those values come from a
small float32 re-implementation of TF's ``Nudge`` (``nudged_bounds``; ``check_nudged_bounds`` checks
against TF that each bound is exact: the bound passes the gradient, its outer neighbour does not).
(min, max) pairs include min == max == 0, min == max != 0 (NaN in TF), min > max, ranges not containing
0, and a zero point that is an exact .5 tie.

The "sum" cases hold only the min/max gradients of large inputs (inputs from ``sum_case_input``, a
formula, so nothing big is stored); they depend on TF's intra-op thread count, which the case records.
The bad inputs (TF's checks and the CVE inputs) follow.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, ShapeRule, formula

F32 = np.float32
ARGS, ARGS_GRAD = "FakeQuantWithMinMaxArgs", "FakeQuantWithMinMaxArgsGradient"
VARS, VARS_GRAD = "FakeQuantWithMinMaxVars", "FakeQuantWithMinMaxVarsGradient"
PC, PC_GRAD = "FakeQuantWithMinMaxVarsPerChannel", "FakeQuantWithMinMaxVarsPerChannelGradient"
ALL_OPS = (ARGS, ARGS_GRAD, VARS, VARS_GRAD, PC, PC_GRAD)
BITS = (2, 5, 8, 16)
# (min, max): typical, TF's doc example, zero point an exact .5 tie at 8 bits (-> 11, not 10),
# range above 0, range below 0, min == max == 0, min == max != 0, min > max.
PAIRS = [(-2.3, 3.7), (-0.3, 2.7), (-10.5, 244.5), (0.5, 4.0), (-4.0, -0.5), (0.0, 0.0), (1.5, 1.5),
         (3.0, -1.0)]
ARGS_PAIRS = [(-6.0, 6.0), (-2.3, 3.7), (-0.3, 2.7), (-10.5, 244.5), (0.5, 4.0), (-4.0, -0.5)]
SHAPES = {"scalar": [[], [7], [3, 5], [2, 3, 4, 5], [1, 2, 1, 2, 3, 2], [0, 3], [40]],
          "channel": [[5], [4, 5], [2, 3, 2, 5], [2, 1, 2, 2, 5], [0, 5], [3, 0], [24, 5]]}


def nudged_bounds(min_value: float, max_value: float, num_bits: int, narrow: bool) -> tuple[np.float32, ...]:
    """(nudged_min, nudged_max, scale) as TF computes them, in float32."""
    qmin, qmax = F32(1 if narrow else 0), F32((1 << num_bits) - 1)
    mn, mx = F32(min_value), F32(max_value)
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


def check_nudged_bounds(run_tf: Any) -> None:
    """``nudged_bounds`` is TF's: each bound passes the gradient, its outer neighbour does not."""
    for bits in BITS:
        for narrow in (False, True):
            for mn, mx in PAIRS[:5]:
                lo, hi, _ = nudged_bounds(mn, mx, bits, narrow)
                tiny = np.finfo(F32).tiny  # outside a bound of 0: past the denormals, which TF reads as 0
                below = -tiny if lo == 0 else np.nextafter(lo, F32(-np.inf))
                above = tiny if hi == 0 else np.nextafter(hi, F32(np.inf))
                x = np.array([lo, below, hi, above], F32)
                dx = run_tf(VARS_GRAD, [np.ones(4, F32), x, F32(mn), F32(mx)],
                            {"num_bits": bits, "narrow_range": narrow})
                assert dx[0].tolist() == [1, 0, 1, 0], (mn, mx, bits, narrow, dx[0])


def _cases() -> list[dict]:
    cases = []
    for op in ALL_OPS:
        pairs = ARGS_PAIRS if op in (ARGS, ARGS_GRAD) else PAIRS
        shapes = SHAPES["channel" if op in (PC, PC_GRAD) else "scalar"]
        for bits in BITS:
            for narrow in (False, True):
                for k, shape in enumerate(shapes):
                    pair = pairs[(k + bits) % len(pairs)]
                    cases.append({"op": op, "num_bits": bits, "narrow_range": narrow, "shape": shape, "pair": pair})
                if op not in (PC, PC_GRAD):  # every pair on a specials-rich vector
                    for pair in pairs:
                        cases.append({"op": op, "num_bits": bits, "narrow_range": narrow, "shape": [32], "pair": pair})
    return cases


def _inputs(case: dict, rng: np.random.Generator) -> list[np.ndarray]:
    """The case's inputs in OpDef order."""
    op, shape = case["op"], case["shape"]
    bits, narrow = case["num_bits"], case["narrow_range"]
    x = (rng.standard_normal(shape) * 4).astype(F32)
    if op in (PC, PC_GRAD):
        d = shape[-1]
        idx = [(bits + c) % len(PAIRS) for c in range(d)]
        mn, mx = np.array([PAIRS[i][0] for i in idx], F32), np.array([PAIRS[i][1] for i in idx], F32)
        for c in range(shape[-1] if shape else 0):
            col = x[..., c].reshape(-1)
            vals = special_values(float(mn[c]), float(mx[c]), bits, narrow)
            col[:min(len(vals), col.size)] = vals[:col.size]
            x[..., c] = col.reshape(x[..., c].shape)
        ins = [x, mn, mx]
    else:
        lo, hi = case["pair"]
        flat = x.reshape(-1)
        vals = special_values(lo, hi, bits, narrow)
        flat[:min(len(vals), flat.size)] = vals[:flat.size]
        x = flat.reshape(shape)
        ins = [x, F32(lo), F32(hi)] if op in (VARS, VARS_GRAD) else [x]
    if op.endswith("Gradient"):
        g = rng.standard_normal(shape).astype(F32)
        if g.size >= 8:
            flat = g.reshape(-1)
            flat[-4:] = [np.inf, -np.inf, np.nan, -0.0]
            g = flat.reshape(shape)
        ins = [g, *ins]
    return ins


def _attrs(case: dict) -> dict[str, Any]:
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


def sum_case_input(which: int, n: int, d: int, seed: int, flat: bool) -> np.ndarray:
    """One of ``sum_case_inputs`` (0: gradients, 1: inputs), flattened for the scalar-range op."""
    out = sum_case_inputs(n, d, seed)[which]
    return out.reshape(-1) if flat else out


SUM_CASES = [{"op": VARS_GRAD, "n": 50151, "d": 1, "seed": 1}, {"op": VARS_GRAD, "n": 120001, "d": 1, "seed": 2},
             {"op": PC_GRAD, "n": 44801, "d": 2, "seed": 3}, {"op": PC_GRAD, "n": 100003, "d": 1, "seed": 4},
             {"op": PC_GRAD, "n": 9001, "d": 3, "seed": 5}]

Z = np.zeros
# (op, inputs, attrs): TF's checks; CVE inputs; a rank-0 per-channel input, which aborts TF 2.21 (issue #117852)
BAD_INPUTS = [
    (ARGS, [Z(3)], {"num_bits": 1}),
    (ARGS_GRAD, [Z(3), Z(3)], {"num_bits": 17}),
    (VARS, [Z(3), F32(0), F32(1)], {"num_bits": 0}),
    (VARS_GRAD, [Z(3), Z(3), F32(0), F32(1)], {"num_bits": 20}),
    (PC, [Z((2, 3)), Z(3), Z(3)], {"num_bits": 17}),
    (PC_GRAD, [Z((2, 3)), Z((2, 3)), Z(3), Z(3)], {"num_bits": 1}),
    (ARGS, [Z(3)], {"min": 1.0, "max": 1.0}),
    (ARGS_GRAD, [Z(3), Z(3)], {"min": 2.0, "max": 1.5}),
    (ARGS_GRAD, [Z(6), Z((3, 2))], {}),
    (VARS, [Z((2, 3)), Z((2, 3)), Z((2, 3))], {"num_bits": 8}),  # CVE-2022-35971
    (VARS, [Z(3), F32(0), Z(1)], {}),
    (VARS_GRAD, [Z((2, 2))] * 4, {}),  # CVE-2022-36005
    (VARS_GRAD, [Z(6), Z((3, 2)), Z((2, 2)), F32(0)], {}),
    (VARS_GRAD, [Z(6), Z(6), F32(0), Z(1)], {}),
    (PC, [Z(4), Z((4, 0, 0)), Z(4)], {}),  # CVE-2022-36019
    (PC, [Z(4), Z(4), Z((4, 1))], {}),
    (PC, [Z((2, 4)), Z(3), Z((4, 1))], {}),  # TF's order of checks
    (PC, [Z((2, 4)), Z(4), Z(5)], {}),
    (PC_GRAD, [Z((1, 1))] * 4, {}),  # CVE-2022-35990
    (PC_GRAD, [Z(6), Z((3, 2)), Z((2, 2)), Z((1, 1))], {}),
    (PC_GRAD, [Z((3, 2)), Z((3, 2)), Z(3), Z(2)], {}),
    (PC_GRAD, [Z((3, 2)), Z((3, 2)), Z(2), Z(1)], {}),
]


def rank_above_4(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    return np.ndim(inputs["inputs"]) > 4


class FakeQuantShapes(ShapeRule):
    """inputs (and gradients) of any shape (rank >= 1 per channel), min and max scalars or of the channel
    count; live cases draw ranks 0..4 with dims 0..5."""

    def __init__(self, per_channel: bool, grad: bool):
        self.per_channel, self.data = per_channel, ("gradients", "inputs") if grad else ("inputs",)

    def _pattern(self, shape: tuple[int, ...]) -> dict[str, Any]:
        bounds = (shape[-1],) if self.per_channel else ()
        return {**dict.fromkeys(self.data, shape), "min": bounds, "max": bounds}

    def patterns(self) -> list[dict[str, Any]]:
        shapes = SHAPES["channel" if self.per_channel else "scalar"]
        return [self._pattern(tuple(s)) for s in shapes[:6]]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        rank = int(rng.integers(1 if self.per_channel else 0, 5))
        return self._pattern(tuple(int(d) for d in rng.integers(0, 6, rank)))


VARS_SHAPES, VARS_GRAD_SHAPES = FakeQuantShapes(False, False), FakeQuantShapes(False, True)
PC_SHAPES, PC_GRAD_SHAPES = FakeQuantShapes(True, False), FakeQuantShapes(True, True)


def build(out: CaseList) -> None:
    for i, case in enumerate(_cases()):
        shape = "x".join(map(str, case["shape"])) or "scalar"
        out.add(case["op"], _inputs(case, np.random.default_rng(i)), _attrs(case), compare="exact",
                id=f"{case['op']}/{i}-b{case['num_bits']}{'n' if case['narrow_range'] else ''}-{shape}")
    for k, case in enumerate(SUM_CASES):
        flat = case["op"] == VARS_GRAD
        d, fn = case["d"], "tfops_py.kernels.quantization._fake_quant_cases:sum_case_input"
        g, x = (formula(fn, which, case["n"], d, case["seed"], flat) for which in (0, 1))
        bounds = [F32(-1), F32(1)] if flat else [np.full(d, -1, F32), np.ones(d, F32)]
        out.add(case["op"], [g, x, *bounds], {"num_bits": 8, "narrow_range": False}, compare="exact",
                id=f"{case['op']}/sum{k}-{case['n']}x{d}", threads=True, outputs=(1, 2))
    for k, (op, inputs, attrs) in enumerate(BAD_INPUTS):
        out.add(op, [np.asarray(v, F32) for v in inputs], attrs, id=f"{op}/bad{k}")
