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

A load reads the agent's rows by ranges of cells, one statement each, and
builds the arrays on a worker thread, so that searches interleave with it.
Measured at 100,000 messages: 1.4-1.9 s (1.6-1.8 s of CPU), the event loop held
up to 40 ms at a time meanwhile, and 70-100 MB more resident memory (the
arrays take 50 MB: int8 embedding, sketch, key; the first load of a process
adds about 200 MB of chDB's own caches).

Freshness: the dense projector of this process adds what it embeds (written
through: nothing is loaded again; rows embedded during a load are added when
it ends, once each), and a purge drops the agent's vectors. Writes by another
process: once ``SIZE_TTL_SECONDS`` have passed, a search starts a check (one
statement: the count and sum of journal sequences of the agent's rows,
against those held here) and vectors that differ are dropped and loaded again
while the scope stays hot; that TTL bounds what another process's writes can
leave unseen, as for the scope sizes. Memory is capped by the vectors kept
(``SEARCH_HOT_VECTOR_MESSAGES``), the least recently searched agents going
first; an agent with more is never loaded (and not counted again for
``REFUSED_SECONDS``).
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
from services.search.keyword import MAX_CACHED_SCOPES, SIZE_TTL_SECONDS, Ranked, ScopeSize

logger = logging.getLogger(__name__)

LOAD_CELLS = 8  # cells read by one load statement: searches run between them
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
        self.expires = 0.0
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
            capacity *= 2
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
        tied = np.flatnonzero(hamming == last)
        tied = sorted(tied.tolist(), key=lambda p: (self.threads[self._thread[rows[p]]],
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
                 max_messages: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._clickhouse = clickhouse
        self._table = f"{database}.{index.table}"
        self._index = index
        self.max_messages = max_messages
        self._clock = clock
        self._agents: OrderedDict[tuple[str, str], AgentVectors] = OrderedDict()
        self._loads: dict[tuple[str, str], _Load] = {}
        self._checks: dict[tuple[str, str], asyncio.Task] = {}
        self._searched: dict[tuple[str, str], float] = {}
        self._refused: dict[tuple[str, str], float] = {}
        self.cached_messages = 0
        self.loads = 0

    def get(self, params: dict[str, Any], size: ScopeSize) -> AgentVectors | None:
        """The caller's agent's vectors when held (starting a check once they are older
        than the TTL); None (rank in ClickHouse) otherwise, starting a load in the
        background when the scope was searched within the TTL."""
        if size.messages > self.max_messages:
            return None
        key, now = (params["account"], params["agent"]), self._clock()
        vectors = self._agents.get(key)
        if vectors is not None:
            self._agents.move_to_end(key)
            if vectors.expires <= now and key not in self._checks:
                self._start(self._checks, key, self._check(key, vectors))
            return vectors
        previous = self._searched.pop(key, None)
        if len(self._searched) >= MAX_CACHED_SCOPES:
            self._searched.clear()
        self._searched[key] = now
        hot = previous is not None and now - previous <= SIZE_TTL_SECONDS
        if hot and key not in self._loads and self._refused.get(key, 0.0) <= now:
            load = self._loads[key] = _Load(asyncio.ensure_future(self._load(key)))
            load.task.add_done_callback(lambda _: self._loaded(key, load))
        return None

    def _start(self, tasks: dict, key: tuple[str, str], work) -> None:
        task = tasks[key] = asyncio.ensure_future(work)
        task.add_done_callback(lambda _: tasks.pop(key, None) if tasks.get(key) is task
                               else None)

    async def _fingerprint(self, key: tuple[str, str]) -> tuple[int, int]:
        rows = await self._clickhouse.query(
            f"SELECT count() AS n, sum(sequence) AS s FROM {self._table} FINAL WHERE {_AGENT}",
            {"account": key[0], "agent": key[1]})
        return (int(rows[0]["n"]), int(rows[0]["s"])) if rows else (0, 0)

    async def _check(self, key: tuple[str, str], vectors: AgentVectors) -> None:
        held = await self._fingerprint(key)
        if self._agents.get(key) is not vectors:
            return  # dropped or replaced meanwhile
        if held == (vectors.count, vectors.sequences):
            vectors.expires = self._clock() + SIZE_TTL_SECONDS
        else:  # another process wrote: load afresh at the next search
            logger.info("hot vectors of %s/%s changed elsewhere: loaded again", *key)
            self._drop(key)
            self._searched[key] = self._clock()

    async def _load(self, key: tuple[str, str]) -> AgentVectors | None:
        self.loads += 1
        count, _ = await self._fingerprint(key)
        if count > self.max_messages:
            self._refused[key] = self._clock() + REFUSED_SECONDS
            return None
        vectors = AgentVectors(self._index, max(count, 1))
        for low in range(0, self._index.cells.count, LOAD_CELLS):
            rows = await self._clickhouse.query(  # hex: a fraction of the text of numbers
                "SELECT cell, thread_id, offset, owner_user_id, length, scale, sequence, sketch,"
                " arrayStringConcat(arrayMap(x -> hex(toUInt8(x)), embedding)) AS embedding"
                f" FROM {self._table} FINAL WHERE {_AGENT}"
                " AND cell >= {low:UInt16} AND cell < {high:UInt16}",
                {"account": key[0], "agent": key[1], "low": low, "high": low + LOAD_CELLS})
            if rows:  # off the event loop: not yet shared, and a chunk takes ~100 ms
                await asyncio.to_thread(lambda rows=rows: vectors.add(Batch.of_loaded(rows)))
        return vectors

    def _loaded(self, key: tuple[str, str], load: _Load) -> None:
        if self._loads.get(key) is load:
            del self._loads[key]
        if load.stale or load.task.cancelled():
            return
        if load.task.exception() is not None:
            logger.warning("hot vectors of %s/%s not loaded: %s", *key, load.task.exception())
            return
        vectors = load.task.result()
        if vectors is None:
            return
        for batch in load.added:
            vectors.add(batch)
        vectors.expires = self._clock() + SIZE_TTL_SECONDS
        self._drop(key)
        self._agents[key] = vectors
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
        load = self._loads.pop(key, None)
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
