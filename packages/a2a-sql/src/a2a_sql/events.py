"""The SQL event log: :class:`SqlEventLog`, an :class:`~a2a_core.server.backends.EventLog`.

A task's events are rows of ``events`` (task id, seq, the ProtoJSON event), its log's
state one row of ``logs`` (the last seq given, whether it is closed). The seqs are the SSE
ids, so ``Last-Event-ID`` replays the same events after a restart. With the backend, the
task store appends in the *same transaction* as its write of the task
(:class:`~a2a_sql.SqlTaskStore` is a ``LoggedTaskStore``), so after a crash the log and the
task never disagree.

Followers do not poll: an append (or a logged write, or a close) in this process wakes the
followers of that task, which then read the table from the last seq they saw; with an
``idle_timeout`` they also read once when it runs out. On PostgreSQL, every change of a log
also sends a ``NOTIFY`` (a trigger, in the writer's transaction) that the backend's listener
turns into `SqlEventLog.deliver` (the event, when it travelled with the notification: the
follower yields it without a read) or `SqlEventLog.wake` on every other replica, and when
the listener had lost its connection, into `SqlEventLog.wake_all` (each follower re-reads
from the last seq it saw, so a missed notification costs one read, never an event). On
SQLite and MySQL, appends made by another process are seen at the next ``idle_timeout``:
they are single-replica backends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import anyio
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from a2a_core import codec
from a2a_core.server.backends import EventLog, EventLogClosedError, LoggedEvent
from a2a_core.types import StreamResponse

from ._common import check_document, db_now_us
from ._schema import Tables

__all__ = ["SqlEventLog"]

_READ_BATCH: Final = 256
#: Logs remembered as closed by a logged write, waiting for their `SqlEventLog.close`.
_CLOSED_BY_WRITE: Final = 1024


_PUSHED_MAX: Final = 8


class _Watch:
    """The local followers of one task's log, and the event that wakes them.

    ``kicks`` counts the wake-ups that only a read of the table can explain (a write here,
    a notification without the event); ``pushed`` holds the last few events that other
    replicas' notifications carried (seq -> body), which a follower at the seq before
    takes without a read; ``top`` is the highest of those seqs."""

    __slots__ = ("event", "followers", "forgotten", "kicks", "pushed", "top")

    def __init__(self) -> None:
        self.followers = 0
        self.forgotten = False
        self.event = anyio.Event()
        self.kicks = 0
        self.pushed: dict[int, str] = {}
        self.top = 0

    def notify(self) -> None:
        self.kicks += 1
        self._wake()

    def push(self, seq: int, body: str) -> None:
        self.pushed[seq] = body
        self.top = max(self.top, seq)
        if len(self.pushed) > _PUSHED_MAX:
            del self.pushed[min(self.pushed)]
        self._wake()

    def _wake(self) -> None:
        event, self.event = self.event, anyio.Event()
        event.set()


def encode_event(event: StreamResponse) -> str:
    """An event as the text of its ``body`` column (-32602 if no database can hold it)."""
    body = codec.encode(event).decode()
    check_document(body, "event")
    return body


class SqlEventLog(EventLog):
    """Per-task event logs in SQL tables (see the module docstring).

    :param engine: the backend's engine (`a2a_sql.SqlBackend` makes it).
    :param tables: the tables, under the backend's prefix.
    :param retention: seconds a closed log *without a task* is kept (a log whose task is
        stored goes with the task, when the store drops it); ``None``: until forgotten.
    """

    def __init__(
        self, engine: AsyncEngine, tables: Tables, *, retention: float | None = 3600.0
    ) -> None:
        if retention is not None and retention < 0:
            raise ValueError("retention must be >= 0 or None")
        self.engine = engine
        self.tables = tables
        self.retention = retention
        # Only tasks someone follows here, each removed with its last follower: bounded by
        # the open streams.
        self._watches: dict[str, _Watch] = {}
        # Logs a logged write of this process closed, so that the `close` the task writer
        # calls next costs no transaction; bounded (the oldest go first).
        self._closed_by_write: dict[str, None] = {}

    # -- used by the store, inside its transactions ----------------------------------------

    async def next_seq(self, conn: AsyncConnection, task_id: str, *, closing: bool) -> int:
        """Take the next seq of a task's log in ``conn``'s transaction (the log row locked
        until it ends); `EventLogClosedError` if the log is closed. ``closing``: close it
        with this event (a terminal write)."""
        logs = self.tables.logs
        row = (
            await conn.execute(
                sa.select(logs.c.last_seq, logs.c.closed)
                .where(logs.c.task_id == task_id)
                .with_for_update()
            )
        ).first()
        closed_us = db_now_us() if closing else None
        if row is None:
            await conn.execute(
                sa.insert(logs).values(
                    task_id=task_id, last_seq=1, closed=closing, closed_us=closed_us
                )
            )
            return 1
        if row.closed:
            raise EventLogClosedError(f"The event log of task {task_id!r} is closed")
        seq = int(row.last_seq) + 1
        values: dict[str, object] = {"last_seq": seq}
        if closing:
            values.update(closed=True, closed_us=closed_us)
        await conn.execute(sa.update(logs).where(logs.c.task_id == task_id).values(**values))
        return seq

    async def start(self, conn: AsyncConnection, task_id: str, body: str) -> int:
        """Begin the log of a task just inserted in ``conn``'s transaction with its first
        event; return its seq (1). No ``SELECT ... FOR UPDATE`` of the log row that does not
        exist yet: on MariaDB that takes a gap lock, and concurrent creates deadlock on
        them. The task's row, inserted first, already makes this transaction its only
        writer."""
        await conn.execute(
            sa.insert(self.tables.logs).values(
                task_id=task_id, last_seq=1, closed=False, closed_us=None
            )
        )
        await self.insert(conn, task_id, 1, body)
        return 1

    async def insert(
        self, conn: AsyncConnection, task_id: str, seq: int, body: str, token: str | None = None
    ) -> None:
        """Write one event row in ``conn``'s transaction; ``token``: the store's write it
        belongs to (``events.write_token``, what a retry after a lost reply looks for)."""
        await conn.execute(
            sa.insert(self.tables.events).values(
                task_id=task_id, seq=seq, body=body, write_token=token
            )
        )

    def notify(self, task_id: str) -> None:
        """Wake this process's followers of a task (after a commit)."""
        watch = self._watches.get(task_id)
        if watch is not None:
            watch.notify()

    def wake(self, task_id: str) -> None:
        """Wake the followers of a task here because another process changed its log (a
        ``NOTIFY``)."""
        self.notify(task_id)

    def deliver(self, task_id: str, seq: int, body: str) -> None:
        """Hand the followers of a task here an event another process committed (a
        ``NOTIFY`` that carried it): a follower at ``seq - 1`` yields it without a read."""
        watch = self._watches.get(task_id)
        if watch is not None:
            watch.push(seq, body)

    def wake_all(self) -> None:
        """Wake every follower here: notifications may have been missed (the listener
        reconnected), so each re-reads the table from the last seq it saw."""
        for watch in list(self._watches.values()):
            watch.notify()

    def forgotten(self, task_id: str) -> None:
        """End this process's followers of a task whose log was dropped."""
        watch = self._watches.pop(task_id, None)
        if watch is not None:
            watch.forgotten = True
            watch.notify()

    # -- the EventLog protocol -------------------------------------------------------------

    async def append(self, task_id: str, event: StreamResponse) -> int:
        """Append an event; return its seq. `EventLogClosedError` if the log is closed."""
        body = encode_event(event)
        for attempt in range(2):
            try:
                async with self.engine.begin() as conn:
                    seq = await self.next_seq(conn, task_id, closing=False)
                    await self.insert(conn, task_id, seq, body)
                break
            except IntegrityError:  # a concurrent first append made the log row: again
                if attempt:
                    raise
        self.notify(task_id)
        return seq

    def closed_by_write(self, task_id: str) -> None:
        """The store's terminal write closed this log (committed): `close` has nothing to do."""
        closed = self._closed_by_write
        closed[task_id] = None
        if len(closed) > _CLOSED_BY_WRITE:
            del closed[next(iter(closed))]

    async def close(self, task_id: str) -> None:
        """Mark the log closed (idempotent; the store's terminal write already did)."""
        if self._closed_by_write.pop(task_id, 0) is None:
            self.notify(task_id)
            return
        logs = self.tables.logs
        async with self.engine.begin() as conn:
            done = await conn.execute(
                sa.update(logs)
                .where(logs.c.task_id == task_id, logs.c.closed == sa.false())
                .values(closed=True, closed_us=db_now_us())
            )
            if done.rowcount == 0:
                exists = await conn.scalar(
                    sa.select(logs.c.closed).where(logs.c.task_id == task_id)
                )
                if exists is None:
                    await conn.execute(
                        sa.insert(logs).values(
                            task_id=task_id, last_seq=0, closed=True, closed_us=db_now_us()
                        )
                    )
        self.notify(task_id)

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """The events with ``seq > after`` in the log now."""
        events = self.tables.events
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                sa.select(events.c.seq, events.c.body)
                .where(events.c.task_id == task_id, events.c.seq > after)
                .order_by(events.c.seq)
            )
            return [_logged(seq, body) for seq, body in rows]

    async def _read_some(self, task_id: str, after: int) -> tuple[bool, list[LoggedEvent]]:
        """Whether the log is closed, then the events after ``after`` (at most a batch):
        read in that order, so a closed log's events are all there."""
        events, logs = self.tables.events, self.tables.logs
        if self.engine.dialect.name == "postgresql":
            return await self._read_some_pg(task_id, after)
        async with self.engine.connect() as conn:
            closed = await conn.scalar(sa.select(logs.c.closed).where(logs.c.task_id == task_id))
            rows = await conn.execute(
                sa.select(events.c.seq, events.c.body)
                .where(events.c.task_id == task_id, events.c.seq > after)
                .order_by(events.c.seq)
                .limit(_READ_BATCH)
            )
            return bool(closed), [_logged(seq, body) for seq, body in rows]

    async def _read_some_pg(self, task_id: str, after: int) -> tuple[bool, list[LoggedEvent]]:
        """`_read_some` in one statement (one snapshot, so a closed log's events are all
        there): the log row joined with its next events, one round trip per wake-up."""
        events, logs = self.tables.events, self.tables.logs
        batch = (
            sa.select(events.c.seq, events.c.body)
            .where(events.c.task_id == logs.c.task_id, events.c.seq > after)
            .order_by(events.c.seq)
            .limit(_READ_BATCH)
            .lateral()
        )
        query = (
            sa.select(logs.c.closed, batch.c.seq, batch.c.body)
            .select_from(logs.outerjoin(batch, sa.true()))
            .where(logs.c.task_id == task_id)
            .order_by(batch.c.seq)
        )
        async with self.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        closed = bool(rows and rows[0].closed)
        return closed, [_logged(row.seq, row.body) for row in rows if row.seq is not None]

    async def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        """Every event with ``seq > after``, then each new one as it is appended here.

        Ends when the log is closed and drained, when it is forgotten, or after
        ``idle_timeout`` seconds with nothing new."""
        watch = self._watches.get(task_id)
        if watch is None:
            watch = self._watches[task_id] = _Watch()
        watch.followers += 1
        seq = max(after, 0)
        waited = 0.0
        kicks = -1  # the table was never read: read it first
        try:
            while not watch.forgotten:
                wakeup = watch.event  # before looking: anything after sets it
                body = watch.pushed.get(seq + 1)
                if body is not None:  # carried by a notification: no read
                    seq += 1
                    waited = 0.0
                    yield _logged(seq, body)
                    continue
                if watch.kicks != kicks or watch.top > seq:
                    kicks = watch.kicks  # before reading: a change after the read kicks
                    closed, batch = await self._read_some(task_id, seq)
                    for logged in batch:
                        seq = logged.seq
                        waited = 0.0
                        yield logged
                    if len(batch) == _READ_BATCH:
                        kicks = -1  # there may be more already
                        continue
                    # All the read saw is out (no second, empty read per event): a closed
                    # log ends here, an open one waits for a change after the read.
                    if closed:
                        return
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
                if not wakeup.is_set():
                    kicks = -1  # it ran out: read once more before ending
        finally:
            watch.followers -= 1
            if watch.followers == 0 and self._watches.get(task_id) is watch:
                del self._watches[task_id]

    async def forget(self, task_id: str) -> None:
        """Drop a task's log now; its followers here end."""
        async with self.engine.begin() as conn:
            await self.delete_logs(conn, [task_id])
        self.forgotten(task_id)

    async def delete_logs(self, conn: AsyncConnection, task_ids: list[str]) -> None:
        """Delete the logs (events and state) of ``task_ids`` in ``conn``'s transaction."""
        events, logs = self.tables.events, self.tables.logs
        await conn.execute(sa.delete(events).where(events.c.task_id.in_(task_ids)))
        await conn.execute(sa.delete(logs).where(logs.c.task_id.in_(task_ids)))

    async def sweep(self, batch: int = 500) -> int:
        """Drop closed logs without a task older than ``retention``, ``batch`` at a time;
        returns how many."""
        if self.retention is None:
            return 0
        logs, tasks = self.tables.logs, self.tables.tasks
        cutoff = db_now_us() - int(self.retention * 1_000_000)
        dropped = 0
        while True:
            query = sa.select(logs.c.task_id).where(
                logs.c.closed_us <= cutoff, ~sa.exists().where(tasks.c.id == logs.c.task_id)
            )
            if self.engine.dialect.name == "postgresql":  # replicas sweep at once
                query = query.with_for_update(of=logs, skip_locked=True)
            async with self.engine.begin() as conn:
                ids = list(await conn.scalars(query.limit(batch)))
                if ids:
                    await self.delete_logs(conn, ids)
            for task_id in ids:
                self.forgotten(task_id)
            dropped += len(ids)
            if len(ids) < batch:
                return dropped


def _logged(seq: int, body: str) -> LoggedEvent:
    return LoggedEvent(seq=int(seq), event=codec.decode(body, StreamResponse))
