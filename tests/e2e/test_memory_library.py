"""The memory library through the gateway, with real API keys and roles; the Memory
binding is the agent setting (every surface follows it, a caller's capabilities
change nothing); the flush follows it too. Account "initech" only, so the other
end-to-end tests are not disturbed."""

from __future__ import annotations

import asyncio
import time

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from google.protobuf import field_mask_pb2, struct_pb2

from libs import clients
from testkit.journal_client import rpc_error

AGENT = principal_pb2.SURFACE_AGENT
MEMORY_TOOLS = {"memory_store", "memory_recall", "memory_forget"}


def auth(key: str):
    return (("authorization", f"Bearer {key}"),)


def caller(agent: str, user: str = "u1", capabilities=()) -> pb.Caller:
    return pb.Caller(agent_id=agent, user_id=user, surface=AGENT, capabilities=capabilities)


def key_id(key: str) -> str:
    return key.split("_")[1]


class Initech:
    def __init__(self, platform, channel) -> None:
        self.admin = platform.create_key("initech", "admin")
        self.agent = platform.create_key("initech", "agent")
        self.gateway = pb_grpc.GatewayServiceStub(channel)
        self.library = library_grpc.MemoryLibraryServiceStub(channel)

    async def tools(self, agent: str, capabilities=()) -> set[str]:
        reply = await self.gateway.ListTools(pb.ListToolsRequest(
            caller=caller(agent, capabilities=capabilities)), metadata=auth(self.agent))
        return {t.name for t in reply.tools}

    async def bind(self, agent: str, bound: bool, key: str | None = None):
        return await self.library.UpdateAgentSettings(library_pb.UpdateAgentSettingsRequest(
            caller=caller(agent), settings=memory_pb.AgentSettings(memory_bound=bound),
            update_mask=field_mask_pb2.FieldMask(paths=["memory_bound"])),
            metadata=auth(key or self.admin))

    async def enable(self, enabled: bool):
        return await self.library.UpdateAccountSettings(library_pb.UpdateAccountSettingsRequest(
            caller=caller("robot"), settings=memory_pb.AccountSettings(memory_enabled=enabled),
            update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"])),
            metadata=auth(self.admin))


async def test_the_memory_binding_is_an_agent_setting_not_the_callers_capabilities(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        initech = Initech(platform, channel)
        # Stating the capability binds nothing, and offers no memory tool.
        assert not await initech.tools("robot", [principal_pb2.CAPABILITY_MEMORY]) & MEMORY_TOOLS
        denied = await rpc_error(initech.gateway.CallTool(pb.CallToolRequest(
            caller=caller("robot", capabilities=[principal_pb2.CAPABILITY_MEMORY]),
            tool_name="memory_store", arguments=struct_pb2.Struct()), metadata=auth(initech.agent)))
        assert denied.code == grpc.StatusCode.PERMISSION_DENIED
        # Only an admin's settings call binds it; then every call sees it, capabilities or not.
        refused = await rpc_error(initech.bind("robot", True, key=initech.agent))
        assert refused.code == grpc.StatusCode.PERMISSION_DENIED
        assert refused.reason == "ADMIN_REQUIRED"
        await initech.bind("robot", True)
        assert await initech.tools("robot") >= MEMORY_TOOLS
        context = await initech.gateway.BuildContext(pb.BuildContextRequest(
            caller=caller("robot"), delegated=True), metadata=auth(initech.agent))
        assert {t.name for t in context.tools} >= MEMORY_TOOLS
        assert await initech.tools("robot") >= MEMORY_TOOLS  # still bound after those calls
        assert not await initech.tools("other-robot") & MEMORY_TOOLS
        # Memory off for the account: no memory tools for any agent, until it is back on.
        await initech.enable(False)
        assert not await initech.tools("robot") & MEMORY_TOOLS
        await initech.enable(True)
        assert await initech.tools("robot") >= MEMORY_TOOLS
        settings = await initech.library.GetAgentSettings(library_pb.GetAgentSettingsRequest(
            caller=caller("robot")), metadata=auth(initech.agent))
        assert settings.settings.memory_bound and settings.account_memory_enabled
        trail = await initech.library.ListAudit(library_pb.ListAuditRequest(
            caller=caller("robot")), metadata=auth(initech.admin))
        changes = [r for r in trail.records if r.action == memory_pb.AUDIT_ACTION_AGENT_SETTINGS]
        assert changes[0].actor.key_id == key_id(initech.admin)
        assert changes[0].actor.role == principal_pb2.KEY_ROLE_ADMIN
        assert changes[0].after["memory_bound"] is True


async def test_the_library_through_the_gateway(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        initech = Initech(platform, channel)
        library, robot = initech.library, caller("librarian")
        add = library_pb.AddMemoryRequest
        mine = (await library.AddMemory(add(caller=robot, memory=memory_pb.NewMemory(
            kind=memory_pb.MEMORY_KIND_PREFERENCE, content="Prefers metric units")),
            metadata=auth(initech.agent))).memory
        assert mine.scope == memory_pb.MEMORY_SCOPE_PRIVATE
        assert (mine.author.key_id, mine.author.role) == (key_id(initech.agent),
                                                          principal_pb2.KEY_ROLE_AGENT)
        team = memory_pb.NewMemory(kind=memory_pb.MEMORY_KIND_TENANT_RULE,
                                   scope=memory_pb.MEMORY_SCOPE_ACCOUNT,
                                   content="Deploys need two approvals")
        denied = await rpc_error(library.AddMemory(add(caller=robot, memory=team),
                                                   metadata=auth(initech.agent)))
        assert denied.code == grpc.StatusCode.PERMISSION_DENIED
        assert denied.reason == "KIND_NOT_WRITABLE"
        rule = (await library.AddMemory(add(caller=robot, memory=team),
                                        metadata=auth(initech.admin))).memory
        bad = await rpc_error(library.AddMemory(add(caller=robot, memory=memory_pb.NewMemory(
            kind=memory_pb.MEMORY_KIND_DECISION, content="")), metadata=auth(initech.agent)))
        assert bad.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "memory.content" in bad.field_violations
        edited = (await library.EditMemory(library_pb.EditMemoryRequest(
            caller=robot, memory_id=mine.id, expected_version=1,
            edit=memory_pb.MemoryEdit(content="Prefers metric units, always"),
            update_mask=field_mask_pb2.FieldMask(paths=["content"])),
            metadata=auth(initech.agent))).memory
        assert edited.version == 2
        explained = await library.ExplainMemory(library_pb.ExplainMemoryRequest(
            caller=robot, memory_id=mine.id), metadata=auth(initech.agent))
        assert [v.version for v in explained.versions] == [1, 2]
        assert [a.action for a in explained.audit] == [memory_pb.AUDIT_ACTION_CREATE,
                                                       memory_pb.AUDIT_ACTION_UPDATE]
        await library.DeleteMemory(library_pb.DeleteMemoryRequest(
            caller=robot, memory_id=mine.id), metadata=auth(initech.agent))
        await library.RestoreMemory(library_pb.RestoreMemoryRequest(
            caller=robot, memory_id=mine.id), metadata=auth(initech.agent))
        back = (await library.RollbackMemory(library_pb.RollbackMemoryRequest(
            caller=robot, memory_id=mine.id, version=1), metadata=auth(initech.agent))).memory
        assert back.content == "Prefers metric units" and back.version == 5
        # Someone else's memories stay theirs: another user, another account.
        for who, key in ((caller("librarian", user="u2"), initech.agent),
                         (robot, platform.keys["globex"])):
            missing = await rpc_error(library.GetMemory(library_pb.GetMemoryRequest(
                caller=who, memory_id=mine.id), metadata=auth(key)))
            assert missing.code == grpc.StatusCode.NOT_FOUND
        unauthenticated = await rpc_error(library.GetMemory(library_pb.GetMemoryRequest(
            caller=robot, memory_id=mine.id)))
        assert unauthenticated.code == grpc.StatusCode.UNAUTHENTICATED
        # Export, then import into an empty account: the same listing.
        exported, token = "", ""
        while True:
            page = await library.ExportMemories(library_pb.ExportMemoriesRequest(
                caller=robot, page_size=1, page_token=token), metadata=auth(initech.admin))
            exported, token = exported + page.jsonl, page.next_page_token
            if not token:
                break
        umbrella = platform.create_key("umbrella", "admin")
        imported = await library.ImportMemories(library_pb.ImportMemoriesRequest(
            caller=robot, jsonl=exported), metadata=auth(umbrella))
        assert imported.created == 2

        async def listing(key):
            reply = await library.ListMemories(library_pb.ListMemoriesRequest(
                caller=robot, filter=memory_pb.MemoryFilter(include_deleted=True)),
                metadata=auth(key))
            return list(reply.memories)

        assert await listing(umbrella) == await listing(initech.admin)
        assert {m.id for m in await listing(umbrella)} == {mine.id, rule.id}


async def test_the_flush_follows_the_setting(platform):
    """A bound agent in an account with memory off: the thread is summarized, and
    nothing is flushed into memory."""
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        initech = Initech(platform, channel)
        await initech.bind("scribe", True)
        await initech.enable(False)
        try:
            messages = [message_pb2.Message(
                id=f"s{i}", role=message_pb2.ROLE_USER if i % 2 == 0 else
                message_pb2.ROLE_ASSISTANT, content=f"My name is Scribe Person, note {i}.")
                for i in range(50)]
            await initech.gateway.AppendMessages(pb.AppendMessagesRequest(
                caller=caller("scribe"), thread_id="notes", messages=messages),
                metadata=auth(initech.agent))
            deadline = time.monotonic() + 90
            while True:
                context = await initech.gateway.BuildContext(pb.BuildContextRequest(
                    caller=caller("scribe"), thread_id="notes"), metadata=auth(initech.agent))
                if any(m.content.startswith("Previous conversation summary") for m in
                       context.messages):
                    break
                assert time.monotonic() < deadline, "never summarized"
                await asyncio.sleep(0.5)
            flushed = await initech.library.ListMemories(library_pb.ListMemoriesRequest(
                caller=caller("scribe"), filter=memory_pb.MemoryFilter(
                    sources=[memory_pb.SOURCE_KIND_PRE_COMPACTION_FLUSH])),
                metadata=auth(initech.agent))
            assert list(flushed.memories) == []
        finally:
            await initech.enable(True)
