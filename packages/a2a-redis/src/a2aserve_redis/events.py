"""The Redis event log: :class:`RedisEventLog`, an :class:`~a2a_core.server.EventLog` on Streams.

Each task's log is one stream, ``P log:{id}``, whose entry ids are ``0-1``, ``0-2``,
``0-3``...: the sequence part *is* the event's seq (``XADD key 0-* ...`` makes Redis number
them), so every replica sees the same seqs in the same order, and ``Last-Event-ID`` replays
the same events wherever the client reconnects. An entry is ``e`` (the StreamResponse,
msgpack) and ``k`` (the writer's token, so that a retried append is not added twice).

Closing a log appends a marker entry ``end`` (it takes a seq, which no event uses), sets the
log's expiry (``retention``) and publishes the task id on ``P closed`` (the backend's
cancel listener hears it: see :mod:`a2aserve_redis.backend`); with the backend, the store's
terminal write does all that in its own script (see :mod:`a2aserve_redis.store`), where events
are appended too. Appends to a closed log are
refused; readers stop at the marker. ``maxlen`` trims long logs (approximately, as
``XADD MAXLEN ~`` does), so replay from before the trimmed part starts at the oldest kept.

Followers do not poll. One *notifier* per replica blocks in ``XREAD`` on every stream that
some local follower waits on (plus the replica's own wake-up stream, so that a follower of
a new stream can make it re-issue the read: an ``XADD`` there ends the block, and unlike
``CLIENT UNBLOCK`` it cannot arrive too early, since the entry stays). When a stream gets an
entry, the notifier sets that stream's :class:`anyio.Event`; the stream's followers then
read what is new with ``XRANGE`` from their own position. N followers of one task on a
replica cost one blocked read and one wake-up, not N connections.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Final, Self, cast

import anyio
import msgspec
from anyio.abc import TaskGroup, TaskStatus
from redis.asyncio import Redis

from a2a_core.errors import LocalProtocolError
from a2a_core.server.backends import EventLog, EventLogClosedError, LoggedEvent
from a2a_core.types import StreamResponse

from ._common import (
    LUA_INDEX,
    REDIS_DOWN,
    Arg,
    Entry,
    Keys,
    Script,
    as_entries,
    dedicated_client,
    logger,
    retry_writes,
    unavailable,
)

__all__ = ["RedisEventLog"]

_encoder: Final = msgspec.msgpack.Encoder()
_decoder: Final = msgspec.msgpack.Decoder(StreamResponse)
_READ_BATCH: Final = 256

_APPEND: Final = (
    LUA_INDEX
    + r"""
-- ARGV: prefix, task id, blob, token, maxlen (0: none) -> seq, or -1 if the log is closed
return append_event(ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]))
"""
)

_CLOSE: Final = (
    LUA_INDEX
    + r"""
-- ARGV: prefix, task id, retention_ms (-1: none) -> 1 closed now, 0 already
return close_log(ARGV[1], ARGV[2], tonumber(ARGV[3]))
"""
)


def _seq(entry_id: bytes) -> int:
    return int(entry_id.rpartition(b"-")[2])


class _Watch:
    """The local followers of one stream: where the notifier reads it from, and their event."""

    __slots__ = ("event", "followers", "forgotten", "key", "position")

    def __init__(self, key: str, position: bytes) -> None:
        self.key = key
        self.position = position
        self.followers = 0
        self.forgotten = False
        self.event = anyio.Event()

    def notify(self) -> None:
        event, self.event = self.event, anyio.Event()
        event.set()


class _Notifier:
    """One blocked ``XREAD`` per replica that wakes the followers of the streams it reads."""

    def __init__(self, redis: Redis, keys: Keys, replica: str) -> None:
        self._redis = redis
        self._wake_key = keys.wake(replica)
        self._watches: dict[str, _Watch] = {}
        self.running = False

    async def watch(self, key: str, after: int) -> _Watch:
        watch = self._watches.get(key)
        if watch is not None:
            watch.followers += 1
        else:
            watch = self._watches[key] = _Watch(key, f"0-{max(after, 0)}".encode())
            watch.followers = 1  # before awaiting: the caller unwatches if cancelled there
            try:
                # The notifier may be blocked on streams without this one: make it re-read.
                async with self._redis.pipeline(transaction=False) as pipe:
                    pipe.xadd(self._wake_key, {"w": "1"}, maxlen=16, approximate=True)
                    pipe.pexpire(self._wake_key, 86_400_000)
                    await pipe.execute()
            except REDIS_DOWN:
                pass  # the notifier is reconnecting, and will read this stream when it does
            except BaseException:
                self.unwatch(watch)
                raise
        return watch

    def unwatch(self, watch: _Watch) -> None:
        watch.followers -= 1
        if watch.followers == 0 and self._watches.get(watch.key) is watch:
            del self._watches[watch.key]

    def forget(self, key: str) -> None:
        watch = self._watches.pop(key, None)
        if watch is not None:
            watch.forgotten = True
            watch.notify()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Read and notify until cancelled; reconnect (and wake every follower) after errors."""
        client = dedicated_client(self._redis)
        self.running = True
        task_status.started()
        delay = 0.05
        failed = False
        try:
            while True:
                try:
                    last = as_entries(await client.xrevrange(self._wake_key, count=1))
                    wake_position = last[0][0] if last else b"0-0"
                    if failed:
                        failed = False
                        logger.info("stream notifier reconnected to Redis")
                        for watch in list(self._watches.values()):
                            watch.notify()  # they may have missed entries while it was down
                    while True:
                        streams: dict[Any, Any] = {self._wake_key: wake_position}
                        for key, watch in self._watches.items():
                            streams[key] = watch.position
                        reply = await client.xread(streams, count=64, block=0)
                        delay = 0.05
                        streamed = cast("list[tuple[bytes, list[Entry]]]", reply or [])
                        for name, entries in streamed:
                            key = name.decode()
                            if key == self._wake_key:
                                wake_position = entries[-1][0]
                                continue
                            watched = self._watches.get(key)
                            if watched is not None and entries:
                                watched.position = entries[-1][0]
                                watched.notify()
                except REDIS_DOWN as exc:
                    if not failed:
                        logger.warning("stream notifier lost Redis (%s); reconnecting", exc)
                    failed = True
                    for watch in list(self._watches.values()):
                        watch.notify()  # their own reads will fail and tell the client
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 1.0)
        finally:
            self.running = False
            with anyio.CancelScope(shield=True):
                await client.aclose()


class RedisEventLog(EventLog):
    """Per-task event logs on Redis Streams, shared by every replica (module docstring).

    :param redis: the client (``redis.asyncio.Redis``, ``decode_responses=False``).
    :param prefix: key prefix (the same as the store's).
    :param retention: seconds a closed log is kept for replay (``None``: until its task is
        swept from the store).
    :param maxlen: about how many entries a log keeps (0: no bound).
    :param write_retry: seconds an append or close keeps retrying while Redis is unreachable.
    :param replica_id: names this replica's notifier wake-up stream.

    ``follow`` needs the notifier: run the log (``async with log:``), which the backend's
    server service does.
    """

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = "a2a:",
        retention: float | None = 3600.0,
        maxlen: int = 10_000,
        write_retry: float = 5.0,
        replica_id: str = "",
    ) -> None:
        if retention is not None and retention < 0:
            raise ValueError("retention must be >= 0 or None")
        if maxlen < 0:
            raise ValueError("maxlen must be >= 0")
        self.redis = redis
        self.keys = Keys(prefix)
        self.retention = retention
        self.maxlen = maxlen
        self.write_retry = write_retry
        self._notifier = _Notifier(redis, self.keys, replica_id or uuid.uuid4().hex)
        self._append = Script(redis, _APPEND)
        self._close = Script(redis, _CLOSE)
        self._task_group: TaskGroup | None = None
        #: Tasks whose log the store's terminal save closed (see RedisTaskStore.close_logs):
        #: ``close`` has nothing left to do for them.
        self.closed_by_store: set[str] = set()

    @property
    def retention_ms(self) -> int:
        """``retention`` in milliseconds (-1: none), as the scripts take it."""
        return -1 if self.retention is None else int(self.retention * 1000)

    async def __aenter__(self) -> Self:
        self._task_group = await anyio.create_task_group().__aenter__()
        await self._task_group.start(self._notifier.run)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._task_group = self._task_group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)

    # -- the EventLog protocol -----------------------------------------------------------

    async def append(self, task_id: str, event: StreamResponse) -> int:
        """Append an event; return its seq. `EventLogClosedError` if the log is closed."""
        args: list[Arg] = [
            self.keys.prefix,
            task_id,
            _encoder.encode(event),
            uuid.uuid4().bytes,
            self.maxlen,
        ]

        async def append() -> Any:
            return await self._append(args=args)

        seq = int(
            await retry_writes(append, doing="appending an event", retry_for=self.write_retry)
        )
        if seq < 0:
            raise EventLogClosedError(f"The event log of task {task_id!r} is closed")
        return seq

    async def close(self, task_id: str) -> None:
        """Close the log (idempotent): a marker entry, the retention expiry, a notice."""
        if task_id in self.closed_by_store:
            # The store's terminal write closed it already, in the same script.
            self.closed_by_store.discard(task_id)
            return
        args: list[Arg] = [self.keys.prefix, task_id, self.retention_ms]

        async def close() -> Any:
            return await self._close(args=args)

        await retry_writes(close, doing="closing an event log", retry_for=self.write_retry)

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """The events with ``seq > after`` in the log now."""
        try:
            reply = await self.redis.xrange(self.keys.log(task_id), min=f"(0-{max(after, 0)}")
        except REDIS_DOWN as exc:
            raise unavailable(exc, "reading an event log") from None
        return [
            LoggedEvent(seq=_seq(entry_id), event=_decoder.decode(fields[b"e"]))
            for entry_id, fields in as_entries(reply)
            if b"e" in fields
        ]

    async def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        """Every event with ``seq > after``, then each new one as it is appended.

        Ends at the close marker, or when ``idle_timeout`` seconds of waiting pass with
        nothing new (also while Redis is unreachable: the caller then finds out itself).
        """
        notifier = self._notifier
        if not notifier.running:
            raise LocalProtocolError(
                "RedisEventLog is not running: run it with the server "
                "(A2AServer(..., backend=RedisBackend(...))) or `async with log:`"
            )
        key = self.keys.log(task_id)
        watch = await notifier.watch(key, after)
        seq = max(after, 0)
        waited = 0.0
        try:
            while not watch.forgotten:
                wakeup = watch.event  # before reading: an entry added after the read sets it
                try:
                    entries = as_entries(
                        await self.redis.xrange(key, min=f"(0-{seq}", count=_READ_BATCH)
                    )
                except REDIS_DOWN:
                    entries = []
                if entries:
                    for entry_id, fields in entries:
                        blob = fields.get(b"e")
                        if blob is None:
                            return  # the close marker
                        seq = _seq(entry_id)
                        waited = 0.0
                        yield LoggedEvent(seq=seq, event=_decoder.decode(blob))
                    continue
                if idle_timeout is None:
                    await wakeup.wait()
                    continue
                remaining = idle_timeout - waited
                if remaining <= 0:
                    return
                started = anyio.current_time()
                with anyio.move_on_after(remaining):
                    await wakeup.wait()
                waited += anyio.current_time() - started
        finally:
            notifier.unwatch(watch)

    async def forget(self, task_id: str) -> None:
        """Drop a task's log now; this replica's followers of it end at once."""
        key = self.keys.log(task_id)
        try:
            await self.redis.delete(key)
        except REDIS_DOWN as exc:
            raise unavailable(exc, "dropping an event log") from None
        self._notifier.forget(key)
