"""The schema's migrations (Alembic, shipped in ``a2a_sql/migrations``): create or upgrade,
and the check at start-up that refuses a schema older (or newer) than this code.

The revision a database is at lives in ``{prefix}alembic_version``, so deployments with
different prefixes in one database migrate independently.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

__all__ = ["SchemaError", "check_schema", "head_revision", "upgrade", "upgrade_connection"]

_MIGRATIONS = Path(__file__).parent / "migrations"


class SchemaError(RuntimeError):
    """The database's schema is not the one this code needs (missing, older or newer)."""


def _config(prefix: str, connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    config.attributes["prefix"] = prefix
    config.attributes["connection"] = connection
    return config


@cache
def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(_config(""))


def head_revision() -> str:
    """The revision this code's schema is at."""
    head = _scripts().get_current_head()
    assert head is not None
    return head


def _current(connection: Connection, prefix: str) -> str | None:
    context = MigrationContext.configure(
        connection, opts={"version_table": f"{prefix}alembic_version"}
    )
    return context.get_current_revision()


def _upgrade(connection: Connection, prefix: str) -> None:
    command.upgrade(_config(prefix, connection), "head")


async def upgrade_connection(connection: AsyncConnection, prefix: str = "a2a_") -> None:
    """Create or upgrade the schema on ``connection`` (inside its transaction)."""
    await connection.run_sync(_upgrade, prefix)


async def upgrade(url_or_engine: str | AsyncEngine, prefix: str = "a2a_") -> str:
    """Create the schema, or upgrade it to this code's revision; returns that revision.
    What ``python -m a2a_sql upgrade URL`` runs."""
    engine = create_async_engine(url_or_engine) if isinstance(url_or_engine, str) else url_or_engine
    try:
        async with engine.begin() as connection:
            await upgrade_connection(connection, prefix)
    finally:
        if isinstance(url_or_engine, str):
            await engine.dispose()
    return head_revision()


async def check_schema(engine: AsyncEngine, prefix: str, *, create: bool) -> None:
    """Refuse to run on a schema that is not this code's; with ``create``, create or
    upgrade it instead (what SQLite does by default)."""
    async with engine.connect() as connection:
        current = await connection.run_sync(_current, prefix)
    head = head_revision()
    if current == head:
        return
    known = {script.revision for script in _scripts().walk_revisions()}
    if current is not None and current not in known:
        raise SchemaError(
            f"the database's a2aserve-sql schema (prefix {prefix!r}) is at revision {current}, "
            f"newer than this code's ({head}): upgrade the a2aserve-sql package"
        )
    if create:
        async with engine.begin() as connection:
            await upgrade_connection(connection, prefix)
        return
    where = "has no a2aserve-sql schema" if current is None else f"is at revision {current}"
    raise SchemaError(
        f"the database (prefix {prefix!r}) {where}, older than this code's ({head}): run "
        f"`python -m a2a_sql upgrade URL --prefix {prefix}` first"
    )
