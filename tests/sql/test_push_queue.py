"""The SQL backend's durable push queue, on each database, against a real webhook receiver
(aiohttp on 127.0.0.1): every event in order, a webhook that fails then recovers, a job
pending across ``kill -9`` of its server, two workers on one database, the bounds, and no
secret in the queue."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import msgspec
import pytest
import sqlalchemy as sa
from aiohttp import web

from a2a_core.server import PushOptions

sys.path.insert(0, str(Path(__file__).parents[1] / "redis"))  # the HTTP helpers

from redis_harness import Sse
from redis_harness import result as http_result
from redis_harness import send_params as http_send_params

from a2a_core import codec
from a2a_core.server import (
    A2AServer,
    DeliveryRules,
    PushSecretCipher,
    TaskContext,
    WebhookPoster,
    WebhookPushSender,
)
from a2a_core.server.backends import ConcurrentUpdateError, EventLogClosedError, Observer
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_sql import PushQueueSettings, SqlBackend, SqlPushWorker, upgrade
from a2a_sql._common import db_now_us
from helpers.a2a_client import Client, make_card, user_message
from helpers.processes import ServerProcess, free_port
from helpers.tracing import AGENT_SPAN, TRACEPARENT, assert_continued, tracing

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent

FAST = {"timeout": 2.0, "retries": 3, "backoff": 0.05, "max_backoff": 0.2, "jitter": 0.0}


def settings(**options: Any) -> PushQueueSettings:
    values: dict[str, Any] = {"claim_timeout": 5.0, "scan_interval": 0.2, "webhook": FAST}
    values.update(options)
    return PushQueueSettings(**values)


class Hook:
    """A webhook receiver on a port of its own: records what it accepts, answers 503 to
    the first ``failures`` requests, can be stopped and started again on the same port,
    and counts requests carrying the same body at the same time (``overlaps``)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.bodies: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []
        self.tokens: list[str | None] = []
        self.traceparents: list[str | None] = []
        self.failures = 0
        self.delay = 0.0
        self.overlaps = 0
        self._active: dict[bytes, int] = {}

    async def handle(self, request: web.Request) -> web.Response:
        raw = await request.read()
        self._active[raw] = self._active.get(raw, 0) + 1
        if self._active[raw] > 1:
            self.overlaps += 1
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            if self.failures > 0:
                self.failures -= 1
                self.refused.append(json.loads(raw))
                return web.Response(status=503)
            self.bodies.append(json.loads(raw))
            self.tokens.append(request.headers.get("X-A2A-Notification-Token"))
            self.traceparents.append(request.headers.get("traceparent"))
            return web.Response(status=200)
        finally:
            self._active[raw] -= 1

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Hook]:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        try:
            yield self
        finally:
            await runner.cleanup()


async def agent(ctx: TaskContext) -> AsyncIterator[str]:
    """``stream <n>``: n artifact chunks, then completed."""
    command, _, rest = ctx.text.partition(" ")
    if command == "stream":
        for i in range(int(rest)):
            yield f"chunk{i} "


@contextlib.asynccontextmanager
async def serving(backend: SqlBackend, observer: Observer | None = None) -> AsyncIterator[Client]:
    server = A2AServer(
        agent,
        card=make_card(push=True),
        backend=backend,
        observer=observer,
        push=PushOptions(allow_hosts=["127.0.0.1/32"]),
    )
    async with server:
        yield Client(server)


async def make_backend(db_url: str, prefix: str, **options: Any) -> SqlBackend:
    backend = SqlBackend(db_url, prefix=prefix, **options)
    await upgrade(backend.engine, prefix)
    return backend


async def send_with_hook(client: Client, text: str, hook: Hook, token: str = "", **kw: Any) -> str:
    webhook: dict[str, Any] = {"url": hook.url}
    if token:
        webhook["token"] = token
    params = {
        "message": user_message(text, mid=os.urandom(6).hex()),
        "configuration": {"taskPushNotificationConfig": webhook},
    }
    sent = await client.result("SendMessage", params, **kw)
    task_id: str = sent["task"]["id"]
    return task_id


async def pushed_events(backend: SqlBackend, task_id: str) -> list[dict[str, Any]]:
    """The task's logged events after its first (the webhook is set after the task is
    created), as the webhook gets them."""
    logged = await backend.event_log.read(task_id, after=1)
    return [json.loads(codec.encode(e.event)) for e in logged]


async def until(check: Callable[[], bool], timeout: float = 15.0) -> None:
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.02)


async def job_rows(backend: SqlBackend) -> list[Any]:
    jobs = backend.tables.push_jobs
    async with backend.engine.connect() as conn:
        return list((await conn.execute(sa.select(jobs).order_by(jobs.c.id))).all())


async def drained(backend: SqlBackend, timeout: float = 10.0) -> None:
    """Wait for the push queue's table to be empty (a job goes just after its answer)."""
    with anyio.fail_after(timeout):
        while await job_rows(backend):
            await anyio.sleep(0.05)


def task_of(body: dict[str, Any]) -> str:
    update = body.get("statusUpdate") or body.get("artifactUpdate") or {}
    task_id: str = update["taskId"]
    return task_id


async def test_every_event_reaches_the_webhook_in_order_without_a_secret_queued(
    db_url: str, prefix: str
) -> None:
    key = PushSecretCipher.generate_key()
    backend = await make_backend(db_url, prefix, push_queue=settings(), push_secret_keys=[key])
    async with Hook().running() as hook, serving(backend) as client:
        first = await send_with_hook(client, "stream 5", hook, token="s3cret-token")
        second = await send_with_hook(client, "stream 3", hook, token="s3cret-token")
        expected = {t: await pushed_events(backend, t) for t in (first, second)}
        total = sum(len(events) for events in expected.values())
        await until(lambda: len(hook.bodies) >= total)
        for task_id, events in expected.items():
            assert [b for b in hook.bodies if task_of(b) == task_id] == events
            assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert set(hook.tokens) == {"s3cret-token"}
        await until(lambda: backend.push_queue is not None and backend.push_queue.queued == total)
        # Delivered jobs leave the table.
        await drained(backend)
    # The secret stayed encrypted in push_configs (the jobs named the config: see
    # test_jobs_are_written_with_their_event_or_not_at_all).
    async with backend.engine.connect() as conn:
        configs = (await conn.execute(sa.select(backend.tables.push_configs))).all()
    assert len(configs) == 2
    assert "s3cret-token" not in " ".join(str(row) for row in configs)
    await backend.engine.dispose()


async def test_a_failing_webhook_gets_the_event_once_it_recovers_and_a_dead_one_is_given_up(
    db_url: str, prefix: str
) -> None:
    backend = await make_backend(db_url, prefix, push_queue=settings())
    async with Hook().running() as hook, serving(backend) as client:
        hook.failures = 2  # 503, 503, then 200 (the policy allows 3 retries)
        task_id = await send_with_hook(client, "stream 2", hook)
        events = await pushed_events(backend, task_id)
        await until(lambda: len(hook.bodies) >= len(events))
        assert hook.bodies == events  # in order: nothing overtook the failing one
        assert hook.refused == [events[0], events[0]]
        await drained(backend)

        hook.failures = 1000  # never recovers: 4 attempts (1 + 3 retries), then dropped
        hook.refused.clear()
        dead = await send_with_hook(client, "stream 1", hook)
        events = await pushed_events(backend, dead)
        await until(lambda: len(hook.refused) >= 4 * len(events))
        await drained(backend)
        await anyio.sleep(0.3)  # no further attempt comes
        assert hook.refused == [event for event in events for _ in range(4)]
    await backend.engine.dispose()


async def test_the_worker_delivers_with_a_poster_of_its_settings_and_no_sender(
    db_url: str, prefix: str
) -> None:
    """No WebhookPushSender runs: the backend's worker attempts with a `WebhookPoster` made
    from ``PushQueueSettings.webhook``, whose rules decide the retries (here 1: 2 attempts)."""
    once = settings(webhook={**FAST, "retries": 1, "factor": 3.0})
    backend = await make_backend(db_url, prefix, push_queue=once)
    async with Hook().running() as hook, serving(backend) as client:
        assert backend.push_queue is not None
        worker = backend.push_queue.worker
        assert worker is not None and worker.sender is worker.poster
        assert not isinstance(worker.sender, WebhookPushSender)
        assert worker.poster.rules == DeliveryRules(
            retries=1, backoff=0.05, factor=3.0, max_backoff=0.2, jitter=0.0
        )
        assert worker.poster.timeout == 2.0
        hook.failures = 1000  # never answers 2xx: each job is tried twice, then given up
        dead = await send_with_hook(client, "stream 1", hook)
        given_up = await pushed_events(backend, dead)
        await until(lambda: len(hook.refused) >= 2 * len(given_up))
        await drained(backend)
        await anyio.sleep(0.3)  # no third attempt comes
        assert hook.refused == [event for event in given_up for _ in range(2)]
        hook.failures = 0
        alive = await send_with_hook(client, "stream 1", hook)
        events = await pushed_events(backend, alive)
        await until(lambda: len(hook.bodies) >= len(events))
        assert hook.bodies == events
        await drained(backend)
        assert (worker.poster.delivered, worker.poster.failed) == (len(events), len(given_up))
    await backend.engine.dispose()


async def test_a_worker_takes_a_sender_or_a_poster(tmp_path: Path) -> None:
    backend = SqlBackend(f"sqlite+aiosqlite:///{tmp_path / 'push.db'}")
    assert backend.push_queue is not None
    sender = WebhookPushSender()
    worker = SqlPushWorker(backend.push_queue, sender)
    assert (worker.sender, worker.poster) == (sender, sender.poster)
    for wrong in ({}, {"sender": sender, "poster": WebhookPoster()}):
        with pytest.raises(ValueError, match="a sender or a poster"):
            SqlPushWorker(backend.push_queue, **wrong)  # type: ignore[arg-type]
    await backend.engine.dispose()


def test_the_webhook_settings_are_checked_when_built() -> None:
    with pytest.raises(ValueError, match=r"^retries must"):
        settings(webhook={"retries": -1})
    with pytest.raises(ValueError, match=r"^jitter must"):
        settings(webhook={**FAST, "jitter": 2})
    for wrong in ("queue_size", "policy", "retry"):
        with pytest.raises(ValueError, match=f"takes: {wrong} "):
            settings(webhook={**FAST, wrong: 1})
    # The names a WebhookPushSender takes for them still work (``workers``: max_concurrent).
    settings(webhook={**FAST, "workers": 2, "content_type": "application/a2a+json"})


async def test_each_attempt_continues_the_trace_of_the_agent_that_wrote_the_event(
    db_url: str, prefix: str
) -> None:
    """A job keeps the trace context where its event was written (``trace_context``, the
    JSON of its W3C headers): every attempt, the failed one too, is a CLIENT span child of
    the agent's, and the webhook gets the incoming trace."""
    backend = await make_backend(db_url, prefix, push_queue=settings())
    with tracing() as traced:
        async with Hook().running() as hook, serving(backend, traced.observer) as client:
            hook.failures = 1  # one attempt retried: a span of its own, the same parent
            task_id = await send_with_hook(client, "stream 2", hook, headers=TRACEPARENT)
            events = await pushed_events(backend, task_id)
            await until(lambda: len(hook.bodies) >= len(events))
            deliveries = await traced.deliveries(len(events) + 1)
            await drained(backend)
        (agent,) = await traced.wait_for(AGENT_SPAN)
    assert hook.bodies == events and len(events) >= 2
    outcomes = sorted(str(dict(d.attributes or {})["a2a.push.outcome"]) for d in deliveries)
    assert outcomes == ["delivered"] * len(events) + ["retrying"]
    assert_continued(hook.traceparents, deliveries, agent)
    await backend.engine.dispose()


async def test_a_job_delivered_after_a_restart_continues_the_trace(
    db_url: str, prefix: str
) -> None:
    """The first server's agent wrote the events while the webhook was down; a second
    server on the database (another tracer provider: it never saw the agent's span)
    delivers them, as children of that span."""
    slow = settings(webhook={**FAST, "retries": 5, "backoff": 1.0, "max_backoff": 1.0})
    hook = Hook()  # not listening yet
    with tracing() as first_traced:
        backend = await make_backend(db_url, prefix, push_queue=slow)
        async with serving(backend, first_traced.observer) as client:
            task_id = await send_with_hook(client, "stream 2", hook, headers=TRACEPARENT)
            events = await pushed_events(backend, task_id)
            with anyio.fail_after(10):  # attempted (and failed) at least once
                while not any(row.attempts for row in await job_rows(backend)):
                    await anyio.sleep(0.05)
        (agent,) = await first_traced.wait_for(AGENT_SPAN)
        await backend.engine.dispose()
    with tracing() as traced:
        backend = await make_backend(db_url, prefix, push_queue=slow)
        async with hook.running(), serving(backend, traced.observer):
            await until(lambda: len(hook.bodies) >= len(events))
            await drained(backend)
        await backend.engine.dispose()
        deliveries = [
            d
            for d in await traced.deliveries(len(events))
            if dict(d.attributes or {})["a2a.push.outcome"] == "delivered"
        ]
    assert hook.bodies == events
    assert len(deliveries) == len(events)
    assert_continued(hook.traceparents, deliveries, agent)


async def test_a_job_without_an_observer_keeps_no_trace_context(db_url: str, prefix: str) -> None:
    backend = await make_backend(db_url, prefix, push_queue=settings())
    async with Hook().running() as hook, serving(backend) as client:
        hook.delay = 0.5  # the jobs are still in the table when they are read
        await send_with_hook(client, "stream 1", hook, headers=TRACEPARENT)
        rows = await job_rows(backend)
        assert rows and {row.trace_context for row in rows} == {None}
        await until(lambda: len(hook.bodies) >= len(rows))
        await drained(backend)
    assert set(hook.traceparents) == {None}
    await backend.engine.dispose()


class PushServer(ServerProcess):
    """One ``push_server.py`` process, started and ready (its card answers)."""

    def __init__(self, url: str, prefix: str, log: Path) -> None:
        super().__init__(HERE / "push_server.py", "--url", url, "--prefix", prefix, log=log)
        self.wait_ready()


async def test_a_job_pending_at_kill_9_is_delivered_after_the_restart(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    await upgrade(db_url, prefix)
    reader = SqlBackend(db_url, prefix=prefix)  # to look at the tables, runs nothing
    log = tmp_path / "server.log"
    hook = Hook()  # not listening yet: every attempt fails, the jobs stay
    first = PushServer(db_url, prefix, log)
    try:
        async with httpx.AsyncClient(timeout=20) as http:
            params = http_send_params("stream 3")
            params["configuration"] = {"taskPushNotificationConfig": {"url": hook.url}}
            sent = await http_result(http, first.url, "SendMessage", params)
            task_id = sent["task"]["id"]
            assert sent["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            events = await pushed_events(reader, task_id)
            with anyio.fail_after(10):  # attempted (and failed) at least once
                while not any(row.attempts for row in await job_rows(reader)):
                    await anyio.sleep(0.05)
            first.kill()
            pending = await job_rows(reader)
            assert {row.task_id for row in pending} == {task_id}
            assert len(pending) == len(events)

            async with hook.running():
                second = PushServer(db_url, prefix, log)
                try:
                    await until(lambda: len(hook.bodies) >= len(events), timeout=20)
                    # At least once, in order (a job claimed at the kill waits out its
                    # claim, 3 s, and nothing overtakes it).
                    assert hook.bodies == events
                    await drained(reader)
                finally:
                    second.stop()
    finally:
        first.kill()
        await reader.engine.dispose()


async def test_every_event_a_client_saw_before_kill_9_reaches_the_webhook(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    """Killed mid-stream with the receiver down: after the restart (whose restart rule
    fails the task), the webhook gets every event of the log, in order, among them every
    event the client was streamed before the kill."""
    await upgrade(db_url, prefix)
    reader = SqlBackend(db_url, prefix=prefix)
    log = tmp_path / "server.log"
    hook = Hook()  # down until after the kill
    first = PushServer(db_url, prefix, log)
    try:
        async with httpx.AsyncClient(timeout=20) as http:
            params = http_send_params("stream 200 0.01")
            params["configuration"] = {"taskPushNotificationConfig": {"url": hook.url}}
            seen: list[dict[str, Any]] = []
            async with Sse(http, first.url, "SendStreamingMessage", params) as stream:
                while len(seen) < 12:
                    frame = await stream.next()
                    assert frame is not None
                    seen.append(frame[1]["result"])
                first.kill()  # mid-stream: the agent and the worker die with it
            task_id = seen[0]["task"]["id"]
            streamed = seen[1:]  # the first frame is the task (no webhook yet)

            async with hook.running():
                second = PushServer(db_url, prefix, log)
                try:

                    def finished() -> bool:
                        return any(
                            b.get("statusUpdate", {}).get("status", {}).get("state")
                            == "TASK_STATE_FAILED"
                            for b in hook.bodies
                        )

                    await until(finished, timeout=30)
                    events = await pushed_events(reader, task_id)
                    await until(lambda: len(hook.bodies) >= len(events))
                    # At least once: a job delivered twice (none here: the receiver was
                    # down) would repeat in place, so the order is that of the log.
                    delivered = [b for i, b in enumerate(hook.bodies) if b not in hook.bodies[:i]]
                    assert delivered == events
                    assert streamed == events[: len(streamed)]
                    await drained(reader)
                finally:
                    second.stop()
    finally:
        first.kill()
        await reader.engine.dispose()


async def test_two_workers_on_one_database_never_deliver_a_job_twice_at_once(
    db_url: str, prefix: str
) -> None:
    if db_url.startswith("sqlite"):
        pytest.skip("SQLite is a single-process backend: one worker per database")
    options = settings(max_in_flight=2)
    one = await make_backend(db_url, prefix, push_queue=options)
    two = await make_backend(db_url, prefix, push_queue=options, fail_unfinished=False)
    async with Hook().running() as hook, serving(one) as client, serving(two):
        hook.delay = 0.05  # a wide window for a second delivery of the same job
        tasks = [await send_with_hook(client, "stream 3", hook) for _ in range(8)]
        expected = {t: await pushed_events(one, t) for t in tasks}
        total = sum(len(events) for events in expected.values())
        await until(lambda: len(hook.bodies) >= total, timeout=30)
        await anyio.sleep(0.3)  # a duplicate would arrive by now
        assert hook.overlaps == 0
        assert len(hook.bodies) == total  # each job once (no process died)
        for task_id, events in expected.items():
            assert [b for b in hook.bodies if task_of(b) == task_id] == events
        assert one.push_queue is not None and two.push_queue is not None
        workers = [q.worker for q in (one.push_queue, two.push_queue)]
        assert all(w is not None and w.sender.delivered > 0 for w in workers)
    await one.engine.dispose()
    await two.engine.dispose()


def _chunk(task_id: str, n: int) -> StreamResponse:
    return StreamResponse(
        artifact_update=TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id="c",
            artifact=Artifact(artifact_id=f"a{n}", parts=[Part(text=f"chunk{n}")]),
        )
    )


def _status(state: TaskState) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=TaskStatus(state=state)
        )
    )


async def _logged_task(backend: SqlBackend, task_id: str, history: int = 0) -> Task:
    task = Task(
        id=task_id,
        context_id="c",
        status=TaskStatus(state=TaskState.WORKING),
        history=[
            Message(message_id=f"m{i}", role=Role.USER, parts=[Part(text="x" * 100)])
            for i in range(history)
        ],
    )
    await backend.store.create_logged(task, StreamResponse(task=task))
    return task


async def _emit(backend: SqlBackend, task: Task, count: int) -> None:
    stored = await backend.store.get(task.id)
    assert stored is not None
    for n in range(count):
        changed = msgspec.structs.replace(task, metadata={"n": n})
        stored = await backend.store.save_logged(
            changed, _chunk(task.id, n), expected_version=stored.version
        )


async def test_the_bounds_drop_jobs_and_count_them(db_url: str, prefix: str) -> None:
    bounds = settings(max_jobs_per_task=3, max_jobs=5, max_job_bytes=2_000)
    backend = await make_backend(db_url, prefix, push_queue=bounds)
    queue = backend.push_queue
    assert queue is not None
    configs = backend.push_config_store
    try:
        # Per task: the oldest jobs make room for the newest.
        busy = await _logged_task(backend, "busy")
        await configs.set(TaskPushNotificationConfig(task_id="busy", url="http://127.0.0.1/h"))
        await _emit(backend, busy, 5)
        rows = await job_rows(backend)
        assert [row.seq for row in rows] == [4, 5, 6]  # events 2..6 were queued
        assert queue.dropped == 2
        # In all: once a scan saw max_jobs, new jobs are not queued.
        other = await _logged_task(backend, "other")
        await configs.set(TaskPushNotificationConfig(task_id="other", url="http://127.0.0.1/h"))
        await _emit(backend, other, 2)
        assert await queue.refresh() == 5 and queue.full
        await _emit(backend, other, 1)
        assert len(await job_rows(backend)) == 5
        assert queue.dropped == 3
        # In bytes: a v0.3 job keeps a copy of the task; one too large is not queued.
        async with backend.engine.begin() as conn:
            await conn.execute(sa.delete(backend.tables.push_jobs))
        assert await queue.refresh() == 0 and not queue.full
        big = await _logged_task(backend, "big", history=30)
        await configs.set(
            TaskPushNotificationConfig(task_id="big", id="v1", url="http://127.0.0.1/h")
        )
        await configs.set(
            TaskPushNotificationConfig(task_id="big", id="v03", url="http://127.0.0.1/h"),
            legacy_v0_3=True,
        )
        await _emit(backend, big, 1)
        assert [(row.config_id, row.task_body) for row in await job_rows(backend)] == [("v1", None)]
        assert queue.dropped == 4
        # A small task's v0.3 job carries the task as it stood after the event.
        small = await _logged_task(backend, "small")
        await configs.set(
            TaskPushNotificationConfig(task_id="small", url="http://127.0.0.1/h"),
            legacy_v0_3=True,
        )
        await _emit(backend, small, 1)
        (row,) = [r for r in await job_rows(backend) if r.task_id == "small"]
        assert codec.decode(row.task_body, Task).metadata == {"n": 0}
        # Jobs go with their task.
        await backend.store.delete("small")
        assert all(r.task_id != "small" for r in await job_rows(backend))
    finally:
        await backend.engine.dispose()


async def test_a_job_claimed_by_a_dead_process_is_delivered_once_its_claim_ran_out(
    db_url: str, prefix: str
) -> None:
    backend = await make_backend(db_url, prefix, push_queue=settings(), fail_unfinished=False)
    jobs = backend.tables.push_jobs
    now = db_now_us()
    async with Hook().running() as hook:
        # A v0.3 webhook's job, claimed for 2 s by a process that died at once.
        task = await _logged_task(backend, "legacy")
        await backend.push_config_store.set(
            TaskPushNotificationConfig(task_id="legacy", url=hook.url), legacy_v0_3=True
        )
        await _emit(backend, task, 1)
        dead = "d" * 32
        async with backend.engine.begin() as conn:
            await conn.execute(sa.update(jobs).values(claim=dead, claimed_until=now + 2_000_000))
        async with serving(backend):
            # On SQLite (one process per database) the claim is released when the server
            # starts; elsewhere it holds until its deadline, on the database's clock.
            while not db_url.startswith("sqlite"):
                seen = len(hook.bodies)  # before the claim is read: if it still held then...
                async with backend.engine.connect() as conn:
                    # The dead process's claim, not the one this server takes once it ran out.
                    valid = await conn.scalar(
                        sa.select(sa.and_(jobs.c.claim == dead, jobs.c.claimed_until > now))
                    )
                if not valid:
                    break
                assert seen == 0  # ...nothing was delivered: the claim was not ours
                await anyio.sleep(0.05)
            await until(lambda: len(hook.bodies) == 1)
            await drained(backend)
    (body,) = hook.bodies
    assert body["kind"] == "task"  # the v0.3 Task as it stood after the event
    assert body["id"] == "legacy" and body["metadata"] == {"n": 0}
    await backend.engine.dispose()


async def test_jobs_are_written_with_their_event_or_not_at_all(db_url: str, prefix: str) -> None:
    key = PushSecretCipher.generate_key()
    backend = await make_backend(db_url, prefix, push_queue=settings(), push_secret_keys=[key])
    try:
        task = await _logged_task(backend, "t")
        await backend.push_config_store.set(
            TaskPushNotificationConfig(
                task_id="t", id="a", url="http://127.0.0.1/a", token="s3cret-token"
            )
        )
        await backend.push_config_store.set(
            TaskPushNotificationConfig(task_id="t", id="b", url="http://127.0.0.1/b")
        )
        await _emit(backend, task, 2)
        logged = [e.seq for e in await backend.event_log.read("t", after=1)]
        rows = await job_rows(backend)
        assert sorted((row.seq, row.config_id) for row in rows) == [
            (seq, c) for seq in logged for c in ("a", "b")
        ]
        # A job names its event and its webhook: no copy of a secret, encrypted or not.
        assert {row.task_body for row in rows} == {None}
        assert "s3cret-token" not in " ".join(str(row) for row in rows)
        # A write that loses its race logs no event, and queues no job.
        stored = await backend.store.get("t")
        assert stored is not None
        with pytest.raises(ConcurrentUpdateError):
            await backend.store.save_logged(
                task, _chunk("t", 9), expected_version=stored.version - 1
            )
        # Nor does a write to a finished task's closed log.
        done = msgspec.structs.replace(task, status=TaskStatus(state=TaskState.COMPLETED))
        await backend.store.save_logged(
            done, _status(TaskState.COMPLETED), expected_version=stored.version
        )
        with pytest.raises(EventLogClosedError):
            await backend.store.save_logged(
                task, _chunk("t", 10), expected_version=stored.version + 1
            )
        logged = [e.seq for e in await backend.event_log.read("t", after=1)]
        assert sorted({row.seq for row in await job_rows(backend)}) == logged
    finally:
        await backend.engine.dispose()
