"""A scratch directory for one benchmark run, removed when the run's process exits (a
corpus or a platform's data is gigabytes: repeated runs would fill the disk)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_dir(prefix: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
