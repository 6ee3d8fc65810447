"""Domain errors and their single mapping to gRPC status.

::

    DomainError                 (reason: stable UPPER_SNAKE string)
    ├── InvalidArgument         INVALID_ARGUMENT, names the field (BadRequest)
    ├── OutOfRange              OUT_OF_RANGE, names the field
    ├── NotFound                NOT_FOUND
    ├── AlreadyExists           ALREADY_EXISTS
    ├── FailedPrecondition      FAILED_PRECONDITION
    ├── ResourceExhausted       RESOURCE_EXHAUSTED
    ├── PermissionDenied        PERMISSION_DENIED
    ├── Unauthenticated         UNAUTHENTICATED
    ├── Unimplemented           UNIMPLEMENTED
    └── Unavailable             UNAVAILABLE

Services raise these; the server interceptor turns them into a
``google.rpc.Status`` carrying an ``ErrorInfo`` (and a ``BadRequest`` for field
errors) through :func:`to_grpc_status`. Clients read them back with
:func:`error_details`.

What a client is shown of an error, on every surface (gRPC, REST, MCP, the web
page), goes through :func:`shown`, which bounds it whatever the raiser put in:
gRPC fails a call whose trailers pass 8 KiB with its own RESOURCE_EXHAUSTED
"Stream removed", losing the error. Messages that name a client's value give it
through :func:`shorten`, so that they stay readable too.

An UNAVAILABLE a server raises itself (a dependency of its own is down) carries
gRPC's retry pushback, so clients' retry policies (``libs.clients``) do not send
the call to another replica that has the same dependency; only one raised with
``elsewhere=True`` (this process is the wrong one to ask: a journal standby, a
fenced writer, a process shutting down) is left for them to retry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

ERROR_DOMAIN = "agentmemory"


class DomainError(Exception):
    """An error the caller can act on, with a stable machine-readable reason."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL
    default_reason = "INTERNAL"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or self.default_reason
        self.metadata = dict(metadata or {})

    def field_violations(self) -> list[tuple[str, str]]:
        return []


class _FieldError(DomainError):
    def __init__(self, field_path: str, description: str, *, reason: str | None = None,
                 metadata: Mapping[str, str] | None = None) -> None:
        super().__init__(
            f"{field_path}: {description}", reason=reason,
            metadata={**(metadata or {}), "field": field_path},
        )
        self.field = field_path
        self.description = description

    def field_violations(self) -> list[tuple[str, str]]:
        return [(self.field, self.description)]


class InvalidArgument(_FieldError):
    code = grpc.StatusCode.INVALID_ARGUMENT
    default_reason = "INVALID_FIELD"


class OutOfRange(_FieldError):
    code = grpc.StatusCode.OUT_OF_RANGE
    default_reason = "OUT_OF_RANGE"


class NotFound(DomainError):
    code = grpc.StatusCode.NOT_FOUND
    default_reason = "NOT_FOUND"


class AlreadyExists(DomainError):
    code = grpc.StatusCode.ALREADY_EXISTS
    default_reason = "ALREADY_EXISTS"


class FailedPrecondition(DomainError):
    code = grpc.StatusCode.FAILED_PRECONDITION
    default_reason = "FAILED_PRECONDITION"


class ResourceExhausted(DomainError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    default_reason = "RESOURCE_EXHAUSTED"


class PermissionDenied(DomainError):
    code = grpc.StatusCode.PERMISSION_DENIED
    default_reason = "PERMISSION_DENIED"


class Unauthenticated(DomainError):
    code = grpc.StatusCode.UNAUTHENTICATED
    default_reason = "UNAUTHENTICATED"


class Unimplemented(DomainError):
    code = grpc.StatusCode.UNIMPLEMENTED
    default_reason = "UNIMPLEMENTED"


class Unavailable(DomainError):
    code = grpc.StatusCode.UNAVAILABLE
    default_reason = "UNAVAILABLE"

    def __init__(self, message: str, *, reason: str | None = None,
                 metadata: Mapping[str, str] | None = None, elsewhere: bool = False) -> None:
        super().__init__(message, reason=reason, metadata=metadata)
        #: Another replica may serve the call: clients may retry it there at once.
        self.elsewhere = elsewhere


#: gRPC's retry pushback trailer; a negative value tells the client not to retry.
RETRY_PUSHBACK_HEADER = "grpc-retry-pushback-ms"


@dataclass(frozen=True)
class _Status(grpc.Status):
    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple


def to_grpc_status(error: DomainError) -> grpc.Status:
    """The one place a domain error becomes a gRPC status."""
    public = shown(error)
    status = rpc_status.to_status(status_pb2.Status(
        code=getattr(code_pb2, public.code.name),
        message=public.message,
        details=[_pack(d) for d in _detail_messages(public)],
    ))
    if error.code != grpc.StatusCode.UNAVAILABLE or getattr(error, "elsewhere", False):
        return status
    return _Status(status.code, status.details,
                   (*status.trailing_metadata, (RETRY_PUSHBACK_HEADER, "-1")))


def _detail_messages(error: ErrorDetails) -> list:
    details = [error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN,
                                           metadata=error.metadata)]
    if error.field_violations:
        details.append(error_details_pb2.BadRequest(field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=f, description=d)
            for f, d in error.field_violations.items()]))
    return details


def internal_error(request_id: str) -> DomainError:
    """What a caller sees for an unexpected failure: no internals, a request id."""
    return DomainError(f"internal error (request id {request_id})",
                       metadata={"request_id": request_id})


@dataclass(frozen=True)
class ErrorDetails:
    """A gRPC error as a client sees it, with the rich details decoded."""

    code: grpc.StatusCode
    message: str
    reason: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    field_violations: dict[str, str] = field(default_factory=dict)


def error_details(error: grpc.RpcError) -> ErrorDetails:
    """Decode the status of a failed call, including ErrorInfo and BadRequest."""
    code = error.code()
    message = error.details() or ""
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except ValueError:  # details of another status than the call's (gRPC's own failure)
        status = None
    if status is None:
        return ErrorDetails(code, message)
    reason, metadata, violations = "", {}, {}
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason, metadata = info.reason, dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            violations = {v.field: v.description for v in bad.field_violations}
    return ErrorDetails(code, message, reason, metadata, violations)


# -- what a client is shown -------------------------------------------------------
# A status carries its message twice: percent-encoded in grpc-message (up to three
# bytes a byte) and, with the details, base64-encoded in grpc-status-details-bin (four
# bytes per three). At these sizes (UTF-8 bytes) the trailers stay under 6 KiB, below
# the 8 KiB past which gRPC refuses them: 3 * 768 + 4/3 * (768 + 1536) + headers.
MAX_MESSAGE_BYTES = 768
#: The ErrorInfo and BadRequest together, serialized; past it, details are dropped from
#: the end (see :func:`shown`).
MAX_DETAILS_BYTES = 1536
_MAX_NAME_BYTES = 64  # a reason or a metadata key
_MAX_VALUE_BYTES = 256  # a metadata value or a field path
_MAX_DESCRIPTION_BYTES = 512
_SHORTENED_CHARS = 40


def shown(error: DomainError) -> ErrorDetails:
    """What any client is shown of ``error``: every string clipped to its size and the
    details to their budget."""
    public = ErrorDetails(
        error.code, clip(error.message, MAX_MESSAGE_BYTES), clip(error.reason, _MAX_NAME_BYTES),
        {clip(k, _MAX_NAME_BYTES): clip(v, _MAX_VALUE_BYTES) for k, v in error.metadata.items()},
        {clip(f, _MAX_VALUE_BYTES): clip(d, _MAX_DESCRIPTION_BYTES)
         for f, d in error.field_violations()})
    violations, metadata = public.field_violations, public.metadata
    while sum(d.ByteSize() for d in _detail_messages(public)) > MAX_DETAILS_BYTES:
        # The first violation names the field: the others go first, then metadata.
        shorter = violations if len(violations) > 1 or not metadata else metadata
        shorter.pop(next(reversed(shorter)))
    return public


def as_json(error: DomainError) -> dict:
    """The error in JSON, as REST bodies, MCP error results and tool results carry it:
    what the gRPC status carries, bounded alike::

        {"code": "INVALID_ARGUMENT", "reason": "INVALID_FIELD", "message": "runId: required",
         "metadata": {"field": "runId"},
         "fieldViolations": [{"field": "runId", "description": "required"}]}
    """
    public = shown(error)
    return {"code": public.code.name, "reason": public.reason, "message": public.message,
            "metadata": public.metadata,
            "fieldViolations": [{"field": field, "description": description}
                                for field, description in public.field_violations.items()]}


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, ending in "..." when cut."""
    data = text.encode("utf-8", "replace")
    if len(data) > limit:
        data = data[:limit - 3] + b"..."
    return data.decode("utf-8", "ignore")


def shorten(text: str) -> str:
    """``text`` (what a client sent) for a message that names it: the start of a long
    one and its length."""
    if len(text) <= _SHORTENED_CHARS:
        return text
    return f"{text[:_SHORTENED_CHARS]}... ({len(text):,} characters)"


class _Relayed(DomainError):
    """An error another service returned, relayed with its code, reason and fields."""

    def __init__(self, details: ErrorDetails) -> None:
        super().__init__(details.message, reason=details.reason or details.code.name,
                         metadata=details.metadata)
        self.code = details.code
        self._violations = list(details.field_violations.items())

    def field_violations(self) -> list[tuple[str, str]]:
        return self._violations


def relayed(error: grpc.RpcError) -> DomainError:
    return _Relayed(error_details(error))


def from_details(details: ErrorDetails) -> DomainError:
    """The error these details describe (a relayed or reworded one)."""
    return _Relayed(details)


def _pack(message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed
