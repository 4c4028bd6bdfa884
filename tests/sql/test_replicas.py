"""Two server processes on one PostgreSQL, one Starlette and one aiohttp, over real HTTP.

What one replica starts, the other serves: GetTask, ListTasks, SubscribeToTask (woken by
``LISTEN/NOTIFY``, far sooner than any idle timeout), CancelTask (the agent stops where it
runs). A listener connection killed by the database is recovered. ``kill -9`` of the
replica running a task: the other fails it when the lease runs out, and its subscriber gets
the final event (the time from the kill to that event is printed: ``pytest -s``). A replica
stopped cleanly fails its own tasks and gives up its lease.

PostgreSQL only (SQLite and MySQL are single-replica backends): skipped, saying so, when
``A2A_TEST_POSTGRES_URL`` is unset.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).parents[1] / "redis"))  # the HTTP helpers

from redis_harness import Receiver, Sse, result, rpc, send_params, state_of

from a2a_core.server import SHUTDOWN_TEXT
from a2a_sql import HOST_LOST_TEXT, upgrade
from helpers.databases import own_database
from helpers.processes import ServerProcess

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
COMPLETED = "TASK_STATE_COMPLETED"
#: A wake-up by ``NOTIFY`` takes milliseconds; the replicas' keep-alive (the follow's idle
#: timeout, which would also bring the events) is 30 s: any event later than this failed.
PROMPT = 2.0


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    """A PostgreSQL database of this module's own (dropped at the end)."""
    server = os.environ.get("A2A_TEST_POSTGRES_URL")
    if not server:
        pytest.skip(
            "multi-replica tests need PostgreSQL: set A2A_TEST_POSTGRES_URL="
            "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
        )
    with own_database(server) as url:
        yield url


async def sql(url: str, statement: str, **params: Any) -> list[Any]:
    """Rows of one statement, on a connection of its own."""
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            found = await conn.execute(sa.text(statement), params)
            return list(found.all()) if found.returns_rows else []
    finally:
        await engine.dispose()


class Replica(ServerProcess):
    """One ``sql_server.py`` process on PostgreSQL with a replica id of its own."""

    def __init__(
        self, adapter: str, url: str, prefix: str, log: Path, *, lease_ttl: float = 10.0
    ) -> None:
        self.adapter = adapter
        self.replica_id = f"{adapter}-{uuid.uuid4().hex[:6]}"
        super().__init__(
            HERE / "sql_server.py",
            "--url", url, "--prefix", prefix,
            "--adapter", adapter, "--replica-id", self.replica_id,
            "--lease-ttl", str(lease_ttl), "--keep-alive", "30",
            log=log,
        )  # fmt: skip
        self.name = f"replica {self.url}"


def started(*replicas: Replica) -> None:
    try:
        for replica in replicas:
            replica.wait_ready()
    except BaseException:
        for replica in replicas:
            replica.kill()
        raise


@pytest.fixture(scope="module")
def replicas(pg_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Replica]]:
    """A Starlette replica and an aiohttp replica on one prefix."""
    prefix = f"r{uuid.uuid4().hex[:8]}_"
    asyncio.run(upgrade(pg_url, prefix))
    logs = tmp_path_factory.mktemp("replicas")
    pair = [Replica(a, pg_url, prefix, logs / f"{a}.log") for a in ("starlette", "aiohttp")]
    started(*pair)
    try:
        yield pair
    finally:
        for replica in pair:
            replica.stop()


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=20) as http:
        yield http


async def test_send_on_one_get_and_list_on_the_other(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    for one, two in (replicas, replicas[::-1]):
        ctx = str(uuid.uuid4())
        params = send_params("echo hello")
        params["message"]["contextId"] = ctx
        sent = (await result(client, one.url, "SendMessage", params))["task"]
        assert sent["status"]["state"] == COMPLETED
        got = await result(client, two.url, "GetTask", {"id": sent["id"]})
        assert got["status"] == sent["status"] and got["artifacts"] == sent["artifacts"]
        listed = await result(client, two.url, "ListTasks", {"contextId": ctx})
        assert [t["id"] for t in listed["tasks"]] == [sent["id"]] and listed["totalSize"] == 1


async def follow_ticks(
    client: httpx.AsyncClient, url: str, task_id: str, headers: dict[str, str] | None = None
) -> tuple[list[tuple[str | None, Any]], list[float]]:
    """Every frame of a subscription, and each tick's delay (s) from its emission."""
    frames: list[tuple[str | None, Any]] = []
    delays: list[float] = []
    async with Sse(client, url, "SubscribeToTask", {"id": task_id}, headers) as live:
        with anyio.fail_after(60):
            while (frame := await live.next()) is not None:
                frames.append(frame)
                update = frame[1]["result"].get("artifactUpdate")
                if update is not None:
                    stamp = int(update["artifact"]["parts"][0]["text"])
                    delays.append((time.time_ns() - stamp) / 1e9)
    return frames, delays


async def test_a_stream_on_the_other_replica_is_woken_at_once(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    """Each event of a task run on A reaches B's subscriber promptly (NOTIFY), then
    replays with the same ids on either replica."""
    one, two = replicas
    for runner, watcher in ((one, two), (two, one)):
        sent = await result(
            client, runner.url, "SendMessage", send_params("tick 15 0.05", returnImmediately=True)
        )
        task_id = sent["task"]["id"]
        frames, delays = await follow_ticks(client, watcher.url, task_id)
        ids = [int(f[0]) for f in frames if f[0] is not None]
        assert ids == list(range(ids[0], ids[-1] + 1))  # no gap, no repeat
        assert state_of(frames[-1][1]) == COMPLETED
        assert len(delays) >= 10 and max(delays) < PROMPT, delays
        headers = {"Last-Event-ID": "3"}
        for replica in replicas:
            async with Sse(client, replica.url, "SubscribeToTask", {"id": task_id}, headers) as s:
                replayed = await s.rest()
            assert [int(f[0]) for f in replayed] == list(range(4, ids[-1] + 1))


async def test_events_too_large_for_a_notification_are_read_from_the_table(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    """Small events travel with their notification, large ones (over 4000 bytes) only wake
    the other replica's followers to read them: mixed, they arrive whole and in order."""
    one, two = replicas
    sizes = [10, 6000, 20, 20, 9000, 10]
    text = "sizes 0.05 " + " ".join(map(str, sizes))
    sent = await result(client, one.url, "SendMessage", send_params(text, returnImmediately=True))
    async with Sse(client, two.url, "SubscribeToTask", {"id": sent["task"]["id"]}) as live:
        with anyio.fail_after(PROMPT + 0.05 * len(sizes)):
            frames = await live.rest()
    chunks = [
        f[1]["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"]
        for f in frames
        if "artifactUpdate" in f[1]["result"]
    ]
    assert [len(c) for c in chunks] == sizes[-len(chunks) :] and len(chunks) >= len(sizes) - 1
    assert state_of(frames[-1][1]) == COMPLETED
    ids = [int(f[0]) for f in frames if f[0] is not None]
    assert ids == list(range(ids[0], ids[-1] + 1))


async def test_cancel_on_the_other_replica_stops_the_agent(
    replicas: list[Replica], client: httpx.AsyncClient
) -> None:
    for runner, other in (replicas, replicas[::-1]):
        sent = await result(
            client, runner.url, "SendMessage", send_params("wait", returnImmediately=True)
        )
        task_id = sent["task"]["id"]
        async with Sse(client, runner.url, "SubscribeToTask", {"id": task_id}) as watcher:
            assert await watcher.next() is not None
            canceled = await result(client, other.url, "CancelTask", {"id": task_id})
            assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
            with anyio.fail_after(PROMPT):
                frames = await watcher.rest()
        assert state_of(frames[-1][1]) == "TASK_STATE_CANCELED"
        with anyio.fail_after(PROMPT):  # the agent, on the runner, saw its cancellation
            while f"agent of task {task_id} was cancelled" not in runner.output():
                await anyio.sleep(0.02)
        assert f"task {task_id} was finished elsewhere" in runner.output()
        again = await rpc(client, runner.url, "CancelTask", {"id": task_id})
        assert again["error"]["code"] == -32002  # not cancelable: it is canceled


async def test_a_killed_listener_connection_is_recovered(
    replicas: list[Replica], client: httpx.AsyncClient, pg_url: str
) -> None:
    """The database ends B's LISTEN connection mid-stream: B listens again, wakes its
    followers to re-read, and the rest of the events still arrive promptly."""
    one, two = replicas
    sent = await result(
        client, one.url, "SendMessage", send_params("tick 30 0.05", returnImmediately=True)
    )
    task_id = sent["task"]["id"]
    name = f"a2a-listen:{two.replica_id}"
    async with Sse(client, two.url, "SubscribeToTask", {"id": task_id}) as live:
        frames = [await live.next() for _ in range(5)]
        killed = await sql(
            pg_url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :n",
            n=name,
        )
        assert killed == [(True,)]
        with anyio.fail_after(60):
            frames += await live.rest()
    ids = [int(f[0]) for f in frames if f is not None and f[0] is not None]
    assert ids == list(range(ids[0], ids[-1] + 1))
    assert state_of(frames[-1][1]) == COMPLETED  # type: ignore[index]
    ticks = [f for f in frames if f is not None and "artifactUpdate" in f[1]["result"]]
    assert len(ticks) == 30
    with anyio.fail_after(PROMPT):
        while "listens again" not in two.output():
            await anyio.sleep(0.02)
    # Later tasks are followed at once again.
    later = await result(
        client, one.url, "SendMessage", send_params("tick 5 0.05", returnImmediately=True)
    )
    _, delays = await follow_ticks(client, two.url, later["task"]["id"])
    assert len(delays) >= 3 and max(delays) < PROMPT, delays


async def test_a_cancel_while_the_runner_does_not_listen_still_stops_its_agent(
    replicas: list[Replica], client: httpx.AsyncClient, pg_url: str
) -> None:
    """The database keeps ending A's LISTEN connection while B cancels A's task: whether
    A heard the close or missed it (then it looks its tasks up once it listens again), the
    agent on A is cancelled."""
    one, two = replicas
    sent = await result(client, one.url, "SendMessage", send_params("wait", returnImmediately=True))
    task_id = sent["task"]["id"]
    kill = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = :n"

    async def keep_killing() -> None:
        for _ in range(40):
            await sql(pg_url, kill, n=f"a2a-listen:{one.replica_id}")
            await anyio.sleep(0.005)

    async with anyio.create_task_group() as group:
        group.start_soon(keep_killing)
        await anyio.sleep(0.05)
        canceled = await result(client, two.url, "CancelTask", {"id": task_id})
        assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    with anyio.fail_after(10):
        while f"agent of task {task_id} was cancelled" not in one.output():
            await anyio.sleep(0.02)


async def test_kill_9_of_the_running_replica_fails_its_tasks(
    pg_url: str, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    """The survivor fails the dead replica's tasks once its lease runs out: its subscriber
    gets the final event, and so do the tasks' webhooks."""
    prefix = f"k{uuid.uuid4().hex[:8]}_"
    await upgrade(pg_url, prefix)
    lease_ttl = 2.0
    doomed = Replica("aiohttp", pg_url, prefix, tmp_path / "doomed.log", lease_ttl=lease_ttl)
    survivor = Replica("starlette", pg_url, prefix, tmp_path / "survivor.log", lease_ttl=lease_ttl)
    try:
        started(doomed, survivor)
        async with Receiver().running() as receiver:
            tasks = []
            for _ in range(3):
                params = send_params("wait", returnImmediately=True)
                params["configuration"]["taskPushNotificationConfig"] = {"url": receiver.url}
                sent = await result(client, doomed.url, "SendMessage", params)
                tasks.append(sent["task"]["id"])
            runners = await sql(
                pg_url, f"SELECT DISTINCT runner FROM {prefix}tasks WHERE runner IS NOT NULL"
            )
            assert runners == [(doomed.replica_id,)]
            async with Sse(client, survivor.url, "SubscribeToTask", {"id": tasks[0]}) as watcher:
                assert await watcher.next() is not None
                await anyio.sleep(lease_ttl / 2)  # the lease was renewed at least once
                doomed.kill()
                killed_at = time.monotonic()
                with anyio.fail_after(lease_ttl * 5):
                    frames = await watcher.rest()
                took = time.monotonic() - killed_at
            final = frames[-1][1]["result"]["statusUpdate"]["status"]
            assert final["state"] == "TASK_STATE_FAILED"
            assert final["message"]["parts"][0]["text"] == HOST_LOST_TEXT
            print(f"\nkill -9 to final event on the other replica: {took:.2f} s (lease_ttl 2 s)")
            with anyio.fail_after(10):  # the others fail together with the first
                for task_id in tasks:
                    while (await result(client, survivor.url, "GetTask", {"id": task_id}))[
                        "status"
                    ]["state"] != "TASK_STATE_FAILED":
                        await anyio.sleep(0.05)
            with anyio.fail_after(10):
                while len(failed_pushes(receiver)) < len(tasks):
                    await anyio.sleep(0.05)
            assert sorted(failed_pushes(receiver)) == sorted(tasks)
        with anyio.fail_after(10):  # the dead replica's lease is gone, the survivor's kept
            while await sql(pg_url, f"SELECT id FROM {prefix}replicas ORDER BY id") != [
                (survivor.replica_id,)
            ]:
                await anyio.sleep(0.05)
    finally:
        doomed.kill()
        survivor.stop()


@pytest.mark.parametrize("adapter", ["starlette", "aiohttp"])
async def test_a_replica_stopped_cleanly_fails_its_tasks_and_leaves(
    adapter: str, pg_url: str, tmp_path: Path, client: httpx.AsyncClient
) -> None:
    """SIGTERM: the stopping replica fails its own running tasks (after its grace), so the
    other's subscriber hears it at once, not after the lease (a minute here), and its
    lease row goes; the survivor's start failed none of the running replica's tasks."""
    prefix = f"s{uuid.uuid4().hex[:8]}_"
    await upgrade(pg_url, prefix)
    stopping = Replica(adapter, pg_url, prefix, tmp_path / "stopping.log", lease_ttl=60)
    survivor: Replica | None = None
    try:
        started(stopping)
        sent = await result(
            client, stopping.url, "SendMessage", send_params("wait", returnImmediately=True)
        )
        task_id = sent["task"]["id"]
        # A replica starting beside a running one leaves its tasks alone (restart rule).
        survivor = Replica("starlette", pg_url, prefix, tmp_path / "survivor.log", lease_ttl=60)
        started(survivor)
        got = await result(client, survivor.url, "GetTask", {"id": task_id})
        assert got["status"]["state"] == "TASK_STATE_WORKING"
        async with Sse(client, survivor.url, "SubscribeToTask", {"id": task_id}) as watcher:
            assert await watcher.next() is not None
            stopping.process.terminate()
            with anyio.fail_after(20):  # far below the lease: only the replica itself fails it
                frames = await watcher.rest()
                exit_code = await anyio.to_thread.run_sync(stopping.process.wait)
        final = frames[-1][1]["result"]["statusUpdate"]["status"]
        assert final["state"] == "TASK_STATE_FAILED"
        assert final["message"]["parts"][0]["text"] == SHUTDOWN_TEXT
        assert exit_code in (0, -15)  # uvicorn re-raises SIGTERM once it has shut down
        rows = await sql(pg_url, f"SELECT id FROM {prefix}replicas")
        assert rows == [(survivor.replica_id,)]  # only the survivor is left
    finally:
        stopping.kill()
        if survivor is not None:
            survivor.stop()


def failed_pushes(receiver: Receiver) -> list[str]:
    """The tasks whose FAILED status the webhook received."""
    return [
        body["statusUpdate"]["taskId"]  # type: ignore[index]
        for body in receiver.bodies
        if body.get("statusUpdate", {}).get("status", {}).get("state")  # type: ignore[union-attr]
        == "TASK_STATE_FAILED"
    ]


def _card() -> Any:
    from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

    return AgentCard(
        name="Reaper test",
        description="in-process replicas",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="test skill", tags=["t"])],
    )


async def test_one_replica_wins_a_run_out_lease(pg_url: str) -> None:
    """Two replicas (in process) reap at once: exactly one claims the run-out lease and
    fails the lost replica's running task (which neither start's restart rule touched: its
    runner has a lease row); its lease row goes, theirs are kept, and every deadline is the
    database's ``now()`` plus the lease."""
    from a2a_core.server import A2AServer
    from a2a_core.types import Message, Part, Role, StreamResponse, Task, TaskState, TaskStatus
    from a2a_sql import SqlBackend

    prefix = f"c{uuid.uuid4().hex[:8]}_"
    await upgrade(pg_url, prefix)
    lost = SqlBackend(pg_url, prefix=prefix, replica_id="lost")  # its store only: "dead"
    message = Message(message_id="m", role=Role.USER, parts=[Part(text="hi")])
    status = TaskStatus(state=TaskState.WORKING)
    task = Task(id="t-lost", context_id="c", status=status, history=[message])
    await lost.store.create_logged(task, StreamResponse(task=task))  # runner: "lost"
    await lost.engine.dispose()
    await sql(
        pg_url,
        f"INSERT INTO {prefix}replicas VALUES ('lost', now() - interval '1 second', NULL)",
    )

    async def agent(_ctx: Any) -> str:
        return "unused"

    backends = [SqlBackend(pg_url, prefix=prefix, replica_id=name, lease_ttl=60.0) for name in "xy"]
    servers = [A2AServer(agent, card=_card(), base_url="http://x", backend=b) for b in backends]
    async with servers[0], servers[1]:
        claims: list[bool] = []

        async def reap(i: int) -> None:
            replicas = backends[i].replicas
            assert replicas is not None
            claims.append(await replicas.reap_once(servers[i]))

        async with anyio.create_task_group() as group:
            for i in range(2):
                group.start_soon(reap, i)
        assert sorted(claims) == [False, True]
        stored = await backends[0].store.get("t-lost")
        assert stored is not None and stored.task.status.state is TaskState.FAILED
        assert stored.task.status.message is not None
        assert stored.task.status.message.parts[0].text == HOST_LOST_TEXT
        assert sum(b.replicas.reaped for b in backends if b.replicas) == 1
        leases = await sql(
            pg_url,
            f"SELECT id, extract(epoch FROM lease_until - now()) FROM {prefix}replicas ORDER BY id",
        )
        assert [row[0] for row in leases] == ["x", "y"]
        assert all(40 < float(row[1]) <= 60 for row in leases)  # now() + lease_ttl
        runner = await sql(pg_url, f"SELECT runner FROM {prefix}tasks WHERE id = 't-lost'")
        assert runner == [(None,)]
