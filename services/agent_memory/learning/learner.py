"""Learning from runs: follow the journal's run boundaries, learn from each finished run.

The consumer (``FeedFollower`` over the journal's run boundaries only, cursor
in PostgreSQL) turns each finish boundary into a ``learning_runs`` row; the
cursor moves only after the rows are written, and a redelivered boundary
finds its row already there. Workers lease due rows (``FOR UPDATE SKIP
LOCKED``, so replicas share them) and learn from each run outside any
transaction; a failure (journal or model down) leaves the row to be retried
with a growing delay. Learning from a run is idempotent: suggestions, memories
(request ids), procedures (one per turn) and scores (one per use) are each
written once.

For one run, in order:

1. the outcome scores the procedures the run recalled (whatever the settings);
2. nothing more when the account turned memory off;
3. the run's credentials: declared but no longer held -> the run is skipped;
4. the run's messages are read from the journal (with a few before it, for
   the task that led into it), the run's credentials masked out;
5. extraction (unless the agent's mode is off): facts -> ``suggestions``;
6. procedures, when the run succeeded and the agent records procedures;
7. the episode, to ``episodes.publish_episode``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from datetime import UTC, timedelta

from agentmemory.common.v1 import message_pb2, run_pb2

from libs.clients.journal import JournalClient
from libs.errors import DomainError
from libs.feed import FeedFollower
from libs.identity import Principal
from libs.pacing import IdleBackoff
from services.agent_memory import safety
from services.agent_memory.learning import capture
from services.agent_memory.learning.credentials import CredentialHolder
from services.agent_memory.learning.episodes import (
    EpisodeSink,
    build_episode,
    publish_episode,
)
from services.agent_memory.learning.extraction import Extractor
from services.agent_memory.learning.masking import Masker
from services.agent_memory.learning.model import FinishedRun, Outcome, Report
from services.agent_memory.learning.procedures import Procedures
from services.agent_memory.learning.store import LearningStore
from services.agent_memory.learning.suggestions import Suggestions
from services.agent_memory.memories.rules import ExtractionMode

logger = logging.getLogger(__name__)

LOOKBACK = 20
LEASE = timedelta(minutes=5)
POLL_SECONDS = 5.0
IDLE_POLL_SECONDS = 30.0
_OUTCOMES = {run_pb2.RUN_OUTCOME_SUCCEEDED: Outcome.SUCCEEDED,
             run_pb2.RUN_OUTCOME_FAILED: Outcome.FAILED,
             run_pb2.RUN_OUTCOME_CANCELLED: Outcome.CANCELLED,
             run_pb2.RUN_OUTCOME_TIMED_OUT: Outcome.TIMED_OUT}


def finished_run(event) -> FinishedRun | None:
    """The run a change-feed event finishes, if it is a finish boundary."""
    boundary = event.run_boundary
    if not event.HasField("run_boundary") or \
            boundary.kind != run_pb2.RUN_BOUNDARY_KIND_FINISHED:
        return None
    run = boundary.run
    return FinishedRun(
        account_id=event.principal.account_id, environment=event.principal.environment,
        agent_id=event.principal.agent_id, thread_id=event.thread_id, run_id=run.run_id,
        owner_user_id=event.principal.user_id or None, outcome=_OUTCOMES[run.outcome],
        after_offset=run.after_offset, last_offset=run.last_offset,
        finished_at=run.finish_time.ToDatetime(tzinfo=UTC))


def _run_key(run: FinishedRun):
    return (run.account_id, run.environment, run.agent_id, run.thread_id, run.run_id)


class Learner:
    def __init__(self, *, store: LearningStore, journal: JournalClient, memory,
                 extractor: Extractor, suggestions: Suggestions, procedures: Procedures,
                 credentials: CredentialHolder, clock, episodes: EpisodeSink | None = None,
                 retry_seconds: float = 30.0) -> None:
        self._store = store
        self._journal = journal
        self._memory = memory
        self._extractor = extractor
        self._suggestions = suggestions
        self._procedures = procedures
        self._credentials = credentials
        self._clock = clock
        self._episodes = episodes
        self._retry_seconds = retry_seconds
        self._poll = IdleBackoff(POLL_SECONDS, IDLE_POLL_SECONDS)
        self._stop = asyncio.Event()

    # -- the consumer ------------------------------------------------------------------

    async def load(self, shard: int) -> int:
        return await self._store.load_cursor(shard)

    async def save(self, shard: int, position: int) -> None:
        await self._store.save_cursor(shard, position)

    async def handle(self, events: Sequence) -> None:
        """A batch of run boundaries from the feed: queue the finished runs."""
        runs = [r for r in map(finished_run, events) if r is not None]
        if runs:
            await self._store.add_finished(runs, self._clock.now())
            self._poll.wake()

    def follower(self) -> FeedFollower:
        from agentmemory.journal.v1 import journal_service_pb2 as journal_pb

        return FeedFollower(self._journal, self, self.handle, name="agent memory learning",
                            content=journal_pb.FEED_CONTENT_RUNS)

    # -- the workers -------------------------------------------------------------------

    async def drain(self) -> int:
        """Learn from every due run now; returns how many."""
        done = 0
        while (run := await self._store.claim_run(self._clock.now(), LEASE)) is not None:
            await self._attempt(run)
            done += 1
        return done

    async def _attempt(self, run: FinishedRun) -> None:
        try:
            report = await self.learn(run)
        except (DomainError, OSError, ValueError) as exc:
            delay = self._retry_seconds * (1 + random.random())
            logger.warning("learning from run %s deferred: %s", run.run_id, exc)
            await self._store.retry_run(run, str(exc), self._clock.now() + timedelta(
                seconds=delay))
            return
        await self._store.close_run(run, report, self._clock.now())
        self._credentials.forget(_run_key(run))

    async def run_forever(self) -> None:
        """Learn from runs as the feed brings them; look by itself too (retries come due,
        procedures left unindexed) POLL_SECONDS after a pass that did something, then less
        and less often while nothing happens, at least every IDLE_POLL_SECONDS."""
        while not self._stop.is_set():
            try:
                busy = await self.drain() + await self._procedures.index_pending() > 0
            except Exception:
                logger.exception("learning pass failed; retrying")
                busy = True
            await self._poll.pause(busy=busy)

    def stop(self) -> None:
        self._stop.set()
        self._poll.wake()

    # -- one run -------------------------------------------------------------------------

    async def learn(self, run: FinishedRun) -> Report:
        report = Report()
        report.scored = await self._procedures.score_outcome(run)
        settings, enabled = await self._memory.agent_settings(run.actor)
        if not enabled:
            report.skipped = "memory_disabled"
            return report
        credentials = self._credentials.get(_run_key(run))
        if run.credentials_declared and credentials is None:
            report.skipped = "credentials_unavailable"
            return report
        masker = Masker(credentials or ())
        messages = await self._messages(run, masker)
        if settings.extraction_mode != ExtractionMode.OFF:
            await self._extract(run, messages, settings.extraction_mode, report)
        if run.outcome == Outcome.SUCCEEDED and settings.procedures_enabled:
            turns, report.turns_not_captured = capture.capture(
                messages, run.after_offset, masker, lambda t: bool(safety.screen(t).rejected))
            report.procedures = await self._procedures.record(run, turns)
        episode = build_episode(run, messages, masker)
        if episode is not None:
            report.episode = await publish_episode(episode, self._episodes)
        return report

    async def _messages(self, run: FinishedRun, masker: Masker) -> list[message_pb2.Message]:
        principal = Principal(run.account_id, run.agent_id, run.owner_user_id, run.environment)
        messages = await self._journal.between(principal, run.thread_id,
                                               max(0, run.after_offset - LOOKBACK),
                                               run.last_offset)
        if masker.has_credentials:
            for message in messages:
                message.content = masker.credentials(message.content)
                for call in message.tool_calls:
                    call.arguments = masker.credentials(call.arguments)
                    call.result = masker.credentials(call.result)
        return messages

    async def _extract(self, run: FinishedRun, messages, mode: ExtractionMode,
                       report: Report) -> None:
        inside = [m for m in messages if m.offset > run.after_offset]
        if not inside:
            return
        keys = await self._memory.recent_keys(run.actor)
        facts = await self._extractor.extract(run, inside, keys)
        report.facts = len(facts)
        await self._suggestions.take(run, facts, mode, report)
