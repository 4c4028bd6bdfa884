"""Recovering a lost execution (L2): claim the next attempt, then run it here.

A backend that finds a running task whose process is gone (a lease that ran out, its own
previous run at a restart, an execution handed off by a clean stop) calls
`A2AServer.recover_task`, which lands here. Under ``fail`` the task is failed as before;
under ``retry`` and ``resume`` the next attempt is **claimed** by one compare-and-set write
of the task: a WORKING status update whose message says which attempt starts and why, and
whose metadata (``a2a.execution``) raises the attempt. Exactly one replica wins that write
(the writer is fenced at the attempt it read); the winner runs the agent again for the
client's last message, as a follow-up of the task as it stands, with the previous attempt's
checkpoint under ``resume``. What happens if this process dies:

- before the claim: the task is untouched and still the lost runner's; the next look
  (another replica's reaper, the next start) claims it;
- after the claim, before or while the agent runs: the task is this replica's, running,
  and its lease covers it; this replica's loss is recovered the same way, one attempt on.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from a2a_core._protocol.call import TENANT_METADATA_KEY, Call
from a2a_core._protocol.operations import Operation
from a2a_core.server._background import Background
from a2a_core.server._guards import Guards
from a2a_core.server._messages import Invocation, agent_message
from a2a_core.server._recovery import (
    EXECUTION_KEY,
    Recovery,
    RecoveryPolicy,
    checkpoint_of,
    execution_record,
    message_to_rerun,
    trace_of,
)
from a2a_core.server._runtime import Execution, Runtime
from a2a_core.server._storage import Storage
from a2a_core.server._store import StoredTask
from a2a_core.server._writes import TaskWriter, utc_now
from a2a_core.server.observe import observe_attempt, report_recovery
from a2a_core.types import (
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = ["GAVE_UP_TEXT", "Recoverer"]

logger = logging.getLogger("a2a_core.server")

#: Added to the reason when the last allowed attempt was lost too.
GAVE_UP_TEXT: Final = "The task was failed after {attempts} attempt(s) lost (the server's limit)."
#: The states of a task whose execution may be lost (others are interrupted or final).
_RUNNING: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


class _MovedOnError(Exception):
    """The task is no longer running: its execution was not lost after all."""


class Recoverer:
    """One server's recovery of lost executions (see the module docstring)."""

    def __init__(
        self, policy: RecoveryPolicy, runtime: Runtime, storage: Storage, guards: Guards
    ) -> None:
        self.policy = policy
        self._runtime = runtime
        self._storage = storage
        self._guards = guards
        #: Where executions run (set while the server runs; ``None`` before it started).
        self.background: Background | None = None
        #: Attempts claimed before the server ran (a backend's restart rule runs as its
        #: service starts): started with the server (`start_waiting`).
        self._waiting: list[tuple[Invocation, TaskWriter, dict[str, str]]] = []
        #: What happened, for tests and metrics: claimed, failed, gave_up.
        self.counts: dict[str, int] = {"claimed": 0, "failed": 0, "gave_up": 0}
        #: Whether lost executions are claimed here: not once the server is stopping (its
        #: attempts would be cut short; a live replica, or the next start, takes them).
        self.accepting = True

    async def recover(
        self, task_id: str, reason: str, *, lost: bool, fail_text: str | None = None
    ) -> bool:
        """Claim and start the next attempt of ``task_id`` (or fail it: under ``fail``, or
        past ``max_attempts``); ``False`` when there was nothing to do here (the task ended,
        moved on, runs here, another replica claimed it first, or this server is stopping
        and leaves it to another)."""
        if task_id in self._runtime.executions or not self.accepting:
            return False  # it runs here: not lost; or stopping: a live replica takes it
        stored = await self._storage.store.get(task_id)
        if stored is None or stored.task.status.state not in _RUNNING:
            return False
        record = execution_record(stored.task)
        writer = TaskWriter(self._storage, stored)
        writer.epoch = record.epoch  # the claim is fenced at the epoch read
        losses = record.lost + (1 if lost else 0)
        message = message_to_rerun(stored.task)
        if not self.policy.recovers or message is None or losses >= self.policy.max_attempts:
            text = fail_text or reason
            outcome = "failed"
            if self.policy.recovers:
                text = f"{text} {GAVE_UP_TEXT.format(attempts=losses)}"
                outcome = "gave_up"
            failed = await self._claim(writer, TaskState.FAILED, text, None)
            if failed:
                self.counts[outcome] = self.counts.get(outcome, 0) + 1
                self._report(task_id, outcome, record.attempt)
            return failed
        attempt, epoch = record.attempt + 1, record.epoch + 1
        next_record: dict[str, Any] = {"attempt": attempt, "lost": losses, "epoch": epoch}
        trace = trace_of(stored.task)
        if trace:
            next_record["trace"] = trace  # every attempt joins the first one's trace
        claimed = await self._claim(
            writer,
            TaskState.WORKING,
            f"Attempt {attempt} starts: {reason}",
            {EXECUTION_KEY: next_record},
        )
        if not claimed:
            return False  # another replica claimed it, or it moved on meanwhile
        self.counts["claimed"] += 1
        logger.info("task %s: attempt %d claimed here (%s)", task_id, attempt, reason)
        resumed = self.policy.mode is Recovery.RESUME
        self._report(task_id, "resumed" if resumed else "retried", attempt)
        self._start(self._invocation(writer.stored, message, attempt, epoch), writer, trace)
        return True

    async def _claim(
        self,
        writer: TaskWriter,
        state: TaskState,
        text: str,
        metadata: dict[str, Any] | None,
    ) -> bool:
        """One write of the lost execution's task, applied only while the task is still
        running at the epoch read: a task that moved on meanwhile (its runner was only
        slow: it answered, or asked for input) is left alone."""
        task = writer.task
        update = TaskStatusUpdateEvent(
            task_id=task.id,
            context_id=task.context_id,
            status=TaskStatus(
                state=state,
                message=agent_message(text, task_id=task.id, context_id=task.context_id),
                timestamp=utc_now(),
            ),
            metadata=metadata or {},
        )

        def still_running(current: Task) -> Task:
            if current.status.state not in _RUNNING:
                raise _MovedOnError
            return current

        try:
            return await writer.emit(StreamResponse(status_update=update), before=still_running)
        except _MovedOnError:
            return False

    def _report(self, task_id: str, outcome: str, attempt: int) -> None:
        observer = self._storage.observer
        if observer is not None:
            report_recovery(observer, task_id, outcome, attempt)

    def start_waiting(self, background: Background) -> None:
        """Start the attempts claimed before the server ran."""
        self.background = background
        waiting, self._waiting = self._waiting, []
        for invocation, writer, trace in waiting:
            self._start(invocation, writer, trace)

    def _start(self, invocation: Invocation, writer: TaskWriter, trace: dict[str, str]) -> None:
        background = self.background
        if background is None:
            self._waiting.append((invocation, writer, trace))
            return
        execution = Execution(self._runtime, invocation, create_first=False, loop=background.loop)
        execution.task.adopt(writer)
        observer = self._storage.observer
        if observer is not None:
            # No call started this run: the observer is asked for it directly, and a
            # tracer continues the trace the task recorded.
            execution.observation = observe_attempt(observer, invocation, trace)
        self._guards.admit(execution, recovered=True)
        self._runtime.register(execution)
        background.start(execution)

    def _invocation(self, stored: StoredTask, message: Any, attempt: int, epoch: int) -> Invocation:
        """What the next attempt is asked: the client's last message, on the task as it
        stands. The original call is gone with its process: the attempt sees no identity
        and no call metadata, only the tenant."""
        task = stored.task
        tenant = stored.tenant
        call = Call(
            operation=Operation.SEND_MESSAGE,
            request=SendMessageRequest(message=message, tenant=tenant),
            binding="jsonrpc",
            dialect="1.0",
            version="1.0",
            metadata={TENANT_METADATA_KEY: tenant} if tenant else {},
            tenant=tenant,
        )
        resume = self.policy.mode is Recovery.RESUME
        # The first message answered again is no follow-up (``ctx.is_follow_up``); a
        # follow-up's task before it is, near enough, the task as it stands.
        first = bool(task.history) and task.history[0].message_id == message.message_id
        return Invocation(
            message=message,
            task_id=task.id,
            context_id=task.context_id,
            task=None if first else task,
            configuration=None,
            call=call,
            owner=stored.owner,
            attempt=attempt,
            epoch=epoch,
            checkpoint=checkpoint_of(task) if resume else None,
        )
