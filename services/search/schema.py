"""The search tables, all ReplacingMergeTree (one row per key however often the feed
delivers a message; reads use FINAL):

- ``messages``, keyed by (account, agent, thread, offset): what a hit shows and
  each message's length in terms;
- ``postings``, keyed by (account, agent, term, thread, offset): one row per
  distinct term of a message with its frequency, so a query reads only the
  postings of its own terms (a primary-key range), never every message;
- ``projection_cursors``: where the projector is in each shard's feed.
"""

from __future__ import annotations

from services.search.clickhouse import IDENTIFIER, ClickHouse

POSTING_COLUMNS = ("account_id", "agent_id", "term", "thread_id", "offset", "owner_user_id", "tf",
                   "length", "created_at_ms", "sequence")
MESSAGE_COLUMNS = ("account_id", "agent_id", "thread_id", "owner_user_id", "environment",
                   "message_id", "offset", "role", "content", "created_at_ms", "terms", "length",
                   "sequence")


def statements(database: str) -> list[str]:
    if not IDENTIFIER.fullmatch(database):
        raise ValueError(f"not a ClickHouse database name: {database!r}")
    return [
        f"CREATE DATABASE IF NOT EXISTS {database}",
        f"""CREATE TABLE IF NOT EXISTS {database}.messages (
            account_id String, agent_id String, thread_id String, owner_user_id String,
            environment String, message_id String, offset UInt64, role String, content String,
            created_at_ms UInt64, terms Array(UInt64), length UInt32, sequence UInt64
        ) ENGINE = ReplacingMergeTree(sequence) ORDER BY (account_id, agent_id, thread_id, offset)""",
        f"""CREATE TABLE IF NOT EXISTS {database}.postings (
            account_id String, agent_id String, term UInt64, thread_id String, offset UInt64,
            owner_user_id String, tf UInt32, length UInt32, created_at_ms UInt64,
            sequence UInt64
        ) ENGINE = ReplacingMergeTree(sequence)
          ORDER BY (account_id, agent_id, term, thread_id, offset)""",
        f"""CREATE TABLE IF NOT EXISTS {database}.projection_cursors (
            consumer String, shard UInt32, after_sequence UInt64
        ) ENGINE = ReplacingMergeTree(after_sequence) ORDER BY (consumer, shard)""",
    ]


async def create(clickhouse: ClickHouse, database: str) -> None:
    for statement in statements(database):
        await clickhouse.execute(statement)
