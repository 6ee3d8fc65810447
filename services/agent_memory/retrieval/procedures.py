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

from services.agent_memory.model import Actor

RECALLED = 3  # seed 004: "up to three procedures ride into the run"


@dataclass(frozen=True)
class Procedure:
    id: str
    task: str
    # The recorded calls, rendered as one line (escaped again by the compiler).
    steps: str


class ProcedureSource(Protocol):
    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED,
                       run: tuple[str, str] | None = None) -> list[Procedure]:
        """``run``: (thread, run) the procedures ride into, so that run's outcome
        counts for them."""


class NoProcedures:
    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED,
                       run: tuple[str, str] | None = None) -> list[Procedure]:
        return []
