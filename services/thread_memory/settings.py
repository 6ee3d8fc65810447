"""Thread-memory configuration, read from ``THREAD_MEMORY_*`` and ``MODEL_*`` variables."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from libs import clients, settings
from libs.model import ModelSettings
from libs.object_store_settings import ObjectStoreSettings
from libs.process import ProcessSettings
from libs.server import ServerSettings
from libs.settings import setting

PREFIX = "THREAD_MEMORY_"


@dataclass(frozen=True)
class ThreadMemoryServerSettings(ServerSettings):
    port: int = setting("PORT", 50053, "Port of the thread-memory gRPC server.")
    metrics_port: int = setting(
        "METRICS_PORT", 9466, "Port of the thread-memory Prometheus /metrics endpoint; 0 disables it.")


@dataclass(frozen=True)
class SummaryStoreSettings(ObjectStoreSettings):
    local_path: Path = setting("LOCAL_PATH", Path("data/summaries"),
                               "Directory of the local summary store.")
    s3_prefix: str = setting("S3_PREFIX", "summaries", "Key prefix of summaries in the bucket.")


@dataclass(frozen=True)
class DependencySettings:
    journal_address: str = setting(
        "JOURNAL_ADDRESS", "127.0.0.1:50052",
        "Every journal process (as GATEWAY_JOURNAL_ADDRESS).")
    agent_memory_address: str = setting(
        "AGENT_MEMORY_ADDRESS", "127.0.0.1:50054",
        "Agent memory's replicas, for the pre-compaction flush; empty disables the flush.")
    redis_url: str = setting("REDIS_URL", "redis://127.0.0.1:6379/0",
                             "Redis: a cache (summary, lock, counters, flush guard); never messages.")
    workers: int = setting("WORKERS", 2, "Summarization jobs run at once.")
    follow_feed: bool = setting(
        "FOLLOW_FEED", True, "Follow the journal's change feed and summarize past thresholds.")

    def __post_init__(self) -> None:
        clients.check_address(self.journal_address, "JOURNAL_ADDRESS")
        if self.agent_memory_address:
            clients.check_address(self.agent_memory_address, "AGENT_MEMORY_ADDRESS")


@dataclass(frozen=True)
class ThreadMemoryConfig:
    server: ThreadMemoryServerSettings
    store: SummaryStoreSettings
    dependencies: DependencySettings
    model: ModelSettings
    process: ProcessSettings

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ThreadMemoryConfig:
        return cls(
            server=settings.load(ThreadMemoryServerSettings, prefix=PREFIX, environ=environ),
            store=settings.load(SummaryStoreSettings, prefix=PREFIX, environ=environ),
            dependencies=settings.load(DependencySettings, prefix=PREFIX, environ=environ),
            model=settings.load(ModelSettings, prefix="MODEL_", environ=environ),
            process=ProcessSettings.from_env(environ),
        )


def variables() -> Iterator[settings.Variable]:
    for part in (ThreadMemoryServerSettings, SummaryStoreSettings, DependencySettings):
        yield from settings.describe(part, prefix=PREFIX)
    yield from settings.describe(ModelSettings, prefix="MODEL_")
