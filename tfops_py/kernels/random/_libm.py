"""``log`` and ``sincos`` with the C library's bits, as TF's CPU random kernels compute them.

TF's Box-Muller and gamma samplers call the platform's ``logf``/``log`` and ``sincosf``/``sincos``.
NumPy's own SIMD ``log``/``sin``/``cos`` differ from those in the last bit for about one value in a
hundred (float32), so bit-exact results need the C library itself:

* ``log``: SciPy's ``xlogy(1, x)`` is ``1 * log(x)`` evaluated by the C library (``logf`` for float32);
* ``sincos``: the complex exponential ``exp(0 + i v)`` is ``(cos v, sin v)`` from the C library's
  ``cexpf``/``cexp``, which computes both with ``sincosf``/``sincos`` and multiplies by ``exp(0) = 1``;
* ``pow`` (float64): NumPy's ``float_power`` calls the C library (``power`` has SIMD code of its own).

No NumPy or SciPy function reaches the C library's float64 ``log1p`` (glibc's is not correctly rounded
and differs from NumPy's in the last bit for ~7% of inputs); the one kernel path that needs it (gamma
with alpha exactly one) uses NumPy's and says so.

Arrays in host memory (NumPy, array-api-strict, any namespace whose ``__dlpack_device__`` is the CPU) go
through these; arrays on a device use the namespace's own functions (CUDA's libm: TF's GPU kernels
do not match its CPU kernels there either).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special

_DLPACK_CPU = 1


def on_host(x: Any) -> bool:
    """Whether an array lives in host memory (its DLPack device is the CPU)."""
    if isinstance(x, np.ndarray):
        return True
    try:
        return int(x.__dlpack_device__()[0]) == _DLPACK_CPU
    except (AttributeError, TypeError):
        return False


def log(xp: Any, x: Any) -> Any:
    """The C library's ``log`` of a float32/float64 array (``logf`` for float32), element by element."""
    if xp is np:
        return scipy.special.xlogy(np.ones((), x.dtype), x)
    if on_host(x):
        host = np.from_dlpack(x)
        return xp.asarray(scipy.special.xlogy(np.ones((), host.dtype), host))
    return xp.log(x)


def power(xp: Any, x: Any, y: Any) -> Any:
    """The C library's ``pow`` on float64 arrays."""
    if xp is np:
        return np.float_power(x, y)
    if on_host(x):
        return xp.asarray(np.float_power(np.from_dlpack(x), np.from_dlpack(y)))
    return xp.pow(x, y)


def sincos(xp: Any, v: Any) -> tuple[Any, Any]:
    """``(sin v, cos v)`` of a finite float32/float64 array, from the C library's ``sincosf``/``sincos``."""
    if xp is np:
        z = np.empty(v.shape, np.complex64 if v.dtype == np.float32 else np.complex128)
        z.real = 0
        z.imag = v
        np.exp(z, out=z)
        return z.imag, z.real
    complex_dtype = xp.complex64 if v.dtype == xp.float32 else xp.complex128
    z = xp.exp(xp.astype(v, complex_dtype) * 1j)
    return xp.imag(z), xp.real(z)
