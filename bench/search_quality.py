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

Then hybrid + the local cross-encoder (``rerank``) at each ``--pools`` size,
with each variant's p50 latency (one client, query embedding included).

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

from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc
from google.protobuf import timestamp_pb2

from bench.scratch import scratch_dir
from bench.search_bench import start
from libs import clients
from libs.reranker import Reranking
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


async def recalls(stub: pb_grpc.SearchServiceStub, conversations: list[Conversation],
                  mode: int, rerank: bool = False) -> dict[tuple[str, str], list[dict[int, float]]]:
    """Per (split, category) the recall@k of each question. A hybrid search that fell
    back to BM25 (the query's embedding took over 2 s on a loaded machine) is asked
    again: this measures ranking, not the embedder's timeout; fallbacks are counted."""
    found: dict[tuple[str, str], list[dict[int, float]]] = defaultdict(list)
    fallbacks = 0
    seconds = []
    for conversation in conversations:
        for question in conversation.questions:
            evidence = set(question["evidence"]) & conversation.texts
            if not evidence:
                continue
            request = pb.SearchMessagesRequest(
                principal=principal(conversation.account, agent="bench"),
                surface=principal_pb2.SURFACE_AGENT, query=question["question"], limit=max(KS),
                summarize=False, mode=mode, rerank=rerank)
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


def report(name: str, found: dict[tuple[str, str], list[dict[int, float]]]) -> None:
    for (split, category), rows in sorted(found.items()):
        figures = "  ".join(f"R@{k} {statistics.fmean(r[k] for r in rows):.3f}" for k in KS)
        print(f"  {name:7s} {split:10s} {category:12s} {figures}   ({len(rows)} questions)")


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


async def main(data: Path, do_sweep: bool, pools: list[int]) -> None:
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
                for pool in pools:
                    searcher.reranking = Reranking(model, pool)
                    report(f"+rr{pool}", await recalls(stub, conversations,
                                                      pb.SEARCH_MODE_HYBRID, rerank=True))
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
    args = parser.parse_args()
    asyncio.run(main(args.data, args.sweep, args.pools))
