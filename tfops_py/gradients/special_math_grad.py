"""Gradients of the special functions: a port of TF's Python ``math_grad.py`` (TF's C++ API has none of
them but Erfinv and Ndtri, which math_grad.py ports from C++).

Bessel functions, Dawsn, Expint, the Fresnel integrals, Spence and Digamma: ``dy * f'(x)`` with TF's
formulas (its special values at x = 0 included); Igamma/Igammac: IgammaGradA for ``a`` and the gamma
density for ``x``; Betainc: the beta density for ``x`` only; Zeta and Polygamma: for ``q`` / ``x`` only
(TF has no derivative in the order).  The ops without a C++ class are built with the generic node
builder (``node``).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from tfops_py import ops
from tfops_py.framework.node_builder import add_node
from tfops_py.framework.op_def import get_op_def
from tfops_py.framework.operation import NoGradient, Operation, Output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.math_grad import binary_grad_common, const_of
from tfops_py.gradients.registry import register_gradient

PYTHON_ONLY = "TF Python's gradient (TF's C++ API registers none)"
_UNARY = ("BesselI0", "BesselI0e", "BesselI1", "BesselI1e", "BesselK0", "BesselK0e", "BesselK1", "BesselK1e",
          "BesselJ0", "BesselJ1", "BesselY0", "BesselY1", "Dawsn", "Expint", "FresnelCos", "FresnelSin", "Spence",
          "Digamma")
BEYOND_TF_CC: dict[str, str] = {op: PYTHON_ONLY for op in _UNARY + ("Igamma", "Igammac", "Betainc", "Zeta",
                                                                      "Polygamma")}
BEYOND_TF_CC["BesselI1"] += "; 1/2 at x = 0, the derivative (TF's Python imputes 1)"
CHANGED_FROM_TF_CC: dict[str, str] = {}


def node(scope: Scope, op_type: str, *inputs: Output, **attrs: Any) -> Output:
    """Output 0 of an ``op_type`` node (for ops without a C++ class, such as the Bessel functions)."""
    built = add_node(scope, get_op_def(op_type), list(inputs), attrs)
    return Output(built, 0)


Dydx = Callable[[Scope, Output, Output], Output]  # (scope, x, y) -> dy/dx


def _where_x_is(scope: Scope, x: Output, at: float, value: float, elsewhere: Output) -> Output:
    """``value`` where x == ``at`` (TF's imputed limits at 0), else ``elsewhere``."""
    return ops.SelectV2(scope, ops.Equal(scope, x, const_of(scope, at, x.type())).z,
                        const_of(scope, value, x.type()), elsewhere).output


def _minus_y_over_x(scope: Scope, first: Output, x: Output, y: Output) -> Output:
    return ops.Sub(scope, first, ops.Div(scope, y, x).z).z


_DERIVATIVES: dict[str, Dydx] = {
    "BesselI0": lambda s, x, y: node(s, "BesselI1", x),
    "BesselI0e": lambda s, x, y: ops.Sub(s, node(s, "BesselI1e", x), ops.Mul(s, ops.Sign(s, x).y, y).z).z,
    # I1'(0) = 1/2 (TF's Python imputes 1: a recorded divergence)
    "BesselI1": lambda s, x, y: _where_x_is(s, x, 0.0, 0.5, _minus_y_over_x(s, node(s, "BesselI0", x), x, y)),
    "BesselI1e": lambda s, x, y: _where_x_is(s, x, 0.0, 0.5, ops.Sub(s, node(s, "BesselI0e", x), ops.Mul(
        s, y, ops.Add(s, ops.Sign(s, x).y, ops.Reciprocal(s, x).y).z).z).z),
    "BesselK0": lambda s, x, y: ops.Neg(s, node(s, "BesselK1", x)).y,
    "BesselK0e": lambda s, x, y: ops.Sub(s, y, node(s, "BesselK1e", x)).z,
    "BesselK1": lambda s, x, y: ops.Sub(s, ops.Neg(s, node(s, "BesselK0", x)).y, ops.Div(s, y, x).z).z,
    "BesselK1e": lambda s, x, y: ops.Sub(s, ops.Mul(s, y, ops.Sub(s, const_of(s, 1.0, x.type()),
                                                                   ops.Reciprocal(s, x).y).z).z,
                                         node(s, "BesselK0e", x)).z,
    "BesselJ0": lambda s, x, y: ops.Neg(s, node(s, "BesselJ1", x)).y,
    "BesselJ1": lambda s, x, y: _where_x_is(s, x, 0.0, 0.5, _minus_y_over_x(s, node(s, "BesselJ0", x), x, y)),
    "BesselY0": lambda s, x, y: ops.Neg(s, node(s, "BesselY1", x)).y,
    "BesselY1": lambda s, x, y: _minus_y_over_x(s, node(s, "BesselY0", x), x, y),
    "Dawsn": lambda s, x, y: ops.Sub(s, const_of(s, 1.0, x.type()),
                                     ops.Mul(s, ops.Mul(s, const_of(s, 2, x.type()), x).z, y).z).z,
    "Expint": lambda s, x, y: ops.Div(s, ops.Exp(s, x).y, x).z,
    "FresnelCos": lambda s, x, y: ops.Cos(s, ops.Mul(s, const_of(s, math.pi / 2, x.type()), ops.Square(s, x).y).z).y,
    "FresnelSin": lambda s, x, y: ops.Sin(s, ops.Mul(s, const_of(s, math.pi / 2, x.type()), ops.Square(s, x).y).z).y,
    "Spence": lambda s, x, y: _where_x_is(s, x, 1.0, -1.0, ops.Div(
        s, ops.Log(s, x).y, ops.Sub(s, const_of(s, 1, x.type()), x).z).z),
    "Digamma": lambda s, x, y: ops.Polygamma(s, const_of(s, 1, x.type()), x).z,
}


def _unary(dydx: Dydx) -> Callable[[Scope, Operation, list[Output]], list[Output]]:
    def grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
        dy = grad_inputs[0]
        s = scope.WithControlDependencies(dy)
        return [ops.Mul(scope, dy, dydx(s, op.input(0), op.output(0))).z]

    return grad


for _op, _dydx in _DERIVATIVES.items():
    register_gradient(_op)(_unary(_dydx))


# -- two and three arguments ---------------------------------------------------------------------------
def _gamma_density(scope: Scope, a: Output, x: Output) -> Output:
    """exp(-x + (a - 1) log x - lgamma(a)): d Igamma / dx, in log space as TF."""
    a_minus_1 = ops.Sub(scope, a, const_of(scope, 1, a.type())).z
    log_power = ops.Mul(scope, a_minus_1, ops.Log(scope, x).y).z
    log_density = ops.Sub(scope, ops.Add(scope, ops.Neg(scope, x).y, log_power).z, ops.Lgamma(scope, a).y).z
    return ops.Exp(scope, log_density).y


def _igamma_grads(scope: Scope, op: Operation, grad: Output) -> list[Output]:
    a, x = op.input(0), op.input(1)
    s = scope.WithControlDependencies(grad)
    partial_a = ops.IgammaGradA(s, a, x).z
    partial_x = _gamma_density(s, a, x)
    return binary_grad_common(scope, op, ops.Mul(scope, partial_a, grad).z, ops.Mul(scope, partial_x, grad).z)


@register_gradient("Igamma")
def _igamma_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    return _igamma_grads(scope, op, grad_inputs[0])


@register_gradient("Igammac")
def _igammac_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    da, dx = _igamma_grads(scope, op, grad_inputs[0])
    return [ops.Neg(scope, da).y, ops.Neg(scope, dx).y]


def _reduced_to(scope: Scope, gradient: Output, shape_of: Output, other: Output, first: bool) -> Output:
    """``gradient`` summed over the dimensions ``shape_of`` was broadcast along against ``other``."""
    s_this, s_other = ops.Shape(scope, shape_of).output, ops.Shape(scope, other).output
    args = ops.internal.BroadcastGradientArgs(scope, s_this, s_other) if first else \
        ops.internal.BroadcastGradientArgs(scope, s_other, s_this)
    axes = args.r0 if first else args.r1
    return ops.Reshape(scope, ops.Sum(scope, gradient, axes).output, s_this).output


@register_gradient("Betainc")
def _betainc_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """For x only: the beta density (TF has no derivative in a or b)."""
    a, b, x = op.input(0), op.input(1), op.input(2)
    one = const_of(scope, 1, a.type())
    log_beta = ops.Sub(scope, ops.Add(scope, ops.Lgamma(scope, a).y, ops.Lgamma(scope, b).y).z,
                       ops.Lgamma(scope, ops.Add(scope, a, b).z).y).z
    log_density = ops.Sub(scope, ops.Add(scope, ops.Xlog1py(scope, ops.Sub(scope, b, one).z, ops.Neg(scope, x).y).z,
                                         ops.Xlogy(scope, ops.Sub(scope, a, one).z, x).z).z, log_beta).z
    partial_x = ops.Exp(scope, log_density).y
    dx = _reduced_to(scope, ops.Mul(scope, partial_x, grad_inputs[0]).z, x, a, first=False)
    return [NoGradient(), NoGradient(), dx]


@register_gradient("Zeta")
def _zeta_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """For q only: -x zeta(x + 1, q)."""
    grad = grad_inputs[0]
    s = scope.WithControlDependencies(grad)
    x, q = op.input(0), op.input(1)
    partial_q = ops.Mul(s, ops.Neg(s, x).y, ops.Zeta(s, ops.Add(s, x, const_of(s, 1, x.type())).z, q).z).z
    return [NoGradient(), _reduced_to(scope, ops.Mul(scope, partial_q, grad).z, q, x, first=False)]


@register_gradient("Polygamma")
def _polygamma_grad(scope: Scope, op: Operation, grad_inputs: list[Output]) -> list[Output]:
    """For x only: polygamma(n + 1, x)."""
    grad = grad_inputs[0]
    s = scope.WithControlDependencies(grad)
    n, x = op.input(0), op.input(1)
    partial_x = ops.Polygamma(s, ops.Add(s, n, const_of(s, 1, n.type())).z, x).z
    return [NoGradient(), _reduced_to(scope, ops.Mul(scope, partial_x, grad).z, x, n, first=False)]
