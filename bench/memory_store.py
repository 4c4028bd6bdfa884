"""Memory per stored task in the in-memory task store.

Stores N small completed tasks (one user message in the history, one agent status
message, one text artifact: about 100 bytes of text in all) and prints the growth of the
process's resident set per task, with the size of one encoded task for comparison.
Bounds are off (``ttl=None, max_terminal_tasks=None``) so that every task stays.

    uv run python bench/memory_store.py [N] [asyncio|trio]
"""

from __future__ import annotations

import datetime as dt
import gc
import os
import sys
import uuid

import anyio
import msgspec

from a2a_core.server import InMemoryTaskStore
from a2a_core.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes(pid: int | str = "self") -> int:
    """Resident set size now (not the peak, unlike ``getrusage``)."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def small_task(n: int) -> Task:
    task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
    when = dt.datetime(2025, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=n)
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(
            state=TaskState.COMPLETED,
            timestamp=when,
            message=Message(
                message_id=str(uuid.uuid4()),
                context_id=context_id,
                task_id=task_id,
                role=Role.AGENT,
                parts=[Part(text="Done: here is your answer.")],
            ),
        ),
        history=[
            Message(
                message_id=str(uuid.uuid4()),
                context_id=context_id,
                task_id=task_id,
                role=Role.USER,
                parts=[Part(text=f"What is the weather in Paris? #{n:06d}")],
            )
        ],
        artifacts=[
            Artifact(artifact_id=str(uuid.uuid4()), parts=[Part(text="Sunny, 21 degrees C.")])
        ],
    )


async def main(count: int) -> None:
    store = InMemoryTaskStore(ttl=None, max_terminal_tasks=None)
    sample = small_task(0)
    await store.create(sample)  # warm up code paths and per-tenant structures
    await store.delete(sample.id)
    gc.collect()
    before = rss_bytes()
    for n in range(count):
        await store.create(small_task(n))
    gc.collect()
    after = rss_bytes()
    text = sum(
        len(p.text) if isinstance(p.text, str) else 0
        for m in [*sample.history, sample.status.message]
        if m is not None
        for p in m.parts
    ) + sum(len(p.text) if isinstance(p.text, str) else 0 for p in sample.artifacts[0].parts)
    print(f"tasks stored:          {len(store)}")
    print(f"text per task:         {text} bytes")
    print(f"encoded task (msgpack): {len(msgspec.msgpack.encode(sample))} bytes")
    print(f"RSS delta:             {(after - before) / 2**20:.1f} MiB")
    print(f"RSS per task:          {(after - before) / count:.0f} bytes")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    backend = sys.argv[2] if len(sys.argv) > 2 else "asyncio"
    anyio.run(main, count, backend=backend)
