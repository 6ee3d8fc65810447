"""The summary object and where it lives.

``accounts/{account_id}/agents/{agent_id}/threads/{thread_id}/summary.json``
holds ``version, timestamp, last_message_offset, last_message_id, content,
token_count, message_count`` (plus the generator that wrote it and the
thread's owner). Writes are compare-and-set: the writer names the version it
read (its ETag, or that there was none), and a writer that lost the race is
rejected, never overwriting the winner. Two stores share that interface: S3
(conditional PUT with If-Match / If-None-Match) and a local directory (the
same check under a file lock, then an atomic rename).
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from libs.errors import Unavailable
from libs.settings import Secret


@dataclass(frozen=True)
class ThreadKey:
    account_id: str
    agent_id: str
    thread_id: str

    @property
    def summary_path(self) -> str:
        return (f"accounts/{self.account_id}/agents/{self.agent_id}/threads/"
                f"{self.thread_id}/summary.json")


@dataclass(frozen=True)
class Summary:
    version: int
    timestamp: str  # RFC 3339, UTC
    last_message_offset: int
    last_message_id: str
    content: str
    token_count: int
    message_count: int
    generator: str
    owner_user_id: str | None = None

    def encode(self) -> bytes:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes) -> Summary:
        return cls(**json.loads(raw))

    def visible_to(self, user_id: str | None) -> bool:
        return self.owner_user_id is None or self.owner_user_id == user_id


@dataclass(frozen=True)
class Stored:
    """An object as read, with the tag a compare-and-set write must name."""

    data: bytes
    etag: str


class WriteConflict(Exception):
    """Another writer changed the object since it was read."""


class ObjectStore(Protocol):
    async def get(self, path: str) -> Stored | None: ...

    async def put(self, path: str, data: bytes, *, expected: str | None) -> str:
        """Write if the object's tag is ``expected`` (None: only if absent); the new tag."""
        ...

    async def delete(self, path: str) -> None: ...

    async def close(self) -> None: ...


class LocalObjectStore:
    """A directory with S3's conditional-write semantics, for the embedded default."""

    def __init__(self, root: Path) -> None:
        self._root = root.resolve()

    def _file(self, path: str) -> Path:
        target = (self._root / path).resolve()
        if self._root not in target.parents:
            raise ValueError(f"path escapes the store: {path}")
        return target

    @staticmethod
    def _tag(data: bytes) -> str:
        return hashlib.sha256(data).hexdigest()

    def _get(self, path: str) -> Stored | None:
        try:
            data = self._file(path).read_bytes()
        except FileNotFoundError:
            return None
        return Stored(data, self._tag(data))

    def _put(self, path: str, data: bytes, expected: str | None) -> str:
        target = self._file(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / ".lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            current = self._get(path)
            if (current.etag if current else None) != expected:
                raise WriteConflict(path)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        return self._tag(data)

    def _delete(self, path: str) -> None:
        self._file(path).unlink(missing_ok=True)

    async def get(self, path: str) -> Stored | None:
        return await asyncio.to_thread(self._get, path)

    async def put(self, path: str, data: bytes, *, expected: str | None) -> str:
        return await asyncio.to_thread(self._put, path, data, expected)

    async def delete(self, path: str) -> None:
        await asyncio.to_thread(self._delete, path)

    async def close(self) -> None:
        return None


class S3ObjectStore:
    """An S3-compatible bucket (AWS, R2, SeaweedFS, MinIO) through aioboto3."""

    def __init__(self, *, bucket: str, prefix: str, endpoint: str, region: str,
                 access_key_id: str, secret_access_key: Secret, timeout: float = 10.0) -> None:
        import aioboto3
        from botocore.config import Config

        self._bucket = bucket
        self._prefix = prefix.strip("/")
        self._session = aioboto3.Session()
        self._options = dict(
            endpoint_url=endpoint or None, region_name=region,
            aws_access_key_id=access_key_id or None,
            aws_secret_access_key=secret_access_key.reveal() or None,
            config=Config(connect_timeout=timeout, read_timeout=timeout,
                          retries={"max_attempts": 2, "mode": "standard"}),
        )
        self._client = None
        self._lock = asyncio.Lock()

    async def _s3(self):
        async with self._lock:
            if self._client is None:
                self._client = await self._session.client("s3", **self._options).__aenter__()
        return self._client

    def _key(self, path: str) -> str:
        return f"{self._prefix}/{path}" if self._prefix else path

    async def get(self, path: str) -> Stored | None:
        from botocore.exceptions import ClientError

        try:
            reply = await (await self._s3()).get_object(Bucket=self._bucket, Key=self._key(path))
            return Stored(await reply["Body"].read(), reply["ETag"])
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise _unavailable(exc) from exc
        except Exception as exc:
            raise _unavailable(exc) from exc

    async def put(self, path: str, data: bytes, *, expected: str | None) -> str:
        from botocore.exceptions import ClientError

        condition = {"IfMatch": expected} if expected else {"IfNoneMatch": "*"}
        try:
            reply = await (await self._s3()).put_object(
                Bucket=self._bucket, Key=self._key(path), Body=data,
                ContentType="application/json", **condition)
        except ClientError as exc:
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if status in (409, 412) or exc.response.get("Error", {}).get("Code") in (
                    "PreconditionFailed", "ConditionalRequestConflict"):
                raise WriteConflict(path) from exc
            raise _unavailable(exc) from exc
        except Exception as exc:
            raise _unavailable(exc) from exc
        return reply["ETag"]

    async def delete(self, path: str) -> None:
        try:
            await (await self._s3()).delete_object(Bucket=self._bucket, Key=self._key(path))
        except Exception as exc:
            raise _unavailable(exc) from exc

    async def close(self) -> None:
        if self._client is not None:
            await self._client.__aexit__(None, None, None)
            self._client = None


def _unavailable(exc: Exception) -> Unavailable:
    return Unavailable(f"summary store unavailable: {exc}", reason="SUMMARY_STORE_UNAVAILABLE")


class SummaryStore:
    """Summaries on an object store, read and written by thread."""

    def __init__(self, objects: ObjectStore) -> None:
        self.objects = objects

    async def load(self, thread: ThreadKey) -> tuple[Summary | None, str | None]:
        stored = await self.objects.get(thread.summary_path)
        if stored is None:
            return None, None
        return Summary.decode(stored.data), stored.etag

    async def write(self, thread: ThreadKey, summary: Summary, *, expected: str | None) -> None:
        await self.objects.put(thread.summary_path, summary.encode(), expected=expected)

    async def delete(self, thread: ThreadKey) -> None:
        await self.objects.delete(thread.summary_path)
