"""What the library page shows of the replies: audit records in words (no None, no JSON),
the overview's rows from SummarizeMemories' counts, and page links both ways."""

from __future__ import annotations

from services.gateway.http.web import display, paging
from services.gateway.http.web.display import Change

# An audit record as the page gets it (proto3 JSON of AuditRecord; the snapshots are
# agent memory's exchange.snapshot, their numbers JSON doubles).
_SNAPSHOT = {"id": "m1", "version": 1.0, "scope": "private", "agent_id": "concierge",
             "user_id": "ana", "key": "seat", "content": "Ana prefers the window seat.",
             "content_hash": "ab12", "kind": "preference", "importance": 0.5,
             "confidence": 1.0, "tags": {"trip": "porto", "lang": "en"},
             "source": {"kind": "extraction", "thread_id": "t1", "message_ids": ["u1", "u2"],
                        "run_id": "r1", "first_offset": 0.0, "last_offset": 3.0},
             "author": {"key_id": "k1", "agent_id": "concierge", "user_id": "ana",
                        "role": "admin"},
             "expires_at": None, "created_at": "2026-11-30T10:33:05.123456+00:00",
             "updated_at": "2026-11-30T10:33:05.123456+00:00", "deleted_at": None,
             "superseded_by": None, "superseded_at": None}


def test_a_creation_lists_what_was_set_in_a_readers_order():
    record = {"memory_id": "m1", "action": "AUDIT_ACTION_CREATE", "after": _SNAPSHOT}
    assert display.changes(record) == [
        Change("content", None, "Ana prefers the window seat."), Change("key", None, "seat"),
        Change("kind", None, "preference"), Change("scope", None, "private"),
        Change("agent", None, "concierge"), Change("user", None, "ana"),
        Change("tags", None, "lang=en, trip=porto"), Change("importance", None, "0.5"),
        Change("confidence", None, "1"),
        Change("source", None, "extraction · thread t1 · run r1 · 2 messages")]
    assert display.subject(record) == "seat"


def test_an_update_shows_old_and_new_values_as_text():
    after = {**_SNAPSHOT, "version": 2.0, "tags": {"trip": "lisbon"}, "kind": "project_fact",
             "superseded_by": "m2", "superseded_at": "2026-12-01T08:00:00+00:00",
             "deleted_at": "2026-12-01T09:00:00Z"}
    changes = display.changes({"memory_id": "m1", "before": _SNAPSHOT, "after": after})
    assert changes == [
        Change("kind", "preference", "project fact"),
        Change("tags", "lang=en, trip=porto", "trip=lisbon"),
        Change("deleted", None, "2026-12-01 09:00:00 UTC"),
        Change("superseded by", None, "m2", memory_id="m2")]
    shown = repr(changes)
    assert "{" not in shown and "'None'" not in shown


def test_a_settings_change_reads_as_settings():
    before = {"memory_enabled": True, "retention_days": 30.0, "default_token_budget": 4000.0,
              "environments": ["default"], "quotas": {"memories": 100000.0},
              "updated_at": None}
    after = {**before, "memory_enabled": False, "environments": ["default", "staging"],
             "quotas": {"memories": 5e5}, "updated_at": "2026-12-01T09:00:00+00:00"}
    record = {"memory_id": "", "action": "AUDIT_ACTION_ACCOUNT_SETTINGS", "before": before,
              "after": after}
    assert display.changes(record) == [
        Change("environments", "default", "default, staging"),
        Change("memory enabled", "yes", "no"),
        Change("quotas", "memories 100000", "memories 500000")]
    assert display.subject(record) == "account settings"


def test_the_overview_rows_put_the_shared_memories_first_then_each_agent():
    counts = [
        {"agent_id": "", "scope": "MEMORY_SCOPE_ACCOUNT", "kind": "MEMORY_KIND_TENANT_RULE",
         "memories": "2", "last_update_time": "2026-12-01T10:00:00Z"},
        {"agent_id": "", "scope": "MEMORY_SCOPE_USER", "kind": "MEMORY_KIND_USER_PROFILE",
         "memories": "1", "last_update_time": "2026-12-01T09:00:00Z"},
        {"agent_id": "billing", "scope": "MEMORY_SCOPE_AGENT", "kind": "MEMORY_KIND_DECISION",
         "memories": "3", "last_update_time": "2026-12-01T10:00:00.5Z"},
        {"agent_id": "billing", "scope": "MEMORY_SCOPE_PRIVATE",
         "kind": "MEMORY_KIND_DECISION", "memories": "4",
         "last_update_time": "2026-12-01T10:00:00Z"},
        {"agent_id": "archive", "scope": "MEMORY_SCOPE_AGENT",
         "kind": "MEMORY_KIND_OBSERVATION", "memories": "1",
         "last_update_time": "2026-11-01T10:00:00Z"}]
    rows = display.agent_rows(counts, "ana")
    assert [(r.label, r.agent_id, r.total) for r in rows] == [
        ("the whole account, every agent", "", 2), ("user ana, with every agent", "", 1),
        ("archive", "archive", 1), ("billing", "billing", 7)]
    billing = rows[-1]
    assert (billing.scopes, billing.kinds) == ({"agent": 3, "private": 4}, {"decision": 7})
    assert display.when(billing.last_update) == "2026-12-01 10:00:00 UTC"
    assert billing.last_update == "2026-12-01T10:00:00.5Z"  # later than ...:00Z


def test_page_links_lead_forward_and_back_with_the_filters_kept():
    kept = {"tag": "team=billing", "kind": ""}
    first = paging.Position.of({})
    assert paging.links("/m", kept, first, "T1") == paging.Links(
        next="/m?tag=team%3Dbilling&page=T1")
    second = paging.Position.of({"page": "T1"})
    assert paging.links("/m", kept, second, "T2") == paging.Links(
        previous="/m?tag=team%3Dbilling", next="/m?tag=team%3Dbilling&page=T2&back=T1")
    third = paging.Position.of({"page": "T2", "back": "T1"})
    assert paging.links("/m", kept, third, "") == paging.Links(
        first="/m?tag=team%3Dbilling", previous="/m?tag=team%3Dbilling&page=T1")
    deep = paging.Position.of({"page": "T99", "back": ".".join(f"T{i}" for i in range(1, 99))})
    assert len(deep.trail) == paging.MAX_TRAIL and deep.trail[-1] == "T98"
