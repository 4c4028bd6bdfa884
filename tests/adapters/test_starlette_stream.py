"""The Starlette adapter's stream relay, driven in process as an ASGI server drives it, under
trio as well as asyncio.

The contract suite serves through uvicorn, which runs on asyncio only, so the adapter's trio
path (a task group that watches for ``http.disconnect`` while the frames are written) is
exercised here: the test plays the server's side of one ``http`` scope, sending the request
body, collecting what the application sends, and delivering ``http.disconnect`` when the
client is meant to go away. On asyncio the same tests cover the fast path (a watcher task
that cancels the relay).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, InMemoryEventLog, TaskContext
from a2a_core.sse import parse_frames
from a2a_starlette import A2AStarlette
from adapters.contract import make_card, rpc_body, send_params
from helpers.a2a_client import Client

pytestmark = pytest.mark.anyio

Message = dict[str, Any]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Both backends: the adapter takes a different relay path on each."""
    return str(request.param)


def http_scope(body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/",
        "raw_path": b"/",
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            (b"a2a-version", b"1.0"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }


class Exchange:
    """The server's side of one HTTP exchange with the application."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent: list[Message] = []
        self.disconnect = anyio.Event()
        """Set it and the application's next ``receive()`` returns ``http.disconnect``."""
        self.body_arrived = anyio.Event()
        self.returned = False

    async def receive(self) -> Message:
        if self.body:
            body, self.body = self.body, b""
            return {"type": "http.request", "body": body, "more_body": False}
        await self.disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(dict(message))
        if message["type"] == "http.response.body" and message.get("body"):
            self.body_arrived.set()

    async def run(self, app: A2AStarlette) -> None:
        await app(http_scope(self.body), self.receive, self.send)
        self.returned = True

    @property
    def start(self) -> Message:
        assert self.sent[0]["type"] == "http.response.start", self.sent
        return self.sent[0]

    @property
    def chunks(self) -> list[bytes]:
        """The body chunks written, in order (the final empty one left out)."""
        return [m["body"] for m in self.sent[1:] if m.get("body")]

    def results(self) -> list[Any]:
        return [
            json.loads(f.data)["result"]
            for f in parse_frames(b"".join(self.chunks))
            if f.data is not None
        ]


async def test_a_stream_is_relayed_to_its_end() -> None:
    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        for text in ("alpha", "beta", "gamma"):
            yield text

    server = A2AServer(agent, card=make_card(), base_url="http://testserver")
    exchange = Exchange(rpc_body("SendStreamingMessage", send_params("go")))
    async with server:
        with anyio.fail_after(10):
            await exchange.run(A2AStarlette(server))
    assert exchange.returned
    start = exchange.start
    assert start["status"] == 200
    assert (b"content-type", b"text/event-stream") in start["headers"]
    # Every body message but the last says more is coming; the last one ends the body.
    bodies = exchange.sent[1:]
    assert all(m["type"] == "http.response.body" for m in bodies)
    assert [m["more_body"] for m in bodies] == [True] * (len(bodies) - 1) + [False]
    assert bodies[-1]["body"] == b""
    results = exchange.results()
    assert list(results[0]) == ["task"]
    texts = [r["artifactUpdate"]["artifact"]["parts"][0]["text"] for r in results[1:-1]]
    assert texts == ["alpha", "beta", "gamma"]
    assert results[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_a_client_that_disconnects_mid_stream_ends_the_relay_not_the_task() -> None:
    step = anyio.Event()

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        yield "first"
        await step.wait()
        yield "second"

    server = A2AServer(agent, card=make_card(), base_url="http://testserver")
    log = server.backend.event_log
    assert isinstance(log, InMemoryEventLog)
    exchange = Exchange(rpc_body("SendStreamingMessage", send_params("go")))
    async with server:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(exchange.run, A2AStarlette(server))
                await exchange.body_arrived.wait()
                # Whatever was ready went out; the relay now waits for the agent.
                await anyio.wait_all_tasks_blocked()
                written = len(exchange.chunks)
                task_id = exchange.results()[0]["task"]["id"]
                following = log._logs[task_id].followers
                exchange.disconnect.set()
            # The task group ended: the application returned after the disconnect.
            assert exchange.returned
            assert log._logs[task_id].followers == 0  # the frames were closed
            step.set()
            client = Client(server)
            while (await client.result("GetTask", {"id": task_id}))["status"][
                "state"
            ] != "TASK_STATE_COMPLETED":
                await anyio.sleep(0.01)
            stored = await client.result("GetTask", {"id": task_id})
    assert following == 1  # the stream was following the task's log when the client left
    assert len(exchange.chunks) == written  # nothing was written after the disconnect
    texts = [
        r["artifactUpdate"]["artifact"]["parts"][0]["text"]
        for r in exchange.results()
        if "artifactUpdate" in r
    ]
    assert texts == ["first"]
    assert exchange.sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    # The task carried on without its stream.
    assert [p["text"] for p in stored["artifacts"][0]["parts"]] == ["first", "second"]
