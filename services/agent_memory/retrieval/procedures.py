"""Where the compiler's procedures section comes from (seed 004's learned procedures).

Procedures are recorded and scored by the learning side (issue 12), built
separately; the compiler only needs the up-to-three procedures relevant to a
task. :class:`ProcedureSource` is that seam: agent memory's wiring passes the
learning side's procedures (``services.agent_memory.learning.bridge``) to
:class:`~services.agent_memory.retrieval.service.Retrieval`; :class:`NoProcedures`
offers none (tests of retrieval alone).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from services.agent_memory.memories.model import Actor

RECALLED = 3  # seed 004: "up to three procedures ride into the run"


@dataclass(frozen=True)
class Step:
    tool: str
    arguments: str  # JSON text, masked
    status: str


@dataclass(frozen=True)
class Procedure:
    id: str
    task: str
    steps: tuple[Step, ...]
    # The past run it was recorded from: that run is not delivered again as an episode.
    thread_id: str = ""
    run_id: str = ""

    @property
    def steps_text(self) -> str:
        """The recorded calls as one line: ``tool(arguments) -> status; ...``."""
        return "; ".join(f"{s.tool}({s.arguments}) -> {s.status}" for s in self.steps)


class ProcedureSource(Protocol):
    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED,
                       run: tuple[str, str] | None = None) -> list[Procedure]:
        """``run``: (thread, run) the procedures ride into, so that run's outcome
        counts for them."""


class NoProcedures:
    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED,
                       run: tuple[str, str] | None = None) -> list[Procedure]:
        return []
