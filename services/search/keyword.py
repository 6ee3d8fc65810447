"""The keyword leg: BM25 over stemmed terms, computed in ClickHouse SQL.

Two statements, both inside the caller's scope (``tenancy``): the corpus
statistics (messages and total length from the ``threads`` rows, document
frequency of each query term from its postings), then the score of every
message holding a query term, read from those terms' postings only (a
primary-key range). Score: sum over query terms of
``idf x tf x (k1 + 1) / (tf + k1 x (1 - b + b x length / avgdl))`` with
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.2, b = 0.75; ties go to
the newer message. The idf weights are computed here, once, so both
ClickHouse engines rank with the very same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from services.search import tenancy
from services.search.clickhouse import ClickHouse

K1, B = 1.2, 0.75


@dataclass(frozen=True)
class Statistics:
    messages: int
    total_length: int
    frequencies: dict[int, int]  # term id -> messages holding it

    def idf(self, term: int) -> float:
        df = self.frequencies[term]
        return math.log(1 + (self.messages - df + 0.5) / (df + 0.5))


@dataclass(frozen=True)
class Ranked:
    thread_id: str
    offset: int
    score: float

    @property
    def key(self) -> tuple[str, int]:
        return self.thread_id, self.offset


class KeywordLeg:
    def __init__(self, clickhouse: ClickHouse, database: str) -> None:
        self._clickhouse = clickhouse
        self._database = database

    async def statistics(self, params: dict[str, Any], terms: list[int],
                         current_thread: bool) -> Statistics:
        scope = tenancy.condition(current_thread)
        rows = await self._clickhouse.query(
            "SELECT toUInt8(0) AS kind, toUInt64(0) AS term, sum(messages) AS n,"
            f" sum(terms) AS total FROM {self._database}.threads FINAL WHERE {scope}"
            " UNION ALL"
            " SELECT toUInt8(1) AS kind, term, count() AS n, toUInt64(0) AS total"
            f" FROM {self._database}.postings FINAL WHERE {scope}"
            " AND term IN {terms:Array(UInt64)} GROUP BY term",
            {**params, "terms": terms})
        totals = next(r for r in rows if int(r["kind"]) == 0)
        return Statistics(int(totals["n"]), int(totals["total"]),
                          {int(r["term"]): int(r["n"]) for r in rows if int(r["kind"]) == 1})

    async def ranked(self, params: dict[str, Any], statistics: Statistics, terms: list[int],
                     current_thread: bool, depth: int) -> list[Ranked]:
        """The ``depth`` best messages holding any of ``terms``, best first."""
        found = [t for t in terms if t in statistics.frequencies]
        if not statistics.messages or not found:
            return []
        norm = f"({K1} * ({1 - B} + {B} * length / {{avgdl:Float64}}))"
        rows = await self._clickhouse.query(
            "SELECT thread_id, offset, max(created_at_ms) AS created_at_ms,"
            " sum(transform(term, {weighted:Array(UInt64)}, {idfs:Array(Float64)}, toFloat64(0))"
            f" * tf * {K1 + 1} / (tf + {norm})) AS score"
            f" FROM {self._database}.postings FINAL"
            f" WHERE {tenancy.condition(current_thread)} AND term IN {{terms:Array(UInt64)}}"
            " GROUP BY thread_id, offset"
            " ORDER BY score DESC, created_at_ms DESC, thread_id, offset LIMIT {depth:UInt32}",
            # The same ids twice: the driver binds a list after IN as a tuple, which
            # transform() does not take.
            {**params, "terms": found, "weighted": found, "idfs": [statistics.idf(t) for t in found],
             "avgdl": statistics.total_length / statistics.messages, "depth": depth})
        return [Ranked(r["thread_id"], int(r["offset"]), float(r["score"])) for r in rows]
