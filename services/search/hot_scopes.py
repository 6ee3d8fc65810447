"""Hot small scopes, kept in this process: a search there runs no ranking or fetch statement.

Every ClickHouse statement costs milliseconds of planning whatever its data
(a 384-float literal alone costs 2 ms to parse in chDB), and in a small scope
(at most ``SMALL_SCOPE_TERMS`` terms, the keyword leg's own criterion) a
hybrid search was three of them: the keyword read, the dense ranking and the
fetch of the dense leg's hits. So a hot small scope, one searched again within
``SIZE_TTL_SECONDS`` with no write to it since, is loaded whole: its messages
(what hits show, with their terms) and, when the service embeds, its
embeddings (int8 values and scale, read as hex), after a checksum of both (see
below). A load costs several searches (about 40 ms for 1,000 messages), hence
the wait for a second search: a scope searched now and then, or written
between searches, keeps the ClickHouse paths and costs what it did. Searches
in a loaded scope rank here: BM25 from the cached terms
(``keyword.ranked_by_bm25``, the formula the other paths use, with ``N`` and
``avgdl`` from :class:`~services.search.keyword.ScopeSizes` as ever), the
dense leg by numpy with the SQL's arithmetic (int8 x float32 products summed
in float64 in dimension order, times the scale) and its order (similarity
descending, then thread and offset), and hits come from the cached rows. The
results are those of the ClickHouse paths: the same order, and the same
floats (to about 1e-12 where the engine sums the dense product natively).

Freshness is that of :class:`ScopeSizes`: this process's projections (keyword
and dense) and purges forget the scopes (and that they were searched) of the
account and agent they write to, and a load that such a write overtakes is
used once and not kept. After ``SIZE_TTL_SECONDS`` (the bound already accepted
for another process's writes) a scope is checked before it serves again: one
statement (about 4 ms) compares the count and a checksum of the keys of its
rows with those read before the load, and a scope that changed is loaded
again. Expired scopes are dropped as others are loaded, and memory is capped
by the messages kept (``SEARCH_HOT_SCOPE_MESSAGES``, about 3 KB a message of
150 characters), the least recently searched scopes going first; a scope
larger than the cap is never loaded.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from services.search import tenancy
from services.search.clickhouse import ClickHouse
from services.search.keyword import (
    MAX_CACHED_SCOPES,
    SIZE_TTL_SECONDS,
    Key,
    Ranked,
    Ranking,
    ScopeSize,
    ranked_by_bm25,
)


@dataclass
class HotScope:
    """One scope's messages and embeddings, ranked in process."""

    rows: dict[Key, dict]  # what hits show (and length), as the keyword read returns it
    frequencies: dict[Key, Counter]  # each message's terms, in order of first occurrence
    holders: dict[int, list[Key]]  # term -> the messages holding it
    vector_keys: list[Key]  # sorted by (thread, offset): the dense order's tie-break
    vector_lengths: list[int]  # each embedded message's terms (the fusion's length prior)
    embeddings: np.ndarray  # int8, one column per message (dimensions x messages)
    scales: np.ndarray  # float64, one per message
    fingerprint: tuple = ()  # what HotScopes._fingerprint read just before the rows
    expires: float = 0.0

    @classmethod
    def of(cls, messages: list[dict], vectors: list[dict]) -> HotScope:
        """From the rows the two statements read (the message rows are taken over)."""
        rows, frequencies, holders = {}, {}, {}
        for row in messages:
            key = (row["thread_id"], int(row["offset"]))
            frequencies[key] = frequency = Counter(map(int, row.pop("terms")))
            rows[key] = row
            for term in frequency:
                holders.setdefault(term, []).append(key)
        vectors = sorted(vectors, key=lambda v: (v["thread_id"], int(v["offset"])))
        embeddings = np.array([np.frombuffer(bytes.fromhex(v["embedding"]), dtype=np.int8)
                               for v in vectors] or np.zeros((0, 0)), dtype=np.int8)
        return cls(rows, frequencies, holders,
                   [(v["thread_id"], int(v["offset"])) for v in vectors],
                   [int(v["length"]) for v in vectors],
                   np.ascontiguousarray(embeddings.T),
                   np.array([np.float32(v["scale"]) for v in vectors], dtype=np.float64))

    @property
    def messages(self) -> int:
        return len(self.rows)

    async def keyword_ranked(self, params: dict[str, Any], size: ScopeSize, terms: list[int],
                             current_thread: bool, depth: int) -> Ranking:
        """As ``KeywordLeg.ranked``, from the cached terms."""
        wanted = set(terms)
        keys = dict.fromkeys(k for t in wanted for k in self.holders.get(t, ()))
        matches = [(key, int(self.rows[key]["length"]), int(self.rows[key]["created_at_ms"]),
                    {t: tf for t, tf in self.frequencies[key].items() if t in wanted})
                   for key in keys]
        return Ranking(ranked_by_bm25(size, matches, depth), self.rows)

    async def dense_ranked(self, params: dict[str, Any], vector: Sequence[float],
                           current_thread: bool, depth: int, scope_size: int) -> list[Ranked]:
        """As ``DenseIndex.ranked`` (its exact statement), from the cached embeddings."""
        if not self.vector_keys:
            return []
        query = np.asarray(vector, dtype=np.float64)  # bound into the SQL as Float64 literals
        # Reduced over the first axis, numpy adds dimension after dimension, as arraySum does.
        similarity = (self.embeddings * query[:, None]).sum(axis=0) * self.scales
        best = np.argsort(-similarity, kind="stable")[:depth]  # ties: (thread, offset) order
        return [Ranked(*self.vector_keys[i], float(similarity[i]), self.vector_lengths[i])
                for i in best]


@dataclass
class _Load:
    task: asyncio.Task
    stale: bool = False  # a write to the scope's account and agent overtook it


class HotScopes:
    """Small scopes searched lately, loaded whole (see the module's description)."""

    def __init__(self, clickhouse: ClickHouse, database: str, vectors: str | None,
                 max_messages: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._clickhouse = clickhouse
        self._database = database
        self._vectors = vectors  # the dense leg's table; None: the service does not embed
        self.max_messages = max_messages
        self._clock = clock
        self._scopes: OrderedDict[tuple, HotScope] = OrderedDict()  # least recent first
        self._loads: dict[tuple, _Load] = {}
        self._searched: dict[tuple, float] = {}  # when each scope was last searched
        self.cached_messages = 0
        self.loads = 0

    async def get(self, params: dict[str, Any], current_thread: bool,
                  size: ScopeSize) -> HotScope | None:
        """The scope of ``params`` (checked first if cached longer than the TTL), loaded
        if need be; None (search in ClickHouse) when the cache is off, the scope is
        larger than it, or the scope is neither cached nor hot: not searched in the
        last SIZE_TTL_SECONDS with no write since."""
        if size.messages > self.max_messages:
            return None
        key, now = tenancy.scope_key(params), self._clock()
        previous = self._searched.pop(key, None)
        if len(self._searched) >= MAX_CACHED_SCOPES:
            self._searched.clear()
        self._searched[key] = now
        scope = self._scopes.get(key)
        if scope is not None and scope.expires <= now:  # still what ClickHouse holds?
            if await self._fingerprint(params, current_thread) == scope.fingerprint \
                    and self._scopes.get(key) is scope:  # and not forgotten meanwhile
                scope.expires = self._clock() + SIZE_TTL_SECONDS
            else:
                if self._scopes.get(key) is scope:
                    self._drop(key)
                scope = None
        if scope is not None:
            self._scopes.move_to_end(key)
            return scope
        load = self._loads.get(key)
        if load is None:
            if previous is None or now - previous > SIZE_TTL_SECONDS:
                return None  # not hot (yet): a load would cost more than this search
            load = self._loads[key] = _Load(asyncio.ensure_future(
                self._load(params, current_thread)))
            load.task.add_done_callback(lambda _: self._loaded(key, load))
        # Shielded: a caller that gives up does not cancel the load others wait for.
        return await asyncio.shield(load.task)

    async def _fingerprint(self, params: dict[str, Any], current_thread: bool) -> tuple:
        """The scope's messages and embeddings as a count and a sum of their keys' hashes:
        rows are never changed in place (a key's row is always the same message), so
        this changes with any row added or removed."""
        scope = tenancy.condition(current_thread)
        parts = [f"SELECT 'messages' AS part, count() AS n, sum(cityHash64(thread_id, offset))"
                 f" AS h FROM {self._database}.messages FINAL WHERE {scope}"]
        if self._vectors is not None:
            parts.append("SELECT 'vectors' AS part, count() AS n, sum(cityHash64(thread_id,"
                         f" offset)) AS h FROM {self._database}.{self._vectors} FINAL"
                         f" WHERE {scope}")
        rows = await self._clickhouse.query(" UNION ALL ".join(parts), params)
        return tuple(sorted((r["part"], int(r["n"]), int(r["h"])) for r in rows))

    async def _load(self, params: dict[str, Any], current_thread: bool) -> HotScope:
        self.loads += 1
        fingerprint = await self._fingerprint(params, current_thread)  # first: never newer
        scope = tenancy.condition(current_thread)
        messages = await self._clickhouse.query(
            "SELECT thread_id, offset, message_id, role, content, created_at_ms, terms, length"
            f" FROM {self._database}.messages FINAL WHERE {scope}", params)
        vectors = await self._clickhouse.query(  # hex: a fraction of the text of numbers
            "SELECT thread_id, offset, length, scale,"
            " arrayStringConcat(arrayMap(x -> hex(toUInt8(x)), embedding)) AS embedding"
            f" FROM {self._database}.{self._vectors} FINAL WHERE {scope}",
            params) if self._vectors is not None else []
        hot = HotScope.of(messages, vectors)
        hot.fingerprint = fingerprint
        return hot

    def _loaded(self, key: tuple, load: _Load) -> None:
        if self._loads.get(key) is load:
            del self._loads[key]
        if load.stale or load.task.cancelled() or load.task.exception() is not None:
            return
        scope = load.task.result()
        if scope.messages > self.max_messages:
            return
        now = self._clock()
        scope.expires = now + SIZE_TTL_SECONDS
        self._drop(key)
        # Least recent first: expired ones (unused for a TTL at least), then to the cap.
        while self._scopes and (self.cached_messages + scope.messages > self.max_messages
                                or next(iter(self._scopes.values())).expires <= now):
            self._drop(next(iter(self._scopes)))
        self._scopes[key] = scope
        self.cached_messages += scope.messages

    def _drop(self, key: tuple) -> None:
        scope = self._scopes.pop(key, None)
        if scope is not None:
            self.cached_messages -= scope.messages

    def forget(self, account: str, agent: str) -> None:
        """After a write to ``account``/``agent`` in this process: its scopes are loaded
        afresh, and a load under way is used by its searches but not kept."""
        for key in [k for k in self._scopes if k[:2] == (account, agent)]:
            self._drop(key)
        for key in [k for k in self._searched if k[:2] == (account, agent)]:
            del self._searched[key]
        for key in [k for k in self._loads if k[:2] == (account, agent)]:
            self._loads.pop(key).stale = True
