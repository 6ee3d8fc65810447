"""The keyword projection of the journal into ClickHouse.

Follows every shard's change feed (libs.feed) and writes user and assistant
messages (never system or tool messages, never reasoning text) with their
analyzed terms, a posting per distinct term, and the new totals of their
threads. Rows are keyed by (account, agent, thread, offset) in a
ReplacingMergeTree, so a redelivered message leaves one row; a thread's
totals count only offsets past the ones already counted, so a redelivered
message is not counted twice either. The cursor lives in ClickHouse beside
the rows and moves only after they are written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from agentmemory.common.v1 import message_pb2

from libs.clients.journal import JournalClient
from libs.feed import FeedFollower
from services.search import tenancy
from services.search import terms as analyzer
from services.search.clickhouse import ClickHouse
from services.search.lag import JournalSequences, ShardLag, shard_lags
from services.search.schema import MESSAGE_COLUMNS, POSTING_COLUMNS, THREAD_COLUMNS

CONSUMER = "search"
PROJECTED_ROLES = {message_pb2.ROLE_USER: "user", message_pb2.ROLE_ASSISTANT: "assistant"}


def projected_role(message: message_pb2.Message) -> str | None:
    """The role search shows ``message`` under; None for what search never shows."""
    role = PROJECTED_ROLES.get(message.role)
    return role if role is not None and message.content.strip() else None


class ClickHouseCursors:
    def __init__(self, clickhouse: ClickHouse, database: str, consumer: str = CONSUMER) -> None:
        self._clickhouse = clickhouse
        self._table = f"{database}.projection_cursors"
        self._consumer = consumer

    async def load(self, shard: int) -> int:
        rows = await self._clickhouse.query(
            f"SELECT max(after_sequence) AS after FROM {self._table} "
            "WHERE consumer = {consumer:String} AND shard = {shard:UInt32}",
            {"consumer": self._consumer, "shard": shard})
        return int(rows[0]["after"]) if rows else 0

    async def save(self, shard: int, position: int) -> None:
        await self._clickhouse.insert(self._table, ("consumer", "shard", "after_sequence"),
                                      [(self._consumer, shard, position)])


def rows(event) -> tuple[tuple, list[tuple]] | None:
    """The message row and posting rows for a feed event; None for what search never shows."""
    message = event.message
    role = projected_role(message)
    if role is None:
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


def _thread_key(message: dict) -> tuple[str, str, str, str]:
    return (message["account_id"], message["agent_id"], message["owner_user_id"],
            message["thread_id"])


class ThreadTotals:
    """Per-thread message counts and lengths: BM25's corpus statistics, kept as rows
    whose version is the last offset they count (so a replay writes the same row)."""

    def __init__(self, clickhouse: ClickHouse, database: str) -> None:
        self._clickhouse = clickhouse
        self._table = f"{database}.threads"

    async def add(self, messages: Sequence[tuple]) -> None:
        """Count ``messages`` (message rows, in feed order) into their threads' totals."""
        named = [dict(zip(MESSAGE_COLUMNS, m, strict=True)) for m in messages]
        keys = sorted({_thread_key(m) for m in named})
        stored = await self._clickhouse.query(
            f"SELECT account_id, agent_id, owner_user_id, thread_id, messages, terms, last_offset"
            f" FROM {self._table} FINAL WHERE (account_id, agent_id, owner_user_id, thread_id)"
            " IN {keys:Array(Tuple(String, String, String, String))}", {"keys": keys})
        totals = {(r["account_id"], r["agent_id"], r["owner_user_id"], r["thread_id"]):
                  [int(r["messages"]), int(r["terms"]), int(r["last_offset"])] for r in stored}
        changed = set()
        for message in named:
            key, offset = _thread_key(message), message["offset"]
            total = totals.setdefault(key, [0, 0, -1])  # -1: nothing counted yet
            if offset > total[2]:
                total[0], total[1], total[2] = total[0] + 1, total[1] + message["length"], offset
                changed.add(key)
        await self._clickhouse.insert(self._table, THREAD_COLUMNS,
                                      [(*key, *totals[key]) for key in sorted(changed)])


class Projector:
    def __init__(self, journal: JournalClient, clickhouse: ClickHouse, database: str,
                 journal_sequences: JournalSequences,
                 projected: Callable[[str, str, Sequence[tuple]], None] = lambda *_: None,
                 ) -> None:
        self._clickhouse = clickhouse
        self._projected = projected  # told the message rows written to each account and agent
        self._table = f"{database}.messages"
        self._postings = f"{database}.postings"
        self._threads = ThreadTotals(clickhouse, database)
        self._journal_sequences = journal_sequences
        self.follower = FeedFollower(journal, ClickHouseCursors(clickhouse, database),
                                     self._write, name="search projector", batch=500)
        self.projected_rows = 0

    async def _write(self, events: Sequence) -> None:
        projected = [r for r in (rows(e) for e in events) if r is not None]
        if not projected:
            return
        messages = [m for m, _ in projected]
        # Postings and totals first: a message row is what makes a message count as projected.
        await self._clickhouse.insert(self._postings, POSTING_COLUMNS,
                                      [p for _, postings in projected for p in postings])
        await self._threads.add(messages)
        await self._clickhouse.insert(self._table, MESSAGE_COLUMNS, messages)
        self.projected_rows += len(projected)
        for (account, agent), written in tenancy.by_agent(messages).items():
            self._projected(account, agent, written)

    def lag(self) -> list[ShardLag]:
        return shard_lags(self.follower.positions, self._journal_sequences.sequences)

    async def run_forever(self) -> None:
        await self.follower.run_forever()

    def stop(self) -> None:
        self.follower.stop()
