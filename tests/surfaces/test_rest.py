"""REST (/v1) against gRPC: the same answers and the same error reasons for the same
requests; JSON errors; the OpenAPI document; authentication and accounts."""

from __future__ import annotations

import jsonschema
import pytest
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from httpx import AsyncClient
from openapi_spec_validator import validate as validate_openapi

from services.gateway.http.rest import OPERATIONS
from tests.surfaces import grpc_calls
from tests.surfaces.http_calls import auth, grpc, in_rest_words, rest

CALLER = {"agentId": "rest-agent", "userId": "ana", "surface": "SURFACE_AGENT"}
MESSAGES = [{"id": "m1", "role": "ROLE_USER", "content": "I moved to Porto last year."},
            {"id": "m2", "role": "ROLE_ASSISTANT", "content": "Noted: Porto."}]


# (REST method, path, body or query, the same request as gRPC fields)
SAME_REQUESTS = {
    "append": ("POST", "/v1/threads/{thread}/messages", {"caller": CALLER, "messages": MESSAGES},
               "AppendMessages", {"caller": CALLER, "messages": MESSAGES}),
    "context": ("POST", "/v1/threads/{thread}/context", {"caller": CALLER},
                "BuildContext", {"caller": CALLER}),
    "tools": ("GET", "/v1/tools", {"caller.agentId": "rest-agent",
                                   "caller.surface": "SURFACE_MCP_GATEWAY"},
              "ListTools", {"caller": {"agentId": "rest-agent", "surface": "SURFACE_MCP_GATEWAY"}}),
    "store": ("POST", "/v1/tools/memory_store:call",
              {"caller": CALLER, "arguments": {"key": "city", "content": "The user lives in Porto.",
                                               "category": "user_profile", "importance": 0.9}},
              "CallTool", {"caller": CALLER, "toolName": "memory_store", "arguments": {
                  "key": "city", "content": "The user lives in Porto.",
                  "category": "user_profile", "importance": 0.9}}),
    "recall": ("POST", "/v1/tools/memory_recall:call",
               {"caller": CALLER, "arguments": {"query": "Where does the user live?"}},
               "CallTool", {"caller": CALLER, "toolName": "memory_recall",
                            "arguments": {"query": "Where does the user live?"}}),
}


async def test_rest_and_grpc_give_the_same_answers(platform):
    key = platform.keys["acme"]
    for name in ("append", "store", "context", "tools", "recall"):
        method, path, body, rpc, fields = SAME_REQUESTS[name]
        path = path.format(thread="rest-thread")
        status, over_rest = await rest(platform, key, method, path,
                                       body if method != "GET" else None,
                                       body if method == "GET" else None)
        over_grpc = await grpc(platform, key, rpc, {**fields, "threadId": "grpc-thread"}
                               if "{thread}" in SAME_REQUESTS[name][1] else fields)
        assert status == 200, over_rest
        if name == "store":  # the second store of the same fact changes nothing
            assert over_rest["result"]["unchanged"] is False
            assert over_grpc["result"]["unchanged"] is True
            over_grpc["result"]["unchanged"] = False
        assert over_rest == over_grpc, name
    assert over_rest["result"]["entries"][0]["content"] == "The user lives in Porto."


ERRORS = [
    # (REST method, path, body, gRPC rpc, fields, HTTP status, reason)
    ("POST", "/v1/threads/t/context", {"caller": {**CALLER, "agentId": ""}},
     "BuildContext", {"caller": {**CALLER, "agentId": ""}, "threadId": "t"}, 400, "INVALID_FIELD"),
    ("POST", "/v1/threads/t/context", {"caller": {**CALLER, "surface": "SURFACE_UNSPECIFIED"}},
     "BuildContext", {"caller": {**CALLER, "surface": "SURFACE_UNSPECIFIED"}, "threadId": "t"},
     400, "INVALID_FIELD"),
    ("POST", "/v1/threads/bad%20id/context", {"caller": CALLER},
     "BuildContext", {"caller": CALLER, "threadId": "bad id"}, 400, "INVALID_FIELD"),
    ("POST", "/v1/threads/never-written/context", {"caller": CALLER},
     "BuildContext", {"caller": CALLER, "threadId": "never-written"}, 404, "THREAD_NOT_FOUND"),
    ("POST", "/v1/threads/t/messages", {"caller": CALLER},
     "AppendMessages", {"caller": CALLER, "threadId": "t"}, 400, "INVALID_FIELD"),
    ("POST", "/v1/tools/journal_message_search:call",
     {"caller": {**CALLER, "surface": "SURFACE_MCP_GATEWAY"}, "arguments": {"query": "x"}},
     "CallTool", {"caller": {**CALLER, "surface": "SURFACE_MCP_GATEWAY"},
                  "toolName": "journal_message_search", "arguments": {"query": "x"}},
     403, "TOOL_NOT_AVAILABLE"),
    ("POST", "/v1/tools/memory_recall:call", {"caller": CALLER, "arguments": {"limit": 3}},
     "CallTool", {"caller": CALLER, "toolName": "memory_recall", "arguments": {"limit": 3}},
     400, "INVALID_FIELD"),
    ("DELETE", "/v1/threads/never-written", None,
     "DeleteThread", {"caller": CALLER, "threadId": "never-written"}, 404, "THREAD_NOT_FOUND"),
]


@pytest.mark.parametrize("method, path, body, rpc, fields, status, reason", ERRORS)
async def test_rest_and_grpc_refuse_with_the_same_reason(platform, method, path, body, rpc,
                                                         fields, status, reason):
    key = platform.keys["acme"]
    params = None
    if method == "DELETE":
        params = {"caller.agentId": CALLER["agentId"], "caller.userId": CALLER["userId"],
                  "caller.surface": CALLER["surface"]}
    got_status, over_rest = await rest(platform, key, method, path, body, params)
    over_grpc = await grpc(platform, key, rpc, fields)
    assert (got_status, over_rest["reason"]) == (status, reason)
    assert over_rest == in_rest_words(over_grpc)  # REST names fields as it was sent them


@pytest.mark.parametrize("authorization, reason", [
    (None, "API_KEY_MISSING"), ("am_unknown_secret", "API_KEY_INVALID")])
async def test_rest_without_a_valid_key_is_401_like_grpc(platform, authorization, reason):
    for method, path, body, rpc, fields in SAME_REQUESTS.values():
        path = path.format(thread="t")
        status, over_rest = await rest(platform, authorization, method, path,
                                       body if method != "GET" else None,
                                       body if method == "GET" else None)
        over_grpc = await grpc(platform, authorization, rpc, {**fields, "threadId": "t"}
                               if "threadId" in pb.DESCRIPTOR.message_types_by_name[
                                   f"{rpc}Request"].fields_by_camelcase_name else fields)
        assert (status, over_rest["reason"]) == (401, reason), path
        assert over_rest == over_grpc


async def test_another_accounts_thread_and_memories_are_not_found(platform):
    acme, globex = platform.keys["acme"], platform.keys["globex"]
    caller = {**CALLER, "agentId": "tenant-check"}
    status, _ = await rest(platform, acme, "POST", "/v1/threads/private-thread/messages",
                           {"caller": caller, "messages": MESSAGES})
    assert status == 200
    await rest(platform, acme, "POST", "/v1/tools/memory_store:call", {
        "caller": caller, "arguments": {"key": "plan", "content": "Acme launches in June.",
                                        "category": "project_fact", "visibility": "shared"}})
    for method, path, body in [
            ("POST", "/v1/threads/private-thread/context", {"caller": caller}),
            ("POST", "/v1/threads/private-thread:purge", {"caller": caller})]:
        status, error = await rest(platform, globex, method, path, body)
        assert (status, error["reason"]) == (404, "THREAD_NOT_FOUND")
    status, recalled = await rest(platform, globex, "POST", "/v1/tools/memory_recall:call", {
        "caller": caller, "arguments": {"query": "When does Acme launch?"}})
    assert status == 200 and recalled["result"]["entries"] == []
    # Still there for its owner.
    status, context = await rest(platform, acme, "POST", "/v1/threads/private-thread/context",
                                 {"caller": caller})
    assert status == 200 and [m["content"] for m in context["messages"]] == [
        m["content"] for m in MESSAGES]


async def test_delete_and_purge_over_rest(platform):
    key, caller = platform.keys["acme"], {**CALLER, "agentId": "rest-deleter"}
    query = {"caller.agentId": "rest-deleter", "caller.userId": "ana"}
    for thread in ("to-delete", "to-purge"):
        await rest(platform, key, "POST", f"/v1/threads/{thread}/messages",
                   {"caller": caller, "messages": MESSAGES})
    assert await rest(platform, key, "DELETE", "/v1/threads/to-delete", params=query) == (200, {})
    assert await rest(platform, key, "POST", "/v1/threads/to-purge:purge",
                      {"caller": caller}) == (200, {})
    for thread in ("to-delete", "to-purge"):
        status, error = await rest(platform, key, "POST", f"/v1/threads/{thread}/context",
                                   {"caller": caller})
        assert (status, error["reason"]) == (404, "THREAD_NOT_FOUND")
    status, error = await rest(platform, key, "POST", "/v1/threads/to-purge/messages",
                               {"caller": caller, "messages": MESSAGES})
    assert (status, error["reason"]) == (400, "THREAD_PURGED")


async def _raw(platform, method: str, path: str, content: bytes | None = None,
               headers: dict | None = None):
    async with AsyncClient(base_url=platform.http, timeout=60) as http:
        return await http.request(method, path, content=content, headers={
            **auth(platform.keys["acme"]), "content-type": "application/json", **(headers or {})})


@pytest.mark.parametrize("content, field, reason", [
    (b"{not json", "body", "INVALID_JSON"),
    (b"[1, 2]", "body", "INVALID_JSON"),
    (b'{"caller": {"agent": "x"}}', "caller.agent", "INVALID_FIELD"),
    (b'{"caller": {"surface": "SURFACE_NOPE"}}', "caller.surface", "INVALID_FIELD"),
    (b'{"messages": [{"id": 5}]}', "messages.id", "INVALID_FIELD"),
    (b'{"threadId": "other"}', "threadId", "INVALID_FIELD"),
    # The checks every gRPC request gets in libs/server.py hold over HTTP too.
    (b'{"caller": {"agentId": "a", "surface": "SURFACE_AGENT"}, "messages": [{"id": "m1",'
     b' "role": "ROLE_USER", "content": "nul \\u0000 here"}]}', "messages[0].content",
     "INVALID_FIELD"),
])
async def test_bad_json_is_invalid_argument_naming_the_field(platform, content, field, reason):
    response = await _raw(platform, "POST", "/v1/threads/t/messages", content)
    error = response.json()
    assert response.status_code == 400
    assert (error["code"], error["reason"]) == ("INVALID_ARGUMENT", reason)
    assert error["fieldViolations"][0]["field"] == field


@pytest.mark.parametrize("content", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"caller": ' * 200 + b"{}" + b"}" * 200,
    b'{"caller": null, "messages": null}',
    b'{"messages": [[1, 2]]}',
    b'{"messages": [{"content": "\\ud800"}]}',
    b'{"messages": [{"offset": "12x"}]}',
    b'{"messages": [{"metadata": [1]}]}',
    b'{"caller": {"capabilities": [null]}}',
    "{\"caller\": {\"agentId\": \"\u00e9\u00e8\"}}".encode(),
    b"\xff\xfe",
])
async def test_odd_bodies_are_client_errors_never_internal(platform, content):
    response = await _raw(platform, "POST", "/v1/threads/t/messages", content)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["code"] in ("INVALID_ARGUMENT", "UNAUTHENTICATED")


async def test_unknown_query_parameters_are_refused(platform):
    response = await _raw(platform, "GET", "/v1/tools?caller.agentId=a&caller.nope=1")
    assert response.status_code == 400
    assert response.json()["fieldViolations"][0]["field"] == "caller.nope"


async def test_a_body_over_the_limit_is_413(platform):
    response = await _raw(platform, "POST", "/v1/threads/t/messages",
                          b'{"caller": {}, "pad": "' + b"x" * (17 * 1024 * 1024) + b'"}')
    assert response.status_code == 413
    assert response.json()["reason"] == "REQUEST_TOO_LARGE"


async def test_unknown_routes_and_methods_answer_json(platform):
    missing = await _raw(platform, "GET", "/v1/nothing-here")
    wrong = await _raw(platform, "PUT", "/v1/tools")
    assert (missing.status_code, missing.json()["reason"]) == (404, "ROUTE_NOT_FOUND")
    assert (wrong.status_code, wrong.json()["code"], wrong.json()["reason"]) == (
        405, "UNIMPLEMENTED", "METHOD_NOT_ALLOWED")
    assert wrong.headers["allow"] == wrong.json()["metadata"]["allowed"] == "GET, HEAD"


# Bad REST inputs: (method, path, body or query, the field named, words in the message).
# Fields are named as REST spells them (JSON names, seed 002's aliases), and messages say
# what a value must be, never what the parser said.
_VOCABULARY = [
    ("POST", "/v1/memory/retrieve", {"runId": "r", "topN": "ten"}, "topN",
     "must be an integer"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "asOf": "2026-01-01T00:00:00"}, "asOf",
     "RFC 3339"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "mode": "fast"}, "mode",
     "deterministic, assisted"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "tokenBudget": 10**20}, "tokenBudget",
     "must be an integer from"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "bogus": 1}, "bogus",
     "not a field of this request"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "tokenBudget": 100}, "tokenBudget",
     "256-32000"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "applicationId": "bad agent"},
     "applicationId", "must be"),
    ("POST", "/v1/memory/retrieve", {"runId": "r", "rerank": True}, "rerank",
     "mode assisted"),
    ("POST", "/v1/threads/t1/messages", {"caller": {"agentId": "a", "surface": "SURFACE_AGENT"},
                                         "messages": [{"id": "m", "role": "ROLE_USER",
                                                       "toolCalls": [{"id": 5}]}]},
     "messages.toolCalls.id", "must be a string"),
    ("GET", "/v1/memory", {"caller.agentId": "a", "pageSize": "many"}, "pageSize",
     "must be an integer"),
    ("POST", "/v1/threads/t1/context", {"caller": {"agentId": "a"}}, "caller.surface",
     "SURFACE_AGENT"),
    ("POST", "/v1/memory", {"caller": {"agentId": "a"}, "memory": {"kind": "decision"}},
     "memory.content", "required"),
]
_INTERNALS = ("invalid literal", "Message type", "Failed to parse", "does not match format",
              "agentmemory.", "Traceback", "expected string or bytes")


@pytest.mark.parametrize("method, path, given, field, words", _VOCABULARY)
async def test_rest_errors_speak_rest(platform, method, path, given, field, words):
    async with AsyncClient(base_url=platform.http, timeout=60) as http:
        response = await http.request(
            method, path, headers=auth(platform.keys["acme"]),
            json=given if method == "POST" else None,
            params=given if method == "GET" else None)
    error = response.json()
    assert response.status_code == 400, error
    assert error["fieldViolations"][0]["field"] == field, error
    assert error["metadata"].get("field", field) == field
    assert words in error["message"] and error["message"].startswith(f"{field}:"), error
    assert not any(internal in error["message"] for internal in _INTERNALS), error


async def test_request_ids_are_kept_or_made_and_echoed(platform):
    mine = await _raw(platform, "GET", "/v1/tools", headers={"x-request-id": "trace-me-42"})
    made = await _raw(platform, "GET", "/v1/tools")
    assert mine.headers["x-request-id"] == "trace-me-42"
    assert len(made.headers["x-request-id"]) == 32


async def test_the_openapi_document_is_valid_and_describes_the_answers(platform):
    async with AsyncClient(base_url=platform.http) as http:
        document = (await http.get("/openapi.json")).json()
    validate_openapi(document)
    operations = {(method.upper(), path): spec["operationId"]
                  for path, item in document["paths"].items() for method, spec in item.items()}
    assert operations == {(op.http_method, op.path): op.operation_id for op in OPERATIONS}
    assert len(set(operations.values())) == len(OPERATIONS)
    # Every method of every gateway service has a route (GetRun and ListAudit have two).
    assert {op.rpc for op in OPERATIONS} == set(grpc_calls.REQUESTS)
    key = platform.keys["acme"]
    status, body = await rest(platform, key, "POST", "/v1/threads/openapi/messages",
                              {"caller": CALLER, "messages": MESSAGES})
    status, context = await rest(platform, key, "POST", "/v1/threads/openapi/context",
                                 {"caller": CALLER})
    status, error = await rest(platform, key, "POST", "/v1/threads/openapi/context", {})

    def check(instance, reference: str) -> None:
        jsonschema.validate(instance, {"$ref": reference, "components": document["components"]})

    context_spec = document["paths"]["/v1/threads/{thread_id}/context"]["post"]
    check(context, context_spec["responses"]["200"]["content"]["application/json"]["schema"][
        "$ref"])
    check(error, "#/components/schemas/Error")
    request_schema = context_spec["requestBody"]["content"]["application/json"]["schema"]
    jsonschema.validate({"caller": CALLER}, {**request_schema,
                                             "components": document["components"]})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"caller": CALLER, "threadId": "x"},
                            {**request_schema, "components": document["components"]})
