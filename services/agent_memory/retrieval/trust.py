"""Trust, computed at read time (seed 002's trust breakdown). It never changes
ranking: it tells the agent how far to rely on a memory.

- confidence: the memory's own (how sure its source was);
- evidence = ln(1 + n) / ln(1 + 10), n = the messages it was derived from (at
  least 1) + the times a delivery of it was rated helpful or ended in success;
- freshness = exp(-d / S): d days since it was last delivered (or changed), a
  forgetting curve whose stability S = 30 x (1 + ln(1 + deliveries)) days
  grows with use;
- utility = (positive + 1) / (positive + negative + 2) over feedback and
  outcomes credited to it (0.5 with none);
- sourceAuthority: admin and user 1.0, agent 0.7, extraction and flush 0.5,
  tool result 0.3;
- contradictionRisk: the largest of superseded 1.0, contradicted 0.5 (another
  live memory the caller sees holds the same key with other content) and
  stale 0.3 (a decaying kind unused and unchanged for 90 days, or expiring
  within 3 days);
- composite = (0.35 confidence + 0.20 evidence + 0.15 freshness + 0.10 utility
  + 0.20 sourceAuthority) x (1 - contradictionRisk).

Seed 002's example (confidence 0.8, one piece of evidence, fresh, no credit,
a user's memory, no risk) comes out at 0.738, as printed there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from services.agent_memory.memories import rules
from services.agent_memory.memories.model import Entry
from services.agent_memory.retrieval import params
from services.agent_memory.retrieval.model import Signals

_DAY = 86400.0


@dataclass(frozen=True)
class Trust:
    composite: float
    confidence: float
    evidence: float
    freshness: float
    utility: float
    contradiction_risk: float
    source_authority: float


def utility(signals: Signals) -> float:
    positive = signals.helpful + signals.successes
    negative = signals.unhelpful + signals.failures
    return (positive + 1) / (positive + negative + 2)


def freshness(entry: Entry, signals: Signals, at: datetime) -> float:
    last_use = max(filter(None, (signals.last_recalled_at, entry.updated_at)))
    days = max(0.0, (at - last_use).total_seconds() / _DAY)
    stability = params.STABILITY_BASE_DAYS * (1 + math.log1p(signals.recall_count))
    return math.exp(-days / stability)


def risk(entry: Entry, signals: Signals, at: datetime) -> float:
    found = 0.0
    if signals.superseded:
        found = max(found, params.RISK_SUPERSEDED)
    if signals.contradicted:
        found = max(found, params.RISK_CONTRADICTED)
    last_touch = max(filter(None, (signals.last_recalled_at, entry.updated_at)))
    unused = entry.kind in rules.DECAYING and at - last_touch >= params.STALE_AFTER
    expiring = entry.expires_at is not None and entry.expires_at - at <= params.EXPIRING_SOON
    if unused or expiring:
        found = max(found, params.RISK_STALE)
    return found


def trust(entry: Entry, signals: Signals, at: datetime) -> Trust:
    evidence_count = max(1, len(entry.source.message_ids)) + signals.helpful + signals.successes
    parts = {
        "confidence": entry.confidence,
        "evidence": params.saturating(evidence_count, params.EVIDENCE_SATURATION),
        "freshness": freshness(entry, signals, at),
        "utility": utility(signals),
        "sourceAuthority": params.SOURCE_AUTHORITY[entry.source.kind],
    }
    contradiction = risk(entry, signals, at)
    composite = sum(params.TRUST_WEIGHTS[k] * v for k, v in parts.items()) * (1 - contradiction)
    return Trust(composite, parts["confidence"], parts["evidence"], parts["freshness"],
                 parts["utility"], contradiction, parts["sourceAuthority"])
