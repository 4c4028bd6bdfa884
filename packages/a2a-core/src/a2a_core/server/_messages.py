"""What one agent call is given, and the messages and ids the runtime builds (L2).

Shared by the agent API (`agent`), the context (`context`) and the task writes (`writes`),
so none of them imports another for these.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgspec

from a2a_core._protocol.call import Call
from a2a_core.types import Message, Part, Role, SendMessageConfiguration, Task

__all__ = ["Invocation", "agent_message", "new_id", "to_parts"]


def new_id() -> str:
    """A fresh id for tasks, contexts, messages and artifacts (a random UUID, version 4)."""
    # What str(uuid.uuid4()) gives, without building a UUID object, from random bytes read
    # 4 KiB at a time: a blocking SendMessage makes three ids, and a system call for each
    # was a few percent of it (bench/).
    try:
        h = next(_hexes)
    except StopIteration:
        h = _refill()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:]}"


# The RFC 9562 variant bits (10xx) forced into the first hex digit of the fourth group.
_VARIANT = {f"{n:x}": f"{8 | (n & 3):x}" for n in range(16)}
#: Ids' worth of random bytes read at once.
_BATCH = 256
_hexes: Iterator[str] = iter(())


def _refill() -> str:
    """Read the next batch of random bytes (os.urandom: the same source as uuid4) and
    return its first id's hex digits."""
    global _hexes
    raw = os.urandom(16 * _BATCH).hex()
    _hexes = iter([raw[at : at + 32] for at in range(32, len(raw), 32)])
    return raw[:32]


def _forget_batch() -> None:
    # A forked child must not hand out the ids its parent still holds.
    global _hexes
    _hexes = iter(())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_batch)


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
    """An agent message for a task. A given Message gets the given ids, whatever ids it
    carried: an agent (a bridged executor) may have copied another task's, and what is
    written into a task, or answers its caller, names that task and context only."""
    if isinstance(content, Message):
        if (not task_id or content.task_id == task_id) and (
            not context_id or content.context_id == context_id
        ):
            return content  # nearly always: the ids are already the task's
        return msgspec.structs.replace(
            content,
            task_id=task_id or content.task_id,
            context_id=context_id or content.context_id,
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
    """The owner key the task records (see `a2a_core.server._ownership`)."""
    attempt: int = 1
    """Which run of the agent for this message this is, 1-based (see ``_recovery``)."""
    epoch: int = 1
    """The epoch of this run: what its writes are fenced at (see ``_recovery``)."""
    idempotent: bool = False
    """A copy of this message is answered with what it started (``_idempotency``): a
    follow-up already recorded by a copy is not recorded again."""
    checkpoint: Any = None
    """What the previous attempt checkpointed, handed to this one (``resume``)."""
