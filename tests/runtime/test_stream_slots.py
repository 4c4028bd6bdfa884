"""Streams per client (``StreamOptions.max_streams_per_peer``), driven through
``A2AServer.handle`` with bytes: one client address holds at most so many streams at once; one
more is refused before it starts anything, every other client is served, and a closed stream
gives its slot back whether or not it was ever read.
"""

from __future__ import annotations

import json
import logging

import pytest

from a2a_core.http import HttpResponse, SseResponse
from a2a_core.server import A2AServer, InputRequired, StreamOptions, TaskContext
from helpers.a2a_client import Client, make_card, rpc_body, user_message

pytestmark = pytest.mark.anyio

HOSTILE, OTHER = "192.0.2.7", "198.51.100.9"


async def asks(ctx: TaskContext) -> InputRequired:
    return InputRequired("Who is asking?")


async def open_task(server: A2AServer) -> str:
    """A task that stays open (input-required), to subscribe to."""
    reply = await Client(server).result("SendMessage", {"message": user_message("hi")})
    return str(reply["task"]["id"])


async def subscribe(client: Client, task_id: str) -> HttpResponse | SseResponse:
    return await client.server.handle(
        client.request("POST", "/", rpc_body("SubscribeToTask", {"id": task_id}))
    )


def error_of(response: HttpResponse | SseResponse) -> dict[str, object]:
    assert isinstance(response, HttpResponse), response
    error: dict[str, object] = json.loads(response.body)["error"]
    return error


async def test_a_client_holds_at_most_its_streams_and_others_are_served() -> None:
    server = A2AServer(asks, card=make_card(), streams=StreamOptions(max_streams_per_peer=3))
    async with server:
        task_id = await open_task(server)
        hostile = Client(server, peer=HOSTILE)
        held = [await subscribe(hostile, task_id) for _ in range(3)]
        refused = await subscribe(hostile, task_id)
        other = await subscribe(Client(server, peer=OTHER), task_id)
        # Nothing of the refused one is held: the held streams are still the only ones.
        assert all(isinstance(stream, SseResponse) for stream in held)
        error = error_of(refused)
        assert error["code"] == -32099
        assert error["message"] == (
            "Too many streams open from this client (at most 3 at once): close one, or try "
            "again later"
        )
        assert isinstance(other, SseResponse)
        # A closed stream gives its slot back, read or not (these were never read).
        await held[0].aclose()
        await held[0].aclose()  # a second close gives nothing back twice
        again = await subscribe(hostile, task_id)
        assert isinstance(again, SseResponse)
        assert error_of(await subscribe(hostile, task_id))["code"] == -32099
        for stream in (*held[1:], again, other):
            await stream.aclose()
        assert server._stream_slots is not None and server._stream_slots.open == {}


async def test_a_refused_streaming_send_starts_no_agent() -> None:
    calls = 0

    async def counted(ctx: TaskContext) -> InputRequired:
        nonlocal calls
        calls += 1
        return InputRequired("more?")

    server = A2AServer(counted, card=make_card(), streams=StreamOptions(max_streams_per_peer=1))
    async with server:
        client = Client(server, peer=HOSTILE)
        first = await client.server.handle(
            client.request(
                "POST", "/", rpc_body("SendStreamingMessage", {"message": user_message("a")})
            )
        )
        assert isinstance(first, SseResponse)
        body = json.dumps({"message": user_message("b", mid="m2")}).encode()
        rest = await server.handle(client.request("POST", "/message:stream", body))
        listed = await Client(server).result("ListTasks", {})
        await first.aclose()
    assert isinstance(rest, HttpResponse) and rest.status == 429
    assert rest.header("retry-after") == "5"
    assert json.loads(rest.body)["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert calls == 1 and listed["totalSize"] == 1  # the refused send left nothing behind


async def test_requests_without_a_peer_and_servers_without_a_limit_are_not_counted() -> None:
    limited = A2AServer(asks, card=make_card(), streams=StreamOptions(max_streams_per_peer=1))
    unlimited = A2AServer(asks, card=make_card(), streams=StreamOptions(max_streams_per_peer=None))
    async with limited, unlimited:
        for server, client in (
            (limited, Client(limited)),
            (unlimited, Client(unlimited, peer=HOSTILE)),
        ):
            task_id = await open_task(server)
            streams = [await subscribe(client, task_id) for _ in range(5)]
            assert all(isinstance(stream, SseResponse) for stream in streams)
            for stream in streams:
                await stream.aclose()


async def test_refusals_are_logged_once_a_minute_per_client(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = A2AServer(asks, card=make_card(), streams=StreamOptions(max_streams_per_peer=1))
    async with server:
        task_id = await open_task(server)
        held = {
            peer: await subscribe(Client(server, peer=peer), task_id) for peer in (HOSTILE, OTHER)
        }
        with caplog.at_level(logging.WARNING, logger="a2a_core.server"):
            for _ in range(20):
                await subscribe(Client(server, peer=HOSTILE), task_id)
            await subscribe(Client(server, peer=OTHER), task_id)
        for stream in held.values():
            await stream.aclose()
    lines = [r.getMessage() for r in caplog.records if "refused a stream" in r.getMessage()]
    assert len(lines) == 2
    assert HOSTILE in lines[0] and OTHER in lines[1]


async def test_a_stream_that_ends_by_itself_gives_its_slot_back() -> None:
    async def quick(ctx: TaskContext) -> str:
        return "done"

    server = A2AServer(quick, card=make_card(), streams=StreamOptions(max_streams_per_peer=1))
    async with server:
        client = Client(server, peer=HOSTILE)
        for mid in ("m1", "m2", "m3"):
            params = {"message": user_message("a", mid=mid)}
            stream = await server.handle(
                client.request("POST", "/", rpc_body("SendStreamingMessage", params))
            )
            assert isinstance(stream, SseResponse)
            frames = [frame async for frame in stream.frames]
            assert b"TASK_STATE_COMPLETED" in b"".join(frames)  # it ran to its end
            await stream.aclose()  # what every adapter does once done


def test_the_limit_is_checked_when_built() -> None:
    for wrong in (0, -1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="max_streams_per_peer"):
            StreamOptions(max_streams_per_peer=wrong)  # type: ignore[arg-type]
    assert StreamOptions().max_streams_per_peer == 100
