"""The gateway's cache of ListPinned answers (services.gateway.pinned), on the whole
platform: whatever writes a memory, through whichever replica, the next context shows
it; expired entries leave without a write; a broken watch empties the cache. Each test
uses accounts of its own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator

import asyncpg
import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from google.protobuf import field_mask_pb2, struct_pb2

from libs import clients
from libs.clients.agent_memory import AgentMemoryClient
from libs.identity import Principal
from libs.settings import Secret
from services.agent_memory.memories.store.pinned_changes import CHANNEL
from services.gateway.pinned import PinnedCache
from testkit.pinned_changes import all_heard
from testkit.platform import another_gateway
from testkit.waiting import eventually
from tools import launch

AGENT = "pinner"


def auth(key: str):
    return (("authorization", f"Bearer {key}"),)


def caller(user: str = "u1") -> pb.Caller:
    return pb.Caller(agent_id=AGENT, user_id=user, surface=principal_pb2.SURFACE_AGENT)


def dsn(platform) -> str:
    return platform.services["agent_memory"].env["AGENT_MEMORY_POSTGRES_DSN"]


async def sql(platform, statement: str, *args, announced: bool = True) -> None:
    """A write straight to agent memory's tables; ``announced=False``: with triggers off
    (``session_replication_role = replica``), a change nobody announces."""
    connection = await asyncpg.connect(dsn(platform))
    try:
        if not announced:
            await connection.execute("SET session_replication_role = replica")
        await connection.execute(statement, *args)
    finally:
        await connection.close()


class Account:
    def __init__(self, platform, channel, name: str | None = None) -> None:
        self.name = name or f"pin-{uuid.uuid4().hex[:8]}"
        self.key = platform.key(self.name)
        platform.bind_memory(self.name, AGENT)
        self.gateway = pb_grpc.GatewayServiceStub(channel)
        self.library = library_grpc.MemoryLibraryServiceStub(channel)

    async def facts(self, user: str = "u1", gateway=None) -> str:
        """The pinned-facts message of the next context ('' when none)."""
        reply = await (gateway or self.gateway).BuildContext(pb.BuildContextRequest(
            caller=caller(user), delegated=True), metadata=auth(self.key))
        return "\n".join(m.content for m in reply.messages)

    async def tool(self, name: str, user: str = "u1", **values) -> None:
        arguments = struct_pb2.Struct()
        arguments.update(values)
        await self.gateway.CallTool(pb.CallToolRequest(
            caller=caller(user), tool_name=name, arguments=arguments), metadata=auth(self.key))

    async def remember(self, key: str, content: str, user: str = "u1") -> None:
        await self.tool("memory_store", user, key=key, content=content,
                        category="user_profile", importance=0.9)

    async def cached(self, platform, content: str, marker: str, timeout: float = 15) -> None:
        """Check the answer is served from the cache: a change nobody announces is not seen.

        A read is not kept while an announcement of an earlier write is still on its way
        (it may have missed that write): tried again until one is, and fails if none is.
        """
        assert content in await self.facts()

        async def kept() -> bool:
            if content not in await self.facts():  # our marker, kept and not yet dropped
                return False
            await sql(platform, "UPDATE memory_entries SET content = $2 WHERE account_id = $1"
                      " AND content = $3", self.name, marker, content, announced=False)
            served = content in await self.facts()  # agent memory would say the marker
            # Served from the cache: put back unannounced, the kept answer is true again.
            # Else the marker read may be kept: put back announced, which drops it.
            await sql(platform, "UPDATE memory_entries SET content = $3 WHERE account_id = $1"
                      " AND content = $2", self.name, marker, content, announced=not served)
            return served

        await eventually(kept, timeout)



async def test_changes_through_the_gateway_show_in_the_very_next_context(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        assert await acme.facts() == ""
        await acme.remember("name", "The user's name is Ana.")
        assert "The user's name is Ana." in await acme.facts()
        await acme.cached(platform, "The user's name is Ana.", "behind its back")
        # The library: edit, unpin (importance below the pin floor), pin again, delete.
        memory = (await acme.library.ListMemories(library_pb.ListMemoriesRequest(
            caller=caller()), metadata=auth(acme.key))).memories[0]

        async def edit(paths, **values):
            return (await acme.library.EditMemory(library_pb.EditMemoryRequest(
                caller=caller(), memory_id=memory.id, expected_version=memory.version,
                edit=memory_pb.MemoryEdit(**values),
                update_mask=field_mask_pb2.FieldMask(paths=paths)), metadata=auth(acme.key))
            ).memory

        memory = await edit(["content"], content="The user's name is Ana Lopes.")
        assert "Ana Lopes" in await acme.facts()
        memory = await edit(["importance"], importance=0.2)
        assert await acme.facts() == ""
        memory = await edit(["importance"], importance=0.95)
        assert "Ana Lopes" in await acme.facts()
        await acme.library.DeleteMemory(library_pb.DeleteMemoryRequest(
            caller=caller(), memory_id=memory.id), metadata=auth(acme.key))
        assert await acme.facts() == ""
        await acme.library.RestoreMemory(library_pb.RestoreMemoryRequest(
            caller=caller(), memory_id=memory.id), metadata=auth(acme.key))
        assert "Ana Lopes" in await acme.facts()
        await acme.tool("memory_forget", key="name")
        assert await acme.facts() == ""


async def test_changes_made_past_the_gateway_reach_it_at_once(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.remember("city", "The user lives in Porto.")
        await acme.cached(platform, "The user lives in Porto.", "behind its back")

        async def shows(text: str) -> bool:
            return text in await acme.facts()

        # Any write path of agent memory (hygiene, flush, extraction): a statement.
        await sql(platform, "UPDATE memory_entries SET content = 'The user lives in Lisbon.'"
                  " WHERE account_id = $1", acme.name)
        # Announced: well within the 15 s allowed, far from the cache's 60 s.
        assert await eventually(lambda: shows("Lisbon"), timeout=15) < 10
        # The operator's CLI, straight to agent memory: memory off, then on again.
        for enabled, expected in (("false", ""), ("true", "Lisbon")):
            admin = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "services.agent_memory.admin", "--address",
                platform.addresses["agent_memory"], "account-settings", "--account", acme.name,
                "--memory-enabled", enabled, cwd=launch.ROOT,
                env=platform.services["agent_memory"].env, stdout=subprocess.DEVNULL)
            assert await admin.wait() == 0
            assert await eventually(lambda e=expected: shows(e) if e else _none(acme),
                                    timeout=15) < 10


async def _none(account: Account) -> bool:
    return await account.facts() == ""


async def test_an_entry_that_expires_leaves_the_context_without_a_write(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.remember("trip", "The user is travelling this week.")
        await sql(platform, "UPDATE memory_entries SET expires_at = now() + interval '8 seconds'"
                  " WHERE account_id = $1", acme.name)
        assert "travelling" in await acme.facts()
        await acme.cached(platform, "The user is travelling this week.", "behind its back")
        waited = await eventually(lambda: _none(acme), timeout=40)
        assert waited < 30  # the expiry (under 8 s), not the cache's 60 s


async def test_a_write_through_one_replica_reaches_the_other(platform):
    with another_gateway(platform) as other:
        async with clients.channel(platform.gateway, default_timeout=30) as a_channel, \
                clients.channel(other.address, default_timeout=30) as b_channel:
            acme = Account(platform, a_channel)
            b = pb_grpc.GatewayServiceStub(b_channel)
            await acme.remember("pet", "The user has a cat.")
            assert "cat" in await acme.facts(gateway=b)
            await acme.remember("pet", "The user has a dog.")

            async def b_shows_the_dog() -> bool:
                return "dog" in await acme.facts(gateway=b)

            assert await eventually(b_shows_the_dog, timeout=15) < 10  # not the 60 s


async def test_a_broken_watch_empties_the_cache(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.remember("tea", "The user drinks green tea.")
        await acme.cached(platform, "The user drinks green tea.", "behind its back")
        agent_memory = platform.services["agent_memory"]
        agent_memory.stop()
        try:
            # Missed while nobody listened (as if the announcement were lost).
            await sql(platform, "UPDATE memory_entries SET content = 'The user drinks coffee.'"
                      " WHERE account_id = $1", acme.name, announced=False)
        finally:
            agent_memory.start()

        answers: list[str] = []

        async def answered() -> bool:  # the gateway reconnects within its backoff
            try:
                answers.append(await acme.facts())
            except grpc.aio.AioRpcError as exc:
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                return False
            return True

        await eventually(answered)
        assert "coffee" in answers[0]  # the first answer: never the cached tea

        # Resubscribed: kept again, a change nobody announces is unseen.
        await acme.cached(platform, "The user drinks coffee.", "The user drinks water.",
                          timeout=60)


async def test_a_bulk_import_is_announced_once(platform):
    async with clients.channel(platform.gateway, default_timeout=60) as channel:
        source, target = Account(platform, channel), Account(platform, channel)
        await source.remember("bulk-0", "The user likes bulk imports.")
        export = await source.library.ExportMemories(library_pb.ExportMemoriesRequest(
            caller=caller(), page_size=10), metadata=auth(source.key))
        header, line = export.jsonl.strip().splitlines()
        memory_id = json.loads(line)["id"]
        # 300 more of the agent's, within each kind's capacity.
        lines = [line] + [
            line.replace(memory_id, str(uuid.uuid4())).replace("bulk-0", f"bulk-{kind}-{i}")
            .replace('"user_profile"', f'"{kind}"').replace('"private"', '"agent"')
            .replace('"user_id": "u1"', '"user_id": ""')
            for kind in ("project_fact", "decision", "correction") for i in range(100)]
        heard: list[str] = []
        listener = await asyncpg.connect(dsn(platform))
        await listener.add_listener(CHANNEL, lambda *args: heard.append(args[3]))
        try:
            imported = await target.library.ImportMemories(library_pb.ImportMemoriesRequest(
                caller=caller(), jsonl="\n".join([header, *lines])), metadata=auth(target.key))
            assert imported.created == 301
            # Notifications arrive in commit order: once one sent after the import
            # returned is heard, so is every announcement of the import.
            marker = f"marker-{uuid.uuid4().hex}"
            await sql(platform, "SELECT pg_notify($1, $2)", CHANNEL, marker)
            await eventually(lambda: _true(marker in heard), timeout=15)
        finally:
            await listener.close()
        assert 1 <= heard.count(target.name) <= 2, heard
        assert "bulk imports" in await target.facts()


async def test_private_memories_stay_with_their_user_through_the_cache(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.remember("secret", "The user's locker code is 4711.", user="u1")
        for _ in range(2):  # the second answer comes from the cache
            assert "4711" in await acme.facts("u1")
            assert "4711" not in await acme.facts("u2")


@contextlib.asynccontextmanager
async def agent_memory_client(platform) -> AsyncIterator[AgentMemoryClient]:
    token = platform.services["agent_memory"].env.get("INTERNAL_AUTH_TOKEN", "")
    client = AgentMemoryClient(platform.addresses["agent_memory"], timeout=30,
                               internal_token=Secret(token))
    try:
        yield client
    finally:
        await client.close()


class Delayed:
    """Agent memory's real answers, held back until ``release`` (a slow network)."""

    def __init__(self, client: AgentMemoryClient) -> None:
        self._client = client
        self.answered = asyncio.Event()
        self.release = asyncio.Event()

    async def list_pinned(self, request):
        reply = await self._client.list_pinned(request)
        self.answered.set()
        await self.release.wait()
        return reply

    def watch_pinned_changes(self, timeout: float):
        return self._client.watch_pinned_changes(timeout)


async def test_an_answer_read_before_a_change_is_not_kept(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel, \
            agent_memory_client(platform) as agent_memory:
        acme = Account(platform, channel)
        await acme.remember("fruit", "The user likes apples.")
        ana = Principal(acme.name, AGENT, "u1", "default")
        cache = PinnedCache(max_age_seconds=60, retry_seconds=0.1)
        delayed = Delayed(agent_memory)
        async with cache.watching(delayed):
            await eventually(lambda: _true(cache.subscribed))
            reading = asyncio.create_task(cache.list_pinned(delayed, ana))
            await delayed.answered.wait()  # read: apples
            await sql(platform, "UPDATE memory_entries SET content = 'The user likes pears.'"
                      " WHERE account_id = $1", acme.name)
            # The announcement arrives while the answer is in flight.
            await all_heard(cache, lambda *args: sql(platform, *args))
            delayed.release.set()
            assert "apples" in (await reading).entries[0].content
            assert cache.kept_pinned(ana) is None  # read before the change: not kept
            fresh = await cache.list_pinned(agent_memory, ana)
            assert "pears" in fresh.entries[0].content
            # And an answer read after the change is kept.
            await sql(platform, "UPDATE memory_entries SET content = 'The user likes plums.'"
                      " WHERE account_id = $1", acme.name, announced=False)
            assert "pears" in (await cache.list_pinned(agent_memory, ana)).entries[0].content


async def _true(value: bool) -> bool:
    return value
