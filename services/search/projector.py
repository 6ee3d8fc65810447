"""The projection of the journal into ClickHouse.

Follows every shard's change feed (libs.feed) and writes user and assistant
messages (never system or tool messages, never reasoning text) with their
analyzed terms, and a posting per distinct term. Rows are keyed by (account, agent, thread, offset) in a
ReplacingMergeTree, so a redelivered message leaves one row. The cursor lives
in ClickHouse beside the rows and moves only after they are written. Lag (the
journal's durable sequence minus the cursor) is refreshed every few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentmemory.common.v1 import message_pb2

from libs.errors import DomainError
from libs.feed import FeedFollower
from libs.journal_client import JournalReader
from services.search import terms as analyzer
from services.search.clickhouse import ClickHouse
from services.search.schema import MESSAGE_COLUMNS, POSTING_COLUMNS

logger = logging.getLogger(__name__)

CONSUMER = "search"
PROJECTED_ROLES = {message_pb2.ROLE_USER: "user", message_pb2.ROLE_ASSISTANT: "assistant"}
LAG_REFRESH_SECONDS = 5.0


class ClickHouseCursors:
    def __init__(self, clickhouse: ClickHouse, database: str) -> None:
        self._clickhouse = clickhouse
        self._table = f"{database}.projection_cursors"

    async def load(self, shard: int) -> int:
        rows = await self._clickhouse.query(
            f"SELECT max(after_sequence) AS after FROM {self._table} "
            "WHERE consumer = {consumer:String} AND shard = {shard:UInt32}",
            {"consumer": CONSUMER, "shard": shard})
        return int(rows[0]["after"]) if rows else 0

    async def save(self, shard: int, position: int) -> None:
        await self._clickhouse.insert(self._table, ("consumer", "shard", "after_sequence"),
                                      [(CONSUMER, shard, position)])


def rows(event) -> tuple[tuple, list[tuple]] | None:
    """The message row and posting rows for a feed event; None for what search never shows."""
    message = event.message
    role = PROJECTED_ROLES.get(message.role)
    if role is None or not message.content.strip():
        return None
    words = analyzer.term_ids(analyzer.terms(message.content))
    created_ms = message.created_at.seconds * 1000 + message.created_at.nanos // 1_000_000
    who = event.principal
    message_row = (who.account_id, who.agent_id, event.thread_id, who.user_id,
                   who.environment or "default", message.id, message.offset, role,
                   message.content, created_ms, words, len(words), event.sequence)
    postings = [(who.account_id, who.agent_id, term, event.thread_id, message.offset,
                 who.user_id, tf, len(words), created_ms, event.sequence)
                for term, tf in Counter(words).items()]
    return message_row, postings


@dataclass(frozen=True)
class ShardLag:
    shard: int
    projected: int
    journal: int

    @property
    def lag(self) -> int:
        return max(0, self.journal - self.projected)


class Projector:
    def __init__(self, journal: JournalReader, clickhouse: ClickHouse, database: str) -> None:
        self._journal = journal
        self._clickhouse = clickhouse
        self._table = f"{database}.messages"
        self._postings = f"{database}.postings"
        self.follower = FeedFollower(journal, ClickHouseCursors(clickhouse, database),
                                     self._write, name="search projector", batch=500)
        self.journal_sequences: dict[int, int] = {}
        self.projected_rows = 0

    async def _write(self, events: Sequence) -> None:
        projected = [r for r in (rows(e) for e in events) if r is not None]
        # Postings first: a message row is what makes a message count as projected.
        await self._clickhouse.insert(self._postings, POSTING_COLUMNS,
                                      [p for _, postings in projected for p in postings])
        await self._clickhouse.insert(self._table, MESSAGE_COLUMNS, [m for m, _ in projected])
        self.projected_rows += len(projected)

    def lag(self) -> list[ShardLag]:
        return [ShardLag(shard, projected, max(self.journal_sequences.get(shard, 0), projected))
                for shard, projected in sorted(self.follower.positions.items())]

    async def run_forever(self) -> None:
        watcher = asyncio.create_task(self._watch_journal())
        try:
            await self.follower.run_forever()
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def stop(self) -> None:
        self.follower.stop()

    async def _watch_journal(self) -> None:
        while True:
            with contextlib.suppress(DomainError):
                self.journal_sequences = await self._journal.durable_sequences()
                behind = sum(s.lag for s in self.lag())
                if behind:
                    logger.info("search projection is %d messages behind the journal", behind)
            await asyncio.sleep(LAG_REFRESH_SECONDS)
