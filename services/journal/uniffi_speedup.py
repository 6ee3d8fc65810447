"""Faster byte copies for SlateDB's generated Python bindings.

The UniFFI-generated bindings (slatedb 0.17) copy every argument into the
buffer handed to Rust one byte at a time, in a Python loop, after growing the
buffer in up to three foreign calls: about 0.1 ms per KiB, so a 1 MiB message
took a quarter of a second of CPU just to reach SlateDB, and these copies were
the largest part of an append's cost. :func:`install` replaces the copy helpers
with one ``memmove`` each, and lowers a ``bytes`` argument with a single
allocation of the exact size. What is copied is unchanged
(tests/journal/test_uniffi_speedup.py round-trips every byte value).
"""

from __future__ import annotations

import ctypes
import logging
import struct

logger = logging.getLogger(__name__)


def _address(rbuf) -> int:
    return ctypes.addressof(rbuf.data.contents)


def _write(self, value) -> None:
    size = len(value)
    with self._reserve(size):
        if size:
            ctypes.memmove(_address(self.rbuf) + self.rbuf.len, bytes(value), size)


def _pack_into(self, size: int, fmt: str, value) -> None:
    with self._reserve(size):
        ctypes.memmove(_address(self.rbuf) + self.rbuf.len, struct.pack(fmt, value), size)


def install() -> bool:
    """Patch the bindings once; False (and a log line) if they are not the expected shape."""
    from slatedb.uniffi._slatedb_uniffi import slatedb as generated

    builder = getattr(generated, "_UniffiRustBufferBuilder", None)
    converter = getattr(generated, "_UniffiFfiConverterBytes", None)
    rust_buffer = getattr(generated, "_UniffiRustBuffer", None)
    if (
        builder is None or converter is None or rust_buffer is None
        or not all(hasattr(builder, n) for n in ("write", "_pack_into", "_reserve"))
        or not hasattr(converter, "lower") or not hasattr(rust_buffer, "alloc")
    ):
        logger.warning("slatedb bindings changed shape: byte-copy speed-up not installed")
        return False

    def lower_bytes(cls, value):
        # The wire form of bytes: a big-endian i32 length, then the bytes.
        data = bytes(value)
        encoded = struct.pack(">i", len(data)) + data
        rbuf = rust_buffer.alloc(len(encoded))
        ctypes.memmove(_address(rbuf), encoded, len(encoded))
        rbuf.len = len(encoded)
        return rbuf

    builder.write = _write
    builder._pack_into = _pack_into
    converter.lower = classmethod(lower_bytes)
    return True
