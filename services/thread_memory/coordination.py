"""Every Redis key thread memory uses. Redis holds no messages.

    tm:summary:{thread}        the cached summary (one hour)
    tm:lock:{thread}           the summarization lock (a token, with a TTL)
    tm:counters:{thread}       the two threshold counters: tokens and messages
                               since the last summary
    tm:flushed:{thread}        the flush-and-summarize guard: the last offset the
                               pre-compaction flush has covered, so a retried
                               job never flushes the same messages twice
    tm:claim:{thread}:{offset} the per-message side-effect claim: a message
                               counts once, however often the feed delivers it

``{thread}`` is ``account/agent/thread`` ("/" never appears in an id). All of
it is derived or coordination state: wiping Redis changes no context.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.exceptions import RedisError

from libs.errors import Unavailable
from services.thread_memory.summaries import Summary, ThreadKey

logger = logging.getLogger(__name__)

SUMMARY_CACHE_SECONDS = 3600
CLAIM_SECONDS = 7 * 24 * 3600

# Claim a message and count it, atomically: a redelivered message counts once.
_COUNT = """
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[2]) then
  local tokens = redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[1])
  local messages = redis.call('HINCRBY', KEYS[1], 'messages', 1)
  return {tokens, messages}
end
return false
"""

# After a summary covered some messages: those already counted stop counting;
# those not yet delivered are claimed so they never will.
_SETTLE = """
local tokens, messages = 0, 0
for i = 1, #ARGV - 1, 2 do
  local claim = KEYS[2] .. ARGV[i]
  if not redis.call('SET', claim, '1', 'NX', 'EX', ARGV[#ARGV]) then
    tokens = tokens + tonumber(ARGV[i + 1])
    messages = messages + 1
  end
end
local left_tokens = redis.call('HINCRBY', KEYS[1], 'tokens', -tokens)
local left_messages = redis.call('HINCRBY', KEYS[1], 'messages', -messages)
if left_tokens < 0 then redis.call('HSET', KEYS[1], 'tokens', 0) end
if left_messages < 0 then redis.call('HSET', KEYS[1], 'messages', 0) end
return {math.max(left_tokens, 0), math.max(left_messages, 0)}
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _id(thread: ThreadKey) -> str:
    return f"{thread.account_id}/{thread.agent_id}/{thread.thread_id}"


class Coordination:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._count = redis.register_script(_COUNT)
        self._settle = redis.register_script(_SETTLE)
        self._release = redis.register_script(_RELEASE)

    @classmethod
    def connect(cls, url: str) -> Coordination:
        return cls(Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5))

    async def close(self) -> None:
        await self._redis.aclose()

    # -- summary cache (a miss when Redis is down: the object store answers) -------

    async def cached_summary(self, thread: ThreadKey) -> Summary | None:
        try:
            raw = await self._redis.get(f"tm:summary:{_id(thread)}")
        except RedisError as exc:
            logger.warning("summary cache unavailable, reading the store: %s", exc)
            return None
        return None if raw is None else Summary.decode(raw)

    async def cache_summary(self, thread: ThreadKey, summary: Summary) -> None:
        try:
            await self._redis.set(f"tm:summary:{_id(thread)}", summary.encode(),
                                  ex=SUMMARY_CACHE_SECONDS)
        except RedisError as exc:
            logger.warning("could not cache the summary: %s", exc)

    # -- the summarization lock ------------------------------------------------

    async def acquire(self, thread: ThreadKey, ttl_seconds: float) -> str | None:
        token = secrets.token_hex(16)
        taken = await self._guarded(self._redis.set(
            f"tm:lock:{_id(thread)}", token, nx=True, px=int(ttl_seconds * 1000)))
        return token if taken else None

    async def release(self, thread: ThreadKey, token: str) -> None:
        await self._guarded(self._release(keys=[f"tm:lock:{_id(thread)}"], args=[token]))

    # -- counters and claims -----------------------------------------------------

    async def count(self, thread: ThreadKey, offset: int, tokens: int) -> tuple[int, int] | None:
        """Count one message; None if it was already counted."""
        result = await self._guarded(self._count(
            keys=[f"tm:counters:{_id(thread)}", f"tm:claim:{_id(thread)}:{offset}"],
            args=[tokens, CLAIM_SECONDS]))
        return None if not result else (int(result[0]), int(result[1]))

    async def counters(self, thread: ThreadKey) -> tuple[int, int]:
        values = await self._guarded(self._redis.hmget(
            f"tm:counters:{_id(thread)}", ["tokens", "messages"]))
        return int(values[0] or 0), int(values[1] or 0)

    async def settle(self, thread: ThreadKey,
                     covered: Sequence[tuple[int, int]]) -> tuple[int, int]:
        """Take summarized messages ``(offset, tokens)`` out of the counters."""
        args: list[int] = [value for pair in covered for value in pair]
        result = await self._guarded(self._settle(
            keys=[f"tm:counters:{_id(thread)}", f"tm:claim:{_id(thread)}:"],
            args=[*args, CLAIM_SECONDS]))
        return int(result[0]), int(result[1])

    # -- the flush-and-summarize guard --------------------------------------------

    async def flushed_through(self, thread: ThreadKey) -> int:
        value = await self._guarded(self._redis.get(f"tm:flushed:{_id(thread)}"))
        return int(value or 0)

    async def mark_flushed(self, thread: ThreadKey, offset: int) -> None:
        await self._guarded(self._redis.set(f"tm:flushed:{_id(thread)}", offset,
                                            ex=CLAIM_SECONDS))

    async def purge(self, thread: ThreadKey) -> int:
        """Delete every key of the thread (for an explicit purge)."""
        keys = [f"tm:{kind}:{_id(thread)}" for kind in ("summary", "lock", "counters", "flushed")]
        async for key in self._redis.scan_iter(match=f"tm:claim:{_id(thread)}:*", count=1000):
            keys.append(key)
        return await self._guarded(self._redis.delete(*keys))

    @staticmethod
    async def _guarded(operation):
        try:
            return await operation
        except RedisError as exc:
            raise Unavailable(f"redis unavailable: {exc}", reason="REDIS_UNAVAILABLE") from exc
