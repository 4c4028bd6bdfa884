"""Where executions run, detached from requests (L2, private).

Every message starts one execution, so starting one is on the path of every SendMessage.
On asyncio, ``anyio``'s ``TaskGroup.start_soon`` costs about four times a plain
``loop.create_task`` (28 µs against 7 µs here: it builds a cancel scope and task state per
task and looks the backend up; see ``bench/``), so there executions are plain asyncio tasks
that this class keeps, cancels and awaits itself, as the task group would. Elsewhere (trio)
they go into the server's task group.

Cancellation goes through each execution's own anyio cancel scope, never ``Task.cancel()``,
so the shielded critical section of a task write is honoured at shutdown too.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from a2a_core.server._sync import running_asyncio_loop

if TYPE_CHECKING:
    from a2a_core.server._runtime import Execution

__all__ = ["Background"]

logger = logging.getLogger("a2a_core.server")


class Background:
    """Runs executions in the background and stops them at shutdown."""

    def __init__(self, task_group: TaskGroup, executions: Mapping[str, Execution]) -> None:
        self._task_group = task_group
        #: The runtime's registry of running executions (the one place they are recorded).
        self._executions = executions
        self._loop = running_asyncio_loop()
        # The backend's own cancel scope class: ``anyio.CancelScope()`` looks the backend up
        # at every construction (a few percent of a SendMessage), this class does not.
        self.cancel_scope_class: type[anyio.CancelScope] = type(anyio.CancelScope())
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The asyncio loop the executions run on (``None``: another backend)."""
        return self._loop

    def start(self, execution: Execution) -> None:
        """Run ``execution`` from the next turn of the event loop on."""
        if self._loop is None:
            self._task_group.start_soon(execution.run, self.cancel_scope_class)
            return
        # A task started at the next turn of the loop, not eagerly (Python 3.12's
        # eager_start): measured under load, an eager start made a blocking send slower on
        # every stack, the loop handling fewer connections per turn (docs/benchmarks.md).
        task = self._loop.create_task(execution.run(self.cancel_scope_class))
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            # Execution.run never raises; if it ever does, say so rather than lose it.
            logger.error("execution failed", exc_info=exc)

    async def aclose(self) -> None:
        """Cancel every execution still running and wait until all have ended."""
        while self._tasks:
            for execution in list(self._executions.values()):
                execution.cancel_soon()
            await asyncio.wait(list(self._tasks))
