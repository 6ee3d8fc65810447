"""REST: ``/v1/...`` routes onto GatewayService methods, JSON in and out.

Each route names a method of the gRPC service. Its request is the method's
request message in the proto3 JSON mapping (camelCase names, enums by name,
int64 as strings): path parameters fill their fields, and the other fields come
from the JSON body (POST) or the query string (GET, DELETE: ``caller.agentId=..``,
a repeated field repeats its parameter), as Google's HTTP/JSON transcoding does.
The reply is the response message in the same mapping. Errors are
``errors.response`` bodies with the gRPC reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor, json_format, message, message_factory
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from libs.errors import InvalidArgument, ResourceExhausted
from services.gateway.http import calls


@dataclass(frozen=True)
class Operation:
    http_method: str
    path: str  # {name} segments are fields of the request message
    rpc: str  # the GatewayService method
    summary: str

    @property
    def path_fields(self) -> list[str]:
        return re.findall(r"{(\w+)}", self.path)

    @property
    def has_body(self) -> bool:
        return self.http_method in ("POST", "PUT", "PATCH")


OPERATIONS = [
    Operation("POST", "/v1/threads/{thread_id}/messages", "AppendMessages",
              "Append messages to a thread (creates the thread on first use)."),
    Operation("POST", "/v1/threads/{thread_id}/context", "BuildContext",
              "The ordered conversation for one turn: pinned facts, summary, recent window."),
    Operation("GET", "/v1/tools", "ListTools", "The tools offered to the caller's surface."),
    Operation("POST", "/v1/tools/{tool_name}:call", "CallTool", "Run one tool."),
    Operation("DELETE", "/v1/threads/{thread_id}", "DeleteThread",
              "Remove the thread record (messages, summary and derived data remain)."),
    Operation("POST", "/v1/threads/{thread_id}:purge", "PurgeThread",
              "Delete the thread and everything derived from it."),
]

_PARSE_STEP = re.compile(r"Failed to parse (\w+) field: ")
_UNKNOWN_FIELD = re.compile(r'has no field named "([^"]+)"')


def _parse_error(exc: json_format.ParseError) -> InvalidArgument:
    """json_format's message names the fields on the way down; name them the same way."""
    text = str(exc)
    path = _PARSE_STEP.findall(text)
    unknown = _UNKNOWN_FIELD.search(text)
    if unknown:
        path.append(unknown.group(1))
    return InvalidArgument(".".join(path) or "body", _PARSE_STEP.sub("", text).strip())


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
    """``a.b=1&a.c=x&a.c=y`` -> {"a": {"b": "1", "c": ["x", "y"]}}, typed by the message."""
    fields: dict[str, Any] = {}
    for dotted in query:
        *parents, leaf = dotted.split(".")
        target, kind = fields, message_type
        for name in parents:
            field = _field(kind, name, dotted)
            if field.message_type is None:
                raise InvalidArgument(dotted, "not a field of the request")
            target, kind = target.setdefault(name, {}), field.message_type
        field = _field(kind, leaf, dotted)
        values = [_scalar(field, value, dotted) for value in query.getlist(dotted)]
        target[leaf] = values if field.is_repeated else values[-1]
    return fields


def _field(kind: descriptor.Descriptor, name: str, dotted: str) -> descriptor.FieldDescriptor:
    field = kind.fields_by_camelcase_name.get(name) or kind.fields_by_name.get(name)
    if field is None:
        raise InvalidArgument(dotted, "not a field of the request")
    return field


def _scalar(field: descriptor.FieldDescriptor, value: str, dotted: str) -> Any:
    if field.type != descriptor.FieldDescriptor.TYPE_BOOL:
        return value  # the JSON mapping accepts numbers and enums as strings
    if value not in ("true", "false"):
        raise InvalidArgument(dotted, "must be true or false")
    return value == "true"


async def parse(operation: Operation, request: Request, prototype: message.Message,
                max_bytes: int) -> message.Message:
    """The request message of ``operation`` from the path, and the body or query string."""
    descriptor_ = prototype.DESCRIPTOR
    fields = (await _json_body(request, max_bytes) if operation.has_body
              else _query_fields(request.query_params, descriptor_))
    for name in operation.path_fields:
        json_name = descriptor_.fields_by_name[name].json_name
        if name in fields or json_name in fields:
            raise InvalidArgument(json_name, "is given in the path, not in the request")
        fields[name] = request.path_params[name]
    try:
        return json_format.ParseDict(fields, prototype)
    except json_format.ParseError as exc:
        raise _parse_error(exc) from None


def to_json(reply: message.Message) -> dict[str, Any]:
    return json_format.MessageToDict(reply, always_print_fields_with_no_presence=True)


def routes(servicer, service: descriptor.ServiceDescriptor, max_bytes: int) -> list[Route]:
    def endpoint(operation: Operation) -> Callable:
        method = service.methods_by_name[operation.rpc]
        request_class = message_factory.GetMessageClass(method.input_type)
        handler = getattr(servicer, operation.rpc)

        async def handle(request: Request) -> JSONResponse:
            parsed = await parse(operation, request, request_class(), max_bytes)
            reply = await calls.invoke(handler, parsed, request.headers)
            return JSONResponse(to_json(reply))

        return handle

    return [Route(op.path, endpoint(op), methods=[op.http_method], name=op.rpc)
            for op in OPERATIONS]
