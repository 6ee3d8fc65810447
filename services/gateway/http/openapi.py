"""The OpenAPI 3.1 document of the REST routes, derived from the protos.

Schemas are the request and response messages in the proto3 JSON mapping,
read from the same descriptors the routes parse with (and the aliases of
``rest.OPERATIONS``), so the document cannot drift from what the server accepts.
Descriptions, required fields and examples come from the protos' comments
(``libs.proto_docs``), the same text ``grpcurl describe`` shows.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor

from libs import proto_docs
from services.gateway.http.rest import ACCOUNT, OPERATIONS, SERVICES, Operation, enum_prefix

FD = descriptor.FieldDescriptor
_SCALARS: dict[int, dict[str, Any]] = {
    FD.TYPE_STRING: {"type": "string"}, FD.TYPE_BOOL: {"type": "boolean"},
    FD.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
    FD.TYPE_DOUBLE: {"type": "number"}, FD.TYPE_FLOAT: {"type": "number"},
    FD.TYPE_INT32: {"type": "integer", "format": "int32"},
    FD.TYPE_SINT32: {"type": "integer", "format": "int32"},
    FD.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    FD.TYPE_UINT32: {"type": "integer", "format": "int64", "minimum": 0},
    FD.TYPE_FIXED32: {"type": "integer", "format": "int64", "minimum": 0},
    # 64-bit integers are JSON strings in the proto3 mapping (and numbers are accepted).
    **{kind: {"type": ["string", "integer"], "format": "int64"} for kind in (
        FD.TYPE_INT64, FD.TYPE_SINT64, FD.TYPE_SFIXED64, FD.TYPE_UINT64, FD.TYPE_FIXED64)},
}
_WELL_KNOWN = {
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Value": {},
    "google.protobuf.ListValue": {"type": "array"},
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?\d+(\.\d+)?s$"},
    "google.protobuf.FieldMask": {"type": "string",
                                  "description": "Comma-separated field names (camelCase)"},
}
ERROR_SCHEMA = {
    "type": "object",
    "required": ["code", "reason", "message"],
    "properties": {
        "code": {"type": "string", "description": "gRPC status code name"},
        "reason": {"type": "string", "description": "Stable UPPER_SNAKE reason (ErrorInfo)"},
        "message": {"type": "string"},
        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
        "fieldViolations": {"type": "array", "items": {
            "type": "object", "properties": {"field": {"type": "string"},
                                             "description": {"type": "string"}}}},
    },
}


class _Schemas:
    def __init__(self) -> None:
        self.components: dict[str, Any] = {"Error": ERROR_SCHEMA}

    def ref(self, message: descriptor.Descriptor) -> dict[str, Any]:
        if message.full_name in _WELL_KNOWN:
            return dict(_WELL_KNOWN[message.full_name])
        if message.full_name not in self.components:
            self.components[message.full_name] = {}  # placeholder: messages may recurse
            self.components[message.full_name] = self.message(message)
        return {"$ref": f"#/components/schemas/{message.full_name}"}

    def message(self, message: descriptor.Descriptor, *, omit=()) -> dict[str, Any]:
        fields = [field for field in message.fields if field.name not in omit]
        schema: dict[str, Any] = {"type": "object", "additionalProperties": False,
                                  "properties": {f.json_name: self.field(f) for f in fields}}
        required = [f.json_name for f in fields if _documented(f.full_name).required]
        if required:
            schema["required"] = required
        return _described(schema, message.full_name)

    def field(self, field: descriptor.FieldDescriptor) -> dict[str, Any]:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            value = field.message_type.fields_by_name["value"]
            schema: dict[str, Any] = {"type": "object",
                                      "additionalProperties": self.single(value)}
        elif field.is_repeated:
            schema = {"type": "array", "items": self.single(field)}
        else:
            schema = self.single(field)
        if "$ref" in schema:  # a $ref's siblings are ignored by some tools: wrap it
            schema = {"allOf": [schema]}
        return _described(schema, field.full_name)

    def single(self, field: descriptor.FieldDescriptor) -> dict[str, Any]:
        if field.enum_type is not None:  # full names, and short ones (rest.py accepts both)
            names = [v.name for v in field.enum_type.values]
            prefix = enum_prefix(field.enum_type)
            return {"type": "string", "enum": names + [
                n.removeprefix(prefix).lower() for n in names if prefix and n.startswith(prefix)]}
        if field.message_type is not None:
            return self.ref(field.message_type)
        return dict(_SCALARS[field.type])


_NOTHING = proto_docs.Doc("")


_GATEWAY, _MEMORY = "agentmemory.gateway.v1.", "agentmemory.agent_memory.v1."


def _documented(full_name: str) -> proto_docs.Doc:
    """The comment of ``full_name``; for a gateway message that mirrors agent memory's
    field for field (library, retrieval), the comment of agent memory's field."""
    found = proto_docs.doc(full_name) or _NOTHING
    if found.text in ("", "Required.") and full_name.startswith(_GATEWAY):
        mirrored = proto_docs.doc(_MEMORY + full_name.removeprefix(_GATEWAY))
        if mirrored is not None:
            return mirrored
    return found


def _described(schema: dict[str, Any], full_name: str) -> dict[str, Any]:
    """``schema`` with the proto comment of ``full_name`` as its description and example."""
    doc = _documented(full_name)
    if doc.text:
        schema["description"] = doc.text
    if doc.has_example:
        schema["examples"] = [doc.example]
    return schema


def _query_parameters(schemas: _Schemas, message: descriptor.Descriptor, prefix: str = "",
                      depth: int = 0) -> list[dict[str, Any]]:
    parameters = []
    for field in message.fields:
        name = f"{prefix}{field.json_name}"
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            continue  # ``name.<key>=<value>``: in the operation's description
        if field.message_type is not None and field.message_type.full_name not in _WELL_KNOWN:
            if depth < 3:
                parameters += _query_parameters(schemas, field.message_type, f"{name}.", depth + 1)
            continue
        schema = schemas.field(field)
        parameters.append({"name": name, "in": "query",
                           "required": depth == 0 and _documented(field.full_name).required,
                           "schema": schema,
                           **({"description": schema["description"]}
                              if "description" in schema else {}),
                           **({"explode": True} if field.is_repeated else {})})
    return parameters


def _alias(target: str) -> dict[str, Any]:
    if target == ACCOUNT:
        return {"type": "string", "description": "Optional: the API key's account (the key "
                                                 "fixes it); another is PERMISSION_DENIED."}
    return {"type": "string", "description": f"The same as {target}."}


def _operation(schemas: _Schemas, op: Operation) -> dict[str, Any]:
    method = op.method
    request = method.input_type
    parameters = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                  for name in op.path_fields]
    rpc = f"{SERVICES[op.service].full_name}.{op.rpc}"
    description = f"{_documented(rpc).text}\n\ngRPC: {SERVICES[op.service].full_name}/{op.rpc}."
    if not op.has_body:
        description += " Query: the request's fields by dotted JSON name; a map entry is " \
                       "`<map>.<key>=<value>` (e.g. `filter.tags.team=billing`)."
    spec: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "description": description,
        "security": [{"apiKey": []}],
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {
                "schema": schemas.ref(method.output_type)}}},
            "default": {"description": "Error, with the gRPC reason", "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    }
    if op.has_body:
        body = schemas.message(request, omit=op.path_fields)
        body["properties"].update({alias: _alias(target) for alias, target in op.aliases.items()})
        media: dict[str, Any] = {"schema": body}
        if op.example:
            media["example"] = op.example
        spec["requestBody"] = {"required": True, "content": {"application/json": media}}
    else:
        in_path = {request.fields_by_name[name].json_name for name in op.path_fields}
        parameters += [p for p in _query_parameters(schemas, request) if p["name"] not in in_path]
    spec["parameters"] = parameters
    return spec


def document(*, version: str) -> dict[str, Any]:
    schemas = _Schemas()
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.http_method.lower()] = _operation(schemas, op)
    return {
        "openapi": "3.1.0",
        "info": {"title": "agentmemory gateway", "version": version,
                 "description": "REST surface of the gateway: its gRPC services (GatewayService, "
                                "MemoryLibraryService, RetrievalService, RunService, "
                                "LearningService, KeyService) in the proto3 JSON mapping. MCP "
                                "is served at /mcp; this reference at /docs."},
        "paths": paths,
        "components": {"schemas": schemas.components, "securitySchemes": {
            "apiKey": {"type": "http", "scheme": "bearer",
                       "description": "An API key (Authorization: Bearer am_...) or a user "
                                      "token an act_for_users key minted (POST /v1/tokens)"}}},
    }
