"""Alembic's environment for a2aserve-sql: always run by `a2a_sql.migrate` on a connection it
gives (``config.attributes["connection"]``), with the table prefix it gives."""

from __future__ import annotations

from alembic import context

config = context.config
connection = config.attributes["connection"]
prefix: str = config.attributes["prefix"]

context.configure(
    connection=connection,
    version_table=f"{prefix}alembic_version",
    target_metadata=None,
)
with context.begin_transaction():
    context.run_migrations()
