"""Every credential and personal-data detector finds its kind in several realistic variants
and leaves look-alikes alone (the table is in safety_secrets.py)."""

from __future__ import annotations

import pytest

from services.agent_memory import safety
from tests.agent_memory.safety_secrets import DETECTORS

POSITIVE = [(kind, text) for kind, (found, _) in DETECTORS.items() for text in found]
NEGATIVE = [(kind, text) for kind, (_, passed) in DETECTORS.items() for text in passed]


@pytest.mark.parametrize("kind, text", POSITIVE, ids=[f"{k}: {t[:40]}" for k, t in POSITIVE])
def test_each_detector_finds_its_kind(kind, text):
    screening = safety.screen(text)
    assert screening.rejected is None, screening
    assert kind in screening.sensitive, screening.sensitive


@pytest.mark.parametrize("kind, text", NEGATIVE, ids=[f"{k}: {t[:40]}" for k, t in NEGATIVE])
def test_each_detector_leaves_look_alikes_alone(kind, text):
    screening = safety.screen(text)
    assert screening.rejected is None, screening
    assert screening.sensitive == [], screening.sensitive
