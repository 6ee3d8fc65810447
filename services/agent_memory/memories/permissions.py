"""Who may change what: ``libs.memory_writers`` holds the rule (the library page's forms
offer by it too), raised here as PERMISSION_DENIED. Reads need no check here: every read
is filtered by the visibility predicate in SQL (``sql.visible``), so a caller only ever
finds what its scope allows."""

from __future__ import annotations

from libs import memory_writers
from libs.errors import PermissionDenied
from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.rules import Kind, Scope


def check_write(actor: Actor, scope: Scope, kind: Kind) -> None:
    refused = memory_writers.refusal(actor.role, scope, kind)
    if refused is not None:
        raise PermissionDenied(refused.message, reason=refused.reason, metadata=refused.metadata)


def require_admin(actor: Actor, what: str) -> None:
    if actor.role not in memory_writers.ADMIN_ROLES:
        raise PermissionDenied(f"{what} needs an admin key", reason="ADMIN_REQUIRED")
