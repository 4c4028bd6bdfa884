"""PostgreSQL as a multi-replica backend: :class:`Replicas`, run by `a2a_sql.SqlBackend`.

What makes several server processes on one PostgreSQL database (and prefix) one server:

- **Followers woken by ``LISTEN/NOTIFY``**, no polling: triggers on ``events`` and
  ``logs`` (migration 0003) notify ``{prefix}log`` of every append, close and drop, in the
  writer's transaction, so the notification is sent on commit and only then; an event of
  at most 4000 bytes travels with it. One dedicated connection per replica
  (``application_name`` ``a2a-listen:{replica}``) listens and hands the event to the local
  followers of that task (`SqlEventLog.deliver`: no read of the table), or wakes them to
  read it (`SqlEventLog.wake`). When that connection is lost, the
  listener connects again and then wakes *every* local follower, which re-reads the table
  from the last seq it saw: a notification missed meanwhile costs one read, never an event.
- **Cancel across replicas**: a notification that a log was closed also reaches the replica
  whose agent runs the task; if its own view of the task is not terminal (someone else
  finished it: a CancelTask elsewhere, a reaper), it cancels the agent
  (`ServerHandle.cancel_local_execution`). After a reconnect of the listener, the tasks
  this replica runs are looked up once, and the agents of those finished meanwhile are
  cancelled too (their notification was missed).
- **Ownership leases**: the store records the replica that writes a running state
  (submitted, working) as the task's ``runner``. Each replica holds a lease, a row of
  ``replicas`` whose deadline is ``now() + lease_ttl`` *by the database's clock* (replica
  clocks do not matter), renewed every ``lease_ttl / 3`` seconds on the listener's
  connection (a pool busy with requests never delays it; a renewal is also the check that
  the connection is alive). Every ``reap_interval`` seconds each replica claims one lease
  that ran out (an ``UPDATE ... WHERE lease_until < now()`` that one replica wins) and
  recovers that replica's running tasks by the server's policy
  (`ServerHandle.recover_task`): by default it fails them through the server's writer,
  with `HOST_LOST_TEXT` (the FAILED event is logged and the log closed, so subscribers on
  every replica get the final event, and webhooks are sent); under ``retry`` or
  ``resume`` it claims each one's next attempt and runs it (``docs/durability.md``).
  A replica only reaps once it has renewed its own lease for ``lease_ttl / 3`` seconds in
  a row: after a database outage that outlived every lease, the others get that long to
  renew theirs before anyone counts them as dead.
- **A clean stop** drops the replica's lease (or, if it still runs tasks, marks it run
  out with ``-infinity``, "handed off", and notifies the channel, so another replica
  recovers them at once).

A replica's death (``kill -9``, a lost machine) ends its running tasks within
``lease_ttl + reap_interval`` (plus one round of writes) of its last renewal.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import anyio
import sqlalchemy as sa
from anyio.abc import TaskStatus
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from a2a_core.server.backends import BackendUnavailableError, ServerHandle

from ._schema import Tables
from .events import SqlEventLog
from .store import RUNNING_STATES

__all__ = ["HOST_LOST_TEXT", "Replicas"]

logger = logging.getLogger("a2a_sql")

#: The status message of a task failed because the replica running it was lost.
HOST_LOST_TEXT: Final = (
    "The server running this task was lost (it stopped renewing its lease) before the task "
    "finished; the task was failed by another server."
)

#: Why a new attempt starts on another replica (``A2AServer(recovery="retry")``).
LOST_REASON: Final = (
    "the server running this task was lost (it stopped renewing its lease) before the task "
    "finished."
)
#: Why a new attempt starts after the replica running the task stopped and handed it off.
HANDED_OFF_REASON: Final = "the server running this task stopped and handed it off."
#: The notification a replica sends when it leaves with running tasks (a hand-off): every
#: other replica looks for run-out leases at once, rather than at its next look.
_HAND_OFF_KIND: Final = "h"

_RUNNING: Final = tuple(sorted(state.value for state in RUNNING_STATES))
_REAP_CONCURRENCY: Final = 32


class Replicas:
    """One replica's leases, reaper and listener on PostgreSQL (see the module docstring).

    :param engine: the backend's engine (PostgreSQL, asyncpg).
    :param tables: the tables, under the backend's prefix.
    :param event_log: the log whose followers the notifications wake.
    :param replica_id: this replica's name, unique among live replicas.
    :param lease_ttl: seconds without a renewal after which this replica counts as dead.
    :param reap_interval: seconds between looks for run-out leases.
    :param listen_engine: where the listening connection comes from (``engine`` by default;
        the backend gives one without a pool, so that busy requests never delay it).
    :param running_here: the tasks whose agents run here (the store's
        `~a2a_sql.SqlTaskStore.running_here`): when the listener was disconnected, those
        finished elsewhere meanwhile have their agents cancelled once it is back.
    """

    def __init__(
        self,
        engine: AsyncEngine,
        tables: Tables,
        event_log: SqlEventLog,
        *,
        replica_id: str,
        lease_ttl: float,
        reap_interval: float,
        listen_engine: AsyncEngine | None = None,
        running_here: set[str] | None = None,
    ) -> None:
        self.engine = engine
        self.listen_engine = listen_engine or engine
        self.running_here = running_here if running_here is not None else set()
        self.tables = tables
        self.event_log = event_log
        self.replica_id = replica_id
        self.lease_ttl = lease_ttl
        self.reap_interval = reap_interval
        self.channel = tables.channel
        quote = engine.dialect.identifier_preparer.format_table
        self._replicas_sql = quote(tables.replicas)
        self._server: ServerHandle | None = None
        self._healthy_since: float | None = None
        #: Set by a hand-off notification: the reaper looks at once (made in `run`).
        self._reap_now: anyio.Event | None = None
        #: Tasks this replica failed because their replica was lost.
        self.reaped = 0
        #: How many times the listener connected again after losing its connection.
        self.reconnects = 0

    # -- the service ---------------------------------------------------------------------

    async def run(
        self, server: ServerHandle, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen, renew the lease and reap, until cancelled; started once this replica
        listens and holds its lease (so it is never counted dead before it serves)."""
        self._server = server
        self._reap_now = anyio.Event()
        async with anyio.create_task_group() as group:
            await group.start(self._listen_loop)
            group.start_soon(self._reap_loop, server)
            task_status.started()

    async def leave(self) -> None:
        """Drop this replica's lease (a clean stop); if it still runs tasks (failed by the
        server's stop, or handed off under a recovering policy), mark the lease run out
        instead (``-infinity``: handed off, not lost) and tell the other replicas, so
        that one of them takes them at once."""
        r = self.tables.replicas
        t = self.tables.tasks.c
        async with self.engine.begin() as conn:
            gone = await conn.execute(
                sa.delete(r).where(
                    r.c.id == self.replica_id,
                    ~sa.exists().where(t.runner == self.replica_id, t.state.in_(_RUNNING)),
                )
            )
            if gone.rowcount == 0:
                await conn.execute(
                    sa.update(r)
                    .where(r.c.id == self.replica_id)
                    .values(lease_until=sa.literal_column("'-infinity'::timestamptz"), reaper=None)
                )
                await conn.execute(
                    sa.text("SELECT pg_notify(:channel, :payload)"),
                    {"channel": self.channel, "payload": f"{_HAND_OFF_KIND}0:{self.replica_id}:"},
                )

    # -- the restart rule ----------------------------------------------------------------

    async def leftovers(self) -> list[tuple[str, bool]]:
        """The running tasks nobody alive runs, at this replica's start, each with whether
        it was handed off: those of its own previous run (same replica id), those without
        a runner (written before migration 0003), those whose runner holds no lease row,
        and those a replica handed off as it stopped (its lease marked ``-infinity``).
        Tasks of replicas whose lease ran out are left to the reaper, which waits until the
        others could renew theirs."""
        t = self.tables.tasks.c
        r = self.tables.replicas.c
        handed_off = r.lease_until == sa.literal_column("'-infinity'::timestamptz")
        async with self.engine.connect() as conn:
            rows = await conn.execute(
                sa.select(t.id, sa.func.coalesce(handed_off, False))
                .select_from(self.tables.tasks.outerjoin(self.tables.replicas, r.id == t.runner))
                .where(
                    t.state.in_(_RUNNING),
                    sa.or_(
                        t.runner.is_(None),
                        t.runner == self.replica_id,
                        r.id.is_(None),
                        handed_off,
                    ),
                )
            )
            return [(str(task_id), bool(released)) for task_id, released in rows]

    # -- leases and the listener (one dedicated connection) ------------------------------

    async def _renew(self, driver: Any) -> None:
        await driver.execute(
            f"INSERT INTO {self._replicas_sql} (id, lease_until, reaper) "
            "VALUES ($1, now() + make_interval(secs => $2), NULL) "
            "ON CONFLICT (id) DO UPDATE SET lease_until = EXCLUDED.lease_until, reaper = NULL",
            self.replica_id,
            float(self.lease_ttl),
        )

    def _on_notify(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        # Called by asyncpg in the event loop for each notification: wake, never raise.
        try:
            kind = payload[:1]
            seq, _, rest = payload[1:].partition(":")
            writer, _, task_id = rest.partition(":")
            if writer == self.replica_id:
                return  # this replica's own write: its followers were woken in process
            if kind == "v":  # the event itself: {len(task_id)}:{task_id}{event}
                length, _, rest = task_id.partition(":")
                size = int(length)
                self.event_log.deliver(rest[:size], int(seq), rest[size:])
            elif kind == "e":
                self.event_log.wake(task_id)
            elif kind == "c":
                self.event_log.wake(task_id)
                self.running_here.discard(task_id)
                server = self._server
                if server is not None and server.cancel_local_execution(task_id):
                    logger.info(
                        "task %s was finished elsewhere; cancelling its agent here", task_id
                    )
            elif kind == "d":
                self.running_here.discard(task_id)
                self.event_log.forgotten(task_id)
            elif kind == _HAND_OFF_KIND and self._reap_now is not None:
                self._reap_now.set()  # a replica left with running tasks: take them now
        except Exception:
            logger.exception("could not handle the notification %r", payload)

    async def _listen_loop(
        self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        started = False
        delay = 0.05
        pause = min(1.0, self.lease_ttl / 6)
        while True:
            try:
                async with self._listening() as (driver, lost):
                    await self._renew(driver)
                    self._healthy(True)
                    if started:
                        self.reconnects += 1
                        logger.warning(
                            "replica %s listens again; waking every follower to re-read",
                            self.replica_id,
                        )
                        self.event_log.wake_all()  # what was notified meanwhile was missed
                        try:
                            await self._finished_meanwhile()
                        except BackendUnavailableError:
                            pass  # logged once per outage; the connection is lost again
                        except Exception:
                            logger.exception("could not look for tasks finished meanwhile")
                    else:
                        started = True
                        task_status.started()
                    delay = 0.05
                    while True:
                        with anyio.move_on_after(self.lease_ttl / 3):
                            await lost.wait()
                        if lost.is_set():
                            raise ConnectionError("the listener's connection was closed")
                        with anyio.fail_after(max(self.lease_ttl / 3, 1.0)):
                            await self._renew(driver)
                        self._healthy(True)
            except Exception as exc:
                if not started:
                    raise  # the database is needed to start, as for the schema check
                if self._healthy_since is not None:
                    logger.warning(
                        "replica %s lost its listener connection (%s: %s); reconnecting",
                        self.replica_id,
                        type(exc).__name__,
                        exc,
                    )
                self._healthy(False)
                await anyio.sleep(delay)
                delay = min(delay * 2, pause)

    @contextlib.asynccontextmanager
    async def _listening(self) -> AsyncIterator[tuple[Any, anyio.Event]]:
        """A connection of ``listen_engine`` (the backend's URL and ``connect_args``), taken
        out of any pool for good, listening on the channel: ``(asyncpg connection, lost
        event)``."""
        conn: AsyncConnection = await self.listen_engine.connect()
        try:
            fairy = await conn.get_raw_connection()
            driver = fairy.driver_connection
            fairy.detach()  # closed for real when done, never given back to the pool
            lost = anyio.Event()
            callback: Callable[[Any], None] = lambda _c: lost.set()  # noqa: E731
            assert driver is not None
            driver.add_termination_listener(callback)
            await driver.execute(
                "SELECT set_config('application_name', $1, false)",
                f"a2a-listen:{self.replica_id}"[:63],
            )
            await driver.add_listener(self.channel, self._on_notify)
            yield driver, lost
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await conn.close()

    async def _finished_meanwhile(self) -> None:
        """Cancel the agents here whose tasks another replica finished (or took over) while
        this one was not listening: their close notification was missed."""
        server = self._server
        ids = sorted(self.running_here)
        if server is None or not ids:
            return
        t = self.tables.tasks.c
        ours: set[str] = set()
        async with self.engine.connect() as conn:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                ours.update(
                    await conn.scalars(
                        sa.select(t.id).where(
                            t.id.in_(chunk), t.state.in_(_RUNNING), t.runner == self.replica_id
                        )
                    )
                )
        for task_id in ids:
            if task_id in ours:
                continue
            self.running_here.discard(task_id)
            if server.cancel_local_execution(task_id):
                logger.info(
                    "task %s was finished elsewhere while this replica was not listening; "
                    "cancelling its agent here",
                    task_id,
                )

    def _healthy(self, ok: bool) -> None:
        if not ok:
            self._healthy_since = None
        elif self._healthy_since is None:
            self._healthy_since = anyio.current_time()

    # -- the reaper ----------------------------------------------------------------------

    def _may_reap(self) -> bool:
        since = self._healthy_since
        return since is not None and anyio.current_time() - since >= self.lease_ttl / 3

    async def _reap_loop(self, server: ServerHandle) -> None:
        while True:
            wake = self._reap_now
            assert wake is not None  # made in `run`, before this loop starts
            with anyio.move_on_after(self.reap_interval):
                await wake.wait()
            if wake.is_set():
                self._reap_now = anyio.Event()
            if not self._may_reap():
                continue
            try:
                while await self.reap_once(server):
                    pass
            except BackendUnavailableError:
                pass  # logged once per outage (`OutageLog`); the next look tries again
            except Exception:
                logger.exception("reaping lost replicas failed")

    async def reap_once(self, server: ServerHandle) -> bool:
        """Fail the running tasks of one replica whose lease ran out, if there is one;
        ``True`` if one was claimed."""
        claim = max(self.lease_ttl, 5.0)  # if this reaper dies too, another retries then
        async with self.engine.begin() as conn:
            # ``-infinity``: the replica handed its tasks off as it stopped (not lost).
            found = (
                await conn.execute(
                    sa.text(
                        f"UPDATE {self._replicas_sql} AS r "
                        "SET lease_until = now() + make_interval(secs => :claim), reaper = :me "
                        "FROM (SELECT id, lease_until = '-infinity' AS handed_off "
                        f"FROM {self._replicas_sql} WHERE lease_until < now() AND id <> :me "
                        "ORDER BY lease_until LIMIT 1 FOR UPDATE SKIP LOCKED) AS old "
                        "WHERE r.id = old.id AND r.lease_until < now() "
                        "RETURNING r.id, old.handed_off"
                    ),
                    {"claim": float(claim), "me": self.replica_id},
                )
            ).first()
        if found is None:
            return False
        dead, handed_off = str(found[0]), bool(found[1])
        t = self.tables.tasks.c
        async with self.engine.connect() as conn:
            task_ids = list(
                await conn.scalars(
                    sa.select(t.id).where(t.runner == dead, t.state.in_(_RUNNING)).order_by(t.id)
                )
            )
        if task_ids:
            logger.warning(
                "replica %s %s; recovering its %d running task(s)",
                dead,
                "handed off its tasks" if handed_off else "lost its lease",
                len(task_ids),
            )
        reason = HANDED_OFF_REASON if handed_off else LOST_REASON
        limiter = anyio.CapacityLimiter(_REAP_CONCURRENCY)

        async def fail(task_id: str) -> None:
            async with limiter:
                try:
                    if await server.recover_task(
                        task_id, reason, lost=not handed_off, fail_text=HOST_LOST_TEXT
                    ):
                        self.reaped += 1
                except Exception:
                    # The lease stays claimed: the next claim, after ``claim``, retries.
                    logger.exception("could not fail task %s of lost replica %s", task_id, dead)

        async with anyio.create_task_group() as group:
            for task_id in task_ids:
                group.start_soon(fail, task_id)
        r = self.tables.replicas
        async with self.engine.begin() as conn:
            # Gone unless it came back (its renewal clears ``reaper``) or a task is left.
            await conn.execute(
                sa.delete(r).where(
                    r.c.id == dead,
                    r.c.reaper == self.replica_id,
                    ~sa.exists().where(t.runner == dead, t.state.in_(_RUNNING)),
                )
            )
        return True
