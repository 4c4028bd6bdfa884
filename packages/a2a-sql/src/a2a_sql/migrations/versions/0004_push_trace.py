"""The trace context of a push job: ``push_jobs.trace_context``, nullable.

The JSON of the observer's trace context where the job's event was written (its W3C
headers, ``traceparent``, ``tracestate``, ``baggage``: `Observer.push_context_headers`), so
that the delivery, in whichever process and after whichever restart, continues that
trace. NULL without an observer or a trace (and for the jobs queued before this revision).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.add_column(f"{p}push_jobs", sa.Column("trace_context", sa.Text, nullable=True))


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.drop_column(f"{p}push_jobs", "trace_context")
