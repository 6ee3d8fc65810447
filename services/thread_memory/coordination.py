"""Every Redis key thread memory uses. Redis holds no messages, and it is only a
cache: everything here is derived from the journal and the object store, or is
short-lived coordination, so wiping Redis at any moment changes no context and
loses no summary.

    tm:summary:{thread}   the cached summary (one hour)
    tm:lock:{thread}      the summarization lock (a token, five minutes)
    tm:counters:{thread}  the two threshold counters, as a hash: ``since`` (the
                          summary's last offset), ``through`` (the last offset
                          counted) and ``tokens`` (tokens in between); messages
                          since the summary are ``through - since``. ``through``
                          is also the per-message side-effect claim: a message
                          at or below it has been counted and never counts again
    tm:flushed:{thread}   the flush-and-summarize guard: the last offset the
                          pre-compaction flush has covered, so a retried job
                          never flushes the same messages twice

``{thread}`` is ``account/agent/thread`` ("/" never appears in an id). Every
key expires: an abandoned thread (deleted, say) leaves nothing behind for good.
The counters are rebuilt from the journal whenever they are missing (wiped,
expired, evicted) or do not reach the message being counted, and a restored older
copy can only overstate them: they never understate, so a needed summary is
never skipped (see ``thresholds``).
"""

from __future__ import annotations

import logging
import secrets

from redis.asyncio import Redis
from redis.exceptions import RedisError

from libs.errors import Unavailable
from services.thread_memory.summaries import Summary, ThreadKey
from services.thread_memory.thresholds import Backlog

logger = logging.getLogger(__name__)

SUMMARY_CACHE_SECONDS = 3600
KEY_SECONDS = 7 * 24 * 3600  # counters and flush guard: a week after the thread's last message
KINDS = ("summary", "lock", "counters", "flushed")

# Count one message if it is the next one after ``through``; a message at or below
# it was counted before. Answers the counters, or nothing when they are missing or
# do not reach the message (the caller rebuilds them from the journal).
_COUNT = """
local state = redis.call('HMGET', KEYS[1], 'since', 'through', 'tokens')
if not state[1] or not state[2] or not state[3] then return false end
local through, offset = tonumber(state[2]), tonumber(ARGV[1])
if offset > through + 1 then return false end
local tokens = tonumber(state[3])
if offset == through + 1 then
  tokens = redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[2])
  redis.call('HSET', KEYS[1], 'through', offset)
  through = offset
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {tonumber(state[1]), through, tokens}
"""

# Store counters measured from durable state, unless these already counted further:
# then the measure is older than they are, and dropping them makes the next
# message measure again.
_REMEMBER = """
local through = redis.call('HGET', KEYS[1], 'through')
if through and tonumber(through) > tonumber(ARGV[2]) then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('HSET', KEYS[1], 'since', ARGV[1], 'through', ARGV[2], 'tokens', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _key(kind: str, thread: ThreadKey) -> str:
    return f"tm:{kind}:{thread.account_id}/{thread.agent_id}/{thread.thread_id}"


class Coordination:
    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._count = redis.register_script(_COUNT)
        self._remember = redis.register_script(_REMEMBER)
        self._release = redis.register_script(_RELEASE)

    @classmethod
    def connect(cls, url: str) -> Coordination:
        return cls(Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5))

    async def close(self) -> None:
        await self._redis.aclose()

    # -- summary cache (a miss when Redis is down: the object store answers) -------

    async def cached_summary(self, thread: ThreadKey) -> Summary | None:
        try:
            raw = await self._redis.get(_key("summary", thread))
        except RedisError as exc:
            logger.warning("summary cache unavailable, reading the store: %s", exc)
            return None
        return None if raw is None else Summary.decode(raw)

    async def cache_summary(self, thread: ThreadKey, summary: Summary) -> None:
        try:
            await self._redis.set(_key("summary", thread), summary.encode(),
                                  ex=SUMMARY_CACHE_SECONDS)
        except RedisError as exc:
            logger.warning("could not cache the summary: %s", exc)

    # -- the summarization lock ------------------------------------------------

    async def acquire(self, thread: ThreadKey, ttl_seconds: float) -> str | None:
        token = secrets.token_hex(16)
        taken = await self._guarded(self._redis.set(
            _key("lock", thread), token, nx=True, px=int(ttl_seconds * 1000)))
        return token if taken else None

    async def release(self, thread: ThreadKey, token: str) -> None:
        await self._guarded(self._release(keys=[_key("lock", thread)], args=[token]))

    # -- the threshold counters ----------------------------------------------------

    async def count(self, thread: ThreadKey, offset: int, tokens: int) -> Backlog | None:
        """Count one message (once, however often it is delivered) and answer the
        counters; None when they must be measured again from durable state."""
        result = await self._guarded(self._count(keys=[_key("counters", thread)],
                                                 args=[offset, tokens, KEY_SECONDS]))
        return Backlog(*(int(v) for v in result)) if result else None

    async def counters(self, thread: ThreadKey) -> Backlog | None:
        since, through, tokens = await self._guarded(self._redis.hmget(
            _key("counters", thread), ["since", "through", "tokens"]))
        if since is None or through is None or tokens is None:
            return None
        return Backlog(int(since), int(through), int(tokens))

    async def remember(self, thread: ThreadKey, backlog: Backlog) -> None:
        """Store counters measured from durable state (see ``_REMEMBER``)."""
        await self._guarded(self._remember(
            keys=[_key("counters", thread)],
            args=[backlog.summary_end, backlog.last_offset, backlog.tokens, KEY_SECONDS]))

    # -- the flush-and-summarize guard --------------------------------------------

    async def flushed_through(self, thread: ThreadKey) -> int:
        value = await self._guarded(self._redis.get(_key("flushed", thread)))
        return int(value or 0)

    async def mark_flushed(self, thread: ThreadKey, offset: int) -> None:
        await self._guarded(self._redis.set(_key("flushed", thread), offset, ex=KEY_SECONDS))

    async def purge(self, thread: ThreadKey) -> int:
        """Delete the thread's keys, named exactly: never a pattern, which would also
        match the keys of threads whose id starts with this one's."""
        return await self._guarded(self._redis.delete(*(_key(kind, thread) for kind in KINDS)))

    @staticmethod
    async def _guarded(operation):
        try:
            return await operation
        except RedisError as exc:
            raise Unavailable(f"redis unavailable: {exc}", reason="REDIS_UNAVAILABLE") from exc
