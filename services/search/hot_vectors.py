"""Hot vectors: the dense leg of a large scope, ranked in this process.

Above ``dense.EXACT_UP_TO`` messages ClickHouse ranks the dense leg in two
stages within the query's nearest cells (``DenseIndex.ranked``): about 15 ms
at 100,000 messages, a third of it planning the statement (its 384-float
literal included), and the keyword leg and the fetch are statements of their
own. So when a large scope is searched again within ``SIZE_TTL_SECONDS``, its
account and agent's vectors (every thread and owner: the scopes of the
agent's users share them) are loaded in the background while searches go on
in ClickHouse, and once loaded the dense leg ranks here in about a
millisecond. It ranks as the statement does: the caller's scope applied as in
SQL (owner '' or the caller; the thread, for one thread), the same cells
probed (``Cells.probed`` over the scope's counts per cell), the same stages
(the Hamming distance of the sketches, the best ``candidates`` by it with
ties to thread and offset, then the exact product of those, int8 values times
the Float64 query summed in Float64, times the Float32 scale) and the same
order. Similarities equal the engine's to about 1e-12 (the sums run in
another order).

A load reads the agent's rows page by page (a range of the table's key each,
about 3 MB of embeddings) and builds the arrays on a worker thread, so that
searches interleave with it; one load runs at a time. Measured at 100,000
messages: 1.5-1.7 s (about 1.7 s of CPU), the event loop held up to 40 ms at a
time meanwhile; the arrays take about 470 bytes a message at 384 dimensions,
with a quarter more room for the writes that follow (70-100 MB more resident
memory in all; the first load of a process adds about 200 MB of chDB's own
caches).

Freshness: the dense projector of this process adds what it embeds (written
through: nothing is loaded again; rows embedded during a load are added when
it ends, once each), and a purge drops the agent's vectors. Writes by another
process (a replica that does not follow the feed, or a purge there): at the
first search ``SIZE_TTL_SECONDS`` or more after a load or check, a check starts
in the background (one statement, about 15 ms at 100,000 messages: the count
of the agent's messages and the sum of their journal sequences, against those
held here; per message, not per row, see ``hot_scopes.per_message_sums``), and
vectors that differ are dropped and loaded again while the scope stays hot.
That TTL bounds what another process's writes can leave unseen, as for the
scope sizes. A purge elsewhere can only leave a purged message ranked: its
hit is not shown, as the fetch of what hits show reads ``messages``.

A process that does not follow the feed (``SEARCH_PROJECT_FEED=false``)
writes nothing through, so its checks find every write: an agent that changed
is loaded again only after ``REFUSED_SECONDS``, its dense leg ranked in
ClickHouse meanwhile, lest a busy agent cost a load every two seconds.

Memory is capped by the messages held (``SEARCH_HOT_VECTOR_MESSAGES``). A
load makes room by evicting the least recently searched agents, but never
one searched within the TTL: an agent that does not fit beside those is not
loaded (and not counted again for ``REFUSED_SECONDS``), so two busy agents
never evict each other in turn. Writes past the cap evict the least recently
searched. A load that fails is logged and tried again after
``REFUSED_SECONDS``.

The statement ranks a large scope's replayed rows before ClickHouse merges
them as two candidates and probes cells by counts up to a minute old
(``CellSizes``); in process each message is one candidate and the counts are
the current ones, so the two can differ until merges and that minute pass
(making the statement take one row a message would double its cost).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from services.search.clickhouse import ClickHouse
from services.search.dense import DenseIndex, sketch
from services.search.hot_scopes import per_message_sums
from services.search.keyword import MAX_CACHED_SCOPES, SIZE_TTL_SECONDS, Ranked, ScopeSize

logger = logging.getLogger(__name__)

LOAD_BYTES = 3_000_000  # of int8 embeddings read by one load statement: searches run between
REFUSED_SECONDS = 60.0  # an agent found above the cap is not counted again for this long
_AGENT = "account_id = {account:String} AND agent_id = {agent:String}"


@dataclass(frozen=True)
class Batch:
    """Rows of one agent's vectors as arrays (``VECTOR_COLUMNS`` less account and agent)."""

    cells: np.ndarray  # uint16
    threads: list[str]
    offsets: np.ndarray  # int64
    owners: list[str]
    lengths: np.ndarray  # int64
    sketches: np.ndarray  # uint64, rows x words
    embeddings: np.ndarray  # int8, rows x dimensions
    scales: np.ndarray  # float64 of the stored Float32
    sequences: np.ndarray  # int64

    @classmethod
    def of_projected(cls, rows: Sequence[tuple]) -> Batch:
        """From the projector's rows, in ``VECTOR_COLUMNS`` order."""
        return cls(np.array([r[2] for r in rows], dtype=np.uint16), [r[3] for r in rows],
                   np.array([r[4] for r in rows], dtype=np.int64), [r[5] for r in rows],
                   np.array([r[6] for r in rows], dtype=np.int64),
                   np.array([r[7] for r in rows], dtype=np.uint64),
                   np.array([r[8] for r in rows], dtype=np.int8),
                   np.array([r[9] for r in rows], dtype=np.float32).astype(np.float64),
                   np.array([r[10] for r in rows], dtype=np.int64))

    @classmethod
    def of_loaded(cls, rows: list[dict]) -> Batch:
        """From the load statement's rows (embeddings as hex, 64-bit integers as text)."""
        # Row by row: a call over the whole chunk would hold the GIL from the event loop.
        embeddings = np.frombuffer(b"".join([bytes.fromhex(r["embedding"]) for r in rows]),
                                   dtype=np.int8).reshape(len(rows), -1)
        return cls(np.array([int(r["cell"]) for r in rows], dtype=np.uint16),
                   [r["thread_id"] for r in rows],
                   np.array([int(r["offset"]) for r in rows], dtype=np.int64),
                   [r["owner_user_id"] for r in rows],
                   np.array([int(r["length"]) for r in rows], dtype=np.int64),
                   np.array([[int(w) for w in r["sketch"]] for r in rows], dtype=np.uint64),
                   embeddings,
                   np.array([r["scale"] for r in rows], dtype=np.float32).astype(np.float64),
                   np.array([int(r["sequence"]) for r in rows], dtype=np.int64))


class AgentVectors:
    """One account and agent's vectors, in arrays that grow as rows are added."""

    def __init__(self, index: DenseIndex, capacity: int = 1024) -> None:
        dimensions = index.embedder.dimensions
        words = (dimensions + 63) // 64
        self._index = index
        self.count = 0
        self.sequences = 0  # the sum of the rows' journal sequences: with count, the check
        self.expires = 0.0  # when to check against ClickHouse again
        self.used = 0.0  # when last searched
        self.threads: list[str] = []
        self.owners: list[str] = [""]  # owner 0 is '' (the agent's shared threads)
        self._thread_ids: dict[str, int] = {}
        self._owner_ids: dict[str, int] = {"": 0}
        self._keys: set[str] = set()
        self._cells = np.zeros(capacity, dtype=np.uint16)
        self._thread = np.zeros(capacity, dtype=np.int32)
        self._offsets = np.zeros(capacity, dtype=np.int64)
        self._owner = np.zeros(capacity, dtype=np.int32)
        self._lengths = np.zeros(capacity, dtype=np.int64)
        self._scales = np.zeros(capacity, dtype=np.float64)
        self._sketches = np.zeros((capacity, words), dtype=np.uint64)
        self._embeddings = np.zeros((capacity, dimensions), dtype=np.int8)

    def add(self, batch: Batch) -> int:
        """Adds the rows not held yet (a replayed row is the same message); returns how many."""
        fresh = []
        for i, (thread, offset) in enumerate(zip(batch.threads, batch.offsets.tolist(),
                                                 strict=True)):
            key = f"{offset} {thread}"  # a string: no work for the garbage collector
            if key not in self._keys:
                self._keys.add(key)
                fresh.append(i)
        if not fresh:
            return 0
        rows = np.array(fresh, dtype=np.int64)
        start, end = self.count, self.count + len(fresh)
        self._reserve(end)
        self._cells[start:end] = batch.cells[rows]
        self._thread[start:end] = [self._id(self._thread_ids, self.threads, batch.threads[i])
                                   for i in fresh]
        self._offsets[start:end] = batch.offsets[rows]
        self._owner[start:end] = [self._id(self._owner_ids, self.owners, batch.owners[i])
                                  for i in fresh]
        self._lengths[start:end] = batch.lengths[rows]
        self._scales[start:end] = batch.scales[rows]
        self._sketches[start:end] = batch.sketches[rows]
        self._embeddings[start:end] = batch.embeddings[rows]
        self.sequences += int(batch.sequences[rows].sum())
        self.count = end
        return len(fresh)

    @staticmethod
    def _id(ids: dict[str, int], names: list[str], name: str) -> int:
        known = ids.get(name)
        if known is None:
            known = ids[name] = len(names)
            names.append(name)
        return known

    def _reserve(self, needed: int) -> None:
        capacity = len(self._cells)
        if needed <= capacity:
            return
        while capacity < needed:
            capacity = capacity * 3 // 2 + 1
        for name in ("_cells", "_thread", "_offsets", "_owner", "_lengths", "_scales",
                     "_sketches", "_embeddings"):
            old = getattr(self, name)
            grown = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            grown[:self.count] = old[:self.count]
            setattr(self, name, grown)

    async def dense_ranked(self, params: dict[str, Any], vector: Sequence[float],
                           current_thread: bool, depth: int, scope_size: int) -> list[Ranked]:
        """As ``DenseIndex.ranked`` does for a large scope (two stages in the probed cells)."""
        index, n = self._index, self.count
        owner = self._owner_ids.get(params["user"], -1) if params["user"] else 0
        in_scope = (self._owner[:n] == 0) | (self._owner[:n] == owner)
        if current_thread:
            in_scope &= self._thread[:n] == self._thread_ids.get(params["thread"], -1)
        cells = self._cells[:n]
        counts = np.bincount(cells[in_scope], minlength=index.cells.count)
        sizes = {int(c): int(counts[c]) for c in np.flatnonzero(counts)}
        probe = np.zeros(max(index.cells.count, 1), dtype=bool)
        probe[index.cells.probed(vector, sizes, index.rows_budget)] = True
        rows = np.flatnonzero(in_scope & probe[cells])
        if not len(rows):
            return []
        query_sketch = np.array(sketch(vector), dtype=np.uint64)
        hamming = np.bitwise_count(self._sketches[rows] ^ query_sketch).sum(axis=1)
        candidates = rows[self._nearest(rows, hamming, index.candidates)]
        query = np.asarray(vector, dtype=np.float64)  # bound into the SQL as Float64 literals
        similarity = (self._embeddings[candidates].astype(np.float64) @ query) \
            * self._scales[candidates]
        scored = sorted(zip((-similarity).tolist(), candidates.tolist(), strict=True),
                        key=lambda s: (s[0], self.threads[self._thread[s[1]]],
                                       int(self._offsets[s[1]])))
        return [Ranked(self.threads[self._thread[i]], int(self._offsets[i]), -negative,
                       int(self._lengths[i])) for negative, i in scored[:depth]]

    def _nearest(self, rows: np.ndarray, hamming: np.ndarray, count: int) -> np.ndarray:
        """Positions in ``rows`` of the ``count`` nearest sketches, ties to (thread, offset):
        every row nearer than the last distance taken, then the tied ones in key order."""
        if len(rows) <= count:
            return np.arange(len(rows))
        last = np.partition(hamming, count - 1)[count - 1]
        nearer = np.flatnonzero(hamming < last)
        tied = sorted(np.flatnonzero(hamming == last).tolist(),
                      key=lambda p: (self.threads[self._thread[rows[p]]],
                                     int(self._offsets[rows[p]])))
        return np.concatenate([nearer, np.array(tied[:count - len(nearer)], dtype=np.int64)])


@dataclass
class _Load:
    task: asyncio.Task
    added: list[Batch] = field(default_factory=list)  # embedded meanwhile, added at the end
    stale: bool = False  # a purge overtook it


class HotVectors:
    """Large scopes' agents searched lately, their vectors in process (see the module)."""

    def __init__(self, clickhouse: ClickHouse, database: str, index: DenseIndex,
                 max_messages: int, clock: Callable[[], float] = time.monotonic,
                 written_through: bool = True) -> None:
        # False: this process does not follow the feed, so every write is a change its
        # checks find; a changed agent is then loaded again only after REFUSED_SECONDS.
        self.written_through = written_through
        self._clickhouse = clickhouse
        self._table = f"{database}.{index.table}"
        self._index = index
        self.max_messages = max_messages
        self._clock = clock
        self._agents: OrderedDict[tuple[str, str], AgentVectors] = OrderedDict()
        self._loads: dict[tuple[str, str], _Load] = {}
        self._checks: dict[tuple[str, str], asyncio.Task] = {}
        self._searched: dict[tuple[str, str], float] = {}
        self._refused: dict[tuple[str, str], float] = {}  # until when, after a refusal
        self.page_rows = max(1000, LOAD_BYTES // index.embedder.dimensions)
        self.cached_messages = 0
        self.loads = 0

    def get(self, params: dict[str, Any], size: ScopeSize) -> AgentVectors | None:
        """The caller's agent's vectors when held (starting a check once they are older
        than the TTL); None (rank in ClickHouse) otherwise, starting a load in the
        background when the scope was searched within the TTL and no other load runs."""
        if size.messages > self.max_messages:
            return None
        key, now = (params["account"], params["agent"]), self._clock()
        vectors = self._agents.get(key)
        if vectors is not None:
            self._agents.move_to_end(key)
            vectors.used = now
            if vectors.expires <= now and key not in self._checks:
                task = self._checks[key] = asyncio.ensure_future(self._check(key, vectors))
                task.add_done_callback(lambda _: self._checked(key, task))
            return vectors
        previous = self._searched.pop(key, None)
        if len(self._searched) >= MAX_CACHED_SCOPES:
            self._searched.clear()
        self._searched[key] = now
        hot = previous is not None and now - previous <= SIZE_TTL_SECONDS
        if hot and not self._loads and self._refused.get(key, 0.0) <= now:
            load = self._loads[key] = _Load(asyncio.ensure_future(self._load(key)))
            load.task.add_done_callback(lambda _: self._loaded(key, load))
        return None

    async def _fingerprint(self, key: tuple[str, str]) -> tuple[int, int]:
        rows = await self._clickhouse.query(
            per_message_sums(self._table, _AGENT), {"account": key[0], "agent": key[1]})
        return (int(rows[0]["n"]), int(rows[0]["s"])) if rows else (0, 0)

    async def _check(self, key: tuple[str, str], vectors: AgentVectors) -> None:
        stored = await self._fingerprint(key)
        if self._agents.get(key) is not vectors:
            return  # dropped or replaced meanwhile
        if stored == (vectors.count, vectors.sequences):
            vectors.expires = self._clock() + SIZE_TTL_SECONDS
        else:  # another process wrote or purged: load afresh at the next search
            logger.info("hot vectors of %s/%s changed elsewhere: loaded again", *key)
            self._drop(key)
            if self.written_through:
                self._searched[key] = self._clock()
            else:  # each write would cost a whole load: at most one a REFUSED_SECONDS
                self._refuse(key)

    def _checked(self, key: tuple[str, str], task: asyncio.Task) -> None:
        if self._checks.get(key) is task:
            del self._checks[key]
        if not task.cancelled() and task.exception() is not None:
            logger.warning("hot vectors of %s/%s not checked (checked again at the next"
                           " search): %s", *key, task.exception())

    def _room(self, key: tuple[str, str], now: float) -> int:
        """Messages that may be held for ``key``: the cap less the agents searched within
        the TTL (they are not evicted for a load, lest two agents evict each other)."""
        busy = sum(v.count for k, v in self._agents.items()
                   if k != key and now - v.used < SIZE_TTL_SECONDS)
        return self.max_messages - busy

    def _refuse(self, key: tuple[str, str]) -> None:
        now = self._clock()
        if len(self._refused) >= MAX_CACHED_SCOPES:
            self._refused = {k: t for k, t in self._refused.items() if t > now}
        self._refused[key] = now + REFUSED_SECONDS

    async def _load(self, key: tuple[str, str]) -> AgentVectors | None:
        self.loads += 1
        count, _ = await self._fingerprint(key)
        if count > self._room(key, self._clock()):
            self._refuse(key)
            return None
        vectors = AgentVectors(self._index, int(count * 1.25) + 1024)  # room for writes
        page = self.page_rows
        after: dict[str, Any] = {}  # keyset paging: each page a range of the table's key
        while True:
            rows = await self._clickhouse.query(  # hex: a fraction of the text of numbers
                "SELECT cell, thread_id, offset, owner_user_id, length, scale, sequence, sketch,"
                " arrayStringConcat(arrayMap(x -> hex(toUInt8(x)), embedding)) AS embedding"
                f" FROM {self._table} FINAL WHERE {_AGENT}"
                + (" AND (cell, thread_id, offset) > ({cell:UInt16}, {thread:String},"
                   " {offset:UInt64})" if after else "")
                + " ORDER BY cell, thread_id, offset LIMIT {page:UInt32}",
                {"account": key[0], "agent": key[1], "page": page, **after})
            if not rows:
                return vectors
            # Off the event loop: not yet shared, and a page takes tens of milliseconds.
            await asyncio.to_thread(_load, vectors, rows)
            last = rows[-1]
            after = {"cell": int(last["cell"]), "thread": last["thread_id"],
                     "offset": int(last["offset"])}
            if len(rows) < page:
                return vectors

    def _loaded(self, key: tuple[str, str], load: _Load) -> None:
        if self._loads.get(key) is load:
            del self._loads[key]
        if load.task.cancelled():
            return
        if load.task.exception() is not None:
            logger.warning("hot vectors of %s/%s not loaded (tried again in %.0f s): %s",
                           *key, REFUSED_SECONDS, load.task.exception())
            self._refuse(key)
            return
        vectors = load.task.result()
        if vectors is None or load.stale:
            return
        for batch in load.added:
            vectors.add(batch)
        now = self._clock()
        vectors.expires = now + SIZE_TTL_SECONDS
        vectors.used = now
        self._drop(key)
        if vectors.count > self._room(key, now):
            self._refuse(key)  # others were searched meanwhile: they keep their place
            return
        self._agents[key] = vectors  # the most recent: the others go first
        self.cached_messages += vectors.count
        self._keep_to_cap()

    def _keep_to_cap(self) -> None:
        while self._agents and self.cached_messages > self.max_messages:
            self._drop(next(iter(self._agents)))  # least recently searched first

    def _drop(self, key: tuple[str, str]) -> None:
        vectors = self._agents.pop(key, None)
        if vectors is not None:
            self.cached_messages -= vectors.count

    def embedded(self, account: str, agent: str, rows: Sequence[tuple]) -> None:
        """Rows this process's dense projector wrote for ``account``/``agent``."""
        key = (account, agent)
        vectors, load = self._agents.get(key), self._loads.get(key)
        if vectors is None and load is None:
            return
        batch = Batch.of_projected(rows)
        if load is not None:
            load.added.append(batch)
        if vectors is not None:
            self.cached_messages += vectors.add(batch)
            self._keep_to_cap()

    def forget(self, account: str, agent: str) -> None:
        """After a purge in ``account``/``agent``: its vectors are loaded afresh."""
        key = (account, agent)
        self._drop(key)
        self._searched.pop(key, None)
        load = self._loads.get(key)
        if load is not None:
            load.stale = True

    def _tasks(self) -> list[asyncio.Task]:
        return [load.task for load in self._loads.values()] + list(self._checks.values())

    async def settled(self) -> None:
        """Returns once the loads and checks under way have ended."""
        await asyncio.gather(*self._tasks(), return_exceptions=True)

    async def close(self) -> None:
        tasks = self._tasks()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _load(vectors: AgentVectors, rows: list[dict[str, Any]]) -> None:
    vectors.add(Batch.of_loaded(rows))
