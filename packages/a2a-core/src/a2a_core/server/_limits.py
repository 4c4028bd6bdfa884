"""How large one task may grow (L2): the limits every write of a task is held to.

The stores bound what they keep of *finished* tasks (a count, a time, a byte budget); a task
still open is never evicted, so what bounds it is this module: at most so many messages, and
bytes of messages, in its history, so many bytes of artifacts, so many events in its log.
The limits hold whatever the backend, because they are checked where every task write goes
through: a client's message when it is admitted (``A2AServer``, before anything is written:
InvalidParams), an agent's report in the task's writer (``writes``: the task fails, saying
which limit, since refusing the agent would leave the task hanging).

Sizes are the msgpack encoding of each message and artifact, which is what the bundled
stores keep (the JSON on the wire is a little larger); measuring one costs a fraction of a
microsecond for a small message, about a millisecond for 8 MiB.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Final

import msgspec

from a2a_core._protocol.errors import InvalidParamsError
from a2a_core.types import TERMINAL_STATES, Artifact, Message, StreamResponse, Task

__all__ = ["TaskLimitError", "TaskLimits", "TaskUsage", "encoded_size"]

logger: Final = logging.getLogger("a2a_core.server")

_MiB: Final = 1 << 20
_encoder: Final = msgspec.msgpack.Encoder()


def encoded_size(value: Message | Artifact) -> int:
    """Bytes of ``value`` as the stores keep it (msgpack)."""
    return len(_encoder.encode(value))


class TaskLimitError(Exception):
    """Raised to an agent by the report that took its task over a :class:`TaskLimits` limit.

    The task has already failed, with a status message saying which limit; the agent's
    later reports are dropped. The runtime catches it (the agent stops, nothing is logged
    as a crash); an agent reporting from elsewhere sees it."""


@dataclass(slots=True)
class TaskUsage:
    """What one task holds, as the limits count it (its writer keeps it up to date)."""

    messages: int = 0
    """Messages in its history, plus its status message (which joins the history next)."""
    history_bytes: int = 0
    """Encoded bytes of those messages."""
    artifact_bytes: int = 0
    """Encoded bytes of its artifacts, plus every artifact update since this count was made:
    a replaced artifact counts again, because the task's log keeps every version."""

    @property
    def task_bytes(self) -> int:
        """About what the whole task takes as the store keeps it: its messages and its
        artifacts (its other fields add a few hundred bytes)."""
        return self.history_bytes + self.artifact_bytes

    @classmethod
    def of(cls, task: Task) -> TaskUsage:
        """Count ``task`` (one encoding of each message and artifact)."""
        messages = list(task.history)
        if task.status.message is not None:
            messages.append(task.status.message)
        return cls(
            messages=len(messages),
            history_bytes=sum(encoded_size(m) for m in messages),
            artifact_bytes=sum(encoded_size(a) for a in task.artifacts),
        )


@dataclass(frozen=True, slots=True)
class TaskLimits:
    """How large one task may grow; ``None`` disables a limit.

    The defaults keep a task under 32 MiB in the store and about as much in its log, while
    allowing what the body limit (8 MiB) lets a client send, a long conversation, and an
    answer streamed token by token. The event that ends a task is never refused (a cancel,
    a failure, a shutdown must be recorded as they are), so a task may end with one status
    message beyond the message limits; a task that ended grows no more.
    """

    max_history_messages: int | None = 1_000
    """Messages a task holds: its history and its status message (an agent's status
    message joins the history at the next status)."""
    max_history_bytes: int | None = 16 * _MiB
    """Encoded bytes of those messages."""
    max_artifact_bytes: int | None = 16 * _MiB
    """Encoded bytes of the artifacts an agent gives a task while it answers one message;
    appended chunks add up, and a replaced artifact counts again (the log keeps both)."""
    max_events: int | None = 10_000
    """Events in a task's log (at least 3: the task, its answer and its end). The last one
    is kept for the event that ends the task, so a cancel always fits."""
    max_task_bytes: int | None = 32 * _MiB
    """Encoded bytes of the whole task (its messages and artifacts), which a store keeps as
    one row or value. A database refuses a row over its own limit (MariaDB and MySQL: their
    ``max_allowed_packet``, 16 MiB and 64 MiB by default), so the server lowers this to the
    backend's limit when it starts (``Backend.max_task_bytes``, e.g. ``SqlBackend`` reads
    ``max_allowed_packet``): a message that would take a task past it is refused before
    anything is written, and an agent's answer that would, fails the task."""

    def __post_init__(self) -> None:
        names = ("max_history_messages", "max_history_bytes", "max_artifact_bytes")
        for name in (*names, "max_task_bytes"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1 or None")
        if self.max_events is not None and self.max_events < 3:
            raise ValueError("max_events must be >= 3 or None")

    def fitted_to(self, backend: object) -> TaskLimits:
        """These limits with ``max_task_bytes`` lowered to the largest task ``backend``
        stores (its optional ``max_task_bytes``: a database's row limit), logged when it
        lowers a limit that was set."""
        stored = getattr(backend, "max_task_bytes", None)
        whole = self.max_task_bytes
        if not isinstance(stored, int) or (whole is not None and whole <= stored):
            return self
        if whole is not None:
            logger.info(
                "tasks are limited to %d bytes, the largest the backend stores "
                "(TaskLimits.max_task_bytes was %d)",
                stored,
                whole,
            )
        return dataclasses.replace(self, max_task_bytes=stored)

    def admit(self, message: Message, task: Task | None, last_seq: int) -> None:
        """Check a client's message before anything is written: the first of a new task
        (``task`` is ``None``) or a follow-up to ``task``, whose log is at ``last_seq``.

        Raises InvalidParams, saying which limit, when it would take the task over one."""
        limit = self.max_history_bytes
        whole = self.max_task_bytes
        size = 0 if limit is None and whole is None else encoded_size(message)
        if task is None:
            if limit is not None and size > limit:
                raise _refused(
                    f"The message is {size} bytes; a task holds at most {limit} bytes of messages"
                )
            if whole is not None and size > whole:
                raise _refused(
                    f"The message is {size} bytes; a task holds at most {whole} bytes in all"
                )
            return
        again = ": start a new task in the same context (referenceTaskIds may point at this one)"
        if self.max_events is not None and last_seq + 2 > self.max_events:
            raise _refused(f"The task has reached its limit of {self.max_events} events{again}")
        usage = TaskUsage.of(task)
        limit = self.max_history_messages
        if limit is not None and usage.messages + 1 > limit:
            raise _refused(f"The task has reached its limit of {limit} messages{again}")
        limit = self.max_history_bytes
        if limit is not None and usage.history_bytes + size > limit:
            raise _refused(
                f"The task holds {usage.history_bytes} bytes of messages; with this one "
                f"({size} bytes) it would go over its limit of {limit} bytes{again}"
            )
        if whole is not None and usage.task_bytes + size > whole:
            raise _refused(
                f"The task holds {usage.task_bytes} bytes; with this message ({size} bytes) "
                f"it would go over its limit of {whole} bytes in all{again}"
            )

    def fits_answer(self, message: Message, artifact: Artifact) -> bool:
        """Whether a new task of ``message`` answered at once with ``artifact`` stays
        within the limits."""
        limit, whole = self.max_artifact_bytes, self.max_task_bytes
        if limit is None and whole is None:
            return True
        size = encoded_size(artifact)
        if limit is not None and size > limit:
            return False
        return whole is None or size + encoded_size(message) <= whole

    def charge(self, usage: TaskUsage, event: StreamResponse, last_seq: int) -> str | None:
        """Count an agent's event into ``usage``; or, when it would take the task over a
        limit, leave ``usage`` as it is and return what to tell the client (the task then
        fails instead)."""
        status = event.status_update
        message: Message | None = None
        if status is not None:
            if status.status.state in TERMINAL_STATES:
                # The end of a task is never turned away (a cancel, a failure, a shutdown
                # must be recorded as they are), and a task that ended grows no more.
                return None
            message = status.status.message
        elif event.message is not None:
            message = event.message
        limit = self.max_events
        if limit is not None and last_seq + 2 > limit:
            return _over(limit, "events")
        if message is not None:
            messages = usage.messages + 1
            limit = self.max_history_messages
            if limit is not None and messages > limit:
                return _over(limit, "messages")
            history = usage.history_bytes
            whole = self.max_task_bytes
            if self.max_history_bytes is not None or whole is not None:
                history += encoded_size(message)
                if self.max_history_bytes is not None and history > self.max_history_bytes:
                    return _over(self.max_history_bytes, "bytes of messages")
                if whole is not None and history + usage.artifact_bytes > whole:
                    return _over(whole, "bytes in all")
            usage.messages, usage.history_bytes = messages, history
        elif event.artifact_update is not None and (
            self.max_artifact_bytes is not None or self.max_task_bytes is not None
        ):
            artifacts = usage.artifact_bytes + encoded_size(event.artifact_update.artifact)
            if self.max_artifact_bytes is not None and artifacts > self.max_artifact_bytes:
                return _over(self.max_artifact_bytes, "bytes of artifacts")
            whole = self.max_task_bytes
            if whole is not None and usage.history_bytes + artifacts > whole:
                return _over(whole, "bytes in all")
            usage.artifact_bytes = artifacts
        elif event.task is not None:
            restated = TaskUsage.of(event.task)
            for limit, value, what in (
                (self.max_history_messages, restated.messages, "messages"),
                (self.max_history_bytes, restated.history_bytes, "bytes of messages"),
                (self.max_artifact_bytes, restated.artifact_bytes, "bytes of artifacts"),
                (self.max_task_bytes, restated.task_bytes, "bytes in all"),
            ):
                if limit is not None and value > limit:
                    return _over(limit, what)
            usage.messages = restated.messages
            usage.history_bytes = restated.history_bytes
            usage.artifact_bytes = restated.artifact_bytes
        return None


def _over(limit: int, what: str) -> str:
    return f"The task went over the server's limit of {limit} {what}."


def _refused(why: str) -> InvalidParamsError:
    return InvalidParamsError(why, field_violations=[("message", why)])
