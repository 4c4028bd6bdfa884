"""The agent API (L2): what an agent is, what it may return, and the context it works with.

Simple things are simple. An agent is a callable that takes a :class:`TaskContext`:

- return ``str``, a :class:`Part`, a list of parts or an :class:`Artifact`: the task
  completes with that artifact;
- return a :class:`Message`: a message-only reply (no task), or, when the call already has a
  task, the task completes with that message as its final status message;
- return :class:`InputRequired` / :class:`AuthRequired`: the task waits for the client, and
  the next message with the same ``taskId`` calls the agent again;
- be an async generator: each yielded text, part or parts is streamed as a chunk of one
  artifact, a yielded :class:`Message` as a working status update, a yielded
  ``InputRequired``/``AuthRequired`` interrupts the task; the task completes when the
  generator ends;
- or drive the task by hand with the context: ``working()``, ``artifact(...)``,
  ``input_required()``, ``auth_required()``, ``complete()``, ``fail()``, ``reject()``.

Plain (non-async) callables run in a worker thread. An exception fails the task with a
generic message (details go to the log); an :class:`~a2a_core.errors.A2AError` raised before
the task exists is answered to the client as that error.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from a2a_core.types import Artifact, Message, Part, Role, SendMessageConfiguration, Task

if TYPE_CHECKING:
    from a2a_core.call import Call
    from a2a_core.server.context import TaskContext

__all__ = [
    "Agent",
    "AgentResult",
    "AuthRequired",
    "InputRequired",
    "agent_message",
    "new_id",
    "to_parts",
]


def new_id() -> str:
    """A fresh id for tasks, contexts, messages and artifacts (a random UUID, version 4)."""
    # What str(uuid.uuid4()) gives, without building a UUID object: a blocking SendMessage
    # makes four ids, and uuid4() cost a few percent of it (bench/).
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


# The RFC 9562 variant bits (10xx) forced into the first hex digit of the fourth group.
_VARIANT = {f"{n:x}": f"{8 | (n & 3):x}" for n in range(16)}


@dataclass(frozen=True, slots=True)
class InputRequired:
    """Return (or yield) this to ask the client for more input."""

    message: str | Message
    """The question, as text or as a full message."""


@dataclass(frozen=True, slots=True)
class AuthRequired:
    """Return (or yield) this when the client must authenticate out-of-band first."""

    message: str | Message
    """What is needed, as text or as a full message."""


#: What an agent may return.
AgentResult: TypeAlias = (
    str | Part | Sequence[Part] | Artifact | Message | InputRequired | AuthRequired | None
)

#: An agent: a callable taking the task context. It may be async, a plain function (run in
#: a worker thread), or an async generator of chunks.
Agent: TypeAlias = Callable[
    ["TaskContext"],
    Awaitable[AgentResult] | AsyncIterator[Any] | AgentResult,
]


def to_parts(content: str | Part | Sequence[Part]) -> list[Part]:
    """Text, one part or several parts, as a list of parts."""
    if isinstance(content, str):
        return [Part(text=content)]
    if isinstance(content, Part):
        return [content]
    parts = list(content)
    if not parts or not all(isinstance(p, Part) for p in parts):
        raise TypeError("expected text, a Part or a non-empty sequence of Parts")
    return parts


def agent_message(
    content: str | Part | Sequence[Part] | Message,
    *,
    task_id: str = "",
    context_id: str = "",
    metadata: Mapping[str, Any] | None = None,
) -> Message:
    """An agent message for a task (a given Message gets the task and context ids filled)."""
    if isinstance(content, Message):
        import msgspec

        return msgspec.structs.replace(
            content,
            task_id=content.task_id or task_id,
            context_id=content.context_id or context_id,
        )
    return Message(
        message_id=new_id(),
        role=Role.AGENT,
        parts=to_parts(content),
        task_id=task_id,
        context_id=context_id,
        metadata=dict(metadata or {}),
    )


class Invocation(msgspec.Struct, frozen=True):
    """What the agent is asked to handle: the incoming message and where it belongs."""

    message: Message
    """The client's message (with task and context ids filled in)."""
    task_id: str
    """The task the message belongs to (new or continued)."""
    context_id: str
    """The conversation."""
    task: Task | None
    """The task before this message, for a follow-up; ``None`` for a new task."""
    configuration: SendMessageConfiguration | None
    """The client's send configuration."""
    call: Call
    """The validated call (metadata, identity, extensions, tenant)."""
