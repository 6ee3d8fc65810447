"""Journal configuration, read from ``JOURNAL_*`` variables."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from libs import settings
from libs.object_store_settings import ObjectStoreSettings
from libs.process import ProcessSettings
from libs.server import ServerSettings
from libs.settings import setting

PREFIX = "JOURNAL_"


@dataclass(frozen=True)
class JournalServerSettings(ServerSettings):
    port: int = setting("PORT", 50052, "Port of the journal's gRPC server.")
    metrics_port: int = setting(
        "METRICS_PORT", 9465, "Port of the journal Prometheus /metrics endpoint; 0 disables it.")


@dataclass(frozen=True)
class StoreSettings(ObjectStoreSettings):
    """Where the shards' SlateDB databases live."""

    local_path: Path = setting(
        "LOCAL_PATH", Path("data/journal"), "Directory of the local object store.")
    s3_prefix: str = setting("S3_PREFIX", "journal", "Key prefix of the shards in the bucket.")


@dataclass(frozen=True)
class ShardSettings:
    shard_count: int = setting(
        "SHARD_COUNT",
        1,
        "Shards (SlateDB databases) threads are spread over; fixed when the journal is created.",
    )
    flush_interval_ms: int = setting(
        "FLUSH_INTERVAL_MS",
        10,
        "Least time between two flushes of a shard's write-ahead log: appends written "
        "meanwhile wait for the next flush and share it (group commit); the first append "
        "after a quiet spell is flushed at once. On S3 each flush is one PUT request, so "
        "raise it (50-100) to cut request costs.",
    )
    run_idle_timeout_seconds: float = setting(
        "RUN_IDLE_TIMEOUT_SECONDS",
        1800.0,
        "A run with no new message for this long is closed with the outcome timed_out "
        "(finish time: its last activity plus this timeout).",
    )
    shards: str = setting(
        "SHARDS", "",
        "Shards this process serves, as a list (0 or 0,1); empty: all. Clients send each "
        "thread's calls to the process holding its shard.")
    cache_mb: int = setting(
        "CACHE_MB", 64,
        "MiB of memory for SlateDB's cache of the blocks, indexes and filters it reads, one "
        "cache for every shard this process holds (0: none). The process's resident memory "
        "grows by up to this much as the cache fills. SlateDB's own default, 640 per shard, "
        "is not used.")
    lease_seconds: float = setting(
        "LEASE_SECONDS", 0.0,
        "0: this process opens its shards at start and is their only writer. Above 0: a "
        "lease in the object store, renewed every third of this time, names each shard's "
        "writer; the other processes serving the shard wait as standbys and one takes it "
        "over (fencing the old writer) when the lease has not changed for this long.")

    def __post_init__(self) -> None:
        if not 0.1 <= self.run_idle_timeout_seconds <= 7 * 24 * 3600:
            raise ValueError(f"{PREFIX}RUN_IDLE_TIMEOUT_SECONDS must be 0.1-604800")
        if not 1 <= self.shard_count <= 1024:
            raise ValueError(f"{PREFIX}SHARD_COUNT must be 1-1024")
        if not 1 <= self.flush_interval_ms <= 10_000:
            raise ValueError(f"{PREFIX}FLUSH_INTERVAL_MS must be 1-10000")
        if not 0 <= self.cache_mb <= 1_048_576:
            raise ValueError(f"{PREFIX}CACHE_MB must be 0-1048576")
        self.served()
        if self.lease_seconds and not 0.5 <= self.lease_seconds <= 600:
            raise ValueError(f"{PREFIX}LEASE_SECONDS must be 0 or 0.5-600")

    def served(self) -> tuple[int, ...]:
        """The shards this process serves, in order."""
        if not self.shards.strip():
            return tuple(range(self.shard_count))
        try:
            chosen = {int(part) for part in self.shards.split(",")}
        except ValueError:
            raise ValueError(f"{PREFIX}SHARDS must be a comma-separated list of shard numbers") \
                from None
        if not all(0 <= shard < self.shard_count for shard in chosen):
            raise ValueError(f"{PREFIX}SHARDS must name shards 0-{self.shard_count - 1}")
        return tuple(sorted(chosen))


@dataclass(frozen=True)
class JournalConfig:
    server: JournalServerSettings
    store: StoreSettings
    shards: ShardSettings
    process: ProcessSettings

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> JournalConfig:
        return cls(
            server=settings.load(JournalServerSettings, prefix=PREFIX, environ=environ),
            store=settings.load(StoreSettings, prefix=PREFIX, environ=environ),
            shards=settings.load(ShardSettings, prefix=PREFIX, environ=environ),
            process=ProcessSettings.from_env(environ),
        )


def variables() -> Iterator[settings.Variable]:
    for part in (JournalServerSettings, StoreSettings, ShardSettings):
        yield from settings.describe(part, prefix=PREFIX)
