"""The per-task limits hold on the Redis backend as on the in-memory one: they are the runtime's.

One server in this process on the machine's Redis, driven through ``A2AServer.handle`` with
bytes: a message over a limit is refused on both bindings with nothing written to Redis, and
an agent streaming over one fails its task, as the store and the log on Redis show.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from a2a_core.http import HttpResponse
from a2a_core.server import A2AServer, TaskContext, TaskLimits
from a2aserve_redis import RedisBackend
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio


async def test_a_message_over_a_limit_writes_nothing_to_redis(
    redis_url: str, redis: Redis, prefix: str
) -> None:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    backend = RedisBackend(redis_url, prefix=prefix)
    limits = TaskLimits(max_history_bytes=1_000)
    async with A2AServer(echo, card=make_card(), backend=backend, task_limits=limits) as server:
        client = Client(server)
        rpc = await client.error("SendMessage", {"message": user_message("x" * 2_000)})
        rest = await server.handle(
            client.request(
                "POST",
                "/message:send",
                json.dumps({"message": user_message("x" * 2_000, mid="m2")}).encode(),
            )
        )
        listed = await client.result("ListTasks", {})
        refused_keys = await redis.keys(f"{prefix}task:*") + await redis.keys(f"{prefix}log:*")
        await client.result("SendMessage", {"message": user_message("fits", mid="m3")})
        kept_keys = await redis.keys(f"{prefix}task:*") + await redis.keys(f"{prefix}log:*")
    assert rpc["code"] == -32602 and "1000 bytes of messages" in rpc["message"]
    assert isinstance(rest, HttpResponse) and rest.status == 400
    assert listed["totalSize"] == 0
    assert refused_keys == []
    assert len(kept_keys) == 2  # what a task that fits leaves: its hash and its log


async def test_an_agent_over_the_artifact_limit_fails_its_task_on_redis(
    redis_url: str, prefix: str
) -> None:
    async def chatty(ctx: TaskContext) -> AsyncIterator[str]:
        for _ in range(100):
            yield "c" * 100

    backend = RedisBackend(redis_url, prefix=prefix)
    limits = TaskLimits(max_artifact_bytes=1_000)
    async with A2AServer(chatty, card=make_card(), backend=backend, task_limits=limits) as server:
        task = (await Client(server).result("SendMessage", {"message": user_message("go")}))["task"]
        stored = await backend.store.get(task["id"])
        events = await backend.event_log.read(task["id"])
    assert stored is not None
    assert stored.task.status.state.value == "TASK_STATE_FAILED"
    assert len("".join(p.text or "" for p in stored.task.artifacts[0].parts)) <= 1_000
    last = events[-1].event.status_update
    assert last is not None and last.status.message is not None
    assert last.status.message.parts[0].text == (
        "The task went over the server's limit of 1000 bytes of artifacts."
    )
