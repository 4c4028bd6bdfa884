"""What every part of the Redis backend shares: key names, the unavailable error, retries.

Key layout (``P`` is the key prefix, ``a2a:`` by default)::

    P task:{id}          hash: the task (msgpack blob), version, last seq, tenant, context,
                         state, index member, owner replica, last write token
    P ix:{tenant}...     sorted sets (all scores 0, ordered by member): ListTasks indexes
    P expiring           sorted set: terminal task ids by the time they expire (ms)
    P log:{id}           stream: the task's event log (ids 0-1, 0-2, ... are the seqs)
    P push:{id}          hash: the task's webhook configs
    P pushq              stream + consumer group: push deliveries waiting for a replica
    P replicas           sorted set: replica ids by when their lease runs out (ms)
    P owned:{replica}    set: the running tasks a replica holds
    P wake:{replica}     stream: wakes a replica's stream notifier (see events.py)
    P closed             pub/sub channel: ids of tasks whose log was just closed
    P secret             the key that signs ListTasks page tokens (shared by replicas)

Every script touches keys of one prefix only, but not only the keys it declares: the
backend needs one Redis (a primary), not a Cluster.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final, TypeAlias, TypeVar, cast

import anyio
from redis import exceptions as redis_errors
from redis.asyncio import ConnectionPool, Redis

from a2a_core.server.backends import BackendUnavailableError, OutageLog

__all__ = [
    "REDIS_DOWN",
    "Arg",
    "Entry",
    "as_entries",
    "Keys",
    "Script",
    "StoreUnavailableError",
    "dedicated_client",
    "retry_writes",
    "unavailable",
]

logger: Final = logging.getLogger("a2aserve_redis")

#: What Redis being unreachable (down, restarting, loading its data) looks like to the client.
REDIS_DOWN: Final = (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)

_T = TypeVar("_T")

#: A script argument.
Arg: TypeAlias = bytes | str | int | float
#: A stream entry as the client returns it (``decode_responses`` off): id and fields.
Entry: TypeAlias = tuple[bytes, dict[bytes, bytes]]


def as_entries(reply: object) -> list[Entry]:
    """A stream reply (XRANGE, XCLAIM...) with its real types (redis-py types it loosely)."""
    return cast(list[Entry], reply or [])


#: The core's `BackendUnavailableError` under the name this package gave it first:
#: -32603 "Task store unavailable" (HTTP 503 on REST).
StoreUnavailableError = BackendUnavailableError

#: Redis's outages, each logged once (one line, no traceback), not once per request.
outages: Final = OutageLog(logger, "Redis")


def unavailable(exc: BaseException, doing: str) -> BackendUnavailableError:
    """Count ``exc`` (Redis unreachable while ``doing``) and make the client's error of it."""
    return outages.failed(exc, doing)


async def retry_writes(
    operation: Callable[[], Awaitable[_T]], *, doing: str, retry_for: float
) -> _T:
    """Run a write, retrying while Redis is unreachable for up to ``retry_for`` seconds.

    Writes of a running task (event appends, task saves) come from an agent that cannot
    answer a client with an error; a Redis restart of a few seconds must not fail its task.
    The writes are idempotent (each carries a token the scripts recognise), so a retry
    after a reply lost in transit does not apply twice.
    """
    deadline = time.monotonic() + retry_for
    delay = 0.05
    while True:
        try:
            return await operation()
        except REDIS_DOWN as exc:
            if time.monotonic() + delay > deadline:
                raise unavailable(exc, doing) from None
            logger.info("Redis unreachable while %s; retrying in %.2f s", doing, delay)
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.5)


class Script:
    """A Lua script run by its SHA (``EVALSHA``), loaded again when Redis lost it (after a
    restart). Leaner than redis-py's ``register_script``: one command, nothing else, on
    the path every task write takes."""

    def __init__(self, redis: Redis, source: str) -> None:
        self.redis = redis
        self.source = source
        self.sha = hashlib.sha1(source.encode(), usedforsecurity=False).hexdigest()

    async def __call__(self, *, keys: Sequence[Arg] = (), args: Sequence[Arg] = ()) -> Any:
        try:
            return await self.redis.execute_command(  # type: ignore[no-untyped-call]
                "EVALSHA", self.sha, len(keys), *keys, *args
            )
        except redis_errors.NoScriptError:
            await self.redis.script_load(self.source)
            return await self.redis.execute_command(  # type: ignore[no-untyped-call]
                "EVALSHA", self.sha, len(keys), *keys, *args
            )


def dedicated_client(redis: Redis) -> Redis:
    """A client of its own, on the same server, for a command that blocks (``XREAD BLOCK``,
    ``XREADGROUP BLOCK``, ``SUBSCRIBE``): no socket timeout, and never a pooled connection
    that a request is waiting for."""
    pool = redis.connection_pool
    kwargs = dict(pool.connection_kwargs)
    kwargs["socket_timeout"] = None
    return Redis.from_pool(ConnectionPool(connection_class=pool.connection_class, **kwargs))


def _part(text: str) -> str:
    # Length-prefixed, so that no tenant or context name can make two index keys collide.
    return f"{len(text.encode())}:{text}"


class Keys:
    """Key names under one prefix (see the module docstring)."""

    def __init__(self, prefix: str) -> None:
        if prefix and not prefix.endswith(":"):
            prefix += ":"
        self.prefix = prefix
        self.expiring = prefix + "expiring"
        self.replicas = prefix + "replicas"
        self.push_queue = prefix + "pushq"
        self.closed_channel = prefix + "closed"
        #: Where a replica that stops with running tasks (a hand-off) says so: the others
        #: look for run-out leases at once.
        self.handoff_channel = prefix + "handoff"
        self.secret = prefix + "secret"

    def task(self, task_id: str) -> str:
        """The task's hash."""
        return f"{self.prefix}task:{task_id}"

    def log(self, task_id: str) -> str:
        """The task's event stream."""
        return f"{self.prefix}log:{task_id}"

    def push(self, task_id: str) -> str:
        """The task's webhook configs."""
        return f"{self.prefix}push:{task_id}"

    def owned(self, replica: str) -> str:
        """The running tasks a replica holds."""
        return f"{self.prefix}owned:{replica}"

    def wake(self, replica: str) -> str:
        """The replica's notifier wake-up stream."""
        return f"{self.prefix}wake:{replica}"

    def index(
        self, tenant: str, context_id: str = "", state: str = "", owner: str | None = None
    ) -> str:
        """A ListTasks index: of a tenant, optionally narrowed to an owner (the anonymous
        owner ``""`` included; ``None``: every owner), a context and/or a state.

        Must match ``index_key`` in :data:`LUA_INDEX` exactly.
        """
        key = f"{self.prefix}ix:{_part(tenant)}"
        if owner is not None:
            key += f":u{_part(owner)}"
        if context_id:
            key += f":c{_part(context_id)}"
        if state:
            key += f":s{state}"
        return key


#: Lua helpers shared by the store's scripts: index keys and index maintenance.
#: (``#s`` is the length in bytes, as ``len(s.encode())`` in :meth:`Keys.index`.)
LUA_INDEX: Final = r"""
local function part(s) return #s .. ':' .. s end
-- user: the task's owner (a string, '' for the anonymous owner), or false for every owner
local function index_key(p, tenant, ctx, state, user)
  local key = p .. 'ix:' .. part(tenant)
  if user then key = key .. ':u' .. part(user) end
  if ctx ~= '' then key = key .. ':c' .. part(ctx) end
  if state ~= '' then key = key .. ':s' .. state end
  return key
end
-- Every index a task is in: its tenant's and its owner's, each narrowed by context, state.
local function index_keys(p, tenant, ctx, state, user)
  local keys = {}
  for _, u in ipairs({false, user or false}) do
    keys[#keys + 1] = index_key(p, tenant, '', '', u)
    keys[#keys + 1] = index_key(p, tenant, '', state, u)
    if ctx ~= '' then
      keys[#keys + 1] = index_key(p, tenant, ctx, '', u)
      keys[#keys + 1] = index_key(p, tenant, ctx, state, u)
    end
  end
  return keys
end
local function index_add(p, tenant, ctx, state, member, user)
  for _, key in ipairs(index_keys(p, tenant, ctx, state, user)) do
    redis.call('ZADD', key, 0, member)
  end
end
local function index_remove(p, tenant, ctx, state, member, user)
  for _, key in ipairs(index_keys(p, tenant, ctx, state, user)) do
    redis.call('ZREM', key, member)
  end
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- Append an event to a task's log -> its seq, or -1 if the log is closed. The token makes
-- a retried append (the reply was lost) return the first one's seq instead of adding again.
local function append_event(p, id, blob, token, maxlen)
  local log = p .. 'log:' .. id
  local last = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)
  if last[1] then
    local fields = last[1][2]
    if fields[1] == 'end' then return -1 end
    if fields[4] == token then return tonumber(string.match(last[1][1], '%-(%d+)$')) end
  end
  local entry
  if maxlen > 0 then
    entry = redis.call('XADD', log, 'MAXLEN', '~', maxlen, '0-*', 'e', blob, 'k', token)
  else
    entry = redis.call('XADD', log, '0-*', 'e', blob, 'k', token)
  end
  return tonumber(string.match(entry, '%-(%d+)$'))
end
-- Close a task's log: the end marker (once), its expiry, the notice on P closed.
local function close_log(p, id, retention_ms)
  local log = p .. 'log:' .. id
  local last = redis.call('XREVRANGE', log, '+', '-', 'COUNT', 1)
  if last[1] and last[1][2][1] == 'end' then return 0 end
  redis.call('XADD', log, '0-*', 'end', '1')
  if retention_ms >= 0 then redis.call('PEXPIRE', log, retention_ms) end
  redis.call('PUBLISH', p .. 'closed', id)
  return 1
end
-- Forget a task entirely: indexes, ownership, expiry entry, log and webhooks.
local function drop_task(p, id)
  local key = p .. 'task:' .. id
  local cur = redis.call('HMGET', key, 't', 'c', 's', 'x', 'o', 'u')
  if cur[4] then index_remove(p, cur[1], cur[2], cur[3], cur[4], cur[6]) end
  if cur[5] then redis.call('SREM', p .. 'owned:' .. cur[5], id) end
  redis.call('DEL', key, p .. 'log:' .. id, p .. 'push:' .. id)
  redis.call('ZREM', p .. 'expiring', id)
end
"""
