"""The event log protocol (L2): every task's append-only log of stream events.

Each task has a log of :class:`StreamResponse` events numbered 1, 2, 3... in append order
(the shape of a Redis Stream). Streams, resubscribe, blocking sends and push delivery all
read it; ``Last-Event-ID`` replays from it. A log is *closed* when its task reaches a
terminal state, so followers end after the last event instead of waiting. The in-memory log
in :mod:`.memory_events` is the default.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

import msgspec

from a2a_core._protocol.errors import LocalProtocolError
from a2a_core.types import StreamResponse

__all__ = [
    "EventLog",
    "EventLogClosedError",
    "ImmediateEventLog",
    "LoggedEvent",
    "MeasuredEventLog",
]


class EventLogClosedError(LocalProtocolError):
    """An append to a task's log after it was closed (the task is terminal).

    An expected race with a shared backend (another replica finished the task since this one
    read it): the writer drops its event then. A subclass of `LocalProtocolError`, which is
    what an append to a closed log raised before, so code that caught that still does.
    """


class LoggedEvent(msgspec.Struct, frozen=True, gc=False):
    """One event of a task's log.

    Built for every event every follower reads: a frozen Struct, untracked by the garbage
    collector (it holds a sequence number and an event, itself untracked)."""

    seq: int
    """Its sequence number (1-based, increasing, never reused for the task)."""
    event: StreamResponse
    """The event."""


class EventLog(Protocol):
    """Async, append-only per-task event logs. Safe for concurrent use."""

    async def append(self, task_id: str, event: StreamResponse) -> int:
        """Append an event; return its sequence number. Appending to a closed log raises
        `EventLogClosedError`."""
        ...

    async def close(self, task_id: str) -> None:
        """Mark the log finished (the task is terminal): followers end after draining."""
        ...

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """The events with ``seq > after`` that are in the log now (no waiting)."""
        ...

    def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        """Every event with ``seq > after``, then each new one as it is appended.

        Ends when the log is closed and drained, or when no event arrives for
        ``idle_timeout`` seconds. Many followers may follow one log; closing one iterator
        affects no other.
        """
        ...

    async def forget(self, task_id: str) -> None:
        """Drop a task's log (the task was evicted); its followers end."""
        ...


@runtime_checkable
class ImmediateEventLog(EventLog, Protocol):
    """An event log whose writes complete without waiting, in process memory (optional;
    see :class:`~a2a_core.server.ImmediateTaskStore` for why)."""

    def append_now(self, task_id: str, event: StreamResponse) -> int:
        """``append``, without waiting."""
        ...

    def close_now(self, task_id: str) -> None:
        """``close``, without waiting."""
        ...

    def read_now(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """``read``, without waiting (a stream sends what is ready in one write)."""
        ...


@runtime_checkable
class MeasuredEventLog(EventLog, Protocol):
    """An event log that reads what it holds in batches bounded in bytes, and says how much
    lies after them, without waiting (optional; in process). A stream then writes what is
    ready together, in writes of a bounded size, and ends when it falls too far behind its
    task (``A2AServer(stream_backlog_limit=...)``); on other logs it writes each event as it
    comes and does not measure.
    """

    def read_some_now(
        self, task_id: str, after: int, max_bytes: int
    ) -> tuple[list[LoggedEvent], int, int]:
        """The events after seq ``after`` in the log now, in order, as many as fit in
        ``max_bytes`` (at least one, if there is one and ``max_bytes > 0``); with their size
        and the size of the events after them, in bytes as the log stores them."""
        ...
