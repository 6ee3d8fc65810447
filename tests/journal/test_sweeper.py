"""The idle-run sweeper when a run cannot be closed: it tries again a retry interval
later, not at once (a due deadline that stays due brought it straight round again: the
journal spun a core, logging a warning per turn)."""

from __future__ import annotations

import asyncio
import logging

from slatedb.uniffi import DbBuilder, ObjectStoreBuilder, ObjectStoreType

from services.journal import shard as shard_module
from services.journal.keys import ThreadRef
from services.journal.shard import Shard


async def test_a_run_that_cannot_be_closed_is_tried_again_after_the_retry_interval(
        tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(shard_module, "SWEEP_RETRY_MS", 250, raising=False)
    builder = ObjectStoreBuilder(ObjectStoreType.LOCAL)
    builder.with_config("local_path", str(tmp_path))
    db = await DbBuilder("shard-0000", builder.build()).build()
    # A deadline long past for a thread the database does not have: closing its run
    # fails (RUN_NOT_FOUND) every time, as a failing store would.
    gone = ThreadRef("acme", "helper", "gone")
    shard = Shard(0, db, 0, flush_interval_ms=10, open_runs={gone: 0})
    try:
        with caplog.at_level(logging.WARNING, logger=shard_module.__name__):
            await asyncio.sleep(1.2)
        attempts = [r for r in caplog.records if "closing the idle run of gone" in r.message]
        # One at once, then one each 250 ms: about five (it spun: hundreds).
        assert 2 <= len(attempts) <= 7, len(attempts)
        assert shard.serving()
    finally:
        await shard.close()
