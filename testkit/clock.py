from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.current = start or datetime(2026, 1, 15, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta) -> None:
        self.current += timedelta(**delta)
