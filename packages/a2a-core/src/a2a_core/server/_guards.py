"""Execution guards (L2): how many agents may run, and the end of tasks nobody finishes.

Three guards, configured by one value (:class:`ExecutionGuards`, ``A2AServer(guards=...)``):

- **admission**: a message that would start one execution more than ``max_running`` (the
  server's) or ``max_running_per_owner`` (its caller's, by the task owner key) is refused
  with `ResourceExhaustedError` before anything of it is written;
- **inactivity**: an agent that reports nothing (no status, no artifact) for
  ``inactivity_timeout`` seconds is stopped, and its task FAILED with a status message
  saying so;
- **expiry**: a task left INPUT_REQUIRED or AUTH_REQUIRED for longer than
  ``interrupted_ttl`` seconds (nobody answered) is FAILED with a status message saying so,
  so that abandoned conversations do not pile up in the store.

Both ends are FAILED, never CANCELED: CANCELED is what a client asked for (CancelTask); a
guard ending a task is the server's verdict that it did not finish, and says why.

Nothing runs per task and nothing is added to the path of an event: admission is a count
kept as executions start and end (`Runtime.on_ended`), and one periodic sweep, a service
beside the server (:meth:`Guards.service`), finds the inactive executions (by comparing each
running task's version with the one it saw at its last look: an agent is silent from the
first look that saw its task unchanged, so the timeout is met within one sweep interval)
and the interrupted tasks that are due (a heap of deadlines, fed as executions end leaving
their task interrupted). The sweep only knows what ran on this server: on a shared backend,
a task interrupted before a restart of its replica is not expired by the restarted one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import heapq
import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from typing import Final

import anyio

from a2a_core._protocol.errors import A2AError, ResourceExhaustedError
from a2a_core.server._backend import ServerHandle
from a2a_core.server._messages import agent_message
from a2a_core.server._runtime import Execution, Runtime
from a2a_core.server._writes import TaskWriter
from a2a_core.types import Task, TaskState

__all__ = [
    "INACTIVITY_TEXT",
    "INTERRUPTED_EXPIRY_TEXT",
    "ExecutionGuards",
    "Guards",
    "describe_duration",
]

logger: Final = logging.getLogger("a2a_core.server")

#: The status message of a task whose agent was stopped for reporting nothing.
INACTIVITY_TEXT: Final = "The agent reported nothing for {duration} and was stopped."
#: The status message of an interrupted task that expired (``what``: input, authentication).
INTERRUPTED_EXPIRY_TEXT: Final = (
    "Nobody answered the request for {what} within {duration}: the task expired."
)

_INTERRUPTED: Final = {
    TaskState.INPUT_REQUIRED: "input",
    TaskState.AUTH_REQUIRED: "authentication",
}
#: The longest pause of the sweep (shorter for short timeouts: a quarter of the shortest).
_MAX_SWEEP_INTERVAL: Final = 1.0
#: Seconds before an expiry the store refused (unreachable) is tried again, at most.
_RETRY_AFTER: Final = 30.0


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExecutionGuards:
    """The execution guards of a server (see the module docstring); ``None`` turns one off.

    The defaults bound what a server does on its own without refusing reasonable traffic:
    a generous cap on running agents, a silent agent stopped after an hour, an unanswered
    question ended after a day, five seconds for running agents when the server stops. See
    ``docs/server.md`` for the reasoning.
    """

    max_running: int | None = 1000
    """Executions (agents handling a message) running at once on this server; one more is
    ResourceExhaustedError (-32099, HTTP 429). Per process: each replica counts its own."""
    max_running_per_owner: int | None = None
    """Executions running at once for one task owner (``A2AServer(task_owner=...)``). Off
    by default: every anonymous caller has the same owner, so on a server without
    authentication it would be a second, smaller server-wide limit."""
    inactivity_timeout: float | None = 3600.0
    """Seconds an agent may go without reporting (a status, an artifact, a chunk) before it
    is stopped and its task FAILED. Checked about once a second."""
    interrupted_ttl: float | None = 86400.0
    """Seconds a task may stay INPUT_REQUIRED or AUTH_REQUIRED, counted from when its agent
    left it so, before it is FAILED as expired. Checked about once a second."""
    shutdown_grace: float = 5.0
    """Seconds running agents get to finish when the server stops (``A2AServer.shutdown``);
    then their tasks are failed and the agents cancelled."""
    cancel_grace: float = 5.0
    """Seconds a cancelled agent (CancelTask, a guard, a cancel on another replica, a
    shutdown) has to stop before it is cut loose: its execution ends without it, with one
    warning, and the agent, left running, can change its task no more. On asyncio an agent
    is cancelled once, as asyncio cancels a task (never inside a task write): one that
    catches ``CancelledError`` and carries on costs what an idle task costs."""
    show_errors: bool = False
    """For development: a task the agent failed says what it raised (the exception's type
    and message, at most 1,000 characters, never a traceback) after "The agent failed
    while processing the request.". Whoever reads the task reads it: off by default, and
    warned about by the runners when the server listens beyond loopback."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic seconds, what both timeouts are measured with; inject one to control time
    in tests."""

    def __post_init__(self) -> None:
        for name in ("max_running", "max_running_per_owner"):
            count = getattr(self, name)
            if count is not None and (not isinstance(count, int) or count < 1):
                raise ValueError(f"{name} must be a positive integer or None")
        for name in ("inactivity_timeout", "interrupted_ttl"):
            seconds = getattr(self, name)
            if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
                raise ValueError(f"{name} must be a positive number of seconds or None")
        grace = self.shutdown_grace
        if isinstance(grace, bool) or not isinstance(grace, int | float):
            raise ValueError(f"shutdown_grace must be a number of seconds, not {grace!r}")
        if not (grace >= 0 and math.isfinite(grace)):
            raise ValueError(f"shutdown_grace must be zero or more seconds, not {grace!r}")


def describe_duration(seconds: float) -> str:
    """``seconds`` as a status message says it: ``24 h``, ``1.5 min``, ``0.2 s``."""
    for unit, size in (("h", 3600.0), ("min", 60.0)):
        if seconds >= size:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


class Guards:
    """The execution guards of one server at work (see the module docstring)."""

    def __init__(self, options: ExecutionGuards, runtime: Runtime) -> None:
        self.options = options
        self._runtime = runtime
        # Read on every SendMessage: plain attributes, not a walk through the options.
        self._max_running = options.max_running
        self._per_owner = options.max_running_per_owner
        self._expiry = options.interrupted_ttl is not None
        #: Running executions per owner (kept only with a per-owner limit).
        self._by_owner: dict[str, int] = {}
        #: Inactivity: per running execution (as of the last sweep), its task's version
        #: when the sweep last saw it change, and when (clock seconds).
        self._seen: dict[Execution, tuple[int, float]] = {}
        self._stopped: set[Execution] = set()
        #: Expiry: each tracked task's deadline (clock seconds) and the status timestamp it
        #: was interrupted at, and the deadlines as a heap; heap entries whose deadline is no
        #: longer the task's are stale, skipped when due.
        self._deadlines: dict[str, tuple[float, _dt.datetime | None]] = {}
        self._due: list[tuple[float, str]] = []
        timeouts = [t for t in (options.inactivity_timeout, options.interrupted_ttl) if t]
        #: Seconds between sweeps (``None``: no guard needs one).
        self.interval: float | None = (
            min(_MAX_SWEEP_INTERVAL, *(t / 4 for t in timeouts)) if timeouts else None
        )
        if self._per_owner is not None or self._expiry:
            runtime.on_ended = self._ended

    # --- admission -----------------------------------------------------------------------

    def admit(self, execution: Execution, *, recovered: bool = False) -> None:
        """Count ``execution`` in, about to be registered and started; or refuse it with
        `ResourceExhaustedError` when it would be one too many. A ``recovered`` attempt of
        work accepted earlier is counted but never refused (refusing it would fail it)."""
        limit = self._max_running
        if recovered:
            limit = None
        if limit is not None and len(self._runtime.executions) >= limit:
            raise ResourceExhaustedError(
                "The server is running as many tasks as it may: try again later",
                metadata={"scope": "server", "limit": str(limit)},
            )
        per_owner = self._per_owner
        if per_owner is not None:
            owner = execution.invocation.owner
            running = self._by_owner.get(owner, 0)
            if running >= per_owner and not recovered:
                raise ResourceExhaustedError(
                    "You have as many tasks running as you may: try again when one has finished",
                    metadata={"scope": "owner", "limit": str(per_owner)},
                )
            self._by_owner[owner] = running + 1
        if self._deadlines and execution.invocation.task is not None:
            self._deadlines.pop(execution.task_id, None)  # continued: no longer waiting

    def _ended(self, execution: Execution) -> None:
        # Called from the execution's ``finally``: only bookkeeping, nothing that can fail.
        if self._per_owner is not None:
            owner = execution.invocation.owner
            left = self._by_owner.get(owner, 0) - 1
            if left > 0:
                self._by_owner[owner] = left
            else:
                self._by_owner.pop(owner, None)
        if self._expiry:
            writer = execution.task.writer
            if writer is not None and writer.task.status.state in _INTERRUPTED and not writer.lost:
                self._track(writer.task)

    # --- the sweep -----------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def service(self, server: ServerHandle) -> AsyncIterator[None]:
        """Run the sweep for as long as the server runs (a `Service`)."""
        if self.interval is None:
            yield
            return
        async with anyio.create_task_group() as group:
            group.start_soon(self._sweep_loop, self.interval)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def _sweep_loop(self, interval: float) -> None:
        while True:
            await anyio.sleep(interval)
            try:
                await self.sweep()
            except Exception:  # pragma: no cover - each step handles its own failures
                logger.exception("the execution guards' sweep failed")

    async def sweep(self) -> None:
        """Stop the agents inactive for too long, expire the interrupted tasks that are due
        (what the service does about once a second)."""
        options = self.options
        if options.inactivity_timeout is not None:
            await self._stop_inactive(options.inactivity_timeout, options.clock())
        if options.interrupted_ttl is not None:
            await self._expire_interrupted(options.interrupted_ttl, options.clock())

    async def _stop_inactive(self, timeout: float, now: float) -> None:
        # Rebuilt at each look, from what runs now: the ended executions fall out by
        # themselves, and nothing needs doing as one starts or ends.
        previous, seen = self._seen, {}
        running = self._runtime.executions
        stopped = {e for e in self._stopped if running.get(e.task_id) is e}
        inactive: list[Execution] = []
        for execution in list(running.values()):
            if execution in stopped:
                continue  # stopped already, still unwinding (a thread, say)
            writer = execution.task.writer
            version = writer.stored.version if writer is not None else 0
            last = previous.get(execution)
            if last is None or last[0] != version:
                last = (version, now)  # new, or it reported since the last look
            elif now - last[1] >= timeout:
                inactive.append(execution)
            seen[execution] = last
        self._seen = seen
        self._stopped = stopped
        text = INACTIVITY_TEXT.format(duration=describe_duration(timeout))
        stopped.update(inactive)
        for execution in inactive:
            logger.info(
                "the agent of task %s reported nothing for %s: stopping it",
                execution.task_id,
                describe_duration(timeout),
            )
            try:
                await execution.stop(text)
            except Exception:
                logger.exception("could not fail inactive task %s", execution.task_id)
                execution.cancel_soon()

    def _track(self, task: Task) -> None:
        """Watch ``task`` if it is interrupted (just written so): it expires
        ``interrupted_ttl`` from now unless answered."""
        if task.status.state not in _INTERRUPTED:
            return
        ttl = self.options.interrupted_ttl
        assert ttl is not None
        self._track_at(task.id, self.options.clock() + ttl, task.status.timestamp)

    def _track_at(self, task_id: str, deadline: float, stamp: _dt.datetime | None) -> None:
        self._deadlines[task_id] = (deadline, stamp)
        heapq.heappush(self._due, (deadline, task_id))
        if len(self._due) > 2 * len(self._deadlines) + 64:
            # Mostly stale entries (tasks continued since): rebuild from the live ones, so
            # that memory follows the tasks waiting now, not every question ever asked.
            self._due = [(d, t) for t, (d, _) in self._deadlines.items()]
            heapq.heapify(self._due)

    async def _expire_interrupted(self, ttl: float, now: float) -> None:
        due = self._due
        while due and due[0][0] <= now:
            deadline, task_id = heapq.heappop(due)
            tracked = self._deadlines.get(task_id)
            if tracked is None or tracked[0] != deadline:
                continue  # stale: continued since, or tracked again with a later deadline
            del self._deadlines[task_id]
            await self._expire(task_id, tracked[1], ttl, now)

    async def _expire(
        self, task_id: str, stamp: _dt.datetime | None, ttl: float, now: float
    ) -> None:
        """FAILED, if the task is still in the interruption it was tracked for (its status
        timestamp ``stamp``)."""
        if task_id in self._runtime.executions:
            return  # being continued: tracked again when that execution ends
        storage = self._runtime.storage
        try:
            stored = await storage.store.get(task_id)
            if stored is None:
                return  # deleted, evicted, or lost with its store
            task = stored.task
            what = _INTERRUPTED.get(task.status.state)
            if what is None:
                return  # answered (here or on another replica), or ended
            if task.status.timestamp != stamp:
                self._track_at(task_id, now + ttl, task.status.timestamp)  # asked again since
                return
            text = INTERRUPTED_EXPIRY_TEXT.format(what=what, duration=describe_duration(ttl))
            message = agent_message(text, task_id=task.id, context_id=task.context_id)
            if await TaskWriter(storage, stored).status(TaskState.FAILED, message):
                logger.info("task %s waited for %s for too long: expired", task_id, what)
        except A2AError as exc:
            # A networked store that is unreachable (its own error, logged where it
            # happened): try again later rather than keep the task forever.
            logger.warning("could not expire task %s (%s); trying again later", task_id, exc)
            self._track_at(task_id, now + min(ttl, _RETRY_AFTER), stamp)
        except Exception:
            logger.exception("could not expire task %s", task_id)
