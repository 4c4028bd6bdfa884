"""Recovery of lost executions (issue "work that survives"), in process.

Two servers on one backend stand for two replicas: the second recovers the first one's task
(`A2AServer.recover_task`, what a backend calls for a lost lease or a restart) and runs the
next attempt with the checkpoint, while the first one's agent, a zombie, is fenced off. The
policies' edges (attempts used up, ``fail``, a task that runs here or ended), the
checkpoint's limits, and the in-memory backend's warning. The same over real processes and
databases: tests/sql/test_durable.py and tests/redis/test_durable.py.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from a2a_core.server import (
    GAVE_UP_TEXT,
    SHUTDOWN_TEXT,
    A2AServer,
    CheckpointTooLargeError,
    ExecutionGuards,
    InMemoryBackend,
    InputRequired,
    Recovery,
    RecoveryPolicy,
    TaskContext,
)
from a2a_core.types import TaskState
from helpers.a2a_client import Client, make_card, user_message
from runtime.general_backend import GeneralPathBackend

pytestmark = pytest.mark.anyio

HANG_GUARD = 20  # seconds: only against a hang


def immediate(text: str = "go", mid: str = "m1") -> dict[str, Any]:
    return {"message": user_message(text, mid=mid), "configuration": {"returnImmediately": True}}


async def wait_for_state(server: A2AServer, task_id: str, *states: TaskState) -> Any:
    while True:
        stored = await server.backend.store.get(task_id)
        if stored is not None and stored.task.status.state in states:
            return stored
        await anyio.sleep(0.01)


async def test_another_replica_claims_the_next_attempt_and_the_first_is_fenced() -> None:
    backend = GeneralPathBackend()
    first_started, zombie_may_write, second_checkpointed = (anyio.Event() for _ in range(3))
    second_may_finish = anyio.Event()
    seen: dict[str, Any] = {}

    async def agent(ctx: TaskContext) -> str:
        await ctx.working(f"attempt {ctx.attempt}")
        if ctx.attempt == 1:
            await ctx.checkpoint({"next": 2, "done": ["a"]})
            first_started.set()
            await zombie_may_write.wait()
            await ctx.artifact("written by the zombie", artifact_id="out")
            try:
                await anyio.sleep(HANG_GUARD)
            except anyio.get_cancelled_exc_class():
                seen["zombie_stopped"] = True
                raise
            return "never"
        seen["attempt"], seen["checkpoint"] = ctx.attempt, ctx.checkpoint_value
        await ctx.checkpoint({"next": 3})
        second_checkpointed.set()
        await second_may_finish.wait()
        return "done by attempt 2"

    first = A2AServer(agent, card=make_card(), backend=backend, recovery="resume")
    second = A2AServer(agent, card=make_card(), backend=backend, recovery="resume")
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", immediate()))["task"]
            await first_started.wait()
            # What a reaper on the second replica does when the first one's lease ran out.
            assert await second.recover_task(task["id"], "the first replica was lost.")
            assert not await second.recover_task(task["id"], "again")  # runs there now
            await second_checkpointed.wait()
            zombie_may_write.set()  # the first replica wakes up and writes: refused
            while "zombie_stopped" not in seen:
                await anyio.sleep(0.01)
            second_may_finish.set()
            done = await wait_for_state(second, task["id"], TaskState.COMPLETED)
    assert seen["attempt"] == 2
    assert seen["checkpoint"] == {"next": 2, "done": ["a"]}
    finished = done.task
    assert [a.parts[0].text for a in finished.artifacts] == ["done by attempt 2"]
    assert finished.metadata["a2a.execution"] == {"attempt": 2, "lost": 1, "epoch": 2}
    assert finished.metadata["a2a.checkpoint"] == {"next": 3}
    said = [m.parts[0].text for m in finished.history]
    assert "Attempt 2 starts: the first replica was lost." in said


async def test_after_the_last_attempt_the_task_fails_saying_so() -> None:
    backend = InMemoryBackend()
    started = anyio.Event()

    async def agent(ctx: TaskContext) -> None:
        await ctx.working()
        started.set()
        await anyio.sleep(HANG_GUARD)

    policy = RecoveryPolicy("retry", max_attempts=1)
    first = A2AServer(agent, card=make_card(), backend=backend, recovery=policy)
    second = A2AServer(agent, card=make_card(), backend=backend, recovery=policy)
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", immediate()))["task"]
            await started.wait()
            assert await second.recover_task(task["id"], "lost.", fail_text="It was lost.")
            stored = await second.backend.store.get(task["id"])
            first.cancel_local_execution(task["id"])
    assert stored is not None and stored.task.status.state is TaskState.FAILED
    assert stored.task.status.message is not None
    text = stored.task.status.message.parts[0].text
    assert text == "It was lost. " + GAVE_UP_TEXT.format(attempts=1)


async def test_the_fail_policy_fails_with_the_backends_text() -> None:
    backend = InMemoryBackend()
    started = anyio.Event()

    async def agent(ctx: TaskContext) -> None:
        await ctx.working()
        started.set()
        await anyio.sleep(HANG_GUARD)

    first = A2AServer(agent, card=make_card(), backend=backend)
    second = A2AServer(agent, card=make_card(), backend=backend)
    assert second.recovery.mode is Recovery.FAIL  # the default: nothing changes
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", immediate()))["task"]
            await started.wait()
            # Running on the first server: the first one itself never recovers it.
            assert not await first.recover_task(task["id"], "lost.")
            assert await second.recover_task(task["id"], "lost.", fail_text="Host lost.")
            assert not await second.recover_task(task["id"], "lost.")  # terminal now
            stored = await second.backend.store.get(task["id"])
            first.cancel_local_execution(task["id"])
    assert stored is not None and stored.task.status.state is TaskState.FAILED
    assert stored.task.status.message is not None
    assert stored.task.status.message.parts[0].text == "Host lost."


async def test_a_checkpoint_is_bounded_and_json_only() -> None:
    outcomes: dict[str, Any] = {}

    async def agent(ctx: TaskContext) -> str:
        assert ctx.attempt == 1 and ctx.checkpoint_value is None
        await ctx.checkpoint({"ok": [1, 2]})
        try:
            await ctx.checkpoint("x" * 100)
        except CheckpointTooLargeError as exc:
            outcomes["large"] = str(exc)
        try:
            await ctx.checkpoint({"an object": object()})
        except TypeError as exc:
            outcomes["type"] = str(exc)
        return "done"

    policy = RecoveryPolicy("resume", max_checkpoint_bytes=64)
    server = A2AServer(agent, card=make_card(), recovery=policy)
    with anyio.fail_after(HANG_GUARD):
        async with server:
            task = (await Client(server).result("SendMessage", {"message": user_message("go")}))[
                "task"
            ]
    assert "max_checkpoint_bytes (64)" in outcomes["large"]
    assert "JSON" in outcomes["type"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["metadata"]["a2a.checkpoint"] == {"ok": [1, 2]}  # the last one stored


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"mode": "again"}, "recovery must be fail, retry or resume"),
        ({"mode": "retry", "max_attempts": 0}, "max_attempts"),
        ({"max_checkpoint_bytes": 1}, "max_checkpoint_bytes"),
    ],
)
def test_a_policy_that_cannot_work_is_refused(given: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RecoveryPolicy(**given)


async def test_the_in_memory_backend_warns_and_fails_at_a_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    started = anyio.Event()

    async def agent(ctx: TaskContext) -> None:
        await ctx.working()
        started.set()
        await anyio.sleep(HANG_GUARD)

    server = A2AServer(
        agent,
        card=make_card(),
        recovery="retry",
        guards=ExecutionGuards(shutdown_grace=0.05),
    )
    with caplog.at_level(logging.WARNING, "a2a_core.server"), anyio.fail_after(HANG_GUARD):
        async with server:
            task = (await Client(server).result("SendMessage", immediate()))["task"]
            await started.wait()
        stored = await server.backend.store.get(task["id"])
    assert any("keeps its tasks in this process's memory" in r.message for r in caplog.records)
    assert stored is not None and stored.task.status.state is TaskState.FAILED
    assert stored.task.status.message is not None
    assert stored.task.status.message.parts[0].text == SHUTDOWN_TEXT


async def test_recoveries_are_counted_by_outcome() -> None:
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from a2a_core.otel import OpenTelemetryObserver

    reader = InMemoryMetricReader()
    observer = OpenTelemetryObserver(
        meter_provider=MeterProvider(metric_readers=[reader]), log_correlation=False
    )
    backend = InMemoryBackend()
    started = anyio.Event()

    async def agent(ctx: TaskContext) -> str:
        await ctx.working()
        if ctx.attempt == 1:
            started.set()
            await anyio.sleep(HANG_GUARD)
        return "done"

    first = A2AServer(agent, card=make_card(), backend=backend)
    second = A2AServer(
        agent, card=make_card(), backend=backend, recovery="retry", observer=observer
    )
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", immediate()))["task"]
            await started.wait()
            assert await second.recover_task(task["id"], "lost.")
            await wait_for_state(second, task["id"], TaskState.COMPLETED)
            first.cancel_local_execution(task["id"])
    data = reader.get_metrics_data()
    assert data is not None
    points = [
        (dict(p.attributes or {}), p.value)
        for r in data.resource_metrics
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == "a2a.server.executions.recovered"
        for p in m.data.data_points
    ]
    assert points == [({"a2a.recovery.outcome": "retried"}, 1)]


async def test_a_follow_up_after_a_recovery_counts_its_attempts_afresh() -> None:
    backend = GeneralPathBackend()
    started = anyio.Event()
    seen: list[tuple[str, int, Any]] = []

    async def agent(ctx: TaskContext) -> Any:
        seen.append((ctx.text, ctx.attempt, ctx.checkpoint_value))
        if ctx.is_follow_up:
            return f"hello {ctx.text}"
        if ctx.attempt == 1:
            await ctx.checkpoint({"asked": False})
            started.set()
            await anyio.sleep(HANG_GUARD)
        return InputRequired("your name?")

    first = A2AServer(agent, card=make_card(), backend=backend, recovery="resume")
    second = A2AServer(agent, card=make_card(), backend=backend, recovery="resume")
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", immediate()))["task"]
            await started.wait()
            assert await second.recover_task(task["id"], "lost.")
            await wait_for_state(second, task["id"], TaskState.INPUT_REQUIRED)
            first.cancel_local_execution(task["id"])
            answer = {"message": user_message("Ada", mid="m2", task_id=task["id"])}
            done = await Client(second).result("SendMessage", answer)
    assert seen == [("go", 1, None), ("go", 2, {"asked": False}), ("Ada", 1, None)]
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["task"]["metadata"]["a2a.execution"] == {"attempt": 1, "lost": 0, "epoch": 2}
    assert "a2a.checkpoint" not in done["task"]["metadata"]


async def test_a_task_that_moved_on_or_a_stopping_server_is_not_recovered() -> None:
    backend = InMemoryBackend()
    runs: list[int] = []

    async def agent(ctx: TaskContext) -> Any:
        runs.append(ctx.attempt)
        return InputRequired("your name?")

    first = A2AServer(agent, card=make_card(), backend=backend, recovery="retry")
    second = A2AServer(agent, card=make_card(), backend=backend, recovery="retry")
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", {"message": user_message("go")}))[
                "task"
            ]
            assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
            assert not await second.recover_task(task["id"], "lost.")  # it asked: not lost
            await second.shutdown()
            assert not second.recoverer.accepting
            assert not await second.recover_task(task["id"], "lost.")
        stored = await backend.store.get(task["id"])
    assert runs == [1]
    assert stored is not None and stored.task.status.state is TaskState.INPUT_REQUIRED


async def test_every_attempt_of_a_task_is_in_its_trace() -> None:
    from helpers.tracing import AGENT_SPAN, TRACE_ID, TRACEPARENT, hex_ids, tracing

    backend = GeneralPathBackend()
    started = anyio.Event()

    async def agent(ctx: TaskContext) -> Any:
        if ctx.is_follow_up:
            return "done"
        await ctx.working()
        if ctx.attempt == 1:
            started.set()
            await anyio.sleep(HANG_GUARD)
        return InputRequired("more?")

    with tracing() as traced, anyio.fail_after(HANG_GUARD):
        observer = traced.observer
        first = A2AServer(
            agent, card=make_card(), backend=backend, recovery="retry", observer=observer
        )
        second = A2AServer(
            agent, card=make_card(), backend=backend, recovery="retry", observer=observer
        )
        async with first, second:
            headers = {**TRACEPARENT, "baggage": "user=secret"}
            sent = await Client(first).result("SendMessage", immediate(), headers=headers)
            task_id = sent["task"]["id"]
            await started.wait()
            assert await second.recover_task(task_id, "lost.")
            done = await wait_for_state(second, task_id, TaskState.INPUT_REQUIRED)
            first.cancel_local_execution(task_id)
            spans = await traced.wait_for(AGENT_SPAN, 2)
            again = {"message": user_message("more", mid="m2", task_id=task_id)}
            followed = await Client(second).result("SendMessage", again)
    first_run = next(s for s in spans if "a2a.attempt" not in (s.attributes or {}))
    second_run = next(s for s in spans if (s.attributes or {}).get("a2a.attempt") == 2)
    # The recovered attempt, started by no call, is a child of the first attempt's span,
    # in the trace of the request that created the task.
    assert hex_ids(second_run)[0] == hex_ids(first_run)[0] == TRACE_ID
    assert second_run.parent is not None
    assert second_run.parent.span_id == first_run.context.span_id
    assert (second_run.attributes or {})["a2a.task.id"] == task_id
    # The task keeps the first attempt's context (never the request's baggage) ...
    record = done.task.metadata["a2a.execution"]
    assert record["attempt"] == 2
    assert record["trace"] == {"traceparent": f"00-{TRACE_ID}-{hex_ids(first_run)[1]}-01"}
    # ... and a follow-up records the trace of the execution that answers it.
    followed_record = followed["task"]["metadata"]["a2a.execution"]
    assert followed_record["attempt"] == 1
    assert followed_record["trace"]["traceparent"].split("-")[1] != TRACE_ID


async def test_an_untraced_server_records_no_trace() -> None:
    from helpers.tracing import TRACEPARENT

    async def agent(ctx: TaskContext) -> str:
        return "done"

    server = A2AServer(agent, card=make_card(), backend=GeneralPathBackend(), recovery="retry")
    async with server:
        sent = await Client(server).result("SendMessage", immediate(), headers=TRACEPARENT)
        done = await wait_for_state(server, sent["task"]["id"], TaskState.COMPLETED)
    assert "a2a.execution" not in done.task.metadata


async def test_every_attempt_sees_the_tasks_owner() -> None:
    backend = GeneralPathBackend()
    started = anyio.Event()
    seen: list[tuple[int, str, Any]] = []

    async def agent(ctx: TaskContext) -> str:
        seen.append((ctx.attempt, ctx.owner, ctx.identity))
        await ctx.working()
        if ctx.attempt == 1:
            started.set()
            await anyio.sleep(HANG_GUARD)
        return "done"

    servers = [
        A2AServer(
            agent,
            card=make_card(),
            backend=backend,
            recovery="retry",
            task_owner=lambda call: "alice",
        )
        for _ in range(2)
    ]
    first, second = servers
    with anyio.fail_after(HANG_GUARD):
        async with first, second:
            task = (await Client(first).result("SendMessage", immediate()))["task"]
            await started.wait()
            assert await second.recover_task(task["id"], "lost.")
            await wait_for_state(second, task["id"], TaskState.COMPLETED)
            first.cancel_local_execution(task["id"])
    assert seen == [(1, "alice", None), (2, "alice", None)]
