"""HEAP_SNAPSHOT_DIR: a service traces its Python heap and snapshots it on a timer; unset,
it traces nothing."""

from __future__ import annotations

import json
import time
import tracemalloc

from libs import heap_snapshots
from libs.heap_snapshots import HeapSnapshotSettings
from libs.settings import load
from testkit.journal_process import JournalProcess


def _wait_for(predicate, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while not (found := predicate()):
        assert time.monotonic() < deadline, "nothing appeared"
        time.sleep(0.1)
    return found


def test_a_service_writes_heap_snapshots_when_asked(tmp_path):
    heap = tmp_path / "heap"
    env = {"JOURNAL_OBJECT_STORE": "local", "JOURNAL_LOCAL_PATH": str(tmp_path / "j"),
           "HEAP_SNAPSHOT_DIR": str(heap), "HEAP_SNAPSHOT_SECONDS": "0.5",
           "HEAP_SNAPSHOT_FRAMES": "3"}
    process = JournalProcess(env, tmp_path / "journal.log").start()
    try:
        pid = process.process.pid
        totals = _wait_for(lambda: sorted(heap.glob(f"journal-{pid}-*.json"))[2:])
        snapshot = tracemalloc.Snapshot.load(str(totals[0]).replace(".json", ".snapshot"))
        assert snapshot.traceback_limit == 3
        # Serving, the process holds megabytes of Python objects (its modules, its protos).
        assert sum(stat.size for stat in snapshot.statistics("filename")) > 2**20
        figures = json.loads(totals[-1].read_text())
        assert figures["traced_bytes"] > 2**20 and figures["gc_objects"] > 10_000
    finally:
        process.terminate()


def test_off_by_default():
    settings = load(HeapSnapshotSettings, environ={})
    assert heap_snapshots.start(settings, "journal") is None
    assert not tracemalloc.is_tracing()
