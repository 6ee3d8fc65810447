"""The gRPC AgentMemoryService: validate, call the operations, convert."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as pb_grpc
from google.protobuf import field_mask_pb2

from libs import limits
from libs.conversions import optional_datetime
from libs.errors import InvalidArgument
from services.agent_memory.memories import conversions, rules
from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.service import AgentMemory
from services.agent_memory.memories.store.pinned_changes import EVERY_ACCOUNT, PinnedChanges

LIST_DEFAULT, LIST_MAX = 50, 200
EXPORT_DEFAULT, EXPORT_MAX = 500, 1000
IMPORT_MAX_CHARS = 12 * 1024 * 1024


class AgentMemoryServicer(pb_grpc.AgentMemoryServiceServicer):
    def __init__(self, memory: AgentMemory,
                 procedures_recallable: Callable[[Actor], Awaitable[bool]],
                 pinned_changes: PinnedChanges) -> None:
        self._memory = memory
        self._procedures_recallable = procedures_recallable
        self._pinned_changes = pinned_changes

    # -- seed 000 --------------------------------------------------------------------

    async def Store(self, request: pb.StoreRequest, context) -> pb.StoreResponse:
        actor = conversions.actor(request.principal)
        result = await self._memory.store(
            actor,
            key=request.key,
            content=request.content,
            kind=conversions.category(request.category),
            visibility=conversions.visibility(request.visibility),
            importance=request.importance if request.HasField("importance") else None,
            source=conversions.source(request.source),
            request_id=conversions.request_id(request.request_id),
        )
        return conversions.store_response(result)

    async def Recall(self, request: pb.RecallRequest, context) -> pb.RecallResponse:
        actor = conversions.actor(request.principal)
        # Above the maximum is capped, not refused (seed 000: "capped at 20").
        limit = limits.count(min(request.limit, rules.RECALL_MAX_LIMIT), "limit",
                             default=rules.RECALL_DEFAULT_LIMIT, maximum=rules.RECALL_MAX_LIMIT)
        result = await self._memory.recall(actor, request.query, limit,
                                           conversions.categories(request.categories),
                                           rerank=request.rerank)
        return conversions.recalled(result)

    async def Forget(self, request: pb.ForgetRequest, context) -> pb.ForgetResponse:
        actor = conversions.actor(request.principal)
        return pb.ForgetResponse(forgotten=await self._memory.forget(actor, request.key))

    async def ListPinned(self, request: pb.ListPinnedRequest, context) -> pb.ListPinnedResponse:
        actor = conversions.actor(request.principal)
        (pinned, blocks), recallable = await asyncio.gather(  # two connections, at once
            self._memory.pinned(actor), self._procedures_recallable(actor))
        return pb.ListPinnedResponse(entries=[conversions.entry(e) for e in pinned],
                                     blocks=[conversions.entry(e) for e in blocks],
                                     procedures_recallable=recallable)

    async def WatchPinnedChanges(self, request: pb.WatchPinnedChangesRequest, context):
        async for account_id in self._pinned_changes.watch():
            if account_id is None:
                yield pb.WatchPinnedChangesResponse(subscribed=True)
            elif account_id == EVERY_ACCOUNT:
                yield pb.WatchPinnedChangesResponse(all_accounts=True)
            else:
                yield pb.WatchPinnedChangesResponse(account_id=account_id)

    async def GetEntry(self, request: pb.GetEntryRequest, context) -> pb.GetEntryResponse:
        actor = conversions.actor(request.principal)
        return pb.GetEntryResponse(entry=conversions.entry(
            await self._memory.get(actor, request.key)))

    async def ListEntries(self, request: pb.ListEntriesRequest, context) -> pb.ListEntriesResponse:
        actor = conversions.actor(request.principal)
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                            maximum=LIST_MAX)
        entries = await self._memory.list_entries(
            actor, conversions.categories(request.categories),
            conversions.time_position(request.page_token), size)
        return pb.ListEntriesResponse(entries=[conversions.entry(e) for e in entries],
                                      next_page_token=conversions.time_token(entries, size))

    async def RunHygiene(self, request: pb.RunHygieneRequest, context) -> pb.RunHygieneResponse:
        report = await self._memory.run_hygiene()
        return pb.RunHygieneResponse(expired=report.expired, decayed=report.decayed,
                                     purged=report.purged,
                                     pruned_versions=report.pruned_versions,
                                     receipts_deleted=report.receipts_deleted)

    async def Reindex(self, request: pb.ReindexRequest, context):
        actor = conversions.actor(request.principal)
        async for indexed, total, name in self._memory.reindex(actor):
            yield pb.ReindexResponse(indexed=indexed, total=total, collection=name)

    # -- the library -----------------------------------------------------------------

    async def ListMemories(self, request: pb.ListMemoriesRequest,
                           context) -> pb.ListMemoriesResponse:
        actor = conversions.actor(request.principal)
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                            maximum=LIST_MAX)
        where = conversions.memory_filter(request.filter)
        found = await self._memory.list_memories(
            actor, where, conversions.time_position(request.page_token), size)
        return pb.ListMemoriesResponse(memories=[conversions.entry(e) for e in found],
                                       next_page_token=conversions.time_token(found, size))

    async def GetMemory(self, request: pb.GetMemoryRequest, context) -> pb.GetMemoryResponse:
        actor = conversions.actor(request.principal)
        as_of = optional_datetime(request, "as_of")
        entry, versions = await self._memory.get_memory(
            actor, conversions.memory_id(request.memory_id), as_of)
        return pb.GetMemoryResponse(memory=conversions.entry(entry),
                                    versions=[conversions.version(v) for v in versions])

    async def AddMemory(self, request: pb.AddMemoryRequest, context) -> pb.AddMemoryResponse:
        actor = conversions.actor(request.principal)
        new = conversions.new_memory(request.memory, actor)
        entry = await self._memory.add(actor, new, conversions.request_id(request.request_id))
        return pb.AddMemoryResponse(memory=conversions.entry(entry))

    async def EditMemory(self, request: pb.EditMemoryRequest, context) -> pb.EditMemoryResponse:
        actor = conversions.actor(request.principal)
        memory_id = conversions.memory_id(request.memory_id)
        expected = conversions.expected_version(request.expected_version, required=True)
        edit = conversions.edit(request.edit, request.update_mask)
        entry = await self._memory.edit(actor, memory_id, expected, edit)
        return pb.EditMemoryResponse(memory=conversions.entry(entry))

    async def DeleteMemory(self, request: pb.DeleteMemoryRequest,
                           context) -> pb.DeleteMemoryResponse:
        actor = conversions.actor(request.principal)
        entry = await self._memory.delete(actor, conversions.memory_id(request.memory_id),
                                          conversions.expected_version(request.expected_version))
        return pb.DeleteMemoryResponse(memory=conversions.entry(entry))

    async def RestoreMemory(self, request: pb.RestoreMemoryRequest,
                            context) -> pb.RestoreMemoryResponse:
        actor = conversions.actor(request.principal)
        entry = await self._memory.restore(actor, conversions.memory_id(request.memory_id),
                                           conversions.expected_version(request.expected_version))
        return pb.RestoreMemoryResponse(memory=conversions.entry(entry))

    async def RollbackMemory(self, request: pb.RollbackMemoryRequest,
                             context) -> pb.RollbackMemoryResponse:
        actor = conversions.actor(request.principal)
        memory_id = conversions.memory_id(request.memory_id)
        version = conversions.version_number(request.version, "version",
                                             "the version to make current again", required=True)
        entry = await self._memory.rollback(
            actor, memory_id, version, conversions.expected_version(request.expected_version))
        return pb.RollbackMemoryResponse(memory=conversions.entry(entry))

    async def SupersedeMemory(self, request: pb.SupersedeMemoryRequest,
                              context) -> pb.SupersedeMemoryResponse:
        actor = conversions.actor(request.principal)
        old, new = await self._memory.supersede(
            actor, conversions.memory_id(request.memory_id),
            conversions.memory_id(request.superseded_by, "superseded_by"),
            conversions.expected_version(request.expected_version))
        return pb.SupersedeMemoryResponse(memory=conversions.entry(old),
                                          replacement=conversions.entry(new))

    async def ListAudit(self, request: pb.ListAuditRequest, context) -> pb.ListAuditResponse:
        actor = conversions.actor(request.principal)
        memory_id = conversions.memory_id(request.memory_id) if request.memory_id else None
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                            maximum=LIST_MAX)
        records = await self._memory.audit(actor, memory_id,
                                           conversions.audit_position(request.page_token), size)
        return pb.ListAuditResponse(records=[conversions.audit_record(r) for r in records],
                                    next_page_token=conversions.audit_token(records, size))

    async def ExportMemories(self, request: pb.ExportMemoriesRequest,
                             context) -> pb.ExportMemoriesResponse:
        actor = conversions.actor(request.principal)
        size = limits.count(request.page_size, "page_size", default=EXPORT_DEFAULT,
                            maximum=EXPORT_MAX)
        text, count, position = await self._memory.export(
            actor, conversions.time_position(request.page_token), size)
        return pb.ExportMemoriesResponse(jsonl=text, count=count,
                                         next_page_token=conversions.position_token(position))

    async def ImportMemories(self, request: pb.ImportMemoriesRequest,
                             context) -> pb.ImportMemoriesResponse:
        actor = conversions.actor(request.principal)
        if len(request.jsonl) > IMPORT_MAX_CHARS:
            raise InvalidArgument("jsonl", f"at most {IMPORT_MAX_CHARS:,} characters a call")
        result = await self._memory.import_memories(actor, request.jsonl)
        return pb.ImportMemoriesResponse(created=result.created, unchanged=result.unchanged,
                                         conflicts=[str(i) for i in result.conflicts])

    async def ExplainMemory(self, request: pb.ExplainMemoryRequest,
                            context) -> pb.ExplainMemoryResponse:
        actor = conversions.actor(request.principal)
        found = await self._memory.explain(actor, conversions.memory_id(request.memory_id))
        return conversions.explanation(found)

    async def SummarizeMemories(self, request: pb.SummarizeMemoriesRequest,
                                context) -> pb.SummarizeMemoriesResponse:
        actor = conversions.actor(request.principal, agent_required=False)  # agent_ids instead
        counts = await self._memory.summarize(actor, conversions.agent_ids(request.agent_ids))
        return pb.SummarizeMemoriesResponse(counts=[conversions.memory_count(c) for c in counts])

    async def GetAccountSettings(self, request, context) -> pb.GetAccountSettingsResponse:
        actor = conversions.actor(request.principal, agent_required=False)  # no agent's
        settings = await self._memory.account_settings(actor)
        usage = await self._memory.account_usage(actor)
        return pb.GetAccountSettingsResponse(settings=conversions.account_settings(settings),
                                             usage=conversions.account_usage(usage))

    async def UpdateAccountSettings(self, request, context) -> pb.UpdateAccountSettingsResponse:
        actor = conversions.actor(request.principal)
        fields = conversions.mask(request.update_mask, conversions.ACCOUNT_SETTINGS)
        settings = await self._memory.update_account_settings(
            actor, conversions.account_settings_update(request.settings), fields)
        return pb.UpdateAccountSettingsResponse(settings=conversions.account_settings(settings))

    async def GetAgentSettings(self, request, context) -> pb.GetAgentSettingsResponse:
        actor = conversions.actor(request.principal)
        settings, enabled = await self._memory.agent_settings(actor)
        return pb.GetAgentSettingsResponse(settings=conversions.agent_settings(settings),
                                           account_memory_enabled=enabled)

    async def UpdateAgentSettings(self, request, context) -> pb.UpdateAgentSettingsResponse:
        actor = conversions.actor(request.principal)
        fields = conversions.mask(request.update_mask, conversions.AGENT_SETTINGS)
        settings = await self._memory.update_agent_settings(
            actor, conversions.agent_settings_update(request.settings, fields), fields)
        return pb.UpdateAgentSettingsResponse(settings=conversions.agent_settings(settings))

    async def SetAgentSettings(self, request, context) -> pb.SetAgentSettingsResponse:
        reply = await self.UpdateAgentSettings(pb.UpdateAgentSettingsRequest(
            principal=request.principal, settings=request.settings,
            update_mask=field_mask_pb2.FieldMask(paths=["memory_bound"])), context)
        return pb.SetAgentSettingsResponse(settings=reply.settings)
