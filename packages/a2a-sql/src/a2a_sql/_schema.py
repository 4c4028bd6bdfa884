"""The tables of the SQL backend, on SQLAlchemy Core: one `Tables` per table-name prefix.

Bounds: ``tasks`` holds every task until the sweep drops it ``task_ttl`` seconds after it
finished (open tasks are bounded by the server's admission and ``TaskLimits``, not here);
``events`` and ``logs`` hold a task's log until its task is dropped (a log without a task,
``log_retention`` seconds after it closed); ``push_configs`` at most
``max_configs_per_task`` rows per task, dropped with the task; ``push_jobs`` (the durable
push queue, `a2a_sql.push`) at most ``max_jobs_per_task`` rows per task and about
``max_jobs`` in all, each job's task copy at most ``max_job_bytes``, dropped with the task;
``meta`` a few rows; ``replicas`` one row per live (or not yet reaped) replica, PostgreSQL
only.

Columns that hold ids (task, context, tenant, owner) are `Key`s: at most 255 bytes, and
compared by code point on every database (PostgreSQL's ``"C"`` collation, MySQL's
``VARBINARY``, SQLite's default), so ListTasks pages in the order the in-memory store uses.
Documents are `Document`s: the ProtoJSON text, as ``JSONB`` on PostgreSQL.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.types import TypeDecorator, TypeEngine

__all__ = [
    "JOB_ID",
    "KEY_LENGTH",
    "WRITE_TOKEN_LENGTH",
    "Document",
    "Key",
    "Tables",
    "notify_channel",
]

#: The longest id (task, context, tenant, owner) the tables take, in bytes of UTF-8.
KEY_LENGTH: Final = 255

#: The length of a write token (``events.write_token``): 16 random bytes, in hex.
WRITE_TOKEN_LENGTH: Final = 32


#: A push job's id: a 64-bit integer given by the database (on SQLite an ``INTEGER``
#: primary key, the only kind it numbers by itself).
JOB_ID: Final = BigInteger().with_variant(Integer(), "sqlite")


def _is_mysql(dialect: Dialect) -> bool:
    return dialect.name in ("mysql", "mariadb")


class Key(TypeDecorator[str]):
    """An id, compared by code point (as Python compares ``str``) on every database."""

    impl = String(KEY_LENGTH)
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(String(KEY_LENGTH, collation="C"))
        if _is_mysql(dialect):
            # Bytes: code-point order (UTF-8 keeps it), and 255 bytes per column, so the
            # composite indexes fit InnoDB's 3072-byte key limit.
            return dialect.type_descriptor(mysql.VARBINARY(KEY_LENGTH))
        return dialect.type_descriptor(String(KEY_LENGTH))

    def process_bind_param(self, value: str | None, dialect: Dialect) -> Any:
        if value is not None and _is_mysql(dialect):
            return value.encode()
        return value

    def process_result_value(self, value: Any, dialect: Dialect) -> str | None:
        if isinstance(value, bytes | bytearray):
            return bytes(value).decode()
        return value  # type: ignore[no-any-return]


class Document(TypeDecorator[str]):
    """A ProtoJSON document, given and read as text: ``JSONB`` on PostgreSQL (queryable
    with ``->``), ``LONGTEXT`` on MySQL and ``TEXT`` on SQLite (``json_extract`` reads
    both). The engine passes the text through its JSON (de)serializer unchanged."""

    impl = Text
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(postgresql.JSONB())
        if _is_mysql(dialect):
            return dialect.type_descriptor(mysql.LONGTEXT())
        return dialect.type_descriptor(Text())


class Tables:
    """The backend's tables under one name prefix (``a2a_`` by default)."""

    def __init__(self, prefix: str = "a2a_") -> None:
        self.prefix = prefix
        self.metadata = metadata = MetaData()
        p = prefix
        self.tasks = Table(
            f"{p}tasks",
            metadata,
            Column("id", Key, primary_key=True),
            Column("tenant", Key, nullable=False),
            Column("owner", Key, nullable=False),
            Column("context_id", Key, nullable=False),
            Column("state", String(32), nullable=False),
            Column("status_us", BigInteger, nullable=False),
            Column("version", Integer, nullable=False),
            Column("last_seq", Integer, nullable=False),
            Column("expires_us", BigInteger, nullable=True),
            Column("body", Document, nullable=False),
            # The replica whose agent runs the task (set while it is submitted or working,
            # by a store with a replica id): what the reaper fails when its lease runs out.
            Column("runner", Key, nullable=True),
        )
        self.logs = Table(
            f"{p}logs",
            metadata,
            Column("task_id", Key, primary_key=True),
            Column("last_seq", Integer, nullable=False),
            Column("closed", Boolean, nullable=False),
            Column("closed_us", BigInteger, nullable=True),
        )
        # `write_token`: the random token of the store's logged write that appended the
        # event (migration 0005), which a retry after a lost reply looks for; NULL for an
        # event appended alone, or logged before 0005.
        self.events = Table(
            f"{p}events",
            metadata,
            Column("task_id", Key, primary_key=True),
            Column("seq", Integer, primary_key=True, autoincrement=False),
            Column("body", Document, nullable=False),
            Column("write_token", String(WRITE_TOKEN_LENGTH), nullable=True),
        )
        self.push_configs = Table(
            f"{p}push_configs",
            metadata,
            Column("task_id", Key, primary_key=True),
            Column("config_id", Key, primary_key=True),
            Column("position", Integer, nullable=False),
            Column("legacy_v0_3", Boolean, nullable=False),
            Column("body", Document, nullable=False),
        )
        # One row per (event, webhook) not delivered yet: the event is the row of `events`
        # at (task_id, seq), the webhook the row of `push_configs` at (task_id, config_id),
        # both read at delivery (no secret is copied here); `task_body` is the task as it
        # stood after the event, for v0.3 webhooks only (their body); `trace_context` the
        # observer's trace context where the event was written, the JSON of its W3C
        # headers (`traceparent`...; migration 0004), NULL without one.
        self.push_jobs = Table(
            f"{p}push_jobs",
            metadata,
            Column("id", JOB_ID, primary_key=True, autoincrement=True),
            Column("task_id", Key, nullable=False),
            Column("seq", Integer, nullable=False),
            Column("config_id", Key, nullable=False),
            Column("task_body", Document, nullable=True),
            Column("attempts", Integer, nullable=False),
            Column("due_us", BigInteger, nullable=False),
            Column("claim", String(32), nullable=True),
            Column("claimed_until", BigInteger, nullable=True),
            Column("queued_us", BigInteger, nullable=False),
            Column("last_error", String(255), nullable=True),
            Column("trace_context", Text, nullable=True),
        )
        self.meta = Table(
            f"{p}meta",
            metadata,
            Column("name", String(64), primary_key=True),
            Column("value", String(255), nullable=False),
        )
        # PostgreSQL's replicas: a lease each, by the database's clock; ``reaper`` is the
        # replica that claimed a run-out lease and is failing its tasks.
        self.replicas = Table(
            f"{p}replicas",
            metadata,
            Column("id", Key, primary_key=True),
            Column("lease_until", DateTime(timezone=True), nullable=False),
            Column("reaper", Key, nullable=True),
        )
        #: The ``LISTEN/NOTIFY`` channel of this prefix's event logs (PostgreSQL).
        self.channel = notify_channel(prefix)
        # The indexes of the initial migration (0001), declared here too so that a reader of
        # the runtime's tables sees them: each ListTasks filter combination has one, whose
        # equality columns come first and (status_us, id) last, so a page is a range read.
        t = self.tasks.c
        for name, columns in INDEXES.items():
            Index(f"{p}{name}", *(t[c] for c in columns))
        Index(f"{p}logs_closed", self.logs.c.closed_us)
        # 0002_push_jobs: a job's lane (its task and webhook, in seq order), and the claim's scan.
        j = self.push_jobs.c
        Index(f"{p}push_jobs_lane", j.task_id, j.config_id, j.seq, unique=True)
        Index(f"{p}push_jobs_due", j.due_us)
        running_only = text("runner IS NOT NULL")  # migration 0003: running tasks only
        Index(
            f"{p}tasks_runner", t.runner, postgresql_where=running_only, sqlite_where=running_only
        )


#: Index name (after the prefix) -> its columns on ``tasks``.
INDEXES: Final = {
    "tasks_t": ("tenant", "status_us", "id"),
    "tasks_tc": ("tenant", "context_id", "status_us", "id"),
    "tasks_ts": ("tenant", "state", "status_us", "id"),
    "tasks_tcs": ("tenant", "context_id", "state", "status_us", "id"),
    "tasks_to": ("tenant", "owner", "status_us", "id"),
    "tasks_toc": ("tenant", "owner", "context_id", "status_us", "id"),
    "tasks_tos": ("tenant", "owner", "state", "status_us", "id"),
    "tasks_tocs": ("tenant", "owner", "context_id", "state", "status_us", "id"),
    "tasks_state": ("state",),  # the restart rule: the running tasks
    "tasks_expires": ("expires_us",),  # the sweep: the terminal tasks, by when they go
}


def notify_channel(prefix: str) -> str:
    """The ``NOTIFY`` channel of a prefix: ``{prefix}log``, or when that is longer than
    PostgreSQL's 63-byte names, its start and a hash (so two long prefixes never share one).
    Frozen: migration 0003 gives it to the trigger that notifies."""
    name = f"{prefix}log"
    raw = name.encode()
    if len(raw) <= 63:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:16]
    return raw[:46].decode(errors="ignore") + "_" + digest
