"""The in-memory event log: numbering, reads, followers, close, idle timeout, retention.

Every test runs under asyncio and trio (``anyio_backend`` in conftest). Followers are
parked with ``wait_all_tasks_blocked`` before events arrive, so the tests exercise the
wake-up path rather than the catch-up path; idle timeouts are tiny and only let a
follower end. Retention runs on a fake clock.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import msgspec
import pytest
from anyio import wait_all_tasks_blocked
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core.errors import LocalProtocolError
from a2a_core.server import InMemoryEventLog
from a2a_core.server.backends import EventLog, LoggedEvent, MeasuredEventLog
from a2a_core.types import Message, Part, Role, StreamResponse

pytestmark = pytest.mark.anyio

IDLE = 0.05


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def event(label: str) -> StreamResponse:
    return StreamResponse(
        message=Message(
            message_id=label, role=Role.AGENT, parts=[Part(text=label)], metadata={"k": [1]}
        )
    )


def labels(events: list[LoggedEvent]) -> list[tuple[int, str]]:
    out = []
    for logged in events:
        assert logged.event.message is not None
        out.append((logged.seq, logged.event.message.message_id))
    return out


async def follow_into(
    log: InMemoryEventLog,
    task_id: str,
    into: list[LoggedEvent],
    after: int = 0,
    idle_timeout: float | None = None,
) -> None:
    async for logged in log.follow(task_id, after, idle_timeout=idle_timeout):
        into.append(logged)


@contextlib.asynccontextmanager
async def following(iterator: AsyncIterator[LoggedEvent]) -> AsyncIterator[Any]:
    """Close a follower on leave (what ``contextlib.aclosing`` does, typed loosely)."""
    try:
        yield iterator
    finally:
        await iterator.aclose()  # type: ignore[attr-defined]


async def test_log_satisfies_the_protocol() -> None:
    log: EventLog = InMemoryEventLog()
    assert await log.read("nope") == []


async def test_seq_numbers_start_at_one_per_task() -> None:
    log = InMemoryEventLog()
    assert [await log.append("a", event(f"a{i}")) for i in range(3)] == [1, 2, 3]
    assert await log.append("b", event("b0")) == 1
    assert await log.append("a", event("a3")) == 4
    assert labels(await log.read("a")) == [(1, "a0"), (2, "a1"), (3, "a2"), (4, "a3")]
    assert labels(await log.read("b")) == [(1, "b0")]


async def test_read_after_returns_the_tail_as_fresh_copies() -> None:
    log = InMemoryEventLog()
    for i in range(5):
        await log.append("t", event(f"e{i}"))
    assert labels(await log.read("t", after=2)) == [(3, "e2"), (4, "e3"), (5, "e4")]
    assert await log.read("t", after=5) == []
    assert await log.read("t", after=99) == []
    assert labels(await log.read("t", after=-3)) == labels(await log.read("t"))
    assert await log.read("unknown") == []

    first, second = await log.read("t"), await log.read("t")
    assert first == second
    assert first[0].event is not second[0].event
    assert first[0].event.message is not None
    first[0].event.message.metadata["k"].append(2)  # a reader's copy is its own
    again = await log.read("t")
    assert again[0].event.message is not None
    assert again[0].event.message.metadata == {"k": [1]}


async def test_read_some_reads_a_batch_bounded_in_bytes_and_measures_the_rest() -> None:
    log = InMemoryEventLog()
    assert isinstance(log, MeasuredEventLog)
    for i in range(6):
        await log.append("t", event(f"e{i}"))
    size = len(msgspec.msgpack.encode(event("e0")))  # every blob here is this size
    batch, got, rest = log.read_some_now("t", 1, 2 * size + size // 2)
    assert labels(batch) == [(2, "e1"), (3, "e2")]
    assert (got, rest) == (2 * size, 3 * size)
    # A budget smaller than one event still reads one; a budget of 0 only measures.
    batch, got, rest = log.read_some_now("t", 4, 1)
    assert labels(batch) == [(5, "e4")] and (got, rest) == (size, size)
    assert log.read_some_now("t", 0, 0) == ([], 0, 6 * size)
    assert log.read_some_now("t", 6, 1 << 20) == ([], 0, 0)
    assert log.read_some_now("unknown", 0, 1 << 20) == ([], 0, 0)
    await log.close("t")  # a closed log measures the same
    batch, got, rest = log.read_some_now("t", -1, 1 << 20)
    assert len(batch) == 6 and (got, rest) == (6 * size, 0)


async def test_follow_from_the_start_and_from_the_middle() -> None:
    log = InMemoryEventLog()
    for i in range(3):
        await log.append("t", event(f"e{i}"))
    from_start: list[LoggedEvent] = []
    from_middle: list[LoggedEvent] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", from_start, 0)
        tg.start_soon(follow_into, log, "t", from_middle, 2)
        await wait_all_tasks_blocked()
        assert labels(from_start) == [(1, "e0"), (2, "e1"), (3, "e2")]
        assert labels(from_middle) == [(3, "e2")]
        await log.append("t", event("e3"))
        await log.append("t", event("e4"))
        await log.close("t")
    assert labels(from_start) == [(n + 1, f"e{n}") for n in range(5)]
    assert labels(from_middle) == [(n + 1, f"e{n}") for n in range(2, 5)]


async def test_many_followers_each_get_every_event_in_order() -> None:
    log = InMemoryEventLog()
    results: list[list[LoggedEvent]] = [[] for _ in range(50)]
    async with anyio.create_task_group() as tg:
        for into in results:
            tg.start_soon(follow_into, log, "t", into)
        for i in range(20):
            await wait_all_tasks_blocked()
            await log.append("t", event(f"e{i}"))
        await log.close("t")
    expected = [(n + 1, f"e{n}") for n in range(20)]
    assert all(labels(into) == expected for into in results)


async def test_a_follower_leaving_does_not_affect_the_others() -> None:
    log = InMemoryEventLog()
    stayer: list[LoggedEvent] = []
    leaver: list[LoggedEvent] = []

    async def leave_after_two() -> None:
        async with following(log.follow("t")) as events:
            async for logged in events:
                leaver.append(logged)
                if len(leaver) == 2:
                    break

    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", stayer)
        tg.start_soon(leave_after_two)
        for i in range(6):
            await wait_all_tasks_blocked()
            await log.append("t", event(f"e{i}"))
        await log.close("t")
    assert labels(leaver) == [(1, "e0"), (2, "e1")]
    assert labels(stayer) == [(n + 1, f"e{n}") for n in range(6)]


async def test_a_cancelled_follower_does_not_affect_the_others() -> None:
    log = InMemoryEventLog()
    stayer: list[LoggedEvent] = []
    cancelled: list[LoggedEvent] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", stayer)
        async with anyio.create_task_group() as inner:
            inner.start_soon(follow_into, log, "t", cancelled)
            await wait_all_tasks_blocked()
            await log.append("t", event("e0"))
            await wait_all_tasks_blocked()
            inner.cancel_scope.cancel()
        await log.append("t", event("e1"))
        await log.close("t")
    assert labels(cancelled) == [(1, "e0")]
    assert labels(stayer) == [(1, "e0"), (2, "e1")]


async def test_close_ends_followers_after_draining() -> None:
    log = InMemoryEventLog()
    for i in range(3):
        await log.append("t", event(f"e{i}"))
    await log.close("t")
    late: list[LoggedEvent] = []
    await follow_into(log, "t", late)  # returns: the log is closed
    assert labels(late) == [(1, "e0"), (2, "e1"), (3, "e2")]
    tail: list[LoggedEvent] = []
    await follow_into(log, "t", tail, after=3)
    assert tail == []


async def test_close_wakes_a_waiting_follower() -> None:
    log = InMemoryEventLog()
    await log.append("t", event("e0"))
    got: list[LoggedEvent] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", got)
        await wait_all_tasks_blocked()
        await log.close("t")
    assert labels(got) == [(1, "e0")]


async def test_idle_timeout_ends_a_follower() -> None:
    log = InMemoryEventLog()
    await log.append("t", event("e0"))
    got: list[LoggedEvent] = []
    await follow_into(log, "t", got, idle_timeout=IDLE)  # returns although the log is open
    assert labels(got) == [(1, "e0")]
    assert await log.append("t", event("e1")) == 2  # the log itself is untouched


async def test_idle_timeout_restarts_with_each_event() -> None:
    log = InMemoryEventLog()
    got: list[LoggedEvent] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", got, 0, 60.0)
        for i in range(3):
            await wait_all_tasks_blocked()
            await log.append("t", event(f"e{i}"))
        await wait_all_tasks_blocked()
        await log.close("t")
    assert labels(got) == [(1, "e0"), (2, "e1"), (3, "e2")]


async def test_following_a_log_that_does_not_exist_yet_waits_for_it() -> None:
    log = InMemoryEventLog()
    got: list[LoggedEvent] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", got)
        await wait_all_tasks_blocked()
        await log.append("t", event("e0"))
        await log.close("t")
    assert labels(got) == [(1, "e0")]


async def test_a_follower_of_a_missing_log_leaves_nothing_behind() -> None:
    log = InMemoryEventLog()
    got: list[LoggedEvent] = []
    await follow_into(log, "ghost", got, idle_timeout=IDLE)
    assert got == []
    assert len(log) == 0
    with anyio.move_on_after(IDLE):
        await follow_into(log, "ghost2", got)
    assert len(log) == 0


async def test_append_after_close_raises_and_close_is_idempotent() -> None:
    log = InMemoryEventLog()
    await log.append("t", event("e0"))
    await log.close("t")
    await log.close("t")
    with pytest.raises(LocalProtocolError):
        await log.append("t", event("late"))
    assert labels(await log.read("t")) == [(1, "e0")]
    await log.close("never-appended")
    with pytest.raises(LocalProtocolError):
        await log.append("never-appended", event("late"))


async def test_forget_drops_the_log_and_ends_its_followers() -> None:
    log = InMemoryEventLog()
    await log.append("t", event("e0"))
    await log.append("other", event("o0"))
    got: list[LoggedEvent] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(follow_into, log, "t", got)
        await wait_all_tasks_blocked()
        await log.forget("t")
    assert labels(got) == [(1, "e0")]
    assert await log.read("t") == []
    assert labels(await log.read("other")) == [(1, "o0")]
    await log.forget("t")  # unknown: no error
    assert await log.append("t", event("fresh")) == 1  # a new log, numbered afresh


async def test_closed_logs_are_kept_for_the_retention_period() -> None:
    clock = FakeClock()
    log = InMemoryEventLog(retention=100, clock=clock)
    await log.append("closed", event("c0"))
    await log.append("open", event("o0"))
    await log.close("closed")
    clock.now = 99
    assert labels(await log.read("closed")) == [(1, "c0")]
    clock.now = 100
    assert await log.read("closed") == []
    clock.now = 1e9
    assert labels(await log.read("open")) == [(1, "o0")]  # open logs never expire
    assert len(log) == 1


async def test_max_closed_logs_drops_the_oldest_closed_first() -> None:
    log = InMemoryEventLog(retention=None, max_closed_logs=2)
    for name in ["a", "b", "c", "open1", "open2"]:
        await log.append(name, event(name))
    for name in ["b", "a", "c"]:
        await log.close(name)
    assert await log.read("b") == []
    assert labels(await log.read("a")) == [(1, "a")]
    assert labels(await log.read("c")) == [(1, "c")]
    assert labels(await log.read("open1")) == [(1, "open1")]
    assert labels(await log.read("open2")) == [(1, "open2")]
    # Forgotten logs do not count against the bound.
    await log.forget("a")
    await log.append("d", event("d"))
    await log.close("d")
    assert labels(await log.read("c")) == [(1, "c")]
    assert labels(await log.read("d")) == [(1, "d")]


def size(*events: StreamResponse) -> int:
    """What the log holds of events: their msgpack encodings."""
    return sum(len(msgspec.msgpack.encode(e)) for e in events)


async def test_encoded_bytes_go_up_by_each_event_and_down_when_a_log_goes() -> None:
    clock = FakeClock()
    log = InMemoryEventLog(retention=10, max_closed_bytes=None, clock=clock)
    a1, a2, b1 = event("a1" * 100), event("a2"), event("b1" * 50)
    await log.append("a", a1)
    assert (log.encoded_bytes, log.closed_bytes) == (size(a1), 0)
    await log.append("a", a2)
    await log.append("b", b1)
    assert log.encoded_bytes == size(a1, a2, b1)
    await log.close("a")
    assert log.closed_bytes == size(a1, a2)
    await log.forget("b")
    assert log.encoded_bytes == size(a1, a2)
    clock.now = 10  # "a" expires
    assert await log.read("a") == []
    assert (log.encoded_bytes, log.closed_bytes) == (0, 0)


async def test_the_byte_budget_drops_the_oldest_closed_logs_first_never_an_open_one() -> None:
    one = size(event("x0"))
    log = InMemoryEventLog(retention=None, max_closed_logs=None, max_closed_bytes=2 * one)
    await log.append("open", event("big" * 10 * one))  # far over the budget, but open
    for name in ["x0", "x1", "x2", "x3"]:
        await log.append(name, event(name))
    for name in ["x1", "x0", "x3", "x2"]:
        await log.close(name)
        assert log.closed_bytes <= 2 * one
    assert [bool(await log.read(n)) for n in ["x1", "x0", "x3", "x2"]] == [False, False, True, True]
    assert len(await log.read("open")) == 1
    assert log.encoded_bytes == 2 * one + size(event("big" * 10 * one))


async def test_a_log_larger_than_the_whole_budget_goes_alone() -> None:
    small = event("s")
    log = InMemoryEventLog(retention=None, max_closed_bytes=10 * size(small))
    await log.append("small", small)
    await log.close("small")
    await log.append("big", event("b" * 20 * size(small)))
    await log.close("big")
    assert await log.read("big") == []
    assert labels(await log.read("small")) == [(1, "s")]
    assert log.closed_bytes == size(small)


async def test_forgetting_many_closed_logs_does_not_grow_the_retention_queue() -> None:
    log = InMemoryEventLog(retention=None, max_closed_logs=None)
    await log.close("kept")  # stays at the front of the queue
    for i in range(500):
        await log.close(f"t{i}")
        await log.forget(f"t{i}")
    assert len(log) == 1
    # White-box: forgotten logs' queue entries are compacted away, not kept until expiry.
    assert len(log._closed) < 100


async def test_a_follower_finishes_draining_a_log_that_expires_meanwhile() -> None:
    clock = FakeClock()
    log = InMemoryEventLog(retention=10, clock=clock)
    for i in range(3):
        await log.append("t", event(f"e{i}"))
    await log.close("t")
    got: list[LoggedEvent] = []
    async with following(log.follow("t")) as events:
        async for logged in events:
            got.append(logged)
            clock.now = 50
            await log.read("other")  # any operation expires the log
    assert labels(got) == [(1, "e0"), (2, "e1"), (3, "e2")]
    assert await log.read("t") == []


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.sampled_from("ab")),
            st.tuples(st.just("read"), st.sampled_from("ab"), st.integers(-1, 12)),
            st.tuples(st.just("follow"), st.sampled_from("ab"), st.integers(0, 12)),
            st.tuples(st.just("settle")),
        ),
        max_size=40,
    )
)
async def test_interleaved_appends_reads_and_follows_keep_order_and_numbers(
    ops: list[tuple[Any, ...]],
) -> None:
    log = InMemoryEventLog()
    model: dict[str, list[str]] = {"a": [], "b": []}
    followers: list[tuple[str, int, list[LoggedEvent]]] = []
    async with anyio.create_task_group() as tg:
        for op in ops:
            if op[0] == "append":
                name = op[1]
                label = f"{name}{len(model[name])}"
                assert await log.append(name, event(label)) == len(model[name]) + 1
                model[name].append(label)
            elif op[0] == "read":
                _, name, after = op
                start = max(after, 0)
                expected = [(n + 1, model[name][n]) for n in range(start, len(model[name]))]
                assert labels(await log.read(name, after)) == expected
            elif op[0] == "follow":
                _, name, after = op
                into: list[LoggedEvent] = []
                followers.append((name, after, into))
                tg.start_soon(follow_into, log, name, into, after)
            else:
                await wait_all_tasks_blocked()
        for name in model:
            await log.close(name)
    for name, after, into in followers:
        assert labels(into) == [(n + 1, model[name][n]) for n in range(after, len(model[name]))]


async def test_an_event_that_cannot_be_encoded_is_not_logged() -> None:
    log = InMemoryEventLog()
    bad = StreamResponse(
        message=Message(
            message_id="m", role=Role.AGENT, parts=[Part(text="x")], metadata={"o": object()}
        )
    )
    with pytest.raises(TypeError):
        await log.append("t", bad)
    assert len(log) == 0
    assert await log.append("t", event("e0")) == 1
