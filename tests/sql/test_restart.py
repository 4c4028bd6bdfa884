"""End to end over real HTTP (Starlette, a server process of its own) on each database:
tasks and events survive ``kill -9`` and a start again, and the tasks the killed process
left running are failed by the restart rule."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "redis"))  # the HTTP helpers

from redis_harness import Sse, result, send_params, state_of
from sql_server import Server

from a2a_sql import RESTART_TEXT, upgrade

pytestmark = pytest.mark.anyio


async def test_tasks_and_events_survive_kill_9(db_url: str, prefix: str, tmp_path: Path) -> None:
    await upgrade(db_url, prefix)  # the deployment step (SQLite would do it by itself)
    log = tmp_path / "server.log"
    first = Server(db_url, prefix, log)
    try:
        async with httpx.AsyncClient(timeout=20) as client:
            echoed = await result(client, first.url, "SendMessage", send_params("echo hello"))
            echo_id = echoed["task"]["id"]
            async with Sse(
                client, first.url, "SendStreamingMessage", send_params("stream 4 0.02")
            ) as s:
                streamed = await s.rest()
            stream_id = streamed[0][1]["result"]["task"]["id"]
            seen = [(f[0], f[1]["result"]) for f in streamed if f[0] is not None]
            assert state_of(streamed[-1][1]) == "TASK_STATE_COMPLETED"
            waiting = await result(
                client, first.url, "SendMessage", send_params("wait", returnImmediately=True)
            )
            wait_id = waiting["task"]["id"]
            before = {
                task_id: await result(client, first.url, "GetTask", {"id": task_id})
                for task_id in (echo_id, stream_id)
            }
            first.kill()  # no shutdown: what was acknowledged must be in the database

            second = Server(db_url, prefix, log)
            try:
                for task_id, task in before.items():  # every task as the client was told
                    assert await result(client, second.url, "GetTask", {"id": task_id}) == task
                # The same events with the same ids, replayed from the table.
                headers = {"Last-Event-ID": "0"}
                async with Sse(
                    client, second.url, "SubscribeToTask", {"id": stream_id}, headers
                ) as again:
                    replayed = [(f[0], f[1]["result"]) for f in await again.rest()]
                assert replayed[-len(seen) :] == seen
                # The task the dead process was running is failed, saying why.
                failed = await result(client, second.url, "GetTask", {"id": wait_id})
                assert failed["status"]["state"] == "TASK_STATE_FAILED"
                assert failed["status"]["message"]["parts"][0]["text"] == RESTART_TEXT
                listed = await result(client, second.url, "ListTasks", {})
                assert {t["id"] for t in listed["tasks"]} == {echo_id, stream_id, wait_id}
                assert listed["totalSize"] == 3
            finally:
                second.stop()
    finally:
        first.kill()


async def test_kill_9_mid_load_loses_nothing_a_client_was_told(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    """Clients send and stream against one process until it is killed mid-load: after a
    start again, every task a client was answered with is stored as it was told, and
    every event a client received is replayed with the same id and content."""
    await upgrade(db_url, prefix)
    log = tmp_path / "server.log"
    first = Server(db_url, prefix, log)
    answered: dict[str, dict[str, Any]] = {}  # task id -> the task a SendMessage returned
    received: dict[str, dict[str, Any]] = {}  # "task id/event id" -> the event streamed
    streams: set[str] = set()

    async def sender(client: httpx.AsyncClient, n: int) -> None:
        for i in itertools.count():
            try:
                sent = await result(client, first.url, "SendMessage", send_params(f"echo {n}-{i}"))
            except (httpx.HTTPError, AssertionError):
                return  # the process is gone
            answered[sent["task"]["id"]] = sent["task"]

    async def streamer(client: httpx.AsyncClient) -> None:
        while True:
            try:
                async with Sse(
                    client, first.url, "SendStreamingMessage", send_params("stream 5 0.02")
                ) as s:
                    while (frame := await s.next()) is not None:
                        event_id, data = frame
                        task = data["result"].get("task") or {}
                        update = data["result"].get("statusUpdate") or data["result"].get(
                            "artifactUpdate", {}
                        )
                        task_id = task.get("id") or update.get("taskId")
                        if event_id is not None and task_id:
                            streams.add(task_id)
                            received[f"{task_id}/{event_id}"] = data["result"]
            except (httpx.HTTPError, KeyError, ValueError):
                return

    try:
        async with httpx.AsyncClient(timeout=20) as client, anyio.create_task_group() as group:
            for n in range(3):
                group.start_soon(sender, client, n)
                group.start_soon(streamer, client)
            await anyio.sleep(2.0)
            first.kill()  # mid-load: requests and streams in flight
        assert answered and received, "the load never got going"
        second = Server(db_url, prefix, log)
        try:
            async with httpx.AsyncClient(timeout=20) as client:
                for task_id, told in answered.items():
                    stored = await result(client, second.url, "GetTask", {"id": task_id})
                    assert stored["status"] == told["status"]
                    assert stored["artifacts"] == told["artifacts"]
                replayed: dict[str, dict[str, Any]] = {}
                for task_id in streams:
                    headers = {"Last-Event-ID": "0"}
                    async with Sse(
                        client, second.url, "SubscribeToTask", {"id": task_id}, headers
                    ) as again:
                        for event_id, data in await again.rest():
                            if event_id is not None:
                                replayed[f"{task_id}/{event_id}"] = data["result"]
                missing = [key for key in received if replayed.get(key) != received[key]]
                assert not missing, missing[:5]
            print(
                f"\nkill -9 mid-load ({db_url.split(':')[0]}): before, clients were told "
                f"{len(answered)} answered tasks and {len(received)} streamed events "
                f"({len(streams)} streams); after the restart, {len(answered)} tasks found "
                f"as told and {len(received) - len(missing)} events replayed with their ids"
            )
        finally:
            second.stop()
    finally:
        first.kill()
