"""The shipped migrations: ``python -m a2a_sql upgrade``, and the check at start-up."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sqlalchemy as sa

from a2a_sql import SchemaError, SqlBackend, Tables, head_revision

pytestmark = pytest.mark.anyio


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
