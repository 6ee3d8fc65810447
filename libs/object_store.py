"""Objects changed only by compare-and-set: a local directory or an S3-compatible bucket.

A writer names the version it read (the object's tag, or that there was none)
and loses to any writer that changed the object since: ``put`` then raises
:class:`WriteConflict` and never overwrites the winner. On S3 that is a
conditional PUT (``If-Match`` / ``If-None-Match``); in a local directory the
same check under a file lock, then an atomic rename. The journal's shard
leases and thread memory's summaries both rely on it.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from libs.errors import Unavailable
from libs.object_store_settings import ObjectStoreSettings


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
        """Write if the object's tag is ``expected`` (None: only if absent); the new tag.
        Raises WriteConflict, or Unavailable when the store cannot be reached."""
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
    """An S3-compatible bucket (AWS, R2, SeaweedFS, MinIO) through aioboto3. Every
    failure to reach it becomes what ``unavailable`` makes of it (each user names
    its store and reason)."""

    def __init__(self, settings: ObjectStoreSettings, *,
                 unavailable: Callable[[Exception], Unavailable], timeout: float = 10.0,
                 attempts: int = 2) -> None:
        import aioboto3
        from botocore.config import Config

        self._bucket = settings.s3_bucket
        self._prefix = settings.s3_prefix.strip("/")
        self._unavailable = unavailable
        self._session = aioboto3.Session()
        self._options = dict(
            endpoint_url=settings.s3_endpoint or None, region_name=settings.s3_region,
            aws_access_key_id=settings.s3_access_key_id or None,
            aws_secret_access_key=settings.s3_secret_access_key.reveal() or None,
            config=Config(connect_timeout=timeout, read_timeout=timeout,
                          retries={"max_attempts": attempts, "mode": "standard"}),
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
            raise self._unavailable(exc) from exc
        except Exception as exc:
            raise self._unavailable(exc) from exc

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
            raise self._unavailable(exc) from exc
        except Exception as exc:
            raise self._unavailable(exc) from exc
        return reply["ETag"]

    async def delete(self, path: str) -> None:
        try:
            await (await self._s3()).delete_object(Bucket=self._bucket, Key=self._key(path))
        except Exception as exc:
            raise self._unavailable(exc) from exc

    async def close(self) -> None:
        if self._client is not None:
            await self._client.__aexit__(None, None, None)
            self._client = None


def build_object_store(settings: ObjectStoreSettings, *,
                       unavailable: Callable[[Exception], Unavailable],
                       timeout: float = 10.0, attempts: int = 2) -> ObjectStore:
    if settings.kind == "local":
        return LocalObjectStore(settings.local_path)
    return S3ObjectStore(settings, unavailable=unavailable, timeout=timeout, attempts=attempts)
