"""Push configs and push delivery through the consumer group, against a real Redis."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import msgspec
import pytest
from redis.asyncio import Redis
from redis_harness import Receiver

from a2a_core.server import (
    A2AServer,
    DeliveryRules,
    PushOptions,
    PushTarget,
    TaskContext,
    WebhookPolicy,
    WebhookPoster,
    WebhookPushSender,
)
from a2a_core.server.backends import PushConfigLimitError
from a2a_core.types import (
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2aserve_redis import PushWorker, RedisBackend, RedisPushConfigStore, RedisPushQueue
from a2aserve_redis.push import GROUP, _Job, _job_decoder
from helpers.a2a_client import Client, make_card, user_message
from helpers.processes import free_port
from helpers.tracing import AGENT_SPAN, TRACEPARENT, assert_continued, tracing

pytestmark = pytest.mark.anyio


def event(task_id: str, n: int) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=task_id,
            context_id="c",
            status=TaskStatus(state=TaskState.WORKING),
            metadata={"n": n},
        )
    )


def config(
    task_id: str, url: str, config_id: str = "", token: str = ""
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(task_id=task_id, id=config_id, url=url, token=token)


async def test_config_store_is_shared_and_keeps_the_rules(
    redis: Redis, redis_url: str, prefix: str
) -> None:
    one = RedisPushConfigStore(redis, prefix=prefix, max_configs_per_task=3)
    other_client = Redis.from_url(redis_url)
    try:
        two = RedisPushConfigStore(other_client, prefix=prefix, max_configs_per_task=3)
        first = await one.set(config("t", "https://a.example/1"))
        assert first.id == "t"  # a task's first config gets the task id
        second = await two.set(config("t", "https://a.example/2"), legacy_v0_3=True)
        assert second.id not in ("", "t")
        await one.set(config("t", "https://a.example/3", "named"))
        with pytest.raises(PushConfigLimitError):
            await two.set(config("t", "https://a.example/4", "fourth"))
        replaced = await two.set(config("t", "https://a.example/1b", "t"))  # upsert
        assert [c.url for c in await one.list_configs("t")] == [
            "https://a.example/1b",
            "https://a.example/2",
            "https://a.example/3",
        ]
        assert await one.get("t", "t") == replaced
        assert [t.legacy_v0_3 for t in await one.targets("t")] == [False, True, False]
        await two.delete("t", second.id)
        await two.delete("t", "unknown")
        assert [c.id for c in await one.list_configs("t")] == ["t", "named"]
        assert await one.get("t", second.id) is None
        await one.delete_task("t")
        assert await two.list_configs("t") == []
        assert await two.targets("nothing") == []
    finally:
        await other_client.aclose()


async def _worker(
    redis: Redis, prefix: str, name: str, **options: float
) -> AsyncIterator[PushWorker]:
    async with WebhookPushSender(policy=WebhookPolicy(("127.0.0.1/32",)), retries=0) as sender:
        worker = PushWorker(redis, sender, prefix=prefix, consumer=name, **options)  # type: ignore[arg-type]
        async with anyio.create_task_group() as group:
            await group.start(worker.run)
            yield worker
            group.cancel_scope.cancel()


worker_of = contextlib.asynccontextmanager(_worker)


async def test_each_event_is_delivered_once_by_some_replica(redis: Redis, prefix: str) -> None:
    queue = RedisPushQueue(redis, prefix=prefix)
    async with Receiver().running() as receiver:
        receiver.expect = 60
        targets = [PushTarget(config("t0", receiver.url, "c", token="secret"))]
        async with worker_of(redis, prefix, "one") as one, worker_of(redis, prefix, "two") as two:
            for n in range(60):
                task_id = f"t{n % 6}"
                task = Task(id=task_id, context_id="c", status=TaskStatus(state=TaskState.WORKING))
                await queue.deliver(targets, event(task_id, n), task)
            with anyio.fail_after(10):
                await receiver.arrived.wait()
            await anyio.sleep(0.2)  # anything delivered twice would arrive by now
            assert one.sender.delivered + two.sender.delivered == 60
        numbers = sorted(int(b["statusUpdate"]["metadata"]["n"]) for b in receiver.bodies)  # type: ignore[index]
        assert numbers == list(range(60))
        assert set(receiver.tokens) == {"secret"}
        # Every event of each task arrived (in order within a worker, not across workers).
        per_task = [
            int(b["statusUpdate"]["metadata"]["n"])  # type: ignore[index]
            for b in receiver.bodies
            if b["statusUpdate"]["taskId"] == "t3"  # type: ignore[index]
        ]
        assert len(per_task) == 10
        # Acknowledged jobs leave the stream.
        assert await redis.xlen(queue.keys.push_queue) == 0


async def test_a_worker_delivers_with_a_poster_and_no_sender_running(
    redis: Redis, prefix: str
) -> None:
    """No WebhookPushSender anywhere: the worker posts with a poster, under its rules."""
    queue = RedisPushQueue(redis, prefix=prefix)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await anyio.lowlevel.checkpoint()

    rules = DeliveryRules(retries=2, backoff=0.01, factor=3, jitter=0)
    nobody = f"http://127.0.0.1:{free_port()}/hook"  # refuses connections: retried
    policy = WebhookPolicy(("127.0.0.1/32",))
    async with (
        Receiver().running() as receiver,
        WebhookPoster(policy=policy, rules=rules, sleep=sleep) as poster,
    ):
        worker = PushWorker(redis, poster=poster, prefix=prefix, consumer="solo")
        assert worker.poster is poster and worker.sender is poster
        receiver.expect = 1
        targets = [
            PushTarget(config("t", nobody, "gone")),
            PushTarget(config("t", receiver.url, "live", token="secret")),
        ]
        task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
        async with anyio.create_task_group() as group:
            await group.start(worker.run)
            await queue.deliver(targets, event("t", 0), task)
            with anyio.fail_after(10):
                await receiver.arrived.wait()
                while await redis.xlen(queue.keys.push_queue):  # acknowledged, deleted
                    await anyio.sleep(0.02)
            group.cancel_scope.cancel()
    assert (poster.delivered, poster.failed, poster.refused) == (1, 1, 0)
    assert waits == [0.01, 0.03]  # the rules' backoff: 1 + 2 retries to the dead webhook
    assert receiver.tokens == ["secret"]


async def test_a_worker_takes_a_sender_or_a_poster(redis: Redis) -> None:
    sender = WebhookPushSender()
    worker = PushWorker(redis, sender, consumer="one")
    assert (worker.sender, worker.poster) == (sender, sender.poster)
    for wrong in ({}, {"sender": sender, "poster": WebhookPoster()}):
        with pytest.raises(ValueError, match="a sender or a poster"):
            PushWorker(redis, consumer="one", **wrong)  # type: ignore[arg-type]


async def test_jobs_of_a_dead_consumer_are_taken_over(redis: Redis, prefix: str) -> None:
    queue = RedisPushQueue(redis, prefix=prefix)
    async with Receiver().running() as receiver:
        receiver.expect = 8
        targets = [PushTarget(config("t", receiver.url, "c"))]
        task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
        await redis.xgroup_create(queue.keys.push_queue, GROUP, id="0", mkstream=True)
        for n in range(8):
            await queue.deliver(targets, event("t", n), task)
        # A replica took the jobs, then died before delivering them.
        taken = await redis.xreadgroup(GROUP, "dead", {queue.keys.push_queue: ">"}, count=4)
        assert len(taken[0][1]) == 4
        async with worker_of(redis, prefix, "alive", claim_idle=60) as alive:
            with anyio.fail_after(5):
                while len(receiver.bodies) < 4:  # the others went to the live worker
                    await anyio.sleep(0.02)
            assert await alive.take_over("dead") == 4  # what the reaper does
            with anyio.fail_after(5):
                await receiver.arrived.wait()
        numbers = sorted(int(b["statusUpdate"]["metadata"]["n"]) for b in receiver.bodies)  # type: ignore[index]
        assert numbers == list(range(8))
        consumers = await redis.xinfo_consumers(queue.keys.push_queue, GROUP)
        assert {c["name"] for c in consumers} == {b"alive"}


async def test_idle_jobs_are_claimed_without_a_reaper(redis: Redis, prefix: str) -> None:
    queue = RedisPushQueue(redis, prefix=prefix)
    async with Receiver().running() as receiver:
        receiver.expect = 3
        targets = [PushTarget(config("t", receiver.url, "c"))]
        task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
        await redis.xgroup_create(queue.keys.push_queue, GROUP, id="0", mkstream=True)
        for n in range(3):
            await queue.deliver(targets, event("t", n), task)
        await redis.xreadgroup(GROUP, "vanished", {queue.keys.push_queue: ">"}, count=3)
        async with worker_of(redis, prefix, "alive", claim_idle=0.3):
            with anyio.fail_after(5):
                await receiver.arrived.wait()
        assert len(receiver.bodies) == 3


# --- the trace context travels with the job -----------------------------------------------


def test_a_job_queued_before_the_trace_field_still_decodes() -> None:
    """A job of an older replica (four fields, no trace) is read by a newer worker, and a
    newer job (with its trace) by an older one, which ignores the trailing field: a rolling
    upgrade loses no job."""
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    targets = [(False, config("t", "https://a.example/hook", "c"))]
    old = msgspec.msgpack.encode([targets, event("t", 1), task, True])
    job = _job_decoder.decode(old)
    assert job.trace == {} and job.sealed and job.task == task
    assert job.targets == targets

    class _OldJob(msgspec.Struct, array_like=True, frozen=True):
        targets: list[tuple[bool, TaskPushNotificationConfig]]
        event: StreamResponse
        task: Task
        sealed: bool = False

    new = _Job(targets=targets, event=event("t", 2), task=task, trace=TRACEPARENT)
    read_by_old = msgspec.msgpack.decode(msgspec.msgpack.encode(new), type=_OldJob)
    assert read_by_old.event == new.event and not read_by_old.sealed


async def traced_agent(ctx: TaskContext) -> AsyncIterator[str]:
    for word in ("one", "two"):
        yield word


async def test_a_delivery_by_a_push_worker_continues_the_trace_of_the_agent(
    redis_url: str, prefix: str
) -> None:
    """The job carries the trace context of the agent's span (its W3C headers): the
    worker's delivery span is that span's child, and the webhook gets the incoming trace."""
    with tracing() as traced:
        backend = RedisBackend(redis_url, prefix=prefix)
        server = A2AServer(
            traced_agent,
            card=make_card(),
            backend=backend,
            observer=traced.observer,
            push=PushOptions(allow_hosts=["127.0.0.1"]),
        )
        async with Receiver().running() as receiver, server:
            params = {
                "message": user_message("go"),
                "configuration": {"taskPushNotificationConfig": {"url": receiver.url}},
            }
            sent = await Client(server).result("SendMessage", params, headers=TRACEPARENT)
            assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            events = await backend.event_log.read(sent["task"]["id"], after=1)
            with anyio.fail_after(10):
                while len(receiver.bodies) < len(events):
                    await anyio.sleep(0.02)
            deliveries = await traced.deliveries(len(events))
        (agent,) = await traced.wait_for(AGENT_SPAN)
    assert len(receiver.traceparents) == len(events) >= 2
    assert_continued(receiver.traceparents, deliveries, agent)
