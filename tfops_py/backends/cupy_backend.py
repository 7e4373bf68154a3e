"""The CuPy backend: the same kernels on an NVIDIA GPU, through array-api-compat's CuPy namespace.

CuPy is imported only when a session asks for it.  Errors are explicit: CuPy not
installed, no GPU visible, a device index out of range, a dtype CuPy lacks.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.backends.array_api import ArrayApiBackend
from tfops_py.errors import UnavailableError, UnimplementedError
from tfops_py.framework.dtypes import DataType

INSTALL_HINT = "pip install 'tfops_py[cuda12]'"


def _import_cupy() -> Any:
    try:
        import cupy  # pyright: ignore[reportMissingImports]  (optional: the cuda12 extra)
    except ImportError as e:
        raise UnavailableError(f"backend 'cupy' needs CuPy, which is not installed ({INSTALL_HINT}): {e}") from None
    return cupy


def gpu_count() -> int:
    """Visible CUDA devices (0 when CuPy or a driver is missing)."""
    try:
        cupy = _import_cupy()
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - any CUDA failure means no usable GPU
        return 0


class CupyBackend(ArrayApiBackend):
    """CuPy on one GPU.  Arrays are created and kernels run inside ``cupy.cuda.Device(device)``."""

    def __init__(self, device: int = 0):
        cupy = _import_cupy()
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:  # noqa: BLE001 - CUDA runtime errors vary by driver
            raise UnavailableError(f"backend 'cupy': no CUDA GPU is visible ({e})") from None
        if count == 0:
            raise UnavailableError("backend 'cupy': no CUDA GPU is visible")
        if not 0 <= device < count:
            raise UnavailableError(f"backend 'cupy': GPU:{device} does not exist ({count} visible)")
        try:
            from array_api_compat import cupy as xp  # pyright: ignore[reportMissingImports]
        except ImportError:
            raise UnavailableError(f"backend 'cupy' needs array-api-compat ({INSTALL_HINT})") from None
        super().__init__(xp)
        self.name = "cupy"
        self.device = device
        self._cupy = cupy

    def device_context(self) -> Any:
        return self._cupy.cuda.Device(self.device)

    def dtype(self, dt: DataType, ctx: Any = None) -> Any:
        if dt == DataType.DT_BFLOAT16:
            raise UnimplementedError("data type DT_BFLOAT16 is not supported by the cupy backend (CuPy has no "
                                     "bfloat16); run this node on the CPU (WithDevice('/CPU:0'))",
                                     op_type=getattr(ctx, "op_type", None), node_name=getattr(ctx, "node_name", None))
        return super().dtype(dt, ctx)

    def from_numpy(self, value: np.ndarray, ctx: Any = None) -> Any:
        if value.dtype == object:  # strings stay on the host
            return value
        if value.dtype.name == "bfloat16":
            self.dtype(DataType.DT_BFLOAT16, ctx)  # raises the clear error
        with self._cupy.cuda.Device(self.device):
            return self._cupy.asarray(value)

    def to_numpy(self, x: Any) -> np.ndarray:
        if isinstance(x, np.ndarray):
            return x
        return self._cupy.asnumpy(x)

    def bitcast(self, x: Any, dt: DataType, shape: tuple[int, ...], ctx: Any = None) -> Any:
        with self._cupy.cuda.Device(self.device):
            return self._cupy.ascontiguousarray(x).view(self.dtype(dt, ctx)).reshape(shape)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CupyBackend) and other.device == self.device

    def __hash__(self) -> int:
        return hash(("cupy", self.device))
