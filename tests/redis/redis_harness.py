"""Harness of the Redis tests: a private redis-server, replica processes, an SSE reader.

- :class:`PrivateRedis`: a ``redis-server`` on a free 127.0.0.1 port in a temporary
  directory, which a test can stop cleanly (saving its data, so a restart keeps it, as a
  persistent production Redis would), start again on the same port, or kill.
- :class:`Replica`: one A2A server process (``replica.py`` beside this file) on a free
  port, on either adapter, sharing a Redis with the others; killable with SIGKILL.
- :class:`Sse`: a streamed JSON-RPC response read frame by frame.
- :class:`Receiver`: a webhook receiver on 127.0.0.1 that records what it gets.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import redis as redis_sync
from aiohttp import web
from redis.backoff import NoBackoff
from redis.retry import Retry

from helpers.processes import ServerProcess, free_port

HERE = Path(__file__).parent
V1 = {"A2A-Version": "1.0", "content-type": "application/json"}


def delete_prefix(url: str, prefix: str) -> int:
    """Delete every key under ``prefix``; returns how many."""
    client = redis_sync.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
        return len(keys)
    finally:
        client.close()


class PrivateRedis:
    """A redis-server of one test's own (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it (again, on the same port and with the data it saved)."""
        command = [
            "redis-server",
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.directory),
            "--dbfilename", "dump.rdb",
        ]  # fmt: skip
        with (self.directory / "redis.log").open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                client = redis_sync.Redis(
                    port=self.port, socket_connect_timeout=0.2, retry=Retry(NoBackoff(), 0)
                )
                try:
                    if client.ping():
                        return
                finally:
                    client.close()
            except redis_sync.exceptions.RedisError:
                time.sleep(0.02)
        raise AssertionError("the private redis-server did not start")

    def stop(self) -> None:
        """Stop it cleanly, saving its data to disk first (``SHUTDOWN SAVE``)."""
        client = redis_sync.Redis(port=self.port, retry=Retry(NoBackoff(), 0))
        try:
            client.shutdown(save=True)
        except redis_sync.exceptions.ConnectionError:
            pass  # it closes the connection as it goes
        finally:
            client.close()
        assert self.process is not None
        self.process.wait(10)

    def kill(self) -> None:
        """Kill it (SIGKILL) if it runs."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


class Replica(ServerProcess):
    """One A2A server process sharing Redis with others (``replica.py``)."""

    def __init__(
        self,
        adapter: str,
        redis_url: str,
        prefix: str,
        log: Path,
        *,
        lease_ttl: float = 10.0,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.adapter = adapter
        super().__init__(
            HERE / "replica.py",
            "--adapter", adapter,
            "--redis", redis_url,
            "--prefix", prefix,
            "--lease-ttl", str(lease_ttl),
            *extra,
            log=log,
        )  # fmt: skip
        self.name = f"replica {self.url}"


def rpc_body(method: str, params: Any, id: Any = 1) -> bytes:
    """A JSON-RPC request body."""
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode()


def send_params(text: str, **configuration: Any) -> dict[str, Any]:
    """v1.0 SendMessage params for a user message of ``text``."""
    params: dict[str, Any] = {
        "message": {
            "messageId": os.urandom(8).hex(),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }
    }
    if configuration:
        params["configuration"] = configuration
    return params


async def rpc(client: httpx.AsyncClient, url: str, method: str, params: Any) -> dict[str, Any]:
    """One JSON-RPC call over HTTP: the response document."""
    response = await client.post(url + "/", content=rpc_body(method, params), headers=V1)
    assert response.status_code == 200, response.text
    doc: dict[str, Any] = response.json()
    return doc


async def result(client: httpx.AsyncClient, url: str, method: str, params: Any) -> Any:
    """A JSON-RPC call that must succeed: its result."""
    doc = await rpc(client, url, method, params)
    assert "error" not in doc, doc
    return doc["result"]


class Sse:
    """A streamed JSON-RPC response, read frame by frame (``async with Sse(...) as s``)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        method: str,
        params: Any,
        headers: dict[str, str] | None = None,
    ) -> None:
        self._request = client.build_request(
            "POST", url + "/", content=rpc_body(method, params), headers={**V1, **(headers or {})}
        )
        self._client = client
        self._buffer = b""
        self.response: httpx.Response | None = None

    async def __aenter__(self) -> Sse:
        self.response = await self._client.send(self._request, stream=True)
        self._chunks = self.response.aiter_raw()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.response is not None
        await self.response.aclose()

    async def next(self) -> tuple[str | None, Any] | None:
        """The next data frame as ``(id, json)``, or ``None`` when the stream ends."""
        while True:
            while b"\n\n" not in self._buffer:
                try:
                    self._buffer += await self._chunks.__anext__()
                except StopAsyncIteration:
                    return None
            frame, self._buffer = self._buffer.split(b"\n\n", 1)
            if frame.startswith(b":"):
                continue  # keep-alive
            frame_id = None
            data = None
            for line in frame.split(b"\n"):
                if line.startswith(b"id:"):
                    frame_id = line[3:].strip().decode()
                elif line.startswith(b"data:"):
                    data = json.loads(line[5:])
            return frame_id, data

    async def rest(self) -> list[tuple[str | None, Any]]:
        """Every remaining data frame."""
        out = []
        while (frame := await self.next()) is not None:
            out.append(frame)
        return out


def state_of(data: Any) -> str | None:
    """The task state a JSON-RPC stream frame carries (task or status update), if any."""
    result = data.get("result", {})
    if "task" in result:
        return str(result["task"]["status"]["state"])
    if "statusUpdate" in result:
        return str(result["statusUpdate"]["status"]["state"])
    return None


class Receiver:
    """A webhook receiver on 127.0.0.1: records every body it gets, answers 200."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.bodies: list[dict[str, object]] = []
        self.tokens: list[str | None] = []
        self.authorizations: list[str | None] = []
        self.traceparents: list[str | None] = []
        self.arrived = anyio.Event()
        self.expect = 0

    async def handle(self, request: web.Request) -> web.Response:
        self.bodies.append(json.loads(await request.read()))
        self.tokens.append(request.headers.get("X-A2A-Notification-Token"))
        self.authorizations.append(request.headers.get("Authorization"))
        self.traceparents.append(request.headers.get("traceparent"))
        if len(self.bodies) >= self.expect:
            self.arrived.set()
        return web.Response(status=200)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Receiver]:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.port).start()
        try:
            yield self
        finally:
            await runner.cleanup()
