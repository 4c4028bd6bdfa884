"""Request heads the framework's parser refuses (a header too long, a NUL byte in a value,
a space in a name): each gets a 4xx, the server goes on serving, and the logs get at most
one line per request, never a traceback (a client could otherwise fill them at will)."""

from __future__ import annotations

import logging

import anyio
import pytest

from a2a_core.server import A2AServer, TaskContext
from adapters.contract import Harness, make_card
from helpers.raw_http import aread_response

pytestmark = pytest.mark.anyio

#: Raw request heads, each refused by the HTTP parser before any adapter code runs.
BAD_HEADS = {
    "oversized-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n",
    "nul-in-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-Nul: a\x00b\r\n\r\n",
    "space-in-name": b"GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n",
}
SERVER_LOGGERS = ("aiohttp", "uvicorn", "starlette", "a2a_")


async def echo(ctx: TaskContext) -> str:
    return ctx.text


async def test_bad_heads_are_refused_in_one_log_line_each(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    statuses: dict[str, int] = {}
    server = A2AServer(echo, card=make_card(), base_url=harness.base_url)
    async with harness.serve(server) as live:
        for name, raw in BAD_HEADS.items():
            with anyio.fail_after(30):
                async with await anyio.connect_tcp("127.0.0.1", harness.port) as stream:
                    await stream.send(raw)
                    statuses[name] = (await aread_response(stream)).status
        card = await live.client.get(live.url("/.well-known/agent-card.json"))
    records = [r for r in caplog.records if r.name.startswith(SERVER_LOGGERS)]
    assert all(400 <= status < 500 for status in statuses.values()), statuses
    assert card.status_code == 200
    assert [r for r in records if r.exc_info or r.levelno >= logging.ERROR] == []
    assert len(records) <= len(BAD_HEADS), [r.getMessage() for r in records]
    assert all(len(r.getMessage()) < 400 for r in records)
    # One line each, with nothing of what the client sent that could forge another.
    assert all(r.getMessage().isprintable() for r in records), [r.getMessage() for r in records]


async def test_a_client_hanging_up_mid_body_costs_no_log_line(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server = A2AServer(echo, card=make_card(), base_url=harness.base_url)
    head = (
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"A2A-Version: 1.0\r\nContent-Length: 100000\r\n\r\n"
    )
    async with harness.serve(server) as live:
        for _ in range(3):
            async with await anyio.connect_tcp("127.0.0.1", harness.port) as stream:
                await stream.send(head + b'{"jsonrpc": "2.0", ')
                await anyio.sleep(0.1)  # the server is reading the body when the client goes
        await anyio.sleep(0.2)
        card = await live.client.get(live.url("/.well-known/agent-card.json"))
    records = [r for r in caplog.records if r.name.startswith(SERVER_LOGGERS)]
    assert card.status_code == 200
    assert [r for r in records if r.exc_info or r.levelno >= logging.ERROR] == []
