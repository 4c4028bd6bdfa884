"""The initial schema: tasks, event logs and events, push configs, meta.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

from a2a_sql._schema import Document, Key

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

# Frozen with this revision (a later one adds its own changes, never edits these).
_INDEXES = {
    "tasks_t": ("tenant", "status_us", "id"),
    "tasks_tc": ("tenant", "context_id", "status_us", "id"),
    "tasks_ts": ("tenant", "state", "status_us", "id"),
    "tasks_tcs": ("tenant", "context_id", "state", "status_us", "id"),
    "tasks_to": ("tenant", "owner", "status_us", "id"),
    "tasks_toc": ("tenant", "owner", "context_id", "status_us", "id"),
    "tasks_tos": ("tenant", "owner", "state", "status_us", "id"),
    "tasks_tocs": ("tenant", "owner", "context_id", "state", "status_us", "id"),
    "tasks_state": ("state",),
    "tasks_expires": ("expires_us",),
}


def upgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.create_table(
        f"{p}tasks",
        sa.Column("id", Key, primary_key=True),
        sa.Column("tenant", Key, nullable=False),
        sa.Column("owner", Key, nullable=False),
        sa.Column("context_id", Key, nullable=False),
        sa.Column("state", sa.String(32), nullable=False),
        sa.Column("status_us", sa.BigInteger, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("expires_us", sa.BigInteger, nullable=True),
        sa.Column("body", Document, nullable=False),
    )
    for name, columns in _INDEXES.items():
        op.create_index(f"{p}{name}", f"{p}tasks", list(columns))
    op.create_table(
        f"{p}logs",
        sa.Column("task_id", Key, primary_key=True),
        sa.Column("last_seq", sa.Integer, nullable=False),
        sa.Column("closed", sa.Boolean, nullable=False),
        sa.Column("closed_us", sa.BigInteger, nullable=True),
    )
    op.create_index(f"{p}logs_closed", f"{p}logs", ["closed_us"])
    op.create_table(
        f"{p}events",
        sa.Column("task_id", Key, primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("body", Document, nullable=False),
    )
    op.create_table(
        f"{p}push_configs",
        sa.Column("task_id", Key, primary_key=True),
        sa.Column("config_id", Key, primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("legacy_v0_3", sa.Boolean, nullable=False),
        sa.Column("body", Document, nullable=False),
    )
    op.create_table(
        f"{p}meta",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(255), nullable=False),
    )


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    for table in ("meta", "push_configs", "events", "logs", "tasks"):
        op.drop_table(f"{p}{table}")
