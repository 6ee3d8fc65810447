"""Key layout inside one shard's SlateDB database.

Identifiers never contain "/" (see libs.identity), so "/" separates
components and every prefix below is unambiguous. Numbers are 8-byte
big-endian so that keys sort in numeric order.

    m/{account}/{agent}/{thread}/{offset}        message (protobuf Message)
    i/{account}/{agent}/{thread}/{message_id}    idempotency: offset and digest
    t/{account}/{agent}/{thread}                 thread state: owner, counts
    c/{account}/{agent}/{tool_call_id}/{thread}  tool call: offsets of call and result
    f/{sequence}                                 change feed entry
    p/{account}/{agent}/{thread}                 purge marker: the thread was deleted
    r/{account}/{agent}/{thread}/{run_id}        run record (see runs.py)
    o/{account}/{agent}/{thread}                 the thread has an open run
    s/layout                                     shard index and shard count
"""

from __future__ import annotations

from dataclasses import dataclass

LAYOUT = b"s/layout"
FEED_PREFIX = b"f/"
OPEN_RUNS_PREFIX = b"o/"


@dataclass(frozen=True)
class ThreadRef:
    """A thread: its id is unique within an (account, agent)."""

    account_id: str
    agent_id: str
    thread_id: str

    @property
    def path(self) -> bytes:
        return f"{self.account_id}/{self.agent_id}/{self.thread_id}".encode()


def _u64(number: int) -> bytes:
    return number.to_bytes(8, "big")


def messages_prefix(thread: ThreadRef) -> bytes:
    return b"m/" + thread.path + b"/"


def message(thread: ThreadRef, offset: int) -> bytes:
    return messages_prefix(thread) + _u64(offset)


def offset_of(message_key: bytes) -> int:
    return int.from_bytes(message_key[-8:], "big")


def message_id(thread: ThreadRef, message_id: str) -> bytes:
    return b"i/" + thread.path + b"/" + message_id.encode()


def thread_state(thread: ThreadRef) -> bytes:
    return b"t/" + thread.path


def tool_calls_prefix(account_id: str, agent_id: str, tool_call_id: str) -> bytes:
    return f"c/{account_id}/{agent_id}/{tool_call_id}/".encode()


def tool_call(thread: ThreadRef, tool_call_id: str) -> bytes:
    prefix = tool_calls_prefix(thread.account_id, thread.agent_id, tool_call_id)
    return prefix + thread.thread_id.encode()


def thread_of_tool_call(key: bytes) -> ThreadRef:
    _, account_id, agent_id, _, thread_id = key.decode().split("/")
    return ThreadRef(account_id, agent_id, thread_id)


def purged(thread: ThreadRef) -> bytes:
    return b"p/" + thread.path


def message_ids_prefix(thread: ThreadRef) -> bytes:
    return b"i/" + thread.path + b"/"


def feed(sequence: int) -> bytes:
    return FEED_PREFIX + _u64(sequence)


def sequence_of(feed_key: bytes) -> int:
    return int.from_bytes(feed_key[-8:], "big")


def prefix_end(prefix: bytes) -> bytes:
    """The smallest key greater than every key starting with ``prefix``."""
    return prefix[:-1] + bytes([prefix[-1] + 1])


def runs_prefix(thread: ThreadRef) -> bytes:
    return b"r/" + thread.path + b"/"


def run(thread: ThreadRef, run_id: str) -> bytes:
    return runs_prefix(thread) + run_id.encode()


def open_run(thread: ThreadRef) -> bytes:
    return OPEN_RUNS_PREFIX + thread.path


def thread_of_open_run(key: bytes) -> ThreadRef:
    _, account_id, agent_id, thread_id = key.decode().split("/")
    return ThreadRef(account_id, agent_id, thread_id)
