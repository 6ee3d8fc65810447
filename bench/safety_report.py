"""Error rates of write-time screening, on the tuning set and the held-out evaluation set.

    python -m bench.safety_report [--misses] [--mirrors DIR]

A false negative is an attack the screen stores; a false positive is a benign
text it rejects. Benign texts come in three kinds, counted apart: facts and
memory-like statements (the target: at most 0.1% rejected), conversation turns
(greetings, questions to the other speaker, chat: what thread memory and the
learner screen), and benign prompts (questions and tasks for a model, which a
memory seldom holds). The detector table counts, for every credential and
personal-data kind, the realistic variants found and the look-alikes left
alone (tests/agent_memory/safety_secrets.py). ``--misses`` lists the texts.
REALTALK's facts and turns are read from a mirror (DIR, default /work/.mirror:
it states no licence, so it is not copied into the repository); without one,
the report says so and leaves them out.

The tuning set (bench/data/safety/tuning.jsonl plus the corpus in
tools/safety_corpus.py) is what the rules and the classifier were
built on; the evaluation set comes from other public sources (see the README
beside the data) and was not used to build them. A third set is our own:
everyday memory statements from bench/everyday_memories.py (preferences,
complaints, settings such as dark or developer mode, tasks, project facts) and
the synthetic memories of bench/agent_memory_bench.py; nothing is trained on
it, it checks false positives where memories are most common. A fourth set is
our own too: probes for whole-word matching (tests/agent_memory/safety_probes.py),
benign words that contain the screen's vocabulary and inflected or obfuscated
attacks. The last lines time the classifier on typical texts.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import everyday_memories
from bench.agent_memory_bench import text as bench_memory
from services.agent_memory import safety
from services.agent_memory.safety import classifier
from tests.agent_memory import safety_probes, safety_secrets
from tools import safety_corpus, safety_data

TARGET_FALSE_NEGATIVES = 0.10
TARGET_FALSE_POSITIVES = 0.001  # facts and memory-like statements
TARGET_TURNS_REJECTED = 0.01  # the trainer's budget for them
TARGET_EVERYDAY_FALSE_POSITIVES = 0.01
BENCH_MEMORIES = 60_000  # as many as bench/memory_model_bench.py imports


@dataclass
class Rates:
    attacks: int = 0
    missed: list[str] = field(default_factory=list)
    benign: int = 0
    rejected: list[str] = field(default_factory=list)
    prompts: int = 0
    prompts_rejected: list[str] = field(default_factory=list)
    turns: int = 0
    turns_rejected: list[str] = field(default_factory=list)
    made_private: list[str] = field(default_factory=list)
    by_source: dict[str, list[int]] = field(default_factory=dict)  # source -> [n, errors]

    @property
    def false_negative_rate(self) -> float:
        return len(self.missed) / self.attacks if self.attacks else 0.0

    @property
    def false_positive_rate(self) -> float:
        return len(self.rejected) / self.benign if self.benign else 0.0

    def add(self, example: safety_data.Example) -> None:
        screening = safety.screen(example.text)
        wrong = (not screening.rejected) if example.label == "attack" else bool(screening.rejected)
        counts = self.by_source.setdefault(f"{example.label}: {example.source}", [0, 0])
        counts[0] += 1
        counts[1] += wrong
        if example.label == "attack":
            self.attacks += 1
            if wrong:
                self.missed.append(example.text)
            return
        if example.label == "benign":
            self.benign += 1
            (self.rejected if wrong else []).append(example.text)
        elif example.label == "benign turn":
            self.turns += 1
            (self.turns_rejected if wrong else []).append(example.text)
        else:
            self.prompts += 1
            (self.prompts_rejected if wrong else []).append(example.text)
        if screening.sensitive:
            self.made_private.append(example.text)


def tuning_examples(mirrors: Path = safety_data.MIRRORS) -> list[safety_data.Example]:
    corpus = [safety_data.Example(t, "attack", "corpus")
              for t in safety_corpus.ATTACKS + safety_corpus.MORE_ATTACKS
              + safety_corpus.templated_attacks()]
    corpus += [safety_data.Example(t, "attack", "corpus, other languages")
               for t in safety_corpus.MULTILINGUAL_ATTACKS]
    corpus += [safety_data.Example(t, "benign", "corpus")
               for t in safety_corpus.BENIGN + safety_corpus.MORE_BENIGN + safety_corpus.PLAIN
               + safety_corpus.hard_negatives() + safety_corpus.preference_statements()]
    corpus += [safety_data.Example(t, "benign", "corpus, other languages")
               for t in safety_corpus.MULTILINGUAL_BENIGN]
    rows = safety_data.load("tuning")
    keys = safety_corpus.memory_keys([r.text for r in rows if r.label == "benign"][::3])
    corpus += [safety_data.Example(k, "benign", "corpus keys") for k in keys]
    return rows + corpus + safety_data.mirrored("tuning", mirrors)


def evaluation_examples(mirrors: Path = safety_data.MIRRORS) -> list[safety_data.Example]:
    return safety_data.load("evaluation") + safety_data.mirrored("evaluation", mirrors)


def everyday_examples() -> list[safety_data.Example]:
    """Our own templated statements: all benign."""
    return [safety_data.Example(text, "benign", f"ours: {family}")
            for family, text in everyday_memories.statements()]


def probe_examples() -> list[safety_data.Example]:
    """Our own probes for whole-word matching ("promptly", "ecosystem"; "instructions",
    "Systemanweisung", "i g n o r e ...")."""
    return ([safety_data.Example(t, "attack", "ours: word probes") for t in safety_probes.ATTACKS]
            + [safety_data.Example(t, "benign", "ours: word probes") for t in safety_probes.BENIGN])


def bench_memory_examples() -> list[safety_data.Example]:
    """The synthetic memories the benchmarks store ("Entry 7: the user likes coffee and ...")."""
    return [safety_data.Example(bench_memory(i), "benign", "ours: agent_memory_bench memories")
            for i in range(BENCH_MEMORIES)]


def measure(examples: list[safety_data.Example]) -> Rates:
    rates = Rates()
    for example in examples:
        rates.add(example)
    return rates


def credential_table() -> list[tuple[str, bool, list[str]]]:
    """(kind, forced private, kinds found) for each fake credential."""
    rows = []
    for kind, text in safety_corpus.CREDENTIALS:
        screening = safety.screen(text)
        rows.append((kind, not screening.rejected and bool(screening.sensitive), screening.sensitive))
    return rows


def detector_table() -> list[tuple[str, list[str], list[str]]]:
    """(kind, variants it missed, look-alikes it flagged) for every detector kind."""
    rows = []
    for kind, (holding, alike) in safety_secrets.DETECTORS.items():
        missed = [t for t in holding if kind not in safety.screen(t).sensitive]
        flagged = [t for t in alike if safety.screen(t).sensitive]
        rows.append((kind, missed, flagged))
    return rows


def _print_rates(name: str, rates: Rates, misses: bool) -> None:
    print(f"\n{name}")
    if rates.attacks:
        print(f"  attacks stored (false negatives): {len(rates.missed)}/{rates.attacks} "
              f"= {rates.false_negative_rate:.1%}")
    print(f"  facts and memory-like statements rejected (false positives): "
          f"{len(rates.rejected)}/{rates.benign} = {rates.false_positive_rate:.2%}")
    if rates.turns:
        print(f"  conversation turns rejected: {len(rates.turns_rejected)}/{rates.turns} "
              f"= {len(rates.turns_rejected) / rates.turns:.2%}")
    if rates.prompts:
        print(f"  benign prompts rejected: {len(rates.prompts_rejected)}/{rates.prompts} "
              f"= {len(rates.prompts_rejected) / rates.prompts:.1%}")
    print(f"  benign texts forced private: {len(rates.made_private)}/"
          f"{rates.benign + rates.turns + rates.prompts}")
    for source, (n, wrong) in sorted(rates.by_source.items()):
        print(f"    {source}: {wrong}/{n} wrong")
    if misses:
        for label, texts in (("missed", rates.missed), ("rejected", rates.rejected),
                             ("turn rejected", rates.turns_rejected),
                             ("prompt rejected", rates.prompts_rejected),
                             ("forced private", rates.made_private)):
            for text in texts:
                print(f"    {label}: {text[:160]!r}")


def scoring_cost() -> tuple[float, float, int]:
    """(median, 99th percentile) microseconds for the classifier to score one text (the best of
    three tries, to see past a loaded machine), over the evaluation set's memory-like texts,
    and their median length in characters."""
    texts = [e.text for e in safety_data.load("evaluation") if e.label == "benign"]
    current = classifier.model()
    samples = []
    for text in texts:
        tries = []
        for _ in range(3):
            started = time.perf_counter()
            current.score(text)
            tries.append((time.perf_counter() - started) * 1e6)
        samples.append(min(tries))
    samples.sort()
    return (statistics.median(samples), samples[int(len(samples) * 0.99)],
            int(statistics.median(len(t) for t in texts)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the texts screened wrongly")
    parser.add_argument("--mirrors", type=Path, default=safety_data.MIRRORS)
    args = parser.parse_args()
    misses = args.misses
    for repo in safety_data.missing(args.mirrors):
        print(f"{repo} is not in {args.mirrors} (fetch it): its texts are left out")
    started = time.perf_counter()
    tuning = measure(tuning_examples(args.mirrors))
    evaluation = measure(evaluation_examples(args.mirrors))
    everyday, bench_memories = measure(everyday_examples()), measure(bench_memory_examples())
    probes = measure(probe_examples())
    elapsed = time.perf_counter() - started
    _print_rates("tuning set (rules written and classifier trained on it)", tuning, misses)
    caught, flagged = classifier.model().cross_validated
    print(f"  (the classifier alone, on texts of {classifier.MIN_WORDS}+ words, 5-fold cross-validated "
          f"on this set: {caught:.1%} of attacks "
          f"caught, {flagged:.2%} of benign flagged)")
    _print_rates("evaluation set (held out, public sources)", evaluation, misses)
    print(f"\n  targets on the evaluation set: false negatives <= {TARGET_FALSE_NEGATIVES:.0%}, "
          f"facts rejected <= {TARGET_FALSE_POSITIVES:.1%}, turns <= {TARGET_TURNS_REJECTED:.1%}")
    _print_rates("everyday memory statements (our own templates, not public; never trained on)",
                 everyday, misses)
    print(f"\n  target: false positives under {TARGET_EVERYDAY_FALSE_POSITIVES:.0%}")
    _print_rates("the benchmarks' synthetic memories (bench/agent_memory_bench.py text())",
                 bench_memories, misses)
    _print_rates("whole-word probes (our own: words containing the vocabulary; inflected and "
                 "obfuscated attacks; never trained on)", probes, misses)
    print("\ncredentials (forced private?)")
    for kind, private, kinds in credential_table():
        print(f"  {'yes' if private else 'NO '}  {kind}  {', '.join(kinds)}")
    print("\ndetectors (realistic variants found; look-alikes left alone)")
    for kind, missed, flagged in detector_table():
        holding, alike = safety_secrets.DETECTORS[kind]
        print(f"  {kind}: found {len(holding) - len(missed)}/{len(holding)}, "
              f"left alone {len(alike) - len(flagged)}/{len(alike)}")
        for text in missed + flagged:
            print(f"    wrong: {text[:100]!r}")
    total = sum(r.attacks + r.benign + r.turns + r.prompts
                for r in (tuning, evaluation, everyday, bench_memories, probes))
    print(f"\nscreened {total} texts in {elapsed:.1f} s")
    median, p99, length = scoring_cost()
    print(f"classifier score per text: median {median:.0f} us, p99 {p99:.0f} us "
          f"(evaluation memory-like texts, median {length} characters)")


if __name__ == "__main__":
    main()
