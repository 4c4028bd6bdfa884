"""Databases of a test run's own on a real server (PostgreSQL, MariaDB/MySQL).

with own_database("postgresql+asyncpg://postgres@127.0.0.1:5432/postgres") as url:
    ...  # url names a fresh database there, dropped at the end
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Iterator

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

__all__ = ["admin", "own_database"]


async def admin(url: str, statement: str) -> None:
    """Run one statement outside a transaction (``CREATE DATABASE``, ``DROP DATABASE``)."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(sa.text(statement))
    finally:
        await engine.dispose()


@contextlib.contextmanager
def own_database(server: str) -> Iterator[str]:
    """The URL of a new database on ``server``, dropped at the end (on PostgreSQL even
    while connections to it remain: ``WITH (FORCE)``)."""
    name = f"a2a_test_{uuid.uuid4().hex[:10]}"
    asyncio.run(admin(server, f"CREATE DATABASE {name}"))
    try:
        yield str(sa.make_url(server).set(database=name))
    finally:
        force = sa.make_url(server).get_backend_name() == "postgresql"
        asyncio.run(admin(server, f"DROP DATABASE {name}" + (" WITH (FORCE)" if force else "")))
