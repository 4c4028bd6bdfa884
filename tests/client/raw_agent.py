"""A scripted agent on 127.0.0.1 for the client's edge cases: it serves a card and answers
each request with whatever the test says, recording what it received.

Not an A2A server: a test decides the bytes, so that replies no real server sends (too
large, endless, garbage, a 401 once) can be made, and what the client sent can be checked.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request, bytes], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Received:
    """One request the agent received."""

    method: str
    path_qs: str
    headers: dict[str, str]
    cookies: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class RawAgent:
    """The running agent: its URL, its card, what it received, and how it answers."""

    url: str = ""
    card: dict[str, Any] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    card_requests: list[Received] = field(default_factory=list)
    #: Answers a POST to the JSON-RPC URL (``/rpc``); set by each test.
    rpc: Handler | None = None
    #: Extra routes: path -> handler (any method).
    routes: dict[str, Handler] = field(default_factory=dict)


def v1_card(url: str, **fields: Any) -> dict[str, Any]:
    """A minimal v1.0 card with one JSON-RPC interface at ``url``."""
    return {
        "name": "Raw",
        "description": "A scripted agent",
        "version": "1",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
        **fields,
    }


def task_reply(request_id: Any, state: str = "TASK_STATE_COMPLETED") -> bytes:
    """A JSON-RPC reply holding a task in ``state``."""
    task = {"id": "t1", "contextId": "c1", "status": {"state": state}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": task}).encode()


@contextlib.asynccontextmanager
async def raw_agent(**card_fields: Any) -> AsyncIterator[RawAgent]:
    """Run a `RawAgent` until the block ends."""
    agent = RawAgent()

    async def record(request: web.Request) -> tuple[Received, bytes]:
        body = await request.read()
        seen = Received(
            request.method,
            request.path_qs,
            {k.lower(): v for k, v in request.headers.items()},
            dict(request.cookies),
            body,
        )
        return seen, body

    async def card(request: web.Request) -> web.StreamResponse:
        seen, _ = await record(request)
        agent.card_requests.append(seen)
        body = json.dumps(agent.card).encode()
        etag = '"card-1"'
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=body, content_type="application/json", headers={"ETag": etag})

    async def dispatch(request: web.Request) -> web.StreamResponse:
        seen, body = await record(request)
        agent.received.append(seen)
        handler = agent.routes.get(request.path) or agent.rpc
        if handler is None:
            return web.Response(status=404)
        return await handler(request, body)

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", card)
    app.router.add_route("*", "/{tail:.*}", dispatch)
    runner = web.AppRunner(app, shutdown_timeout=1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    agent.url = f"http://127.0.0.1:{port}"
    agent.card = v1_card(agent.url + "/rpc", **card_fields)
    try:
        yield agent
    finally:
        await runner.cleanup()
