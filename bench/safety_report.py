"""Error rates of write-time screening on the labelled corpus.

    python -m bench.safety_report
"""

from __future__ import annotations

from services.agent_memory import safety
from tests.agent_memory.safety_corpus import ATTACKS, BENIGN, PLAIN, SECRETS


def report() -> dict[str, list[str]]:
    return {
        "attacks not rejected (false negatives)": [t for t in ATTACKS if not safety.screen(t).rejected],
        "benign texts rejected (false positives)": [t for t in BENIGN if safety.screen(t).rejected],
        "secrets not forced private (false negatives)":
            [t for t in SECRETS if not safety.screen(t).sensitive],
        "plain texts forced private (false positives)":
            [t for t in PLAIN + BENIGN if safety.screen(t).sensitive],
    }


if __name__ == "__main__":
    sizes = {"attacks": len(ATTACKS), "benign": len(BENIGN), "secrets": len(SECRETS),
             "plain": len(PLAIN)}
    print("corpus:", ", ".join(f"{n} {k}" for k, n in sizes.items()))
    for label, misses in report().items():
        print(f"{label}: {len(misses)}")
        for text in misses:
            print(f"    {text!r}")
