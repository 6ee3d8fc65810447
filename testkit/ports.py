"""Free loopback ports for servers the tests start (shared with the launchers)."""

from tools.backends.ports import free_port, free_port_with_offset, is_free

__all__ = ["free_port", "free_port_with_offset", "is_free"]
