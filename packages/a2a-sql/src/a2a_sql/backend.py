"""The SQL backend of an A2A server: :class:`SqlBackend`, one value for ``backend=``.

It builds the task store, the event log and the push-config store on one SQLAlchemy
asyncio engine and runs, while the server runs, a service that:

- checks the schema at start (refusing one older or newer than this code; SQLite creates
  or upgrades its own by default);
- applies the **restart rule**: the tasks a previous run left submitted or working (its
  agents died with it) are failed with the status message `RESTART_TEXT`, through the
  server's writer (`A2AServer.fail_task`), so their logs end and clients see why;
- sweeps expired terminal tasks (and orphan closed logs) every ``sweep_interval``;
- disposes of the engine when the server stops.

The restart rule assumes **one server process per database and prefix**: a second
replica starting would fail the first one's running tasks. Several replicas need leases,
a later step.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio
import sqlalchemy as sa

from a2a_core.server.backends import (
    Backend,
    PushSecretCipher,
    PushSender,
    ServerHandle,
    Service,
)

from ._common import make_engine
from ._schema import Tables
from .events import SqlEventLog
from .migrate import check_schema
from .push import SqlPushConfigStore
from .store import SqlTaskStore

__all__ = ["RESTART_TEXT", "SqlBackend"]

logger = logging.getLogger("a2a_sql")

#: The status message of a task failed because the server restarted under it.
RESTART_TEXT: Final = "The server restarted before the task finished"


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
    :param push_sender: webhook delivery of your own (``None``: the server's own).
    :param push_secret_keys: Fernet keys, newest first, to keep webhook secrets encrypted.
    :param engine_options: more arguments of ``create_async_engine`` (pool sizes...).
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
        push_secret_keys: Sequence[str | bytes] = (),
        engine_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.engine = make_engine(url, **dict(engine_options or {}))
        self.tables = Tables(prefix)
        self.prefix = prefix
        is_sqlite = self.engine.dialect.name == "sqlite"
        self.create_schema = is_sqlite if create_schema is None else create_schema
        self.fail_unfinished = fail_unfinished
        self.sweep_interval = sweep_interval
        self.sweep_batch = sweep_batch
        cipher = PushSecretCipher(push_secret_keys) if push_secret_keys else None
        self._event_log = SqlEventLog(self.engine, self.tables, retention=log_retention)
        self._store = SqlTaskStore(self.engine, self.tables, self._event_log, ttl=task_ttl)
        self._push_configs = SqlPushConfigStore(
            self.engine,
            self.tables,
            max_configs_per_task=max_configs_per_task,
            cipher=cipher,
        )
        self._push_sender = push_sender
        #: Tasks failed by the restart rule at the last start.
        self.failed_at_start = 0

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
        """``None`` by default: the server runs its in-process `WebhookPushSender`."""
        return self._push_sender

    @property
    def services(self) -> tuple[Service, ...]:
        """The backend's work beside the server (`service`)."""
        return (self.service,)

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
        """Check (or create) the schema; what the service does first."""
        await check_schema(self.engine, self.prefix, create=self.create_schema)

    @contextlib.asynccontextmanager
    async def service(self, server: ServerHandle) -> AsyncIterator[SqlBackend]:
        """Run the backend beside ``server`` (see the module docstring)."""
        try:
            await self.start()
            if self.fail_unfinished:
                await self._fail_unfinished(server)
            async with anyio.create_task_group() as group:
                group.start_soon(self._sweep_loop)
                try:
                    yield self
                finally:
                    group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.engine.dispose()

    async def _fail_unfinished(self, server: ServerHandle) -> None:
        task_ids = await self._store.running_task_ids()
        failed = 0
        for task_id in task_ids:
            if await server.fail_task(task_id, RESTART_TEXT):
                failed += 1
        self.failed_at_start = failed
        if failed:
            logger.warning("failed %d task(s) the previous run left unfinished", failed)

    async def _sweep_loop(self) -> None:
        while True:
            await anyio.sleep(self.sweep_interval)
            try:
                await self._store.sweep(self.sweep_batch)
                await self._event_log.sweep(self.sweep_batch)
            except Exception:
                logger.exception("sweeping expired tasks failed")


if TYPE_CHECKING:

    def _is_a_backend(backend: SqlBackend) -> Backend:  # checked by mypy, never run
        return backend
