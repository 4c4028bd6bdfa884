"""The context an agent works with (L2): what it reads of the call, how it reports.

A thin face over the task's :class:`~a2a_core.server._writes.TaskHandle`: every report
becomes one write of the task (see `writes`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from a2a_core.server._messages import Invocation, agent_message
from a2a_core.server._recovery import (
    CHECKPOINT_KEY,
    DEFAULT_MAX_CHECKPOINT_BYTES,
    encode_checkpoint,
)
from a2a_core.server._writes import TaskHandle, new_artifact
from a2a_core.types import Artifact, Message, Part, Task, TaskState

__all__ = ["TaskContext"]


class TaskContext:
    """What an agent sees of the call it handles, and how it reports progress.

    Reading: ``message`` (the client's message), ``text`` (its text parts joined),
    ``task_id``, ``context_id``, ``task`` (the task before this message, for a follow-up),
    ``metadata`` (server, per-request and call metadata merged), ``identity``, ``owner``,
    ``extensions`` (activated URIs), ``configuration``, ``call``; ``attempt`` and
    ``checkpoint_value`` when the server recovers lost work (``docs/durability.md``).

    Reporting: ``submitted``, ``working``, ``artifact``, ``input_required``,
    ``auth_required``, ``complete``, ``fail``, ``reject``, ``cancel``; each status report
    may carry ``metadata``, which its update event carries and the task's metadata takes
    (merged). The task is created on the first report (a reply with only a message creates
    none); after a terminal report, further reports are ignored.
    """

    def __init__(
        self,
        handle: TaskHandle,
        invocation: Invocation,
        max_checkpoint_bytes: int = DEFAULT_MAX_CHECKPOINT_BYTES,
    ) -> None:
        self._handle = handle
        self._invocation = invocation
        self._artifact_id: str | None = None
        self._max_checkpoint_bytes = max_checkpoint_bytes
        self._stopping = False

    # --- what the agent reads ----------------------------------------------------------

    @property
    def stopping(self) -> bool:
        """Whether the server asked this agent to stop (a cancel of its task, a guard, the
        shutdown): a cancellation the agent sees from then on is the server's. One it
        sees before is of its own making (a timeout of its own, say)."""
        return self._stopping

    @property
    def message(self) -> Message:
        """The client's message."""
        return self._invocation.message

    @property
    def text(self) -> str:
        """The text parts of the client's message, joined by newlines (`Message.text`)."""
        return self.message.text

    @property
    def task_id(self) -> str:
        """The id of the task this message belongs to."""
        return self._invocation.task_id

    @property
    def context_id(self) -> str:
        """The conversation id."""
        return self._invocation.context_id

    @property
    def task(self) -> Task | None:
        """The task as it is now (``None`` until created, for a new task)."""
        writer = self._handle.writer
        if writer is not None:
            return writer.task
        return self._invocation.task

    @property
    def is_follow_up(self) -> bool:
        """The message continues an existing task."""
        return self._invocation.task is not None

    @property
    def metadata(self) -> Mapping[str, Any]:
        """Merged metadata (server, per request, call)."""
        return self._invocation.call.metadata

    @property
    def identity(self) -> Any:
        """The authenticated caller, or ``None`` (also on a recovered attempt: credentials
        are never stored with a task, so they do not outlive the call; see `owner`)."""
        return self._invocation.call.identity

    @property
    def owner(self) -> str:
        """The key of the caller who owns the task (``task_owner``'s answer; ``""`` when
        tasks are not owned): kept with the task, so every attempt sees it."""
        return self._invocation.owner

    @property
    def extensions(self) -> tuple[str, ...]:
        """Activated extension URIs."""
        return self._invocation.call.extensions

    @property
    def configuration(self) -> Any:
        """The client's send configuration (``SendMessageConfiguration`` or ``None``)."""
        return self._invocation.configuration

    @property
    def call(self) -> Any:
        """The validated call."""
        return self._invocation.call

    @property
    def attempt(self) -> int:
        """Which run of the agent for this message this is: 1, or more when the server
        recovered the task after losing the process that ran it (``retry``, ``resume``)."""
        return self._invocation.attempt

    @property
    def checkpoint_value(self) -> Any:
        """The last value the previous attempt gave `checkpoint` (a server recovering with
        ``resume``); ``None`` on the first attempt, or with no checkpoint."""
        return self._invocation.checkpoint

    async def checkpoint(self, value: Any) -> None:
        """Store ``value`` (small, JSON-able) durably with the task before returning, for a
        later attempt to resume from (`checkpoint_value`); each replaces the last.

        Raises `TypeError` for a value JSON cannot hold and
        `~a2a_core.server.CheckpointTooLargeError` past
        ``RecoveryPolicy.max_checkpoint_bytes``. The value is kept in the task's metadata
        (``a2a.checkpoint``), which the task's owner can read: keep secrets out of it.
        """
        stored = encode_checkpoint(value, self._max_checkpoint_bytes)
        writer = await self._handle.ensure()

        def with_checkpoint(task: Task) -> Task:
            return msgspec.structs.replace(task, metadata={**task.metadata, CHECKPOINT_KEY: stored})

        await writer.save_quietly(with_checkpoint)

    # --- how the agent reports ---------------------------------------------------------

    async def submitted(self) -> None:
        """Create the task now, as SUBMITTED, without reporting anything else (a follow-up:
        record the message; the state stays as it is). For an agent that must show the task
        before its first step, as a bridged framework announcing its task does."""
        await self._handle.ensure()

    async def working(
        self,
        message: str | Sequence[Part] | Part | Message | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The agent is working (optionally saying on what)."""
        await self._status(TaskState.WORKING, message, metadata)

    async def input_required(
        self,
        message: str | Sequence[Part] | Part | Message,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Ask the client for more input; the next message with this task id continues."""
        await self._status(TaskState.INPUT_REQUIRED, message, metadata)

    async def auth_required(
        self,
        message: str | Sequence[Part] | Part | Message,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The client must authenticate out-of-band before the task can go on."""
        await self._status(TaskState.AUTH_REQUIRED, message, metadata)

    async def complete(
        self,
        message: str | Sequence[Part] | Part | Message | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The task is done."""
        await self._status(TaskState.COMPLETED, message, metadata)

    async def fail(
        self,
        message: str | Sequence[Part] | Part | Message | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The task failed."""
        await self._status(TaskState.FAILED, message, metadata)

    async def reject(
        self,
        message: str | Sequence[Part] | Part | Message | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The agent refuses the task."""
        await self._status(TaskState.REJECTED, message, metadata)

    async def cancel(
        self,
        message: str | Sequence[Part] | Part | Message | None = None,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """The agent ends the task as canceled of its own accord (a client's cancel needs no
        call: the task is already CANCELED when the agent is stopped)."""
        await self._status(TaskState.CANCELED, message, metadata)

    async def artifact(
        self,
        content: str | Part | Sequence[Part] | Artifact,
        *,
        artifact_id: str | None = None,
        name: str = "",
        description: str = "",
        append: bool = False,
        last_chunk: bool = False,
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Add an artifact, or (``append=True``) a chunk of one; returns the artifact id."""
        if isinstance(content, Artifact):
            artifact = content
        else:
            artifact = new_artifact(content, artifact_id, name, description, metadata)
        writer = await self._handle.ensure()
        await writer.artifact(artifact, append=append, last_chunk=last_chunk)
        return artifact.artifact_id

    async def stream_chunk(self, content: str | Part | Sequence[Part]) -> None:
        """Append a chunk to this call's one streamed artifact (created on first use)."""
        if self._artifact_id is None:
            self._artifact_id = await self.artifact(content)
        else:
            await self.artifact(content, artifact_id=self._artifact_id, append=True)

    def agent_message(self, content: str | Sequence[Part] | Part | Message) -> Message:
        """A message from the agent in this task."""
        return agent_message(content, task_id=self.task_id, context_id=self.context_id)

    async def _status(
        self,
        state: TaskState,
        message: str | Sequence[Part] | Part | Message | None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        writer = await self._handle.ensure()
        agent_message = None if message is None else self.agent_message(message)
        await writer.status(state, agent_message, metadata)
