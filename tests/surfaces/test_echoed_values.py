"""Values an error would echo, sent oversized (a 5,000-character tag key, weight name or
tool name) and integers past what their column holds (a version over PostgreSQL's
``integer``): INVALID_ARGUMENT naming the field with a short message, the same over
gRPC and REST; never INTERNAL, nor gRPC's own RESOURCE_EXHAUSTED "Stream removed" of
trailers over its 8 KiB limit."""

from __future__ import annotations

import json

import pytest

from tests.surfaces.http_calls import grpc, in_rest_words, rest

ACCOUNT, AGENT = "echoes", "echo-agent"
CALLER = {"agentId": AGENT}
TOOL_CALLER = {**CALLER, "surface": "SURFACE_AGENT"}
HUGE = "k" * 5000
#: Two bytes each in UTF-8, six once percent-encoded in grpc-message.
WIDE = "\u00e9" * 5000
INT4_MAX = 2**31 - 1
#: A refusal's whole JSON body stays under this (the message names the field, not the value).
BRIEF_BYTES = 2000


@pytest.fixture(scope="module")
def key(platform) -> str:
    platform.bind_memory(ACCOUNT, AGENT)
    return platform.key(ACCOUNT)


@pytest.fixture(scope="module")
async def memory_id(platform, key) -> str:
    status, body = await rest(platform, key, "POST", "/v1/memory", {
        "caller": CALLER, "memory": {"kind": "decision", "content": "Deploys are on Tuesdays."}})
    assert status == 200, body
    return body["memory"]["id"]


def assert_brief_refusal(body: dict, field: str) -> None:
    assert (body["code"], [v["field"] for v in body["fieldViolations"]]) == (
        "INVALID_ARGUMENT", [field]), body
    assert len(json.dumps(body, ensure_ascii=False).encode()) < BRIEF_BYTES


def _retrieve(case: str, field: str, **fields):
    """The same RetrieveContext request over REST (seed 002's names) and gRPC."""
    return pytest.param(
        "POST", "/v1/memory/retrieve",
        {"applicationId": AGENT, "runId": "r1", "semanticQuery": "deploys", **fields},
        "RetrieveContext", {"caller": CALLER, "runId": "r1", "semanticQuery": "deploys", **fields},
        field, id=case)


# (REST method, path, body, gRPC method, fields, the field named, as REST names it)
OVERSIZED = [
    pytest.param("POST", "/v1/memory", {"caller": CALLER, "memory": {
        "kind": "decision", "content": "x", "tags": {HUGE: "v"}}},
        "AddMemory", {"caller": CALLER, "memory": {
            "kind": "MEMORY_KIND_DECISION", "content": "x", "tags": {HUGE: "v"}}},
        "memory.tags", id="AddMemory tags key"),
    _retrieve("RetrieveContext tags key", "tags", tags={WIDE: "v"}),
    _retrieve("leg_weights key", "overrides.legWeights", overrides={"legWeights": {HUGE: 1}}),
    _retrieve("factor_weights key", "overrides.factorWeights",
              overrides={"factorWeights": {WIDE: 1}}),
    pytest.param("POST", f"/v1/tools/{HUGE}:call", {"caller": TOOL_CALLER, "arguments": {}},
                 "CallTool", {"caller": TOOL_CALLER, "toolName": HUGE}, "toolName", id="tool_name"),
    pytest.param("POST", "/v1/tools/memory_recall:call",
                 {"caller": TOOL_CALLER, "arguments": {"query": "x", WIDE: 1}},
                 "CallTool", {"caller": TOOL_CALLER, "toolName": "memory_recall",
                              "arguments": {"query": "x", WIDE: 1}},
                 "arguments", id="argument name"),
]


@pytest.mark.parametrize("method, path, body, rpc, fields, field", OVERSIZED)
async def test_an_oversized_value_is_refused_briefly_naming_its_field(
        platform, key, method, path, body, rpc, fields, field):
    status, over_rest = await rest(platform, key, method, path, body)
    over_grpc = await grpc(platform, key, rpc, fields)
    assert status == 400
    assert_brief_refusal(over_rest, field)
    assert over_rest == in_rest_words(over_grpc)


@pytest.mark.parametrize("name, value", [("version", INT4_MAX + 1), ("version", 2**63 - 1),
                                         ("expectedVersion", INT4_MAX + 1)])
async def test_a_version_past_the_integer_column_is_invalid_argument(
        platform, key, memory_id, name, value):
    fields = {"caller": CALLER, "version": "1", name: str(value)}
    status, over_rest = await rest(platform, key, "POST", f"/v1/memory/{memory_id}:rollback",
                                   fields)
    over_grpc = await grpc(platform, key, "RollbackMemory", {**fields, "memoryId": memory_id})
    assert status == 400
    assert_brief_refusal(over_rest, name)
    assert over_rest == in_rest_words(over_grpc)


async def test_the_largest_version_is_merely_not_found(platform, key, memory_id):
    fields = {"caller": CALLER, "version": str(INT4_MAX)}
    status, over_rest = await rest(platform, key, "POST", f"/v1/memory/{memory_id}:rollback",
                                   fields)
    assert (status, over_rest["reason"]) == (404, "VERSION_NOT_FOUND")


@pytest.mark.parametrize("body", [{"caller": CALLER, HUGE: 1},
                                  {"caller": CALLER, "memory": {"kind": WIDE}}])
async def test_rest_json_that_does_not_parse_is_refused_briefly(platform, key, body):
    """What does not parse is named briefly (a long name by its start and length), and a
    long value is not echoed: the message says what it must be."""
    status, refused = await rest(platform, key, "POST", "/v1/memory", body)
    assert (status, refused["code"]) == (400, "INVALID_ARGUMENT")
    assert HUGE[:100] not in refused["message"] and WIDE[:100] not in refused["message"]
    assert len(json.dumps(refused, ensure_ascii=False).encode()) < BRIEF_BYTES
