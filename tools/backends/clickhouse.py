"""A ClickHouse server for the driver-path tests and `make topology`: Debian's clickhouse-server (18.16).

It is old, but it serves every statement the search service runs (they avoid
newer functions). ``tools/ensure_test_packages.sh`` installs it for ``make test``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tools.backends import terminate

BINARY = "/usr/sbin/clickhouse-server"

_CONFIG = """<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>{root}/server.log</log><errorlog>{root}/error.log</errorlog>
    <console>0</console></logger>
  <tcp_port>{port}</tcp_port>
  <http_port>{http_port}</http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>{root}/data/</path>
  <tmp_path>{root}/tmp/</tmp_path>
  <user_files_path>{root}/user_files/</user_files_path>
  <format_schema_path>{root}/format_schemas/</format_schema_path>
  <mark_cache_size>536870912</mark_cache_size>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <max_concurrent_queries>100</max_concurrent_queries>
</yandex>
"""
_USERS = """<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>2000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
"""


def available() -> bool:
    return shutil.which(BINARY) is not None


@dataclass
class ClickHouseServer:
    root: Path
    port: int
    http_port: int
    process: subprocess.Popen | None = field(default=None, repr=False)

    def start(self, timeout: float = 60.0) -> ClickHouseServer:
        self.spawn()
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.exit_status() is not None:
                raise RuntimeError(f"clickhouse-server exited; see {self.root / 'error.log'}")
            if time.monotonic() > deadline:
                raise RuntimeError("clickhouse-server did not start")
            time.sleep(0.1)
        return self

    def spawn(self) -> None:
        """Start the server (writing its configuration) and return at once."""
        if not available():
            raise RuntimeError(f"{BINARY} is not installed (run tools/ensure_test_packages.sh)")
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "config.xml").write_text(
            _CONFIG.format(root=self.root, port=self.port, http_port=self.http_port))
        (self.root / "users.xml").write_text(_USERS)
        self.process = subprocess.Popen(
            [BINARY, f"--config-file={self.root / 'config.xml'}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)

    def ready(self) -> bool:
        """Running and accepting native-protocol connections."""
        if self.exit_status() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        terminate(self.process)
