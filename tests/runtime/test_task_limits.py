"""How large one task may grow (`TaskLimits`), and the in-memory budgets seen through a server.

Every test drives ``A2AServer.handle`` with bytes, on both writer paths (``writer_path`` in
conftest) and under asyncio and trio. A client's message over a limit is InvalidParams on
JSON-RPC and REST, before anything is written or the agent called; an agent going over one
fails its task with a status message saying which, and is stopped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec
import pytest

from a2a_core.http import HttpResponse
from a2a_core.server import (
    A2AServer,
    Backend,
    InMemoryBackend,
    InputRequired,
    TaskContext,
    TaskLimits,
)
from helpers.a2a_client import Client, make_card, user_message
from runtime.general_backend import GeneralPathBackend

pytestmark = pytest.mark.anyio


def backend_on(writer_path: str, **options: Any) -> tuple[Backend, InMemoryBackend]:
    """The backend a test's server gets on its writer path, and the in-memory one inside."""
    if writer_path == "general":
        general = GeneralPathBackend(**options)
        return general, general.inner
    inner = InMemoryBackend(**options)
    return inner, inner


def send(text: str, **kw: Any) -> dict[str, Any]:
    return {"message": user_message(text, **kw)}


async def rest_send(client: Client, params: dict[str, Any]) -> HttpResponse:
    response = await client.server.handle(
        client.request("POST", "/message:send", json.dumps(params).encode())
    )
    assert isinstance(response, HttpResponse)
    return response


def assert_refused_on_rest(response: HttpResponse, says: str) -> None:
    error = json.loads(response.body)["error"]
    assert (response.status, error["status"]) == (400, "INVALID_ARGUMENT")
    assert says in error["message"]


async def test_limits_are_checked_when_built() -> None:
    with pytest.raises(ValueError, match="max_events"):
        TaskLimits(max_events=2)
    with pytest.raises(ValueError, match="max_history_bytes"):
        TaskLimits(max_history_bytes=0)
    assert TaskLimits(max_events=None, max_artifact_bytes=None).max_history_messages == 1_000


async def test_a_message_over_the_limit_is_refused_on_both_bindings_and_nothing_is_written(
    writer_path: str,
) -> None:
    calls: list[str] = []

    async def echo(ctx: TaskContext) -> str:
        calls.append(ctx.text)
        return ctx.text

    backend, inner = backend_on(writer_path)
    limits = TaskLimits(max_history_bytes=1_000)
    async with A2AServer(echo, card=make_card(), backend=backend, task_limits=limits) as server:
        client = Client(server)
        rpc = await client.error("SendMessage", send("x" * 2_000))
        streamed = await client.error("SendStreamingMessage", send("x" * 2_000, mid="m2"))
        rest = await rest_send(client, send("x" * 2_000, mid="m3"))
        listed = await client.result("ListTasks", {})
        fits = await client.result("SendMessage", send("x" * 500, mid="m4"))
    for error in (rpc, streamed):
        assert error["code"] == -32602
        assert "at most 1000 bytes of messages" in error["message"]
    assert_refused_on_rest(rest, "at most 1000 bytes of messages")
    assert listed["totalSize"] == 0
    assert calls == ["x" * 500]  # the agent never saw a refused message
    assert fits["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    # Only the task that fitted is held (its store blob and its three events).
    assert len(inner.store) == len(inner.event_log) == 1


async def test_a_follow_up_over_the_limits_is_refused_and_loses_nothing(
    writer_path: str,
) -> None:
    calls: list[str] = []

    async def ask(ctx: TaskContext) -> str | InputRequired:
        calls.append(ctx.text)
        return InputRequired("more?") if ctx.text != "done" else "thanks"

    backend, inner = backend_on(writer_path)
    limits = TaskLimits(max_history_bytes=2_000, max_history_messages=4)
    async with A2AServer(ask, card=make_card(), backend=backend, task_limits=limits) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send("hi")))["task"]
        task_id = task["id"]
        before = await client.result("GetTask", {"id": task_id})
        log_before = await inner.event_log.read(task_id)
        too_big = await client.error("SendMessage", send("x" * 2_000, task_id=task_id, mid="m2"))
        too_big_rest = await rest_send(client, send("x" * 2_000, task_id=task_id, mid="m3"))
        after = await client.result("GetTask", {"id": task_id})
        log_after = await inner.event_log.read(task_id)
        # Messages: hi, more?, then again and more? fill the four; a fifth is refused.
        again = await client.result("SendMessage", send("again", task_id=task_id, mid="m4"))
        too_many = await client.error("SendMessage", send("done", task_id=task_id, mid="m5"))
        too_many_rest = await rest_send(client, send("done", task_id=task_id, mid="m6"))
    assert too_big["code"] == -32602 and "over its limit of 2000 bytes" in too_big["message"]
    assert_refused_on_rest(too_big_rest, "over its limit of 2000 bytes")
    assert after == before  # the task as it was, still waiting for its answer
    assert len(log_after) == len(log_before)
    assert again["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert too_many["code"] == -32602 and "limit of 4 messages" in too_many["message"]
    assert_refused_on_rest(too_many_rest, "limit of 4 messages")
    assert calls == ["hi", "again"]


async def test_a_follow_up_to_a_task_whose_log_is_full_is_refused(writer_path: str) -> None:
    async def ask(ctx: TaskContext) -> InputRequired:
        return InputRequired("more?")

    backend, inner = backend_on(writer_path)
    limits = TaskLimits(max_events=5)
    async with A2AServer(ask, card=make_card(), backend=backend, task_limits=limits) as server:
        client = Client(server)
        task_id = (await client.result("SendMessage", send("hi")))["task"]["id"]
        # Events: the task, input-required; the follow-up's working, input-required (4).
        await client.result("SendMessage", send("a", task_id=task_id, mid="m2"))
        full = await client.error("SendMessage", send("b", task_id=task_id, mid="m3"))
        task = await client.result("GetTask", {"id": task_id})
    assert full["code"] == -32602 and "limit of 5 events" in full["message"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert len(await inner.event_log.read(task_id)) == 4


async def test_an_agent_streaming_over_the_artifact_limit_fails_the_task_and_stops() -> None:
    yielded: list[int] = []
    closed: list[bool] = []

    async def chatty(ctx: TaskContext) -> AsyncIterator[str]:
        try:
            for i in range(100):
                yielded.append(i)
                yield "c" * 100
        finally:
            closed.append(True)

    limits = TaskLimits(max_artifact_bytes=1_000)
    async with A2AServer(chatty, card=make_card(), task_limits=limits) as server:
        client = Client(server)
        frames = await client.stream("SendStreamingMessage", send("go"))
        task_id = frames[0][1]["result"]["task"]["id"]
        task = await client.result("GetTask", {"id": task_id})
    final = frames[-1][1]["result"]["statusUpdate"]["status"]
    assert final["state"] == "TASK_STATE_FAILED"
    assert final["message"]["parts"] == [
        {"text": "The task went over the server's limit of 1000 bytes of artifacts."}
    ]
    assert task["status"] == final
    kept = "".join(p["text"] for p in task["artifacts"][0]["parts"])
    assert 0 < len(kept) <= 1_000
    assert len(yielded) < 100 and closed == [True]  # stopped at the chunk that went over


async def test_an_answer_over_the_artifact_limit_fails_the_task() -> None:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    limits = TaskLimits(max_artifact_bytes=1_000)
    async with A2AServer(echo, card=make_card(), task_limits=limits) as server:
        client = Client(server)
        task = (await client.result("SendMessage", send("x" * 2_000)))["task"]
        small = (await client.result("SendMessage", send("x" * 500, mid="m2")))["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "limit of 1000 bytes of artifacts" in task["status"]["message"]["parts"][0]["text"]
    assert "artifacts" not in task
    assert small["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_the_whole_task_is_held_to_max_task_bytes(writer_path: str) -> None:
    """A new message over the limit, a follow-up that would take the task over it (the task
    stays input-required), and an answer that would (the task fails)."""

    async def agent(ctx: TaskContext) -> str | InputRequired:
        return ctx.text if ctx.text.startswith("echo") else InputRequired("more?")

    backend, _ = backend_on(writer_path)
    limits = TaskLimits(max_task_bytes=3_000)
    async with A2AServer(agent, card=make_card(), backend=backend, task_limits=limits) as server:
        client = Client(server)
        new_too_big = await client.error("SendMessage", send("x" * 3_500))
        task_id = (await client.result("SendMessage", send("x" * 1_200, mid="m2")))["task"]["id"]
        before = await client.result("GetTask", {"id": task_id})
        follow_up = await client.error("SendMessage", send("y" * 2_000, task_id=task_id, mid="m3"))
        follow_up_rest = await rest_send(client, send("y" * 2_000, task_id=task_id, mid="m4"))
        after = await client.result("GetTask", {"id": task_id})
        answered = await client.result("SendMessage", send("echo" + "z" * 1_700, mid="m5"))
    assert new_too_big["code"] == -32602
    assert "a task holds at most 3000 bytes in all" in new_too_big["message"]
    assert follow_up["code"] == -32602
    assert "over its limit of 3000 bytes in all" in follow_up["message"]
    assert_refused_on_rest(follow_up_rest, "over its limit of 3000 bytes in all")
    assert after == before and after["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    status = answered["task"]["status"]
    assert status["state"] == "TASK_STATE_FAILED"
    assert "limit of 3000 bytes in all" in status["message"]["parts"][0]["text"]


def test_the_task_limit_is_lowered_to_what_the_backend_stores() -> None:
    class Small:
        max_task_bytes = 1_000

    assert TaskLimits().fitted_to(Small()).max_task_bytes == 1_000
    assert TaskLimits(max_task_bytes=500).fitted_to(Small()).max_task_bytes == 500
    assert TaskLimits(max_task_bytes=None).fitted_to(Small()).max_task_bytes == 1_000
    assert TaskLimits().fitted_to(object()) == TaskLimits()


@pytest.mark.parametrize(
    ("limit", "value", "says"),
    [
        ("max_history_messages", 10, "limit of 10 messages"),
        ("max_history_bytes", 2_000, "limit of 2000 bytes of messages"),
        ("max_events", 20, "limit of 20 events"),
    ],
)
async def test_an_agent_over_the_message_or_event_limits_fails_the_task(
    writer_path: str, limit: str, value: int, says: str
) -> None:
    async def steps(ctx: TaskContext) -> str:
        for i in range(100):
            await ctx.working(f"step {i}")  # each status message joins the history
        return "done"

    backend, inner = backend_on(writer_path)
    limits = TaskLimits(**{limit: value})
    async with A2AServer(steps, card=make_card(), backend=backend, task_limits=limits) as server:
        task = (await Client(server).result("SendMessage", send("go")))["task"]
        events = await inner.event_log.read(task["id"])
    status = task["status"]
    assert status["state"] == "TASK_STATE_FAILED"
    assert status["message"]["parts"] == [{"text": f"The task went over the server's {says}."}]
    held = task["history"]  # the messages before the one saying the task failed
    if limit == "max_history_messages":
        assert len(held) == 10
    elif limit == "max_history_bytes":
        assert 1_800 < sum(len(msgspec.msgpack.encode(m)) for m in held) <= 2_000
    else:
        assert len(events) == 20  # the last one kept for the end of the task


async def test_a_cancel_always_fits_in_the_log() -> None:
    gate = anyio.Event()

    async def held(ctx: TaskContext) -> None:
        await ctx.working("one")
        await ctx.working("two")  # the log is at 3 of 4: one event left, for the end
        await gate.wait()

    async with A2AServer(held, card=make_card(), task_limits=TaskLimits(max_events=4)) as server:
        client = Client(server)
        config = {"returnImmediately": True}
        task_id = (await client.result("SendMessage", {**send("go"), "configuration": config}))[
            "task"
        ]["id"]
        with anyio.fail_after(5):
            while "two" not in json.dumps(await client.result("GetTask", {"id": task_id})):
                await anyio.sleep(0.01)
        canceled = await client.result("CancelTask", {"id": task_id})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


async def test_the_end_of_a_task_is_never_refused() -> None:
    async def steps(ctx: TaskContext) -> None:
        for i in range(3):
            await ctx.working(f"step {i}")  # with the client's message: four, the limit
        await ctx.complete("done")  # a fifth, but it ends the task

    limits = TaskLimits(max_history_messages=4)
    async with A2AServer(steps, card=make_card(), task_limits=limits) as server:
        task = (await Client(server).result("SendMessage", send("go")))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "done"}]
    assert len(task["history"]) == 4


# --- the in-memory budgets, through a server -------------------------------------------


async def test_finished_tasks_and_logs_are_evicted_by_bytes_oldest_first(
    writer_path: str,
) -> None:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    backend, inner = backend_on(writer_path, max_terminal_bytes=50_000, max_closed_log_bytes=30_000)
    async with A2AServer(echo, card=make_card(), backend=backend) as server:
        client = Client(server)
        ids = []
        for i in range(8):
            task = (await client.result("SendMessage", send("x" * 10_000, mid=f"m{i}")))["task"]
            ids.append(task["id"])
        found = [
            "error" not in await client.rpc("GetTask", {"id": task_id, "historyLength": 0})
            for task_id in ids
        ]
        logged = [bool(await inner.event_log.read(task_id)) for task_id in ids]
        stored = [await inner.store.get(task_id) for task_id in ids]
    # Each task holds its message and its artifact (about 20 KB) in the store, as much in
    # its log: the two newest tasks fit the store's 50 KB, the newest log the log's 30 KB.
    assert found == [False] * 6 + [True] * 2
    assert logged == [False] * 7 + [True]
    held = sum(len(msgspec.msgpack.encode(s.task)) for s in stored if s is not None)
    assert inner.store.encoded_bytes == inner.store.terminal_bytes == held
    assert 40_000 < held <= 50_000
    assert 20_000 < inner.event_log.closed_bytes == inner.event_log.encoded_bytes <= 30_000
