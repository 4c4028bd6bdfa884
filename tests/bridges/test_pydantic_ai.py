"""`a2a_bridges.pydantic_ai`: a pydantic-ai ``Agent`` (on ``TestModel`` and ``FunctionModel``,
no network) served by our server on both adapters and driven by the official client over
real HTTP; the history store's bounds directly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anyio
import pytest
from a2a.types.a2a_pb2 import StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel
from pydantic_ai import Agent, CallDeferred, DeferredToolRequests, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import test as pai_test
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from a2a_bridges._pydantic_ai_history import dump_history, load_history
from a2a_bridges.pydantic_ai import InMemoryConversationStore, card, from_agent
from a2a_core.server import TaskContext
from bridges.harness import TERMINAL, artifact_text, served, status_text

pytestmark = pytest.mark.anyio


def prompts(messages: list[ModelMessage]) -> list[str]:
    """The user prompts in ``messages``, in order."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return [part for part in last.parts if isinstance(part, ToolReturnPart)]


def words_agent(*words: str) -> Agent[None, str]:
    """An agent whose model streams ``words`` as its text."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for word in words:
            yield word

    return Agent(FunctionModel(stream_function=stream), name="words")


# --- text ------------------------------------------------------------------------------


async def test_a_blocking_send_returns_the_joined_text(adapter: str) -> None:
    agent = words_agent("Hello", ", ", "wor", "ld")
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        reply = await peer.send("hi")
    assert reply.HasField("task")
    task = reply.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task) == "Hello, world"
    assert len(task.artifacts) == 1


async def test_a_stream_carries_the_chunks_live_in_order_then_completes(adapter: str) -> None:
    gate = asyncio.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "one"
        yield " two"
        await gate.wait()  # the model is busy: what was produced must reach the client now
        yield " three"
        yield " four"

    agent = Agent(FunctionModel(stream_function=stream), name="live")
    events: list[StreamResponse] = []
    async with served(adapter, from_agent(agent), card(agent)) as peer:
        with anyio.fail_after(10):
            async for event in peer.stream("count"):
                events.append(event)
                if event.HasField("artifact_update") and not gate.is_set():
                    # A chunk arrived while the model waits for the gate: streamed live.
                    assert event.artifact_update.artifact.parts[0].text == "one"
                    gate.set()
    assert gate.is_set()
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert ["".join(p.text for p in c.artifact.parts) for c in chunks] == [
        "one",
        " two",
        " three",
        " four",
    ]
    assert [c.append for c in chunks] == [False, True, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, False, True]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert all(part.text for c in chunks for part in c.artifact.parts)  # no empty parts
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    assert states[-1] == TaskState.TASK_STATE_COMPLETED
    assert events[-1].HasField("status_update")


async def test_the_text_of_each_model_response_is_separated(adapter: str) -> None:
    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if tool_returns(messages):
            yield "It is "
            yield "sunny."
        else:
            yield "Let me look."
            yield {1: DeltaToolCall(name="weather", json_args="{}", tool_call_id="w1")}

    agent = Agent(FunctionModel(stream_function=stream), name="weather")

    @agent.tool_plain
    def weather() -> str:
        """The weather."""
        return "sunny"

    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        reply = await peer.send("weather?")
    assert reply.task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(reply.task) == "Let me look.\n\nIt is sunny."


async def test_structured_output_is_a_data_artifact(adapter: str) -> None:
    class City(BaseModel):
        name: str
        population: int

    agent = Agent(
        pai_test.TestModel(custom_output_args={"name": "Paris", "population": 2}),
        output_type=City,
        name="cities",
    )
    assert card(agent).default_output_modes == ["text/plain", "application/json"]
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        reply = await peer.send("a city")
    task = reply.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    parts = [part for artifact in task.artifacts for part in artifact.parts]
    data = [MessageToDict(part.data) for part in parts if part.HasField("data")]
    assert data == [{"name": "Paris", "population": 2}]


# --- history ---------------------------------------------------------------------------


async def test_a_follow_up_in_the_same_context_sees_the_earlier_turns(adapter: str) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "seen: " + " | ".join(prompts(messages))

    agent = Agent(FunctionModel(stream_function=stream), name="memory")
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        first = (await peer.send("my name is Ada")).task
        assert artifact_text(first) == "seen: my name is Ada"
        second = (await peer.send("what is my name?", context_id=first.context_id)).task
        assert second.id != first.id
        assert artifact_text(second) == "seen: my name is Ada | what is my name?"
        other = (await peer.send("who am I?")).task
        assert other.context_id != first.context_id
        assert artifact_text(other) == "seen: who am I?"


async def test_deps_are_made_from_the_task_context(adapter: str) -> None:
    agent = Agent(pai_test.TestModel(), deps_type=str, name="deps")

    @agent.tool
    def whoami(ctx: RunContext[str]) -> str:
        """Who is asking."""
        return ctx.deps

    bridged = from_agent(agent, deps=lambda ctx: f"context {ctx.context_id}")
    async with served(adapter, bridged, card(agent), streaming=False) as peer:
        task = (await peer.send("who?")).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert f"context {task.context_id}" in artifact_text(task)


async def test_async_deps_and_a_custom_conversation_key(adapter: str) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield " | ".join(prompts(messages))

    agent = Agent(FunctionModel(stream_function=stream), name="shared")
    made: list[str] = []

    async def deps(ctx: TaskContext) -> None:
        made.append(ctx.text)

    # Every context keyed alike: one conversation for all.
    bridged = from_agent(agent, deps=deps, conversation_key=lambda ctx: "everyone")
    async with served(adapter, bridged, card(agent), streaming=False) as peer:
        first = (await peer.send("one")).task
        second = (await peer.send("two")).task
    assert first.context_id != second.context_id
    assert artifact_text(second) == "one | two"
    assert made == ["one", "two"]


# --- input required --------------------------------------------------------------------


def deleting_agent(deleted: list[str]) -> Agent[None, str]:
    """The model asks to delete a file (a tool that needs approval), then says what came of it."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if returns := tool_returns(messages):
            yield f"outcome: {returns[0].content}"
        else:
            yield {
                0: DeltaToolCall(name="delete", json_args='{"path": "/tmp/x"}', tool_call_id="d1")
            }

    agent = Agent(FunctionModel(stream_function=stream), name="files")

    @agent.tool_plain(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    return agent


async def test_an_approval_is_asked_and_the_run_resumes_on_yes(adapter: str) -> None:
    deleted: list[str] = []
    agent = deleting_agent(deleted)
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        asked = (await peer.send("delete /tmp/x")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        question = status_text(asked)
        assert "delete" in question
        assert "/tmp/x" in question
        assert "yes" in question
        data = [MessageToDict(p.data) for p in asked.status.message.parts if p.HasField("data")]
        assert data == [
            {
                "tool_name": "delete",
                "tool_call_id": "d1",
                "args": {"path": "/tmp/x"},
                "kind": "approval",
            }
        ]
        assert deleted == []
        done = (await peer.send("Yes", task_id=asked.id, context_id=asked.context_id)).task
    assert done.id == asked.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert deleted == ["/tmp/x"]
    assert artifact_text(done) == "outcome: deleted /tmp/x"


async def test_a_stream_ends_input_required_and_a_streamed_answer_completes(
    adapter: str,
) -> None:
    deleted: list[str] = []
    agent = deleting_agent(deleted)
    async with served(adapter, from_agent(agent), card(agent)) as peer:
        with anyio.fail_after(10):
            asked = [e async for e in peer.stream("delete /tmp/x")]
        last = asked[-1].status_update
        assert last.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert "Reply yes" in "".join(p.text for p in last.status.message.parts)
        with anyio.fail_after(10):
            answered = [
                e async for e in peer.stream("y", task_id=last.task_id, context_id=last.context_id)
            ]
    chunks = [e.artifact_update for e in answered if e.HasField("artifact_update")]
    assert "".join(p.text for c in chunks for p in c.artifact.parts) == "outcome: deleted /tmp/x"
    assert chunks[-1].last_chunk
    assert answered[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    assert deleted == ["/tmp/x"]


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("No.", "The tool call was denied."),
        ("no way", "The user denied this tool call, saying: no way"),
    ],
)
async def test_anything_but_yes_denies_the_tool_call(
    adapter: str, answer: str, outcome: str
) -> None:
    deleted: list[str] = []
    agent = deleting_agent(deleted)
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        asked = (await peer.send("delete /tmp/x")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        done = (await peer.send(answer, task_id=asked.id, context_id=asked.context_id)).task
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert deleted == []
    # The model is told the call was denied (and why, when the user said more than no).
    assert artifact_text(done) == f"outcome: {outcome}"


async def test_a_deferred_tool_takes_the_next_message_as_its_result(adapter: str) -> None:
    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if returns := tool_returns(messages):
            yield f"the manager said {returns[0].content}; seen: {prompts(messages)}"
        elif prompts(messages)[-1] == "and now?":
            yield f"seen: {prompts(messages)}, {len(messages)} messages"
        else:
            yield {0: DeltaToolCall(name="ask_manager", json_args='{"topic": "budget"}')}

    agent = Agent(FunctionModel(stream_function=stream), name="manager")

    @agent.tool_plain
    def ask_manager(topic: str) -> str:
        """Ask the manager, who answers later."""
        raise CallDeferred

    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        asked = (await peer.send("may I spend?")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert "ask_manager" in status_text(asked)
        assert "budget" in status_text(asked)
        done = (await peer.send("42 euros", task_id=asked.id, context_id=asked.context_id)).task
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        assert artifact_text(done) == "the manager said 42 euros; seen: ['may I spend?']"
        # The whole exchange is in the context's history now.
        later = (await peer.send("and now?", context_id=asked.context_id)).task
    assert later.status.state == TaskState.TASK_STATE_COMPLETED
    # request, call, tool return, answer; then the new request
    assert artifact_text(later) == "seen: ['may I spend?', 'and now?'], 5 messages"


async def test_an_agent_with_its_own_deferred_output_and_a_validator(adapter: str) -> None:
    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if returns := tool_returns(messages):
            yield f"outcome: {returns[0].content}"
        else:
            yield {0: DeltaToolCall(name="launch", json_args="{}", tool_call_id="l1")}

    # pydantic-ai refuses a run output type when there are validators: the agent's own is used.
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(stream_function=stream),
        output_type=str | DeferredToolRequests,  # type: ignore[arg-type]
        name="launcher",
    )

    @agent.output_validator
    def shout(output: str | DeferredToolRequests) -> str | DeferredToolRequests:
        return output.upper() if isinstance(output, str) else output

    @agent.tool_plain(requires_approval=True)
    def launch() -> str:
        """Launch."""
        return "launched"

    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        asked = (await peer.send("launch")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        done = (await peer.send("approve", task_id=asked.id, context_id=asked.context_id)).task
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    # The text streamed as the model wrote it; the validated output is not sent again.
    assert artifact_text(done) == "outcome: launched"


async def test_several_deferred_calls_are_asked_one_at_a_time(adapter: str) -> None:
    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if returns := tool_returns(messages):
            yield ", ".join(f"{r.tool_call_id}={r.content}" for r in returns)
        else:
            yield {
                0: DeltaToolCall(name="lookup", json_args='{"q": "a"}', tool_call_id="c1"),
                1: DeltaToolCall(name="lookup", json_args='{"q": "b"}', tool_call_id="c2"),
            }

    agent = Agent(FunctionModel(stream_function=stream), name="lookups")

    @agent.tool_plain
    def lookup(q: str) -> str:
        """Looked up by the user."""
        raise CallDeferred

    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        first = (await peer.send("go")).task
        assert first.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert '"a"' in status_text(first)
        second = (await peer.send("A", task_id=first.id, context_id=first.context_id)).task
        assert second.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert '"b"' in status_text(second)
        done = (await peer.send("B", task_id=first.id, context_id=first.context_id)).task
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(done) == "c1=A, c2=B"


async def test_an_answer_whose_pending_run_was_forgotten_fails_the_task(adapter: str) -> None:
    agent = deleting_agent([])
    pending = InMemoryConversationStore(max_bytes=10_000)
    bridged = from_agent(agent, pending=pending)
    async with served(adapter, bridged, card(agent), streaming=False) as peer:
        asked = (await peer.send("delete /tmp/x")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert asked.id in pending
        await pending.delete(asked.id)
        done = (await peer.send("yes", task_id=asked.id, context_id=asked.context_id)).task
    assert done.status.state == TaskState.TASK_STATE_FAILED
    assert "no longer known" in status_text(done)


# --- cancel and failure -------------------------------------------------------------------


async def test_cancel_stops_the_model_and_ends_the_stream_canceled(adapter: str) -> None:
    produced = 0

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        nonlocal produced
        for i in range(1000):
            produced += 1
            yield f"tick {i} "
            await asyncio.sleep(0.05)

    agent = Agent(FunctionModel(stream_function=stream), name="ticker")
    events: list[StreamResponse] = []
    async with served(adapter, from_agent(agent), card(agent)) as peer:
        canceled = None
        with anyio.fail_after(15):
            async for event in peer.stream("tick"):
                events.append(event)
                chunks = [e for e in events if e.HasField("artifact_update")]
                if canceled is None and len(chunks) >= 3:
                    task_id = event.artifact_update.task_id
                    canceled = await peer.cancel(task_id)
        assert canceled is not None
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        assert events[-1].HasField("status_update")
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        await anyio.sleep(0.3)
        after_cancel = produced
        await anyio.sleep(1.5)
        assert produced == after_cancel  # the model stream really stopped
        assert produced < 100
        stored = await peer.get(task_id)
    assert stored.status.state == TaskState.TASK_STATE_CANCELED


async def test_cancel_of_a_non_blocking_task_stops_the_model(adapter: str) -> None:
    produced = 0

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        nonlocal produced
        for i in range(1000):
            produced += 1
            yield f"{i} "
            await asyncio.sleep(0.05)

    agent = Agent(FunctionModel(stream_function=stream), name="ticker")
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        task = await peer.start("tick")
        with anyio.fail_after(10):
            while produced < 3:
                await anyio.sleep(0.02)
        await peer.cancel(task.id)
        await anyio.sleep(0.3)
        after_cancel = produced
        await anyio.sleep(1.5)
        assert produced == after_cancel
        stored = await peer.get(task.id)
    assert stored.status.state == TaskState.TASK_STATE_CANCELED


async def test_an_exception_fails_the_task_without_its_text(adapter: str) -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "partial "
        raise RuntimeError("secret database password 1234")

    agent = Agent(FunctionModel(stream_function=stream), name="broken")
    async with served(adapter, from_agent(agent), card(agent), streaming=False) as peer:
        reply = await peer.send("go")
    task = reply.task
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert task.status.state in TERMINAL
    text = status_text(task)
    assert text  # a message says it failed
    assert "secret" not in text
    assert "1234" not in text
    assert "Traceback" not in text


# --- the history store ------------------------------------------------------------------


async def test_the_store_evicts_the_least_recently_used_past_its_byte_bound() -> None:
    store = InMemoryConversationStore(max_bytes=10_000, max_entry_bytes=2_000)
    for i in range(100):
        await store.put(f"context-{i}", b"x" * 1_000)
        assert store.size <= 10_000
    assert 0 < len(store) < 10
    assert await store.get("context-0") is None
    assert await store.get("context-99") == b"x" * 1_000
    # A read refreshes an entry: the oldest other entry goes first.
    oldest = next(f"context-{i}" for i in range(100) if f"context-{i}" in store)
    await store.get(oldest)
    await store.put("new", b"y" * 1_000)
    assert oldest in store
    assert len(store) < 10
    # Replacing an entry counts only its new value.
    size = store.size
    await store.put("new", b"y" * 500)
    assert store.size == size - 500
    # A value over the per-entry bound is not kept, and forgets what the key had.
    await store.put("new", b"z" * 2_001)
    assert "new" not in store
    await store.delete("context-99")
    assert "context-99" not in store
    with pytest.raises(ValueError, match="positive"):
        InMemoryConversationStore(max_bytes=0)


def test_a_history_store_that_would_forget_trimmed_conversations_is_refused() -> None:
    small = InMemoryConversationStore(max_entry_bytes=1_000)
    with pytest.raises(ValueError, match="max_entry_bytes"):
        from_agent(words_agent("ok"), history=small, max_history_bytes=2_000)
    from_agent(words_agent("ok"), history=small, max_history_bytes=1_000)  # fits: taken


async def test_many_contexts_keep_the_bridge_within_its_history_bound(adapter: str) -> None:
    agent = words_agent("ok")
    store = InMemoryConversationStore(max_bytes=20_000)
    bridged = from_agent(agent, history=store)

    async with served(adapter, bridged, card(agent), streaming=False) as peer:
        for i in range(30):
            task = (await peer.send(f"hello {i} " + "x" * 500)).task
            assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert store.size <= 20_000
    assert 0 < len(store) < 30


def turn(i: int) -> list[ModelMessage]:
    return [
        ModelRequest(parts=[UserPromptPart(content=f"question {i} " + "q" * 200)]),
        ModelResponse(parts=[TextPart(content=f"answer {i} " + "a" * 200)]),
    ]


def test_a_history_is_trimmed_by_whole_turns_keeping_the_system_prompt() -> None:
    first = turn(0)
    first[0] = ModelRequest(parts=[SystemPromptPart(content="be brief"), *first[0].parts])
    messages = first + [m for i in range(1, 20) for m in turn(i)]
    whole = dump_history(messages, 1 << 20)
    assert whole is not None
    assert load_history(whole) == messages

    data = dump_history(messages, 3_000)
    assert data is not None
    assert len(data) <= 3_000
    kept = load_history(data)
    assert len(kept) % 2 == 0
    assert 0 < len(kept) < len(messages)
    assert prompts(kept)[-1].startswith("question 19")
    assert kept[-1] == messages[-1]
    request = kept[0]
    assert isinstance(request, ModelRequest)
    assert isinstance(request.parts[0], SystemPromptPart)
    assert isinstance(request.parts[1], UserPromptPart)
    # Not even the last turn fits: nothing is kept.
    assert dump_history(messages, 100) is None


# --- the card -----------------------------------------------------------------------------


def test_the_card_comes_from_the_agent_and_overrides_win() -> None:
    agent = Agent(
        pai_test.TestModel(),
        name="calculator",
        instructions="Adds and multiplies numbers.\n\nNever guesses.",
    )

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers.

        More about adding.
        """
        return a + b

    @agent.tool_plain
    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        return a * b

    made = card(agent)
    assert made.name == "calculator"
    assert made.description == "Adds and multiplies numbers."
    assert [(s.name, s.description) for s in made.skills] == [
        ("add", "Add two numbers."),
        ("multiply", "Multiply two numbers."),
    ]
    assert made.capabilities.streaming is True
    assert made.default_output_modes == ["text/plain"]

    other = card(agent, name="Calc", description="Sums.", version="2.0.0")
    assert (other.name, other.description, other.version) == ("Calc", "Sums.", "2.0.0")
    with pytest.raises(TypeError, match="not a field"):
        card(agent, colour="blue")


def test_the_card_falls_back_to_the_system_prompt_and_a_default_name() -> None:
    agent: Agent[None, str] = Agent(pai_test.TestModel(), system_prompt="Tells jokes.")
    made = card(agent)
    assert made.name == "pydantic-ai agent"
    assert made.description == "Tells jokes."
    assert [s.name for s in made.skills] == ["pydantic-ai agent"]

    described = Agent(pai_test.TestModel(), name="x", description="A described agent.")
    assert card(described).description == "A described agent."
