"""Retrieval quality on two kinds of memory, with tuning and evaluation splits.

- turns: REALTALK (Lee et al., 2025, arXiv 2502.13270), 21 days of real messaging-app
  conversations; every turn is a memory ("Speaker: text", created at the turn's time);
  questions are labelled with their evidence turns. Public repository
  danny911kr/REALTALK (``data/Chat_*.json``, no licence stated: nothing is copied here).
- facts: LoCoMo's observations (Maharana et al., 2024, arXiv 2402.17753), the short
  facts ("Caroline attended an LGBTQ support group ...") written for each session,
  each citing the turns it came from; questions are labelled with evidence turns (the
  adversarial category 5 left out, as usual). Public repository snap-research/locomo
  (``data/locomo10.zip``, CC BY-NC 4.0): unzip it and point ``--facts`` at the folder of
  per-conversation JSON files. PerLTQA was the first choice for this kind; its data
  files are too large for the copies this project can fetch.

Each conversation is an account of its own, written straight into PostgreSQL and
projected by the real projector (embedding, index upsert, entity extraction). Score:
evidence recall@k, the share of a question's evidence turns among those the top k
memories hold (a fact holds the turns it cites), averaged over questions.

Splits by conversation: odd-numbered ones tune (``--tune`` searches leg weights there),
even-numbered ones evaluate. Each question's legs run once; fusion and scoring are
recomputed per configuration with the service's own code (``search.rank``), checked
against the full ``Searcher.search`` path on the defaults. Rows per kind and split:
each leg alone, fused with the defaults, fused + the local reranker at each
``--pools`` size (the model's order alone, and the service's blend of it with the
fused order), ``memory_recall``, and the compiled context at the default budget
(its workspace entries, in order); then R@10 by question category. ``--blend``
scores ``bench/rerank_blend.py``'s grid of blends at ``--pools`` from the cached
cross-encoder scores.

    python -m bench.retrieval_quality --turns REALTALK/data --facts locomo10_v2
        [--limit N] [--tune [weights|closeness]] [--pools 10,20,40] [--blend]
        [--no-ablation] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import asyncpg
import uvloop

from bench import rerank_blend
from bench.scratch import scratch_dir
from libs import migrations
from libs.embeddings import LocalEmbedder
from libs.reranker import BLEND_K, BLEND_WEIGHT, CrossEncoder
from services.agent_memory.app import MIGRATIONS
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.memories import rules
from services.agent_memory.memories.clock import SystemClock
from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.projector import Projector
from services.agent_memory.memories.recall import Recaller, rerank_text
from services.agent_memory.memories.store.entries import Repository
from services.agent_memory.retrieval import fusion, params
from services.agent_memory.retrieval.request import Overrides, RetrieveRequest
from services.agent_memory.retrieval.search import Searcher, SearchOutcome, rank
from services.agent_memory.retrieval.service import Retrieval
from services.agent_memory.retrieval.store import RetrievalStore
from services.agent_memory.retrieval.view import View
from testkit.ports import free_port
from tools.backends.postgres import EmbeddedPostgres

AGENT = "reader"
TOP_N = 20  # what the outside evaluation asked RetrieveContext for
KS = (5, 10, 20)
CATEGORIES = {
    "turns": {1: "multi-hop", 2: "temporal", 3: "commonsense"},
    "facts": {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"},
}


@dataclass(frozen=True)
class Memory:
    key: str
    content: str
    at: datetime
    holds: frozenset[str]  # the evidence turns it holds


@dataclass(frozen=True)
class Question:
    account: str
    text: str
    evidence: frozenset[str]
    category: int
    tuning: bool


@dataclass
class Conversation:
    account: str
    memories: list[Memory]
    questions: list[Question]


@dataclass
class Prepared:
    """One question's legs and candidates (computed once), and the other paths' results."""

    question: Question
    results: dict
    found: dict
    route: str
    recall: list[UUID] = field(default_factory=list)
    compiled: list[UUID] = field(default_factory=list)
    pool: list[UUID] = field(default_factory=list)  # the fused order, the largest pool deep
    rerank_scores: dict[UUID, float] = field(default_factory=dict)


def _number(path: Path) -> int:
    return int(re.search(r"(\d+)", path.stem).group(1))


def realtalk(folder: Path) -> list[Conversation]:
    found = []
    for path in sorted(folder.glob("Chat_*.json"), key=_number):
        chat = json.loads(path.read_text())
        memories, seen = [], set()
        for name, value in chat.items():
            if not (name.startswith("session_") and isinstance(value, list)):
                continue
            for turn in value:
                if turn["dia_id"] in seen or not turn.get("clean_text", "").strip():
                    continue
                seen.add(turn["dia_id"])
                at = datetime.strptime(turn["date_time"], "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)
                memories.append(Memory(turn["dia_id"], f"{turn['speaker']}: {turn['clean_text']}",
                                       at, frozenset([turn["dia_id"]])))
        found.append(_conversation(f"turns-{path.stem}", _number(path) % 2 == 1, memories,
                                   chat["qa"]))
    return found


def locomo_facts(folder: Path) -> list[Conversation]:
    found = []
    for position, path in enumerate(sorted(folder.glob("*.json"), key=_number), start=1):
        chat = json.loads(path.read_text())
        memories = []
        for name, value in chat.items():
            session = re.fullmatch(r"session_(\d+)_observation", name)
            if not session:
                continue
            at = datetime.strptime(chat[f"session_{session.group(1)}_date_time"],
                                   "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
            for facts in value.values():
                for i, (text, cited) in enumerate(facts):
                    turns = frozenset(cited if isinstance(cited, list) else re.findall(
                        r"D\d+:\d+", cited))
                    memories.append(Memory(f"{name}-{len(memories)}-{i}", text, at, turns))
        qa = [q for q in chat["qa"] if q.get("category") != 5]
        found.append(_conversation(f"facts-{path.stem}", position % 2 == 1, memories, qa))
    return found


def _conversation(account: str, tuning: bool, memories: list[Memory],
                  qa: list[dict]) -> Conversation:
    held = {turn for m in memories for turn in m.holds}
    questions = []
    for item in qa:
        evidence = frozenset(e for e in item.get("evidence", []) if e in held)
        if evidence:
            questions.append(Question(account, item["question"], evidence,
                                      item.get("category", 0), tuning))
    return Conversation(account, memories, questions)


async def load(dsn: str, conversation: Conversation) -> dict[UUID, Memory]:
    ids = {uuid.uuid4(): m for m in conversation.memories}
    rows = [(i, conversation.account, "default", "agent", AGENT, "", m.key, m.content,
             hashlib.sha256(m.content.encode()).hexdigest(), "project_fact", 0.5, 0.8, "agent",
             m.at, m.at) for i, m in ids.items()]
    connection = await asyncpg.connect(dsn)
    try:
        await connection.copy_records_to_table(
            "memory_entries", records=rows,
            columns=["id", "account_id", "environment", "scope", "agent_id", "owner_user_id",
                     "key", "content", "content_hash", "kind", "importance", "confidence",
                     "source_kind", "created_at", "updated_at"])
        now = datetime.now(UTC)
        await connection.copy_records_to_table(
            "memory_outbox", records=[(i, conversation.account, "default", now, now) for i in ids],
            columns=["entry_id", "account_id", "environment", "next_attempt_at", "created_at"])
    finally:
        await connection.close()
    return ids


def recall_at(ids: list[UUID], evidence: frozenset[str], memories: dict[UUID, Memory],
              k: int) -> float:
    held = set().union(*(memories[i].holds for i in ids[:k])) if ids else set()
    return len(evidence & held) / len(evidence)


def actor_of(question: Question) -> Actor:
    return Actor(question.account, "default", AGENT, None)


def request_of(question: Question, top_n: int = TOP_N,
               overrides: Overrides | None = None) -> RetrieveRequest:
    return RetrieveRequest(run_id="bench", query=question.text, top_n=top_n,
                           overrides=overrides or Overrides())


async def prepare(searcher: Searcher, view: View, question: Question) -> Prepared:
    outcome = SearchOutcome()
    found = await searcher.collect(actor_of(question), request_of(question), view, outcome)
    return Prepared(question, found.results, found.candidates, outcome.route)


def near_best(results: dict, floors: dict[str, float]) -> dict:
    """Each leg's hits scoring at least its floor x the leg's best (an experiment)."""
    return {leg: [h for h in hits if h.score >= floors.get(leg, 0.0) * hits[0].score]
            if hits else hits for leg, hits in results.items()}


def fused(prepared: Prepared, overrides: Overrides, view: View,
          top_n: int = TOP_N, floors: dict[str, float] | None = None,
          powers: dict[str, float] | None = None) -> list[UUID]:
    request = request_of(prepared.question, top_n, overrides)
    outcome = SearchOutcome(route=prepared.route)
    results = near_best(prepared.results, floors) if floors else prepared.results
    rank(fusion.rrf(results, overrides.leg_weights, overrides.rrf_k, powers),
         prepared.found, request, view, outcome)
    return [s.fused.id for s in outcome.kept]


async def score_pool(reranker: CrossEncoder, prepared: Prepared, view: View, size: int,
                     cache: dict[str, float]) -> float | None:
    """The cross-encoder's scores of the fused top ``size`` (from ``cache``, by question
    and memory, when a run with this --workdir scored them); the seconds the scoring took,
    None when every pair was cached."""
    prepared.pool = fused(prepared, Overrides(), view, top_n=size)
    keys = [f"{prepared.question.account}|{prepared.question.text}|{i}" for i in prepared.pool]
    missing = [(k, i) for k, i in zip(keys, prepared.pool, strict=True) if k not in cache]
    started = time.perf_counter()
    given = await reranker.scores(prepared.question.text,
                                  [rerank_text(prepared.found[i].entry) for _, i in missing])
    elapsed = time.perf_counter() - started
    cache.update({k: g for (k, _), g in zip(missing, given, strict=True)})
    prepared.rerank_scores = {i: cache[k] for k, i in zip(keys, prepared.pool, strict=True)}
    return elapsed if len(missing) == size else None


def reranked(size: int, weight: float = 1.0) -> Callable[[Prepared], list[UUID]]:
    """The fused top ``size`` in the order of the service's blend of the cross-encoder
    (``weight``; 1: its order alone) with the fused order, then the rest of the fusion."""
    def ranking(p: Prepared) -> list[UUID]:
        return rerank_blend.reorder("rrf", p.pool, [p.rerank_scores[i] for i in p.pool],
                                    size, weight, BLEND_K)[:TOP_N]
    return ranking


def blend_grid(prepared: dict[str, list[Prepared]], view: View, memories: dict[UUID, Memory],
               pools: list[int]) -> None:
    """Every blend of ``bench.rerank_blend``'s grid at each pool, from the cached scores:
    R@10 per kind and split, the best by the tuning splits first."""
    def case(p: Prepared) -> rerank_blend.Case:
        return rerank_blend.Case(p.pool, [p.rerank_scores[i] for i in p.pool],
                                 p.question.tuning, lambda ids: recall_at(
                                     ids[:TOP_N], p.question.evidence, memories, 10))

    cases = {kind: [case(p) for p in split] for kind, split in prepared.items()}
    baseline = {kind: tuple(mean([recall_at(fused(p, Overrides(), view), p.question.evidence,
                                            memories, 10) for p in split
                                  if p.question.tuning == tuning]) for tuning in (True, False))
                for kind, split in prepared.items()}
    print("\nblends of the cross-encoder with the fused order, R@10 (tuning, evaluation)")
    rerank_blend.report(rerank_blend.grid(cases, pools), baseline)


def leg_alone(leg: str) -> Callable[[Prepared], list[UUID]]:
    return lambda p: [h.id for h in p.results.get(leg, [])]


def mean(values) -> float:
    return statistics.fmean(values) if values else 0.0


def grid() -> list[tuple[str, Overrides, dict[str, float]]]:
    """Leg weights to try on the tuning split; the seed's factor weights and k stay."""
    default = Overrides()
    configs = []
    for vector, fulltext, entity, graph, kind in itertools.product(
            (1.0, 2.0, 3.0), (0.5, 1.0), (0.0, 0.5, 1.0), (0.0, 0.5), (0.0, 1.0)):
        legs = dict(default.leg_weights, vector=vector, fulltext=fulltext, entity=entity,
                    graph=graph, type=kind)
        configs.append((describe(legs, {}), replace(default, leg_weights=legs), {}))
    return configs


def describe(legs: dict[str, float], floors: dict[str, float]) -> str:
    return ", ".join(f"{leg} {w:g}" for leg, w in legs.items()) + "".join(
        f", {leg} floor {f:g}" for leg, f in floors.items())


def tune(prepared: dict[str, list[Prepared]], view: View, memories: dict[UUID, Memory]) -> None:
    """The leg-weight grid on the tuning splits (mean R@10 of the two kinds), then score
    floors on the best weights: a leg's hits below that fraction of its best score
    dropped (does a weak match of the keyword or entity leg cost rank?)."""
    def score(overrides: Overrides, floors: dict[str, float]) -> list[float]:
        return [mean([recall_at(fused(p, overrides, view, floors=floors), p.question.evidence,
                                memories, 10) for p in split if p.question.tuning])
                for split in prepared.values()]

    found = {name: (score(overrides, floors), overrides)
             for name, overrides, floors in grid()}
    best = sorted(found, key=lambda name: -mean(found[name][0]))
    print("\ntuning splits, R@10 (turns, facts; mean), best leg weights:")
    for name in best[:8]:
        print(f"  {found[name][0][0]:.3f}, {found[name][0][1]:.3f}; {mean(found[name][0]):.3f}"
              f"  {name}")
    defaults = score(Overrides(), {})
    print(f"  {defaults[0]:.3f}, {defaults[1]:.3f}; {mean(defaults):.3f}  (the defaults)")
    overrides = found[best[0]][1]
    for floor in (0.2, 0.4):
        for legs in (("fulltext",), ("entity",), ("fulltext", "entity")):
            floors = dict.fromkeys(legs, floor)
            values = score(overrides, floors)
            print(f"  {values[0]:.3f}, {values[1]:.3f}; {mean(values):.3f}  best weights,"
                  f" {', '.join(legs)} floor {floor:g}")


def tune_closeness(prepared: dict[str, list[Prepared]], view: View,
                   memories: dict[UUID, Memory]) -> None:
    """Score-aware fusion on the tuning splits: the vector and keyword legs' closeness
    powers with the vector, keyword and entity weights; one setting for both kinds, by
    the mean of their R@10 and by the smaller of their margins over the kind's best leg
    alone (the target); each kind's own best shown too."""
    tuning = {kind: [p for p in split if p.question.tuning] for kind, split in prepared.items()}

    def score(overrides: Overrides, powers: dict[str, float]) -> list[float]:
        return [mean([recall_at(fused(p, overrides, view, powers=powers), p.question.evidence,
                                memories, 10) for p in split]) for split in tuning.values()]

    best_leg = [max(mean([recall_at(leg_alone(leg)(p), p.question.evidence, memories, 10)
                          for p in split]) for leg in params.LEGS) for split in tuning.values()]
    default = Overrides()
    found = {}
    for vector_power, keyword_power, vector, keyword, entity in itertools.product(
            (0.0, 0.5, 1.0, 1.5, 2.0), (0.0, 0.25, 0.5, 1.0), (1.0, 1.5, 2.0, 2.5),
            (0.75, 1.0, 1.25), (0.0, 0.5)):
        legs = dict(default.leg_weights, vector=vector, fulltext=keyword, entity=entity)
        powers = {"vector": vector_power, "fulltext": keyword_power}
        name = (f"powers vector {vector_power:g} keyword {keyword_power:g}; weights vector"
                f" {vector:g} keyword {keyword:g} entity {entity:g}")
        found[name] = score(replace(default, leg_weights=legs), powers)

    def margin(values: list[float]) -> float:
        return min(v - b for v, b in zip(values, best_leg, strict=True))

    print(f"\ntuning splits, score-aware fusion, R@10 (turns, facts; mean; the smaller"
          f" margin over the best leg alone, {best_leg[0]:.3f} and {best_leg[1]:.3f}):")
    for label, key in (("the mean", mean), ("the smaller margin", margin),
                       ("turns", lambda v: v[0]), ("facts", lambda v: v[1])):
        print(f" best by {label}:")
        for name in sorted(found, key=lambda n: -key(found[n]))[:5]:
            values = found[name]
            print(f"  {values[0]:.3f}, {values[1]:.3f}; {mean(values):.3f}; {margin(values):+.3f}"
                  f"  {name}")
    plain = score(default, {})
    print(f"  {plain[0]:.3f}, {plain[1]:.3f}; {mean(plain):.3f}; {margin(plain):+.3f}"
          f"  (plain weighted RRF, the default weights)", flush=True)


def ablation(prepared: dict[str, list[Prepared]], view: View,
             memories: dict[UUID, Memory]) -> None:
    """R@10 with the defaults, and with each of the entity, episode, graph and type legs
    turned off (weight 0): what each leg's default weight earns."""
    default = Overrides()
    variants = [("defaults", default)] + [
        (f"without {leg} (default weight {default.leg_weights[leg]:g})",
         replace(default, leg_weights=dict(default.leg_weights, **{leg: 0.0})))
        for leg in ("entity", "episode", "graph", "type")]
    heads = [f"{kind} {split}" for kind in prepared for split in ("tuning", "evaluation")]

    def r10(overrides: Overrides, split: list[Prepared]) -> float:
        return mean([recall_at(fused(p, overrides, view), p.question.evidence, memories, 10)
                     for p in split])

    print("\nleg ablation, R@10\n")
    print("| | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for label, overrides in variants:
        cells = [f"{r10(overrides, [p for p in split if p.question.tuning == tuning]):.3f}"
                 for split in prepared.values() for tuning in (True, False)]
        print(f"| {label} | " + " | ".join(cells) + " |")


def table(title: str, rows: list[tuple[str, Callable[[Prepared], list[UUID]]]],
          splits: dict[str, list[Prepared]], memories: dict[UUID, Memory]) -> None:
    print(f"\n{title}\n")
    heads = [f"{name} R@{k}" for name in splits for k in KS]
    print("| | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for label, ranking in rows:
        cells = []
        for split in splits.values():
            lists = [(ranking(p), p.question.evidence) for p in split]
            cells += [f"{mean([recall_at(r, e, memories, k) for r, e in lists]):.3f}" for k in KS]
        print(f"| {label} | " + " | ".join(cells) + " |")


def by_category(kind: str, rows: list[tuple[str, Callable[[Prepared], list[UUID]]]],
                prepared: list[Prepared], memories: dict[UUID, Memory]) -> None:
    names = CATEGORIES[kind]
    groups = defaultdict(list)
    for p in prepared:
        groups[p.question.category].append(p)
    print(f"\n{kind}, R@10 by category (evaluation split)\n")
    print("| | " + " | ".join(f"{names.get(c, c)} ({len(groups[c])})" for c in sorted(groups))
          + " |")
    print("|---" * (len(groups) + 1) + "|")
    for label, ranking in rows:
        cells = [f"{mean([recall_at(ranking(p), p.question.evidence, memories, 10) for p in groups[c]]):.3f}"
                 for c in sorted(groups)]
        print(f"| {label} | " + " | ".join(cells) + " |")


async def compiled(service: Retrieval, pool: asyncpg.Pool, question: Question) -> list[UUID]:
    """The compiled context's workspace entries; the usage counters the call moved are put
    back, so that one question's delivery does not rank the next."""
    context = await service.retrieve(actor_of(question), request_of(question))
    ids = [item.entry.id for item in context.memories.get("workspaceEntries", [])]
    await pool.execute("UPDATE memory_entries SET recall_count = 0, last_recalled_at = NULL"
                       " WHERE recall_count > 0")
    return ids


async def project(dsn: str, repository: Repository, index: EdgeIndex, embedder: LocalEmbedder,
                  kinds: dict[str, list[Conversation]]) -> dict[UUID, Memory]:
    started = time.monotonic()
    memories: dict[UUID, Memory] = {}
    for conversations in kinds.values():
        for conversation in conversations:
            memories.update(await load(dsn, conversation))
    await Projector(repository, index, embedder, SystemClock(), batch=64).drain()
    print(f"{len(memories):,} memories projected in {time.monotonic() - started:.0f} s",
          flush=True)
    return memories


async def stored(pool: asyncpg.Pool, kinds: dict[str, list[Conversation]]) -> dict[UUID, Memory]:
    """The memories a previous run with the same --workdir loaded, by account and key."""
    by_key = {(c.account, m.key): m for conversations in kinds.values()
              for c in conversations for m in c.memories}
    rows = await pool.fetch("SELECT id, account_id, key FROM memory_entries")
    return {r["id"]: by_key[(r["account_id"], r["key"])] for r in rows}


async def main(args: argparse.Namespace) -> None:
    kinds = {"turns": realtalk(args.turns), "facts": locomo_facts(args.facts)}
    workdir = args.workdir or scratch_dir("retrieval-quality-")
    loaded = (workdir / "postgres").exists()
    postgres = EmbeddedPostgres(workdir / "postgres", free_port()).start()
    try:
        repository = await Repository.connect(postgres.dsn)
        await migrations.apply(repository.pool, "agent_memory", MIGRATIONS)
        embedder, index = LocalEmbedder(), EdgeIndex(workdir / "qdrant")
        memories = await (stored(repository.pool, kinds) if loaded else
                          project(postgres.dsn, repository, index, embedder, kinds))
        store = RetrievalStore(repository.pool)
        searcher = Searcher(store, index, embedder, None)
        service = Retrieval(repository, store, index, embedder, SystemClock())
        recaller = Recaller(repository, index, embedder)
        reranker = CrossEncoder()
        cached = workdir / "rerank-cache.json"
        cache = json.loads(cached.read_text()) if cached.exists() else {}
        view = View(datetime.now(UTC))
        prepared: dict[str, list[Prepared]] = {}
        for kind, conversations in kinds.items():
            questions = [q for c in conversations for q in c.questions][:args.limit]
            prepared[kind] = [await prepare(searcher, view, q) for q in questions]
            for p in prepared[kind]:
                found = await recaller.recall(actor_of(p.question), p.question.text, TOP_N,
                                              rules.CATEGORIES, view.at)
                p.recall = [r.entry.id for r in found.entries]
            for p in prepared[kind][:25]:  # the cached recomputation is the service's search
                outcome = await searcher.search(actor_of(p.question), request_of(p.question),
                                                view)
                assert [s.fused.id for s in outcome.kept] == fused(p, Overrides(), view)
            for p in prepared[kind]:
                p.compiled = await compiled(service, repository.pool, p.question)
            print(f"{kind}: {len(prepared[kind])} questions prepared", flush=True)
            if args.pools:
                seconds = [await score_pool(reranker, p, view, max(args.pools), cache)
                           for p in prepared[kind]]
                (workdir / "rerank-cache.json").write_text(json.dumps(cache))
                timed = [s for s in seconds if s is not None]
                if timed:
                    print(f"{kind}: cross-encoder over {max(args.pools)} candidates:"
                          f" p50 {statistics.median(timed) * 1000:.0f} ms a question"
                          f" ({len(timed)} scored in full)", flush=True)

        if args.tune == "weights":
            tune(prepared, view, memories)
        elif args.tune == "closeness":
            tune_closeness(prepared, view, memories)
        if args.blend and args.pools:
            blend_grid(prepared, view, memories, args.pools)
        if not args.no_ablation:
            ablation(prepared, view, memories)
        default = Overrides()
        rows = [(f"{params.LEG_LABELS[leg]} leg alone", leg_alone(leg)) for leg in params.LEGS]
        rows += [("fused, defaults", lambda p: fused(p, default, view))]
        rows += [(f"fused + rerank, pool {size}", reranked(size)) for size in args.pools]
        rows += [(f"fused + blended rerank (weight {BLEND_WEIGHT:g}), pool {size}",
                  reranked(size, BLEND_WEIGHT)) for size in args.pools]
        rows += [
                 ("memory_recall", lambda p: p.recall),
                 ("compiled context, default budget", lambda p: p.compiled)]
        for kind, split in prepared.items():
            splits = {"tuning": [p for p in split if p.question.tuning],
                      "evaluation": [p for p in split if not p.question.tuning]}
            table(f"{kind}: evidence recall ({len(splits['tuning'])} tuning,"
                  f" {len(splits['evaluation'])} evaluation questions)", rows, splits, memories)
            by_category(kind, [r for r in rows if not r[0].endswith("alone")]
                        + [("Vector leg alone", leg_alone("vector"))],
                        splits["evaluation"], memories)
        await reranker.close()
        await index.close()
        await embedder.close()
        await repository.close()
    finally:
        postgres.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=Path, required=True, help="REALTALK's data/ folder")
    parser.add_argument("--facts", type=Path, required=True,
                        help="LoCoMo's per-conversation JSON files (locomo10_v2/)")
    parser.add_argument("--limit", type=int, default=None, help="questions per kind")
    parser.add_argument("--tune", nargs="?", const="weights", choices=["weights", "closeness"],
                        help="search leg weights (or the closeness powers) on tuning")
    parser.add_argument("--pools", type=lambda v: [int(x) for x in v.split(",") if x],
                        default=[], help="cross-encoder pool sizes, e.g. 10,20,40")
    parser.add_argument("--blend", action="store_true",
                        help="score the grid of blends (bench/rerank_blend.py) at --pools")
    parser.add_argument("--no-ablation", action="store_true", help="skip the leg ablation")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="keep the loaded data here; a later run with it skips loading")
    uvloop.run(main(parser.parse_args()))
