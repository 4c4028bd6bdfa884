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

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from a2a_core.server._context import TaskContext
from a2a_core.types import Artifact, Message, Part

__all__ = ["Agent", "AgentResult", "AuthRequired", "InputRequired"]


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
    [TaskContext],
    Awaitable[AgentResult] | AsyncIterator[Any] | AgentResult,
]
