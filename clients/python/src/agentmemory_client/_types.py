"""Results of the memory tools (their replies are JSON objects, not messages), and the
SDK's settings. Every other call returns the gateway's own generated message."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StoreResult:
    """What ``memory.store`` did (seed 000's rules)."""

    key: str
    #: ``"private"`` or ``"shared"``: the one used, which may differ from the one asked
    #: for (no user to keep a private memory for; credentials or personal data).
    visibility: str
    #: The key already held byte-identical content: nothing was written.
    unchanged: bool
    #: An existing memory's content was replaced (a new version).
    replaced: bool
    #: Why the visibility differs from the one asked for, if it does.
    note: str = ""


@dataclass(frozen=True)
class RecalledMemory:
    key: str
    content: str
    #: ``user_profile``, ``project_fact`` or ``observation``.
    category: str
    #: Fused relevance x (0.8 + importance x 0.2).
    score: float


@dataclass(frozen=True)
class RecallResult:
    #: Best first.
    memories: list[RecalledMemory]
    #: The index could not answer and PostgreSQL keyword search did.
    fallback: bool


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of a call that failed with UNAVAILABLE, when sending it again is safe: it is
    idempotent, or carries a request id (which the SDK generates). Exponential backoff
    with full jitter, always within the call's deadline."""

    #: Attempts in all, the first included (1: never retry).
    attempts: int = 4
    #: The first retry waits up to this many seconds; each next one twice as long.
    initial_backoff: float = 0.2
    max_backoff: float = 3.0
