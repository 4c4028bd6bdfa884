"""What a logged write costs in SQL statements, pinned so it cannot creep back up, and the
lean writes keeping their promises: optimistic concurrency between processes, and a log
appended to apart from its task (the slow path) staying consistent.

Statements are counted with SQLAlchemy's ``before_cursor_execute`` (the transaction's
BEGIN and COMMIT, and the pool's pre-ping, are not statements of ours and not counted).
Before this was measured, a logged save cost 5 statements on every database and a logged
create 3, and a SendMessage answered at once 15 (a create, two saves, and the close); the
read that idempotent sends added is one more.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import msgspec
import pytest
from sqlalchemy import event

from a2a_core.server import A2AServer, TaskContext
from a2a_core.server.backends import ConcurrentUpdateError, EventLogClosedError
from a2a_core.types import (
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_sql import SqlBackend
from helpers.a2a_client import Client, make_card, user_message

pytestmark = pytest.mark.anyio

#: (logged create, logged save) statements per database.
BUDGET = {"postgresql": (1, 1), "sqlite": (3, 3), "mysql": (3, 4)}
#: Statements of one SendMessage answered at once: the read of the task a copy of the same
#: message would have started (idempotent sends: one primary-key SELECT), then the task
#: created with its three events.
SEND_BUDGET = {"postgresql": 2, "sqlite": 4, "mysql": 4}


_PUSH_JOBS = "_push_jobs "


@contextmanager
def counting(backend: SqlBackend) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(*args: Any) -> None:
        statement: str = args[2]
        if _PUSH_JOBS in statement and not statement.startswith("INSERT"):
            return  # the push worker's scans, beside the writes counted
        statements.append(statement)

    event.listen(backend.engine.sync_engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(backend.engine.sync_engine, "before_cursor_execute", count)


def task_in(state: TaskState, history: list[Message] | None = None) -> Task:
    return Task(id="t", context_id="c", status=TaskStatus(state=state), history=history or [])


def status(state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=state)
        )
    )


def note(text: str) -> Message:
    return Message(message_id=text, role=Role.USER, parts=[Part(text=text)])


async def test_statements_per_logged_write(backend: SqlBackend) -> None:
    create_budget, save_budget = BUDGET[backend.engine.dialect.name]
    store = backend.store
    submitted = task_in(TaskState.SUBMITTED)
    with counting(backend) as statements:
        stored = await store.create_logged(submitted, StreamResponse(task=submitted))
    assert len(statements) == create_budget, statements
    for state in (TaskState.WORKING, TaskState.WORKING, TaskState.COMPLETED):
        with counting(backend) as statements:
            stored = await store.save_logged(
                task_in(state), status(state), expected_version=stored.version
            )
        assert len(statements) == save_budget, statements
    assert (stored.version, stored.last_seq) == (4, 4)
    events = await backend.event_log.read("t")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert events[-1].event == status(TaskState.COMPLETED)
    again = await store.get("t")
    assert again is not None and (again.version, again.last_seq) == (4, 4)


async def test_racing_logged_writers_and_a_side_append_lose_nothing(
    backend: SqlBackend, db_url: str, prefix: str
) -> None:
    """Two backends (two processes' engines) race logged saves of one task, while events
    are also appended to its log directly (which sends the saves down the slow path).
    SQLite is a single-process backend: its two "processes" share the one engine."""
    sqlite = backend.engine.dialect.name == "sqlite"
    other = backend if sqlite else SqlBackend(db_url, prefix=prefix)
    stores = [backend.store, other.store]
    first = task_in(TaskState.WORKING)
    await stores[0].create_logged(first, StreamResponse(task=first))
    conflicts = 0
    side = 0

    async def writer(index: int, name: str) -> None:
        nonlocal conflicts
        store = stores[index]
        for i in range(8):
            while True:
                stored = await store.get("t")
                assert stored is not None
                task = stored.task
                changed = msgspec.structs.replace(task, history=[*task.history, note(f"{name}{i}")])
                try:
                    await store.save_logged(
                        changed, status(TaskState.WORKING), expected_version=stored.version
                    )
                    break
                except ConcurrentUpdateError:
                    conflicts += 1

    async def appender() -> None:
        nonlocal side
        for _ in range(5):
            await backend.event_log.append("t", status(TaskState.WORKING))
            side += 1
            await anyio.sleep(0.01)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(appender)
            for k in range(2):
                for w in range(2):
                    group.start_soon(writer, k, f"r{k}w{w}-")
        final = await stores[1].get("t")
    finally:
        if other is not backend:
            await other.engine.dispose()
    assert final is not None
    texts = [m.parts[0].text for m in final.task.history]
    assert len(texts) == 32 and len(set(texts)) == 32  # every write kept, none twice
    assert final.version == 33
    seqs = [e.seq for e in await backend.event_log.read("t")]
    assert seqs == list(range(1, 1 + 1 + 32 + side))  # one event per write, no gap
    assert final.last_seq <= seqs[-1]
    assert conflicts > 0 or sqlite  # the writers did race (SQLite's take turns)


async def test_statements_per_send_message_answered_at_once(backend: SqlBackend) -> None:
    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    async with A2AServer(echo, card=make_card(), backend=backend) as server:
        client = Client(server)
        await client.result("SendMessage", {"message": user_message("warm up")})
        with counting(backend) as statements:
            sent = await client.result("SendMessage", {"message": user_message("hello")})
        assert len(statements) == SEND_BUDGET[backend.engine.dialect.name], statements
        task = sent["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert await client.result("GetTask", {"id": task["id"]}) == task
    events = await backend.event_log.read(task["id"])
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[0].event.task is not None and events[1].event.artifact_update is not None
    assert events[2].event.status_update is not None
    with pytest.raises(EventLogClosedError):  # closed with its final event
        await backend.event_log.append(task["id"], status(TaskState.WORKING))
