"""The byte-copy speed-up for SlateDB's bindings copies exactly what the original did."""

from __future__ import annotations

import os

from slatedb.uniffi import DbBuilder, ObjectStoreBuilder, ObjectStoreType, WriteBatch

from services.journal import uniffi_speedup


async def test_every_byte_value_and_size_round_trips(tmp_path):
    assert uniffi_speedup.install()
    builder = ObjectStoreBuilder(ObjectStoreType.LOCAL)
    builder.with_config("local_path", str(tmp_path))
    db = await DbBuilder("db", builder.build()).build()
    try:
        values = {
            b"all-bytes": bytes(range(256)) * 3,
            b"empty": b"",
            b"one": b"\x00",
            b"large": os.urandom(3 * 1024 * 1024 + 7),
            "clé-ü".encode(): "значение ✓".encode(),
        }
        batch = WriteBatch()
        for key, value in values.items():
            batch.put(key, value)
        handle = await db.write(batch)
        await handle.await_durable()
        for key, value in values.items():
            assert await db.get(key) == value
    finally:
        await db.shutdown()
