"""Stopping in bounded time (L2): what happens to running agents when the server stops.

`stop_executions` is the middle of `A2AServer.shutdown`: the running agents get a grace
period to finish. On a server that recovers lost work (``retry``, ``resume``) with a
backend that outlives the process, each task still running then is **handed off**: its
writer writes nothing more, so the task stays running with this replica as its runner, and
another replica (or the next start) claims it as a lost execution (``_recovery``). Otherwise
the task of each one still running then is **failed**, through the normal
writer (so blocking callers, streams and webhooks receive it), with `SHUTDOWN_TEXT` as its
status message, and a call whose agent had created no task yet is answered
ServerUnavailableError; the agents are cancelled and get one more second to unwind, and one
that ignores cancellation is abandoned (logged). FAILED, not CANCELED: nobody asked for the
task to end; the server could not finish it, and says so. Then the server ends every open
stream (``_stopping``): one of a task failed here with that status, any other (a
subscription to a task waiting for input) with a ServerUnavailableError frame.
"""

from __future__ import annotations

import logging
from typing import Final

import anyio

from a2a_core._protocol.errors import ServerUnavailableError
from a2a_core.server._background import Background
from a2a_core.server._messages import agent_message
from a2a_core.server._runtime import Runtime
from a2a_core.server._writes import TaskWriter
from a2a_core.server.observe import report_recovery
from a2a_core.types import TERMINAL_STATES, TaskState

__all__ = ["SHUTDOWN_TEXT", "UNWIND_SECONDS", "stop_executions"]

logger = logging.getLogger("a2a_core.server")

#: The status message of a task failed because the server shut down while its agent ran.
SHUTDOWN_TEXT: Final = (
    "The server shut down before the task finished; send the message again to start over."
)
#: Seconds cancelled agents get to unwind at shutdown before they are abandoned.
UNWIND_SECONDS: Final = 1.0


async def stop_executions(
    runtime: Runtime, background: Background | None, grace: float, *, hand_off: bool = False
) -> int:
    """Let the running agents finish within ``grace`` seconds, then fail their tasks (or,
    with ``hand_off``, release them for another replica) and cancel them (see the module
    docstring). Returns how many executions were handed off."""
    executions = runtime.executions
    with anyio.move_on_after(grace):
        while executions:
            await next(iter(executions.values())).done.wait()
    if background is not None:
        background.cancel_loose()
    left = list(executions.values())
    if not left:
        return 0
    logger.warning(
        "shutting down: %d agent(s) still running after %.1f s; %s their tasks",
        len(left),
        grace,
        "handing off" if hand_off else "failing",
    )
    handed_off = 0
    for execution in left:
        if execution.task.writer is None:
            execution.error = ServerUnavailableError(SHUTDOWN_TEXT)
        elif hand_off and execution.release():
            handed_off += 1  # left running for another replica (or the next start)
            observer = runtime.storage.observer
            if observer is not None:
                report_recovery(
                    observer, execution.task_id, "released", execution.invocation.attempt
                )
            continue
        else:
            await _fail(execution.task.writer)
        execution.cancel_soon()
    if background is not None:
        with anyio.move_on_after(UNWIND_SECONDS):
            await background.aclose()
    for execution in left:
        writer = execution.task.writer  # also one created while the agent was cancelled
        if writer is not None and writer.task.status.state not in TERMINAL_STATES:
            await _fail(writer)
    stuck = sum(1 for execution in left if not execution.done.is_set())
    if stuck:
        logger.warning("shutting down: %d agent(s) ignored cancellation; abandoned", stuck)
    return handed_off


async def _fail(writer: TaskWriter) -> None:
    task = writer.task
    message = agent_message(SHUTDOWN_TEXT, task_id=task.id, context_id=task.context_id)
    try:
        await writer.status(TaskState.FAILED, message)
    except Exception:
        logger.exception("could not fail task %s at shutdown", task.id)
