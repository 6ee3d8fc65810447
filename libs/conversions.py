"""Python values as protobuf's well-known types and back (timestamps, Structs), for
every service's conversions."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.message import Message


def timestamp(value: datetime | None) -> timestamp_pb2.Timestamp | None:
    """``None`` stays unset (a field's absence); a naive ``value`` is taken as UTC."""
    if value is None:
        return None
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


def from_milliseconds(milliseconds: int) -> timestamp_pb2.Timestamp:
    """A time stored as milliseconds since the epoch (the journal's records)."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromMilliseconds(milliseconds)
    return stamp


def optional_datetime(message: Message, name: str) -> datetime | None:
    """The Timestamp field ``name`` of ``message`` as an aware datetime, None when unset."""
    return getattr(message, name).ToDatetime(tzinfo=UTC) if message.HasField(name) else None


def struct(value: dict | None) -> struct_pb2.Struct | None:
    """``None`` stays unset."""
    if value is None:
        return None
    data = struct_pb2.Struct()
    data.update(value)
    return data
