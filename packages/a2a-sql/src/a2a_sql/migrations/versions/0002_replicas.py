"""Replicas on PostgreSQL: the runner of each running task, leases, and the trigger that
wakes other replicas' followers.

- ``tasks.runner``: the replica whose agent runs the task (indexed, running tasks only);
- ``replicas``: one lease per replica, by the database's clock;
- on PostgreSQL, a trigger on ``logs`` that sends ``pg_notify(channel, payload)`` for every
  change of a log (an append, a close, a drop), in the writer's transaction, so the
  notification goes out when, and only if, the write commits. The payload is
  ``{kind}{last_seq}:{writer}:{task_id}``: kind ``e`` an event, ``c`` the log closed, ``d``
  dropped; ``writer`` the replica whose connection wrote (its ``a2a.replica`` setting, set
  by `a2a_sql.SqlBackend` on its connections; empty for anyone else).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

from a2a_sql._schema import Key, notify_channel

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_NOTIFY_BODY = """
DECLARE
  writer text := coalesce(current_setting('a2a.replica', true), '');
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify(TG_ARGV[0], 'd0:' || writer || ':' || OLD.task_id);
  ELSIF NEW.closed AND (TG_OP = 'INSERT' OR NOT OLD.closed) THEN
    PERFORM pg_notify(TG_ARGV[0], 'c' || NEW.last_seq || ':' || writer || ':' || NEW.task_id);
  ELSIF TG_OP = 'INSERT' OR NEW.last_seq <> OLD.last_seq THEN
    PERFORM pg_notify(TG_ARGV[0], 'e' || NEW.last_seq || ':' || writer || ':' || NEW.task_id);
  END IF;
  RETURN NULL;
END
"""


def _names(p: str) -> tuple[str, str, str]:
    quote = op.get_bind().dialect.identifier_preparer.quote
    return quote(f"{p}logs"), quote(f"{p}log_notify"), quote(f"{p}logs_notify")


def upgrade() -> None:
    p: str = context.config.attributes["prefix"]
    op.add_column(f"{p}tasks", sa.Column("runner", Key, nullable=True))
    op.create_index(
        f"{p}tasks_runner",
        f"{p}tasks",
        ["runner"],
        postgresql_where=sa.text("runner IS NOT NULL"),
        sqlite_where=sa.text("runner IS NOT NULL"),
    )
    op.create_table(
        f"{p}replicas",
        sa.Column("id", Key, primary_key=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reaper", Key, nullable=True),
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    logs, function, trigger = _names(p)
    channel = notify_channel(p).replace("'", "''")
    op.execute(
        f"CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $a2a${_NOTIFY_BODY}$a2a$"
    )
    op.execute(
        f"CREATE TRIGGER {trigger} AFTER INSERT OR UPDATE OR DELETE ON {logs} "
        f"FOR EACH ROW EXECUTE FUNCTION {function}('{channel}')"
    )


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    if op.get_bind().dialect.name == "postgresql":
        logs, function, trigger = _names(p)
        op.execute(f"DROP TRIGGER {trigger} ON {logs}")
        op.execute(f"DROP FUNCTION {function}()")
    op.drop_table(f"{p}replicas")
    op.drop_index(f"{p}tasks_runner", f"{p}tasks")
    op.drop_column(f"{p}tasks", "runner")
