"""A Redis that lost its data (FLUSHALL, or a restart without persistence) under running
agents (issue "safe by default", item 7).

The server runs in this process on the Redis backend and is driven through
``A2AServer.handle`` with bytes. "Losing the data" deletes this test's keys only (the
database is shared with other tests, each under its own prefix), under a running agent.
The task that vanished must be one WARNING line in the log (no traceback), its agent
cancelled, the waiting client answered an error (never the task as it no longer exists),
and the replica must go on serving, push worker included.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from redis.asyncio import Redis

from a2a_core.server import A2AServer, ExecutionGuards, InputRequired, TaskContext
from a2a_core.types import TaskState
from a2aserve_redis import RedisBackend
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio

NOT_WAITING = {"returnImmediately": True}


async def lose_everything(redis: Redis, prefix: str) -> int:
    """What FLUSHALL does to this test's keys (and nobody else's): delete them all."""
    keys = [key async for key in redis.scan_iter(match=prefix + "*", count=1000)]
    if keys:
        await redis.delete(*keys)
    return len(keys)


async def test_a_task_lost_with_the_redis_data_fails_clearly_and_the_replica_goes_on(
    redis_url: str, redis: Redis, prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    working = anyio.Event()
    go_on = anyio.Event()
    stopped: list[str] = []

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        if ctx.text == "echo":
            yield "echoed"
            return
        await ctx.working("on it")
        working.set()
        await go_on.wait()
        try:
            yield "a chunk for a task that is gone"
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            stopped.append(ctx.task_id)
            raise

    caplog.set_level(logging.INFO)
    backend = RedisBackend(redis_url, prefix=prefix)
    server = A2AServer(agent, card=make_card(push=True), backend=backend)
    async with server:
        client = Client(server)
        answer: list[dict[str, Any]] = []

        async def blocking_send() -> None:
            answer.append(await client.rpc("SendMessage", {"message": user_message("slow")}))

        async with anyio.create_task_group() as group:
            group.start_soon(blocking_send)
            with anyio.fail_after(10):
                await working.wait()
            (task_id,) = server.runtime.executions
            assert await lose_everything(redis, prefix) > 0
            go_on.set()
        with anyio.fail_after(10):
            while server.runtime.executions:
                await anyio.sleep(0.01)
        missing = await client.error("GetTask", {"id": task_id})
        # The replica still serves, with its push worker: a new task runs to its end.
        after = await client.result("SendMessage", {"message": user_message("echo", mid="m2")})

    error = answer[0]["error"]
    assert error["code"] == -32603
    assert error["message"] == "The task store lost this task while it was being processed"
    assert "data" in error and "Traceback" not in str(error)
    assert stopped == [task_id]
    assert missing["code"] == -32001
    assert after["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    about_task = [r for r in caplog.records if task_id in r.getMessage()]
    assert [(r.name, r.levelname) for r in about_task] == [("a2a_core.server", "WARNING")]
    assert "vanished from the task store" in about_task[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_the_guards_end_tasks_on_the_redis_backend_too(redis_url: str, prefix: str) -> None:
    # The expiry and the inactivity stop write through the ordinary writer (here: one Lua
    # script per event), so subscribers on every replica, and webhooks, see them.
    now = [1000.0]
    thinking = anyio.Event()
    stopped: list[str] = []

    async def agent(ctx: TaskContext) -> AsyncIterator[str | InputRequired]:
        if ctx.text == "ask":
            yield InputRequired("which one?")
            return
        await ctx.working("thinking")
        thinking.set()
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append(ctx.task_id)
        yield "never"  # pragma: no cover

    guards = ExecutionGuards(inactivity_timeout=60.0, interrupted_ttl=600.0, clock=lambda: now[0])
    backend = RedisBackend(redis_url, prefix=prefix)
    async with A2AServer(agent, card=make_card(), backend=backend, guards=guards) as server:
        client = Client(server)
        asked = (await client.result("SendMessage", {"message": user_message("ask")}))["task"]
        params = {"message": user_message("work", mid="m2"), "configuration": NOT_WAITING}
        working = (await client.result("SendMessage", params))["task"]
        with anyio.fail_after(10):
            await thinking.wait()
        await server.guards.sweep()  # sees the WORKING write
        now[0] += 601  # past both the inactivity timeout and the expiry
        await server.guards.sweep()
        with anyio.fail_after(10):
            while server.runtime.executions:
                await anyio.sleep(0.01)
        expired = await backend.store.get(asked["id"])
        inactive = await backend.store.get(working["id"])
    assert expired is not None and inactive is not None
    assert expired.task.status.state is TaskState.FAILED
    assert inactive.task.status.state is TaskState.FAILED
    assert stopped == [working["id"]]
