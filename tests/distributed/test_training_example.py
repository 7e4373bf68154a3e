"""examples/distributed_training.py: ps/worker synchronous SGD gives the single-process losses exactly."""
from __future__ import annotations

import importlib.util
import os

import numpy as np

from tfops_py.client.session import ClientSession

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "distributed_training.py")


def _example():
    spec = importlib.util.spec_from_file_location("distributed_training", _PATH)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_losses_fall_exactly_as_in_one_process(dask_client, ps_cluster):
    ex = _example()
    g = ex.build(np.random.default_rng(0))
    x, y = ex.data(np.random.default_rng(1), n=512)
    remote = ClientSession(g["root"], target=dask_client, cluster=ps_cluster)
    got = ex.train(remote, g, x, y, steps=12)
    want = ex.train(ClientSession(g["root"]), g, x, y, steps=12)
    assert got == want
    assert np.mean(got[-3:]) < got[0]
    remote.Close()
