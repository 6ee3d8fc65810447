"""Every call of the SDK, once: the request it sends, how its reply becomes the result,
and whether it may be sent again after UNAVAILABLE. The sync and asyncio clients
(``_client.py``) only run these.

Each builder takes the caller (who the client acts as) first, then the method's own
arguments; the clients bind the caller, so ``client.memory.store(key, content, ...)`` is
``store(caller, key, content, ...)`` run. Enum arguments take the short lower-case name
(``"preference"`` for MEMORY_KIND_PREFERENCE) or the generated value.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Generic, TypeVar

from google.protobuf import field_mask_pb2, json_format, struct_pb2, timestamp_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from google.protobuf.message import Message

from agentmemory_client import _errors
from agentmemory_client._proto.agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory_client._proto.agentmemory.agent_memory.v1 import retrieval_pb2
from agentmemory_client._proto.agentmemory.common.v1 import message_pb2, principal_pb2, run_pb2
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory_client._proto.agentmemory.gateway.v1 import key_service_pb2 as key_pb
from agentmemory_client._proto.agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory_client._proto.agentmemory.gateway.v1 import retrieval_service_pb2 as retrieval_pb
from agentmemory_client._proto.agentmemory.gateway.v1 import run_service_pb2 as run_pb
from agentmemory_client._types import RecalledMemory, RecallResult, StoreResult

T = TypeVar("T")
Caller = gateway_pb.Caller


@dataclass(frozen=True)
class Call(Generic[T]):
    #: The stub the method is on: gateway, library, retrieval, runs or keys.
    service: str
    method: str
    request: Message
    convert: Callable[[Any], T]
    #: Safe to send again after UNAVAILABLE: idempotent, or made so by a request id.
    retry: bool


@dataclass(frozen=True)
class Pages(Generic[T]):
    """A list call, page after page: ``call`` returns the reply, ``items`` its results."""

    call: Call[Any]
    items: Callable[[Any], Iterable[T]]

    def next(self, reply: Any) -> Pages[T] | None:
        if not reply.next_page_token:
            return None
        request = type(self.call.request)()
        request.CopyFrom(self.call.request)
        request.page_token = reply.next_page_token
        return replace(self, call=replace(self.call, request=request))


def _request_id() -> str:
    """A fresh UUIDv4: the same one goes with every attempt of a call."""
    return str(uuid.uuid4())


def _enum(kind: EnumTypeWrapper, value: str | int, field: str) -> int:
    if isinstance(value, int):
        return value
    prefix = kind.DESCRIPTOR.values[0].name.removesuffix("UNSPECIFIED")
    name = value if value.startswith(prefix) else prefix + value.upper()
    if name not in kind.DESCRIPTOR.values_by_name:
        short = ", ".join(v.name.removeprefix(prefix).lower() for v in kind.DESCRIPTOR.values[1:])
        raise _errors.error("INVALID_ARGUMENT", f"{field}: must be one of {short}",
                            "INVALID_FIELD", {"field": field}, {field: f"must be one of {short}"})
    return kind.Value(name)


def _time(value: datetime | None) -> timestamp_pb2.Timestamp | None:
    if value is None:
        return None
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


def _struct(value: Mapping[str, Any] | None) -> struct_pb2.Struct | None:
    if value is None:
        return None
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def _given(**fields: Any) -> dict[str, Any]:
    """The fields the caller gave (None: left to the gateway's default)."""
    return {name: value for name, value in fields.items() if value is not None}


# memory: seed 002's search, seed 000's tools, the library


def search(caller: Caller, query: str, *, run_id: str, user_id: str | None = None,
           thread_id: str | None = None, top_n: int | None = None,
           tags: Mapping[str, str] | None = None, min_score: float | None = None,
           token_budget: int | None = None, mode: str | int | None = None,
           rerank: bool | None = None, include_superseded: bool | None = None,
           as_of: datetime | None = None, as_of_axis: str | int | None = None,
           temporal_after: datetime | None = None, temporal_before: datetime | None = None,
           temporal_anchor: datetime | None = None, raw: bool | None = None,
           explain: bool | None = None, expand_sessions: bool | None = None,
           expand_session_count: int | None = None, expand_session_window: int | None = None,
           overrides: retrieval_pb2.RetrievalOverrides | None = None,
           ) -> Call[retrieval_pb.RetrieveContextResponse]:
    """A compiled, prompt-ready context for the task ``query`` describes, with the receipt
    of what it delivered (seed 002's retrieve; the fields are its request's)."""
    request = retrieval_pb.RetrieveContextRequest(caller=caller, semantic_query=query, **_given(
        run_id=run_id, user_id=user_id, thread_id=thread_id, top_n=top_n, tags=tags,
        min_score=min_score, token_budget=token_budget, rerank=rerank,
        include_superseded=include_superseded, as_of=_time(as_of),
        temporal_after=_time(temporal_after), temporal_before=_time(temporal_before),
        temporal_anchor=_time(temporal_anchor), raw=raw, explain=explain,
        expand_sessions=expand_sessions, expand_session_count=expand_session_count,
        expand_session_window=expand_session_window, overrides=overrides))
    if mode is not None:
        request.mode = _enum(retrieval_pb2.RetrievalMode, mode, "mode")
    if as_of_axis is not None:
        request.as_of_axis = _enum(retrieval_pb2.AsOfAxis, as_of_axis, "as_of_axis")
    # A retry may leave one more receipt (counted in receipts_per_day), never a wrong answer.
    return Call("retrieval", "RetrieveContext", request, lambda reply: reply, retry=True)


def _tool(caller: Caller, name: str, arguments: Mapping[str, Any], convert: Callable[[dict], T],
          *, thread_id: str | None = None, mutates: bool) -> Call[T]:
    request = gateway_pb.CallToolRequest(
        caller=caller, tool_name=name, thread_id=thread_id or "",
        arguments=_struct(arguments), request_id=_request_id() if mutates else "")

    def result(reply: gateway_pb.CallToolResponse) -> T:
        value = json_format.MessageToDict(reply.result)
        if reply.is_error:
            raise _errors.from_tool_result(value)
        return convert(value)

    return Call("gateway", "CallTool", request, result, retry=True)


def store(caller: Caller, key: str, content: str, *, category: str,
          scope: str | None = None, importance: float | None = None,
          thread_id: str | None = None) -> Call[StoreResult]:
    """Remembers ``content`` under ``key`` (the ``memory_store`` tool): the same content
    again changes nothing, new content is a new version. ``category``: user_profile,
    project_fact or observation; ``scope``: private (the user's, the default with a user)
    or shared (every user of the agent). Needs Memory bound to the agent."""
    arguments = _given(key=key, content=content, category=category, scope=scope,
                       importance=importance)
    return _tool(caller, "memory_store", arguments, lambda r: StoreResult(
        key=r["key"], visibility=r["visibility"], unchanged=r["unchanged"],
        replaced=r["replaced"], note=r.get("note", "")), thread_id=thread_id, mutates=True)


def recall(caller: Caller, query: str, *, limit: int | None = None,
           categories: Sequence[str] | None = None) -> Call[RecallResult]:
    """The remembered facts most relevant to ``query`` (the ``memory_recall`` tool; at most
    ``limit``, default 5, capped at 20)."""
    arguments = _given(query=query, limit=limit,
                       categories=list(categories) if categories is not None else None)
    return _tool(caller, "memory_recall", arguments, lambda r: RecallResult(
        memories=[RecalledMemory(key=e["key"], content=e["content"], category=e["category"],
                                 score=e["score"]) for e in r.get("entries", [])],
        fallback=r.get("fallback", False)), mutates=False)


def forget(caller: Caller, key: str) -> Call[bool]:
    """Forgets the fact under ``key`` (the ``memory_forget`` tool; restorable through the
    library); False when there was none."""
    return _tool(caller, "memory_forget", {"key": key}, lambda r: r["forgotten"], mutates=True)


def add(caller: Caller, content: str, *, kind: str | int, scope: str | int | None = None,
        key: str | None = None, importance: float | None = None,
        confidence: float | None = None,
        tags: Mapping[str, str] | None = None) -> Call[memory_pb.Entry]:
    """A new memory through the library, any kind and scope (``add`` rather than
    ``store``: no key is needed, a key in use is ALREADY_EXISTS rather than a new version,
    and the result is the memory itself, with its id)."""
    memory = memory_pb.NewMemory(kind=_enum(memory_pb.MemoryKind, kind, "memory.kind"),
                                 content=content, **_given(key=key, importance=importance,
                                                           confidence=confidence, tags=tags))
    if scope is not None:
        memory.scope = _enum(memory_pb.MemoryScope, scope, "memory.scope")
    request = library_pb.AddMemoryRequest(caller=caller, memory=memory, request_id=_request_id())
    return Call("library", "AddMemory", request, lambda reply: reply.memory, retry=True)


def get(caller: Caller, memory_id: str, *,
        as_of: datetime | None = None) -> Call[library_pb.GetMemoryResponse]:
    """The memory (``.memory``) and its versions (``.versions``, oldest first)."""
    request = library_pb.GetMemoryRequest(caller=caller, memory_id=memory_id,
                                          **_given(as_of=_time(as_of)))
    return Call("library", "GetMemory", request, lambda reply: reply, retry=True)


def list_memories(caller: Caller, *, scopes: Sequence[str | int] = (),
                  kinds: Sequence[str | int] = (), sources: Sequence[str | int] = (),
                  tags: Mapping[str, str] | None = None, text: str | None = None,
                  include_deleted: bool = False, include_superseded: bool = False,
                  as_of: datetime | None = None,
                  page_size: int | None = None) -> Pages[memory_pb.Entry]:
    """The memories the caller can see, newest first, every filter given matching; pages
    are fetched as the iteration reaches them."""
    query = memory_pb.MemoryFilter(
        scopes=[_enum(memory_pb.MemoryScope, s, f"filter.scopes[{i}]") for i, s in enumerate(scopes)],
        kinds=[_enum(memory_pb.MemoryKind, k, f"filter.kinds[{i}]") for i, k in enumerate(kinds)],
        sources=[_enum(memory_pb.SourceKind, s, f"filter.sources[{i}]")
                 for i, s in enumerate(sources)],
        include_deleted=include_deleted, include_superseded=include_superseded,
        **_given(tags=tags, text=text, as_of=_time(as_of)))
    request = library_pb.ListMemoriesRequest(caller=caller, filter=query,
                                             **_given(page_size=page_size))
    return Pages(Call("library", "ListMemories", request, lambda reply: reply, retry=True),
                 lambda reply: reply.memories)


_EDITABLE = ("key", "content", "kind", "importance", "confidence", "tags")


def edit(caller: Caller, memory_id: str, *, expected_version: int, key: str | None = None,
         content: str | None = None, kind: str | int | None = None,
         importance: float | None = None, confidence: float | None = None,
         tags: Mapping[str, str] | None = None) -> Call[memory_pb.Entry]:
    """A new version with the fields given; ``expected_version`` is the version edited
    (another edit in between: FailedPreconditionError, reason VERSION_CONFLICT)."""
    given = _given(key=key, content=content, importance=importance, confidence=confidence,
                   tags=tags, kind=None if kind is None else _enum(memory_pb.MemoryKind, kind,
                                                                     "edit.kind"))
    request = library_pb.EditMemoryRequest(
        caller=caller, memory_id=memory_id, expected_version=expected_version,
        edit=memory_pb.MemoryEdit(**given),
        update_mask=field_mask_pb2.FieldMask(paths=[f for f in _EDITABLE if f in given]))
    # Sent once: after a lost reply, a second attempt would meet its own first version.
    return Call("library", "EditMemory", request, lambda reply: reply.memory, retry=False)


def delete(caller: Caller, memory_id: str, *,
           expected_version: int = 0) -> Call[memory_pb.Entry]:
    """A tombstone, restorable within the account's retention window."""
    request = library_pb.DeleteMemoryRequest(caller=caller, memory_id=memory_id,
                                             expected_version=expected_version)
    return Call("library", "DeleteMemory", request, lambda reply: reply.memory, retry=False)


def restore(caller: Caller, memory_id: str, *,
            expected_version: int = 0) -> Call[memory_pb.Entry]:
    """Undoes a delete, as a new version."""
    request = library_pb.RestoreMemoryRequest(caller=caller, memory_id=memory_id,
                                              expected_version=expected_version)
    return Call("library", "RestoreMemory", request, lambda reply: reply.memory, retry=False)


def rollback(caller: Caller, memory_id: str, version: int, *,
             expected_version: int = 0) -> Call[memory_pb.Entry]:
    """Makes ``version`` current again, as a new version."""
    request = library_pb.RollbackMemoryRequest(caller=caller, memory_id=memory_id,
                                               version=version, expected_version=expected_version)
    return Call("library", "RollbackMemory", request, lambda reply: reply.memory, retry=False)


def explain(caller: Caller, memory_id: str) -> Call[library_pb.ExplainMemoryResponse]:
    """Where the memory came from and what happened to it: source, versions, supersede
    links and audit."""
    request = library_pb.ExplainMemoryRequest(caller=caller, memory_id=memory_id)
    return Call("library", "ExplainMemory", request, lambda reply: reply, retry=True)


# threads, context, runs


def _message(message: message_pb2.Message | Mapping[str, Any]) -> message_pb2.Message:
    if isinstance(message, message_pb2.Message):
        return message
    fields = dict(message)
    fields.setdefault("id", _request_id())
    parsed = message_pb2.Message(role=_enum(message_pb2.Role, fields.pop("role", 0), "role"))
    return json_format.ParseDict(fields, parsed)


def append(caller: Caller, thread_id: str,
           messages: Sequence[message_pb2.Message | Mapping[str, Any]], *,
           thread_metadata: Mapping[str, Any] | None = None) -> Call[list[int]]:
    """Appends to the thread (creating it); returns the messages' offsets. A message is a
    generated Message or a mapping such as ``{"role": "user", "content": "..."}``; one
    without an id gets a generated one, which makes a retried append append nothing twice."""
    request = gateway_pb.AppendMessagesRequest(
        caller=caller, thread_id=thread_id, messages=[_message(m) for m in messages],
        **_given(thread_metadata=_struct(thread_metadata)))
    return Call("gateway", "AppendMessages", request, lambda reply: list(reply.offsets), retry=True)


def build_context(caller: Caller, thread_id: str, *, task: str | None = None,
                  run_id: str | None = None, delegated: bool = False,
                  thread_metadata: Mapping[str, Any] | None = None,
                  ) -> Call[gateway_pb.BuildContextResponse]:
    """The next turn's messages (pinned facts, summary, recent window) and tools."""
    request = gateway_pb.BuildContextRequest(
        caller=caller, thread_id=thread_id, delegated=delegated,
        **_given(task=task, run_id=run_id, thread_metadata=_struct(thread_metadata)))
    return Call("gateway", "BuildContext", request, lambda reply: reply, retry=True)


def start_run(caller: Caller, thread_id: str, *, run_id: str | None = None,
              credentials: Sequence[str] = ()) -> Call[run_pb2.Run]:
    """Opens a run on the thread (``run_id`` generated when not given); ``credentials``:
    the secrets the run was given, masked out of everything learned from it."""
    request = run_pb.StartRunRequest(caller=caller, thread_id=thread_id,
                                     run_id=run_id or _request_id(), credentials=credentials)
    # Starting the same run again is deduplicated, so a retry is safe.
    return Call("runs", "StartRun", request, lambda reply: reply.run, retry=True)


def finish_run(caller: Caller, thread_id: str, run_id: str, *,
               outcome: str | int = "succeeded",
               credentials: Sequence[str] = ()) -> Call[run_pb2.Run]:
    """Closes the run with succeeded, failed or cancelled."""
    request = run_pb.FinishRunRequest(
        caller=caller, thread_id=thread_id, run_id=run_id, credentials=credentials,
        outcome=_enum(run_pb2.RunOutcome, outcome, "outcome"))
    return Call("runs", "FinishRun", request, lambda reply: reply.run, retry=True)


def get_run(caller: Caller, thread_id: str, run_id: str = "") -> Call[run_pb2.Run]:
    """A run of the thread, or its open run when ``run_id`` is empty."""
    request = run_pb.GetRunRequest(caller=caller, thread_id=thread_id, run_id=run_id)
    return Call("runs", "GetRun", request, lambda reply: reply.run, retry=True)


# feedback and outcomes on a search's receipt


def feedback(caller: Caller, receipt_id: str, *, helpful: bool,
             memory_ids: Sequence[str] = ()) -> Call[retrieval_pb.RecordFeedbackResponse]:
    """Rates what a search delivered (or the ``memory_ids`` of it)."""
    request = retrieval_pb.RecordFeedbackRequest(caller=caller, receipt_id=receipt_id,
                                                 helpful=helpful, memory_ids=memory_ids,
                                                 request_id=_request_id())
    return Call("retrieval", "RecordFeedback", request, lambda reply: reply, retry=True)


def outcome(caller: Caller, receipt_id: str,
            outcome: str | int) -> Call[retrieval_pb.RecordOutcomeResponse]:
    """How the run that used a search ended: succeeded credits what it delivered, failed
    counts against it, cancelled credits nothing."""
    request = retrieval_pb.RecordOutcomeRequest(
        caller=caller, receipt_id=receipt_id, request_id=_request_id(),
        outcome=_enum(run_pb2.RunOutcome, outcome, "outcome"))
    return Call("retrieval", "RecordOutcome", request, lambda reply: reply, retry=True)


# keys (admin keys; the caller is the key, so these ignore the stated caller)


def create_key(_: Caller, name: str, *, role: str | int = "agent", act_for_users: bool = False,
               user_id: str | None = None,
               agent_ids: Sequence[str] = ()) -> Call[key_pb.CreateKeyResponse]:
    """A new key of the account: ``.key`` (what it may do) and ``.secret`` (shown once)."""
    request = key_pb.CreateKeyRequest(name=name, role=_enum(principal_pb2.KeyRole, role, "role"),
                                      act_for_users=act_for_users, agent_ids=agent_ids,
                                      **_given(user_id=user_id))
    return Call("keys", "CreateKey", request, lambda reply: reply, retry=False)


def list_keys(_: Caller) -> Call[list[key_pb.ApiKey]]:
    """The account's keys, revoked ones included, oldest first (never secrets)."""
    return Call("keys", "ListKeys", key_pb.ListKeysRequest(), lambda reply: list(reply.keys),
                retry=True)


def rotate_key(_: Caller, key_id: str, *,
               grace_seconds: int = 0) -> Call[key_pb.RotateKeyResponse]:
    """A new secret (``.secret``) for the key; the old one works ``grace_seconds`` more."""
    request = key_pb.RotateKeyRequest(key_id=key_id, grace_seconds=grace_seconds)
    return Call("keys", "RotateKey", request, lambda reply: reply, retry=False)


def revoke_key(_: Caller, key_id: str) -> Call[key_pb.ApiKey]:
    request = key_pb.RevokeKeyRequest(key_id=key_id)
    return Call("keys", "RevokeKey", request, lambda reply: reply.key, retry=False)


def mint_user_token(_: Caller, user_id: str, agent_id: str, *,
                    ttl_seconds: int = 0) -> Call[key_pb.MintUserTokenResponse]:
    """A short-lived token (``.token``) acting as one user with one agent (a key with
    act_for_users mints it)."""
    request = key_pb.MintUserTokenRequest(user_id=user_id, agent_id=agent_id,
                                          ttl_seconds=ttl_seconds)
    return Call("keys", "MintUserToken", request, lambda reply: reply, retry=False)
