"""The caller's scope, in every statement that reads transcripts.

Account and agent always; for user-owned threads the caller's user
(``owner_user_id = '' OR = caller``); with ``current_thread``, the thread.
Both legs, the corpus statistics and the fetch of what hits show use these
conditions, so nothing of another tenant is read, ranked or counted.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from libs.identity import Principal

SCOPE = ("account_id = {account:String} AND agent_id = {agent:String}"
         " AND (owner_user_id = '' OR owner_user_id = {user:String})")
THREAD = " AND thread_id = {thread:String}"


def condition(current_thread: bool) -> str:
    return SCOPE + (THREAD if current_thread else "")


def parameters(principal: Principal, thread_id: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"account": principal.account_id, "agent": principal.agent_id,
                              "user": principal.user_id or ""}
    if thread_id is not None:
        params["thread"] = thread_id
    return params


def scope_key(params: dict[str, Any]) -> tuple[str, str, str, str | None]:
    """What identifies a caller's scope in the caches of per-scope figures."""
    return params["account"], params["agent"], params["user"], params.get("thread")


def by_agent(rows: Iterable[tuple]) -> dict[tuple[str, str], list[tuple]]:
    """Rows that start with account and agent (as every table's do), grouped by them."""
    agents: dict[tuple[str, str], list[tuple]] = {}
    for row in rows:
        agents.setdefault((row[0], row[1]), []).append(row)
    return agents
