"""How a running agent is cancelled (hardening round three, #12): on asyncio once, as
asyncio cancels a task, and an agent that will not stop is cut loose after
``ExecutionGuards.cancel_grace``, driven through ``A2AServer.handle`` with bytes.

anyio's level-triggered cancellation made an agent that catches ``CancelledError`` and
carries on spin at every await (53 % of a core after one CancelTask); trio keeps that
semantics (it is trio's own), so these run on asyncio.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, ExecutionGuards, TaskContext
from a2a_core.server._cancel import EDGE_AVAILABLE
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def send(text: str) -> dict[str, Any]:
    return {"message": user_message(text), "configuration": {"returnImmediately": True}}


def test_the_edge_cancel_is_available_with_this_anyio() -> None:
    # It reads anyio's cancel scope stack: an anyio that changed it falls back to the
    # level-triggered scope, and this says so before a user's agent spins.
    assert EDGE_AVAILABLE


async def test_an_agent_that_swallows_cancellation_is_cancelled_once_then_cut_loose(
    caplog: pytest.LogCaptureFixture,
) -> None:
    swallowed = 0
    running = anyio.Event()
    stop = False

    async def stubborn(ctx: TaskContext) -> None:
        nonlocal swallowed
        await ctx.working("busy")
        running.set()
        while not stop:
            try:
                await asyncio.sleep(0.02)
            except asyncio.CancelledError:
                swallowed += 1  # and carries on

    server = A2AServer(stubborn, card=make_card(), guards=ExecutionGuards(cancel_grace=0.3))
    try:
        # The server is not held by it either: it stops at once (the agent is cancelled
        # once more, and not waited for).
        with anyio.fail_after(10), caplog.at_level(logging.WARNING, "a2a_core.server"):
            async with server:
                client = Client(server)
                task = (await client.result("SendMessage", send("go")))["task"]
                await running.wait()
                canceled = await client.result("CancelTask", {"id": task["id"]})
                assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
                while task["id"] in server.runtime.executions:
                    await anyio.sleep(0.02)
                await anyio.sleep(0.5)
                # Once, not at every await of its loop (it was 46,000 times a second).
                assert swallowed == 1
                cut = [r for r in caplog.records if "still runs" in r.getMessage()]
                assert len(cut) == 1 and task["id"] in cut[0].getMessage()
                # It still runs, and changed its task no more.
                got = await client.result("GetTask", {"id": task["id"]})
                assert got["status"]["state"] == "TASK_STATE_CANCELED"
            await anyio.sleep(0.1)
        assert swallowed == 2
    finally:
        stop = True
        await anyio.sleep(0.05)


async def test_a_cancelled_agent_may_await_in_its_cleanup() -> None:
    # Cancelled once, an agent's `finally` can await (close a connection, say); anyio's
    # level-triggered scope cancelled every such await again.
    running = anyio.Event()
    cleaned = anyio.Event()
    stopping: list[bool] = []

    async def tidy(ctx: TaskContext) -> None:
        await ctx.working("busy")
        stopping.append(ctx.stopping)
        running.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopping.append(ctx.stopping)  # the cancellation is the server's
            await asyncio.sleep(0.01)
            cleaned.set()

    server = A2AServer(tidy, card=make_card())
    async with server:
        client = Client(server)
        task = (await client.result("SendMessage", send("go")))["task"]
        await running.wait()
        await client.result("CancelTask", {"id": task["id"]})
        with anyio.fail_after(5):
            await cleaned.wait()
            while task["id"] in server.runtime.executions:
                await anyio.sleep(0.01)
        got = await client.result("GetTask", {"id": task["id"]})
        assert got["status"]["state"] == "TASK_STATE_CANCELED"
        assert stopping == [False, True]
