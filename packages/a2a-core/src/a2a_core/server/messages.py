"""What one agent call is given, and the messages and ids the runtime builds (L2).

Shared by the agent API (`agent`), the context (`context`) and the task writes (`writes`),
so none of them imports another for these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from a2a_core.call import Call
from a2a_core.types import Message, Part, Role, SendMessageConfiguration, Task

__all__ = ["Invocation", "agent_message", "new_id", "to_parts"]


def new_id() -> str:
    """A fresh id for tasks, contexts, messages and artifacts (a random UUID, version 4)."""
    # What str(uuid.uuid4()) gives, without building a UUID object: a blocking SendMessage
    # makes four ids, and uuid4() cost a few percent of it (bench/).
    h = os.urandom(16).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


# The RFC 9562 variant bits (10xx) forced into the first hex digit of the fourth group.
_VARIANT = {f"{n:x}": f"{8 | (n & 3):x}" for n in range(16)}


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
    owner: str = ""
    """The owner key the task records (see `a2a_core.server.ownership`)."""
