"""Subscriptions share, they do not copy (issue 13): the shared payloads of big frames, the
pieces they are written in, and the backlog limit of a stream whose client does not read.

Driven through the real in-memory log and store (``stream_frames``) and through
``A2AServer.handle``, under asyncio and trio. What memory this saves is measured in
``bench/abuse.py subscriptions``; these tests check the accounting and the decisions: which
payload is shared and for how long, how big a write is, when a stream is closed.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_core import codec
from a2a_core.http import HttpResponse, SseResponse
from a2a_core.server import (
    A2AServer,
    InMemoryEventLog,
    InMemoryTaskStore,
    InputRequired,
    StreamOptions,
    TaskContext,
)
from a2a_core.server._frame_cache import PIECE_SIZE, FrameCache
from a2a_core.server._streams import StreamSource, stream_frames
from a2a_core.sse import EventStream, parse_frames
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
from helpers.a2a_client import Client, make_card, rpc_body, user_message

pytestmark = pytest.mark.anyio

TASK_ID = "t1"
LONG = 30.0  # a keep-alive interval no test waits for
BIG = 3 * PIECE_SIZE + 123  # characters of text in a big event: several pieces, not round


def big_task(size: int = BIG) -> StreamResponse:
    return StreamResponse(
        task=Task(
            id=TASK_ID,
            context_id="c1",
            status=TaskStatus(state=TaskState.WORKING),
            artifacts=[Artifact(artifact_id="a", parts=[Part(text="x" * size)])],
        )
    )


def chunk(n: int, size: int = 10) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id=TASK_ID,
            context_id="c1",
            artifact=Artifact(artifact_id="a", parts=[Part(text=f"{n:08d}" + "y" * size)]),
            append=n > 1,
        )
    )


def completed() -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=TASK_ID, context_id="c1", status=TaskStatus(state=TaskState.COMPLETED)
        )
    )


async def working_store() -> InMemoryTaskStore:
    store = InMemoryTaskStore()
    await store.create(
        Task(id=TASK_ID, context_id="c1", status=TaskStatus(state=TaskState.WORKING))
    )
    return store


async def read_all(frames: AsyncIterator[bytes]) -> list[bytes]:
    with anyio.fail_after(5):
        return [item async for item in frames]


# --- the cache ------------------------------------------------------------------------------


def test_streams_of_one_encoding_get_one_payload_object() -> None:
    cache = FrameCache()
    event = big_task()
    identity = ("task", TASK_ID, 1)
    first = cache.payload(identity, EventStream("jsonrpc", "1.0", 1), event)
    # Another JSON-RPC id, another binding: the same v1.0 payload, the very same bytes.
    second = cache.payload(identity, EventStream("rest", "1.0"), event)
    assert first is not None and second is first
    assert first.data == codec.encode(event)
    assert (len(cache), cache.nbytes) == (1, len(first.data))
    # A v0.3 stream encodes differently: its own entry.
    other = cache.payload(identity, EventStream("jsonrpc", "0.3", 1), event)
    assert other is not None and other is not first
    assert len(cache) == 2


def test_the_cache_keeps_only_what_someone_holds() -> None:
    cache = FrameCache()
    stream = EventStream("rest", "1.0")
    held = cache.payload(("task", TASK_ID, 1), stream, big_task())
    assert held is not None
    gone = weakref.ref(held)
    del held
    assert gone() is None
    assert (len(cache), cache.nbytes) == (0, 0)
    # Nothing kept: the next stream encodes it again, into a new object.
    again = cache.payload(("task", TASK_ID, 1), stream, big_task())
    assert again is not None and len(cache) == 1


def test_payloads_smaller_than_min_size_are_not_registered() -> None:
    stream = EventStream("rest", "1.0")
    event = big_task(100)
    size = len(codec.encode(event))
    small = FrameCache(min_size=size + 1)
    held = small.payload(("task", TASK_ID, 1), stream, event)
    assert held is not None and held.data == codec.encode(event)
    assert len(small) == 0
    exact = FrameCache(min_size=size)
    held = exact.payload(("task", TASK_ID, 1), stream, event)
    assert len(exact) == 1


def test_a_custom_event_encoder_shares_nothing() -> None:
    cache = FrameCache(min_size=0)
    stream = EventStream("rest", "1.0", event_encoder=codec.encode)
    assert cache.payload(("task", TASK_ID, 1), stream, big_task()) is None
    assert len(cache) == 0


# --- streams ---------------------------------------------------------------------------------


async def test_two_streams_write_one_shared_snapshot_in_pieces() -> None:
    log, store, cache = InMemoryEventLog(), await working_store(), FrameCache()
    snapshot = big_task()
    identity = ("task", TASK_ID, 7)

    def open_stream(stream: EventStream) -> AsyncIterator[bytes]:
        return stream_frames(
            stream,
            [(3, snapshot, identity)],
            TASK_ID,
            3,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now, shared=cache),
        )

    jsonrpc = open_stream(EventStream("jsonrpc", "1.0", 1))
    rest = open_stream(EventStream("rest", "1.0"))
    with anyio.fail_after(5):
        jsonrpc_items = [await jsonrpc.__anext__()]
        # Held by the first stream, in the middle of writing it: the one cached payload.
        payload = cache.payload(identity, EventStream("rest", "1.0"), snapshot)
        assert payload is not None
        shared = weakref.ref(payload)
        del payload
        rest_items = [await rest.__anext__()]
        assert (len(cache), cache.nbytes) == (1, len(codec.encode(snapshot)))
        await jsonrpc.aclose()  # type: ignore[attr-defined]
        # Still there: the REST stream holds the very same object.
        assert shared() is not None and len(cache) == 1
        await log.append(TASK_ID, completed())  # seq 1, after the stream's start: not sent
        for _ in range(4):
            await log.append(TASK_ID, completed())
        rest_items += await read_all(rest)
    assert shared() is None and len(cache) == 0
    assert all(len(item) <= PIECE_SIZE for item in jsonrpc_items + rest_items)
    written = b"".join(rest_items)
    expected = EventStream("rest", "1.0")
    assert written == expected.encode(snapshot, 3) + expected.encode(completed(), 4)
    assert jsonrpc_items[0] == EventStream("jsonrpc", "1.0", 1).encode(snapshot, 3)[:PIECE_SIZE]


async def test_a_big_logged_event_is_shared_by_its_followers() -> None:
    log, store, cache = InMemoryEventLog(), await working_store(), FrameCache()
    streams = [
        stream_frames(
            EventStream("rest", "1.0"),
            [],
            TASK_ID,
            0,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now, shared=cache),
        )
        for _ in range(3)
    ]
    await log.append(TASK_ID, big_task())
    await log.append(TASK_ID, completed())
    with anyio.fail_after(5):
        firsts = [await frames.__anext__() for frames in streams]
        assert len(cache) == 1  # one payload for the three, each in the middle of it
        rests = [await read_all(frames) for frames in streams]
    assert len(cache) == 0
    expected = EventStream("rest", "1.0")
    whole = expected.encode(big_task(), 1) + expected.encode(completed(), 2)
    assert all(first + b"".join(rest) == whole for first, rest in zip(firsts, rests, strict=True))


async def test_a_reader_far_behind_gets_the_log_in_bounded_writes() -> None:
    log, store = InMemoryEventLog(), await working_store()
    for n in range(1, 301):
        await log.append(TASK_ID, chunk(n, size=1000))  # about 300 KiB in all
    await log.append(TASK_ID, completed())
    items = await read_all(
        stream_frames(
            EventStream("rest", "1.0"),
            [],
            TASK_ID,
            0,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now),
        )
    )
    frames = parse_frames(b"".join(items))
    assert [f.id for f in frames] == [str(n) for n in range(1, 302)]
    # Batched (a few writes, not 301), and none larger than a piece and one frame.
    assert 4 <= len(items) <= 12
    assert max(len(item) for item in items) <= PIECE_SIZE + 1200


async def test_a_stream_too_far_behind_ends_with_an_error_and_a_replay_does_not_count() -> None:
    log, store = InMemoryEventLog(), await working_store()
    for n in range(1, 51):  # history: logged before the streams open, 50 KiB or so
        await log.append(TASK_ID, chunk(n, size=1000))

    def open_stream(after: int) -> AsyncIterator[bytes]:
        return stream_frames(
            EventStream("rest", "1.0"),
            [(None, big_task(10))],
            TASK_ID,
            after,
            StreamSource(log, store.get, LONG, read_some=log.read_some_now, backlog_limit=20_000),
            replay_until=50,
        )

    replay, live = open_stream(0), open_stream(50)
    with anyio.fail_after(5):
        await replay.__anext__()  # the snapshot; then neither reads while the task goes on
        await live.__anext__()
        for n in range(51, 101):
            await log.append(TASK_ID, chunk(n, size=1000))
        await log.append(TASK_ID, completed())
        replayed = parse_frames(b"".join(await read_all(replay)))
        behind = parse_frames(b"".join(await read_all(live)))
    # The replay of 50 KiB of history is not a backlog; the 50 KiB logged after it opened is:
    # both streams stop with an error, the replay after the whole history.
    replayed_ids = [f.id for f in replayed[:-1]]
    assert replayed_ids == [str(n) for n in range(1, len(replayed_ids) + 1)]
    assert 50 <= len(replayed_ids) < 100
    assert replayed[-1].id is None
    assert "behind" in json.loads(replayed[-1].data or "")["error"]["message"]
    assert behind[-1].id is None
    error = json.loads(behind[-1].data or "")["error"]
    assert (error["code"], error["status"]) == (500, "INTERNAL")
    assert "more than 20000 bytes behind" in error["message"]
    assert [f.id for f in behind[:-1]] == ["51"]  # the first event it came back for, then


async def test_without_a_limit_a_stream_far_behind_gets_everything() -> None:
    log, store = InMemoryEventLog(), await working_store()
    live = stream_frames(
        EventStream("rest", "1.0"),
        [(None, big_task(10))],
        TASK_ID,
        0,
        StreamSource(log, store.get, LONG, read_some=log.read_some_now),
    )
    with anyio.fail_after(5):
        await live.__anext__()
        for n in range(1, 101):
            await log.append(TASK_ID, chunk(n, size=1000))
        await log.append(TASK_ID, completed())
        frames = parse_frames(b"".join(await read_all(live)))
    assert [f.id for f in frames] == [str(n) for n in range(1, 102)]


# --- the server --------------------------------------------------------------------------


def subscribe_body(task_id: str, request_id: int = 1) -> bytes:
    return rpc_body("SubscribeToTask", {"id": task_id}, id=request_id)


async def test_subscribers_of_a_big_task_share_its_snapshot() -> None:
    async def agent(ctx: TaskContext) -> InputRequired:
        await ctx.artifact("z" * BIG)
        return InputRequired("more?")  # stays open: a subscription follows it

    async with A2AServer(agent, card=make_card()) as server:
        client = Client(server)
        params = {"message": user_message("go")}
        task = (await client.result("SendMessage", params))["task"]
        requests = [
            client.request("POST", "/", subscribe_body(task["id"], 1)),
            client.request("POST", "/", subscribe_body(task["id"], 2)),
            client.request("GET", f"/tasks/{task['id']}:subscribe"),
        ]
        responses = [await server.handle(request) for request in requests]
        assert all(isinstance(r, SseResponse) for r in responses)
        firsts = [await r.frames.__anext__() for r in responses]  # type: ignore[union-attr]
        # Three subscribers in the middle of the snapshot, two JSON-RPC ids, two bindings:
        # one payload, held once.
        assert len(server.shared_frames) == 1
        assert server.shared_frames.nbytes >= BIG
        snapshots = []
        for response, first in zip(responses, firsts, strict=True):
            assert isinstance(response, SseResponse)
            written = first
            while not parse_frames(written):  # the rest of the snapshot, piece by piece
                written += await response.frames.__anext__()
            snapshots.append(written)
            await response.aclose()
        assert len(server.shared_frames) == 0
        stored = await client.result("GetTask", {"id": task["id"]})
    texts = []
    for written, binding in zip(snapshots, ("rpc", "rpc", "rest"), strict=True):
        (frame,) = parse_frames(written)
        data = json.loads(frame.data or "")
        snapshot = data["result"]["task"] if binding == "rpc" else data["task"]
        texts.append(snapshot["artifacts"][0]["parts"][0]["text"])
    assert texts == ["z" * BIG] * 3
    assert stored["artifacts"][0]["parts"][0]["text"] == "z" * BIG


async def test_an_unread_subscriber_is_closed_past_its_backlog_limit(writer_path: str) -> None:
    send, receive = anyio.create_memory_object_stream[str](0)

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        async with receive:
            async for text in receive:
                yield text  # one artifact chunk per text the test sends

    limit = 32 * 1024
    chunk_text = "c" * 8192
    async with A2AServer(
        agent, card=make_card(), streams=StreamOptions(backlog_limit=limit)
    ) as server:
        client = Client(server)
        params = {"message": user_message("go"), "configuration": {"returnImmediately": True}}
        task_id = (await client.result("SendMessage", params))["task"]["id"]
        reader = await server.handle(client.request("POST", "/", subscribe_body(task_id, 1)))
        unread = await server.handle(client.request("POST", "/", subscribe_body(task_id, 2)))
        assert isinstance(reader, SseResponse) and isinstance(unread, SseResponse)
        with anyio.fail_after(10):
            await unread.frames.__anext__()  # the snapshot; then it reads nothing
            seen = await reader.frames.__anext__()
            for n in range(12):  # 96 KiB: three times the limit
                await send.send(f"{n:04d}{chunk_text}")
                while f'"text":"{n:04d}'.encode() not in seen:
                    seen += await reader.frames.__anext__()  # the reader keeps up
            await send.aclose()  # the agent ends: the task completes
            async for item in reader.frames:
                seen += item
            late = b"".join([item async for item in unread.frames])
        await reader.aclose()
        await unread.aclose()
        stored = await client.result("GetTask", {"id": task_id})
    read = [json.loads(f.data or "") for f in parse_frames(seen) if f.data]
    assert read[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stored["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(stored["artifacts"][0]["parts"]) == 12
    frames = [json.loads(f.data or "") for f in parse_frames(late) if f.data]
    if writer_path == "general":
        # A log that cannot measure (a networked one) keeps no backlog here: no limit.
        last = frames[-1]["result"]["statusUpdate"]["status"]["state"]
        assert last == "TASK_STATE_COMPLETED"
        return
    assert frames[-1]["id"] == 2 and frames[-1]["error"]["code"] == -32603
    assert "behind" in frames[-1]["error"]["message"]
    assert all("result" in f for f in frames[:-1])
    assert len(frames) < 12  # closed with most of the task still to send


async def test_a_reconnect_replays_a_log_longer_than_the_limit() -> None:
    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        for n in range(20):
            yield f"{n:04d}" + "r" * 4096

    async with A2AServer(
        agent, card=make_card(), streams=StreamOptions(backlog_limit=16 * 1024)
    ) as server:
        client = Client(server)
        task = (await client.result("SendMessage", {"message": user_message("go")}))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        response = await server.handle(
            client.request("POST", "/", subscribe_body(task["id"]), headers={"last-event-id": "1"})
        )
        assert not isinstance(response, HttpResponse)
        with anyio.fail_after(5):
            frames = parse_frames(b"".join([item async for item in response.frames]))
        await response.aclose()
    results: list[Any] = [json.loads(f.data or "")["result"] for f in frames]
    chunks = [r for r in results if "artifactUpdate" in r]
    assert len(chunks) == 20  # about 80 KiB replayed, five times the limit
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
