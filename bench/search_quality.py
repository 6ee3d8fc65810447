"""Transcript-search quality: recall@5/10/20 of labelled evidence turns, BM25, hybrid, rerank.

Dataset: REALTALK (Lee, Maharana, Pujara, Ren and Barbieri, 2025,
arXiv:2502.13270): 21 days of real messaging-app conversations between ten
pairs of people (8,944 text turns), with 728 memory-probing questions whose
evidence turns are labelled. Public at https://github.com/danny911kr/REALTALK
(``data/Chat_*.json``). The repository states no licence, so nothing of it is
copied here; point the script at a checkout (``data/locomo/`` in that
repository is LoCoMo, which this script never reads):

    git clone https://github.com/danny911kr/REALTALK /tmp/REALTALK
    python -m bench.search_quality --data /tmp/REALTALK/data [--sweep] [--pools 10,20,40]
        [--blend] [--cache FILE]

How the dataset maps onto the service (the real one: a journal process, the
search service in this process on chDB with the local embedder):

- each conversation is an account of its own (tenancy keeps them apart), one
  agent; each session a thread; the first speaker's turns are user messages,
  the second's assistant messages; message id = ``dia_id``; creation time =
  the turn's ``date_time``. Turns without text (photos) are not messages;
- every question searches all threads of its conversation (limit 20,
  summarize off), once with SEARCH_MODE_KEYWORD and once with
  SEARCH_MODE_HYBRID;
- recall@k: the fraction of a question's evidence turns among its first k
  hits, averaged over questions. Evidence turns without text can never be
  found and are left out; questions left with no evidence are skipped (the
  counts are printed).

Then hybrid + the local cross-encoder (``rerank``, the service's blend with the
hybrid order) at each ``--pools`` size, with each variant's p50 latency (one
client, query embedding included; the model's scores come from a cache after
their first run, so it is the search's alone). With ``--blend``, each question's
hybrid ranking as deep as each pool asks, and the model's logits of it, are
captured through the service once, and ``bench/rerank_blend.py``'s grid of
blends (form, rank constant, weight, pool) is scored from them, with the model
reading each message alone and after its previous turn in the thread; then
hybrid, + the model's order alone and + the blend at each pool, per split and
category (the same figures the service gives: the last rows check that).

Splits: conversations 1-3 are the tuning split (``--sweep`` tries fusion
depths and RRF constants on it, with and without the length prior; the
service's constants were chosen there),
conversations 4-10 the evaluation split. Categories are LoCoMo's numbering,
which REALTALK keeps: 1 multi-hop, 2 temporal, 3 commonsense/open-domain.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc
from google.protobuf import timestamp_pb2

from bench import rerank_blend
from bench.scratch import scratch_dir
from bench.search_bench import start
from libs import clients
from libs.reranker import BLEND_K, BLEND_WEIGHT, CrossEncoder, Reranking
from services.search.app import running
from services.search.settings import SearchConfig
from testkit.journal_client import JournalClient, principal
from testkit.ports import free_port

TUNING = {1, 2, 3}
KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
RETRIES = 5  # asks of a question whose hybrid search fell back to BM25


@dataclass
class Turn:
    dia_id: str
    text: str
    role: int
    created: datetime


@dataclass
class Conversation:
    number: int
    sessions: dict[str, list[Turn]]
    questions: list[dict]
    texts: set[str] = field(default_factory=set)

    @property
    def account(self) -> str:
        return f"realtalk-{self.number}"

    @property
    def split(self) -> str:
        return "tuning" if self.number in TUNING else "evaluation"


def load(data: Path) -> list[Conversation]:
    conversations = []
    for path in sorted(data.glob("Chat_*.json"),
                       key=lambda p: int(re.match(r"Chat_(\d+)_", p.name).group(1))):
        raw = json.loads(path.read_text())
        first = raw["name"]["speaker_1"]
        sessions: dict[str, list[Turn]] = {}
        for key, turns in raw.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(turns, list):
                sessions[key] = [
                    Turn(t["dia_id"], t["clean_text"],
                         message_pb2.ROLE_USER if t["speaker"] == first
                         else message_pb2.ROLE_ASSISTANT,
                         datetime.strptime(t["date_time"], "%d.%m.%Y, %H:%M:%S"))
                    for t in turns if t.get("clean_text", "").strip()]
        conversation = Conversation(int(re.match(r"Chat_(\d+)_", path.name).group(1)),
                                    sessions, raw["qa"])
        conversation.texts = {t.dia_id for turns in sessions.values() for t in turns}
        conversations.append(conversation)
    return conversations


def _message(turn: Turn) -> message_pb2.Message:
    created = timestamp_pb2.Timestamp()
    created.FromDatetime(turn.created)
    return message_pb2.Message(id=turn.dia_id, role=turn.role, content=turn.text,
                               created_at=created)


async def append(journal: JournalClient, conversations: list[Conversation]) -> int:
    count = 0
    for conversation in conversations:
        who = principal(conversation.account, agent="bench")
        for session, turns in conversation.sessions.items():
            for start_at in range(0, len(turns), 100):
                batch = turns[start_at:start_at + 100]
                await journal.append(session, [_message(t) for t in batch], who=who)
                count += len(batch)
    return count


async def wait_projected(stub: pb_grpc.SearchServiceStub, count: int) -> float:
    started = time.monotonic()
    while True:
        status = await stub.DescribeProjection(pb.DescribeProjectionRequest())
        done = sum(s.embedded_sequence for s in status.shards)
        print(f"\r  projected {sum(s.projected_sequence for s in status.shards):,},"
              f" embedded {done:,} of {count:,}", end="", flush=True)
        if done >= count and status.lag == 0:
            print()
            return time.monotonic() - started
        await asyncio.sleep(1.0)


def asked(conversations: list[Conversation], mode: int, rerank: bool):
    """Each question with evidence left (turns with text), and its search of its
    conversation."""
    for conversation in conversations:
        for question in conversation.questions:
            evidence = set(question["evidence"]) & conversation.texts
            if evidence:
                yield conversation, question, evidence, pb.SearchMessagesRequest(
                    principal=principal(conversation.account, agent="bench"),
                    surface=principal_pb2.SURFACE_AGENT, query=question["question"],
                    limit=max(KS), summarize=False, mode=mode, rerank=rerank)


async def recalls(stub: pb_grpc.SearchServiceStub, conversations: list[Conversation],
                  mode: int, rerank: bool = False) -> dict[tuple[str, str], list[dict[int, float]]]:
    """Per (split, category) the recall@k of each question. A hybrid search that fell
    back to BM25 (the query's embedding took over 2 s on a loaded machine) is asked
    again: this measures ranking, not the embedder's timeout; fallbacks are counted."""
    found: dict[tuple[str, str], list[dict[int, float]]] = defaultdict(list)
    fallbacks = 0
    seconds = []
    for conversation, question, evidence, request in asked(conversations, mode, rerank):
        for _ in range(RETRIES):
            started = time.perf_counter()
            reply = await stub.SearchMessages(request)
            seconds.append(time.perf_counter() - started)
            if not reply.fallback:
                break
            fallbacks += 1
        assert reply.reranked == rerank
        ranked = [h.message_id for h in reply.hits]
        recall = {k: len(evidence & set(ranked[:k])) / len(evidence) for k in KS}
        for category in ("all", CATEGORIES.get(question["category"], "other")):
            found[(conversation.split, category)].append(recall)
    if fallbacks:
        print(f"  ({fallbacks} hybrid searches fell back to BM25 and were asked again)")
    print(f"  (p50 {statistics.median(seconds) * 1000:.0f} ms a search, one client)")
    return found


class CachedScores:
    """The cross-encoder's logits by query and text, each pair run once (kept in
    ``path`` between runs when given)."""

    def __init__(self, model: CrossEncoder, path: Path | None) -> None:
        self.model, self.path = model, path
        self.cache: dict[str, float] = json.loads(path.read_text()) \
            if path is not None and path.exists() else {}

    async def scores(self, query: str, texts) -> list[float]:
        keys = [f"{query}\x00{t}" for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.cache))
        if missing:
            given = await self.model.scores(query, [k.split("\x00", 1)[1] for k in missing])
            self.cache.update(zip(missing, given, strict=True))
        return [self.cache[k] for k in keys]

    def save(self) -> None:
        if self.path is not None:
            self.path.write_text(json.dumps(self.cache))


@dataclass(frozen=True)
class Capturing(Reranking):
    """Reranking that keeps each call's ranking and the model's logits of its pool (the
    bench asks one question at a time)."""

    seen: list = field(default_factory=list)

    async def reorder(self, query, items, text):
        ordered, given = await super().reorder(query, items, text)
        self.seen.append((list(items), given))
        return ordered, given


@dataclass
class Captured:
    conversation: Conversation
    question: dict
    evidence: set[str]
    hits: list  # the hybrid ranking, as deep as the pool
    given: list[float]  # the cross-encoder's logits of it
    context: list[float] = field(default_factory=list)  # ... with the previous turn


async def capture(stub: pb_grpc.SearchServiceStub, searcher, scores: CachedScores,
                  conversations: list[Conversation], depth: int) -> list[Captured]:
    """Each question's hybrid ranking ``depth`` deep (the depth a pool of ``depth`` asks
    of the fusion) with the cross-encoder's logits of it, through the service."""
    kept = searcher.reranking
    searcher.reranking = recorder = Capturing(scores, depth)
    found = []
    try:
        for conversation, question, evidence, request in asked(
                conversations, pb.SEARCH_MODE_HYBRID, rerank=True):
            for _ in range(RETRIES):
                recorder.seen.clear()
                reply = await stub.SearchMessages(request)
                if not reply.fallback:
                    break
            hits, given = recorder.seen[-1] if recorder.seen else ([], [])
            found.append(Captured(conversation, question, evidence, hits, given))
    finally:
        searcher.reranking = kept
    scores.save()
    return found


def previous_turns(conversation: Conversation) -> dict[tuple[str, str], str]:
    """Each message's previous turn in its thread, by (thread, message id)."""
    return {(session, turn.dia_id): turns[i - 1].text
            for session, turns in conversation.sessions.items()
            for i, turn in enumerate(turns) if i > 0}


async def with_context(captured: list[Captured], scores: CachedScores) -> None:
    """The logits of each hit read after its previous turn in the thread."""
    previous: dict[int, dict[tuple[str, str], str]] = {}
    for item in captured:
        before = previous.setdefault(item.conversation.number,
                                     previous_turns(item.conversation))
        texts = [f"{before[(h.thread_id, h.message_id)]}\n{h.content}"
                 if (h.thread_id, h.message_id) in before else h.content for h in item.hits]
        item.context = await scores.scores(item.question["question"], texts)
    scores.save()


def recall_of(item: Captured, ranked: list, k: int = 10) -> float:
    ids = [h.message_id for h in ranked[:max(KS)]]
    return len(item.evidence & set(ids[:k])) / len(item.evidence)


def blends(captures: dict[int, list[Captured]], pools: list[int], context: bool) -> None:
    """The blend grid (``bench.rerank_blend``) on the captured rankings, R@10: each pool
    on the ranking its depth asks for."""
    found: dict[Any, Any] = {}
    for depth, captured in captures.items():
        cases = {"journal": [rerank_blend.Case(
            c.hits, c.context if context else c.given, c.conversation.split == "tuning",
            lambda ranked, c=c: recall_of(c, ranked)) for c in captured]}
        found |= rerank_blend.grid(cases, [p for p in pools if max(max(KS), p) == depth])
    plain = captures[max(KS)]
    baseline = {"journal": tuple(statistics.fmean(
        recall_of(c, c.hits) for c in plain if c.conversation.split == split)
        for split in ("tuning", "evaluation"))}
    print(f"\nblends of the cross-encoder{' (message after its previous turn)' if context else ''}"
          " with the hybrid order, R@10 (tuning, evaluation)")
    rerank_blend.report(found, baseline)


def offline(captures: dict[int, list[Captured]], pools: list[int], weight: float) -> None:
    """Hybrid, + the pure rerank and + the blend (``weight``) at each pool, per split and
    category, from the captured rankings and logits (with and without the previous turn)."""
    rows: list[tuple[str, int, Any]] = [("hybrid", max(KS), lambda c: c.hits)]
    for pool in pools:
        depth = max(max(KS), pool)
        for label, w in (("pure", 1.0), ("blend", weight)):
            for suffix, field_name in (("", "given"), (" +prev", "context")):
                rows.append((f"{label}{pool}{suffix}", depth, lambda c, pool=pool, w=w,
                             f=field_name: rerank_blend.reorder(
                                 "rrf", c.hits, getattr(c, f), pool, w, BLEND_K)))
    for name, depth, ranking in rows:
        found: dict[tuple[str, str], list[dict[int, float]]] = defaultdict(list)
        for c in captures[depth]:
            ranked = ranking(c)
            recall = {k: recall_of(c, ranked, k) for k in KS}
            for category in ("all", CATEGORIES.get(c.question["category"], "other")):
                found[(c.conversation.split, category)].append(recall)
        report(name, found)


def report(name: str, found: dict[tuple[str, str], list[dict[int, float]]]) -> None:
    for (split, category), rows in sorted(found.items()):
        figures = "  ".join(f"R@{k} {statistics.fmean(r[k] for r in rows):.3f}" for k in KS)
        print(f"  {name:14s} {split:10s} {category:12s} {figures}   ({len(rows)} questions)")


async def sweep(stub, searcher, conversations: list[Conversation]) -> None:
    tuning = [c for c in conversations if c.split == "tuning"]
    chosen = searcher.fusion_depth, searcher.rrf_k, searcher.length_prior
    for prior in (True, False):
        for depth in (10, 20, 50):
            for k in (10, 30, 60):
                searcher.fusion_depth, searcher.rrf_k, searcher.length_prior = depth, k, prior
                rows = (await recalls(stub, tuning, pb.SEARCH_MODE_HYBRID))[("tuning", "all")]
                print(f"  length prior {'on ' if prior else 'off'} depth {depth:3d} k {k:3d}  "
                      + "  ".join(f"R@{n} {statistics.fmean(r[n] for r in rows):.3f}"
                                  for n in KS), flush=True)
    searcher.fusion_depth, searcher.rrf_k, searcher.length_prior = chosen


async def main(data: Path, do_sweep: bool, pools: list[int], blend: bool,
               cache: Path | None) -> None:
    conversations = load(data)
    skipped = sum(1 for c in conversations for q in c.questions
                  if not set(q["evidence"]) & c.texts)
    dropped = sum(len(set(q["evidence"]) - c.texts) for c in conversations for q in c.questions)
    print(f"REALTALK: {len(conversations)} conversations, "
          f"{sum(len(c.texts) for c in conversations):,} text turns, "
          f"{sum(len(c.questions) for c in conversations)} questions "
          f"({skipped} without text evidence skipped; {dropped} evidence turns without text)")
    workdir = scratch_dir("search-quality-")
    journal_port = free_port()
    journal_process = await start("journal", {"JOURNAL_PORT": str(journal_port),
                                              "JOURNAL_LOCAL_PATH": str(workdir / "journal")},
                                  journal_port)
    try:
        async with clients.channel(f"127.0.0.1:{journal_port}", default_timeout=60) as channel:
            count = await append(JournalClient(channel), conversations)
        config = SearchConfig.from_env({
            "SEARCH_PORT": "0", "SEARCH_CHDB_PATH": str(workdir / "search"),
            "SEARCH_JOURNAL_ADDRESS": f"127.0.0.1:{journal_port}"})
        async with running(config) as service:
            async with clients.channel(f"127.0.0.1:{service.server.port}",
                                       default_timeout=60) as channel:
                stub = pb_grpc.SearchServiceStub(channel)
                elapsed = await wait_projected(stub, count)
                print(f"projection with embeddings: {count:,} messages in {elapsed:.0f} s"
                      f" = {count / elapsed:,.0f} messages/s ({service.dense.embedder})")
                if do_sweep:
                    print("tuning split, hybrid, by length prior, fusion depth and RRF constant:")
                    await sweep(stub, service.searcher, conversations)
                searcher = service.searcher
                print(f"recall of evidence turns (fusion depth {searcher.fusion_depth},"
                      f" RRF k {searcher.rrf_k}, length prior"
                      f" {'on' if searcher.length_prior else 'off'}):")
                report("bm25", await recalls(stub, conversations, pb.SEARCH_MODE_KEYWORD))
                report("hybrid", await recalls(stub, conversations, pb.SEARCH_MODE_HYBRID))
                model = searcher.reranking.model
                assert isinstance(model, CrossEncoder)
                scores = CachedScores(model, cache)
                if blend:
                    captures = {depth: await capture(stub, searcher, scores, conversations,
                                                     depth)
                                for depth in sorted({max(max(KS), p) for p in pools})}
                    for captured in captures.values():
                        await with_context(captured, scores)
                    blends(captures, pools, context=False)
                    blends(captures, pools, context=True)
                    print(f"\nfrom the captured rankings (blend weight {BLEND_WEIGHT:g}):")
                    offline(captures, pools, BLEND_WEIGHT)
                print(f"\nthrough the service (blend weight {BLEND_WEIGHT:g}):")
                for pool in pools:
                    searcher.reranking = Reranking(scores, pool)
                    report(f"+rr{pool}", await recalls(stub, conversations,
                                                      pb.SEARCH_MODE_HYBRID, rerank=True))
                scores.save()
    finally:
        journal_process.terminate()
        journal_process.wait(30)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="the data/ directory of a REALTALK checkout")
    parser.add_argument("--sweep", action="store_true",
                        help="try fusion depths, RRF constants and the length prior on the"
                             " tuning split first")
    parser.add_argument("--pools", type=lambda v: [int(x) for x in v.split(",") if x],
                        default=[20], help="hybrid + the local cross-encoder at these pool"
                                           " sizes (default 20, the service's)")
    parser.add_argument("--blend", action="store_true",
                        help="capture the hybrid rankings and the cross-encoder's logits at"
                             " --pools and score the grid of blends (bench/rerank_blend.py),"
                             " with and without the previous turn as context")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the cross-encoder's logits in this JSON file between runs")
    args = parser.parse_args()
    asyncio.run(main(args.data, args.sweep, args.pools, args.blend, args.cache))
