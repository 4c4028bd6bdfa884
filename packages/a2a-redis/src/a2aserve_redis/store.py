"""The Redis task store: :class:`RedisTaskStore`, a :class:`~a2a_core.server.TaskStore`.

A task is one hash (``P task:{id}``) holding the task encoded with msgspec (msgpack), its
version, the seq of its last logged event, and the few fields that indexing needs. Every
write is one Lua script, so it is atomic: ``save`` compares the version it was given with
the stored one and writes only if they match (optimistic concurrency: two replicas never
lose each other's writes; the loser re-reads and re-applies, as the task writer does).

ListTasks order is newest status first, then task id, both descending. Each task has one
index member ``{status time, 16 hex digits}:{task id}``; members sort as the order wants,
so the indexes are sorted sets whose scores are all 0 and which are read by member range
(``ZREVRANGEBYLEX``). There is one index per tenant, per tenant and state, per tenant and
context, and per tenant, context and state, and the same four again per tenant and owner
(the caller that created the task, for ListTasks of an owner): every combination of
ListTasks filters reads exactly one index, ``statusTimestampAfter`` is the lower end of
the member range and the page cursor its upper end, so a page costs O(log n + page) and
``totalSize`` one ``ZLEXCOUNT`` (O(log n)), whatever the number of tasks. Only an
``authorize_task`` filter has to look at every candidate (as with the in-memory store).

Terminal tasks expire ``ttl`` seconds after they finished: the script that writes the
terminal state puts the task in ``P expiring``; every replica's backend sweeps what has
expired once a second (and ListTasks sweeps first), dropping the task, its index entries,
its event log and its webhooks in one script.

With its event log attached (:meth:`RedisTaskStore.attach_log`, which the backend does),
the store is a :class:`~a2a_core.server.LoggedTaskStore`: the task writer's
``create_logged`` and ``save_logged`` append the event to the task's stream *in the same
script* as the write (nothing is appended when the version check fails, so the event of
a writer that lost a race never reaches the log), a terminal write closes the log there
too, and the reply brings the task's webhook configs along for the push lookup that
follows. One round trip per event instead of four. The small arguments of these scripts
travel as one msgpack array (``cmsgpack.unpack`` in Lua): cheaper to send than a dozen.

The store also records which replica runs a task: a write of a running state (submitted,
working) by a store that has a ``replica_id`` makes that replica the task's owner, in the
same script; see :mod:`a2aserve_redis.backend` for the leases built on it.
"""

from __future__ import annotations

import os
import secrets
from typing import Any, Final, cast

import msgspec
from redis.asyncio import Redis

from a2a_core.errors import LocalProtocolError
from a2a_core.server.backends import (
    NO_TIMESTAMP,
    ConcurrentUpdateError,
    EventLogClosedError,
    InvalidPageTokenError,
    StoredTask,
    TaskExistsError,
    TaskPage,
    TaskQuery,
    TaskStore,
    VisibleFilter,
    make_token,
    query_scope,
    read_token,
    status_micros,
)
from a2a_core.types import StreamResponse, Task, TaskState

from ._common import LUA_INDEX, REDIS_DOWN, Arg, Keys, Script, retry_writes, unavailable
from .events import RedisEventLog

__all__ = ["RUNNING_STATES", "RedisTaskStore"]

#: States in which an agent is (or may be) working on the task: those a replica owns.
RUNNING_STATES: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})

_encoder: Final = msgspec.msgpack.Encoder()
_task_decoder: Final = msgspec.msgpack.Decoder(Task)

# Status times are stored offset by 2**62 microseconds, so that every time (and "no
# timestamp", which sorts last) is a non-negative 16-digit hex number.
_OFFSET: Final = -NO_TIMESTAMP  # 2**62
_MEMBER_ID_START: Final = 17  # after "{16 hex digits}:"
_SCAN_CHUNK: Final = 200


# The writes of the task writer take their small arguments packed in one msgpack array
# (ARGV[1], unpacked by the script), then the task and the event as they are: a dozen
# separate arguments cost more to pack on the client than the script takes to run.
_CREATE: Final = (
    LUA_INDEX
    + r"""
-- KEYS[1] task; ARGV[1] {prefix, id, tenant, ctx, state, member, last_seq, running (0/1),
--   ttl_ms (-1: none), owner (the replica), token, maxlen, user (the caller's owner key)};
--   ARGV[2] the task; ARGV[3] an event to append first, whose seq is then last_seq
--   ('': none)
-- -> {1, last_seq} created; {0} the id is taken; {-2} the log is closed
local p, id, tenant, ctx, state, member, seq, running, ttl, owner, token, maxlen, user =
  unpack(cmsgpack.unpack(ARGV[1]))
if redis.call('EXISTS', KEYS[1]) == 1 then
  local mine = redis.call('HMGET', KEYS[1], 'w', 'q')
  if mine[1] == token then return {1, tonumber(mine[2])} end  -- our retried create
  return {0}
end
if ARGV[3] ~= '' then
  seq = append_event(p, id, ARGV[3], token, maxlen)
  if seq < 0 then return {-2} end
end
redis.call('HSET', KEYS[1], 'b', ARGV[2], 'v', 1, 'q', seq, 't', tenant, 'c', ctx,
           's', state, 'x', member, 'w', token, 'u', user)
index_add(p, tenant, ctx, state, member, user)
if running == 1 and owner ~= '' then
  redis.call('SADD', p .. 'owned:' .. owner, id)
  redis.call('HSET', KEYS[1], 'o', owner)
end
if ttl >= 0 then redis.call('ZADD', p .. 'expiring', now_ms() + ttl, id) end
return {1, seq}
"""
)

_SAVE: Final = (
    LUA_INDEX
    + r"""
-- KEYS[1] task; ARGV[1] {prefix, id, expected_version, last_seq, ctx, state, member,
--   running (0/1), ttl_ms (-1: none), owner, token, with_push (1: return the task's
--   webhook configs), close (a terminal write: the log's retention in ms, -1 for none;
--   -2: leave the log alone), maxlen}; ARGV[2] the task; ARGV[3] an event to append in
--   the same step, whose seq is then last_seq ('': none)
-- -> {1, version, tenant, last_seq, owner key[, push configs]} written; {0, version} someone else
--    wrote; {-1, 0} the task is gone; {-2, version} the log is closed
local p, id, expected, seq, ctx, state, member, running, ttl, owner, token, with_push,
      close, maxlen = unpack(cmsgpack.unpack(ARGV[1]))
local cur = redis.call('HMGET', KEYS[1], 'v', 't', 'c', 's', 'x', 'o', 'w', 'q', 'u')
if not cur[1] then return {-1, 0} end
local v = tonumber(cur[1])
if v ~= expected then
  if v == expected + 1 and cur[7] == token then  -- our retried save
    return {1, v, cur[2], tonumber(cur[8]), cur[9] or ''}
  end
  return {0, v}
end
if ARGV[3] ~= '' then
  seq = append_event(p, id, ARGV[3], token, maxlen)
  if seq < 0 then return {-2, v} end
end
local tenant = cur[2]
if cur[3] ~= ctx or cur[4] ~= state or cur[5] ~= member then
  index_remove(p, tenant, cur[3], cur[4], cur[5], cur[9])
  index_add(p, tenant, ctx, state, member, cur[9])
end
redis.call('HSET', KEYS[1], 'b', ARGV[2], 'v', v + 1, 'q', seq, 'c', ctx, 's', state,
           'x', member, 'w', token)
local old = cur[6]
if running == 1 and owner ~= '' then
  if old ~= owner then
    if old then redis.call('SREM', p .. 'owned:' .. old, id) end
    redis.call('SADD', p .. 'owned:' .. owner, id)
    redis.call('HSET', KEYS[1], 'o', owner)
  end
elseif old then
  redis.call('SREM', p .. 'owned:' .. old, id)
  redis.call('HDEL', KEYS[1], 'o')
end
if ttl >= 0 then
  redis.call('ZADD', p .. 'expiring', now_ms() + ttl, id)
else
  redis.call('ZREM', p .. 'expiring', id)
end
if close >= -1 then close_log(p, id, close) end
local out = {1, v + 1, tenant, seq, cur[9] or ''}
if with_push == 1 then out[6] = redis.call('HGETALL', p .. 'push:' .. id) end
return out
"""
)

_DELETE: Final = (
    LUA_INDEX
    + r"""
-- ARGV: prefix, id
drop_task(ARGV[1], ARGV[2])
return 1
"""
)

_SWEEP: Final = (
    LUA_INDEX
    + r"""
-- KEYS[1] expiring; ARGV: prefix, batch -> how many tasks were dropped
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now_ms(), 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(ids) do drop_task(ARGV[1], id) end
return #ids
"""
)

_LIST: Final = r"""
-- KEYS[1] index; ARGV: prefix, min, max, count, with_total
-- -> {total or -1, member, blob, member, blob, ...} newest first
local total = -1
if ARGV[5] == '1' then total = redis.call('ZLEXCOUNT', KEYS[1], ARGV[2], '+') end
local members = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[3], ARGV[2], 'LIMIT', 0,
                           tonumber(ARGV[4]))
local out = {total}
for _, m in ipairs(members) do
  out[#out + 1] = m
  out[#out + 1] = redis.call('HGET', ARGV[1] .. 'task:' .. string.sub(m, 18), 'b') or ''
end
return out
"""


def index_member(task: Task) -> str:
    """The task's place in ListTasks order (see the module docstring)."""
    return f"{status_micros(task.status.timestamp) + _OFFSET:016x}:{task.id}"


class RedisTaskStore(TaskStore):
    """Tasks in Redis, shared by every replica (see the module docstring).

    :param redis: the client (``redis.asyncio.Redis``, ``decode_responses=False``).
    :param prefix: key prefix, one per deployment (or tenant group) sharing a Redis.
    :param ttl: seconds a terminal task is kept after it finished (``None``: forever).
    :param write_retry: seconds a create or save keeps retrying while Redis is unreachable
        (a restart) before it gives up with :class:`~a2aserve_redis.StoreUnavailableError`.
    :param replica_id: the replica this store writes for; its writes of running states
        make it the task's owner (empty: no ownership, no leases).
    :param token_secret: signs page tokens; by default a random key kept in Redis, the same
        for every replica.

    Reads (get, list) fail fast with :class:`~a2aserve_redis.StoreUnavailableError` when Redis
    is unreachable, so a client gets a clear error instead of a hung request.
    """

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = "a2a:",
        ttl: float | None = 3600.0,
        write_retry: float = 5.0,
        replica_id: str = "",
        token_secret: bytes | None = None,
    ) -> None:
        if ttl is not None and ttl < 0:
            raise ValueError("ttl must be >= 0 or None")
        self.redis = redis
        self.keys = Keys(prefix)
        self.ttl = ttl
        self.write_retry = write_retry
        self.replica_id = replica_id
        self._secret = token_secret
        #: The Redis event log this store appends to, when it is the server's log too (see
        #: :meth:`attach_log`): the task writer then appends and saves in one script.
        self.event_log: RedisEventLog | None = None
        #: Set by :class:`~a2aserve_redis.RedisBackend`: every save returns the task's webhook
        #: configs, read in the same script, into this dict (the push-config store's
        #: ``hints``), where the push lookup that follows every event finds them instead of
        #: asking Redis again.
        self.push_hints: dict[str, list[bytes]] | None = None
        self._create = Script(redis, _CREATE)
        self._save = Script(redis, _SAVE)
        self._delete = Script(redis, _DELETE)
        self._sweep = Script(redis, _SWEEP)
        self._list = Script(redis, _LIST)

    # -- the TaskStore protocol ----------------------------------------------------------

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored task, or ``None`` when unknown (or swept after its TTL)."""
        try:
            row = await self.redis.hmget(self.keys.task(task_id), ["b", "v", "q", "t", "u"])
            blob, version, last_seq, tenant, owner = cast("list[bytes | None]", row)
        except REDIS_DOWN as exc:
            raise unavailable(exc, "reading a task") from None
        if blob is None or version is None or last_seq is None or tenant is None:
            return None
        return StoredTask(
            task=_task_decoder.decode(blob),
            version=int(version),
            last_seq=int(last_seq),
            tenant=tenant.decode(),
            owner=owner.decode() if owner is not None else "",
        )

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """Store a new task at version 1; :class:`TaskExistsError` if the id is taken."""
        return await self._create_task(task, tenant, owner, last_seq, None)

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """Replace the task if it is still at ``expected_version``, else
        :class:`ConcurrentUpdateError` (also when it is gone)."""
        return await self._save_task(task, expected_version, last_seq, None)

    # -- the LoggedTaskStore extension (a2a_core.server._store) ----------------------------

    def attach_log(self, log: RedisEventLog) -> None:
        """Append to ``log`` (same Redis, same prefix) in the writes of the task writer:
        :meth:`create_logged` and :meth:`save_logged` then log the event and write the
        task in one script, atomically, and a terminal save closes the log too."""
        if log.keys.prefix != self.keys.prefix:
            raise ValueError("the event log must use the store's key prefix")
        self.event_log = log

    async def create_logged(
        self, task: Task, event: StreamResponse, *, tenant: str = "", owner: str = ""
    ) -> StoredTask:
        """:meth:`create`, with ``event`` appended to the task's log in the same script."""
        return await self._create_task(task, tenant, owner, 0, event)

    async def save_logged(
        self, task: Task, event: StreamResponse, *, expected_version: int
    ) -> StoredTask:
        """:meth:`save`, with ``event`` appended to the task's log in the same script (not
        if the version is wrong); `EventLogClosedError` if the log is closed."""
        return await self._save_task(task, expected_version, 0, event)

    async def _create_task(
        self, task: Task, tenant: str, owner: str, last_seq: int, event: StreamResponse | None
    ) -> StoredTask:
        log = self._log_for(event)
        state = task.status.state
        header = _encoder.encode(
            (
                self.keys.prefix,
                task.id,
                tenant,
                task.context_id,
                state.value,
                index_member(task),
                last_seq,
                1 if state in RUNNING_STATES else 0,
                self._ttl_ms(state),
                self.replica_id,
                os.urandom(8).hex(),  # a str: cmsgpack takes no msgpack bin
                0 if log is None else log.maxlen,
                owner,
            )
        )
        args: list[Arg] = [
            header,
            _encoder.encode(task),
            b"" if event is None else _encoder.encode(event),
        ]

        async def create() -> Any:
            return await self._create(keys=[self.keys.task(task.id)], args=args)

        reply = await retry_writes(create, doing="creating a task", retry_for=self.write_retry)
        if reply[0] == 0:
            raise TaskExistsError(task.id)
        if reply[0] == -2:
            raise EventLogClosedError(f"The event log of task {task.id!r} is closed")
        return StoredTask(task=task, version=1, last_seq=int(reply[1]), tenant=tenant, owner=owner)

    async def _save_task(
        self, task: Task, expected_version: int, last_seq: int, event: StreamResponse | None
    ) -> StoredTask:
        log = self._log_for(event)
        state = task.status.state
        close = log is not None and state.is_terminal
        header = _encoder.encode(
            (
                self.keys.prefix,
                task.id,
                expected_version,
                last_seq,
                task.context_id,
                state.value,
                index_member(task),
                1 if state in RUNNING_STATES else 0,
                self._ttl_ms(state),
                self.replica_id,
                os.urandom(8).hex(),  # a str: cmsgpack takes no msgpack bin
                1 if self.push_hints is not None else 0,
                log.retention_ms if log is not None and close else -2,
                0 if log is None else log.maxlen,
            )
        )
        args: list[Arg] = [
            header,
            _encoder.encode(task),
            b"" if event is None else _encoder.encode(event),
        ]

        async def save() -> Any:
            return await self._save(keys=[self.keys.task(task.id)], args=args)

        reply = await retry_writes(save, doing="saving a task", retry_for=self.write_retry)
        code, version = reply[0], reply[1]
        if code == -1:
            raise ConcurrentUpdateError(f"task {task.id!r} is not stored")
        if code == 0:
            raise ConcurrentUpdateError(
                f"task {task.id!r} is at version {version}, not {expected_version}"
            )
        if code == -2:
            raise EventLogClosedError(f"The event log of task {task.id!r} is closed")
        if self.push_hints is not None and len(reply) > 5:
            if len(self.push_hints) > 10_000:  # hints nobody took (a failed write path)
                self.push_hints.clear()
            self.push_hints[task.id] = reply[5]
        if log is not None and close:
            log.closed_by_store.add(task.id)
            if len(log.closed_by_store) > 10_000:  # never taken: close() was not called
                log.closed_by_store.clear()
        return StoredTask(
            task=task,
            version=int(version),
            last_seq=int(reply[3]),
            tenant=bytes(reply[2]).decode(),
            owner=bytes(reply[4]).decode(),
        )

    def _log_for(self, event: StreamResponse | None) -> RedisEventLog | None:
        if event is None:
            return None
        if self.event_log is None:
            raise LocalProtocolError("RedisTaskStore.attach_log() was not called")
        return self.event_log

    async def delete(self, task_id: str) -> None:
        """Forget a task with its index entries, event log and webhooks."""
        try:
            await self._delete(args=[self.keys.prefix, task_id])
        except REDIS_DOWN as exc:
            raise unavailable(exc, "deleting a task") from None

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        """One page of ListTasks: newest status first, filtered, then ``visible``, then paged.

        O(log n + page) without ``visible`` (see the module docstring); with it, every
        matching task is read and shown to ``visible`` once, so that ``total_size`` is right.
        """
        if query.page_size < 1:
            raise ValueError("page_size must be at least 1")
        state = "" if query.state is TaskState.UNSPECIFIED else query.state.value
        index = self.keys.index(query.tenant, query.context_id, state, query.owner)
        scope = query_scope(query)
        try:
            secret = await self._token_secret()
            cursor = self._read_token(query.page_token, scope, secret) if query.page_token else ""
            await self.sweep()
            after = query.status_timestamp_after
            low = "-" if after is None else f"[{status_micros(after) + _OFFSET:016x}"
            high = f"({cursor}" if cursor else "+"
            if visible is None:
                total, rows = await self._rows(index, low, high, query.page_size + 1, True)
                more = len(rows) > query.page_size
                rows = rows[: query.page_size]
                tasks = [_task_decoder.decode(blob) for _, blob in rows]
                token = self._make_token(rows[-1][0], scope, secret) if more and rows else ""
                return TaskPage(tasks=tasks, next_page_token=token, total_size=total)
            return await self._list_visible(index, low, cursor, query, scope, secret, visible)
        except REDIS_DOWN as exc:
            raise unavailable(exc, "listing tasks") from None

    # -- maintenance ---------------------------------------------------------------------

    async def sweep(self, batch: int = 200) -> int:
        """Drop the terminal tasks whose TTL ran out (with their logs and webhooks); returns
        how many. The backend calls it every second on every replica."""
        dropped = 0
        while True:
            count = int(
                await self._sweep(keys=[self.keys.expiring], args=[self.keys.prefix, batch])
            )
            dropped += count
            if count < batch:
                return dropped

    # -- internals -----------------------------------------------------------------------

    def _ttl_ms(self, state: TaskState) -> int:
        if not state.is_terminal or self.ttl is None:
            return -1
        return int(self.ttl * 1000)

    async def _rows(
        self, index: str, low: str, high: str, count: int, with_total: bool
    ) -> tuple[int, list[tuple[str, bytes]]]:
        reply = await self._list(
            keys=[index], args=[self.keys.prefix, low, high, count, "1" if with_total else "0"]
        )
        total = int(reply[0])
        rows: list[tuple[str, bytes]] = []
        for i in range(1, len(reply), 2):
            blob = reply[i + 1]
            if blob:  # b"": dropped between the index read and now (cannot happen in a script)
                rows.append((reply[i].decode(), blob))
        return total, rows

    async def _list_visible(
        self,
        index: str,
        low: str,
        cursor: str,
        query: TaskQuery,
        scope: bytes,
        secret: bytes,
        visible: VisibleFilter,
    ) -> TaskPage:
        page: list[Task] = []
        last = ""
        total = 0
        more = False
        high = "+"
        while True:
            _, rows = await self._rows(index, low, high, _SCAN_CHUNK, False)
            for member, blob in rows:
                task = _task_decoder.decode(blob)
                if not await visible(task):
                    continue
                total += 1
                if cursor and member >= cursor:
                    continue  # before the cursor: counted, not shown
                if len(page) < query.page_size:
                    page.append(task)
                    last = member
                else:
                    more = True
            if len(rows) < _SCAN_CHUNK:
                break
            high = f"({rows[-1][0]}"
        token = self._make_token(last, scope, secret) if more and last else ""
        return TaskPage(tasks=page, next_page_token=token, total_size=total)

    async def _token_secret(self) -> bytes:
        if self._secret is None:
            await self.redis.set(self.keys.secret, secrets.token_hex(16), nx=True)
            value = await self.redis.get(self.keys.secret)
            if value is None:  # pragma: no cover - deleted between the two commands
                raise ConnectionError("the page-token secret vanished")
            self._secret = value if isinstance(value, bytes) else value.encode()
        return self._secret

    def _make_token(self, member: str, scope: bytes, secret: bytes) -> str:
        return make_token(secret, scope, member.encode())

    def _read_token(self, token: str, scope: bytes, secret: bytes) -> str:
        """The index member in a token this store issued for the same filters, else
        :class:`InvalidPageTokenError`."""
        cursor = read_token(secret, scope, token)
        try:
            if len(cursor) <= _MEMBER_ID_START:
                raise ValueError(cursor)
            return cursor.decode()
        except (UnicodeDecodeError, ValueError):
            raise InvalidPageTokenError("invalid page token") from None
