"""`make run`'s launcher: everything up, reachable with grpcurl, supervised, Ctrl-C stops it all."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import asyncpg

from libs.healthcheck import is_serving
from testkit.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
SERVICES = ("journal", "agent_memory", "thread_memory", "search", "gateway")


class Launcher:
    """``python -m tools.launch`` on free ports and its own data dir; its output goes to a file
    (a pipe nobody drains would stall every service logging into it)."""

    def __init__(self, tmp_path: Path, **env: str) -> None:
        self.data_dir = tmp_path / "data"
        self.ports = {name: free_port() for name in (*SERVICES, "postgres", "redis")}
        self.log = tmp_path / "launcher.log"
        # The gateway's HTTP port too (a taken one stops it) and no metrics endpoints: the
        # defaults (8080, 9464-9468) may be held by anything else on the machine.
        self.env = {**os.environ, "AGENTMEMORY_DATA_DIR": str(self.data_dir),
                    "AGENTMEMORY_POSTGRES_PORT": str(self.ports["postgres"]),
                    "AGENTMEMORY_REDIS_PORT": str(self.ports["redis"]), "PYTHONUNBUFFERED": "1",
                    "GATEWAY_HTTP_PORT": str(free_port()),
                    **{f"{name.upper()}_PORT": str(self.ports[name]) for name in SERVICES},
                    **{f"{name.upper()}_METRICS_PORT": "0" for name in SERVICES}, **env}
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Launcher:
        with open(self.log, "w") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "tools.launch"], cwd=ROOT,
                                            env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.wait_for("Ctrl-C stops everything", timeout=180)
        return self

    def __exit__(self, *exc) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def output(self) -> str:
        return self.log.read_text()

    def wait_for(self, pattern: str, timeout: float = 90) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(pattern, self.output(), re.MULTILINE)
            if found:
                return found
            assert self.process.poll() is None, "launcher exited:\n" + self.output()
            time.sleep(0.2)
        raise AssertionError(f"no {pattern!r} in the launcher's output:\n{self.output()}")

    def pid(self, name: str) -> int:
        """The pid of ``name`` from the table printed at start-up."""
        return int(self.wait_for(rf"^  {name} +\S+ +pid (\d+)$").group(1))

    def back(self, name: str) -> int:
        """Wait for the launcher to say ``name`` is back; its new pid."""
        port = self.ports[name]
        return int(self.wait_for(rf"^launch: {name} is back on 127\.0\.0\.1:{port} \(pid (\d+)").group(1))


def _grpcurl_list(port: int) -> str:
    grpcurl = shutil.which("grpcurl", path=os.path.dirname(sys.executable))
    return subprocess.run([grpcurl, "-plaintext", f"localhost:{port}", "list"],
                          capture_output=True, text=True, timeout=30).stdout


def _redis_answers(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(16).startswith(b"+PONG")


async def _postgres_answers(port: int) -> bool:
    connection = await asyncpg.connect(f"postgresql://postgres@127.0.0.1:{port}/agentmemory")
    try:
        return await connection.fetchval("SELECT 1") == 1
    finally:
        await connection.close()


def _bind_when_free(sock: socket.socket, port: int) -> None:
    """Bind as soon as a killed server's listening socket is gone (well before its restart)."""
    deadline = time.monotonic() + 0.8
    while True:
        try:
            return sock.bind(("127.0.0.1", port))
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_launcher_starts_serves_and_stops_on_ctrl_c(tmp_path):
    with Launcher(tmp_path) as launcher:
        output = launcher.output()
        ports = launcher.ports
        assert f"journal        127.0.0.1:{ports['journal']}" in output
        assert f"agent_memory   127.0.0.1:{ports['agent_memory']}" in output
        assert "agentmemory.journal.v1.JournalService" in _grpcurl_list(ports["journal"])
        assert (tmp_path / "data" / "journal").is_dir()
        assert "agentmemory.agent_memory.v1.AgentMemoryService" in _grpcurl_list(ports["agent_memory"])
        assert "agentmemory.thread_memory.v1.ThreadMemoryService" in _grpcurl_list(ports["thread_memory"])
        assert "agentmemory.search.v1.SearchService" in _grpcurl_list(ports["search"])
        assert "agentmemory.gateway.v1.GatewayService" in _grpcurl_list(ports["gateway"])
        key = (tmp_path / "data" / "demo-api-key").read_text().strip()
        assert key.startswith("am_") and key not in output

        launcher.process.send_signal(signal.SIGINT)
        assert launcher.process.wait(60) == 0, launcher.output()
    rest = launcher.output()
    assert "stopped." in rest and "journal closed" in rest
    assert "died" not in rest
    for name in SERVICES:
        assert not is_serving(f"127.0.0.1:{ports[name]}"), name


def test_launcher_restarts_what_was_killed_and_gives_up_on_what_keeps_dying(tmp_path):
    with Launcher(tmp_path, AGENTMEMORY_RESTART_LIMIT="3") as launcher:
        ports = launcher.ports
        killed = {name: launcher.pid(name) for name in ("redis", "postgres", "journal")}
        for pid in killed.values():
            os.kill(pid, signal.SIGKILL)

        for name, pid in killed.items():
            launcher.wait_for(rf"^launch: {name} \(pid {pid}\) died: killed by SIGKILL; "
                              r"restart 1 of 3 in 1 s$")
            assert launcher.back(name) != pid
        assert _redis_answers(ports["redis"])
        assert asyncio.run(_postgres_answers(ports["postgres"]))
        for name in SERVICES:
            assert is_serving(f"127.0.0.1:{ports[name]}"), name

        # Redis now cannot come back: its port is taken as soon as it dies.
        redis_pid = launcher.back("redis")
        with socket.socket() as squatter:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            os.kill(redis_pid, signal.SIGKILL)
            _bind_when_free(squatter, ports["redis"])
            squatter.listen()
            assert launcher.process.wait(120) == 1, launcher.output()
        output = launcher.output()
        assert re.search(r"^launch: redis \(pid \d+\) died: exited with status 1; giving up after 3 "
                         r"restarts in a row, stopping everything$", output, re.MULTILINE), output
        assert output.rstrip().endswith("stopped.")
    for name in SERVICES:
        assert not is_serving(f"127.0.0.1:{ports[name]}"), name
