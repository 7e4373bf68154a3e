"""Gradients with respect to resource variables (TF's resource_variable_grad_test, and ResourceGather vs TF)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.tf_oracle import require_tf
from tfops_py import AddSymbolicGradients, ClientSession, Scope, ops


def test_read_variable_op_grad():
    """TF's C++ ResourceVariableGradTest.ReadVariableOpGrad: d(read * x)/d(handle) = x."""
    root = Scope.NewRootScope()
    x = ops.Placeholder(root, "float")
    var = ops.VarHandleOp(root, "float", [])
    init = ops.AssignVariableOp(root, var, ops.Const(root, 2.0))
    y = ops.Mul(root, ops.ReadVariableOp(root, var, "float"), x)
    dy = ops.Placeholder(root, "float")
    (dx,) = AddSymbolicGradients(root, [y], [var], [dy])
    session = ClientSession(root)
    session.Run([], [], [init])
    assert session.Run({x: np.float32(5), dy: np.float32(1)}, [dx])[0] == 5.0


@pytest.mark.tf
@pytest.mark.parametrize("index_shape", [(4,), (2, 3), ()])
def test_resource_gather_grad_matches_tf(index_shape):
    tf = require_tf()
    rng = np.random.default_rng(0)
    table = rng.standard_normal((5, 3)).astype(np.float32)
    indices = rng.integers(0, 5, index_shape).astype(np.int32)
    weights = rng.standard_normal(index_shape + (3,)).astype(np.float32)

    root = Scope.NewRootScope()
    var = ops.VarHandleOp(root, "float", [5, 3])
    init = ops.AssignVariableOp(root, var, table)
    rows = ops.ResourceGather(root, var, indices, "float")
    loss = ops.Sum(root, ops.Mul(root, rows, weights), list(range(len(index_shape) + 1)))
    (grad,) = AddSymbolicGradients(root, [loss], [var])
    session = ClientSession(root)
    session.Run([], [], [init])
    (got,) = session.Run([grad])

    v = tf.Variable(table)
    with tf.GradientTape() as tape:
        theirs = tf.reduce_sum(tf.gather(v, indices) * weights)
    want = tf.convert_to_tensor(tape.gradient(theirs, v)).numpy()  # IndexedSlices -> dense, as TF densifies
    np.testing.assert_allclose(got, want, rtol=1e-6)
