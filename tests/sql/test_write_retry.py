"""Writes that ride out a short outage (``SqlBackend(write_retry=)``), without applying twice.

A create or save that finds the database unreachable is tried again. When an attempt's
reply is lost after it committed, the retry finds the id taken or the version moved; the
store then looks whether that was this very write (then it is done) or another one (then
the conflict stands), even when other writers changed the task between the lost reply and
the retry. Both are made deterministic with SQLAlchemy hooks of the store's engine, which
raise the core's `BackendUnavailableError` as the fault translation does for a lost
connection: `unreachable_for` fails statements before they reach the database;
`reply_lost` lets an attempt commit, then loses its reply, and keeps the database
unreachable for that engine until the test has had other writers (on engines of their
own) change the task.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
import pytest
import sqlalchemy as sa
from sqlalchemy import event

from a2a_core.errors import ResourceExhaustedError
from a2a_core.server.backends import (
    BackendUnavailableError,
    ConcurrentUpdateError,
    StoredTask,
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


class LostReply:
    """What `reply_lost` did: ``lost`` is set once a write committed and its reply was
    lost; the database stays unreachable for the engine until `end`."""

    def __init__(self) -> None:
        self.lost = anyio.Event()
        self.down = True

    def end(self) -> None:
        """The outage is over: the write's next attempt reaches the database."""
        self.down = False


@contextmanager
def reply_lost(backend: SqlBackend) -> Iterator[LostReply]:
    """The next write of ``backend``'s engine commits, and its reply is lost: where the
    write is a transaction, at its COMMIT (the hook commits on the driver's connection,
    then raises); where it is one statement committed on its own (PostgreSQL's logged
    writes, in autocommit), once the statement ran. Then every statement of the engine
    fails as unreachable, before it reaches the database, until `LostReply.end`."""
    outage = LostReply()
    wrote = False

    def lose() -> None:
        outage.lost.set()
        raise BackendUnavailableError()

    def before(*args: Any) -> None:
        if outage.lost.is_set() and outage.down:
            raise BackendUnavailableError()

    def after(conn: sa.Connection, _cursor: Any, statement: str, *args: Any) -> None:
        nonlocal wrote
        if outage.lost.is_set() or statement.lstrip().upper().startswith("SELECT"):
            return
        if conn.get_execution_options().get("isolation_level") == "AUTOCOMMIT":
            lose()  # committed by the statement itself
        wrote = True  # to be committed by the transaction's COMMIT

    def commit(conn: sa.Connection) -> None:
        if wrote and not outage.lost.is_set():
            conn.connection.dbapi_connection.commit()  # type: ignore[union-attr]
            lose()

    engine = backend.engine.sync_engine
    hooks = (("before_cursor_execute", before), ("after_cursor_execute", after))
    for name, hook in (*hooks, ("commit", commit)):
        event.listen(engine, name, hook)
    try:
        yield outage
    finally:
        for name, hook in (*hooks, ("commit", commit)):
            event.remove(engine, name, hook)


@asynccontextmanager
async def another_writer(db_url: str, prefix: str) -> AsyncIterator[SqlBackend]:
    """A backend of its own on the same tables: another process, or another replica."""
    other = SqlBackend(db_url, prefix=prefix, write_retry=0, push_sender=None)
    try:
        yield other
    finally:
        await other.engine.dispose()


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


async def lost_reply(
    backend: SqlBackend,
    write: Callable[[], Awaitable[StoredTask]],
    meanwhile: Callable[[], Awaitable[None]] | None = None,
) -> StoredTask:
    """``write()``, whose first attempt commits and loses its reply; ``meanwhile`` runs
    after that and before any retry reaches the database."""
    done: list[StoredTask] = []

    async def run() -> None:
        done.append(await write())

    with reply_lost(backend) as outage, anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            await outage.lost.wait()
            if meanwhile is not None:
                await meanwhile()
            outage.end()
    return done[0]


async def test_a_write_whose_reply_was_lost_is_not_applied_twice(
    store_backend: SqlBackend,
) -> None:
    store = store_backend.store
    task = task_in(TaskState.WORKING)
    created = await lost_reply(
        store_backend, lambda: store.create_logged(task, status(TaskState.WORKING))
    )
    assert (created.version, created.last_seq) == (1, 1)

    saved = task_in(TaskState.WORKING, "one")
    retried = await lost_reply(
        store_backend, lambda: store.save_logged(saved, chunk("one"), expected_version=1)
    )
    assert (retried.version, retried.last_seq) == (2, 2)
    logged = [e.event for e in await store_backend.event_log.read("t", after=0)]
    assert logged == [status(TaskState.WORKING), chunk("one")]  # not appended twice

    # The writes that log no event (known by the task they stored, at their version).
    done = task_in(TaskState.COMPLETED, "one")
    again = await lost_reply(
        store_backend, lambda: store.save(done, expected_version=2, last_seq=2)
    )
    assert again.version == 3
    other = Task(id="u", context_id="c", status=TaskStatus(state=TaskState.WORKING))
    assert (await lost_reply(store_backend, lambda: store.create(other))).version == 1
    stored = await store.get("t")
    assert stored is not None and (stored.task, stored.version) == (done, 3)


@pytest.mark.parametrize("lost", ["create_logged", "create_logged_many", "save_logged"])
async def test_a_lost_reply_is_recognised_after_other_writers_changed_the_task(
    store_backend: SqlBackend, db_url: str, prefix: str, lost: str
) -> None:
    """The reply of a logged write is lost; before its retry, another writer (another
    replica: an agent's chunk, then a cancel) writes the task twice. The retry finds the
    id taken or the version moved on, and its own events in the log by its write token:
    the write is done, once, and the other writers' changes stand."""
    store = store_backend.store
    store.write_retry = 30.0  # however slow the machine, the retry outlives the outage
    working = task_in(TaskState.WORKING, "one")
    if lost == "save_logged":
        await store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
        ours = [status(TaskState.WORKING), chunk("one")]

        def write() -> Awaitable[StoredTask]:
            return store.save_logged(working, chunk("one"), expected_version=1)
    elif lost == "create_logged":
        ours = [StreamResponse(task=working)]

        def write() -> Awaitable[StoredTask]:
            return store.create_logged(working, ours[0], owner="alice")
    else:
        ours = [StreamResponse(task=task_in(TaskState.WORKING)), chunk("one")]

        def write() -> Awaitable[StoredTask]:
            return store.create_logged_many(working, ours, owner="alice")

    made = 2 if lost == "save_logged" else 1  # the version the lost write made
    canceled = task_in(TaskState.CANCELED, "one", "two")
    async with another_writer(db_url, prefix) as other:

        async def meanwhile() -> None:
            two = task_in(TaskState.WORKING, "one", "two")
            await other.store.save_logged(two, chunk("two"), expected_version=made)
            await other.store.save_logged(
                canceled, status(TaskState.CANCELED), expected_version=made + 1
            )

        stored = await lost_reply(store_backend, write, meanwhile)

    # What the write made: its version, its last event's seq.
    assert (stored.task, stored.version, stored.last_seq) == (working, made, len(ours))
    if lost != "save_logged":
        assert (stored.tenant, stored.owner) == ("", "alice")
    logged = [e.event for e in await store_backend.event_log.read("t")]
    assert logged == [*ours, chunk("two"), status(TaskState.CANCELED)]  # each once
    now = await store.get("t")
    assert now is not None
    assert (now.task, now.version, now.last_seq) == (canceled, made + 2, len(logged))


async def test_a_retry_that_loses_the_database_while_it_looks_looks_again(
    store_backend: SqlBackend,
) -> None:
    """The database goes away again while the retry looks for its token: the look is
    tried again with the write, not taken for the conflict nor for the outage."""
    store = store_backend.store
    await store.create_logged(task_in(TaskState.WORKING), status(TaskState.WORKING))
    looks: list[str] = []

    def fail_the_first_look(*args: Any) -> None:
        statement: str = args[2]
        if "write_token" in statement and statement.lstrip().startswith("SELECT"):
            looks.append(statement)
            if len(looks) == 1:
                raise BackendUnavailableError()

    async def meanwhile() -> None:
        event.listen(store_backend.engine.sync_engine, "before_cursor_execute", fail_the_first_look)

    try:
        saved = await lost_reply(
            store_backend,
            lambda: store.save_logged(
                task_in(TaskState.WORKING, "one"), chunk("one"), expected_version=1
            ),
            meanwhile,
        )
    finally:
        event.remove(store_backend.engine.sync_engine, "before_cursor_execute", fail_the_first_look)
    assert len(looks) == 2
    assert (saved.version, saved.last_seq) == (2, 2)
    logged = [e.event for e in await store_backend.event_log.read("t")]
    assert logged == [status(TaskState.WORKING), chunk("one")]


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
