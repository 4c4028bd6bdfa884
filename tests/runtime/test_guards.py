"""Execution guards (issue "safe by default", item 5) and a task that vanished from its store
under a running agent (item 7), driven through ``A2AServer.handle`` with bytes.

Time is the guards' injected clock: a test moves it and runs the sweep itself
(``server.guards.sweep()``), so nothing here depends on how fast the machine is. The sweep
the server runs on its own reads the same clock, so it can only ever agree.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_core.http import HttpResponse
from a2a_core.server import (
    A2AServer,
    AuthRequired,
    ExecutionGuards,
    InputRequired,
    StreamOptions,
    TaskContext,
)
from a2a_core.server._guards import describe_duration
from a2a_core.types import Role
from helpers.a2a_client import Client, collect, make_card, rpc_body, user_message

pytestmark = pytest.mark.anyio

NOT_WAITING = {"returnImmediately": True}


class Clock:
    """A monotonic clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def send(text: str, mid: str, **config: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"message": user_message(text, mid=mid)}
    if config:
        params["configuration"] = config
    return params


def follow_up(text: str, task_id: str, mid: str) -> dict[str, Any]:
    return {"message": user_message(text, task_id=task_id, mid=mid)}


async def until_idle(server: A2AServer) -> None:
    """Wait until no agent runs any more (an outcome, not a time)."""
    with anyio.fail_after(10):
        while server.runtime.executions:
            await anyio.sleep(0.01)


async def state_of(client: Client, task_id: str) -> str:
    task = await client.result("GetTask", {"id": task_id})
    return str(task["status"]["state"])


def status_text(task: dict[str, Any]) -> str:
    return str(task["status"]["message"]["parts"][0]["text"])


# --- admission -------------------------------------------------------------------------


async def test_a_full_server_refuses_a_message_before_writing_anything() -> None:
    release = anyio.Event()

    async def held(ctx: TaskContext) -> str:
        await ctx.working("holding")
        await release.wait()
        return "done"

    server = A2AServer(held, card=make_card(), guards=ExecutionGuards(max_running=2))
    async with server:
        client = Client(server)
        for mid in ("m1", "m2"):
            await client.result("SendMessage", send("x", mid, **NOT_WAITING))
        refused = await client.error("SendMessage", send("y", "m3", **NOT_WAITING))
        streamed = await client.rpc("SendStreamingMessage", send("y", "m4"))
        rest = await server.handle(
            client.request("POST", "/message:send", json.dumps(send("y", "m5")).encode())
        )
        listed = await client.result("ListTasks", {})
        release.set()
        await until_idle(server)
        # The slots are free again once the agents have returned.
        after = await client.result("SendMessage", send("z", "m6"))
    assert refused["code"] == -32099
    assert refused["message"] == "The server is running as many tasks as it may: try again later"
    assert refused["data"] == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "RESOURCE_EXHAUSTED",
            "domain": "a2a-py.dev",
            "metadata": {"scope": "server", "limit": "2"},
        }
    ]
    assert streamed["error"]["code"] == -32099  # a plain JSON error, before any stream
    assert isinstance(rest, HttpResponse) and rest.status == 429
    assert json.loads(rest.body)["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert listed["totalSize"] == 2  # the refused messages left no task behind
    assert after["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_waiting_task_holds_no_slot_but_its_follow_up_takes_one() -> None:
    release = anyio.Event()

    async def asks(ctx: TaskContext) -> str | InputRequired:
        if not ctx.is_follow_up:
            return InputRequired("which one?")
        await release.wait()
        return f"took {ctx.text}"

    server = A2AServer(asks, card=make_card(), guards=ExecutionGuards(max_running=1))
    async with server:
        client = Client(server)
        first = (await client.result("SendMessage", send("a", "m1")))["task"]
        second = (await client.result("SendMessage", send("b", "m2")))["task"]
        # Both wait for input: no agent runs, so the continuation of one is admitted...
        await client.result(
            "SendMessage", {**follow_up("x", first["id"], "m3"), "configuration": NOT_WAITING}
        )
        # ...and then it is the one running execution the server may have.
        refused = await client.error("SendMessage", follow_up("y", second["id"], "m4"))
        release.set()
        await until_idle(server)
        states = [await state_of(client, t["id"]) for t in (first, second)]
    assert first["status"]["state"] == second["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert refused["code"] == -32099
    # The refused follow-up changed nothing: the second task still waits for its answer.
    assert states == ["TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"]


async def test_the_per_owner_limit_counts_each_callers_running_tasks() -> None:
    release = anyio.Event()

    async def held(ctx: TaskContext) -> str:
        await release.wait()
        return "done"

    guards = ExecutionGuards(max_running=10, max_running_per_owner=2)
    server = A2AServer(held, card=make_card(), guards=guards)
    async with server:
        alice, bob = Client(server, identity="alice"), Client(server, identity="bob")
        for mid in ("m1", "m2"):
            await alice.result("SendMessage", send("x", mid, **NOT_WAITING))
        refused = await alice.error("SendMessage", send("x", "m3", **NOT_WAITING))
        admitted = await bob.result("SendMessage", send("x", "m4", **NOT_WAITING))
        release.set()
        await until_idle(server)
        again = await alice.result("SendMessage", send("x", "m5", **NOT_WAITING))
        await until_idle(server)
    assert refused["code"] == -32099
    assert refused["data"][0]["metadata"] == {"scope": "owner", "limit": "2"}
    assert admitted["task"]["id"]  # bob has his own count
    assert again["task"]["id"]  # admitted: alice's tasks have ended


@pytest.mark.parametrize(
    "options",
    [
        {"max_running": 0},
        {"max_running_per_owner": -1},
        {"max_running": 1.5},
        {"inactivity_timeout": 0},
        {"interrupted_ttl": float("inf")},
        {"interrupted_ttl": -3.0},
    ],
)
def test_guard_options_are_checked(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(options))):
        ExecutionGuards(**options)


def test_every_guard_can_be_turned_off() -> None:
    off = ExecutionGuards(
        max_running=None, max_running_per_owner=None, inactivity_timeout=None, interrupted_ttl=None
    )
    server = A2AServer(lambda ctx: "hi", card=make_card(), guards=off)
    assert server.guards.interval is None  # no sweep to run


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(86400.0, "24 h"), (3600.0, "1 h"), (5400.0, "1.5 h"), (90.0, "1.5 min"), (0.2, "0.2 s")],
)
def test_durations_read_as_a_person_writes_them(seconds: float, text: str) -> None:
    assert describe_duration(seconds) == text


# --- inactivity ------------------------------------------------------------------------


async def test_an_agent_that_reports_nothing_is_stopped_and_its_task_failed() -> None:
    clock = Clock()
    started = anyio.Event()
    reported = anyio.Event()
    report = anyio.Event()
    stopped: list[str] = []

    async def quiet(ctx: TaskContext) -> None:
        await ctx.working("started")
        started.set()
        try:
            await report.wait()
            await ctx.artifact("a sign of life")
            reported.set()
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            stopped.append(ctx.task_id)
            raise

    guards = ExecutionGuards(inactivity_timeout=30.0, clock=clock)
    async with A2AServer(quiet, card=make_card(), guards=guards) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send("x", "m1", **NOT_WAITING)))["task"]
        with anyio.fail_after(10):
            await started.wait()
        await server.guards.sweep()  # sees the WORKING write
        clock.now += 20
        report.set()
        with anyio.fail_after(10):
            await reported.wait()
        await server.guards.sweep()  # sees the artifact: silent since now
        clock.now += 29
        await server.guards.sweep()
        still = await state_of(client, task["id"])  # 49 s after the start, 29 s of silence
        clock.now += 2
        await server.guards.sweep()
        await until_idle(server)
        failed = await client.result("GetTask", {"id": task["id"]})
    assert still == "TASK_STATE_WORKING"
    assert failed["status"]["state"] == "TASK_STATE_FAILED"
    assert status_text(failed) == "The agent reported nothing for 30 s and was stopped."
    assert [a["parts"][0]["text"] for a in failed["artifacts"]] == ["a sign of life"]
    assert stopped == [task["id"]]


async def test_a_silent_agent_holding_a_blocking_send_gets_it_answered_failed() -> None:
    clock = Clock()
    stopped: list[bool] = []

    async def silent(ctx: TaskContext) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            stopped.append(True)

    guards = ExecutionGuards(inactivity_timeout=60.0, clock=clock)
    async with A2AServer(silent, card=make_card(), guards=guards) as server:
        client = Client(server)
        answer: list[dict[str, Any]] = []

        async def blocking_send() -> None:
            answer.append(await client.result("SendMessage", send("x", "m1")))

        async with anyio.create_task_group() as group:
            group.start_soon(blocking_send)
            with anyio.fail_after(10):
                while not server.runtime.executions:
                    await anyio.sleep(0.01)
            await server.guards.sweep()
            clock.now += 61
            await server.guards.sweep()
    task = answer[0]["task"]
    # The agent never reported, so the task is created FAILED once it has stopped.
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert status_text(task) == "The agent reported nothing for 1 min and was stopped."
    assert stopped == [True]


# --- expiry of interrupted tasks -------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "what"),
    [(InputRequired("your name?"), "input"), (AuthRequired("sign in first"), "authentication")],
)
async def test_a_task_left_waiting_expires_failed(
    reply: InputRequired | AuthRequired, what: str
) -> None:
    clock = Clock()

    async def waits(ctx: TaskContext) -> InputRequired | AuthRequired:
        return reply

    guards = ExecutionGuards(interrupted_ttl=3600.0, clock=clock)
    async with A2AServer(waits, card=make_card(), guards=guards) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send("x", "m1")))["task"]
        clock.now += 3599
        await server.guards.sweep()
        waiting = await state_of(client, task["id"])
        clock.now += 2
        await server.guards.sweep()
        expired = await client.result("GetTask", {"id": task["id"]})
        late = await client.error("SendMessage", follow_up("here", task["id"], "m2"))
    assert waiting == task["status"]["state"]
    assert expired["status"]["state"] == "TASK_STATE_FAILED"
    assert status_text(expired) == (
        f"Nobody answered the request for {what} within 1 h: the task expired."
    )
    assert late["code"] == -32004  # a terminal task takes no more messages


async def test_an_answered_question_does_not_expire_and_the_next_gets_its_own_time() -> None:
    clock = Clock()

    async def interview(ctx: TaskContext) -> str | InputRequired:
        asked = sum(1 for m in (ctx.task.history if ctx.task else []) if m.role is Role.AGENT)
        if asked < 2:
            return InputRequired(f"question {asked + 1}?")
        return "thanks"

    guards = ExecutionGuards(interrupted_ttl=100.0, clock=clock)
    async with A2AServer(interview, card=make_card(), guards=guards) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send("hi", "m1")))["task"]
        clock.now += 90
        answered = (await client.result("SendMessage", follow_up("one", task["id"], "m2")))["task"]
        clock.now += 20  # past the first question's deadline, not the second's
        await server.guards.sweep()
        second = await state_of(client, task["id"])
        clock.now += 81
        await server.guards.sweep()
        expired = await client.result("GetTask", {"id": task["id"]})
    assert answered["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert status_text(answered) == "question 2?"
    assert second == "TASK_STATE_INPUT_REQUIRED"
    assert expired["status"]["state"] == "TASK_STATE_FAILED"


async def test_the_sweep_runs_by_itself_while_the_server_runs() -> None:
    # No explicit sweep here: the server's own, once it sees the clock past the deadline.
    clock = Clock()

    async def waits(ctx: TaskContext) -> InputRequired:
        return InputRequired("anyone?")

    guards = ExecutionGuards(interrupted_ttl=0.2, clock=clock)
    async with A2AServer(waits, card=make_card(), guards=guards) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send("x", "m1")))["task"]
        clock.now += 1
        with anyio.fail_after(10):
            while await state_of(client, task["id"]) != "TASK_STATE_FAILED":
                await anyio.sleep(0.02)
    assert server.guards.interval == pytest.approx(0.05)


# --- a task that vanished from its store (item 7) --------------------------------------


async def test_a_task_that_vanished_under_its_agent_is_reported_once_and_never_answered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    working = anyio.Event()
    go_on = anyio.Event()
    stopped: list[str] = []

    async def slow(ctx: TaskContext) -> AsyncIterator[str]:
        await ctx.working("on it")
        working.set()
        await go_on.wait()
        try:
            yield "a chunk nobody stores"
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            stopped.append(ctx.task_id)
            raise

    caplog.set_level(logging.INFO)
    server = A2AServer(slow, card=make_card(), streams=StreamOptions(keep_alive_interval=0.05))
    async with server:
        client = Client(server)
        answer: list[dict[str, Any]] = []
        frames: list[tuple[str | None, Any]] = []

        async def blocking_send() -> None:
            answer.append(await client.rpc("SendMessage", send("x", "m1")))

        async with anyio.create_task_group() as group:
            group.start_soon(blocking_send)
            with anyio.fail_after(10):
                await working.wait()
            (task_id,) = server.runtime.executions
            stream = await server.handle(
                client.request("POST", "/", rpc_body("SubscribeToTask", {"id": task_id}))
            )

            async def read_stream() -> None:
                frames.extend(await collect(stream))

            group.start_soon(read_stream)
            await server.backend.store.delete(task_id)  # the store loses it
            go_on.set()
        await until_idle(server)
        missing = await client.error("GetTask", {"id": task_id})
    assert answer[0]["error"]["code"] == -32603
    assert answer[0]["error"]["message"] == (
        "The task store lost this task while it was being processed"
    )
    assert stopped == [task_id]  # the agent was cancelled
    assert missing["code"] == -32001
    # The subscriber saw the task as it was stored, then the stream ended: never the chunk.
    assert [f[1]["result"].keys() for f in frames] == [{"task"}]
    records = [r for r in caplog.records if task_id in r.getMessage()]
    assert [(r.levelname, r.exc_info) for r in records] == [("WARNING", None)]
    assert "vanished from the task store" in records[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
