"""Train the injection classifier on the tuning set; write its weights.

    python -m tools.train_safety_classifier

Reads bench/data/safety/tuning.jsonl and tests/agent_memory/safety_corpus.py
(never the evaluation set), fits a class-balanced, L2-regularised logistic
regression over the hashed n-grams of services/agent_memory/safety/classifier.py
by full-batch Adam (no randomness: same data, same weights), picks the
threshold from 5-fold cross-validated scores so that at most MAX_BENIGN_FLAGGED
of the benign tuning texts would be flagged, and writes classifier.npz.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy

from bench import safety_data
from services.agent_memory.safety import classifier
from tests.agent_memory import safety_corpus

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "services" / "agent_memory" / "safety" / "classifier.npz"
L2 = 3e-5
EPOCHS = 600
LEARNING_RATE = 0.05
FOLDS = 5
MAX_BENIGN_FLAGGED = 0.005


def tuning_texts() -> tuple[list[str], numpy.ndarray]:
    rows = safety_data.load("tuning")
    texts = [r.text for r in rows]
    labels = [r.label == "attack" for r in rows]
    corpus_attacks = (safety_corpus.ATTACKS + safety_corpus.MORE_ATTACKS
                      + safety_corpus.templated_attacks())
    corpus_benign = (safety_corpus.BENIGN + safety_corpus.MORE_BENIGN + safety_corpus.PLAIN
                     + safety_corpus.hard_negatives() + safety_corpus.preference_statements()
                     + safety_corpus.SECRETS + [text for _, text in safety_corpus.CREDENTIALS])
    corpus_benign += safety_corpus.memory_keys([r.text for r in rows if r.label != "attack"][::3])
    texts += corpus_attacks + corpus_benign
    labels += [True] * len(corpus_attacks) + [False] * len(corpus_benign)
    return texts, numpy.array(labels, dtype=numpy.float64)


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


def fit(design: Design, labels: numpy.ndarray) -> tuple[numpy.ndarray, float]:
    count = len(labels)
    positive = labels.sum()
    # Each class weighs the same in the loss, however many examples it has.
    sample_weight = numpy.where(labels == 1, 0.5 / positive, 0.5 / (count - positive))
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


def cross_validated_scores(texts: list[str], design: Design, labels: numpy.ndarray) -> numpy.ndarray:
    folds = numpy.array([_fold(t) for t in texts])
    scores = numpy.zeros(len(texts))
    for k in range(FOLDS):
        train = folds != k
        weights, bias = fit(design.subset(train), labels[train])
        held = ~train
        margins = design.subset(held).margins(weights, bias, int(held.sum()))
        scores[held] = 1 / (1 + numpy.exp(-margins))
    return scores


def choose_threshold(scores: numpy.ndarray, labels: numpy.ndarray) -> float:
    benign = numpy.sort(scores[labels == 0])
    if len(benign) == 0:
        return 0.5
    allowed = int(MAX_BENIGN_FLAGGED * len(benign))
    # Just above the (allowed+1)-th highest benign score, and never below an even chance.
    return max(0.5, float(benign[len(benign) - allowed - 1]) + 1e-6)


def main() -> None:
    texts, labels = tuning_texts()
    design = Design.of(texts)
    scores = cross_validated_scores(texts, design, labels)
    # The threshold and the figures count only the texts the classifier is asked about.
    judged = numpy.array([len(t.split()) >= classifier.MIN_WORDS for t in texts])
    scores, judged_labels = scores[judged], labels[judged]
    threshold = choose_threshold(scores, judged_labels)
    caught = (scores[judged_labels == 1] >= threshold).mean()
    flagged = (scores[judged_labels == 0] >= threshold).mean()
    print(f"{len(texts)} texts, {int(labels.sum())} attacks, {int(judged.sum())} long enough to "
          f"judge; cross-validated at threshold "
          f"{threshold:.3f}: {caught:.1%} of attacks caught, {flagged:.2%} of benign flagged")
    weights, bias = fit(design, labels)
    numpy.savez_compressed(OUT, weights=weights.astype(numpy.float16), bias=numpy.float64(bias),
                           threshold=numpy.float64(threshold),
                           cross_validated=numpy.array([caught, flagged]))
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
