"""Where the compiler's procedures section comes from (seed 004's learned procedures).

Procedures are recorded and scored by the learning side (issue 12), built
separately; the compiler only needs the up-to-three procedures relevant to a
task. :class:`ProcedureSource` is that seam: agent memory's wiring passes the
real source to :class:`~services.agent_memory.retrieval.service.Retrieval`;
until it exists, :class:`NoProcedures` offers none.
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
    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED
                       ) -> list[Procedure]: ...


class NoProcedures:
    async def relevant(self, actor: Actor, query: str, limit: int = RECALLED
                       ) -> list[Procedure]:
        return []
