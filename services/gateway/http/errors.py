"""Domain errors as HTTP responses: the one mapping every HTTP route uses.

The status follows the canonical gRPC -> HTTP mapping of google.rpc.Code (a
few reasons have a more precise status of their own); the JSON body carries
what the gRPC status carries: the code, the stable reason, the message, the
ErrorInfo metadata and the field violations::

    {"code": "INVALID_ARGUMENT", "reason": "INVALID_FIELD",
     "message": "caller.agent_id: required", "metadata": {"field": "caller.agent_id"},
     "fieldViolations": [{"field": "caller.agent_id", "description": "required"}]}
"""

from __future__ import annotations

from typing import Any

import grpc
from starlette.responses import JSONResponse

from libs.errors import DomainError, as_json

_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
# Reasons whose HTTP status says more than their gRPC code's.
_STATUS_BY_REASON = {
    "REQUEST_TOO_LARGE": 413,
    "METHOD_NOT_ALLOWED": 405,
    # Seed 002: a budget that cannot hold the platform rules and tenant floors.
    "CONTEXT_BUDGET_TOO_SMALL": 422,
}


def status(error: DomainError) -> int:
    return _STATUS_BY_REASON.get(error.reason) or _STATUS.get(error.code, 500)


def body(error: DomainError) -> dict[str, Any]:
    return as_json(error)  # bounded as over gRPC


def response(error: DomainError) -> JSONResponse:
    headers = {"www-authenticate": "Bearer"} if error.code == grpc.StatusCode.UNAUTHENTICATED \
        else None
    return JSONResponse(body(error), status_code=status(error), headers=headers)
