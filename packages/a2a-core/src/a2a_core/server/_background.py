"""Where executions run, detached from requests (L2, private).

Every message starts one execution, so starting one is on the path of every SendMessage.
On asyncio, ``anyio``'s ``TaskGroup.start_soon`` costs about four times a plain
``loop.create_task`` (28 µs against 7 µs here: it builds a cancel scope and task state per
task and looks the backend up; see ``bench/``), so there executions are plain asyncio tasks
that this class keeps, cancels and awaits itself, as the task group would. Elsewhere (trio)
they go into the server's task group.

Cancellation goes through each execution (``Execution.cancel_soon``): on asyncio one
``Task.cancel()`` that waits for the task to leave any shielded section (a task write), see
``_cancel``; elsewhere its anyio cancel scope. An agent that will not stop is cut loose: its
task is let go of here (`let_go`), cancelled once more at shutdown and not waited for.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
from anyio.abc import TaskGroup

from a2a_core.server._sync import running_asyncio_loop

if TYPE_CHECKING:
    from a2a_core.server._runtime import Execution

__all__ = ["Background"]

logger = logging.getLogger("a2a_core.server")

#: How many agents cut loose and still running are worth a warning of their own.
_LOOSE_WARNINGS: Final = frozenset((10, 100, 1000, 10_000))


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
        # Agents cut loose (`let_go`): held so that they are not collected while they run.
        self._loose: set[asyncio.Task[None]] = set()

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

    def let_go(self, task: asyncio.Task[Any]) -> None:
        """Stop waiting for ``task``: its agent was cut loose (it ignores cancellation)."""
        if task in self._tasks:
            self._tasks.discard(task)
            self._loose.add(task)
            task.add_done_callback(self._loose.discard)
        if len(self._loose) in _LOOSE_WARNINGS:
            logger.warning("%d agents cut loose are still running", len(self._loose))

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            # Execution.run never raises; if it ever does, say so rather than lose it.
            logger.error("execution failed", exc_info=exc)

    async def aclose(self) -> None:
        """Cancel every execution still running and wait until all have ended."""
        asked: set[int] = set()
        while self._tasks:
            # Each execution is asked once: on asyncio a request to stop is one cancel.
            for execution in list(self._executions.values()):
                if id(execution) not in asked:
                    asked.add(id(execution))
                    execution.cancel_soon()
            # Woken at least every tenth of a second: a task cut loose meanwhile leaves
            # ``_tasks`` without ending.
            await asyncio.wait(list(self._tasks), timeout=0.1)
        self.cancel_loose()

    def cancel_loose(self) -> None:
        """Cancel every agent cut loose once more (the server stops); not waited for."""
        for task in self._loose:
            task.cancel()
