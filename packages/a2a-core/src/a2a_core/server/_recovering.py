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
)
from a2a_core.server._runtime import Execution, Runtime
from a2a_core.server._storage import Storage
from a2a_core.server._store import StoredTask
from a2a_core.server._writes import TaskWriter
from a2a_core.server.observe import report_recovery
from a2a_core.types import SendMessageRequest, TaskState

__all__ = ["GAVE_UP_TEXT", "Recoverer"]

logger = logging.getLogger("a2a_core.server")

#: Added to the reason when the last allowed attempt was lost too.
GAVE_UP_TEXT: Final = "The task was failed after {attempts} attempt(s) lost (the server's limit)."
#: The states of a task whose execution may be lost (others are interrupted or final).
_RUNNING: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})


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
        self._waiting: list[tuple[Invocation, TaskWriter]] = []
        #: What happened, for tests and metrics: claimed, gave_up.
        self.counts: dict[str, int] = {"claimed": 0, "gave_up": 0}

    async def recover(
        self, task_id: str, reason: str, *, lost: bool, fail_text: str | None = None
    ) -> bool:
        """Claim and start the next attempt of ``task_id`` (or fail it: under ``fail``, or
        past ``max_attempts``); ``False`` when there was nothing to do here (the task ended,
        runs here, or another replica claimed it first)."""
        if task_id in self._runtime.executions:
            return False  # it runs here: not lost
        stored = await self._storage.store.get(task_id)
        if stored is None or stored.task.status.state not in _RUNNING:
            return False
        attempt, lost_before = execution_record(stored.task)
        writer = TaskWriter(self._storage, stored)
        writer.epoch = attempt  # the claim is fenced at the attempt read
        losses = lost_before + (1 if lost else 0)
        message = message_to_rerun(stored.task)
        if not self.policy.recovers or message is None or losses >= self.policy.max_attempts:
            text = fail_text or reason
            outcome = "failed"
            if self.policy.recovers:
                text = f"{text} {GAVE_UP_TEXT.format(attempts=losses)}"
                outcome = "gave_up"
                self.counts["gave_up"] += 1
            failed = await writer.status(TaskState.FAILED, self._message(stored, text))
            if failed:
                self._report(task_id, outcome, attempt)
            return failed
        next_attempt = attempt + 1
        claimed = await writer.status(
            TaskState.WORKING,
            self._message(stored, f"Attempt {next_attempt} starts: {reason}"),
            {EXECUTION_KEY: {"attempt": next_attempt, "lost": losses}},
        )
        if not claimed:
            return False  # another replica claimed it, or it ended meanwhile
        self.counts["claimed"] += 1
        logger.info("task %s: attempt %d claimed here (%s)", task_id, next_attempt, reason)
        resumed = self.policy.mode is Recovery.RESUME
        self._report(task_id, "resumed" if resumed else "retried", next_attempt)
        self._start(self._invocation(writer.stored, message, next_attempt), writer)
        return True

    def _report(self, task_id: str, outcome: str, attempt: int) -> None:
        observer = self._storage.observer
        if observer is not None:
            report_recovery(observer, task_id, outcome, attempt)

    def start_waiting(self, background: Background) -> None:
        """Start the attempts claimed before the server ran."""
        self.background = background
        waiting, self._waiting = self._waiting, []
        for invocation, writer in waiting:
            self._start(invocation, writer)

    def _start(self, invocation: Invocation, writer: TaskWriter) -> None:
        background = self.background
        if background is None:
            self._waiting.append((invocation, writer))
            return
        execution = Execution(self._runtime, invocation, create_first=False, loop=background.loop)
        execution.task.adopt(writer)
        self._guards.admit(execution, recovered=True)
        self._runtime.register(execution)
        background.start(execution)

    def _invocation(self, stored: StoredTask, message: Any, attempt: int) -> Invocation:
        """What the next attempt is asked: the client's last message, as a follow-up of the
        task as it stands. The original call is gone with its process: the attempt sees no
        identity and no call metadata, only the tenant."""
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
        return Invocation(
            message=message,
            task_id=task.id,
            context_id=task.context_id,
            task=task,
            configuration=None,
            call=call,
            owner=stored.owner,
            attempt=attempt,
            checkpoint=checkpoint_of(task) if resume else None,
        )

    @staticmethod
    def _message(stored: StoredTask, text: str) -> Any:
        task = stored.task
        return agent_message(text, task_id=task.id, context_id=task.context_id)
