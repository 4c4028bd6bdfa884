"""Fixtures of the SQL backend tests: one database per run on each engine, a prefix per test.

The tests run against real databases: SQLite files in a temporary folder always, and
PostgreSQL and MariaDB/MySQL when ``A2A_TEST_POSTGRES_URL`` and ``A2A_TEST_MYSQL_URL``
name a server (CI sets them when the machine's answer); without one, its tests skip,
saying so. Each run creates its own database on each server (dropped at the end), and
each test its own table prefix in it.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # sql_server.py beside this file

from a2a_sql import SqlBackend, upgrade
from helpers.databases import own_database

ENVS = {"postgresql": "A2A_TEST_POSTGRES_URL", "mysql": "A2A_TEST_MYSQL_URL"}
EXAMPLES = {
    "postgresql": "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres",
    "mysql": "mysql+asyncmy://root@127.0.0.1:3306/test",
}
KINDS = ("sqlite", "postgresql", "mysql")


@pytest.fixture
def anyio_backend() -> str:
    """SQLAlchemy's asyncio extension runs on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session", params=KINDS)
def db_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database of this run's own, on each engine the machine has (skips the others)."""
    kind: str = request.param
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('sqlite') / 'a2a.db'}"
        return
    server = os.environ.get(ENVS[kind])
    if not server:
        pytest.skip(
            f"{kind} tests need a server: set {ENVS[kind]}={EXAMPLES[kind]} (each run makes "
            "its own database there and drops it)"
        )
    with own_database(server) as url:
        yield url


@pytest.fixture
def prefix() -> str:
    """A table prefix of this test's own."""
    return f"t{uuid.uuid4().hex[:8]}_"


@pytest.fixture
async def backend(db_url: str, prefix: str) -> AsyncIterator[SqlBackend]:
    """A backend on its own tables, created by the shipped migrations, with a short TTL."""
    made = SqlBackend(db_url, prefix=prefix, task_ttl=60.0)
    await upgrade(made.engine, prefix)
    try:
        yield made
    finally:
        await made.engine.dispose()
