"""Activation gradients and the activations TF's nn gradients use: what the conformance harness does not cover.

Golden values and live differential tests run in tests/conformance (declarations in
kernels/nn/activation_grad_ops.py); here: what the golden file must hold, TF's errors at build and
run time with their messages, and documented behaviour.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.conformance import golden
from tests.conformance.ours import run_ours
from tfops_py import errors

ACTIVATIONS = ["Elu", "Selu", "Softplus", "Softsign", "LeakyRelu"]
ACTIVATION_GRADS = ["ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad", "SoftsignGrad", "LeakyReluGrad"]
OUTPUT_GRADS = ["SigmoidGrad", "TanhGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad"]
OPS = ACTIVATIONS + ACTIVATION_GRADS + OUTPUT_GRADS


def test_golden_covers_every_op():
    assert set(OPS) <= {c.op for c in golden.load("grad_kernels").cases}


# -- errors ---------------------------------------------------------------------------------------------
A, B = np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)


@pytest.mark.parametrize("op", ACTIVATION_GRADS)
def test_activation_grads_need_equal_shapes(op, backend):
    with pytest.raises(errors.InvalidArgumentError, match=r"Dimension 0 in both shapes must be equal, but are 2 "
                                                          r"and 3. Shapes are \[2,3\] and \[3,2\]"):
        run_ours(op, [A, B], {}, backend)
    message = rf"Inputs to operation {op} of type {op} must have the same size and shape.  Input 0: \[2,3\] != input 1"
    with pytest.raises(errors.InvalidArgumentError, match=message):
        run_ours(op, [A, B], {}, backend, feed=True)


@pytest.mark.parametrize("op", OUTPUT_GRADS)
def test_output_grads_need_equal_element_counts_only(op, backend):
    with pytest.raises(errors.InvalidArgumentError, match="same number of elements, got 6 and 4"):
        run_ours(op, [A, np.ones(4, np.float32)], {}, backend, feed=True)
    (out,) = run_ours(op, [np.full((2, 3), 0.25, np.float32), np.arange(6, dtype=np.float32).reshape(3, 2)], {},
                      backend)
    assert out.shape == (2, 3)  # y's shape; dy is read in its element order, as in TF


# -- documented behaviour ------------------------------------------------------------------------------
def test_relu_grad_multiplies_by_a_mask_so_nan_gradients_stay(backend):
    g = np.array([np.nan, np.inf, 1, 2], np.float32)
    x = np.array([-1, 0, np.nan, 3], np.float32)
    (out,) = run_ours("ReluGrad", [g, x], {}, backend)
    np.testing.assert_array_equal(out, [np.nan, np.nan, 0, 2])


@pytest.mark.parametrize("op", ["SqrtGrad", "RsqrtGrad", "ReciprocalGrad"])
def test_zero_dy_gives_zero_even_at_singular_y(op, backend):
    y = np.array([0, np.inf, np.nan, -0.0], np.float32)
    (out,) = run_ours(op, [y, np.array([0, 0, -0.0, 0], np.float32)], {}, backend)
    np.testing.assert_array_equal(out, [0, 0, 0, 0])
    assert not np.signbit(out).any()


def test_leaky_relu_selects_so_alpha_above_one_is_not_a_max(backend):
    (out,) = run_ours("LeakyRelu", [np.array([-1, 2], np.float32)], {"alpha": 2.0}, backend)
    np.testing.assert_array_equal(out, [-2, 2])


def test_softplus_thresholds_use_the_type_epsilon():
    import ml_dtypes

    x = np.array([2.859375], ml_dtypes.bfloat16)  # above bfloat16's threshold log(eps) + 2 = -2.84375: returns x
    (out,) = run_ours("Softplus", [x], {})
    assert out[0] == x[0]


def test_complex_grads_conjugate_where_tf_does(backend):
    y, dy = np.array([1 + 2j], np.complex64), np.array([2 - 1j], np.complex64)
    assert run_ours("SqrtGrad", [y, dy], {}, backend)[0][0] == pytest.approx(0.4 + 0.3j)
    assert run_ours("SigmoidGrad", [y, dy], {}, backend)[0][0] == pytest.approx(6 - 8j)
