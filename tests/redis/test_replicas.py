"""Two server processes, one per adapter, sharing the machine's Redis, over real HTTP.

What one replica starts, the other serves: GetTask, ListTasks, SubscribeToTask, replay by
``Last-Event-ID`` (same ids, same events), CancelTask (the agent stops where it runs), and
concurrent writes from both never lose one another. Then ``kill -9`` of the replica that
runs a task: the other fails the task within the lease timeout, and a subscriber on it gets
the final event (the time from the kill to that event is printed: ``pytest -s``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from redis.asyncio import Redis
from redis_harness import (
    Receiver,
    Replica,
    Sse,
    delete_prefix,
    result,
    rpc,
    send_params,
    state_of,
)

from a2a_core.server import SHUTDOWN_TEXT
from a2aserve_redis import HOST_LOST_TEXT

pytestmark = pytest.mark.anyio

COMPLETED = "TASK_STATE_COMPLETED"


@pytest.fixture(scope="module")
def replicas(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Replica]]:
    """A Starlette replica and an aiohttp replica on one Redis prefix."""
    prefix = f"a2a-test:{uuid.uuid4().hex[:12]}:"
    logs = tmp_path_factory.mktemp("replicas")
    started = [
        Replica(adapter, redis_url, prefix, logs / f"{adapter}.log")
        for adapter in ("starlette", "aiohttp")
    ]
    try:
        for replica in started:
            replica.wait_ready()
        yield started
    finally:
        for replica in started:
            replica.stop()
        delete_prefix(redis_url, prefix)


@pytest.fixture
async def client() -> Iterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=20) as http:
        yield http  # type: ignore[misc]


async def test_send_on_one_get_and_list_on_the_other(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    one, two = replicas
    ctx = str(uuid.uuid4())
    params = send_params("echo hello")
    params["message"]["contextId"] = ctx
    sent = (await result(client, one.url, "SendMessage", params))["task"]
    assert sent["status"]["state"] == COMPLETED
    got = await result(client, two.url, "GetTask", {"id": sent["id"]})
    assert got["status"] == sent["status"] and got["artifacts"] == sent["artifacts"]
    listed = await result(client, two.url, "ListTasks", {"contextId": ctx})
    assert [t["id"] for t in listed["tasks"]] == [sent["id"]] and listed["totalSize"] == 1
    rest = await client.get(f"{two.url}/tasks/{sent['id']}", headers={"A2A-Version": "1.0"})
    assert rest.status_code == 200 and rest.json()["id"] == sent["id"]


async def test_subscribe_and_replay_on_the_other_replica(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    one, two = replicas
    sent = await result(
        client, one.url, "SendMessage", send_params("stream 12 0.05", returnImmediately=True)
    )
    task_id = sent["task"]["id"]
    async with Sse(client, two.url, "SubscribeToTask", {"id": task_id}) as live:
        frames = await live.rest()
    ids = [int(f[0]) for f in frames if f[0] is not None]
    assert ids == list(range(ids[0], ids[-1] + 1))  # no gap, no repeat
    assert state_of(frames[-1][1]) == COMPLETED
    chunks = [
        f[1]["result"]["artifactUpdate"] for f in frames if "artifactUpdate" in f[1]["result"]
    ]
    assert chunks  # the stream was followed live

    # A reconnect with Last-Event-ID gets the same events with the same ids, on either replica.
    for replica in (two, one):
        headers = {"Last-Event-ID": "3"}
        async with Sse(client, replica.url, "SubscribeToTask", {"id": task_id}, headers) as again:
            replayed = await again.rest()
        assert [int(f[0]) for f in replayed] == list(range(4, ids[-1] + 1))
        tail = [f for f in frames if f[0] is not None and int(f[0]) > 3]
        assert [f[1]["result"] for f in replayed][-len(tail) :] == [f[1]["result"] for f in tail]
    stored = await result(client, one.url, "GetTask", {"id": task_id})
    assert len(stored["artifacts"][0]["parts"]) == 12


async def test_cancel_on_the_other_replica_stops_the_agent(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    one, two = replicas
    sent = await result(client, one.url, "SendMessage", send_params("wait", returnImmediately=True))
    task_id = sent["task"]["id"]
    async with Sse(client, one.url, "SubscribeToTask", {"id": task_id}) as watcher:
        first = await watcher.next()
        assert first is not None
        canceled = await result(client, two.url, "CancelTask", {"id": task_id})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
        with anyio.fail_after(10):
            frames = await watcher.rest()
    assert state_of(frames[-1][1]) == "TASK_STATE_CANCELED"
    again = await rpc(client, one.url, "CancelTask", {"id": task_id})
    assert again["error"]["code"] == -32002  # not cancelable: it is canceled
    with anyio.fail_after(10):
        while f"task {task_id} was finished elsewhere" not in one.output():
            await anyio.sleep(0.05)


async def test_concurrent_updates_from_both_replicas(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    one, two = replicas
    ctx = str(uuid.uuid4())
    sent: list[str] = []

    async def send(replica: Replica, i: int) -> None:
        params = send_params(f"echo {i}")
        params["message"]["contextId"] = ctx
        task = (await result(client, replica.url, "SendMessage", params))["task"]
        assert task["status"]["state"] == COMPLETED
        sent.append(task["id"])

    async with anyio.create_task_group() as group:
        for i in range(40):
            group.start_soon(send, replicas[i % 2], i)
    for replica in replicas:
        listed = await result(client, replica.url, "ListTasks", {"contextId": ctx, "pageSize": 100})
        assert sorted(t["id"] for t in listed["tasks"]) == sorted(sent)
        assert listed["totalSize"] == 40

    # Two follow-ups to one task, at once, one through each replica (the agent takes its
    # time, so both usually run): every follow-up that was answered is in the history.
    asked = (await result(client, one.url, "SendMessage", send_params("ask")))["task"]
    assert asked["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    replies: dict[str, dict[str, Any]] = {}

    async def follow_up(replica: Replica, text: str) -> None:
        params = send_params(text)
        params["message"]["taskId"] = asked["id"]
        replies[text] = await rpc(client, replica.url, "SendMessage", params)

    async with anyio.create_task_group() as group:
        group.start_soon(follow_up, one, "from one")
        group.start_soon(follow_up, two, "from two")
    final = await result(client, two.url, "GetTask", {"id": asked["id"]})
    texts = [p["text"] for m in final["history"] for p in m["parts"]]
    answered = [text for text, reply in replies.items() if "result" in reply]
    assert answered
    assert all(text in texts for text in answered)
    for reply in replies.values():
        if "error" in reply:  # it arrived after the other one had finished the task
            assert reply["error"]["code"] == -32004, reply
    assert final["status"]["state"] == COMPLETED


async def test_kill_9_of_the_running_replica_fails_its_tasks(
    redis_url: str, prefix: str, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    """The survivor fails the dead replica's tasks: its subscribers get the final event,
    and so do the tasks' webhooks (queued and delivered by the survivor)."""
    lease_ttl = 2.0
    doomed = Replica("aiohttp", redis_url, prefix, tmp_path / "doomed.log", lease_ttl=lease_ttl)
    survivor = Replica(
        "starlette", redis_url, prefix, tmp_path / "survivor.log", lease_ttl=lease_ttl
    )
    try:
        async with Receiver().running() as receiver:
            doomed.wait_ready()
            survivor.wait_ready()
            tasks = []
            for _ in range(3):
                params = send_params("wait", returnImmediately=True)
                params["configuration"]["taskPushNotificationConfig"] = {"url": receiver.url}
                sent = await result(client, doomed.url, "SendMessage", params)
                tasks.append(sent["task"]["id"])
            async with Sse(client, survivor.url, "SubscribeToTask", {"id": tasks[0]}) as watcher:
                first = await watcher.next()
                assert first is not None
                await anyio.sleep(lease_ttl / 2)  # the lease was renewed at least once
                doomed.kill()
                killed_at = time.monotonic()
                with anyio.fail_after(lease_ttl * 5):
                    frames = await watcher.rest()
                took = time.monotonic() - killed_at
            final = frames[-1][1]["result"]["statusUpdate"]["status"]
            assert final["state"] == "TASK_STATE_FAILED"
            assert final["message"]["parts"][0]["text"] == HOST_LOST_TEXT
            print(f"\nkill -9 to final event: {took:.2f} s (lease_ttl {lease_ttl} s)")
            with anyio.fail_after(10):  # the others fail together with the first
                for task_id in tasks:
                    while (await result(client, survivor.url, "GetTask", {"id": task_id}))[
                        "status"
                    ]["state"] != "TASK_STATE_FAILED":
                        await anyio.sleep(0.05)
            with anyio.fail_after(10):
                while len(failed_pushes(receiver)) < len(tasks):
                    await anyio.sleep(0.05)
            assert sorted(failed_pushes(receiver)) == sorted(tasks)
    finally:
        doomed.kill()
        survivor.stop()


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
async def test_a_replica_stopped_cleanly_fails_and_releases_its_tasks_at_once(
    adapter: str, redis_url: str, prefix: str, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    """SIGTERM: the stopping replica fails its own running tasks (after its grace), so the
    survivor's subscriber hears it at once, not after the lease (a minute here)."""
    lease_ttl = 60.0
    stopping = Replica(adapter, redis_url, prefix, tmp_path / "stopping.log", lease_ttl=lease_ttl)
    survivor = Replica(
        "starlette", redis_url, prefix, tmp_path / "survivor.log", lease_ttl=lease_ttl
    )
    try:
        stopping.wait_ready()
        survivor.wait_ready()
        sent = await result(
            client, stopping.url, "SendMessage", send_params("wait", returnImmediately=True)
        )
        task_id = sent["task"]["id"]
        async with Sse(client, survivor.url, "SubscribeToTask", {"id": task_id}) as watcher:
            assert await watcher.next() is not None
            stopping.process.terminate()
            with anyio.fail_after(20):  # far below the lease: only the replica itself fails it
                frames = await watcher.rest()
                exit_code = await anyio.to_thread.run_sync(stopping.process.wait)
        final = frames[-1][1]["result"]["statusUpdate"]["status"]
        assert final["state"] == "TASK_STATE_FAILED"
        assert final["message"]["parts"][0]["text"] == SHUTDOWN_TEXT
        assert exit_code in (0, -15)  # uvicorn re-raises SIGTERM once it has shut down
        redis = Redis.from_url(redis_url)
        try:
            assert await redis.zcard(f"{prefix}replicas") == 1  # only the survivor is left
        finally:
            await redis.aclose()
    finally:
        stopping.kill()
        survivor.stop()


def failed_pushes(receiver: Receiver) -> list[str]:
    """The tasks whose FAILED status the webhook received."""
    return [
        body["statusUpdate"]["taskId"]  # type: ignore[index]
        for body in receiver.bodies
        if body.get("statusUpdate", {}).get("status", {}).get("state")  # type: ignore[union-attr]
        == "TASK_STATE_FAILED"
    ]
