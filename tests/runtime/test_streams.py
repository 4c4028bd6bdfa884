"""The stream loop (``a2a_core.server._streams``), driven through the real in-memory event log
and task store, under asyncio and trio.

Each test builds a REST v1.0 ``EventStream`` (a frame's ``data`` is the bare event), feeds
the log, and reads the frames the way an adapter does, chunk by chunk: a chunk is one write,
so the tests see the batching of events that were already in the log. Keep-alive intervals
are powers of two, so that the idle time adds up exactly.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec
import pytest

from a2a_core import codec
from a2a_core.errors import UnsupportedOperationError
from a2a_core.http import SseResponse
from a2a_core.server import InMemoryEventLog, InMemoryTaskStore, StoredTask
from a2a_core.server._streams import StreamSource, stream_frames
from a2a_core.sse import SUBSCRIPTION_CLOSING_STATES, EventStream, Frame, parse_frames
from a2a_core.types import (
    Artifact,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

pytestmark = pytest.mark.anyio

TASK_ID = "t1"
TICK = 1 / 64  # seconds between keep-alives: small, and exact in binary
LONG = 30.0  # a keep-alive interval no test waits for


def snapshot(state: TaskState = TaskState.WORKING) -> StreamResponse:
    return StreamResponse(task=Task(id=TASK_ID, context_id="c1", status=TaskStatus(state=state)))


def status(state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=TASK_ID, context_id="c1", status=TaskStatus(state=state)
        )
    )


def chunk(n: int) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id=TASK_ID,
            context_id="c1",
            artifact=Artifact(artifact_id="a", parts=[Part(text=str(n))]),
            append=n > 1,
        )
    )


def as_json(event: StreamResponse) -> Any:
    return json.loads(codec.encode(event))


async def working_store() -> InMemoryTaskStore:
    store = InMemoryTaskStore()
    await store.create(
        Task(id=TASK_ID, context_id="c1", status=TaskStatus(state=TaskState.WORKING))
    )
    return store


async def read_all(frames: AsyncIterator[bytes], timeout: float = 5) -> list[bytes]:
    """Every chunk, to the end of the stream (which must come within ``timeout``)."""
    chunks = []
    with anyio.fail_after(timeout):
        async for item in frames:
            chunks.append(item)
    return chunks


def frames_of(chunks: list[bytes]) -> list[Frame]:
    return parse_frames(b"".join(chunks))


def ids_of(chunks: list[bytes]) -> list[str | None]:
    return [f.id for f in frames_of(chunks) if f.data is not None]


async def test_first_events_then_the_log_until_the_closing_event() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))  # already there: caught up
    stream = EventStream("rest", "1.0")
    frames = stream_frames(
        stream, [(None, snapshot())], TASK_ID, 0, StreamSource(log, store.get, LONG)
    )
    chunks: list[bytes] = []
    with anyio.fail_after(5):
        chunks.append(await frames.__anext__())
        chunks.append(await frames.__anext__())
        async with anyio.create_task_group() as tg:

            async def rest() -> None:
                chunks.extend(await read_all(frames))

            tg.start_soon(rest)
            await anyio.wait_all_tasks_blocked()  # the stream now waits on the log
            await log.append(TASK_ID, chunk(2))
            await log.append(TASK_ID, status(TaskState.COMPLETED))
            # Not closed, and more events after the closing one: the stream ends anyway.
            await log.append(TASK_ID, chunk(3))
    frames_seen = frames_of(chunks)
    assert [f.id for f in frames_seen] == [None, "1", "2", "3"]
    assert [json.loads(f.data or "") for f in frames_seen] == [
        as_json(snapshot()),
        as_json(chunk(1)),
        as_json(chunk(2)),
        as_json(status(TaskState.COMPLETED)),
    ]
    assert stream.finished


async def test_events_already_in_the_log_go_out_in_one_write() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    for n in range(1, 6):
        await log.append(TASK_ID, chunk(n))
    await log.append(TASK_ID, status(TaskState.COMPLETED))
    await log.append(TASK_ID, chunk(6))  # after the closing event: never sent
    batched = await read_all(
        stream_frames(
            EventStream("rest", "1.0"),
            [],
            TASK_ID,
            0,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now),
        )
    )
    one_by_one = await read_all(
        stream_frames(
            EventStream("rest", "1.0"), [], TASK_ID, 0, StreamSource(log, store.get, LONG)
        )
    )
    assert len(batched) == 1
    assert len(one_by_one) == 6
    assert ids_of(batched) == ids_of(one_by_one) == ["1", "2", "3", "4", "5", "6"]
    assert b"".join(batched) == b"".join(one_by_one)


async def test_a_batch_then_events_appended_later() -> None:
    """After a batch the stream follows the log again, from after the batch."""
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))
    await log.append(TASK_ID, chunk(2))
    frames = stream_frames(
        EventStream("rest", "1.0"),
        [],
        TASK_ID,
        0,
        StreamSource(log, store.get, LONG, read_some=log.read_some_now),
    )
    with anyio.fail_after(5):
        first = await frames.__anext__()
        await log.append(TASK_ID, chunk(3))
        await log.append(TASK_ID, status(TaskState.COMPLETED))
        later = await read_all(frames)
    assert ids_of([first]) == ["1", "2"]
    assert ids_of(later) == ["3", "4"]


async def test_following_starts_after_the_given_seq() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    for n in range(1, 4):
        await log.append(TASK_ID, chunk(n))
    await log.append(TASK_ID, status(TaskState.FAILED))
    chunks = await read_all(
        stream_frames(
            EventStream("rest", "1.0"),
            [(2, snapshot())],
            TASK_ID,
            2,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now),
        )
    )
    assert ids_of(chunks) == ["2", "3", "4"]


async def test_without_a_task_the_stream_is_its_first_events() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))
    chunks = await read_all(
        stream_frames(
            EventStream("rest", "1.0"),
            [(7, snapshot())],
            None,
            0,
            StreamSource(log, store.get, LONG),
        )
    )
    assert [(f.id, json.loads(f.data or "")) for f in frames_of(chunks)] == [
        ("7", as_json(snapshot()))
    ]


async def test_a_closing_first_event_ends_the_stream_before_the_log() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))
    stream = EventStream("rest", "1.0")
    chunks = await read_all(
        stream_frames(
            stream,
            [(3, snapshot(TaskState.COMPLETED)), (None, snapshot())],
            TASK_ID,
            0,
            StreamSource(log, store.get, LONG),
        )
    )
    assert ids_of(chunks) == ["3"]
    assert stream.finished


async def test_keep_alives_while_idle_then_the_idle_limit_ends_the_stream() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    frames = stream_frames(
        EventStream("rest", "1.0", closing_states=SUBSCRIPTION_CLOSING_STATES),
        [],
        TASK_ID,
        0,
        StreamSource(log, store.get, TICK, read_some=log.read_some_now),
        idle_limit=3 * TICK,
    )
    with anyio.fail_after(5):
        first = await frames.__anext__()
        # An event resets the idle time: two more keep-alives before the limit, not one.
        await log.append(TASK_ID, chunk(1))
        rest = await read_all(frames)
    assert [f.comment for f in parse_frames(first)] == ["keep-alive"]
    after = frames_of(rest)
    keep_alive = (None, "keep-alive")
    assert [(f.id, f.comment) for f in after] == [("1", None), keep_alive, keep_alive]


async def test_an_idle_stream_without_a_limit_keeps_sending_keep_alives() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    frames = stream_frames(
        EventStream("rest", "1.0"), [], TASK_ID, 0, StreamSource(log, store.get, TICK)
    )
    with anyio.fail_after(5):
        got = [await frames.__anext__() for _ in range(10)]
        await SseResponse(200, (), frames).aclose()
    assert got == [b": keep-alive\n\n"] * 10


@pytest.mark.parametrize("gone", [False, True])
async def test_a_quiet_log_of_a_terminal_or_evicted_task_ends_the_stream(gone: bool) -> None:
    """The log stays open and quiet, but the store says the task finished (or is gone):
    the stream ends at the first idle interval, without a keep-alive."""
    log = InMemoryEventLog()
    store = InMemoryTaskStore()
    if not gone:
        await store.create(
            Task(id=TASK_ID, context_id="c1", status=TaskStatus(state=TaskState.CANCELED))
        )
    await log.append(TASK_ID, chunk(1))
    stream = EventStream("rest", "1.0")
    chunks = await read_all(
        stream_frames(stream, [], TASK_ID, 0, StreamSource(log, store.get, TICK))
    )
    assert [(f.id, f.comment) for f in frames_of(chunks)] == [("1", None)]
    assert not stream.finished  # ended by the store's word, not by a closing event


async def test_an_a2a_error_mid_stream_is_sent_as_it_is() -> None:
    log = InMemoryEventLog()
    await log.append(TASK_ID, chunk(1))

    async def unreachable(task_id: str) -> StoredTask | None:
        raise UnsupportedOperationError("the store is unreachable")

    stream = EventStream("rest", "1.0")
    chunks = await read_all(
        stream_frames(stream, [], TASK_ID, 0, StreamSource(log, unreachable, TICK))
    )
    frames = frames_of(chunks)
    assert [f.id for f in frames] == ["1", None]  # the error frame has no id
    error = json.loads(frames[1].data or "")["error"]
    assert error["message"] == "the store is unreachable"
    assert error["status"] == "UNIMPLEMENTED"
    assert stream.finished


async def test_any_other_failure_mid_stream_is_logged_and_sent_as_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))
    await log.append(TASK_ID, chunk(2))

    def hook(event: StreamResponse) -> StreamResponse:
        if event.artifact_update is not None and event.artifact_update.append:
            raise RuntimeError("secret detail")
        return event

    with caplog.at_level(logging.ERROR, logger="a2a_core.server"):
        chunks = await read_all(
            stream_frames(
                EventStream("rest", "1.0"),
                [],
                TASK_ID,
                0,
                StreamSource(log, store.get, LONG),
                on_event=hook,
            )
        )
    frames = frames_of(chunks)
    assert [f.id for f in frames] == ["1", None]
    error = json.loads(frames[1].data or "")["error"]
    assert error["status"] == "INTERNAL"
    assert "secret" not in (frames[1].data or "")
    assert [r.getMessage() for r in caplog.records] == [f"stream of task {TASK_ID} failed"]


async def test_the_event_hook_decorates_every_event() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))
    await log.append(TASK_ID, status(TaskState.COMPLETED))
    seen: list[StreamResponse] = []

    def hook(event: StreamResponse) -> StreamResponse:
        seen.append(event)
        if event.task is not None:
            return StreamResponse(task=msgspec.structs.replace(event.task, metadata={"hooked": 1}))
        if event.status_update is not None:
            update = msgspec.structs.replace(event.status_update, metadata={"hooked": 2})
            return StreamResponse(status_update=update)
        return event

    chunks = await read_all(
        stream_frames(
            EventStream("rest", "1.0"),
            [(None, snapshot())],
            TASK_ID,
            0,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now),
            on_event=hook,
        )
    )
    assert seen == [snapshot(), chunk(1), status(TaskState.COMPLETED)]
    sent = [json.loads(f.data or "") for f in frames_of(chunks)]
    assert [doc.get("task", doc.get("statusUpdate", {})).get("metadata") for doc in sent] == [
        {"hooked": 1},
        None,
        {"hooked": 2},
    ]


async def test_closing_the_response_closes_the_log_follower() -> None:
    log = InMemoryEventLog()
    store = await working_store()
    await log.append(TASK_ID, chunk(1))
    response = SseResponse(
        200,
        (("content-type", "text/event-stream"),),
        stream_frames(
            EventStream("rest", "1.0"), [], TASK_ID, 0, StreamSource(log, store.get, LONG)
        ),
    )
    with anyio.fail_after(5):
        assert ids_of([await response.frames.__anext__()]) == ["1"]
        # Suspended inside the follower of the log, which counts it.
        assert log._logs[TASK_ID].followers == 1
        await response.aclose()
        assert log._logs[TASK_ID].followers == 0
        await response.aclose()  # idempotent
        with pytest.raises(StopAsyncIteration):
            await response.frames.__anext__()
    await log.append(TASK_ID, chunk(2))  # the task carries on
    assert [e.seq for e in await log.read(TASK_ID)] == [1, 2]


async def test_aclose_of_a_response_whose_frames_cannot_be_closed() -> None:
    class Frames:
        """An async iterator without ``aclose`` (not a generator)."""

        def __init__(self) -> None:
            self.left = [b"data: 1\n\n"]

        def __aiter__(self) -> Frames:
            return self

        async def __anext__(self) -> bytes:
            if not self.left:
                raise StopAsyncIteration
            return self.left.pop()

    frames = Frames()
    response = SseResponse(200, (), frames)
    await response.aclose()  # nothing to close: no error, the iterator is untouched
    assert [item async for item in response.frames] == [b"data: 1\n\n"]
