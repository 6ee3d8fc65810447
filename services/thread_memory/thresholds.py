"""When a thread needs a new summary: 2,000 tokens or 50 messages since the last one.

The answer comes from durable state: the summary's last offset (object store)
and what the journal holds after it (``GetThreadStats`` with ``after_offset``).
Redis's counters are a cache of the same numbers that only says when to look;
losing them can delay a check, never skip one (see ``coordination``).
"""

from __future__ import annotations

from dataclasses import dataclass

from agentmemory.journal.v1 import journal_service_pb2 as journal_pb

TOKEN_THRESHOLD = 2000
MESSAGE_THRESHOLD = 50


def over_threshold(tokens: int, messages: int) -> bool:
    return tokens >= TOKEN_THRESHOLD or messages >= MESSAGE_THRESHOLD


@dataclass(frozen=True)
class Backlog:
    """What a thread holds past its summary: offsets ``summary_end + 1 .. last_offset``."""

    summary_end: int  # the summary's last offset; 0 before the first summary
    last_offset: int
    tokens: int

    @classmethod
    def measure(cls, summary_end: int,
                stats: journal_pb.GetThreadStatsResponse) -> Backlog | None:
        """From the journal's stats after ``summary_end``; None for a thread the journal
        does not know (never written, purged, or not the caller's)."""
        if stats.last_offset == 0:
            return None
        return cls(summary_end, max(stats.last_offset, summary_end), stats.tokens_after)

    @property
    def messages(self) -> int:
        return self.last_offset - self.summary_end

    @property
    def over_threshold(self) -> bool:
        return over_threshold(self.tokens, self.messages)
