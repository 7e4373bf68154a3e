"""What every backend provides: an array namespace plus the few primitives the array API lacks."""
from __future__ import annotations

from typing import Any

import numpy as np

from tfops_py.errors import UnimplementedError
from tfops_py.framework.dtypes import DataType


class Backend:
    """An array namespace ``xp`` bound to TF's dtypes.

    Subclasses override the primitives where their library has a faster path;
    the generic versions use only the array API standard.
    """

    name: str = "generic"

    def __init__(self, xp: Any):
        self.xp = xp

    # -- dtypes ---------------------------------------------------------------------------
    def dtype(self, dt: DataType, ctx: Any = None) -> Any:
        try:
            return getattr(self.xp, np.dtype(dt.numpy_dtype).name)
        except (AttributeError, KeyError, TypeError):
            raise UnimplementedError(
                f"data type {dt.name} is not supported by the {self.name} backend",
                op_type=getattr(ctx, "op_type", None), node_name=getattr(ctx, "node_name", None)) from None

    def asarray(self, value: Any, dt: DataType, ctx: Any = None) -> Any:
        return self.xp.asarray(np.asarray(value, dtype=dt.numpy_dtype), dtype=self.dtype(dt, ctx))

    def from_numpy(self, value: np.ndarray, ctx: Any = None) -> Any:
        """Move a host array (already of the right dtype) to this backend."""
        from tfops_py.framework.dtypes import as_datatype

        return self.xp.asarray(value, dtype=self.dtype(as_datatype(value.dtype), ctx))

    def to_numpy(self, x: Any) -> np.ndarray:
        return np.asarray(x)

    def bitcast(self, x: Any, dt: DataType, shape: tuple[int, ...], ctx: Any = None) -> Any:
        """``x``'s bytes read as ``dt`` in ``shape`` (Bitcast).  The array API has no bitcast: generic
        namespaces go through the host; NumPy and CuPy reinterpret in place."""
        host = np.ascontiguousarray(self.to_numpy(x))
        return self.from_numpy(host.view(dt.numpy_dtype).reshape(shape), ctx)

    def __repr__(self) -> str:
        return f"<tfops_py backend {self.name}>"
