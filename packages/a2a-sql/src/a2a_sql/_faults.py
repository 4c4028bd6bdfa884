"""The database being unreachable, as the core understands it: `BackendUnavailableError`.

`watch_faults` hooks the engine once, so that every statement of the backend (and of any
code on the same engine) is covered without a ``try`` around each:

- ``handle_error``: a failure SQLAlchemy sees as a lost connection (the server restarted,
  ``pg_terminate_backend``, a proxy or the network cut it), one the server reports as its
  going away (PostgreSQL's SQLSTATE class 08, 57P01..57P03, 53300; MySQL's 1040, 1053...),
  or any failure to connect, is raised as `BackendUnavailableError`. SQLAlchemy still
  invalidates the connection (and, on a disconnect, the pool's older ones), so the next
  checkout connects afresh: the server recovers by itself once the database is back. A
  failed pre-ping is left alone: the pool reconnects transparently, and only a failed
  reconnect is an outage.
- a statement that got no answer within the backend's ``statement_timeout`` (the driver's
  timeout: a network that silently drops packets) is the same, and its connection is
  dropped rather than returned to the pool with the statement still in flight.
- ``do_connect``: a driver that fails to connect with a plain ``OSError`` or timeout
  (asyncpg's "connection refused") rather than a DB-API error is answered the same; a
  connect that succeeds ends the outage in the log.

On SQLite, a file locked by another process past ``busy_timeout`` (5 s), or one that cannot
be opened or written, is an outage too. Other errors (a constraint, a deadlock, a bug) are
not outages and pass unchanged; of those, `is_contention` tells a deadlock or a lock wait
that timed out, which the store's writes try again.
"""

from __future__ import annotations

import logging
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Dialect, ExceptionContext
from sqlalchemy.ext.asyncio import AsyncEngine

from a2a_core.server.backends import OutageLog

__all__ = ["is_contention", "watch_faults"]

#: What a driver raises, outside the DB-API hierarchy, when the server is not there.
_NETWORK: Final = (OSError, TimeoutError)
#: SQLite's own outages: another process held the file locked past ``busy_timeout``, or
#: the file cannot be opened or written (its disk or folder went away).
_SQLITE_DOWN: Final = ("database is locked", "unable to open database file", "disk i/o error")


#: PostgreSQL's SQLSTATEs of a server going away or refusing work for now: connection
#: exceptions (class 08), shutdown by an administrator or a crash, not accepting
#: connections yet, no connection slot left. The driver may report them before it notices
#: the connection closed (what `ctx.is_disconnect` reads).
_PG_GOING_AWAY: Final = frozenset({"57P01", "57P02", "57P03", "53300"})
#: MySQL/MariaDB's error codes of the same: server shutdown in progress, too many
#: connections, connection killed.
_MYSQL_GOING_AWAY: Final = frozenset({1053, 1040, 1927, 2002, 2003, 2006, 2013})


#: The database rolled the transaction back for contention, and the same write tried again
#: may pass: MySQL/MariaDB's deadlock (1213) and lock wait timeout (1205), PostgreSQL's
#: deadlock_detected (40P01) and serialization_failure (40001). Not an outage: the server
#: is there and answered.
_MYSQL_CONTENTION: Final = frozenset({1213, 1205})
_PG_CONTENTION: Final = frozenset({"40P01", "40001"})


def is_contention(exc: BaseException) -> bool:
    """Whether ``exc`` (a driver's error, or SQLAlchemy's around one) is the database
    giving up a transaction for contention (see `_MYSQL_CONTENTION`)."""
    original = getattr(exc, "orig", None) or exc
    if _mysql_code(original) in _MYSQL_CONTENTION:
        return True
    return getattr(original, "sqlstate", None) in _PG_CONTENTION


def _mysql_code(exc: BaseException) -> int | None:
    """A MySQL/MariaDB driver error's number (its first argument; its ``sqlstate``, when it
    has one, is mostly the generic ``HY000``)."""
    args: tuple[Any, ...] = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def _server_going_away(exc: BaseException) -> bool:
    if _mysql_code(exc) in _MYSQL_GOING_AWAY:
        return True
    sqlstate = getattr(exc, "sqlstate", None)
    return isinstance(sqlstate, str) and (sqlstate.startswith("08") or sqlstate in _PG_GOING_AWAY)


def _sqlite_unavailable(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(symptom in text for symptom in _SQLITE_DOWN)


def _is_outage(exc: BaseException) -> bool:
    original = getattr(exc, "orig", None) or exc  # a DB-API error wrapped by SQLAlchemy
    return isinstance(original, _NETWORK) or _server_going_away(original)


class _QuietResets(logging.Filter):
    """Drops the pool's traceback for a connection it could not roll back because the
    database had already gone: that outage is logged once, by `OutageLog`."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not (
            error is not None
            and record.msg == "Exception during reset or similar"
            and _is_outage(error)
        )


_QUIET_RESETS: Final = _QuietResets()


def watch_faults(engine: AsyncEngine, outages: OutageLog) -> None:
    """Translate the engine's connection failures (see the module docstring)."""
    pool_logger: Any = engine.sync_engine.pool.logger
    target: logging.Logger = getattr(pool_logger, "logger", pool_logger)  # echo wraps it
    if _QUIET_RESETS not in target.filters:
        target.addFilter(_QUIET_RESETS)

    def on_error(ctx: ExceptionContext) -> None:
        original = ctx.original_exception
        if ctx.is_pre_ping or not isinstance(original, Exception):
            # A cancellation (SQLAlchemy counts it as a disconnect, to drop the connection
            # it interrupted) must stay one; a failed pre-ping is the pool's to retry.
            return
        connecting = ctx.connection is None
        if (
            ctx.is_disconnect
            or isinstance(original, _NETWORK)
            or (connecting and isinstance(ctx.sqlalchemy_exception, sa.exc.DBAPIError))
            or _server_going_away(original)
            or (ctx.dialect.name == "sqlite" and _sqlite_unavailable(original))
        ):
            if isinstance(original, TimeoutError):
                # No answer in time (asyncpg's command_timeout): the connection still has
                # the statement in flight, on a network that may never answer. Drop it.
                ctx.is_disconnect = True
            raise outages.failed(original, "connecting" if connecting else "running a statement")

    def on_connect(dialect: Dialect, _record: Any, cargs: Any, cparams: Any) -> Any:
        try:
            connection = dialect.connect(*cargs, **cparams)
        except _NETWORK as exc:
            raise outages.failed(exc, "connecting") from None
        outages.recovered()
        return connection

    event.listen(engine.sync_engine, "handle_error", on_error)
    event.listen(engine.sync_engine, "do_connect", on_connect)
