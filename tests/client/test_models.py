"""Real Keras models exported by TF as frozen graphs: imported, run with the optimizer on and off, and
compared with TF's own run of the same GraphDef.

Small inputs keep this within the CI budget: MobileNetV2 (inverted residuals, depthwise convs,
Relu6, Keras's batch-norm arithmetic) and EfficientNetB0 (swish, squeeze-excite, residual adds).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tfops_py import ClientSession, Scope, import_graph_def
from tfops_py.client.session_options import ConfigProto, GraphOptions, RewriterConfig, SessionOptions
from tests import tf_oracle

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
from export_keras_models import export  # noqa: E402

MODELS = [("MobileNetV2", 96), ("EfficientNetB0", 64)]
pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    tf_oracle.require_tf()
    return tmp_path_factory.mktemp("models")


def _tf_run(path: str, x: np.ndarray) -> np.ndarray:
    tf = tf_oracle.require_tf()
    gd = tf.compat.v1.GraphDef()
    gd.ParseFromString(Path(path).read_bytes())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(gd, name="")
    with tf.compat.v1.Session(graph=graph) as sess:
        return sess.run("Identity:0", {"x:0": x})


@pytest.mark.parametrize("name,size", MODELS)
def test_model_matches_tf_with_and_without_optimizer(name, size, model_dir):
    path = export(name, size, str(model_dir))
    x = np.random.default_rng(0).random((2, size, size, 3), dtype=np.float32)
    want = _tf_run(path, x)
    root = Scope.NewRootScope()
    graph = import_graph_def(root, path)
    off = SessionOptions(config=ConfigProto(graph_options=GraphOptions(
        RewriterConfig(disable_meta_optimizer=True))))
    for options in (SessionOptions(), off):
        (got,) = ClientSession(root, options).Run({graph["x"]: x}, [graph["Identity"]])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
