"""SavedModels written by TF 2.21 load and run here with TF's results; hostile ones end in clean errors."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.tf_oracle import require_tf
from tfops_py import saved_model as sm
from tfops_py.errors import DataLossError, InvalidArgumentError, NotFoundError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    require_tf()
    import make_saved_models

    root = tmp_path_factory.mktemp("saved_models")
    return {name: (str(root / name), make_saved_models.make(name, str(root / name)))
            for name in ("module_two_signatures", "tf1_saver", "keras_cnn", "keras_text")}


def _check(model, expected, rtol=1e-5):
    for sig, (feeds, want) in expected.items():
        got = model.signatures[sig](feeds)
        assert sorted(got) == sorted(want)
        for k in want:
            np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=rtol, atol=1e-6)


@pytest.mark.tf
@pytest.mark.parametrize("name", ["module_two_signatures", "tf1_saver", "keras_cnn", "keras_text"])
@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_models_match_tf(models, name, backend):
    path, expected = models[name]
    _check(sm.load(path, backend=backend), expected)


@pytest.mark.tf
def test_cpp_style_api(models):
    path, expected = models["tf1_saver"]
    assert sm.MaybeSavedModelDirectory(path) and not sm.MaybeSavedModelDirectory(os.path.dirname(path))
    bundle = sm.LoadSavedModel(sm.SessionOptions("numpy"), None, path, {sm.kSavedModelTagServe})
    sig = bundle.GetSignatures()["serving_default"]
    feeds, want = expected["serving_default"]
    (y,) = bundle.session.Run([(sig.inputs["x"].name, feeds["x"])], [sig.outputs["y"].name], [])
    np.testing.assert_allclose(y, want["y"])
    (y,) = bundle.session.Run(None, {sig.inputs["x"].name: feeds["x"]}, [sig.outputs["y"].name], [], None)
    np.testing.assert_allclose(y, want["y"])
    lite = sm.LoadSavedModel(None, None, path, ["serve"], sm.SavedModelBundleLite())
    assert set(lite.GetSignatures()) == {"serving_default"}
    meta = sm.ReadMetaGraphDefFromSavedModel(path, ["serve"])
    assert list(meta.meta_info_def.tags) == ["serve"]
    with pytest.raises(NotFoundError, match=r"Could not find meta graph def matching supplied tags: \{ gpu serve \}"):
        sm.LoadSavedModel(None, None, path, ["serve", "gpu"])


@pytest.mark.tf
def test_runs_where_tensorflow_cannot_be_imported(models):
    path, expected = models["module_two_signatures"]
    feeds, want = expected["serving_default"]
    code = ("import sys; sys.modules['tensorflow'] = None\n"
            "import numpy as np\nfrom tfops_py import saved_model as sm\n"
            f"m = sm.load({path!r})\n"
            f"out = m(x=np.array({feeds['x'].tolist()!r}, np.float32))\n"
            "import json; print(json.dumps({k: np.asarray(v).tolist() for k, v in out.items()}))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    got = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6)
    assert got["n"] == want["n"]


@pytest.mark.tf
def test_hostile_saved_models(models, tmp_path):
    path, _ = models["keras_text"]
    bad = tmp_path / "bad"
    shutil.copytree(path, bad)
    pb = bad / "saved_model.pb"
    model = sm.ReadSavedModel(str(bad))
    asset = model.meta_graphs[0].asset_file_def.add(filename="../../../../etc/passwd")
    asset.tensor_info.name = "saver_filename:0"
    pb.write_bytes(model.SerializeToString())
    with pytest.raises(InvalidArgumentError, match="outside the SavedModel's assets directory"):
        sm.load(str(bad))
    model = sm.ReadSavedModel(path)
    del model.meta_graphs[0].graph_def.library.function[:]
    pb.write_bytes(model.SerializeToString())
    with pytest.raises(NotFoundError):
        sm.load(str(bad))
    pb.write_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage")
    with pytest.raises(DataLossError, match="Could not parse SavedModel"):
        sm.load(str(bad))
    pb.unlink()
    with pytest.raises(NotFoundError, match="Could not find SavedModel .pb or .pbtxt"):
        sm.load(str(bad))


@pytest.mark.tf
def test_schema_matches_tensorflow():
    require_tf()
    from tensorflow.core.protobuf import fingerprint_pb2, meta_graph_pb2, saved_model_pb2

    from tests.graphdef.test_schema import _fields
    from tfops_py.saved_model import schema

    for ours, theirs in ((schema.SavedModel, saved_model_pb2.SavedModel),
                         (schema.FingerprintDef, fingerprint_pb2.FingerprintDef),
                         (schema.AssetFileDef, meta_graph_pb2.AssetFileDef)):
        a, b = _fields(ours.DESCRIPTOR), _fields(theirs.DESCRIPTOR)
        for name, fields in a.items():
            want = {k: v for k, v in b[name].items() if k not in schema.OMITTED_FIELDS.get(name, ())}
            assert fields == want, name


@pytest.mark.tf
def test_five_argument_run_honours_run_options(models):
    from tfops_py.client.run_options import RunMetadata, RunOptions

    path, expected = models["tf1_saver"]
    bundle = sm.LoadSavedModel(None, None, path, ["serve"])
    sig = bundle.GetSignatures()["serving_default"]
    feeds, want = expected["serving_default"]
    options, metadata = RunOptions(), RunMetadata()
    options.trace_level = RunOptions.FULL_TRACE
    (y,) = bundle.session.Run(options, [(sig.inputs["x"].name, feeds["x"])], [sig.outputs["y"].name], [], metadata)
    np.testing.assert_allclose(y, want["y"])
    assert metadata.step_stats.dev_stats and metadata.step_stats.dev_stats[0].node_stats  # the trace was taken
