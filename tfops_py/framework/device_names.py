"""TF's full device names: ``/job:<name>/replica:<r>/task:<t>/device:<TYPE>:<id>``.

Every part is optional (``/job:ps``, ``/job:worker/task:1/device:GPU:0``, ``/cpu:0``), as in TF's
``DeviceNameUtils::ParseFullName``.  The distributed session splits a node's device into the task that
runs it (job and task) and the device inside that task's process (what the local session's placer reads).
"""
from __future__ import annotations

import re
from typing import NamedTuple

from tfops_py.errors import InvalidArgumentError

_PART = re.compile(r"(?:job:(?P<job>[A-Za-z][\w.-]*)|replica:(?P<replica>\d+|\*)|task:(?P<task>\d+|\*)"
                   r"|(?:device:)?(?P<type>[A-Za-z][A-Za-z_]*):(?P<id>\d+|\*)|(?P<bare>cpu|gpu|CPU|GPU))$")


class DeviceName(NamedTuple):
    job: str | None
    replica: int | None
    task: int | None
    device: str  # "" or the local device, such as "/device:GPU:1"


def parse_device_name(device: str) -> DeviceName:
    """The parts of a device string; InvalidArgumentError (TF's message) if it is malformed."""
    job = replica = task = None
    local = ""
    for part in filter(None, device.split("/")):
        m = _PART.match(part)
        if m is None:
            raise InvalidArgumentError(f"Malformed device specification '{device}'")
        if m.group("job"):
            job = m.group("job")
        elif m.group("replica"):
            replica = None if m.group("replica") == "*" else int(m.group("replica"))
        elif m.group("task"):
            task = None if m.group("task") == "*" else int(m.group("task"))
        elif m.group("bare"):
            local = f"/device:{m.group('bare').upper()}:0"
        else:
            local = f"/device:{m.group('type').upper()}:{m.group('id')}"
    return DeviceName(job, replica, task, local)


def task_of(device: str) -> tuple[str, int] | None:
    """``("ps", 0)`` for ``"/job:ps/task:0/device:CPU:0"`` (task 0 when only the job is named); None without a job."""
    name = parse_device_name(device) if device else None
    if name is None or name.job is None:
        return None
    return name.job, name.task or 0


def task_device_name(task: tuple[str, int]) -> str:
    return f"/job:{task[0]}/replica:0/task:{task[1]}"


__all__ = ["DeviceName", "parse_device_name", "task_device_name", "task_of"]
