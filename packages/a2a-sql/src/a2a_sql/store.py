"""The SQL task store: :class:`SqlTaskStore`, a ``TaskStore`` and ``LoggedTaskStore``.

A task is one row of ``tasks``: its ProtoJSON (``body``), and the columns ListTasks and
the sweep need (tenant, owner, context, state, status time in microseconds, version, last
seq, when it expires). Writes are versioned: a save reads the row ``FOR UPDATE``, and
writes only if the version is the one the writer read (optimistic concurrency: the loser
gets `ConcurrentUpdateError`, re-reads and re-applies, as the task writer does).

``create_logged`` and ``save_logged`` append the event to the task's log (`SqlEventLog`)
in the same transaction as the write, and a terminal write closes the log there too: after
a crash, the task and its log never disagree.

A store with a ``replica_id`` records, in the same write, that replica as the ``runner`` of
a task it writes submitted or working (cleared by any other state): what the leases of
`a2a_sql.SqlBackend` on PostgreSQL fail when that replica is lost.

ListTasks is a keyset read: ``WHERE <filters> AND (status_us, id) < cursor ORDER BY
status_us DESC, id DESC LIMIT page + 1`` on the composite index that starts with the
query's equality filters, so a page costs O(log n + page) whatever the filters;
``totalSize`` is a ``COUNT`` over the same index range (O(matching tasks), in the
database). The page token is the shared signed cursor (``make_token``), whose secret is a
row of ``meta``, so every process on one database accepts every other's tokens.

Terminal tasks expire ``ttl`` seconds after they finished; :meth:`SqlTaskStore.sweep`
drops them, in batches, with their event logs and push configs.
"""

from __future__ import annotations

import secrets
from typing import Any, Final

import msgspec
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from a2a_core import codec
from a2a_core.server.backends import (
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

from ._common import now_us
from ._schema import Tables
from .events import SqlEventLog, encode_event

__all__ = ["RUNNING_STATES", "SqlTaskStore"]

#: States in which an agent is (or may be) working on the task.
RUNNING_STATES: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})

_cursor_encoder: Final = msgspec.msgpack.Encoder()
_cursor_decoder: Final = msgspec.msgpack.Decoder(tuple[int, str])
_SCAN_CHUNK: Final = 200
_SECRET_NAME: Final = "page_token_secret"


class SqlTaskStore(TaskStore):
    """Tasks in SQL (see the module docstring).

    :param engine: the backend's engine.
    :param tables: the tables, under the backend's prefix.
    :param event_log: the log the logged writes append to, in their transaction.
    :param ttl: seconds a terminal task is kept after it finished (``None``: forever).
    :param replica_id: the replica this store writes for (the ``runner`` of the running
        tasks it writes; ``""``: none).
    """

    def __init__(
        self,
        engine: AsyncEngine,
        tables: Tables,
        event_log: SqlEventLog,
        *,
        ttl: float | None = 3600.0,
        replica_id: str = "",
    ) -> None:
        if ttl is not None and ttl < 0:
            raise ValueError("ttl must be >= 0 or None")
        self.engine = engine
        self.tables = tables
        self.event_log = event_log
        self.ttl = ttl
        self.replica_id = replica_id
        #: The tasks this store last wrote submitted or working (their agents run here),
        #: until it writes them otherwise or they are known finished elsewhere.
        self.running_here: set[str] = set()
        self._secret: bytes | None = None
        # PostgreSQL writes an event in one round trip (a function of migration 0002).
        self._save_logged_sql: sa.TextClause | None = None
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        if engine.dialect.name == "postgresql":
            function = engine.dialect.identifier_preparer.quote(f"{tables.prefix}save_logged")
            self._save_logged_sql = sa.text(
                f"SELECT o_code, o_n, o_tenant, o_owner FROM {function}(:id, :expected, "
                ":closing, :closed_us, :event, :context_id, :state, :status_us, :expires_us, "
                ":body, :runner)"
            )

    # -- writes --------------------------------------------------------------------------

    def _columns(self, task: Task) -> dict[str, Any]:
        state = task.status.state
        expires = None
        if state.is_terminal and self.ttl is not None:
            expires = now_us() + int(self.ttl * 1_000_000)
        return {
            "context_id": task.context_id,
            "state": state.value,
            "status_us": status_micros(task.status.timestamp),
            "expires_us": expires,
            "body": codec.encode(task).decode(),
            "runner": (self.replica_id or None) if state in RUNNING_STATES else None,
        }

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """Store a new task at version 1; `TaskExistsError` if the id is taken."""
        try:
            async with self.engine.begin() as conn:
                await self._insert(conn, task, tenant, owner, last_seq)
        except IntegrityError:
            raise TaskExistsError(task.id) from None
        self._ran(task)
        return StoredTask(task=task, version=1, last_seq=last_seq, tenant=tenant, owner=owner)

    async def _insert(
        self, conn: AsyncConnection, task: Task, tenant: str, owner: str, last_seq: int
    ) -> None:
        await conn.execute(
            sa.insert(self.tables.tasks).values(
                id=task.id,
                tenant=tenant,
                owner=owner,
                version=1,
                last_seq=last_seq,
                **self._columns(task),
            )
        )

    async def create_logged(
        self, task: Task, event: StreamResponse, *, tenant: str = "", owner: str = ""
    ) -> StoredTask:
        """`create`, with ``event`` appended to the task's log in the same transaction."""
        body = encode_event(event)
        log = self.event_log
        try:
            async with self.engine.begin() as conn:
                # The task first (its last seq is its log's first): a taken id fails
                # before anything is appended.
                await self._insert(conn, task, tenant, owner, 1)
                seq = await log.start(conn, task.id, body)
        except IntegrityError:
            raise TaskExistsError(task.id) from None
        log.notify(task.id)
        self._ran(task)
        return StoredTask(task=task, version=1, last_seq=seq, tenant=tenant, owner=owner)

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """Replace the task if it is still at ``expected_version``, else
        `ConcurrentUpdateError` (also when it is gone)."""
        async with self.engine.begin() as conn:
            stored = await self._update(conn, task, expected_version, last_seq)
        self._ran(task)
        return stored

    async def save_logged(
        self, task: Task, event: StreamResponse, *, expected_version: int
    ) -> StoredTask:
        """`save`, with ``event`` appended in the same transaction (not if the version is
        wrong); a terminal write closes the log too. `EventLogClosedError` if it is closed."""
        body = encode_event(event)
        log = self.event_log
        if self._save_logged_sql is not None:
            stored = await self._save_logged_pg(task, body, expected_version)
        else:
            async with self.engine.begin() as conn:
                row = await self._lock(conn, task.id, expected_version)
                seq = await log.next_seq(conn, task.id, closing=task.status.state.is_terminal)
                await log.insert(conn, task.id, seq, body)
                stored = await self._update(conn, task, expected_version, seq, row)
        log.notify(task.id)
        self._ran(task)
        return stored

    def _ran(self, task: Task) -> None:
        # After a write: the tasks this store last wrote running (so the agent runs here),
        # which `a2a_sql.replicas` checks when it may have missed that one was finished.
        if task.status.state in RUNNING_STATES:
            self.running_here.add(task.id)
        else:
            self.running_here.discard(task.id)

    async def _save_logged_pg(self, task: Task, body: str, expected: int) -> StoredTask:
        """`save_logged` on PostgreSQL: the same steps in one statement (the function of
        migration 0002), so one round trip per event."""
        assert self._save_logged_sql is not None
        closing = task.status.state.is_terminal
        params = {
            "id": task.id,
            "expected": expected,
            "closing": closing,
            "closed_us": now_us() if closing else None,
            "event": body,
            **self._columns(task),
        }
        async with self._autocommit.connect() as conn:
            code, n, tenant, owner = (await conn.execute(self._save_logged_sql, params)).one()
        if code == 1:
            raise ConcurrentUpdateError(f"task {task.id!r} is not stored")
        if code == 2:
            raise ConcurrentUpdateError(f"task {task.id!r} is at version {n}, not {expected}")
        if code == 3:
            raise EventLogClosedError(f"The event log of task {task.id!r} is closed")
        return StoredTask(
            task=task, version=expected + 1, last_seq=int(n), tenant=tenant, owner=owner
        )

    async def _lock(self, conn: AsyncConnection, task_id: str, expected: int) -> Any:
        tasks = self.tables.tasks
        row = (
            await conn.execute(
                sa.select(tasks.c.version, tasks.c.tenant, tasks.c.owner)
                .where(tasks.c.id == task_id)
                .with_for_update()
            )
        ).first()
        if row is None:
            raise ConcurrentUpdateError(f"task {task_id!r} is not stored")
        if row.version != expected:
            raise ConcurrentUpdateError(
                f"task {task_id!r} is at version {row.version}, not {expected}"
            )
        return row

    async def _update(
        self,
        conn: AsyncConnection,
        task: Task,
        expected: int,
        last_seq: int,
        row: Any = None,
    ) -> StoredTask:
        if row is None:
            row = await self._lock(conn, task.id, expected)
        tasks = self.tables.tasks
        done = await conn.execute(
            sa.update(tasks)
            .where(tasks.c.id == task.id, tasks.c.version == expected)
            .values(version=expected + 1, last_seq=last_seq, **self._columns(task))
        )
        if done.rowcount != 1:  # only where FOR UPDATE locks nothing (SQLite)
            raise ConcurrentUpdateError(f"task {task.id!r} changed meanwhile")
        return StoredTask(
            task=task,
            version=expected + 1,
            last_seq=last_seq,
            tenant=row.tenant,
            owner=row.owner,
        )

    async def delete(self, task_id: str) -> None:
        """Forget a task with its event log and push configs."""
        async with self.engine.begin() as conn:
            await self._drop(conn, [task_id])
        self.running_here.discard(task_id)
        self.event_log.forgotten(task_id)

    async def _drop(self, conn: AsyncConnection, task_ids: list[str]) -> None:
        # The task row first: the lock order of every write (task, then log).
        tasks, push = self.tables.tasks, self.tables.push_configs
        await conn.execute(sa.delete(tasks).where(tasks.c.id.in_(task_ids)))
        await self.event_log.delete_logs(conn, task_ids)
        await conn.execute(sa.delete(push).where(push.c.task_id.in_(task_ids)))

    # -- reads ---------------------------------------------------------------------------

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored task, or ``None`` when unknown (or swept after its TTL)."""
        t = self.tables.tasks.c
        async with self.engine.connect() as conn:
            row = (
                await conn.execute(
                    sa.select(t.body, t.version, t.last_seq, t.tenant, t.owner).where(
                        t.id == task_id
                    )
                )
            ).first()
        if row is None:
            return None
        return StoredTask(
            task=codec.decode(row.body, Task),
            version=int(row.version),
            last_seq=int(row.last_seq),
            tenant=row.tenant,
            owner=row.owner,
        )

    async def running_task_ids(self) -> list[str]:
        """The ids of the tasks stored as submitted or working (the restart rule)."""
        t = self.tables.tasks.c
        async with self.engine.connect() as conn:
            rows = await conn.scalars(
                sa.select(t.id).where(t.state.in_([s.value for s in RUNNING_STATES]))
            )
            return list(rows)

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        """One page of ListTasks: newest status first, filtered, then ``visible``, paged."""
        if query.page_size < 1:
            raise ValueError("page_size must be at least 1")
        t = self.tables.tasks.c
        scope = query_scope(query)
        secret = await self._token_secret()
        cursor = self._read_token(query.page_token, scope, secret) if query.page_token else None
        filters: list[sa.ColumnElement[bool]] = [t.tenant == query.tenant]
        if query.owner is not None:
            filters.append(t.owner == query.owner)
        if query.context_id:
            filters.append(t.context_id == query.context_id)
        if query.state is not TaskState.UNSPECIFIED:
            filters.append(t.state == query.state.value)
        if query.status_timestamp_after is not None:
            filters.append(t.status_us >= status_micros(query.status_timestamp_after))
        order = (t.status_us.desc(), t.id.desc())
        async with self.engine.connect() as conn:
            if visible is not None:
                return await self._list_visible(
                    conn, filters, cursor, query, scope, secret, visible
                )
            total = int(
                await conn.scalar(
                    sa.select(sa.func.count()).select_from(self.tables.tasks).where(*filters)
                )
                or 0
            )
            page_filters = filters if cursor is None else [*filters, _before(t, cursor)]
            rows = (
                await conn.execute(
                    sa.select(t.status_us, t.id, t.body)
                    .where(*page_filters)
                    .order_by(*order)
                    .limit(query.page_size + 1)
                )
            ).all()
        more = len(rows) > query.page_size
        rows = rows[: query.page_size]
        token = ""
        if more and rows:
            token = make_token(secret, scope, _cursor_encoder.encode((rows[-1][0], rows[-1][1])))
        tasks = [codec.decode(row.body, Task) for row in rows]
        return TaskPage(tasks=tasks, next_page_token=token, total_size=total)

    async def _list_visible(
        self,
        conn: AsyncConnection,
        filters: list[sa.ColumnElement[bool]],
        cursor: tuple[int, str] | None,
        query: TaskQuery,
        scope: bytes,
        secret: bytes,
        visible: VisibleFilter,
    ) -> TaskPage:
        """Every matching task shown to ``visible`` once (so the total is right), in
        chunks along the index."""
        t = self.tables.tasks.c
        page: list[Task] = []
        last: tuple[int, str] | None = None
        total = 0
        more = False
        position: tuple[int, str] | None = None
        while True:
            chunk_filters = filters if position is None else [*filters, _before(t, position)]
            rows = (
                await conn.execute(
                    sa.select(t.status_us, t.id, t.body)
                    .where(*chunk_filters)
                    .order_by(t.status_us.desc(), t.id.desc())
                    .limit(_SCAN_CHUNK)
                )
            ).all()
            for row in rows:
                key = (int(row.status_us), str(row.id))
                task = codec.decode(row.body, Task)
                if not await visible(task):
                    continue
                total += 1
                if cursor is not None and key >= cursor:
                    continue  # before the cursor: counted, not shown
                if len(page) < query.page_size:
                    page.append(task)
                    last = key
                else:
                    more = True
            if len(rows) < _SCAN_CHUNK:
                break
            position = (int(rows[-1].status_us), str(rows[-1].id))
        token = ""
        if more and last is not None:
            token = make_token(secret, scope, _cursor_encoder.encode(last))
        return TaskPage(tasks=page, next_page_token=token, total_size=total)

    # -- maintenance ---------------------------------------------------------------------

    async def sweep(self, batch: int = 500) -> int:
        """Drop the terminal tasks whose TTL ran out, with their logs and push configs,
        ``batch`` per transaction; returns how many."""
        t = self.tables.tasks.c
        dropped = 0
        while True:
            query = sa.select(t.id).where(t.expires_us <= now_us()).order_by(t.expires_us)
            if self.engine.dialect.name == "postgresql":
                # Replicas sweep at once: each takes rows the others have not locked, so
                # they never wait on, or deadlock with, one another.
                query = query.with_for_update(skip_locked=True)
            async with self.engine.begin() as conn:
                ids = list(await conn.scalars(query.limit(batch)))
                if ids:
                    await self._drop(conn, ids)
            for task_id in ids:
                self.event_log.forgotten(task_id)
            dropped += len(ids)
            if len(ids) < batch:
                return dropped

    async def _token_secret(self) -> bytes:
        if self._secret is None:
            meta = self.tables.meta
            async with self.engine.begin() as conn:
                value = await conn.scalar(
                    sa.select(meta.c.value).where(meta.c.name == _SECRET_NAME)
                )
            if value is None:
                try:
                    async with self.engine.begin() as conn:
                        await conn.execute(
                            sa.insert(meta).values(name=_SECRET_NAME, value=secrets.token_hex(16))
                        )
                except IntegrityError:
                    pass  # another process made it first: take theirs
                async with self.engine.connect() as conn:
                    value = await conn.scalar(
                        sa.select(meta.c.value).where(meta.c.name == _SECRET_NAME)
                    )
            assert value is not None
            self._secret = str(value).encode()
        return self._secret

    def _read_token(self, token: str, scope: bytes, secret: bytes) -> tuple[int, str]:
        """The cursor in a token this store issued for the same filters, else
        `InvalidPageTokenError`."""
        cursor = read_token(secret, scope, token)
        try:
            return _cursor_decoder.decode(cursor)
        except msgspec.DecodeError:
            raise InvalidPageTokenError("invalid page token") from None


def _before(t: Any, cursor: tuple[int, str]) -> sa.ColumnElement[bool]:
    """Rows after ``cursor`` in ListTasks order ((status_us, id) descending): spelled out,
    which every database reads as a range of the index on status_us."""
    status, task_id = cursor
    return sa.or_(t.status_us < status, sa.and_(t.status_us == status, t.id < task_id))
