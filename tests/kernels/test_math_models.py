"""Tried as a new user would: GraphDefs TensorFlow built (an embedding-bag model and a top-k ranking graph,
tools/golden/math_models.py) import here and give TF's results on every backend, without TF installed."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tfops_py import ClientSession, Scope
from tfops_py.graphdef import import_graph_def

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "math_models"
MANIFEST = json.loads((GOLDEN / "manifest.json").read_text())["cases"]


def _run(name: str, backend: str) -> tuple[dict, list]:
    stored = np.load(GOLDEN / f"{name}.npz")
    root = Scope.NewRootScope()
    imported = import_graph_def(root, (GOLDEN / f"{name}.pb").read_bytes())
    case = MANIFEST[name]
    feeds = {imported[k]: stored[f"feed:{k}"] for k in case["feeds"]}
    fetches = [imported[k] for k in case["fetches"]]
    ours = ClientSession(root, backend=backend, fetch_numpy=True).Run(feeds, fetches)
    return {k: stored[f"fetch:{k}"] for k in case["fetches"]}, ours


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_model_built_by_tf_runs_here_as_in_tf(name, backend):
    theirs, ours = _run(name, backend)
    for (fetch, want), got in zip(theirs.items(), ours):
        assert got.dtype == want.dtype and got.shape == want.shape, fetch
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6, err_msg=fetch)
        else:
            np.testing.assert_array_equal(got, want, err_msg=fetch)


def test_the_models_exercise_the_family():
    ops = {op for case in MANIFEST.values() for op in case["ops"]}
    assert {"SparseSegmentMean", "SparseSegmentSqrtN", "SegmentMean", "UnsortedSegmentSum", "Unique", "TopKV2",
            "InTopKV2", "Cumsum", "DenseBincount"} <= ops
