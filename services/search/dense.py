"""The dense leg: message embeddings in ClickHouse, ranked by similarity to the query.

Embeddings come from the configured embedder (``libs.embeddings``: the local
bge-small-en by default, an OpenAI-compatible endpoint when configured) and are
stored as int8 values with a per-message scale, filed by cell (``cells``), one
table per embedder and partition (``vectors_<embedder>_<dimensions>_<cells>``),
so changing the model or its cells starts a fresh table that the feed fills
from the beginning and never mixes vectors of two models.

:class:`DenseProjector` follows the journal's change feed on its own cursor,
beside the keyword projection: a message is searchable by BM25 as soon as it
is projected and joins the dense leg once embedded. Embedding is the slow
part, so it runs in batches and its lag is reported on its own
(``DescribeProjection.embedding_lag``, health name ``.../embeddings``). When
the embedder fails, the batch is retried with a growing pause, from the same
place in the feed: nothing is skipped, only delayed.

Ranking stays inside the caller's scope (the table's key starts with account
and agent, so the scope is a key range). A scope of at most ``EXACT_UP_TO``
messages is ranked by the exact dot product of every message. A larger one is
ranked within the query's nearest cells (``Cells.probed``: key ranges), in two
stages within one statement: every message there by the Hamming distance
between its sketch (the signs of its embedding, packed in 64-bit words) and
the query's, then the best ``CANDIDATES`` by the exact dot product. The first
stage reads 48 bytes a message (for 384 dimensions), the second a few hundred
scattered embeddings (the sort's survivors, read after it: ClickHouse's lazy
materialization); ClickHouse reads whole granules (64 rows here), so below
``EXACT_UP_TO`` reading everything costs no more. The query is bound as
Float64 literals (``clickhouse.bind``); each message's product is its int8
values' times its scale.
ClickHouse 18.16 has neither ``bitCount`` nor ``dotProduct``: there the
popcount is spelled out with shifts and masks and the dot product with
``arrayMap`` (``PORTABLE``); engines that have them use them (``NATIVE``,
chDB included): the same order, similarities equal to about 1e-12 (the sums
run in another order).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import cachetools

from libs.clients.journal import JournalClient
from libs.embeddings import Embedder
from libs.errors import Unavailable
from libs.feed import FeedFollower
from services.search import tenancy
from services.search import terms as analyzer
from services.search.cells import Cells, slug
from services.search.clickhouse import ClickHouse
from services.search.keyword import MAX_CACHED_SCOPES, Ranked
from services.search.lag import JournalSequences, ShardLag, shard_lags
from services.search.projector import ClickHouseCursors, projected_role
from services.search.schema import VECTOR_COLUMNS

CANDIDATES = 200  # re-ranked exactly after the Hamming stage
CELL_SIZES_TTL_SECONDS = 60.0  # sizes only steer how many cells are probed
EXACT_UP_TO = 64 * CANDIDATES  # the rows the re-ranking stage reads at most
MAX_EMBEDDED_CHARS = 2000  # about bge's 512 tokens; spares an endpoint very long inputs
QUERY_TIMEOUT_SECONDS = 2.0  # a slow embedder must not hold a search: BM25 answers alone

_M1, _M2, _M4, _H01 = (0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
                       0x0101010101010101)


def table_name(embedder: type[Embedder] | Embedder, cells: Cells) -> str:
    name = f"vectors_{slug(embedder)}_{embedder.dimensions}_{cells.name}"
    if len(name) > 64:
        name = name[:55] + "_" + hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
    return name


def sketch(vector: Sequence[float]) -> list[int]:
    """The signs of ``vector`` as bits (dimension i is bit i % 64 of word i // 64)."""
    words = [0] * ((len(vector) + 63) // 64)
    for i, value in enumerate(vector):
        if value > 0:
            words[i // 64] |= 1 << (i % 64)
    return words


def quantized(vector: Sequence[float]) -> tuple[list[int], float]:
    """``vector`` as int8 values and the scale that brings them back (value x scale):
    a quarter of the bytes to read, and the same top hits in the measurements."""
    scale = max((abs(v) for v in vector), default=0.0) / 127 or 1.0
    return [max(-127, min(127, round(v / scale))) for v in vector], scale


def _popcount(x: str) -> str:
    """Set bits of the UInt64 expression ``x`` (SWAR: pairs, nibbles, bytes, then a sum)."""
    pairs = f"bitAnd({x}, {_M1}) + bitAnd(bitShiftRight({x}, 1), {_M1})"
    nibbles = f"bitAnd({pairs}, {_M2}) + bitAnd(bitShiftRight({pairs}, 2), {_M2})"
    octets = f"bitAnd({nibbles} + bitShiftRight({nibbles}, 4), {_M4})"
    return f"bitShiftRight({octets} * {_H01}, 56)"


@dataclass(frozen=True)
class Spelling:
    """The two measures as SQL: ``hamming`` (sketch to query sketch), ``similarity``
    (embedding times scale, dot the query vector)."""

    hamming: str
    similarity: str


# Any ClickHouse (18.16 has neither bitCount nor dotProduct)...
PORTABLE = Spelling(
    hamming=("arraySum(arrayMap((a, b) -> " + _popcount("bitXor(a, b)")
             + ", sketch, {sketch:Array(UInt64)}))"),
    similarity="arraySum(arrayMap((x, y) -> x * y, embedding, {vector:Array(Float32)})) * scale")
# ...and engines with the native functions: measured in chDB 26.9 on 5,800 messages,
# exact ranking 10.8 ms the portable way, about half that with dotProduct.
NATIVE = Spelling(
    hamming="arraySum(arrayMap((a, b) -> bitCount(bitXor(a, b)), sketch, {sketch:Array(UInt64)}))",
    similarity="dotProduct(embedding, {vector:Array(Float32)}) * scale")


async def spelling(clickhouse: ClickHouse) -> Spelling:
    """NATIVE where the engine computes both functions on our column types, else PORTABLE."""
    try:
        await clickhouse.query("SELECT bitCount(bitXor(toUInt64(3), toUInt64(1))) AS b,"
                               " dotProduct(CAST([1, -2], 'Array(Int8)'), [0.5, 0.25]) AS d")
    except Unavailable:
        return PORTABLE
    return NATIVE


class CellSizes:
    """How many messages each cell holds in a scope: one statement, kept for
    CELL_SIZES_TTL_SECONDS. The sizes only choose how many cells a query probes
    (``Cells.probed``), so a stale count costs a little speed or recall, never a
    message: cells passed over as empty are read anyway."""

    def __init__(self, clickhouse: ClickHouse, table: str) -> None:
        self._clickhouse = clickhouse
        self._table = table
        self._sizes: cachetools.TTLCache = cachetools.TTLCache(MAX_CACHED_SCOPES,
                                                               CELL_SIZES_TTL_SECONDS)

    async def get(self, params: dict[str, Any], current_thread: bool) -> dict[int, int]:
        key = tenancy.scope_key(params)
        sizes = self._sizes.get(key)
        if sizes is None:
            rows = await self._clickhouse.query(
                f"SELECT cell, count() AS messages FROM {self._table}"
                f" WHERE {tenancy.condition(current_thread)} GROUP BY cell", params)
            sizes = self._sizes[key] = {int(r["cell"]): int(r["messages"]) for r in rows}
        return sizes


class DenseIndex:
    """One embedder, its cells and its table: embeds texts, ranks a scope by similarity."""

    def __init__(self, embedder: Embedder, cells: Cells, clickhouse: ClickHouse,
                 database: str, spelled: Spelling, rows_budget: int) -> None:
        self.embedder = embedder
        self.cells = cells
        self.spelled = spelled
        self.table = table_name(embedder, cells)
        self.exact_up_to = EXACT_UP_TO
        self.candidates = CANDIDATES
        self.rows_budget = rows_budget  # about the most messages a large scope's ranking reads
        self.cell_sizes = CellSizes(clickhouse, f"{database}.{self.table}")
        self._clickhouse = clickhouse
        self._database = database

    @property
    def name(self) -> str:
        return self.embedder.name

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            return await self.embedder.embed_documents([t[:MAX_EMBEDDED_CHARS] for t in texts])
        except Exception as exc:  # any client or model failure: retried later by the caller
            raise Unavailable(f"embedder {self.name} failed: {exc}",
                              reason="EMBEDDER_UNAVAILABLE") from exc

    async def embed_query(self, text: str) -> list[float]:
        try:
            return await asyncio.wait_for(self.embedder.embed_query(text[:MAX_EMBEDDED_CHARS]),
                                          QUERY_TIMEOUT_SECONDS)
        except Exception as exc:
            raise Unavailable(f"embedder {self.name} failed: {exc!r}",
                              reason="EMBEDDER_UNAVAILABLE") from exc

    async def ranked(self, params: dict[str, Any], vector: Sequence[float],
                     current_thread: bool, depth: int, scope_size: int) -> list[Ranked]:
        """The ``depth`` messages of the scope most similar to ``vector``, best first;
        ``scope_size`` (messages in the scope) picks exact or two-stage ranking."""
        table = f"{self._database}.{self.table}"
        scope = tenancy.condition(current_thread)
        params = {**params, "vector": list(vector), "depth": depth}
        order = " ORDER BY similarity DESC, thread_id, offset LIMIT {depth:UInt32}"
        if scope_size <= self.exact_up_to:  # FINAL: replayed rows collapse
            statement = (f"SELECT thread_id, offset, length,"
                         f" {self.spelled.similarity} AS similarity"
                         f" FROM {table} FINAL WHERE {scope}{order}")
        else:
            # The candidates' embeddings are read after the sort, for them alone, where
            # ClickHouse materializes lazily (25.4 on); older servers read every one.
            # GROUP BY: replayed rows collapse (the same message, the same similarity).
            statement = (f"SELECT thread_id, offset, max(length) AS length,"
                         f" max({self.spelled.similarity}) AS similarity"
                         f" FROM (SELECT thread_id, offset, length, embedding, scale FROM {table}"
                         f"  WHERE {scope} AND cell IN {{cells:Array(UInt16)}}"
                         f"  ORDER BY {self.spelled.hamming}, thread_id, offset"
                         "   LIMIT {candidates:UInt32})"
                         f" GROUP BY thread_id, offset{order}")
            sizes = await self.cell_sizes.get(params, current_thread)
            params |= {"sketch": sketch(vector), "candidates": self.candidates,
                       "cells": self.cells.probed(vector, sizes, self.rows_budget)}
        rows = await self._clickhouse.query(statement, params)
        return [Ranked(r["thread_id"], int(r["offset"]), float(r["similarity"]), int(r["length"]))
                for r in rows]


class DenseProjector:
    """Embeds every projected message, in feed order, on a cursor of its own."""

    def __init__(self, journal: JournalClient, clickhouse: ClickHouse, database: str,
                 index: DenseIndex, journal_sequences: JournalSequences, batch: int,
                 embedded: Callable[[str, str, Sequence[tuple]], None] = lambda *_: None,
                 ) -> None:
        self._embedded = embedded  # told the rows written to each account and agent
        self._clickhouse = clickhouse
        self._table = f"{database}.{index.table}"
        self._index = index
        self.embedder = index.name
        self._journal_sequences = journal_sequences
        cursors = ClickHouseCursors(clickhouse, database, f"search-{index.table}")
        self.follower = FeedFollower(journal, cursors, self._write, name="search embeddings",
                                     batch=batch)
        self.embedded_rows = 0

    async def _write(self, events: Sequence) -> None:
        wanted = [e for e in events if projected_role(e.message) is not None]
        if not wanted:
            return
        vectors = await self._index.embed_documents([e.message.content for e in wanted])
        cells = self._index.cells.of(vectors)
        rows = []
        for event, vector, cell in zip(wanted, vectors, cells, strict=True):
            values, scale = quantized(vector)
            rows.append((event.principal.account_id, event.principal.agent_id, cell,
                         event.thread_id, event.message.offset, event.principal.user_id,
                         len(analyzer.terms(event.message.content)), sketch(vector), values,
                         scale, event.sequence))
        await self._clickhouse.insert(self._table, VECTOR_COLUMNS, rows)
        for (account, agent), written in tenancy.by_agent(rows).items():
            self._embedded(account, agent, written)
        self.embedded_rows += len(wanted)

    def lag(self) -> list[ShardLag]:
        return shard_lags(self.follower.positions, self._journal_sequences.sequences)

    async def run_forever(self) -> None:
        await self.follower.run_forever()

    def stop(self) -> None:
        self.follower.stop()
