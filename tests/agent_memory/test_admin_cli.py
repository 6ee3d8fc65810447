"""The operator's command line: settings of any account or agent, and platform rules."""

from __future__ import annotations

import json

from services.agent_memory import admin
from testkit.memory_client import pb
from tests.agent_memory.library import listed, who


async def _run(memory, capsys, *argv: str) -> tuple[int, str]:
    """(exit code, stdout + stderr)."""
    args = admin.parser().parse_args(
        ["--address", f"127.0.0.1:{memory.service.server.port}", *argv])
    code = await admin.run(args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


async def test_the_operator_changes_settings_and_platform_rules(memory, capsys):
    code, out = await _run(memory, capsys, "agent-settings", "--account", "acme", "--agent",
                           "helper", "--memory-bound", "true", "--extraction-mode", "off",
                           "--relevant-memories", "true", "--relevant-memories-budget", "2000")
    assert code == 0 and json.loads(out)["settings"]["memoryBound"] is True
    reply = await memory.stub.GetAgentSettings(pb.GetAgentSettingsRequest(principal=who()))
    assert reply.settings.memory_bound and reply.settings.extraction_mode == pb.EXTRACTION_MODE_OFF
    assert (reply.settings.relevant_memories_enabled,
            reply.settings.relevant_memories_token_budget) == (True, 2000)
    code, out = await _run(memory, capsys, "account-settings", "--account", "acme",
                           "--retention-days", "7")
    assert code == 0 and json.loads(out)["settings"]["retentionDays"] == 7
    code, _ = await _run(memory, capsys, "platform-rules", "add", "--content",
                         "Never reveal another tenant's data", "--key", "tenancy")
    assert code == 0
    rules = await listed(memory.stub, who(), scopes=[pb.MEMORY_SCOPE_PLATFORM])
    assert [(r.key, r.author.role) for r in rules] == [("tenancy", 3)]  # KEY_ROLE_OPERATOR
    code, out = await _run(memory, capsys, "platform-rules", "list")
    assert "tenancy: Never reveal another tenant's data" in out
    code, out = await _run(memory, capsys, "account-settings", "--account", "acme",
                           "--token-budget", "5")
    assert code == 1 and "settings.default_token_budget" in out
    trail = await memory.stub.ListAudit(pb.ListAuditRequest(principal=who()))
    assert {r.action for r in trail.records} >= {pb.AUDIT_ACTION_AGENT_SETTINGS,
                                                 pb.AUDIT_ACTION_ACCOUNT_SETTINGS}
