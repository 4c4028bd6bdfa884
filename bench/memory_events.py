"""Memory per idle follower of the in-memory event log, and per retained closed log.

Followers: N tasks each run one ``follow()`` and park waiting for an event, either on N
different logs or all on one log, with and without an ``idle_timeout`` (the server
follows with one, to send keep-alives). Printed: the growth of the resident set per
follower once every follower is parked (no sockets; the cost of the follower coroutine,
its anyio task, and its share of the wake-up event and timeout).

Retained logs: N closed logs of a small finished task (task snapshot, working, one text
artifact, completed with a message) kept for Last-Event-ID replay.

Each case runs in a fresh interpreter so that one does not inherit another's free memory.

    uv run python bench/memory_events.py [N]
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import subprocess
import sys
import uuid

import anyio

from a2a_core.server import InMemoryEventLog, LoggedEvent
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """Resident set size now (not the peak, unlike ``getrusage``)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def small_task_events() -> tuple[str, list[StreamResponse]]:
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    now = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)
    user = Message(
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        task_id=task_id,
        role=Role.USER,
        parts=[Part(text="What is the weather in Paris?")],
    )
    snapshot = Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=now),
        history=[user],
    )

    def status(state: TaskState, message: Message | None = None) -> StreamResponse:
        return StreamResponse(
            status_update=TaskStatusUpdateEvent(
                task_id=task_id,
                context_id=context_id,
                status=TaskStatus(state=state, timestamp=now, message=message),
            )
        )

    done = Message(
        message_id=str(uuid.uuid4()),
        context_id=context_id,
        task_id=task_id,
        role=Role.AGENT,
        parts=[Part(text="Done: here is your answer.")],
    )
    artifact = StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id=context_id,
            artifact=Artifact(artifact_id=str(uuid.uuid4()), parts=[Part(text="Sunny, 21 C.")]),
        )
    )
    return task_id, [
        StreamResponse(task=snapshot),
        status(TaskState.WORKING),
        artifact,
        status(TaskState.COMPLETED, done),
    ]


async def followers(count: int, shared: bool, idle_timeout: float | None) -> None:
    log = InMemoryEventLog()
    names = ["one"] if shared else [f"task-{n}" for n in range(count)]
    for name in names:
        await log.append(name, small_task_events()[1][0])
    received: list[int] = []

    async def follower(name: str) -> None:
        seen: LoggedEvent | None = None
        async for logged in log.follow(name, after=1, idle_timeout=idle_timeout):
            seen = logged
            break
        received.append(0 if seen is None else seen.seq)

    # Warm up: one follower through a whole cycle, so code paths and caches are loaded.
    await log.append("warm-up", small_task_events()[1][0])
    async with anyio.create_task_group() as tg:
        tg.start_soon(follower, "warm-up")
        await anyio.wait_all_tasks_blocked()
        await log.append("warm-up", small_task_events()[1][1])
    received.clear()
    gc.collect()
    before = rss_bytes()
    async with anyio.create_task_group() as tg:
        for n in range(count):
            tg.start_soon(follower, names[n % len(names)])
        await anyio.wait_all_tasks_blocked()
        gc.collect()
        after = rss_bytes()
        for name in names:  # release them, and check they all were really waiting
            await log.append(name, small_task_events()[1][1])
    # Every follower was parked and got the event appended after the measurement.
    assert received == [2] * count, sorted(set(received))
    where = "one log" if shared else f"{count} logs"
    print(
        f"{count} followers on {where}, idle_timeout={idle_timeout}: "
        f"{(after - before) / count:.0f} bytes per follower"
    )


async def bare_tasks(count: int) -> None:
    """The baseline: tasks that only wait on one shared ``anyio.Event``."""
    event = anyio.Event()

    async def waiter() -> None:
        await event.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        event.set()
    event = anyio.Event()
    gc.collect()
    before = rss_bytes()
    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(waiter)
        await anyio.wait_all_tasks_blocked()
        gc.collect()
        after = rss_bytes()
        event.set()
    each = (after - before) / count
    print(f"{count} bare tasks waiting on one anyio.Event: {each:.0f} bytes each")


async def retained_logs(count: int) -> None:
    log = InMemoryEventLog(retention=None, max_closed_logs=None)
    gc.collect()
    before = rss_bytes()
    for _ in range(count):
        task_id, events = small_task_events()
        for event in events:
            await log.append(task_id, event)
        await log.close(task_id)
    gc.collect()
    after = rss_bytes()
    print(f"{count} closed logs of 4 events: {(after - before) / count:.0f} bytes per log")


def run_case(argv: list[str]) -> None:
    kind, backend, count = argv[0], argv[1], int(argv[2])
    print(f"[{backend}] ", end="")
    if kind == "logs":
        anyio.run(retained_logs, count, backend=backend)
        return
    if kind == "bare":
        anyio.run(bare_tasks, count, backend=backend)
        return
    shared = kind == "shared"
    idle = None if argv[3] == "none" else float(argv[3])
    anyio.run(followers, count, shared, idle, backend=backend)


def main() -> None:
    count = sys.argv[1] if len(sys.argv) > 1 else "10000"
    for backend in ["asyncio", "trio"]:
        for kind in ["separate", "shared"]:
            for idle in ["none", "60"]:
                subprocess.run(
                    [sys.executable, __file__, "--case", kind, backend, count, idle], check=True
                )
        for kind in ["bare", "logs"]:
            subprocess.run([sys.executable, __file__, "--case", kind, backend, count], check=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--case":
        run_case(sys.argv[2:])
    else:
        main()
