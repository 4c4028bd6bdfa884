"""Timing a networked backend's operations for an observer (L2, used by ``storage``).

When a server is observed, its task store and event log are wrapped so that each awaited
operation reports its duration (`Observer.backend_operation`, ``"store.get"``,
``"log.append"``...). Only when they can wait: the in-memory parts (immediate) answer
without suspending, are never wrapped, and keep their fast paths (``storage`` finds them by
their protocols, which a wrapper would hide). A store that keeps its own log
(`LoggedTaskStore`) stays one: the wrapper of the store answers ``event_log`` with the
wrapper of the log, so the two are still recognised as a pair.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

from a2a_core.server._events import EventLog, ImmediateEventLog, LoggedEvent
from a2a_core.server._store import (
    ImmediateTaskStore,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    VisibleFilter,
)
from a2a_core.server.observe import Observer
from a2a_core.types import StreamResponse, Task

__all__ = ["timed"]


def timed(store: TaskStore, events: EventLog, observer: Observer) -> tuple[TaskStore, EventLog]:
    """``store`` and ``events`` as the runtime should use them under ``observer``."""
    if isinstance(store, ImmediateTaskStore) and isinstance(events, ImmediateEventLog):
        return store, events
    timed_log = _TimedLog(events, observer)
    return cast(TaskStore, _TimedStore(store, timed_log, observer)), cast(EventLog, timed_log)


class _Timer:
    __slots__ = ("error", "name", "observer", "start")

    def __init__(self, observer: Observer, name: str) -> None:
        self.observer = observer
        self.name = name
        self.start = time.perf_counter()

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        seconds = time.perf_counter() - self.start
        self.observer.backend_operation(self.name, seconds, exc_type is not None)


class _TimedLog:
    """An event log whose operations are timed (``follow`` is not: it lasts a stream)."""

    def __init__(self, log: EventLog, observer: Observer) -> None:
        self.inner = log
        self._observer = observer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # whatever else the log offers, untimed

    async def append(self, task_id: str, event: StreamResponse) -> int:
        with _Timer(self._observer, "log.append"):
            return await self.inner.append(task_id, event)

    async def close(self, task_id: str) -> None:
        with _Timer(self._observer, "log.close"):
            await self.inner.close(task_id)

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        with _Timer(self._observer, "log.read"):
            return await self.inner.read(task_id, after)

    def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        return self.inner.follow(task_id, after, idle_timeout=idle_timeout)

    async def forget(self, task_id: str) -> None:
        with _Timer(self._observer, "log.forget"):
            await self.inner.forget(task_id)


class _TimedStore:
    """A task store whose operations are timed."""

    def __init__(self, store: TaskStore, log: _TimedLog, observer: Observer) -> None:
        self.inner = store
        self._observer = observer
        if getattr(store, "event_log", None) is log.inner:
            self.event_log = log  # a logged store stays recognisable (module docstring)

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)  # AttributeError when the store has no such part
        if name == "create_logged_many":  # optional (BatchLoggedTaskStore): timed if there
            return self._timed_create_logged_many
        return found

    async def _timed_create_logged_many(
        self, task: Task, events: Sequence[StreamResponse], **kwargs: Any
    ) -> StoredTask:
        with _Timer(self._observer, "store.create_logged_many"):
            result: StoredTask = await self.inner.create_logged_many(  # type: ignore[attr-defined]
                task, events, **kwargs
            )
            return result

    async def get(self, task_id: str) -> StoredTask | None:
        with _Timer(self._observer, "store.get"):
            return await self.inner.get(task_id)

    async def create(self, task: Task, **kwargs: Any) -> StoredTask:
        with _Timer(self._observer, "store.create"):
            return await self.inner.create(task, **kwargs)

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        with _Timer(self._observer, "store.save"):
            return await self.inner.save(task, expected_version=expected_version, last_seq=last_seq)

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        with _Timer(self._observer, "store.list"):
            return await self.inner.list_tasks(query, visible)

    async def delete(self, task_id: str) -> None:
        with _Timer(self._observer, "store.delete"):
            await self.inner.delete(task_id)

    async def create_logged(self, task: Task, event: StreamResponse, **kwargs: Any) -> StoredTask:
        with _Timer(self._observer, "store.create_logged"):
            result: StoredTask = await self.inner.create_logged(  # type: ignore[attr-defined]
                task, event, **kwargs
            )
            return result

    async def save_logged(self, task: Task, event: StreamResponse, **kwargs: Any) -> StoredTask:
        with _Timer(self._observer, "store.save_logged"):
            result: StoredTask = await self.inner.save_logged(  # type: ignore[attr-defined]
                task, event, **kwargs
            )
            return result
