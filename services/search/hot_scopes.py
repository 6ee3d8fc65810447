"""Hot small scopes, kept in this process: a search there runs no ranking or fetch statement.

Every ClickHouse statement costs milliseconds of planning whatever its data
(a 384-float literal alone costs 2 ms to parse in chDB), and in a small scope
(at most ``SMALL_SCOPE_TERMS`` terms, the keyword leg's own criterion) a
hybrid search was three of them: the keyword read, the dense ranking and the
fetch of the dense leg's hits. So a hot small scope, one searched again within
``SIZE_TTL_SECONDS``, is loaded whole: its messages (what hits show, with
their terms) and, when the service embeds, its embeddings (int8 values and
scale, read as hex). A load costs several searches (about 40 ms for 1,000
messages), hence the wait for a second search: a scope searched now and then
keeps the ClickHouse paths and costs what it did. Searches in a loaded scope
rank here: BM25 from the cached terms (``keyword.ranked_by_bm25``, the
formula the other paths use, with ``N`` and ``avgdl`` from
:class:`~services.search.keyword.ScopeSizes` as ever), the dense leg by numpy
with the SQL's arithmetic (int8 x float32 products summed in float64 in
dimension order, times the scale) and its order (similarity descending, then
thread and offset), and hits come from the cached rows. The results are those
of the ClickHouse paths: the same order, and the same floats (to about 1e-12
where the engine sums the dense product natively).

Freshness: this process's projections write through. The rows its keyword
and dense projectors write join the loaded scopes whose condition they meet
(owner '' or the scope's user; its thread, for one thread), once each, and
the loads under way when the load ends, so an agent that writes a turn and
searches again stays hot (its scope sizes alone are read afresh, one
statement). A purge drops the account and agent's scopes, and a load it
overtakes is used once and not kept. Another process's writes: after
``SIZE_TTL_SECONDS`` (the bound already accepted for them) a scope is checked
before it serves again: one statement (about 4 ms) compares, per table, the
count and sum of journal sequences of its rows (FINAL: one row a message)
with those held, and a scope that differs is loaded again. Expired scopes are
dropped as others are loaded, and memory is capped by the messages kept
(``SEARCH_HOT_SCOPE_MESSAGES``, about 3 KB a message of 150 characters), the
least recently searched scopes going first; a scope larger than the cap is
never loaded.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
from services.search.schema import MESSAGE_COLUMNS, VECTOR_COLUMNS

SHOWN = ("message_id", "role", "content", "created_at_ms", "length")  # a hit's row, and length


def per_message_sums(table: str, condition: str, columns: str = "") -> str:
    """A statement counting the messages of ``table`` under ``condition`` (``n``) and
    summing their journal sequences (``s``). Per message, not per row: the vectors
    table's key holds the cell, so a replay filed in another cell (an embedder's
    results drift a little between batches) is a second row even after merges."""
    # Grouped by a hash of the key: half the time of grouping by the strings themselves.
    return (f"SELECT {columns}count() AS n, sum(s) AS s FROM (SELECT max(sequence) AS s"
            f" FROM {table} WHERE {condition} GROUP BY cityHash64(thread_id, offset))")


@dataclass
class HotScope:
    """One scope's messages and embeddings, ranked in process."""

    user: str  # the scope's caller ('' for none): owner '' or this user
    thread: str | None  # the scope's thread, or None for every thread
    rows: dict[Key, dict] = field(default_factory=dict)  # what hits show, and length
    frequencies: dict[Key, Counter] = field(default_factory=dict)  # terms, first seen first
    holders: dict[int, list[Key]] = field(default_factory=dict)  # term -> messages holding it
    vector_keys: list[Key] = field(default_factory=list)  # sorted: the dense order's tie-break
    vector_lengths: list[int] = field(default_factory=list)  # terms (the length prior)
    embeddings: np.ndarray = field(  # int8, one column per message (dimensions x messages)
        default_factory=lambda: np.zeros((0, 0), dtype=np.int8))
    scales: np.ndarray = field(default_factory=lambda: np.zeros(0))  # float64, one a message
    # Per table, the rows held and the sum of their journal sequences: what the check
    # compares with ClickHouse (FINAL keeps one row a message, with its sequence).
    sums: dict[str, list[int]] = field(
        default_factory=lambda: {"messages": [0, 0], "vectors": [0, 0]})
    expires: float = 0.0

    def holds(self, owner: str, thread: str) -> bool:
        """Whether a row of ``owner``'s ``thread`` (of this account and agent) is in scope,
        the condition ``tenancy`` writes into SQL."""
        return (owner == "" or owner == self.user) and self.thread in (None, thread)

    def add_messages(self, messages: Sequence[dict]) -> int:
        """Message rows (``thread_id``, ``offset``, what hits show, ``terms``, ``length``,
        ``sequence``) not held yet; returns how many were added."""
        added = 0
        for message in messages:
            key = (message["thread_id"], int(message["offset"]))
            if key in self.rows:
                continue  # a replayed row is the same message
            self.frequencies[key] = frequency = Counter(map(int, message["terms"]))
            for term in frequency:
                self.holders.setdefault(term, []).append(key)
            self.rows[key] = {name: message[name] for name in SHOWN}
            self.sums["messages"][0] += 1
            self.sums["messages"][1] += int(message["sequence"])
            added += 1
        return added

    def add_vectors(self, vectors: Sequence[dict]) -> None:
        """Vector rows (``thread_id``, ``offset``, ``length``, ``scale``, ``sequence``, and
        ``embedding`` as int8 values) not held yet, kept in (thread, offset) order."""
        held = set(self.vector_keys)
        fresh = {}
        for vector in vectors:
            key = (vector["thread_id"], int(vector["offset"]))
            if key not in held and key not in fresh:
                fresh[key] = vector
        if not fresh:
            return
        keys = self.vector_keys + list(fresh)
        order = sorted(range(len(keys)), key=keys.__getitem__)
        columns = np.array([v["embedding"] for v in fresh.values()], dtype=np.int8).T
        embeddings = columns if not self.vector_keys else \
            np.concatenate([self.embeddings, columns], axis=1)
        self.embeddings = np.ascontiguousarray(embeddings[:, order])
        self.scales = np.concatenate([self.scales, np.array(
            [np.float32(v["scale"]) for v in fresh.values()], dtype=np.float64)])[order]
        lengths = self.vector_lengths + [int(v["length"]) for v in fresh.values()]
        self.vector_keys = [keys[i] for i in order]
        self.vector_lengths = [lengths[i] for i in order]
        self.sums["vectors"][0] += len(fresh)
        self.sums["vectors"][1] += sum(int(v["sequence"]) for v in fresh.values())

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
                for i in map(int, best)]


@dataclass
class _Load:
    task: asyncio.Task
    # Rows this process wrote to the scope's account and agent meanwhile, added when the
    # load ends (the load may or may not have read them: a row is added once).
    added: list[tuple[str, list[dict]]] = field(default_factory=list)
    stale: bool = False  # a purge overtook it: used by its searches, not kept


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
        last SIZE_TTL_SECONDS."""
        if size.messages > self.max_messages:
            return None
        key, now = tenancy.scope_key(params), self._clock()
        previous = self._searched.pop(key, None)
        if len(self._searched) >= MAX_CACHED_SCOPES:
            self._searched.clear()
        self._searched[key] = now
        scope = self._scopes.get(key)
        if scope is not None and scope.expires <= now:  # still what ClickHouse holds?
            held = {part: tuple(counted) for part, counted in scope.sums.items()}
            stored = await self._fingerprint(params, current_thread)
            if all(held[part] == value for part, value in stored.items()) \
                    and self._scopes.get(key) is scope:  # and not dropped meanwhile
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

    async def _fingerprint(self, params: dict[str, Any],
                           current_thread: bool) -> dict[str, tuple[int, int]]:
        """Per table, the scope's rows and the sum of their journal sequences (FINAL: one
        row a message): a row added or removed changes it."""
        scope = tenancy.condition(current_thread)
        parts = [f"SELECT 'messages' AS part, count() AS n, sum(sequence) AS s"
                 f" FROM {self._database}.messages FINAL WHERE {scope}"]
        if self._vectors is not None:
            parts.append(per_message_sums(f"{self._database}.{self._vectors}", scope,
                                          "'vectors' AS part, "))
        rows = await self._clickhouse.query(" UNION ALL ".join(parts), params)
        return {r["part"]: (int(r["n"]), int(r["s"])) for r in rows}

    async def _load(self, params: dict[str, Any], current_thread: bool) -> HotScope:
        self.loads += 1
        scope = tenancy.condition(current_thread)
        hot = HotScope(params["user"], params.get("thread"))
        hot.add_messages(await self._clickhouse.query(
            "SELECT thread_id, offset, message_id, role, content, created_at_ms, terms, length,"
            f" sequence FROM {self._database}.messages FINAL WHERE {scope}", params))
        if self._vectors is not None:
            vectors = await self._clickhouse.query(  # hex: a fraction of the text of numbers
                "SELECT thread_id, offset, length, scale, sequence,"
                " arrayStringConcat(arrayMap(x -> hex(toUInt8(x)), embedding)) AS embedding"
                f" FROM {self._database}.{self._vectors} FINAL WHERE {scope}", params)
            for vector in vectors:
                vector["embedding"] = np.frombuffer(bytes.fromhex(vector["embedding"]),
                                                    dtype=np.int8)
            hot.add_vectors(vectors)
        return hot

    def _loaded(self, key: tuple, load: _Load) -> None:
        if self._loads.get(key) is load:
            del self._loads[key]
        if load.stale or load.task.cancelled() or load.task.exception() is not None:
            return
        scope = load.task.result()
        for table, rows in load.added:
            self._add(scope, table, rows)
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

    @staticmethod
    def _add(scope: HotScope, table: str, named: list[dict]) -> int:
        """Rows of ``table`` (named by their columns) in ``scope``'s condition added to
        it; returns the messages added."""
        mine = [r for r in named if scope.holds(r["owner_user_id"], r["thread_id"])]
        if table == "messages":
            return scope.add_messages(mine)
        scope.add_vectors(mine)
        return 0

    def written(self, account: str, agent: str, table: str, rows: list[tuple]) -> None:
        """Rows this process projected into ``table`` ("messages" or "vectors") for
        ``account``/``agent``: added to its hot scopes (and to their loads under way),
        so that they stay hot; the cap may then evict the least recent."""
        agent_of = (account, agent)
        if not any(k[:2] == agent_of for k in (*self._scopes, *self._loads)):
            return  # the common case: nothing of this agent is held
        columns = MESSAGE_COLUMNS if table == "messages" else VECTOR_COLUMNS
        named = [dict(zip(columns, row, strict=True)) for row in rows]
        for key, scope in list(self._scopes.items()):
            if key[:2] == (account, agent):
                self.cached_messages += self._add(scope, table, named)
        for key, load in self._loads.items():
            if key[:2] == (account, agent):
                load.added.append((table, named))
        while self._scopes and self.cached_messages > self.max_messages:
            self._drop(next(iter(self._scopes)))

    def forget(self, account: str, agent: str) -> None:
        """After a purge in ``account``/``agent``: its scopes are loaded afresh, and a load
        under way is used by its searches but not kept."""
        for key in [k for k in self._scopes if k[:2] == (account, agent)]:
            self._drop(key)
        for key in [k for k in self._searched if k[:2] == (account, agent)]:
            del self._searched[key]
        for key in [k for k in self._loads if k[:2] == (account, agent)]:
            self._loads.pop(key).stale = True
