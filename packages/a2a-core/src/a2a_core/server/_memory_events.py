"""The in-memory event log (L2): the default :class:`~.events.EventLog`.

It owns each task's log of stream events, the wake-ups of the followers waiting on a log,
and the retention of finished logs. Events are kept *encoded* (one msgpack blob each):
a finished task's log is retained for ``Last-Event-ID`` replay long after its streams
ended, and blobs cost a fraction of the live objects; each reader decodes its own copy, so
no reader can change what another one sees (as with a networked log).

Followers do not poll. A log has at most one :class:`anyio.Event` at a time, created by
the first follower that has to wait and replaced by the next append, so N followers of one
task share one event, and an append wakes all of them with one ``set()``.

Retention: a closed log is kept ``retention`` seconds after it closed, and at most
``max_closed_logs`` closed logs, of at most ``max_closed_bytes`` encoded bytes together, are
kept (the oldest goes first). Open logs are never dropped except by
:meth:`InMemoryEventLog.forget` (the runtime's per-task limits bound how long one grows).
Expiry is lazy (each operation drops what has expired, O(1) amortised), so no background
task is needed. A follower still draining a log when it expires finishes normally: it holds
the log, the store does not.
"""

from __future__ import annotations

import sys
import time
from array import array
from bisect import bisect_right
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Final

import anyio
import msgspec

from a2a_core.types import StreamResponse

from ._events import EventLogClosedError, ImmediateEventLog, LoggedEvent, MeasuredEventLog

__all__ = ["InMemoryEventLog"]

_encoder: Final = msgspec.msgpack.Encoder()
_decoder: Final = msgspec.msgpack.Decoder(StreamResponse)

_MiB: Final = 1 << 20
# The encoding buffer is kept up to this size when a log closes (nearly every event fits).
_KEEP_BUFFER: Final = 1 << 16


class _Log(msgspec.Struct, gc=False):
    """One task's log: encoded events (``events[i]`` has seq ``i + 1``) and its state.

    ``ends[i]`` is the size of ``events[:i]`` in bytes (8 bytes per event), so that the size
    of any run of events, and of a stream's backlog, is one subtraction. A closed log keeps
    them as the array's bytes: an ``array`` is tracked by the garbage collector (one more
    object per retained log for every full collection to walk), ``bytes`` are not.

    Not tracked by the garbage collector: it holds only bytes and plain values (the wake-up
    event of its followers lives in the log store's ``_wakeups``, outside it), so it can be
    in no reference cycle, and the thousands of finished logs kept for replay cost every
    full collection nothing (see ``bench/``).
    """

    task_id: str
    events: list[bytes] | tuple[bytes, ...] = msgspec.field(default_factory=list)
    ends: array[int] | bytes = msgspec.field(default_factory=lambda: array("q", (0,)))
    closed: bool = False
    closed_at: float = 0.0
    forgotten: bool = False
    followers: int = 0


def _ends(log: _Log) -> array[int] | memoryview:
    """``log.ends`` as integers (a closed log's bytes seen through a view)."""
    ends = log.ends
    if isinstance(ends, bytes):
        return memoryview(ends).cast("q")
    return ends


def _size(log: _Log) -> int:
    """The encoded bytes of every event of ``log`` (the last of its ``ends``)."""
    ends = log.ends
    if isinstance(ends, bytes):
        return int.from_bytes(ends[-8:], sys.byteorder, signed=True)
    return ends[-1]


class InMemoryEventLog(ImmediateEventLog, MeasuredEventLog):
    """Per-task event logs in process memory, with retention of closed logs.

    :param retention: seconds a closed log stays readable after :meth:`close`, for
        ``Last-Event-ID`` replay (``None``: until ``max_closed_logs`` pushes it out).
    :param max_closed_logs: how many closed logs are kept at most, oldest dropped first
        (``None``: no bound).
    :param max_closed_bytes: how many encoded bytes of closed logs are kept at most (see
        :attr:`closed_bytes`), dropped in the same order (``None``: no bound); a log larger
        than the whole budget goes as soon as it closed, alone.
    :param clock: monotonic seconds, used only for ``retention``; inject one in tests.

    A log exists from its first append (or close) until it is forgotten or expires. A
    follower of a log that does not exist yet waits for it, as a blocking read of a Redis
    stream does; after a log expired or was forgotten, the next append starts a new log at
    seq 1, so drop the task (store and push configs) together with its log.
    """

    def __init__(
        self,
        *,
        retention: float | None = 3600.0,
        max_closed_logs: int | None = 10_000,
        max_closed_bytes: int | None = 64 * _MiB,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if retention is not None and retention < 0:
            raise ValueError("retention must be >= 0 or None")
        if max_closed_logs is not None and max_closed_logs < 0:
            raise ValueError("max_closed_logs must be >= 0 or None")
        if max_closed_bytes is not None and max_closed_bytes < 0:
            raise ValueError("max_closed_bytes must be >= 0 or None")
        self._retention = retention
        # No bound is one no log reaches: a comparison, and no None check, per expiry.
        self._max_closed = sys.maxsize if max_closed_logs is None else max_closed_logs
        self._max_closed_bytes = sys.maxsize if max_closed_bytes is None else max_closed_bytes
        # Encoded bytes of the closed logs (each log's `_size`), counted when it closes.
        self._closed_bytes = 0
        self._clock = clock
        self._logs: dict[str, _Log] = {}
        # Closed logs in the order they closed; forgotten ones are skipped lazily.
        self._closed: deque[_Log] = deque()
        self._closed_count = 0
        self._buffer = bytearray()
        # One event per log that has waiting followers, set (and dropped) by the next
        # append, close or forget of that log.
        self._wakeups: dict[str, anyio.Event] = {}

    def __len__(self) -> int:
        """How many logs are held now (expired ones leave at the next operation)."""
        return len(self._logs)

    @property
    def encoded_bytes(self) -> int:
        """Bytes of the encoded events held now, in every log (O(logs): for monitoring and
        tests). Each event is one blob; the few dozen bytes per event of its header, its
        list slot and its entry in ``ends`` are not counted (``max_events`` bounds those)."""
        return sum(_size(log) for log in self._logs.values())

    @property
    def closed_bytes(self) -> int:
        """Bytes of the encoded events of closed logs: what ``max_closed_bytes`` bounds."""
        return self._closed_bytes

    def _wake(self, task_id: str) -> None:
        wakeup = self._wakeups.pop(task_id, None)
        if wakeup is not None:
            wakeup.set()

    async def append(self, task_id: str, event: StreamResponse) -> int:
        """Append an event and wake the log's followers; return its seq (1, 2, ...).

        Raises :class:`~.events.EventLogClosedError` if the log is closed: nothing follows a
        terminal state, and a late event is a bug in the caller, not something to store.
        """
        return self.append_now(task_id, event)

    def append_now(self, task_id: str, event: StreamResponse) -> int:
        """:meth:`append`, without the coroutine (every log operation is immediate)."""
        self._expire()
        # Encode before touching the log (encoding may fail); encode_into + copy gives a
        # blob of exactly the encoded size, where `encode` leaves spare capacity.
        _encoder.encode_into(event, self._buffer)
        blob = bytes(self._buffer)
        log = self._logs.get(task_id)
        if log is None:
            log = self._logs[task_id] = _Log(task_id)
        events = log.events
        if log.closed or not isinstance(events, list):
            raise EventLogClosedError(f"The event log of task {task_id!r} is closed")
        ends = log.ends
        assert type(ends) is array  # an open log's (closed ones were refused above)
        ends.append(ends[-1] + len(blob))
        events.append(blob)
        self._wake(task_id)
        return len(events)

    async def close(self, task_id: str) -> None:
        """Close the log (idempotent): followers end once they have read every event."""
        self.close_now(task_id)

    def close_now(self, task_id: str) -> None:
        """:meth:`close`, without the coroutine."""
        self._expire()
        log = self._logs.get(task_id)
        if log is None:
            log = self._logs[task_id] = _Log(task_id)
        if log.closed:
            return
        # Nothing is appended any more: a tuple of bytes, which the garbage collector stops
        # tracking, where a list would be one more object per retained log to walk.
        log.events = tuple(log.events)
        ends = log.ends
        if type(ends) is array:
            log.ends = ends.tobytes()
        self._closed_now(log)
        self._wake(task_id)

    def log_closed_now(self, task_id: str, events: Sequence[StreamResponse]) -> int:
        """The whole log of a task created already finished (answered at once): `append_now`
        of each event, then `close_now`, in one step; the seq of the last event."""
        self._expire()
        if task_id in self._logs:  # logged before, or followed already: one at a time
            seq = 0
            for event in events:
                seq = self.append_now(task_id, event)
            self.close_now(task_id)
            return seq
        buffer, blobs = self._buffer, []
        ends = array("q", (0,))
        size = 0
        for event in events:
            _encoder.encode_into(event, buffer)
            blob = bytes(buffer)
            blobs.append(blob)
            size += len(blob)
            ends.append(size)
        log = self._logs[task_id] = _Log(task_id, tuple(blobs), ends.tobytes())
        self._closed_now(log)  # nobody follows it: a follower would have made the log
        return len(blobs)

    def _closed_now(self, log: _Log) -> None:
        """Count a log that has just closed against the bounds of closed logs."""
        log.closed = True
        log.closed_at = self._clock()
        if self._buffer.__alloc__() > _KEEP_BUFFER:  # its capacity, not its length
            self._buffer = bytearray()  # not held at 1.5 times the largest event ever logged
        self._closed.append(log)
        self._closed_count += 1
        self._closed_bytes += _size(log)
        self._expire()

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """The events with ``seq > after`` logged so far (fresh copies; no waiting)."""
        return self.read_now(task_id, after)

    def read_now(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """:meth:`read`, without the coroutine."""
        self._expire()
        log = self._logs.get(task_id)
        if log is None:
            return []
        start = max(after, 0)
        return [
            LoggedEvent(seq=seq, event=_decoder.decode(blob))
            for seq, blob in enumerate(log.events[start:], start=start + 1)
        ]

    def read_some_now(
        self, task_id: str, after: int, max_bytes: int
    ) -> tuple[list[LoggedEvent], int, int]:
        """The events after seq ``after``, as many as fit in ``max_bytes`` of encoded blobs
        (at least one, if ``max_bytes > 0``); their size, and the size of those after them.
        Only these events are decoded: a reader far behind never holds its whole backlog."""
        self._expire()
        log = self._logs.get(task_id)
        if log is None:
            return [], 0, 0
        events, ends = log.events, _ends(log)
        count = len(events)
        start = max(after, 0)
        if start >= count:
            return [], 0, 0
        base = ends[start]
        # The last `stop` such that events[start:stop] fit in max_bytes.
        stop = bisect_right(ends, base + max_bytes, start, count + 1) - 1
        if stop == start and max_bytes > 0:
            stop += 1  # one event larger than the budget goes alone
        end = ends[stop]
        batch = [
            LoggedEvent(seq=seq, event=_decoder.decode(blob))
            for seq, blob in enumerate(events[start:stop], start=start + 1)
        ]
        return batch, end - base, ends[count] - end

    async def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        """Every event with ``seq > after``, then each new one as it is appended.

        Ends when the log is closed and drained, when it is forgotten (at once), or when
        ``idle_timeout`` seconds pass with nothing new (the time the consumer spends between
        events does not count). Close it (``contextlib.aclosing``) when leaving early.
        """
        self._expire()
        log = self._logs.get(task_id)
        if log is None:
            # Wait for a log that does not exist yet; removed again below if it stays empty.
            log = self._logs[task_id] = _Log(task_id)
        log.followers += 1
        seq = max(after, 0)
        try:
            while not log.forgotten:
                if seq < len(log.events):
                    blob = log.events[seq]
                    seq += 1
                    yield LoggedEvent(seq=seq, event=_decoder.decode(blob))
                    continue
                if log.closed:
                    return
                wakeup = self._wakeups.get(task_id)
                if wakeup is None:
                    wakeup = self._wakeups[task_id] = anyio.Event()
                if idle_timeout is None:
                    await wakeup.wait()
                    continue
                with anyio.move_on_after(idle_timeout) as scope:
                    await wakeup.wait()
                if scope.cancelled_caught and seq >= len(log.events) and not log.closed:
                    return
        finally:
            log.followers -= 1
            current = self._logs.get(task_id) is log
            if log.followers == 0:
                if current or task_id not in self._logs:
                    self._wakeups.pop(task_id, None)  # nobody is left to wake
                if current and not log.events and not log.closed:
                    del self._logs[task_id]  # an empty log only followers created (0 bytes)

    async def forget(self, task_id: str) -> None:
        """Drop a task's log now, whatever its state; its followers end at once."""
        self.forget_now(task_id)

    def forget_now(self, task_id: str) -> None:
        """:meth:`forget`, without the coroutine."""
        self._expire()
        log = self._logs.pop(task_id, None)
        if log is None:
            return
        log.forgotten = True
        if log.closed:
            self._closed_count -= 1
            self._closed_bytes -= _size(log)
            self._compact()
        self._wake(task_id)

    # -- retention -----------------------------------------------------------------------

    def _expire(self) -> None:
        """Drop closed logs past ``retention`` or over ``max_closed_logs`` or
        ``max_closed_bytes``, oldest first."""
        queue = self._closed
        now = self._clock() if self._retention is not None else 0.0
        while queue:
            log = queue[0]
            if self._logs.get(log.task_id) is not log:
                queue.popleft()  # forgotten since it closed
                continue
            over_bytes = self._closed_bytes > self._max_closed_bytes
            if not (
                over_bytes
                or self._closed_count > self._max_closed
                or (self._retention is not None and now - log.closed_at >= self._retention)
            ):
                break
            newest = queue[-1]
            if (
                over_bytes
                and newest is not log
                and _size(newest) > self._max_closed_bytes
                and self._logs.get(newest.task_id) is newest
            ):
                # Larger than the whole budget, it cannot stay: the others need not go first.
                queue.pop()
                log = newest
            else:
                queue.popleft()
            self._drop(log)

    def _drop(self, log: _Log) -> None:
        """Forget a closed log that expired (its followers finish draining what they hold)."""
        del self._logs[log.task_id]
        self._closed_count -= 1
        self._closed_bytes -= _size(log)

    def _compact(self) -> None:
        # Forgotten logs leave stale queue entries; rebuild when they outnumber live ones.
        if len(self._closed) > 2 * self._closed_count + 64:
            self._closed = deque(log for log in self._closed if self._logs.get(log.task_id) is log)
