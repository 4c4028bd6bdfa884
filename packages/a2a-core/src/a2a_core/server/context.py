"""One task's writer and the context an agent drives it with (L2).

Every change to a task goes through its :class:`TaskWriter`, one change at a time: fold the
event into the task (the lifecycle table decides what is legal), append it to the event log,
write the task to the store, hand it to push delivery, wake whoever waits. The critical
section is shielded from cancellation, so cancelling an agent never leaves the log and the
store disagreeing. A task that reached a terminal state takes no more events: late ones are
dropped (and logged), which is how a cancel always wins over an agent that finishes late.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import msgspec

from a2a_core.errors import TaskNotCancelableError
from a2a_core.lifecycle import apply_event
from a2a_core.server._sync import Signal
from a2a_core.server.agent import Invocation, agent_message, new_id, to_parts
from a2a_core.server.events import EventLogClosedError, ImmediateEventLog
from a2a_core.server.store import ConcurrentUpdateError, ImmediateTaskStore, StoredTask
from a2a_core.types import (
    TERMINAL_STATES,
    Artifact,
    Message,
    Part,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

if TYPE_CHECKING:
    from a2a_core.server.runtime import Runtime

__all__ = ["TaskContext", "TaskWriter", "utc_now"]

logger = logging.getLogger("a2a_core.server")


def utc_now() -> _dt.datetime:
    """Now, in UTC, to the millisecond (what the spec recommends for status timestamps)."""
    # From integer milliseconds: a third of the cost of now().replace(), and a float of
    # whole milliseconds always rounds back to the exact microsecond count.
    return _dt.datetime.fromtimestamp(time.time_ns() // 1_000_000 / 1000, _dt.UTC)


class TaskWriter:
    """Serialises every change of one task (see the module docstring)."""

    def __init__(self, runtime: Runtime, stored: StoredTask) -> None:
        self._runtime = runtime
        self._stored = stored
        # fast_acquire: an uncontended emit, nearly all of them, takes the lock without a
        # trip through the event loop (the critical section is shielded anyway).
        # Created on first use: with an immediate store and log (the defaults) it never is.
        self._lock: anyio.Lock | None = None
        self._changed = Signal()
        self._listeners: list[Callable[[Task], None]] = []

    @property
    def task(self) -> Task:
        """The task as last written."""
        return self._stored.task

    @property
    def stored(self) -> StoredTask:
        """The task with its version and last sequence number."""
        return self._stored

    def on_change(self, listener: Callable[[Task], None]) -> None:
        """Call ``listener(task)`` after every change (in the writer's task; keep it quick)."""
        self._listeners.append(listener)

    async def wait_changed(self) -> None:
        """Wait for the next change."""
        await self._changed.wait()

    async def emit(
        self, event: StreamResponse, *, before: Callable[[Task], Task] | None = None
    ) -> bool:
        """Apply and record one event; ``False`` if dropped because the task is terminal.

        ``before`` transforms the task first, in the same write (a follow-up message goes
        into the history together with the status change it causes).
        """
        immediate = self._runtime.immediate(self._stored.task.id)
        lock = self._lock
        if immediate is not None and (lock is None or not lock.locked()):
            # Nothing below suspends, so nothing can interleave: no lock, no shield.
            store, log = immediate
            try:
                emitted = self._emit_now(event, before, store, log)
            except (ConcurrentUpdateError, EventLogClosedError):
                pass  # another writer got there first: the general path below sorts it out
            else:
                if store.evictions_pending:
                    await store.notify_evicted()
                return emitted
        emitted = False
        if lock is None:
            lock = self._lock = anyio.Lock(fast_acquire=True)
        with anyio.CancelScope(shield=True):
            async with lock:
                emitted = await self._emit_locked(event, before)
        return emitted

    def _emit_now(
        self,
        event: StreamResponse,
        before: Callable[[Task], Task] | None,
        store: ImmediateTaskStore,
        log: ImmediateEventLog,
    ) -> bool:
        current = self._stored.task
        if current.status.state in TERMINAL_STATES:
            logger.debug("dropped an event for terminal task %s", current.id)
            return False
        updated = apply_event(before(current) if before else current, event)
        seq = log.append_now(updated.id, event)
        self._stored = store.save_now(updated, expected_version=self._stored.version, last_seq=seq)
        if updated.status.state in TERMINAL_STATES:
            log.close_now(updated.id)
        self._changed_to(updated)
        return True

    def _changed_to(self, updated: Task) -> None:
        changed, self._changed = self._changed, Signal()
        changed.set()
        for listener in self._listeners:
            listener(updated)

    async def _emit_locked(
        self, event: StreamResponse, before: Callable[[Task], Task] | None
    ) -> bool:
        runtime = self._runtime
        attempts = 3
        while True:
            current = self._stored.task
            if current.status.state in TERMINAL_STATES:
                logger.debug("dropped an event for terminal task %s", current.id)
                return False
            updated = apply_event(before(current) if before else current, event)
            try:
                self._stored = await self._write(updated, event)
                break
            except EventLogClosedError:
                # The log is closed: with a shared store, another writer (a cancel on
                # another replica) finished the task since we read it. Drop the event then.
                fresh = await runtime.store.get(current.id)
                if fresh is None or fresh.task.status.state not in TERMINAL_STATES:
                    raise
                self._stored = fresh
            except ConcurrentUpdateError:
                # Another writer (another replica) got there first: re-read and re-apply.
                attempts -= 1
                fresh = await runtime.store.get(current.id)
                if fresh is None or attempts == 0:
                    raise
                self._stored = fresh
        if updated.status.state in TERMINAL_STATES:
            await runtime.events.close(updated.id)
        await runtime.notify_push(updated, event)
        self._changed_to(updated)
        return True

    async def _write(self, updated: Task, event: StreamResponse) -> StoredTask:
        """Log the event and store the task: in one step when the store keeps the log."""
        runtime = self._runtime
        version = self._stored.version
        logged = runtime.logged_store
        if logged is not None:
            return await logged.save_logged(updated, event, expected_version=version)
        seq = await runtime.events.append(updated.id, event)
        return await runtime.store.save(updated, expected_version=version, last_seq=seq)

    async def status(self, state: TaskState, message: Message | None = None) -> bool:
        """Move the task to ``state`` (with an optional status message)."""
        task = self._stored.task
        update = TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            status=TaskStatus(state=state, message=message, timestamp=utc_now()),
        )
        return await self.emit(StreamResponse(status_update=update))

    async def cancel(self) -> Task:
        """Move the task to CANCELED; -32002 if it already is terminal."""
        task = self._stored.task
        update = TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            status=TaskStatus(state=TaskState.CANCELED, timestamp=utc_now()),
        )
        if not await self.emit(StreamResponse(status_update=update)):
            raise TaskNotCancelableError(
                f"Task is {self._stored.task.status.state.value} and cannot be canceled"
            )
        return self._stored.task


class TaskContext:
    """What an agent sees of the call it handles, and how it reports progress.

    Reading: ``message`` (the client's message), ``text`` (its text parts joined),
    ``task_id``, ``context_id``, ``task`` (the task before this message, for a follow-up),
    ``metadata`` (server, per-request and call metadata merged), ``identity``, ``extensions``
    (activated URIs), ``configuration``, ``call``.

    Reporting: ``working``, ``artifact``, ``input_required``, ``auth_required``,
    ``complete``, ``fail``, ``reject``. The task is created on the first report (a reply
    with only a message creates none); after a terminal report, further reports are ignored.
    """

    def __init__(self, runtime: Runtime, invocation: Invocation) -> None:
        self._runtime = runtime
        self._invocation = invocation
        self._writer: TaskWriter | None = None
        self._materialized = Signal()
        self._artifact_id: str | None = None
        #: Called once with the writer when the task comes into existence (the runtime
        #: watches it to know when a blocking request may return).
        self.on_materialized: Callable[[TaskWriter], None] | None = None

    # --- what the agent reads ----------------------------------------------------------

    @property
    def message(self) -> Message:
        """The client's message."""
        return self._invocation.message

    @property
    def text(self) -> str:
        """The text parts of the client's message, joined by newlines."""
        parts = self.message.parts
        if len(parts) == 1:  # the usual message: no generator to join
            text = parts[0].text
            return text if isinstance(text, str) else ""
        return "\n".join(p.text for p in parts if isinstance(p.text, str))

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
        if self._writer is not None:
            return self._writer.task
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
        """The authenticated caller, or ``None``."""
        return self._invocation.call.identity

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

    # --- how the agent reports ---------------------------------------------------------

    async def working(self, message: str | Sequence[Part] | Part | Message | None = None) -> None:
        """The agent is working (optionally saying on what)."""
        await self._status(TaskState.WORKING, message)

    async def input_required(self, message: str | Sequence[Part] | Part | Message) -> None:
        """Ask the client for more input; the next message with this task id continues."""
        await self._status(TaskState.INPUT_REQUIRED, message)

    async def auth_required(self, message: str | Sequence[Part] | Part | Message) -> None:
        """The client must authenticate out-of-band before the task can go on."""
        await self._status(TaskState.AUTH_REQUIRED, message)

    async def complete(self, message: str | Sequence[Part] | Part | Message | None = None) -> None:
        """The task is done."""
        await self._status(TaskState.COMPLETED, message)

    async def fail(self, message: str | Sequence[Part] | Part | Message | None = None) -> None:
        """The task failed."""
        await self._status(TaskState.FAILED, message)

    async def reject(self, message: str | Sequence[Part] | Part | Message | None = None) -> None:
        """The agent refuses the task."""
        await self._status(TaskState.REJECTED, message)

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
            artifact = _new_artifact(content, artifact_id, name, description, metadata)
        writer = await self._ensure_task()
        task = writer.task
        update = TaskArtifactUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
        )
        await writer.emit(StreamResponse(artifact_update=update))
        return artifact.artifact_id

    async def _answer(self, content: str | Part | Sequence[Part] | Artifact) -> None:
        """Complete the task with ``content`` as its artifact: what an agent returning
        ``content`` does (the runtime calls it; agents return their result)."""
        if self._writer is None:
            store = self._answer_new_task(content)
            if store is not None:
                if store.evictions_pending:
                    await store.notify_evicted()
                return
        writer = await self._ensure_task()
        if writer.task.status.state not in TERMINAL_STATES:
            await self.artifact(content)
            await self.complete()

    def _answer_new_task(
        self, content: str | Part | Sequence[Part] | Artifact
    ) -> ImmediateTaskStore | None:
        """Create a new task already answered, in one store write, and return the store;
        ``None`` when the store, the log or a webhook need the general path.

        The log gets the same three events as on the general path (the task, submitted;
        its artifact; completed), but the store is written once instead of three times.
        Nothing can tell the difference: the general path would not suspend in between
        either, so no reader could see the intermediate states.
        """
        runtime = self._runtime
        invocation = self._invocation
        config = invocation.configuration
        if invocation.task is not None or (
            config is not None and config.task_push_notification_config is not None
        ):
            return None
        immediate = runtime.immediate(invocation.task_id)
        if immediate is None:
            return None
        store, log = immediate
        artifact = content if isinstance(content, Artifact) else _new_artifact(content)
        now = utc_now()
        task = Task(
            id=invocation.task_id,
            context_id=invocation.context_id,
            status=TaskStatus(state=TaskState.SUBMITTED, timestamp=now),
            history=[invocation.message],
        )
        completed = TaskStatus(state=TaskState.COMPLETED, timestamp=now)
        events = (
            StreamResponse(task=task),
            StreamResponse(
                artifact_update=TaskArtifactUpdateEvent(
                    task_id=task.id, context_id=task.context_id, artifact=artifact
                )
            ),
            StreamResponse(
                status_update=TaskStatusUpdateEvent(
                    task_id=task.id,
                    context_id=task.context_id,
                    status=completed,
                )
            ),
        )
        # What folding the two events in gives (SUBMITTED -> COMPLETED is always legal).
        task = msgspec.structs.replace(task, status=completed, artifacts=[artifact])
        seq = 0
        for event in events:
            seq = log.append_now(task.id, event)
        stored = store.create_now(task, tenant=invocation.call.tenant, last_seq=seq)
        log.close_now(task.id)
        self._materialize(TaskWriter(runtime, stored))
        return store

    async def stream_chunk(self, content: str | Part | Sequence[Part]) -> None:
        """Append a chunk to this call's one streamed artifact (created on first use)."""
        if self._artifact_id is None:
            self._artifact_id = await self.artifact(content)
        else:
            await self.artifact(content, artifact_id=self._artifact_id, append=True)

    # --- runtime internals -------------------------------------------------------------

    @property
    def writer(self) -> TaskWriter | None:
        """The task's writer, once the task exists."""
        return self._writer

    async def wait_materialized(self) -> None:
        """Wait until the task exists."""
        await self._materialized.wait()

    def agent_message(self, content: str | Sequence[Part] | Part | Message) -> Message:
        """A message from the agent in this task."""
        return agent_message(content, task_id=self.task_id, context_id=self.context_id)

    async def _status(
        self, state: TaskState, message: str | Sequence[Part] | Part | Message | None
    ) -> None:
        writer = await self._ensure_task()
        await writer.status(state, None if message is None else self.agent_message(message))

    async def _ensure_task(self) -> TaskWriter:
        if self._writer is None:
            self._materialize(await self._runtime.materialize(self._invocation))
            assert self._writer is not None
        return self._writer

    def _materialize(self, writer: TaskWriter) -> None:
        self._writer = writer
        self._materialized.set()
        if self.on_materialized is not None:
            self.on_materialized(writer)


def _new_artifact(
    content: str | Part | Sequence[Part],
    artifact_id: str | None = None,
    name: str = "",
    description: str = "",
    metadata: Mapping[str, Any] | None = None,
) -> Artifact:
    return Artifact(
        artifact_id=artifact_id or new_id(),
        name=name,
        description=description,
        parts=to_parts(content),
        metadata=dict(metadata) if metadata else {},
    )
