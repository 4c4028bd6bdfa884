"""What a backend gives the server (L2): the `Backend` protocol and the in-memory default.

A backend bundles the four stores the runtime writes to and reads from (task store, event
log, push-config store, push delivery) with the services it runs beside the server, so that
``A2AServer(backend=...)`` is the one place a deployment chooses where its state lives:
in memory (`InMemoryBackend`, the default), in Redis (``a2aserve_redis.RedisBackend``), or in a
backend of your own (see `a2a_core.server.backends` for everything one needs).

The contract, besides the protocols of each part: a backend that evicts tasks (a bounded
store, a TTL) removes an evicted task's event log and push configs itself; the server never
reaches into a store to wire that. A backend whose state outlives the process says so with
``outlives_process = True`` (optional; ``False`` when absent): only then does a server that
recovers lost work (``A2AServer(recovery="retry")``) leave its running tasks to another
replica or the next start at a stop, and the backend must then find them (a lost lease, a
restart) and call ``ServerHandle.recover_task`` for each.
"""

from __future__ import annotations

import enum
import time
import warnings
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Final, Protocol, TypeAlias

from a2a_core.server._events import EventLog
from a2a_core.server._memory_events import InMemoryEventLog
from a2a_core.server._memory_push import InMemoryPushConfigStore
from a2a_core.server._memory_store import InMemoryTaskStore
from a2a_core.server._push import PushConfigStore, PushSender
from a2a_core.server._push_secrets import PushSecretCipher
from a2a_core.server._store import TaskStore
from a2a_core.server._webhook_guard import WebhookPolicy
from a2a_core.server.observe import Observer

__all__ = ["Backend", "InMemoryBackend", "ServerHandle", "Service"]

_MiB: Final = 1 << 20


class _Unset(enum.Enum):
    """No value given (for a deprecated keyword)."""

    UNSET = enum.auto()


_UNSET: Final = _Unset.UNSET


class ServerHandle(Protocol):
    """What a backend's service may use of the server it runs beside (`A2AServer` is one).

    The settings a backend's own push delivery must honour, and the two operations a shared
    backend needs (see `a2a_core.server.backends`).
    """

    @property
    def push_enabled(self) -> bool:
        """Whether the card declares push notifications."""
        ...

    @property
    def webhook_policy(self) -> WebhookPolicy:
        """The SSRF guard's policy, which a backend's own push delivery must guard with
        (``WebhookPoster(policy=server.webhook_policy)``)."""
        ...

    @property
    def observer(self) -> Observer | None:
        """Told what happens (:mod:`~a2a_core.server.observe`): a backend's own push
        delivery passes it to its `WebhookPoster`; ``None``: nobody is."""
        ...

    async def fail_task(self, task_id: str, text: str) -> bool:
        """Fail a task that can no longer finish (see `A2AServer.fail_task`)."""
        ...

    def cancel_local_execution(self, task_id: str) -> bool:
        """Stop the agent running here for a task finished elsewhere."""
        ...

    async def recover_task(
        self, task_id: str, reason: str, *, lost: bool = True, fail_text: str | None = None
    ) -> bool:
        """Recover a running task whose process is gone, by the server's recovery policy
        (see `A2AServer.recover_task`): what a backend calls where it used to fail one."""
        ...


#: Something that runs beside the server for as long as it runs: called with the server when
#: it starts, the context manager it returns is entered before the server's task group and
#: left after it (so after running agents were cancelled). Networked backends use it for
#: their connections and background work (see ``a2aserve_redis``).
Service: TypeAlias = Callable[[ServerHandle], AbstractAsyncContextManager[object]]


class Backend(Protocol):
    """Where a server keeps its state, and what runs beside it to keep it."""

    @property
    def store(self) -> TaskStore:
        """The task store."""
        ...

    @property
    def event_log(self) -> EventLog:
        """The per-task event logs."""
        ...

    @property
    def push_config_store(self) -> PushConfigStore:
        """The webhook configs."""
        ...

    @property
    def push_sender(self) -> PushSender | None:
        """The webhook delivery; ``None``: the server runs its own `WebhookPushSender`
        (with its SSRF options) when the card declares push notifications."""
        ...

    @property
    def services(self) -> Sequence[Service]:
        """Run beside the server while it runs (connections, background loops)."""
        ...


class InMemoryBackend:
    """The default backend: this process's memory, bounded in every part.

    Terminal tasks are kept ``task_ttl`` seconds (the name the Redis and SQL backends use;
    ``ttl`` is its deprecated old name), at most ``max_terminal_tasks`` of them and at
    most ``max_terminal_bytes`` of them encoded (tasks still open are never evicted: the
    server's ``TaskLimits`` bound those); an evicted task takes its event log and push
    configs with it. Closed event logs are kept ``log_retention`` seconds (for
    ``Last-Event-ID`` replays), at most ``max_closed_logs`` of them and
    ``max_closed_log_bytes`` encoded; a task has at most ``max_configs_per_task`` webhooks.
    The byte budgets hold whatever clients send: 128 MiB of finished tasks (GetTask and
    ListTasks read those; eight echoes of the largest message a client may send) and half
    as much of finished logs (only ``Last-Event-ID`` replays read those), so a default
    server keeps under 200 MiB of finished work; for ordinary tasks of a few KiB the count
    bounds apply first. ``None`` disables a time, count or byte bound. Nothing survives a
    restart. ``push_sender``: webhook delivery of your own (e.g. a `WebhookPushSender` with
    other settings, run around the server); by default the server runs one when the card
    declares push notifications.
    ``push_secret_keys``: Fernet keys, newest first, to keep the webhooks' tokens and
    credentials encrypted in memory (a `PushSecretCipher`; needs ``a2aserve-core[crypto]``).
    """

    def __init__(
        self,
        *,
        task_ttl: float | None = 3600.0,
        max_terminal_tasks: int | None = 10_000,
        max_terminal_bytes: int | None = 128 * _MiB,
        log_retention: float | None = 3600.0,
        max_closed_logs: int | None = 10_000,
        max_closed_log_bytes: int | None = 64 * _MiB,
        max_configs_per_task: int = 10,
        push_sender: PushSender | None = None,
        push_secret_keys: Sequence[str | bytes] = (),
        clock: Callable[[], float] = time.monotonic,
        ttl: float | _Unset | None = _UNSET,
    ) -> None:
        if not isinstance(ttl, _Unset):
            warnings.warn(
                "InMemoryBackend(ttl=) is now task_ttl=, as on the Redis and SQL backends",
                DeprecationWarning,
                stacklevel=2,
            )
            task_ttl = ttl
        self._push_sender = push_sender
        self._event_log = InMemoryEventLog(
            retention=log_retention,
            max_closed_logs=max_closed_logs,
            max_closed_bytes=max_closed_log_bytes,
            clock=clock,
        )
        self._push_configs = InMemoryPushConfigStore(
            max_configs_per_task=max_configs_per_task,
            cipher=PushSecretCipher(push_secret_keys) if push_secret_keys else None,
        )
        self._store = InMemoryTaskStore(
            ttl=task_ttl,
            max_terminal_tasks=max_terminal_tasks,
            max_terminal_bytes=max_terminal_bytes,
            clock=clock,
            on_evict=self._forget,
        )

    #: Nothing survives the process: a recovering server fails running tasks at a stop.
    outlives_process = False

    def _forget(self, task_id: str) -> None:
        """An evicted task takes its event log and webhooks with it (at once: the store
        calls a plain function inside the operation that evicted the task)."""
        self._event_log.forget_now(task_id)
        self._push_configs.delete_task_now(task_id)

    @property
    def store(self) -> InMemoryTaskStore:
        """The task store."""
        return self._store

    @property
    def event_log(self) -> InMemoryEventLog:
        """The per-task event logs."""
        return self._event_log

    @property
    def push_config_store(self) -> InMemoryPushConfigStore:
        """The webhook configs."""
        return self._push_configs

    @property
    def push_sender(self) -> PushSender | None:
        """The sender given, or ``None``: the server runs its own when push is declared."""
        return self._push_sender

    @property
    def services(self) -> tuple[Service, ...]:
        """Nothing runs beside an in-memory backend."""
        return ()

    async def check_health(self) -> dict[str, bool]:
        """This process's memory always answers (`HealthCheckingBackend`)."""
        return {"store": True, "event_log": True, "push_configs": True}
