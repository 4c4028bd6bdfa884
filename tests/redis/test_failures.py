"""Redis going away and coming back, on a private redis-server the tests stop and start.

While Redis is down, requests that need it (and open streams, at their next look at the
store) get a clear protocol error (-32603 "Task store unavailable", no stack trace
anywhere) and the agent card is still served; when it comes back, the replicas recover by
themselves, without losing what they had acknowledged. A
restart in the middle of a stream is invisible to its subscriber (the writes retry, the
followers reconnect) when it is shorter than the write retry and the keep-alive interval.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest
from redis_harness import PrivateRedis, Replica, Sse, result, rpc, send_params, state_of

pytestmark = pytest.mark.anyio

CARD = "/.well-known/agent-card.json"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=20) as http:
        yield http


async def test_requests_fail_clearly_while_redis_is_down_and_recover(
    private_redis: PrivateRedis, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    prefix = f"a2a-test:{uuid.uuid4().hex[:8]}:"
    replica = Replica(
        "aiohttp",
        private_redis.url,
        prefix,
        tmp_path / "replica.log",
        extra=("--write-retry", "0.5", "--keep-alive", "0.5"),
    )
    try:
        replica.wait_ready()
        before = (await result(client, replica.url, "SendMessage", send_params("echo kept")))[
            "task"
        ]
        waiting = await result(
            client, replica.url, "SendMessage", send_params("wait", returnImmediately=True)
        )
        async with Sse(
            client, replica.url, "SubscribeToTask", {"id": waiting["task"]["id"]}
        ) as live:
            assert await live.next() is not None
            private_redis.stop()
            # The open stream ends with the same clear error, at its next look at the store.
            with anyio.fail_after(10):
                frames = await live.rest()
        assert frames[-1][0] is None  # an error frame has no event id
        assert frames[-1][1]["error"]["code"] == -32603
        assert frames[-1][1]["error"]["message"] == "Task store unavailable"

        for method, params in (
            ("GetTask", {"id": before["id"]}),
            ("ListTasks", {}),
            ("SendMessage", send_params("echo lost")),
        ):
            error = (await rpc(client, replica.url, method, params))["error"]
            assert error["code"] == -32603, (method, error)
            assert error["message"] == "Task store unavailable"
        rest = await client.get(
            f"{replica.url}/tasks/{before['id']}", headers={"A2A-Version": "1.0"}
        )
        assert rest.status_code == 503
        assert rest.json()["error"]["message"] == "Task store unavailable"
        card = await client.get(replica.url + CARD)
        assert card.status_code == 200 and card.json()["name"].startswith("Replica")

        private_redis.start()  # the same data: it was saved when it stopped
        with anyio.fail_after(10):
            while "error" in (
                doc := await rpc(client, replica.url, "GetTask", {"id": before["id"]})
            ):
                await anyio.sleep(0.1)
        assert doc["result"]["status"] == before["status"]
        after = (await result(client, replica.url, "SendMessage", send_params("echo back")))["task"]
        assert after["status"]["state"] == "TASK_STATE_COMPLETED"
        log = replica.output()
        assert "Traceback" not in log, log
        assert "Redis unreachable" in log
    finally:
        replica.stop()


async def test_a_redis_restart_mid_stream_loses_nothing(
    private_redis: PrivateRedis, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    prefix = f"a2a-test:{uuid.uuid4().hex[:8]}:"
    one = Replica("starlette", private_redis.url, prefix, tmp_path / "one.log")
    two = Replica("aiohttp", private_redis.url, prefix, tmp_path / "two.log")
    try:
        one.wait_ready()
        two.wait_ready()
        sent = await result(
            client, one.url, "SendMessage", send_params("stream 30 0.1", returnImmediately=True)
        )
        task_id = sent["task"]["id"]
        async with Sse(client, two.url, "SubscribeToTask", {"id": task_id}) as live:
            frames = []
            for _ in range(5):
                frame = await live.next()
                assert frame is not None
                frames.append(frame)
            private_redis.stop()
            await anyio.sleep(1.0)
            private_redis.start()
            with anyio.fail_after(30):
                frames += await live.rest()
        ids = [int(f[0]) for f in frames if f[0] is not None]
        assert ids == list(range(ids[0], ids[-1] + 1))  # no gap, no repeat
        assert state_of(frames[-1][1]) == "TASK_STATE_COMPLETED", one.output() + two.output()
        chunks = [f for f in frames if "artifactUpdate" in f[1]["result"]]
        assert len(chunks) == 30
        stored = await result(client, one.url, "GetTask", {"id": task_id})
        assert len(stored["artifacts"][0]["parts"]) == 30
        for replica in (one, two):
            assert "Traceback" not in replica.output(), replica.output()
    finally:
        one.stop()
        two.stop()
