"""Push notifications on Redis: the config store, and delivery through a consumer group.

:class:`RedisPushConfigStore` keeps a task's webhook configs in one hash, ``P push:{id}``
(``c:{config id}`` the config, ``o:{config id}`` its creation number, ``n`` the counter),
so every replica sees the configs created on any of them. Each config's value starts with a
byte of flags: ``1`` created through a v0.3 method, ``2`` its token and credentials are
encrypted (a :class:`~a2a_core.server.PushSecretCipher` given; the queued jobs carry them
encrypted too, and only the worker decrypts them, just before the POST).

Delivery is split in two so that no event is lost with the replica that produced it:

- :class:`RedisPushQueue` is the :class:`~a2a_core.server.PushSender` the server calls for
  every event of a task with webhooks. It does not send anything: it appends one job (the
  targets, the event, the task as it stands, and with an observer the trace context of
  the agent that wrote the event, as W3C headers) to the stream ``P pushq`` and returns.
- Every replica runs a :class:`PushWorker`, a consumer of the group ``a2a-push`` on that
  stream. Each job goes to one consumer, which delivers it with its
  :class:`~a2a_core.server.WebhookPoster` (no in-memory queue: the stream is the queue) and
  acknowledges it only when every webhook has its outcome (delivered, or given up under the
  poster's `~a2a_core.server.DeliveryRules`, sleeping between attempts); the delivery's span
  continues the job's trace on whichever replica makes it. A job whose
  consumer died stays pending: the replica that reaps the dead one claims its jobs at once
  (:meth:`PushWorker.take_over`), and every worker claims jobs idle for longer than
  ``claim_idle`` (``XAUTOCLAIM``), whatever happened to their consumer. Delivery is
  therefore at least once: a consumer that dies after the POST but before the ack has its
  job delivered again by another.

A worker sends the jobs of one task in order, one at a time (a lane per task, as the
webhook sender has per target), and jobs of different tasks in parallel. Two replicas
may hold jobs of the same task at once, so the order across replicas is not guaranteed.
"""

from __future__ import annotations

import uuid
from collections import deque
from typing import Any, Final, cast

import anyio
import msgspec
from anyio.abc import TaskGroup, TaskStatus
from redis import exceptions as redis_errors
from redis.asyncio import Redis

from a2a_core.errors import LocalProtocolError
from a2a_core.server.backends import (
    Observer,
    PushConfigLimitError,
    PushSecretCipher,
    PushSecretError,
    PushTarget,
    WebhookPoster,
    WebhookPushSender,
    redact_push_config,
)
from a2a_core.types import StreamResponse, Task, TaskPushNotificationConfig

from ._common import (
    REDIS_DOWN,
    Arg,
    Entry,
    Keys,
    Script,
    as_entries,
    dedicated_client,
    logger,
    retry_writes,
    unavailable,
)

__all__ = ["GROUP", "PushWorker", "RedisPushConfigStore", "RedisPushQueue"]

#: The consumer group of the push stream.
GROUP: Final = "a2a-push"

_encoder: Final = msgspec.msgpack.Encoder()
_config_decoder: Final = msgspec.msgpack.Decoder(TaskPushNotificationConfig)

_SET: Final = r"""
-- KEYS[1] configs; ARGV: id ('' to assign), first id, new id, value, max -> {ok, id}
local count = math.floor(redis.call('HLEN', KEYS[1]) / 2)
local id = ARGV[1]
if id == '' then
  if count == 0 then id = ARGV[2] else id = ARGV[3] end
end
local exists = redis.call('HEXISTS', KEYS[1], 'c:' .. id) == 1
if not exists and count >= tonumber(ARGV[5]) then return {0, id} end
redis.call('HSET', KEYS[1], 'c:' .. id, ARGV[4])
if not exists then
  redis.call('HSET', KEYS[1], 'o:' .. id, redis.call('HINCRBY', KEYS[1], 'n', 1))
end
return {1, id}
"""

_REPLACE: Final = r"""
-- KEYS[1] configs; ARGV: field, old value, new value -> 1 if replaced (unchanged meanwhile)
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""

#: The flags byte that starts a stored config.
_LEGACY: Final = 1
_SEALED: Final = 2

_DELETE: Final = r"""
-- KEYS[1] configs; ARGV: id
redis.call('HDEL', KEYS[1], 'c:' .. ARGV[1], 'o:' .. ARGV[1])
if redis.call('HLEN', KEYS[1]) <= 1 then redis.call('DEL', KEYS[1]) end
return 1
"""


class _Job(msgspec.Struct, array_like=True, frozen=True):
    """One event for a task's webhooks, as queued in the push stream."""

    targets: list[tuple[bool, TaskPushNotificationConfig]]
    event: StreamResponse
    task: Task
    sealed: bool = False
    """The targets' secrets are encrypted (the queue has a cipher)."""
    trace: dict[str, str] = {}
    """The observer's context where the event was written, as text headers
    (`Observer.push_context_headers`: ``traceparent``...): the delivery continues its
    trace. Last, with a default, so a job queued before it existed still decodes."""


_job_decoder: Final = msgspec.msgpack.Decoder(_Job)


class RedisPushConfigStore:
    """Per-task webhook configs in Redis (a :class:`~a2a_core.server.PushConfigStore`).

    The same rules as the in-memory store: ids assigned when empty (the task id for a
    task's first config, else a UUID), upsert by ``(taskId, id)`` keeping the creation
    order, at most ``max_configs_per_task`` per task (:class:`PushConfigLimitError`).
    A task's configs go when the store sweeps the task. ``cipher``: keep the configs'
    secrets encrypted in Redis; configs stored in clear before still read, and
    :meth:`rotate_secrets` encrypts them (and moves the others to the newest key).
    """

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = "a2a:",
        max_configs_per_task: int = 10,
        write_retry: float = 5.0,
        cipher: PushSecretCipher | None = None,
    ) -> None:
        if max_configs_per_task < 1:
            raise ValueError("max_configs_per_task must be at least 1")
        self.redis = redis
        self.keys = Keys(prefix)
        self.max_configs_per_task = max_configs_per_task
        self.write_retry = write_retry
        #: Webhook configs of tasks just saved, read by the save itself (see
        #: RedisTaskStore.push_hints): ``targets`` takes them instead of asking Redis.
        self.hints: dict[str, list[bytes]] = {}
        self.cipher = cipher
        self._set = Script(redis, _SET)
        self._delete = Script(redis, _DELETE)
        self._replace = Script(redis, _REPLACE)

    async def set(
        self, config: TaskPushNotificationConfig, *, legacy_v0_3: bool = False
    ) -> TaskPushNotificationConfig:
        """Store (or replace) a config; assign an id when empty."""
        if not config.task_id:
            raise LocalProtocolError("a push config must name its task before it is stored")
        value = self._encode(PushTarget(config, legacy_v0_3))
        args: list[Arg] = [
            config.id,
            config.task_id,
            uuid.uuid4().hex,
            value,
            self.max_configs_per_task,
        ]
        try:
            ok, config_id = await self._set(keys=[self.keys.push(config.task_id)], args=args)
        except REDIS_DOWN as exc:
            raise unavailable(exc, "storing a push config") from None
        if not ok:
            raise PushConfigLimitError(self.max_configs_per_task)
        return msgspec.structs.replace(config, id=cast(bytes, config_id).decode())

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """One config, or ``None``."""
        try:
            value = await self.redis.hget(self.keys.push(task_id), f"c:{config_id}")
        except REDIS_DOWN as exc:
            raise unavailable(exc, "reading a push config") from None
        if value is None:
            return None
        target, sealed = _decode(config_id, cast(bytes, value))
        return self._readable(target.config, sealed)

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every config of a task, in creation order."""
        try:
            found = await self._targets(task_id)
        except REDIS_DOWN as exc:
            raise unavailable(exc, "reading push configs") from None
        return [self._readable(target.config, sealed) for target, sealed in found]

    async def targets(self, task_id: str) -> list[PushTarget]:
        """Every config of a task with its dialect, for delivery (retried like a write:
        the task writer asks for them after every event, which is also why the save just
        before may have brought them along: see ``hints``), secrets decrypted (the queue
        encrypts them again in its jobs)."""
        found = await retry_writes(
            lambda: self._targets(task_id), doing="reading push configs", retry_for=self.write_retry
        )
        if not any(sealed for _, sealed in found):
            return [target for target, _ in found]
        cipher = self.cipher
        if cipher is None:
            logger.error(
                "push configs of task %s have encrypted secrets and no push secret keys are "
                "configured: not delivered",
                task_id,
            )
            return [target for target, sealed in found if not sealed]
        # In creation order; one no key opens is skipped (decrypt_targets logs it).
        opened: list[PushTarget] = []
        for target, sealed in found:
            opened.extend(cipher.decrypt_targets([target]) if sealed else [target])
        return opened

    async def rotate_secrets(self) -> int:
        """Encrypt every config's secrets under the cipher's first key: those under an older
        key, and those stored in clear before encryption was turned on. Returns how many
        configs were written. Run it after a new key went first (every replica having it);
        then the old keys can go. A config changed meanwhile is left as its writer wrote it,
        and one no key opens is left as it is (with a warning).
        """
        cipher = self.cipher
        if cipher is None:
            raise LocalProtocolError("rotate_secrets needs a store with a cipher")
        written = 0
        pattern = _glob_escape(self.keys.push("")) + "*"
        async for key in self.redis.scan_iter(match=pattern, count=200):
            fields = cast("dict[bytes, bytes]", await self.redis.hgetall(key))
            for name, value in fields.items():
                if not name.startswith(b"c:"):
                    continue
                target, sealed = _decode("", value)
                if sealed:
                    try:
                        rotated = cipher.rotate(target.config)
                    except PushSecretError:
                        # Left as it is (its webhook is skipped, with an error, at delivery).
                        logger.warning(
                            "push config %s of %s: its secrets are not readable with any key",
                            name[2:].decode(),
                            key.decode() if isinstance(key, bytes) else key,
                        )
                        continue
                    if rotated is None:
                        continue
                else:
                    rotated = cipher.encrypt(target.config)
                new = _encode_value(PushTarget(rotated, target.legacy_v0_3), sealed=True)
                if new != value and await self._replace(keys=[key], args=[name, value, new]):
                    written += 1
        return written

    def _encode(self, target: PushTarget) -> bytes:
        """A config as stored: its secrets encrypted when the store has a cipher."""
        if self.cipher is None:
            return _encode_value(target, sealed=False)
        sealed = PushTarget(self.cipher.encrypt(target.config), target.legacy_v0_3)
        return _encode_value(sealed, sealed=True)

    def _readable(
        self, config: TaskPushNotificationConfig, sealed: bool
    ) -> TaskPushNotificationConfig:
        """A stored config for Get or List: decrypted (secrets that cannot be, omitted)."""
        if not sealed:
            return config
        if self.cipher is None:
            logger.warning(
                "push config %r of task %r has encrypted secrets and no push secret keys "
                "are configured",
                config.id,
                config.task_id,
            )
            return redact_push_config(config)
        return self.cipher.decrypt_or_redact(config)

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove one config (no error if unknown)."""
        try:
            await self._delete(keys=[self.keys.push(task_id)], args=[config_id])
        except REDIS_DOWN as exc:
            raise unavailable(exc, "deleting a push config") from None

    async def delete_task(self, task_id: str) -> None:
        """Remove every config of a task."""
        try:
            await self.redis.delete(self.keys.push(task_id))
        except REDIS_DOWN as exc:
            raise unavailable(exc, "deleting push configs") from None

    async def _targets(self, task_id: str) -> list[tuple[PushTarget, bool]]:
        hint = self.hints.pop(task_id, None)
        if hint is not None:
            fields = dict(zip(hint[::2], hint[1::2], strict=True))
        else:
            fields = cast("dict[bytes, bytes]", await self.redis.hgetall(self.keys.push(task_id)))
        if not fields:
            return []
        found: list[tuple[int, tuple[PushTarget, bool]]] = []
        for name, value in fields.items():
            if name.startswith(b"c:"):
                config_id = name[2:].decode()
                order = int(fields.get(b"o:" + name[2:], b"0"))
                found.append((order, _decode(config_id, value)))
        found.sort(key=lambda pair: pair[0])
        return [target for _, target in found]


def _encode_value(target: PushTarget, *, sealed: bool) -> bytes:
    flags = (_LEGACY if target.legacy_v0_3 else 0) | (_SEALED if sealed else 0)
    return bytes([flags]) + _encoder.encode(msgspec.structs.replace(target.config, id=""))


def _decode(config_id: str, value: bytes) -> tuple[PushTarget, bool]:
    """A stored config and whether its secrets are encrypted."""
    flags = value[0]
    config = msgspec.structs.replace(_config_decoder.decode(value[1:]), id=config_id)
    return PushTarget(config=config, legacy_v0_3=bool(flags & _LEGACY)), bool(flags & _SEALED)


def _glob_escape(text: str) -> str:
    """``text`` matched literally by a SCAN pattern."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


class RedisPushQueue:
    """The server's :class:`~a2a_core.server.PushSender`: queues each event's delivery in
    the push stream, for the replicas' :class:`PushWorker` s (module docstring).

    ``maxlen`` bounds the stream (about; the oldest jobs go first, delivered or not).
    ``cipher``: the jobs carry the targets' secrets encrypted (the workers need the keys).
    ``observer``: each job carries its `~Observer.push_context_headers` (the trace context
    of the agent that wrote the event), which the worker's delivery continues (the backend
    sets the server's).
    """

    def __init__(
        self,
        redis: Redis,
        *,
        prefix: str = "a2a:",
        maxlen: int = 100_000,
        write_retry: float = 5.0,
        cipher: PushSecretCipher | None = None,
        observer: Observer | None = None,
    ) -> None:
        self.redis = redis
        self.keys = Keys(prefix)
        self.maxlen = maxlen
        self.write_retry = write_retry
        self.cipher = cipher
        #: Asked for each job's trace context (see ``observer`` above).
        self.observer = observer

    async def deliver(self, targets: list[PushTarget], event: StreamResponse, task: Task) -> None:
        """Queue one job; never raises (a push is a side channel of the task)."""
        cipher = self.cipher
        configs = [(t.legacy_v0_3, t.config) for t in targets]
        if cipher is not None:
            configs = [(legacy, cipher.encrypt(config)) for legacy, config in configs]
        trace = dict(self.observer.push_context_headers()) if self.observer is not None else {}
        job = _Job(targets=configs, event=event, task=task, sealed=cipher is not None, trace=trace)
        blob = _encoder.encode(job)

        async def queue() -> Any:
            return await self.redis.xadd(
                self.keys.push_queue, {"j": blob}, maxlen=self.maxlen, approximate=True
            )

        try:
            await retry_writes(queue, doing="queueing a push", retry_for=self.write_retry)
        except Exception:
            logger.warning("push for task %s not queued: Redis unreachable", task.id)


class PushWorker:
    """One replica's consumer of the push stream (module docstring).

    :param sender: a running :class:`~a2a_core.server.WebhookPushSender`, whose `poster`
        (its guard, rules and counters) the worker delivers with; or give ``poster``.
    :param poster: an open :class:`~a2a_core.server.WebhookPoster` to deliver with (its
        guard, `DeliveryRules` and counters apply), with no sender running.
    :param consumer: this replica's name in the group.
    :param claim_idle: seconds after which a job still pending for another consumer is
        claimed by this one (longer than a delivery with all its retries can take).
    :param max_in_flight: jobs taken and not yet acknowledged, at most.
    :param cipher: decrypts the secrets of jobs queued with one (:class:`RedisPushQueue`).
    """

    def __init__(
        self,
        redis: Redis,
        sender: WebhookPushSender | None = None,
        *,
        poster: WebhookPoster | None = None,
        prefix: str = "a2a:",
        consumer: str,
        claim_idle: float = 60.0,
        max_in_flight: int = 64,
        cipher: PushSecretCipher | None = None,
    ) -> None:
        if (sender is None) == (poster is None):
            raise ValueError("give a PushWorker a sender or a poster, not both")
        if poster is None:
            assert sender is not None
            poster = sender.poster
        self.redis = redis
        self.cipher = cipher
        self.keys = Keys(prefix)
        #: What makes the attempts: the poster given, or the sender's.
        self.poster = poster
        #: Whose counters (``delivered``, ``failed``, ``refused``) tell what this worker
        #: did: the sender given, else the poster.
        self.sender: WebhookPushSender | WebhookPoster = sender if sender is not None else poster
        self.consumer = consumer
        self.claim_idle = claim_idle
        self.max_in_flight = max_in_flight
        self._lanes: dict[str, deque[tuple[bytes, _Job | None]]] = {}
        self._taken: set[bytes] = set()
        self._room = anyio.Event()
        self._task_group: TaskGroup | None = None

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Consume (and claim) until cancelled."""
        async with anyio.create_task_group() as group:
            self._task_group = group
            task_status.started()
            group.start_soon(self._claim_loop)
            await self._read_loop()

    async def take_over(self, dead: str) -> int:
        """Claim every job pending for the consumer ``dead`` (a replica found dead), process
        them here, and remove that consumer from the group. Returns how many."""
        taken = 0
        while True:
            pending = await self.redis.xpending_range(
                self.keys.push_queue, GROUP, min="-", max="+", count=100, consumername=dead
            )
            if not pending:
                break
            ids = [cast(bytes, entry["message_id"]) for entry in pending]
            claimed = as_entries(
                await self.redis.xclaim(
                    self.keys.push_queue,
                    GROUP,
                    self.consumer,
                    min_idle_time=0,
                    message_ids=list[Any](ids),
                )
            )
            taken += len(claimed)
            self._dispatch(claimed)
            if len(claimed) < len(ids):
                # Entries trimmed or deleted meanwhile: acknowledge them away.
                gone = set(ids) - {entry_id for entry_id, _ in claimed}
                await self.redis.xack(self.keys.push_queue, GROUP, *gone)
        await self.redis.xgroup_delconsumer(self.keys.push_queue, GROUP, dead)
        return taken

    async def _ensure_group(self, client: Redis) -> None:
        try:
            await client.xgroup_create(self.keys.push_queue, GROUP, id="0", mkstream=True)
        except redis_errors.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def _read_loop(self) -> None:
        client = dedicated_client(self.redis)
        delay = 0.05
        try:
            while True:
                try:
                    await self._ensure_group(client)
                    while True:
                        while len(self._taken) >= self.max_in_flight:
                            self._room = anyio.Event()
                            await self._room.wait()
                        reply = await client.xreadgroup(
                            GROUP,
                            self.consumer,
                            {self.keys.push_queue: ">"},
                            count=self.max_in_flight - len(self._taken),
                            block=0,
                        )
                        delay = 0.05
                        streamed = cast("list[tuple[bytes, list[Entry]]]", reply or [])
                        for _, entries in streamed:
                            self._dispatch(entries)
                except REDIS_DOWN as exc:
                    logger.warning("push worker lost Redis (%s); reconnecting", exc)
                    await anyio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                except redis_errors.ResponseError as exc:
                    # The queue was deleted under the blocked read (UNBLOCKED) or before it
                    # (NOGROUP): Redis lost its data. Create the queue again and go on.
                    if "UNBLOCKED" not in str(exc) and "NOGROUP" not in str(exc):
                        raise
                    logger.warning(
                        "the push queue vanished from Redis (did it lose its data?); "
                        "creating it again"
                    )
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose()

    async def _claim_loop(self) -> None:
        interval = max(self.claim_idle / 2, 0.5)
        while True:
            await anyio.sleep(interval)
            try:
                start = "0-0"
                while True:
                    reply = await self.redis.xautoclaim(
                        self.keys.push_queue,
                        GROUP,
                        self.consumer,
                        min_idle_time=int(self.claim_idle * 1000),
                        start_id=start,
                        count=32,
                    )
                    start, claimed = reply[0], as_entries(reply[1])
                    fresh = [(i, f) for i, f in claimed if i not in self._taken]
                    if fresh:
                        logger.info(
                            "claimed %d push jobs idle for %.0f s", len(fresh), self.claim_idle
                        )
                    self._dispatch(fresh)
                    if start in (b"0-0", "0-0"):
                        break
            except REDIS_DOWN:
                pass  # the read loop reports it
            except redis_errors.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise

    def _dispatch(self, entries: list[Entry]) -> None:
        """Put jobs into their task's lane; start the lane if it is new."""
        assert self._task_group is not None
        for entry_id, fields in entries:
            if entry_id in self._taken:
                continue
            self._taken.add(entry_id)
            job: _Job | None = None
            try:
                job = _job_decoder.decode(fields[b"j"])
                lane_key = job.task.id
            except (KeyError, TypeError, msgspec.DecodeError):
                logger.warning("dropping an unreadable push job %r", entry_id)
                lane_key = ""
            lane = self._lanes.get(lane_key)
            if lane is not None:
                lane.append((entry_id, job))
            else:
                lane = self._lanes[lane_key] = deque([(entry_id, job)])
                self._task_group.start_soon(self._run_lane, lane_key, lane)

    async def _run_lane(self, key: str, lane: deque[tuple[bytes, _Job | None]]) -> None:
        while lane:
            entry_id, job = lane[0]
            if job is not None:
                targets = self._targets(job)
                try:
                    await self.poster.send(targets, job.event, job.task, context=job.trace or None)
                except Exception:
                    logger.exception("push job %r failed unexpectedly", entry_id)
            await self._ack(entry_id)
            lane.popleft()
            self._taken.discard(entry_id)
            self._room.set()
        del self._lanes[key]

    def _targets(self, job: _Job) -> list[PushTarget]:
        """A job's targets, their secrets decrypted if it was queued with a cipher."""
        targets = [PushTarget(config=c, legacy_v0_3=legacy) for legacy, c in job.targets]
        if not job.sealed:
            return targets
        if self.cipher is None:
            logger.error(
                "push job for task %s has encrypted secrets and this worker has no push "
                "secret keys: not delivered",
                job.task.id,
            )
            return []
        return self.cipher.decrypt_targets(targets)

    async def _ack(self, entry_id: bytes) -> None:
        delay = 0.05
        while True:
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.xack(self.keys.push_queue, GROUP, entry_id)
                    pipe.xdel(self.keys.push_queue, entry_id)
                    await pipe.execute()
                return
            except REDIS_DOWN:
                # Not acknowledged yet: keep trying (if this replica dies meanwhile, another
                # claims the job and delivers it again: at least once).
                await anyio.sleep(delay)
                delay = min(delay * 2, 1.0)
