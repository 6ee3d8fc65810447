"""Proto <-> domain conversions of the thread-memory service, all in one place."""

from __future__ import annotations

from datetime import datetime

from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb

from libs.conversions import timestamp
from services.thread_memory.summaries import Summary


def summary(value: Summary | None) -> pb.Summary | None:
    if value is None:
        return None
    written = datetime.fromisoformat(value.timestamp.replace("Z", "+00:00"))
    return pb.Summary(
        version=value.version, timestamp=timestamp(written),
        last_message_offset=value.last_message_offset,
        last_message_id=value.last_message_id, content=value.content,
        token_count=value.token_count, message_count=value.message_count,
        generator=value.generator,
    )


def requested_window(request: pb.GetThreadContextRequest) -> int | None:
    return (request.max_working_memory_messages
            if request.HasField("max_working_memory_messages") else None)
