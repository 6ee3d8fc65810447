"""The search tables, all ReplacingMergeTree (one row per key however often the feed
delivers a message):

- ``messages``, keyed by (account, agent, thread, offset): what a hit shows and
  each message's length in terms; small granules (256 rows) and small
  compressed blocks where the engine allows, because a search reads a handful
  of scattered messages and ClickHouse reads whole granules and blocks;
- ``postings``, keyed by (account, agent, term, thread, offset): one row per
  distinct term of a message with its frequency, so a query reads only the
  postings of its own terms (a primary-key range), never every message;
- ``threads``, keyed by (account, agent, owner, thread): how many messages each
  thread has and their total length in terms, so BM25's corpus statistics
  read one row per thread instead of every message. A row is a function of the
  thread's messages up to ``last_offset`` (the version), so replays and
  concurrent projectors write the same row;
- ``vectors_<embedder>_<cells>``: the dense leg's embeddings (int8 with a
  scale, and their sign bits) and each message's length in terms (the
  fusion's length prior), filed by cell, one table per embedder and partition
  (see ``dense`` and ``cells``);
- ``projection_cursors``: where each follower is in each shard's feed.

Tables created by an earlier release keep their settings (ClickHouse cannot
change granules in place); dropping the database rebuilds everything from the
journal.
"""

from __future__ import annotations

from services.search.clickhouse import IDENTIFIER, ClickHouse

POSTING_COLUMNS = ("account_id", "agent_id", "term", "thread_id", "offset", "owner_user_id", "tf",
                   "length", "created_at_ms", "sequence")
MESSAGE_COLUMNS = ("account_id", "agent_id", "thread_id", "owner_user_id", "environment",
                   "message_id", "offset", "role", "content", "created_at_ms", "terms", "length",
                   "sequence")
THREAD_COLUMNS = ("account_id", "agent_id", "owner_user_id", "thread_id", "messages", "terms",
                  "last_offset")
VECTOR_COLUMNS = ("account_id", "agent_id", "cell", "thread_id", "offset", "owner_user_id",
                  "length", "sketch", "embedding", "scale", "sequence")


# Compressed blocks of 4-16 KiB instead of 64 KiB-1 MiB: a search reads a handful of
# scattered rows, and each costs the decompression of its whole block. Measured in chDB
# at 100k messages: fetching ten hits' content took 7.0 ms, 3.8 ms with these, for 12% more
# bytes on disk.
SMALL_BLOCKS = ", min_compress_block_size = 4096, max_compress_block_size = 16384"


def _checked(name: str) -> str:
    if not IDENTIFIER.fullmatch(name):
        raise ValueError(f"not a ClickHouse identifier: {name!r}")
    return name


def statements(database: str, vectors: str | None = None,
               small_blocks: bool = False) -> list[str]:
    """``small_blocks``: the engine compresses per table in blocks we choose (not
    ClickHouse 18.16): ``messages`` and the vectors then use SMALL_BLOCKS."""
    database = _checked(database)
    scattered = SMALL_BLOCKS if small_blocks else ""
    tables = [
        f"CREATE DATABASE IF NOT EXISTS {database}",
        f"""CREATE TABLE IF NOT EXISTS {database}.messages (
            account_id String, agent_id String, thread_id String, owner_user_id String,
            environment String, message_id String, offset UInt64, role String, content String,
            created_at_ms UInt64, terms Array(UInt64), length UInt32, sequence UInt64
        ) ENGINE = ReplacingMergeTree(sequence) ORDER BY (account_id, agent_id, thread_id, offset)
          SETTINGS index_granularity = 256{scattered}""",
        f"""CREATE TABLE IF NOT EXISTS {database}.postings (
            account_id String, agent_id String, term UInt64, thread_id String, offset UInt64,
            owner_user_id String, tf UInt32, length UInt32, created_at_ms UInt64,
            sequence UInt64
        ) ENGINE = ReplacingMergeTree(sequence)
          ORDER BY (account_id, agent_id, term, thread_id, offset)""",
        f"""CREATE TABLE IF NOT EXISTS {database}.threads (
            account_id String, agent_id String, owner_user_id String, thread_id String,
            messages UInt64, terms UInt64, last_offset UInt64
        ) ENGINE = ReplacingMergeTree(last_offset)
          ORDER BY (account_id, agent_id, owner_user_id, thread_id)""",
        f"""CREATE TABLE IF NOT EXISTS {database}.projection_cursors (
            consumer String, shard UInt32, after_sequence UInt64
        ) ENGINE = ReplacingMergeTree(after_sequence) ORDER BY (consumer, shard)""",
    ]
    if vectors is not None:
        # Small granules: re-ranking reads a few hundred scattered embeddings. The cell
        # follows the agent in the key: a probed cell of a scope is one key range.
        tables.append(f"""CREATE TABLE IF NOT EXISTS {database}.{_checked(vectors)} (
            account_id String, agent_id String, cell UInt16, thread_id String, offset UInt64,
            owner_user_id String, length UInt32, sketch Array(UInt64), embedding Array(Int8),
            scale Float32, sequence UInt64
        ) ENGINE = ReplacingMergeTree(sequence)
          ORDER BY (account_id, agent_id, cell, thread_id, offset)
          SETTINGS index_granularity = 64{scattered}""")
    return tables


async def create(clickhouse: ClickHouse, database: str, vectors: str | None = None) -> None:
    known = await clickhouse.query(
        "SELECT count() AS known FROM system.merge_tree_settings"
        " WHERE name IN ('min_compress_block_size', 'max_compress_block_size')")
    for statement in statements(database, vectors, small_blocks=int(known[0]["known"]) == 2):
        await clickhouse.execute(statement)
    await _backfill_threads(clickhouse, database)


async def _backfill_threads(clickhouse: ClickHouse, database: str) -> None:
    """Messages projected before ``threads`` existed get their thread rows once."""
    counts = await clickhouse.query(
        f"SELECT (SELECT count() FROM {database}.threads) AS threads,"
        f" (SELECT count() FROM {database}.messages) AS messages")
    if int(counts[0]["threads"]) or not int(counts[0]["messages"]):
        return
    await clickhouse.execute(
        f"INSERT INTO {database}.threads ({', '.join(THREAD_COLUMNS)})"
        " SELECT account_id, agent_id, owner_user_id, thread_id, count(), sum(length), max(offset)"
        f" FROM {database}.messages FINAL"
        " GROUP BY account_id, agent_id, owner_user_id, thread_id")
