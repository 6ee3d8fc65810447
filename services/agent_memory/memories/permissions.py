"""Who may change what. Reads need no check here: every read is filtered by
the visibility predicate in SQL (``sql.visible``), so a caller only ever
finds what its scope allows.

| change                                             | agent | admin | operator | service |
|----------------------------------------------------|-------|-------|----------|---------|
| private, user, agent scope memories (not rules)    | yes   | yes   | yes      | yes     |
| account scope: memories, tenant rules and floors,  |       |       |          |         |
|   account blocks                                   | no    | yes   | yes      | yes     |
| platform rules                                     | no    | no    | yes      | no      |
| imports, account and agent settings                | no    | yes   | yes      | yes     |

User and private memories also need the caller's user: only that person's
callers can see (and so change) them.
"""

from __future__ import annotations

from libs.errors import PermissionDenied
from services.agent_memory.memories.model import Actor, Role
from services.agent_memory.memories.rules import PERSONAL_SCOPES, RULES, Kind, Scope

_ADMINS = frozenset({Role.ADMIN, Role.OPERATOR, Role.SERVICE})


def _refusal(role: Role, scope: Scope, kind: Kind) -> PermissionDenied | None:
    if scope == Scope.PLATFORM or kind == Kind.PLATFORM_RULE:
        if role != Role.OPERATOR:
            return PermissionDenied("platform rules are written by the platform operator only",
                                    reason="KIND_NOT_WRITABLE", metadata={"kind": str(kind)})
        return None
    if kind in (Kind.TENANT_RULE, Kind.TENANT_FLOOR) and role not in _ADMINS:
        return PermissionDenied(f"{kind} memories are written by account admins only",
                                reason="KIND_NOT_WRITABLE", metadata={"kind": str(kind)})
    if scope == Scope.ACCOUNT and role not in _ADMINS:
        return PermissionDenied("account-scope memories are written by account admins only",
                                reason="SCOPE_NOT_WRITABLE", metadata={"scope": str(scope)})
    return None


def check_write(actor: Actor, scope: Scope, kind: Kind) -> None:
    if (refused := _refusal(actor.role, scope, kind)) is not None:
        raise refused


def may_write(role: Role, scope: Scope, kind: Kind, *, with_user: bool) -> bool:
    """Whether a caller of ``role`` (with a user or without) may write a ``kind`` memory
    of ``scope``: what a form offers (the library page's)."""
    if scope in PERSONAL_SCOPES and not with_user:
        return False
    return scope in RULES[kind].scopes and _refusal(role, scope, kind) is None


def require_admin(actor: Actor, what: str) -> None:
    if actor.role not in _ADMINS:
        raise PermissionDenied(f"{what} needs an admin key", reason="ADMIN_REQUIRED")
