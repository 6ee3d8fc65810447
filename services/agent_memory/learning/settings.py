"""Learning's configuration (``AGENT_MEMORY_*``), part of agent memory's."""

from __future__ import annotations

from dataclasses import dataclass

from libs.settings import setting


@dataclass(frozen=True)
class LearningSettings:
    journal_address: str = setting(
        "JOURNAL_ADDRESS", "127.0.0.1:50052",
        "The journal, whose run boundaries agent memory follows to learn from finished runs; "
        "empty: no learning from runs.")
    credentials_ttl_seconds: float = setting(
        "RUN_CREDENTIALS_TTL_SECONDS", 3600.0,
        "How long a run's credentials (given at StartRun/FinishRun, kept in memory only) are "
        "held for masking; a run whose credentials expired is not learned from.")
    retry_seconds: float = setting(
        "LEARNING_RETRY_SECONDS", 30.0,
        "Base delay before learning from a run is retried (journal or model unavailable).")

    def __post_init__(self) -> None:
        if self.credentials_ttl_seconds <= 0:
            raise ValueError("RUN_CREDENTIALS_TTL_SECONDS must be positive")
        if self.retry_seconds <= 0:
            raise ValueError("LEARNING_RETRY_SECONDS must be positive")
