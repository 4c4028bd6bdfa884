"""An in-memory backend that offers only the general store and log protocols.

The in-memory defaults are also *immediate* (``ImmediateTaskStore``, ``ImmediateEventLog``:
``*_now`` methods), which lets the task writer skip its lock and cancellation shield, and
lets streams batch what is already logged. Networked backends are not, so the runtime's
general (locked, shielded) path is what they run. This backend hides the ``*_now`` methods
of the real in-memory parts, so that the runtime suite runs that general path too, on every
run, without Redis. Nothing is faked: every call goes to the real in-memory store and log.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from a2a_core.server import InMemoryBackend, Service
from a2a_core.server.backends import (
    EventLog,
    LoggedEvent,
    PushConfigStore,
    PushSender,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    VisibleFilter,
)
from a2a_core.types import StreamResponse, Task


class GeneralStore:
    """`TaskStore` only: the in-memory store without its immediate methods."""

    def __init__(self, inner: TaskStore) -> None:
        self._inner = inner

    async def get(self, task_id: str) -> StoredTask | None:
        return await self._inner.get(task_id)

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        return await self._inner.create(task, tenant=tenant, owner=owner, last_seq=last_seq)

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        return await self._inner.save(task, expected_version=expected_version, last_seq=last_seq)

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        return await self._inner.list_tasks(query, visible)

    async def delete(self, task_id: str) -> None:
        await self._inner.delete(task_id)


class GeneralLog:
    """`EventLog` only: the in-memory log without its immediate methods."""

    def __init__(self, inner: EventLog) -> None:
        self._inner = inner

    async def append(self, task_id: str, event: StreamResponse) -> int:
        return await self._inner.append(task_id, event)

    async def close(self, task_id: str) -> None:
        await self._inner.close(task_id)

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        return await self._inner.read(task_id, after)

    def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        return self._inner.follow(task_id, after, idle_timeout=idle_timeout)

    async def forget(self, task_id: str) -> None:
        await self._inner.forget(task_id)


class GeneralPathBackend:
    """`InMemoryBackend`, seen through the general protocols only."""

    def __init__(self, **options: Any) -> None:
        self.inner = InMemoryBackend(**options)
        self._store = GeneralStore(self.inner.store)
        self._log = GeneralLog(self.inner.event_log)

    @property
    def store(self) -> TaskStore:
        return self._store

    @property
    def event_log(self) -> EventLog:
        return self._log

    @property
    def push_config_store(self) -> PushConfigStore:
        return self.inner.push_config_store

    @property
    def push_sender(self) -> PushSender | None:
        return self.inner.push_sender

    @property
    def services(self) -> Sequence[Service]:
        return self.inner.services
