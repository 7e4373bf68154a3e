"""TensorFlow's error classes (``tensorflow/core/protobuf/error_codes.proto``), raised by tfops_py.

Every error carries the TF status ``code`` and, where one is involved, the op type
and node name, so a message reads ``FusedBatchNormGrad node 'g': x and y_backprop
must have same shape, ...``.
"""
from __future__ import annotations

import enum


class Code(enum.IntEnum):
    """``tensorflow::error::Code`` values."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class OpError(Exception):
    """Base class of every tfops_py error; mirrors ``tf.errors.OpError``."""

    code: Code = Code.UNKNOWN

    def __init__(self, message: str, *, op_type: str | None = None, node_name: str | None = None,
                 defined_at: tuple[str, int] | None = None):
        self.message = message
        self.op_type = op_type
        self.node_name = node_name
        # Where the user's code built the node (file, line): set on errors raised while a graph runs.
        self.defined_at = defined_at
        super().__init__(self._render())

    def _render(self) -> str:
        if self.node_name is not None:
            text = f"{self.op_type} node '{self.node_name}': {self.message}"
        elif self.op_type is not None:
            text = f"{self.op_type}: {self.message}"
        else:
            text = self.message
        return text

    def __str__(self) -> str:
        return self._render()


class CancelledError(OpError):
    code = Code.CANCELLED


class UnknownError(OpError):
    code = Code.UNKNOWN


class InvalidArgumentError(OpError):
    code = Code.INVALID_ARGUMENT


class DeadlineExceededError(OpError):
    code = Code.DEADLINE_EXCEEDED


class NotFoundError(OpError):
    code = Code.NOT_FOUND


class AlreadyExistsError(OpError):
    code = Code.ALREADY_EXISTS


class PermissionDeniedError(OpError):
    code = Code.PERMISSION_DENIED


class ResourceExhaustedError(OpError):
    code = Code.RESOURCE_EXHAUSTED


class FailedPreconditionError(OpError):
    code = Code.FAILED_PRECONDITION


class AbortedError(OpError):
    code = Code.ABORTED


class OutOfRangeError(OpError):
    code = Code.OUT_OF_RANGE


class UnimplementedError(OpError):
    code = Code.UNIMPLEMENTED


class InternalError(OpError):
    code = Code.INTERNAL


class UnavailableError(OpError):
    code = Code.UNAVAILABLE


class DataLossError(OpError):
    code = Code.DATA_LOSS


class UnauthenticatedError(OpError):
    code = Code.UNAUTHENTICATED


_BY_CODE: dict[Code, type[OpError]] = {
    cls.code: cls for cls in OpError.__subclasses__()
}


def error_class(code: Code | int) -> type[OpError]:
    """The exception class for a status code (``OpError`` itself for unknown codes)."""
    return _BY_CODE.get(Code(code), OpError)


__all__ = ["Code", "error_class", "OpError", "CancelledError", "UnknownError", "InvalidArgumentError",
           "DeadlineExceededError", "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
           "ResourceExhaustedError",
           "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
           "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError"]
