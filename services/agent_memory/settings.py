"""Agent-memory configuration, read from ``AGENT_MEMORY_*`` and ``EMBEDDINGS_*`` variables."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs import settings
from libs.embeddings import EmbeddingSettings
from libs.model import ModelSettings
from libs.process import ProcessSettings
from libs.reranker import RerankSettings
from libs.server import ServerSettings
from libs.settings import Secret, setting
from services.agent_memory.learning.settings import LearningSettings

PREFIX = "AGENT_MEMORY_"


@dataclass(frozen=True)
class AgentMemoryServerSettings(ServerSettings):
    port: int = setting("PORT", 50054, "Port of the agent-memory gRPC server.")
    metrics_port: int = setting(
        "METRICS_PORT", 9467, "Port of the agent-memory Prometheus /metrics endpoint; 0 disables it.")


@dataclass(frozen=True)
class StorageSettings:
    postgres_dsn: Secret = setting(
        "POSTGRES_DSN", Secret("postgresql://postgres@127.0.0.1:5432/agentmemory"),
        "PostgreSQL connection URL (may hold a password: never logged).",
    )
    index: Literal["edge", "qdrant"] = setting(
        "INDEX", "edge", "Vector index: edge (Qdrant engine in-process) or qdrant (a server).")
    index_path: Path = setting(
        "INDEX_PATH", Path("data/qdrant"), "Directory of the in-process index (edge).")
    index_optimize_after_changes: int = setting(
        "INDEX_OPTIMIZE_AFTER_CHANGES", 10_000,
        "Embedded index (edge): build a collection's HNSW graphs in the background once this"
        " many of its points are outside them (at start-up too); smaller collections stay a"
        " plain scan. 0 never builds them.")
    qdrant_url: str = setting("QDRANT_URL", "http://localhost:6333", "Qdrant server URL (qdrant).")
    qdrant_api_key: Secret = setting("QDRANT_API_KEY", Secret(""), "Qdrant API key, if any.")
    projector_batch: int = setting(
        "PROJECTOR_BATCH", 64, "Outbox rows projected into the index per pass.")
    hygiene_interval_hours: float = setting(
        "HYGIENE_INTERVAL_HOURS", 24.0, "Hours between hygiene passes (expiry and decay).")

    def __post_init__(self) -> None:
        if self.projector_batch < 1:
            raise ValueError(f"{PREFIX}PROJECTOR_BATCH must be at least 1")
        if self.index_optimize_after_changes < 0:
            raise ValueError(f"{PREFIX}INDEX_OPTIMIZE_AFTER_CHANGES must be 0 or more")
        if self.hygiene_interval_hours <= 0:
            raise ValueError(f"{PREFIX}HYGIENE_INTERVAL_HOURS must be positive")


@dataclass(frozen=True)
class AgentMemoryConfig:
    server: AgentMemoryServerSettings
    storage: StorageSettings
    embeddings: EmbeddingSettings
    process: ProcessSettings
    learning: LearningSettings = LearningSettings()
    rerank: RerankSettings = RerankSettings()
    # The utility model: extraction, assisted retrieval (query parsing, reranking).
    model: ModelSettings = ModelSettings()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AgentMemoryConfig:
        return cls(
            server=settings.load(AgentMemoryServerSettings, prefix=PREFIX, environ=environ),
            storage=settings.load(StorageSettings, prefix=PREFIX, environ=environ),
            embeddings=settings.load(EmbeddingSettings, prefix="EMBEDDINGS_", environ=environ),
            process=ProcessSettings.from_env(environ),
            learning=settings.load(LearningSettings, prefix=PREFIX, environ=environ),
            rerank=settings.load(RerankSettings, prefix=PREFIX, environ=environ),
            model=settings.load(ModelSettings, prefix="MODEL_", environ=environ),
        )


def variables() -> Iterator[settings.Variable]:
    for part in (AgentMemoryServerSettings, StorageSettings, LearningSettings,
                 RerankSettings):
        yield from settings.describe(part, prefix=PREFIX)
    yield from settings.describe(EmbeddingSettings, prefix="EMBEDDINGS_")
