"""Runtime behaviours found while building the examples, pinned down by tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_core.server import (
    A2AServer,
    ExecutionGuards,
    ImmediateEventLog,
    ImmediateTaskStore,
    InMemoryBackend,
    TaskContext,
)
from helpers.a2a_client import Client, collect, make_card, user_message

pytestmark = pytest.mark.anyio


async def echo(ctx: TaskContext) -> str:
    return ctx.text


async def test_inline_webhook_meets_the_ssrf_guard_before_the_task_exists() -> None:
    async with A2AServer(echo, card=make_card()) as server:
        client = Client(server)
        params = {
            "message": user_message("hi"),
            "configuration": {
                "taskPushNotificationConfig": {"url": "http://169.254.169.254/latest"}
            },
        }
        error = await client.error("SendMessage", params)
        listed = await client.result("ListTasks", {})
    assert error["code"] == -32602
    assert "refused" in error["message"]
    assert listed["totalSize"] == 0  # refused before any task was created


async def test_last_event_id_replays_after_the_task_finished() -> None:
    async def chunks(ctx: TaskContext) -> AsyncIterator[str]:
        yield "a"
        yield "b"

    async with A2AServer(chunks, card=make_card()) as server:
        client = Client(server)
        task = (await client.result("SendMessage", {"message": user_message("x")}))["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task["id"]}}
        ).encode()
        replay = await collect(
            await server.handle(client.request("POST", "/", body, headers={"last-event-id": "1"}))
        )
        # a client that saw the final event has nothing left: v1.0 answers -32004
        final_seq = max(int(i) for i, _ in replay if i is not None)
        caught_up = await client.rpc(
            "SubscribeToTask", {"id": task["id"]}, headers={"last-event-id": str(final_seq)}
        )
    results = [d["result"] for _, d in replay]
    assert [int(i) for i, _ in replay] == list(range(2, 2 + len(replay)))
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert caught_up["error"]["code"] == -32004


async def test_a_bounded_backend_drops_logs_and_webhooks_of_evicted_tasks() -> None:
    now = [0.0]
    backend = InMemoryBackend(task_ttl=10.0, clock=lambda: now[0])
    server = A2AServer(echo, card=make_card(push=True), backend=backend)
    async with server:
        client = Client(server)
        task = (await client.result("SendMessage", {"message": user_message("x")}))["task"]
        assert await backend.event_log.read(task["id"])
        hook = {"taskId": task["id"], "url": "https://hooks.example.com/h"}
        assert (await client.result("CreateTaskPushNotificationConfig", hook))["url"]
        assert await backend.push_config_store.list_configs(task["id"])
        now[0] = 100.0
        await client.result(
            "SendMessage", {"message": user_message("y", mid="m2")}
        )  # a write evicts
        with anyio.fail_after(5):
            while await backend.event_log.read(task["id"]):
                await anyio.sleep(0.01)
        missing = await client.error("GetTask", {"id": task["id"]})
    assert missing["code"] == -32001
    assert await backend.push_config_store.list_configs(task["id"]) == []


async def test_shutdown_cancels_running_agents_and_waits_for_them() -> None:
    started = anyio.Event()
    unwound: list[str] = []

    async def forever(ctx: TaskContext) -> None:
        await ctx.working("on it")
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.01)  # cleanup that takes a turn of the loop
                unwound.append(ctx.task_id)

    server = A2AServer(forever, card=make_card(), guards=ExecutionGuards(shutdown_grace=0.05))
    with anyio.fail_after(5):
        async with server:
            client = Client(server)
            params = {"message": user_message("x"), "configuration": {"returnImmediately": True}}
            task = (await client.result("SendMessage", params))["task"]
            await started.wait()
        # The server left only after the agent had unwound; its task was failed first.
        assert unwound == [task["id"]]
        stored = await server.backend.store.get(task["id"])
    assert stored is not None
    assert stored.task.status.state.name == "FAILED"
    assert server.runtime.executions == {}


def test_the_writer_path_is_the_one_asked_for(writer_path: str) -> None:
    # The runtime suite runs twice: on the immediate in-memory parts, and on the same parts
    # seen through the general protocols only (tests/runtime/general_backend.py).
    server = A2AServer(echo, card=make_card())
    immediate = isinstance(server.backend.store, ImmediateTaskStore) and isinstance(
        server.backend.event_log, ImmediateEventLog
    )
    assert immediate is (writer_path == "immediate")


async def test_show_errors_puts_the_agents_exception_in_the_failed_status() -> None:
    from a2a_core.server._runtime import FAILURE_TEXT, MAX_DETAIL_CHARS

    async def broken(ctx: Any) -> str:
        if ctx.text == "long":
            raise ValueError("x" * (MAX_DETAIL_CHARS * 2))
        raise KeyError("the missing key")

    shown = A2AServer(broken, card=make_card(), guards=ExecutionGuards(show_errors=True))
    hidden = A2AServer(broken, card=make_card())
    texts = []
    async with shown, hidden:
        for server, text in ((shown, "hi"), (shown, "long"), (hidden, "hi")):
            params = {"message": user_message(text, mid=f"m-{text}")}
            task = (await Client(server).result("SendMessage", params))["task"]
            assert task["status"]["state"] == "TASK_STATE_FAILED"
            texts.append(task["status"]["message"]["parts"][0]["text"])
    assert texts[0] == f"{FAILURE_TEXT} [KeyError: 'the missing key']"
    assert texts[1].startswith(f"{FAILURE_TEXT} [ValueError: xxx")
    assert len(texts[1]) < MAX_DETAIL_CHARS + 100 and texts[1].endswith("…]")
    assert texts[2] == FAILURE_TEXT


def test_show_errors_beyond_loopback_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    guards = ExecutionGuards(show_errors=True)
    server = A2AServer(lambda ctx: "hi", card=make_card(), guards=guards)
    server.warn_if_console_exposed("127.0.0.1")
    assert "show_errors" not in caplog.text
    server.warn_if_console_exposed("0.0.0.0")
    assert "ExecutionGuards.show_errors is on" in caplog.text
