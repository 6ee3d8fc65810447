"""The summary object and where it lives.

``accounts/{account_id}/agents/{agent_id}/threads/{thread_id}/summary.json``
holds ``version, timestamp, last_message_offset, last_message_id, content,
token_count, message_count`` (plus the generator that wrote it and the
thread's owner). Writes are compare-and-set: the writer names the version it
read (its ETag, or that there was none), and a writer that lost the race is
rejected, never overwriting the winner (``libs.object_store``: S3 or a local
directory).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from libs.errors import Unavailable
from libs.object_store import ObjectStore


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
    def decode(cls, raw: bytes | str) -> Summary:
        return cls(**json.loads(raw))

    def visible_to(self, user_id: str | None) -> bool:
        return self.owner_user_id is None or self.owner_user_id == user_id


def unavailable(exc: Exception) -> Unavailable:
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
