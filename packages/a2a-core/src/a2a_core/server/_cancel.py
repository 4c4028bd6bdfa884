"""Cancelling an agent once, the way asyncio cancels a task (L2, private).

anyio's cancellation is level-triggered: once a cancel scope is cancelled, *every* await
inside it raises again, until the code leaves the scope. An agent that catches the
cancellation and carries on (``except CancelledError: pass`` in a loop; some framework
code does it) never leaves, and spins: after a CancelTask it took 53 % of a core, 372,000
swallowed cancellations in 8 s, for as long as the server ran.

So on asyncio an execution's agent is cancelled the asyncio way: ``Task.cancel()``, once
per request to stop, which an agent may catch as asyncio allows. What anyio's scope gave
is kept: a cancellation never lands inside a shielded scope (a task write is one), it
waits until the code leaves it. An agent still running ``grace`` seconds after it was
cancelled is *cut loose*: its execution ends without it (one warning), and the agent, left
to run on its own, can write nothing more (its task is already ended or handed off, which
is why it was cancelled), and costs what any idle task costs.

Whether a task is inside a shielded scope is read from anyio's asyncio backend (the cancel
scope stack it keeps per task). If a later anyio changes those internals, `EDGE_AVAILABLE`
is false and executions are cancelled through their anyio scope as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, Final

__all__ = ["EDGE_AVAILABLE", "EdgeCancel", "in_shield"]

logger: Final = logging.getLogger("a2a_core.server")

#: The message of our cancellations (how `EdgeCancel.consume` knows its own).
CANCEL_MESSAGE: Final = "cancelled by the A2A runtime"
#: Seconds between looks at a task that is inside a shielded scope when it is cancelled.
_SHIELD_POLL: Final = 0.005

try:
    from anyio._backends._asyncio import CancelScope as _AsyncioScope
    from anyio._backends._asyncio import _task_states

    EDGE_AVAILABLE: bool = hasattr(_AsyncioScope(), "_parent_scope")
except ImportError:  # pragma: no cover - an anyio without these internals
    _task_states = None  # type: ignore[assignment]
    EDGE_AVAILABLE = False


def in_shield(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` is inside a shielded anyio cancel scope now."""
    state = _task_states.get(task) if _task_states is not None else None
    scope = getattr(state, "cancel_scope", None)
    while scope is not None:
        if scope.shield:
            return True
        scope = scope._parent_scope
    return False


class EdgeCancel:
    """The cancellation of one asyncio task that runs an execution (see the module)."""

    __slots__ = ("_cut_loose", "_grace_timer", "_retry", "loop", "sent", "task")

    def __init__(self, task: asyncio.Task[Any], cut_loose: Callable[[], None]) -> None:
        self.task = task
        self.loop = task.get_loop()
        #: Cancellations delivered to the task and not yet consumed by it.
        self.sent = 0
        self._cut_loose = cut_loose
        self._retry: asyncio.TimerHandle | None = None
        self._grace_timer: asyncio.TimerHandle | None = None

    def cancel(self, grace: float) -> None:
        """Cancel the task once (when it leaves a shielded scope, if it is in one); cut it
        loose if it is still running ``grace`` seconds from now."""
        if self._grace_timer is None:
            self._grace_timer = self.loop.call_later(grace, self._expired)
        self._deliver()

    def _deliver(self) -> None:
        self._retry = None
        task = self.task
        if task.done():
            return
        if in_shield(task):
            # A task write (or the agent's own shielded section) finishes first.
            self._retry = self.loop.call_later(_SHIELD_POLL, self._deliver)
            return
        self.sent += 1
        task.cancel(CANCEL_MESSAGE)

    def consume(self) -> bool:
        """In the task, on a CancelledError: whether every cancellation pending on it is
        ours (then they are taken back, and the task goes on as not cancelled)."""
        task = self.task
        if self.sent == 0 or task.cancelling() > self.sent:
            return False  # someone else cancelled it too (the loop is closing, say)
        while self.sent:
            self.sent -= 1
            task.uncancel()
        return True

    def close(self) -> None:
        """The execution ended: no more deliveries, no cut."""
        for handle in (self._retry, self._grace_timer):
            if handle is not None:
                handle.cancel()
        self._retry = self._grace_timer = None

    def _expired(self) -> None:
        self._grace_timer = None
        if not self.task.done():
            self._cut_loose()
