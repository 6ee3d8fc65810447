"""The credentials a run was given, held in this process's memory only.

The gateway passes them at StartRun/FinishRun; learning masks them out of
everything it keeps from the run, then forgets them. They are never written to
a database or a log, and expire after a TTL even if the run never finishes.
That a run *declared* credentials is stored (a flag, not a value): if they are
gone when its learning runs (this process restarted, or another replica
learns from it), the run is skipped rather than learned from unmasked.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

RunKey = tuple[str, str, str, str, str]  # account, environment, agent, thread, run


class CredentialHolder:
    def __init__(self, ttl_seconds: float) -> None:
        self._ttl = ttl_seconds
        self._held: dict[RunKey, tuple[set[str], float]] = {}

    def hold(self, run: RunKey, credentials: Sequence[str]) -> None:
        self._expire()
        values, _ = self._held.get(run, (set(), 0.0))
        self._held[run] = (values | set(credentials), time.monotonic() + self._ttl)

    def get(self, run: RunKey) -> list[str] | None:
        """The run's credentials, or None if none are held."""
        self._expire()
        found = self._held.get(run)
        return None if found is None else sorted(found[0])

    def forget(self, run: RunKey) -> None:
        self._held.pop(run, None)

    def _expire(self) -> None:
        now = time.monotonic()
        for run in [r for r, (_, until) in self._held.items() if until <= now]:
            del self._held[run]

    def __repr__(self) -> str:  # never show the values
        return f"CredentialHolder({len(self._held)} runs)"
