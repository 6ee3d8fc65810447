"""RetrieveContext and its receipts: the operations behind the RetrievalService RPCs.

One call: settings (a disabled account fails with MEMORY_DISABLED) -> search
(``search``) and the fixed sections, concurrently -> the compiler -> one
receipt of what was delivered (memory ids and versions, sections, tokens,
run, query), written in the same statement that moves exactly those
memories' usage counters. RecordFeedback / RecordOutcome credit only a
receipt's memories, once per (receipt, request id).

Sections and where they come from:

- blocks: ``block`` memories the caller sees;
- userProfile: the user's ``user_profile`` memories (user and private scope),
  when there is a user;
- platformEntries, tenantFloors, tenantEntries: ``platform_rule``,
  ``tenant_floor``, ``tenant_rule`` memories;
- procedures: the :class:`ProcedureSource` (none until the learning side
  plugs in);
- workspaceEntries: the search results, each with its trust breakdown;
- relevantEpisodes: the best episodes the episode leg matched (not this run's, nor
  a past run that is already there as a procedure);
- sessionSummary: this run's episode, when the run was recorded; else the
  thread's rolling summary the gateway passed (the request named the thread);
- sessionEntries: memories whose provenance names this run (and thread, when
  given), newest first.

A memory offered in an earlier section is not offered again in a later one, and
this run's memories are offered as sessionEntries only (not as search results).
In every section a memory learned from a tool result goes into the section's
inert tool-data block.

RetrieveRelevantMemories (BuildContext's relevant memories, seed 004's
dispatcher) is the same search with the same defaults, less the memories the
turn shows already (its pinned facts), compiled as the one
``<relevant_memories>`` block into its own budget; it writes a receipt (the
same statement, the same quota) only when the block delivers something.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from uuid import UUID

from libs.embeddings import Embedder
from libs.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound, PermissionDenied
from libs.model import ChatModel
from libs.reranker import Reranking
from services.agent_memory.index import VectorIndex
from services.agent_memory.memories import rules
from services.agent_memory.memories.clock import Clock
from services.agent_memory.memories.model import Actor, Entry
from services.agent_memory.memories.rules import Kind, SourceKind
from services.agent_memory.memories.store.entries import Repository
from services.agent_memory.retrieval import compiler, params, render
from services.agent_memory.retrieval import episodes as episode_rules
from services.agent_memory.retrieval.compiler import Item, SectionUsage, line_tokens
from services.agent_memory.retrieval.fusion import LegRank
from services.agent_memory.retrieval.model import Candidate, EpisodeRow, Receipt, ReceiptItem, Section
from services.agent_memory.retrieval.procedures import NoProcedures, Procedure, ProcedureSource
from services.agent_memory.retrieval.request import RelevantRequest, RetrieveRequest
from services.agent_memory.retrieval.scoring import Factor, Scored
from services.agent_memory.retrieval.search import SEARCHED, Searcher, SearchOutcome
from services.agent_memory.retrieval.store import RetrievalStore
from services.agent_memory.retrieval.trust import Trust, trust
from services.agent_memory.retrieval.view import View

MEMORY_SECTIONS = ("blocks", "userProfile", "platformEntries", "tenantFloors", "tenantEntries",
                   "workspaceEntries", "sessionEntries")
# Feedback and outcomes credit these sections' memories (platform rules belong to no account).
CREDITED = tuple(s for s in MEMORY_SECTIONS if s != "platformEntries") + (
    "results", compiler.RELEVANT)


@dataclass(frozen=True)
class Explanation:
    legs: tuple[LegRank, ...]
    rrf_score: float
    factors: tuple[Factor, ...]
    floor_applied: float
    reranker_status: str
    reranker_score: float | None
    final_score: float


@dataclass(frozen=True)
class MemoryItem:
    entry: Entry
    trust: Trust
    tokens: int
    superseded: bool = False
    score: float | None = None  # search results only
    explanation: Explanation | None = None


@dataclass(frozen=True)
class EpisodeItem:
    episode: EpisodeRow
    tokens: int


@dataclass(frozen=True)
class ProcedureItem:
    procedure: Procedure
    tokens: int


@dataclass(frozen=True)
class Summary:
    text: str
    source: str  # episode | thread
    tokens: int


@dataclass(frozen=True)
class Diagnostics:
    route: str
    legs: list
    fused: int
    filtered: int
    threshold: float
    adaptive: bool
    rrf_k: int
    leg_weights: dict[str, float]
    factor_weights: dict[str, float]
    utility_weight: float
    value_aware: bool
    scoring_version: str
    reranker: str
    query_parsing: str
    timings: dict[str, float]


@dataclass
class Context:
    receipt_id: UUID
    token_budget: int
    memories: dict[str, list[MemoryItem]] = field(default_factory=dict)
    procedures: list[ProcedureItem] = field(default_factory=list)
    episodes: list[EpisodeItem] = field(default_factory=list)
    summary: Summary | None = None
    results: list[MemoryItem] = field(default_factory=list)  # raw mode
    hidden_superseded: int = 0
    usage: list[SectionUsage] = field(default_factory=list)
    tokens_used: int = 0
    reserved_tokens: int = 0
    rendered: str = ""
    diagnostics: Diagnostics | None = None


@dataclass(frozen=True)
class Relevant:
    """What a turn's ``<relevant_memories>`` block delivered; ``receipt_id`` None:
    nothing (and no receipt)."""

    receipt_id: UUID | None
    token_budget: int
    memories: list[MemoryItem]
    hidden_superseded: int
    usage: SectionUsage
    tokens_used: int
    reserved_tokens: int
    rendered: str


def _request_hash(**fields) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()


def _day(value: datetime) -> str:
    return value.date().isoformat()


class Retrieval:
    def __init__(self, repository: Repository, store: RetrievalStore, index: VectorIndex,
                 embedder: Embedder, clock: Clock, model: ChatModel | None = None,
                 procedures: ProcedureSource | None = None,
                 local_rerank: Reranking | None = None) -> None:
        self._repository = repository
        self._store = store
        self._clock = clock
        self._searcher = Searcher(store, index, embedder, model, local_rerank)
        self._procedures = procedures or NoProcedures()

    def use_procedures(self, procedures: ProcedureSource) -> None:
        """The learning side's procedures (built after this: it records episodes here)."""
        self._procedures = procedures

    # -- RetrieveContext -----------------------------------------------------------------

    async def retrieve(self, actor: Actor, request: RetrieveRequest) -> Context:
        started = time.perf_counter()
        actor = _acting_for(actor, request.user_id)
        now = self._clock.now()
        view = View(now, request.as_of, request.as_of_axis)
        # The account's settings are read alongside the reads (not before them): nothing
        # is written, and nothing returned, until they say memory is enabled (procedure
        # recall, which records a use, checks that itself).
        settings, found, fixed, procedures, run_episode = await asyncio.gather(
            self._repository.account_settings(actor.account_id),
            self._searcher.search(actor, request, view),
            self._fixed_sections(actor, request, view),
            self._procedures.relevant(
                actor, request.query,
                run=(request.thread_id, request.run_id) if request.thread_id else None)
            if request.query else _nothing(),
            self._store.run_episode(actor, request.thread_id, request.run_id))
        if not settings.memory_enabled:
            raise FailedPrecondition("memory is disabled for this account",
                                     reason="MEMORY_DISABLED")
        context = Context(uuid.uuid4(), request.token_budget or settings.default_token_budget)
        context.hidden_superseded = found.hidden_superseded
        workspace = [self._search_item(s, found, view, request.explain) for s in found.kept]
        if request.raw:
            context.results = workspace
        else:
            compile_started = time.perf_counter()
            self._compile(context, request, view, fixed, workspace, procedures, found,
                          run_episode)
            found.timings["compile"] = round((time.perf_counter() - compile_started) * 1000, 3)
        delivered = [("results", i) for i in context.results] + [
            (section, i) for section in MEMORY_SECTIONS for i in context.memories.get(section, [])]
        await self._store.save_receipt(
            actor, _receipt(context.receipt_id, request, delivered, context.usage,
                            context.token_budget, context.tokens_used, now),
            settings.quotas.receipts_per_day)
        found.timings["total"] = round((time.perf_counter() - started) * 1000, 3)
        if request.explain:
            context.diagnostics = _diagnostics(request, found)
        return context

    async def _fixed_sections(self, actor: Actor, request: RetrieveRequest,
                              view: View) -> dict[str, list[Candidate]]:
        by_rank = "m.importance DESC, m.created_at, m.id"
        wanted = [
            Section("blocks", [Kind.BLOCK], rules.BLOCK_LIMIT),
            Section("platformEntries", [Kind.PLATFORM_RULE], params.RULES_MAX, platform=True,
                    order=by_rank),
            Section("tenantFloors", [Kind.TENANT_FLOOR], params.RULES_MAX, order=by_rank),
            Section("tenantEntries", [Kind.TENANT_RULE], params.RULES_MAX, order=by_rank),
            Section("sessionEntries", SEARCHED, params.RUN_MEMORIES_MAX,
                    run=(request.thread_id, request.run_id), order="m.created_at DESC, m.id"),
        ]
        if actor.user_id:
            wanted.append(Section("userProfile", [Kind.USER_PROFILE], params.PROFILE_MAX,
                                  owner=actor.user_id))
        return await self._store.sections(actor, view, wanted)

    def _search_item(self, scored: Scored, found: SearchOutcome, view: View,
                     explain: bool) -> MemoryItem:
        candidate = scored.candidate
        breakdown = trust(candidate.entry, candidate.signals, view.at)
        explanation = None
        if explain:
            reranked = found.reranked
            explanation = Explanation(
                scored.fused.legs, scored.fused.score, scored.factors, found.threshold,
                reranked.status, reranked.scores.get(scored.fused.id), scored.final)
        line = render.memory(candidate.entry, breakdown.composite)
        return MemoryItem(candidate.entry, breakdown, line_tokens(line),
                          candidate.signals.superseded, scored.final, explanation)

    def _compile(self, context: Context, request: RetrieveRequest, view: View,
                 fixed: dict[str, list[Candidate]], workspace: list[MemoryItem],
                 procedures: Sequence[Procedure], found: SearchOutcome,
                 run_episode: EpisodeRow | None) -> None:
        offered: dict[str, list[Item]] = {}
        seen: set[UUID] = set()

        def memories(section: str, items: list[MemoryItem], line) -> None:
            kept = [i for i in items if i.entry.id not in seen]
            seen.update(i.entry.id for i in kept)
            offered[section] = [Item(line(i), i, _from_a_tool(i)) for i in kept]

        def fixed_items(section: str) -> list[MemoryItem]:
            return [MemoryItem(c.entry, trust(c.entry, c.signals, view.at), 0)
                    for c in fixed.get(section, [])]

        memories("blocks", fixed_items("blocks"), lambda i: render.block(i.entry))
        memories("userProfile", fixed_items("userProfile"), lambda i: render.block(i.entry))
        for section in ("platformEntries", "tenantFloors", "tenantEntries"):
            memories(section, fixed_items(section), lambda i: render.rule(i.entry))
        offered["procedures"] = [Item(render.procedure(p), p) for p in procedures]
        past_runs = {(p.thread_id, p.run_id) for p in procedures}
        run = {c.entry.id for c in fixed.get("sessionEntries", [])}  # their own section
        memories("workspaceEntries", [i for i in workspace if i.entry.id not in run],
                 lambda i: render.memory(i.entry, i.trust.composite))
        current = run_episode.id if run_episode else None
        offered["relevantEpisodes"] = [
            Item(render.episode(e.outcome, _day(e.finished_at), e.task, e.summary), e)
            for e in found.episodes
            if e.id != current and (e.thread_id, e.run_id) not in past_runs
        ][:params.RELEVANT_EPISODES]
        summary = _run_summary(run_episode, request.thread_summary)
        offered["sessionSummary"] = [] if summary is None else [
            Item(render.text(summary[0]), summary)]
        memories("sessionEntries", fixed_items("sessionEntries"),
                 lambda i: render.memory(i.entry, i.trust.composite))
        compiled = compiler.compile_context(offered, context.token_budget,
                                            str(context.receipt_id))
        self._deliver(context, compiled)

    @staticmethod
    def _deliver(context: Context, compiled: compiler.Compiled) -> None:
        for section in MEMORY_SECTIONS:
            context.memories[section] = [replace(i.subject, tokens=line_tokens(i.line))
                                         for i in compiled.sections[section]]
        context.procedures = [ProcedureItem(i.subject, line_tokens(i.line))
                              for i in compiled.sections["procedures"]]
        context.episodes = [EpisodeItem(i.subject, line_tokens(i.line))
                            for i in compiled.sections["relevantEpisodes"]]
        for item in compiled.sections["sessionSummary"]:
            text, source = item.subject
            context.summary = Summary(text, source, line_tokens(item.line))
        context.usage = [compiled.usage[name] for name in compiler.SECTIONS]
        context.tokens_used = compiled.tokens_used
        context.reserved_tokens = compiled.reserved_tokens
        context.rendered = compiled.text

    # -- RetrieveRelevantMemories --------------------------------------------------------

    async def relevant(self, actor: Actor, request: RelevantRequest) -> Relevant:
        """The turn's relevant memories: the search, the filters and the scores of
        RetrieveContext, then the one block (no fixed section, no procedure, no episode)."""
        now = self._clock.now()
        view = View(now)
        search = request.search()
        settings, found = await asyncio.gather(
            self._repository.account_settings(actor.account_id),
            self._searcher.search(actor, search, view))
        if not settings.memory_enabled:
            raise FailedPrecondition("memory is disabled for this account",
                                     reason="MEMORY_DISABLED")
        offered = [self._search_item(s, found, view, False) for s in found.kept
                   if s.candidate.entry.id not in request.excluded][:request.limit]
        compiled = compiler.compile_relevant(
            [Item(render.memory(i.entry, i.trust.composite), i, _from_a_tool(i)) for i in offered],
            request.token_budget)
        memories = [replace(i.subject, tokens=line_tokens(i.line))
                    for i in compiled.sections[compiler.RELEVANT]]
        usage = compiled.usage[compiler.RELEVANT]
        receipt_id = uuid.uuid4() if memories else None
        if receipt_id is not None:
            await self._store.save_receipt(
                actor, _receipt(receipt_id, search, [(compiler.RELEVANT, i) for i in memories],
                                [usage], request.token_budget, compiled.tokens_used, now),
                settings.quotas.receipts_per_day)
        return Relevant(receipt_id, request.token_budget, memories, found.hidden_superseded,
                        usage, compiled.tokens_used, compiled.reserved_tokens, compiled.text)

    # -- receipts, feedback, outcomes --------------------------------------------------

    async def receipt(self, actor: Actor, receipt_id: UUID) -> Receipt:
        found = await self._store.receipt(actor, receipt_id)
        if found is None:
            raise NotFound(f"receipt {receipt_id} not found", reason="RECEIPT_NOT_FOUND")
        return found

    async def record_feedback(self, actor: Actor, receipt_id: UUID, request_id: str,
                              helpful: bool, memory_ids: Sequence[UUID]
                              ) -> tuple[list[UUID], bool]:
        """Credit (helpful or not) the receipt's memories, or the given subset of them.
        Returns (memories credited, whether this request id was already recorded)."""
        receipt = await self.receipt(actor, receipt_id)
        credited = _credited(receipt)
        for index, memory_id in enumerate(memory_ids):
            if memory_id not in credited:
                raise InvalidArgument(f"memory_ids[{index}]",
                                      "was not delivered by this receipt")
        chosen = list(dict.fromkeys(memory_ids)) or credited
        counters = {"helpful": 1} if helpful else {"unhelpful": 1}
        return await self._credit(actor, receipt_id, request_id, "feedback",
                                  "helpful" if helpful else "unhelpful", chosen, counters)

    async def record_outcome(self, actor: Actor, receipt_id: UUID, request_id: str,
                             outcome: str) -> tuple[list[UUID], bool]:
        """A run's outcome credits every memory its receipt delivered: success counts for
        them, failure against; cancelled records the outcome and credits nothing."""
        receipt = await self.receipt(actor, receipt_id)
        counters = {"succeeded": {"successes": 1}, "failed": {"failures": 1}}.get(outcome, {})
        chosen = _credited(receipt) if counters else []
        return await self._credit(actor, receipt_id, request_id, "outcome", outcome, chosen,
                                  counters)

    async def _credit(self, actor: Actor, receipt_id: UUID, request_id: str, kind: str,
                      value: str, memory_ids: list[UUID], counters: dict[str, int]
                      ) -> tuple[list[UUID], bool]:
        fingerprint = _request_hash(kind=kind, value=value, memory_ids=sorted(map(str, memory_ids)))
        prior = await self._store.credit(actor, receipt_id, request_id, fingerprint, kind, value,
                                         memory_ids, counters, self._clock.now())
        if prior is None:
            return memory_ids, False
        if prior[0] != fingerprint:
            raise AlreadyExists("this request_id was used for a different request on this"
                                " receipt", reason="REQUEST_ID_REUSED",
                                metadata={"request_id": request_id})
        return prior[1], True

    # -- episodes --------------------------------------------------------------------

    async def record_episode(self, actor: Actor, thread_id: str, run_id: str, outcome: str,
                             task: str, summary: str, finished_at: datetime) -> EpisodeRow:
        settings = await self._repository.account_settings(actor.account_id)
        if not settings.memory_enabled:
            raise FailedPrecondition("memory is disabled for this account",
                                     reason="MEMORY_DISABLED")
        episode = EpisodeRow(uuid.uuid4(), thread_id, run_id, outcome, task, summary,
                             finished_at)
        return await self._store.save_episode(actor, episode,
                                              episode_rules.sentences(task, summary),
                                              self._clock.now())


def _receipt(receipt_id: UUID, request: RetrieveRequest,
             delivered: Sequence[tuple[str, MemoryItem]], usage: Sequence[SectionUsage],
             token_budget: int, tokens_used: int, now: datetime) -> Receipt:
    """``delivered``: (section, memory) in the order they were delivered."""
    items = [ReceiptItem(i.entry.id, i.entry.version, section, position, i.tokens)
             for position, (section, i) in enumerate(delivered)]
    sections = {u.name: {"included": u.included, "dropped": u.dropped, "tokens": u.tokens}
                for u in usage}
    return Receipt(receipt_id, request.run_id, request.thread_id, request.query,
                   str(request.mode), token_budget, tokens_used, sections, now, items)


def _from_a_tool(item: MemoryItem) -> bool:
    """Rendered in its section's inert tool-data block (seed 004: data, not instructions)."""
    return item.entry.source.kind == SourceKind.TOOL_RESULT


def _acting_for(actor: Actor, user_id: str | None) -> Actor:
    """The request's user narrows to that person; naming another user than the
    caller's own needs a credential that may act for users (seed 002: "Requires the
    act for users permission")."""
    if user_id is None or user_id == actor.user_id:
        return actor
    if not actor.may_name_users:
        raise PermissionDenied("user_id: naming a user other than the caller's own needs a key "
                               "with act_for_users", reason="ACT_FOR_USERS_REQUIRED",
                               metadata={"field": "user_id"})
    return replace(actor, user_id=user_id)


def _run_summary(episode: EpisodeRow | None, thread_summary: str | None
                 ) -> tuple[str, str] | None:
    if episode is not None:
        return episode.summary, "episode"
    if thread_summary:
        return thread_summary, "thread"
    return None


def _credited(receipt: Receipt) -> list[UUID]:
    return [i.memory_id for i in receipt.items if i.section in CREDITED]


async def _nothing() -> list:
    return []


def _diagnostics(request: RetrieveRequest, found: SearchOutcome) -> Diagnostics:
    overrides = request.overrides
    return Diagnostics(
        route=found.route, legs=found.legs, fused=found.fused, filtered=found.filtered,
        threshold=found.threshold, adaptive=found.adaptive, rrf_k=overrides.rrf_k,
        leg_weights=overrides.leg_weights, factor_weights=overrides.factor_weights,
        utility_weight=overrides.utility_weight, value_aware=overrides.value_aware,
        scoring_version=overrides.scoring_version, reranker=found.reranked.status,
        query_parsing=found.query_parsing, timings=found.timings)
