"""Through the gateway: an environment the account has not listed is refused on every
surface before anything is made, until an admin adds it; the operator's quotas refuse
what is over them (runs a day at the gateway, memories in agent memory)."""

from __future__ import annotations

import subprocess
import sys

import httpx
from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb

from tests.surfaces import grpc_calls
from tests.surfaces.mcp_calls import mcp_client
from tools import launch

ACCOUNT, AGENT = "envco", "env-agent"


def operator(platform, account: str, *arguments: str) -> str:
    """The operator's command line for account settings (agent memory's admin)."""
    done = subprocess.run(
        [sys.executable, "-m", "services.agent_memory.admin", "--address",
         platform.addresses["agent_memory"], "account-settings", "--account", account,
         *arguments], cwd=launch.ROOT, env=platform.env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def caller(environment: str = "") -> pb.Caller:
    return pb.Caller(agent_id=AGENT, environment=environment,
                     surface=principal_pb2.SURFACE_AGENT)


async def add(platform, key: str, environment: str, content: str) -> dict:
    return await grpc_calls.invoke(platform.grpc, key, "AddMemory",
                                   grpc_calls.REQUESTS["AddMemory"](
                                       caller=caller(environment),
                                       memory={"kind": 2, "content": content}))


async def test_an_unknown_environment_is_refused_everywhere_until_an_admin_adds_it(platform):
    key = platform.key(ACCOUNT)
    for name in ("fresh-1", "fresh-2", "fresh-3"):
        refused = await add(platform, key, name, "a fact")
        assert (refused["code"], refused["reason"], refused["fieldViolations"][0]["field"]) == (
            "INVALID_ARGUMENT", "ENVIRONMENT_UNKNOWN", "caller.environment"), refused
        assert "default" in refused["message"]
    appended = await grpc_calls.invoke(platform.grpc, key, "AppendMessages",
                                       grpc_calls.REQUESTS["AppendMessages"](
                                           caller=caller("fresh-1"), thread_id="t1",
                                           messages=[{"role": 1, "content": "hi"}]))
    assert appended["reason"] == "ENVIRONMENT_UNKNOWN"
    async with httpx.AsyncClient(base_url=platform.http, timeout=30) as http:
        rest = await http.post("/v1/memory", headers={"authorization": f"Bearer {key}"},
                               json={"caller": {"agentId": AGENT, "environment": "fresh-1"},
                                     "memory": {"kind": "MEMORY_KIND_PROJECT_FACT",
                                                "content": "a fact"}})
    assert (rest.status_code, rest.json()["reason"]) == (400, "ENVIRONMENT_UNKNOWN")
    platform.bind_memory(ACCOUNT, AGENT)
    async with mcp_client(platform, key, agent=AGENT) as client:
        client_headers_env = await client.call_tool("memory_recall", {"query": "x"})
    assert not client_headers_env.is_error  # the default environment is there
    await grpc_calls.invoke(platform.grpc, key, "UpdateAccountSettings",
                            grpc_calls.REQUESTS["UpdateAccountSettings"](
                                caller=caller(), settings={"environments": ["default",
                                                                            "fresh-1"]},
                                update_mask={"paths": ["environments"]}))
    added = await add(platform, key, "fresh-1", "a fact in fresh-1")
    assert added["memory"]["content"] == "a fact in fresh-1"
    assert (await add(platform, key, "fresh-2", "x"))["reason"] == "ENVIRONMENT_UNKNOWN"
    shown = await grpc_calls.invoke(platform.grpc, key, "GetAccountSettings",
                                    grpc_calls.REQUESTS["GetAccountSettings"](caller=caller()))
    assert shown["settings"]["environments"] == ["default", "fresh-1"]
    assert int(shown["usage"]["memories"]) == 1


async def test_the_operators_quotas_refuse_runs_and_memories_over_them(platform):
    account = "quotaco"
    key = platform.key(account)
    operator(platform, account, "--quota", "runs_per_day=2", "--quota", "memories=1")
    for run in ("r1", "r2"):
        started = await grpc_calls.invoke(platform.grpc, key, "StartRun",
                                          grpc_calls.REQUESTS["StartRun"](
                                              caller=caller(), thread_id=f"t-{run}",
                                              run_id=run))
        assert started["run"]["runId"] == run, started
    again = await grpc_calls.invoke(platform.grpc, key, "StartRun", grpc_calls.REQUESTS[
        "StartRun"](caller=caller(), thread_id="t-r1", run_id="r1"))
    assert again["deduplicated"]  # a retried start is no new run
    third = await grpc_calls.invoke(platform.grpc, key, "StartRun", grpc_calls.REQUESTS[
        "StartRun"](caller=caller(), thread_id="t-r3", run_id="r3"))
    assert (third["code"], third["reason"], third["metadata"]["quota"]) == (
        "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "runs_per_day"), third
    assert (await add(platform, key, "", "the one fact"))["memory"]
    over = await add(platform, key, "", "one fact too many")
    assert (over["code"], over["metadata"]["quota"], over["metadata"]["limit"]) == (
        "RESOURCE_EXHAUSTED", "memories", "1")
    shown = operator(platform, account)
    assert '"runsPerDay": 2' in shown and '"memories": "1"' in shown
