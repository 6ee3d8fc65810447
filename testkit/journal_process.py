"""A journal service run as its own process, as in production."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from libs.healthcheck import is_serving
from testkit.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


class JournalProcess:
    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self._env = {**os.environ, **env, "JOURNAL_PORT": str(self.port),
                     "JOURNAL_HOST": "127.0.0.1"}
        self._log_path = log_path
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60.0) -> JournalProcess:
        log = open(self._log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "services.journal"], cwd=ROOT, env=self._env,
            stdout=log, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"journal exited early; see {self._log_path}:\n{self.log()}")
            if is_serving(self.address):
                return self
            time.sleep(0.1)
        raise RuntimeError(f"journal not serving after {timeout}s:\n{self.log()}")

    def health(self) -> int | None:
        with grpc.insecure_channel(self.address) as channel:
            try:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=1.0
                )
            except grpc.RpcError:
                return None
        return reply.status

    def log(self) -> str:
        return self._log_path.read_text(errors="replace")[-4000:]

    def kill(self) -> None:
        """kill -9: no shutdown code runs."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def terminate(self, timeout: float = 30.0) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout)
        return self.process.returncode
