"""Real servers on 127.0.0.1 for the interop suites: one agent, both adapters, a webhook sink.

``serve(adapter)`` starts an :class:`A2AServer` behind the Starlette adapter (under uvicorn,
at the root) or the aiohttp adapter (a sub-application mounted at ``/a2a``, under an
``AppRunner``), on a socket bound to a free port, and stops everything on exit. With
``grpc=True`` the same server is also served by ``a2a_grpc.GrpcServer`` on another free
port of 127.0.0.1 (``Served.grpc``), which then lists its ``GRPC`` interface in the card.

The agent understands a few commands (the first word of the message text):

- ``echo TEXT`` (or anything else): completes with one artifact holding the text;
- ``stream N``: one artifact sent in N chunks (``append``/``lastChunk``), then completes;
- ``ask``: input-required ("What is your name?"); the follow-up completes with
  ``Hello, NAME!``;
- ``hold``: working, then waits until released, then one more artifact and completes;
- ``release TASK_ID``: releases a held task; answered with a message (no task).

``hold``/``release`` make subscription and cancellation tests deterministic, also for a
client in another process.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import msgspec
import uvicorn
from aiohttp import web

from a2a_aiohttp import a2a_subapp
from a2a_aiohttp import put_identity as aiohttp_put_identity
from a2a_core.protocol import ProtocolOptions
from a2a_core.server import (
    A2AServer,
    Extension,
    InputRequired,
    PushOptions,
    StreamOptions,
    TaskContext,
)
from a2a_core.server._messages import new_id
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Message,
    Part,
    Role,
)
from a2a_grpc import GrpcServer
from a2a_starlette import A2AStarlette
from a2a_starlette import put_identity as starlette_put_identity

ADAPTERS = ("starlette", "aiohttp")
#: Where each adapter is mounted.
PREFIXES = {"starlette": "", "aiohttp": "/a2a"}
#: The bearer token that makes a caller authenticated (for the extended card).
TOKEN = "interop-token"
IDENTITY = "alice"
QUESTION = "What is your name?"


class DemoAgent:
    """The agent described in the module docstring."""

    def __init__(self) -> None:
        self.gates: dict[str, anyio.Event] = {}

    def gate(self, task_id: str) -> anyio.Event:
        return self.gates.setdefault(task_id, anyio.Event())

    async def __call__(self, ctx: TaskContext) -> Any:
        if ctx.is_follow_up:
            return f"Hello, {ctx.text}!"
        command, _, rest = ctx.text.partition(" ")
        if command == "ask":
            return InputRequired(QUESTION)
        if command == "stream":
            count = int(rest or "3")
            artifact_id = await ctx.artifact("chunk 0", name="story")
            for i in range(1, count):
                await ctx.artifact(
                    f"chunk {i}", artifact_id=artifact_id, append=True, last_chunk=i == count - 1
                )
            await ctx.complete()
            return None
        if command == "hold":
            await ctx.working("holding")
            await self.gate(ctx.task_id).wait()
            await ctx.artifact("released", name="result")
            await ctx.complete()
            return None
        if command == "release":
            self.gate(rest.strip()).set()
            return Message(
                message_id=new_id(),
                role=Role.AGENT,
                parts=[Part(text=f"released {rest.strip()}")],
            )
        return rest if command == "echo" else ctx.text


def make_card(*, extended: bool = False) -> AgentCard:
    """The public card (interfaces are filled in by the server)."""
    return AgentCard(
        name="Interop agent",
        description="An agent for interop tests with the official client",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=True, extended_agent_card=True
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Echoes the text",
                tags=["echo"],
                examples=["echo hello"],
            ),
            *(
                [
                    AgentSkill(
                        id="secret",
                        name="Secret",
                        description="Only for authenticated callers",
                        tags=["extended"],
                    )
                ]
                if extended
                else []
            ),
        ],
    )


def extended_card(identity: Any) -> AgentCard:
    """The extended card, computed per caller."""
    return msgspec.structs.replace(make_card(extended=True), name=f"Interop agent for {identity}")


@dataclass
class Served:
    """A running server."""

    adapter: str
    url: str
    """The base URL of the A2A mount (what goes into the card)."""
    server: A2AServer
    agent: DemoAgent
    grpc: str | None = None
    """The gRPC server's ``host:port`` (``serve(..., grpc=True)`` only)."""


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Inherited by the accepted connections on Linux: without it, a keep-alive request after
    # the first waits ~40 ms for delayed ACKs (uvicorn sets it only on sockets it binds).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class _BearerIdentity:
    """ASGI middleware: a caller with the right bearer token is authenticated."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        bearer = (b"authorization", f"Bearer {TOKEN}".encode())
        if scope["type"] == "http" and bearer in scope["headers"]:
            starlette_put_identity(scope, IDENTITY)
        await self.app(scope, receive, send)


@web.middleware
async def _aiohttp_bearer_identity(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    if request.headers.get("Authorization") == f"Bearer {TOKEN}":
        aiohttp_put_identity(request, IDENTITY)
    return await handler(request)


@contextlib.asynccontextmanager
async def serve(
    adapter: str,
    *,
    legacy_card_fields: bool = False,
    grpc: bool = False,
    extensions: Sequence[Extension] = (),
    **protocol: Any,
) -> AsyncIterator[Served]:
    """Run the demo agent on ``adapter`` on 127.0.0.1 until the block ends (``protocol``:
    more `ProtocolOptions`; ``grpc``: also serve it over gRPC; ``extensions``: runtime
    extensions of the server)."""
    sock = _bound_socket()
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}{PREFIXES[adapter]}"
    agent = DemoAgent()
    server = A2AServer(
        agent,
        card=make_card(),
        base_url=url,
        extended_card=extended_card,
        protocol=ProtocolOptions(legacy_card_fields=legacy_card_fields, **protocol),
        push=PushOptions(allow_hosts=["127.0.0.1/32"]),
        streams=StreamOptions(keep_alive_interval=5.0),
        extensions=extensions,
    )
    served = Served(adapter, url, server, agent)
    try:
        if adapter == "starlette":
            async with (
                _uvicorn(_BearerIdentity(A2AStarlette(server)), sock),
                _grpc(served, grpc),
            ):
                yield served
        else:
            root = web.Application(middlewares=[_aiohttp_bearer_identity])
            root.add_subapp(PREFIXES[adapter], a2a_subapp(server))
            async with _aiohttp(root, sock), _grpc(served, grpc):
                yield served
    finally:
        sock.close()


@contextlib.asynccontextmanager
async def _grpc(served: Served, enabled: bool) -> AsyncIterator[None]:
    """Serve ``served.server`` over gRPC too (when ``enabled``), within the HTTP adapter's
    lifespan: started once the adapter runs the A2A server, stopped before it stops it (so
    the gRPC adapter never owns the server's lifecycle)."""
    if not enabled:
        yield
        return
    if not served.server.running:
        raise RuntimeError("the HTTP adapter did not start the A2A server")
    async with GrpcServer(served.server, host="127.0.0.1", port=0) as grpc_server:
        served.grpc = grpc_server.address
        yield


@contextlib.asynccontextmanager
async def _uvicorn(app: Any, sock: socket.socket) -> AsyncIterator[None]:
    config = uvicorn.Config(
        app,
        lifespan="on",
        log_level="warning",
        log_config=None,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    finished = anyio.Event()

    async def run() -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            finished.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            while not server.started:
                if finished.is_set():
                    raise RuntimeError("uvicorn did not start")
                await anyio.sleep(0.01)
        try:
            yield
        finally:
            server.should_exit = True
            with anyio.fail_after(10):
                await finished.wait()


@contextlib.asynccontextmanager
async def _aiohttp(app: web.Application, sock: socket.socket) -> AsyncIterator[None]:
    runner = web.AppRunner(app, shutdown_timeout=2)
    await runner.setup()
    try:
        await web.SockSite(runner, sock).start()
        yield
    finally:
        await runner.cleanup()


@dataclass(frozen=True)
class Delivery:
    """One POST the webhook sink received."""

    path: str
    """Path and query string."""
    headers: dict[str, str]
    """Header names in lower case."""
    body: Any


@dataclass
class Webhook:
    """A webhook sink on 127.0.0.1 that records every delivery."""

    url: str
    received: list[Delivery] = field(default_factory=list)

    async def wait_for(
        self, predicate: Callable[[Delivery], bool], timeout: float = 10
    ) -> Delivery:
        """The first delivery that satisfies ``predicate`` (waiting for it)."""
        with anyio.fail_after(timeout):
            while True:
                for delivery in self.received:
                    if predicate(delivery):
                        return delivery
                await anyio.sleep(0.02)


@contextlib.asynccontextmanager
async def webhook() -> AsyncIterator[Webhook]:
    """Run a webhook sink until the block ends."""
    sock = _bound_socket()
    hook = Webhook(f"http://127.0.0.1:{sock.getsockname()[1]}/hook")

    async def receive(request: web.Request) -> web.Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        hook.received.append(Delivery(request.path_qs, headers, await request.json()))
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/hook", receive)
    try:
        async with _aiohttp(app, sock):
            yield hook
    finally:
        sock.close()
