"""The database going away and coming back, over real HTTP (a server process of its own).

The machine's PostgreSQL and MariaDB are shared, so they are never stopped: the server
reaches its database through a `TcpProxy` the test cuts and restores (a real "database
down" for every driver), or has its connections killed with ``pg_terminate_backend`` (a
PostgreSQL restart, as its clients see it). While the database is unreachable, calls that
need it get -32603 "Task store unavailable" (503 on REST), open streams a final error
frame, the card is still served, and the log has one warning, no traceback; when it is
back, the server serves again by itself, and nothing it acknowledged is lost.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).parents[1] / "redis"))  # the HTTP helpers

from redis_harness import Sse, result, rpc, send_params
from sql_server import Server

from a2a_sql import upgrade
from helpers.tcp_proxy import TcpProxy

pytestmark = pytest.mark.anyio

CARD = "/.well-known/agent-card.json"
UNAVAILABLE = "Task store unavailable"


def _networked(db_url: str) -> sa.URL:
    url = sa.make_url(db_url)
    if url.get_backend_name() == "sqlite":
        pytest.skip("SQLite is a file: it cannot become unreachable")
    return url


def _through(proxy: TcpProxy, url: sa.URL) -> str:
    """The database URL ``url``, reached through ``proxy``."""
    return url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)


async def test_requests_fail_clearly_while_the_database_is_down_and_recover(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    url = _networked(db_url)
    await upgrade(db_url, prefix)
    with TcpProxy(url.host or "127.0.0.1", url.port or 0) as proxy:
        server = Server(
            _through(proxy, url),
            prefix,
            tmp_path / "server.log",
            "--keep-alive",
            "0.3",
        )
        try:
            async with httpx.AsyncClient(timeout=20) as client:
                before = (
                    await result(client, server.url, "SendMessage", send_params("echo kept"))
                )["task"]
                waiting = await result(
                    client, server.url, "SendMessage", send_params("wait", returnImmediately=True)
                )
                async with Sse(
                    client, server.url, "SubscribeToTask", {"id": waiting["task"]["id"]}
                ) as live:
                    assert await live.next() is not None
                    proxy.cut()
                    # The open stream ends with the error, at its next look at the store.
                    with anyio.fail_after(10):
                        frames = await live.rest()
                assert frames[-1][0] is None  # an error frame has no event id
                assert frames[-1][1]["error"]["code"] == -32603
                assert frames[-1][1]["error"]["message"] == UNAVAILABLE

                for method, params in (
                    ("GetTask", {"id": before["id"]}),
                    ("ListTasks", {}),
                    ("SendMessage", send_params("echo lost")),
                    ("SendMessage", send_params("echo lost again")),
                ):
                    error = (await rpc(client, server.url, method, params))["error"]
                    assert error == {
                        "code": -32603,
                        "message": UNAVAILABLE,
                        "data": [
                            {
                                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                "reason": "INTERNAL",
                                "domain": "a2a-protocol.org",
                            }
                        ],
                    }, (method, error)
                rest = await client.get(
                    f"{server.url}/tasks/{before['id']}", headers={"A2A-Version": "1.0"}
                )
                assert rest.status_code == 503
                assert rest.json()["error"]["message"] == UNAVAILABLE
                sent = await client.post(
                    f"{server.url}/message:send",
                    json=send_params("echo lost on REST"),
                    headers={"A2A-Version": "1.0"},
                )
                assert sent.status_code == 503, sent.text
                card = await client.get(server.url + CARD)
                assert card.status_code == 200 and card.json()["name"] == "SQL test agent"

                proxy.restore()
                with anyio.fail_after(10):
                    while "error" in (
                        doc := await rpc(client, server.url, "GetTask", {"id": before["id"]})
                    ):
                        await anyio.sleep(0.1)
                assert doc["result"] == before
                after = (await result(client, server.url, "SendMessage", send_params("echo back")))[
                    "task"
                ]
                assert after["status"]["state"] == "TASK_STATE_COMPLETED"
                listed = await result(client, server.url, "ListTasks", {})
                ids = {t["id"] for t in listed["tasks"]}
                assert {before["id"], waiting["task"]["id"], after["id"]} <= ids
            log = server.output()
            assert "Traceback" not in log, log
            assert log.count("the database unreachable") == 1, log  # one outage, one line
        finally:
            server.stop()


async def test_a_network_that_drops_packets_costs_a_request_the_statement_timeout(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    """No reset, no refusal: the bytes stop. Without a timeout each request would wait for
    the kernel to give up on the connection (about 15 minutes); with the backend's
    ``statement_timeout`` it gets the clear error in about that time, and once the network
    answers again the server serves by itself."""
    url = _networked(db_url)
    await upgrade(db_url, prefix)
    timeout = 1.0
    with TcpProxy(url.host or "127.0.0.1", url.port or 0) as proxy:
        server = Server(
            _through(proxy, url),
            prefix,
            tmp_path / "server.log",
            "--statement-timeout",
            str(timeout),
        )
        try:
            async with httpx.AsyncClient(timeout=60) as client:
                kept = (await result(client, server.url, "SendMessage", send_params("echo kept")))[
                    "task"
                ]
                proxy.stall()
                for method, params in (
                    ("GetTask", {"id": kept["id"]}),
                    ("SendMessage", send_params("echo lost")),
                ):
                    started = anyio.current_time()
                    error = (await rpc(client, server.url, method, params))["error"]
                    waited = anyio.current_time() - started
                    assert (error["code"], error["message"]) == (-32603, UNAVAILABLE), error
                    # A statement's timeout, a ping's (a connection idle for a while is
                    # pinged first), or a new connection's connect timeout (10 s): bounded.
                    assert waited < 25, (method, waited)
                card = await client.get(server.url + CARD)
                assert card.status_code == 200
                proxy.restore()
                with anyio.fail_after(30):
                    while "error" in (
                        doc := await rpc(client, server.url, "GetTask", {"id": kept["id"]})
                    ):
                        assert doc["error"]["message"] == UNAVAILABLE
                        await anyio.sleep(0.2)
                assert doc["result"] == kept
                after = (await result(client, server.url, "SendMessage", send_params("echo back")))[
                    "task"
                ]
                assert after["status"]["state"] == "TASK_STATE_COMPLETED"
            log = server.output()
            assert "Traceback" not in log, log
        finally:
            server.stop()


async def test_a_running_agent_rides_out_a_short_outage(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    """The agent's writes during a cut of a second are tried again (``write_retry``): the
    task completes as if nothing happened, every chunk logged once."""
    url = _networked(db_url)
    await upgrade(db_url, prefix)
    with TcpProxy(url.host or "127.0.0.1", url.port or 0) as proxy:
        server = Server(_through(proxy, url), prefix, tmp_path / "s.log")
        try:
            async with httpx.AsyncClient(timeout=30) as client:
                sent = await result(
                    client,
                    server.url,
                    "SendMessage",
                    send_params("stream 20 0.1", returnImmediately=True),
                )
                task_id = sent["task"]["id"]
                await anyio.sleep(0.5)
                proxy.cut()
                await anyio.sleep(1.0)
                proxy.restore()
                with anyio.fail_after(30):
                    while True:
                        doc = await rpc(client, server.url, "GetTask", {"id": task_id})
                        state = doc.get("result", {}).get("status", {}).get("state")
                        if state in ("TASK_STATE_COMPLETED", "TASK_STATE_FAILED"):
                            break
                        await anyio.sleep(0.1)
                task = doc["result"]
                assert state == "TASK_STATE_COMPLETED", task
                text = "".join(p["text"] for a in task["artifacts"] for p in a["parts"])
                assert text == "".join(f"chunk{i} " for i in range(20))
                async with Sse(
                    client,
                    server.url,
                    "SubscribeToTask",
                    {"id": task_id},
                    headers={"Last-Event-ID": "0"},
                ) as replay:
                    frames = await replay.rest()
                chunks = [
                    part["text"]
                    for _, frame in frames
                    if "artifactUpdate" in frame.get("result", {})
                    for part in frame["result"]["artifactUpdate"]["artifact"]["parts"]
                ]
                assert chunks == [f"chunk{i} " for i in range(20)]  # each logged once
            log = server.output()
            assert "Traceback" not in log, log
            assert log.count("the database unreachable") == 1, log  # the cut was felt
        finally:
            server.stop()


async def _terminate_connections(admin_url: str, database: str, stop: anyio.Event) -> int:
    """Kill every connection to ``database`` (not ours: we are on another one) every
    few tens of milliseconds until ``stop``; returns how many were killed."""
    engine = create_async_engine(admin_url, isolation_level="AUTOCOMMIT")
    killed = 0
    try:
        async with engine.connect() as conn:
            while not stop.is_set():
                rows = await conn.execute(
                    sa.text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = :db AND pid <> pg_backend_pid()"
                    ),
                    {"db": database},
                )
                killed += sum(1 for (done,) in rows if done)
                await anyio.sleep(random.uniform(0.02, 0.15))
    finally:
        await engine.dispose()
    return killed


async def test_postgresql_restarts_under_load_lose_no_acknowledged_write(
    db_url: str, prefix: str, tmp_path: Path
) -> None:
    url = _networked(db_url)
    if url.get_backend_name() != "postgresql":
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    await upgrade(db_url, prefix)
    server = Server(db_url, prefix, tmp_path / "server.log")
    acknowledged: dict[str, dict[str, Any]] = {}
    failures: list[dict[str, Any]] = []
    killed = 0
    try:
        async with httpx.AsyncClient(timeout=20) as client:

            async def sender(worker: int) -> None:
                for i in range(40):
                    doc = await rpc(
                        client, server.url, "SendMessage", send_params(f"echo {worker}-{i}")
                    )
                    if "error" in doc:
                        failures.append(doc["error"])
                    else:
                        task = doc["result"]["task"]
                        acknowledged[task["id"]] = task

            async def killer(stop: anyio.Event) -> None:
                nonlocal killed
                admin = url.set(database="postgres").render_as_string(hide_password=False)
                killed = await _terminate_connections(admin, url.database or "", stop)

            stop = anyio.Event()
            with anyio.fail_after(90):
                async with anyio.create_task_group() as group:
                    group.start_soon(killer, stop)
                    async with anyio.create_task_group() as senders:
                        for worker in range(4):
                            senders.start_soon(sender, worker)
                    stop.set()
            assert killed > 0
            assert acknowledged, failures
            for error in failures:  # the only failure a client may see: the clear one
                assert (error["code"], error["message"]) == (-32603, UNAVAILABLE), error
            # The server serves again (a connection killed just before may fail one more
            # request: its failure is what renews the pool), and every task it answered
            # with is stored as told.
            with anyio.fail_after(10):
                while "error" in (
                    doc := await rpc(client, server.url, "SendMessage", send_params("echo after"))
                ):
                    assert doc["error"]["message"] == UNAVAILABLE
                    await anyio.sleep(0.1)
            assert doc["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            for task_id, task in acknowledged.items():
                assert await result(client, server.url, "GetTask", {"id": task_id}) == task
        log = server.output()
        assert "Traceback" not in log, log
        # Killed in a loop is one burst of faults: one warning, not one per kill.
        assert log.count("the database unreachable") == 1, log
    finally:
        server.stop()


async def test_a_sqlite_file_locked_by_another_process_is_unavailable_then_recovers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLite's outage: another process holds the file's write lock past ``busy_timeout``."""
    import sqlite3

    from a2a_core.server import A2AServer, TaskContext
    from a2a_sql import SqlBackend
    from helpers.a2a_client import Client, make_card, user_message

    async def echo(ctx: TaskContext) -> str:
        return ctx.text

    path = tmp_path / "tasks.db"
    backend = SqlBackend(f"sqlite+aiosqlite:///{path}")
    async with A2AServer(echo, card=make_card(), backend=backend) as server:
        client = Client(server)
        kept = (await client.result("SendMessage", {"message": user_message("kept")}))["task"]
        other = sqlite3.connect(path, isolation_level=None)
        try:
            other.execute("BEGIN EXCLUSIVE")  # readers and writers wait, then give up
            with anyio.fail_after(30):
                error = await client.error("SendMessage", {"message": user_message("lost")})
            assert (error["code"], error["message"]) == (-32603, UNAVAILABLE)
            body = json.dumps({"message": user_message("lost on REST")}).encode()
            with anyio.fail_after(30):
                rest = await server.handle(client.request("POST", "/message:send", body))
            assert rest.status == 503  # (reads go on: WAL readers do not wait for writers)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert await client.result("GetTask", {"id": kept["id"]}) == kept
        back = (await client.result("SendMessage", {"message": user_message("back")}))["task"]
        assert back["status"]["state"] == "TASK_STATE_COMPLETED"
    assert not [r for r in caplog.records if r.exc_info], caplog.text
