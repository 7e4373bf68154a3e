"""Backends chosen at run time, device placement, and the errors around them."""
from __future__ import annotations

import os
import subprocess
import sys

import array_api_strict
import ml_dtypes
import numpy as np
import pytest

from tfops_py import DT_FLOAT, ClientSession, Scope, errors, ops
from tfops_py.backends import get_backend, set_default_backend
from tests.backends import HAS_GPU
from tests.util import run_op


def _quickstart(root):
    x = ops.Placeholder(root.WithOpName("x"), DT_FLOAT, ops.Placeholder.Shape([2, 2]))
    w = ops.Const(root.WithOpName("w"), [[1.0, 2.0], [3.0, 4.0]])
    y = ops.MatMul(root.WithOpName("y"), x, w, ops.MatMul.TransposeB(True))
    return x, ops.Add(root, y, 1.0)


def test_matmul_runs_on_every_backend(backend):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    (out,) = run_op(ops.MatMul, a, b, backend=backend)
    np.testing.assert_allclose(out, a @ b)


def test_namespace_module_as_backend_returns_its_arrays():
    root = Scope.NewRootScope()
    x, z = _quickstart(root)
    (out,) = ClientSession(root, backend=array_api_strict).Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [z])
    assert isinstance(out, array_api_strict._array_object.Array)
    (out_np,) = ClientSession(root, backend=array_api_strict, fetch_numpy=True).Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [z])
    np.testing.assert_array_equal(out_np, [[4, 8], [3, 5]])


def test_backend_arrays_can_be_fed_directly():
    root = Scope.NewRootScope()
    x, z = _quickstart(root)
    feed = array_api_strict.asarray(np.array([[1.0, 1.0], [0.0, 1.0]], np.float32))
    (out,) = ClientSession(root, backend="array_api_strict", fetch_numpy=True).Run({x: feed}, [z])
    np.testing.assert_array_equal(out, [[4, 8], [3, 5]])


def test_unknown_backend_name_is_a_clear_error():
    with pytest.raises(errors.InvalidArgumentError, match="unknown backend 'jax-gpu'"):
        ClientSession(Scope.NewRootScope(), backend="jax-gpu")


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU; the no-GPU error cannot be observed")
def test_cupy_without_gpu_is_a_clear_error():
    with pytest.raises(errors.UnavailableError, match="cupy"):
        ClientSession(Scope.NewRootScope(), backend="cupy")


@pytest.mark.skipif(not HAS_GPU, reason="no CUDA GPU visible (CuPy tests run only where one is)")
def test_quickstart_on_cupy():  # pragma: no cover - needs a GPU
    import cupy

    root = Scope.NewRootScope()
    x, z = _quickstart(root)
    (out,) = ClientSession(root, backend="cupy").Run({x: [[1.0, 1.0], [0.0, 1.0]]}, [z])
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(out), [[4, 8], [3, 5]])


def test_bfloat16_on_a_backend_without_it_names_the_op():
    root = Scope.NewRootScope()
    c = ops.Const(root.WithOpName("bf"), np.ones(3, ml_dtypes.bfloat16))
    with pytest.raises(errors.UnimplementedError, match="DT_BFLOAT16.*array_api_strict"):
        ClientSession(root, backend="array_api_strict").Run([c])


def test_import_does_not_import_cupy_and_env_var_picks_default():
    code = ("import sys, tfops_py; from tfops_py.backends import get_backend; "
            "print('cupy' in sys.modules, get_backend().name)")
    env = dict(os.environ, TFOPS_BACKEND="array_api_strict")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["False", "array_api_strict"]


def test_set_default_backend_is_used_by_new_sessions():
    try:
        set_default_backend("array_api_strict")
        assert ClientSession(Scope.NewRootScope()).backend.name == "array_api_strict"
    finally:
        set_default_backend("numpy")
    assert get_backend().name == "numpy"


def test_device_placement_runs_nodes_on_the_mapped_namespace():
    """Two namespaces stand in for two devices: /GPU:0 -> array_api_strict, the rest NumPy."""
    root = Scope.NewRootScope()
    a = ops.Const(root, np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    on_gpu = ops.MatMul(root.WithDevice("/device:GPU:0"), a, a)
    back_on_cpu = ops.Add(root.WithDevice("/CPU:0"), on_gpu, 1.0)
    sess = ClientSession(root, devices={"GPU": array_api_strict})
    gpu_value, cpu_value = sess.Run([on_gpu, back_on_cpu])
    assert isinstance(gpu_value, array_api_strict._array_object.Array)
    assert isinstance(cpu_value, np.ndarray)
    np.testing.assert_array_equal(cpu_value, np.array([[7, 10], [15, 22]]) + 1)


def test_assigned_device_wins_over_requested():
    root = Scope.NewRootScope()
    a = ops.Const(root.WithDevice("/GPU:0").WithAssignedDevice("/CPU:0"), [1.0])
    (out,) = ClientSession(root, devices={"GPU": array_api_strict}).Run([a])
    assert isinstance(out, np.ndarray)


@pytest.mark.skipif(HAS_GPU, reason="this machine has a GPU, so /GPU:0 can be satisfied")
def test_unsatisfiable_device_errors_unless_soft_placement():
    root = Scope.NewRootScope()
    a = ops.Add(root.WithDevice("/GPU:0").WithOpName("g"), 1.0, 2.0)
    with pytest.raises(errors.InvalidArgumentError,
                       match="Cannot assign a device for operation .*GPU:0.*allow_soft_placement"):
        ClientSession(root).Run([a])
    (out,) = ClientSession(root, allow_soft_placement=True).Run([a])
    assert out == 3.0


def test_malformed_device_string():
    root = Scope.NewRootScope()
    a = ops.Const(root.WithDevice("/TPU-ish"), 1.0)
    with pytest.raises(errors.InvalidArgumentError, match="Malformed device"):
        ClientSession(root).Run([a])
