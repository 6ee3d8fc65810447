"""How the library page shows values: enum names, times, and what an audit record changed.

Replies reach the templates as proto3 JSON data (``forms.view``); an audit record's
snapshots are JSON objects (agent memory's ``exchange.snapshot``, or the settings).
Everything here turns such values into short text a person reads: no Python ``None``,
no JSON, no enum prefixes. The templates escape the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

_EPOCH = datetime.fromtimestamp(0, UTC)
_ENUM_PREFIXES = ("MEMORY_SCOPE_", "MEMORY_KIND_", "SOURCE_KIND_", "AUDIT_ACTION_",
                  "EXTRACTION_MODE_", "SUGGESTION_KIND_", "SUGGESTION_STATUS_", "KEY_ROLE_",
                  "SKILL_STATE_", "TOOL_CALL_STATUS_", "CATEGORY_", "VISIBILITY_")
# Snapshot fields a change always moves, or that say nothing to a reader.
_NOISE = frozenset({"id", "version", "updated_at", "created_at", "author", "content_hash",
                    "superseded_at"})
_LABELS = {"agent_id": "agent", "user_id": "user", "expires_at": "expires",
           "deleted_at": "deleted", "superseded_by": "superseded by",
           "memory_bound": "memory bound", "extraction_mode": "extracted facts",
           "procedures_enabled": "procedures recorded", "memory_enabled": "memory enabled",
           "retention_days": "retention (days)", "default_token_budget": "default token budget"}
# Fields whose values are the platform's own names (``project_fact``).
_NAMES = frozenset({"kind", "scope", "extraction_mode", "status", "action"})
# The order a reader expects; other fields follow by name.
_ORDER = ("content", "key", "kind", "scope", "agent_id", "user_id", "tags", "importance",
          "confidence", "source")


def option(value: Any) -> str:
    """An enum value's short name, as the forms send it: ``MEMORY_KIND_PROJECT_FACT`` ->
    ``project_fact``."""
    text = str(value)
    prefix = next((p for p in _ENUM_PREFIXES if text.startswith(p)), None)
    return text.removeprefix(prefix).lower() if prefix else text


def short(value: Any) -> str:
    """For display: ``MEMORY_KIND_PROJECT_FACT`` -> ``project fact``."""
    return option(value).replace("_", " ")


def _moment(value: str) -> datetime:
    """An RFC 3339 timestamp (or agent memory's ISO 8601); the epoch for none."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else _EPOCH


def when(value: str | None) -> str:
    """A timestamp as ``2026-11-30 10:33:05 UTC``."""
    if not value:
        return ""
    try:
        return _moment(value).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") + " UTC"
    except ValueError:
        return value


def number(value: float | int) -> str:
    """JSON numbers arrive as floats: ``30.0`` is shown as ``30``."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def tags_text(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items()))


def source_text(source: dict[str, Any]) -> str:
    """``extraction · thread t1 · run r1 · 2 messages``."""
    parts = [short(source.get("kind") or "")]
    for name in ("thread_id", "run_id"):
        if source.get(name):
            parts.append(f"{name.removesuffix('_id')} {source[name]}")
    if messages := len(source.get("message_ids") or ()):
        parts.append(f"{messages} message{'s' * (messages != 1)}")
    return " · ".join(p for p in parts if p)


def text(name: str, value: Any) -> str | None:
    """One snapshot value as text; None for no value."""
    if value is None or value == "" or value == {} or value == []:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return number(value)
    if name == "tags" and isinstance(value, dict):
        return tags_text(value)
    if name == "source" and isinstance(value, dict):
        return source_text(value)
    if isinstance(value, dict):
        shown = ((k, text(k, v)) for k, v in sorted(value.items()))
        return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in shown if v is not None) or None
    if isinstance(value, list):
        return ", ".join(t for t in (text(name, v) for v in value) if t is not None) or None
    value = str(value)
    if name.endswith("_at"):
        return when(value)
    return value.replace("_", " ") if name in _NAMES else value


@dataclass(frozen=True)
class Change:
    label: str
    before: str | None
    after: str | None
    memory_id: str = ""  # set when the new value is a memory (superseded by)


def changes(record: dict[str, Any]) -> list[Change]:
    """The fields an audit record changed, in a reader's order, values as text."""
    before, after = record.get("before") or {}, record.get("after") or {}
    names = [n for n in {*before, *after} if n not in _NOISE]
    names.sort(key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n))
    found = []
    for name in names:
        old, new = text(name, before.get(name)), text(name, after.get(name))
        if old != new:
            link = str(after.get(name)) if name == "superseded_by" and new else ""
            found.append(Change(_LABELS.get(name, name.replace("_", " ")), old, new, link))
    return found


def subject(record: dict[str, Any]) -> str:
    """What an audit record is about: the memory's key, or the settings it changed."""
    snapshot = record.get("after") or record.get("before") or {}
    if record.get("memory_id"):
        return str(snapshot.get("key") or record["memory_id"])
    return short(record.get("action", ""))  # account settings, agent settings


@dataclass
class AgentRow:
    """One line of the overview: an agent's memories, or the account's or the user's."""

    label: str
    agent_id: str  # "" for the account's and the user's memories (every agent sees them)
    total: int = 0
    scopes: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    last_update: str = ""


def agent_rows(counts: list[dict[str, Any]], user_id: str) -> list[AgentRow]:
    """SummarizeMemories' counts (proto3 JSON data) as the overview's rows: the account's
    memories, the user's, then each agent's, by name."""
    rows: dict[tuple[int, str], AgentRow] = {}
    for count in counts:
        agent, scope = count.get("agent_id", ""), option(count["scope"])
        if agent:
            place, label = (2, agent), agent
        elif scope == "user":
            place, label = (1, ""), f"user {user_id}, with every agent"
        else:
            place, label = (0, ""), "the whole account, every agent"
        row = rows.setdefault(place, AgentRow(label, agent))
        memories = int(count.get("memories", 0))
        row.total += memories
        row.scopes[short(scope)] = row.scopes.get(short(scope), 0) + memories
        kind = short(count["kind"])
        row.kinds[kind] = row.kinds.get(kind, 0) + memories
        row.last_update = max(row.last_update, count.get("last_update_time", ""), key=_moment)
    return [rows[place] for place in sorted(rows)]
