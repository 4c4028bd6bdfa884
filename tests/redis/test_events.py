"""RedisEventLog against a real Redis: seqs, close, replay, followers on other replicas."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import pytest
from redis.asyncio import Redis

from a2a_core.errors import LocalProtocolError
from a2a_core.server import LoggedEvent
from a2a_core.types import StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent
from a2aserve_redis import RedisEventLog

pytestmark = pytest.mark.anyio


def status(state: TaskState, task_id: str = "t") -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=task_id, context_id="c", status=TaskStatus(state=state)
        )
    )


def snapshot(task_id: str = "t") -> StreamResponse:
    return StreamResponse(
        task=Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.SUBMITTED))
    )


@contextlib.asynccontextmanager
async def replica_log(url: str, prefix: str, **options: float) -> AsyncIterator[RedisEventLog]:
    """A running event log on a client of its own, as another replica has."""
    client = Redis.from_url(url)
    try:
        async with RedisEventLog(client, prefix=prefix, **options) as log:  # type: ignore[arg-type]
            yield log
    finally:
        await client.aclose()


async def collect(log: RedisEventLog, task_id: str, after: int = 0) -> list[LoggedEvent]:
    return [e async for e in log.follow(task_id, after, idle_timeout=10)]


async def test_seqs_close_and_replay(redis_url: str, prefix: str) -> None:
    async with replica_log(redis_url, prefix) as log:
        assert [await log.append("t", snapshot()) for _ in range(3)] == [1, 2, 3]
        assert await log.append("other", snapshot("other")) == 1  # one numbering per task
        await log.append("t", status(TaskState.COMPLETED))
        await log.close("t")
        await log.close("t")  # idempotent
        with pytest.raises(LocalProtocolError):
            await log.append("t", status(TaskState.WORKING))
        assert [e.seq for e in await log.read("t")] == [1, 2, 3, 4]
        assert [e.seq for e in await log.read("t", after=2)] == [3, 4]
        assert (await log.read("t", after=3))[0].event == status(TaskState.COMPLETED)
        # A closed log replays, then its followers end (the marker is no event).
        assert [e.seq for e in await collect(log, "t", after=1)] == [2, 3, 4]
        assert await collect(log, "t", after=4) == []
        assert await log.read("missing") == []


async def test_followers_on_another_replica_get_every_event_in_order(
    redis_url: str, prefix: str
) -> None:
    async with (
        replica_log(redis_url, prefix) as writer,
        replica_log(redis_url, prefix) as reader,
    ):
        results: dict[int, list[int]] = {}

        async def follow(n: int, after: int) -> None:
            results[n] = [e.seq for e in await collect(reader, "t", after)]

        async with anyio.create_task_group() as group:
            for n in range(5):
                group.start_soon(follow, n, 0)  # before the log exists
            await anyio.sleep(0.1)
            for i in range(20):
                await writer.append("t", status(TaskState.WORKING))
                if i == 10:
                    group.start_soon(follow, 99, 4)  # joins midway, from a position
                await anyio.sleep(0.005)
            await writer.close("t")
        assert all(results[n] == list(range(1, 21)) for n in range(5))
        assert results[99] == list(range(5, 21))


async def test_follow_ends_after_idle_timeout_and_on_forget(redis_url: str, prefix: str) -> None:
    async with replica_log(redis_url, prefix) as log:
        await log.append("t", snapshot())
        with anyio.fail_after(5):
            got = [e.seq async for e in log.follow("t", 0, idle_timeout=0.2)]
        assert got == [1]

        async def forget_soon() -> None:
            await anyio.sleep(0.1)
            await log.forget("t")

        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(forget_soon)
                got = [e.seq async for e in log.follow("t", 1)]
        assert got == []
        assert await log.read("t") == []


async def test_trimming_and_retention(redis_url: str, redis: Redis, prefix: str) -> None:
    async with replica_log(redis_url, prefix, maxlen=10, retention=30) as log:
        for _ in range(500):
            await log.append("t", status(TaskState.WORKING))
        events = await log.read("t")
        assert 10 <= len(events) < 500  # trimmed, approximately
        assert events[-1].seq == 500  # seqs go on
        assert await redis.ttl(log.keys.log("t")) == -1  # open logs do not expire
        await log.close("t")
        assert 0 < await redis.ttl(log.keys.log("t")) <= 30


async def test_follow_needs_the_running_log(redis: Redis, prefix: str) -> None:
    log = RedisEventLog(redis, prefix=prefix)
    with pytest.raises(LocalProtocolError, match="not running"):
        await anext(log.follow("t"))
