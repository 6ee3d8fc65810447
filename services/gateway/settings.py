"""Gateway configuration, read from ``GATEWAY_*`` variables."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from libs import clients, settings
from libs.process import ProcessSettings
from libs.server import ServerSettings
from libs.settings import Secret, setting

PREFIX = "GATEWAY_"


@dataclass(frozen=True)
class GatewayServerSettings(ServerSettings):
    port: int = setting("PORT", 50051, "Port of the gateway's gRPC server (the public surface).")
    metrics_port: int = setting(
        "METRICS_PORT", 9464, "Port of the gateway Prometheus /metrics endpoint; 0 disables it.")


@dataclass(frozen=True)
class GatewayHttpSettings:
    port: int = setting(
        "HTTP_PORT", 8080, "Port of the gateway's HTTP listener, on GATEWAY_HOST: MCP at /mcp, "
        "REST at /v1, the OpenAPI document at /openapi.json, the memory library page at "
        "/a/<account>/memory (0 picks a free one).")
    session_secret: Secret = setting(
        "SESSION_SECRET", Secret(""), "Signs the memory library page's session cookies and "
        "seals the API key each session keeps (never logged). Give every replica the same "
        "one, at least 32 characters. Empty: a random one per process, so sessions do not "
        "survive a restart and each replica knows only its own.")
    session_max_age_seconds: int = setting(
        "SESSION_MAX_AGE_SECONDS", 8 * 3600, "How long a memory library page sign-in lasts.")


@dataclass(frozen=True)
class GatewayCredentialSettings:
    token_secret: Secret = setting(
        "TOKEN_SECRET", Secret(""), "Signs the short-lived user tokens that act_for_users keys "
        "mint (KeyService.MintUserToken; never logged). Give every replica the same one, at "
        "least 32 characters. Empty: a random one per process, so a token works only on the "
        "replica that minted it, until it restarts.")


@dataclass(frozen=True)
class GatewayDependencies:
    postgres_dsn: Secret = setting(
        "POSTGRES_DSN", Secret("postgresql://postgres@127.0.0.1:5432/agentmemory"),
        "PostgreSQL for API keys, thread records and the memory library page's sessions (never "
        "logged).")
    journal_address: str = setting(
        "JOURNAL_ADDRESS", "127.0.0.1:50052",
        "The journal: every journal process, writers and standbys of all shards (one address, "
        "several as host:port,host:port, or a gRPC target such as dns:///journal:50052).")
    thread_memory_address: str = setting(
        "THREAD_MEMORY_ADDRESS", "127.0.0.1:50053",
        "Thread memory: its replicas, balanced round robin (addresses as for the journal).")
    agent_memory_address: str = setting("AGENT_MEMORY_ADDRESS", "127.0.0.1:50054",
                                        "Agent memory's replicas (as above).")
    search_address: str = setting("SEARCH_ADDRESS", "127.0.0.1:50055",
                                  "Transcript search's replicas (as above).")
    key_cache_seconds: float = setting(
        "KEY_CACHE_SECONDS", 30.0, "How long a verified API key is trusted without a lookup "
        "(a revoked key stops working at once on every replica that hears the revocation "
        "through PostgreSQL NOTIFY, and within this time on the others).")
    thread_cache_seconds: float = setting(
        "THREAD_CACHE_SECONDS", 30.0, "How long a thread record (owner, metadata) is used "
        "without reading it again. Deleting a thread or changing its metadata reaches every "
        "replica at once through PostgreSQL NOTIFY; this bounds only a replica whose "
        "listening connection stalls without breaking.")
    pinned_cache_seconds: float = setting(
        "PINNED_CACHE_SECONDS", 60.0, "How long agent memory's ListPinned answer (pinned facts, "
        "blocks) and RecallProcedures answer (records of past runs, asked once per run and "
        "task) are used for BuildContext without asking again; 0 disables the cache. Answers "
        "are kept only while agent memory's WatchPinnedChanges stream is up, and any change "
        "to an account's memories, procedures or settings drops its answers at once on every "
        "replica; this bounds only a stream that stalls without breaking. An answer also ends "
        "when an entry in it expires.")
    settings_cache_seconds: float = setting(
        "SETTINGS_CACHE_SECONDS", 5.0, "How long an agent's settings that the gateway applies "
        "(agent memory's memory_bound, relevant_memories_enabled and its token budget, and the "
        "account's memory_enabled) are used without asking again: a change made through "
        "another replica applies here within this time.")
    relevant_memories_timeout_seconds: float = setting(
        "RELEVANT_MEMORIES_TIMEOUT_SECONDS", 1.0, "How long BuildContext waits for an agent's "
        "relevant memories (agent setting relevant_memories_enabled) before it builds the turn "
        "without them (relevant_memories_status TIMED_OUT).")

    def __post_init__(self) -> None:
        clients.check_address(self.journal_address, "JOURNAL_ADDRESS")
        clients.check_address(self.thread_memory_address, "THREAD_MEMORY_ADDRESS")
        clients.check_address(self.agent_memory_address, "AGENT_MEMORY_ADDRESS")
        clients.check_address(self.search_address, "SEARCH_ADDRESS")


@dataclass(frozen=True)
class GatewayConfig:
    server: GatewayServerSettings
    http: GatewayHttpSettings
    credentials: GatewayCredentialSettings
    dependencies: GatewayDependencies
    process: ProcessSettings

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GatewayConfig:
        return cls(
            server=settings.load(GatewayServerSettings, prefix=PREFIX, environ=environ),
            http=settings.load(GatewayHttpSettings, prefix=PREFIX, environ=environ),
            credentials=settings.load(GatewayCredentialSettings, prefix=PREFIX, environ=environ),
            dependencies=settings.load(GatewayDependencies, prefix=PREFIX, environ=environ),
            process=ProcessSettings.from_env(environ),
        )


def variables() -> Iterator[settings.Variable]:
    for part in (GatewayServerSettings, GatewayHttpSettings, GatewayCredentialSettings,
                 GatewayDependencies):
        yield from settings.describe(part, prefix=PREFIX)
