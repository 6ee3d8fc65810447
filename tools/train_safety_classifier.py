"""Train the injection classifier on the tuning set; write its weights.

    python -m tools.train_safety_classifier

Reads bench/data/safety/tuning.jsonl, tools/safety_corpus.py and the
tuning halves of the mirrored sources, REALTALK's chats and Common Voice's German
and French sentences (tools/safety_data.mirrored; never the evaluation set),
fits a class-balanced, L2-regularised logistic
regression over the hashed n-grams of services/agent_memory/safety/classifier.py
by full-batch Adam (no randomness: same data, same weights), picks the three
thresholds (for texts that mention the model, address someone, or make a
request; see classifier.signal) together from 5-fold cross-validated scores:
the triple that
catches the most attacks while flagging at most MAX_FLAGGED of each kind of
benign text (public facts, our own statements, conversation turns) and none of
the corpus's statements that must be stored. Writes classifier.npz.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy

from services.agent_memory.safety import classifier, rules
from tools import safety_corpus, safety_data

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "services" / "agent_memory" / "safety" / "classifier.npz"
L2 = 3e-5
EPOCHS = 600
LEARNING_RATE = 0.05
FOLDS = 5
# The share of benign tuning texts the thresholds may flag, per kind: public facts and
# memory-like statements (what an agent stores; the target is 0.1%), our own corpus of
# statements written around the attacks' words ("The previous instructions for the CI config
# are outdated": 1%, the target of bench/everyday_memories.py's like statements), and
# conversation turns (what the learner reads, where a turn wrongly flagged is left out of
# extraction rather than lost).
MAX_FLAGGED = {"facts": 0.001, "ours": 0.01, "turns": 0.01}
KINDS = tuple(MAX_FLAGGED)
MEMORIES = (KINDS.index("facts"), KINDS.index("ours"))
# None of the corpus's hand-written statements that must be stored (safety_corpus.BENIGN, which
# tests/agent_memory/test_safety.py holds the screen to) may be flagged.
MUST_STORE = frozenset(safety_corpus.BENIGN)


@dataclass
class TuningSet:
    texts: list[str]
    labels: numpy.ndarray  # 1 for an attack
    kinds: numpy.ndarray  # of each benign text, an index into KINDS (attacks have 0 too)
    sources: numpy.ndarray  # of each attack, a number (benign texts have 0)

    @property
    def must_store(self) -> numpy.ndarray:
        return numpy.array([t in MUST_STORE for t in self.texts]) & (self.labels == 0)

    @property
    def judged(self) -> numpy.ndarray:
        """Which texts the classifier is asked about (MIN_WORDS or more)."""
        return numpy.array([len(t.split()) >= classifier.MIN_WORDS for t in self.texts])

    def subset(self, keep: numpy.ndarray) -> TuningSet:
        return TuningSet([t for t, k in zip(self.texts, keep, strict=True) if k], self.labels[keep],
                         self.kinds[keep], self.sources[keep])

    def budgets(self) -> list[tuple[numpy.ndarray, float]]:
        """(benign texts, how many of them may be flagged): MAX_FLAGGED of each kind, none of
        MUST_STORE."""
        kinds = [((self.labels == 0) & (self.kinds == index), MAX_FLAGGED[kind])
                 for index, kind in enumerate(KINDS)]
        return [(mask, share * mask.sum()) for mask, share in kinds] + [(self.must_store, 0.0)]


def tuning_texts() -> TuningSet:
    if missing := safety_data.missing():
        raise SystemExit(f"not in {safety_data.MIRRORS}: {', '.join(missing)} (fetch them)")
    rows = safety_data.load("tuning") + safety_data.mirrored("tuning")
    texts = [r.text for r in rows]
    labels = [r.label == "attack" for r in rows]
    corpus_attacks = (safety_corpus.ATTACKS + safety_corpus.MORE_ATTACKS
                      + safety_corpus.templated_attacks())
    other_languages = safety_corpus.MULTILINGUAL_ATTACKS
    corpus_benign = (safety_corpus.BENIGN + safety_corpus.MORE_BENIGN + safety_corpus.PLAIN
                     + safety_corpus.hard_negatives() + safety_corpus.preference_statements()
                     + safety_corpus.MULTILINGUAL_BENIGN
                     + safety_corpus.SECRETS + [text for _, text in safety_corpus.CREDENTIALS])
    corpus_benign += safety_corpus.memory_keys(
        [r.text for r in safety_data.load("tuning") if r.label == "benign"][::3])
    kinds = [KINDS.index("turns" if r.label == "benign turn" else "facts") for r in rows]
    kinds += [0] * (len(corpus_attacks) + len(other_languages)) + [KINDS.index("ours")] * len(corpus_benign)
    sources = [r.source if r.label == "attack" else "" for r in rows]
    sources += (["corpus"] * len(corpus_attacks) + ["corpus, other languages"] * len(other_languages)
                + [""] * len(corpus_benign))
    names = sorted(set(sources))
    texts += corpus_attacks + other_languages + corpus_benign
    labels += [True] * (len(corpus_attacks) + len(other_languages)) + [False] * len(corpus_benign)
    return TuningSet(texts, numpy.array(labels, dtype=numpy.float64), numpy.array(kinds),
                     numpy.array([names.index(s) for s in sources]))


@dataclass
class Design:
    """Rows of hashed features as one flat index array with row offsets (a CSR matrix of 1/sqrt(n))."""

    indices: numpy.ndarray
    rows: numpy.ndarray
    values: numpy.ndarray

    @classmethod
    def of(cls, texts: list[str]) -> Design:
        per_text = [classifier.features(t) for t in texts]
        rows = numpy.repeat(numpy.arange(len(texts)), [len(f) for f in per_text])
        values = numpy.concatenate([numpy.full(len(f), 1 / max(len(f), 1) ** 0.5) for f in per_text])
        return cls(numpy.concatenate(per_text), rows, values)

    def subset(self, keep: numpy.ndarray) -> Design:
        mask = keep[self.rows]
        renumber = numpy.cumsum(keep) - 1
        return Design(self.indices[mask], renumber[self.rows[mask]], self.values[mask])

    def margins(self, weights: numpy.ndarray, bias: float, count: int) -> numpy.ndarray:
        return numpy.bincount(self.rows, weights=weights[self.indices] * self.values,
                              minlength=count) + bias


def sample_weights(labels: numpy.ndarray, sources: numpy.ndarray,
                   kinds: numpy.ndarray) -> numpy.ndarray:
    """Each class weighs the same in the loss, however many examples it has; within the attacks,
    so does each source (the 572 long in-the-wild jailbreaks would otherwise outweigh the short
    injections of every other source together), and within the benign texts each kind (the
    5,000 conversation turns would outweigh the facts)."""
    weights = numpy.zeros(len(labels))
    for label, groups in ((1, sources), (0, kinds)):
        names = numpy.unique(groups[labels == label])
        for name in names:
            mask = (labels == label) & (groups == name)
            weights[mask] = 0.5 / len(names) / mask.sum()
    return weights


def fit(design: Design, labels: numpy.ndarray,
        sample_weight: numpy.ndarray) -> tuple[numpy.ndarray, float]:
    count = len(labels)
    weights, bias = numpy.zeros(classifier.BUCKETS), 0.0
    moments = [numpy.zeros(classifier.BUCKETS), numpy.zeros(classifier.BUCKETS), 0.0, 0.0]
    for step in range(1, EPOCHS + 1):
        probability = 1 / (1 + numpy.exp(-design.margins(weights, bias, count)))
        error = (probability - labels) * sample_weight
        gradient = numpy.bincount(design.indices, weights=error[design.rows] * design.values,
                                  minlength=classifier.BUCKETS) + L2 * weights
        bias_gradient = error.sum()
        weights = _adam(weights, gradient, moments, 0, step)
        bias = _adam(numpy.array([bias]), numpy.array([bias_gradient]), moments, 2, step)[0]
    return weights, float(bias)


def _adam(value, gradient, moments, at, step, beta1=0.9, beta2=0.999, eps=1e-8):
    moments[at] = beta1 * moments[at] + (1 - beta1) * gradient
    moments[at + 1] = beta2 * moments[at + 1] + (1 - beta2) * gradient ** 2
    first = moments[at] / (1 - beta1 ** step)
    second = moments[at + 1] / (1 - beta2 ** step)
    return value - LEARNING_RATE * first / (numpy.sqrt(second) + eps)


def _fold(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % FOLDS


def cross_validated_scores(texts: list[str], design: Design, labels: numpy.ndarray,
                           sources: numpy.ndarray, kinds: numpy.ndarray) -> numpy.ndarray:
    folds = numpy.array([_fold(t) for t in texts])
    scores = numpy.zeros(len(texts))
    for k in range(FOLDS):
        train = folds != k
        weights, bias = fit(design.subset(train), labels[train],
                            sample_weights(labels[train], sources[train], kinds[train]))
        held = ~train
        margins = design.subset(held).margins(weights, bias, int(held.sum()))
        scores[held] = 1 / (1 + numpy.exp(-margins))
    return scores


def choose_thresholds(scores: numpy.ndarray, judged: TuningSet,
                      signals: numpy.ndarray) -> tuple[float, ...]:
    """(MENTIONS, ADDRESSED, REQUEST) thresholds: of the triples on a 0.01 grid from 0.3 with
    at most MAX_FLAGGED of each kind of benign text flagged and none of MUST_STORE, the one
    whose flags catch the most of the attacks no rule family refuses (what the classifier is
    for) less the memories they refuse (facts and our statements; turns have their budget):
    a threshold lowered to catch one more attack while refusing one more memory is not
    lower. Ties go to the higher thresholds. (From 0.05 the turns' budget is spent lower and
    no more attacks are caught.)"""
    grid = numpy.round(numpy.arange(0.3, 1.0, 0.01), 2)
    benign, allowed = zip(*judged.budgets(), strict=True)
    allowed = numpy.array(allowed)
    unnamed = (judged.labels == 1) & ~numpy.array([rules.injection(t) is not None for t in judged.texts])
    # per tier and threshold: attacks no rule names, then each kind of benign text, over it
    counts = {strength: numpy.array([[((signals == strength) & (scores >= t) & mask).sum()
                                      for mask in (unnamed, *benign)] for t in grid])
              for strength in (classifier.MENTIONS, classifier.ADDRESSED, classifier.REQUEST)}
    best = (-len(scores), 0.0, (0.0, 0.0, 0.0))
    for i, j, k in itertools.product(range(len(grid)), repeat=3):
        total = (counts[classifier.MENTIONS][i] + counts[classifier.ADDRESSED][j]
                 + counts[classifier.REQUEST][k])
        if (total[1:] <= allowed).all():
            net = int(total[0]) - int(total[1:][list(MEMORIES)].sum())
            best = max(best, (net, grid[i] + grid[j] + grid[k],
                              (float(grid[i]), float(grid[j]), float(grid[k]))))
    return best[2]


def flagged_by(scores: numpy.ndarray, signals: numpy.ndarray,
               thresholds: tuple[float, ...]) -> numpy.ndarray:
    limit = numpy.choose(signals, [numpy.inf, *thresholds])
    return scores >= limit


def main() -> None:
    tuning = tuning_texts()
    texts, labels, kinds, sources = tuning.texts, tuning.labels, tuning.kinds, tuning.sources
    design = Design.of(texts)
    scores = cross_validated_scores(texts, design, labels, sources, kinds)
    # The thresholds and the figures count only the texts the classifier is asked about.
    judged, scores = tuning.subset(tuning.judged), scores[tuning.judged]
    signals = numpy.array([classifier.signal(t) for t in judged.texts])
    thresholds = choose_thresholds(scores, judged, signals)
    flagged_texts = flagged_by(scores, signals, thresholds)
    caught = flagged_texts[judged.labels == 1].mean()
    flagged = flagged_texts[judged.labels == 0].mean()
    print(f"{len(texts)} texts, {int(labels.sum())} attacks, {len(judged.texts)} long enough to "
          f"judge; cross-validated at thresholds {thresholds[0]:.2f} (mentions), "
          f"{thresholds[1]:.2f} (addressed) and {thresholds[2]:.2f} (requests): "
          f"{caught:.1%} of attacks caught, "
          f"{flagged:.2%} of benign flagged")
    weights, bias = fit(design, labels, sample_weights(labels, sources, kinds))
    numpy.savez_compressed(OUT, weights=weights.astype(numpy.float16), bias=numpy.float64(bias),
                           thresholds=numpy.array(thresholds, dtype=numpy.float64),
                           cross_validated=numpy.array([caught, flagged]))
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
