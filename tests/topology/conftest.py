"""The production topology (tools/topology.py), started once for this directory.

Tests kill, pause and restart its processes; each leaves every process running
again when it ends, so the next one starts from the whole shape (the journal's
writers may have changed places: find them with ``Topology.writer_of``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from testkit.gateway_load import AGENT
from testkit.platform import bind_memory
from tools.topology import Topology


@pytest.fixture(scope="session")
def topology(tmp_path_factory) -> Iterator[Topology]:
    started = Topology(tmp_path_factory.mktemp("topology")).start()
    bind_memory(started.addresses("gateway").split(",")[0], started.api_key, AGENT)
    yield started
    started.stop()
