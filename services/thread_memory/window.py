"""The recent window: 20 messages, and a thread may only ask for fewer.

A thread's ``metadata.config.max_working_memory_messages`` (or the request's
``max_working_memory_messages``) lowers the window. The value is clamped to
1-20: above 20 it is 20, and 0 or a negative number gives the smallest window,
1 message (the newest is never dropped). A value that is not an integer (a
string, a boolean, 2.5) is ignored and the window stays 20. When both are
given, the smaller wins.
"""

from __future__ import annotations

import logging
import math

from google.protobuf import struct_pb2

logger = logging.getLogger(__name__)

WINDOW = 20
MINIMUM = 1


def clamp(value: int) -> int:
    return max(MINIMUM, min(WINDOW, value))


def from_metadata(metadata: struct_pb2.Struct | None) -> int | None:
    """``metadata.config.max_working_memory_messages`` as an integer, if it is one."""
    if metadata is None or "config" not in metadata.fields:
        return None
    config = metadata.fields["config"]
    if config.WhichOneof("kind") != "struct_value":
        return None
    value = config.struct_value.fields.get("max_working_memory_messages")
    if value is None:
        return None
    number = value.number_value if value.WhichOneof("kind") == "number_value" else None
    if number is None or not math.isfinite(number) or number != int(number):
        logger.info("ignoring non-integer max_working_memory_messages: %s", value)
        return None
    return int(number)


def window_size(requested: int | None, metadata: struct_pb2.Struct | None = None) -> int:
    asked = [v for v in (requested, from_metadata(metadata)) if v is not None]
    return clamp(min(asked)) if asked else WINDOW
