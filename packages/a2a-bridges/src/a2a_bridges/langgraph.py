"""Serve a compiled LangGraph graph on the A2A server.

``from_graph(graph)`` turns a graph compiled with a checkpointer into an agent: each A2A
context of one caller is one LangGraph thread (``thread_id`` = the caller's owner key and
the ``contextId``, see `thread_of`), so the checkpointer keeps the conversation across
tasks, and a caller who names another's context id starts a thread of its own. The
user's text goes into the graph as a ``HumanMessage`` on its ``messages`` key; the AI
messages the run produces come back as artifacts, token by token while the model streams,
each message exactly once. An ``interrupt()`` in a node puts the task into
input-required, and the next message of that task resumes the graph with
``Command(resume=...)``. A client's cancel stops the run itself: the running node is
cancelled, not left to finish unobserved.

``card(graph)`` describes the graph as an agent card (its name, its tools as skills).

Why a bridge rather than a hand-written agent: the details that are easy to get wrong are
done once here. A node that returns the message it streamed must not show it twice; an
interrupt must be found in the checkpointer (the process that asked may not be the one
that gets the answer); and a LangGraph run iterated inside an anyio cancel scope outlives
the cancel (its nodes run in asyncio tasks of their own), so the run is driven from a task
of its own that is cancelled once, and waited for, when the agent stops.

LangGraph runs on asyncio only.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import anyio
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel
from langgraph.types import Command, Interrupt

from a2a_bridges._card import agent_card, skill
from a2a_core.server import Agent, TaskContext, owner_key
from a2a_core.types import AgentCard, Message, Part, Role, Task, TaskState

__all__ = ["METADATA_KEY", "card", "from_graph", "thread_of"]

logger = logging.getLogger(__name__)

#: The key of the input-required status message's metadata that lists the pending
#: interrupts (``{"interrupts": [{"id": ..., "value": ...}]}``): how a follow-up is matched
#: to the interrupt it answers, and the interrupt's value, as JSON, for clients.
METADATA_KEY = "langgraph"

#: How long a stopped run may take to unwind (its nodes cancelled) before it is given up.
CLOSE_TIMEOUT = 5.0

#: The keys of a dict interrupt value whose text is the question, in order of preference.
QUESTION_KEYS = ("question", "message")

AnyGraph = Pregel[Any, Any, Any, Any]


def from_graph(
    graph: AnyGraph,
    *,
    input_key: str = "messages",
    input: Callable[[TaskContext], Any] | None = None,
    resume: Callable[[TaskContext], Any] | None = None,
    config: Mapping[str, Any] | Callable[[TaskContext], Mapping[str, Any]] | None = None,
    context: Callable[[TaskContext], Any] | None = None,
    thread_id: Callable[[TaskContext], str] | None = None,
) -> Agent:
    """An agent that runs ``graph`` (compiled with a checkpointer) for each message.

    - ``input_key``: the state key the user's ``HumanMessage`` goes to (``"messages"``).
    - ``input``: for graphs with another state shape, a function of the
      :class:`TaskContext` returning the graph's input.
    - ``resume``: the value an interrupt is resumed with (default: the message's text).
    - ``config``: extra ``RunnableConfig`` for every run (``recursion_limit``,
      ``configurable`` values, callbacks...), or a function of the :class:`TaskContext`
      returning it; its ``thread_id`` is always the bridge's.
    - ``context``: a function of the :class:`TaskContext` returning the run's LangGraph
      ``context`` (for a graph with a ``context_schema``: the caller's identity, say).
    - ``thread_id``: the LangGraph thread of a task (default :func:`thread_of`: the
      caller's owner key with the context id). Key it by the owner too: context ids are
      chosen by clients, so a thread keyed by the context id alone lets any caller who
      learns one read and continue another's conversation.

    ``input``, ``resume`` and ``context`` may be async.

    Raises :class:`TypeError` when ``graph`` is not a compiled graph, and
    :class:`ValueError` when it has no checkpointer (multi-turn and interrupts need one).
    """
    if not isinstance(graph, Pregel):
        raise TypeError(
            f"from_graph() takes a compiled LangGraph graph (builder.compile(...)), "
            f"not a {type(graph).__name__}"
        )
    if not isinstance(graph.checkpointer, BaseCheckpointSaver):
        raise ValueError(
            f"the graph {graph.name!r} has no checkpointer: compile it with one, e.g. "
            "builder.compile(checkpointer=MemorySaver()); the bridge keeps each A2A context "
            "as a LangGraph thread, and multi-turn and interrupts need a checkpointer"
        )
    return _GraphAgent(graph, input_key, input, resume, config, context, thread_id or thread_of)


def thread_of(ctx: TaskContext) -> str:
    """The default LangGraph ``thread_id`` of a task: ``'["<owner key>", "<contextId>"]'``
    (a JSON array, so no two callers or contexts share one), the owner key being
    :func:`a2a_core.server.owner_key` of the caller (``""`` for an anonymous one).

    To read a conversation's state: ``graph.aget_state({"configurable": {"thread_id":
    thread_of(ctx)}})``, or build the same string from the owner key and context id.
    """
    return json.dumps([owner_key(ctx.identity), ctx.context_id])


def card(graph: AnyGraph, **overrides: Any) -> AgentCard:
    """An agent card for ``graph``: its name, its tools as skills, streaming on.

    The skills are the tools of the graph's ``ToolNode`` nodes (subgraphs included); a
    graph without any has one skill, the graph itself. Any ``AgentCard`` field given by
    keyword wins (``description=...``, ``skills=[...]``, ``version=...``).
    """
    name = str(getattr(graph, "name", "") or "LangGraph")
    tools = {tool.name: tool for tool in _tools(graph, set())}
    skills = [skill(tool.name, tool.description) for tool in tools.values()]
    return agent_card(
        name=name,
        description="",  # none known: the name, unless given
        skills=skills or [skill(name, name)],
        streaming=True,
        overrides=overrides,
    )


def _tools(graph: AnyGraph, seen: set[int]) -> Iterator[BaseTool]:
    """The tools of every ``ToolNode`` of ``graph`` and of its subgraphs."""
    if id(graph) in seen:
        return
    seen.add(id(graph))
    for node in graph.nodes.values():
        bound = node.bound
        if isinstance(bound, ToolNode):
            yield from bound.tools_by_name.values()
        elif isinstance(bound, Pregel):
            yield from _tools(bound, seen)


# --- the agent ---------------------------------------------------------------------------


class _GraphAgent:
    """The agent ``from_graph`` returns: one graph run per A2A message."""

    def __init__(
        self,
        graph: AnyGraph,
        input_key: str,
        make_input: Callable[[TaskContext], Any] | None,
        make_resume: Callable[[TaskContext], Any] | None,
        config: Mapping[str, Any] | Callable[[TaskContext], Mapping[str, Any]] | None,
        make_context: Callable[[TaskContext], Any] | None,
        thread_of: Callable[[TaskContext], str],
    ) -> None:
        self.graph = graph
        self._input_key = input_key
        self._make_input = make_input
        self._make_resume = make_resume
        self._config = config
        self._make_context = make_context
        self._thread_of = thread_of
        self._threads = _ThreadLocks()

    def __repr__(self) -> str:
        return f"from_graph({self.graph.name!r})"

    async def __call__(self, ctx: TaskContext) -> None:
        # The interrupts this task asked the client about, if it is answering one.
        asked = _asked_interrupts(ctx.task) if ctx.is_follow_up else set()
        thread = self._thread_of(ctx)
        config = self._run_config(ctx, thread)
        # Runs of one thread one after the other (in this process): two at once would
        # both start from the same checkpoint.
        async with self._threads.hold(thread):
            snapshot = await self.graph.aget_state(config)
            pending = [i for i in snapshot.interrupts if i.id in asked]
            if pending:
                graph_input: Any = Command(resume=await self._resume_value(ctx, pending))
            else:
                # A new task, or nothing pending for this one: the message starts a new run
                # (LangGraph drops an interrupt still pending on the thread).
                graph_input = await self._input(ctx)
            task = ctx.task
            if task is None or task.status.state is not TaskState.WORKING:
                await ctx.working()
            replies = _Replies(ctx)
            run_context = (
                None if self._make_context is None else await _call(self._make_context, ctx)
            )
            async with _run(self.graph, graph_input, config, run_context) as events:
                async for namespace, mode, data in events:
                    if mode == "messages":
                        message, meta = data
                        name = meta.get("langgraph_node", "") if isinstance(meta, dict) else ""
                        await replies.message(message, (tuple(namespace), str(name)))
                    elif mode == "updates" and isinstance(data, Mapping):
                        for name in data:  # these nodes have ended
                            await replies.close_node((tuple(namespace), str(name)))
            await replies.close_all()
            snapshot = await self.graph.aget_state(config)
        if snapshot.interrupts:
            await ctx.input_required(_question(snapshot.interrupts))
        else:
            await ctx.complete()

    def _run_config(self, ctx: TaskContext, thread: str) -> RunnableConfig:
        given = self._config(ctx) if callable(self._config) else self._config
        config = dict(given or {})
        config["configurable"] = {**config.get("configurable", {}), "thread_id": thread}
        config["metadata"] = {
            **config.get("metadata", {}),
            "a2a_task_id": ctx.task_id,
            "a2a_context_id": ctx.context_id,
        }
        return cast(RunnableConfig, config)

    async def _input(self, ctx: TaskContext) -> Any:
        if self._make_input is None:
            return {self._input_key: [HumanMessage(content=ctx.text)]}
        return await _call(self._make_input, ctx)

    async def _resume_value(self, ctx: TaskContext, pending: list[Interrupt]) -> Any:
        value = ctx.text if self._make_resume is None else await _call(self._make_resume, ctx)
        if len(pending) == 1:
            return value
        return {interrupt.id: value for interrupt in pending}  # the one answer to each


async def _call(function: Callable[[TaskContext], Any], ctx: TaskContext) -> Any:
    """``function(ctx)``, awaited if it is async."""
    value = function(ctx)
    return await value if inspect.isawaitable(value) else value


@contextlib.asynccontextmanager
async def _run(
    graph: AnyGraph, graph_input: Any, config: RunnableConfig, context: Any
) -> AsyncIterator[_Events]:
    """The ``(namespace, mode, data)`` events of one run (subgraphs included: their
    models stream live too), read by a task of its own.

    The run is never iterated in the agent's task: the server cancels the agent through an
    anyio cancel scope, which cancels again and again until the agent returns, and that
    makes LangGraph skip its cleanup (it unwinds in a task it creates, cancelled before it
    starts): its nodes, in asyncio tasks of their own, would run on. Here the reading task
    is cancelled once, when the agent leaves the block for whatever reason, and waited for
    (bounded): LangGraph cancels the running nodes and waits for them.
    """
    events = _Events()

    async def read() -> None:
        stream = cast(
            AsyncGenerator[Any, None],
            graph.astream(
                graph_input,
                config,
                context=context,
                stream_mode=["messages", "updates"],
                subgraphs=True,
            ),
        )
        try:
            async for event in stream:
                await events.queue.put(event)
        except Exception as exc:
            await events.queue.put(_Raised(exc))
        except BaseException as exc:
            # Not an exception of the run's own: our cancel, or something else stopping
            # this task (a CancelledError from inside the graph, say). In the second case
            # the agent still waits for events: it must fail, not hang.
            if not events.stopping:
                events.fail(RuntimeError(f"the LangGraph run stopped ({type(exc).__name__})"))
            raise
        else:
            await events.queue.put(_END)
        finally:
            await stream.aclose()  # no-op once finished; closes it on any other way out

    reader = asyncio.get_running_loop().create_task(read(), name=f"LangGraph run: {graph.name}")
    try:
        yield events
    finally:
        events.stopping = True
        if not reader.done():
            reader.cancel()
        with anyio.move_on_after(CLOSE_TIMEOUT, shield=True) as scope:
            await asyncio.wait({reader})
        if reader.done() and not reader.cancelled():
            reader.exception()  # retrieved: it was reported through the events
        if scope.cancelled_caught:
            logger.warning(
                "the LangGraph run of %s did not stop within %ss of its cancel",
                graph.name,
                CLOSE_TIMEOUT,
            )


_END = object()

#: How many of a run's events may wait between the graph and the task's writes.
EVENTS_BUFFERED = 64


class _Events:
    """What the reading task put in its queue, as an async iterator (the run's exception
    raised at its place)."""

    def __init__(self) -> None:
        # Bounded: a run that produces faster than the task is written waits for it (the
        # reader is paced by the store), rather than piling its events up here.
        self.queue: asyncio.Queue[Any] = asyncio.Queue(EVENTS_BUFFERED)
        #: Set when the agent leaves the run: the reader's cancel is then ours.
        self.stopping = False
        self._failed: BaseException | None = None

    def fail(self, error: BaseException) -> None:
        """End the events with ``error``, from a reader that cannot wait to queue it."""
        self._failed = error
        with contextlib.suppress(asyncio.QueueFull):
            # A full queue means the agent is not waiting: it finds the error once it has
            # read the queue empty.
            self.queue.put_nowait(_Raised(error))

    def __aiter__(self) -> _Events:
        return self

    async def __anext__(self) -> Any:
        if self._failed is not None and self.queue.empty():
            raise self._failed
        event = await self.queue.get()
        if event is _END:
            raise StopAsyncIteration
        if isinstance(event, _Raised):
            raise event.exc
        return event


@dataclass(frozen=True, slots=True)
class _Raised:
    exc: BaseException


# --- the reply: AI messages as artifacts -------------------------------------------------


#: Where a message comes from: the graph's namespace (``()`` for the graph itself, one
#: entry per subgraph level) and the node's name.
_Node = tuple[tuple[str, ...], str]


@dataclass(slots=True)
class _Open:
    """A streamed message whose artifact is not closed yet."""

    node: _Node
    artifact_id: str | None = None
    held: str | None = None
    """The latest chunk, held back so that the last one can be marked ``lastChunk``."""


class _Replies:
    """The AI messages of one run, each as one artifact, each shown once.

    A streamed message (``AIMessageChunk``s sharing an id) is one artifact: its first
    chunk creates it, later ones append, the last is marked ``lastChunk``; one chunk is
    held back to know which is last, so no empty part is ever sent. A whole ``AIMessage``
    (a model that does not stream, a node that builds one) is an artifact of its own,
    unless its id was streamed. Messages without text (tool calls only) show nothing.
    """

    def __init__(self, ctx: TaskContext) -> None:
        self._ctx = ctx
        self._open: dict[str, _Open] = {}
        self._shown: set[str] = set()

    async def message(self, message: object, node: _Node) -> None:
        if isinstance(message, AIMessageChunk):
            await self._chunk(message, node)
        elif isinstance(message, AIMessage):
            await self._whole(message, node)
        # Human, tool and system messages are not part of the reply.

    async def _chunk(self, chunk: AIMessageChunk, node: _Node) -> None:
        key = chunk.id or repr(node)
        current = self._open.get(key)
        if current is None:
            current = self._open[key] = _Open(node)
        text = str(chunk.text)
        if text:
            if current.held is not None:
                await self._send(current, current.held, last=False)
            current.held = text
        if chunk.chunk_position == "last":
            await self._close(key)

    async def _whole(self, message: AIMessage, node: _Node) -> None:
        key = message.id or ""
        if key in self._open:  # the end of a message being streamed
            await self._close(key)
            return
        if key in self._shown:
            return
        if key:
            self._shown.add(key)
        text = str(message.text)
        if text:
            await self._ctx.artifact(text, name=node[1], last_chunk=True)

    async def close_node(self, node: _Node) -> None:
        """Close the messages of a node that has ended."""
        for key in [key for key, current in self._open.items() if current.node == node]:
            await self._close(key)

    async def close_all(self) -> None:
        for key in list(self._open):
            await self._close(key)

    async def _close(self, key: str) -> None:
        current = self._open.pop(key)
        self._shown.add(key)
        if current.held is not None:
            await self._send(current, current.held, last=True)

    async def _send(self, current: _Open, text: str, *, last: bool) -> None:
        current.artifact_id = await self._ctx.artifact(
            text,
            artifact_id=current.artifact_id,
            name=current.node[1],
            append=current.artifact_id is not None,
            last_chunk=last,
        )


# --- interrupts --------------------------------------------------------------------------


def _question(interrupts: tuple[Interrupt, ...]) -> Message:
    """The input-required status message: the interrupts' text, their ids and values."""
    text = "\n\n".join(_interrupt_text(interrupt.value) for interrupt in interrupts)
    listed = [{"id": i.id, "value": _json_value(i.value)} for i in interrupts]
    return Message(
        message_id=str(uuid.uuid4()),
        role=Role.AGENT,
        parts=[Part(text=text)],
        metadata={METADATA_KEY: {"interrupts": listed}},
    )


def _interrupt_text(value: Any) -> str:
    """A str as it is; a dict's ``question`` or ``message`` text; anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in QUESTION_KEYS:
            if isinstance(question := value.get(key), str):
                return question
    return json.dumps(_json_value(value), ensure_ascii=False)


def _json_value(value: Any) -> Any:
    """``value`` as JSON data (what JSON cannot hold, as its ``str``)."""
    return json.loads(json.dumps(value, default=str))


def _asked_interrupts(task: Task | None) -> set[str]:
    """The ids of the interrupts the task last asked about (in its latest question)."""
    if task is None:
        return set()
    messages = [*task.history, *([task.status.message] if task.status.message else [])]
    for message in reversed(messages):
        if message.role is not Role.AGENT:
            continue
        listed = message.metadata.get(METADATA_KEY)
        if isinstance(listed, Mapping) and isinstance(listed.get("interrupts"), list):
            return {
                str(item["id"])
                for item in listed["interrupts"]
                if isinstance(item, Mapping) and "id" in item
            }
    return set()


# --- one run per thread at a time --------------------------------------------------------


class _ThreadLocks:
    """A lock per LangGraph thread, kept while someone holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[anyio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(thread_id) or (anyio.Lock(), 0)
        self._locks[thread_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[thread_id]
            if users == 1:
                del self._locks[thread_id]
            else:
                self._locks[thread_id] = (lock, users - 1)
