"""Streams that end when the server stops (L2): the log their followers read, interruptible.

A stream waits for its task's next event in ``EventLog.follow``; a subscription to a task
that waits for input may wait there for hours. At shutdown the server must end every open
stream with a final frame, so that its connection closes and the process can exit.
:class:`StoppableLog` is the event log as streams see it: its followers read the real log,
and :meth:`StoppableLog.stop` interrupts every one of them that is waiting. An interrupted
follower still hands over every event already logged (read without waiting), so a stream
whose task was just failed by the shutdown ends with that status, as a terminal stream
does; one whose task is still open then ends with ServerUnavailableError, which the stream
sends as its error frame. The task itself is untouched.

Each wait is a cancel scope of its own that never spans a ``yield`` (what anyio allows in
an async generator), registered while the follower waits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

import anyio

from a2a_core._protocol.errors import ServerUnavailableError
from a2a_core.server._events import EventLog, LoggedEvent
from a2a_core.types import StreamResponse

__all__ = ["StoppableLog"]

_STOPPED_TEXT: Final = "The server is shutting down"


class StoppableLog:
    """An `EventLog` whose followers end when :meth:`stop` is called (module docstring)."""

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._waiting: set[anyio.CancelScope] = set()
        self.stopped = False

    def stop(self) -> None:
        """Interrupt every follower now and every one that starts from now on."""
        self.stopped = True
        for scope in list(self._waiting):
            scope.cancel()

    def restart(self) -> None:
        """Let followers wait again (a server that is started again)."""
        self.stopped = False

    async def follow(
        self, task_id: str, after: int = 0, *, idle_timeout: float | None = None
    ) -> AsyncIterator[LoggedEvent]:
        """The real log's ``follow``, until :meth:`stop`; then what is logged already, and
        ServerUnavailableError unless the log ended."""
        follower = self._log.follow(task_id, after, idle_timeout=idle_timeout)
        seq = after
        try:
            while not self.stopped:
                with anyio.CancelScope() as scope:
                    self._waiting.add(scope)
                    try:
                        logged = await follower.__anext__()
                    except StopAsyncIteration:
                        return
                    finally:
                        self._waiting.discard(scope)
                if scope.cancelled_caught:
                    break
                seq = logged.seq
                yield logged
        finally:
            aclose = getattr(follower, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()
        for logged in await self._log.read(task_id, seq):
            yield logged
        raise ServerUnavailableError(_STOPPED_TEXT)

    # The rest of the protocol, as the real log has it (streams only follow).

    async def append(self, task_id: str, event: StreamResponse) -> int:
        """The real log's ``append``."""
        return await self._log.append(task_id, event)

    async def close(self, task_id: str) -> None:
        """The real log's ``close``."""
        await self._log.close(task_id)

    async def read(self, task_id: str, after: int = 0) -> list[LoggedEvent]:
        """The real log's ``read``."""
        return await self._log.read(task_id, after)

    async def forget(self, task_id: str) -> None:
        """The real log's ``forget``."""
        await self._log.forget(task_id)
