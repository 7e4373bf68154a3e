"""SciPy's special functions on any backend: NumPy calls ``scipy.special``, CuPy ``cupyx.scipy.special``
where it has the function, and any other array namespace goes through the host.

The host round trip (``backend.to_numpy`` → SciPy → ``backend.from_numpy``) is the documented path for
namespaces without special functions (array-api-strict, or a library without a SciPy twin): one copy
each way of the float64 arrays.  Every function here takes and returns float64 arrays of the session's
backend; callers apply TF's domain rules around the values.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special

from tfops_py.kernels._parallel import parallel_for
from tfops_py.kernels.registry import KernelContext


def _fresnel_sin(x: Any) -> Any:
    return scipy.special.fresnel(x)[0]


def _fresnel_cos(x: Any) -> Any:
    return scipy.special.fresnel(x)[1]


# Functions that are not a plain ``scipy.special.<name>`` (SciPy returns both Fresnel integrals at once).
_COMPOSED: dict[str, Callable[..., Any]] = {"fresnel_sin": _fresnel_sin, "fresnel_cos": _fresnel_cos}


def _numpy_function(name: str) -> Callable[..., Any]:
    return _COMPOSED.get(name) or getattr(scipy.special, name)


def _cupy_function(name: str) -> Callable[..., Any] | None:
    """The cupyx.scipy.special twin of ``name`` (unverified without a GPU: None when CuPy lacks it)."""
    try:
        import cupyx.scipy.special as cupy_special  # pyright: ignore[reportMissingImports]  (the cuda12 extra)
    except ImportError:
        return None
    if name in _COMPOSED:
        fresnel = getattr(cupy_special, "fresnel", None)
        if fresnel is None:
            return None
        return (lambda x: fresnel(x)[0]) if name == "fresnel_sin" else (lambda x: fresnel(x)[1])
    return getattr(cupy_special, name, None)


_CHUNK = 1 << 15  # elements: below this one call, above it chunks on the worker threads


def _on_every_core(fn: Callable[..., Any], args: tuple) -> np.ndarray:
    """``fn(*args)`` for SciPy ufuncs (which release the GIL): chunks of equal-shaped inputs on every core."""
    shape = np.shape(args[0])
    size = int(np.prod(shape))
    with np.errstate(all="ignore"):
        if size < 2 * _CHUNK or any(np.shape(a) != shape for a in args):
            return np.asarray(fn(*args))
        flat = [np.ascontiguousarray(a).reshape(-1) for a in args]
        out = np.empty(size, dtype=np.result_type(*flat))

        def run(start: int, stop: int) -> None:
            with np.errstate(all="ignore"):  # per thread: the error state does not cross threads
                out[start:stop] = fn(*(a[start:stop] for a in flat))

        parallel_for(run, size, min_size=_CHUNK)
    return out.reshape(shape)


def special(ctx: KernelContext, name: str, *args: Any) -> Any:
    """``scipy.special.<name>(*args)`` (or a composed function named in ``_COMPOSED``) on float64 arrays of
    ``ctx``'s backend; NaN/inf results come back without warnings."""
    backend = ctx.backend
    if backend.name == "numpy":
        return _on_every_core(_numpy_function(name), args)
    if backend.name == "cupy":
        fn = _cupy_function(name)
        if fn is not None:
            return fn(*args)
    hosts = [backend.to_numpy(a) for a in args]
    with np.errstate(all="ignore"):
        out = np.asarray(_numpy_function(name)(*hosts), dtype=np.float64)
    return backend.from_numpy(out, ctx)
