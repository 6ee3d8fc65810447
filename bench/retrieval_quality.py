"""Retrieval quality on REALTALK, a public long-conversation benchmark (21 days of real
messaging-app conversations between people, with memory-probing questions annotated with
the dialogue turns that hold their evidence; Lee et al., 2025, arXiv 2502.13270).

Every turn of a conversation becomes a memory ("Speaker: text", created at the turn's
time) in its own account, written straight into PostgreSQL and projected by the real
projector (embedding, index upsert, entity extraction). Each question is then retrieved
and scored by evidence recall@10: the share of its evidence turns among the top 10.
Three retrievals on the same data:

- plain vector search: the vector leg alone (dense cosine, the Qdrant engine);
- plain full-text: the full-text leg alone (PostgreSQL ts_rank_cd, 'simple');
- fused: RetrieveContext's search (routing, every leg, RRF, the weighted score).

Split by conversation: the odd-numbered chats tune the fusion (leg weights, factor
weights, RRF k, over a small grid), the even-numbered ones evaluate. Each question's
legs are run once; fusion and scoring are recomputed per configuration with the same
code the service runs (``search.rank``), and the default configuration is also checked
against the full ``Searcher.search`` path.

The data are not in this repository: fetch the public repository danny911kr/REALTALK
and point ``--data`` at its ``data/`` folder (the Chat_*.json files).

    python -m bench.retrieval_quality --data PATH [--limit N]
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
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import uvloop

from bench.scratch import scratch_dir
from libs import migrations
from libs.embeddings import LocalEmbedder
from services.agent_memory.app import MIGRATIONS
from services.agent_memory.clock import SystemClock
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.model import Actor
from services.agent_memory.projector import Projector
from services.agent_memory.repository import Repository
from services.agent_memory.retrieval import fusion
from services.agent_memory.retrieval.request import Overrides, RetrieveRequest
from services.agent_memory.retrieval.search import SEARCHED, Searcher, SearchOutcome, rank
from services.agent_memory.retrieval.store import Filters, RetrievalStore
from services.agent_memory.retrieval.view import View
from tests.support.ports import free_port
from tools.backends.postgres import EmbeddedPostgres

AGENT = "reader"
TOP = 10


@dataclass(frozen=True)
class Question:
    account: str
    text: str
    evidence: frozenset[str]
    category: int


@dataclass
class Prepared:
    """One question's leg results and candidates, computed once."""

    question: Question
    results: dict
    found: dict
    route: str
    vector: list[str]
    fulltext: list[str]


def chat_number(path: Path) -> int:
    return int(re.match(r"Chat_(\d+)_", path.name).group(1))


def turns_of(chat: dict) -> list[tuple[str, str, datetime]]:
    found, seen = [], set()
    for name, value in chat.items():
        if not (name.startswith("session_") and isinstance(value, list)):
            continue
        for turn in value:
            if turn["dia_id"] in seen or not turn.get("clean_text", "").strip():
                continue
            seen.add(turn["dia_id"])
            at = datetime.strptime(turn["date_time"], "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)
            found.append((turn["dia_id"], f"{turn['speaker']}: {turn['clean_text']}", at))
    return found


async def load(dsn: str, account: str, turns) -> None:
    rows = [(uuid.uuid4(), account, "default", "agent", AGENT, "", key, content,
             hashlib.sha256(content.encode()).hexdigest(), "project_fact", 0.5, 0.8, "agent",
             at, at) for key, content, at in turns]
    connection = await asyncpg.connect(dsn)
    try:
        await connection.copy_records_to_table(
            "memory_entries", records=rows,
            columns=["id", "account_id", "environment", "scope", "agent_id", "owner_user_id",
                     "key", "content", "content_hash", "kind", "importance", "confidence",
                     "source_kind", "created_at", "updated_at"])
        now = datetime.now(UTC)
        await connection.copy_records_to_table(
            "memory_outbox", records=[(r[0], account, "default", now, now) for r in rows],
            columns=["entry_id", "account_id", "environment", "next_attempt_at", "created_at"])
    finally:
        await connection.close()


def recall(keys: list[str], evidence: frozenset[str]) -> float:
    return len(evidence & set(keys[:TOP])) / len(evidence)


async def prepare(searcher: Searcher, store: RetrievalStore, view: View,
                  question: Question, keys: dict) -> Prepared:
    actor = Actor(question.account, "default", AGENT, None)
    request = RetrieveRequest(run_id="bench", query=question.text, top_n=TOP, min_score=0.0,
                              raw=True)
    outcome = SearchOutcome()
    found = await searcher.collect(actor, request, view, outcome)
    searched = await searcher._vector(actor, view, question.text, TOP)  # noqa: SLF001
    vector = (await store.resolve(actor, view, SEARCHED, searched.hits, None, [],
                                  Filters({}, None, None, None))).vector
    fulltext = await store.fulltext(actor, view, SEARCHED, question.text, TOP)
    return Prepared(question, found.results, found.candidates, outcome.route,
                    [keys[h.id] for h in vector], [keys[h.id] for h in fulltext])


def fused_keys(prepared: Prepared, overrides: Overrides, view: View, keys: dict) -> list[str]:
    request = RetrieveRequest(run_id="bench", query=prepared.question.text, top_n=TOP,
                              min_score=0.0, raw=True, overrides=overrides)
    outcome = SearchOutcome(route=prepared.route)
    rank(fusion.rrf(prepared.results, overrides.leg_weights, overrides.rrf_k),
         prepared.found, request, view, outcome)
    return [keys[s.candidate.entry.id] for s in outcome.kept]


def grid() -> list[tuple[str, Overrides]]:
    default = Overrides()
    configs = [("default", default)]
    relevance_only = {name: 0.0 for name in default.factor_weights} | {"rrf": 1.0}
    for vector, fulltext, entity, graph, factors, k in itertools.product(
            (1.0, 2.0), (0.5, 1.0), (0.0, 0.5, 1.0), (0.0, 0.5), ("default", "rrf only"),
            (20, 60)):
        legs = dict(default.leg_weights, vector=vector, fulltext=fulltext, entity=entity,
                    graph=graph)
        weights = default.factor_weights if factors == "default" else relevance_only
        name = (f"vector {vector}, fulltext {fulltext}, entity {entity}, graph {graph},"
                f" factors {factors}, k {k}")
        configs.append((name, replace(default, leg_weights=legs, factor_weights=weights,
                                      rrf_k=k)))
    return configs


def mean(values) -> float:
    return statistics.fmean(values) if values else 0.0


async def main(chats: list[Path], limit: int | None) -> None:
    workdir = scratch_dir("retrieval-quality-")
    postgres = EmbeddedPostgres(workdir / "postgres", free_port()).start()
    try:
        repository = await Repository.connect(postgres.dsn)
        await migrations.apply(repository.pool, "agent_memory", MIGRATIONS)
        embedder, index = LocalEmbedder(), EdgeIndex(workdir / "qdrant")
        questions, keys = [], {}
        started = time.monotonic()
        for path in chats:
            chat = json.loads(path.read_text())  # noqa: ASYNC240 - before measuring
            account = path.stem
            turns = turns_of(chat)
            await load(postgres.dsn, account, turns)
            present = {key for key, _, _ in turns}
            for qa in chat["qa"]:
                evidence = frozenset(e for e in qa.get("evidence", []) if e in present)
                if evidence:
                    questions.append(Question(account, qa["question"], evidence,
                                              qa.get("category", 0)))
        projector = Projector(repository, index, embedder, SystemClock(), batch=16)
        projected = await projector.drain()
        for row in await repository.pool.fetch("SELECT id, key FROM memory_entries"):
            keys[row["id"]] = row["key"]
        print(f"{len(keys):,} turns from {len(chats)} conversations projected ({projected:,}"
              f" outbox rows) in {time.monotonic() - started:.0f} s; {len(questions)} questions"
              " with evidence", flush=True)
        if limit:
            questions = questions[:limit]
        store = RetrievalStore(repository.pool)
        searcher = Searcher(store, index, embedder, None)
        view = View(datetime.now(UTC))
        prepared = [await prepare(searcher, store, view, q, keys) for q in questions]
        tuning = [p for p in prepared if chat_number(Path(p.question.account + ".json")) % 2]
        evaluation = [p for p in prepared if p not in tuning]

        # The cached recomputation is the service's own search: check it on the default.
        for p in prepared[:25]:
            actor = Actor(p.question.account, "default", AGENT, None)
            outcome = await searcher.search(actor, RetrieveRequest(
                run_id="bench", query=p.question.text, top_n=TOP, min_score=0.0, raw=True),
                view)
            live = [keys[s.candidate.entry.id] for s in outcome.kept]
            assert live == fused_keys(p, Overrides(), view, keys), p.question.text

        scores = {}
        for name, overrides in grid():
            scores[name] = mean([recall(fused_keys(p, overrides, view, keys),
                                        p.question.evidence) for p in tuning])
        best = max(scores, key=lambda name: (scores[name], name == "default"))
        tuned = dict(grid())[best]
        print(f"tuning split: best of {len(scores)} configurations: {best}")
        for name in sorted(scores, key=scores.get, reverse=True)[:5]:
            print(f"  {scores[name]:.3f}  {name}")
        print(f"  {scores['default']:.3f}  default")
        print()
        print("| evidence recall@10 | tuning (odd chats) | evaluation (even chats) |")
        print("|---|---|---|")
        rows = [
            ("plain vector search", lambda p: p.vector),
            ("plain full-text (ts_rank_cd)", lambda p: p.fulltext),
            ("fused, default weights", lambda p: fused_keys(p, Overrides(), view, keys)),
            ("fused, tuned on the tuning split", lambda p: fused_keys(p, tuned, view, keys)),
        ]
        for label, ranking in rows:
            values = [mean([recall(ranking(p), p.question.evidence) for p in split])
                      for split in (tuning, evaluation)]
            print(f"| {label} | {values[0]:.3f} | {values[1]:.3f} |")
        print(f"\nquestions: {len(tuning)} tuning, {len(evaluation)} evaluation")
        await index.close()
        await embedder.close()
        await repository.close()
    finally:
        postgres.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    found = sorted(args.data.glob("Chat_*.json"), key=chat_number)
    if not found:
        raise SystemExit(f"no Chat_*.json in {args.data} (see the module docstring)")
    uvloop.run(main(found, args.limit))
