"""The agentmemory gateway's client library: ``Client`` (blocking) and ``AsyncClient``
(asyncio), their results, and one error type per family of reasons."""

from agentmemory_client._client import AsyncClient, Client
from agentmemory_client._errors import (
    AgentMemoryError,
    AlreadyExistsError,
    DeadlineExceededError,
    FailedPreconditionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
)
from agentmemory_client._types import RecalledMemory, RecallResult, RetryPolicy, StoreResult
from agentmemory_client._version import __version__

__all__ = [
    "AgentMemoryError", "AlreadyExistsError", "AsyncClient", "Client", "DeadlineExceededError",
    "FailedPreconditionError", "InternalError", "InvalidArgumentError", "NotFoundError",
    "PermissionDeniedError", "RecallResult", "RecalledMemory", "ResourceExhaustedError",
    "RetryPolicy", "StoreResult", "UnauthenticatedError", "UnavailableError", "__version__",
]
