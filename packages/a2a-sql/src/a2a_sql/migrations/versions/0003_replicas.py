"""Replicas on PostgreSQL: the runner of each running task, leases, and the trigger that
wakes other replicas' followers.

- ``tasks.runner``: the replica whose agent runs the task (indexed, running tasks only);
- ``replicas``: one lease per replica, by the database's clock;
- on PostgreSQL, triggers on ``events`` and ``logs`` that send ``pg_notify(channel, ...)``
  for every change of a log (an event appended, the log closed, dropped), in the writer's
  transaction, so the notification goes out when, and only if, the write commits. The
  payloads: ``v{seq}:{writer}:{len(task_id)}:{task_id}{event}`` an event small enough to
  travel with it (a follower takes it without a read), ``e{seq}:{writer}:{task_id}`` a
  larger one, ``c{last_seq}:{writer}:{task_id}`` the log closed, ``d0:{writer}:{task_id}``
  dropped; ``writer`` is the replica whose connection wrote (its ``a2a.replica`` setting,
  set by `a2a_sql.SqlBackend` on its connections; empty for anyone else).

Revision ID: 0003
Revises: 0002_push_jobs
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context, op

from a2a_sql._schema import Key, notify_channel

revision = "0003"
down_revision = "0002_push_jobs"
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
  END IF;
  RETURN NULL;
END
"""

# An event travels with its notification when it fits (payloads are at most 8000 bytes).
_EVENT_NOTIFY_BODY = """
DECLARE
  writer text := coalesce(current_setting('a2a.replica', true), '');
  body text := NEW.body::text;
BEGIN
  IF octet_length(body) <= 4000 THEN
    PERFORM pg_notify(TG_ARGV[0], 'v' || NEW.seq || ':' || writer || ':'
      || length(NEW.task_id) || ':' || NEW.task_id || body);
  ELSE
    PERFORM pg_notify(TG_ARGV[0], 'e' || NEW.seq || ':' || writer || ':' || NEW.task_id);
  END IF;
  RETURN NULL;
END
"""


def _names(p: str) -> tuple[str, str, str]:
    quote = op.get_bind().dialect.identifier_preparer.quote
    return quote(f"{p}logs"), quote(f"{p}log_notify"), quote(f"{p}logs_notify")


def _event_names(p: str) -> tuple[str, str, str]:
    quote = op.get_bind().dialect.identifier_preparer.quote
    return quote(f"{p}events"), quote(f"{p}event_notify"), quote(f"{p}events_notify")


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
    events, event_function, event_trigger = _event_names(p)
    op.execute(
        f"CREATE FUNCTION {event_function}() RETURNS trigger LANGUAGE plpgsql "
        f"AS $a2a${_EVENT_NOTIFY_BODY}$a2a$"
    )
    op.execute(
        f"CREATE TRIGGER {event_trigger} AFTER INSERT ON {events} "
        f"FOR EACH ROW EXECUTE FUNCTION {event_function}('{channel}')"
    )


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    if op.get_bind().dialect.name == "postgresql":
        logs, function, trigger = _names(p)
        events, event_function, event_trigger = _event_names(p)
        op.execute(f"DROP TRIGGER {event_trigger} ON {events}")
        op.execute(f"DROP FUNCTION {event_function}()")
        op.execute(f"DROP TRIGGER {trigger} ON {logs}")
        op.execute(f"DROP FUNCTION {function}()")
    op.drop_table(f"{p}replicas")
    op.drop_index(f"{p}tasks_runner", f"{p}tasks")
    op.drop_column(f"{p}tasks", "runner")
