"""SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits and L2Loss: what the conformance
harness does not cover.

Golden values and live differential tests run in tests/conformance (declarations in
kernels/nn/loss_ops.py); here: the shape functions, TF's errors at build and run time with their
messages, and a training step.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance import golden
from tests.conformance.ours import run_ours
from tfops_py import ClientSession, Scope, errors, ops
from tfops_py.framework.dtypes import DataType

XENT, SPARSE = "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits"
F = np.array([[1, 2, 3], [1, 1, 1]], np.float32)


def test_golden_covers_every_op():
    assert {XENT, SPARSE, "L2Loss"} <= {c.op for c in golden.load("grad_kernels").cases}


# -- shapes and errors ----------------------------------------------------------------------------------
def _xent_shapes(logits, labels):
    root = Scope.NewRootScope()
    a = ops.Placeholder(root, DataType.DT_FLOAT, shape=logits)
    b = ops.Placeholder(root, DataType.DT_FLOAT, shape=labels)
    op = ops.SoftmaxCrossEntropyWithLogits(root, a, b)
    return [tuple(op.loss.shape().as_list() or ()), tuple(op.backprop.shape().as_list() or ())]


@pytest.mark.parametrize("logits, labels, loss, backprop", [
    ([2, 3], [1, 3], (2,), (2, 3)),
    ([2, 3], [3], (2,), (2, 3)),
    ([None, 3], [2, None], (2,), (2, 3)),
    ([5], [2, 5], (2,), (2, 5)),
])
def test_xent_shapes_broadcast_as_tf(logits, labels, loss, backprop):
    got = _xent_shapes(logits, labels)
    assert got == [tuple(-1 if d is None else d for d in loss), backprop]


@pytest.mark.parametrize("logits, labels, message", [
    ([2, 3, 4], [2, 3, 4], "Shape must be broadcasted with rank 2, but is rank 3"),
    ([3], [3], "Shape must be broadcasted with rank 2, but is rank 1"),
    ([2, 3], [2, 4], "Dimensions must be equal, but are 3 and 4"),
    (None, [3], "Shape must be broadcasted with rank 2, but is rank is unknown."),  # sic, as TF
])
def test_xent_shape_errors(logits, labels, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        _xent_shapes(logits, labels)


@pytest.mark.parametrize("labels, message", [
    (np.ones((2, 4), np.float32), r"logits and labels must be broadcastable: logits_size=\[2,3\] labels_size=\[2,4\]"),
    (np.ones((2, 2, 3), np.float32), "must be either 2-dimensional, or broadcasted to be 2-dimensional"),
])
def test_xent_run_time_errors(labels, message, backend):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours(XENT, [F, labels], {}, backend, feed=True)


def test_xent_labels_broadcast_against_logits(backend):
    row = np.array([[0, 0, 1]], np.float32)
    full = run_ours(XENT, [F, np.repeat(row, 2, axis=0)], {}, backend)
    for labels in (row, row[0], np.float32(1) * row):
        for got, want in zip(run_ours(XENT, [F, labels], {}, backend, feed=True), full):
            np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("feed", [False, True])
@pytest.mark.parametrize("labels, message", [
    (np.array([2, 3], np.int64), r"Received a label value of 3 which is outside the valid range of \[0, 3\).  "
                                 r"Label values: 2 3"),
    (np.array([-1, 3], np.int32), r"Received a label value of -1 which is outside the valid range of \[0, 3\).  "
                                  r"Label values: -1 3"),
])
def test_sparse_label_out_of_range(labels, message, feed, backend):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours(SPARSE, [F, labels], {}, backend, feed=feed)


@pytest.mark.parametrize("logits, labels, build, run", [
    (np.ones(3, np.float32), np.array([1], np.int32), "must be rank 2 but is rank 1",
     r"logits must be 2-D, but got shape \[3\]"),
    (F, np.array([[1], [1]], np.int32), "must be rank 1 but is rank 2", r"labels must be 1-D, but got shape \[2,1\]"),
    (F, np.array([1, 1, 1], np.int32), "Dimensions must be equal, but are 2 and 3",
     r"must have the same first dimension, got logits shape \[2,3\] and labels shape \[3\]"),
    (np.ones((2, 0), np.float32), np.array([0, 0], np.int32), None,
     r"Must have at least one class, but got logits shape \[2,0\]"),
])
def test_sparse_shape_errors(logits, labels, build, run, backend):
    with pytest.raises(errors.InvalidArgumentError, match=build or run):
        run_ours(SPARSE, [logits, labels], {}, backend)
    with pytest.raises(errors.InvalidArgumentError, match=run):
        run_ours(SPARSE, [logits, labels], {}, backend, feed=True)


def test_l2_loss_is_a_scalar_half_sum_of_squares(backend):
    (out,) = run_ours("L2Loss", [np.array([[1, 2], [3, 4]], np.float32)], {}, backend, feed=True)
    assert out.shape == () and out == 15


def test_xent_gradient_trains(backend):
    """One SGD step on a linear classifier lowers the loss (the kernels the training loop needs)."""
    from tfops_py.gradients import AddSymbolicGradients

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 4)).astype(np.float32), np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
    root = Scope.NewRootScope()
    w = ops.Placeholder(root, DataType.DT_FLOAT, shape=[4, 3])
    logits = ops.MatMul(root, ops.Const(root, x), w).product
    loss = ops.SoftmaxCrossEntropyWithLogits(root, logits, ops.Const(root, y)).loss  # summed by the gradient
    (grad,) = AddSymbolicGradients(root, [loss], [w])
    sess = ClientSession(root, backend=backend, fetch_numpy=True)
    w0 = np.zeros((4, 3), np.float32)
    l0, g0 = sess.Run({w: w0}, [loss, grad])
    (l1,) = sess.Run({w: w0 - 0.1 * g0}, [loss])
    assert l1.sum() < l0.sum() == pytest.approx(8 * np.log(3), rel=1e-6)
