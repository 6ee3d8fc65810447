"""The labelled safety data in bench/data/safety/ (see the README there)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "safety"


@dataclass(frozen=True)
class Example:
    text: str
    label: str  # "attack", "benign" (memory-like) or "benign prompt" (a question or task)
    source: str


def load(name: str) -> list[Example]:
    """``tuning`` or ``evaluation``."""
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as lines:
        return [Example(**json.loads(line)) for line in lines if line.strip()]
