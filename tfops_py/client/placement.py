"""Device placement: which backend runs each node.

A node without a device runs on the session's backend.  ``/CPU:k`` runs on NumPy
(host) and ``/GPU:k`` on CuPy device k, unless the session's ``devices`` mapping
says otherwise (keys ``"GPU:1"`` or ``"GPU"``; values are backend specs).  The
assigned device (``WithAssignedDevice``) wins over the requested one.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfops_py.backends import get_backend
from tfops_py.backends.base import Backend
from tfops_py.errors import InvalidArgumentError, OpError
from tfops_py.framework.device_names import parse_device_name
from tfops_py.framework.graph import Node

def parse_device(device: str) -> tuple[str, int] | None:
    """``("GPU", 1)`` for ``"/job:w/device:GPU:1"``; None for an empty string or one naming no device type
    (``"/job:ps/task:0"``: the job and task are the distributed session's business)."""
    if not device:
        return None
    local = parse_device_name(device).device
    if not local:
        return None
    kind, _, index = local[len("/device:"):].rpartition(":")
    if kind not in ("CPU", "GPU"):
        raise InvalidArgumentError(f"Malformed device specification '{device}': tfops_py runs CPU and GPU devices")
    return kind, 0 if index == "*" else int(index)


def _default_backend_for(kind: str, index: int) -> Backend:
    if kind == "CPU":
        return get_backend("numpy")
    from tfops_py.backends.cupy_backend import CupyBackend

    return CupyBackend(index)


class Placer:
    """Maps nodes to backends, making one backend object per device and reusing it."""

    def __init__(self, default: Backend, devices: Mapping[str, Any] | None, allow_soft_placement: bool):
        self.default = default
        self._devices = {k.strip("/").upper().replace("DEVICE:", ""): v for k, v in (devices or {}).items()}
        self._soft = allow_soft_placement
        self._cache: dict[tuple[str, int], Backend] = {}

    def backend_for(self, node: Node) -> Backend:
        parsed = parse_device(node.device)
        if parsed is None:
            return self.default
        if parsed not in self._cache:
            self._cache[parsed] = self._resolve(node, *parsed)
        return self._cache[parsed]

    def _resolve(self, node: Node, kind: str, index: int) -> Backend:
        spec = self._devices.get(f"{kind}:{index}", self._devices.get(kind))
        try:
            if spec is not None:
                return get_backend(spec)
            if kind == "CPU" and self.default.name == "numpy":
                return self.default
            if kind == "GPU" and self.default.name == "cupy" and getattr(self.default, "device", 0) == index:
                return self.default
            return _default_backend_for(kind, index)
        except OpError as e:
            if self._soft:
                return self.default
            raise InvalidArgumentError(
                f"Cannot assign a device for operation {node.name}: could not satisfy explicit device "
                f"specification '{node.device}' ({e.message}); pass allow_soft_placement=True to fall back "
                f"to the session's {self.default.name} backend", op_type=node.op, node_name=node.name) from None
