"""The refusal of a per-account quota, the same on every service that enforces one
(agent memory: environments, memories, suggestions, receipts; the gateway: runs)."""

from __future__ import annotations

from libs.errors import ResourceExhausted


def quota_exceeded(quota: str, limit: int, detail: str) -> ResourceExhausted:
    return ResourceExhausted(f"{detail}; the platform operator can raise the account's quota",
                             reason="QUOTA_EXCEEDED",
                             metadata={"quota": quota, "limit": str(limit)})
