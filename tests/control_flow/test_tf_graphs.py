"""Control-flow graphs TensorFlow built (TF1 loops and conds, TF2 functions, frozen lowered graphs, Keras RNNs,
TensorArray programs) import and run here with TF's results: recorded golden values, and live against TF."""
from __future__ import annotations

import functools
import importlib.util
import json
import os

import numpy as np
import pytest

from tests.tf_oracle import require_tf
from tfops_py import ClientSession, Scope
from tfops_py.graphdef import import_graph_def

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden", "control_flow")
TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "golden", "control_flow.py")
MANIFEST = json.load(open(os.path.join(GOLDEN, "manifest.json")))


@functools.cache
def _tool():
    """tools/golden/control_flow.py: the builders the golden files were recorded with."""
    require_tf()
    spec = importlib.util.spec_from_file_location("_control_flow_golden_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def run_here(graph_def, runs: list[dict], fetches: list[str], backend: str = "numpy") -> list[list[np.ndarray]]:
    root = Scope.NewRootScope()
    imported = import_graph_def(root, graph_def)
    session = ClientSession(root, backend=backend, fetch_numpy=True)
    return [session.Run({imported[k]: v for k, v in feeds.items()}, [imported[f] for f in fetches])
            for feeds in runs]


def assert_close(ours, theirs, what: str) -> None:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, f"{what}: {ours!r} vs TF {theirs!r}"
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5, err_msg=what)


def _golden(case: str) -> tuple[bytes, list[dict], list[str], list[list[np.ndarray]]]:
    info = MANIFEST[case]
    data = np.load(os.path.join(GOLDEN, f"{case}.npz"))
    runs = [{k: data[f"run{r}/feed/{k}"] for k in info["feeds"]} for r in range(info["runs"])]
    outs = [[data[f"run{r}/out{k}"] for k in range(len(info["fetches"]))] for r in range(info["runs"])]
    with open(os.path.join(GOLDEN, f"{case}.pb"), "rb") as f:
        return f.read(), runs, info["fetches"], outs


@pytest.mark.parametrize("case", sorted(MANIFEST))
def test_golden_graph_runs_with_tf_results(case, backend):
    graph, runs, fetches, expected = _golden(case)
    for r, (ours, theirs) in enumerate(zip(run_here(graph, runs, fetches, backend), expected)):
        for name, a, b in zip(fetches, ours, theirs):
            assert_close(a, b, f"{case} run {r} {name}")


@pytest.mark.tf
@pytest.mark.parametrize("case", sorted(MANIFEST))
def test_graph_built_by_tf_now_runs_as_in_tf(case):
    tool = _tool()
    graph_def, runs, fetches = getattr(tool, case)()
    theirs = tool.run_in_tf(graph_def, runs, fetches)
    ours = run_here(graph_def.SerializeToString(), runs, fetches)
    for r, (a_run, b_run) in enumerate(zip(ours, theirs)):
        for name, a, b in zip(fetches, a_run, b_run):
            assert_close(a, b, f"{case} run {r} {name}")


@pytest.fixture(scope="module")
def rnn_saved_models(tmp_path_factory):
    root = tmp_path_factory.mktemp("rnn_saved_models")
    return {kind: (str(root / kind), _tool().keras_rnn_saved_model(kind, str(root / kind)))
            for kind in ("lstm", "gru", "bidirectional")}


@pytest.mark.tf
@pytest.mark.parametrize("kind", ["lstm", "gru", "bidirectional"])
def test_unfrozen_keras_rnn_saved_model_runs_as_in_tf(kind, backend, rnn_saved_models):
    """Not frozen: the variables stay resources that the While body reads through captured handles."""
    from tfops_py import saved_model

    path, (feeds, theirs) = rnn_saved_models[kind]
    ours = saved_model.load(path, backend=backend).signatures["serve"](feeds)
    assert sorted(ours) == sorted(theirs)
    for name in theirs:
        assert_close(np.asarray(ours[name]), theirs[name], f"{kind} {name}")
