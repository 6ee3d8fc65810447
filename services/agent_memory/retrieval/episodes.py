"""Episodes: what past runs were about, for the episode leg, the relevantEpisodes
section and the run summary. The learning side's run-finish path records one per
finished run (RecordEpisode); re-recording a run replaces it."""

from __future__ import annotations

import re

MAX_TASK_CHARS = 2000
MAX_SUMMARY_CHARS = 16000
OUTCOMES = ("succeeded", "failed", "cancelled")

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")


def sentences(task: str, summary: str) -> list[str]:
    """The task, then the summary split into sentences (each a document of the episode leg)."""
    found = [task.strip()] if task.strip() else []
    found += [s.strip() for s in _SENTENCE_END.split(summary) if s.strip()]
    return found
