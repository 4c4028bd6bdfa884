"""A streaming send starts at once (issue "hardened, round three"): a quiet agent's stream
opens with its task, which is listed and cancelable while the agent says nothing, and a
quick message-only reply still comes as one message.

Driven through ``A2AServer.handle`` with bytes, under asyncio and trio, on the in-memory
backend (its fast paths) and the general path of a store and log of their own.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from a2a_core.http import SseResponse
from a2a_core.server import A2AServer, InMemoryBackend, StreamOptions, TaskContext
from a2a_core.sse import parse_frames
from helpers.a2a_client import Client, collect, make_card, rpc_body, user_message
from runtime.general_backend import GeneralPathBackend

pytestmark = pytest.mark.anyio

HANG_GUARD = 15  # seconds: only against a hang (today's code waits for the agent)


@pytest.fixture(params=["memory", "general"])
def backend(request: pytest.FixtureRequest) -> Any:
    return InMemoryBackend() if request.param == "memory" else GeneralPathBackend()


async def first_frame(response: object) -> dict[str, Any]:
    """The first data frame of a stream, read as an adapter reads it."""
    assert isinstance(response, SseResponse)
    buffer = b""
    async for chunk in response.frames:
        buffer += chunk
        frames = [f for f in parse_frames(buffer) if f.data is not None]
        if frames:
            data: dict[str, Any] = json.loads(frames[0].data or "")
            return data
    raise AssertionError("the stream ended without a frame")


async def test_a_quiet_agents_stream_starts_with_its_task(backend: Any) -> None:
    release = anyio.Event()

    async def quiet(ctx: TaskContext) -> str:
        await release.wait()  # a model's first token, taking its time
        return "at last"

    server = A2AServer(quiet, card=make_card(), backend=backend)
    client = Client(server)
    with anyio.fail_after(HANG_GUARD):
        async with server:
            body = rpc_body("SendStreamingMessage", {"message": user_message("hi")})
            response = await server.handle(client.request("POST", "/", body))
            first = (await first_frame(response))["result"]
            task = first["task"]
            assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
            listed = await client.result("ListTasks", {})
            assert [t["id"] for t in listed["tasks"]] == [task["id"]]
            release.set()
            rest = await collect(response)
    states = [
        d["result"]["statusUpdate"]["status"]["state"]
        for _, d in rest
        if "statusUpdate" in d["result"]
    ]
    assert states[-1] == "TASK_STATE_COMPLETED"


async def test_a_quiet_agents_task_can_be_canceled_before_it_says_anything(
    backend: Any,
) -> None:
    async def quiet(ctx: TaskContext) -> str:
        await anyio.sleep(HANG_GUARD * 2)
        return "never"

    server = A2AServer(quiet, card=make_card(), backend=backend)
    client = Client(server)
    with anyio.fail_after(HANG_GUARD):
        async with server:
            body = rpc_body("SendStreamingMessage", {"message": user_message("hi")})
            response = await server.handle(client.request("POST", "/", body))
            task_id = (await first_frame(response))["result"]["task"]["id"]
            canceled = await client.result("CancelTask", {"id": task_id})
            rest = await collect(response)
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    last = rest[-1][1]["result"]
    assert last["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"


async def test_a_quick_message_reply_is_still_one_message(backend: Any) -> None:
    server = A2AServer(lambda ctx: None, card=make_card(), backend=backend)

    async def reply(ctx: TaskContext) -> Any:
        return ctx.message  # echoed as the agent's message

    server = A2AServer(reply, card=make_card(), backend=backend)
    async with server:
        frames = await Client(server).stream(
            "SendStreamingMessage", {"message": user_message("hi")}
        )
        listed = await Client(server).result("ListTasks", {})
    assert [list(d["result"]) for _, d in frames] == [["message"]]
    assert listed["tasks"] == []


@pytest.mark.parametrize("reply", ["message", "report"])
async def test_with_no_wait_every_stream_is_a_task_created_once(backend: Any, reply: str) -> None:
    async def agent(ctx: TaskContext) -> Any:
        if reply == "report":
            await ctx.working("thinking")  # races the stream's own creation of the task
            return "done"
        return ctx.message

    server = A2AServer(
        agent,
        card=make_card(),
        backend=backend,
        streams=StreamOptions(first_frame_wait=0),
    )
    async with server:
        frames = await Client(server).stream(
            "SendStreamingMessage", {"message": user_message("hi")}
        )
        listed = await Client(server).result("ListTasks", {})
    kinds = [next(iter(d["result"])) for _, d in frames]
    assert kinds[0] == "task" and kinds.count("task") == 1
    assert frames[-1][1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(listed["tasks"]) == 1
    ids = [int(i) for i, _ in frames if i is not None]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


@pytest.mark.parametrize("wait", [-1, float("nan"), True, "1"])
def test_the_wait_is_checked(wait: Any) -> None:
    with pytest.raises(ValueError, match="first_frame_wait"):
        StreamOptions(first_frame_wait=wait)


async def test_a_report_racing_the_streams_creation_creates_one_task(backend: Any) -> None:
    # The agent's first report lands around the moment the stream gives up waiting, in
    # either order: one task, one snapshot, ids in order, whichever wins.
    async def agent(ctx: TaskContext) -> str:
        await anyio.sleep(0.002)
        await ctx.working("thinking")
        return "done"

    server = A2AServer(
        agent, card=make_card(), backend=backend, streams=StreamOptions(first_frame_wait=0.002)
    )
    async with server:
        for n in range(20):
            message = user_message("hi", mid=f"m{n}")
            frames = await Client(server).stream("SendStreamingMessage", {"message": message})
            kinds = [next(iter(d["result"])) for _, d in frames]
            assert kinds[0] == "task" and kinds.count("task") == 1, kinds
            last = frames[-1][1]["result"]["statusUpdate"]["status"]["state"]
            assert last == "TASK_STATE_COMPLETED"
        listed = await Client(server).result("ListTasks", {"pageSize": 100})
    assert len(listed["tasks"]) == 20
