"""A2AClient against our own server over real HTTP: both adapters, both bindings, both dialects.

The server is `interop.servers.serve`'s demo agent (``echo``, ``stream N``, ``ask``, ``hold``,
``release``), with the v0.3 card fields on so that a v0.3 client finds its interfaces too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from a2a_core.client import A2AClient, AgentError, NotInDialectError
from a2a_core.errors import TaskNotCancelableError, TaskNotFoundError
from a2a_core.types import Message, TaskPushNotificationConfig, TaskState
from interop.servers import ADAPTERS, QUESTION, TOKEN, Served, serve

pytestmark = pytest.mark.anyio

INTERFACES = [
    pytest.param((binding, version), id=f"{binding}-{version}")
    for binding in ("JSONRPC", "HTTP+JSON")
    for version in ("1.0", "0.3")
]


@pytest.fixture(params=ADAPTERS)
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    async with serve(request.param, legacy_card_fields=True) as running:
        yield running


@pytest.fixture(params=INTERFACES)
async def client(served: Served, request: pytest.FixtureRequest) -> AsyncIterator[A2AClient]:
    binding, version = request.param
    async with await A2AClient.connect(
        served.url, bindings=[binding], versions=[version], timeout=10
    ) as connected:
        assert connected.endpoint.card_binding == binding
        assert connected.endpoint.dialect == version
        yield connected


async def test_send_returns_the_task_the_agent_made(client: A2AClient) -> None:
    task = await client.send("echo hello")
    assert not isinstance(task, Message)
    assert task.status.state is TaskState.COMPLETED
    assert [p.text for a in task.artifacts for p in a.parts] == ["hello"]
    again = await client.get_task(task.id, history_length=1)
    assert again.id == task.id
    assert len(again.history) == 1


async def test_a_message_reply_is_a_message(client: A2AClient) -> None:
    reply = await client.send("release nothing")
    assert isinstance(reply, Message)
    assert reply.parts[0].text == "released nothing"


async def test_a_stream_yields_every_event_once_with_its_id(client: A2AClient) -> None:
    received = [r async for r in client.stream("stream 4")]
    events = [r.event for r in received]
    assert events[0].task is not None
    chunks = [e.artifact_update.artifact.parts[0].text for e in events if e.artifact_update]
    assert chunks == ["chunk 0", "chunk 1", "chunk 2", "chunk 3"]
    last = events[-1].status_update
    assert last is not None and last.status.state is TaskState.COMPLETED
    assert [r.last for r in received] == [False] * (len(received) - 1) + [True]
    assert [r.event_id for r in received] == [str(i) for i in range(1, len(received) + 1)]


async def test_multi_turn(client: A2AClient) -> None:
    asked = await client.send("ask")
    assert not isinstance(asked, Message)
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert asked.status.message is not None and asked.status.message.parts[0].text == QUESTION
    answered = await client.send("Ada", task_id=asked.id, context_id=asked.context_id)
    assert not isinstance(answered, Message)
    assert answered.status.state is TaskState.COMPLETED
    assert answered.artifacts[-1].parts[0].text == "Hello, Ada!"


async def test_subscribe_follows_a_task_and_replays_after_an_id(client: A2AClient) -> None:
    held = await client.send("hold", return_immediately=True)
    assert not isinstance(held, Message)
    seen = []
    async with anyio.create_task_group() as tg:

        async def follow() -> None:
            async for received in client.subscribe(held.id):
                seen.append(received)

        tg.start_soon(follow)
        with anyio.fail_after(10):
            while not seen:
                await anyio.sleep(0.01)
        await client.send(f"release {held.id}")
    final = seen[-1].event
    assert (final.task or final.status_update) is not None
    state = final.task.status.state if final.task else final.status_update.status.state  # type: ignore[union-attr]
    assert state is TaskState.COMPLETED
    # Replay: everything after the first event, for a finished task, exactly once.
    first_id = seen[0].event_id
    assert first_id is not None
    replayed = [r async for r in client.subscribe(held.id, last_event_id=first_id)]
    assert [r.event_id for r in replayed] == [r.event_id for r in seen[1:]]
    assert [r.event for r in replayed] == [r.event for r in seen[1:]]
    assert replayed[-1].last


async def test_cancel(client: A2AClient) -> None:
    held = await client.send("hold", return_immediately=True)
    assert not isinstance(held, Message)
    canceled = await client.cancel_task(held.id)
    assert canceled.status.state is TaskState.CANCELED
    with pytest.raises(AgentError) as caught:
        await client.cancel_task(held.id)
    assert caught.value.error_type is TaskNotCancelableError


async def test_unknown_task_is_task_not_found(client: A2AClient) -> None:
    with pytest.raises(AgentError) as caught:
        await client.get_task("no-such-task")
    error = caught.value
    assert error.error_type is TaskNotFoundError
    assert (error.code, error.reason) == (-32001, "TASK_NOT_FOUND")
    expected_status = 200 if client.endpoint.binding == "jsonrpc" else 404
    assert error.http_status == expected_status


async def test_list_tasks_pages_through_every_task(client: A2AClient) -> None:
    made = set()
    for i in range(5):
        task = await client.send(f"echo {i}")
        assert not isinstance(task, Message)
        made.add(task.id)
    if client.endpoint.dialect == "0.3":
        with pytest.raises(NotInDialectError):
            await client.list_tasks()
        return
    page = await client.list_tasks(page_size=2)
    assert len(page.tasks) == 2 and page.next_page_token
    listed = {task.id async for task in client.iter_tasks(page_size=2)}
    assert made <= listed


async def test_push_config_crud(client: A2AClient, served: Served) -> None:
    held = await client.send("hold", return_immediately=True)
    assert not isinstance(held, Message)
    hook = "http://127.0.0.1:9/hook"
    stored = await client.create_push_config(
        TaskPushNotificationConfig(task_id=held.id, id="c1", url=hook, token="t")
    )
    assert (stored.task_id, stored.id, stored.url) == (held.id, "c1", hook)
    fetched = await client.get_push_config(held.id, "c1")
    assert fetched.url == hook
    listed = await client.list_push_configs(held.id)
    assert [c.id for c in listed.configs] == ["c1"]
    await client.delete_push_config(held.id, "c1")
    assert (await client.list_push_configs(held.id)).configs == []
    await client.cancel_task(held.id)


async def test_extended_card_with_credentials(served: Served) -> None:
    from a2a_core.client import Credentials

    async with await A2AClient.connect(
        served.url, extended_card=True, credentials=Credentials(bearer_token=TOKEN)
    ) as client:
        assert client.card is not None
        assert client.card.name.startswith("Interop agent for ")
        assert {skill.id for skill in client.card.skills} == {"echo", "secret"}
