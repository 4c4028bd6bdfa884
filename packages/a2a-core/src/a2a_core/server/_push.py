"""Push-notification configs and delivery protocols (L2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from a2a_core.types import StreamResponse, Task, TaskPushNotificationConfig

__all__ = [
    "LoggedPushSender",
    "PushConfigLimitError",
    "PushConfigStore",
    "PushSender",
    "PushTarget",
]


class PushConfigLimitError(ValueError):
    """A new config for a task that already has the most configs allowed.

    The server answers it as InvalidParams; the message is safe to show to the client.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"a task can have at most {limit} push notification configs")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class PushTarget:
    """A webhook config and the dialect it was created in."""

    config: TaskPushNotificationConfig
    """The config (v1.0 shape)."""
    legacy_v0_3: bool = False
    """Created through a v0.3 method: the webhook gets the v0.3 Task as its body."""


class PushConfigStore(Protocol):
    """Per-task webhook configs. Safe for concurrent use."""

    async def set(
        self, config: TaskPushNotificationConfig, *, legacy_v0_3: bool = False
    ) -> TaskPushNotificationConfig:
        """Store (or replace, by ``(taskId, id)``) a config; assign an id when empty.

        The id assigned is the task id for the task's first config (what the reference SDK
        does, so a v0.3 client that omits the config id finds it again), else a new UUID.
        """
        ...

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """One config, or ``None``."""
        ...

    async def list_configs(self, task_id: str) -> list[TaskPushNotificationConfig]:
        """Every config of a task, in creation order."""
        ...

    async def targets(self, task_id: str) -> list[PushTarget]:
        """Every config of a task with its dialect, for delivery."""
        ...

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove one config (no error if unknown: delete is idempotent)."""
        ...

    async def delete_task(self, task_id: str) -> None:
        """Remove every config of a task."""
        ...


class PushSender(Protocol):
    """Delivers events to webhooks in the background; never blocks the task for long."""

    async def deliver(self, targets: list[PushTarget], event: StreamResponse, task: Task) -> None:
        """Queue one event for every target.

        v1.0 targets get the event (a StreamResponse) as the body; v0.3 targets get ``task``,
        the task as it stands after the event, in the v0.3 shape.
        """
        ...


@runtime_checkable
class LoggedPushSender(PushSender, Protocol):
    """A push sender whose jobs the backend's `LoggedTaskStore` queues itself, in the
    transaction that logs each event (optional; ``a2a_sql``'s queue is one).

    Handing an event to ``deliver`` after the write cannot promise that a logged event gets
    its webhook calls: the process may die in between. Queued by the write itself, it can.
    After a logged write the server then reads no targets and calls `logged` instead of
    ``deliver``; ``deliver`` is still what it calls when the store is not logged.
    """

    def logged(self, task: Task, event: StreamResponse) -> None:
        """The store logged ``event`` of ``task`` and queued its webhook jobs with it:
        start delivering them (a wake-up; never waits)."""
        ...
