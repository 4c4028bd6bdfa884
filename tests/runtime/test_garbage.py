"""Requests leave no reference cycles: reference counting frees everything one request made.

The garbage collector's full collections stop the event loop while they walk every object
it tracks; with each blocking send leaving a cycle (an execution and the callbacks its task
held), they ran a few times a second and were a blocking send's p99 (docs/benchmarks.md).
Each case here runs a kind of request many times with the collector off and every object
it would free kept for inspection (``gc.DEBUG_SAVEALL``), then collects: nothing may be
found.
"""

from __future__ import annotations

import collections
import gc
import json
import os
import pathlib
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest

from a2a_core.http import HttpRequest, SseResponse
from a2a_core.server import A2AServer, InputRequired, TaskContext
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio


async def agent(ctx: TaskContext) -> Any:
    command = ctx.text
    if command == "stream":
        for word in ("a", "b", "c"):
            await ctx.artifact(word, append=word != "a", artifact_id="story")
        return None
    if command == "ask":
        return InputRequired("Your name?")
    if command == "boom":
        raise RuntimeError("the agent failed")
    return command


def send(text: str, **configuration: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": user_message(text)}
    if configuration:
        params["configuration"] = configuration
    return params


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector off, and what it would free kept in ``gc.garbage`` (restored after)."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


async def drain(response: Any) -> None:
    if isinstance(response, SseResponse):
        async for _ in response.frames:
            pass
        await response.aclose()


def cyclic_garbage() -> collections.Counter[str]:
    """The objects a collection finds now, by type; then really freed (objects kept in
    ``gc.garbage`` are still cycles once dropped from it: the next collection would find
    them again)."""
    gc.garbage.clear()
    gc.collect()
    found = collections.Counter(
        type(o).__qualname__
        + (f" {o.__module__}.{o.__qualname__}" if type(o).__name__ == "function" else "")
        for o in gc.garbage
    )
    gc.garbage.clear()
    gc.set_debug(0)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    return found


Case = Callable[[Client, str], Awaitable[Any]]


async def blocking_send(client: Client, task_id: str) -> Any:
    return await client.result("SendMessage", send("hello"))


async def v0_3_send(client: Client, task_id: str) -> Any:
    params = {
        "message": {
            "kind": "message",
            "messageId": "m1",
            "role": "user",
            "parts": [{"kind": "text", "text": "hello"}],
        }
    }
    legacy = Client(client.server, version="0.3")
    return await legacy.result("message/send", params)


async def rest_send(client: Client, task_id: str) -> Any:
    body = json.dumps(send("hello")).encode()
    return await client.server.handle(client.request("POST", "/message:send", body))


async def streaming_send(client: Client, task_id: str) -> Any:
    return await client.stream("SendStreamingMessage", send("stream"))


async def non_blocking_send(client: Client, task_id: str) -> Any:
    return await client.result("SendMessage", send("hello", returnImmediately=True))


async def interrupted_send(client: Client, task_id: str) -> Any:
    return await client.result("SendMessage", send("ask"))


async def failing_agent(client: Client, task_id: str) -> Any:
    return await client.result("SendMessage", send("boom"))


async def get_task(client: Client, task_id: str) -> Any:
    return await client.result("GetTask", {"id": task_id})


async def missing_task(client: Client, task_id: str) -> Any:
    return await client.error("GetTask", {"id": "no-such-task"})


async def list_tasks(client: Client, task_id: str) -> Any:
    return await client.result("ListTasks", {"pageSize": 5})


async def cancel_interrupted(client: Client, task_id: str) -> Any:
    task = await client.result("SendMessage", send("ask"))
    return await client.result("CancelTask", {"id": task["task"]["id"]})


async def subscribe_finished(client: Client, task_id: str) -> Any:
    return await client.error("SubscribeToTask", {"id": task_id})


async def malformed_json(client: Client, task_id: str) -> Any:
    return await client.server.handle(client.request("POST", "/", b"{not json"))


async def unknown_method(client: Client, task_id: str) -> Any:
    return await client.error("NoSuchMethod", {})


async def agent_card(client: Client, task_id: str) -> Any:
    return await client.server.handle(HttpRequest("GET", "/.well-known/agent-card.json"))


CASES: list[Case] = [
    blocking_send,
    v0_3_send,
    rest_send,
    streaming_send,
    non_blocking_send,
    interrupted_send,
    failing_agent,
    get_task,
    missing_task,
    list_tasks,
    cancel_interrupted,
    subscribe_finished,
    malformed_json,
    unknown_method,
    agent_card,
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
async def test_a_request_leaves_no_cyclic_garbage(
    case: Case, collector_off: None, caplog: pytest.LogCaptureFixture
) -> None:
    server = A2AServer(agent, card=make_card(), base_url="http://127.0.0.1:9999/a2a")
    async with server:
        client = Client(server)
        finished = await client.result("SendMessage", send("done"))
        task_id = finished["task"]["id"]
        for _ in range(3):  # first calls warm caches (lazily built tables, imports)
            await drain(await case(client, task_id))
        await anyio.sleep(0.01)  # non-blocking sends: let their agents finish
        cyclic_garbage()
        for _ in range(20):
            await drain(await case(client, task_id))
        await anyio.sleep(0.01)
        found = cyclic_garbage()
    assert not found, (
        f"{sum(found.values()) / 20:.1f} objects of cyclic garbage per request: {found}"
    )


async def test_the_first_server_to_start_freezes_what_start_up_made() -> None:
    # gc.freeze() moves what exists into a generation collections skip (see server
    # `_collector`); it is done once per process, so test it in a fresh one. Frozen objects
    # that die leave the count: a second freeze would add thousands.
    script = """
import asyncio, gc
from a2a_core.server import A2AServer
from helpers.a2a_client import make_card

async def main():
    before = gc.get_freeze_count()
    async with A2AServer(lambda ctx: "hi", card=make_card(), base_url="http://x"):
        after_first = gc.get_freeze_count()
    async with A2AServer(lambda ctx: "hi", card=make_card(), base_url="http://x"):
        after_second = gc.get_freeze_count()
    print(before, after_first > before, after_second <= after_first)

asyncio.run(main())
"""
    tests = pathlib.Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(tests)}
    result = await anyio.run_process([sys.executable, "-c", script], env=env, check=True)
    assert result.stdout.decode().split() == ["0", "True", "True"]
