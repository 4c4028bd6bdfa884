"""End to end over real HTTP (Starlette, a server process of its own) on each database:
tasks and events survive ``kill -9`` and a start again, and the tasks the killed process
left running are failed by the restart rule."""

from __future__ import annotations

import sys
from pathlib import Path

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
