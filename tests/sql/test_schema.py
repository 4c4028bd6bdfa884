"""The shipped migrations: ``python -m a2a_sql upgrade``, and the check at start-up."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from a2a_core import codec
from a2a_core.types import StreamResponse, Task, TaskState, TaskStatus
from a2a_sql import SchemaError, SqlBackend, Tables, head_revision, migrate, upgrade

pytestmark = pytest.mark.anyio


def _columns(connection: sa.Connection, tables: Tables) -> dict[str, set[tuple[str, bool]]]:
    """(name, nullable) of every column of each of ``tables``, as the database has it."""
    inspector = sa.inspect(connection)
    return {
        table.name: {(c["name"], bool(c["nullable"])) for c in inspector.get_columns(table.name)}
        for table in tables.metadata.sorted_tables
    }


async def test_a_missing_older_or_newer_schema_is_refused_then_upgraded(
    db_url: str, prefix: str
) -> None:
    backend = SqlBackend(db_url, prefix=prefix, create_schema=False)
    try:
        with pytest.raises(SchemaError, match="python -m a2a_sql upgrade URL --prefix"):
            await backend.start()
        done = subprocess.run(
            [sys.executable, "-m", "a2a_sql", "upgrade", db_url, "--prefix", prefix],
            capture_output=True,
            text=True,
            check=True,
        )
        assert head_revision() in done.stdout
        await backend.start()  # now accepted
        version = sa.table(f"{prefix}alembic_version", sa.column("version_num"))
        async with backend.engine.begin() as conn:
            await conn.execute(sa.update(version).values(version_num="9999_future"))
        with pytest.raises(SchemaError, match="newer than this code"):
            await backend.start()
        tables = Tables(prefix)
        async with backend.engine.connect() as conn:
            names = set(await conn.run_sync(lambda c: sa.inspect(c).get_table_names()))
        assert {t.name for t in tables.metadata.sorted_tables} <= names
        # An engine of SQLAlchemy's defaults: the backend's reads JSON as text, which
        # PostgreSQL's reflection does not expect.
        plain = create_async_engine(db_url)
        try:
            async with plain.connect() as conn:
                columns = await conn.run_sync(_columns, tables)
        finally:
            await plain.dispose()
        # Every column the code declares is one the migrations made (up to 0005's
        # events.write_token), nullable as declared.
        for table in tables.metadata.sorted_tables:
            declared = {(c.name, bool(c.nullable)) for c in table.columns}
            assert declared == columns[table.name], table.name
    finally:
        await backend.engine.dispose()


async def test_sqlite_creates_its_schema_on_first_use(tmp_path: object) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/fresh.db"
    backend = SqlBackend(url)
    try:
        await backend.start()
        assert await backend.store.get("none") is None
        async with backend.engine.connect() as conn:
            revision = await conn.scalar(sa.text("SELECT version_num FROM a2a_alembic_version"))
        assert revision == head_revision()
    finally:
        await backend.engine.dispose()


async def test_the_upgrade_to_0004_keeps_the_queued_jobs(db_url: str, prefix: str) -> None:
    """A job queued before ``push_jobs.trace_context`` existed stays, without a trace."""
    backend = SqlBackend(db_url, prefix=prefix, create_schema=False)
    jobs = sa.table(
        f"{prefix}push_jobs",
        *(sa.column(name) for name in ("task_id", "seq", "config_id", "attempts", "due_us")),
        sa.column("queued_us"),
    )
    try:
        async with backend.engine.begin() as conn:
            await conn.run_sync(lambda c: command.upgrade(migrate._config(prefix, c), "0003"))
            await conn.execute(
                sa.insert(jobs).values(
                    task_id="t", seq=2, config_id="c", attempts=0, due_us=0, queued_us=0
                )
            )
        await upgrade(backend.engine, prefix)
        await backend.start()
        async with backend.engine.connect() as conn:
            rows = (await conn.execute(sa.select(backend.tables.push_jobs))).all()
        assert [(row.task_id, row.seq, row.trace_context) for row in rows] == [("t", 2, None)]
    finally:
        await backend.engine.dispose()


async def test_the_upgrade_to_0005_keeps_the_logged_events(db_url: str, prefix: str) -> None:
    """An event logged before ``events.write_token`` existed stays, without a token; its
    log goes on, and the store's writes after the upgrade carry theirs."""
    backend = SqlBackend(db_url, prefix=prefix, create_schema=False, push_sender=None)
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    first = StreamResponse(task=task)
    # Only the columns 0004 has (an INSERT names only the columns it is given).
    logs, events = backend.tables.logs, backend.tables.events
    try:
        async with backend.engine.begin() as conn:
            await conn.run_sync(lambda c: command.upgrade(migrate._config(prefix, c), "0004"))
            await conn.execute(sa.insert(logs).values(task_id="t", last_seq=1, closed=False))
            await conn.execute(
                sa.insert(events).values(task_id="t", seq=1, body=codec.encode(first).decode())
            )
        await upgrade(backend.engine, prefix)
        await backend.store.create_logged(
            Task(id="u", context_id="c", status=task.status), StreamResponse(task=task)
        )
        assert await backend.event_log.append("t", first) == 2
        assert [e.event for e in await backend.event_log.read("t")] == [first, first]
        stored = backend.tables.events.c
        async with backend.engine.connect() as conn:
            rows = (
                await conn.execute(
                    sa.select(stored.task_id, stored.seq, stored.write_token).order_by(
                        stored.task_id, stored.seq
                    )
                )
            ).all()
        assert [(row.task_id, row.seq, row.write_token is None) for row in rows] == [
            ("t", 1, True),  # from before the upgrade
            ("t", 2, True),  # appended alone: no store write's
            ("u", 1, False),  # the store's logged write
        ]
    finally:
        await backend.engine.dispose()
