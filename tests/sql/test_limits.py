"""What the tables cannot hold gets the protocol's answer, alike on every database: an id
over `KEY_LENGTH` bytes, or text with U+0000 (which PostgreSQL's JSONB refuses), is
-32602 InvalidParams before anything is stored or the agent runs; looking such an id up
finds nothing. Through the server, on each database."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa

from a2a_core.server import A2AServer, InputRequired, TaskContext, TaskLimits
from a2a_core.server.observe import NoOpObserver
from a2a_sql import KEY_LENGTH, SqlBackend
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio


async def agent(ctx: TaskContext) -> Any:
    if ctx.text == "ask":
        return InputRequired("more?")
    if ctx.text == "nul please":
        return "a\x00b"  # the agent's own output: its task fails, the server does not
    return ctx.text


@pytest.fixture(params=["plain", "observed"])
async def client(backend: SqlBackend, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """The server as is, and with an observer (whose timed store wrapper must keep the
    store's check: a protocol check on Python 3.12+ does not see forwarded methods)."""
    observer = NoOpObserver() if request.param == "observed" else None
    server = A2AServer(agent, card=make_card(push=True), backend=backend, observer=observer)
    async with server:
        yield Client(server)


def message(text: str, **fields: Any) -> dict[str, Any]:
    return {"message": {**user_message(text), **fields}}


async def total(client: Client) -> int:
    return int((await client.result("ListTasks", {}))["totalSize"])


@pytest.mark.parametrize("context_id", ["c" * (KEY_LENGTH + 1), "é" * 128, "x" * 5000])
async def test_an_overlong_context_id_is_invalid_params(client: Client, context_id: str) -> None:
    error = await client.error("SendMessage", message("hi", contextId=context_id))
    assert error["code"] == -32602
    assert "message.contextId" in error["message"]
    stream = await client.error("SendStreamingMessage", message("hi", contextId=context_id))
    assert stream["code"] == -32602
    assert await total(client) == 0
    listed = await client.result("ListTasks", {"contextId": context_id})
    assert listed["tasks"] == [] and listed["totalSize"] == 0


async def test_the_longest_ids_round_trip(client: Client) -> None:
    context_id = "é" * (KEY_LENGTH // 2) + "c"  # 255 bytes
    task = (await client.result("SendMessage", message("hi", contextId=context_id)))["task"]
    assert task["contextId"] == context_id
    got = await client.result("GetTask", {"id": task["id"]})
    assert got["contextId"] == context_id
    listed = await client.result("ListTasks", {"contextId": context_id})
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    hook = {"taskId": task["id"], "id": "h" * KEY_LENGTH, "url": "https://hooks.example.com/"}
    assert (await client.result("CreateTaskPushNotificationConfig", hook))["id"] == hook["id"]


@pytest.mark.parametrize("task_id", ["t" * (KEY_LENGTH + 1), "t" * 10_000])
async def test_an_overlong_task_id_is_not_found(client: Client, task_id: str) -> None:
    for method, params in (
        ("GetTask", {"id": task_id}),
        ("CancelTask", {"id": task_id}),
        ("SendMessage", message("hi", taskId=task_id)),
    ):
        error = await client.error(method, params)
        assert error["code"] == -32001, (method, error)


async def test_an_overlong_push_config_id_is_invalid_params(client: Client) -> None:
    task = (await client.result("SendMessage", message("hi")))["task"]
    hook = {"taskId": task["id"], "id": "h" * (KEY_LENGTH + 1), "url": "https://h.example.com/"}
    error = await client.error("CreateTaskPushNotificationConfig", hook)
    assert error["code"] == -32602
    listed = await client.result("ListTaskPushNotificationConfigs", {"taskId": task["id"]})
    assert not listed.get("configs")


async def test_text_with_u0000_is_invalid_params(client: Client) -> None:
    error = await client.error("SendMessage", message("a\x00b"))
    assert error["code"] == -32602
    assert "U+0000" in error["message"]
    stream = await client.error("SendStreamingMessage", message("a\x00b"))
    assert stream["code"] == -32602
    metadata = await client.error("SendMessage", message("hi", metadata={"k": "\x00"}))
    assert metadata["code"] == -32602
    assert await total(client) == 0
    # A follow-up with one is refused too, and leaves the task as it was.
    asked = (await client.result("SendMessage", message("ask")))["task"]
    follow = message("x\x00", taskId=asked["id"], contextId=asked["contextId"])
    assert (await client.error("SendMessage", follow))["code"] == -32602
    assert await client.result("GetTask", {"id": asked["id"]}) == asked


async def test_text_that_only_looks_like_an_escaped_u0000_is_stored(client: Client) -> None:
    for text in ("\\u0000", "\\\\u0000", "a\\u0000b\u0001"):
        task = (await client.result("SendMessage", message(text)))["task"]
        got = await client.result("GetTask", {"id": task["id"]})
        assert got["artifacts"][0]["parts"][0]["text"] == text


async def test_an_agent_answering_u0000_fails_its_task(client: Client) -> None:
    task = (await client.result("SendMessage", message("nul please")))["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert (await client.result("GetTask", {"id": task["id"]}))["status"] == task["status"]


async def test_a_task_too_big_for_the_database_is_refused_before_it_is_stored(
    backend: SqlBackend, caplog: pytest.LogCaptureFixture
) -> None:
    """The largest task is the database's (MariaDB/MySQL: ``max_allowed_packet`` less
    1 MiB) or the server's default 32 MiB: follow-ups of 6 MiB to an input-required task are taken
    until the next would go over it; that one is refused with -32602 naming the limit,
    the task stays input-required, and nothing is logged as an outage."""

    async def ask(ctx: TaskContext) -> InputRequired:
        return InputRequired("more?")

    chunk = "x" * (6 << 20)
    # Messages alone would stop at max_history_bytes (16 MiB) first: only the whole task
    # is bounded here.
    limits = TaskLimits(max_history_bytes=None)
    async with A2AServer(ask, card=make_card(), backend=backend, task_limits=limits) as server:
        if backend.engine.dialect.name in ("mysql", "mariadb"):
            async with backend.engine.connect() as connection:
                packet = (await connection.execute(sa.text("SELECT @@max_allowed_packet"))).scalar()
            assert backend.max_task_bytes == int(packet) - (1 << 20)
        else:
            assert backend.max_task_bytes is None
        limit = backend.max_task_bytes or 32 << 20
        client = Client(server)
        task_id = (await client.result("SendMessage", message("hi")))["task"]["id"]
        taken = 0
        refused = None
        for n in range(8):
            caplog.clear()
            params = message(chunk, taskId=task_id, messageId=f"m{n}")
            reply = await client.rpc("SendMessage", params)
            if "error" in reply:
                refused = reply["error"]
                break
            assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            taken += 1
        after = await client.result("GetTask", {"id": task_id, "historyLength": 1})
    assert refused is not None and refused["code"] == -32602
    assert f"over its limit of {limit} bytes in all" in refused["message"]
    assert taken * len(chunk) <= limit < (taken + 1) * len(chunk) + (1 << 20)
    assert after["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_task_whose_escaped_row_is_too_big_is_refused_too(
    backend: SqlBackend, caplog: pytest.LogCaptureFixture
) -> None:
    """Backslashes take 1 byte as the limits count them, 2 in the row's JSON and 4 in the
    SQL a MySQL driver sends: the store measures what it sends, so a task under
    ``max_task_bytes`` whose row would pass ``max_allowed_packet`` is still refused with
    -32602 and keeps its state, never reported as an outage. Elsewhere it is stored."""

    async def ask(ctx: TaskContext) -> InputRequired:
        return InputRequired("more?")

    slashes = "\\" * (3 << 20)
    mysql = backend.engine.dialect.name in ("mysql", "mariadb")
    async with A2AServer(ask, card=make_card(), backend=backend) as server:
        client = Client(server)
        first = (await client.result("SendMessage", message(slashes)))["task"]
        caplog.clear()
        reply = await client.rpc(
            "SendMessage", message(slashes, taskId=first["id"], messageId="m2")
        )
        after = await client.result("GetTask", {"id": first["id"], "historyLength": 1})
    assert first["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    if mysql:
        assert reply["error"]["code"] == -32602
        assert "max_allowed_packet" in reply["error"]["message"]
    else:
        assert reply["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert after["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
