"""Layer 3: a small learned classifier for what the rules do not name.

Logistic regression over hashed n-grams of the normalised text: words, word
pairs and character 3- to 5-grams inside words, each present-or-absent, the
vector scaled to unit length. Its weights (classifier.npz beside this file)
were trained by tools/train_safety_classifier.py on the tuning set only;
the threshold was chosen there from cross-validated scores. No model is
downloaded, nothing is random: the same text always gets the same score.
It judges texts of at least MIN_WORDS words; scoring a few hundred
characters takes well under a millisecond.

Its n-grams learned attack vocabulary ("mode", "prompt", "about"), which short
everyday memories share ("The user complained about dark mode" scored 0.90).
So a short text it flags counts only when it also speaks to a model: a second
person, a question, an imperative opening, or talk of instructions, prompts,
the system or a jailbreak. A memory states a fact about someone; an injection
addresses whoever reads it. Long texts need no such sign.
"""

from __future__ import annotations

import functools
import re
import zlib
from dataclasses import dataclass
from importlib import resources

import numpy

from services.agent_memory.safety.normalise import RUN_ON, normalise

BUCKETS = 1 << 18
# Prose only: keys and identifiers ("preference_concise_answers") have no spaces, and their
# few n-grams are too little evidence; the rules still judge them.
MIN_WORDS = 3
# Long texts are scored on their head and tail: that is where a hijack sits, and it bounds the cost.
HEAD, TAIL = 3000, 1000
# From this many words on, a flagged text counts without a sign that it speaks to a model.
LONG_WORDS = 16
_SECOND_PERSON = re.compile(r"\b(you|your|yours|yourself|youre|ur|du|dich|dir|dein|deine|deinen|euch)\b")
# Talk of instructions, prompts, a jailbreak or the system, as words; not words that merely
# contain one ("promptly", "instructor", "ecosystem", "systematic", "Anweisungsbefugnis").
_ABOUT_THE_MODEL = re.compile(
    # "instructions", "prompted", "jailbreaking", "Anweisungen", and compounds ending in one
    # ("systemprompt", "Systemanweisung", "ignorepreviousinstructions")
    r"\b[a-z]*(?:instruct(?:s|ed|ing|ions?)?|prompt(?:s|ed|ing)?|anweis(?:e|en|t|ung|ungen)"
    r"|jailbr(?:eak(?:s|ed|ing|ers?)?|oken))\b"
    # "system", "Systeme" and the compounds it heads ("Systemregeln"), not its derivations
    r"|\bsystem(?!at|ic|is|d\b)[a-z]*"
    # any of them inside words run together ("previousinstructionsarevoid")
    rf"|(?<=[a-z]){RUN_ON}(?:instruct|prompt|anweis|jailbr)")
# Openings of a request or a question ("Ignore ...", "Tell me ...", "What is ...").
_REQUEST_OPENINGS = frozenset("""
    ignore forget disregard tell say write print reveal give show spell list translate repeat
    act pretend imagine answer respond output now please stop generate describe explain make
    create help provide let do dont use return replace change summarize start begin continue
    from what whats how why who which can could would will is are
    vergiss ignoriere sage sag schreibe schreib zeige zeig gib nenne antworte bitte jetzt was
    wie warum""".split())


def features(text: str) -> numpy.ndarray:
    """Sorted unique bucket indices of the text's n-grams."""
    normal = normalise(text)
    if len(normal) > HEAD + TAIL:
        normal = normal[:HEAD] + " " + normal[-TAIL:]
    words = normal.split()
    grams = [f"w {w}" for w in words]
    grams += [f"b {a} {b}" for a, b in zip(words, words[1:], strict=False)]
    for word in words:
        padded = f" {word} "
        for n in (3, 4, 5):
            grams += [padded[i:i + n] for i in range(len(padded) - n + 1)]
    indices = {zlib.crc32(g.encode()) % BUCKETS for g in grams}
    return numpy.fromiter(sorted(indices), dtype=numpy.int64, count=len(indices))


@dataclass(frozen=True)
class Model:
    weights: numpy.ndarray
    bias: float
    threshold: float
    cross_validated: tuple[float, float]  # on the tuning set: share of attacks caught, of benign flagged

    def score(self, text: str) -> float:
        indices = features(text)
        if len(indices) == 0:
            return 0.0
        margin = float(self.weights[indices].sum()) / len(indices) ** 0.5 + self.bias
        return 1.0 / (1.0 + numpy.exp(-margin))


@functools.cache
def model() -> Model:
    """The committed weights, loaded once per process on first use."""
    with resources.files(__package__).joinpath("classifier.npz").open("rb") as file:
        data = numpy.load(file)
        caught, flagged = data["cross_validated"]
        return Model(weights=data["weights"].astype(numpy.float32), bias=float(data["bias"]),
                     threshold=float(data["threshold"]),
                     cross_validated=(float(caught), float(flagged)))


def speaks_to_a_model(text: str) -> bool:
    normal = normalise(text)
    words = re.findall(r"[a-z']+", normal)
    if len(words) >= LONG_WORDS:
        return True
    return bool(words) and ("?" in normal or words[0].replace("'", "") in _REQUEST_OPENINGS
                            or _SECOND_PERSON.search(normal) is not None
                            or _ABOUT_THE_MODEL.search(normal) is not None)


def looks_like_injection(text: str) -> float | None:
    """The classifier's score when it is over the threshold (and the text speaks to a
    model), else None."""
    if len(text.split()) < MIN_WORDS:
        return None
    current = model()
    score = current.score(text)
    return score if score >= current.threshold and speaks_to_a_model(text) else None
