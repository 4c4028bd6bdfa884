"""Subscribers that do not read, over real HTTP (issue 13): they share one payload, and one
that falls too far behind is closed with an error frame while the others and the task go on.

A client that does not read is a raw socket with a tiny receive buffer, and the server's
listening socket gets a small send buffer (accepted sockets inherit it), so that the
kernel absorbs little and the server's own writes block soon: what the server then holds
for that client is what these tests are about.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from a2a_core.server import A2AServer, InputRequired, StreamOptions, TaskContext
from a2a_core.sse import parse_frames
from adapters.contract import Harness, Live, make_card, rpc_body, send_params

pytestmark = pytest.mark.anyio


class Unread:
    """A JSON-RPC subscription on a raw socket that reads nothing until told to."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    @classmethod
    async def open(cls, harness: Harness, task_id: str, request_id: int) -> Unread:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(sock, ("127.0.0.1", harness.port))
        body = rpc_body("SubscribeToTask", {"id": task_id}, request_id)
        head = (
            f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{harness.port}\r\n"
            "Content-Type: application/json\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        await loop.sock_sendall(sock, head.encode() + body)
        return cls(sock)

    async def read(self, *, frames: int | None = None) -> list[Any]:
        """Read now: to the end of the response, or until ``frames`` frames came; the
        ``data`` of the frames, parsed."""
        loop = asyncio.get_running_loop()
        raw = b""
        with anyio.fail_after(20):
            while True:
                head, body, ended = _response(raw)
                got = [json.loads(f.data) for f in parse_frames(body) if f.data is not None]
                if ended or (frames is not None and len(got) >= frames):
                    break
                more = await loop.sock_recv(self.sock, 1 << 16)
                assert more, "the server closed the connection"
                raw += more
        self.sock.close()
        assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower()
        return got


def _response(raw: bytes) -> tuple[bytes, bytes, bool]:
    """The head, the body so far (complete chunks) and whether it ended, of a chunked
    response received up to ``raw``."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    body = b""
    while b"\r\n" in rest:
        size_line, _, after = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if len(after) < size + 2:
            break
        if size == 0:
            return head, body, True
        body, rest = body + after[:size], after[size + 2 :]
    return head, body, False


def small_send_buffer(harness: Harness) -> None:
    harness.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8192)


async def start(live: Live) -> str:
    params = send_params(configuration={"returnImmediately": True})
    return str((await live.result("SendMessage", params))["task"]["id"])


async def test_unread_subscribers_of_a_big_task_share_its_snapshot(harness: Harness) -> None:
    small_send_buffer(harness)
    size = 1 << 19  # far more than the kernel and a transport absorb with these buffers

    async def agent(ctx: TaskContext) -> InputRequired:
        await ctx.artifact("b" * size)
        return InputRequired("more?")

    # Frequent keep-alives: aiohttp sees a client gone only when it writes to it.
    server = A2AServer(agent, card=make_card(), streams=StreamOptions(keep_alive_interval=0.05))
    async with harness.serve(server) as live:
        task = (await live.result("SendMessage", send_params()))["task"]
        unread = [await Unread.open(harness, task["id"], n) for n in (1, 2, 3)]
        shared = live.server.shared_frames
        with anyio.fail_after(10):
            while len(shared) < 1:
                await anyio.sleep(0.01)
        # Three streams stuck in the middle of the snapshot: one payload, once.
        assert len(shared) == 1
        assert size <= shared.nbytes < size + 4096
        first = await unread[0].read(frames=1)  # read, and closed
        for stream in unread[1:]:
            stream.sock.close()
        with anyio.fail_after(10):
            while len(shared):  # the streams end as the server sees their clients leave
                await anyio.sleep(0.01)
    assert first[0]["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "b" * size


async def test_an_unread_subscriber_is_closed_while_a_reader_and_the_task_go_on(
    harness: Harness,
) -> None:
    small_send_buffer(harness)
    send, receive = anyio.create_memory_object_stream[str](0)

    async def agent(ctx: TaskContext) -> AsyncIterator[str]:
        async with receive:
            async for text in receive:
                yield text

    # 256 KiB in all: four times the limit, and more than the kernel and the transport
    # absorb for the client that does not read (about 100 KiB with these buffers).
    chunks = 32
    server = A2AServer(agent, card=make_card(), streams=StreamOptions(backlog_limit=64 * 1024))
    async with harness.serve(server) as live:
        task_id = await start(live)
        async with live.open_rpc_stream("SubscribeToTask", {"id": task_id}, id=1) as reader:
            await reader.next_data()  # the snapshot
            unread = await Unread.open(harness, task_id, 2)
            for n in range(chunks):
                await send.send(f"{n:04d}" + "p" * (8 * 1024))
                while True:  # the reader keeps up with every chunk
                    event = (await reader.next_data()).data["result"]
                    if "artifactUpdate" in event:
                        assert event["artifactUpdate"]["artifact"]["parts"][0]["text"][:4] == (
                            f"{n:04d}"
                        )
                        break
            await send.aclose()
            rest = await reader.rest()
        late = await unread.read()
        stored = await live.result("GetTask", {"id": task_id})
    assert rest[-1].data["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert stored["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(stored["artifacts"][0]["parts"]) == chunks
    # The client that did not read: what the server could still write, then the error.
    assert late[-1]["id"] == 2 and late[-1]["error"]["code"] == -32603
    assert "behind" in late[-1]["error"]["message"]
    assert all("result" in doc for doc in late[:-1])
    assert len(late) < chunks


async def test_one_client_holds_at_most_its_streams(harness: Harness) -> None:
    """The adapter tells the core the client's address, which counts its open streams."""

    async def agent(ctx: TaskContext) -> InputRequired:
        return InputRequired("more?")

    # Frequent keep-alives: aiohttp sees a client gone only when it writes to it.
    options = StreamOptions(max_streams_per_peer=2, keep_alive_interval=0.05)
    server = A2AServer(agent, card=make_card(), streams=options)
    async with harness.serve(server) as live:
        task_id = await start(live)
        held = [await Unread.open(harness, task_id, n) for n in (1, 2)]
        await held[0].read(frames=1)  # both streams are open (and this one then closed)
        refused = await live.rpc("SubscribeToTask", {"id": task_id})
        assert refused["error"]["code"] == -32099  # the second is still held
        assert "Too many streams open from this client" in refused["error"]["message"]
        body = rpc_body("SubscribeToTask", {"id": task_id}, 9)
        with anyio.fail_after(10):  # the first one is given back once the server sees it gone
            while True:
                headers = {"content-type": "application/json", "a2a-version": "1.0"}
                async with live.client.stream(
                    "POST", live.url("/"), content=body, headers=headers
                ) as again:
                    if again.headers["content-type"] == "text/event-stream":
                        break
                await anyio.sleep(0.05)
        held[1].sock.close()
