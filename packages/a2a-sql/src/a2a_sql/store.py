"""The SQL task store: :class:`SqlTaskStore`, a ``TaskStore``, ``LoggedTaskStore`` and
``BatchLoggedTaskStore``.

A task is one row of ``tasks``: its ProtoJSON (``body``), and the columns ListTasks and
the sweep need (tenant, owner, context, state, status time in microseconds, version, last
seq, when it expires). Writes are versioned: a save writes only if the version is the one
the writer read (optimistic concurrency: the loser gets `ConcurrentUpdateError`, re-reads
and re-applies, as the task writer does).

``create_logged``, ``create_logged_many`` and ``save_logged`` append the events to the
task's log (`SqlEventLog`) in the same transaction (on PostgreSQL: the same statement) as
the write, and a terminal write closes the log there too: after a crash, the task and its
log never disagree. They are the writes every event costs, so they are lean: see
`SqlTaskStore.save_logged` and ``tests/sql/test_statements.py``.

What the tables cannot hold (ids over `KEY_LENGTH` bytes, text with U+0000) is refused
with InvalidParams (`SqlTaskStore.check_message`, before the agent runs).
``save_logged`` queues the event's webhook jobs in that write too (``push_queue``,
`a2a_sql.push_queue`): no logged event lacks them.

Writes ride out a short outage (a database restart or failover): a create or save that
finds the database unreachable is tried again for up to ``write_retry`` seconds. A retry
after a reply lost in transit must not apply twice, so when the retry finds the id taken
or the version moved, `_already_written` looks whether an earlier attempt did commit, and
then reports the write done. A logged write is known by its write token: a random one per
write, the same for its retries, stored with its events (``events.write_token``) and found
in the task's log whatever writes came after it. A write that logs no event (``create``,
``save``) is known by the task it would have stored, at the version it would have made.

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
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from a2a_core import codec
from a2a_core.errors import InvalidParamsError, ResourceExhaustedError
from a2a_core.server.backends import (
    BackendUnavailableError,
    ConcurrentUpdateError,
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
from a2a_core.types import Message, StreamResponse, Task, TaskState

from ._common import check_document, check_key, db_now_plus, db_now_us, logger
from ._faults import is_contention
from ._schema import WRITE_TOKEN_LENGTH, Document, Key, Tables
from .events import SqlEventLog, encode_event

if TYPE_CHECKING:
    from .push_queue import SqlPushQueue

__all__ = ["RUNNING_STATES", "SqlTaskStore"]

#: States in which an agent is (or may be) working on the task.
RUNNING_STATES: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})

_cursor_encoder: Final = msgspec.msgpack.Encoder()
_cursor_decoder: Final = msgspec.msgpack.Decoder(tuple[int, str])
_SCAN_CHUNK: Final = 200
_SECRET_NAME: Final = "page_token_secret"


#: What a client is told when its write met lock contention for longer than ``write_retry``.
_BUSY_TEXT: Final = "The task store is busy with other writes of this task: try again"

#: SQLSTATE of the guard of `SqlTaskStore._build_save_pg`.
_DIVISION_BY_ZERO: Final = "22012"


def _is_sql(value: object) -> bool:
    return isinstance(value, sa.ColumnElement)


def _bound(columns: dict[str, Any]) -> dict[str, Any]:
    """A statement's values for ``columns``: a parameter each (``c_<name>``), but the SQL
    expressions (the expiry, on the database's clock) as they are."""
    return {
        name: value if _is_sql(value) else sa.bindparam(f"c_{name}")
        for name, value in columns.items()
    }


def _params(columns: dict[str, Any], **more: Any) -> dict[str, Any]:
    """The parameters of a statement made with `_bound` ``columns``."""
    params = {f"c_{name}": value for name, value in columns.items() if not _is_sql(value)}
    params.update(more)
    return params


def _write_token() -> str:
    """A logged write's token (``events.write_token``): random, made once per write and
    kept by its retries, so a retry can tell its own events from any other writer's."""
    return secrets.token_hex(WRITE_TOKEN_LENGTH // 2)


class _SlowPathError(Exception):
    """The log of a logged save is not where its task says: roll back, take the slow path."""


class SqlTaskStore(TaskStore):
    """Tasks in SQL (see the module docstring).

    :param engine: the backend's engine.
    :param tables: the tables, under the backend's prefix.
    :param event_log: the log the logged writes append to, in their transaction.
    :param ttl: seconds a terminal task is kept after it finished (``None``: forever).
    :param replica_id: the replica this store writes for (the ``runner`` of the running
        tasks it writes; ``""``: none).
    :param write_retry: seconds a create or save keeps trying while the database is
        unreachable (module docstring); ``0``: not at all.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        tables: Tables,
        event_log: SqlEventLog,
        *,
        ttl: float | None = 3600.0,
        replica_id: str = "",
        write_retry: float = 5.0,
    ) -> None:
        if ttl is not None and ttl < 0:
            raise ValueError("ttl must be >= 0 or None")
        if write_retry < 0:
            raise ValueError("write_retry must be >= 0")
        self.write_retry = write_retry
        #: The largest row a write may send (MariaDB/MySQL: their ``max_allowed_packet``
        #: less the statement around it, set by ``SqlBackend`` when it starts; ``None``: no
        #: limit of the database's below the server's own).
        self.max_row_bytes: int | None = None
        self.engine = engine
        self.tables = tables
        self.event_log = event_log
        self.ttl = ttl
        #: Where ``save_logged`` queues each event's webhook jobs (the backend sets it).
        self.push_queue: SqlPushQueue | None = None
        self._dialect = engine.dialect.name
        #: PostgreSQL's one-statement writes run without BEGIN/COMMIT (see `_statement`).
        self._autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        self._statements: dict[tuple[Any, ...], sa.Executable] = {}
        self.replica_id = replica_id
        #: The tasks this store last wrote submitted or working (their agents run here),
        #: until it writes them otherwise or they are known finished elsewhere.
        self.running_here: set[str] = set()
        self._secret: bytes | None = None

    # -- writes --------------------------------------------------------------------------

    def check_message(self, message: Message, *, tenant: str, owner: str) -> None:
        """Refuse (-32602) a message whose task could not be stored: an id longer than
        the key columns (`KEY_LENGTH` bytes), or text with U+0000 (see `check_document`).
        The server asks before the agent runs (``CheckedTaskStore``); the writes check
        again what the agent adds."""
        check_key("message.contextId", message.context_id)
        check_key("message.taskId", message.task_id)
        check_key("tenant", tenant)
        check_key("owner", owner)
        check_document(codec.encode(message).decode())

    def _columns(self, task: Task) -> dict[str, Any]:
        state = task.status.state
        expires: sa.ColumnElement[int] | None = None
        if state.is_terminal and self.ttl is not None:
            expires = db_now_plus(self.ttl)
        raw = codec.encode(task)
        body = raw.decode()
        check_document(body, "task")
        limit = self.max_row_bytes
        if limit is not None and len(raw) > limit // 4:
            # MySQL drivers send the row inside the SQL text, each quote and backslash
            # escaped: what the packet holds, measured before the database refuses it (and
            # drops the connection, which would look like an outage).
            sent = len(raw) + body.count('"') + body.count("\\") + body.count("'")
            if sent > limit:
                raise InvalidParamsError(
                    f"The task would take {sent} bytes as the database stores it; it takes at "
                    f"most {limit} (its max_allowed_packet): start a new task in the same "
                    "context",
                    field_violations=[("message", "the task would be too large to store")],
                )
        return {
            "context_id": task.context_id,
            "state": state.value,
            "status_us": status_micros(task.status.timestamp),
            "expires_us": expires,
            "body": body,
            "runner": (self.replica_id or None) if state in RUNNING_STATES else None,
        }

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        """Store a new task at version 1; `TaskExistsError` if the id is taken."""
        stored = StoredTask(task=task, version=1, last_seq=last_seq, tenant=tenant, owner=owner)

        async def write() -> StoredTask:
            try:
                async with self.engine.begin() as conn:
                    await self._insert(conn, task, tenant, owner, last_seq)
            except IntegrityError:
                raise TaskExistsError(task.id) from None
            return stored

        _, latest = await self._retrying(write, stored, None, doing="creating a task")
        if latest:
            self._ran(task)
        return stored

    async def _insert(
        self, conn: AsyncConnection, task: Task, tenant: str, owner: str, last_seq: int
    ) -> None:
        check_key("task.id", task.id)
        check_key("task.contextId", task.context_id)
        check_key("tenant", tenant)
        check_key("owner", owner)
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
        return await self._create_logged(task, [encode_event(event)], tenant, owner, False)

    async def create_logged_many(
        self,
        task: Task,
        events: Sequence[StreamResponse],
        *,
        tenant: str = "",
        owner: str = "",
    ) -> StoredTask:
        """`create_logged` with several events (a task answered at once: its three events
        in one write, ``BatchLoggedTaskStore``); the log is closed if the task is terminal."""
        bodies = [encode_event(event) for event in events]
        return await self._create_logged(task, bodies, tenant, owner, task.status.state.is_terminal)

    async def _create_logged(
        self, task: Task, bodies: list[str], tenant: str, owner: str, closing: bool
    ) -> StoredTask:
        last = len(bodies)
        stored = StoredTask(task=task, version=1, last_seq=last, tenant=tenant, owner=owner)
        token = _write_token()

        async def write() -> StoredTask:
            await self._create_logged_once(task, bodies, tenant, owner, closing, token)
            return stored

        _, latest = await self._retrying(write, stored, token, doing="creating a task")
        self._logged(task, closing, latest)
        return stored

    async def _create_logged_once(
        self, task: Task, bodies: list[str], tenant: str, owner: str, closing: bool, token: str
    ) -> None:
        last = len(bodies)
        try:
            if self._dialect == "postgresql":
                await self._create_logged_pg(task, tenant, owner, bodies, closing, token)
            else:
                async with self.engine.begin() as conn:
                    # The task first (its last seq is its log's last): a taken id fails
                    # before anything is appended. No ``SELECT ... FOR UPDATE`` of the log
                    # row that does not exist yet: on MariaDB that takes a gap lock, and
                    # concurrent creates deadlock on them.
                    await self._insert(conn, task, tenant, owner, last)
                    logs, events = self.tables.logs, self.tables.events
                    await conn.execute(
                        sa.insert(logs).values(
                            task_id=task.id,
                            last_seq=last,
                            closed=closing,
                            closed_us=db_now_us() if closing else None,
                        )
                    )
                    await conn.execute(
                        sa.insert(events),
                        [
                            {"task_id": task.id, "seq": seq, "body": body, "write_token": token}
                            for seq, body in enumerate(bodies, 1)
                        ],
                    )
        except IntegrityError:
            raise TaskExistsError(task.id) from None

    async def _create_logged_pg(
        self, task: Task, tenant: str, owner: str, bodies: list[str], closing: bool, token: str
    ) -> None:
        """`create_logged` as one statement, on its own (a statement is atomic: no BEGIN
        and COMMIT round trips): the task, its log's row and its events inserted together;
        a taken id fails it whole."""
        check_key("task.id", task.id)
        check_key("task.contextId", task.context_id)
        check_key("tenant", tenant)
        check_key("owner", owner)
        columns = self._columns(task)
        statement = self._statement(
            ("create", len(bodies), closing),
            columns,
            lambda columns: self._build_create_pg(columns, len(bodies), closing),
        )
        params = _params(columns, p_id=task.id, p_tenant=tenant, p_owner=owner, p_token=token)
        params.update({f"p_event{seq}": body for seq, body in enumerate(bodies, 1)})
        async with self._autocommit.connect() as conn:
            await conn.execute(statement, params)

    def _build_create_pg(self, columns: dict[str, Any], count: int, closing: bool) -> sa.Executable:
        t, logs, events = self.tables.tasks, self.tables.logs, self.tables.events
        created = (
            sa.insert(t)
            .values(
                id=sa.bindparam("p_id", type_=Key()),
                tenant=sa.bindparam("p_tenant"),
                owner=sa.bindparam("p_owner"),
                version=1,
                last_seq=count,
                **_bound(columns),
            )
            .returning(t.c.id)
            .cte("created")
        )
        started = (
            sa.insert(logs)
            .from_select(
                ["task_id", "last_seq", "closed", "closed_us"],
                sa.select(
                    created.c.id,
                    sa.literal(count),
                    sa.true() if closing else sa.false(),
                    db_now_us() if closing else sa.null(),
                ),
            )
            .returning(logs.c.task_id)
            .cte("started")
        )
        token = sa.bindparam("p_token", type_=sa.String())
        rows = [
            sa.select(
                created.c.id,
                sa.literal(seq),
                sa.bindparam(f"p_event{seq}", type_=Document()),
                token,
            )
            for seq in range(1, count + 1)
        ]
        logged = (
            sa.insert(events)
            .from_select(
                ["task_id", "seq", "body", "write_token"],
                rows[0] if count == 1 else sa.union_all(*rows),
            )
            .returning(events.c.seq)
            .cte("logged")
        )
        return sa.select(sa.func.count()).select_from(logged).add_cte(created, started, logged)

    def _statement(
        self,
        kind: object,
        columns: dict[str, Any],
        build: Callable[[dict[str, Any]], sa.Executable],
    ) -> sa.Executable:
        """A statement built once per shape (which columns, which of them SQL expressions)
        and then only executed: SQLAlchemy's cache key of a CTE this size costs more than
        the database takes to run it."""
        key = (kind, *((name, _is_sql(value)) for name, value in columns.items()))
        statement = self._statements.get(key)
        if statement is None:
            statement = self._statements[key] = build(columns)
        return statement

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        """Replace the task if it is still at ``expected_version``, else
        `ConcurrentUpdateError` (also when it is gone)."""

        async def write() -> StoredTask:
            async with self.engine.begin() as conn:
                return await self._update(conn, task, expected_version, last_seq)

        made = StoredTask(task=task, version=expected_version + 1, last_seq=last_seq)
        stored, latest = await self._retrying(write, made, None, doing="saving a task")
        if latest:
            self._ran(task)
        return stored

    async def save_logged(
        self, task: Task, event: StreamResponse, *, expected_version: int
    ) -> StoredTask:
        """`save`, with ``event`` appended in the same transaction (not if the version is
        wrong); a terminal write closes the log too. `EventLogClosedError` if it is closed.

        The write every event costs, so it is lean (see ``tests/sql/test_statements.py``):
        one statement on PostgreSQL (`_save_logged_pg`, not even in a transaction of its
        own), three on SQLite, four on MySQL, where it was five; `_save_logged_slow`, the
        general one, only when the log is not where the task says (closed, missing, or
        appended to apart from the task)."""
        body = encode_event(event)
        columns = self._columns(task)
        closing = task.status.state.is_terminal
        token = _write_token()

        async def write() -> StoredTask:
            try:
                if self._dialect == "postgresql":
                    return await self._save_logged_pg(
                        task, body, token, columns, closing, expected_version
                    )
                async with self.engine.begin() as conn:
                    return await self._save_logged_fast(
                        conn, task, body, token, columns, closing, expected_version
                    )
            except _SlowPathError:
                async with self.engine.begin() as conn:
                    return await self._save_logged_slow(
                        conn, task, body, token, columns, closing, expected_version
                    )

        made = StoredTask(task=task, version=expected_version + 1, last_seq=0)
        stored, latest = await self._retrying(write, made, token, doing="saving a task")
        self._logged(task, closing, latest)
        return stored

    def _logged(self, task: Task, closing: bool, latest: bool) -> None:
        """After a logged write committed: the log's followers woken (and told it closed);
        ``latest``: no write of the task came after it (see `_ran`)."""
        if closing:
            self.event_log.closed_by_write(task.id)
        self.event_log.notify(task.id)
        if latest:
            self._ran(task)

    async def _save_logged_pg(
        self,
        task: Task,
        body: str,
        token: str,
        columns: dict[str, Any],
        closing: bool,
        expected: int,
    ) -> StoredTask:
        """The logged save as one statement (`_build_save_pg`), atomic on its own."""
        queued = self.push_queue is not None
        statement = self._statement(
            ("save-closing" if closing else "save", queued),
            columns,
            lambda columns: self._build_save_pg(columns, closing, queued),
        )
        params = _params(columns, p_id=task.id, p_expected=expected, p_event=body, p_token=token)
        try:
            async with self._autocommit.connect() as conn:
                row = (await conn.execute(statement, params)).first()
        except sa.exc.DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) == _DIVISION_BY_ZERO:
                raise _SlowPathError from None
            raise
        if row is None:
            if queued:  # maybe stale, maybe webhooks: the general path tells which
                raise _SlowPathError
            raise ConcurrentUpdateError(f"task {task.id!r} is not stored at version {expected}")
        return StoredTask(
            task=task,
            version=expected + 1,
            last_seq=int(row.last_seq),
            tenant=row.tenant,
            owner=row.owner,
        )

    def _build_save_pg(self, columns: dict[str, Any], closing: bool, queued: bool) -> sa.Executable:
        """The versioned update of the task (which locks its row: the lock order of every
        write, task then log) takes the next seq from the task's row; the log's row moves
        to it only if it was at the one before and open; the event is inserted with it.
        A stale version updates nothing: no row comes back (`ConcurrentUpdateError`). A
        log not where the task says inserts no event, and then the statement divides by
        zero on purpose: its error undoes the whole statement (the task's update too), and
        `_save_logged_slow` takes over. With a push queue (``queued``), a task that has
        webhooks updates nothing either (no error, so nothing in the database's log), and
        takes that path too: it queues the event's jobs in its transaction."""
        t, logs, events = self.tables.tasks, self.tables.logs, self.tables.events
        task_id = sa.bindparam("p_id", type_=Key())
        expected = sa.bindparam("p_expected", type_=sa.Integer())
        writable = [t.c.id == task_id, t.c.version == expected]
        if queued:
            push = self.tables.push_configs
            writable.append(~sa.exists().where(push.c.task_id == task_id))
        moved = (
            sa.update(t)
            .where(*writable)
            .values(version=expected + 1, last_seq=t.c.last_seq + 1, **_bound(columns))
            .returning(t.c.last_seq, t.c.tenant, t.c.owner)
            .cte("moved")
        )
        log_values: dict[str, Any] = {"last_seq": moved.c.last_seq}
        if closing:
            log_values.update(closed=True, closed_us=db_now_us())
        advanced = (
            sa.update(logs)
            .where(
                logs.c.task_id == task_id,
                logs.c.closed == sa.false(),
                logs.c.last_seq == moved.c.last_seq - 1,
            )
            .values(**log_values)
            .returning(logs.c.last_seq)
            .cte("advanced")
        )
        logged = (
            sa.insert(events)
            .from_select(
                ["task_id", "seq", "body", "write_token"],
                sa.select(
                    task_id,
                    advanced.c.last_seq,
                    sa.bindparam("p_event", type_=Document()),
                    sa.bindparam("p_token", type_=sa.String()),
                ),
            )
            .returning(events.c.seq)
            .cte("logged")
        )
        guard = sa.literal(1) / sa.select(sa.func.count()).select_from(logged).scalar_subquery()
        return sa.select(
            moved.c.last_seq, moved.c.tenant, moved.c.owner, guard.label("guard")
        ).add_cte(moved, advanced, logged)

    async def _save_logged_fast(
        self,
        conn: AsyncConnection,
        task: Task,
        body: str,
        token: str,
        columns: dict[str, Any],
        closing: bool,
        expected: int,
    ) -> StoredTask:
        """The logged save in three statements (SQLite: the versioned update returns the
        task's new last seq) or four (MySQL: no ``UPDATE ... RETURNING``, so the task's
        row is read ``FOR UPDATE`` first); the same rules as `_save_logged_pg`."""
        t = self.tables.tasks
        if self._dialect == "sqlite":
            row = (
                await conn.execute(
                    sa.update(t)
                    .where(t.c.id == task.id, t.c.version == expected)
                    .values(version=expected + 1, last_seq=t.c.last_seq + 1, **columns)
                    .returning(t.c.last_seq, t.c.tenant, t.c.owner, self._has_push(t))
                )
            ).first()
            if row is None:
                raise ConcurrentUpdateError(f"task {task.id!r} is not stored at version {expected}")
            seq = int(row.last_seq)
        else:
            row = (
                await conn.execute(
                    sa.select(t.c.version, t.c.last_seq, t.c.tenant, t.c.owner, self._has_push(t))
                    .where(t.c.id == task.id)
                    .with_for_update()
                )
            ).first()
            if row is None or row.version != expected:
                raise ConcurrentUpdateError(f"task {task.id!r} is not stored at version {expected}")
            seq = int(row.last_seq) + 1
        logs = self.tables.logs
        log_values: dict[str, Any] = {"last_seq": seq}
        if closing:
            log_values.update(closed=True, closed_us=db_now_us())
        advanced = await conn.execute(
            sa.update(logs)
            .where(
                logs.c.task_id == task.id,
                logs.c.closed == sa.false(),
                logs.c.last_seq == seq - 1,
            )
            .values(**log_values)
        )
        if advanced.rowcount != 1:
            raise _SlowPathError
        await self.event_log.insert(conn, task.id, seq, body, token)
        if self.push_queue is not None and row.has_push:
            await self.push_queue.enqueue(conn, task, seq)
        if self._dialect != "sqlite":
            await conn.execute(
                sa.update(t)
                .where(t.c.id == task.id)
                .values(version=expected + 1, last_seq=seq, **columns)
            )
        return StoredTask(
            task=task, version=expected + 1, last_seq=seq, tenant=row.tenant, owner=row.owner
        )

    async def _save_logged_slow(
        self,
        conn: AsyncConnection,
        task: Task,
        body: str,
        token: str,
        columns: dict[str, Any],
        closing: bool,
        expected: int,
    ) -> StoredTask:
        """The logged save whatever state the log is in: read both rows ``FOR UPDATE``."""
        log = self.event_log
        row = await self._lock(conn, task.id, expected)
        seq = await log.next_seq(conn, task.id, closing=closing)
        await log.insert(conn, task.id, seq, body, token)
        stored = await self._update(conn, task, expected, seq, row, columns)
        if self.push_queue is not None and row.has_push:
            await self.push_queue.enqueue(conn, task, seq)
        return stored

    async def _retrying(
        self,
        write: Callable[[], Awaitable[StoredTask]],
        made: StoredTask,
        token: str | None,
        *,
        doing: str,
    ) -> tuple[StoredTask, bool]:
        """``write()``, tried again while the database is unreachable, or gave the write up
        for contention (a deadlock, a lock wait that timed out: `is_contention`), for up to
        ``write_retry`` seconds; returns what it stored, and whether it is still the task's
        latest write. An attempt that failed for an outage may still have committed (its
        reply lost): if a later one then finds the id taken or the version moved,
        `_already_written` decides whether that was this write (then it is done; ``token``:
        the logged write's, see `_write_token`). One given up for contention was rolled
        back whole. Contention that outlasts the retries is the client's "busy, try again"
        (ResourceExhausted), never an internal error."""
        started = time.monotonic()
        deadline = started + self.write_retry
        delay = 0.05
        uncertain = False
        while True:
            try:
                return await write(), True
            except BackendUnavailableError:
                if time.monotonic() + delay > deadline:
                    raise
                uncertain = True
            except sa.exc.DBAPIError as exc:
                if not is_contention(exc):
                    raise
                if time.monotonic() + delay > deadline:
                    spent = time.monotonic() - started
                    logger.warning("gave up %s after %.1f s of lock contention", doing, spent)
                    raise ResourceExhaustedError(_BUSY_TEXT) from None
                logger.debug("lock contention while %s; retrying in %.2f s", doing, delay)
                await anyio.sleep(delay)
                delay = min(delay * 2, 0.5)
                continue
            except (ConcurrentUpdateError, TaskExistsError):
                if not uncertain:
                    raise  # every attempt was refused or rolled back: none committed
                try:
                    found = await self._already_written(made, token)
                except BackendUnavailableError:
                    # Gone again before it could tell: the next attempt meets the same
                    # conflict, and looks again.
                    if time.monotonic() + delay > deadline:
                        raise
                else:
                    if found is None:
                        raise  # the conflict: another write was applied, not this one
                    return found
            # DEBUG: the outage itself is logged once (OutageLog); many writes may retry.
            logger.debug("database unreachable while %s; retrying in %.2f s", doing, delay)
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def _already_written(
        self, made: StoredTask, token: str | None
    ) -> tuple[StoredTask, bool] | None:
        """What ``made`` stored, if an earlier attempt of it did commit, and whether it is
        still the task's latest write; ``None``: it was not applied (another write was).

        A logged write (``token``) is the one whose events carry its token, wherever they
        are in the task's log: `_written_with`. A write that logs no event has nothing to
        carry one: it is known by the task at the version it would have made, with the same
        content (so not after another write of the task, which moved the version on)."""
        if token is not None:
            return await self._written_with(made, token)
        t = self.tables.tasks
        query = sa.select(t.c.version, t.c.last_seq, t.c.tenant, t.c.owner, t.c.body)
        async with self.engine.connect() as conn:
            row = (await conn.execute(query.where(t.c.id == made.task.id))).first()
        if row is None or row.version != made.version:
            return None
        if made.version == 1 and (row.tenant, row.owner) != (made.tenant, made.owner):
            return None  # a create: someone else's task under that id
        if msgspec.json.decode(row.body) != msgspec.json.decode(codec.encode(made.task)):
            return None
        stored = StoredTask(
            task=made.task,
            version=made.version,
            last_seq=int(row.last_seq),
            tenant=row.tenant,
            owner=row.owner,
        )
        return stored, True

    async def _written_with(self, made: StoredTask, token: str) -> tuple[StoredTask, bool] | None:
        """`_already_written` for a logged write: its last event, found by its token in the
        task's log (the token is random and this write's alone, so no other write's event
        has it, nor another owner's task under the same id).

        What it costs: a range read of the task's events on the log's primary key (task
        id, seq), each row's token compared: at most the task's events
        (``TaskLimits.max_events``, 10,000 by default; SQLite and MariaDB read them newest
        first and stop at the token). No index of its own, so no write pays for it; only
        a retry that met a conflict after an outage reads it. The write's version is the
        one it made (it wrote only at the version before); the task's may be later."""
        t, events = self.tables.tasks, self.tables.events
        query = (
            sa.select(events.c.seq, t.c.version, t.c.tenant, t.c.owner)
            .join(t, t.c.id == events.c.task_id)
            .where(events.c.task_id == made.task.id, events.c.write_token == token)
            .order_by(events.c.seq.desc())
            .limit(1)
        )
        async with self.engine.connect() as conn:
            row = (await conn.execute(query)).first()
        if row is None:
            return None
        stored = StoredTask(
            task=made.task,
            version=made.version,
            last_seq=int(row.seq),
            tenant=row.tenant,
            owner=row.owner,
        )
        return stored, row.version == made.version

    def _has_push(self, tasks: sa.Table) -> sa.ColumnElement[bool]:
        """Whether the task has webhooks, read with its row: a task without any (most)
        costs its logged writes no query of the push queue."""
        push = self.tables.push_configs
        return sa.exists().where(push.c.task_id == tasks.c.id).label("has_push")

    def _ran(self, task: Task) -> None:
        # After a write: the tasks this store last wrote running (so the agent runs here),
        # which `a2a_sql.replicas` checks when it may have missed that one was finished.
        # Its callers skip it after a retried write that other writes already followed
        # (their state is the task's, not this one's).
        if task.status.state in RUNNING_STATES:
            self.running_here.add(task.id)
        else:
            self.running_here.discard(task.id)

    async def _lock(self, conn: AsyncConnection, task_id: str, expected: int) -> Any:
        tasks = self.tables.tasks
        row = (
            await conn.execute(
                sa.select(tasks.c.version, tasks.c.tenant, tasks.c.owner, self._has_push(tasks))
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
        columns: dict[str, Any] | None = None,
    ) -> StoredTask:
        if row is None:
            row = await self._lock(conn, task.id, expected)
        tasks = self.tables.tasks
        done = await conn.execute(
            sa.update(tasks)
            .where(tasks.c.id == task.id, tasks.c.version == expected)
            .values(
                version=expected + 1,
                last_seq=last_seq,
                **(self._columns(task) if columns is None else columns),
            )
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
        jobs = self.tables.push_jobs
        await conn.execute(sa.delete(jobs).where(jobs.c.task_id.in_(task_ids)))

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
            query = sa.select(t.id).where(t.expires_us <= db_now_us()).order_by(t.expires_us)
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
