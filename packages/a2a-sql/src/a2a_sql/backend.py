"""The SQL backend of an A2A server: :class:`SqlBackend`, one value for ``backend=``.

It builds the task store, the event log and the push-config store on one SQLAlchemy
asyncio engine and runs, while the server runs, a service that:

- checks the schema at start (refusing one older or newer than this code; SQLite creates
  or upgrades its own by default);
- applies the **restart rule**: the tasks a previous run left submitted or working (its
  agents died with it, or it handed them off at a clean stop) are recovered by the
  server's policy (`A2AServer.recover_task`): failed with the status message
  `RESTART_TEXT` by default, through the server's writer, so their logs end and clients
  see why; run again under ``retry`` or ``resume`` (``docs/durability.md``);
- on PostgreSQL, runs this replica's part of a multi-replica server (`a2a_sql.replicas`):
  the ``LISTEN`` connection that wakes followers of other replicas' writes and cancels
  agents whose task was finished elsewhere, the lease, and the reaper that fails the
  running tasks of replicas whose lease ran out (`HOST_LOST_TEXT`);
- sweeps expired terminal tasks (and orphan closed logs) every ``sweep_interval``;
- disposes of the engine when the server stops;

and a second service, the push queue's worker (`a2a_sql.push_queue`): webhook jobs are
rows queued with their event, delivered at least once, also after a crash.

SQLite and MySQL/MariaDB are **single-replica** backends: one server process per database
and prefix. Their restart rule fails every task left running, which would fail a second
live process's tasks; and they have no cross-process wake-ups.

On PostgreSQL the restart rule cannot be "every running task": other live replicas run
some of them. There it fails only what nobody alive runs: the tasks of this replica's
previous run (its ``replica_id`` is stable, e.g. a pod name), those without a runner
(written before the schema had one) and those of a runner without a lease row. A previous
run under another id (the default id is random) is failed by the reaper once its lease runs
out, within ``lease_ttl + reap_interval`` of its death, like any lost replica's.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from a2a_core.server.backends import (
    Backend,
    BackendUnavailableError,
    OutageLog,
    PushSecretCipher,
    PushSender,
    ServerHandle,
    Service,
)

from ._common import make_engine
from ._schema import KEY_LENGTH, Tables
from .events import SqlEventLog
from .migrate import check_schema
from .push import SqlPushConfigStore
from .push_queue import PushQueueSettings, SqlPushQueue
from .replicas import HOST_LOST_TEXT, Replicas
from .store import SqlTaskStore

__all__ = ["HOST_LOST_TEXT", "PACKET_HEADROOM", "RESTART_TEXT", "SqlBackend"]

logger = logging.getLogger("a2a_sql")

#: The status message of a task failed because the server restarted under it.
RESTART_TEXT: Final = "The server restarted before the task finished"
#: Why a new attempt starts after a restart (``A2AServer(recovery="retry")``).
RESTARTED_REASON: Final = "the server restarted before the task finished."
#: What a task's row and its statement take beyond the task's encoded messages and
#: artifacts (its other columns, the JSON around them, the SQL): subtracted from MariaDB's
#: and MySQL's ``max_allowed_packet`` for ``SqlBackend.max_task_bytes`` (a quarter of the
#: packet when that is smaller). The store also measures each row as it will be sent.
PACKET_HEADROOM: Final = 1 << 20


class SqlBackend:
    """Tasks, event logs and webhooks in an SQL database (see the module docstring).

    :param url: an SQLAlchemy async URL: ``postgresql+asyncpg://...``,
        ``sqlite+aiosqlite:///path.db``, ``mysql+asyncmy://...`` (MariaDB too).
    :param prefix: table-name prefix: deployments sharing a database use different ones.
    :param task_ttl: seconds a terminal task (with its log and webhooks) is kept.
    :param log_retention: seconds a closed log whose task is not stored is kept.
    :param max_configs_per_task: webhook configs per task.
    :param sweep_interval: seconds between sweeps of expired tasks.
    :param sweep_batch: tasks dropped per sweep transaction.
    :param create_schema: create or upgrade the schema at start (``None``: on SQLite only;
        elsewhere run ``python -m a2a_sql upgrade URL`` as a deployment step).
    :param fail_unfinished: apply the restart rule at start.
    :param push_sender: webhook delivery of your own (``None``: the durable queue).
    :param push_queue: the durable push queue's bounds and timings, and how it calls
        webhooks (`PushQueueSettings`: its `DeliveryRules` and `WebhookPoster`).
    :param push_secret_keys: Fernet keys, newest first, to keep webhook secrets encrypted.
    :param engine_options: more arguments of ``create_async_engine`` (pool sizes...).
    :param write_retry: seconds a task's create or save keeps trying while the database is
        unreachable, so that a running agent rides out a restart or failover that short
        (a retry after a lost reply is recognised: `SqlTaskStore`); ``0``: not at all.
    :param statement_timeout: seconds a statement may wait for the database's answer
        (PostgreSQL and MySQL/MariaDB) before the call gets "Task store unavailable" and
        its connection is dropped: a network that silently drops packets then costs a
        request this long, not the kernel's retransmission timeout of about 15 minutes.
        Far above any statement of the backend's (milliseconds); ``None``: no limit.
    :param replica_id: this replica's name on PostgreSQL, unique among live replicas
        (random by default; a stable one, e.g. the pod name, lets a restarted replica fail
        its previous run's tasks at once).
    :param lease_ttl: PostgreSQL: seconds without a lease renewal after which a replica
        counts as dead (renewed every ``lease_ttl / 3``). 10 s rides out a GC pause, a
        slow database or a short failover while bounding a dead replica's tasks to about
        12 s.
    :param reap_interval: PostgreSQL: seconds between looks for run-out leases
        (``None``: ``lease_ttl / 4``; a look is one indexed ``UPDATE``).
    """

    def __init__(
        self,
        url: str | sa.URL,
        *,
        prefix: str = "a2a_",
        task_ttl: float | None = 3600.0,
        log_retention: float | None = 3600.0,
        max_configs_per_task: int = 10,
        sweep_interval: float = 1.0,
        sweep_batch: int = 500,
        create_schema: bool | None = None,
        fail_unfinished: bool = True,
        push_sender: PushSender | None = None,
        push_queue: PushQueueSettings | None = None,
        push_secret_keys: Sequence[str | bytes] = (),
        engine_options: Mapping[str, Any] | None = None,
        write_retry: float = 5.0,
        statement_timeout: float | None = 10.0,
        replica_id: str | None = None,
        lease_ttl: float = 10.0,
        reap_interval: float | None = None,
    ) -> None:
        if lease_ttl <= 0:
            raise ValueError("lease_ttl must be > 0")
        replica_id = replica_id or uuid.uuid4().hex
        if ":" in replica_id or len(replica_id.encode()) > KEY_LENGTH:
            raise ValueError(f"a replica id has no ':' and at most {KEY_LENGTH} bytes")
        options = dict(engine_options or {})
        if sa.make_url(url).get_backend_name() == "postgresql":
            # Every connection says which replica it writes for: the trigger puts it in its
            # notifications, so a replica skips its own (it woke its followers already).
            connect_args = dict(options.get("connect_args") or {})
            settings = dict(connect_args.get("server_settings") or {})
            settings["a2a.replica"] = replica_id
            connect_args["server_settings"] = settings
            options["connect_args"] = connect_args
        if statement_timeout is not None and statement_timeout <= 0:
            raise ValueError("statement_timeout must be > 0 (or None: no limit)")
        # One database, one outage log: the listener's engine (below) shares it, so an
        # outage is one warning whichever connection met it first.
        outages = OutageLog(logger, "the database")
        self.engine = make_engine(
            url, outages=outages, statement_timeout=statement_timeout, **options
        )
        self.tables = Tables(prefix)
        self.prefix = prefix
        is_sqlite = self.engine.dialect.name == "sqlite"
        self.create_schema = is_sqlite if create_schema is None else create_schema
        self.fail_unfinished = fail_unfinished
        self.sweep_interval = sweep_interval
        self.sweep_batch = sweep_batch
        cipher = PushSecretCipher(push_secret_keys) if push_secret_keys else None
        self._event_log = SqlEventLog(self.engine, self.tables, retention=log_retention)
        #: This replica's name: the ``runner`` of the running tasks it writes.
        self.replica_id = replica_id
        self.lease_ttl = lease_ttl
        self.reap_interval = reap_interval if reap_interval is not None else lease_ttl / 4
        self._store = SqlTaskStore(
            self.engine,
            self.tables,
            self._event_log,
            ttl=task_ttl,
            replica_id=self.replica_id,
            write_retry=write_retry,
        )
        self._push_configs = SqlPushConfigStore(
            self.engine,
            self.tables,
            max_configs_per_task=max_configs_per_task,
            cipher=cipher,
        )
        self._push_sender = push_sender
        #: The durable push queue (``None`` with a ``push_sender`` of your own).
        self.push_queue: SqlPushQueue | None = None
        if push_sender is None:
            self.push_queue = SqlPushQueue(self.engine, self.tables, self._push_configs, push_queue)
            self._store.push_queue = self.push_queue
        #: Tasks recovered by the restart rule at the last start (failed, or run again).
        self.failed_at_start = 0
        #: The largest task this database stores, in the encoded bytes `TaskLimits` counts
        #: (``None``: no limit below the server's own). MariaDB and MySQL refuse a statement
        #: over their ``max_allowed_packet`` (16 MiB and 64 MiB by default), and a task is
        #: one row: read when the service starts, less `PACKET_HEADROOM`; the server lowers
        #: ``TaskLimits.max_task_bytes`` to it. PostgreSQL and SQLite take rows far larger
        #: than the server's default limit.
        self.max_task_bytes: int | None = None
        #: PostgreSQL's multi-replica service (``None`` on single-replica databases).
        self.replicas: Replicas | None = None
        if self.engine.dialect.name == "postgresql":
            # The listener's connection comes from an engine of its own without a pool:
            # a pool exhausted by requests must never delay the lease renewals.
            listen_engine = make_engine(
                url,
                poolclass=NullPool,
                connect_args=options.get("connect_args", {}),
                outages=outages,
                statement_timeout=statement_timeout,
            )
            self.replicas = Replicas(
                self.engine,
                self.tables,
                self._event_log,
                replica_id=self.replica_id,
                lease_ttl=lease_ttl,
                reap_interval=self.reap_interval,
                listen_engine=listen_engine,
                running_here=self._store.running_here,
            )

    @property
    def outlives_process(self) -> bool:
        """Whether running tasks left at a stop are taken up again, so that a recovering
        server hands them off rather than failing them (``docs/durability.md``): by
        another replica (PostgreSQL), or by the next start's restart rule. Not for SQLite
        in memory (gone with the process), nor with the restart rule off on a
        single-replica database (nothing would take them up)."""
        database = self.engine.url.database
        if self.engine.dialect.name == "sqlite" and database in (None, "", ":memory:"):
            return False
        return self.fail_unfinished or self.multi_replica

    @property
    def multi_replica(self) -> bool:
        """Whether several server processes may share this database and prefix
        (PostgreSQL)."""
        return self.replicas is not None

    @property
    def store(self) -> SqlTaskStore:
        """The task store (it keeps the event log: a ``LoggedTaskStore``)."""
        return self._store

    @property
    def event_log(self) -> SqlEventLog:
        """The per-task event logs."""
        return self._event_log

    @property
    def push_config_store(self) -> SqlPushConfigStore:
        """The webhook configs."""
        return self._push_configs

    @property
    def push_sender(self) -> PushSender | None:
        """The durable push queue (`SqlPushQueue`), or the sender given."""
        return self._push_sender if self.push_queue is None else self.push_queue

    @property
    def services(self) -> tuple[Service, ...]:
        """The backend's work beside the server (`service`), then the push worker."""
        if self.push_queue is None:
            return (self.service,)
        return (self.service, self.push_queue.service)

    async def check_health(self) -> dict[str, bool]:
        """Whether the database answers a ``SELECT 1`` (the store, the logs and the webhook
        configs share its engine); for ``A2AServer.check_health``."""
        try:
            async with self.engine.connect() as connection:
                await connection.execute(sa.text("SELECT 1"))
            answers = True
        except Exception:
            answers = False
        return {"store": answers, "event_log": answers, "push_configs": answers}

    async def start(self) -> None:
        """Check (or create) the schema and read the largest row the database takes; what
        the service does first."""
        await check_schema(self.engine, self.prefix, create=self.create_schema)
        if self.engine.dialect.name in ("mysql", "mariadb"):
            async with self.engine.connect() as connection:
                packet = (await connection.execute(sa.text("SELECT @@max_allowed_packet"))).scalar()
            packet = int(packet or 0)
            self.max_task_bytes = packet - min(PACKET_HEADROOM, packet // 4)
            self._store.max_row_bytes = packet - min(PACKET_HEADROOM // 16, packet // 16)

    @contextlib.asynccontextmanager
    async def service(self, server: ServerHandle) -> AsyncIterator[SqlBackend]:
        """Run the backend beside ``server`` (see the module docstring)."""
        replicas = self.replicas
        try:
            await self.start()
            if self.push_queue is not None:  # before the restart rule writes events
                self.push_queue.enabled = server.push_enabled
            if self.fail_unfinished:
                await self._fail_unfinished(server)
            try:
                async with anyio.create_task_group() as group:
                    if replicas is not None:
                        await group.start(replicas.run, server)
                    group.start_soon(self._sweep_loop)
                    try:
                        yield self
                    finally:
                        group.cancel_scope.cancel()
            finally:
                if replicas is not None:
                    with anyio.move_on_after(2.0, shield=True):
                        try:
                            await replicas.leave()
                        except Exception as exc:
                            logger.warning("could not give up the lease: %s", exc)
        finally:
            with anyio.CancelScope(shield=True):
                await self.engine.dispose()
                if self.replicas is not None:
                    await self.replicas.listen_engine.dispose()

    async def _fail_unfinished(self, server: ServerHandle) -> None:
        """The restart rule: what the previous run left running is recovered by the
        server's policy (failed, by default; run again under ``retry`` or ``resume``)."""
        if self.replicas is not None:
            left = await self.replicas.leftovers()  # not other live replicas' tasks
        else:
            left = [(task_id, False) for task_id in await self._store.running_task_ids()]
        recovered = 0
        for task_id, handed_off in left:
            if await server.recover_task(
                task_id, RESTARTED_REASON, lost=not handed_off, fail_text=RESTART_TEXT
            ):
                recovered += 1
        self.failed_at_start = recovered
        if recovered:
            logger.warning(
                "recovered %d task(s) the previous run left unfinished (recovery policy: "
                "failed, or run again)",
                recovered,
            )

    async def _sweep_loop(self) -> None:
        while True:
            await anyio.sleep(self.sweep_interval)
            try:
                # Shielded: a call cancelled mid-way (the server stopping) leaves an
                # aiosqlite connection whose close may never finish.
                with anyio.CancelScope(shield=True):
                    await self._store.sweep(self.sweep_batch)
                    await self._event_log.sweep(self.sweep_batch)
            except BackendUnavailableError:
                pass  # logged once per outage (`OutageLog`); the next sweep tries again
            except Exception:
                logger.exception("sweeping expired tasks failed")


if TYPE_CHECKING:

    def _is_a_backend(backend: SqlBackend) -> Backend:  # checked by mypy, never run
        return backend
