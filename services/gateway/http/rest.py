"""REST: ``/v1/...`` routes onto the gateway's gRPC methods, JSON in and out.

Each route names a method of one of the gateway's gRPC services. Its request is
the method's request message in the proto3 JSON mapping (camelCase names, enums
by name, int64 as strings): path parameters fill their fields, and the other
fields come from the JSON body (POST, PATCH) or the query string (GET, DELETE:
``caller.agentId=..``, a repeated field repeats its parameter, a map entry is
``filter.tags.<key>=<value>``), as Google's HTTP/JSON transcoding does. An enum
value may also be given by its short name (``assisted`` for
``RETRIEVAL_MODE_ASSISTED``). The reply is the response message in the same
mapping. Errors are ``errors.response`` bodies with the gRPC reason.

Seed 002 names two request fields of ``POST /v1/memory/retrieve`` differently
from the proto; ``Operation.aliases`` maps them, and nothing else differs:

- ``applicationId`` is ``caller.agentId`` (the application is the calling agent);
- ``workspaceId`` is the account, which the API key fixes: optional, and when
  given it must be the key's account (PERMISSION_DENIED, reason
  WORKSPACE_MISMATCH, otherwise; the same answer whether or not that account
  exists).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agentmemory.gateway.v1 import (
    gateway_service_pb2,
    key_service_pb2,
    learning_service_pb2,
    memory_library_service_pb2,
    retrieval_service_pb2,
    run_service_pb2,
)
from google.protobuf import descriptor, json_format, message, message_factory
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from libs.errors import DomainError, InvalidArgument, PermissionDenied, ResourceExhausted
from services.gateway.http import calls, vocabulary
from services.gateway.keys import ApiKeys

#: The gRPC services behind the routes, by the names ``calls.Servicers`` uses.
SERVICES: dict[str, descriptor.ServiceDescriptor] = {
    "gateway": gateway_service_pb2.DESCRIPTOR.services_by_name["GatewayService"],
    "library": memory_library_service_pb2.DESCRIPTOR.services_by_name["MemoryLibraryService"],
    "retrieval": retrieval_service_pb2.DESCRIPTOR.services_by_name["RetrievalService"],
    "runs": run_service_pb2.DESCRIPTOR.services_by_name["RunService"],
    "learning": learning_service_pb2.DESCRIPTOR.services_by_name["LearningService"],
    "keys": key_service_pb2.DESCRIPTOR.services_by_name["KeyService"],
}
#: An alias target: the API key's account (seed 002's workspaceId).
ACCOUNT = "<the API key's account>"
SEED_002_RETRIEVE = {"applicationId": "caller.agentId", "workspaceId": ACCOUNT}


@dataclass(frozen=True)
class Operation:
    http_method: str
    path: str  # {name} segments are fields of the request message
    service: str  # a key of SERVICES
    rpc: str
    summary: str
    #: JSON name in the body -> the request field it stands for (dotted JSON names).
    aliases: Mapping[str, str] = field(default_factory=dict)
    name: str = ""  # the operationId, when two routes share a method
    #: A request body for the reference page (the OpenAPI document's example).
    example: Mapping[str, Any] | None = None

    @property
    def operation_id(self) -> str:
        return self.name or self.rpc

    @property
    def method(self) -> descriptor.MethodDescriptor:
        return SERVICES[self.service].methods_by_name[self.rpc]

    @property
    def path_fields(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)

    @property
    def has_body(self) -> bool:
        return self.http_method in ("POST", "PUT", "PATCH")


_MEMORY = "/v1/memory/{memory_id}"
_RUN = "/v1/threads/{thread_id}/runs/{run_id}"
OPERATIONS = [
    # GatewayService: threads, context, tools.
    Operation("POST", "/v1/threads/{thread_id}/messages", "gateway", "AppendMessages",
              "Append messages to a thread (creates the thread on first use)."),
    Operation("POST", "/v1/threads/{thread_id}/context", "gateway", "BuildContext",
              "The ordered conversation for one turn: pinned facts, summary, recent window."),
    Operation("GET", "/v1/tools", "gateway", "ListTools",
              "The tools offered to the caller's surface."),
    Operation("POST", "/v1/tools/{tool_name}:call", "gateway", "CallTool", "Run one tool."),
    Operation("PATCH", "/v1/threads/{thread_id}", "gateway", "UpdateThread",
              "Replace a thread's metadata."),
    Operation("DELETE", "/v1/threads/{thread_id}", "gateway", "DeleteThread",
              "Remove the thread record (messages, summary and derived data remain)."),
    Operation("POST", "/v1/threads/{thread_id}:purge", "gateway", "PurgeThread",
              "Delete the thread and everything derived from it."),
    # RetrievalService: seed 002's compiled context, feedback and outcomes.
    Operation("POST", "/v1/memory/retrieve", "retrieval", "RetrieveContext",
              "A compiled, token-budgeted context for a task, with a delivery receipt.",
              aliases=SEED_002_RETRIEVE, example={
                  "workspaceId": "demo", "runId": "billing-refactor-13",
                  "semanticQuery": "how are invoice numbers generated", "topN": 10,
                  "tags": {"facet": "billing"}, "tokenBudget": 2000}),
    Operation("POST", "/v1/memory/feedback", "retrieval", "RecordFeedback",
              "Rate what a receipt delivered (helpful or not)."),
    Operation("POST", "/v1/memory/outcome", "retrieval", "RecordOutcome",
              "How the run that used a receipt's delivery ended."),
    Operation("GET", "/v1/memory/receipts/{receipt_id}", "retrieval", "GetReceipt",
              "What a receipt delivered."),
    # MemoryLibraryService: browse, fix and move memories.
    Operation("GET", "/v1/memory", "library", "ListMemories",
              "Memories the caller can see, newest first, filtered."),
    Operation("POST", "/v1/memory", "library", "AddMemory", "Add a memory."),
    Operation("GET", _MEMORY, "library", "GetMemory", "A memory with its versions."),
    Operation("PATCH", _MEMORY, "library", "EditMemory", "Edit a memory (a new version)."),
    Operation("DELETE", _MEMORY, "library", "DeleteMemory",
              "Delete a memory (restorable within the retention window)."),
    Operation("POST", f"{_MEMORY}:restore", "library", "RestoreMemory",
              "Restore a deleted memory."),
    Operation("POST", f"{_MEMORY}:rollback", "library", "RollbackMemory",
              "Make an earlier version current again (a new version)."),
    Operation("POST", f"{_MEMORY}:supersede", "library", "SupersedeMemory",
              "Mark a memory superseded by a newer one."),
    Operation("GET", f"{_MEMORY}/explain", "library", "ExplainMemory",
              "A memory's source, provenance, versions, supersede links and audit trail."),
    Operation("GET", f"{_MEMORY}/audit", "library", "ListAudit",
              "One memory's audit trail, newest first.", name="ListMemoryAudit"),
    Operation("GET", "/v1/audit", "library", "ListAudit",
              "The audit trail of everything the caller can see, newest first."),
    Operation("GET", "/v1/memory:export", "library", "ExportMemories",
              "A page of the export (JSON Lines)."),
    Operation("POST", "/v1/memory:import", "library", "ImportMemories",
              "Import JSON Lines (admins)."),
    Operation("GET", "/v1/memory:summary", "library", "SummarizeMemories",
              "How many live memories each agent has, by scope and kind."),
    Operation("GET", "/v1/settings/account", "library", "GetAccountSettings",
              "The account's memory settings."),
    Operation("PATCH", "/v1/settings/account", "library", "UpdateAccountSettings",
              "Change the account's memory settings (admins)."),
    Operation("GET", "/v1/settings/agent", "library", "GetAgentSettings",
              "The caller's agent's memory settings."),
    Operation("PATCH", "/v1/settings/agent", "library", "UpdateAgentSettings",
              "Change the agent's settings, e.g. bind Memory (admins)."),
    # RunService.
    Operation("POST", "/v1/threads/{thread_id}/runs", "runs", "StartRun", "Open a run."),
    Operation("POST", f"{_RUN}:finish", "runs", "FinishRun", "Close a run with its outcome."),
    Operation("GET", _RUN, "runs", "GetRun", "A run of the thread."),
    Operation("GET", "/v1/threads/{thread_id}/run", "runs", "GetRun",
              "The thread's open run.", name="GetOpenRun"),
    Operation("POST", f"{_RUN}/feedback", "runs", "RecordRunFeedback",
              "A thumbs up or down on the run's reply."),
    # LearningService: the suggestions queue and procedures.
    Operation("GET", "/v1/suggestions", "learning", "ListSuggestions",
              "The suggestions queue (pending unless a status is given)."),
    Operation("POST", "/v1/suggestions/{suggestion_id}:accept", "learning", "AcceptSuggestion",
              "Accept a suggestion, optionally with edited content."),
    Operation("POST", "/v1/suggestions/{suggestion_id}:reject", "learning", "RejectSuggestion",
              "Reject a suggestion."),
    Operation("GET", "/v1/procedures", "learning", "ListProcedures",
              "The agent's learned procedures."),
    Operation("DELETE", "/v1/procedures/{procedure_id}", "learning", "DeleteProcedure",
              "Delete a procedure."),
    Operation("GET", "/v1/learning/audit", "learning", "ListLearningAudit",
              "The learning audit trail."),
    # KeyService: the account's API keys and user tokens.
    Operation("POST", "/v1/keys", "keys", "CreateKey", "Create an API key (admins)."),
    Operation("GET", "/v1/keys", "keys", "ListKeys", "The account's API keys (admins)."),
    Operation("POST", "/v1/keys/{key_id}:rotate", "keys", "RotateKey",
              "Give a key a new secret, the old one working for a grace period (admins)."),
    Operation("DELETE", "/v1/keys/{key_id}", "keys", "RevokeKey", "Revoke a key (admins)."),
    Operation("GET", "/v1/keys:events", "keys", "ListKeyEvents",
              "What was done with the account's keys, newest first (admins)."),
    Operation("POST", "/v1/tokens", "keys", "MintUserToken",
              "A short-lived user token for one user and agent (act_for_users keys)."),
]

async def _json_body(request: Request, max_bytes: int) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > max_bytes:
            raise _too_large(max_bytes)
    if not data:
        return {}
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InvalidArgument("body", f"not valid JSON: {exc}", reason="INVALID_JSON") from None
    if not isinstance(value, dict):
        raise InvalidArgument("body", "must be a JSON object", reason="INVALID_JSON")
    return value


def _too_large(max_bytes: int) -> ResourceExhausted:
    return ResourceExhausted(f"request body larger than {max_bytes} bytes",
                             reason="REQUEST_TOO_LARGE")


def _query_fields(query, message_type: descriptor.Descriptor) -> dict[str, Any]:
    """``a.b=1&a.c=x&a.c=y&a.m.k=v`` -> {"a": {"b": "1", "c": ["x", "y"], "m": {"k": "v"}}},
    typed by the message."""
    fields: dict[str, Any] = {}
    for dotted in query:
        names = dotted.split(".")
        target, kind = fields, message_type
        for position, name in enumerate(names):
            field_ = _field(kind, name, dotted)
            rest = names[position + 1:]
            entry = _map_entry(field_)
            if entry is not None and len(rest) == 1:
                value = entry.fields_by_name["value"]
                target.setdefault(name, {})[rest[0]] = _scalar(value, query[dotted], dotted)
                break
            if not rest:
                values = [_scalar(field_, value, dotted) for value in query.getlist(dotted)]
                target[name] = values if field_.is_repeated else values[-1]
                break
            if field_.message_type is None or field_.is_repeated:
                raise InvalidArgument(dotted, "not a field of the request")
            target, kind = target.setdefault(name, {}), field_.message_type
    return fields


def _map_entry(field_: descriptor.FieldDescriptor) -> descriptor.Descriptor | None:
    """The entry type of a map field; None for any other field."""
    entry = field_.message_type
    return entry if entry is not None and entry.GetOptions().map_entry else None


def _field(kind: descriptor.Descriptor, name: str, dotted: str) -> descriptor.FieldDescriptor:
    field_ = kind.fields_by_camelcase_name.get(name) or kind.fields_by_name.get(name)
    if field_ is None:
        raise InvalidArgument(dotted, "not a field of the request")
    return field_


def _scalar(field_: descriptor.FieldDescriptor, value: str, dotted: str) -> Any:
    if field_.type != descriptor.FieldDescriptor.TYPE_BOOL:
        return value  # the JSON mapping accepts numbers and enums as strings
    if value not in ("true", "false"):
        raise InvalidArgument(dotted, "must be true or false")
    return value == "true"


def enum_names(enum: descriptor.EnumDescriptor) -> list[str]:
    """The names REST accepts for ``enum``'s values: the short ones where there are."""
    prefix = enum_prefix(enum)
    return [v.name.removeprefix(prefix).lower() if prefix else v.name for v in enum.values
            if not v.name.endswith("_UNSPECIFIED")]


def enum_prefix(enum: descriptor.EnumDescriptor) -> str:
    """``RETRIEVAL_MODE_`` for RetrievalMode (its zero value is ``<PREFIX>UNSPECIFIED``);
    empty for an enum without such a zero value (it has no short names)."""
    zero = enum.values[0].name
    return zero.removesuffix("UNSPECIFIED") if zero.endswith("_UNSPECIFIED") else ""


def _full_enum_names(value: Any, kind: descriptor.Descriptor) -> Any:
    """``value`` (JSON for a ``kind`` message) with short enum names made full; anything
    of the wrong shape is left for json_format to refuse, naming the field."""
    if not isinstance(value, dict):
        return value
    for name, item in value.items():
        field_ = kind.fields_by_camelcase_name.get(name) or kind.fields_by_name.get(name)
        if field_ is None or _map_entry(field_) is not None:
            continue
        if field_.is_repeated and isinstance(item, list):
            value[name] = [_full_value(field_, one) for one in item]
        else:
            value[name] = _full_value(field_, item)
    return value


def _full_value(field_: descriptor.FieldDescriptor, item: Any) -> Any:
    if field_.enum_type is not None and isinstance(item, str):
        prefix = enum_prefix(field_.enum_type)
        full = prefix + item.upper()
        known = prefix and item.islower() and full in field_.enum_type.values_by_name
        return full if known else item
    if field_.message_type is not None:
        return _full_enum_names(item, field_.message_type)
    return item


def _apply_aliases(fields: dict[str, Any], aliases: Mapping[str, str]) -> str | None:
    """Moves each alias to the field it stands for; returns the stated account, if any."""
    account = None
    for alias, target in aliases.items():
        if alias not in fields:
            continue
        value = fields.pop(alias)
        if not isinstance(value, str):
            raise InvalidArgument(alias, "must be a string")
        if target == ACCOUNT:
            account = value
            continue
        *parents, leaf = target.split(".")
        holder = fields
        for parent in parents:
            holder = holder.setdefault(parent, {})
            if not isinstance(holder, dict):
                raise InvalidArgument(parent, "must be an object")
        if holder.get(leaf, value) != value:
            raise InvalidArgument(alias, f"differs from {target}")
        holder[leaf] = value
    return account


async def parse(operation: Operation, request: Request, prototype: message.Message,
                max_bytes: int) -> tuple[message.Message, str | None]:
    """The request message of ``operation`` from the path, and the body or query string;
    and the account the request states (seed 002's workspaceId), if it states one."""
    # The stubs type it as upb's Descriptor or the pure-Python one: the same interface.
    descriptor_ = cast(descriptor.Descriptor, prototype.DESCRIPTOR)
    fields = (await _json_body(request, max_bytes) if operation.has_body
              else _query_fields(request.query_params, descriptor_))
    account = _apply_aliases(fields, operation.aliases)
    for name in operation.path_fields:
        json_name = descriptor_.fields_by_name[name].json_name
        if name in fields or json_name in fields:
            raise InvalidArgument(json_name, "is given in the path, not in the request")
        fields[name] = request.path_params[name]
    try:
        return json_format.ParseDict(_full_enum_names(fields, descriptor_), prototype), account
    except json_format.ParseError as exc:
        raise vocabulary.for_rest(vocabulary.parse_failure(str(exc), descriptor_, enum_names),
                                  operation.aliases) from None


async def check_account(keys: ApiKeys, headers: Mapping[str, str], account: str) -> None:
    """The stated account must be the key's (an unauthenticated caller learns nothing)."""
    key = await keys.authenticate(headers.get("authorization"))
    if account != key.account_id:
        raise PermissionDenied("workspaceId is not the API key's account",
                               reason="WORKSPACE_MISMATCH", metadata={"field": "workspaceId"})


def to_json(reply: message.Message) -> dict[str, Any]:
    return json_format.MessageToDict(reply, always_print_fields_with_no_presence=True)


def routes(servicers: calls.Servicers, keys: ApiKeys, max_bytes: int) -> list[Route]:
    def endpoint(operation: Operation) -> Callable:
        request_class = message_factory.GetMessageClass(operation.method.input_type)
        handler = servicers.method(operation.service, operation.rpc)

        async def handle(request: Request) -> JSONResponse:
            parsed, account = await parse(operation, request, request_class(), max_bytes)
            if account is not None:
                await check_account(keys, request.headers, account)
            try:
                reply = await calls.invoke(handler, parsed, request.headers)
            except DomainError as exc:
                raise vocabulary.for_rest(exc, operation.aliases) from None
            return JSONResponse(to_json(reply))

        return handle

    return [Route(op.path, endpoint(op), methods=[op.http_method], name=op.operation_id)
            for op in OPERATIONS]
