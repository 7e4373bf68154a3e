"""Symbolic gradients: ``AddSymbolicGradients``, the gradient registry and a numeric checker.

Importing this package registers every gradient function (math, array and nn ops),
as linking ``tensorflow/cc/gradients`` does in C++.
"""
from __future__ import annotations

from tfops_py.framework.operation import NoGradient
from tfops_py.gradients import array_grad, array_py_grad, math_grad, nn_grad  # noqa: F401  (register the gradients)
from tfops_py.gradients import resource_grad  # noqa: F401  (through resource variables)
from tfops_py.gradients.builder import AddSymbolicGradients
from tfops_py.gradients.checker import ComputeGradientError, ComputeJacobians
from tfops_py.gradients.registry import (GradFunc, GradOpRegistry, register_gradient, register_no_gradient,
                                         registered_gradient_ops)

__all__ = ["AddSymbolicGradients", "ComputeGradientError", "ComputeJacobians", "GradFunc", "GradOpRegistry",
           "NoGradient", "register_gradient", "register_no_gradient", "registered_gradient_ops"]
