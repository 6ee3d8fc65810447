"""The keyword leg: BM25 over stemmed terms.

One statement ranks, inside the caller's scope (``tenancy``). In a large scope
ClickHouse computes BM25: the statement reads the postings of the query's
terms only (a primary-key range), counts each term's document frequency from
them, and scores every message holding a term. In a small scope (at most
``SMALL_SCOPE_TERMS`` terms in all) the statement instead reads the scope's
messages that hold a query term, with what a hit shows, and BM25 is computed
here from their terms (``ranked_by_bm25``, which hot scopes use too, see
``hot_scopes``): same formula, same order, same hits, and the search needs no
second statement to fetch them. Every ClickHouse statement costs a few
milliseconds of planning and pipeline whatever its data, and the ranking
statement's aggregations cost more than reading a small scope, so below that
size one plain read is the cheapest exact answer. The scope's size (messages
and their total length, for ``N`` and ``avgdl``) comes from the ``threads``
rows through :class:`ScopeSizes`.

Score: sum over query terms of
``idf x tf x (k1 + 1) / (tf + k1 x (1 - b + b x length / avgdl))`` with
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.2, b = 0.75; ties go to
the newer message.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from services.search import tenancy
from services.search.clickhouse import ClickHouse

K1, B = 1.2, 0.75
SIZE_TTL_SECONDS = 2.0
MAX_CACHED_SCOPES = 10_000
# Scopes of at most this many terms (about 2,000 chat messages) are ranked from their
# messages. Measured in chDB (CPU per ranking): 5.7 ms against the postings statement's 9.1
# at 21,000 terms, 6.3 against 9.3 at 42,000, even near 80,000; and the postings way then
# needs a fetch of the hits (3-4 ms more). Kept well below the break-even because a query of
# common words brings most of the scope's messages back, content included.
SMALL_SCOPE_TERMS = 40_000


@dataclass(frozen=True)
class ScopeSize:
    messages: int
    total_length: int

    @property
    def average_length(self) -> float:
        return self.total_length / self.messages if self.messages else 0.0


class ScopeSizes:
    """Each scope's size, read from the ``threads`` rows and kept for
    SIZE_TTL_SECONDS: N and avgdl move slowly, and reading them is a statement
    of its own (a few milliseconds whatever the scope). Document frequencies
    are always counted afresh. The projector in this process forgets the sizes
    of the accounts and agents it writes to, so here they are never stale; the
    TTL bounds what another process's writes can leave unseen."""

    def __init__(self, clickhouse: ClickHouse, database: str,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._clickhouse = clickhouse
        self._database = database
        self._clock = clock
        self._sizes: dict[tuple, tuple[ScopeSize, float]] = {}

    async def get(self, params: dict[str, Any], current_thread: bool) -> ScopeSize:
        key = tenancy.scope_key(params)
        cached = self._sizes.get(key)
        if cached is not None and cached[1] > self._clock():
            return cached[0]
        rows = await self._clickhouse.query(
            "SELECT sum(messages) AS messages, sum(terms) AS total"
            f" FROM {self._database}.threads FINAL WHERE {tenancy.condition(current_thread)}",
            params)
        size = ScopeSize(int(rows[0]["messages"]), int(rows[0]["total"])) if rows else \
            ScopeSize(0, 0)
        if size.messages:  # an empty scope is read again: its first message shows at once
            if len(self._sizes) >= MAX_CACHED_SCOPES:
                self._sizes.clear()
            self._sizes[key] = (size, self._clock() + SIZE_TTL_SECONDS)
        return size

    def forget(self, account: str, agent: str) -> None:
        for key in [k for k in self._sizes if k[:2] == (account, agent)]:
            del self._sizes[key]


@dataclass(frozen=True)
class Ranked:
    thread_id: str
    offset: int
    score: float
    length: int  # the message's terms: the fusion's length prior

    @property
    def key(self) -> tuple[str, int]:
        return self.thread_id, self.offset


Key = tuple[str, int]  # (thread, offset)


@dataclass(frozen=True)
class Ranking:
    ranked: list[Ranked]  # best first
    shown: dict[Key, dict]  # message rows (what hits show) the ranking already read


def bm25(term_frequency: int, length: int, idf: float, average_length: float) -> float:
    """One term's share of a message's score, spelled as the SQL below computes it."""
    norm = K1 * ((1 - B) + B * length / average_length)
    return idf * term_frequency * (K1 + 1) / (term_frequency + norm)


def idf(scope_messages: int, document_frequency: int) -> float:
    df = document_frequency
    return math.log(1 + (max(scope_messages, df) - df + 0.5) / (df + 0.5))


Match = tuple[Key, int, int, Mapping[int, int]]  # key, length, created_at_ms, frequencies


def ranked_by_bm25(size: ScopeSize, matches: Iterable[Match], depth: int) -> list[Ranked]:
    """The ``depth`` best of ``matches`` by BM25, computed here (the SQL's formula and
    order). Each match names a message holding a query term, its length, its time
    and the frequency of each query term it holds, in the order of first occurrence
    (the order the scores are summed in, so every caller gets the very same floats).
    Document frequencies are counted from the matches themselves."""
    matches = list(matches)
    document_frequency = Counter(t for *_, frequency in matches for t in frequency)
    idfs = {t: idf(size.messages, df) for t, df in document_frequency.items()}
    average = size.average_length
    scored = [(key, sum(bm25(tf, length, idfs[t], average) for t, tf in frequency.items()),
               created_at_ms, length) for key, length, created_at_ms, frequency in matches]
    scored.sort(key=lambda s: (-s[1], -s[2], s[0]))
    return [Ranked(key[0], key[1], score, length) for key, score, _, length in scored[:depth]]


class KeywordLeg:
    def __init__(self, clickhouse: ClickHouse, database: str) -> None:
        self._clickhouse = clickhouse
        self._database = database
        self.small_scope_terms = SMALL_SCOPE_TERMS

    def is_small(self, size: ScopeSize) -> bool:
        """Whether ``size`` is ranked from its messages (0 terms: avgdl is 0, SQL copes)."""
        return 0 < size.total_length <= self.small_scope_terms

    async def ranked(self, params: dict[str, Any], size: ScopeSize, terms: list[int],
                     current_thread: bool, depth: int) -> Ranking:
        """The ``depth`` best messages holding any of ``terms``, best first (ties to the
        newer message, then by thread and offset)."""
        if not size.messages or not terms:
            return Ranking([], {})
        if self.is_small(size):
            return await self._from_messages(params, size, terms, current_thread, depth)
        return Ranking(await self._from_postings(params, size, terms, current_thread, depth),
                       {})

    async def _from_messages(self, params: dict[str, Any], size: ScopeSize, terms: list[int],
                             current_thread: bool, depth: int) -> Ranking:
        """A small scope: its messages holding a query term (FINAL: replayed rows
        collapse), each with its query terms, repeats kept; BM25 computed here."""
        rows = await self._clickhouse.query(
            "SELECT thread_id, offset, message_id, role, content, created_at_ms, length,"
            " arrayFilter(t -> has({terms:Array(UInt64)}, t), terms) AS matched"
            f" FROM {self._database}.messages FINAL"
            f" WHERE {tenancy.condition(current_thread)} AND hasAny(terms, {{terms:Array(UInt64)}})",
            {**params, "terms": terms})
        shown = {(r["thread_id"], int(r["offset"])): r for r in rows}
        matches = [(key, int(row["length"]), int(row["created_at_ms"]),
                     Counter(int(t) for t in row["matched"])) for key, row in shown.items()]
        return Ranking(ranked_by_bm25(size, matches, depth), shown)

    async def _from_postings(self, params: dict[str, Any], size: ScopeSize, terms: list[int],
                             current_thread: bool, depth: int) -> list[Ranked]:
        """A large scope: BM25 in ClickHouse.

        Postings are grouped by term (``count()`` is the term's document
        frequency) and unfolded again (ARRAY JOIN) to sum each message's score:
        one read of the postings. ``greatest(N, df)`` keeps idf positive while a
        cached N lags a burst of new messages.
        """
        inverse = "log(1 + (greatest({n:UInt64}, df) - df + 0.5) / (df + 0.5))"
        norm = f"{K1} * ({1 - B} + {B} * h.4 / {{avgdl:Float64}})"
        rows = await self._clickhouse.query(
            "SELECT h.1 AS thread_id, h.2 AS offset, max(h.5) AS created_at_ms, max(h.4) AS length,"
            f" sum({inverse} * h.3 * {K1 + 1} / (h.3 + {norm})) AS score"
            " FROM (SELECT term, count() AS df,"
            "       groupArray((thread_id, offset, tf, length, created_at_ms)) AS hits"
            f"      FROM {self._database}.postings FINAL"
            f"      WHERE {tenancy.condition(current_thread)} AND term IN {{terms:Array(UInt64)}}"
            "       GROUP BY term)"
            " ARRAY JOIN hits AS h"
            " GROUP BY thread_id, offset"
            " ORDER BY score DESC, created_at_ms DESC, thread_id, offset LIMIT {depth:UInt32}",
            {**params, "terms": terms, "n": size.messages, "avgdl": size.average_length,
             "depth": depth})
        return [Ranked(r["thread_id"], int(r["offset"]), float(r["score"]), int(r["length"]))
                for r in rows]
