"""Shard leases: which journal process writes a shard, and when a standby may take it over.

Each shard has a lease object beside the shards in the object store
(``leases/shard-NNNN.json``), changed only by conditional writes that name the
version last read (ETag compare-and-set: ``If-Match`` / ``If-None-Match`` on S3,
the same check under a file lock in a local directory), so of two processes
racing for it exactly one wins. The holder rewrites it every third of its time
to live. A standby takes it once it has seen the same version for a whole time
to live, or at once when the holder released it on shutdown. Clocks are never
compared across machines: each side measures, on its own monotonic clock, the
time since *it* last saw the lease change, and the holder counts its time to
live from before its last successful write, so it stops writing before any
standby can have taken over.

The lease decides who *should* write; SlateDB's fencing is what makes a single
writer certain: the new holder opens the shard, which fences any previous
writer, whatever it believes. The lease keeps a live writer from being fenced
needlessly (a restarted process waits as a standby instead of taking its shard
back) and gives standbys a way to notice a dead writer with nothing but the
object store.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import asdict, dataclass

from libs.errors import Unavailable
from libs.object_store import ObjectStore, WriteConflict, build_object_store
from services.journal.settings import StoreSettings

logger = logging.getLogger(__name__)


class LeaseConflict(Exception):
    """Another process wrote the lease since it was read."""


@dataclass(frozen=True)
class LeaseRecord:
    holder: str
    version: int  # every write changes it, so every write changes the ETag
    ttl_seconds: float
    released: bool = False

    def encode(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes) -> LeaseRecord:
        return cls(**json.loads(raw))


@dataclass(frozen=True)
class StoredLease:
    record: LeaseRecord
    etag: str


def _name(shard: int) -> str:
    return f"leases/shard-{shard:04d}.json"


def _unavailable(exc: Exception) -> Unavailable:
    return Unavailable(f"journal lease store unavailable: {exc}", reason="JOURNAL_UNAVAILABLE")


class LeaseStore:
    """Each shard's lease, an object beside the shards (``libs.object_store``)."""

    def __init__(self, objects: ObjectStore) -> None:
        self._objects = objects

    async def get(self, shard: int) -> StoredLease | None:
        stored = await self._objects.get(_name(shard))
        return None if stored is None else \
            StoredLease(LeaseRecord.decode(stored.data), stored.etag)

    async def put(self, shard: int, record: LeaseRecord, expected: str | None) -> str:
        """Write if the lease's ETag is ``expected`` (None: only if absent); the new ETag.
        Raises LeaseConflict, or Unavailable when the store cannot be reached."""
        try:
            return await self._objects.put(_name(shard), record.encode(), expected=expected)
        except WriteConflict as exc:
            raise LeaseConflict(_name(shard)) from exc

    async def close(self) -> None:
        await self._objects.close()


def build_lease_store(store: StoreSettings, lease_seconds: float) -> LeaseStore:
    # A lease call must fail well within the lease's time, not hang past it.
    return LeaseStore(build_object_store(store, unavailable=_unavailable,
                                         timeout=max(0.5, lease_seconds / 3), attempts=1))


class ShardLease:
    """One process's claim on one shard's lease."""

    def __init__(self, store: LeaseStore, shard: int, holder: str, ttl: float) -> None:
        self._store = store
        self.shard = shard
        self.holder = holder
        self.ttl = ttl
        self._held: StoredLease | None = None
        self._valid_until = 0.0

    @property
    def poll_seconds(self) -> float:
        return self.ttl / 4

    @property
    def renew_seconds(self) -> float:
        return self.ttl / 3

    def valid(self) -> bool:
        """Held, and not past the time to live counted from before the last renewal."""
        return self._held is not None and time.monotonic() < self._valid_until

    async def acquire(self) -> None:
        """Return once this process holds the lease: at once when nobody holds it,
        after a whole time to live without change when somebody does."""
        seen: tuple[str, float] | None = None  # (ETag, when this process first saw it)
        while True:
            try:
                current = await self._store.get(self.shard)
                if current is None or current.record.released:
                    await self._write(current, "free")
                    return
                now = time.monotonic()
                if seen is None or seen[0] != current.etag:
                    seen = (current.etag, now)
                elif now - seen[1] >= current.record.ttl_seconds:
                    await self._write(current, f"unchanged for {now - seen[1]:.1f} s, "
                                               f"from {current.record.holder}")
                    return
            except LeaseConflict:
                seen = None  # somebody else moved first: look again
                continue
            except Unavailable as exc:
                logger.warning("shard %d: lease not readable (%s)", self.shard, exc.message)
            await asyncio.sleep(self.poll_seconds)

    async def _write(self, current: StoredLease | None, why: str) -> None:
        version = current.record.version + 1 if current else 1
        record = LeaseRecord(self.holder, version, self.ttl)
        started = time.monotonic()
        etag = await self._store.put(self.shard, record, current.etag if current else None)
        self._held = StoredLease(record, etag)
        self._valid_until = started + self.ttl
        logger.info("shard %d: lease taken by %s (%s)", self.shard, self.holder, why)

    async def renew(self) -> bool:
        """Rewrite the lease; False once another process has taken it. A store
        outage is retried by the caller until :meth:`valid` turns False."""
        held = self._held
        if held is None:
            return False
        record = LeaseRecord(self.holder, held.record.version + 1, self.ttl)
        started = time.monotonic()
        try:
            etag = await self._store.put(self.shard, record, held.etag)
        except LeaseConflict:
            logger.error("shard %d: lease taken by another process", self.shard)
            self._held = None
            return False
        self._held = StoredLease(record, etag)
        self._valid_until = started + self.ttl
        return True

    async def release(self) -> None:
        """Give the lease up (best effort), so a standby takes over without waiting."""
        held, self._held = self._held, None
        if held is None:
            return
        record = LeaseRecord(self.holder, held.record.version + 1, self.ttl, released=True)
        try:
            await self._store.put(self.shard, record, held.etag)
            logger.info("shard %d: lease released", self.shard)
        except (LeaseConflict, Unavailable) as exc:
            logger.warning("shard %d: lease not released (%s)", self.shard, exc)
