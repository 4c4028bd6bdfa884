"""The gRPC adapter over real gRPC on 127.0.0.1: every operation, streams, errors, metadata,
authentication, ownership, and one `A2AServer` shared with HTTP.

Calls go through our own client (`A2AClient` on a ``GRPC`` endpoint) and, where the raw
status matters, through a bare grpc.aio channel with the official SDK's generated messages.
"""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
import grpc
import httpx
import msgspec
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from a2a_core.auth import ApiKey, AuthenticatedIdentity
from a2a_core.client import A2AClient, AgentError, ClientError, Credentials, Endpoint
from a2a_core.server import A2AServer, InputRequired, TaskContext
from a2a_core.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    APIKeySecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a_grpc import GrpcServer
from a2a_starlette import A2AStarlette

pytestmark = pytest.mark.anyio

BASE = "http://testserver"
EXTENSION = "urn:example:ext"


@pytest.fixture
def anyio_backend() -> str:
    """grpc.aio runs on asyncio only."""
    return "asyncio"


class Agent:
    """``echo`` (default), ``stream N``, ``big N`` (an artifact of N MiB, then held), ``ask`` (input-required, then a greeting), ``hold``
    (working until released), ``who`` (the caller), ``ext`` (the active extensions)."""

    def __init__(self) -> None:
        self.released = anyio.Event()

    async def __call__(self, ctx: TaskContext) -> Any:
        words = ctx.text.split()
        command = words[0] if words else ""
        if command == "stream":
            for n in range(int(words[1])):
                await ctx.stream_chunk(f"{n} ")
            return None
        if command == "ask":
            return InputRequired("What is your name?")
        if command == "big":  # an artifact of N MiB, then hold
            await ctx.stream_chunk("x" * (int(words[1]) << 20))
            await ctx.working("holding")
            await self.released.wait()
            return "released"
        if command == "hold":
            await ctx.working("holding")
            await self.released.wait()
            return "released"
        if command == "who":
            identity = ctx.identity
            return identity.subject if isinstance(identity, AuthenticatedIdentity) else "anon"
        if command == "ext":
            return ",".join(ctx.extensions) or "none"
        if ctx.is_follow_up:  # the answer to "ask"
            return f"Hello, {ctx.text}!"
        return f"echo {ctx.text}"


def make_card(**changes: Any) -> AgentCard:
    card = AgentCard(
        name="Grpc test",
        description="Answers over every binding.",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )
    return msgspec.structs.replace(card, **changes)


class Served:
    def __init__(self, server: A2AServer, grpc_server: GrpcServer, agent: Agent) -> None:
        self.server = server
        self.grpc = grpc_server
        self.agent = agent
        self.address = grpc_server.address

    def client(self, **options: Any) -> A2AClient:
        return A2AClient(Endpoint(self.address, "grpc", "1.0"), **options)

    def http(self) -> httpx.AsyncClient:
        app = A2AStarlette(self.server)
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE)


async def _serve(**options: Any) -> AsyncIterator[Served]:
    agent = Agent()
    options.setdefault("card", make_card())
    server = A2AServer(agent, base_url=BASE, **options)
    async with server, GrpcServer(server, health=True) as grpc_server:
        yield Served(server, grpc_server, agent)
        agent.released.set()


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    async for running in _serve(extensions=()):
        yield running


def stub(address: str) -> tuple[grpc.aio.Channel, a2a_pb2_grpc.A2AServiceStub]:
    channel = grpc.aio.insecure_channel(address)
    return channel, a2a_pb2_grpc.A2AServiceStub(channel)


def details_of(exc: grpc.aio.AioRpcError) -> tuple[status_pb2.Status, error_details_pb2.ErrorInfo]:
    status = status_pb2.Status()
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status.ParseFromString(value)
    info = error_details_pb2.ErrorInfo()
    assert status.details and status.details[0].Unpack(info)
    return status, info


def text_of(task: Any) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if isinstance(p.text, str))


# --- operations ------------------------------------------------------------------------------


async def test_send_get_list_cancel(served: Served) -> None:
    async with served.client() as client:
        task = await client.send("hello")
        assert task.status.state is TaskState.COMPLETED
        assert text_of(task) == "echo hello"
        got = await client.get_task(task.id, history_length=1)
        assert got.id == task.id and len(got.history) == 1
        listed = await client.list_tasks()
        assert [t.id for t in listed.tasks] == [task.id]
        with pytest.raises(AgentError) as caught:
            await client.cancel_task(task.id)
        assert (caught.value.reason, caught.value.grpc_status) == (
            "TASK_NOT_CANCELABLE",
            "FAILED_PRECONDITION",
        )


async def test_stream_sends_chunks_then_closes(served: Served) -> None:
    async with served.client() as client:
        events = [r async for r in client.stream("stream 3")]
    assert events[0].event.task is not None
    chunks = [e.event.artifact_update for e in events if e.event.artifact_update is not None]
    assert "".join(c.artifact.parts[0].text for c in chunks) == "0 1 2 "  # type: ignore[operator]
    assert events[-1].last and events[-1].event.status_update is not None
    assert events[-1].event.status_update.status.state is TaskState.COMPLETED


async def test_multi_turn_continues_the_same_task(served: Served) -> None:
    async with served.client() as client:
        first = await client.send("ask")
        assert first.status.state is TaskState.INPUT_REQUIRED
        second = await client.send("Ada", task_id=first.id, context_id=first.context_id)
    assert second.id == first.id
    assert (second.status.state, text_of(second)) == (TaskState.COMPLETED, "Hello, Ada!")


async def test_subscribe_starts_with_the_task_and_cancel_ends_it(served: Served) -> None:
    async with served.client() as client:
        held = await client.send("hold", return_immediately=True)
        with anyio.fail_after(10):
            async for received in client.subscribe(held.id):
                if received.event.task is not None:
                    assert received.event.task.id == held.id
                    canceled = await client.cancel_task(held.id)
                    assert canceled.status.state is TaskState.CANCELED
                if received.last:
                    break
        assert received.event.status_update is not None
        assert received.event.status_update.status.state is TaskState.CANCELED
        # A terminal task has nothing to subscribe to.
        with pytest.raises(AgentError) as caught:
            async for _ in client.subscribe(held.id):
                pass
        assert caught.value.reason == "UNSUPPORTED_OPERATION"


async def test_a_client_leaving_a_stream_does_not_cancel_the_task(served: Served) -> None:
    channel, service = stub(served.address)
    async with channel:
        request = a2a_pb2.SendMessageRequest(
            message=a2a_pb2.Message(
                message_id="m1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="hold")]
            )
        )
        call = service.SendStreamingMessage(request)
        first = await call.read()
        task_id = first.task.id
        call.cancel()
        assert call.cancelled()
    async with served.client() as client:
        assert (await client.get_task(task_id)).status.state is TaskState.WORKING
        served.agent.released.set()
        with anyio.fail_after(10):
            while (await client.get_task(task_id)).status.state is not TaskState.COMPLETED:
                await anyio.sleep(0.02)


async def test_push_configs(served: Served) -> None:
    async with served.client() as client:
        task = await client.send("hold", return_immediately=True)
        config = TaskPushNotificationConfig(task_id=task.id, url="https://hooks.example/a2a")
        created = await client.create_push_config(config)
        assert created.task_id == task.id and created.id
        assert (await client.get_push_config(task.id, created.id)).url == created.url
        assert [c.id for c in (await client.list_push_configs(task.id)).configs] == [created.id]
        await client.delete_push_config(task.id, created.id)
        assert (await client.list_push_configs(task.id)).configs == []


# --- errors and metadata ---------------------------------------------------------------------


async def test_an_unknown_task_is_not_found_with_error_info(served: Served) -> None:
    channel, service = stub(served.address)
    async with channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await service.GetTask(
                a2a_pb2.GetTaskRequest(id="nope"), metadata=[("a2a-version", "1.0")]
            )
    exc = caught.value
    status, info = details_of(exc)
    assert exc.code() is grpc.StatusCode.NOT_FOUND
    assert (status.code, status.message) == (exc.code().value[0], exc.details())
    assert (info.reason, info.domain) == ("TASK_NOT_FOUND", "a2a-protocol.org")
    assert dict(exc.trailing_metadata() or ()).get("a2a-version") == "1.0"


@pytest.mark.parametrize("version", ["0.3", "2.0"])
async def test_another_version_is_refused(served: Served, version: str) -> None:
    channel, service = stub(served.address)
    async with channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await service.GetTask(
                a2a_pb2.GetTaskRequest(id="t"), metadata=[("a2a-version", version)]
            )
    assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
    assert details_of(caught.value)[1].reason == "VERSION_NOT_SUPPORTED"


async def test_invalid_params_are_invalid_argument(served: Served) -> None:
    channel, service = stub(served.address)
    async with channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await service.SendMessage(a2a_pb2.SendMessageRequest())
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert details_of(caught.value)[1].reason == "INVALID_PARAMS"
    assert "message" in (caught.value.details() or "")


async def test_an_oversized_message_is_refused_by_grpc() -> None:
    from a2a_core.protocol import ProtocolOptions

    async for served in _serve(protocol=ProtocolOptions(max_body_size=1024)):
        async with served.client() as client:
            with pytest.raises(AgentError) as caught:
                await client.send("x" * 2048)
        assert caught.value.grpc_status == "RESOURCE_EXHAUSTED"
        async with served.client() as client:  # and it serves on
            assert text_of(await client.send("small")) == "echo small"


async def test_extensions_are_negotiated_from_metadata() -> None:
    from a2a_core.server import Extension

    declared = Extension(AgentExtension(uri=EXTENSION, description="test"))
    async for served in _serve(extensions=[declared]):
        async with served.client(extensions=[EXTENSION]) as client:
            assert text_of(await client.send("ext")) == EXTENSION
        channel, service = stub(served.address)
        async with channel:
            request = a2a_pb2.SendMessageRequest(
                message=a2a_pb2.Message(
                    message_id="m", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="ext")]
                )
            )
            call = service.SendMessage(request, metadata=[("a2a-extensions", EXTENSION)])
            reply = await call
            assert dict(await call.trailing_metadata()).get("a2a-extensions") == EXTENSION
        assert reply.task.artifacts[0].parts[0].text == EXTENSION


# --- auth and ownership ----------------------------------------------------------------------


def secured_card() -> AgentCard:
    return make_card(
        security_schemes={
            "key": SecurityScheme(
                api_key_security_scheme=APIKeySecurityScheme(location="header", name="X-API-Key")
            )
        },
        security_requirements=[SecurityRequirement(schemes={"key": StringList()})],
    )


async def test_credentials_in_metadata_and_ownership() -> None:
    async for served in _serve(
        card=secured_card(), authenticators={"key": ApiKey.of({"k-ada": "ada", "k-bob": "bob"})}
    ):
        async with served.client() as anonymous:
            with pytest.raises(AgentError) as caught:
                await anonymous.send("who")
            assert caught.value.grpc_status == "UNAUTHENTICATED"
        ada = served.client(credentials=Credentials(api_key="k-ada"))
        ada.card = secured_card()
        bob = served.client(credentials=Credentials(api_key="k-bob"))
        bob.card = secured_card()
        async with ada, bob:
            task = await ada.send("who")
            assert text_of(task) == "ada"
            with pytest.raises(AgentError) as caught:
                await bob.get_task(task.id)  # another owner's task does not exist for bob
            assert caught.value.reason == "TASK_NOT_FOUND"
            assert (await bob.list_tasks()).tasks == []


# --- one server, every binding ---------------------------------------------------------------


async def test_a_task_is_the_same_over_json_rpc_and_grpc(served: Served) -> None:
    async with served.http() as http, served.client() as over_grpc:
        over_json = A2AClient(Endpoint(BASE + "/", "jsonrpc", "1.0"), http=http)
        made_by_json = await over_json.send("one")
        assert (await over_grpc.get_task(made_by_json.id)).artifacts == made_by_json.artifacts
        made_by_grpc = await over_grpc.send("two")
        assert (await over_json.get_task(made_by_grpc.id)).artifacts == made_by_grpc.artifacts


async def test_the_card_lists_grpc_and_the_client_picks_it_when_asked(served: Served) -> None:
    async with served.http() as http:
        card = (await http.get("/.well-known/agent-card.json")).json()
        interfaces = [(i["protocolBinding"], i["url"]) for i in card["supportedInterfaces"]]
        assert interfaces[-1] == ("GRPC", served.address)
        assert interfaces[0][0] == "JSONRPC"  # HTTP stays the default
        async with await A2AClient.connect(BASE, http=http, bindings=["GRPC"]) as client:
            assert client.endpoint.binding == "grpc"
            assert text_of(await client.send("picked")) == "echo picked"


async def test_health_follows_the_server(served: Served) -> None:
    async with grpc.aio.insecure_channel(served.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest())
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_the_extended_card_over_grpc_lists_every_interface() -> None:
    """A server whose HTTP adapter gives the base URL per request has none of its own: the
    gRPC server's ``base_url`` is where the extended card's HTTP interfaces are."""
    from a2a_core.protocol import ProtocolOptions

    agent = Agent()
    card = make_card(capabilities=AgentCapabilities(extended_agent_card=True))
    server = A2AServer(
        agent,
        card=card,
        extended_card=make_card(name="Extended"),
        protocol=ProtocolOptions(extended_card_for_anonymous=True),
    )
    async with (
        server,
        GrpcServer(server, base_url="http://agent.example") as grpc_server,
        A2AClient(Endpoint(grpc_server.address, "grpc", "1.0")) as client,
    ):
        extended = await client.get_extended_card()
    listed = [(i.protocol_binding, i.url) for i in extended.supported_interfaces]
    assert extended.name == "Extended"
    assert ("JSONRPC", "http://agent.example/") in listed
    assert listed[-1] == ("GRPC", grpc_server.address)


async def test_a_stream_says_its_version_before_its_first_event(served: Served) -> None:
    channel, service = stub(served.address)
    async with channel:
        request = a2a_pb2.SendMessageRequest(
            message=a2a_pb2.Message(
                message_id="m", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text="stream 2")]
            )
        )
        call = service.SendStreamingMessage(request, metadata=[("a2a-version", "1.0")])
        assert dict(await call.initial_metadata()).get("a2a-version") == "1.0"
        events = [event async for event in call]
    assert events[-1].status_update.status.state == a2a_pb2.TASK_STATE_COMPLETED


# --- slow readers ----------------------------------------------------------------------------


async def big_task(grpc_server: GrpcServer) -> str:
    """A task holding an artifact of 12 MiB, left open."""
    async with served_client(grpc_server) as client:
        held = await client.send("big 12", return_immediately=True)
        with anyio.fail_after(10):
            while not (await client.get_task(held.id)).artifacts:
                await anyio.sleep(0.02)
    return held.id


async def first_events(calls: list[Any]) -> list[Any]:
    """Each call's first event, read concurrently (a client's streams read by its tasks),
    or the `grpc.aio.AioRpcError` that ended it."""
    got: list[Any] = [None] * len(calls)

    async def read(n: int) -> None:
        try:
            got[n] = await calls[n].read()
        except grpc.aio.AioRpcError as exc:
            got[n] = exc

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for n in range(len(calls)):
                group.start_soon(read, n)
    return got


UNLIMITED = [("grpc.max_receive_message_length", -1)]


async def cancel_all(calls: list[Any]) -> None:
    """Cancel the calls and wait until grpc has finished each in this event loop: one whose
    completion came after the loop closed would reach the next test's loop as an error."""
    for call in calls:
        call.cancel()
    with anyio.fail_after(10):
        for call in calls:
            await call.code()


async def test_unread_streams_hold_one_budget_per_client_not_one_copy_per_stream() -> None:
    # gRPC copies a stream's message whole into its buffers until the client reads it:
    # eight unread subscriptions to a 12 MiB task would hold eight copies. With a budget of
    # 4 MiB per client address, one message is in flight and the other streams wait.
    agent = Agent()
    server = A2AServer(agent, base_url=BASE, card=make_card())
    async with server, GrpcServer(server, max_in_flight=4 << 20) as grpc_server:
        task_id = await big_task(grpc_server)
        async with grpc.aio.insecure_channel(grpc_server.address, options=UNLIMITED) as channel:
            service = a2a_pb2_grpc.A2AServiceStub(channel)
            request = a2a_pb2.SubscribeToTaskRequest(id=task_id)
            calls = [service.SubscribeToTask(request) for _ in range(8)]
            with anyio.fail_after(10):
                while grpc_server.in_flight.total == 0:
                    await anyio.sleep(0.02)
            # For half a second (time enough for every stream to try to send), never more
            # than one message in flight.
            seen = set()
            for _ in range(25):
                seen.add(grpc_server.in_flight.total)
                await anyio.sleep(0.02)
            assert max(seen) > 12 << 20
            assert max(seen) < 13 << 20
            # Nothing is lost: each stream sends its snapshot once the one before is read.
            for first in await first_events(calls):
                assert first.task.id == task_id
                assert len(first.task.artifacts[0].parts[0].text) == 12 << 20
            await cancel_all(calls)
        with anyio.fail_after(10):
            while grpc_server.in_flight.total:
                await anyio.sleep(0.02)
        agent.released.set()


async def test_a_stream_that_waits_too_long_for_its_client_ends_resource_exhausted() -> None:
    # A client that would read one stream only after another one ends must not wait forever
    # behind a message nobody reads: the waiting stream ends, and can be opened again.
    agent = Agent()
    server = A2AServer(agent, base_url=BASE, card=make_card())
    grpc_server = GrpcServer(server, max_in_flight=4 << 20, in_flight_wait=0.5)
    async with server, grpc_server:
        task_id = await big_task(grpc_server)
        async with grpc.aio.insecure_channel(grpc_server.address, options=UNLIMITED) as channel:
            service = a2a_pb2_grpc.A2AServiceStub(channel)
            request = a2a_pb2.SubscribeToTaskRequest(id=task_id)
            calls = [service.SubscribeToTask(request) for _ in range(2)]
            await anyio.sleep(1.5)
            first, second = sorted(
                await first_events(calls), key=lambda got: isinstance(got, Exception)
            )
            assert first.task.id == task_id
            assert isinstance(second, grpc.aio.AioRpcError)
            assert second.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "read them" in (second.details() or "")
            again = service.SubscribeToTask(request)
            assert (await first_events([again]))[0].task.id == task_id
            await cancel_all([*calls, again])
        agent.released.set()


def served_client(grpc_server: GrpcServer) -> A2AClient:
    return A2AClient(Endpoint(grpc_server.address, "grpc", "1.0"))


# --- connections -----------------------------------------------------------------------------


def read_until_closed(sock: socket.socket) -> None:
    """Read (the server's HTTP/2 settings, if any) until the server closes the connection."""
    sock.settimeout(10)
    while sock.recv(65536):
        pass


def held_by_server(port: int) -> int:
    """Connections the server side of ``port`` holds open (ESTABLISHED, local port)."""
    held = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            for line in list(lines)[1:]:
                local, state = line.split()[1], line.split()[3]
                held += int(local.rsplit(":", 1)[1], 16) == port and state == "01"
    return held


#: A gRPC server of its own process: max_connections=8, a 0.5 s handshake; prints its address.
LIMITED_SERVER = """
import asyncio, sys
from a2a_core.server import A2AServer
from a2a_core.types import AgentCard, AgentCapabilities
from a2a_grpc import GrpcServer

async def main():
    card = AgentCard(name="Limited", description="d", supported_interfaces=[], version="1",
                     capabilities=AgentCapabilities(), default_input_modes=["text/plain"],
                     default_output_modes=["text/plain"], skills=[])
    server = A2AServer(lambda ctx: "ok", card=card, base_url="http://127.0.0.1")
    async with GrpcServer(server, max_connections=8, handshake_timeout=0.5) as grpc_server:
        print(grpc_server.address, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


def test_connections_past_the_limit_and_silent_ones_are_closed() -> None:
    # One address opening connections it never uses must not take the process's file
    # descriptors (the HTTP side shares them): past max_connections each is closed at once,
    # and those within it once the handshake timeout passes; then calls are served again.
    # The server runs in a process of its own, and this test uses no grpc.aio: grpc's
    # asyncio poller stays with the event loop of the tests around it.
    with subprocess.Popen(
        [sys.executable, "-c", LIMITED_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:
        try:
            served_limited(process)
        finally:
            process.kill()


def served_limited(process: subprocess.Popen[bytes]) -> None:
    """The body of the test above, against the server ``process``."""
    assert process.stdout is not None
    address = process.stdout.readline().decode().strip()
    host, port = address.rsplit(":", 1)
    silent = [socket.create_connection((host, int(port))) for _ in range(30)]
    try:
        time.sleep(0.2)
        assert held_by_server(int(port)) <= 8
        for sock in silent:
            read_until_closed(sock)
    finally:
        for sock in silent:
            sock.close()
    with grpc.insecure_channel(address) as channel:
        service = a2a_pb2_grpc.A2AServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            service.GetTask(a2a_pb2.GetTaskRequest(id="nope"), timeout=10)
        assert caught.value.code() is grpc.StatusCode.NOT_FOUND  # served again


def test_the_default_connection_limit_leaves_half_the_descriptors() -> None:
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    expected = 10_000 if soft == resource.RLIM_INFINITY else max(16, min(10_000, soft // 2))
    assert GrpcServer(A2AServer(Agent(), card=make_card())).max_connections == expected


@pytest.mark.parametrize(
    "credentials",
    [Credentials(api_key="s3cret\r\nX-Injected: yes"), Credentials(bearer_token="s3cret\nX: y")],
    ids=["api-key", "bearer-token"],
)
async def test_a_credential_with_a_line_break_is_refused_over_grpc_too(
    served: Served, credentials: Credentials
) -> None:
    # grpc would refuse it with an error of its own (not a ClientError) and a log line.
    async with served.client(credentials=credentials) as client:
        with pytest.raises(ClientError) as caught:
            await client.get_task("t1")
    text = f"{caught.value} {caught.value.args!r}"
    assert "line break" in text and "s3cret" not in text
