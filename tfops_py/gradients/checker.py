"""Numeric gradient checking (TF's ``gradient_checker.h``): symbolic vs finite-difference Jacobians.

``ComputeGradientError(scope, xs, x_shapes, ys, y_shapes)`` builds the gradient of ``ys`` with
respect to ``xs`` with :func:`AddSymbolicGradients` (the upstream gradients are placeholders fed
with unit vectors), runs it in a ClientSession, and compares it with central differences
``(y(x + delta) - y(x - delta)) / 2 delta``.  It returns the largest absolute difference between
the two Jacobians.  C++'s other overload, ``ComputeGradientError(scope, x, x_init_value, y,
y_shape)``, is the same call with one x given by its value.

Complex xs and ys are supported as in TF: each complex element is two real ones (real part, then
imaginary part), so the Jacobian has two rows per complex x element (perturbed by ``delta`` and
``i * delta``) and two columns per complex y element (back-propagated unit ``1`` and ``i``).
Unlike TF, whose loop keeps only the last Jacobian pair's error, the error is the largest over
all of them (NaN wins).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tfops_py import ops
from tfops_py.client.session import ClientSession
from tfops_py.errors import InternalError, InvalidArgumentError, UnimplementedError
from tfops_py.framework.operation import Output, as_output
from tfops_py.framework.scope import Scope
from tfops_py.gradients.builder import AddSymbolicGradients


def _outputs(values: Sequence[Any], what: str) -> list[Output]:
    outs = []
    for v in values:
        o = as_output(v)
        if o is None or o.node() is None:
            raise InvalidArgumentError(f"gradient checker: {what} must be Outputs, got {v!r}")
        if not (o.type().is_floating or o.type().is_complex):
            raise UnimplementedError(f"gradient checker: {what} must be real floating point or complex, "
                                     f"{o.name()} is {o.type().short_name}")
        outs.append(o)
    return outs


def _stride(o: Output) -> int:
    """Jacobian rows/columns per element: 2 for complex (real and imaginary parts), else 1."""
    return 2 if o.type().is_complex else 1


def _units(o: Output) -> tuple[complex, ...]:
    return (1.0, 1j) if o.type().is_complex else (1.0,)


def _parts(values: np.ndarray, complex_: bool) -> np.ndarray:
    """Flat real Jacobian entries: ``[re0, im0, re1, im1, ...]`` for complex values."""
    flat = np.asarray(values).reshape(-1)
    if not complex_:
        return flat.astype(np.float64)
    return np.stack([np.real(flat), np.imag(flat)], axis=-1).reshape(-1).astype(np.float64)


def ComputeJacobians(scope: Scope, xs: Sequence[Any], x_shapes: Sequence[Sequence[int]], ys: Sequence[Any],
                     y_shapes: Sequence[Sequence[int]], x_init_values: Sequence[Any] | None = None,
                     delta: float = 1e-3, *, backend: Any = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The theoretical and numeric Jacobians, both ``[x entries, y entries]`` float64.

    Row ``r`` belongs to one element (or, for complex x, one real or imaginary part) of one x,
    column ``c`` likewise to one y (xs and ys flattened and concatenated in order).  Unset
    ``x_init_values`` are drawn uniformly from [-1, 1) with ``seed`` (both parts of complex values).
    """
    xs_, ys_ = _outputs(xs, "xs"), _outputs(ys, "ys")
    if len(x_shapes) != len(xs_) or len(y_shapes) != len(ys_):
        raise InvalidArgumentError("gradient checker: need one shape per x and per y")
    rng = np.random.default_rng(seed)
    x_vals = []
    for i, (x, shape) in enumerate(zip(xs_, x_shapes)):
        given = None if x_init_values is None else x_init_values[i]
        if given is None:
            value = rng.uniform(-1.0, 1.0, size=tuple(shape))
            if x.type().is_complex:
                value = value + 1j * rng.uniform(-1.0, 1.0, size=tuple(shape))
        else:
            value = given
        arr = np.array(value, dtype=x.type().numpy_dtype)
        if arr.shape != tuple(shape):
            raise InvalidArgumentError(f"gradient checker: x_init_values[{i}] has shape {list(arr.shape)}, "
                                       f"x_shapes[{i}] is {list(shape)}")
        x_vals.append(arr)
    dys = [ops.Placeholder(scope, y.type(), shape=list(s)).output for y, s in zip(ys_, y_shapes)]
    dxs = AddSymbolicGradients(scope, ys_, xs_, dys)
    sess = ClientSession(scope, backend=backend, fetch_numpy=True)

    x_sizes = [a.size * _stride(x) for a, x in zip(x_vals, xs_)]
    y_sizes = [int(np.prod(s, dtype=np.int64)) * _stride(y) for s, y in zip(y_shapes, ys_)]
    x_off = np.concatenate([[0], np.cumsum(x_sizes)]).astype(int)
    y_off = np.concatenate([[0], np.cumsum(y_sizes)]).astype(int)
    jac_t = np.zeros((x_off[-1], y_off[-1]))
    jac_n = np.zeros((x_off[-1], y_off[-1]))
    base_feeds: dict[Output, Any] = dict(zip(xs_, x_vals))

    live = [(i, dx) for i, dx in enumerate(dxs) if dx.node() is not None]
    for j, (dy, y, shape) in enumerate(zip(dys, ys_, y_shapes)):
        zero_dys = {d: np.zeros(tuple(s), d.type().numpy_dtype) for d, s in zip(dys, y_shapes)}
        n = int(np.prod(shape, dtype=np.int64))
        for r in range(n):
            for u, unit_value in enumerate(_units(y)):
                unit = np.zeros(n, dy.type().numpy_dtype)
                unit[r] = unit_value
                feeds = {**base_feeds, **zero_dys, dy: unit.reshape(tuple(shape))}
                values = sess.Run(feeds, [dx for _, dx in live]) if live else []
                for (i, _dx), v in zip(live, values):
                    if tuple(np.shape(v)) != tuple(x_vals[i].shape):
                        raise InternalError(f"Gradient for input {i} expected shape {list(x_vals[i].shape)} but "
                                            f"was {list(np.shape(v))}")
                    col = y_off[j] + r * _stride(y) + u
                    jac_t[x_off[i]:x_off[i + 1], col] = _parts(v, xs_[i].type().is_complex)

    for i, x in enumerate(xs_):
        flat = x_vals[i].reshape(-1)
        for c in range(flat.size):
            for u, unit_value in enumerate(_units(x)):
                outs = []
                for sign in (1.0, -1.0):
                    moved = flat.copy()
                    moved[c] += sign * unit_value * delta
                    feeds = {**base_feeds, x: moved.reshape(x_vals[i].shape)}
                    outs.append(sess.Run(feeds, ys_))
                row = x_off[i] + c * _stride(x) + u
                for j, y in enumerate(ys_):
                    diff = (np.asarray(outs[0][j], np.complex128 if y.type().is_complex else np.float64)
                            - np.asarray(outs[1][j])) / (2 * delta)
                    jac_n[row, y_off[j]:y_off[j + 1]] = _parts(diff, y.type().is_complex)
    return jac_t, jac_n


def _single(value: Any) -> bool:
    """One Output (or single-output op), as opposed to a list of them."""
    return not isinstance(value, (list, tuple)) and as_output(value) is not None


def ComputeGradientError(scope: Scope, xs: Any, x_shapes: Any, ys: Any, y_shapes: Any,
                         x_init_values: Sequence[Any] | None = None, delta: float = 1e-3, *,
                         backend: Any = None, seed: int = 0) -> float:
    """Max absolute difference between the symbolic and the finite-difference Jacobian of ys w.r.t. xs.

    ``ComputeGradientError(scope, xs, x_shapes, ys, y_shapes)``, or C++'s single-x overload
    ``ComputeGradientError(scope, x, x_init_value, y, y_shape)``.
    """
    if _single(xs):
        x_init = np.asarray(x_shapes)
        xs, x_shapes, x_init_values = [xs], [x_init.shape], [x_init]
        ys, y_shapes = ([ys], [y_shapes]) if _single(ys) else (ys, y_shapes)
    jac_t, jac_n = ComputeJacobians(scope, xs, x_shapes, ys, y_shapes, x_init_values, delta,
                                    backend=backend, seed=seed)
    if not jac_t.size:
        return 0.0
    err = np.abs(jac_t - jac_n)
    return float("nan") if np.isnan(err).any() else float(err.max())
