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
import sys
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskGroup

from a2a_core.server._sync import running_asyncio_loop

if TYPE_CHECKING:
    from a2a_core.server._runtime import Execution

__all__ = ["Background"]

logger = logging.getLogger("a2a_core.server")


def _lazy_task(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[None, None, None]
) -> asyncio.Task[None]:
    return loop.create_task(coro)


def _eager_task(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[None, None, None]
) -> asyncio.Task[None]:
    return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg]


#: How an execution's task is made. From Python 3.12 it starts *eagerly*: the execution runs
#: at once, inside ``start``, until it first waits, and an agent that answers without
#: waiting (an echo, a lookup) is done before ``start`` returns: no turn of the event loop to
#: start it, none to hand its result back. It is still a task of its own, detached from the
#: request, from its first step. Before 3.12 it starts at the next turn of the loop.
_new_task = _eager_task if sys.version_info >= (3, 12) else _lazy_task


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
        """Run ``execution`` in a task of its own: at once until it first waits (Python
        3.12+), or from the next turn of the event loop on."""
        if self._loop is None:
            self._task_group.start_soon(execution.run, self.cancel_scope_class)
            return
        task = _new_task(self._loop, execution.run(self.cancel_scope_class))
        if task.done():  # started eagerly, and finished already: nothing to keep or wait for
            self._check(task)
            return
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._check(task)

    @staticmethod
    def _check(task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            # Execution.run never raises; if it ever does, say so rather than lose it.
            logger.error("execution failed", exc_info=exc)

    async def aclose(self) -> None:
        """Cancel every execution still running and wait until all have ended."""
        while self._tasks:
            for execution in list(self._executions.values()):
                execution.cancel_soon()
            await asyncio.wait(list(self._tasks))
