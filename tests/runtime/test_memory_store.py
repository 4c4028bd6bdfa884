"""The in-memory task store: round trips, optimistic concurrency, eviction, ListTasks paging.

Every test runs under asyncio and trio (``anyio_backend`` in conftest). Time is a fake clock
that the tests move; nothing sleeps.
"""

from __future__ import annotations

import base64
import datetime as dt
import logging
import random

import anyio
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace as msgspec_replace

from a2a_core.server import InMemoryTaskStore
from a2a_core.server.backends import (
    ConcurrentUpdateError,
    InvalidPageTokenError,
    TaskExistsError,
    TaskQuery,
    TaskStore,
)
from a2a_core.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

pytestmark = pytest.mark.anyio

BASE = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_task(
    task_id: str,
    *,
    state: TaskState = TaskState.COMPLETED,
    seconds: float | None = 0.0,
    context_id: str = "ctx",
    text: str = "hello",
) -> Task:
    timestamp = None if seconds is None else BASE + dt.timedelta(seconds=seconds)
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(
            state=state,
            timestamp=timestamp,
            message=Message(
                message_id=f"{task_id}-status",
                role=Role.AGENT,
                parts=[Part(text=f"status of {task_id}")],
            ),
        ),
        history=[Message(message_id=f"{task_id}-user", role=Role.USER, parts=[Part(text=text)])],
        artifacts=[Artifact(artifact_id="a1", parts=[Part(text=text * 2)])],
        metadata={"n": 1, "nested": {"list": [1, 2.5, "x", None, True]}},
    )


def expected_order(tasks: list[Task]) -> list[str]:
    """The documented order: newest status first, then task id descending, and tasks
    without a timestamp last (two stable sorts: id descending, then time)."""

    def time_key(task: Task) -> tuple[int, dt.timedelta]:
        ts = task.status.timestamp
        return (1, dt.timedelta(0)) if ts is None else (0, BASE - ts)

    by_id_desc = sorted(tasks, key=lambda t: t.id, reverse=True)
    return [t.id for t in sorted(by_id_desc, key=time_key)]


async def walk(
    store: InMemoryTaskStore,
    query: TaskQuery,
    visible: object = None,
) -> tuple[list[str], list[int]]:
    """Every page of a query: the ids in page order, and the total_size of each page."""
    ids: list[str] = []
    totals: list[int] = []
    token = ""
    for _ in range(10_000):
        page = await store.list_tasks(
            TaskQuery(
                tenant=query.tenant,
                context_id=query.context_id,
                state=query.state,
                status_timestamp_after=query.status_timestamp_after,
                page_size=query.page_size,
                page_token=token,
            ),
            visible,  # type: ignore[arg-type]
        )
        ids.extend(t.id for t in page.tasks)
        totals.append(page.total_size)
        assert len(page.tasks) <= query.page_size
        token = page.next_page_token
        if not token:
            return ids, totals
        assert page.tasks, "a page with a next token must not be empty"
    raise AssertionError("pagination did not end")


# -- round trips ------------------------------------------------------------------------


async def test_store_satisfies_the_protocol() -> None:
    store: TaskStore = InMemoryTaskStore()
    assert isinstance(store, InMemoryTaskStore)
    assert await store.get("nope") is None


async def test_create_then_get_returns_an_equal_independent_copy() -> None:
    store = InMemoryTaskStore()
    task = make_task("t1", state=TaskState.WORKING)
    created = await store.create(task, tenant="acme", last_seq=3)
    assert (created.task, created.version, created.last_seq, created.tenant) == (
        task,
        1,
        3,
        "acme",
    )

    got = await store.get("t1")
    assert got is not None
    assert got.task == task
    assert got.task is not task
    assert (got.version, got.last_seq, got.tenant) == (1, 3, "acme")

    # Mutating what came back (or what went in) changes nothing in the store.
    got.task.metadata["n"] = 99
    got.task.history.clear()
    task.artifacts.clear()
    again = await store.get("t1")
    assert again is not None
    assert again.task.metadata["n"] == 1
    assert len(again.task.history) == 1
    assert len(again.task.artifacts) == 1
    assert again.task is not got.task


async def test_save_replaces_the_task_and_bumps_the_version() -> None:
    store = InMemoryTaskStore()
    await store.create(make_task("t1", state=TaskState.WORKING), tenant="acme")
    done = make_task("t1", state=TaskState.COMPLETED, seconds=5, text="bye")
    saved = await store.save(done, expected_version=1, last_seq=7)
    assert (saved.version, saved.last_seq, saved.tenant) == (2, 7, "acme")
    got = await store.get("t1")
    assert got is not None
    assert got.task == done
    assert (got.version, got.last_seq, got.tenant) == (2, 7, "acme")
    saved = await store.save(done, expected_version=2, last_seq=8)
    assert saved.version == 3


async def test_save_with_a_stale_version_or_unknown_task_is_refused() -> None:
    store = InMemoryTaskStore()
    await store.create(make_task("t1", state=TaskState.WORKING))
    await store.save(make_task("t1", state=TaskState.WORKING), expected_version=1, last_seq=1)
    with pytest.raises(ConcurrentUpdateError):
        await store.save(make_task("t1"), expected_version=1, last_seq=2)
    with pytest.raises(ConcurrentUpdateError):
        await store.save(make_task("ghost"), expected_version=1, last_seq=1)
    got = await store.get("t1")
    assert got is not None
    assert (got.version, got.task.status.state) == (2, TaskState.WORKING)


async def test_concurrent_savers_with_the_same_version_exactly_one_wins() -> None:
    store = InMemoryTaskStore()
    await store.create(make_task("t1", state=TaskState.WORKING))
    winners: list[int] = []
    losers: list[int] = []

    async def saver(n: int) -> None:
        stored = await store.get("t1")
        assert stored is not None
        await anyio.sleep(0)  # let every saver read version 1 before anyone writes
        update = make_task("t1", state=TaskState.WORKING, seconds=n, text=f"saver {n}")
        try:
            await store.save(update, expected_version=stored.version, last_seq=n)
        except ConcurrentUpdateError:
            losers.append(n)
        else:
            winners.append(n)

    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(saver, n)

    assert len(winners) == 1
    assert sorted(winners + losers) == list(range(10))
    got = await store.get("t1")
    assert got is not None
    assert got.version == 2
    assert got.task.history[0].parts[0].text == f"saver {winners[0]}"


async def test_create_of_an_existing_id_raises() -> None:
    store = InMemoryTaskStore()
    await store.create(make_task("t1", text="first"))
    with pytest.raises(TaskExistsError):
        await store.create(make_task("t1", text="second"))
    got = await store.get("t1")
    assert got is not None
    assert got.task.history[0].parts[0].text == "first"


async def test_delete_forgets_the_task_and_is_idempotent() -> None:
    evicted: list[str] = []
    store = InMemoryTaskStore(on_evict=evicted.append)
    await store.create(make_task("t1"))
    await store.delete("t1")
    await store.delete("t1")
    await store.delete("never-there")
    assert await store.get("t1") is None
    assert (await store.list_tasks(TaskQuery())).total_size == 0
    await store.create(make_task("t1", text="again"))  # the id is free again
    assert evicted == []  # delete is the caller's own act: no hook


async def test_save_that_moves_the_timestamp_or_context_reindexes() -> None:
    store = InMemoryTaskStore()
    for i in range(3):
        await store.create(make_task(f"t{i}", state=TaskState.WORKING, seconds=i))
    await store.save(
        make_task("t0", state=TaskState.WORKING, seconds=10, context_id="other"),
        expected_version=1,
        last_seq=1,
    )
    page = await store.list_tasks(TaskQuery())
    assert [t.id for t in page.tasks] == ["t0", "t2", "t1"]
    in_ctx = await store.list_tasks(TaskQuery(context_id="ctx"))
    assert [t.id for t in in_ctx.tasks] == ["t2", "t1"]
    in_other = await store.list_tasks(TaskQuery(context_id="other"))
    assert [t.id for t in in_other.tasks] == ["t0"]


# -- eviction ---------------------------------------------------------------------------


async def test_terminal_tasks_expire_after_ttl_and_running_ones_never() -> None:
    clock = FakeClock()
    evicted: list[str] = []
    store = InMemoryTaskStore(ttl=10, clock=clock, on_evict=evicted.append)
    await store.create(make_task("done", state=TaskState.COMPLETED))
    await store.create(make_task("running", state=TaskState.WORKING))
    await store.create(make_task("waiting", state=TaskState.INPUT_REQUIRED))

    clock.now = 9.5
    assert await store.get("done") is not None
    clock.now = 10.0
    assert await store.get("done") is None
    assert evicted == ["done"]
    assert (await store.list_tasks(TaskQuery())).total_size == 2

    clock.now = 1e9
    assert await store.get("running") is not None
    assert await store.get("waiting") is not None
    assert evicted == ["done"]
    assert len(store) == 2


async def test_ttl_counts_from_when_the_task_became_terminal() -> None:
    clock = FakeClock()
    store = InMemoryTaskStore(ttl=10, clock=clock)
    await store.create(make_task("t1", state=TaskState.WORKING))
    clock.now = 100
    await store.save(make_task("t1", state=TaskState.FAILED), expected_version=1, last_seq=2)
    clock.now = 109
    assert await store.get("t1") is not None
    # A later save of the finished task does not restart its clock.
    await store.save(make_task("t1", state=TaskState.FAILED), expected_version=2, last_seq=3)
    clock.now = 110
    assert await store.get("t1") is None


async def test_an_expired_task_frees_its_id_for_create() -> None:
    clock = FakeClock()
    store = InMemoryTaskStore(ttl=1, clock=clock)
    await store.create(make_task("t1", text="old"))
    clock.now = 5
    await store.create(make_task("t1", text="new"))
    got = await store.get("t1")
    assert got is not None
    assert (got.version, got.task.history[0].parts[0].text) == (1, "new")


async def test_max_terminal_tasks_evicts_the_oldest_finished_first() -> None:
    evicted: list[str] = []
    store = InMemoryTaskStore(ttl=None, max_terminal_tasks=3, on_evict=evicted.append)
    # Created in order r0, d0, r1, d1..., but "first" finishes before every other.
    await store.create(make_task("first", state=TaskState.WORKING))
    for i in range(5):
        await store.create(make_task(f"r{i}", state=TaskState.WORKING))
        if i == 0:
            await store.save(
                make_task("first", state=TaskState.CANCELED), expected_version=1, last_seq=1
            )
        await store.create(make_task(f"d{i}", state=TaskState.REJECTED))

    assert evicted == ["first", "d0", "d1"]
    for gone in evicted:
        assert await store.get(gone) is None
    for kept in ["d2", "d3", "d4"]:
        assert await store.get(kept) is not None
    for i in range(5):
        assert await store.get(f"r{i}") is not None
    assert len(store) == 8


async def test_max_terminal_tasks_zero_keeps_only_running_tasks() -> None:
    store = InMemoryTaskStore(max_terminal_tasks=0)
    await store.create(make_task("running", state=TaskState.WORKING))
    await store.create(make_task("done"))
    assert await store.get("done") is None
    assert await store.get("running") is not None


async def test_no_bounds_keep_everything() -> None:
    clock = FakeClock()
    store = InMemoryTaskStore(ttl=None, max_terminal_tasks=None, clock=clock)
    for i in range(50):
        await store.create(make_task(f"t{i}"))
    clock.now = 1e12
    assert (await store.list_tasks(TaskQuery())).total_size == 50


async def test_async_on_evict_hook_is_awaited() -> None:
    clock = FakeClock()
    seen: list[str] = []

    async def hook(task_id: str) -> None:
        await anyio.sleep(0)
        seen.append(task_id)

    store = InMemoryTaskStore(ttl=1, clock=clock, on_evict=hook)
    await store.create(make_task("a"))
    await store.create(make_task("b"))
    clock.now = 2
    await store.list_tasks(TaskQuery())
    assert seen == ["a", "b"]


async def test_a_failing_on_evict_hook_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()

    def hook(task_id: str) -> None:
        raise RuntimeError(f"boom {task_id}")

    store = InMemoryTaskStore(ttl=1, clock=clock, on_evict=hook)
    await store.create(make_task("a"))
    clock.now = 2
    with caplog.at_level(logging.ERROR, logger="a2a_core.server._memory_store"):
        assert await store.get("a") is None
    assert any("on_evict" in r.getMessage() and r.exc_info for r in caplog.records)


async def test_deleted_terminal_tasks_do_not_count_against_the_bound() -> None:
    evicted: list[str] = []
    store = InMemoryTaskStore(ttl=None, max_terminal_tasks=2, on_evict=evicted.append)
    await store.create(make_task("a"))
    for i in range(500):
        await store.create(make_task(f"gone{i}"))
        await store.delete(f"gone{i}")
    await store.create(make_task("b"))
    assert evicted == []
    # White-box: the stale queue entries of deleted tasks were compacted away, so churn
    # through create/delete cannot grow memory while nothing expires.
    assert len(store._terminal_queue) < 100
    await store.create(make_task("c"))
    assert evicted == ["a"]


# -- accounting in bytes, and the byte budget ---------------------------------------------


def size(task: Task) -> int:
    """What the store holds of a task: its msgpack encoding."""
    return len(msgspec.msgpack.encode(task))


async def test_encoded_bytes_go_up_by_what_is_stored_and_down_when_it_goes() -> None:
    clock = FakeClock()
    store = InMemoryTaskStore(ttl=10, max_terminal_bytes=None, clock=clock)
    done = make_task("done", text="d" * 1000)
    await store.create(done)
    assert store.encoded_bytes == store.terminal_bytes == size(done)

    # A task being worked on is held as the writer's object until it is read or settles.
    running = make_task("running", state=TaskState.WORKING, text="r" * 500)
    await store.create(running)
    assert store.encoded_bytes == size(done)
    await store.get("running")
    assert store.encoded_bytes == size(done) + size(running)
    assert store.terminal_bytes == size(done)

    # Replaced by what settles it: counted once, at its new size, and now in the budget.
    finished = make_task("running", state=TaskState.FAILED, text="f" * 2000)
    await store.save(finished, expected_version=1, last_seq=2)
    assert store.encoded_bytes == store.terminal_bytes == size(done) + size(finished)

    waiting = make_task("waiting", state=TaskState.INPUT_REQUIRED)
    await store.create(waiting)  # interrupted: encoded at once, never in the budget
    assert store.encoded_bytes == size(done) + size(finished) + size(waiting)
    assert store.terminal_bytes == size(done) + size(finished)

    await store.delete("running")
    assert store.encoded_bytes == size(done) + size(waiting)
    clock.now = 10  # "done" expires
    assert await store.get("done") is None
    assert (store.encoded_bytes, store.terminal_bytes) == (size(waiting), 0)


async def test_the_byte_budget_evicts_the_oldest_finished_first_never_a_running_task() -> None:
    one = size(make_task("d0", state=TaskState.REJECTED, text="x" * 1000))
    evicted: list[str] = []
    store = InMemoryTaskStore(
        ttl=None, max_terminal_tasks=None, max_terminal_bytes=3 * one, on_evict=evicted.append
    )
    # A running task far larger than the budget, encoded (read), stays: it is not finished.
    await store.create(make_task("huge", state=TaskState.WORKING, text="h" * 50 * one))
    assert await store.get("huge") is not None
    await store.create(make_task("first", state=TaskState.WORKING, text="x" * 1000))
    for i in range(5):
        if i == 1:  # "first" finishes after d0, before every other
            await store.save(
                make_task("first", state=TaskState.CANCELED, text="x" * 1000),
                expected_version=1,
                last_seq=1,
            )
        await store.create(make_task(f"d{i}", state=TaskState.REJECTED, text="x" * 1000))
        assert store.terminal_bytes <= 3 * one

    assert evicted == ["d0", "first", "d1"]
    for gone in evicted:
        assert await store.get(gone) is None
    assert [await store.get(k) is not None for k in ("d2", "d3", "d4", "huge")] == [True] * 4
    assert store.terminal_bytes == 3 * one
    assert store.encoded_bytes > 50 * one  # the running task counts, but not in the budget


async def test_a_task_larger_than_the_whole_budget_goes_alone() -> None:
    small = make_task("small", text="s")
    evicted: list[str] = []
    store = InMemoryTaskStore(max_terminal_bytes=10 * size(small), on_evict=evicted.append)
    await store.create(small)
    await store.create(make_task("big", state=TaskState.WORKING, text="b" * 100 * size(small)))
    await store.save(
        make_task("big", state=TaskState.COMPLETED, text="b" * 100 * size(small)),
        expected_version=1,
        last_seq=2,
    )
    assert evicted == ["big"]  # the small one need not have gone for it: it could not stay
    assert await store.get("small") is not None
    assert store.terminal_bytes == size(small)


# -- ListTasks --------------------------------------------------------------------------


async def test_list_orders_newest_first_then_id_and_untimed_last() -> None:
    store = InMemoryTaskStore()
    tasks = [
        make_task("b", seconds=5),
        make_task("a", seconds=5),
        make_task("c", seconds=5),
        make_task("old", seconds=-100),
        make_task("new", seconds=100),
        make_task("untimed2", seconds=None),
        make_task("untimed1", seconds=None),
        make_task("micro", seconds=5.000001),
    ]
    for task in tasks:
        await store.create(task)
    page = await store.list_tasks(TaskQuery(page_size=100))
    ids = [t.id for t in page.tasks]
    assert ids == ["new", "micro", "c", "b", "a", "old", "untimed2", "untimed1"]
    assert ids == expected_order(tasks)
    assert (page.total_size, page.next_page_token) == (8, "")


async def test_list_filters_by_tenant_context_state_and_time() -> None:
    store = InMemoryTaskStore()
    await store.create(make_task("t0", seconds=0, context_id="c1"), tenant="x")
    await store.create(make_task("t1", seconds=1, context_id="c1", state=TaskState.WORKING))
    await store.create(make_task("t2", seconds=2, context_id="c2"))
    await store.create(make_task("t3", seconds=3, context_id="c1"))
    await store.create(make_task("t4", seconds=None, context_id="c1"))
    await store.create(make_task("t5", seconds=4, context_id="c1"), tenant="x")

    async def ids(**kw: object) -> tuple[list[str], int]:
        page = await store.list_tasks(TaskQuery(**kw))  # type: ignore[arg-type]
        return [t.id for t in page.tasks], page.total_size

    assert await ids() == (["t3", "t2", "t1", "t4"], 4)
    assert await ids(tenant="x") == (["t5", "t0"], 2)
    assert await ids(tenant="nobody") == ([], 0)
    assert await ids(context_id="c1") == (["t3", "t1", "t4"], 3)
    assert await ids(context_id="c1", tenant="x") == (["t5", "t0"], 2)
    assert await ids(context_id="c9") == ([], 0)
    assert await ids(state=TaskState.COMPLETED) == (["t3", "t2", "t4"], 3)
    assert await ids(state=TaskState.WORKING) == (["t1"], 1)
    after = BASE + dt.timedelta(seconds=2)
    # At or after the given time; a task without a timestamp is never "after".
    assert await ids(status_timestamp_after=after) == (["t3", "t2"], 2)
    assert await ids(status_timestamp_after=after, context_id="c1") == (["t3"], 1)
    assert await ids(status_timestamp_after=BASE, context_id="c1", state=TaskState.COMPLETED) == (
        ["t3"],
        1,
    )
    # An offset timestamp means the same instant.
    plus_one = dt.timezone(dt.timedelta(hours=1))
    assert await ids(status_timestamp_after=after.astimezone(plus_one)) == (["t3", "t2"], 2)


async def test_visible_filters_before_paging() -> None:
    store = InMemoryTaskStore()
    for i in range(30):
        await store.create(make_task(f"t{i:02d}", seconds=i))
    calls: list[str] = []

    async def even_only(task: Task) -> bool:
        calls.append(task.id)
        return int(task.id[1:]) % 2 == 0

    page = await store.list_tasks(TaskQuery(page_size=4), even_only)
    assert [t.id for t in page.tasks] == ["t28", "t26", "t24", "t22"]
    assert page.total_size == 15
    assert page.next_page_token
    assert len(calls) == 30  # totals need every candidate checked

    ids, totals = await walk(store, TaskQuery(page_size=4), even_only)
    assert ids == [f"t{i:02d}" for i in range(28, -1, -2)]
    assert set(totals) == {15}

    async def nobody(task: Task) -> bool:
        return False

    empty = await store.list_tasks(TaskQuery(), nobody)
    assert (empty.tasks, empty.total_size, empty.next_page_token) == ([], 0, "")


async def test_walking_250_tasks_in_pages_of_7_sees_each_once_in_order() -> None:
    store = InMemoryTaskStore()
    rng = random.Random(7)
    tasks = [make_task(f"task-{i:03d}", seconds=rng.choice([None, *range(40)])) for i in range(250)]
    rng.shuffle(tasks)
    for task in tasks:
        await store.create(task)
    ids, totals = await walk(store, TaskQuery(page_size=7))
    assert ids == expected_order(tasks)
    assert len(ids) == len(set(ids)) == 250
    assert set(totals) == {250}
    assert len(totals) == 36  # 35 full pages and one of 5


async def test_pages_stay_consistent_while_tasks_are_added() -> None:
    store = InMemoryTaskStore()
    originals = [make_task(f"orig-{i:03d}", seconds=i * 10) for i in range(250)]
    for task in originals:
        await store.create(task)

    seen: list[Task] = []
    token = ""
    added = 0
    while True:
        page = await store.list_tasks(TaskQuery(page_size=7, page_token=token))
        seen.extend(page.tasks)
        token = page.next_page_token
        if not token:
            break
        # Between pages: one task newer than everything, one in the past (between
        # existing ones), one with no timestamp.
        added += 1
        await store.create(make_task(f"new-{added:03d}", seconds=10_000 + added))
        await store.create(make_task(f"mid-{added:03d}", seconds=added * 37 + 5))
        await store.create(make_task(f"none-{added:03d}", seconds=None))

    ids = [t.id for t in seen]
    assert len(ids) == len(set(ids))  # nothing twice
    assert {t.id for t in originals} <= set(ids)  # nothing original skipped
    assert not any(i.startswith("new-") for i in ids)  # newer than the cursor: not in this walk
    everything = (await store.list_tasks(TaskQuery(page_size=100_000))).tasks
    position = {task_id: n for n, task_id in enumerate(expected_order(everything))}
    places = [position[i] for i in ids]
    assert places == sorted(places)  # still in list order across pages
    assert added > 30


async def test_walk_with_filters_and_visible_matches_a_model() -> None:
    store = InMemoryTaskStore()
    rng = random.Random(11)
    tasks = []
    for i in range(250):
        task = make_task(
            f"t{i:03d}",
            seconds=rng.choice([None, *range(60)]),
            context_id=rng.choice(["c1", "c2"]),
            state=rng.choice([TaskState.COMPLETED, TaskState.WORKING, TaskState.FAILED]),
        )
        tasks.append(task)
        await store.create(task)

    async def visible(task: Task) -> bool:
        return not task.id.endswith("3")

    after = BASE + dt.timedelta(seconds=10)
    query = TaskQuery(
        context_id="c1", state=TaskState.COMPLETED, status_timestamp_after=after, page_size=7
    )
    ids, totals = await walk(store, query, visible)
    model = [
        t
        for t in tasks
        if t.context_id == "c1"
        and t.status.state is TaskState.COMPLETED
        and t.status.timestamp is not None
        and t.status.timestamp >= after
        and not t.id.endswith("3")
    ]
    assert ids == expected_order(model)
    assert set(totals) == {len(model)}
    assert len(model) > 14  # several pages


async def test_invalid_page_tokens_are_rejected() -> None:
    store = InMemoryTaskStore()
    for i in range(20):
        await store.create(make_task(f"t{i}", seconds=i))
    first = await store.list_tasks(TaskQuery(page_size=5))
    token = first.next_page_token
    assert token
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))

    def encode(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    rng = random.Random(3)
    garbage = [
        "x",
        "abc",
        "!!!!",
        "not a token",
        "é" * 8,
        "A" * 5000,
        token + "A",
        token[:-1],
        encode(raw[:-1]),
        encode(bytes([raw[0] + 1]) + raw[1:]),  # unknown version
        encode(raw[:1] + bytes([raw[1] ^ 1]) + raw[2:]),  # tampered signature
        encode(raw[:-1] + bytes([raw[-1] ^ 1])),  # tampered cursor
        encode(bytes([1]) + bytes(8)),
        *(encode(rng.randbytes(rng.randint(1, 40))) for _ in range(50)),
    ]
    for bad in garbage:
        with pytest.raises(InvalidPageTokenError):
            await store.list_tasks(TaskQuery(page_size=5, page_token=bad))

    # A token is bound to the filters it was issued for, and to the store that issued it.
    with pytest.raises(InvalidPageTokenError):
        await store.list_tasks(TaskQuery(page_size=5, page_token=token, context_id="ctx"))
    with pytest.raises(InvalidPageTokenError):
        await store.list_tasks(TaskQuery(page_size=5, page_token=token, tenant="other"))
    with pytest.raises(InvalidPageTokenError):
        await InMemoryTaskStore().list_tasks(TaskQuery(page_size=5, page_token=token))
    # ...but not to the page size.
    second = await store.list_tasks(TaskQuery(page_size=3, page_token=token))
    assert [t.id for t in second.tasks] == ["t14", "t13", "t12"]
    assert issubclass(InvalidPageTokenError, ValueError)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    specs=st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(0, 20)),
            st.sampled_from(["c1", "c2"]),
            st.sampled_from([TaskState.COMPLETED, TaskState.WORKING]),
        ),
        max_size=40,
    ),
    page_size=st.integers(1, 9),
    context=st.sampled_from(["", "c1"]),
    state=st.sampled_from([TaskState.UNSPECIFIED, TaskState.WORKING]),
    after=st.one_of(st.none(), st.integers(0, 20)),
    hide=st.one_of(st.none(), st.integers(2, 4)),
)
async def test_paging_matches_a_sorted_model(
    specs: list[tuple[int | None, str, TaskState]],
    page_size: int,
    context: str,
    state: TaskState,
    after: int | None,
    hide: int | None,
) -> None:
    store = InMemoryTaskStore()
    tasks = [
        make_task(f"t{i}", seconds=s, context_id=c, state=st_)
        for i, (s, c, st_) in enumerate(specs)
    ]
    for task in tasks:
        await store.create(task)
    after_ts = None if after is None else BASE + dt.timedelta(seconds=after)

    async def visible(task: Task) -> bool:
        return hide is None or int(task.id[1:]) % hide != 0

    ids, totals = await walk(
        store,
        TaskQuery(
            context_id=context,
            state=state,
            status_timestamp_after=after_ts,
            page_size=page_size,
        ),
        visible if hide is not None else None,
    )
    model = [
        t
        for t in tasks
        if (not context or t.context_id == context)
        and (state is TaskState.UNSPECIFIED or t.status.state is state)
        and (
            after_ts is None or (t.status.timestamp is not None and t.status.timestamp >= after_ts)
        )
        and (hide is None or int(t.id[1:]) % hide != 0)
    ]
    assert ids == expected_order(model)
    assert set(totals) == {len(model)}


async def test_a_task_that_cannot_be_encoded_changes_nothing() -> None:
    store = InMemoryTaskStore()
    await store.create(make_task("t1", state=TaskState.WORKING))
    bad = Task(
        id="t1",
        context_id="elsewhere",
        status=TaskStatus(state=TaskState.COMPLETED, timestamp=BASE),
        metadata={"not encodable": object()},
    )
    with pytest.raises(TypeError):
        await store.save(bad, expected_version=1, last_seq=1)
    with pytest.raises(TypeError):
        await store.create(msgspec_replace(bad, id="t2"))
    got = await store.get("t1")
    assert got is not None
    assert (got.version, got.task.status.state) == (1, TaskState.WORKING)
    assert await store.get("t2") is None
    assert [t.id for t in (await store.list_tasks(TaskQuery(context_id="ctx"))).tasks] == ["t1"]
    assert (await store.list_tasks(TaskQuery(context_id="elsewhere"))).total_size == 0


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["create", "create", "create", "delete"]), st.integers(0, 60)),
        min_size=1,
        max_size=400,
    ),
    bound=st.integers(1, 30),
    page_size=st.integers(1, 40),
)
async def test_eviction_in_finishing_order_keeps_pages_right(
    steps: list[tuple[str, int]], bound: int, page_size: int
) -> None:
    # The oldest finished task goes first: hundreds of evictions from the front of the
    # index (which drops its front lazily and compacts it now and then) and deletions from
    # anywhere in it, then every page must show exactly the tasks a model keeps.
    evicted: list[str] = []
    store = InMemoryTaskStore(ttl=None, max_terminal_tasks=bound, on_evict=evicted.append)
    kept: dict[str, Task] = {}  # in finishing order
    for n, (action, pick) in enumerate(steps):
        if action == "create":
            task = make_task(f"t{n:04d}", seconds=pick % 7, context_id=f"c{pick % 3}")
            await store.create(task)
            kept[task.id] = task
            while len(kept) > bound:
                kept.pop(next(iter(kept)))
        elif kept:
            victim = list(kept)[pick % len(kept)]
            await store.delete(victim)
            del kept[victim]
    assert len(store) == len(kept)
    assert not set(evicted) & set(kept)
    ids, totals = await walk(store, TaskQuery(page_size=page_size))
    assert ids == expected_order(list(kept.values()))
    assert set(totals) == {len(kept)}
    ids, _ = await walk(store, TaskQuery(context_id="c1", page_size=page_size))
    assert ids == expected_order([t for t in kept.values() if t.context_id == "c1"])
