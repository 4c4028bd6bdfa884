"""The durable push queue: push_jobs, one row per (event, webhook) not delivered yet.

Revision ID: 0002_push_jobs
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

from a2a_sql._schema import Document, Key

revision = "0002_push_jobs"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.create_table(
        f"{p}push_jobs",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("task_id", Key, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("config_id", Key, nullable=False),
        sa.Column("task_body", Document, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("due_us", sa.BigInteger, nullable=False),
        sa.Column("claim", sa.String(32), nullable=True),
        sa.Column("claimed_until", sa.BigInteger, nullable=True),
        sa.Column("queued_us", sa.BigInteger, nullable=False),
        sa.Column("last_error", sa.String(255), nullable=True),
    )
    op.create_index(
        f"{p}push_jobs_lane", f"{p}push_jobs", ["task_id", "config_id", "seq"], unique=True
    )
    op.create_index(f"{p}push_jobs_due", f"{p}push_jobs", ["due_us"])


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.drop_table(f"{p}push_jobs")
