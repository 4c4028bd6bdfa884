"""The official ``a2a-sdk`` 1.x gRPC client against our gRPC adapter (``a2a_grpc``).

The server is ``interop.servers.serve(..., grpc=True)``: one `A2AServer` behind an HTTP
adapter and, on its own port of 127.0.0.1, `GrpcServer`, which lists its ``GRPC`` interface
in the card. The SDK's ``ClientFactory`` chooses gRPC from that card; where the SDK hides
what is on the wire (status codes, ``grpc-status-details-bin``, reply metadata) the test
calls the SDK's generated stub ``A2AServiceStub`` directly. The operations the JSON bindings
share with gRPC also run over gRPC in ``test_sdk_v1.py``; here are the gRPC specifics.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack

import grpc
import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.errors import A2AClientTimeoutError
from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
from a2a.types import a2a_pb2_grpc
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError
from google.protobuf.json_format import ParseDict
from google.protobuf.struct_pb2 import Struct, Value
from google.rpc import error_details_pb2, status_pb2

from a2a_core.server import TimestampExtension
from a2a_grpc import GrpcServer
from interop.sdk_v1_helpers import (
    OPEN_STATES,
    check_transport,
    client_config,
    collect,
    release,
    request,
    send_one,
    start_held,
    texts,
    wait_for_state,
)
from interop.servers import ADAPTERS, QUESTION, Served, serve

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

#: What the SDK's gRPC transport sends with every call.
V1 = (("a2a-version", "1.0"),)
DETAILS_KEY = "grpc-status-details-bin"
DOMAIN = "a2a-protocol.org"
STAMP = TimestampExtension.URI

Connect = Callable[..., Client]


@pytest.fixture(params=ADAPTERS)
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    """A running server on the adapter under test and over gRPC; it declares the timestamp
    extension (active only for callers that ask for it)."""
    async with serve(request.param, grpc=True, extensions=[TimestampExtension()]) as running:
        yield running


@pytest.fixture
async def card(served: Served) -> AgentCard:
    """The public card, as the SDK's resolver reads it."""
    async with httpx.AsyncClient() as http:
        return await A2ACardResolver(http, served.url).get_agent_card()


@pytest.fixture
async def connect(card: AgentCard) -> AsyncIterator[Connect]:
    """Create SDK clients (gRPC by default; ``binding="JSONRPC"`` for the same server over
    JSON-RPC), closed at the end."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx.AsyncClient(timeout=10))

        def make(*, binding: str = "GRPC", streaming: bool = True, polling: bool = False) -> Client:
            config = client_config(binding, http, streaming=streaming, polling=polling)
            client = ClientFactory(config).create(card)
            stack.push_async_callback(client.close)
            return check_transport(client, binding)

        yield make


@pytest.fixture
async def stub(served: Served) -> AsyncIterator[a2a_pb2_grpc.A2AServiceStub]:
    """The SDK's generated stub on a channel of its own to our gRPC server."""
    assert served.grpc is not None
    async with grpc.aio.insecure_channel(served.grpc) as channel:
        yield a2a_pb2_grpc.A2AServiceStub(channel)


def status_of(err: grpc.aio.AioRpcError) -> tuple[status_pb2.Status, error_details_pb2.ErrorInfo]:
    """The ``google.rpc.Status`` of a failed call, checked against the call's own code and
    message (as the SDK checks them), and its one ``ErrorInfo``."""
    details = [value for key, value in err.trailing_metadata() or () if key == DETAILS_KEY]
    assert len(details) == 1
    status = status_pb2.Status.FromString(details[0])
    assert status.code == err.code().value[0]
    assert status.message == err.details()
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(infos) == 1
    info = error_details_pb2.ErrorInfo()
    infos[0].Unpack(info)
    assert info.domain == DOMAIN
    return status, info


def no_errors_logged(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing logged an error (the server's side of an abandoned call included)."""
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert problems == []


# --- discovery -----------------------------------------------------------------------------


async def test_card_resolution_chooses_grpc(served: Served, card: AgentCard) -> None:
    """The card lists gRPC (``host:port``, v1.0); a client that prefers gRPC resolves the
    card and speaks gRPC. The card lists JSON-RPC first, so the SDK's default (the server's
    order) would not: gRPC clients must prefer it."""
    grpc_interfaces = [
        (i.protocol_version, i.url)
        for i in card.supported_interfaces
        if i.protocol_binding == "GRPC"
    ]
    assert grpc_interfaces == [("1.0", served.grpc)]
    async with httpx.AsyncClient(timeout=10) as http:
        config = client_config("GRPC", http, streaming=False)
        async with await ClientFactory(config).create_from_url(served.url) as client:
            reply = await send_one(check_transport(client, "GRPC"), request("echo hi"))
        assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED
        assert texts(reply.task.artifacts[0].parts) == ["hi"]

        server_order = ClientConfig(
            httpx_client=http,
            grpc_channel_factory=grpc.aio.insecure_channel,
            supported_protocol_bindings=["GRPC", "JSONRPC"],
        )
        async with ClientFactory(server_order).create(card) as client:
            check_transport(client, "JSONRPC")


# --- the operations, and what is on the wire -----------------------------------------------


async def test_send_and_get(connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub) -> None:
    client = connect(streaming=False)
    context_id = str(uuid.uuid4())
    req = request("echo hello", context_id=context_id)
    task = (await send_one(client, req)).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert texts(task.artifacts[0].parts) == ["hello"]
    assert task.history[0].message_id == req.message.message_id

    got = await client.get_task(GetTaskRequest(id=task.id, history_length=1))
    assert (got.id, got.context_id, len(got.history)) == (task.id, context_id, 1)
    # proto3 ``optional``: an explicit 0 is on the wire, and means no history at all.
    assert list((await client.get_task(GetTaskRequest(id=task.id, history_length=0))).history) == []
    listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
    assert [t.id for t in listed.tasks] == [task.id]

    # On the wire: OK, the version with the status (a unary reply's trailing metadata), no
    # error details.
    call = stub.GetTask(GetTaskRequest(id=task.id), metadata=V1)
    assert (await call).id == task.id
    assert await call.code() == grpc.StatusCode.OK
    assert ("a2a-version", "1.0") in tuple(await call.trailing_metadata())
    assert DETAILS_KEY not in dict(await call.trailing_metadata())


async def test_stream(connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub) -> None:
    events = await collect(connect().send_message(request("stream 3")))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task"] + ["artifact_update"] * 3 + ["status_update"]
    chunks = [e.artifact_update for e in events[1:4]]
    assert [texts(c.artifact.parts) for c in chunks] == [["chunk 0"], ["chunk 1"], ["chunk 2"]]
    assert [c.last_chunk for c in chunks] == [False, False, True]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

    # On the wire: one message per event, then the call ends OK.
    call = stub.SendStreamingMessage(request("stream 2"), metadata=V1)
    raw = [event async for event in call]
    assert [e.WhichOneof("payload") for e in raw][-1] == "status_update"
    assert len(raw) == 4
    assert await call.code() == grpc.StatusCode.OK


async def test_cancel(connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub) -> None:
    client = connect(streaming=False)
    task = await start_held(client)
    canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
    assert (canceled.id, canceled.status.state) == (task.id, TaskState.TASK_STATE_CANCELED)
    assert (await client.get_task(GetTaskRequest(id=task.id))).status.state == (
        TaskState.TASK_STATE_CANCELED
    )
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(CancelTaskRequest(id=task.id))

    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.CancelTask(CancelTaskRequest(id=task.id), metadata=V1)
    assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert status_of(raised.value)[1].reason == "TASK_NOT_CANCELABLE"


async def test_subscribe(connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub) -> None:
    """The first event is the task; a terminal task has nothing to subscribe to (v1.0.0
    error table: UNIMPLEMENTED, reason UNSUPPORTED_OPERATION)."""
    task = await start_held(connect(streaming=False))
    events: list[StreamResponse] = []
    async for event in connect().subscribe(SubscribeToTaskRequest(id=task.id)):
        events.append(event)
        if len(events) == 1:
            await release(connect(streaming=False), task.id)
    assert events[0].WhichOneof("payload") == "task"
    assert events[0].task.id == task.id
    assert events[0].task.status.state in OPEN_STATES
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [["released"]]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

    with pytest.raises(UnsupportedOperationError):
        await collect(connect().subscribe(SubscribeToTaskRequest(id=task.id)))
    call = stub.SubscribeToTask(SubscribeToTaskRequest(id=task.id), metadata=V1)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await collect(call)  # type: ignore[arg-type]
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert status_of(raised.value)[1].reason == "UNSUPPORTED_OPERATION"


async def test_multi_turn(connect: Connect) -> None:
    """input-required, then the follow-up resumes and completes the same task."""
    client = connect()
    events = await collect(client.send_message(request("ask")))
    task = events[0].task
    last = events[-1].status_update
    assert last.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert texts(last.status.message.parts) == [QUESTION]

    follow_up = request("Ada", task_id=task.id, context_id=task.context_id)
    events = await collect(client.send_message(follow_up))
    assert events[0].task.id == task.id
    assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    done = await client.get_task(GetTaskRequest(id=task.id))
    assert texts(done.artifacts[-1].parts) == ["Hello, Ada!"]
    assert [texts(m.parts) for m in done.history if m.role == Role.ROLE_USER] == [["ask"], ["Ada"]]


async def test_every_kind_of_part_round_trips(connect: Connect) -> None:
    """A message with every kind of part and nested metadata, sent over gRPC, reads back
    exactly as sent over gRPC and over JSON-RPC (our protobuf codec and ProtoJSON agree)."""
    data = ParseDict({"a": 1, "b": [True, None, "x", -2.5e-7], "c": {"d": {}}}, Value())
    meta = ParseDict({"k": "v", "n": 3, "nested": {"l": [1, "2"]}}, Struct())
    message = Message(
        message_id=str(uuid.uuid4()),
        role=Role.ROLE_USER,
        parts=[
            Part(text="echo héllo ✓"),
            Part(raw=bytes(range(256)), media_type="application/octet-stream", filename="b"),
            Part(url="https://example.com/f.txt", media_type="text/plain"),
            Part(data=data, metadata=meta),
        ],
        metadata=meta,
        extensions=["urn:x:a", "urn:x:b"],
    )
    task = (await send_one(connect(streaming=False), SendMessageRequest(message=message))).task
    assert texts(task.artifacts[0].parts) == ["héllo ✓"]
    expected = Message()
    expected.CopyFrom(message)
    expected.task_id, expected.context_id = task.id, task.context_id
    for binding in ("GRPC", "JSONRPC"):
        read = await connect(binding=binding).get_task(GetTaskRequest(id=task.id))
        assert read.history[0] == expected


# --- errors --------------------------------------------------------------------------------


async def test_unknown_task_is_the_typed_error(
    connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub
) -> None:
    """The SDK raises its TaskNotFoundError only from a ``google.rpc.Status`` whose code and
    message are exactly the call's (it raises ValueError otherwise) and whose ErrorInfo
    says TASK_NOT_FOUND: unary and streaming calls alike."""
    client = connect()
    with pytest.raises(TaskNotFoundError) as typed:
        await client.get_task(GetTaskRequest(id="no-such-task"))
    assert str(typed.value) == "Task not found"
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task(CancelTaskRequest(id="no-such-task"))
    with pytest.raises(TaskNotFoundError):
        await collect(client.subscribe(SubscribeToTaskRequest(id="no-such-task")))

    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.GetTask(GetTaskRequest(id="no-such-task"), metadata=V1)
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    status, info = status_of(raised.value)
    assert (status.code, status.message) == (5, "Task not found")
    assert info.reason == "TASK_NOT_FOUND"
    assert dict(info.metadata) == {"taskId": "no-such-task"}


async def test_unsupported_version(stub: a2a_pb2_grpc.A2AServiceStub) -> None:
    """``a2a-version: 9.9`` is refused before anything runs: UNIMPLEMENTED (v1.0.0 error
    table), reason VERSION_NOT_SUPPORTED, for a unary and a streaming call."""
    context_id = str(uuid.uuid4())
    metadata = (("a2a-version", "9.9"),)
    with pytest.raises(grpc.aio.AioRpcError) as unary:
        await stub.SendMessage(request("echo hi", context_id=context_id), metadata=metadata)
    call = stub.SendStreamingMessage(request("stream 2", context_id=context_id), metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as streaming:
        await collect(call)  # type: ignore[arg-type]
    for raised in (unary, streaming):
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
        status, info = status_of(raised.value)
        assert status.code == 12
        assert "9.9" in status.message
        assert info.reason == "VERSION_NOT_SUPPORTED"
    listed = await stub.ListTasks(ListTasksRequest(context_id=context_id), metadata=V1)
    assert list(listed.tasks) == []


async def test_extended_card_needs_an_identity(connect: Connect) -> None:
    """An anonymous caller is refused the extended card over gRPC as over HTTP (these
    servers identify callers in HTTP middleware only, see ``test_sdk_v1.py``)."""
    with pytest.raises(UnsupportedOperationError):
        await connect(streaming=False).get_extended_agent_card(GetExtendedAgentCardRequest())


# --- extensions ----------------------------------------------------------------------------


async def test_extensions_negotiated(
    card: AgentCard, connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub
) -> None:
    """``a2a-extensions`` metadata activates a declared extension (the reply's initial
    metadata names it, undeclared ones are left out); without it nothing changes."""
    assert [e.uri for e in card.capabilities.extensions] == [STAMP]
    client = connect(streaming=False)
    asked = ServiceParametersFactory.create([with_a2a_extensions([STAMP, "urn:x:undeclared"])])
    events = await collect(
        client.send_message(request("echo hi"), context=ClientCallContext(service_parameters=asked))
    )
    assert events[0].task.metadata[STAMP]["timestamp"].endswith("Z")
    plain = (await send_one(client, request("echo hi"))).task
    assert STAMP not in plain.metadata

    call = stub.SendMessage(
        request("echo hi"), metadata=(*V1, ("a2a-extensions", f"urn:x:undeclared, {STAMP}"))
    )
    assert STAMP in (await call).task.metadata
    assert ("a2a-extensions", STAMP) in tuple(await call.trailing_metadata())
    call = stub.SendMessage(request("echo hi"), metadata=V1)
    assert STAMP not in (await call).task.metadata
    assert "a2a-extensions" not in dict(await call.trailing_metadata())


# --- a client that goes away ---------------------------------------------------------------


async def test_client_leaving_a_stream_leaves_the_task_running(
    connect: Connect, stub: a2a_pb2_grpc.A2AServiceStub, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that stops reading (closes the SDK's stream, cancels the call, or lets its
    deadline pass) ends its call only: the task goes on, and completes when released."""
    client = connect()
    events = client.send_message(request("hold"))
    first = await anext(events)  # type: ignore[call-overload]
    await events.aclose()  # type: ignore[attr-defined]
    task_id = first.task.id
    assert first.task.status.state in OPEN_STATES
    await wait_for_state(client, task_id, TaskState.TASK_STATE_WORKING)

    call = stub.SubscribeToTask(SubscribeToTaskRequest(id=task_id), metadata=V1)
    assert (await call.read()).task.id == task_id
    call.cancel()
    assert await call.code() == grpc.StatusCode.CANCELLED

    short = ClientCallContext(timeout=0.3)
    with pytest.raises(A2AClientTimeoutError):
        await collect(client.subscribe(SubscribeToTaskRequest(id=task_id), context=short))
    # A blocking send whose deadline passes while its agent holds.
    blocking = connect(streaming=False)
    context_id = str(uuid.uuid4())
    with pytest.raises(A2AClientTimeoutError):
        await collect(blocking.send_message(request("hold", context_id=context_id), context=short))
    (other,) = (await client.list_tasks(ListTasksRequest(context_id=context_id))).tasks

    for held in (task_id, other.id):
        state = (await client.get_task(GetTaskRequest(id=held))).status.state
        assert state == TaskState.TASK_STATE_WORKING
        await release(blocking, held)
        done = await wait_for_state(client, held, TaskState.TASK_STATE_COMPLETED)
        assert texts(done.artifacts[0].parts) == ["released"]
    no_errors_logged(caplog)


# --- the card follows the gRPC server ------------------------------------------------------


async def test_stopped_grpc_server_leaves_the_card() -> None:
    """While the HTTP adapter goes on serving, a stopped gRPC server must leave the card:
    a client that prefers gRPC (as the SDK's take the first v1.0 GRPC interface) would
    otherwise connect to a closed port, also after a restart on a new one."""
    async with serve("starlette") as served, httpx.AsyncClient(timeout=10) as http:
        resolver = A2ACardResolver(http, served.url)

        async def grpc_urls() -> list[str]:
            card = await resolver.get_agent_card()
            return [i.url for i in card.supported_interfaces if i.protocol_binding == "GRPC"]

        async with GrpcServer(served.server) as grpc_server:
            address, listening = grpc_server.address, await grpc_urls()
        stopped = await grpc_urls()
    assert listening == [address]
    assert stopped == []


# --- one server, every binding -------------------------------------------------------------


async def test_task_crosses_bindings(connect: Connect) -> None:
    """A task created over JSON-RPC is read over gRPC, and the reverse: one A2AServer."""
    json_rpc = connect(binding="JSONRPC", streaming=False)
    over_grpc = connect(streaming=False)

    req = request("echo from json")
    made = (await send_one(json_rpc, req)).task
    seen = await over_grpc.get_task(GetTaskRequest(id=made.id))
    assert (seen.id, seen.context_id) == (made.id, made.context_id)
    assert seen.status.state == TaskState.TASK_STATE_COMPLETED
    assert texts(seen.artifacts[0].parts) == ["from json"]
    assert seen.history[0].message_id == req.message.message_id

    held = await start_held(over_grpc)
    seen = await wait_for_state(json_rpc, held.id, TaskState.TASK_STATE_WORKING)
    assert seen.context_id == held.context_id
    listed = await json_rpc.list_tasks(ListTasksRequest(context_id=held.context_id))
    assert [t.id for t in listed.tasks] == [held.id]
    # A gRPC subscription hears the task finish when JSON-RPC releases it.
    events: list[StreamResponse] = []
    async for event in connect().subscribe(SubscribeToTaskRequest(id=held.id)):
        events.append(event)
        if len(events) == 1:
            await release(json_rpc, held.id)
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    done = await json_rpc.get_task(GetTaskRequest(id=held.id))
    assert texts(done.artifacts[0].parts) == ["released"]

    # Canceled over JSON-RPC, seen canceled over gRPC.
    held = await start_held(over_grpc)
    await json_rpc.cancel_task(CancelTaskRequest(id=held.id))
    seen = await over_grpc.get_task(GetTaskRequest(id=held.id))
    assert seen.status.state == TaskState.TASK_STATE_CANCELED
