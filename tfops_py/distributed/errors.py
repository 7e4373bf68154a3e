"""How failures on the cluster reach the user: TF's error classes, never Dask's."""
from __future__ import annotations

from typing import Any

from tfops_py.errors import AbortedError, InternalError, OpError


def remote_error(future: Any) -> BaseException:
    if future.status == "cancelled":
        return AbortedError(f"the Dask task {future.key} was cancelled")
    exc = future.exception()
    if isinstance(exc, OpError):
        return exc
    if type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError"):
        return AbortedError(f"a worker was lost while running {future.key}: {exc}")
    return InternalError(f"{future.key} failed: {type(exc).__name__}: {exc}")


__all__ = ["remote_error"]
