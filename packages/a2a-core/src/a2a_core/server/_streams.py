"""Streams (L2): the frames of one SSE stream, from its first events and a task's event log.

:func:`stream_frames` is the loop behind every stream the server answers (a streaming send,
a subscription, a ``Last-Event-ID`` reconnect). It is given, explicitly, what it reads and
writes: the stream's encoder (:class:`~a2a_core.sse.EventStream`, which knows when the
stream is *finished*), the task's event log, a lookup of the task in the store, the
keep-alive interval and the extensions' per-event hook. It does, in order:

- the initial events (a task snapshot, a message...), each encoded at once;
- then every event of the task's log after ``after``, each as soon as it is appended. With
  a measured log (``read_some``), whatever else is already in the log goes out in the same
  writes, of about :data:`~a2a_core.server._frame_cache.PIECE_SIZE` each: a fast agent's
  1,000 chunks in a few writes instead of 1,000;
- a ``: keep-alive`` comment after each ``keep_alive_interval`` without an event, and the
  end of the stream after ``idle_limit`` seconds of them (a subscription's timeout);
- the end when the encoder says the stream finished (the closing event went out), and when
  the log stays quiet while the store says the task is terminal or gone (evicted, or closed
  without a closing event for this stream);
- a failure mid-stream ends it with one error frame: an :class:`~a2a_core.errors.A2AError`
  (a networked backend that became unreachable) as it is, anything else logged and sent as
  an InternalError.

What one stream holds is bounded, whether its client reads or not (``bench/abuse.py
subscriptions``):

- a decoded event is dropped once encoded, not kept while the adapter writes its frame (a
  4 MB task snapshot held by each idle subscriber was half of what a subscription cost);
- no write is much larger than ``PIECE_SIZE``: a bigger frame goes out in pieces, so that a
  transport buffers about its high-water mark plus one piece for a client that does not
  read, never a whole frame (asyncio copies what it cannot send at once), and what is
  ready in the log is read in batches of that size, never the whole backlog at once. A
  gRPC frame is the exception (``EventStream.whole_frames``): grpc takes a message whole,
  so a shared payload goes to the adapter as itself and the adapter bounds what is in
  flight per client;
- the payload of a big frame comes from the server's
  :class:`~a2a_core.server._frame_cache.FrameCache`: one bytes object for every stream
  writing that event at the same time;
- a stream that falls more than ``backlog_limit`` bytes behind its task's log (its client
  stopped reading while the task went on) ends with one error frame
  (:class:`StreamBacklogError`); the task and its other streams go on untouched. The events
  already logged when it opened (a ``Last-Event-ID`` replay) do not count, so a reconnect
  to a long log is never refused.

The adapter closes the iterator when the client goes away (``SseResponse.aclose``); that
closes the log's follower and never affects the task.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterator, Sequence
from typing import TYPE_CHECKING, Final, TypeAlias

from a2a_core._protocol.errors import A2AError, InternalError
from a2a_core._protocol.sse import EventStream
from a2a_core.server._events import EventLog, LoggedEvent
from a2a_core.server._frame_cache import PIECE_SIZE, FrameCache, SharedPayload
from a2a_core.server._store import StoredTask
from a2a_core.types import TERMINAL_STATES, StreamResponse

if TYPE_CHECKING:
    from a2a_core.server.observe import CallObservation

__all__ = [
    "EventHook",
    "FirstEvent",
    "ReadSome",
    "StreamBacklogError",
    "StreamSource",
    "TaskLookup",
    "stream_frames",
]

logger: Final = logging.getLogger("a2a_core.server")

#: Decorates each event before it is encoded (the active extensions' ``on_event``).
EventHook: TypeAlias = Callable[[StreamResponse], StreamResponse]
#: The task as stored now, or ``None`` when it is gone (``TaskStore.get``).
TaskLookup: TypeAlias = Callable[[str], Awaitable[StoredTask | None]]
#: Reads a bounded batch of a log without waiting: ``(events, their size, size of the rest)``
#: (``MeasuredEventLog.read_some_now``).
ReadSome: TypeAlias = Callable[[str, int, int], tuple[list[LoggedEvent], int, int]]
#: An event sent before the log: ``(seq, event)``, or ``(seq, event, identity)`` where the
#: identity names the event's content for sharing its frame (a snapshot's
#: ``("task", task id, store version)``; see :mod:`~a2a_core.server._frame_cache`).
FirstEvent: TypeAlias = (
    tuple[int | None, StreamResponse] | tuple[int | None, StreamResponse, Hashable]
)


class StreamSource:
    """What every stream of one server reads and how it paces itself, gathered once.

    ``log`` is the event log as streams follow it (the server's `StoppableLog`), ``lookup``
    the task in the store (``TaskStore.get``: a stream ends when its task is terminal or
    gone), ``keep_alive_interval`` the seconds between keep-alive comments. ``read_some``
    reads ``log`` in bounded batches without waiting, when it can (the measured log's
    ``read_some_now``, or ``None``): it batches what is ready, and measures the backlog that
    ``backlog_limit`` (bytes, ``None``: no limit) is checked against. ``shared`` shares the
    payloads of big frames between streams (``None``: each stream encodes its own).
    """

    __slots__ = ("backlog_limit", "keep_alive_interval", "log", "lookup", "read_some", "shared")

    def __init__(
        self,
        log: EventLog,
        lookup: TaskLookup,
        keep_alive_interval: float,
        *,
        read_some: ReadSome | None = None,
        shared: FrameCache | None = None,
        backlog_limit: int | None = None,
    ) -> None:
        self.log = log
        self.lookup = lookup
        self.keep_alive_interval = keep_alive_interval
        self.read_some = read_some
        self.shared = shared
        self.backlog_limit = backlog_limit


class StreamBacklogError(InternalError):
    """A stream fell too far behind its task (its client reads too slowly) and was closed.

    Answered as an InternalError frame whose message says so; the client resumes with
    ``Last-Event-ID``, from the last event it received.
    """


class _Big:
    """A frame whose payload is shared: the stream's own head and tail around it."""

    __slots__ = ("head", "payload", "tail")

    def __init__(self, head: bytes, payload: SharedPayload, tail: bytes) -> None:
        self.head = head
        self.payload = payload
        self.tail = tail


def _pieces(frame: bytes | _Big, whole: bool) -> Iterator[bytes]:
    """A frame as writes of at most about `PIECE_SIZE` bytes; ``whole``
    (`EventStream.whole_frames`): uncut, a shared payload as its own write, the very
    bytes object every stream holds."""
    if type(frame) is bytes:
        if whole:
            yield frame
            return
        for at in range(0, len(frame), PIECE_SIZE):
            yield frame[at : at + PIECE_SIZE]
        return
    assert isinstance(frame, _Big)
    data = frame.payload.data
    if whole:
        yield frame.head
        yield data
        if frame.tail:
            yield frame.tail
        return
    cut = PIECE_SIZE - len(frame.head)
    yield frame.head + data[:cut]
    while cut + PIECE_SIZE < len(data):
        yield data[cut : cut + PIECE_SIZE]
        cut += PIECE_SIZE
    yield data[cut:] + frame.tail


class _Writes:
    """Frames on their way out, gathered into writes of about `PIECE_SIZE` bytes."""

    __slots__ = ("frames", "size", "whole")

    def __init__(self, whole: bool) -> None:
        self.frames: list[bytes] = []
        self.size = 0
        self.whole = whole  # `EventStream.whole_frames`

    def add(self, frame: bytes | _Big) -> Iterator[bytes]:
        """The writes that are complete once ``frame`` is added (a big one: its pieces)."""
        if type(frame) is bytes and len(frame) <= PIECE_SIZE:
            self.frames.append(frame)
            self.size += len(frame)
            if self.size >= PIECE_SIZE:
                yield self.take()
            return
        if self.frames:
            yield self.take()
        yield from _pieces(frame, self.whole)

    def take(self) -> bytes:
        """Everything gathered, as one write."""
        frames = self.frames
        write = frames[0] if len(frames) == 1 else b"".join(frames)
        self.frames, self.size = [], 0
        return write


#: A batch of one event at least this large (in the log's bytes) goes through the cache.
_SHARE_FROM: Final = PIECE_SIZE // 2


def stream_frames(
    stream: EventStream,
    first: Sequence[FirstEvent],
    task_id: str | None,
    after: int,
    source: StreamSource,
    *,
    idle_limit: float | None = None,
    replay_until: int | None = None,
    on_event: EventHook | None = None,
    observation: CallObservation | None = None,
) -> AsyncIterator[bytes]:
    """The frames of one stream, as bytes ready to write (see the module docstring).

    ``first`` are the events sent before anything else (`FirstEvent`; a ``seq`` of ``None``
    sends no ``id``). ``task_id`` is the log to follow then, from after seq ``after``
    (``None``: the stream is ``first`` only), read through ``source`` (`StreamSource`).
    ``idle_limit`` is the seconds of keep-alives after which the stream ends (``None``:
    never). The events up to seq ``replay_until`` (default ``after``) were logged before the
    stream opened and do not count against the backlog limit. ``on_event`` decorates every
    event, the first ones included (its frames are then the stream's own, never shared).
    ``observation`` hears of every event sent and of the stream's end (see
    :mod:`~a2a_core.server.observe`).
    """
    frames = _frames(
        stream,
        first,
        task_id,
        after,
        source,
        idle_limit,
        replay_until,
        on_event,
        None if observation is None else observation.event_sent,
    )
    return frames if observation is None else _observed(observation, frames)


async def _observed(
    observation: CallObservation, frames: AsyncIterator[bytes]
) -> AsyncIterator[bytes]:
    """``frames``, telling ``observation`` how the stream ended."""
    error: BaseException | None = None
    try:
        async for frame in frames:
            yield frame
    except BaseException as exc:  # GeneratorExit: the client went away
        error = exc
        raise
    finally:
        aclose = getattr(frames, "aclose", None)
        if aclose is not None:
            await aclose()
        observation.stream_closed(error)


async def _frames(
    stream: EventStream,
    first: Sequence[FirstEvent],
    task_id: str | None,
    after: int,
    source: StreamSource,
    idle_limit: float | None,
    replay_until: int | None,
    on_event: EventHook | None,
    sent: Callable[[StreamResponse], None] | None,
) -> AsyncIterator[bytes]:
    """`stream_frames` itself; ``sent`` is told of every event encoded."""
    log, lookup, read_some = source.log, source.lookup, source.read_some
    keep_alive_interval, backlog_limit = source.keep_alive_interval, source.backlog_limit
    shared = source.shared
    hook = on_event
    share = shared if hook is None else None
    encode: Callable[[StreamResponse, int | None], bytes]
    if hook is None:
        encode = stream.encode  # nearly every stream: no extension, no extra call per event
    else:

        def encode(event: StreamResponse, seq: int | None) -> bytes:
            return stream.encode(hook(event), seq)

    live_from = after if replay_until is None else max(after, replay_until)

    def frame_of(event: StreamResponse, seq: int | None, identity: Hashable) -> bytes | _Big:
        if sent is not None:
            sent(event)
        # Without an identity, nothing says which other streams carry the same event.
        payload = None
        if share is not None and identity is not None:
            payload = share.payload(identity, stream, event)
        if payload is None:
            return encode(event, seq)
        head, tail = stream.encode_around(event, seq, payload.data)
        if len(payload.data) + len(head) + len(tail) <= PIECE_SIZE:
            return head + payload.data + tail
        return _Big(head, payload, tail)

    try:
        initial = list(first)
        # Only `initial` holds the first events now: each is dropped once encoded.
        first = ()
        while initial:
            item = initial.pop(0)
            out = frame_of(item[1], item[0], item[2] if len(item) == 3 else None)
            del item
            for piece in _pieces(out, stream.whole_frames):
                yield piece
            del out
            if stream.finished:
                return
        if task_id is None:
            return
        idle = 0.0
        writes = _Writes(stream.whole_frames)
        while True:
            got = False
            follower = log.follow(task_id, after, idle_timeout=keep_alive_interval)
            try:
                async for logged in follower:
                    got, idle, after = True, 0.0, logged.seq
                    out = frame_of(logged.event, after, (task_id, after))
                    del logged  # not held while the frame is written
                    if type(out) is bytes and writes.size + len(out) < PIECE_SIZE:
                        writes.frames.append(out)
                        writes.size += len(out)
                    else:
                        for piece in writes.add(out):
                            yield piece
                    del out
                    # What else is in the log now goes out in the same writes.
                    moved = False
                    while read_some is not None and not stream.finished:
                        ready, size, behind = read_some(task_id, after, PIECE_SIZE - writes.size)
                        if (
                            backlog_limit is not None
                            and size + behind > backlog_limit  # all that lies after `after`
                            and after >= live_from  # a replay is not a backlog
                        ):
                            for piece in writes.add(
                                _too_far_behind(stream, task_id, backlog_limit)
                            ):
                                yield piece
                            if writes.frames:
                                yield writes.take()
                            return
                        if not ready:
                            break
                        moved = True
                        if len(ready) == 1 and size >= _SHARE_FROM:
                            # One big event: shared, and not held while it is written.
                            logged = ready.pop()
                            after = logged.seq
                            out = frame_of(logged.event, after, (task_id, after))
                            del logged
                            for piece in writes.add(out):
                                yield piece
                            del out
                            continue
                        # Small ones: together about one write.
                        after, done = _gather(ready, encode, stream, writes, sent)
                        del ready
                        for piece in done:
                            yield piece
                        if not (done or behind):
                            break  # all read, and nothing could be logged meanwhile
                        del done
                    if writes.frames:
                        yield writes.take()
                    if stream.finished:
                        return
                    if moved:
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


def _gather(
    ready: list[LoggedEvent],
    encode: Callable[[StreamResponse, int | None], bytes],
    stream: EventStream,
    writes: _Writes,
    sent: Callable[[StreamResponse], None] | None,
) -> tuple[int, list[bytes]]:
    """Encode small events into ``writes``, up to the one that ends the stream: the seq of
    the last one encoded, and the writes that became complete meanwhile (each about
    `PIECE_SIZE`: the one frame that goes past it is in it)."""
    done: list[bytes] = []
    append, size = writes.frames.append, writes.size
    seq = 0
    for logged in ready:  # every event of a batch passes here: kept lean
        seq = logged.seq
        if sent is not None:
            sent(logged.event)
        frame = encode(logged.event, seq)
        append(frame)
        size += len(frame)
        if size >= PIECE_SIZE:
            writes.size = size
            done.append(writes.take())
            append, size = writes.frames.append, 0
        if stream.finished:
            break
    writes.size = size
    return seq, done


def _too_far_behind(stream: EventStream, task_id: str, limit: int) -> bytes:
    """The error frame that ends a stream more than ``limit`` bytes behind its task."""
    # The client reads too slowly: its own doing, so not above INFO.
    logger.info("stream of task %s closed: more than %d bytes behind", task_id, limit)
    return stream.encode_error(
        StreamBacklogError(
            f"The stream fell more than {limit} bytes behind the task and was closed; "
            "subscribe again with Last-Event-ID to resume"
        )
    )
