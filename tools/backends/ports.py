"""Free loopback ports for the servers the launchers and the tests start.

A port is free when drawn but only bound later by the server it is for, so a later
draw could return it again (bind(0) picks at random): a platform start draws 13 ports
at once, a topology 17+. Every port handed out is therefore remembered and never
handed out again in this process.
"""

from __future__ import annotations

import random
import socket
import threading

_handed_out: set[int] = set()
_lock = threading.Lock()


def is_free(port: int) -> bool:
    """Whether nothing listens on (or holds) ``port`` on loopback now."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    with _lock:
        for _ in range(100):
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
            if port not in _handed_out:
                _handed_out.add(port)
                return port
    raise RuntimeError("no free port found")


def free_port_with_offset(offset: int) -> int:
    """A free port p with p + offset free too (servers that derive a second port).

    Both ports count as handed out, so neither a later pair nor ``free_port`` reuses them.
    """
    with _lock:
        for _ in range(200):
            port = random.randint(20000, 65535 - offset)
            pair = {port, port + offset}
            if not pair & _handed_out and all(is_free(p) for p in pair):
                _handed_out.update(pair)
                return port
    raise RuntimeError("no free port pair found")
