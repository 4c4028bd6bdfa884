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
- on PostgreSQL, a function ``{prefix}save_logged`` doing the task writer's write (lock the
  task, check its version, take the next seq of its log, append the event, store the
  task) in one statement: one round trip per event instead of seven, which is most of an
  event's latency. A later revision that changes these tables replaces it.

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


_SAVE_LOGGED = """
DECLARE
  v_version int; v_tenant text; v_owner text; v_seq int; v_closed bool;
BEGIN
  SELECT t.version, t.tenant, t.owner INTO v_version, v_tenant, v_owner
    FROM {tasks} t WHERE t.id = p_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 1, 0, NULL::text, NULL::text;
    RETURN;
  END IF;
  IF v_version <> p_expected THEN
    RETURN QUERY SELECT 2, v_version, NULL::text, NULL::text;
    RETURN;
  END IF;
  SELECT l.last_seq, l.closed INTO v_seq, v_closed FROM {logs} l WHERE l.task_id = p_id
    FOR UPDATE;
  IF NOT FOUND THEN
    v_seq := 1;
    INSERT INTO {logs} (task_id, last_seq, closed, closed_us)
      VALUES (p_id, 1, p_closing, p_closed_us);
  ELSIF v_closed THEN
    RETURN QUERY SELECT 3, v_seq, NULL::text, NULL::text;
    RETURN;
  ELSE
    v_seq := v_seq + 1;
    UPDATE {logs} SET last_seq = v_seq, closed = p_closing, closed_us = p_closed_us
      WHERE task_id = p_id;
  END IF;
  INSERT INTO {events} (task_id, seq, body) VALUES (p_id, v_seq, p_event::jsonb);
  UPDATE {tasks} SET version = v_version + 1, last_seq = v_seq, context_id = p_context_id,
    state = p_state, status_us = p_status_us, expires_us = p_expires_us,
    body = p_body::jsonb, runner = p_runner
    WHERE id = p_id;
  RETURN QUERY SELECT 0, v_seq, v_tenant, v_owner;
END
"""

_SAVE_LOGGED_ARGS = (
    "p_id text, p_expected int, p_closing bool, p_closed_us bigint, p_event text, "
    "p_context_id text, p_state text, p_status_us bigint, p_expires_us bigint, p_body text, "
    "p_runner text"
)


def _save_logged_function(p: str) -> tuple[str, str]:
    quote = op.get_bind().dialect.identifier_preparer.quote
    body = _SAVE_LOGGED.format(
        tasks=quote(f"{p}tasks"), logs=quote(f"{p}logs"), events=quote(f"{p}events")
    )
    return quote(f"{p}save_logged"), body


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
    save_logged, body = _save_logged_function(p)
    op.execute(
        f"CREATE FUNCTION {save_logged}({_SAVE_LOGGED_ARGS}) "
        "RETURNS TABLE(o_code int, o_n int, o_tenant text, o_owner text) "
        f"LANGUAGE plpgsql AS $a2a${body}$a2a$"
    )


def downgrade() -> None:
    p: str = context.config.attributes["prefix"]
    if op.get_bind().dialect.name == "postgresql":
        logs, function, trigger = _names(p)
        save_logged, _ = _save_logged_function(p)
        op.execute(f"DROP FUNCTION {save_logged}({_SAVE_LOGGED_ARGS})")
        events, event_function, event_trigger = _event_names(p)
        op.execute(f"DROP TRIGGER {event_trigger} ON {events}")
        op.execute(f"DROP FUNCTION {event_function}()")
        op.execute(f"DROP TRIGGER {trigger} ON {logs}")
        op.execute(f"DROP FUNCTION {function}()")
    op.drop_table(f"{p}replicas")
    op.drop_index(f"{p}tasks_runner", f"{p}tasks")
    op.drop_column(f"{p}tasks", "runner")
