"""The fractional-pooling family's golden cases.  Imported only when cases are made.

* sequences: FractionalAvgPool on zeros for many input sizes, ratios, both ``pseudo_random`` modes and
  64-bit seeds (its row and column pooling sequences; FractionalMaxPool on every tenth);
* pools: FractionalAvgPool / FractionalMaxPool outputs for every dtype, both modes, both ``overlapping``
  settings (integers from a small range, so that max pooling has ties);
* gradients: FractionalAvgPoolGrad / FractionalMaxPoolGrad on the sequences TF draws for the pools (TF
  gives the pools' outputs and sequences: ``expected`` runs the forward op first), and FractionalAvgPoolGrad
  on hand-made sequences TF accepts (repeated values, a short end, extra entries, a 2-D sequence, a smaller
  batch or depth than the input);
* the API page's example (seeds for which TF draws rows [0, 2, 5] from 5 rows);
* bad inputs TF rejects too (``ERROR_CASES`` with ``tf_says == "same"``: TF's checks and the CVE inputs).

Deterministic: case ``i`` of the pools and gradients draws from ``default_rng(i)`` (the legacy numbering:
sequence cases first), the sequences from one fixed rng.  Inputs that crash TF (FractionalAvgPoolGrad with
a larger batch or depth, issue #107123) are never run.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, ShapeRule

DTYPES = ("float32", "float64", "int32", "int64")
F32_MAX = float(np.finfo(np.float32).max)
SEQ_RNG_SEED = 1234
EXAMPLE_SEEDS = (1, 2)  # TF draws rows [0, 2, 5] from 5 rows with these (seed, seed2)


def seq_cases() -> list[dict[str, Any]]:
    rng = np.random.default_rng(SEQ_RNG_SEED)
    cases = []
    sizes = [1, 2, 3, 5, 7, 10, 16, 31, 56, 97, 128, 250, 1000]
    for i in range(160):
        h = int(sizes[i % len(sizes)] if i < 2 * len(sizes) else rng.integers(1, 400))
        w = int(rng.integers(1, 400))
        fixed = [r for r in (1.0, 1.44, 1.5, 2.0, 3.0, float(h)) if r <= h]
        ratio_r = float(rng.choice(fixed)) if i % 4 == 0 else float(rng.uniform(1.0, min(h, 7.0)))
        ratio_c = float(rng.uniform(1.0, min(w, 7.0)))
        big = i % 3 == 0
        seed = int(rng.integers(-2**63, 2**63)) if big else int(rng.integers(0, 1000))
        seed2 = int(rng.integers(-2**63, 2**63)) if big else int(rng.integers(0, 1000))
        if seed == 0 and seed2 == 0:
            seed2 = 1
        cases.append({"shape": [1, h, w, 1], "pooling_ratio": [1.0, ratio_r, ratio_c, 1.0],
                      "pseudo_random": bool(i % 2), "seed": seed, "seed2": seed2 if i % 11 else 0})
    return cases


def pool_cases() -> list[dict[str, Any]]:
    shapes = [([2, 7, 9, 3], [1.0, 1.5, 1.8, 1.0]), ([1, 5, 5, 2], [1.0, 2.0, 1.3, 1.0]),
              ([3, 10, 6, 1], [1.0, 3.3, 1.0, 1.0]), ([1, 13, 11, 4], [1.0, 1.44, 1.73, 1.0])]
    cases = []
    for op in ("FractionalAvgPool", "FractionalMaxPool"):
        for dtype in DTYPES:
            for k, (shape, ratio) in enumerate(shapes):
                for overlapping in (False, True):
                    cases.append({"op": op, "dtype": dtype, "shape": shape, "pooling_ratio": ratio,
                                  "overlapping": overlapping, "pseudo_random": bool(k % 2),
                                  "seed": 17 + k, "seed2": 3 * k + int(overlapping)})
    # int32 sums that wrap around (TF's int32 arithmetic)
    cases.append({"op": "FractionalAvgPool", "dtype": "int32", "shape": [1, 6, 6, 2],
                  "pooling_ratio": [1.0, 1.5, 1.5, 1.0], "overlapping": True, "pseudo_random": False,
                  "seed": 5, "seed2": 6, "big": True})
    return cases


def custom_grad_cases() -> list[dict[str, Any]]:
    """FractionalAvgPoolGrad on sequences TF accepts that no forward pass draws."""
    return [
        {"orig": [1, 6, 5, 2], "dy": [1, 4, 3, 2], "row": [0, 1, 1, 3, 5], "col": [0, 2, 2, 5], "overlapping": True},
        {"orig": [1, 6, 5, 2], "dy": [1, 4, 3, 2], "row": [0, 1, 1, 3, 5], "col": [0, 2, 2, 5], "overlapping": False},
        {"orig": [2, 7, 7, 1], "dy": [2, 2, 2, 1], "row": [1, 3, 5], "col": [0, 3, 4], "overlapping": True},
        {"orig": [1, 4, 4, 1], "dy": [1, 2, 2, 1], "row": [0, 2, 4, 7, 9], "col": [0, 2, 4], "overlapping": False},
        {"orig": [1, 4, 4, 1], "dy": [1, 2, 2, 1], "row": [[0, 2, 4]], "col": [0, 2, 4], "overlapping": True},
        {"orig": [2, 4, 4, 2], "dy": [1, 2, 2, 1], "row": [0, 2, 4], "col": [0, 2, 4], "overlapping": True},
        {"orig": [3, 5, 4, 3], "dy": [2, 2, 2, 3], "row": [0, 2, 5], "col": [0, 1, 4], "overlapping": False},
        {"orig": [1, 3, 3, 1], "dy": [1, 3, 3, 1], "row": [0, 0, 0, 3], "col": [0, 1, 1, 3], "overlapping": True},
    ]


def values(rng: np.random.Generator, shape: list[int], dtype: str, big: bool = False) -> np.ndarray:
    if dtype.startswith("int"):
        if big:
            return rng.integers(2**29, 2**31 - 1, shape).astype(dtype)
        return rng.integers(-4, 5, shape).astype(dtype)  # a small range: max pooling meets ties
    return (rng.standard_normal(shape) * 3).astype(dtype)


def pool_attrs(case: dict[str, Any]) -> dict[str, Any]:
    return dict({k: case[k] for k in ("pooling_ratio", "pseudo_random", "overlapping", "seed", "seed2") if k in case},
                deterministic=True)


# -- bad inputs ---------------------------------------------------------------------------------------------
# (id, (op, inputs, attrs), error class, message regex, TF 2.21 on the same input: same (class and message),
#  differs (the same class, another check's message), accepts, or unsafe (never run))
IA, UNIMPL = "InvalidArgumentError", "UnimplementedError"  # error classes, by name
X4 = np.ones((1, 4, 4, 1), np.float32)
X_MAX = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
Y_MAX = np.array([[5, 7], [13, 15]], np.float32).reshape(1, 2, 2, 1)
SEQ = np.array([0, 2, 4], np.int64)
DY_21730 = np.arange(1, 13, dtype=np.int64).reshape(1, 2, 3, 2)


def _pool(op, x, ratio, **attrs):
    return (op, [x], dict(pooling_ratio=ratio, **attrs))


def _avg_grad(orig, dy, row, col, overlapping=False):
    return ("FractionalAvgPoolGrad", [np.asarray(orig, np.int64), dy, np.asarray(row, np.int64),
                                      np.asarray(col, np.int64)], dict(overlapping=overlapping))


def _max_grad(x=X_MAX, y=Y_MAX, dy=None, row=SEQ, col=SEQ, overlapping=False):
    dy = np.ones_like(y) if dy is None else dy
    return ("FractionalMaxPoolGrad", [x, y, dy, np.asarray(row, np.int64), np.asarray(col, np.int64)],
            dict(overlapping=overlapping))


ERROR_CASES = [
    ("CVE-2022-41900 avg", _pool("FractionalAvgPool", X4, [1.0, 0.5, 1.5, 1.0]), IA,
     r"pooling_ratio cannot be smaller than 1, got: 0\.5", "same"),
    ("CVE-2022-41900 max", _pool("FractionalMaxPool", X4, [1.0, 1.5, 0.5, 1.0]), IA,
     r"pooling_ratio cannot be smaller than 1, got: 0\.5", "same"),
    ("ratio NaN", _pool("FractionalAvgPool", X4, [1.0, math.nan, 1.5, 1.0]), IA,
     r"pooling_ratio cannot be smaller than 1, got: nan", "same"),
    ("ratio of 5", _pool("FractionalMaxPool", X4, [1.0, 1.5, 1.5, 1.0, 1.0]), IA,
     r"pooling_ratio field must specify 4 dimensions", "same"),
    ("ratio of 3", _pool("FractionalAvgPool", X4, [1.0, 1.5, 1.5]), IA,
     r"Length for attr 'pooling_ratio' of 3 must be at least minimum 4", "same"),
    ("CVE-2023-25801 avg", _pool("FractionalAvgPool", np.zeros((3, 30, 50, 3)), [2.0, 3.0, 1.0, 1.0],
                                 pseudo_random=True, overlapping=True, deterministic=True, seed=341261001), UNIMPL,
     r"Fractional average pooling is not yet supported on the batch nor channel dimension\.", "same"),
    ("CVE-2023-25801 max", _pool("FractionalMaxPool", X4, [1.0, 1.5, 1.5, 2.0]), UNIMPL,
     r"Fractional max pooling is not yet supported on the batch nor channel dimension\.", "same"),
    ("seeds without deterministic", _pool("FractionalAvgPool", X4, [1.0, 1.5, 1.5, 1.0], seed=1), IA,
     r"Both seed and seed2 should be 0 if deterministic is false\.", "same"),
    ("rank 3", _pool("FractionalMaxPool", X4[0], [1.0, 1.5, 1.5, 1.0]), IA, r"tensor_in must be 4-dimensional",
     "same"),
    ("CVE-2021-29550", _pool("FractionalAvgPool", np.full((1, 1, 1, 1), 60, np.int32),
                             [1.0, 1.0000014345305555, 1.0, 1.0]), IA,
     r"Pooling ratio is higher than input dimension size for dimension 1\. Input dim size: 1 pooling ratio: 1$",
     "same"),
    ("CVE-2022-21735", _pool("FractionalMaxPool", np.array([[[[1, 4, 2, 3]]]], np.float32),
                             [1.0, 1.44, 1.73, 1.0]), IA,
     r"for dimension 1\. Input dim size: 1 pooling ratio: 1\.44", "same"),
    ("empty batch", _pool("FractionalAvgPool", np.zeros((0, 4, 4, 1), np.float32), [1.0, 1.5, 1.5, 1.0]), IA,
     r"for dimension 0\. Input dim size: 0 pooling ratio: 1", "same"),
    ("empty depth", _pool("FractionalMaxPool", np.zeros((1, 4, 4, 0), np.float32), [1.0, 1.5, 1.5, 1.0]), IA,
     r"for dimension 3\. Input dim size: 0", "same"),
    ("CVE-2021-29578", _avg_grad([1, 3, 2, 3], np.full((1, 1, 1, 1), 2, np.int64), [1], [1]), IA,
     r"Given out_backprop shape \[1,1,1,1\], row_seq_tensor must have at least 2 elements, but got 1", "same"),
    ("CVE-2021-29578 col", _avg_grad([1, 3, 2, 3], np.full((1, 1, 1, 1), 2, np.int64), [0, 1], [1]), IA,
     r"col_seq_tensor must have at least 2 elements, but got 1", "same"),
    ("CVE-2021-37651", _avg_grad([0, 1, 2, 3], np.full((1, 2, 2, 1), 541, np.int64), [0, 0, 0, 0, 0],
                                 [-2, 0, 0, 2, 0], overlapping=True), IA,
     r"Batch dimension of input must not be 0", "same"),
    ("zero rows", _avg_grad([1, 0, 2, 3], np.ones((1, 1, 1, 1)), [0, 1], [0, 1]), IA,
     r"Rows dimension of input must not be 0", "same"),
    ("CVE-2022-21730 rows", _avg_grad([2, 2, 2, 2], DY_21730, [-10, 1, 2, 3], [1, 2, 3, 4], overlapping=True), IA,
     r"Row sequence tensor values must not be negative, got -10   1   2   3$", "same"),
    ("CVE-2022-21730 cols", _avg_grad([2, 2, 2, 2], DY_21730, [1, 2, 3, 4], [-10, 1, 2, 3], overlapping=True), IA,
     r"Column sequence tensor values must not be negative, got -10   1   2   3$", "same"),
    ("empty first cell", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 1)), [0, 0, 4], SEQ), IA,
     r"Row sequence tensor values must not be negative, got 0 0 4", "same"),
    ("CVE-2022-35963", _avg_grad(np.full(4, -1879048192), np.ones((0, 0, 0, 0)), np.ones(4), np.ones(4),
                                 overlapping=True), IA, r"out_backprop must be positive for all dimension, got:0",
     "same"),
    ("CVE-2022-35963 negative shape", _avg_grad(np.full(4, -1879048192), np.ones((1, 1, 1, 1)), np.ones(4),
                                                np.ones(4), overlapping=True), IA,
     r"Expected a non-negative size, got -1879048192", "same"),
    ("shape overflow", _avg_grad([2**40, 2**40, 2**40, 1], np.ones((1, 1, 1, 1)), [0, 1], [0, 1]), IA,
     r"Encountered overflow when multiplying 1099511627776 with 1099511627776, result: -1", "same"),
    ("shape of 5", _avg_grad([1, 4, 4, 1, 1], np.ones((1, 2, 2, 1)), SEQ, SEQ), IA,
     r"original input tensor shape must be1-dimensional and 4 elements", "same"),
    ("out_backprop rank 3", _avg_grad([1, 4, 4, 1], np.ones((2, 2, 1)), SEQ, SEQ), IA,
     r"out_backprop must be 4-dimensional", "same"),
    ("#107123 batch", _avg_grad([1, 4, 4, 1], np.ones((2, 2, 2, 1)), SEQ, SEQ), IA,
     r"out_backprop batch 2 exceeds the batch 1 of orig_input_tensor_shape \[1,4,4,1\]", "unsafe"),
    ("#107123 depth", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 2)), SEQ, SEQ), IA,
     r"out_backprop depth 2 exceeds the depth 1", "unsafe"),
    ("decreasing sequence", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 1)), [3, 1, 4], SEQ), IA,
     r"row_pooling_sequence must be non-decreasing, got 3 1 4", "accepts"),
    ("sequence past the input", _avg_grad([1, 4, 4, 1], np.ones((1, 2, 2, 1)), SEQ, [0, 5, 9]), IA,
     r"col_pooling_sequence must end inside the input \(at most 4\), got 0 5 9", "accepts"),
    ("CVE-2021-29580 rank", _max_grad(x=X_MAX[0]), IA, r"orig_input should be a tensor of rank 4", "same"),
    ("CVE-2021-29580 empty", _max_grad(x=np.zeros((0, 4, 4, 1), np.float32)), IA, r"orig_input must not be empty",
     "same"),
    ("orig_output rank 3", _max_grad(y=Y_MAX[0], dy=np.ones((1, 2, 2, 1), np.float32)), IA,
     r"orig_output should be a tensor of rank 4", "same"),
    ("orig_output empty", _max_grad(y=np.zeros((1, 0, 2, 1), np.float32), dy=np.ones((1, 2, 2, 1), np.float32)), IA,
     r"orig_output must not be empty", "same"),
    ("CVE-2022-35981", _max_grad(y=Y_MAX + 1), IA, r"tensor_out_dup is not the same as tensor_out", "same"),
    ("sequence not a vector", _max_grad(row=[[0, 2, 4]]), IA,
     r"row_pooling_sequence must be a vector, received shape \[1,3\]", "same"),
    ("sequence too short", _max_grad(col=[0, 2]), IA,
     r"col_pooling_sequence must have orig_output.dim_size\(2\) \+ 1 = 3 elements, got 2", "differs"),
    ("sequence too long", _max_grad(row=[0, 2, 4, 6]), IA, r"row_pooling_sequence must have .* = 3 elements", "unsafe"),
    ("out_backprop larger", _max_grad(dy=np.ones((1, 4, 4, 1), np.float32)), IA,
     r"out_backprop must have the shape of orig_output \[1,2,2,1\], got \[1,4,4,1\]", "unsafe"),
    ("out_backprop smaller", _max_grad(dy=np.ones((1, 1, 2, 1), np.float32)), IA,
     r"out_backprop must have the shape of orig_output", "accepts"),
    ("batch mismatch", _max_grad(x=np.concatenate([X_MAX, X_MAX])), IA,
     r"orig_output batch 1 differs from the orig_input batch 2", "unsafe"),
    ("depth mismatch", _max_grad(x=np.concatenate([X_MAX, X_MAX], axis=3)), IA,
     r"orig_output depth 1 differs from the orig_input depth 2", "unsafe"),
    ("negative sequence", _max_grad(row=[-1, 2, 4]), IA, r"Row sequence tensor values must not be negative", "unsafe"),
    ("max sequence past the input", _max_grad(row=[0, 2, 9]), IA, r"row_pooling_sequence must end inside the input",
     "accepts"),
    ("empty max cell", _max_grad(row=[0, 2, 2], y=np.array([[5, 7], [-F32_MAX, -F32_MAX]],
                                                             np.float32).reshape(1, 2, 2, 1)), IA,
     r"row_pooling_sequence 0 2 2 leaves pooling cell 1 empty", "differs"),
]


# -- the cases ----------------------------------------------------------------------------------------------
def _run_ours(op: str, x: np.ndarray, attrs: dict[str, Any]) -> list[np.ndarray]:
    """Our pool's output and sequences (equal to TF's: the pool cases check them), for the gradient cases."""
    from tfops_py import ClientSession, Scope, ops

    root = Scope.NewRootScope()
    pool = getattr(ops, op)(root, x, **attrs)
    return ClientSession(root, fetch_numpy=True).Run([pool.output, pool.row_pooling_sequence,
                                                      pool.col_pooling_sequence])


def build(out: CaseList) -> None:
    for i, case in enumerate(seq_cases()):
        attrs = pool_attrs(case)
        out.add("FractionalAvgPool", [np.zeros(case["shape"], np.float32)], attrs, compare="exact",
                id=f"FractionalAvgPool/seq{i}")
        if i % 10 == 0:
            out.add("FractionalMaxPool", [np.zeros(case["shape"], np.float32)], attrs, compare="exact",
                    id=f"FractionalMaxPool/seq{i}")
    index = 160  # the legacy numbering of the cases below: their seeds
    for case in pool_cases():
        rng = np.random.default_rng(index)
        x = values(rng, case["shape"], case["dtype"], case.get("big", False))
        attrs = pool_attrs(case)
        op = case["op"]
        out.add(op, [x], attrs, compare="avg" if op == "FractionalAvgPool" else "exact", id=f"{op}/{index}")
        y, row, col = _run_ours(op, x, attrs)
        dy = values(rng, list(y.shape), case["dtype"])
        if op == "FractionalAvgPool":
            out.add("FractionalAvgPoolGrad", [np.array(x.shape, np.int64), dy, row, col],
                    {"overlapping": case["overlapping"]}, compare="exact", id=f"FractionalAvgPoolGrad/{index + 1}")
        else:
            out.add("FractionalMaxPoolGrad", [x, y, dy, row, col], {"overlapping": case["overlapping"]},
                    compare="exact", id=f"FractionalMaxPoolGrad/{index + 1}")
        index += 2
    for custom in custom_grad_cases():
        for dtype in DTYPES:
            rng = np.random.default_rng(index)
            dy = values(rng, custom["dy"], dtype) * (3 if dtype.startswith("int") else 1)
            inputs = [np.array(custom[k], np.int64) for k in ("orig",)] + [dy] + \
                [np.array(custom[k], np.int64) for k in ("row", "col")]
            out.add("FractionalAvgPoolGrad", inputs, {"overlapping": custom["overlapping"]}, compare="exact",
                    id=f"FractionalAvgPoolGrad/{index}-custom")
            index += 1
    x = np.array([20, 5, 16, 3, 7], np.float32).reshape(1, 5, 1, 1)
    out.add("FractionalAvgPool", [x], {"pooling_ratio": [1.0, 2.5, 1.0, 1.0], "overlapping": True,
                                       "deterministic": True, "seed": EXAMPLE_SEEDS[0], "seed2": EXAMPLE_SEEDS[1]},
            compare="avg", id="FractionalAvgPool/api-example")
    for desc, (op, inputs, attrs), _, _, tf_says in ERROR_CASES:
        if tf_says == "same":
            out.add(op, [np.asarray(v) for v in inputs], attrs, id=f"{op}/bad/{desc}")


# -- the pools' shape rule (generated and live cases) ---------------------------------------------------------
class PoolShapes(ShapeRule):
    """value [N, H, W, C] with a pooling ratio of at most each spatial size, deterministic sequences from
    fixed seeds (``deterministic=False`` draws fresh ones each run: not comparable with TF)."""

    PATTERNS = [((2, 7, 9, 3), (1.5, 1.8)), ((1, 5, 5, 2), (2.0, 1.3)), ((3, 10, 6, 1), (3.3, 1.0)),
                ((1, 1, 4, 1), (1.0, 1.44)), ((2, 3, 3, 2), (3.0, 3.0))]

    @staticmethod
    def _pattern(shape: tuple[int, ...], ratio: tuple[float, float], seeds: tuple[int, int]) -> dict[str, Any]:
        return {"value": shape, "pooling_ratio": [1.0, *ratio, 1.0], "deterministic": True, "seed": seeds[0],
                "seed2": seeds[1]}

    def patterns(self) -> list[dict[str, Any]]:
        return [self._pattern(shape, ratio, (k + 1, 7 * k)) for k, (shape, ratio) in enumerate(self.PATTERNS)]

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        shape = tuple(int(v) for v in (rng.integers(1, 3), rng.integers(1, 12), rng.integers(1, 12),
                                       rng.integers(1, 3)))
        ratio = tuple(float(np.float32(rng.uniform(1.0, min(n, 4.0)))) for n in shape[1:3])
        return self._pattern(shape, ratio, (int(rng.integers(0, 2**31)), int(rng.integers(0, 2**31))))


POOL = PoolShapes()


def has_nan_or_neg_inf(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    x = np.asarray(inputs.get("value", inputs.get("orig_input")))
    return x.dtype.kind == "f" and bool(np.isnan(x).any() or np.isneginf(x).any())


def always(inputs: dict[str, Any], attrs: dict[str, Any]) -> bool:
    return True
