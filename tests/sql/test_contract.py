"""The store contract, unchanged on SQLite, PostgreSQL and MariaDB: versions and
concurrency, ListTasks order, filters, pages, tokens, owners and totals, eviction, logged
writes, and the event log (follow, replay after a restart, close, forget)."""

from __future__ import annotations

import datetime as dt
import random
import uuid

import anyio
import msgspec
import pytest
import sqlalchemy as sa

from a2a_core.server.backends import (
    ConcurrentUpdateError,
    EventLogClosedError,
    InvalidPageTokenError,
    PushConfigLimitError,
    TaskExistsError,
    TaskQuery,
)
from a2a_core.types import (
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_sql import SqlBackend

pytestmark = pytest.mark.anyio

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
STATES = [TaskState.WORKING, TaskState.COMPLETED, TaskState.INPUT_REQUIRED, TaskState.FAILED]


def make_task(
    task_id: str | None = None,
    *,
    context_id: str = "ctx",
    state: TaskState = TaskState.WORKING,
    at: dt.datetime | None = T0,
) -> Task:
    return Task(
        id=task_id or str(uuid.uuid4()),
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=at),
    )


def note(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.USER, parts=[Part(text=text)])


def update(task_id: str, state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id=task_id, context_id="ctx", status=TaskStatus(state=state, timestamp=T0)
        )
    )


def with_state(task: Task, state: TaskState, at: dt.datetime | None = T0) -> Task:
    return msgspec.structs.replace(task, status=TaskStatus(state=state, timestamp=at))


async def test_create_get_save_with_versions(backend: SqlBackend) -> None:
    store = backend.store
    task = msgspec.structs.replace(make_task("t1"), history=[note("héllo ✓ \U0001f600")])
    created = await store.create(task, tenant="acme", owner="alice", last_seq=1)
    assert (created.version, created.last_seq, created.tenant, created.owner) == (
        1,
        1,
        "acme",
        "alice",
    )
    with pytest.raises(TaskExistsError):
        await store.create(task)
    got = await store.get("t1")
    assert got is not None and got.task == task and (got.tenant, got.owner) == ("acme", "alice")

    done = with_state(task, TaskState.COMPLETED)
    saved = await store.save(done, expected_version=1, last_seq=3)
    assert (saved.version, saved.last_seq, saved.tenant, saved.owner) == (2, 3, "acme", "alice")
    with pytest.raises(ConcurrentUpdateError):
        await store.save(done, expected_version=1, last_seq=4)  # stale version
    with pytest.raises(ConcurrentUpdateError):
        await store.save(make_task("unknown"), expected_version=1, last_seq=1)
    again = await store.get("t1")
    assert again is not None and again.task == done and again.version == 2
    await store.delete("t1")
    assert await store.get("t1") is None
    assert await store.get("never") is None


async def test_concurrent_writers_never_lose_each_others_writes(
    backend: SqlBackend, db_url: str, prefix: str
) -> None:
    """Read-modify-write loops of two backends (two engines, as two processes) on one task."""
    other = SqlBackend(db_url, prefix=prefix)
    stores = [backend.store, other.store]
    await stores[0].create(make_task("shared"))
    conflicts = 0

    async def writer(index: int, name: str) -> None:
        nonlocal conflicts
        store = stores[index]
        for i in range(10):
            while True:
                stored = await store.get("shared")
                assert stored is not None
                task = stored.task
                changed = msgspec.structs.replace(task, history=[*task.history, note(f"{name}{i}")])
                try:
                    await store.save(
                        changed, expected_version=stored.version, last_seq=stored.last_seq + 1
                    )
                    break
                except ConcurrentUpdateError:
                    conflicts += 1

    try:
        async with anyio.create_task_group() as group:
            for k in range(2):
                for w in range(2):
                    group.start_soon(writer, k, f"r{k}w{w}-")
        final = await stores[1].get("shared")
    finally:
        await other.engine.dispose()
    assert final is not None
    texts = [m.parts[0].text for m in final.task.history]
    assert len(texts) == 40 and len(set(texts)) == 40  # every write kept, none twice
    assert final.version == 41 and final.last_seq == 40
    assert conflicts > 0  # the writers did race


async def _all_pages(backend: SqlBackend, query: TaskQuery) -> tuple[list[Task], int, int]:
    tasks: list[Task] = []
    pages = 0
    token = ""
    totals = set()
    while True:
        page = await backend.store.list_tasks(
            TaskQuery(
                tenant=query.tenant,
                owner=query.owner,
                context_id=query.context_id,
                state=query.state,
                status_timestamp_after=query.status_timestamp_after,
                page_size=query.page_size,
                page_token=token,
            )
        )
        pages += 1
        tasks += page.tasks
        totals.add(page.total_size)
        assert len(page.tasks) <= query.page_size
        token = page.next_page_token
        if not token:
            break
    assert len(totals) == 1
    return tasks, pages, totals.pop()


def _order(task: Task) -> tuple[dt.datetime, str]:
    assert task.status.timestamp is not None
    return task.status.timestamp, task.id


async def test_list_tasks_order_filters_pages_and_totals(backend: SqlBackend) -> None:
    """600 tasks over two tenants, three owners, ten contexts, four states and 60 status
    times (many ties, broken by ids that differ in case and beyond ASCII, which collations
    other than code point order sort differently): every filter combination pages through
    exactly what a Python filter and sort give."""
    rng = random.Random(7)
    tasks: list[tuple[Task, str, str]] = []
    letters = ["a", "B", "b", "Z", "é", "É", "_", "ß", "\U0001f600", "0"]
    for i in range(600):
        task = make_task(
            f"{rng.choice(letters)}{rng.choice(letters)}-{i}",
            context_id=f"ctx-{rng.randrange(10)}",
            state=rng.choice(STATES),
            at=T0 + dt.timedelta(milliseconds=rng.randrange(60)) if i % 50 else None,
        )
        tasks.append((task, "acme" if i % 10 else "globex", rng.choice(["alice", "bob", ""])))
    limiter = anyio.CapacityLimiter(8)

    async def create(task: Task, tenant: str, owner: str) -> None:
        async with limiter:
            await backend.store.create(task, tenant=tenant, owner=owner)

    async with anyio.create_task_group() as group:
        for task, tenant, owner in tasks:
            group.start_soon(create, task, tenant, owner)

    def sort_key(task: Task) -> tuple[int, str]:
        at = task.status.timestamp
        return (-(1 << 62) if at is None else int(at.timestamp() * 1_000_000), task.id)

    def expected(query: TaskQuery) -> list[Task]:
        after = query.status_timestamp_after
        found = [
            t
            for t, tenant, owner in tasks
            if tenant == query.tenant
            and (query.owner is None or owner == query.owner)
            and (not query.context_id or t.context_id == query.context_id)
            and (query.state is TaskState.UNSPECIFIED or t.status.state is query.state)
            and (after is None or (t.status.timestamp is not None and t.status.timestamp >= after))
        ]
        return sorted(found, key=sort_key, reverse=True)

    after = T0 + dt.timedelta(milliseconds=40)
    cases = [
        TaskQuery(tenant="acme", page_size=100),
        TaskQuery(tenant="globex", page_size=7),
        TaskQuery(tenant="acme", context_id="ctx-3", page_size=10),
        TaskQuery(tenant="acme", state=TaskState.COMPLETED, page_size=33),
        TaskQuery(tenant="acme", context_id="ctx-7", state=TaskState.WORKING, page_size=5),
        TaskQuery(tenant="acme", status_timestamp_after=after, page_size=20),
        TaskQuery(tenant="acme", owner="alice", page_size=25),
        TaskQuery(tenant="acme", owner="", context_id="ctx-1", page_size=4),
        TaskQuery(tenant="acme", owner="bob", state=TaskState.FAILED, page_size=9),
        TaskQuery(tenant="acme", owner="bob", context_id="ctx-2", state=TaskState.WORKING),
        TaskQuery(tenant="nobody"),
    ]
    for query in cases:
        want = expected(query)
        got, pages, total = await _all_pages(backend, query)
        assert [t.id for t in got] == [t.id for t in want], query
        assert total == len(want)
        assert pages == max(1, -(-len(want) // query.page_size))

    # A status change moves the task in every filter.
    moved = next(t for t, tn, _ in tasks if tn == "acme" and t.status.state is TaskState.WORKING)
    stored = await backend.store.get(moved.id)
    assert stored is not None
    newest = with_state(moved, TaskState.COMPLETED, T0 + dt.timedelta(hours=1))
    await backend.store.save(newest, expected_version=stored.version, last_seq=2)
    first = await backend.store.list_tasks(TaskQuery(tenant="acme", page_size=1))
    assert first.tasks[0].id == moved.id
    completed = await backend.store.list_tasks(
        TaskQuery(tenant="acme", state=TaskState.COMPLETED, page_size=1)
    )
    assert completed.tasks[0].id == moved.id


async def test_pages_stay_stable_and_tokens_are_checked_and_shared(
    backend: SqlBackend, db_url: str, prefix: str
) -> None:
    store = backend.store
    for i in range(30):
        await store.create(make_task(f"t{i:03d}", at=T0 + dt.timedelta(seconds=i)))
    first = await store.list_tasks(TaskQuery(page_size=10))
    for i in range(5):  # newer than all, between the pages: the next page is not shifted
        await store.create(make_task(f"n{i}", at=T0 + dt.timedelta(hours=1)))
    other = SqlBackend(db_url, prefix=prefix)  # another process on the same tables
    try:
        second = await other.store.list_tasks(
            TaskQuery(page_size=10, page_token=first.next_page_token)
        )
        assert [t.id for t in first.tasks] == [f"t{i:03d}" for i in range(29, 19, -1)]
        assert [t.id for t in second.tasks] == [f"t{i:03d}" for i in range(19, 9, -1)]
        assert second.total_size == 35
        for bad in ("garbage", "A" * 40, first.next_page_token[:-2] + "xx"):
            with pytest.raises(InvalidPageTokenError):
                await other.store.list_tasks(TaskQuery(page_token=bad))
        with pytest.raises(InvalidPageTokenError):  # a token of other filters
            await other.store.list_tasks(
                TaskQuery(context_id="ctx", page_token=first.next_page_token)
            )
    finally:
        await other.engine.dispose()


async def test_visible_filter_applies_before_paging(backend: SqlBackend) -> None:
    for i in range(450):
        await backend.store.create(make_task(f"t{i:03d}", at=T0 + dt.timedelta(seconds=i)))

    async def even(task: Task) -> bool:
        return int(task.id[1:]) % 2 == 0

    seen: list[str] = []
    token = ""
    while True:
        page = await backend.store.list_tasks(TaskQuery(page_size=40, page_token=token), even)
        assert page.total_size == 225
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == [f"t{i:03d}" for i in range(448, -1, -2)]


async def _count(backend: SqlBackend, table: sa.Table) -> int:
    async with backend.engine.connect() as conn:
        return int(await conn.scalar(sa.select(sa.func.count()).select_from(table)) or 0)


async def test_terminal_tasks_expire_with_their_events_and_push_configs(
    db_url: str, prefix: str, backend: SqlBackend
) -> None:
    short = SqlBackend(db_url, prefix=prefix, task_ttl=0.2)
    store = short.store
    try:
        await store.create_logged(make_task("running"), StreamResponse(task=make_task("running")))
        done = make_task("done", state=TaskState.SUBMITTED)
        stored = await store.create_logged(done, StreamResponse(task=done))
        await short.push_config_store.set(
            TaskPushNotificationConfig(task_id="done", url="https://example.com/hook")
        )
        await store.save_logged(
            with_state(done, TaskState.COMPLETED),
            update("done", TaskState.COMPLETED),
            expected_version=stored.version,
        )
        assert (await store.list_tasks(TaskQuery())).total_size == 2
        assert await store.sweep(batch=1) == 0  # not yet
        await anyio.sleep(0.3)
        assert await store.sweep(batch=1) == 1
        assert await store.get("done") is None and await store.get("running") is not None
        assert await short.event_log.read("done") == []
        assert await short.push_config_store.list_configs("done") == []
        page = await store.list_tasks(TaskQuery())
        assert [t.id for t in page.tasks] == ["running"] and page.total_size == 1
        tables = short.tables
        assert await _count(short, tables.events) == 1
        assert await _count(short, tables.logs) == 1
        assert await _count(short, tables.push_configs) == 0
    finally:
        await short.engine.dispose()


async def test_logged_writes_append_and_save_in_one_transaction(backend: SqlBackend) -> None:
    store, log = backend.store, backend.event_log
    task = make_task("t", state=TaskState.SUBMITTED)
    created = await store.create_logged(task, StreamResponse(task=task), tenant="x", owner="o")
    assert (created.version, created.last_seq) == (1, 1)
    working = with_state(task, TaskState.WORKING)
    saved = await store.save_logged(working, update("t", TaskState.WORKING), expected_version=1)
    assert (saved.version, saved.last_seq, saved.tenant, saved.owner) == (2, 2, "x", "o")
    with pytest.raises(ConcurrentUpdateError):  # the loser of a race appends nothing
        await store.save_logged(working, update("t", TaskState.WORKING), expected_version=1)
    with pytest.raises(ConcurrentUpdateError):
        await store.save_logged(
            make_task("gone"), update("gone", TaskState.WORKING), expected_version=1
        )
    assert [e.seq for e in await log.read("t")] == [1, 2]
    assert await log.read("gone") == []
    final = await store.save_logged(
        with_state(task, TaskState.CANCELED), update("t", TaskState.CANCELED), expected_version=2
    )
    assert final.last_seq == 3
    await log.close("t")  # what the task writer calls next: nothing left to do
    with pytest.raises(EventLogClosedError):
        await store.save_logged(final.task, update("t", TaskState.FAILED), expected_version=3)
    with pytest.raises(EventLogClosedError):
        await log.append("t", update("t", TaskState.FAILED))
    with pytest.raises(TaskExistsError):
        await store.create_logged(task, StreamResponse(task=task))
    stored = await store.get("t")
    assert stored is not None and (stored.version, stored.last_seq) == (3, 3)
    events = await log.read("t")
    assert [e.seq for e in events] == [1, 2, 3]
    assert events[0].event == StreamResponse(task=task)
    assert events[2].event == update("t", TaskState.CANCELED)


async def test_event_log_follow_close_forget_and_replay_after_a_restart(
    backend: SqlBackend, db_url: str, prefix: str
) -> None:
    log = backend.event_log
    assert await log.append("a", update("a", TaskState.WORKING)) == 1
    got: list[int] = []

    async def follower() -> None:
        async for logged in log.follow("a"):
            got.append(logged.seq)

    async with anyio.create_task_group() as group:
        group.start_soon(follower)
        await anyio.sleep(0.05)
        assert got == [1]
        for _ in range(3):
            await log.append("a", update("a", TaskState.WORKING))
        with anyio.fail_after(2):
            while len(got) < 4:
                await anyio.sleep(0.01)
        await log.close("a")  # the follower ends after draining
    assert got == [1, 2, 3, 4]
    with pytest.raises(EventLogClosedError):
        await log.append("a", update("a", TaskState.FAILED))
    assert [e.seq async for e in log.follow("a", after=2)] == [3, 4]  # closed: ends

    # An idle follower ends after its timeout; a forgotten log ends its followers.
    with anyio.fail_after(2):
        assert [e async for e in log.follow("idle", idle_timeout=0.1)] == []
    await log.append("b", update("b", TaskState.WORKING))
    ended = anyio.Event()

    async def forgotten() -> None:
        async for _ in log.follow("b", after=1):
            pass
        ended.set()

    async with anyio.create_task_group() as group:
        group.start_soon(forgotten)
        await anyio.sleep(0.05)
        await log.forget("b")
        with anyio.fail_after(2):
            await ended.wait()
    assert await log.read("b") == []

    # Another process (a restart) replays the same events with the same seqs.
    again = SqlBackend(db_url, prefix=prefix)
    try:
        assert [e.seq for e in await again.event_log.read("a", after=1)] == [2, 3, 4]
        assert [e.seq async for e in again.event_log.follow("a")] == [1, 2, 3, 4]
    finally:
        await again.engine.dispose()


async def test_push_configs_are_ordered_bounded_and_dropped(
    db_url: str, prefix: str, backend: SqlBackend
) -> None:
    small = SqlBackend(db_url, prefix=prefix, max_configs_per_task=3)
    push = small.push_config_store
    try:
        await small.store.create(make_task("p"))
        first = await push.set(TaskPushNotificationConfig(task_id="p", url="https://a.example/1"))
        assert first.id == "p"  # the first config takes the task id
        second = await push.set(
            TaskPushNotificationConfig(task_id="p", url="https://a.example/2"), legacy_v0_3=True
        )
        third = await push.set(
            TaskPushNotificationConfig(task_id="p", id="z", url="https://a.example/3")
        )
        with pytest.raises(PushConfigLimitError):
            await push.set(TaskPushNotificationConfig(task_id="p", url="https://a.example/4"))
        replaced = await push.set(
            TaskPushNotificationConfig(task_id="p", id="p", url="https://a.example/again")
        )
        assert [c.id for c in await push.list_configs("p")] == ["p", second.id, third.id]
        assert await push.get("p", "p") == replaced
        assert [t.legacy_v0_3 for t in await push.targets("p")] == [False, True, False]
        await push.delete("p", second.id)
        await push.delete("p", "unknown")
        assert [c.id for c in await push.list_configs("p")] == ["p", "z"]
        await push.delete_task("p")
        assert await push.list_configs("p") == [] and await push.get("p", "z") is None
    finally:
        await small.engine.dispose()


async def test_many_tasks_created_at_once_each_with_its_first_event(backend: SqlBackend) -> None:
    """What a burst of SendMessage calls does: concurrent logged creates, each in its own
    transaction, none blocking another (MariaDB's gap locks once made them deadlock)."""
    store, log = backend.store, backend.event_log
    tasks = [make_task(f"burst-{i:02d}", state=TaskState.SUBMITTED) for i in range(24)]
    created: dict[str, int] = {}

    async def create(task: Task) -> None:
        stored = await store.create_logged(task, StreamResponse(task=task))
        created[task.id] = stored.last_seq

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for task in tasks:
                tg.start_soon(create, task)
    assert created == {task.id: 1 for task in tasks}
    for task in tasks[:3]:
        assert [e.seq for e in await log.read(task.id)] == [1]
