"""What the parts of the SQL backend share: the engine they are built on, the clock."""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy import BigInteger, ColumnElement, event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import NullPool
from sqlalchemy.sql.functions import FunctionElement

from a2a_core.errors import InvalidParamsError
from a2a_core.server.backends import OutageLog

from ._faults import watch_faults
from ._schema import KEY_LENGTH

__all__ = [
    "CONNECT_TIMEOUT",
    "check_document",
    "check_key",
    "db_now_plus",
    "db_now_us",
    "logger",
    "make_engine",
    "now_us",
]

logger: Final = logging.getLogger("a2a_sql")

#: Connections kept in a networked database's pool (and as many more in overflow).
POOL_SIZE: Final = 10
#: Seconds a pooled connection may sit idle before it is pinged at its next use.
PING_AFTER: Final = 1.0

#: Seconds a connection attempt may take (asyncpg's own default is 60: a request would
#: hang that long on a database host that does not answer).
CONNECT_TIMEOUT: Final = 10.0


def now_us() -> int:
    """This server's wall-clock time in microseconds (expiry uses the database's own
    clock instead: `db_now_us`)."""
    return time.time_ns() // 1000


def _passthrough(value: Any) -> Any:
    return value


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers never block the writer; a process killed mid-way loses no committed
    # transaction (synchronous=NORMAL only risks the last ones on a power cut).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def make_engine(
    url: str | sa.URL,
    *,
    outages: OutageLog | None = None,
    statement_timeout: float | None = None,
    **options: Any,
) -> AsyncEngine:
    """The engine of a backend: documents pass as ProtoJSON text, unparsed (`Document`);
    connection failures raise `BackendUnavailableError`, logged once per outage in
    ``outages`` (see `watch_faults`); connections idle for a while are pinged before use
    (`_ping_when_idle`), so that the pool recovers from a database restart by itself.

    ``statement_timeout``: seconds a statement may wait for the database's answer before
    it fails as the database being unreachable (asyncpg's ``command_timeout``, asyncmy's
    ``read_timeout``, set unless ``connect_args`` already has them), so that a network that
    silently drops packets costs each request that long rather than the kernel's
    retransmission timeout (a quarter of an hour on Linux). ``None``: no limit. SQLite,
    a local file, needs none (its locks have ``busy_timeout``).

    SQLite gets one connection (``pool_size=1``): its writers take turns anyway, and one
    connection means the read-then-write of a transaction never races another in process.
    """
    url = sa.make_url(url)
    options.setdefault("json_serializer", _passthrough)
    options.setdefault("json_deserializer", _passthrough)
    ping_after: float | None = None
    if url.get_backend_name() == "sqlite":
        options.setdefault("pool_size", 1)
        options.setdefault("max_overflow", 0)
    elif options.get("poolclass") is NullPool:
        pass  # a connection of its own (the replicas' listener): no pool to size or ping
    else:
        # Room for a busy server's writes without opening and closing overflow
        # connections all the time (each costs a login, and asyncpg's SSL probe).
        options.setdefault("pool_size", POOL_SIZE)
        options.setdefault("max_overflow", POOL_SIZE)
        if "pool_pre_ping" not in options:
            ping_after = PING_AFTER
    driver = url.get_driver_name()
    if driver in ("asyncpg", "asyncmy"):
        connect_args = dict(options.get("connect_args") or {})
        if driver == "asyncpg":
            connect_args.setdefault("timeout", CONNECT_TIMEOUT)
        if statement_timeout is not None:
            connect_args.setdefault(
                "command_timeout" if driver == "asyncpg" else "read_timeout", statement_timeout
            )
        options["connect_args"] = connect_args
    engine = create_async_engine(url, **options)
    if url.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    watch_faults(engine, outages or OutageLog(logger, "the database"))
    if ping_after is not None:
        _ping_when_idle(engine, ping_after)
    return engine


def _ping_when_idle(engine: AsyncEngine, after: float) -> None:
    """Ping a pooled connection before use only when it sat idle ``after`` seconds.

    SQLAlchemy's ``pool_pre_ping`` pings at every checkout (asyncpg's ping is three round
    trips: BEGIN, ``;``, ROLLBACK), which would double what a logged write costs. A
    connection in use moments ago is alive or, if the database went away since, fails
    its statement as a lost connection, which invalidates the whole pool at once (see
    `watch_faults`): the next checkouts connect afresh. The ping is for the other case,
    connections left idle across a database restart, which would otherwise each fail
    one request before the pool noticed.
    """
    sync_engine = engine.sync_engine

    def on_checkin(_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    def on_checkout(connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < after:
            return
        try:
            sync_engine.dialect.do_ping(connection)
        except Exception:
            # The pool drops this connection and checks out (or opens) another.
            raise sa.exc.DisconnectionError("the connection died while it was idle") from None

    event.listen(sync_engine, "checkin", on_checkin)
    event.listen(sync_engine, "checkout", on_checkout)


# -- what the tables cannot hold ------------------------------------------------------------

#: A U+0000 in ProtoJSON text: ``\u0000`` after an even run of backslashes (an odd run
#: would make it the escaped backslash of the literal text ``\u0000``).
_NUL_ESCAPE: Final = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def check_key(field: str, value: str) -> None:
    """Refuse an id the key columns cannot hold (-32602, naming the field)."""
    if len(value) > KEY_LENGTH // 4 and len(value.encode()) > KEY_LENGTH:
        raise InvalidParamsError(
            f"{field} is longer than this server stores ({KEY_LENGTH} bytes of UTF-8)",
            field_violations=[(field, f"at most {KEY_LENGTH} bytes of UTF-8")],
        )


def check_document(text: str, field: str = "message") -> None:
    """Refuse a document with a U+0000 in it (-32602): PostgreSQL's JSONB cannot hold
    one, and every database refuses it alike, so that a client sees one behaviour."""
    if "\\u0000" in text and _NUL_ESCAPE.search(text) is not None:
        raise InvalidParamsError(
            "Text with the character U+0000 cannot be stored",
            field_violations=[(field, "must not contain U+0000")],
        )


# -- the database's clock ---------------------------------------------------------------------


class db_now_us(FunctionElement[int]):  # noqa: N801 - an SQL function, named as one
    """The database's clock in microseconds since the epoch, as an SQL expression.

    Expiry (the TTL sweep, log retention) is decided on it rather than on each server's
    clock: the deadline written and the time it is compared with come from one clock,
    whichever replica wrote the task and whichever sweeps it, however skewed theirs are.
    """

    type = BigInteger()
    inherit_cache = True
    name = "db_now_us"


@compiles(db_now_us)
def _sqlite_now_us(element: db_now_us, compiler: Any, **kw: Any) -> str:
    # julianday('now') has millisecond precision: enough for expiry.
    return "CAST((julianday('now') - 2440587.5) * 86400000000 AS INTEGER)"


@compiles(db_now_us, "postgresql")
def _pg_now_us(element: db_now_us, compiler: Any, **kw: Any) -> str:
    return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"


@compiles(db_now_us, "mysql")
@compiles(db_now_us, "mariadb")
def _mysql_now_us(element: db_now_us, compiler: Any, **kw: Any) -> str:
    return "CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)"


def db_now_plus(seconds: float) -> ColumnElement[int]:
    """The database's clock ``seconds`` from now, in microseconds (see `db_now_us`)."""
    return db_now_us() + int(seconds * 1_000_000)
