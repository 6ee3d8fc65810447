"""Search configuration, read from ``SEARCH_*`` (embedder: ``SEARCH_EMBEDDINGS_*``) and
``MODEL_*`` variables."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs import clients, settings
from libs.embeddings import EmbeddingSettings
from libs.model import ModelSettings
from libs.process import ProcessSettings
from libs.reranker import RerankSettings
from libs.server import ServerSettings
from libs.settings import Secret, setting
from services.search.clickhouse import IDENTIFIER

PREFIX = "SEARCH_"
EMBEDDINGS_PREFIX = "SEARCH_EMBEDDINGS_"


@dataclass(frozen=True)
class SearchServerSettings(ServerSettings):
    port: int = setting("PORT", 50055, "Port of the search gRPC server.")
    metrics_port: int = setting(
        "METRICS_PORT", 9468, "Port of the search Prometheus /metrics endpoint; 0 disables it.")


@dataclass(frozen=True)
class ClickHouseSettings:
    backend: Literal["chdb", "server"] = setting(
        "CLICKHOUSE_BACKEND", "chdb",
        "chdb (ClickHouse in-process, one process per directory) or server (clickhouse-driver).")
    chdb_path: Path = setting("CHDB_PATH", Path("data/clickhouse"), "Directory of chDB's data.")
    host: str = setting("CLICKHOUSE_HOST", "127.0.0.1", "ClickHouse server host (server).")
    port: int = setting("CLICKHOUSE_PORT", 9000, "ClickHouse native-protocol port (server).")
    user: str = setting("CLICKHOUSE_USER", "default", "ClickHouse user (server).")
    password: Secret = setting("CLICKHOUSE_PASSWORD", Secret(""),
                               "ClickHouse password (server; never logged).")
    database: str = setting("CLICKHOUSE_DATABASE", "agentmemory", "Database of the tables.")

    def __post_init__(self) -> None:
        if not IDENTIFIER.fullmatch(self.database):
            raise ValueError("CLICKHOUSE_DATABASE must be a plain identifier")


@dataclass(frozen=True)
class SearchDependencies:
    journal_address: str = setting(
        "JOURNAL_ADDRESS", "127.0.0.1:50052",
        "Every journal process (as GATEWAY_JOURNAL_ADDRESS).")
    project_feed: bool = setting(
        "PROJECT_FEED", True, "Follow the journal's change feed into ClickHouse.")

    def __post_init__(self) -> None:
        clients.check_address(self.journal_address, "JOURNAL_ADDRESS")


@dataclass(frozen=True)
class DenseSettings:
    enabled: bool = setting(
        "DENSE", True,
        "Hybrid search: embed every message and each query (the dense leg), fused with BM25.")
    embed_batch: int = setting(
        "EMBED_BATCH", 64, "Messages embedded per call to the embedder (the dense projection).")
    rows_budget: int = setting(
        "DENSE_ROWS_BUDGET", 20_000,
        "About the most messages the dense leg reads in a scope above 12,800 messages: it "
        "probes the query's nearest cells (at most 16) until this many. More: better recall in "
        "very large scopes, slower searches.")

    def __post_init__(self) -> None:
        if not 1 <= self.embed_batch <= 2048:
            raise ValueError(f"{PREFIX}EMBED_BATCH must be between 1 and 2048")
        if not 1_000 <= self.rows_budget <= 10_000_000:
            raise ValueError(f"{PREFIX}DENSE_ROWS_BUDGET must be between 1,000 and 10,000,000")


@dataclass(frozen=True)
class HotScopeSettings:
    messages: int = setting(
        "HOT_SCOPE_MESSAGES", 50_000,
        "Messages of hot small scopes kept in memory to search without ClickHouse (about"
        " 3 KB each); 0 turns the cache off.")
    vector_messages: int = setting(
        "HOT_VECTOR_MESSAGES", 200_000,
        "Embeddings of the agents of hot large scopes kept in memory to rank the dense leg"
        " without ClickHouse (about 600 bytes each at 384 dimensions); 0 turns the cache off.")

    def __post_init__(self) -> None:
        if self.messages < 0:
            raise ValueError(f"{PREFIX}HOT_SCOPE_MESSAGES must not be negative")
        if self.vector_messages < 0:
            raise ValueError(f"{PREFIX}HOT_VECTOR_MESSAGES must not be negative")


@dataclass(frozen=True)
class SearchConfig:
    server: SearchServerSettings
    clickhouse: ClickHouseSettings
    dependencies: SearchDependencies
    dense: DenseSettings
    hot_scopes: HotScopeSettings
    embeddings: EmbeddingSettings
    model: ModelSettings
    process: ProcessSettings
    rerank: RerankSettings = RerankSettings()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> SearchConfig:
        return cls(
            server=settings.load(SearchServerSettings, prefix=PREFIX, environ=environ),
            clickhouse=settings.load(ClickHouseSettings, prefix=PREFIX, environ=environ),
            dependencies=settings.load(SearchDependencies, prefix=PREFIX, environ=environ),
            dense=settings.load(DenseSettings, prefix=PREFIX, environ=environ),
            hot_scopes=settings.load(HotScopeSettings, prefix=PREFIX, environ=environ),
            embeddings=settings.load(EmbeddingSettings, prefix=EMBEDDINGS_PREFIX,
                                     environ=environ),
            model=settings.load(ModelSettings, prefix="MODEL_", environ=environ),
            process=ProcessSettings.from_env(environ),
            rerank=settings.load(RerankSettings, prefix=PREFIX, environ=environ),
        )


def variables() -> Iterator[settings.Variable]:
    for part in (SearchServerSettings, ClickHouseSettings, SearchDependencies, DenseSettings,
                 HotScopeSettings, RerankSettings):
        yield from settings.describe(part, prefix=PREFIX)
    yield from settings.describe(EmbeddingSettings, prefix=EMBEDDINGS_PREFIX)
