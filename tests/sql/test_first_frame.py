"""A quiet agent's stream starts with its task (tests/runtime/test_first_frame.py), on
each database: the agent's answer, written in one batch, races the stream's own creation
of the task, and either way one task is created and completed."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, StreamOptions, TaskContext
from a2a_sql import SqlBackend
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("wait", [0.0005, 0.003])
async def test_an_answer_racing_the_streams_creation_creates_one_task(
    backend: SqlBackend, wait: float
) -> None:
    async def agent(ctx: TaskContext) -> str:
        await anyio.sleep(wait)
        return "done"  # one batch write of the answered task, where the store has it

    streams = StreamOptions(first_frame_wait=0.001)
    server = A2AServer(agent, card=make_card(), backend=backend, streams=streams)
    with anyio.fail_after(60):
        async with server:
            client = Client(server)
            for n in range(15):
                message = user_message("hi", mid=f"m{n}")
                frames = await client.stream("SendStreamingMessage", {"message": message})
                kinds = [next(iter(d["result"])) for _, d in frames]
                assert kinds.count("task") == 1, kinds
                result: Any = frames[-1][1]["result"]
                assert result["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
            listed = await client.result("ListTasks", {"pageSize": 100})
    assert len(listed["tasks"]) == 15
    assert {t["status"]["state"] for t in listed["tasks"]} == {"TASK_STATE_COMPLETED"}
