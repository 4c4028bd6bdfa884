"""The body limit at the socket: an oversized body is refused before it has all arrived.

A client library sends the whole body before it reads the reply, so these tests speak raw
HTTP/1.1 (`helpers.raw_http`): a head whose ``Content-Length`` is over the limit and no body
at all, a chunked body that goes on after the limit, ``Expect: 100-continue``, malformed
``Content-Length`` values. The reply must be the core's own for an oversized body, and the
server must go on serving.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from anyio.abc import ByteStream

from a2a_core.protocol import ProtocolOptions
from a2a_core.server import A2AServer, TaskContext
from adapters.contract import Harness, Live, make_card, rpc_body, send_params
from helpers.raw_http import aread_response, chunk, head

pytestmark = pytest.mark.anyio

LIMIT = 1024
JSON_HEADERS = [("Content-Type", "application/json"), ("A2A-Version", "1.0")]


async def echo(ctx: TaskContext) -> str:
    return ctx.text


def limited() -> A2AServer:
    return A2AServer(echo, card=make_card(), protocol=ProtocolOptions(max_body_size=LIMIT))


@contextlib.asynccontextmanager
async def connection(harness: Harness) -> AsyncIterator[ByteStream]:
    """A raw connection to the server under test (a hang fails the test, after a while)."""
    with anyio.fail_after(30):  # a guard against a hang, not a timing
        async with await anyio.connect_tcp("127.0.0.1", harness.port) as stream:
            yield stream


async def served_next(stream: ByteStream, harness: Harness) -> Any:
    """Send a valid request on the same connection: the reply's ``result``."""
    body = rpc_body("SendMessage", send_params("next"))
    length = [("Content-Length", str(len(body)))]
    await stream.send(head("POST", harness.prefix + "/", [*JSON_HEADERS, *length]) + body)
    reply = await aread_response(stream)
    assert reply.status == 200, reply
    return json.loads(reply.body)["result"]


async def oversized_reply(live: Live, path: str) -> Any:
    """The reply (status, JSON) to a body over the limit sent in full, by a plain client."""
    response = await live.client.post(
        live.url(path), content=b" " * (LIMIT + 1), headers=dict(JSON_HEADERS)
    )
    return response.status_code, response.json()


@pytest.mark.parametrize("path", ["/", "/message:send"], ids=["jsonrpc", "rest"])
async def test_a_body_declared_over_the_limit_is_refused_before_it_is_sent(
    harness: Harness, path: str
) -> None:
    declared = 4 * LIMIT
    async with harness.serve(limited()) as live:
        async with connection(harness) as stream:
            length = ("Content-Length", str(declared))
            await stream.send(head("POST", harness.prefix + path, [*JSON_HEADERS, length]))
            # Not a byte of the body is sent until the reply is in: a server that waited
            # for the body would never reply.
            reply = await aread_response(stream)
            # The client may send the body anyway: the server drops it, and the connection
            # goes on serving.
            await stream.send(b" " * declared)
            next_result = await served_next(stream, harness)
        expected = await oversized_reply(live, path)
    # The core's reply to an oversized body, the one a body sent in full gets.
    assert (reply.status, json.loads(reply.body)) == expected
    if path == "/":
        assert reply.status == 200
        error = json.loads(reply.body)["error"]
        assert error["code"] == -32600
        assert error["message"] == f"Request body exceeds the limit of {LIMIT} bytes"
    else:
        assert reply.status == 400
        assert json.loads(reply.body)["error"]["status"] == "INVALID_ARGUMENT"
    assert next_result["task"]["artifacts"][0]["parts"] == [{"text": "next"}]


async def test_a_chunked_body_is_refused_while_the_client_is_still_sending(
    harness: Harness,
) -> None:
    total = 64 << 20  # what the client means to send: far more than the limit
    piece = chunk(b" " * 16384)
    sent = 0
    replied = anyio.Event()

    async def upload(stream: ByteStream) -> None:
        nonlocal sent
        while sent < total and not replied.is_set():
            await stream.send(piece)
            sent += 16384
        await stream.send(chunk(b""))  # the end of the body, once the reply is in

    async with harness.serve(limited()), connection(harness) as stream:
        chunked = [*JSON_HEADERS, ("Transfer-Encoding", "chunked")]
        await stream.send(head("POST", harness.prefix + "/", chunked))
        async with anyio.create_task_group() as tg:
            tg.start_soon(upload, stream)
            reply = await aread_response(stream)
            sent_at_reply = sent
            replied.set()
        next_result = await served_next(stream, harness)
    assert sent_at_reply < total  # the reply came while the body was still coming
    assert reply.status == 200
    assert json.loads(reply.body)["error"]["code"] == -32600
    assert next_result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_expect_100_continue_invites_only_a_body_within_the_limit(
    harness: Harness,
) -> None:
    body = rpc_body("SendMessage", send_params("invited"))
    expect = [*JSON_HEADERS, ("Expect", "100-continue")]
    async with harness.serve(limited()), connection(harness) as stream:
        over = [*expect, ("Content-Length", str(2 * LIMIT))]
        await stream.send(head("POST", harness.prefix + "/", over))
        refused = await aread_response(stream)
        await stream.send(b" " * 2 * LIMIT)  # sent anyway: dropped
        within = [*expect, ("Content-Length", str(len(body)))]
        await stream.send(head("POST", harness.prefix + "/", within))
        invited = await aread_response(stream)  # before any byte of this body
        await stream.send(body)
        served = await aread_response(stream)
    # Over the limit, the refusal is the first and only reply: no invitation to send.
    assert refused.status == 200
    assert json.loads(refused.body)["error"]["code"] == -32600
    assert invited.status == 100
    assert served.status == 200
    result = json.loads(served.body)["result"]
    assert result["task"]["artifacts"][0]["parts"] == [{"text": "invited"}]


#: ``Content-Length`` header values that are not one length, each as the header lines sent.
BAD_LENGTHS = [
    ["abc"],
    ["-1"],
    ["+5"],
    ["0x10"],
    ["5, 6"],
    ["5", "6"],  # two lines that disagree
    ["9" * 30],  # beyond any integer the parser holds
]


async def test_a_malformed_content_length_is_a_client_error(harness: Harness) -> None:
    """The HTTP server refuses these before the adapter sees them; never a 500."""
    # aiohttp logs each refused request as an error (with the parser's exception).
    async with harness.serve(limited(), expect_errors=harness.adapter == "aiohttp") as live:
        replies = []
        for values in BAD_LENGTHS:
            lengths = [("Content-Length", value) for value in values]
            async with connection(harness) as stream:
                await stream.send(head("POST", harness.prefix + "/", [*JSON_HEADERS, *lengths]))
                await stream.send(b"hello")
                replies.append((values, await aread_response(stream)))
        after = await live.result("SendMessage", send_params())
        logged = {(r.name, r.getMessage()) for r in live.errors}
    for values, reply in replies:
        assert 400 <= reply.status < 500, (values, reply)
    assert after["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert logged <= {("aiohttp.server", "Error handling request from 127.0.0.1")}
