"""Bounded shutdown (issue "safe by default", item 4), through ``A2AServer.handle``.

The server stops taking calls, gives running agents ``shutdown_grace`` seconds, then fails
their tasks with a status message and cancels them; whatever an agent does (never returns,
ignores cancellation, blocks a thread), ``shutdown`` returns. Timeouts below are generous
bounds against a hang, never measurements.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import pytest

from a2a_core.http import HttpResponse
from a2a_core.server import SHUTDOWN_TEXT, A2AServer, ExecutionGuards, TaskContext
from helpers.a2a_client import Client, collect, make_card, rpc_body, user_message

pytestmark = pytest.mark.anyio

HANG_GUARD = 20  # seconds: only against a hang


def send_params(text: str = "hi", *, immediate: bool = False, mid: str = "m1") -> dict[str, Any]:
    params: dict[str, Any] = {"message": user_message(text, mid=mid)}
    if immediate:
        params["configuration"] = {"returnImmediately": True}
    return params


async def test_an_agent_that_finishes_within_the_grace_completes_its_task() -> None:
    release = anyio.Event()

    async def slow(ctx: TaskContext) -> str:
        await ctx.working()
        await release.wait()
        return "finished"

    server = A2AServer(slow, card=make_card(), guards=ExecutionGuards(shutdown_grace=HANG_GUARD))
    with anyio.fail_after(HANG_GUARD):
        async with server:
            task = (await Client(server).result("SendMessage", send_params(immediate=True)))["task"]
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.shutdown)
                await anyio.sleep(0.05)
                assert server.stopping  # refusing calls while the agent finishes
                release.set()
        stored = await server.backend.store.get(task["id"])
    assert stored is not None and stored.task.status.state.name == "COMPLETED"


async def test_after_the_grace_a_running_task_fails_and_its_waiters_hear_it() -> None:
    started = anyio.Event()

    async def forever(ctx: TaskContext) -> None:
        await ctx.working("on it")
        started.set()
        await anyio.sleep_forever()

    server = A2AServer(forever, card=make_card(), guards=ExecutionGuards(shutdown_grace=0.05))
    answers: dict[str, Any] = {}
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)

            async def blocking_send() -> None:
                answers["blocking"] = await client.result("SendMessage", send_params(mid="b"))

            async def stream() -> None:
                response = await server.handle(
                    client.request(
                        "POST", "/", rpc_body("SendStreamingMessage", send_params(mid="s"))
                    )
                )
                answers["stream"] = await collect(response)

            async with anyio.create_task_group() as tg:
                tg.start_soon(blocking_send)
                tg.start_soon(stream)
                await started.wait()
                await anyio.sleep(0.05)  # both agents are working
                await server.shutdown()
    blocking = answers["blocking"]["task"]
    assert blocking["status"]["state"] == "TASK_STATE_FAILED"
    assert blocking["status"]["message"]["parts"][0]["text"] == SHUTDOWN_TEXT
    last = answers["stream"][-1][1]["result"]["statusUpdate"]["status"]
    assert last["state"] == "TASK_STATE_FAILED"
    assert last["message"]["parts"][0]["text"] == SHUTDOWN_TEXT


async def test_calls_during_shutdown_are_refused_and_the_card_still_served() -> None:
    release = anyio.Event()

    async def slow(ctx: TaskContext) -> str:
        await ctx.working()
        await release.wait()
        return "done"

    server = A2AServer(slow, card=make_card(), guards=ExecutionGuards(shutdown_grace=HANG_GUARD))
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)
            task = (await client.result("SendMessage", send_params(immediate=True)))["task"]
            async with anyio.create_task_group() as tg:
                tg.start_soon(server.shutdown)
                await anyio.sleep(0.05)
                rpc = await client.error("GetTask", {"id": task["id"]})
                new = await client.error("SendMessage", send_params(mid="m2"))
                rest = await server.handle(client.request("GET", f"/tasks/{task['id']}"))
                card = await server.handle(client.request("GET", "/.well-known/agent-card.json"))
                release.set()
    assert rpc["code"] == new["code"] == -32050
    assert isinstance(rest, HttpResponse) and rest.status == 503
    assert ("retry-after", "5") in rest.headers
    assert json.loads(rest.body)["error"]["status"] == "UNAVAILABLE"
    assert isinstance(card, HttpResponse) and card.status == 200


async def test_a_call_whose_agent_made_no_task_yet_is_answered_unavailable() -> None:
    started = anyio.Event()

    async def silent(ctx: TaskContext) -> str:
        started.set()
        await anyio.sleep_forever()
        return "never"

    server = A2AServer(silent, card=make_card(), guards=ExecutionGuards(shutdown_grace=0.05))
    answers: list[dict[str, Any]] = []
    with anyio.fail_after(HANG_GUARD):
        async with server:
            client = Client(server)

            async def send() -> None:
                answers.append(await client.error("SendMessage", send_params()))

            async with anyio.create_task_group() as tg:
                tg.start_soon(send)
                await started.wait()
                await server.shutdown()
    assert answers[0]["code"] == -32050


# On asyncio only: trio's task group waits for every task, so abandoning is asyncio's.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_agent_that_ignores_cancellation_is_abandoned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = anyio.Event()
    stop = False

    async def stubborn(ctx: TaskContext) -> None:
        await ctx.working()
        started.set()
        while not stop:
            try:
                await anyio.sleep(0.01)
            except BaseException:  # swallows the cancellation, as a careless agent might
                continue

    server = A2AServer(stubborn, card=make_card(), guards=ExecutionGuards(shutdown_grace=0.05))
    try:
        with anyio.fail_after(HANG_GUARD):
            async with server:
                task = (await Client(server).result("SendMessage", send_params(immediate=True)))[
                    "task"
                ]
                await started.wait()
            stored = await server.backend.store.get(task["id"])
    finally:
        stop = True
        await anyio.sleep(0.05)  # let it end before the loop closes
    assert stored is not None and stored.task.status.state.name == "FAILED"
    assert any("ignored cancellation" in r.getMessage() for r in caplog.records)


async def test_a_blocked_sync_agent_does_not_hold_the_server() -> None:
    entered, release = threading.Event(), threading.Event()

    def blocking(ctx: TaskContext) -> str:
        entered.set()
        release.wait(HANG_GUARD)
        return "late"

    server = A2AServer(blocking, card=make_card(), guards=ExecutionGuards(shutdown_grace=0.05))
    try:
        with anyio.fail_after(HANG_GUARD):
            async with server:
                client = Client(server)
                task = (await client.result("SendMessage", send_params(immediate=True)))["task"]
                await anyio.to_thread.run_sync(entered.wait)
            stored = await server.backend.store.get(task["id"])
    finally:
        release.set()
    assert stored is not None and stored.task.status.state.name == "FAILED"
    assert stored.task.status.message is not None
    assert stored.task.status.message.parts[0].text == SHUTDOWN_TEXT


async def test_shutdown_is_idempotent_and_a_restarted_server_serves_again() -> None:
    server = A2AServer(
        lambda ctx: "ok", card=make_card(), guards=ExecutionGuards(shutdown_grace=0.05)
    )
    async with server:
        await server.shutdown()
        await server.shutdown()
        refused = await Client(server).error("SendMessage", send_params())
    async with server:
        answered = await Client(server).result("SendMessage", send_params(mid="m2"))
    assert refused["code"] == -32050
    assert answered["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
