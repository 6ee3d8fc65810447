"""`make run`'s launcher: everything up, reachable with grpcurl, Ctrl-C stops it all."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from libs.healthcheck import is_serving
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parent.parent


def test_launcher_starts_serves_and_stops_on_ctrl_c(tmp_path):
    port, memory_port, thread_port, search_port, gateway_port = (free_port() for _ in range(5))
    env = {**os.environ, "AGENTMEMORY_DATA_DIR": str(tmp_path / "data"),
           "JOURNAL_PORT": str(port), "AGENT_MEMORY_PORT": str(memory_port),
           "THREAD_MEMORY_PORT": str(thread_port), "SEARCH_PORT": str(search_port),
           "GATEWAY_PORT": str(gateway_port),
           "AGENTMEMORY_POSTGRES_PORT": str(free_port()),
           "AGENTMEMORY_REDIS_PORT": str(free_port()), "PYTHONUNBUFFERED": "1"}
    launcher = subprocess.Popen([sys.executable, "-m", "tools.launch"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = launcher.stdout.readline()
            assert line, "launcher exited:\n" + "".join(lines)
            lines.append(line)
            if "Ctrl-C stops everything" in line:
                break
        output = "".join(lines)
        assert f"journal        127.0.0.1:{port}" in output
        assert f"agent_memory   127.0.0.1:{memory_port}" in output
        grpcurl = shutil.which("grpcurl", path=os.path.dirname(sys.executable))
        listed = subprocess.run([grpcurl, "-plaintext", f"localhost:{port}", "list"],
                                capture_output=True, text=True, timeout=30)
        assert "agentmemory.journal.v1.JournalService" in listed.stdout
        assert (tmp_path / "data" / "journal").is_dir()
        listed = subprocess.run([grpcurl, "-plaintext", f"localhost:{memory_port}", "list"],
                                capture_output=True, text=True, timeout=30)
        assert "agentmemory.agent_memory.v1.AgentMemoryService" in listed.stdout
        listed = subprocess.run([grpcurl, "-plaintext", f"localhost:{thread_port}", "list"],
                                capture_output=True, text=True, timeout=30)
        assert "agentmemory.thread_memory.v1.ThreadMemoryService" in listed.stdout
        listed = subprocess.run([grpcurl, "-plaintext", f"localhost:{search_port}", "list"],
                                capture_output=True, text=True, timeout=30)
        assert "agentmemory.search.v1.SearchService" in listed.stdout
        listed = subprocess.run([grpcurl, "-plaintext", f"localhost:{gateway_port}", "list"],
                                capture_output=True, text=True, timeout=30)
        assert "agentmemory.gateway.v1.GatewayService" in listed.stdout
        key = (tmp_path / "data" / "demo-api-key").read_text().strip()
        assert key.startswith("am_") and key not in output

        launcher.send_signal(signal.SIGINT)
        rest, _ = launcher.communicate(timeout=30)
    finally:
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 0, rest
    assert "stopped." in rest and "journal closed" in rest
    assert not is_serving(f"127.0.0.1:{port}")
    assert not is_serving(f"127.0.0.1:{memory_port}")
    assert not is_serving(f"127.0.0.1:{thread_port}")
    assert not is_serving(f"127.0.0.1:{search_port}")
    assert not is_serving(f"127.0.0.1:{gateway_port}")
