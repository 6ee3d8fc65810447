"""Debugging memory growth: tracemalloc snapshots of a service's Python heap, on a timer.

Off unless ``HEAP_SNAPSHOT_DIR`` is set (tracemalloc makes every allocation slower:
a service's CPU per call about doubles). When set, the process traces its
Python allocations from the start and, every ``HEAP_SNAPSHOT_SECONDS``, writes
``<dir>/<service>-<pid>-<n>.snapshot`` (``tracemalloc.Snapshot.dump``: compare two
with ``Snapshot.load(b).compare_to(Snapshot.load(a), "lineno")``) and beside it
``<same>.json``, the totals (bytes traced, objects the collector tracks) for a reader
that polls without loading snapshots. Only Python's allocator is traced: growth of
native memory (SlateDB's Rust, chDB, Qdrant's engine, glibc's arenas) shows in the
process's RSS and not here. ``bench/soak.py --heap DIR`` sets it for every service.
"""

from __future__ import annotations

import gc
import json
import os
import threading
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

from libs.settings import setting


@dataclass(frozen=True)
class HeapSnapshotSettings:
    directory: str = setting(
        "HEAP_SNAPSHOT_DIR", "",
        "Debugging: trace Python allocations and write tracemalloc snapshots here "
        "(empty: off).")
    seconds: float = setting("HEAP_SNAPSHOT_SECONDS", 60.0,
                             "Debugging: seconds between two heap snapshots.")
    frames: int = setting("HEAP_SNAPSHOT_FRAMES", 1,
                          "Debugging: stack frames kept per traced allocation.")


def start(settings: HeapSnapshotSettings, service: str) -> threading.Thread | None:
    """Trace and snapshot this process's heap if ``settings`` ask for it."""
    if not settings.directory:
        return None
    directory = Path(settings.directory)
    directory.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(settings.frames)
    writer = threading.Thread(target=_write_forever, name="heap-snapshots", daemon=True,
                              args=(directory / f"{service}-{os.getpid()}", settings.seconds))
    writer.start()
    return writer


def write(stem: Path) -> None:
    """One snapshot, then its totals (a reader that sees the JSON finds the snapshot)."""
    snapshot = tracemalloc.take_snapshot()
    snapshot.dump(f"{stem}.snapshot")
    traced, peak = tracemalloc.get_traced_memory()
    totals = {"time": time.time(), "traced_bytes": traced, "peak_bytes": peak,
              "gc_objects": len(gc.get_objects())}
    Path(f"{stem}.json.tmp").write_text(json.dumps(totals))
    os.replace(f"{stem}.json.tmp", f"{stem}.json")


def _write_forever(prefix: Path, seconds: float) -> None:
    n = 0
    while True:
        write(Path(f"{prefix}-{n:04d}"))
        n += 1
        time.sleep(seconds)
