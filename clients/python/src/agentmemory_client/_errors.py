"""The errors a call raises: one type per family of reasons (the gRPC code they share).

::

    AgentMemoryError             code, reason, message, metadata, field, field_violations
    ├── InvalidArgumentError     INVALID_ARGUMENT, OUT_OF_RANGE: ``field`` names what to fix
    ├── UnauthenticatedError     UNAUTHENTICATED: no key, a bad, revoked or expired one
    ├── PermissionDeniedError    PERMISSION_DENIED: ADMIN_REQUIRED, AGENT_NOT_ALLOWED, ...
    ├── NotFoundError            NOT_FOUND: MEMORY_NOT_FOUND, RECEIPT_NOT_FOUND, ...
    ├── AlreadyExistsError       ALREADY_EXISTS: KEY_IN_USE, REQUEST_ID_REUSED, ...
    ├── FailedPreconditionError  FAILED_PRECONDITION: VERSION_CONFLICT, MEMORY_DISABLED, ...
    ├── ResourceExhaustedError   RESOURCE_EXHAUSTED: QUOTA_EXCEEDED, CAPACITY_EXCEEDED
    ├── UnavailableError         UNAVAILABLE: the gateway or a dependency of it is down
    ├── DeadlineExceededError    DEADLINE_EXCEEDED: the call's deadline passed
    └── InternalError            INTERNAL, UNKNOWN and any other code

The gateway puts a ``google.rpc.Status`` with an ``ErrorInfo`` (the stable UPPER_SNAKE
reason) and, for field errors, a ``BadRequest`` on every error; :func:`from_rpc_error`
reads them back (as libs/errors.py does for the services: the SDK never imports the
server's packages). A memory tool's refusal (a result with ``is_error``) carries the same
code, reason and metadata, and :func:`from_tool_result` maps it the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status


class AgentMemoryError(Exception):
    """A refused or failed call, with the gateway's stable reason."""

    def __init__(self, message: str, *, code: str, reason: str = "",
                 metadata: Mapping[str, str] | None = None,
                 field_violations: Mapping[str, str] | None = None) -> None:
        super().__init__(f"{reason or code}: {message}")
        #: The gRPC status code's name, e.g. ``"INVALID_ARGUMENT"``.
        self.code = code
        #: The stable UPPER_SNAKE reason, e.g. ``"VERSION_CONFLICT"`` (the code's name when
        #: the error came without one, as transport failures do).
        self.reason = reason or code
        self.message = message
        self.metadata = dict(metadata or {})
        #: field path -> what is wrong with it.
        self.field_violations = dict(field_violations or {})

    @property
    def field(self) -> str | None:
        """The request field the error is about, e.g. ``"token_budget"``, if any."""
        return next(iter(self.field_violations), None) or self.metadata.get("field")


class InvalidArgumentError(AgentMemoryError):
    pass


class UnauthenticatedError(AgentMemoryError):
    pass


class PermissionDeniedError(AgentMemoryError):
    pass


class NotFoundError(AgentMemoryError):
    pass


class AlreadyExistsError(AgentMemoryError):
    pass


class FailedPreconditionError(AgentMemoryError):
    pass


class ResourceExhaustedError(AgentMemoryError):
    pass


class UnavailableError(AgentMemoryError):
    pass


class DeadlineExceededError(AgentMemoryError):
    pass


class InternalError(AgentMemoryError):
    pass


_FAMILIES: dict[str, type[AgentMemoryError]] = {
    "INVALID_ARGUMENT": InvalidArgumentError,
    "OUT_OF_RANGE": InvalidArgumentError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "NOT_FOUND": NotFoundError,
    "ALREADY_EXISTS": AlreadyExistsError,
    "ABORTED": AlreadyExistsError,
    "FAILED_PRECONDITION": FailedPreconditionError,
    "RESOURCE_EXHAUSTED": ResourceExhaustedError,
    "UNAVAILABLE": UnavailableError,
    "DEADLINE_EXCEEDED": DeadlineExceededError,
}


def error(code: str, message: str, reason: str = "", metadata: Mapping[str, str] | None = None,
          field_violations: Mapping[str, str] | None = None) -> AgentMemoryError:
    family = _FAMILIES.get(code, InternalError)
    return family(message, code=code, reason=reason, metadata=metadata,
                  field_violations=field_violations)


def from_rpc_error(failure: grpc.RpcError) -> AgentMemoryError:
    """The error a failed gRPC call (sync or asyncio) stands for."""
    code: grpc.StatusCode = failure.code()  # type: ignore[attr-defined]
    message: str = failure.details() or ""  # type: ignore[attr-defined]
    reason, metadata, violations = "", {}, {}
    status = rpc_status.from_call(failure)  # type: ignore[arg-type]
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations = {v.field: v.description for v in bad.field_violations}
    return error(code.name, message, reason, metadata, violations)


def from_tool_result(result: Mapping[str, Any]) -> AgentMemoryError:
    """The error a memory tool's ``is_error`` result stands for."""
    violations = {str(v.get("field", "")): str(v.get("description", ""))
                  for v in result.get("fieldViolations") or ()}
    return error(str(result.get("code", "UNKNOWN")), str(result.get("message", "")),
                 str(result.get("reason", "")), result.get("metadata") or {}, violations)
