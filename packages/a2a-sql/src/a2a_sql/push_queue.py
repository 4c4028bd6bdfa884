"""The durable push queue of the SQL backend: :class:`SqlPushQueue` and :class:`SqlPushWorker`.

A webhook call is a row of ``push_jobs`` until the webhook answered, so a job pending when
the process died is delivered after a restart (or by another process on the database):
**at least once**.

- **Queued with the event.** `SqlTaskStore.save_logged` calls :meth:`SqlPushQueue.enqueue`
  in the transaction that logs the event: one job per webhook of the task, committed with
  the event or not at all. No event a client could have seen (followers read committed
  rows) is left without its jobs by a crash. The server then only wakes the queue
  (:meth:`SqlPushQueue.logged`, the core's ``LoggedPushSender``).
- **No secret in the queue.** A job names its event (``task_id``, ``seq``: the row of
  ``events``) and its webhook (``config_id``: the row of ``push_configs``, encrypted at
  rest with a cipher); both are read at delivery. Only v0.3 webhooks need a copy, of the
  task as it stood after the event (their body), in ``task_body``. With an observer, the
  job keeps the trace context where the event was written, as the JSON of its W3C headers
  (``trace_context``: `Observer.push_context_headers`), and its delivery continues that
  trace whichever process makes it, and after a restart.
- **Claimed, then delivered, then deleted.** A worker claims due jobs in one short
  transaction (``SELECT ... FOR UPDATE SKIP LOCKED`` on PostgreSQL and MariaDB/MySQL: two
  workers never take the same row; SQLite, one process, needs no lock), writing a claim
  token and a deadline of ``claim_timeout`` seconds on the *database's* clock. It makes one
  attempt with its `WebhookPoster` (the SSRF guard of the server's policy, the timeout, the
  headers; no in-memory queue: the table is the queue) and then deletes the job (2xx, or
  given up under the poster's `DeliveryRules`: logged) or puts it back due after the
  rules' backoff, one attempt counted. Both only
  while the claim is still its own. A job whose worker died is claimed again once its
  deadline passed (on SQLite, one process, at once when the server starts again); an
  attempt still running near its deadline is cancelled first, so two workers never
  deliver one job at the same time.
- **In order, per webhook of a task.** A job is claimable only when no job of the same
  task and webhook with a lower seq is left: a receiver gets a task's events in seq order,
  one at a time; a dead webhook holds back no other.
- **Bounded.** At most ``max_jobs_per_task`` jobs per task: past it the task's oldest jobs
  are dropped to make room (the receiver gets the latest events, like a trimmed Redis
  stream). About ``max_jobs`` in all: every scan counts them, and while the table holds
  that many, new jobs are not queued. A v0.3 job whose task copy is over ``max_job_bytes``
  is not queued. Every drop is counted (``dropped``) and logged. Jobs go with their task.
- **Woken, not polling hard.** An enqueue in this process wakes its worker at once, a
  retry at its due time; a scan every ``scan_interval`` seconds finds what other processes
  queued, and claims that expired.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import msgspec
import sqlalchemy as sa
from anyio.abc import TaskGroup, TaskStatus
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from a2a_core import codec
from a2a_core.server.backends import (
    BackendUnavailableError,
    DeliveryRules,
    LoggedPushSender,
    Observer,
    PushAttempt,
    PushTarget,
    ServerHandle,
    WebhookPoster,
    WebhookPushSender,
)
from a2a_core.types import StreamResponse, Task

from ._common import db_now_us, now_us
from ._schema import Tables
from .push import SqlPushConfigStore

__all__ = ["PushQueueSettings", "SqlPushQueue", "SqlPushWorker"]

logger = logging.getLogger("a2a_sql.push")

_MiB: Final = 1 << 20

# A note on shields: every database call of the worker is shielded from cancellation (a
# stopping server, a claim's deadline): one cancelled mid-call leaves its connection to be
# terminated, which aiosqlite may never finish (the event loop then hangs at its close).
# The calls are short.

#: Seconds before a claim's deadline at which a running attempt is cancelled (the local
#: clock runs from before the claim was written, so this is on the safe side).
_CLAIM_MARGIN: Final = 1.0

#: A job's trace context (`Observer.push_context_headers`) to and from its JSON column.
_trace_encoder: Final = msgspec.json.Encoder()
_trace_decoder: Final = msgspec.json.Decoder(dict[str, str])

#: The options of `PushQueueSettings.webhook` that are `DeliveryRules`; and those that are
#: the `WebhookPoster`'s (``workers``: the `WebhookPushSender`'s name of ``max_concurrent``).
_RULE_OPTIONS: Final = frozenset(f.name for f in dataclasses.fields(DeliveryRules))
_POSTER_OPTIONS: Final = frozenset(
    {"timeout", "content_type", "client", "resolve", "sleep", "max_concurrent", "workers"}
)


def _delivery(webhook: Mapping[str, Any]) -> tuple[DeliveryRules, dict[str, Any]]:
    """The rules and the poster's options that ``webhook`` (`PushQueueSettings.webhook`)
    gives; `ValueError` for an option neither has."""
    unknown = sorted(set(webhook) - _RULE_OPTIONS - _POSTER_OPTIONS)
    if unknown:
        raise ValueError(
            "webhook has options neither DeliveryRules nor WebhookPoster takes: "
            f"{', '.join(unknown)} (the SSRF options come from the server)"
        )
    rules = DeliveryRules(**{k: v for k, v in webhook.items() if k in _RULE_OPTIONS})
    options = {k: v for k, v in webhook.items() if k in _POSTER_OPTIONS}
    workers = options.pop("workers", None)
    if workers is not None:
        options.setdefault("max_concurrent", workers)
    return rules, options


@dataclass(frozen=True, slots=True)
class PushQueueSettings:
    """How the SQL backend's push queue and worker behave (module docstring)."""

    max_jobs: int = 100_000
    """Jobs in the table, about (checked every scan); past it new jobs are dropped."""
    max_jobs_per_task: int = 1_000
    """Jobs of one task; past it the task's oldest jobs are dropped."""
    max_job_bytes: int = 1 * _MiB
    """The largest task copy a v0.3 job keeps (its body); a larger one is not queued."""
    claim_timeout: float = 30.0
    """Seconds a claimed job is this worker's; after that another may take it."""
    scan_interval: float = 2.0
    """Seconds between scans for jobs other processes queued and expired claims."""
    max_in_flight: int = 16
    """Jobs this worker delivers at once."""
    webhook: Mapping[str, Any] = field(default_factory=dict)
    """How each webhook is called, with the names a `WebhookPushSender` takes: its
    `DeliveryRules` (``retries``, ``backoff``, ``factor``, ``max_backoff``, ``jitter``)
    and its `WebhookPoster`'s options (``timeout``, ``content_type``, ``client``...); the
    SSRF options come from the server."""

    def __post_init__(self) -> None:
        if min(self.max_jobs, self.max_jobs_per_task, self.max_job_bytes) < 1:
            raise ValueError("max_jobs, max_jobs_per_task and max_job_bytes must be >= 1")
        if self.max_in_flight < 1 or self.scan_interval <= 0:
            raise ValueError("max_in_flight must be >= 1 and scan_interval > 0")
        _delivery(self.webhook)  # a wrong option is refused here, not when the server starts
        timeout = float(self.webhook.get("timeout", 10.0))
        if self.claim_timeout < timeout + 2 * _CLAIM_MARGIN:
            raise ValueError("claim_timeout must exceed the webhook timeout by 2 s at least")


def _check_skip_locked(dialect: sa.Dialect) -> None:
    """Refuse a MySQL or MariaDB without ``SKIP LOCKED`` (the claim needs it) at start,
    rather than a worker failing every claim. (The engine has connected by now.)"""
    if dialect.name not in ("mysql", "mariadb") or dialect.server_version_info is None:
        return
    mariadb = bool(getattr(dialect, "is_mariadb", False))
    needed = (10, 6) if mariadb else (8, 0)
    if tuple(dialect.server_version_info[:2]) < needed:
        name = "MariaDB" if mariadb else "MySQL"
        raise RuntimeError(
            f"the SQL push queue needs {name} {needed[0]}.{needed[1]} or newer "
            "(SELECT ... FOR UPDATE SKIP LOCKED); give the backend a push_sender of your own "
            "to run on an older one"
        )


class SqlPushQueue:
    """The backend's push sender: jobs queued by the store's logged writes (module
    docstring), delivered by a :class:`SqlPushWorker` (:meth:`service` runs one)."""

    def __init__(
        self,
        engine: AsyncEngine,
        tables: Tables,
        configs: SqlPushConfigStore,
        settings: PushQueueSettings | None = None,
    ) -> None:
        self.engine = engine
        self.tables = tables
        self.configs = configs
        self.settings = settings if settings is not None else PushQueueSettings()
        #: Whether logged writes queue jobs (off when the server does not declare push).
        self.enabled = True
        #: Jobs queued by this process (counted when the write's transaction ran).
        self.queued = 0
        #: Jobs dropped by this process at a bound (module docstring).
        self.dropped = 0
        #: Jobs in the table at the last scan (all processes), and whether that reached
        #: ``max_jobs`` (new jobs are dropped until a scan finds fewer).
        self.pending = 0
        self.full = False
        self._wake = anyio.Event()
        self._unannounced = 0  # jobs queued by writes the server has not woken us for
        #: The running worker, while :meth:`service` runs.
        self.worker: SqlPushWorker | None = None
        #: Asked for each job's trace context (the server's, set by :meth:`service`).
        self.observer: Observer | None = None

    # -- queueing, in the store's transaction ------------------------------------------------

    async def enqueue(self, conn: AsyncConnection, task: Task, seq: int) -> int:
        """Queue one job per webhook of ``task`` for its event ``seq``, in ``conn``'s
        transaction (the one logging the event); returns how many. Applies the bounds."""
        if not self.enabled:
            return 0
        push, jobs = self.tables.push_configs, self.tables.push_jobs
        configs = (
            await conn.execute(
                sa.select(push.c.config_id, push.c.legacy_v0_3)
                .where(push.c.task_id == task.id)
                .order_by(push.c.position)
            )
        ).all()
        if not configs:
            return 0
        if self.full:
            self._dropped(len(configs), task.id, "the queue holds max_jobs jobs")
            return 0
        body: str | None = None
        if any(row.legacy_v0_3 for row in configs):
            encoded = codec.encode(task)
            if len(encoded) <= self.settings.max_job_bytes:
                body = encoded.decode()
            else:
                legacy = sum(1 for row in configs if row.legacy_v0_3)
                self._dropped(legacy, task.id, f"the task is over {self.settings.max_job_bytes} B")
                configs = [row for row in configs if not row.legacy_v0_3]
        limit = self.settings.max_jobs_per_task
        configs = configs[:limit]
        if not configs:
            return 0
        held = int(
            await conn.scalar(
                sa.select(sa.func.count()).select_from(jobs).where(jobs.c.task_id == task.id)
            )
            or 0
        )
        over = held + len(configs) - limit
        if over > 0:
            oldest = list(
                await conn.scalars(
                    sa.select(jobs.c.id)
                    .where(jobs.c.task_id == task.id)
                    .order_by(jobs.c.id)
                    .limit(over)
                )
            )
            await conn.execute(sa.delete(jobs).where(jobs.c.id.in_(oldest)))
            self._dropped(len(oldest), task.id, f"the task has {limit} jobs queued (oldest)")
        queued_us = now_us()
        trace: str | None = None
        if self.observer is not None:
            headers = self.observer.push_context_headers()
            if headers:
                trace = _trace_encoder.encode(dict(headers)).decode()
        await conn.execute(
            sa.insert(jobs),
            [
                {
                    "task_id": task.id,
                    "seq": seq,
                    "config_id": row.config_id,
                    "task_body": body if row.legacy_v0_3 else None,
                    "attempts": 0,
                    "due_us": 0,
                    "claim": None,
                    "claimed_until": None,
                    "queued_us": queued_us,
                    "last_error": None,
                    "trace_context": trace,
                }
                for row in configs
            ],
        )
        self.queued += len(configs)
        self._unannounced += len(configs)
        return len(configs)

    def _dropped(self, count: int, task_id: str, why: str) -> None:
        self.dropped += count
        logger.warning(
            "%d push job(s) of task %s dropped: %s (%d dropped so far)",
            count,
            task_id,
            why,
            self.dropped,
        )

    async def release_claims(self) -> int:
        """Make every claimed job claimable again at once; returns how many. Run at start on
        SQLite, one process per database: a claim found then is a dead run's."""
        jobs = self.tables.push_jobs
        async with self.engine.begin() as conn:
            done = await conn.execute(
                sa.update(jobs)
                .where(jobs.c.claim.is_not(None))
                .values(claim=None, claimed_until=None)
            )
        if done.rowcount:
            logger.info("released %d push job(s) claimed by the previous run", done.rowcount)
        return int(done.rowcount)

    async def refresh(self) -> int:
        """Count the jobs in the table (every process's): ``pending``, and the ``max_jobs``
        bound (``full``). What each scan of the worker does first; returns the count."""
        jobs = self.tables.push_jobs
        async with self.engine.connect() as conn:
            count = int(await conn.scalar(sa.select(sa.func.count()).select_from(jobs)) or 0)
        full = count >= self.settings.max_jobs
        if full and not self.full:
            logger.warning("the push queue holds %d jobs: new jobs are dropped for now", count)
        self.pending, self.full = count, full
        return count

    # -- the PushSender protocols ------------------------------------------------------------

    def logged(self, task: Task, event: StreamResponse) -> None:
        """The store logged an event (and queued its jobs, if the task has webhooks): wake
        the worker if jobs were queued (the server calls this after every logged write)."""
        if self._unannounced:
            self._unannounced = 0
            self.wake()

    def wake(self) -> None:
        """Have the worker look for claimable jobs now."""
        self._wake.set()

    def rearm(self) -> anyio.Event:
        """A fresh event for the next `wake` (the worker's, before each look)."""
        self._wake = anyio.Event()
        return self._wake

    async def deliver(self, targets: list[PushTarget], event: StreamResponse, task: Task) -> None:
        """Not used with the backend's own store, whose logged writes queue the jobs; a
        store that is not `SqlTaskStore` cannot feed this queue (counted, logged)."""
        self._dropped(len(targets), task.id, "the SQL push queue is fed by SqlTaskStore only")

    # -- running -----------------------------------------------------------------------------

    @asynccontextmanager
    async def service(self, server: ServerHandle) -> AsyncIterator[SqlPushQueue]:
        """Run a worker beside ``server`` (a backend `Service`), with a `WebhookPoster`
        honouring the server's SSRF options; nothing when the card declares no push."""
        self.enabled = server.push_enabled
        if not self.enabled:
            yield self
            return
        self.observer = server.observer
        settings = self.settings
        rules, options = _delivery(settings.webhook)
        options.setdefault("max_concurrent", settings.max_in_flight)
        poster = WebhookPoster(
            rules=rules, policy=server.webhook_policy, observer=server.observer, **options
        )
        _check_skip_locked(self.engine.dialect)
        if self.engine.dialect.name == "sqlite":
            await self.release_claims()
        async with poster, anyio.create_task_group() as group:
            worker = SqlPushWorker(self, poster=poster)
            await group.start(worker.run)
            self.worker = worker
            try:
                yield self
            finally:
                self.worker = None
                group.cancel_scope.cancel()


@dataclass(slots=True)
class _Job:
    id: int
    task_id: str
    seq: int
    config_id: str
    attempts: int
    task_body: str | None
    trace: str | None
    """The JSON of the trace context's headers where the event was written, or ``None``."""
    token: str
    deadline: float
    """This process's clock (``anyio.current_time``) before which the claim is surely ours."""


def _trace_of(job: _Job) -> dict[str, str] | None:
    """A job's trace context headers (``None``: none, or unreadable: a new trace)."""
    if not job.trace:
        return None
    try:
        return _trace_decoder.decode(job.trace) or None
    except msgspec.DecodeError:  # ValidationError is one
        logger.info("push job %d (task %s): unreadable trace context", job.id, job.task_id)
        return None


class SqlPushWorker:
    """Claims and delivers the jobs of a :class:`SqlPushQueue` (module docstring).

    :param sender: a running `WebhookPushSender`, whose `poster` (its guard, rules and
        counters) the worker attempts with; or give ``poster``.
    :param poster: an open `WebhookPoster` to attempt with (its guard, `DeliveryRules` and
        counters apply), with no sender running.
    """

    def __init__(
        self,
        queue: SqlPushQueue,
        sender: WebhookPushSender | None = None,
        *,
        poster: WebhookPoster | None = None,
    ) -> None:
        if (sender is None) == (poster is None):
            raise ValueError("give a SqlPushWorker a sender or a poster, not both")
        if poster is None:
            assert sender is not None
            poster = sender.poster
        self.queue = queue
        #: What makes the attempts: the poster given, or the sender's.
        self.poster = poster
        #: Whose counters (``delivered``, ``failed``, ``refused``) tell what this worker
        #: did: the sender given, else the poster.
        self.sender: WebhookPushSender | WebhookPoster = sender if sender is not None else poster
        self.settings = queue.settings
        self._in_flight: dict[int, _Job] = {}
        self._next_due = float("inf")
        self._group: TaskGroup | None = None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Claim and deliver until cancelled; then release the claims still held."""
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                task_status.started()
                await self._loop()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
                await self._release_all()

    async def _loop(self) -> None:
        queue, settings = self.queue, self.settings
        next_scan = 0.0
        delay = 0.05
        while True:
            wake = queue.rearm()  # before reading: a later enqueue sets it
            now = anyio.current_time()
            try:
                if now >= next_scan:
                    with anyio.CancelScope(shield=True):  # see the note on shields
                        await self.queue.refresh()
                    next_scan = now + settings.scan_interval
                if now >= self._next_due:
                    self._next_due = float("inf")
                room = settings.max_in_flight - len(self._in_flight)
                if room > 0:
                    with anyio.CancelScope(shield=True):  # and no claim is lost
                        claimed = await self._claim(room)
                    assert self._group is not None
                    for job in claimed:
                        self._in_flight[job.id] = job
                        self._group.start_soon(self._deliver, job)
                delay = 0.05
            except Exception as exc:  # a bug must not stop the server: log, go on
                if isinstance(exc, SQLAlchemyError | OSError | BackendUnavailableError):
                    logger.warning("push worker: the database failed (%s); trying again", exc)
                else:
                    logger.exception("push worker: unexpected error; trying again")
                await anyio.sleep(delay)
                delay = min(delay * 2, settings.scan_interval)
                continue
            wait = min(next_scan, self._next_due) - anyio.current_time()
            with anyio.move_on_after(max(wait, 0.0)):
                await wake.wait()

    async def _claim(self, limit: int) -> list[_Job]:
        """Take up to ``limit`` due jobs, each the first of its lane, in one transaction."""
        queue = self.queue
        engine, jobs = queue.engine, queue.tables.push_jobs
        now = db_now_us()
        earlier = jobs.alias("earlier")
        j = jobs.c
        query = (
            sa.select(j.id, j.task_id, j.seq, j.config_id, j.attempts, j.task_body, j.trace_context)
            .where(
                j.due_us <= now,
                sa.or_(j.claimed_until.is_(None), j.claimed_until <= now),
                ~sa.exists().where(
                    earlier.c.task_id == j.task_id,
                    earlier.c.config_id == j.config_id,
                    earlier.c.seq < j.seq,
                ),
            )
            .order_by(j.id)
            .limit(limit)
            .with_for_update(skip_locked=True)  # nothing on SQLite: one process
        )
        token = uuid.uuid4().hex
        claim_us = int(self.settings.claim_timeout * 1_000_000)
        started = anyio.current_time()
        async with engine.connect() as conn:
            if engine.dialect.name in ("mysql", "mariadb"):
                # No gap locks: a claim never holds up the writes queueing new jobs.
                await conn.execution_options(isolation_level="READ COMMITTED")
            async with conn.begin():
                rows = (await conn.execute(query)).all()
                if rows:
                    await conn.execute(
                        sa.update(jobs)
                        .where(j.id.in_([row.id for row in rows]))
                        .values(claim=token, claimed_until=now + claim_us)
                    )
        deadline = started + self.settings.claim_timeout - _CLAIM_MARGIN
        return [
            _Job(
                id=int(row.id),
                task_id=row.task_id,
                seq=int(row.seq),
                config_id=row.config_id,
                attempts=int(row.attempts),
                task_body=row.task_body,
                trace=row.trace_context,
                token=token,
                deadline=deadline,
            )
            for row in rows
        ]

    async def _deliver(self, job: _Job) -> None:
        """One attempt of one job, then its outcome written (while the claim is ours)."""
        try:
            outcome: PushAttempt | None = None
            with anyio.CancelScope(deadline=job.deadline):
                outcome = await self._attempt(job)
            if outcome is None:
                logger.warning(
                    "push job %d (task %s): no outcome before its claim ran out",
                    job.id,
                    job.task_id,
                )
                outcome = PushAttempt(delivered=False, retry_in=0.0, reason="claim ran out")
            with anyio.CancelScope(shield=True):  # bounded by the claim's deadline
                await self._finish(job, outcome)
        except Exception:
            logger.exception("push job %d (task %s) failed unexpectedly", job.id, job.task_id)
        # Not reached when cancelled: the claim is then given back by `run`.
        self._in_flight.pop(job.id, None)
        self.queue.wake()  # the next job of its lane may be claimable now

    async def _attempt(self, job: _Job) -> PushAttempt:
        queue = self.queue
        events = queue.tables.events
        with anyio.CancelScope(shield=True):
            async with queue.engine.connect() as conn:
                event_body = await conn.scalar(
                    sa.select(events.c.body).where(
                        events.c.task_id == job.task_id, events.c.seq == job.seq
                    )
                )
            targets = await queue.configs.delivery_targets(job.task_id, job.config_id)
        if event_body is None or not targets:
            why = "its webhook was deleted" if event_body is not None else "its event is gone"
            logger.info("push job %d (task %s) dropped: %s", job.id, job.task_id, why)
            return PushAttempt(delivered=False, retry_in=None, reason=why)
        event = codec.decode(event_body, StreamResponse)
        task = codec.decode(job.task_body, Task) if job.task_body is not None else None
        return await self.poster.attempt(
            targets[0], event, task, attempt=job.attempts, context=_trace_of(job)
        )

    async def _finish(self, job: _Job, outcome: PushAttempt) -> None:
        """Delete the job (done) or put it back due later; retried while the claim holds."""
        queue = self.queue
        jobs = queue.tables.push_jobs
        mine = (jobs.c.id == job.id, jobs.c.claim == job.token)
        if outcome.retry_in is None:
            statement: sa.Executable = sa.delete(jobs).where(*mine)
        else:
            due = db_now_us() + int(outcome.retry_in * 1_000_000)
            statement = (
                sa.update(jobs)
                .where(*mine)
                .values(
                    attempts=jobs.c.attempts + 1,
                    due_us=due,
                    claim=None,
                    claimed_until=None,
                    last_error=outcome.reason[:255],
                )
            )
        delay = 0.05
        while True:
            try:
                async with queue.engine.begin() as conn:
                    await conn.execute(statement)
                break
            except (SQLAlchemyError, OSError, BackendUnavailableError):
                if anyio.current_time() + delay >= job.deadline + _CLAIM_MARGIN:
                    # The claim runs out: the job is claimed again (at least once).
                    logger.warning("push job %d: its outcome could not be written", job.id)
                    return
                await anyio.sleep(delay)
                delay = min(delay * 2, 1.0)
        if outcome.retry_in is not None:
            self._next_due = min(self._next_due, anyio.current_time() + outcome.retry_in)

    async def _release_all(self) -> None:
        """Give back the claims still held (a stopping worker): due again at once."""
        held = list(self._in_flight.values())
        self._in_flight.clear()
        if not held:
            return
        jobs = self.queue.tables.push_jobs
        try:
            async with self.queue.engine.begin() as conn:
                for job in held:
                    await conn.execute(
                        sa.update(jobs)
                        .where(jobs.c.id == job.id, jobs.c.claim == job.token)
                        .values(claim=None, claimed_until=None)
                    )
        except (SQLAlchemyError, OSError, BackendUnavailableError):
            logger.info("push worker stopped holding %d claim(s); they run out", len(held))


if TYPE_CHECKING:

    def _is_a_logged_sender(queue: SqlPushQueue) -> LoggedPushSender:  # checked by mypy only
        return queue
