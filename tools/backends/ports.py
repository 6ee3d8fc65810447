"""Free loopback ports for the servers the launchers and the tests start."""

from __future__ import annotations

import random
import socket


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def free_port_with_offset(offset: int) -> int:
    """A free port p with p + offset free too (servers that derive a second port)."""
    for _ in range(200):
        port = random.randint(20000, 65535 - offset)
        if _is_free(port) and _is_free(port + offset):
            return port
    raise RuntimeError("no free port pair found")
