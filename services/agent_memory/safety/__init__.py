"""Write-time screening of memory content.

Two outcomes, as the seed specifies: prompt injection is rejected outright;
credentials and personal data are not rejected but force the entry
``private`` (``memories.writes`` refuses them when there is no user to own it).

The screen is layered, and deterministic (same text, same answer):

1. normalise.py: invisible and bidirectional characters are rejected; a
   normalised copy undoes case, spacing, accents, full-width forms, look-alike
   letters and digit/symbol substitutions for the layers below;
2. rules.py: families of injection phrasing (instruction overrides, headers
   and role markers, role hijacks, jailbreak personas, system-prompt
   extraction, exfiltration), each named in the rejection (``Screening.rule``,
   which the refusal's ErrorInfo carries as ``rule``);
3. classifier.py: a logistic regression over hashed n-grams, with weights
   trained on the tuning set and committed, for what the rules do not name;
4. credentials.py: detect-secrets' plugins plus checks for what they do not
   cover (prose passwords, access codes, SSNs, IBANs, cards, e-mail, phone).

``python -m bench.safety_report`` measures it on the tuning set and on a
held-out public evaluation set (bench/data/safety/).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from services.agent_memory.safety.classifier import looks_like_injection
from services.agent_memory.safety.credentials import sensitive
from services.agent_memory.safety.normalise import normalise
from services.agent_memory.safety.rules import injection

__all__ = ["CLASSIFIER", "Screening", "normalise", "screen", "warm_up"]


CLASSIFIER = "classifier"


@dataclass(frozen=True)
class Screening:
    """What screening found: a reason to reject and the rule family (or CLASSIFIER) that
    rejected, and kinds of sensitive data."""

    rejected: str | None = None
    rule: str | None = None
    sensitive: list[str] = field(default_factory=list)


def screen(text: str, *, policy: bool = False) -> Screening:
    """``policy``: an admin's or the operator's rule, imperative by design: the rule
    families and credential checks apply, the prose classifier does not."""
    refusal = injection(text)
    if refusal is not None:
        return Screening(rejected=refusal.reason, rule=refusal.rule)
    if not policy:
        score = looks_like_injection(text)
        if score is not None:
            reason = f"text that reads like a prompt injection (classifier score {score:.2f})"
            return Screening(rejected=reason, rule=CLASSIFIER)
    return Screening(sensitive=sensitive(text))


def warm_up() -> None:
    """Load the classifier's weights and detect-secrets' plugins now (about a third of a
    second) rather than inside the first Store."""
    screen("warm up: password = Warm-up-1 key AKIAIOSFODNN7EXAMPLE")
