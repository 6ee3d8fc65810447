"""A finished run's episode: its task and a short summary, handed to one function.

``build_episode`` makes it without a model: the task is the first user message
of the run (or the one that led into it), the summary the run's outcome, the
tools it called, and the first sentences of its user and assistant messages,
within ``SUMMARY_CHARS``. Everything in it is masked like a procedure.

``publish_episode`` is the one hand-off point: it passes the episode to the
sink it was given (the retrieval side's ``RecordEpisode`` is connected there)
and stores nothing itself; with no sink it only logs that it had one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from agentmemory.common.v1 import message_pb2

from services.agent_memory.learning.masking import Masker
from services.agent_memory.learning.model import FinishedRun

logger = logging.getLogger(__name__)

SUMMARY_CHARS = 600
TASK_CHARS = 500
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Episode:
    account_id: str
    environment: str
    agent_id: str
    owner_user_id: str | None
    thread_id: str
    run_id: str
    outcome: str
    first_offset: int
    last_offset: int
    task: str
    summary: str
    generator: str = "offline-extractive-v1"


EpisodeSink = Callable[[Episode], Awaitable[None]]


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(" ".join(text.split()), maxsplit=1)[0]


def build_episode(run: FinishedRun, messages: Sequence[message_pb2.Message],
                  masker: Masker) -> Episode | None:
    inside = [m for m in messages if m.offset > run.after_offset]
    if not inside:
        return None
    asked = [m for m in messages if m.role == message_pb2.ROLE_USER and m.content.strip()]
    in_run = [m for m in asked if m.offset > run.after_offset]
    task = in_run[0] if in_run else asked[-1] if asked else None
    tools = list(dict.fromkeys(c.name for m in inside for c in m.tool_calls))
    parts = [f"Outcome: {run.outcome}."]
    if tools:
        parts.append(f"Tools: {', '.join(tools)}.")
    for m in inside:
        if m.role in (message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT) and m.content.strip():
            who = "User" if m.role == message_pb2.ROLE_USER else "Agent"
            parts.append(f"{who}: {_first_sentence(m.content)}")
    summary = masker.text(" ".join(parts))[:SUMMARY_CHARS]
    return Episode(run.account_id, run.environment, run.agent_id, run.owner_user_id,
                   run.thread_id, run.run_id, str(run.outcome), inside[0].offset,
                   inside[-1].offset, masker.text(task.content)[:TASK_CHARS] if task else "",
                   summary)


async def publish_episode(episode: Episode, sink: EpisodeSink | None) -> bool:
    """Hand the episode over; stores nothing. True when a sink took it."""
    if sink is None:
        logger.debug("episode of run %s built; no episode store is connected", episode.run_id)
        return False
    await sink(episode)
    return True
