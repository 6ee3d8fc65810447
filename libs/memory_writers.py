"""Who may write which memories: the rule agent memory enforces on every write
(``services.agent_memory.memories.permissions``) and the library page's forms offer.

In the names both services share (``account``, ``tenant_rule``, ``admin``: agent
memory's scope, kind and role enums are these strings), so that neither service
imports the other and the forms cannot offer what a write would refuse.

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

from dataclasses import dataclass, field

# Roles that administer an account (``service``: another platform service, or operator
# tooling with the internal token, may do what an admin may, not platform rules).
ADMIN_ROLES = frozenset({"admin", "operator", "service"})
TENANT_SCOPES = frozenset({"account", "agent", "user", "private"})
# Scopes that belong to a person: they need an authenticated user.
PERSONAL_SCOPES = frozenset({"user", "private"})
# Kinds that live in one scope only; every other kind lives in the tenant scopes.
_ONE_SCOPE = {"platform_rule": frozenset({"platform"}), "tenant_rule": frozenset({"account"}),
              "tenant_floor": frozenset({"account"})}


def scopes_of(kind: str) -> frozenset[str]:
    """The scopes a memory of ``kind`` may live in."""
    return _ONE_SCOPE.get(kind, TENANT_SCOPES)


@dataclass(frozen=True)
class Refusal:
    """Why a role may not write a kind of memory in a scope (a PERMISSION_DENIED)."""

    message: str
    reason: str
    metadata: dict[str, str] = field(default_factory=dict)


def refusal(role: str, scope: str, kind: str) -> Refusal | None:
    """None when a caller of ``role`` may write a ``kind`` memory of ``scope`` (the
    scope's own needs, a user or a kind's one scope, are checked apart)."""
    if scope == "platform" or kind == "platform_rule":
        if role != "operator":
            return Refusal("platform rules are written by the platform operator only",
                           "KIND_NOT_WRITABLE", {"kind": str(kind)})
        return None
    if kind in ("tenant_rule", "tenant_floor") and role not in ADMIN_ROLES:
        return Refusal(f"{kind} memories are written by account admins only",
                       "KIND_NOT_WRITABLE", {"kind": str(kind)})
    if scope == "account" and role not in ADMIN_ROLES:
        return Refusal("account-scope memories are written by account admins only",
                       "SCOPE_NOT_WRITABLE", {"scope": str(scope)})
    return None


def may_write(role: str, scope: str, kind: str, *, with_user: bool) -> bool:
    """Whether a caller of ``role`` (with a user or without) may write a ``kind`` memory
    of ``scope``: what a form offers."""
    if scope in PERSONAL_SCOPES and not with_user:
        return False
    return scope in scopes_of(kind) and refusal(role, scope, kind) is None
