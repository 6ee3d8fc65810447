"""Where a service keeps objects: a local directory (embedded) or an S3-compatible bucket.

Each service subclasses :class:`ObjectStoreSettings` to set its own defaults
and reads it with its own prefix (``JOURNAL_OBJECT_STORE``,
``THREAD_MEMORY_OBJECT_STORE``, ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs.settings import Secret, setting


@dataclass(frozen=True)
class ObjectStoreSettings:
    kind: Literal["local", "s3"] = setting(
        "OBJECT_STORE", "local", "Object store: local (a directory) or s3 (S3-compatible).")
    local_path: Path = setting("LOCAL_PATH", Path("data/objects"),
                               "Directory of the local object store.")
    s3_bucket: str = setting("S3_BUCKET", "", "Bucket, required with s3.")
    s3_prefix: str = setting("S3_PREFIX", "", "Key prefix inside the bucket.")
    s3_region: str = setting("S3_REGION", "us-east-1", "Bucket region.")
    s3_endpoint: str = setting(
        "S3_ENDPOINT", "", "Endpoint URL of an S3-compatible server; empty for AWS.")
    s3_access_key_id: str = setting("S3_ACCESS_KEY_ID", "", "Access key id.")
    s3_secret_access_key: Secret = setting(
        "S3_SECRET_ACCESS_KEY", Secret(""), "Secret access key (never logged).")

    def __post_init__(self) -> None:
        if self.kind == "s3" and not self.s3_bucket:
            raise ValueError("S3_BUCKET is required when OBJECT_STORE=s3")

    def describe(self) -> str:
        if self.kind == "local":
            return f"local directory {self.local_path.resolve()}"
        return f"s3://{self.s3_bucket}/{self.s3_prefix} at {self.s3_endpoint or 'AWS'}"
