"""Concurrent requests over HTTP: the adapter serves them at the same time, not in turn."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, TaskContext
from adapters.contract import Harness, Live, make_card, send_params

pytestmark = pytest.mark.anyio

N = 20


class Barrier:
    """An agent that finishes only once all ``n`` calls are running at the same time: a
    server that handled requests one after another would never get there."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.arrived = 0
        self.all_here = anyio.Event()

    async def __call__(self, ctx: TaskContext) -> str:
        self.arrived += 1
        if self.arrived == self.n:
            self.all_here.set()
        with anyio.fail_after(10):
            await self.all_here.wait()
        return f"done {ctx.text}"


async def test_concurrent_sends_all_succeed(harness: Harness) -> None:
    barrier = Barrier(N)
    results: dict[int, Any] = {}
    async with harness.serve(A2AServer(barrier, card=make_card())) as live:

        async def send(i: int) -> None:
            results[i] = await live.result("SendMessage", send_params(str(i), mid=f"m{i}"))

        async with anyio.create_task_group() as tg:
            for i in range(N):
                tg.start_soon(send, i)
        listed = await live.result("ListTasks", {"pageSize": 100})
    assert barrier.arrived == N
    tasks = [results[i]["task"] for i in range(N)]
    assert all(t["status"]["state"] == "TASK_STATE_COMPLETED" for t in tasks)
    assert [t["artifacts"][0]["parts"][0]["text"] for t in tasks] == [f"done {i}" for i in range(N)]
    assert len({t["id"] for t in tasks}) == N
    assert listed["totalSize"] == N


async def test_concurrent_streams_and_sends_in_both_bindings(harness: Harness) -> None:
    barrier = Barrier(N)
    states: list[str] = []

    async def call(live: Live, i: int) -> None:
        params = send_params(str(i), mid=f"m{i}")
        kind = i % 4
        if kind == 0:
            task = (await live.result("SendMessage", params))["task"]
            states.append(task["status"]["state"])
        elif kind == 1:
            stream = await live.stream_rpc("SendStreamingMessage", params, id=i)
            assert all(d["id"] == i for d in stream.data)
            states.append(stream.data[-1]["result"]["statusUpdate"]["status"]["state"])
        elif kind == 2:
            response = await live.rest("POST", "/message:send", params)
            states.append(response.json()["task"]["status"]["state"])
        else:
            stream = await live.stream("POST", "/message:stream", json.dumps(params).encode())
            states.append(stream.data[-1]["statusUpdate"]["status"]["state"])

    async with (
        harness.serve(A2AServer(barrier, card=make_card())) as live,
        anyio.create_task_group() as tg,
    ):
        for i in range(N):
            tg.start_soon(call, live, i)
    assert states == ["TASK_STATE_COMPLETED"] * N
