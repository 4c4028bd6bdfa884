"""Writes that ride out a short outage (``SqlBackend(write_retry=)``), without applying twice.

A create or save that finds the database unreachable is tried again. When an attempt's
reply is lost after it committed, the retry finds the id taken or the version moved; the
store then looks whether that was this very write (then it is done) or another one (then
the conflict stands). Both cases are made deterministic here: the earlier attempt is one
the test makes itself, and the attempt that follows fails as the database being
unreachable before it reaches the database (an SQLAlchemy hook of the engine raises the
core's `BackendUnavailableError`, as the fault translation does for a lost connection).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy import event

from a2a_core.errors import ResourceExhaustedError
from a2a_core.server.backends import (
    BackendUnavailableError,
    ConcurrentUpdateError,
    TaskExistsError,
)
from a2a_core.types import (
    Artifact,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_sql import SqlBackend, upgrade

pytestmark = pytest.mark.anyio


def task_in(state: TaskState, *texts: str) -> Task:
    artifacts = [Artifact(artifact_id=f"a{i}", parts=[Part(text=t)]) for i, t in enumerate(texts)]
    return Task(id="t", context_id="c", status=TaskStatus(state=state), artifacts=artifacts)


def status(state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=state)
        )
    )


def chunk(text: str) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id="t",
            context_id="c",
            artifact=Artifact(artifact_id="a0", parts=[Part(text=text)]),
        )
    )


@contextmanager
def unreachable_for(backend: SqlBackend, statements: int) -> Iterator[list[str]]:
    """The next ``statements`` statements fail as the database being unreachable, before
    they reach it; yields the statements that failed."""
    failed: list[str] = []

    def fail(*args: Any) -> None:
        if len(failed) < statements:
            failed.append(args[2])
            raise BackendUnavailableError()

    event.listen(backend.engine.sync_engine, "before_cursor_execute", fail)
    try:
        yield failed
    finally:
        event.remove(backend.engine.sync_engine, "before_cursor_execute", fail)


@pytest.fixture
async def store_backend(db_url: str, prefix: str) -> Any:
    made = SqlBackend(db_url, prefix=prefix, write_retry=5.0, push_sender=None)
    await upgrade(made.engine, prefix)
    try:
        yield made
    finally:
        await made.engine.dispose()


async def test_a_write_is_tried_again_while_the_database_is_unreachable(
    store_backend: SqlBackend,
) -> None:
    store = store_backend.store
    with unreachable_for(store_backend, 3) as failed:
        created = await store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
    assert len(failed) == 3
    assert created.version == 1
    with unreachable_for(store_backend, 2) as failed:
        saved = await store.save_logged(
            task_in(TaskState.WORKING, "one"), chunk("one"), expected_version=1
        )
    assert len(failed) == 2 and saved.version == 2
    stored = await store.get("t")
    assert stored is not None and stored.version == 2
    logged = [e.event for e in await store_backend.event_log.read("t", after=0)]
    assert logged == [status(TaskState.WORKING), chunk("one")]  # each once


async def test_a_write_whose_reply_was_lost_is_not_applied_twice(
    store_backend: SqlBackend,
) -> None:
    store = store_backend.store
    task = task_in(TaskState.WORKING)
    await store.create_logged(task, status(TaskState.WORKING))
    # The "lost reply": the same create again, its first attempt unreachable, its retry
    # finding the id taken by the identical task: that was this write, done.
    with unreachable_for(store_backend, 1):
        again = await store.create_logged(task, status(TaskState.WORKING))
    assert again.version == 1

    saved = task_in(TaskState.WORKING, "one")
    first = await store.save_logged(saved, chunk("one"), expected_version=1)
    with unreachable_for(store_backend, 1):
        retried = await store.save_logged(saved, chunk("one"), expected_version=1)
    assert (retried.version, retried.last_seq) == (first.version, first.last_seq)
    logged = [e.event for e in await store_backend.event_log.read("t", after=0)]
    assert logged == [status(TaskState.WORKING), chunk("one")]  # not appended twice

    done = task_in(TaskState.COMPLETED, "one")
    await store.save(done, expected_version=2, last_seq=first.last_seq)
    with unreachable_for(store_backend, 1):
        assert (await store.save(done, expected_version=2, last_seq=first.last_seq)).version == 3


async def test_another_writers_change_is_still_a_conflict(store_backend: SqlBackend) -> None:
    store = store_backend.store
    await store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
    await store.save_logged(task_in(TaskState.WORKING, "one"), chunk("one"), expected_version=1)
    # This write's retry finds version 2 too, made by another write (another event).
    with unreachable_for(store_backend, 1), pytest.raises(ConcurrentUpdateError):
        await store.save_logged(task_in(TaskState.WORKING, "two"), chunk("two"), expected_version=1)
    # A different task under a taken id is a taken id.
    with unreachable_for(store_backend, 1), pytest.raises(TaskExistsError):
        await store.create_logged(task_in(TaskState.SUBMITTED), status(TaskState.SUBMITTED))
    # And so is the same task of another owner: never taken for this caller's own.
    other = Task(id="u", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    await store.create_logged(other, status(TaskState.WORKING), owner="alice")
    with unreachable_for(store_backend, 1), pytest.raises(TaskExistsError):
        await store.create_logged(other, status(TaskState.WORKING), owner="mallory")
    # Without an attempt that failed unreachable, a conflict is not even looked into.
    with pytest.raises(ConcurrentUpdateError):
        await store.save_logged(task_in(TaskState.WORKING, "one"), chunk("one"), expected_version=1)


async def test_an_outage_longer_than_write_retry_is_reported(db_url: str, prefix: str) -> None:
    backend = SqlBackend(db_url, prefix=prefix, write_retry=0.3)
    await upgrade(backend.engine, prefix)
    try:
        with unreachable_for(backend, 10_000) as failed, pytest.raises(BackendUnavailableError):
            await backend.store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
        assert 2 <= len(failed) < 20  # tried again, with backoff, then gave up
        assert await backend.store.get("t") is None
    finally:
        await backend.engine.dispose()


async def _locked_row(backend: SqlBackend, seconds: float, locked: anyio.Event) -> None:
    """Hold the task row ``t`` locked (``SELECT ... FOR UPDATE``) for ``seconds``."""
    tasks = backend.tables.tasks
    async with backend.engine.connect() as conn, conn.begin():
        await conn.execute(sa.select(tasks.c.id).where(tasks.c.id == "t").with_for_update())
        locked.set()
        await anyio.sleep(seconds)


@pytest.fixture
async def impatient_backend(db_url: str, prefix: str) -> Any:
    """MariaDB/MySQL only, with lock waits that time out after 1 s (error 1205)."""
    if not db_url.startswith("mysql"):
        pytest.skip("lock wait timeouts are MariaDB's and MySQL's (error 1205)")
    init = "SET SESSION innodb_lock_wait_timeout = 1"
    made = SqlBackend(
        db_url,
        prefix=prefix,
        write_retry=6.0,
        push_sender=None,
        engine_options={"connect_args": {"init_command": init}},
    )
    await upgrade(made.engine, prefix)
    try:
        yield made
    finally:
        await made.engine.dispose()


async def test_a_write_that_waited_out_a_lock_is_tried_again(
    impatient_backend: SqlBackend, caplog: pytest.LogCaptureFixture
) -> None:
    """Another transaction holds the task's row for 2.5 s: the save's lock wait times
    out (1205) twice, and the third attempt, after the lock is gone, is applied once."""
    store = impatient_backend.store
    created = await store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
    locked = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_locked_row, impatient_backend, 2.5, locked)
        await locked.wait()
        saved = await store.save_logged(
            task_in(TaskState.WORKING, "one"), chunk("one"), expected_version=created.version
        )
    assert saved.version == created.version + 1
    stored = await store.get("t")
    assert stored is not None and stored.version == saved.version
    assert [e.seq for e in await impatient_backend.event_log.read("t")] == [1, 2]
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_contention_longer_than_write_retry_is_busy_not_an_internal_error(
    impatient_backend: SqlBackend,
) -> None:
    store = impatient_backend.store
    store.write_retry = 1.5
    created = await store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
    locked = anyio.Event()
    async with anyio.create_task_group() as tg:
        # Held well past write_retry (InnoDB's lock wait timer may fire up to a second late).
        tg.start_soon(_locked_row, impatient_backend, 8.0, locked)
        await locked.wait()
        with pytest.raises(ResourceExhaustedError, match="busy"):
            await store.save_logged(
                task_in(TaskState.WORKING, "one"), chunk("one"), expected_version=created.version
            )
    stored = await store.get("t")
    assert stored is not None and stored.version == created.version  # nothing applied
