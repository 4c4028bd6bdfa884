"""RedisTaskStore against a real Redis: concurrency, ListTasks indexes and pages, TTL, owners."""

from __future__ import annotations

import datetime as dt
import random
import uuid

import anyio
import msgspec
import pytest
from redis.asyncio import Redis

from a2a_core.errors import LocalProtocolError
from a2a_core.server import TaskQuery
from a2a_core.server.backends import ConcurrentUpdateError, InvalidPageTokenError, TaskExistsError
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
from a2aserve_redis import RedisEventLog, RedisTaskStore

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


async def test_create_get_save_with_versions(redis: Redis, prefix: str) -> None:
    store = RedisTaskStore(redis, prefix=prefix)
    task = make_task("t1")
    created = await store.create(task, tenant="acme", last_seq=1)
    assert (created.version, created.last_seq, created.tenant) == (1, 1, "acme")
    with pytest.raises(TaskExistsError):
        await store.create(task)
    got = await store.get("t1")
    assert got is not None and got.task == task and got.tenant == "acme"

    done = msgspec.structs.replace(task, status=TaskStatus(state=TaskState.COMPLETED, timestamp=T0))
    saved = await store.save(done, expected_version=1, last_seq=3)
    assert (saved.version, saved.last_seq, saved.tenant) == (2, 3, "acme")
    with pytest.raises(ConcurrentUpdateError):
        await store.save(done, expected_version=1, last_seq=4)  # stale version
    with pytest.raises(ConcurrentUpdateError):
        await store.save(make_task("unknown"), expected_version=1, last_seq=1)
    await store.delete("t1")
    assert await store.get("t1") is None
    assert await store.get("never") is None


async def test_two_replicas_never_lose_each_others_writes(
    redis: Redis, redis_url: str, prefix: str
) -> None:
    """Read-modify-write loops on two stores (two clients, as two replicas) on one task."""
    other = Redis.from_url(redis_url)
    stores = [RedisTaskStore(redis, prefix=prefix), RedisTaskStore(other, prefix=prefix)]
    await stores[0].create(make_task("shared"))
    conflicts = 0

    async def writer(store: RedisTaskStore, name: str) -> None:
        nonlocal conflicts
        for i in range(25):
            while True:
                stored = await store.get("shared")
                assert stored is not None
                task = stored.task
                updated = msgspec.structs.replace(task, history=[*task.history, note(f"{name}{i}")])
                try:
                    await store.save(
                        updated, expected_version=stored.version, last_seq=stored.last_seq + 1
                    )
                    break
                except ConcurrentUpdateError:
                    conflicts += 1

    try:
        async with anyio.create_task_group() as group:
            for k, store in enumerate(stores):
                for w in range(2):
                    group.start_soon(writer, store, f"r{k}w{w}-")
        final = await stores[1].get("shared")
    finally:
        await other.aclose()
    assert final is not None
    texts = [m.parts[0].text for m in final.task.history]
    assert len(texts) == 100 and len(set(texts)) == 100  # every write kept, none twice
    assert final.version == 101
    assert final.last_seq == 100
    assert conflicts > 0  # the writers did race


async def _fill(store: RedisTaskStore, tasks: list[tuple[Task, str]]) -> None:
    limiter = anyio.CapacityLimiter(64)

    async def create(task: Task, tenant: str) -> None:
        async with limiter:
            await store.create(task, tenant=tenant)

    async with anyio.create_task_group() as group:
        for task, tenant in tasks:
            group.start_soon(create, task, tenant)


def _order(task: Task) -> tuple[dt.datetime, str]:
    assert task.status.timestamp is not None
    return task.status.timestamp, task.id


async def _all_pages(store: RedisTaskStore, query: TaskQuery) -> tuple[list[Task], int, int]:
    """Every page of a query: the tasks, the number of pages, the total reported."""
    tasks: list[Task] = []
    pages = 0
    token = ""
    totals = set()
    while True:
        page = await store.list_tasks(
            TaskQuery(
                tenant=query.tenant,
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


async def test_list_tasks_indexes_under_10k_tasks(redis: Redis, prefix: str) -> None:
    """10,000 tasks over two tenants, 50 contexts, four states and 2,000 distinct status
    times (so many ties, broken by id): every filter combination pages through exactly the
    tasks a plain Python filter and sort give, newest first, with the right totals."""
    store = RedisTaskStore(redis, prefix=prefix)
    rng = random.Random(7)
    tasks: list[tuple[Task, str]] = []
    for i in range(10_000):
        task = make_task(
            f"task-{rng.randrange(10**9):09d}-{i}",
            context_id=f"ctx-{rng.randrange(50)}",
            state=rng.choice(STATES),
            at=T0 + dt.timedelta(milliseconds=rng.randrange(2_000)),
        )
        tasks.append((task, "acme" if i % 10 else "globex"))
    await _fill(store, tasks)

    def expected(tenant: str, ctx: str, state: TaskState, after: dt.datetime | None) -> list[Task]:
        found = [
            t
            for t, tn in tasks
            if tn == tenant
            and (not ctx or t.context_id == ctx)
            and (state is TaskState.UNSPECIFIED or t.status.state is state)
            and (after is None or (t.status.timestamp is not None and t.status.timestamp >= after))
        ]
        return sorted(found, key=_order, reverse=True)

    after = T0 + dt.timedelta(milliseconds=1_500)
    cases = [
        ("acme", "", TaskState.UNSPECIFIED, None, 100),
        ("globex", "", TaskState.UNSPECIFIED, None, 37),
        ("acme", "ctx-3", TaskState.UNSPECIFIED, None, 10),
        ("acme", "", TaskState.COMPLETED, None, 100),
        ("acme", "ctx-7", TaskState.WORKING, None, 5),
        ("acme", "", TaskState.UNSPECIFIED, after, 64),
        ("acme", "ctx-9", TaskState.FAILED, after, 3),
        ("nobody", "", TaskState.UNSPECIFIED, None, 50),
    ]
    for tenant, ctx, state, since, size in cases:
        want = expected(tenant, ctx, state, since)
        query = TaskQuery(
            tenant=tenant, context_id=ctx, state=state, status_timestamp_after=since, page_size=size
        )
        got, pages, total = await _all_pages(store, query)
        assert [t.id for t in got] == [t.id for t in want], (tenant, ctx, state, since)
        assert total == len(want)
        assert pages == max(1, -(-len(want) // size))

    # A status change moves the task in every index it is in.
    moved = next(t for t, tn in tasks if tn == "acme" and t.status.state is TaskState.WORKING)
    stored = await store.get(moved.id)
    assert stored is not None
    newest = msgspec.structs.replace(
        moved, status=TaskStatus(state=TaskState.COMPLETED, timestamp=T0 + dt.timedelta(hours=1))
    )
    await store.save(newest, expected_version=stored.version, last_seq=2)
    first = await store.list_tasks(TaskQuery(tenant="acme", page_size=1))
    assert first.tasks[0].id == moved.id
    completed = await store.list_tasks(
        TaskQuery(tenant="acme", state=TaskState.COMPLETED, page_size=1)
    )
    assert completed.tasks[0].id == moved.id
    working = await store.list_tasks(TaskQuery(tenant="acme", state=TaskState.WORKING))
    assert working.total_size == len(expected("acme", "", TaskState.WORKING, None)) - 1


async def test_pages_stay_stable_while_tasks_are_added(redis: Redis, prefix: str) -> None:
    store = RedisTaskStore(redis, prefix=prefix)
    await _fill(
        store, [(make_task(f"t{i:03d}", at=T0 + dt.timedelta(seconds=i)), "") for i in range(30)]
    )
    first = await store.list_tasks(TaskQuery(page_size=10))
    # New tasks (newer than all) arrive between pages: the next pages are not shifted.
    await _fill(store, [(make_task(f"n{i}", at=T0 + dt.timedelta(hours=1)), "") for i in range(5)])
    second = await store.list_tasks(TaskQuery(page_size=10, page_token=first.next_page_token))
    assert [t.id for t in first.tasks] == [f"t{i:03d}" for i in range(29, 19, -1)]
    assert [t.id for t in second.tasks] == [f"t{i:03d}" for i in range(19, 9, -1)]
    assert second.total_size == 35


async def test_page_tokens_are_checked_and_shared_by_replicas(
    redis: Redis, redis_url: str, prefix: str
) -> None:
    store = RedisTaskStore(redis, prefix=prefix)
    await _fill(store, [(make_task(f"t{i}", context_id="a"), "") for i in range(5)])
    page = await store.list_tasks(TaskQuery(page_size=2))
    other = Redis.from_url(redis_url)
    try:
        replica = RedisTaskStore(other, prefix=prefix)  # another replica's store
        again = await replica.list_tasks(TaskQuery(page_size=2, page_token=page.next_page_token))
        assert len(again.tasks) == 2
        for bad in ("garbage", "A" * 40, page.next_page_token[:-2] + "xx"):
            with pytest.raises(InvalidPageTokenError):
                await replica.list_tasks(TaskQuery(page_token=bad))
        with pytest.raises(InvalidPageTokenError):  # a token of other filters
            await replica.list_tasks(TaskQuery(context_id="a", page_token=page.next_page_token))
    finally:
        await other.aclose()


async def test_visible_filter_applies_before_paging(redis: Redis, prefix: str) -> None:
    store = RedisTaskStore(redis, prefix=prefix)
    tasks = [(make_task(f"t{i:03d}", at=T0 + dt.timedelta(seconds=i)), "") for i in range(450)]
    await _fill(store, tasks)

    async def even(task: Task) -> bool:
        return int(task.id[1:]) % 2 == 0

    seen: list[str] = []
    token = ""
    while True:
        page = await store.list_tasks(TaskQuery(page_size=40, page_token=token), even)
        assert page.total_size == 225
        seen += [t.id for t in page.tasks]
        token = page.next_page_token
        if not token:
            break
    assert seen == [f"t{i:03d}" for i in range(448, -1, -2)]


async def test_terminal_tasks_expire_with_their_index_entries(redis: Redis, prefix: str) -> None:
    store = RedisTaskStore(redis, prefix=prefix, ttl=0.2)
    await store.create(make_task("running"))
    await store.create(make_task("done", state=TaskState.COMPLETED))
    await store.create(make_task("late"))
    stored = await store.get("late")
    assert stored is not None
    finished = msgspec.structs.replace(
        stored.task, status=TaskStatus(state=TaskState.FAILED, timestamp=T0)
    )
    await store.save(finished, expected_version=stored.version, last_seq=1)
    await redis.xadd(store.keys.log("done"), {"e": b"x"})  # its log goes with it
    assert (await store.list_tasks(TaskQuery())).total_size == 3
    await anyio.sleep(0.3)
    assert await store.sweep() == 2
    assert await store.get("done") is None and await store.get("late") is None
    assert await store.get("running") is not None
    page = await store.list_tasks(TaskQuery())
    assert [t.id for t in page.tasks] == ["running"] and page.total_size == 1
    assert await redis.exists(store.keys.log("done")) == 0
    assert await redis.zcard(store.keys.expiring) == 0
    for state in ("", TaskState.COMPLETED.value, TaskState.FAILED.value):
        for ctx in ("", "ctx"):
            assert await redis.zcard(store.keys.index("", ctx, state)) == (1 if state == "" else 0)


async def test_the_replica_writing_a_running_state_owns_the_task(redis: Redis, prefix: str) -> None:
    one = RedisTaskStore(redis, prefix=prefix, replica_id="one")
    two = RedisTaskStore(redis, prefix=prefix, replica_id="two")
    await one.create(make_task("t"))
    assert await redis.smembers(one.keys.owned("one")) == {b"t"}
    stored = await one.get("t")
    assert stored is not None
    asking = msgspec.structs.replace(
        stored.task, status=TaskStatus(state=TaskState.INPUT_REQUIRED, timestamp=T0)
    )
    stored = await one.save(asking, expected_version=stored.version, last_seq=2)
    assert await redis.smembers(one.keys.owned("one")) == set()  # waits for the client
    working = msgspec.structs.replace(
        stored.task, status=TaskStatus(state=TaskState.WORKING, timestamp=T0)
    )
    stored = await two.save(working, expected_version=stored.version, last_seq=3)  # follow-up
    assert await redis.smembers(one.keys.owned("two")) == {b"t"}
    done = msgspec.structs.replace(
        stored.task, status=TaskStatus(state=TaskState.CANCELED, timestamp=T0)
    )
    await one.save(done, expected_version=stored.version, last_seq=4)  # a cancel elsewhere
    assert await redis.smembers(one.keys.owned("two")) == set()


async def test_logged_writes_append_and_save_in_one_step(redis: Redis, prefix: str) -> None:
    """create_logged / save_logged: the event and the task together, or neither."""
    log = RedisEventLog(redis, prefix=prefix, retention=60)
    store = RedisTaskStore(redis, prefix=prefix)
    store.attach_log(log)

    def update(state: TaskState) -> StreamResponse:
        return StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id="t", context_id="ctx", status=TaskStatus(state=state, timestamp=T0)
            )
        )

    task = make_task("t", state=TaskState.SUBMITTED)
    created = await store.create_logged(task, StreamResponse(task=task))
    assert (created.version, created.last_seq) == (1, 1)
    working = msgspec.structs.replace(task, status=TaskStatus(state=TaskState.WORKING))
    saved = await store.save_logged(working, update(TaskState.WORKING), expected_version=1)
    assert (saved.version, saved.last_seq) == (2, 2)
    # A writer that lost the race appends nothing.
    with pytest.raises(ConcurrentUpdateError):
        await store.save_logged(working, update(TaskState.WORKING), expected_version=1)
    assert [e.seq for e in await log.read("t")] == [1, 2]
    # A terminal write closes the log in the same step; nothing is appended after it.
    done = msgspec.structs.replace(task, status=TaskStatus(state=TaskState.CANCELED))
    final = await store.save_logged(done, update(TaskState.CANCELED), expected_version=2)
    assert final.last_seq == 3
    assert "t" in log.closed_by_store
    await log.close("t")  # what the task writer calls next: nothing left to do
    assert await redis.xlen(log.keys.log("t")) == 4  # three events and the end marker
    assert 0 < await redis.ttl(log.keys.log("t")) <= 60
    with pytest.raises(LocalProtocolError):
        await store.save_logged(done, update(TaskState.FAILED), expected_version=3)
    with pytest.raises(TaskExistsError):
        await store.create_logged(task, StreamResponse(task=task))
    assert (await store.get("t")).last_seq == 3  # type: ignore[union-attr]


async def test_owners_are_stored_listed_by_index_and_dropped_with_the_task(
    redis: Redis, prefix: str
) -> None:
    store, other_replica = (RedisTaskStore(redis, prefix=prefix) for _ in range(2))
    for i in range(3):
        await store.create(make_task(f"a{i}", at=T0 + dt.timedelta(seconds=i)), owner="alice")
    await store.create(make_task("b0", context_id="ctx-b"), owner="bob")
    await store.create(make_task("anon"))  # the anonymous owner, ""
    got = await other_replica.get("a1")
    assert got is not None and got.owner == "alice"
    # A save keeps the owner and moves the task in the owner's state indexes too.
    done = msgspec.structs.replace(
        got.task, status=TaskStatus(state=TaskState.COMPLETED, timestamp=T0)
    )
    saved = await other_replica.save(done, expected_version=got.version, last_seq=1)
    assert saved.owner == "alice"

    first = await store.list_tasks(TaskQuery(owner="alice", page_size=2))
    rest = await store.list_tasks(
        TaskQuery(owner="alice", page_size=2, page_token=first.next_page_token)
    )
    alice_done = await store.list_tasks(TaskQuery(owner="alice", state=TaskState.COMPLETED))
    bob_in_ctx = await store.list_tasks(TaskQuery(owner="bob", context_id="ctx-b"))
    alice_in_bobs_ctx = await store.list_tasks(TaskQuery(owner="alice", context_id="ctx-b"))
    anonymous = await store.list_tasks(TaskQuery(owner=""))
    everyone = await store.list_tasks(TaskQuery())
    assert first.total_size == 3 and [t.id for t in first.tasks + rest.tasks] == ["a2", "a1", "a0"]
    assert [t.id for t in alice_done.tasks] == ["a1"] and alice_done.total_size == 1
    assert [t.id for t in bob_in_ctx.tasks] == ["b0"] and alice_in_bobs_ctx.total_size == 0
    assert [t.id for t in anonymous.tasks] == ["anon"]
    assert everyone.total_size == 5
    with pytest.raises(InvalidPageTokenError):  # a token is bound to its owner
        await store.list_tasks(TaskQuery(owner="bob", page_token=first.next_page_token))

    for task_id in ("a0", "a1", "a2"):
        await store.delete(task_id)
    for state in ("", TaskState.WORKING.value, TaskState.COMPLETED.value):
        for ctx in ("", "ctx"):
            assert await redis.zcard(store.keys.index("", ctx, state, "alice")) == 0
    assert (await store.list_tasks(TaskQuery(owner="bob"))).total_size == 1
