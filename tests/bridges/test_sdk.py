"""`a2a_bridges.sdk.from_executor`: a2a-sdk 1.x executors, written against the SDK's public
API (``TaskUpdater``, its helpers), served by our server on both adapters and driven by the
official client over real HTTP."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import pytest
from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

from a2a_bridges.sdk import CALL_STATE_KEY, card, card_from_sdk, from_executor
from a2a_core.server import TaskContext
from a2a_core.types import AgentCapabilities, AgentCard
from bridges.harness import TERMINAL, artifact_text, joined, served, status_text

pytestmark = pytest.mark.anyio

CARD = card("Echo", "Says your words back, one at a time.")


class Echo(AgentExecutor):
    """The SDK's usual shape: announce the task, work, stream the words as chunks of one
    artifact (``append``/``last_chunk``), complete."""

    def __init__(self) -> None:
        self.contexts: list[RequestContext] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.contexts.append(context)
        assert context.message is not None
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.start_work()
        words = context.get_user_input().split()
        for i, word in enumerate(words):
            await updater.add_artifact(
                [Part(text=word if i == 0 else " " + word)],
                artifact_id="reply",
                name="reply",
                append=i > 0,
                last_chunk=i == len(words) - 1,
            )
            await asyncio.sleep(0.01)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_a_blocking_send_returns_the_joined_text(adapter: str) -> None:
    echo = Echo()
    async with served(adapter, from_executor(echo), CARD, streaming=False) as peer:
        reply = await peer.send("the quick brown fox")
        assert reply.HasField("task")
        task = reply.task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        assert len(task.artifacts) == 1
        assert task.artifacts[0].name == "reply"
        assert artifact_text(task) == "the quick brown fox"
        # The announced Task did not add a second copy of the user's message.
        assert [m.role for m in task.history] == [Role.ROLE_USER]


async def test_a_stream_carries_the_chunks_live_and_in_order(adapter: str) -> None:
    async with served(adapter, from_executor(Echo()), CARD) as peer:
        events = [e async for e in peer.stream("one two three four")]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task"
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [joined(c.artifact.parts) for c in chunks] == ["one", " two", " three", " four"]
    assert [c.append for c in chunks] == [False, True, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, False, True]
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states == [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
    assert kinds[-1] == "status_update"


async def test_the_request_context_is_the_one_the_sdk_builds(adapter: str) -> None:
    echo = Echo()
    async with served(adapter, from_executor(echo), CARD, streaming=False) as peer:
        first = (await peer.send("hello there")).task
        follow_up = (await peer.send("again", task_id="", context_id=first.context_id)).task
    new, later = echo.contexts
    assert new.get_user_input() == "hello there"
    assert new.task_id == first.id
    assert new.context_id == first.context_id
    assert new.message is not None
    assert new.message.task_id == first.id  # both ids set on the user's message
    assert new.message.context_id == first.context_id
    assert new.current_task is None
    assert new.call_context.user.is_authenticated is False
    assert isinstance(new.call_context.state[CALL_STATE_KEY], TaskContext)
    assert later.context_id == first.context_id
    assert later.task_id == follow_up.id != first.id


class Question(AgentExecutor):
    """Asks for a name, then greets: input-required and its follow-up in the same task."""

    def __init__(self) -> None:
        self.current: list[Task | None] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.current.append(context.current_task)
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:
            await updater.requires_input(
                updater.new_agent_message([Part(text="What is your name?")])
            )
            return
        await updater.add_artifact([Part(text=f"Hello, {context.get_user_input()}!")])
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_input_required_round_trips(adapter: str) -> None:
    question = Question()
    async with served(adapter, from_executor(question), CARD, streaming=False) as peer:
        asked = (await peer.send("hi")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert status_text(asked) == "What is your name?"
        done = (await peer.send("Ada", task_id=asked.id, context_id=asked.context_id)).task
    assert done.id == asked.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(done) == "Hello, Ada!"
    first, second = question.current
    assert first is None
    assert second is not None
    assert second.id == asked.id  # the stored task on a follow-up
    # As the server holds it: the question asked, then the answer, recorded.
    assert [joined(m.parts) for m in second.history] == ["hi", "What is your name?", "Ada"]


class Reply(AgentExecutor):
    """A message-only reply: one Message, no task."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(
            new_text_message(f"you said: {context.get_user_input()}", context_id=context.context_id)
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_a_lone_message_is_a_message_only_reply(adapter: str) -> None:
    async with served(adapter, from_executor(Reply()), CARD, streaming=False) as peer:
        reply = await peer.send("ping")
    assert reply.HasField("message")
    assert reply.message.role == Role.ROLE_AGENT
    assert joined(reply.message.parts) == "you said: ping"
    assert reply.message.task_id == ""  # no task was created


class Slow(AgentExecutor):
    """Produces a chunk every 50 ms until stopped; counts what it produced and whether
    ``cancel`` was called and ``execute`` was cancelled."""

    def __init__(self) -> None:
        self.produced = 0
        self.cancel_called = anyio.Event()
        self.execute_cancelled = False
        self.started = anyio.Event()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.start_work()
        try:
            while True:
                await updater.add_artifact(
                    [Part(text=f"{self.produced} ")], artifact_id="out", append=self.produced > 0
                )
                self.produced += 1
                self.started.set()
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            self.execute_cancelled = True
            raise

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # What executors usually do: report CANCELED, and do not stop execute themselves.
        assert context.task_id
        await TaskUpdater(event_queue, context.task_id, context.context_id or "").cancel()
        self.cancel_called.set()


async def test_cancel_stops_the_executor_itself(adapter: str) -> None:
    slow = Slow()
    async with served(adapter, from_executor(slow), CARD) as peer:
        events: list[StreamResponse] = []

        async def follow() -> None:
            async for event in peer.stream("go"):
                events.append(event)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(follow)
            with anyio.fail_after(10):
                await slow.started.wait()
                while not events:
                    await anyio.sleep(0.01)
            task_id = events[0].task.id
            canceled = await peer.cancel(task_id)
            assert canceled.status.state == TaskState.TASK_STATE_CANCELED
            with anyio.fail_after(10):
                await slow.cancel_called.wait()
            produced = slow.produced
            await anyio.sleep(1.2)
            assert slow.produced == produced  # nothing more a second after the cancel
            assert slow.execute_cancelled
        # The open stream ended with the task's status.
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        stored = await peer.get(task_id)
    assert stored.status.state == TaskState.TASK_STATE_CANCELED


class Crash(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
        await updater.start_work()
        raise RuntimeError("secret internal detail")

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_an_executor_that_raises_fails_the_task_cleanly(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "a2a_core.server")
    async with served(adapter, from_executor(Crash()), CARD, streaming=False) as peer:
        task = (await peer.send("boom")).task
        assert task.status.state == TaskState.TASK_STATE_FAILED
        assert "secret" not in status_text(task)
        assert status_text(task)  # it says that it failed
        assert task.status.state in TERMINAL
    assert "secret internal detail" in caplog.text  # the details went to the log


class SelfCancelling(AgentExecutor):
    """Lets a cancellation of its own making escape (a cancelled inner task awaited)."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").start_work()
        inner = asyncio.get_running_loop().create_task(asyncio.sleep(30))
        inner.cancel()
        await inner

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise AssertionError("no one cancelled the task")


async def test_an_executor_whose_own_cancellation_escapes_fails_the_task(adapter: str) -> None:
    async with served(adapter, from_executor(SelfCancelling()), CARD, streaming=False) as peer:
        with anyio.fail_after(10):
            task = (await peer.send("x")).task
            stored = await peer.get(task.id)
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert stored.status.state == TaskState.TASK_STATE_FAILED


class Snapshot(AgentExecutor):
    """Reports whole Task objects: one announcing it, one with an artifact and the end."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        task = new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        done = Task()
        done.CopyFrom(task)
        done.artifacts.append(Artifact(artifact_id="a1", parts=[Part(text="all at once")]))
        done.status.CopyFrom(TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
        await event_queue.enqueue_event(done)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_whole_task_events_are_taken_once(adapter: str) -> None:
    async with served(adapter, from_executor(Snapshot()), CARD, streaming=False) as peer:
        task = (await peer.send("snap")).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.artifact_id for a in task.artifacts] == ["a1"]
    assert artifact_text(task) == "all at once"
    assert len(task.history) == 1


class Invalid(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        bad: Any = TaskStatusUpdateEvent(
            task_id=context.task_id, status=TaskStatus(state=TaskState.TASK_STATE_WORKING)
        )
        await event_queue.enqueue_event(bad)
        # An artifact with no parts is not a valid artifact.
        await event_queue.enqueue_event(
            TaskArtifactUpdateEvent(task_id=context.task_id, artifact=Artifact(artifact_id="x"))
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_an_invalid_event_fails_the_task(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, "a2a_core.server")
    async with served(adapter, from_executor(Invalid()), CARD, streaming=False) as peer:
        task = (await peer.send("x")).task
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert "invalid Artifact" in caplog.text


def test_card_defaults_and_overrides() -> None:
    made = card("Echo", "Says it back.", version="2.1.0", documentation_url="https://x.test")
    assert made.name == "Echo"
    assert made.description == "Says it back."
    assert made.capabilities.streaming is True
    assert [s.id for s in made.skills] == ["echo"]
    assert made.version == "2.1.0"
    assert made.documentation_url == "https://x.test"
    with pytest.raises(TypeError, match="nope"):
        card("Echo", "x", nope=1)


def test_card_from_an_sdk_card() -> None:
    from a2a.types.a2a_pb2 import AgentCapabilities as SdkCapabilities
    from a2a.types.a2a_pb2 import AgentCard as SdkCard
    from a2a.types.a2a_pb2 import AgentInterface, AgentSkill

    sdk_card = SdkCard(
        name="Planner",
        description="Plans trips.",
        version="0.3.0",
        capabilities=SdkCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="plan", name="Plan", description="Plans", tags=["travel"])],
        supported_interfaces=[AgentInterface(url="http://elsewhere", protocol_binding="JSONRPC")],
    )
    ours = card_from_sdk(sdk_card, capabilities=AgentCapabilities(streaming=False))
    assert isinstance(ours, AgentCard)
    assert (ours.name, ours.version, ours.skills[0].tags) == ("Planner", "0.3.0", ["travel"])
    assert ours.supported_interfaces == []  # the server publishes its own
    assert ours.capabilities.streaming is False


async def test_a_message_within_a_task_is_a_working_update(adapter: str) -> None:
    class Chatty(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
            await event_queue.enqueue_event(
                Message(message_id="m1", role=Role.ROLE_AGENT, parts=[Part(text="thinking")])
            )
            await TaskUpdater(
                event_queue, context.task_id or "", context.context_id or ""
            ).complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    async with served(adapter, from_executor(Chatty()), CARD) as peer:
        events = [e async for e in peer.stream("x")]
    working = [e.status_update for e in events if e.HasField("status_update")]
    assert working[0].status.state == TaskState.TASK_STATE_WORKING
    assert joined(working[0].status.message.parts) == "thinking"
    assert working[-1].status.state == TaskState.TASK_STATE_COMPLETED


async def test_the_call_context_carries_the_caller_the_tenant_and_the_extensions() -> None:
    from a2a_core.server import A2AServer
    from helpers.a2a_client import Client, user_message

    echo = Echo()
    uri = "https://example.com/ext/v1"
    async with A2AServer(from_executor(echo), card=CARD) as server:
        client = Client(server, identity={"sub": "alice"})
        params = {"message": user_message("hi"), "tenant": "acme", "metadata": {"k": [1, "v"]}}
        result = await client.result("SendMessage", params, headers={"a2a-extensions": uri})
    assert result["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    (context,) = echo.contexts
    user = context.call_context.user
    assert user.is_authenticated is True
    assert user.user_name == "alice"
    assert context.call_context.requested_extensions == {uri}
    assert context.requested_extensions == {uri}
    assert context.tenant == "acme"
    assert context.metadata == {"k": [1, "v"]}


async def test_chunks_reach_the_client_while_the_executor_runs(adapter: str) -> None:
    seen_first = anyio.Event()

    class Paced(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            await updater.add_artifact([Part(text="first")], artifact_id="a")
            # Goes on only once the client has the first chunk: buffered chunks would hang.
            with anyio.fail_after(10):
                await seen_first.wait()
            await updater.add_artifact([Part(text=" second")], artifact_id="a", append=True)
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    async with served(adapter, from_executor(Paced()), CARD) as peer:
        texts = []
        async for event in peer.stream("go"):
            if event.HasField("artifact_update"):
                texts.append(joined(event.artifact_update.artifact.parts))
                seen_first.set()
    assert texts == ["first", " second"]


async def test_an_event_enqueued_after_the_run_is_dropped(
    adapter: str, caplog: pytest.LogCaptureFixture
) -> None:
    late_sent = anyio.Event()

    class Leaves(AgentExecutor):
        """Leaves a task behind that enqueues once execute has returned."""

        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")

            async def later() -> None:
                await asyncio.sleep(0.2)
                await updater.add_artifact([Part(text="late")])
                late_sent.set()

            self.left = asyncio.get_running_loop().create_task(later())
            await updater.requires_input(updater.new_agent_message([Part(text="more?")]))

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    caplog.set_level(logging.WARNING, "a2a_bridges.sdk")
    async with served(adapter, from_executor(Leaves()), CARD, streaming=False) as peer:
        task = (await peer.send("x")).task
        with anyio.fail_after(10):
            await late_sent.wait()
        stored = await peer.get(task.id)
    assert stored.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert list(stored.artifacts) == []
    assert "after its run ended: dropped" in caplog.text


async def test_status_metadata_reaches_the_event_and_the_task(adapter: str) -> None:
    class Tagged(AgentExecutor):
        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            assert context.message is not None
            announced = new_task_from_user_message(context.message)
            announced.metadata.update({"app": "tagged"})
            await event_queue.enqueue_event(announced)
            updater = TaskUpdater(event_queue, context.task_id or "", context.context_id or "")
            await updater.update_status(TaskState.TASK_STATE_WORKING, metadata={"step": 1})
            await updater.complete()

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            raise NotImplementedError

    async with served(adapter, from_executor(Tagged()), CARD) as peer:
        events = [e async for e in peer.stream("x")]
        stored = await peer.get(events[0].task.id)
    working = next(e.status_update for e in events if e.HasField("status_update"))
    # The announced task's metadata went with the executor's next status report.
    assert dict(working.metadata) == {"app": "tagged", "step": 1}
    assert dict(stored.metadata) == {"app": "tagged", "step": 1}


class Forger(AgentExecutor):
    """Writes another caller's task and context ids into every message it enqueues (a
    copy-paste slip, or a hostile executor): the ids are the task's own once written."""

    def __init__(self, reply_only: bool) -> None:
        self.reply_only = reply_only

    def message(self, text: str) -> Message:
        return Message(
            message_id=f"m-{text}",
            role=Role.ROLE_AGENT,
            parts=[Part(text=text)],
            task_id="alice-task",
            context_id="alice-context",
        )

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if self.reply_only:
            await event_queue.enqueue_event(self.message("reply"))
            return
        assert context.message is not None
        await event_queue.enqueue_event(new_task_from_user_message(context.message))
        await event_queue.enqueue_event(self.message("thinking"))
        done = TaskStatusUpdateEvent(
            task_id=context.task_id,
            context_id=context.context_id,
            status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=self.message("done")),
        )
        await event_queue.enqueue_event(done)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


async def test_an_executors_messages_carry_only_their_own_tasks_ids(adapter: str) -> None:
    async with served(adapter, from_executor(Forger(reply_only=False)), CARD) as peer:
        events = [e async for e in peer.stream("x")]
        task_id = events[0].task.id
        task = await peer.get(task_id)
    messages = [e.status_update.status.message for e in events if e.HasField("status_update")]
    messages += [task.status.message, *task.history]
    said = [m for m in messages if m.role == Role.ROLE_AGENT]
    assert {joined(m.parts) for m in said} >= {"thinking", "done"}
    assert {(m.task_id, m.context_id) for m in said} == {(task_id, task.context_id)}


async def test_a_message_only_reply_names_no_other_task(adapter: str) -> None:
    async with served(adapter, from_executor(Forger(reply_only=True)), CARD) as peer:
        reply = await peer.send("ping", context_id="bob-context")
    assert joined(reply.message.parts) == "reply"
    assert (reply.message.task_id, reply.message.context_id) == ("", "bob-context")
