"""Idempotent sends (L2): a message sent again is answered with what it started.

A client that retries a SendMessage after a lost reply, a 503 or its own crash must not
start the work twice (the spec lets a server deduplicate on ``messageId``). The key is the
caller (the task's owner key), the tenant and the ``messageId``, and the record is the
task itself, so every backend keeps it with no storage of its own:

- a message that starts a task gets a task id **derived from its key** (`task_id_for`),
  so its retry finds that task (one read before the agent is asked); two copies racing
  on one replica meet in the registry of running executions, and on two replicas at the
  task's creation, which exactly one wins (the other's agent is stopped at its first
  report: it may have begun, never finished, a second run);
- a message that continues a task is found in the task's history.

A retry is recognised only when it carries the same message (`same_message`: parts,
metadata, extensions, references, and the context when it names one): a client that
reuses a ``messageId`` for another message gets a new task, as before. The window is the
task's lifetime in the store (a finished task is kept ``task_ttl``, an hour by default):
after that, the same message starts new work. A reply with only a message (no task) is not
remembered: sent again, it is answered again. ``RecoveryPolicy(idempotent_sends=False)``
turns it off.
"""

from __future__ import annotations

import hashlib
from typing import Final

from a2a_core._protocol.lifecycle import ends_wait
from a2a_core.server._events import EventLog
from a2a_core.server._store import StoredTask, TaskStore
from a2a_core.types import Message, Role, Task

__all__ = ["find_sent", "same_message", "settled", "task_id_for"]

#: The RFC 9562 variant bits (10xx) forced into the first hex digit of the fourth group.
_VARIANT: Final = {f"{n:x}": "89ab"[n & 3] for n in range(16)}


def task_id_for(tenant: str, owner: str, message_id: str) -> str:
    """The id of the task a message starts, derived from its key: a UUID-shaped hex string
    (version nibble 8, "custom") that shows nothing of the key. Whoever knows the key can
    compute it, and gains nothing: a task answers only its owner (a derived id another
    task holds is never reused: that message gets a random id)."""
    # BLAKE2s: the cheapest of the standard library's hashes for a key this short.
    key = f"{tenant}\0{owner}\0{message_id}".encode()
    digest = hashlib.blake2s(key, digest_size=16, person=b"a2a-send").hexdigest()
    return (
        f"{digest[:8]}-{digest[8:12]}-8{digest[13:16]}-{_VARIANT[digest[16]]}{digest[17:20]}-"
        f"{digest[20:]}"
    )


def same_message(stored: Message, incoming: Message) -> bool:
    """Whether ``incoming`` is a retry of ``stored`` (see the module docstring): the ids the
    server filled in are not compared, the context only when the retry names one."""
    if incoming.context_id and incoming.context_id != stored.context_id:
        return False
    return (
        incoming.parts == stored.parts
        and incoming.metadata == stored.metadata
        and incoming.extensions == stored.extensions
        and incoming.reference_task_ids == stored.reference_task_ids
    )


def find_sent(task: Task, incoming: Message) -> bool:
    """Whether the task's history holds ``incoming`` already (a follow-up sent again)."""
    for message in task.history:
        if (
            message.message_id == incoming.message_id
            and message.role is Role.USER
            and same_message(message, incoming)
        ):
            return True
    return False


async def settled(log: EventLog, store: TaskStore, stored: StoredTask) -> StoredTask:
    """The task once it reaches a state a blocking send returns at (terminal or
    interrupted), following its log from where ``stored`` stands: what the first copy of a
    blocking send answered, or will answer. ``log``: the server's stoppable view of the log,
    so that a stop ends the wait (ServerUnavailableError)."""
    if ends_wait(stored.task.status.state):
        return stored
    task_id = stored.task.id
    events = log.follow(task_id, stored.last_seq)
    try:
        async for logged in events:
            update = logged.event.status_update
            if update is not None and ends_wait(update.status.state):
                break
    finally:
        # Closed when left early: an abandoned generator is a warning under trio.
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
    fresh = await store.get(task_id)
    return fresh if fresh is not None else stored
