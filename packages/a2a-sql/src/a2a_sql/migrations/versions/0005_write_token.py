"""The write token of an event: ``events.write_token``, nullable.

A random token the task store gives each of its logged writes (a create or a save with its
event), stored with the write's events, so that a retry after a lost reply finds its write
in the task's log whatever writes came after it (`SqlTaskStore`). NULL for the events of
other writes (appended to the log alone) and for those logged before this revision.

A nullable column without a default: PostgreSQL (11 and later) and MariaDB (10.3 and
later) add it without rewriting the table, SQLite by changing its schema only.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.add_column(f"{p}events", sa.Column("write_token", sa.String(32), nullable=True))


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.drop_column(f"{p}events", "write_token")
