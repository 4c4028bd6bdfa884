"""The Redis backend of a replicated A2A server: :class:`RedisBackend`.

It builds the four backends (:class:`~a2aserve_redis.RedisTaskStore`,
:class:`~a2aserve_redis.RedisEventLog`, :class:`~a2aserve_redis.RedisPushConfigStore`,
:class:`~a2aserve_redis.RedisPushQueue`) on one Redis client, and a server *service* (see
:data:`a2a_core.server.Service`) that runs, for as long as the server runs, what makes the
replicas one server:

- the **stream notifier** of the event log (followers block on Redis, not in a loop);
- the **push worker**: this replica's consumer in the push group (:mod:`a2aserve_redis.push`);
- **cancel across replicas**: closing a task's log publishes the task id on ``P closed``;
  every replica listens, and the one whose agent still runs that task (its own copy of
  the task is not terminal: someone else finished it, e.g. CancelTask on another replica)
  cancels the agent. The request that canceled got the canceled task from its own replica
  at once; the agent stops at its next checkpoint wherever it runs. (If the notice is lost
  while a replica is disconnected, the agent runs on, but everything it reports is
  dropped: its log is closed.)
- **ownership leases**: the store makes the replica that writes a running state (submitted,
  working) the task's owner (``P owned:{replica}``). Every ``lease_ttl / 3`` seconds the
  replica pushes its lease deadline, ``now + lease_ttl`` (Redis time, so replica clocks do
  not matter), into ``P replicas``. Every ``reap_interval`` seconds each replica looks for
  a lease that ran out; the first to claim it moves every running task of the dead replica
  to FAILED (the status message says the host was lost) through the ordinary task writer:
  the event is logged, the log closed, webhooks queued, so subscribers on every replica get
  the final event and close. It also takes over the dead replica's pending push jobs. The
  time from a replica's death to its tasks' final event is at most ``lease_ttl`` plus
  ``reap_interval`` (plus one round of writes).
- the **sweep** of expired terminal tasks, once a second.

A replica that stops cleanly marks its lease as run out, so another replica fails its
unfinished tasks at once (the server cancels running agents when it stops).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Final

import anyio
from anyio.abc import TaskStatus
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from a2a_core.server.backends import (
    Backend,
    PushSecretCipher,
    ServerHandle,
    Service,
    WebhookPoster,
)

from ._common import LUA_INDEX, REDIS_DOWN, Keys, Script, dedicated_client, logger
from .events import RedisEventLog
from .push import PushWorker, RedisPushConfigStore, RedisPushQueue
from .store import RUNNING_STATES, RedisTaskStore

__all__ = ["HOST_LOST_TEXT", "RESTART_TEXT", "RedisBackend"]

#: The status message of a task failed because the replica running it was lost.
HOST_LOST_TEXT: Final = (
    "The server running this task was lost (it stopped renewing its lease) before the task "
    "finished; the task was failed by another server."
)

#: The status message of a task failed because its replica restarted under the same id.
RESTART_TEXT: Final = "The server restarted before the task finished"
#: Why a new attempt starts (``A2AServer(recovery="retry")``), by what happened.
LOST_REASON: Final = (
    "the server running this task was lost (it stopped renewing its lease) before the task "
    "finished."
)
HANDED_OFF_REASON: Final = "the server running this task stopped and handed it off."
RESTARTED_REASON: Final = "the server restarted before the task finished."

_REFRESH: Final = (
    LUA_INDEX
    + r"""
-- KEYS[1] replicas; ARGV: replica, ttl_ms -> the lease's previous deadline ('' if none)
local previous = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now_ms() + tonumber(ARGV[2]), ARGV[1])
return previous or ''
"""
)

_CLAIM: Final = (
    LUA_INDEX
    + r"""
-- KEYS[1] replicas; ARGV: me, claim_ms, prefix
-- -> {dead replica, its running tasks, 1 if it handed them off (score 0) else 0,
--     the claim's score} or nil
local now = now_ms()
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 8, 'WITHSCORES')
for i = 1, #dead, 2 do
  local r = dead[i]
  if r ~= ARGV[1] then
    -- Claimed for claim_ms: if this reaper dies too, another one retries after that.
    local claim = now + tonumber(ARGV[2])
    redis.call('ZADD', KEYS[1], claim, r)
    local handed_off = 0
    if tonumber(dead[i + 1]) == 0 then handed_off = 1 end
    return {r, redis.call('SMEMBERS', ARGV[3] .. 'owned:' .. r), handed_off, tostring(claim)}
  end
end
return false
"""
)

_REAPED: Final = r"""
-- KEYS[1] replicas; ARGV: dead replica, prefix, the claim's score -> 1 if it was let go
-- A reaped replica leaves the set only if the lease is still this reaper's claim (it did
-- not come back under its own id, renewing it) and no task is left in its set (each
-- recovered task moved to its new runner's set; one whose recovery failed stays, and the
-- claim running out lets the next reaper try again).
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[3]) then return 0 end
if redis.call('SCARD', ARGV[2] .. 'owned:' .. ARGV[1]) > 0 then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', ARGV[2] .. 'owned:' .. ARGV[1], ARGV[2] .. 'wake:' .. ARGV[1])
return 1
"""

_RELEASE: Final = r"""
-- KEYS[1] replicas; ARGV: replica, prefix, forget_tasks ('1': drop what is left)
-- A replica with no running task leaves the set; one with some is marked as run out.
local owned = ARGV[2] .. 'owned:' .. ARGV[1]
if ARGV[3] == '1' or redis.call('SCARD', owned) == 0 then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('DEL', owned, ARGV[2] .. 'wake:' .. ARGV[1])
  return 1
end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
return 0
"""


class RedisBackend:
    """Everything a replica needs to share one A2A server with others through Redis.

    ``A2AServer(agent, card=card, backend=RedisBackend("redis://..."))``: a
    :class:`~a2a_core.server.backends.Backend`.

    :param url: the Redis URL (``redis://host:6379/0``, ``rediss://``, ``unix://``).
    :param redis: or a ``redis.asyncio.Redis`` client of your own (``decode_responses``
        off); its connection settings are reused for the blocking connections.
    :param prefix: key prefix: one per deployment sharing a Redis (replicas of one agent
        share it; different agents must not).
    :param task_ttl: seconds terminal tasks are kept (``None``: forever).
    :param log_retention: seconds a closed event log is kept for replay.
    :param log_maxlen: about how many events a task's log keeps.
    :param lease_ttl: seconds without a lease renewal after which a replica counts as dead.
    :param reap_interval: seconds between looks for dead replicas (``lease_ttl / 4``).
    :param push_claim_idle: seconds after which a push job another consumer holds is
        claimed (longer than one delivery with its retries).
    :param write_retry: seconds the writes of a running task retry while Redis is
        unreachable (a restart) before the agent sees an error.
    :param replica_id: this replica's name (a random one by default; it must be unique).
    :param push_secret_keys: Fernet keys, newest first, to keep the webhooks' tokens and
        credentials encrypted in Redis, in the configs and in the queued jobs (needs
        ``a2aserve-core[crypto]``; every replica needs the same keys). To rotate: put a new key
        first, run ``await backend.push_config_store.rotate_secrets()`` once every replica
        has it, then drop the old key.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        redis: Redis | None = None,
        prefix: str = "a2a:",
        task_ttl: float | None = 3600.0,
        log_retention: float | None = 3600.0,
        log_maxlen: int = 10_000,
        lease_ttl: float = 10.0,
        reap_interval: float | None = None,
        push_claim_idle: float = 60.0,
        push_queue_maxlen: int = 100_000,
        max_configs_per_task: int = 10,
        write_retry: float = 5.0,
        sweep_interval: float = 1.0,
        replica_id: str | None = None,
        push_secret_keys: Sequence[str | bytes] = (),
    ) -> None:
        if (url is None) == (redis is None):
            raise ValueError("give either a Redis URL or a client")
        if lease_ttl <= 0:
            raise ValueError("lease_ttl must be > 0")
        self._own_client = redis is None
        if redis is None:
            assert url is not None
            redis = Redis.from_url(
                url,
                socket_connect_timeout=2.0,
                socket_timeout=5.0,
                # One quick retry heals a pooled connection that a Redis restart broke;
                # more would only keep a request waiting on a Redis that is down.
                retry=Retry(ExponentialBackoff(cap=0.1, base=0.01), 1),
            )
        self.redis = redis
        self.keys = Keys(prefix)
        self.replica_id = replica_id or uuid.uuid4().hex
        self.lease_ttl = lease_ttl
        self.reap_interval = reap_interval if reap_interval is not None else lease_ttl / 4
        self.push_claim_idle = push_claim_idle
        self.sweep_interval = sweep_interval
        #: Encrypts the push secrets (``None``: kept in clear).
        self.push_cipher = PushSecretCipher(push_secret_keys) if push_secret_keys else None
        self.store = RedisTaskStore(
            redis,
            prefix=prefix,
            ttl=task_ttl,
            write_retry=write_retry,
            replica_id=self.replica_id,
        )
        self.event_log = RedisEventLog(
            redis,
            prefix=prefix,
            retention=log_retention,
            maxlen=log_maxlen,
            write_retry=write_retry,
            replica_id=self.replica_id,
        )
        self.push_config_store = RedisPushConfigStore(
            redis,
            prefix=prefix,
            max_configs_per_task=max_configs_per_task,
            write_retry=write_retry,
            cipher=self.push_cipher,
        )
        self.push_queue = RedisPushQueue(
            redis,
            prefix=prefix,
            maxlen=push_queue_maxlen,
            write_retry=write_retry,
            cipher=self.push_cipher,
        )
        # The task writer's path: one script per event (append, save, and on a terminal
        # state close), which also brings the task's webhook configs along.
        self.store.attach_log(self.event_log)
        self.store.push_hints = self.push_config_store.hints
        self.push_worker: PushWorker | None = None
        self._refresh = Script(redis, _REFRESH)
        self._claim = Script(redis, _CLAIM)
        self._release = Script(redis, _RELEASE)
        self._reaped = Script(redis, _REAPED)
        #: Tasks this replica recovered because their replica was lost or handed them off
        #: (failed, or run again; for tests and metrics).
        self.reaped = 0
        #: Tasks of this replica id's previous run recovered at start.
        self.recovered_at_start = 0
        #: Set by a hand-off notice: the reaper looks at once (made by `service`).
        self._reap_now: anyio.Event | None = None
        #: Set at this run's first lease renewal, when whether the previous run of this
        #: replica id handed its tasks off (its lease was 0) is known (made by `service`).
        self._leased: anyio.Event | None = None
        self._previous_handed_off = False

    #: Tasks live in Redis: a recovering server hands off its running tasks at a stop.
    outlives_process = True

    @property
    def push_sender(self) -> RedisPushQueue:
        """Webhook delivery: events are queued in Redis for the replicas' push workers."""
        return self.push_queue

    @property
    def services(self) -> tuple[Service, ...]:
        """The replica's background work (`service`), run while the server runs."""
        return (self.service,)

    async def check_health(self) -> dict[str, bool]:
        """Whether Redis answers a ``PING`` (the store, the logs and the push queue share
        its client); for ``A2AServer.check_health``."""
        try:
            answers = bool(await self.redis.ping())
        except Exception:
            answers = False
        return {"store": answers, "event_log": answers, "push_queue": answers}

    @contextlib.asynccontextmanager
    async def service(self, server: ServerHandle) -> AsyncIterator[RedisBackend]:
        """Run the replica's background work while ``server`` runs (module docstring).

        Nothing here waits for Redis: a replica starts (and serves its card) while Redis is
        down, and each loop reconnects by itself.
        """
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.event_log)
            # Its jobs carry the trace context of whoever wrote the event.
            self.push_queue.observer = server.observer
            worker: PushWorker | None = None
            if server.push_enabled:
                # The stream is the queue: a poster (no in-memory queue) is all it needs.
                poster = WebhookPoster(policy=server.webhook_policy, observer=server.observer)
                await stack.enter_async_context(poster)
                worker = PushWorker(
                    self.redis,
                    poster=poster,
                    prefix=self.keys.prefix,
                    consumer=self.replica_id,
                    claim_idle=self.push_claim_idle,
                    cipher=self.push_cipher,
                )
            self.push_worker = worker
            group = await stack.enter_async_context(anyio.create_task_group())
            if worker is not None:
                await group.start(worker.run)
            self._leased = leased = anyio.Event()
            self._reap_now = anyio.Event()
            await group.start(self._lease_loop, leased)
            group.start_soon(self._recover_previous_run, server)
            group.start_soon(self._reap_loop, server, worker)
            group.start_soon(self._closed_listener, server)
            group.start_soon(self._sweep_loop)
            try:
                yield self
            finally:
                group.cancel_scope.cancel()
                with anyio.move_on_after(2.0, shield=True):
                    await self._leave()
        if self._own_client:
            with anyio.CancelScope(shield=True):
                await self.redis.connection_pool.disconnect()

    # -- leases --------------------------------------------------------------------------

    async def _lease_loop(
        self, leased: anyio.Event, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        task_status.started()
        failed = False
        while True:
            try:
                previous = await self._refresh(
                    keys=[self.keys.replicas],
                    args=[self.replica_id, int(self.lease_ttl * 1000)],
                )
                if not leased.is_set():
                    # The first renewal: a lease of 0 was left by a clean stop with tasks.
                    self._previous_handed_off = bytes(previous or b"") in (b"0", b"0.0")
                    leased.set()
                if failed:
                    logger.info("replica %s renewed its lease again", self.replica_id)
                failed = False
                await anyio.sleep(self.lease_ttl / 3)
            except REDIS_DOWN as exc:
                if not failed:
                    logger.warning("replica %s cannot renew its lease: %s", self.replica_id, exc)
                failed = True
                await anyio.sleep(min(0.2, self.lease_ttl / 10))
            except Exception:  # Redis refused (out of memory...): keep trying, say why
                logger.exception("replica %s cannot renew its lease", self.replica_id)
                failed = True
                await anyio.sleep(min(0.2, self.lease_ttl / 10))

    async def _leave(self) -> None:
        try:
            gone = await self._release(
                keys=[self.keys.replicas], args=[self.replica_id, self.keys.prefix, "0"]
            )
            if not gone:  # tasks are left (handed off, or failed): the others take them now
                await self.redis.publish(self.keys.handoff_channel, self.replica_id)
        except REDIS_DOWN as exc:
            logger.warning("replica %s could not give up its lease: %s", self.replica_id, exc)

    async def _reap_loop(self, server: ServerHandle, worker: PushWorker | None) -> None:
        while True:
            wake = self._reap_now
            assert wake is not None  # made by `service`, which runs this loop
            with anyio.move_on_after(self.reap_interval):
                await wake.wait()
            if wake.is_set():
                self._reap_now = anyio.Event()
            try:
                while await self.reap_once(server, worker):
                    pass
            except REDIS_DOWN:
                pass  # the lease loop reports it
            except Exception:
                logger.exception("reaping dead replicas failed")

    async def reap_once(self, server: ServerHandle, worker: PushWorker | None = None) -> bool:
        """Fail the running tasks of one dead replica, if there is one; ``True`` if so."""
        claim_ms = int(max(self.lease_ttl, 5.0) * 1000)
        found = await self._claim(
            keys=[self.keys.replicas], args=[self.replica_id, claim_ms, self.keys.prefix]
        )
        if not found:
            return False
        dead = bytes(found[0]).decode()
        task_ids = sorted(bytes(t).decode() for t in found[1])
        handed_off = int(found[2]) == 1
        logger.warning(
            "replica %s %s; recovering its %d running task(s)",
            dead,
            "handed off its tasks" if handed_off else "lost its lease",
            len(task_ids),
        )
        limiter = anyio.CapacityLimiter(32)

        async def fail(task_id: str) -> None:
            async with limiter:
                try:
                    await self._recover(server, dead, task_id, handed_off=handed_off)
                except REDIS_DOWN:
                    raise
                except Exception:
                    # Left in the dead replica's set, which keeps its claimed lease: the next
                    # reaper tries again once the claim runs out.
                    logger.exception("could not fail task %s of lost replica %s", task_id, dead)

        async with anyio.create_task_group() as group:
            for task_id in task_ids:
                group.start_soon(fail, task_id)
        if worker is not None:
            taken = await worker.take_over(dead)
            if taken:
                logger.info("took over %d push jobs of replica %s", taken, dead)
        claim = bytes(found[3]).decode()
        await self._reaped(keys=[self.keys.replicas], args=[dead, self.keys.prefix, claim])
        return True

    async def _recover(
        self, server: ServerHandle, dead: str, task_id: str, *, handed_off: bool
    ) -> None:
        stored = await self.store.get(task_id)
        if stored is None or stored.task.status.state not in RUNNING_STATES:
            await self.redis.srem(self.keys.owned(dead), task_id)
            return
        reason = HANDED_OFF_REASON if handed_off else LOST_REASON
        if await server.recover_task(
            task_id, reason, lost=not handed_off, fail_text=HOST_LOST_TEXT
        ):
            self.reaped += 1

    # -- the restart rule ----------------------------------------------------------------

    async def _recover_previous_run(self, server: ServerHandle) -> None:
        """The tasks this replica id still holds at start were left by its previous run
        (nothing of this run has been written yet): recovered at once by the server's
        policy (failed with `RESTART_TEXT` by default), not left for a reaper that would
        never come (this run renews the same lease). Retried while Redis is down."""
        leased = self._leased
        assert leased is not None  # made by `service`, which runs this
        await leased.wait()  # Redis answers, and the previous lease was read
        handed_off = self._previous_handed_off
        delay = 0.1
        while True:
            try:
                members = await self.redis.smembers(self.keys.owned(self.replica_id))
                break
            except REDIS_DOWN:
                await anyio.sleep(delay)
                delay = min(delay * 2, 2.0)
        recovered = 0
        names = (m.decode() if isinstance(m, bytes) else m for m in members)
        for task_id in sorted(names):
            delay = 0.1
            while True:
                try:
                    if await self._recover_own(server, task_id, handed_off):
                        recovered += 1
                    break
                except REDIS_DOWN:  # the next try, once Redis answers: no task is skipped
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 2.0)
                except Exception:
                    logger.exception("could not recover task %s of the previous run", task_id)
                    break
        self.recovered_at_start = recovered
        if recovered:
            logger.warning(
                "recovered %d task(s) the previous run of replica %s left unfinished",
                recovered,
                self.replica_id,
            )

    async def _recover_own(self, server: ServerHandle, task_id: str, handed_off: bool) -> bool:
        stored = await self.store.get(task_id)
        if stored is None or stored.task.status.state not in RUNNING_STATES:
            await self.redis.srem(self.keys.owned(self.replica_id), task_id)
            return False
        return await server.recover_task(
            task_id, RESTARTED_REASON, lost=not handed_off, fail_text=RESTART_TEXT
        )

    # -- cancel across replicas ----------------------------------------------------------

    async def _closed_listener(self, server: ServerHandle) -> None:
        delay = 0.05
        while True:
            client = dedicated_client(self.redis)
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.keys.closed_channel, self.keys.handoff_channel)
                delay = 0.05
                handoff = self.keys.handoff_channel.encode()
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is None or message.get("type") != "message":
                        continue
                    if bytes(message["channel"]) == handoff:
                        self._handed_off(bytes(message["data"]).decode())
                    else:
                        self._on_closed(server, bytes(message["data"]).decode())
            except REDIS_DOWN as exc:
                logger.warning("cancel listener lost Redis (%s); reconnecting", exc)
                await anyio.sleep(delay)
                delay = min(delay * 2, 1.0)
            except Exception:
                logger.exception("cancel listener failed; restarting it")
                await anyio.sleep(1.0)
            finally:
                with anyio.CancelScope(shield=True):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
                    await client.aclose()

    def _handed_off(self, replica: str) -> None:
        # Another replica stopped with running tasks: look for its lease now.
        if replica != self.replica_id and self._reap_now is not None:
            self._reap_now.set()

    @staticmethod
    def _on_closed(server: ServerHandle, task_id: str) -> None:
        # Finished by someone else (a cancel, or a reaper): stop the agent here, if any.
        if server.cancel_local_execution(task_id):
            logger.info("task %s was finished elsewhere; cancelling its agent here", task_id)

    # -- sweep -----------------------------------------------------------------------------

    async def _sweep_loop(self) -> None:
        while True:
            await anyio.sleep(self.sweep_interval)
            try:
                await self.store.sweep()
            except REDIS_DOWN:
                pass  # the lease loop reports it
            except Exception:
                logger.exception("sweeping expired tasks failed")


if TYPE_CHECKING:

    def _is_a_backend(backend: RedisBackend) -> Backend:  # checked by mypy, never run
        return backend
