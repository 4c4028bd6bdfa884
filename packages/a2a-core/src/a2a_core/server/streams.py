"""Streams (L2): the frames of one SSE stream, from its first events and a task's event log.

:func:`stream_frames` is the loop behind every stream the server answers (a streaming send,
a subscription, a ``Last-Event-ID`` reconnect). It is given, explicitly, what it reads and
writes: the stream's encoder (:class:`~a2a_core.sse.EventStream`, which knows when the
stream is *finished*), the task's event log, a lookup of the task in the store, the
keep-alive interval and the extensions' per-event hook. It does, in order:

- the initial events (a task snapshot, a message...), each encoded at once;
- then every event of the task's log after ``after``, each as soon as it is appended. With
  an immediate log (``read_now``), whatever else is already in the log goes out in the same
  write: a fast agent's 1,000 chunks in a few writes instead of 1,000;
- a ``: keep-alive`` comment after each ``keep_alive_interval`` without an event, and the
  end of the stream after ``idle_limit`` seconds of them (a subscription's timeout);
- the end when the encoder says the stream finished (the closing event went out), and when
  the log stays quiet while the store says the task is terminal or gone (evicted, or closed
  without a closing event for this stream);
- a failure mid-stream ends it with one error frame: an :class:`~a2a_core.errors.A2AError`
  (a networked backend that became unreachable) as it is, anything else logged and sent as
  an InternalError.

The adapter closes the iterator when the client goes away (``SseResponse.aclose``); that
closes the log's follower and never affects the task.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Final, TypeAlias

from a2a_core.errors import A2AError, InternalError
from a2a_core.server.events import EventLog, LoggedEvent
from a2a_core.server.store import StoredTask
from a2a_core.sse import EventStream
from a2a_core.types import TERMINAL_STATES, StreamResponse

__all__ = ["EventHook", "ReadNow", "TaskLookup", "stream_frames"]

logger: Final = logging.getLogger("a2a_core.server")

#: Decorates each event before it is encoded (the active extensions' ``on_event``).
EventHook: TypeAlias = Callable[[StreamResponse], StreamResponse]
#: The task as stored now, or ``None`` when it is gone (``TaskStore.get``).
TaskLookup: TypeAlias = Callable[[str], Awaitable[StoredTask | None]]
#: The events after a seq that are in the log now, without waiting
#: (``ImmediateEventLog.read_now``).
ReadNow: TypeAlias = Callable[[str, int], list[LoggedEvent]]


async def stream_frames(
    stream: EventStream,
    first: Sequence[tuple[int | None, StreamResponse]],
    task_id: str | None,
    after: int,
    *,
    log: EventLog,
    lookup: TaskLookup,
    keep_alive_interval: float,
    idle_limit: float | None = None,
    on_event: EventHook | None = None,
    read_now: ReadNow | None = None,
) -> AsyncIterator[bytes]:
    """The frames of one stream, as bytes ready to write (see the module docstring).

    ``first`` are ``(seq, event)`` pairs sent before anything else (``seq`` is the frame's
    ``id``, ``None`` for none). ``task_id`` is the log to follow then, from after seq
    ``after`` (``None``: the stream is ``first`` only). ``idle_limit`` is the seconds of
    keep-alives after which the stream ends (``None``: never). ``on_event`` decorates every
    event, the first ones included. ``read_now`` reads what ``log`` holds without waiting,
    when it can (pass the immediate log's, or ``None``).
    """
    encode: Callable[[StreamResponse, int | None], bytes]
    if on_event is None:
        encode = stream.encode  # nearly every stream: no extension, no extra call per event
    else:
        hook = on_event

        def encode(event: StreamResponse, seq: int | None) -> bytes:
            return stream.encode(hook(event), seq)

    try:
        for seq, event in first:
            yield encode(event, seq)
            if stream.finished:
                return
        # Sent: an idle subscriber must not keep its copy of the task snapshot for the
        # life of the stream (bench/memory.py: over a kilobyte per subscriber).
        first = ()
        if task_id is None:
            return
        idle = 0.0
        while True:
            got = False
            follower = log.follow(task_id, after, idle_timeout=keep_alive_interval)
            try:
                async for logged in follower:
                    got, idle, after = True, 0.0, logged.seq
                    frame = encode(logged.event, logged.seq)
                    ready = (
                        read_now(task_id, after)
                        if read_now is not None and not stream.finished
                        else None
                    )
                    if ready:
                        frames = [frame]
                        for logged in ready:
                            after = logged.seq
                            frames.append(encode(logged.event, logged.seq))
                            if stream.finished:
                                break
                        frame = b"".join(frames)
                    yield frame
                    if stream.finished:
                        return
                    if ready:
                        break  # follow again after what was sent
            finally:
                aclose = getattr(follower, "aclose", None)
                if aclose is not None:
                    await aclose()
            if not got:
                stored = await lookup(task_id)
                if stored is None or stored.task.status.state in TERMINAL_STATES:
                    return  # evicted, or closed without a closing event for us
                idle += keep_alive_interval
                if idle_limit is not None and idle >= idle_limit:
                    return
                yield stream.keep_alive()
    except A2AError as exc:
        # A backend's own protocol error (a networked store that became unreachable): the
        # client gets it as it is, as a request would, and the logs no traceback.
        if not stream.finished:
            yield stream.encode_error(exc)
    except Exception:
        logger.exception("stream of task %s failed", task_id)
        if not stream.finished:
            yield stream.encode_error(InternalError())
