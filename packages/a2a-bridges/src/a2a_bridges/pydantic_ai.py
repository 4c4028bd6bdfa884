"""Serve a pydantic-ai ``Agent`` on the a2aserve A2A server.

pydantic-ai agents are a common way to write an LLM agent in Python; this bridge lets one
answer A2A clients without rewriting it. ``from_agent(agent)`` returns one of our agents
(a callable taking a `TaskContext`) that:

- runs the pydantic-ai agent on the message's text, streaming the model's text as it comes
  as chunks of one artifact (the last chunk marked ``last_chunk``); a structured output (an
  ``output_type`` other than ``str``) is added as an artifact with a data part; then the task
  completes;
- keeps the message history per caller and context id, so a follow-up message in the same
  context sees the earlier turns; histories are kept serialized, bounded in bytes per
  context and in all (`InMemoryConversationStore`), or in a store of your own;
- turns a run that needs the user (a deferred tool, or a tool that requires approval) into
  an INPUT_REQUIRED task, and resumes the run with the next message in that task as the
  tool's result or the approval decision;
- stops the model when the client cancels the task (the run is cancelled where it awaits);
- fails the task with a generic message when the run raises (details go to the server log).

``card(agent)`` builds the agent card from what the agent knows of itself.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import TypeAdapter
from pydantic_ai import DeferredToolRequests, DeferredToolResults
from pydantic_ai.agent import AbstractAgent
from pydantic_ai.messages import (
    AgentStreamEvent,
    ModelMessage,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
)
from pydantic_ai.tools import RunContext, ToolDenied
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_core import to_jsonable_python

from a2a_bridges._card import agent_card, skill, summary
from a2a_bridges._pydantic_ai_history import (
    MIB,
    ConversationStore,
    InMemoryConversationStore,
    dump_history,
    load_history,
)
from a2a_core.server import Agent, TaskContext, owner_key
from a2a_core.types import AgentCard, Part

__all__ = ["ConversationStore", "InMemoryConversationStore", "card", "from_agent"]

DepsT = TypeVar("DepsT")

#: Answers (lower case, without trailing punctuation) that approve a tool call.
APPROVALS = frozenset({"yes", "y", "approve", "approved"})

#: Answers that deny a tool call with no more said (any other answer denies it too).
DENIALS = frozenset({"", "no", "n", "deny", "denied"})

#: What a task says when it was waiting for an answer the bridge no longer remembers.
EXPIRED_TEXT = "This task's pending request is no longer known; please start a new task."


def from_agent(
    agent: AbstractAgent[DepsT, Any],
    *,
    deps: Callable[[TaskContext], DepsT | Awaitable[DepsT]] | None = None,
    history: ConversationStore | None = None,
    max_history_bytes: int = MIB,
    pending: ConversationStore | None = None,
    conversation_key: Callable[[TaskContext], str] | None = None,
) -> Agent:
    """Our agent, running the pydantic-ai ``agent`` for each message.

    - ``deps``: makes the run's ``deps`` from the task context (sync or async), e.g. to pass
      the caller (``ctx.identity``) to the tools; without it the run gets no deps.
    - ``history``: where each conversation's messages are kept, serialized. Default: an
      `InMemoryConversationStore` (64 MiB in all, least recently used evicted first).
    - ``max_history_bytes``: each conversation is trimmed to this many serialized bytes
      before it is stored, dropping its oldest whole turns (1 MiB by default). An
      `InMemoryConversationStore` given as ``history`` must take entries that large
      (:class:`ValueError` otherwise).
    - ``pending``: where runs waiting on the user are kept, by task id. Default: an
      `InMemoryConversationStore` of 16 MiB in all, 4 MiB per task.
    - ``conversation_key``: the history key of a call. Default: the caller's owner key (see
      `a2a_core.server.owner_key`) with the context id, so one caller cannot read another's
      conversation by naming its context id (a server keying owners its own way, with
      ``task_owner=``, should key conversations the same way here).

    A run that ends on deferred tool calls (``CallDeferred``, ``ApprovalRequired``, a tool
    with ``requires_approval=True``) leaves the task INPUT_REQUIRED, asking for one call at a
    time; the next message in the task answers it (for an approval: "yes", "y", "approve"
    approve, anything else denies). This needs ``DeferredToolRequests`` among the run's
    output types: the bridge adds it, unless the agent has output validators (pydantic-ai
    then allows no other output type), in which case add it to the agent's ``output_type``.
    The bridge streams with its own ``event_stream_handler``: the agent's is not called.
    """
    if max_history_bytes <= 0:
        raise ValueError("max_history_bytes must be positive")
    if isinstance(history, InMemoryConversationStore) and (
        history.max_entry_bytes < max_history_bytes
    ):
        # The store would forget every conversation that grew past its entry limit.
        raise ValueError(
            f"max_history_bytes ({max_history_bytes}) is larger than the history store's "
            f"max_entry_bytes ({history.max_entry_bytes}): conversations longer than that "
            "would be forgotten instead of trimmed"
        )
    if history is None:
        history = InMemoryConversationStore(max_entry_bytes=max(2 * MIB, max_history_bytes))
    bridge = _Bridge(
        agent=agent,
        deps=deps,
        history=history,
        max_history_bytes=max_history_bytes,
        pending=(
            pending
            if pending is not None
            else InMemoryConversationStore(max_bytes=16 * MIB, max_entry_bytes=4 * MIB)
        ),
        conversation_key=conversation_key or _default_key,
        output_type=_run_output_type(agent),
    )

    async def pydantic_ai_agent(ctx: TaskContext) -> None:
        await bridge.handle(ctx)

    return pydantic_ai_agent


def card(agent: AbstractAgent[Any, Any], **overrides: Any) -> AgentCard:
    """The agent card of ``agent``: its name (or "pydantic-ai agent"), its description (or
    the first paragraph of its static instructions or system prompt), a skill per function
    tool (or one for the agent itself), streaming on. Any `AgentCard` field can be given by
    keyword, and wins."""
    name = agent.name or "pydantic-ai agent"
    description = agent.description or summary(_static_prompt(agent))
    skills = [skill(tool_name, text) for tool_name, text in _tools(agent)]
    if not skills:
        skills = [skill(name, description)]
    fields: dict[str, Any] = {}
    if agent.output_type is not str:
        fields["default_output_modes"] = ["text/plain", "application/json"]
    fields.update(overrides)
    return agent_card(
        name=name, description=description, skills=skills, streaming=True, overrides=fields
    )


# --- the run ---------------------------------------------------------------------------


@dataclass
class _Ask:
    """One deferred tool call the user must answer."""

    id: str
    tool: str
    args: str
    kind: Literal["approval", "external", "question"]


@dataclass
class _Pending:
    """A run waiting on the user: the messages it added so far, what it asks, the answers."""

    new: list[ModelMessage]
    asks: list[_Ask]
    answers: dict[str, str] = field(default_factory=dict)
    """The user's reply to each ask answered so far, by tool call id."""

    def next_ask(self) -> _Ask | None:
        answered = len(self.answers)
        return self.asks[answered] if answered < len(self.asks) else None

    def results(self) -> DeferredToolResults:
        """The answers as pydantic-ai takes them."""
        results = DeferredToolResults()
        for ask in self.asks:
            answer = self.answers[ask.id]
            if ask.kind == "approval":
                results.approvals[ask.id] = _approval(answer)
            else:
                results.calls[ask.id] = answer
        return results


_PENDING = TypeAdapter(_Pending)


@dataclass
class _Bridge:
    agent: AbstractAgent[Any, Any]
    deps: Callable[[TaskContext], Any] | None
    history: ConversationStore
    max_history_bytes: int
    pending: ConversationStore
    conversation_key: Callable[[TaskContext], str]
    output_type: Any

    async def handle(self, ctx: TaskContext) -> None:
        # The bridge leaves a task unfinished only to ask the user: a follow-up answers.
        if ctx.is_follow_up:
            await self._answer(ctx)
        else:
            await ctx.working()
            await self._run(ctx, ctx.text, new=[], results=None)

    async def _answer(self, ctx: TaskContext) -> None:
        """The message answers the ask the task waits for: record it, ask the next one, or
        resume the run once all are answered."""
        data = await self.pending.get(ctx.task_id)
        if data is None:
            await ctx.fail(EXPIRED_TEXT)
            return
        state = _PENDING.validate_json(data)
        ask = state.next_ask()
        if ask is None:  # pragma: no cover - a state with nothing to ask is never stored
            await self.pending.delete(ctx.task_id)
            await ctx.fail(EXPIRED_TEXT)
            return
        state.answers[ask.id] = ctx.text
        following = state.next_ask()
        if following is not None:
            await self.pending.put(ctx.task_id, _PENDING.dump_json(state))
            await ctx.input_required(_question(following))
            return
        await self.pending.delete(ctx.task_id)
        await ctx.working()
        await self._run(ctx, None, new=state.new, results=state.results())

    async def _run(
        self,
        ctx: TaskContext,
        prompt: str | None,
        *,
        new: list[ModelMessage],
        results: DeferredToolResults | None,
    ) -> None:
        """Run the agent on ``prompt`` (or resume it with ``results``) after the stored
        history and this task's ``new`` messages, and report how it ended."""
        key = self.conversation_key(ctx)
        before = load_history(await self.history.get(key))
        text = _TextStream(ctx)

        async def on_events(_: RunContext[Any], events: AsyncIterable[AgentStreamEvent]) -> None:
            async for event in events:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    text.new_part()
                    await text.add(event.part.content)
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    await text.add(event.delta.content_delta)

        deps = None
        if self.deps is not None:
            deps = self.deps(ctx)
            if inspect.isawaitable(deps):
                deps = await deps
        result = await self.agent.run(
            prompt,
            output_type=self.output_type,
            message_history=[*before, *new],
            deferred_tool_results=results,
            conversation_id=ctx.context_id or None,
            deps=deps,
            event_stream_handler=on_events,
        )
        await text.close()
        new = [*new, *result.new_messages()]
        output = result.output
        if isinstance(output, DeferredToolRequests):
            state = _Pending(new=new, asks=_asks(output))
            first = state.next_ask()
            if first is None:  # pragma: no cover - pydantic-ai ends so only with a request
                raise RuntimeError("the run ended waiting on no tool call")
            await self.pending.put(ctx.task_id, _PENDING.dump_json(state))
            await ctx.input_required(_question(first))
            return
        await self._remember(key, new)
        if isinstance(output, str):
            if not text.sent and output:
                await ctx.artifact(output, name="response", last_chunk=True)
        elif output is not None:
            data = Part(data=to_jsonable_python(output), media_type="application/json")
            await ctx.artifact(data, name="output", last_chunk=True)
        await ctx.complete()

    async def _remember(self, key: str, new: list[ModelMessage]) -> None:
        """Add this task's messages to the conversation as it is now (another task in the
        context may have added its turn meanwhile), trimmed to the bound."""
        current = load_history(await self.history.get(key))
        data = dump_history([*current, *new], self.max_history_bytes)
        if data is None:
            await self.history.delete(key)
        else:
            await self.history.put(key, data)


class _TextStream:
    """The model's text as chunks of one artifact. One chunk is held back until the next
    comes or the run ends, so that the last one can be sent marked ``last_chunk``."""

    def __init__(self, ctx: TaskContext) -> None:
        self._ctx = ctx
        self._artifact_id: str | None = None
        self._held = ""
        self._separate = False
        #: Some text was (or is about to be) sent.
        self.sent = False

    def new_part(self) -> None:
        """A new text part starts: separate it from the text before by a blank line."""
        self._separate = self.sent

    async def add(self, text: str) -> None:
        if not text:
            return
        if self._separate:
            text = "\n\n" + text
            self._separate = False
        if self._held:
            await self._send(self._held, last=False)
        self._held = text
        self.sent = True

    async def close(self) -> None:
        if self._held:
            await self._send(self._held, last=True)
            self._held = ""

    async def _send(self, text: str, *, last: bool) -> None:
        if self._artifact_id is None:
            self._artifact_id = await self._ctx.artifact(text, name="response", last_chunk=last)
        else:
            await self._ctx.artifact(
                text, artifact_id=self._artifact_id, append=True, last_chunk=last
            )


# --- helpers ---------------------------------------------------------------------------


def _default_key(ctx: TaskContext) -> str:
    return json.dumps([owner_key(ctx.identity), ctx.context_id])


def _run_output_type(agent: AbstractAgent[Any, Any]) -> Any:
    """The output type to run with: the agent's with ``DeferredToolRequests`` added (``None``
    keeps the agent's own: it has it already, or has output validators)."""
    if _has_deferred(agent.output_type) or getattr(agent, "_output_validators", None):
        return None
    return [agent.output_type, DeferredToolRequests]


def _has_deferred(spec: Any) -> bool:
    if spec is DeferredToolRequests:
        return True
    if isinstance(spec, Sequence) and not isinstance(spec, str):
        return any(_has_deferred(item) for item in spec)
    if isinstance(spec, types.UnionType) or typing.get_origin(spec) is typing.Union:
        return any(_has_deferred(item) for item in typing.get_args(spec))
    return False


def _asks(requests: DeferredToolRequests) -> list[_Ask]:
    asks = [
        _Ask(call.tool_call_id, call.tool_name, _args(call), "approval")
        for call in requests.approvals
    ]
    for call in requests.calls:
        kind = requests.kind(call.tool_call_id)
        asks.append(_Ask(call.tool_call_id, call.tool_name, _args(call), kind))
    return asks


def _args(call: ToolCallPart) -> str:
    return call.args_as_json_str()


def _question(ask: _Ask) -> list[Part]:
    """What the input-required status says: in words, and as data for programs."""
    call = f"{ask.tool}({ask.args})"
    if ask.kind == "approval":
        words = (
            f"Approval needed: the agent wants to call {call}. Reply yes to approve or no to deny."
        )
    elif ask.kind == "question":
        words = f"The agent asks {call}. Reply with your answer."
    else:
        words = (
            f"Input needed: the agent called {call}, which needs its result from you. "
            "Reply with the result."
        )
    try:
        args: Any = json.loads(ask.args)
    except ValueError:
        args = ask.args
    data = {"tool_name": ask.tool, "tool_call_id": ask.id, "args": args, "kind": ask.kind}
    return [Part(text=words), Part(data=data, media_type="application/json")]


def _approval(answer: str) -> bool | ToolDenied:
    """Approved for yes, y, approve(d); else denied, with the user's words for the model when
    they say more than no."""
    word = answer.strip().lower().rstrip(".!")
    if word in APPROVALS:
        return True
    if word in DENIALS:
        return False
    return ToolDenied(f"The user denied this tool call, saying: {answer.strip()}")


def _static_prompt(agent: AbstractAgent[Any, Any]) -> str:
    """The agent's static instructions, else its static system prompt ("" without)."""
    texts: list[str] = []
    for sourced in getattr(agent, "_instructions", None) or ():
        instruction = getattr(sourced, "instruction", None)
        if isinstance(instruction, str) and instruction.strip():
            texts.append(instruction)
    if not texts:
        prompts = getattr(agent, "_system_prompts", None) or ()
        texts = [prompt for prompt in prompts if isinstance(prompt, str) and prompt.strip()]
    return "\n\n".join(texts)


def _tools(agent: AbstractAgent[Any, Any]) -> list[tuple[str, str]]:
    """(name, description) of the agent's function tools (other toolsets list theirs only
    when run)."""
    found: list[tuple[str, str]] = []

    def visit(toolset: AbstractToolset[Any]) -> None:
        if isinstance(toolset, FunctionToolset):
            found.extend(
                (tool.name, summary(tool.description) or tool.name)
                for tool in toolset.tools.values()
            )

    for toolset in agent.toolsets:
        toolset.apply(visit)
    return found
