"""Typing helpers shared by kernel modules (annotations only; nothing here runs).

* ``Dims``: a shape while checking it: ``None`` for an unknown rank, ``-1`` for an unknown dimension;
* ``Dims4``: the four dimensions of an image batch (NHWC), ``-1`` where unknown;
* ``Fail``: raises the op's ``InvalidArgumentError`` with a message (``ctx.invalid_argument``);
* ``CheckContext``: what a shape function's ``InferenceContext`` and a kernel's ``KernelContext`` share,
  so that one check runs at build time on what is known and again in the kernel.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Optional, Protocol

if TYPE_CHECKING:
    from tfops_py.errors import OpError

Dims = Optional[Sequence[int]]
Dims4 = tuple[int, int, int, int]
Fail = Callable[[str], NoReturn]


class CheckContext(Protocol):
    """The node being checked: its op type, name and attrs, and how to raise its errors."""

    op_type: str
    node_name: str
    attrs: dict[str, Any]

    def error(self, cls: type[OpError], message: str) -> OpError: ...

    def invalid_argument(self, message: str) -> NoReturn: ...
