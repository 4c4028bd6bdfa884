"""The official ``a2a-sdk`` 1.x client against our servers, over JSON-RPC, HTTP+JSON and gRPC.

Each test starts a real server on 127.0.0.1 (Starlette under uvicorn at the root; aiohttp as
a sub-application at ``/a2a``; the same `A2AServer` also over gRPC on its own port),
discovers it with the SDK's card resolver, and drives it with the SDK's ``ClientFactory``
client for the binding under test. Assertions are on the SDK's parsed protobuf objects. The
agent is ``interop.servers.DemoAgent``. gRPC specifics (status codes, details, metadata) are
in ``test_sdk_grpc.py``.

The last tests run the same client through its v0.3 compatibility transports (chosen by the
``protocolVersion: "0.3"`` interfaces of the card), so the v0.3 dialect is exercised by the
1.x client as well as by the 0.3.x client of ``test_sdk_v0_3.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, Client, ClientFactory
from a2a.types.a2a_pb2 import (
    AgentCard,
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Role,
    SendMessageConfiguration,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import (
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

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
from interop.servers import ADAPTERS, IDENTITY, QUESTION, TOKEN, Served, serve, webhook

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

JSON_BINDINGS = ("JSONRPC", "HTTP+JSON")
BINDINGS = (*JSON_BINDINGS, "GRPC")

Connect = Callable[..., Client]


@pytest.fixture(params=ADAPTERS)
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    """A running server on the adapter under test (and over gRPC)."""
    async with serve(request.param, grpc=True) as running:
        yield running


@pytest.fixture(params=BINDINGS)
def binding(request: pytest.FixtureRequest) -> str:
    """The transport under test."""
    return str(request.param)


@pytest.fixture
async def card(served: Served) -> AgentCard:
    """The public card, as the SDK's resolver reads it."""
    async with httpx.AsyncClient() as http:
        return await A2ACardResolver(http, served.url).get_agent_card()


@pytest.fixture
async def connect(card: AgentCard, binding: str) -> AsyncIterator[Connect]:
    """Create SDK clients for the binding under test (closed at the end)."""
    async with AsyncExitStack() as stack:

        def make(
            *,
            streaming: bool = True,
            polling: bool = False,
            headers: dict[str, str] | None = None,
            agent_card: AgentCard | None = None,
        ) -> Client:
            assert not (headers and binding == "GRPC"), "HTTP headers do not reach gRPC"
            http = httpx.AsyncClient(headers=headers, timeout=10)
            stack.push_async_callback(http.aclose)
            config = client_config(binding, http, streaming=streaming, polling=polling)
            client = ClientFactory(config).create(agent_card or card)
            stack.push_async_callback(client.close)
            return check_transport(client, binding)

        yield make


# --- card discovery ------------------------------------------------------------------------


async def test_card_discovery(served: Served, card: AgentCard) -> None:
    assert card.name == "Interop agent"
    assert card.capabilities.streaming
    assert card.capabilities.push_notifications
    assert card.capabilities.extended_agent_card
    assert [skill.id for skill in card.skills] == ["echo"]
    interfaces = [
        (i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces
    ]
    # JSON-RPC at the mount root with its trailing slash, HTTP+JSON as the base URL itself;
    # gRPC (v1.0 only), published by its adapter once it listens, after those.
    assert interfaces == [
        ("JSONRPC", "1.0", served.url + "/"),
        ("HTTP+JSON", "1.0", served.url),
        ("JSONRPC", "0.3", served.url + "/"),
        ("HTTP+JSON", "0.3", served.url),
        ("GRPC", "1.0", served.grpc),
    ]


async def test_create_from_url(served: Served, binding: str) -> None:
    """The factory's own discovery picks the v1.0 interface of the binding and works."""
    async with httpx.AsyncClient(timeout=10) as http:
        config = client_config(binding, http, streaming=False)
        async with await ClientFactory(config).create_from_url(served.url) as client:
            reply = await send_one(check_transport(client, binding), request("echo hi"))
    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert texts(reply.task.artifacts[0].parts) == ["hi"]


# --- send ----------------------------------------------------------------------------------


async def test_send_blocking(connect: Connect) -> None:
    client = connect(streaming=False)
    req = request("echo hello")
    reply = await send_one(client, req)
    task = reply.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert task.id and task.context_id
    assert len(task.artifacts) == 1
    assert texts(task.artifacts[0].parts) == ["hello"]
    assert task.history[0].message_id == req.message.message_id
    assert task.history[0].role == Role.ROLE_USER
    assert task.history[0].task_id == task.id

    fetched = await client.get_task(GetTaskRequest(id=task.id))
    assert fetched.id == task.id
    assert fetched.status.state == TaskState.TASK_STATE_COMPLETED
    assert texts(fetched.artifacts[0].parts) == ["hello"]


async def test_send_message_only_reply(connect: Connect) -> None:
    for streaming in (False, True):
        reply = await collect(connect(streaming=streaming).send_message(request("release x")))
        assert len(reply) == 1
        assert reply[0].WhichOneof("payload") == "message"
        assert texts(reply[0].message.parts) == ["released x"]


async def test_send_non_blocking(connect: Connect) -> None:
    """``returnImmediately`` (the client's ``polling``) returns an open task at once."""
    client = connect(streaming=False, polling=True)
    reply = await send_one(client, request("hold"))
    task = reply.task
    assert task.status.state in OPEN_STATES
    assert await wait_for_state(client, task.id, TaskState.TASK_STATE_WORKING)
    await release(connect(streaming=False), task.id)
    done = await wait_for_state(client, task.id, TaskState.TASK_STATE_COMPLETED)
    assert texts(done.artifacts[0].parts) == ["released"]


async def test_send_to_terminal_task_is_refused(connect: Connect) -> None:
    client = connect(streaming=False)
    task = (await send_one(client, request("echo once"))).task
    with pytest.raises(UnsupportedOperationError):
        await send_one(client, request("again", task_id=task.id))


# --- stream --------------------------------------------------------------------------------


async def test_stream_with_artifact_chunks(connect: Connect) -> None:
    client = connect(streaming=True)
    events = await collect(client.send_message(request("stream 4")))
    kinds = [event.WhichOneof("payload") for event in events]
    assert kinds == ["task"] + ["artifact_update"] * 4 + ["status_update"]
    task = events[0].task
    assert task.status.state == TaskState.TASK_STATE_SUBMITTED
    chunks = [event.artifact_update for event in events[1:5]]
    assert {chunk.task_id for chunk in chunks} == {task.id}
    assert len({chunk.artifact.artifact_id for chunk in chunks}) == 1
    assert [texts(chunk.artifact.parts) for chunk in chunks] == [
        ["chunk 0"],
        ["chunk 1"],
        ["chunk 2"],
        ["chunk 3"],
    ]
    assert [chunk.append for chunk in chunks] == [False, True, True, True]
    assert [chunk.last_chunk for chunk in chunks] == [False, False, False, True]
    assert chunks[0].artifact.name == "story"
    final = events[-1].status_update
    assert final.task_id == task.id
    assert final.status.state == TaskState.TASK_STATE_COMPLETED

    stored = await client.get_task(GetTaskRequest(id=task.id))
    assert len(stored.artifacts) == 1
    assert texts(stored.artifacts[0].parts) == ["chunk 0", "chunk 1", "chunk 2", "chunk 3"]


# --- get and list --------------------------------------------------------------------------


async def test_get_and_list(connect: Connect) -> None:
    client = connect(streaming=False)
    context_id = str(uuid.uuid4())
    first = (await send_one(client, request("echo one", context_id=context_id))).task
    second = (await send_one(client, request("echo two", context_id=context_id))).task
    await send_one(client, request("echo elsewhere"))
    assert first.context_id == second.context_id == context_id

    got = await client.get_task(GetTaskRequest(id=first.id, history_length=1))
    assert got.id == first.id
    assert len(got.history) == 1

    listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
    assert [task.id for task in listed.tasks] == [second.id, first.id]  # newest first
    assert listed.total_size == 2
    assert listed.page_size == 50
    assert listed.next_page_token == ""

    page1 = await client.list_tasks(ListTasksRequest(context_id=context_id, page_size=1))
    assert [task.id for task in page1.tasks] == [second.id]
    assert page1.total_size == 2
    assert page1.next_page_token
    page2 = await client.list_tasks(
        ListTasksRequest(context_id=context_id, page_size=1, page_token=page1.next_page_token)
    )
    assert [task.id for task in page2.tasks] == [first.id]
    assert page2.next_page_token == ""

    with_artifacts = await client.list_tasks(
        ListTasksRequest(
            context_id=context_id,
            status=TaskState.TASK_STATE_COMPLETED,
            include_artifacts=True,
        )
    )
    assert sorted(texts(t.artifacts[0].parts)[0] for t in with_artifacts.tasks) == ["one", "two"]

    with pytest.raises(TaskNotFoundError):
        await client.get_task(GetTaskRequest(id="no-such-task"))


# --- cancel --------------------------------------------------------------------------------


async def test_cancel(connect: Connect) -> None:
    client = connect(streaming=False)
    task = await start_held(client)
    canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
    assert canceled.id == task.id
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    fetched = await client.get_task(GetTaskRequest(id=task.id))
    assert fetched.status.state == TaskState.TASK_STATE_CANCELED
    with pytest.raises(TaskNotCancelableError):
        await client.cancel_task(CancelTaskRequest(id=task.id))
    with pytest.raises(TaskNotFoundError):
        await client.cancel_task(CancelTaskRequest(id="no-such-task"))


# --- subscribe -----------------------------------------------------------------------------


async def test_subscribe(connect: Connect) -> None:
    client = connect(streaming=True)
    task = await start_held(connect(streaming=False))
    events: list[StreamResponse] = []
    async for event in client.subscribe(SubscribeToTaskRequest(id=task.id)):
        events.append(event)
        if len(events) == 1:
            # The subscription is open (it starts with the task snapshot): release the task.
            await release(connect(streaming=False), task.id)
    assert events[0].WhichOneof("payload") == "task"
    assert events[0].task.id == task.id
    assert events[0].task.status.state in OPEN_STATES
    rest = events[1:]
    artifacts = [e.artifact_update for e in rest if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [["released"]]
    assert rest[-1].WhichOneof("payload") == "status_update"
    assert rest[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

    # v1.0: a terminal task has nothing to subscribe to.
    with pytest.raises(UnsupportedOperationError):
        await collect(client.subscribe(SubscribeToTaskRequest(id=task.id)))


# --- push notification configs -------------------------------------------------------------


async def test_push_config_crud_and_delivery(connect: Connect) -> None:
    client = connect(streaming=False)
    async with webhook() as hook:
        task = await start_held(client)
        created = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(
                task_id=task.id,
                id="cfg-1",
                url=hook.url,
                token="tok-1",
                authentication=AuthenticationInfo(scheme="Bearer", credentials="s3cret"),
            )
        )
        # The secrets are omitted from every reply (the webhook gets them).
        assert (created.task_id, created.id, created.url, created.token) == (
            task.id,
            "cfg-1",
            hook.url,
            "",
        )
        assert created.authentication.scheme == "Bearer"
        assert created.authentication.credentials == ""
        other = await client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task.id, url=hook.url + "?other")
        )
        assert other.id  # assigned by the server
        assert other.id != "cfg-1"

        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task.id, id="cfg-1")
        )
        assert got == created
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert sorted(c.id for c in listed.configs) == sorted(["cfg-1", other.id])

        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=other.id)
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert [c.id for c in listed.configs] == ["cfg-1"]
        with pytest.raises(TaskNotFoundError):
            await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task.id, id=other.id)
            )
        with pytest.raises(TaskNotFoundError):
            await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id="no-such-task")
            )

        # The remaining webhook hears the task finish (v1.0: a StreamResponse body); the
        # deleted one does not.
        await release(client, task.id)
        delivery = await hook.wait_for(lambda d: completed_update(d.body))
        assert delivery.path == "/hook"
        assert delivery.body["statusUpdate"]["taskId"] == task.id
        assert delivery.headers["x-a2a-notification-token"] == "tok-1"
        assert delivery.headers["authorization"] == "Bearer s3cret"
        assert not [d for d in hook.received if d.path != "/hook" and completed_update(d.body)]


def completed_update(body: dict[str, Any]) -> bool:
    """A v1.0 push body announcing completion."""
    state = body.get("statusUpdate", {}).get("status", {}).get("state")
    return bool(state == "TASK_STATE_COMPLETED")


async def test_push_config_in_send_configuration(connect: Connect) -> None:
    """A webhook given with the message is registered for the new task."""
    client = connect(streaming=False)
    async with webhook() as hook:
        configuration = SendMessageConfiguration(
            return_immediately=True,
            task_push_notification_config=TaskPushNotificationConfig(url=hook.url, token="t"),
        )
        reply = await send_one(client, request("hold", configuration=configuration))
        task = reply.task
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        # The token is a secret: omitted from the list (the delivery below carries it).
        assert [(c.task_id, c.url, c.token) for c in listed.configs] == [(task.id, hook.url, "")]
        await release(client, task.id)
        delivery = await hook.wait_for(lambda d: completed_update(d.body))
        assert delivery.body["statusUpdate"]["taskId"] == task.id
        assert delivery.headers["x-a2a-notification-token"] == "t"


# --- multi-turn ----------------------------------------------------------------------------


async def test_multi_turn(connect: Connect) -> None:
    client = connect(streaming=False)
    first = (await send_one(client, request("ask"))).task
    assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert texts(first.status.message.parts) == [QUESTION]
    assert first.status.message.role == Role.ROLE_AGENT

    reply = await send_one(client, request("Ada", task_id=first.id, context_id=first.context_id))
    done = reply.task
    assert done.id == first.id
    assert done.context_id == first.context_id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert texts(done.artifacts[-1].parts) == ["Hello, Ada!"]
    user_texts = [texts(m.parts) for m in done.history if m.role == Role.ROLE_USER]
    assert user_texts == [["ask"], ["Ada"]]


async def test_multi_turn_streaming(connect: Connect) -> None:
    client = connect(streaming=True)
    events = await collect(client.send_message(request("ask")))
    task = events[0].task
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert texts(events[-1].status_update.status.message.parts) == [QUESTION]

    events = await collect(client.send_message(request("Grace", task_id=task.id)))
    assert events[0].WhichOneof("payload") == "task"
    assert events[0].task.id == task.id
    # The follow-up resumes the task: the first frame is the task, WORKING, with the message.
    assert events[0].task.status.state == TaskState.TASK_STATE_WORKING
    assert texts(events[0].task.history[-1].parts) == ["Grace"]
    artifacts = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [texts(a.artifact.parts) for a in artifacts] == [["Hello, Grace!"]]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


# --- extended card -------------------------------------------------------------------------


# JSON only: these servers authenticate the bearer token in HTTP middleware (ASGI, aiohttp),
# which gRPC calls do not pass through.
@pytest.mark.parametrize("binding", JSON_BINDINGS)
async def test_extended_card(served: Served, connect: Connect) -> None:
    client = connect(streaming=False, headers={"Authorization": f"Bearer {TOKEN}"})
    extended = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert extended.name == f"Interop agent for {IDENTITY}"
    assert [skill.id for skill in extended.skills] == ["echo", "secret"]
    assert [(i.protocol_binding, i.url) for i in extended.supported_interfaces[:2]] == [
        ("JSONRPC", served.url + "/"),
        ("HTTP+JSON", served.url),
    ]

    anonymous = connect(streaming=False)
    with pytest.raises(UnsupportedOperationError):
        await anonymous.get_extended_agent_card(GetExtendedAgentCardRequest())


# --- the v0.3 dialect through the 1.x client's compatibility transports --------------------


def v0_3_only(card: AgentCard) -> AgentCard:
    """The card with only its v0.3 interfaces (the 1.x client then speaks v0.3)."""
    legacy = AgentCard()
    legacy.CopyFrom(card)
    del legacy.supported_interfaces[:]
    legacy.supported_interfaces.extend(
        i for i in card.supported_interfaces if i.protocol_version == "0.3"
    )
    return legacy


# JSON only: gRPC serves v1.0 alone (the card has no v0.3 gRPC interface).
@pytest.mark.parametrize("binding", JSON_BINDINGS)
async def test_v0_3_dialect_send_stream_get_cancel(
    connect: Connect, card: AgentCard, binding: str
) -> None:
    legacy = v0_3_only(card)
    blocking = connect(streaming=False, agent_card=legacy)
    task = (await send_one(blocking, request("echo old"))).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert texts(task.artifacts[0].parts) == ["old"]
    assert (await blocking.get_task(GetTaskRequest(id=task.id))).id == task.id

    events = await collect(connect(agent_card=legacy).send_message(request("stream 2")))
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [texts(c.artifact.parts) for c in chunks] == [["chunk 0"], ["chunk 1"]]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED

    held = await start_held(blocking)
    canceled = await blocking.cancel_task(CancelTaskRequest(id=held.id))
    assert canceled.status.state == TaskState.TASK_STATE_CANCELED

    # Tolerated SDK quirk: the compat REST transport maps a v0.3 REST error to its class only
    # from a top-level "type" member (its own convention; the v0.3 spec leaves REST error
    # bodies open and we send the AIP-193 body), so a 404 becomes its generic
    # "resource not found". Over JSON-RPC the error code maps exactly.
    expected = TaskNotFoundError if binding == "JSONRPC" else MethodNotFoundError
    with pytest.raises(expected):
        await blocking.get_task(GetTaskRequest(id="no-such-task"))
