"""The journal as an operator runs it: grpcurl through reflection, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time

import grpc
import pytest
from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs import clients
from libs.errors import error_details
from testkit.journal_client import JournalClient, message
from testkit.journal_process import JournalProcess

GRPCURL = shutil.which("grpcurl", path=os.path.dirname(sys.executable)) or "grpcurl"


def grpcurl(*args: str) -> str:
    done = subprocess.run([GRPCURL, "-plaintext", *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def journal_process(local_store_env, tmp_path):
    journal = JournalProcess(local_store_env, tmp_path / "journal.log").start()
    yield journal
    journal.kill()


def test_grpcurl_lists_and_calls_through_reflection(journal_process):
    address = journal_process.address
    services = grpcurl(address, "list").split()
    assert {"agentmemory.journal.v1.JournalService", "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection"} <= set(services)
    who = {"account_id": "acme", "agent_id": "helper"}
    appended = json.loads(grpcurl("-d", json.dumps({
        "principal": who, "thread_id": "demo",
        "messages": [{"id": "m1", "role": "ROLE_USER", "content": "hello"}],
    }), address, "agentmemory.journal.v1.JournalService/Append"))
    assert appended["results"][0]["offset"] == "1"
    recent = json.loads(grpcurl("-d", json.dumps({"principal": who, "thread_id": "demo"}),
                                address, "agentmemory.journal.v1.JournalService/ReadRecent"))
    assert [m["content"] for m in recent["messages"]] == ["hello"]


async def test_sigterm_ends_feeds_drains_and_exits_cleanly(journal_process):
    # No retry policy: the journal's own answer is what is checked (a client with one
    # would retry it on another journal process, as SHUTTING_DOWN invites).
    async with clients.channel(journal_process.address, retry=False) as channel:
        client = JournalClient(channel)
        await client.append("t", [message("m1")])
        stream = client.stub.Subscribe(pb.SubscribeRequest(after_sequence=0), timeout=60)
        # The first event proves the server is serving the feed (before it, SIGTERM would
        # end the call with gRPC's own UNAVAILABLE instead of the journal's answer).
        assert (await stream.read()).message.id == "m1"
        reader = asyncio.create_task(stream.read())
        started = time.monotonic()
        journal_process.process.terminate()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await asyncio.wait_for(reader, 15)
        details = error_details(caught.value)
        assert details.code == grpc.StatusCode.UNAVAILABLE and details.reason == "SHUTTING_DOWN"
    assert await asyncio.to_thread(journal_process.process.wait, 15) == 0
    assert time.monotonic() - started < 10
    assert "journal closed" in journal_process.log()


def test_bad_configuration_is_reported_by_variable_name(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "services.journal"],
        env={**os.environ, "JOURNAL_OBJECT_STORE": "s3", "JOURNAL_S3_BUCKET": ""},
        capture_output=True, text=True, timeout=30,
    )
    assert done.returncode != 0 and "JOURNAL_S3_BUCKET is required" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "services.journal"],
        env={**os.environ, "JOURNAL_PORT": "http"}, capture_output=True, text=True, timeout=30,
    )
    assert done.returncode != 0 and "JOURNAL_PORT: expected an integer" in done.stderr


def test_secrets_never_reach_the_logs(s3_server, tmp_path):
    journal = JournalProcess(s3_server.journal_env(), tmp_path / "journal.log").start()
    try:
        assert "s3://" in journal.log()
    finally:
        journal.terminate()
    assert s3_server.secret_access_key not in journal.log()
