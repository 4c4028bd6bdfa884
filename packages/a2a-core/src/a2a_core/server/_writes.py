"""Every write of a task (L2): its creation, each change after, one change at a time.

A task comes into existence in one of three ways, all here: created by a new message
(SUBMITTED, the message in its history), continued by a follow-up message (recorded in the
history, the task moves to WORKING), or created already answered by an agent that returned
its result at once (one store write for the three events). :class:`TaskHandle` is the task
of one execution, created on first use by whichever comes first: the agent's first report
through its context, or the runtime.

Every change after that goes through the task's :class:`TaskWriter`: fold the event into the
task (the lifecycle table decides what is legal), append it to the event log, write the task
to the store, hand it to push delivery, wake whoever waits. The critical section is shielded
from cancellation, so cancelling an agent never leaves the log and the store disagreeing. A
task that reached a terminal state takes no more events: late ones are dropped (and logged),
which is how a cancel always wins over an agent that finishes late. An event that would take
the task over its limits (`limits`) is not written: the task fails instead, saying which
limit, and the report raises `TaskLimitError` so that the agent stops. Which road a write
takes (immediate, logged, general) is the backend's capability (see `storage`).

A task can also vanish from under its writer: a store that lost its data (a Redis flushed,
or restarted empty) answers a write with "not stored". That is no race to retry: the writer
says so once in the log (a warning, no traceback), drops the task's log so that its streams
end, tells its listeners (the execution cancels the agent, and a waiting request is answered
`TaskLostError`), and drops every later event, as for a terminal task.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
import msgspec

from a2a_core._protocol.errors import (
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core._protocol.lifecycle import apply_event, ends_wait
from a2a_core.server._events import EventLogClosedError, ImmediateEventLog
from a2a_core.server._idempotency import find_sent
from a2a_core.server._limits import TaskLimitError, TaskUsage
from a2a_core.server._messages import Invocation, agent_message, new_id, to_parts
from a2a_core.server._recovery import EXECUTION_KEY, epoch_of, for_follow_up
from a2a_core.server._storage import Storage
from a2a_core.server._store import (
    ConcurrentUpdateError,
    ImmediateTaskStore,
    StoredTask,
    TaskExistsError,
)
from a2a_core.server._sync import Signal
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

__all__ = ["TaskHandle", "TaskLostError", "TaskWriter", "new_artifact", "utc_now"]

logger = logging.getLogger("a2a_core.server")


class TaskLostError(InternalError):
    """The task store lost a task while it was being worked on (its data was flushed, or it
    restarted empty): a request that waited on the task gets this rather than a state of
    the task that no longer exists anywhere (-32603, HTTP 500)."""

    default_message = "The task store lost this task while it was being processed"


def utc_now() -> _dt.datetime:
    """Now, in UTC, to the millisecond (what the spec recommends for status timestamps)."""
    # From integer milliseconds: a third of the cost of now().replace(), and a float of
    # whole milliseconds always rounds back to the exact microsecond count.
    return _dt.datetime.fromtimestamp(time.time_ns() // 1_000_000 / 1000, _dt.UTC)


def new_artifact(
    content: str | Part | Sequence[Part],
    artifact_id: str | None = None,
    name: str = "",
    description: str = "",
    metadata: Mapping[str, Any] | None = None,
) -> Artifact:
    """An artifact of text, one part or several parts (a fresh id unless given)."""
    return Artifact(
        artifact_id=artifact_id or new_id(),
        name=name,
        description=description,
        parts=to_parts(content),
        metadata=dict(metadata) if metadata else {},
    )


class TaskWriter:
    """Serialises every change of one task (see the module docstring)."""

    def __init__(self, storage: Storage, stored: StoredTask) -> None:
        self._storage = storage
        self._stored = stored
        # fast_acquire: an uncontended emit, nearly all of them, takes the lock without a
        # trip through the event loop (the critical section is shielded anyway).
        # Created on first use: with an immediate store and log (the defaults) it never is.
        self._lock: anyio.Lock | None = None
        self._lost = False
        #: Set once the task reaches a state that ends a blocking wait (terminal or
        #: interrupted): the execution's ``settled``. A signal rather than a callback of the
        #: execution's, so that the writer holds nothing that refers back to it.
        self.settles: Signal | None = None
        #: Called once if the store loses the task (the execution watching it stops its
        #: agent); keep it quick. The execution clears it when it ends (no cycle is left).
        self.on_lost: Callable[[], None] | None = None
        # What the task holds as the limits count it, made on first use and kept up to date
        # by each event; valid while the stored version is `_usage_version`.
        self._usage: TaskUsage | None = None
        self._usage_version = -1
        #: The attempt (epoch) of the execution writing through this writer (0: none, a
        #: writer of the server's own, as a reaper's). A write that finds the task claimed
        #: by a later attempt is refused: this writer is fenced off (see ``_recovery``).
        self.epoch = 0

    @property
    def task(self) -> Task:
        """The task as last written."""
        return self._stored.task

    @property
    def stored(self) -> StoredTask:
        """The task with its version and last sequence number."""
        return self._stored

    @property
    def lost(self) -> bool:
        """Whether the store lost the task (see the module docstring): events are dropped."""
        return self._lost

    async def emit(
        self, event: StreamResponse, *, before: Callable[[Task], Task] | None = None
    ) -> bool:
        """Apply and record one event; ``False`` if dropped because the task is terminal.

        ``before`` transforms the task first, in the same write (a follow-up message goes
        into the history together with the status change it causes; it was admitted
        against the limits already). An event that would take the task over a limit
        fails the task instead and raises `TaskLimitError`.
        """
        if self._lost:
            return False
        if before is not None:
            self._usage = None  # what `before` adds is counted afresh at the next event
            return await self._record(event, before)
        version = self._stored.version
        reason = self._charge(event)
        if reason is not None:
            task = self._stored.task
            logger.warning("task %s failed: %s", task.id, reason)
            failed = TaskStatusUpdateEvent(
                task_id=task.id,
                context_id=task.context_id,
                status=TaskStatus(
                    state=TaskState.FAILED,
                    message=agent_message(reason, task_id=task.id, context_id=task.context_id),
                    timestamp=utc_now(),
                ),
            )
            await self._record(StreamResponse(status_update=failed), None)
            raise TaskLimitError(reason)
        emitted = await self._record(event, None)
        if self._stored.version == version + 1:
            self._usage_version = self._stored.version
        else:
            self._usage = None  # another writer came in between: count afresh
        return emitted

    def _charge(self, event: StreamResponse) -> str | None:
        """Count ``event`` against the limits; what to tell the client if it goes over."""
        stored = self._stored
        if stored.task.status.state in TERMINAL_STATES:
            return None  # dropped anyway
        status = event.status_update
        if status is not None and status.status.state in TERMINAL_STATES:
            return None  # the end of a task is never refused (see `TaskLimits`)
        usage = self._usage
        if usage is None or self._usage_version != stored.version:
            usage = self._usage = TaskUsage.of(stored.task)
            self._usage_version = stored.version
        return self._storage.limits.charge(usage, event, stored.last_seq)

    async def _record(self, event: StreamResponse, before: Callable[[Task], Task] | None) -> bool:
        """Apply and record one event (no limits: `emit` checked them)."""
        immediate = self._storage.immediate(self._stored.task.id)
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
        self._changed_to(updated, event)
        return True

    def _changed_to(self, updated: Task, event: StreamResponse) -> None:
        observer = self._storage.observer
        if observer is not None:
            observer.task_changed(updated, event)
        settles = self.settles
        if settles is not None and ends_wait(updated.status.state):
            settles.set()

    async def _emit_locked(
        self, event: StreamResponse, before: Callable[[Task], Task] | None
    ) -> bool:
        storage = self._storage
        attempts = 3
        while True:
            if self._lost:  # found out by the write this one waited for
                return False
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
                fresh = await storage.store.get(current.id)
                if fresh is None:
                    return await self._vanished()
                if fresh.task.status.state not in TERMINAL_STATES:
                    raise
                self._stored = fresh
            except ConcurrentUpdateError:
                # Another writer (another replica) got there first: re-read and re-apply.
                attempts -= 1
                fresh = await storage.store.get(current.id)
                if fresh is None:
                    return await self._vanished()
                if self._superseded(fresh):
                    return self._fenced(fresh)
                if attempts == 0:
                    raise
                self._stored = fresh
        if updated.status.state in TERMINAL_STATES:
            await storage.events.close(updated.id)
        await storage.notify_push(updated, event)
        self._changed_to(updated, event)
        return True

    def _superseded(self, fresh: StoredTask) -> bool:
        """Whether a later attempt claimed the task since this writer's execution began."""
        return self.epoch != 0 and epoch_of(fresh.task) != self.epoch

    def _fenced(self, fresh: StoredTask) -> bool:
        """This writer's execution was taken over (its process lost its lease while paused
        or cut off, and another replica runs the next attempt): it writes nothing more, and
        its agent is stopped. Returns ``False``: the event is dropped."""
        self._lost = True
        self._stored = fresh
        if self.on_lost is None:
            # Not an execution's writer: a recovery's claim that another replica won.
            logger.debug("task %s: epoch %d claimed elsewhere", fresh.task.id, self.epoch + 1)
            return False
        logger.warning(
            "task %s: epoch %d was taken over by epoch %d elsewhere; this execution "
            "writes nothing more and its agent is stopped",
            fresh.task.id,
            self.epoch,
            epoch_of(fresh.task),
        )
        self.on_lost()
        return False

    def release(self) -> None:
        """Write nothing more through this writer: its execution is handed off to another
        replica (a clean stop under a recovering policy), which writes from now on."""
        self._lost = True

    async def save_quietly(self, change: Callable[[Task], Task]) -> bool:
        """Store ``change(task)`` with no event (a checkpoint: nothing for callers to see),
        fenced as every write; ``False`` if nothing was written (the task is terminal,
        lost, or taken over by a later attempt)."""
        storage = self._storage
        if self._lock is None:
            self._lock = anyio.Lock(fast_acquire=True)
        with anyio.CancelScope(shield=True):
            async with self._lock:
                for _ in range(3):
                    stored = self._stored
                    if self._lost or stored.task.status.state in TERMINAL_STATES:
                        return False
                    try:
                        self._stored = await storage.store.save(
                            change(stored.task),
                            expected_version=stored.version,
                            last_seq=stored.last_seq,
                        )
                        return True
                    except ConcurrentUpdateError:
                        fresh = await storage.store.get(stored.task.id)
                        if fresh is None:
                            return await self._vanished()
                        if self._superseded(fresh):
                            return self._fenced(fresh)
                        self._stored = fresh
        raise ConcurrentUpdateError(f"task {self._stored.task.id} kept changing")

    async def _vanished(self) -> bool:
        """The store no longer has the task (see the module docstring); returns ``False``:
        the event is dropped."""
        self._lost = True
        task_id = self._stored.task.id
        logger.warning(
            "task %s vanished from the task store while it was being written (did the store "
            "lose its data?): its events are dropped from now on",
            task_id,
        )
        try:
            await self._storage.events.forget(task_id)  # its streams end now
        except Exception:
            logger.debug("could not drop the event log of lost task %s", task_id, exc_info=True)
        if self.on_lost is not None:
            self.on_lost()
        return False

    async def _write(self, updated: Task, event: StreamResponse) -> StoredTask:
        """Log the event and store the task: in one step when the store keeps the log."""
        storage = self._storage
        version = self._stored.version
        logged = storage.logged_store
        if logged is not None:
            return await logged.save_logged(updated, event, expected_version=version)
        seq = await storage.events.append(updated.id, event)
        return await storage.store.save(updated, expected_version=version, last_seq=seq)

    async def artifact(
        self, artifact: Artifact, *, append: bool = False, last_chunk: bool = False
    ) -> bool:
        """Add ``artifact`` to the task, or (``append``) a chunk to the artifact of its id."""
        task = self._stored.task
        update = TaskArtifactUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            artifact=artifact,
            append=append,
            last_chunk=last_chunk,
        )
        return await self.emit(StreamResponse(artifact_update=update))

    async def status(
        self,
        state: TaskState,
        message: Message | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> bool:
        """Move the task to ``state`` (with an optional status message, and metadata that
        the update carries and the task's metadata takes)."""
        task = self._stored.task
        status = TaskStatus(state=state, message=message, timestamp=utc_now())
        if metadata:
            update = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=status, metadata=dict(metadata)
            )
        else:
            update = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=status
            )
        return await self.emit(StreamResponse(status_update=update))

    async def cancel(self) -> Task:
        """Move the task to CANCELED; -32002 if it already is terminal, -32001 if the store
        lost it."""
        task = self._stored.task
        update = TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            status=TaskStatus(state=TaskState.CANCELED, timestamp=utc_now()),
        )
        if not await self.emit(StreamResponse(status_update=update)):
            if self._lost:
                raise TaskNotFoundError(metadata={"taskId": task.id[:128]})
            raise TaskNotCancelableError(
                f"Task is {self._stored.task.status.state.value} and cannot be canceled"
            )
        return self._stored.task


class TaskHandle:
    """The task of one execution, created on first use (see the module docstring)."""

    def __init__(self, storage: Storage, invocation: Invocation) -> None:
        self._storage = storage
        self._invocation = invocation
        #: The task's writer, once the task exists.
        self.writer: TaskWriter | None = None
        #: Called once with the writer when the task comes into existence (the execution
        #: watches it to know when a blocking request may return).
        self.on_created: Callable[[TaskWriter], None] | None = None
        #: Whether a creation was begun: in flight, done, or failed. A stream whose agent is
        #: quiet creates the task from the request's task while the agent may report at the
        #: same time; the second `ensure` waits for the first (see `_creation`).
        self.begun = False
        #: Set when a creation in flight ends (made only when a second caller waits).
        self._ended: anyio.Event | None = None
        #: What the creation raised (it wrote nothing): a later `ensure` raises it too
        #: (the agent's run then reports it as if it had met it itself).
        self._failure: BaseException | None = None

    async def ensure(self) -> TaskWriter:
        """The task's writer, creating the task (or recording the follow-up) first if needed."""
        writer = self.writer
        if writer is None:
            writer, _ = await self._creation()
        return writer

    async def _creation(self, answer: Artifact | None = None) -> tuple[TaskWriter, bool]:
        """Create the task once, whoever asks first (the agent, or the stream of a quiet
        agent): a second caller waits for the first and shares its outcome. With
        ``answer``, the task is created already completed with it where the store can (one
        batch); returns the writer and whether that happened."""
        while self.begun:
            if self.writer is not None:
                return self.writer, False
            if self._failure is not None:
                raise self._failure
            if self._ended is None:
                self._ended = anyio.Event()
            await self._ended.wait()
        self.begun = True
        storage, invocation = self._storage, self._invocation
        try:
            # Whole or not at all: a creation cut by a cancel could have written the task
            # (or recorded the follow-up) with nobody knowing it, and a retry would write it
            # again.
            with anyio.CancelScope(shield=True):
                stored = None
                if answer is not None:
                    try:
                        stored = await _create_answered_batch(storage, invocation, answer)
                    except InvalidParamsError:
                        # The store cannot hold the answer (and wrote nothing): the general
                        # path creates the task, then fails it on the artifact.
                        stored = None
                if stored is not None:
                    writer = TaskWriter(storage, stored)
                elif invocation.task is None:
                    writer = await _create(storage, invocation)
                else:
                    writer = await _follow_up(storage, invocation)
            self._created(writer)
        except BaseException as exc:
            self._failure = exc
            raise
        finally:
            ended, self._ended = self._ended, None
            if ended is not None:
                ended.set()
        return writer, stored is not None

    async def answer(self, content: str | Part | Sequence[Part] | Artifact) -> None:
        """Complete the task with ``content`` as its artifact (what an agent returning
        ``content`` asks for)."""
        artifact = content if isinstance(content, Artifact) else new_artifact(content)
        if not self.begun:
            # The in-memory store creates the answered task at once, with no await: nobody
            # can begin a creation meanwhile.
            store = _create_answered(self._storage, self._invocation, artifact)
            if store is not None:
                self._created(TaskWriter(self._storage, store[1]))
                if store[0].evictions_pending:
                    await store[0].notify_evicted()
                return
            writer, answered = await self._creation(artifact)
            if answered:
                return
        else:
            writer = await self.ensure()
        if writer.task.status.state not in TERMINAL_STATES:
            await writer.artifact(artifact)
            await writer.status(TaskState.COMPLETED)

    def adopt(self, writer: TaskWriter) -> None:
        """Work on a task that exists already, through ``writer`` (a recovered attempt,
        whose claim wrote the task)."""
        self._created(writer)

    def _created(self, writer: TaskWriter) -> None:
        self.writer = writer
        self.begun = True
        if self.on_created is not None:
            self.on_created(writer)


async def _create(storage: Storage, invocation: Invocation) -> TaskWriter:
    """Create the task of a new message: SUBMITTED, the message in its history."""
    task = Task(
        id=invocation.task_id,
        context_id=invocation.context_id,
        status=TaskStatus(state=TaskState.SUBMITTED, timestamp=utc_now()),
        history=[invocation.message],
    )
    if storage.carry_trace:
        # A later attempt, on any replica, joins this execution's trace (``_recovery``).
        trace = storage.trace_to_record()
        if trace is not None:
            task = msgspec.structs.replace(task, metadata={EXECUTION_KEY: {"trace": trace}})
    tenant, owner = invocation.call.tenant, invocation.owner
    config = invocation.configuration
    immediate = storage.immediate(task.id)
    if immediate is not None and (config is None or config.task_push_notification_config is None):
        store, log = immediate
        seq = log.append_now(task.id, StreamResponse(task=task))
        stored = store.create_now(task, tenant=tenant, owner=owner, last_seq=seq)
        if storage.observer is not None:
            storage.observer.task_changed(task, StreamResponse(task=task))
        if store.evictions_pending:
            await store.notify_evicted()
        return TaskWriter(storage, stored)
    with anyio.CancelScope(shield=True):
        logged = storage.logged_store
        if logged is not None:
            stored = await logged.create_logged(
                task, StreamResponse(task=task), tenant=tenant, owner=owner
            )
        else:
            seq = await storage.events.append(task.id, StreamResponse(task=task))
            stored = await storage.store.create(task, tenant=tenant, owner=owner, last_seq=seq)
        await storage.register_push(invocation)
    if storage.observer is not None:
        storage.observer.task_changed(task, StreamResponse(task=task))
    return TaskWriter(storage, stored)


async def _follow_up(storage: Storage, invocation: Invocation) -> TaskWriter:
    """Record a follow-up message on its task, which moves to WORKING."""
    existing = await storage.store.get(invocation.task_id)
    if existing is None:  # evicted between the check and now
        raise UnsupportedOperationError("The task is no longer available")
    writer = TaskWriter(storage, existing)
    message = invocation.message
    idempotent = invocation.idempotent
    trace = storage.trace_to_record() if storage.carry_trace else None

    def record_message(task: Task) -> Task:
        if idempotent and find_sent(task, message):
            # A copy of this follow-up (on another replica) recorded it first: this one is
            # answered with what that one started (``Execution.duplicate``).
            raise TaskExistsError(task.id)
        task = for_follow_up(task, trace)  # attempts afresh, old checkpoint dropped
        history = list(task.history)
        if task.status.message is not None:
            history.append(task.status.message)  # the question before its answer
        history.append(message)
        status = msgspec.structs.replace(task.status, message=None)
        return msgspec.structs.replace(task, history=history, status=status)

    update = TaskStatusUpdateEvent(
        task_id=existing.task.id,
        context_id=existing.task.context_id,
        status=TaskStatus(state=TaskState.WORKING, timestamp=utc_now()),
    )
    await writer.emit(StreamResponse(status_update=update), before=record_message)
    await storage.register_push(invocation)
    return writer


def _answered(
    storage: Storage, invocation: Invocation, artifact: Artifact
) -> tuple[Task, tuple[StreamResponse, ...]] | None:
    """A new task already answered with ``artifact`` (its final state) and the three events
    of its log (the task, submitted; its artifact; completed), as the general path would
    write them; ``None`` when the general path is needed: a follow-up, a webhook, an
    artifact over the limits (the general path fails the task then)."""
    config = invocation.configuration
    if invocation.task is not None or (
        config is not None and config.task_push_notification_config is not None
    ):
        return None
    if not storage.limits.fits_answer(invocation.message, artifact):
        return None
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
                task_id=task.id, context_id=task.context_id, status=completed
            )
        ),
    )
    # What folding the two events in gives (SUBMITTED -> COMPLETED is always legal).
    return msgspec.structs.replace(task, status=completed, artifacts=[artifact]), events


def _create_answered(
    storage: Storage, invocation: Invocation, artifact: Artifact
) -> tuple[ImmediateTaskStore, StoredTask] | None:
    """Create a new task already answered with ``artifact``, in one store write; ``None``
    when the store, the log or a webhook need the general path (see `_answered`).

    The log gets the same three events as on the general path, but the store is written
    once instead of three times. Nothing can tell the difference: the general path would
    not suspend in between either, so no reader could see the intermediate states.
    """
    immediate = storage.immediate(invocation.task_id)
    if immediate is None:
        return None
    answered = _answered(storage, invocation, artifact)
    if answered is None:
        return None
    store, log = immediate
    task, events = answered
    log_closed = storage.log_closed
    if log_closed is not None:
        seq = log_closed(task.id, events)
    else:
        seq = 0
        for event in events:
            seq = log.append_now(task.id, event)
        log.close_now(task.id)
    stored = store.create_now(
        task, tenant=invocation.call.tenant, owner=invocation.owner, last_seq=seq
    )
    observer = storage.observer
    if observer is not None:
        observer.task_changed(task, events[0])
        observer.task_changed(task, events[1])
        observer.task_changed(task, events[2])
    return store, stored


async def _create_answered_batch(
    storage: Storage, invocation: Invocation, artifact: Artifact
) -> StoredTask | None:
    """`_create_answered` for a networked store that creates a task with several events in
    one step (``BatchLoggedTaskStore``): one round trip instead of three. No reader can
    see the task before it exists, so none could have seen the states in between."""
    batch = storage.batch_store
    if batch is None:
        return None
    answered = _answered(storage, invocation, artifact)
    if answered is None:
        return None
    task, events = answered
    with anyio.CancelScope(shield=True):
        stored = await batch.create_logged_many(
            task, events, tenant=invocation.call.tenant, owner=invocation.owner
        )
        await storage.events.close(task.id)
    return stored
