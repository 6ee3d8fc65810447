"""Extracted facts into memory: saved at once or suggested, deduplicated, audited.

Where a fact goes (the thread decides; never the account scope):

- a person's own thread: facts about the person (``user_profile``,
  ``preference``) to the ``user`` scope (they follow the person across
  agents), everything else to ``private`` (that person with this agent);
- a shared thread: ``agent`` scope; personal facts and facts holding
  credentials or personal data are dropped (nobody to keep them for).

Against what the thread already sees (any scope): the same content (case and
spacing aside) is a duplicate, dropped; the same key with other content is a
contradiction, which always becomes a *supersede suggestion*, whatever the
extraction mode (a bad automatic write never silently replaces a memory).
Otherwise, per the agent's ``extraction_mode``: ``immediate`` saves the memory
(source ``extraction`` or ``tool_result``), ``suggestions`` queues it. A fact
already pending, or decided before (rejected, or accepted, perhaps edited), is
not suggested again. Content passes
the write-time safety screen like every write.

Accepting makes the memory (the accepting caller is its author in the memory
audit trail); a supersede then marks the contradicted memory superseded by
it. Every suggestion, accept and reject is a learning audit record.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import replace
from uuid import UUID

from libs.errors import DomainError, FailedPrecondition, NotFound
from services.agent_memory import safety
from services.agent_memory.learning.model import (
    Fact,
    FinishedRun,
    LearningAction,
    Report,
    SkillState,
    Suggestion,
    SuggestionKind,
    SuggestionStatus,
)
from services.agent_memory.learning.store import LearningStore
from services.agent_memory.memories import permissions
from services.agent_memory.memories.model import Actor, Author, Entry, NewMemory, Role, normal
from services.agent_memory.memories.rules import ExtractionMode, Kind, Scope

logger = logging.getLogger(__name__)

PERSONAL_KINDS = frozenset({Kind.USER_PROFILE, Kind.PREFERENCE})
EXTRACTED_IMPORTANCE = 0.5
LEARNING = Author(agent_id="learning")  # the author of what learning writes by itself


def fact_hash(content: str) -> str:
    return hashlib.sha256(normal(content).encode()).hexdigest()


def target_scope(fact: Fact, owner: str | None) -> Scope | None:
    """Where an extracted fact lives; None when it has nowhere safe to go."""
    screening = safety.screen(fact.content)
    if screening.rejected:
        return None
    if owner:
        return Scope.USER if fact.kind in PERSONAL_KINDS else Scope.PRIVATE
    if fact.kind in PERSONAL_KINDS or screening.sensitive:
        return None
    return Scope.AGENT


def _new_memory(key: str, content: str, kind: Kind, scope: Scope, confidence: float,
                source) -> NewMemory:
    return NewMemory(scope=scope, kind=kind, key=key, content=content,
                     importance=EXTRACTED_IMPORTANCE, confidence=confidence, tags={},
                     source=source)


class Suggestions:
    def __init__(self, store: LearningStore, memory, clock) -> None:
        self._store = store
        self._memory = memory  # services.agent_memory.memories.service.AgentMemory
        self._clock = clock

    # -- after a run -----------------------------------------------------------------

    async def take(self, run: FinishedRun, facts: list[Fact], mode: ExtractionMode,
                   report: Report) -> None:
        actor = replace(run.actor, role=Role.SERVICE, key_id="")
        quota = (await self._memory.account_settings(actor)).quotas.pending_suggestions
        related = await self._memory.related(
            actor, [f.key for f in facts], [f.content for f in facts])
        for fact in facts:
            scope = target_scope(fact, run.owner_user_id)
            if scope is None:
                report.dropped += 1
                continue
            same = [e for e in related if normal(e.content) == normal(fact.content)]
            if same:
                report.duplicates += 1
                continue
            contradicted = next((e for e in related if e.key == fact.key), None)
            try:
                if contradicted is not None:
                    report.supersede_suggested += await self._suggest(
                        run, fact, scope, SuggestionKind.SUPERSEDE, contradicted, quota)
                elif mode == ExtractionMode.IMMEDIATE:
                    report.saved += await self._save(run, actor, fact, scope)
                else:
                    report.suggested += await self._suggest(run, fact, scope,
                                                            SuggestionKind.MEMORY, None, quota)
            except DomainError as exc:  # unsafe, capacity, quota, key taken: skip the fact
                logger.info("extracted fact from run %s not kept: %s", run.run_id, exc.message)
                report.dropped += 1

    async def _save(self, run: FinishedRun, actor: Actor, fact: Fact, scope: Scope) -> bool:
        # The request id makes a retried job answer with the memory it already made.
        request = f"learn:{run.thread_id}:{run.run_id}:{fact_hash(fact.content)[:24]}"
        entry = await self._memory.add(
            actor, _new_memory(fact.key, fact.content, fact.kind, scope, fact.confidence,
                               fact.source), request[:128])
        async with self._store.transaction() as c:
            await self._store.audit(
                c, account_id=run.account_id, environment=run.environment, scope=scope,
                agent_id=run.agent_id, owner_user_id=entry.owner_user_id, subject_id=entry.id,
                action=LearningAction.EXTRACT, actor=LEARNING, now=self._clock.now(),
                after={"memory_id": str(entry.id), "run_id": run.run_id,
                       "thread_id": run.thread_id})
        return True

    async def _suggest(self, run: FinishedRun, fact: Fact, scope: Scope, kind: SuggestionKind,
                       contradicted: Entry | None, quota: int) -> bool:
        owner = run.owner_user_id if scope in (Scope.USER, Scope.PRIVATE) else None
        digest = fact_hash(fact.content)
        if await self._store.decided_before(run.actor, scope, owner or "", digest):
            return False  # someone already accepted (maybe edited) or rejected this fact
        now = self._clock.now()
        suggestion = Suggestion(
            id=uuid.uuid4(), account_id=run.account_id, environment=run.environment,
            scope=scope, agent_id=run.agent_id, owner_user_id=owner, kind=kind,
            status=SuggestionStatus.PENDING, created_at=now, key=fact.key, content=fact.content,
            memory_kind=fact.kind, confidence=fact.confidence, source=fact.source,
            supersedes_memory_id=contradicted.id if contradicted else None)
        async with self._store.transaction() as c:
            await self._store.check_pending_quota(c, run.account_id, quota)
            if not await self._store.add_suggestion(c, suggestion, digest):
                return False
            await self._store.audit(
                c, account_id=run.account_id, environment=run.environment, scope=scope,
                agent_id=run.agent_id, owner_user_id=owner, subject_id=suggestion.id,
                action=LearningAction.SUGGEST, actor=LEARNING, now=now,
                after={"kind": str(kind), "key": fact.key, "content": fact.content,
                       "supersedes": str(contradicted.id) if contradicted else None})
        return True

    async def propose_skill(self, c, procedure, now) -> None:
        """A procedure that worked three times after being recalled, proposed as a skill."""
        suggestion = Suggestion(
            id=uuid.uuid4(), account_id=procedure.account_id,
            environment=procedure.environment, scope=procedure.scope,
            agent_id=procedure.agent_id, owner_user_id=procedure.owner_user_id,
            kind=SuggestionKind.SKILL, status=SuggestionStatus.PENDING, created_at=now,
            content=procedure.task, procedure_id=procedure.id)
        if await self._store.add_suggestion(c, suggestion, ""):
            await self._store.set_skill_state(c, procedure, SkillState.PROPOSED)
            await self._store.audit(
                c, account_id=procedure.account_id, environment=procedure.environment,
                scope=procedure.scope, agent_id=procedure.agent_id,
                owner_user_id=procedure.owner_user_id, subject_id=suggestion.id,
                action=LearningAction.SUGGEST, actor=LEARNING, now=now,
                after={"kind": "skill", "procedure_id": str(procedure.id),
                       "successes": procedure.successes})

    # -- the Learning tab ---------------------------------------------------------------

    async def _pending(self, actor: Actor, suggestion_id: UUID) -> Suggestion:
        found = await self._store.suggestion(actor, suggestion_id)
        if found is None:
            raise NotFound(f"suggestion {suggestion_id} not found", reason="SUGGESTION_NOT_FOUND")
        if found.status != SuggestionStatus.PENDING:
            raise FailedPrecondition(f"suggestion {suggestion_id} is already {found.status}",
                                     reason="SUGGESTION_DECIDED",
                                     metadata={"status": str(found.status)})
        return found

    async def accept(self, actor: Actor, suggestion_id: UUID,
                     content: str | None) -> tuple[Suggestion, Entry | None, object | None]:
        found = await self._pending(actor, suggestion_id)
        if found.kind == SuggestionKind.SKILL:
            return await self._accept_skill(actor, found)
        permissions.check_write(actor, found.scope, found.fact_kind)
        content = content if content is not None else found.content
        old = None
        if found.kind == SuggestionKind.SUPERSEDE:
            old = await self._memory.get_memory(actor, found.supersedes_memory_id, None)
            old = old[0]
            if not old.live(self._clock.now()):
                raise FailedPrecondition(f"memory {old.id} is no longer live",
                                         reason="MEMORY_SUPERSEDED" if old.superseded_by
                                         else "MEMORY_DELETED")
        key = found.key
        if old is not None and old.scope == found.scope:
            key = f"{found.key}-{fact_hash(content)[:6]}"  # the old memory holds its key
        entry = await self._memory.add(
            actor, _new_memory(key, content, found.fact_kind, found.scope, found.confidence,
                               found.source), f"suggestion:{found.id}")
        if old is not None:
            await self._memory.supersede(actor, old.id, entry.id, 0)
        decided = await self._decide(actor, found, SuggestionStatus.ACCEPTED, entry.id,
                                     {"memory_id": str(entry.id), "content": content})
        return decided, entry, None

    async def _accept_skill(self, actor: Actor, found: Suggestion):
        now = self._clock.now()
        async with self._store.transaction() as c:
            procedure = await self._store.procedure(actor, found.skill_procedure, c)
            if procedure is None or procedure.deleted_at is not None:
                raise FailedPrecondition("the procedure was deleted",
                                         reason="PROCEDURE_DELETED")
            if not await self._store.decide(c, found, SuggestionStatus.ACCEPTED, None,
                                            Author.of(actor), now):
                raise FailedPrecondition("the suggestion was decided meanwhile",
                                         reason="SUGGESTION_DECIDED")
            procedure = await self._store.set_skill_state(c, procedure, SkillState.ACCEPTED)
            await self._audit_decision(c, actor, found, LearningAction.ACCEPT, now,
                                       {"procedure_id": str(procedure.id)})
        return await self._store.suggestion(actor, found.id), None, procedure

    async def reject(self, actor: Actor, suggestion_id: UUID) -> Suggestion:
        found = await self._pending(actor, suggestion_id)
        if found.kind != SuggestionKind.SKILL:
            permissions.check_write(actor, found.scope, found.fact_kind)
        return await self._decide(actor, found, SuggestionStatus.REJECTED, None, None)

    async def _decide(self, actor: Actor, found: Suggestion, status: SuggestionStatus,
                      memory_id: UUID | None, after: dict | None) -> Suggestion:
        now = self._clock.now()
        action = (LearningAction.ACCEPT if status == SuggestionStatus.ACCEPTED
                  else LearningAction.REJECT)
        async with self._store.transaction() as c:
            if not await self._store.decide(c, found, status, memory_id, Author.of(actor), now):
                raise FailedPrecondition("the suggestion was decided meanwhile",
                                         reason="SUGGESTION_DECIDED")
            if found.kind == SuggestionKind.SKILL:
                procedure = await self._store.procedure(actor, found.skill_procedure, c)
                if procedure is not None:
                    await self._store.set_skill_state(c, procedure, SkillState.REJECTED)
            await self._audit_decision(c, actor, found, action, now, after)
        decided = await self._store.suggestion(actor, found.id)
        if decided is None:  # purged since
            raise NotFound(f"suggestion {found.id} not found", reason="SUGGESTION_NOT_FOUND")
        return decided

    async def _audit_decision(self, c, actor: Actor, found: Suggestion, action: LearningAction,
                              now, after: dict | None) -> None:
        await self._store.audit(
            c, account_id=found.account_id, environment=found.environment, scope=found.scope,
            agent_id=found.agent_id, owner_user_id=found.owner_user_id, subject_id=found.id,
            action=action, actor=Author.of(actor), now=now,
            before={"status": "pending", "kind": str(found.kind), "content": found.content},
            after=after)
