"""Data-parallel batch runs: a request over a batch split in chunks across the workers."""
from __future__ import annotations

import numpy as np
import pytest

from tfops_py import ops
from tfops_py.client.session import ClientSession
from tfops_py.errors import InvalidArgumentError
from tfops_py.framework.scope import Scope

da = pytest.importorskip("dask.array")


def _model():
    """A frozen two-layer classifier: weights are constants, as in an exported inference graph."""
    rng = np.random.default_rng(0)
    s = Scope.NewRootScope()
    x = ops.Placeholder(s.WithOpName("x"), "float", ops.Placeholder.Shape([-1, 8]))
    scale = ops.Placeholder(s.WithOpName("scale"), "float")
    h = ops.Relu(s, ops.MatMul(s, x, ops.Const(s, rng.standard_normal((8, 16)).astype(np.float32))))
    logits = ops.Mul(s, ops.MatMul(s, h, ops.Const(s, rng.standard_normal((16, 3)).astype(np.float32))), scale)
    probs = ops.Softmax(s, logits)
    label = ops.ArgMax(s, probs, 1)
    return s, x, scale, probs, label


def test_batches_match_one_run_and_report_progress(dask_client):
    s, x, scale, probs, label = _model()
    data = np.random.default_rng(1).standard_normal((1000, 8)).astype(np.float32)
    want = ClientSession(s).Run({x: data, scale: np.float32(0.5)}, [probs, label])
    remote = ClientSession(s, target=dask_client)
    seen: list[tuple[int, int]] = []
    got = remote.RunBatches({x: data}, [probs, label], batch_size=128, broadcast={scale: np.float32(0.5)},
                            progress=lambda done, total: seen.append((done, total)))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    assert seen[-1] == (8, 8) and [d for d, _ in seen] == list(range(1, 9))
    remote.Close()


def test_dask_arrays_in_and_out(dask_client):
    s, x, scale, probs, label = _model()
    data = da.random.default_rng(2).standard_normal((600, 8), chunks=(250, 8)).astype(np.float32)
    remote = ClientSession(s, target=dask_client)
    got = remote.RunBatches({x: data}, [label], batch_size=100, broadcast={scale: np.float32(1.0)}, as_dask=True)
    assert isinstance(got[0], da.Array) and got[0].shape == (600,)
    want = ClientSession(s).Run({x: data.compute(), scale: np.float32(1.0)}, [label])
    np.testing.assert_array_equal(got[0].compute(), want[0])
    remote.Close()


def test_bad_batches_are_clean_errors(dask_client):
    s, x, scale, probs, label = _model()
    remote = ClientSession(s, target=dask_client)
    with pytest.raises(InvalidArgumentError, match="batch_size must be a positive integer"):
        remote.RunBatches({x: np.zeros((4, 8), np.float32)}, [label], batch_size=0)
    with pytest.raises(InvalidArgumentError, match="same first"):
        remote.RunBatches({x: np.zeros((4, 8), np.float32), scale: np.zeros(3, np.float32)}, [label], batch_size=2)
    with pytest.raises(InvalidArgumentError, match="x"):  # TF's shape check of the fed placeholder, on the client
        remote.RunBatches({x: np.zeros((4, 5), np.float32)}, [label], batch_size=2, broadcast={scale: 1.0})
    remote.Close()
