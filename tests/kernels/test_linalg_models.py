"""Tried as a new user would: GraphDefs exported from TF 2.21 (tools/golden/linalg_models.py) run here and give
TF's values -- a Keras MultiHeadAttention layer, an STFT magnitude and tf.linalg.lstsq solves.  No TF needed."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tests.backends import BACKENDS
from tfops_py import ClientSession, Scope
from tfops_py.graphdef import import_graph_def

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "linalg_models")
with open(os.path.join(GOLDEN, "manifest.json")) as _f:
    MANIFEST = json.load(_f)["cases"]
# float32 models (attention, STFT) to float32 roundings of a few hundred terms; the float64 solves to 1e-9.
TOLERANCE = {"multi_head_attention": 1e-5, "stft_magnitude": 1e-4, "least_squares": 1e-9}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(MANIFEST))
def test_tf_export_runs_with_tf_values(case: str, backend: str) -> None:
    spec = MANIFEST[case]
    root = Scope.NewRootScope()
    imported = import_graph_def(root, os.path.join(GOLDEN, f"{case}.pb"))
    arrays = np.load(os.path.join(GOLDEN, f"{case}.npz"))
    feeds = {imported[name]: arrays[f"feed_{i}"] for i, name in enumerate(spec["feeds"])}
    fetches = [imported[name] for name in spec["fetches"]]
    values = ClientSession(root, backend, fetch_numpy=True).Run(feeds, fetches)
    tol = TOLERANCE[case]
    for i, (name, ours) in enumerate(zip(spec["fetches"], values)):
        want = arrays[f"fetch_{i}"]
        assert ours.dtype == want.dtype and ours.shape == want.shape, name
        np.testing.assert_allclose(ours, want, rtol=tol, atol=tol, err_msg=name)


def test_exports_contain_the_family_ops() -> None:
    """The export exercises what the brief names: Einsum in attention, RFFT/ComplexAbs, MatrixSolveLs/Cholesky."""
    assert "Einsum" in MANIFEST["multi_head_attention"]["ops"]
    assert {"RFFT", "ComplexAbs"} <= set(MANIFEST["stft_magnitude"]["ops"])
    assert {"MatrixSolveLs", "Cholesky", "MatrixTriangularSolve"} <= set(MANIFEST["least_squares"]["ops"])
