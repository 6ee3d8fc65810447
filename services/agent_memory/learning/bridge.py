"""Where learning meets retrieval, both inside agent memory: a finished run's episode is
recorded for the episode leg, and learned procedures fill the compiled context's
procedures section (recalled for the request's run, so its outcome counts for them)."""

from __future__ import annotations

from services.agent_memory.learning.episodes import Episode, EpisodeSink
from services.agent_memory.learning.service import Learning
from services.agent_memory.memories.clock import Clock
from services.agent_memory.memories.model import Actor
from services.agent_memory.retrieval.procedures import RECALLED, Procedure, Step
from services.agent_memory.retrieval.service import Retrieval


def episode_sink(retrieval: Retrieval, clock: Clock) -> EpisodeSink:
    async def record(episode: Episode) -> None:
        actor = Actor(episode.account_id, episode.environment, episode.agent_id,
                      episode.owner_user_id)
        await retrieval.record_episode(actor, episode.thread_id, episode.run_id,
                                       episode.outcome, episode.task, episode.summary,
                                       clock.now())
    return record


class LearnedProcedures:
    """The ProcedureSource of the compiled context: learning's similarity recall."""

    def __init__(self, learning: Learning) -> None:
        self._learning = learning

    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED,
                       run: tuple[str, str] | None = None) -> list[Procedure]:
        found = (await self._learning.recall(actor, query, limit, run)).found
        return [Procedure(str(r.procedure.id), r.procedure.task,
                          tuple(Step(s.tool_name, s.arguments, s.status)
                                for s in r.procedure.steps),
                          r.procedure.thread_id, r.procedure.run_id) for r in found]
