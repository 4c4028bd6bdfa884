"""`a2a_bridges.langgraph`: compiled LangGraph graphs (``MemorySaver``, langchain-core's fake
chat models, no network) served by our server on both adapters and driven by the official
client over real HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from a2a.types.a2a_pb2 import StreamResponse, TaskState
from google.protobuf.json_format import MessageToDict
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import TypedDict

from a2a_bridges.langgraph import METADATA_KEY, card, from_graph, thread_of
from a2a_core.server import A2AServer, TaskContext
from a2a_core.types import AgentSkill
from bridges.harness import artifact_text, joined, served, status_text

pytestmark = pytest.mark.anyio

Node = Callable[[MessagesState], Any]


def graph_of(*nodes: Node, name: str = "LangGraph", checkpointer: Any = None) -> Any:
    """A graph running ``nodes`` one after the other on ``MessagesState``, with a
    ``MemorySaver`` unless told otherwise."""
    builder = StateGraph(MessagesState)
    previous = START
    for node in nodes:
        builder.add_node(node.__name__, node)
        builder.add_edge(previous, node.__name__)
        previous = node.__name__
    builder.add_edge(previous, END)
    return builder.compile(checkpointer=checkpointer or MemorySaver(), name=name)


def thread(context_id: str, owner: str = "") -> str:
    """The LangGraph thread of a context of ``owner`` (anonymous by default)."""
    return json.dumps([owner, context_id])


def fake_model(*replies: str, streaming: bool = True) -> GenericFakeChatModel:
    """A chat model answering ``replies`` in turn; it streams them word by word (spaces
    apart) unless ``streaming=False``."""
    return GenericFakeChatModel(messages=iter(replies), disable_streaming=not streaming)


def chatting(model: GenericFakeChatModel) -> Node:
    """A node that calls ``model`` on the conversation and returns its message."""

    async def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    return chat


def humans(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages if isinstance(m, HumanMessage)]


def chunks_of(events: list[StreamResponse]) -> list[Any]:
    return [e.artifact_update for e in events if e.HasField("artifact_update")]


def states_of(events: list[StreamResponse]) -> list[Any]:
    return [e.status_update.status.state for e in events if e.HasField("status_update")]


# --- the reply, once ------------------------------------------------------------------------


async def test_a_blocking_send_returns_the_streamed_text_once(adapter: str) -> None:
    graph = graph_of(chatting(fake_model("hello there world")))
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        reply = await peer.send("hi")
    assert reply.HasField("task")
    task = reply.task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    # The node returned the message it streamed: shown once, as one artifact.
    assert len(task.artifacts) == 1
    assert artifact_text(task) == "hello there world"
    assert task.artifacts[0].name == "chat"


async def test_a_message_that_was_not_streamed_shows_once(adapter: str) -> None:
    async def by_hand(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("made by hand")]}

    graph = graph_of(chatting(fake_model("not streamed", streaming=False)), by_hand)
    async with served(adapter, from_graph(graph), card(graph)) as peer:
        events = [e async for e in peer.stream("hi")]
        task_id = chunks_of(events)[0].task_id
        stored = await peer.get(task_id)
    chunks = chunks_of(events)
    assert [joined(c.artifact.parts) for c in chunks] == ["not streamed", "made by hand"]
    assert [c.append for c in chunks] == [False, False]
    assert len({c.artifact.artifact_id for c in chunks}) == 2
    assert states_of(events)[-1] == TaskState.TASK_STATE_COMPLETED
    assert [joined(a.parts) for a in stored.artifacts] == ["not streamed", "made by hand"]


async def test_a_stream_carries_the_chunks_in_order_then_completes(adapter: str) -> None:
    graph = graph_of(chatting(fake_model("one two three")))
    async with served(adapter, from_graph(graph), card(graph)) as peer:
        with anyio.fail_after(10):
            events = [e async for e in peer.stream("count")]
    assert events[0].HasField("task")
    chunks = chunks_of(events)
    # The fake model streams a word and each space as chunks.
    assert [joined(c.artifact.parts) for c in chunks] == ["one", " ", "two", " ", "three"]
    assert [c.append for c in chunks] == [False, True, True, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, False, False, True]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    assert all(p.text for c in chunks for p in c.artifact.parts)  # no empty parts
    assert states_of(events) == [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
    assert events[-1].HasField("status_update")


async def test_chunks_reach_the_client_while_the_model_still_runs(adapter: str) -> None:
    gate = asyncio.Event()

    async def live(state: MessagesState) -> dict[str, Any]:
        model = Scripted(script=["first", " second", None, " third"], gate=gate)
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = graph_of(live)
    events: list[StreamResponse] = []
    async with served(adapter, from_graph(graph), card(graph)) as peer:
        with anyio.fail_after(10):
            async for event in peer.stream("go"):
                events.append(event)
                if event.HasField("artifact_update") and not gate.is_set():
                    # The model waits for the gate: what it produced is already here.
                    assert joined(event.artifact_update.artifact.parts) == "first"
                    gate.set()
    assert gate.is_set()
    assert [joined(c.artifact.parts) for c in chunks_of(events)] == ["first", " second", " third"]
    assert states_of(events)[-1] == TaskState.TASK_STATE_COMPLETED


class Scripted(GenericFakeChatModel):
    """Streams ``script`` (``None``: wait for ``gate``), asynchronously."""

    script: list[str | None]
    gate: Any
    messages: Any = iter(())

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for text in self.script:
            if text is None:
                await self.gate.wait()
            else:
                yield ChatGenerationChunk(message=AIMessageChunk(content=text))


# --- threads --------------------------------------------------------------------------------


async def test_a_second_task_in_the_context_sees_the_first_turn(adapter: str) -> None:
    async def recall(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("seen: " + " | ".join(humans(state["messages"])))]}

    graph = graph_of(recall)
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        first = (await peer.send("my name is Ada")).task
        assert artifact_text(first) == "seen: my name is Ada"
        second = (await peer.send("what is my name?", context_id=first.context_id)).task
        assert second.id != first.id
        assert artifact_text(second) == "seen: my name is Ada | what is my name?"
        other = (await peer.send("who am I?")).task
    assert other.context_id != first.context_id
    assert artifact_text(other) == "seen: who am I?"
    # The checkpointer holds the thread under the caller and the context id, the earlier
    # answers with it.
    state = await graph.aget_state({"configurable": {"thread_id": thread(first.context_id)}})
    assert [m.text for m in state.values["messages"]] == [
        "my name is Ada",
        "seen: my name is Ada",
        "what is my name?",
        "seen: my name is Ada | what is my name?",
    ]


class Question(TypedDict):
    question: str
    answer: str


class Asked(Question, MessagesState):
    """A question to answer, and the conversation."""


async def answer(state: Asked) -> dict[str, Any]:
    return {"answer": state["question"].upper()}


async def say(state: Asked) -> dict[str, Any]:
    return {"messages": [AIMessage(state["answer"])]}


async def test_a_graph_of_another_shape_takes_its_input_from_a_function(adapter: str) -> None:
    builder = StateGraph(Asked)
    builder.add_node("answer", answer)
    builder.add_node("say", say)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", "say")
    graph = builder.compile(checkpointer=MemorySaver())
    bridged = from_graph(graph, input=lambda ctx: {"question": f"{ctx.text}?"})
    async with served(adapter, bridged, card(graph), streaming=False) as peer:
        task = (await peer.send("why")).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task) == "WHY?"


async def test_runs_of_one_context_take_turns(adapter: str) -> None:
    async def slow_recall(state: MessagesState) -> dict[str, Any]:
        await asyncio.sleep(0.2)
        return {"messages": [AIMessage("seen: " + " | ".join(humans(state["messages"])))]}

    graph = graph_of(slow_recall)
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        first = await peer.start("one")
        second = await peer.start("two", context_id=first.context_id)
        done = [
            await peer.wait_for(t.id, lambda t: t.status.state == TaskState.TASK_STATE_COMPLETED)
            for t in (first, second)
        ]
    # The second run started from the first one's checkpoint, not beside it.
    assert [artifact_text(t) for t in done] == ["seen: one", "seen: one | two"]
    state = await graph.aget_state({"configurable": {"thread_id": thread(first.context_id)}})
    assert [m.text for m in state.values["messages"]] == [
        "one",
        "seen: one",
        "two",
        "seen: one | two",
    ]


async def test_two_callers_naming_one_context_have_two_threads() -> None:
    from helpers.a2a_client import Client, user_message

    async def recall(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("seen: " + " | ".join(humans(state["messages"])))]}

    graph = graph_of(recall)
    async with A2AServer(from_graph(graph), card=card(graph)) as server:
        alice = Client(server, identity={"sub": "alice"})
        bob = Client(server, identity={"sub": "bob"})
        said = user_message("my PIN is 1234", context_id="shared")
        first = await alice.result("SendMessage", {"message": said})
        asked = user_message("what is my PIN?", context_id="shared", mid="m2")
        second = await bob.result("SendMessage", {"message": asked})
    assert first["task"]["artifacts"][0]["parts"][0]["text"] == "seen: my PIN is 1234"
    # Bob named Alice's context id and got a conversation of his own.
    assert second["task"]["artifacts"][0]["parts"][0]["text"] == "seen: what is my PIN?"
    state = await graph.aget_state({"configurable": {"thread_id": thread("shared", "alice")}})
    assert humans(state.values["messages"]) == ["my PIN is 1234"]


async def test_the_thread_can_be_chosen(adapter: str) -> None:
    async def recall(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("seen: " + " | ".join(humans(state["messages"])))]}

    graph = graph_of(recall)
    chosen: list[str] = []

    def one_thread(ctx: TaskContext) -> str:
        chosen.append(thread_of(ctx))
        return "everyone"

    bridged = from_graph(graph, thread_id=one_thread)
    async with served(adapter, bridged, card(graph), streaming=False) as peer:
        await peer.send("one")
        task = (await peer.send("two")).task  # another context, the same thread
    assert artifact_text(task) == "seen: one | two"
    assert chosen[1] == thread(task.context_id)


@dataclass
class Caller:
    name: str


async def greet(
    state: MessagesState, config: RunnableConfig, runtime: Runtime[Caller]
) -> dict[str, Any]:
    tone = config["configurable"]["tone"]
    return {"messages": [AIMessage(f"{tone} {runtime.context.name}")]}


async def test_config_and_context_are_made_from_the_task_context(adapter: str) -> None:
    builder = StateGraph(MessagesState, context_schema=Caller)
    builder.add_node("greet", greet)
    builder.add_edge(START, "greet")
    graph = builder.compile(checkpointer=MemorySaver())

    async def caller(ctx: TaskContext) -> Caller:
        return Caller(name=ctx.text.upper())

    bridged = from_graph(
        graph,
        config=lambda ctx: {"configurable": {"tone": "Hi", "thread_id": "ignored"}},
        context=caller,
    )
    async with served(adapter, bridged, card(graph), streaming=False) as peer:
        task = (await peer.send("ada")).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(task) == "Hi ADA"
    # The thread is the bridge's, whatever the config said.
    state = await graph.aget_state({"configurable": {"thread_id": thread(task.context_id)}})
    assert humans(state.values["messages"]) == ["ada"]


# --- interrupts -----------------------------------------------------------------------------


def asking_graph() -> Any:
    async def ask(state: MessagesState) -> dict[str, Any]:
        name = interrupt({"question": "What is your name?", "field": "name"})
        return {"messages": [AIMessage(f"Hello, {name}!")]}

    return graph_of(ask)


async def test_an_interrupt_asks_and_the_answer_resumes_the_graph(adapter: str) -> None:
    graph = asking_graph()
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        asked = (await peer.send("hi")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert status_text(asked) == "What is your name?"
        listed = MessageToDict(asked.status.message.metadata)[METADATA_KEY]["interrupts"]
        assert [i["value"] for i in listed] == [{"question": "What is your name?", "field": "name"}]
        assert artifact_text(asked) == ""
        done = (await peer.send("Ada", task_id=asked.id, context_id=asked.context_id)).task
    assert done.id == asked.id
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(done) == "Hello, Ada!"
    state = await graph.aget_state({"configurable": {"thread_id": thread(asked.context_id)}})
    assert state.interrupts == ()
    # The answer resumed the node: it is not a message of the conversation.
    assert [m.text for m in state.values["messages"]] == ["hi", "Hello, Ada!"]


async def test_an_interrupt_streams_its_question_and_the_answer_streams_the_rest(
    adapter: str,
) -> None:
    async def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Which colour?")
        return {"messages": [AIMessage(f"{answer} it is")]}

    graph = graph_of(chatting(fake_model("Let me ask.")), ask)
    async with served(adapter, from_graph(graph), card(graph)) as peer:
        first = [e async for e in peer.stream("paint")]
        task_id = chunks_of(first)[0].task_id
        context_id = first[0].task.context_id
        assert states_of(first)[-1] == TaskState.TASK_STATE_INPUT_REQUIRED
        assert joined(first[-1].status_update.status.message.parts) == "Which colour?"
        second = [e async for e in peer.stream("Blue", task_id=task_id, context_id=context_id)]
        task = await peer.get(task_id)
    assert "".join(joined(c.artifact.parts) for c in chunks_of(first)) == "Let me ask."
    assert [joined(c.artifact.parts) for c in chunks_of(second)] == ["Blue it is"]
    assert states_of(second)[-1] == TaskState.TASK_STATE_COMPLETED
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [joined(a.parts) for a in task.artifacts] == ["Let me ask.", "Blue it is"]


async def test_a_new_task_while_an_interrupt_is_pending_starts_afresh(adapter: str) -> None:
    graph = asking_graph()
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        asked = (await peer.send("hi")).task
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        # Not an answer: a new task in the context. The graph runs again from its input.
        again = (await peer.send("Bob", context_id=asked.context_id)).task
        assert again.id != asked.id
        assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        assert artifact_text(again) == ""
        # The first task's question is no longer the pending one: its answer starts a new
        # run too (which asks again), rather than answering the second task's question.
        late = (await peer.send("Ada", task_id=asked.id, context_id=asked.context_id)).task
        assert late.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        done = (await peer.send("Cy", task_id=late.id, context_id=late.context_id)).task
    assert done.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(done) == "Hello, Cy!"
    state = await graph.aget_state({"configurable": {"thread_id": thread(asked.context_id)}})
    assert humans(state.values["messages"]) == ["hi", "Bob", "Ada"]


async def test_a_subgraph_streams_live_and_its_interrupt_round_trips(adapter: str) -> None:
    async def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt("Which size?")
        return {"messages": [AIMessage(f"size {answer}")]}

    inner = StateGraph(MessagesState)
    inner.add_node("chat", chatting(fake_model("inner words here")))
    inner.add_node("ask", ask)
    inner.add_edge(START, "chat")
    inner.add_edge("chat", "ask")
    outer = StateGraph(MessagesState)
    outer.add_node("team", inner.compile())
    outer.add_edge(START, "team")
    graph = outer.compile(checkpointer=MemorySaver(), name="Outer")
    async with served(adapter, from_graph(graph), card(graph)) as peer:
        first = [e async for e in peer.stream("order")]
        task = first[0].task
        assert states_of(first)[-1] == TaskState.TASK_STATE_INPUT_REQUIRED
        assert joined(first[-1].status_update.status.message.parts) == "Which size?"
        second = [e async for e in peer.stream("XL", task_id=task.id, context_id=task.context_id)]
        stored = await peer.get(task.id)
    # The subgraph's model streamed in the first run (word by word), shown there only.
    assert [joined(c.artifact.parts) for c in chunks_of(first)] == [
        "inner",
        " ",
        "words",
        " ",
        "here",
    ]
    assert [joined(c.artifact.parts) for c in chunks_of(second)] == ["size XL"]
    assert states_of(second)[-1] == TaskState.TASK_STATE_COMPLETED
    assert [joined(a.parts) for a in stored.artifacts] == ["inner words here", "size XL"]


# --- cancel and failure ---------------------------------------------------------------------


@dataclass
class Probe:
    produced: int = 0
    cancelled: bool = False


class Ticker(GenericFakeChatModel):
    """Streams a tick every 50 ms, for ever; counts them in ``probe`` and notes its cancel."""

    probe: Any
    messages: Any = iter(())

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        try:
            while True:
                self.probe.produced += 1
                yield ChatGenerationChunk(
                    message=AIMessageChunk(content=f"tick{self.probe.produced} ")
                )
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            self.probe.cancelled = True
            raise


async def test_cancel_stops_the_running_node_and_ends_the_stream(adapter: str) -> None:
    probe = Probe()
    graph = graph_of(chatting(Ticker(probe=probe)))
    events: list[StreamResponse] = []
    async with served(adapter, from_graph(graph), card(graph)) as peer:
        canceled = None
        with anyio.fail_after(15):
            async for event in peer.stream("tick"):
                events.append(event)
                if canceled is None and len(chunks_of(events)) >= 3:
                    task_id = event.artifact_update.task_id
                    canceled = await peer.cancel(task_id)
        assert canceled is not None
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        assert events[-1].HasField("status_update")
        assert events[-1].status_update.status.state == TaskState.TASK_STATE_CANCELED
        after_cancel = probe.produced
        await anyio.sleep(1.5)
        assert probe.produced <= after_cancel + 1  # at most the tick under way
        assert probe.cancelled  # the node's model saw the cancel
        stored = await peer.get(task_id)
    assert stored.status.state == TaskState.TASK_STATE_CANCELED
    assert probe.produced < 100


async def test_cancel_of_a_non_blocking_task_stops_the_node(adapter: str) -> None:
    probe = Probe()
    saw_cancel: list[bool] = []
    block = True

    async def count(state: MessagesState) -> dict[str, Any]:
        # A node that works without a model: its own loop must stop too.
        try:
            while block:
                probe.produced += 1
                await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            saw_cancel.append(True)
            raise
        return {"messages": [AIMessage("seen: " + " | ".join(humans(state["messages"])))]}

    graph = graph_of(count)
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        task = await peer.start("count")
        with anyio.fail_after(10):
            while probe.produced < 3:
                await anyio.sleep(0.02)
        await peer.cancel(task.id)
        await anyio.sleep(0.3)
        after_cancel = probe.produced
        await anyio.sleep(1.5)
        assert probe.produced == after_cancel
        assert saw_cancel == [True]
        stored = await peer.get(task.id)
        assert stored.status.state == TaskState.TASK_STATE_CANCELED
        # The thread goes on: a new task in the context runs, with the earlier message.
        block = False
        later = (await peer.send("again", context_id=task.context_id)).task
    assert later.status.state == TaskState.TASK_STATE_COMPLETED
    assert artifact_text(later) == "seen: count | again"


async def test_a_node_that_raises_fails_the_task_without_its_text(adapter: str) -> None:
    async def broken(state: MessagesState) -> dict[str, Any]:
        raise RuntimeError("secret database password 1234")

    graph = graph_of(chatting(fake_model("partial answer")), broken)
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        task = (await peer.send("hi")).task
        stored = await peer.get(task.id)
    assert task.status.state == TaskState.TASK_STATE_FAILED
    assert stored.status.state == TaskState.TASK_STATE_FAILED
    assert "secret" not in status_text(task)
    assert "1234" not in str(task)
    assert artifact_text(task) == "partial answer"  # what the graph produced before


class Halt(BaseException):
    """Not an ``Exception``: what LangGraph lets through as it is."""


async def test_a_run_stopped_from_inside_fails_rather_than_hangs(adapter: str) -> None:
    async def stopping(state: MessagesState) -> dict[str, Any]:
        raise Halt  # not the server's cancel, and not an error of the run's

    graph = graph_of(stopping)
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        with anyio.fail_after(10):
            task = (await peer.send("hi")).task
    assert task.status.state == TaskState.TASK_STATE_FAILED


# --- card and refusals ----------------------------------------------------------------------


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool
def time_in(city: str) -> str:
    """The local time in a city."""
    return "noon"


async def test_tool_calls_and_tool_results_are_not_part_of_the_reply(adapter: str) -> None:
    model = fake_model("It is sunny in Paris.")

    async def agent(state: MessagesState) -> dict[str, Any]:
        if not isinstance(state["messages"][-1], ToolMessage):
            call = {"name": "weather", "args": {"city": "Paris"}, "id": "w1"}
            return {"messages": [AIMessage(content="", tool_calls=[call])]}
        return {"messages": [await model.ainvoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([weather]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=MemorySaver(), name="Weather")
    async with served(adapter, from_graph(graph), card(graph), streaming=False) as peer:
        task = (await peer.send("weather in Paris?")).task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [joined(a.parts) for a in task.artifacts] == ["It is sunny in Paris."]
    state = await graph.aget_state({"configurable": {"thread_id": thread(task.context_id)}})
    tool_results = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
    assert [m.text for m in tool_results] == ["sunny in Paris"]


def test_the_card_lists_the_tool_nodes_tools() -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([weather, time_in]))
    builder.add_edge(START, "tools")
    graph = builder.compile(checkpointer=MemorySaver(), name="Forecaster")
    made = card(graph)
    assert made.name == "Forecaster"
    assert made.capabilities.streaming is True
    assert [(s.name, s.description) for s in made.skills] == [
        ("weather", "The weather in a city."),
        ("time_in", "The local time in a city."),
    ]


def test_the_card_of_a_graph_without_tools_has_one_skill_and_overrides_win() -> None:
    graph = graph_of(chatting(fake_model("x")))
    made = card(graph)
    assert made.name == "LangGraph"
    assert [s.name for s in made.skills] == ["LangGraph"]
    mine = AgentSkill(id="chat", name="Chat", description="Chats.", tags=["chat"])
    overridden = card(graph, name="Chatter", description="Chats with you.", skills=[mine])
    assert overridden.name == "Chatter"
    assert overridden.description == "Chats with you."
    assert overridden.skills == [mine]
    with pytest.raises(TypeError, match="not a field of AgentCard"):
        card(graph, colour="blue")


def test_a_graph_without_a_checkpointer_is_refused() -> None:
    builder = StateGraph(MessagesState)
    builder.add_node("chat", chatting(fake_model("x")))
    builder.add_edge(START, "chat")
    with pytest.raises(ValueError, match="no checkpointer"):
        from_graph(builder.compile())
    with pytest.raises(TypeError, match="compiled LangGraph graph"):
        from_graph(builder)
