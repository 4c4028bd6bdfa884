"""The adapters' server limits (`a2a_starlette.limits`, `a2a_aiohttp.HANDLER_ARGS`, what the
examples and ``a2aserve serve`` run with) against slow clients, in this process.

uvicorn runs `LimitedH11Protocol` (with a short deadline, so that the tests wait little), and
aiohttp the handler arguments (with a short keep-alive timeout), each on a socket
bound to 127.0.0.1 and stopped at the end of the test. A client that sends its head or its
body too slowly is cut off; a request that has arrived may take as long as it likes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from anyio.abc import ByteStream

from a2a_aiohttp import HANDLER_ARGS
from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill
from a2a_starlette import limits
from helpers.hostile import FRESH_ADDRESS, HOSTILE_ADDRESS, can_bind_loopback_aliases
from helpers.raw_http import aread_response, chunk, head

pytestmark = pytest.mark.anyio

#: Short enough to wait for in a test (the examples use 30 s).
DEADLINE = 0.3
V1 = [("Content-Type", "application/json"), ("A2A-Version", "1.0")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # uvicorn and aiohttp


CARD = AgentCard(
    name="Limits",
    description="An agent for the server limit tests",
    supported_interfaces=[],
    version="1.0.0",
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[AgentSkill(id="s", name="S", description="skill", tags=["t"])],
)


def listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def uvicorn_serving(server: A2AServer, **protocol_options: Any) -> AsyncIterator[int]:
    """``server`` under uvicorn with the examples' settings (a short deadline, and the
    `LimitedH11Protocol` attributes given); the port."""
    import uvicorn

    from a2a_starlette import A2AStarlette

    attributes = {"deadline": DEADLINE, **protocol_options}
    protocol = type("ShortDeadline", (limits.LimitedH11Protocol,), attributes)
    settings = {**limits.UVICORN_SETTINGS, "http": protocol}
    config = uvicorn.Config(
        A2AStarlette(server), lifespan="on", log_config=None, access_log=False, **settings
    )
    uv = uvicorn.Server(config)
    with listening_socket() as sock:
        task = asyncio.create_task(uv.serve(sockets=[sock]))
        try:
            with anyio.fail_after(10):
                while not uv.started:
                    assert not task.done(), "uvicorn did not start"
                    await asyncio.sleep(0.01)
            yield sock.getsockname()[1]
        finally:
            uv.should_exit = True
            await task


@contextlib.asynccontextmanager
async def aiohttp_serving(server: A2AServer) -> AsyncIterator[int]:
    """``server`` under aiohttp with the examples' handler arguments (a short keep-alive)."""
    from aiohttp import web

    from a2a_aiohttp import add_routes

    app = web.Application(handler_args={**HANDLER_ARGS, "keepalive_timeout": DEADLINE})
    add_routes(app, server)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=5)
    await runner.setup()
    with listening_socket() as sock:
        try:
            await web.SockSite(runner, sock).start()
            yield sock.getsockname()[1]
        finally:
            await runner.cleanup()


async def echo(ctx: TaskContext) -> str:
    return ctx.text


async def until_closed(stream: ByteStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with anyio.fail_after(10):  # a guard against a hang, not a timing
        while True:
            try:
                received += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return received


async def trickle(stream: ByteStream, start: bytes) -> None:
    """Send ``start``, then a byte at a time (well inside any keep-alive timeout)."""
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        await stream.send(start)
        while True:
            await anyio.sleep(DEADLINE / 6)
            await stream.send(b"a")


async def cut_off_while_trickling(port: int, start: bytes) -> bytes:
    """What a client that trickles its request gets before the server closes."""
    async with (
        await anyio.connect_tcp("127.0.0.1", port) as stream,
        anyio.create_task_group() as tg,
    ):
        tg.start_soon(trickle, stream, start)
        received = await until_closed(stream)
        tg.cancel_scope.cancel()
    return received


SLOW_HEAD = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
SLOW_BODY = head("POST", "/", [*V1, ("Content-Length", "100000")]) + b'{"jsonrpc": "2.0", '


@pytest.mark.parametrize("start", [SLOW_HEAD, SLOW_BODY], ids=["head", "body"])
async def test_uvicorn_cuts_off_a_request_sent_a_byte_at_a_time(start: bytes) -> None:
    async with uvicorn_serving(A2AServer(echo, card=CARD, base_url="http://x")) as port:
        received = await cut_off_while_trickling(port, start)
        async with httpx.AsyncClient() as client:
            after = await client.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")
    assert received == b""  # closed, without a reply
    assert after.status_code == 200


async def test_uvicorn_gives_each_request_of_a_connection_its_own_deadline() -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
         "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    ).encode()  # fmt: skip
    server = A2AServer(echo, card=CARD, base_url="http://x")
    async with (
        uvicorn_serving(server) as port,
        await anyio.connect_tcp("127.0.0.1", port) as stream,
    ):
        length = [("Content-Length", str(len(body)))]
        await stream.send(head("POST", "/", [*V1, *length]) + body)
        first = await aread_response(stream)
        await stream.send(SLOW_HEAD)  # the next request never ends its head
        rest = await until_closed(stream)
    assert first.status == 200
    assert json.loads(first.body)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert rest == b""


async def test_uvicorn_lets_a_reply_outlast_the_deadline() -> None:
    release = anyio.Event()

    async def slow(ctx: TaskContext) -> AsyncIterator[str]:
        yield "first"
        await release.wait()
        yield " last"

    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
         "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x"}]}}}
    ).encode()  # fmt: skip
    server = A2AServer(slow, card=CARD, base_url="http://x")
    async with uvicorn_serving(server) as port, httpx.AsyncClient(timeout=10) as client:
        url = f"http://127.0.0.1:{port}/"
        async with client.stream("POST", url, content=body, headers=dict(V1)) as response:
            lines = response.aiter_lines()
            async for line in lines:
                if "first" in line:
                    break
            await anyio.sleep(3 * DEADLINE)  # the request is in: no deadline now
            release.set()
            rest = [line async for line in lines]
        again = await client.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")
    assert response.status_code == 200
    assert any("TASK_STATE_COMPLETED" in line for line in rest), rest
    assert again.status_code == 200


async def test_aiohttp_cuts_off_a_head_sent_a_byte_at_a_time() -> None:
    async with aiohttp_serving(A2AServer(echo, card=CARD, base_url="http://x")) as port:
        received = await cut_off_while_trickling(port, SLOW_HEAD)
        async with httpx.AsyncClient() as client:
            after = await client.get(f"http://127.0.0.1:{port}/.well-known/agent-card.json")
    assert received == b""
    assert after.status_code == 200


async def test_uvicorn_h11_refuses_a_chunked_body_while_it_is_still_coming() -> None:
    """The adapter suite runs uvicorn on httptools; h11 drops the rest of a refused body by
    another path, and the connection must serve the next request all the same."""
    piece = chunk(b" " * 16384)
    sent, total = 0, 64 << 20
    replied = anyio.Event()

    async def upload(stream: ByteStream) -> None:
        nonlocal sent
        while sent < total and not replied.is_set():
            await stream.send(piece)
            sent += 16384
        await stream.send(chunk(b""))

    server = A2AServer(echo, card=CARD, base_url="http://x")
    async with (
        uvicorn_serving(server) as port,
        await anyio.connect_tcp("127.0.0.1", port) as stream,
    ):
        await stream.send(head("POST", "/", [*V1, ("Transfer-Encoding", "chunked")]))
        async with anyio.create_task_group() as tg:
            tg.start_soon(upload, stream)
            reply = await aread_response(stream)
            sent_at_reply = sent
            replied.set()
        await stream.send(head("GET", "/.well-known/agent-card.json"))
        card = await aread_response(stream)
    assert sent_at_reply < total
    assert json.loads(reply.body)["error"]["code"] == -32600
    assert card.status == 200


# --- connections per client (uvicorn) ----------------------------------------------------

needs_aliases = pytest.mark.skipif(
    not can_bind_loopback_aliases(), reason="127.0.0.2 and 127.0.0.3 are not usable here"
)


@needs_aliases
async def test_uvicorn_refuses_a_client_past_its_connections_and_serves_the_others(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = A2AServer(echo, card=CARD, base_url="http://x")
    card = head("GET", "/.well-known/agent-card.json")
    async with contextlib.AsyncExitStack() as stack:
        # The deadline of the examples: the held connections wait idle for a while.
        serving = uvicorn_serving(server, max_connections_per_peer=3, deadline=30.0)
        port = await stack.enter_async_context(serving)

        async def connect(address: str) -> ByteStream:
            stream = await anyio.connect_tcp("127.0.0.1", port, local_host=address)
            return await stack.enter_async_context(stream)

        held = [await connect(HOSTILE_ADDRESS) for _ in range(3)]
        with caplog.at_level(logging.WARNING):
            extra = [await connect(HOSTILE_ADDRESS) for _ in range(5)]
            for stream in extra:
                await stream.send(card)
            refusals = [await until_closed(stream) for stream in extra]
        idle_extra = await connect(HOSTILE_ADDRESS)
        silent_close = await until_closed(idle_extra)  # sent nothing: closed soon after
        other = await connect(FRESH_ADDRESS)
        await other.send(card)
        served = await aread_response(other)
        await held[0].send(card)  # the held ones are served as usual
        held_served = await aread_response(held[0])
        await held[1].aclose()  # one given back: the client may open one more
        await anyio.sleep(0.1)
        again = await connect(HOSTILE_ADDRESS)
        await again.send(card)
        again_served = await aread_response(again)
    for refusal in refusals:
        assert refusal.startswith(b"HTTP/1.1 429 "), refusal
        assert b"retry-after: 5\r\n" in refusal.lower()
        assert b"connection: close\r\n" in refusal.lower()
    assert silent_close == b""
    assert (served.status, held_served.status, again_served.status) == (200, 200, 200)
    warnings = [r.getMessage() for r in caplog.records if "Refusing connections" in r.getMessage()]
    assert warnings == [
        f"Refusing connections of {HOSTILE_ADDRESS}: it holds 3, the most one client may."
    ]


@needs_aliases
async def test_uvicorn_without_a_limit_per_client_takes_every_connection() -> None:
    server = A2AServer(echo, card=CARD, base_url="http://x")
    card = head("GET", "/.well-known/agent-card.json")
    async with contextlib.AsyncExitStack() as stack:
        port = await stack.enter_async_context(
            uvicorn_serving(server, max_connections_per_peer=None)
        )
        streams = [
            await stack.enter_async_context(
                await anyio.connect_tcp("127.0.0.1", port, local_host=HOSTILE_ADDRESS)
            )
            for _ in range(6)
        ]
        for stream in streams:
            await stream.send(card)
        replies = [await aread_response(stream) for stream in streams]
    assert [reply.status for reply in replies] == [200] * 6
