"""The linalg family's cases built from arrays (imported only when cases are generated), and the references
that make expected values where TF's kernel gives none (a removed op, uninitialised memory).

Einsum's operands and the V2/V3 diagonal ops' ``k``, ``num_rows`` and ``num_cols`` must agree with shapes in
ways the generated cases cannot express, so their cases are built here: every equation kind and every diagonal
geometry and alignment, over the dtypes TF's CPU kernels take, plus TF's errors.  Case ``k`` draws from
``default_rng(k)``: new cases go at the end.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.conformance import CaseList, divergences, draw_values
from tfops_py.framework.dtypes import DataType, as_datatype
from tfops_py.framework.op_def import get_op_def
from tfops_py.kernels.linalg.einsum import BASIC_EQUATIONS

D = DataType
EINSUM_TYPES = (D.DT_FLOAT, D.DT_DOUBLE, D.DT_HALF, D.DT_BFLOAT16, D.DT_INT32, D.DT_INT64, D.DT_COMPLEX64,
                D.DT_COMPLEX128)
DIAG_TYPES = (D.DT_FLOAT, D.DT_DOUBLE, D.DT_HALF, D.DT_BFLOAT16, D.DT_INT8, D.DT_INT32, D.DT_INT64, D.DT_UINT8,
              D.DT_UINT64, D.DT_BOOL, D.DT_COMPLEX64, D.DT_COMPLEX128)
ALIGNS = ("RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT")
I32 = np.int32


def build(out: CaseList) -> None:
    _einsum_cases(out)
    _diag_cases(out)


# -- references ------------------------------------------------------------------------------------------
_CURRENT = {"BatchCholesky": "Cholesky", "BatchCholeskyGrad": "CholeskyGrad", "BatchMatrixBandPart": "MatrixBandPart",
            "BatchMatrixDeterminant": "MatrixDeterminant", "BatchMatrixDiag": "MatrixDiag",
            "BatchMatrixDiagPart": "MatrixDiagPart", "BatchMatrixInverse": "MatrixInverse",
            "BatchMatrixSetDiag": "MatrixSetDiag", "BatchMatrixSolve": "MatrixSolve",
            "BatchMatrixSolveLs": "MatrixSolveLs", "BatchMatrixTriangularSolve": "MatrixTriangularSolve",
            "BatchSelfAdjointEigV2": "SelfAdjointEigV2", "BatchSvd": "Svd"}


def removed_op(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """A removed op's value from the TF op that replaced it."""
    if op == "MatrixExponential":
        import tensorflow as tf

        x = np.asarray(inputs[0])
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            return run_tf("MatrixInverse", inputs, {})  # TF's checks and messages for a non-square input
        with tf.device("/CPU:0"):
            return [tf.linalg.expm(tf.constant(x)).numpy()]
    if op in ("SelfAdjointEig", "BatchSelfAdjointEig"):
        e, v = run_tf("SelfAdjointEigV2", inputs, {"compute_v": True})
        return [np.concatenate([e[..., None, :], v], axis=-2)]
    current = _CURRENT[op]
    ref = _reference_of(current, inputs, attrs)
    return ref(run_tf, current, inputs, attrs) if ref is not None else run_tf(current, inputs, attrs)


def _reference_of(op: str, inputs: list, attrs: dict) -> Any:
    """The reference of a divergence of ``op`` these inputs fall under (TF's value is not the answer), or None."""
    op_def = get_op_def(op)
    named = {a.name: v for a, v in zip(op_def.inputs, inputs)}
    types = {a.type_attr: as_datatype(np.asarray(v).dtype) for a, v in zip(op_def.inputs, inputs) if a.type_attr}
    for d in divergences(op):
        if d.reference is not None and d.concerns(op, types, attrs, named):
            return d.reference
    return None


def zeros_like_solution(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """MatrixSolveLs of an empty system: zeros of the solution's shape ``[..., N, K]``."""
    matrix, rhs = np.asarray(inputs[0]), np.asarray(inputs[1])
    return [np.zeros(matrix.shape[:-2] + (matrix.shape[-1], rhs.shape[-1]), matrix.dtype)]


def lower_triangle(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's Cholesky with the strict upper triangle (which TF leaves unwritten on failure) zero."""
    (out,) = run_tf(op, inputs, attrs)
    return [np.tril(out)]


def values_then_empty(run_tf: Any, op: str, inputs: list, attrs: dict) -> list[np.ndarray]:
    """TF's first output; the outputs not computed (compute_uv / compute_v false) empty of shape [0]."""
    outs = run_tf(op, inputs, attrs)
    return [outs[0]] + [np.zeros((0,), o.dtype) for o in outs[1:]]


# -- Einsum ------------------------------------------------------------------------------------------------
EINSUM_EQUATIONS: list[tuple[str, list[tuple[int, ...]]]] = BASIC_EQUATIONS + [
    ("abc->cab", [(2, 3, 4)]), ("ab,bc->ca", [(2, 3), (3, 4)]), ("abc,cd->abd", [(2, 3, 4), (4, 2)]),
    ("...a,...a->...", [(2, 3), (3,)]), ("ab->aab", [(3, 2)]), ("ab,b->aba", [(3, 2), (2,)]),
]
EINSUM_ERRORS: list[tuple[str, list[tuple[int, ...]]]] = [
    ("ab,bc", [(2, 3), (3, 4)]), ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]), ("ab,bc->ac", [(2, 3), (4, 4)]),
    ("ii->i", [(3, 4)]), ("...ab,...bc->...ac", [(2, 3, 4), (5, 4, 2)]), ("a..b,bc->ac", [(2, 3), (3, 4)]),
    ("ab,bc->ac", [(2, 3, 1), (3, 4)]), ("abc,bc->a", [(2, 1, 4), (3, 4)]), ("ab...,bc->ac", [(2, 3, 5), (3, 4)]),
    ("a.b..,b->a", [(2, 3), (3,)]), ("ab,b->a", [(2, 3)]),
]


def _einsum_cases(out: CaseList) -> None:
    for dt in EINSUM_TYPES:
        for i, (eq, shapes) in enumerate(EINSUM_EQUATIONS):
            rng = out.rng()
            ins = [draw_values(rng, dt.numpy_dtype, s, "small") for s in shapes]
            out.add("Einsum", [ins], {"equation": eq}, compare="acc", id=f"Einsum/{i}/{eq}/{dt.short_name}")
    for i, (eq, shapes) in enumerate(EINSUM_ERRORS):
        rng = out.rng()
        out.add("Einsum", [[draw_values(rng, np.float32, s) for s in shapes]], {"equation": eq},
                id=f"Einsum/error{i}/{eq}")


# -- MatrixDiag / MatrixDiagPart / MatrixSetDiag V2 and V3 ------------------------------------------------
GEOMETRIES: list[tuple[tuple[int, ...], Any]] = [
    ((3, 4), 0), ((3, 4), 1), ((4, 3), -2), ((3, 4), [-1, 1]), ((4, 3), [0, 2]), ((2, 3, 3), [-2, 0]),
    ((2, 1, 2, 4), [-1, 3]), ((3, 4), [1, 1]), ((0, 3), 0), ((2, 0, 0), 0), ((5, 2), [-4, 1]),
]


def _packed_shape(matrix: tuple[int, ...], lo: int, hi: int) -> tuple[int, ...]:
    rows, cols = matrix[-2:]
    max_len = max(min(rows + min(hi, 0), cols - max(lo, 0)), 0)
    return matrix[:-2] + ((hi - lo + 1,) if lo < hi else ()) + (max_len,)


def _k(k: Any) -> tuple[np.ndarray, int, int]:
    arr = np.asarray(k, I32)
    flat = arr.reshape(-1)
    return arr, int(flat[0]), int(flat[-1])


def _diag_cases(out: CaseList) -> None:
    for version in ("V2", "V3"):
        aligns = ALIGNS if version == "V3" else (None,)
        for g, (matrix, k) in enumerate(GEOMETRIES):
            for align in aligns:
                dt = DIAG_TYPES[(g + ALIGNS.index(align) if align else g) % len(DIAG_TYPES)]
                attrs = {"align": align} if align else {}
                tag = f"{matrix}/{k}/{align or 'left'}/{dt.short_name}"
                karr, lo, hi = _k(k)
                rng = out.rng()
                x = draw_values(rng, dt.numpy_dtype, matrix)
                pad = draw_values(rng, dt.numpy_dtype, ())
                out.add(f"MatrixDiagPart{version}", [x, karr, pad], attrs, id=f"MatrixDiagPart{version}/{tag}")
                diagonal = draw_values(rng, dt.numpy_dtype, _packed_shape(matrix, lo, hi))
                out.add(f"MatrixSetDiag{version}", [x, diagonal, karr], attrs, id=f"MatrixSetDiag{version}/{tag}")
                rows, cols = matrix[-2:]
                if diagonal.shape[-1] == 0:
                    continue
                for n_rows, n_cols in ((rows, cols), (-1, -1), (rows, -1), (-1, cols)):
                    out.add(f"MatrixDiag{version}", [diagonal, karr, I32(n_rows), I32(n_cols), pad], attrs,
                            id=f"MatrixDiag{version}/{tag}/{n_rows}x{n_cols}")
    _diag_error_cases(out)


def _diag_error_cases(out: CaseList) -> None:
    f = np.float32
    x = np.arange(12, dtype=f).reshape(3, 4)
    pad = f(0)
    bad_k = [np.array([], I32), np.array([1, 0], I32), np.array(5, I32), np.array([[1]], I32), np.array([1, 2, 3], I32),
             np.array([-4, 0], I32)]
    for i, k in enumerate(bad_k):
        out.add("MatrixDiagPartV3", [x, k, pad], id=f"MatrixDiagPartV3/bad_k{i}")
        out.add("MatrixSetDiagV3", [x, np.ones(3, f), k], id=f"MatrixSetDiagV3/bad_k{i}")
        out.add("MatrixDiagV3", [np.ones((2, 3), f), k, I32(-1), I32(-1), pad], id=f"MatrixDiagV3/bad_k{i}")
    out.add("MatrixDiagPartV3", [x, np.array([1, 2], I32), np.ones(2, f)], id="MatrixDiagPartV3/pad_vector")
    out.add("MatrixDiagPartV3", [np.ones(4, f), np.array([1, 2], I32), pad], id="MatrixDiagPartV3/rank1")
    ones3 = np.ones(3, f)
    for i, (diagonal, k, rows, cols, p) in enumerate([
            (np.ones((2, 3), f), [0, 2], -1, -1, pad), (ones3, 0, 2, -1, pad), (ones3, 0, -1, 2, pad),
            (ones3, 0, 4, 5, pad), (np.ones((), f), 0, 3, 5, pad), (ones3, 0, np.array([3], I32), 5, pad),
            (ones3, 0, 3, np.array([5], I32), pad), (ones3, 0, 3, 3, np.ones(2, f)), (ones3, 0, 3, 5, f(9)),
            (ones3, 2, -1, -1, pad), (ones3, -2, 6, -1, pad)]):
        out.add("MatrixDiagV3", [diagonal, np.asarray(k, I32), I32(rows) if np.ndim(rows) == 0 else rows,
                                 I32(cols) if np.ndim(cols) == 0 else cols, p], id=f"MatrixDiagV3/edge{i}")
    for i, (inp, diagonal, k) in enumerate([
            (x, np.ones(4, f), 0), (x, np.ones((2, 3), f), [0, 2]), (x, np.ones((3, 3), f), [0, 2]),
            (np.ones(3, f), ones3, 0), (x, np.ones((), f), 0), (np.ones((2, 3, 4), f), np.ones((3, 3), f), 0)]):
        out.add("MatrixSetDiagV3", [inp, diagonal, np.asarray(k, I32)], id=f"MatrixSetDiagV3/edge{i}")
