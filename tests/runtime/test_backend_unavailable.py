"""A backend's store going away, as any backend reports it: `BackendUnavailableError`.

The backend here is a user's own (the seam's protocols over the in-memory parts, with a
switch that makes the store unreachable), so the core's side is tested without a
database: -32603 "Task store unavailable" on JSON-RPC (no internals), 503 on REST, the
card still served, one warning per outage through `OutageLog`, and service again when
the store is back.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import pytest

from a2a_core.server import A2AServer, TaskContext
from a2a_core.server.backends import (
    BackendUnavailableError,
    EventLog,
    InMemoryBackend,
    OutageLog,
    PushConfigStore,
    PushSender,
    Service,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
    VisibleFilter,
)
from a2a_core.types import Task
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio
logger = logging.getLogger("tests.flaky_store")


class FlakyStore(TaskStore):
    """The in-memory store behind a switch: ``down`` makes every call fail as a
    networked store's would."""

    def __init__(self, inner: TaskStore) -> None:
        self.inner = inner
        self.down = False
        self.outages = OutageLog(logger, "the flaky store")

    def _check(self, doing: str) -> None:
        if self.down:
            raise self.outages.failed(ConnectionRefusedError(111, "refused"), doing)
        self.outages.recovered()

    async def get(self, task_id: str) -> StoredTask | None:
        self._check("reading a task")
        return await self.inner.get(task_id)

    async def create(
        self, task: Task, *, tenant: str = "", owner: str = "", last_seq: int = 0
    ) -> StoredTask:
        self._check("creating a task")
        return await self.inner.create(task, tenant=tenant, owner=owner, last_seq=last_seq)

    async def save(self, task: Task, *, expected_version: int, last_seq: int) -> StoredTask:
        self._check("saving a task")
        return await self.inner.save(task, expected_version=expected_version, last_seq=last_seq)

    async def list_tasks(self, query: TaskQuery, visible: VisibleFilter | None = None) -> TaskPage:
        self._check("listing tasks")
        return await self.inner.list_tasks(query, visible)

    async def delete(self, task_id: str) -> None:
        self._check("deleting a task")
        await self.inner.delete(task_id)


class FlakyBackend:
    def __init__(self) -> None:
        memory = InMemoryBackend()
        self.memory = memory
        self.flaky = FlakyStore(memory.store)

    @property
    def store(self) -> TaskStore:
        return self.flaky

    @property
    def event_log(self) -> EventLog:
        return self.memory.event_log

    @property
    def push_config_store(self) -> PushConfigStore:
        return self.memory.push_config_store

    @property
    def push_sender(self) -> PushSender | None:
        return None

    @property
    def services(self) -> Sequence[Service]:
        return self.memory.services


async def echo(ctx: TaskContext) -> str:
    return ctx.text


def send(text: str) -> dict[str, Any]:
    return {"message": user_message(text)}


async def test_a_store_outage_is_a_clear_retryable_error_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = FlakyBackend()
    async with A2AServer(echo, card=make_card(), backend=backend) as server:
        client = Client(server)
        kept = (await client.result("SendMessage", send("kept")))["task"]
        backend.flaky.down = True
        caplog.set_level(logging.DEBUG, logger.name)
        for method, params in (
            ("SendMessage", send("lost")),
            ("GetTask", {"id": kept["id"]}),
            ("ListTasks", {}),
            ("SendMessage", send("lost again")),
        ):
            error = await client.error(method, params)
            assert (error["code"], error["message"]) == (-32603, "Task store unavailable")
            assert error["data"][0]["reason"] == "INTERNAL"
        rest = await server.handle(client.request("GET", f"/tasks/{kept['id']}"))
        assert rest.status == 503
        assert ("retry-after", "5") in rest.headers
        assert b"Task store unavailable" in rest.body and b"refused" not in rest.body
        card = await server.handle(client.request("GET", "/.well-known/agent-card.json"))
        assert card.status == 200

        warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1, warnings  # one outage, one line
        assert warnings[0].exc_info is None
        assert "unreachable while" in warnings[0].getMessage()

        backend.flaky.down = False
        assert await client.result("GetTask", {"id": kept["id"]}) == kept
        back = (await client.result("SendMessage", send("back")))["task"]
        assert back["status"]["state"] == "TASK_STATE_COMPLETED"
        assert "reachable again" in caplog.records[-1].getMessage()
        assert not [r for r in caplog.records if r.exc_info]


def test_the_error_is_an_internal_error_that_rest_answers_503() -> None:
    err = BackendUnavailableError()
    assert (err.code, str(err), err.http_status, err.http_status_v1_0_1) == (
        -32603,
        "Task store unavailable",
        503,
        503,
    )
    assert err.grpc_status == "UNAVAILABLE"
