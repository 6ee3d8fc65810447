"""The operations behind agent memory's LearningService."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from uuid import UUID

from libs.errors import InvalidArgument
from services.agent_memory.learning.credentials import CredentialHolder
from services.agent_memory.learning.model import (
    LearningAudit,
    Procedure,
    Recall,
    Suggestion,
    SuggestionStatus,
)
from services.agent_memory.learning.procedures import Procedures
from services.agent_memory.learning.store import LearningStore
from services.agent_memory.learning.suggestions import Suggestions
from services.agent_memory.memories.model import Actor

MAX_CREDENTIALS = 100
MAX_CREDENTIAL_CHARS = 4096
MAX_TASK_CHARS = 4000


class Learning:
    def __init__(self, store: LearningStore, suggestions: Suggestions, procedures: Procedures,
                 credentials: CredentialHolder, memory, clock) -> None:
        self._store = store
        self._suggestions = suggestions
        self._procedures = procedures
        self._credentials = credentials
        self._memory = memory
        self._clock = clock

    # -- internal ------------------------------------------------------------------------

    async def hold_credentials(self, actor: Actor, thread_id: str, run_id: str,
                               credentials: Sequence[str]) -> None:
        if not credentials:
            raise InvalidArgument("credentials", "at least one credential is required")
        if len(credentials) > MAX_CREDENTIALS:
            raise InvalidArgument("credentials", f"at most {MAX_CREDENTIALS}")
        for index, value in enumerate(credentials):
            if not value or len(value) > MAX_CREDENTIAL_CHARS:
                raise InvalidArgument(f"credentials[{index}]",
                                      f"1-{MAX_CREDENTIAL_CHARS} characters")
        self._credentials.hold((actor.account_id, actor.environment, actor.agent_id, thread_id,
                                run_id), credentials)
        await self._store.declare_credentials(actor, thread_id, run_id, actor.user_id,
                                              self._clock.now())

    async def recall(self, actor: Actor, task: str, limit: int,
                     run: tuple[str, str] | None) -> Recall:
        if not task.strip():
            raise InvalidArgument("task", "required")
        if len(task) > MAX_TASK_CHARS:
            raise InvalidArgument("task", f"at most {MAX_TASK_CHARS} characters")
        if not await self.recallable(actor):  # nothing to compare: no embedding
            return Recall([])
        return await self._procedures.recall(actor, task, limit, run)

    async def recallable(self, actor: Actor) -> bool:
        """Whether :meth:`recall` could find anything for the caller (memory off turns
        procedures off)."""
        return await self._store.any_recallable(actor)

    async def rate(self, actor: Actor, thread_id: str, run_id: str,
                   rating: str) -> list[UUID]:
        return await self._procedures.rate(actor, thread_id, run_id, rating)

    # -- the Learning tab ------------------------------------------------------------------

    async def suggestions(self, actor: Actor, status: SuggestionStatus,
                          before: tuple[datetime, UUID] | None, limit: int) -> list[Suggestion]:
        return await self._store.suggestions(actor, status, before, limit)

    async def accept(self, actor: Actor, suggestion_id: UUID, content: str | None):
        return await self._suggestions.accept(actor, suggestion_id, content)

    async def reject(self, actor: Actor, suggestion_id: UUID) -> Suggestion:
        return await self._suggestions.reject(actor, suggestion_id)

    async def procedures(self, actor: Actor, include_deleted: bool,
                         before: tuple[datetime, UUID] | None, limit: int) -> list[Procedure]:
        found = await self._store.procedures(actor, include_deleted, before, limit)
        return await self._purge_times(actor, found)

    async def delete_procedure(self, actor: Actor, procedure_id: UUID) -> Procedure:
        deleted = await self._procedures.delete(actor, procedure_id)
        return (await self._purge_times(actor, [deleted]))[0]

    async def audit(self, actor: Actor, before_id: int | None,
                    limit: int) -> list[LearningAudit]:
        return await self._store.audit_records(actor, before_id, limit)

    async def _purge_times(self, actor: Actor, found: list[Procedure]) -> list[Procedure]:
        if not any(p.deleted_at for p in found):
            return found
        days = (await self._memory.account_settings(actor)).retention_days
        return [replace(p, purge_after=p.deleted_at + timedelta(days=days)) if p.deleted_at
                else p for p in found]

    async def hygiene(self) -> int:
        """Retention: purge procedure tombstones, decided suggestions, learned-from runs."""
        return await self._procedures.purge() + await self._store.purge_decided(
            self._clock.now())
