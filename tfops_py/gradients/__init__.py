"""Symbolic gradients: ``AddSymbolicGradients``, the gradient registry and a numeric checker.

Importing this package registers every gradient function: it imports each ``*_grad`` module in it
(math, array, nn, resource variables, ...), as linking ``tensorflow/cc/gradients`` does in C++.
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from tfops_py.framework.operation import NoGradient
from tfops_py.gradients.builder import AddSymbolicGradients
from tfops_py.gradients.checker import ComputeGradientError, ComputeJacobians
from tfops_py.gradients.registry import (GradFunc, GradOpRegistry, register_gradient, register_no_gradient,
                                         registered_gradient_ops)


def gradient_modules() -> list[ModuleType]:
    """The modules that register gradients (every ``*_grad`` module of this package), imported."""
    return [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)
            if m.name.endswith("_grad")]


gradient_modules()

__all__ = ["AddSymbolicGradients", "ComputeGradientError", "ComputeJacobians", "GradFunc", "GradOpRegistry",
           "NoGradient", "gradient_modules", "register_gradient", "register_no_gradient", "registered_gradient_ops"]
