"""Ops TF removed from GraphDefs: the Batch* linear-algebra ops (versions 13 and 14), SelfAdjointEig (11) and
MatrixExponential (27).

TF 2.21 still registers their CPU kernels (for graphs produced before the removal) but refuses to build or run
them in a current graph.  Here they run: a graph built with them, or a GraphDef produced before the removal,
works; a GraphDef whose producer version is at or past the removal is refused at import, as TF does.  Each
Batch* op is its current op's kernel and shape function under its own OpDef.
"""
from __future__ import annotations

from tfops_py.conformance import conformance, divergence, reference, spec_of
from tfops_py.framework.shape_inference import get_shape_fn, register_shape
from tfops_py.kernels.linalg import diag_ops, factorizations, matrix_functions, solvers  # noqa: F401 - registers them first
from tfops_py.kernels.registry import find_kernel, register_kernel

CONFORMANCE_FAMILY = "linalg"

# deprecated op -> the op whose kernel it runs
ALIASES = {
    "BatchCholesky": "Cholesky", "BatchCholeskyGrad": "CholeskyGrad", "BatchMatrixBandPart": "MatrixBandPart",
    "BatchMatrixDeterminant": "MatrixDeterminant", "BatchMatrixDiag": "MatrixDiag",
    "BatchMatrixDiagPart": "MatrixDiagPart", "BatchMatrixInverse": "MatrixInverse",
    "BatchMatrixSetDiag": "MatrixSetDiag", "BatchMatrixSolve": "MatrixSolve", "BatchMatrixSolveLs": "MatrixSolveLs",
    "BatchMatrixTriangularSolve": "MatrixTriangularSolve", "BatchSelfAdjointEig": "SelfAdjointEig",
    "BatchSelfAdjointEigV2": "SelfAdjointEigV2", "BatchSvd": "Svd",
}
for _alias, _op in ALIASES.items():
    register_shape(_alias)(get_shape_fn(_op))
    register_kernel(_alias)(find_kernel(_op, ""))

# -- conformance: the current op's cases, with TF's current op (or tf.linalg.expm) giving the values -----------
for _alias, _op in ALIASES.items():
    _spec = spec_of(_op)
    assert _spec is not None, f"declare {_op} before its alias {_alias}"
    # TF builds none of them, so there is no graph-construction message to match: classes only (the current op's
    # cases check the messages).
    conformance(_alias, shapes=_spec.shapes, compare=_spec.compare, live=3, messages=False, **_spec.domains,
                **_spec.attrs)

REMOVED = tuple(ALIASES) + ("SelfAdjointEig", "MatrixExponential")
divergence(REMOVED, when="ops removed from GraphDefs (the Batch* forms at versions 13-14, SelfAdjointEig at 11, "
                         "MatrixExponential at 27)",
           tf="refuses to build or run them in a current graph (\"Op X is not available in GraphDef version ...\")",
           ours="runs them (a GraphDef whose producer version is past the removal is refused at import, as TF)",
           applies=lambda inputs, attrs: True, builds=True,
           reference=reference("tfops_py.kernels.linalg._linalg_cases:removed_op",
                               "TF's current op on the same inputs (Cholesky for BatchCholesky, SelfAdjointEigV2 for "
                               "SelfAdjointEig, tf.linalg.expm for MatrixExponential)"))
