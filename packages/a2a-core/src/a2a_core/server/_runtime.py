"""Running agents (L2): the shared runtime state and one execution per incoming message.

:class:`Runtime` holds what every execution shares (the agent, the storage, the registry of
running executions). :class:`Execution` runs the agent for one message in
the server's background (``_background``), detached from the request that started it: a client
that goes away never cancels or corrupts a task. The request only waits on the execution's
signals (task created, result ready, settled).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.from_thread
import anyio.lowlevel
import msgspec

from a2a_core._protocol.errors import A2AError, InternalError, InvalidParamsError
from a2a_core._protocol.lifecycle import ends_wait
from a2a_core.server._agent import Agent, AuthRequired, InputRequired
from a2a_core.server._cancel import EDGE_AVAILABLE, EdgeCancel
from a2a_core.server._context import TaskContext
from a2a_core.server._idempotency import find_sent
from a2a_core.server._limits import TaskLimitError
from a2a_core.server._messages import Invocation, agent_message
from a2a_core.server._outages import BackendUnavailableError
from a2a_core.server._recovery import DEFAULT_MAX_CHECKPOINT_BYTES
from a2a_core.server._storage import Storage
from a2a_core.server._store import StoredTask, TaskExistsError
from a2a_core.server._sync import Signal
from a2a_core.server._writes import TaskHandle, TaskLostError, TaskWriter
from a2a_core.types import (
    TERMINAL_STATES,
    Artifact,
    Message,
    Part,
    SendMessageRequest,
    TaskState,
)

if TYPE_CHECKING:
    from a2a_core.server.observe import ExecutionObservation

__all__ = ["Execution", "Runtime"]

logger = logging.getLogger("a2a_core.server")

#: The status message of a task whose agent raised: generic on purpose (details go to logs).
FAILURE_TEXT = "The agent failed while processing the request."
#: The longest exception text `failure_detail` shows.
MAX_DETAIL_CHARS: Final = 1000


def failure_detail(exc: BaseException) -> str:
    """What a failed task's status message adds under ``show_errors`` (development only):
    the exception's type and message, cut at `MAX_DETAIL_CHARS`. Never a traceback."""
    try:
        said = str(exc)
    except Exception:  # an exception whose text cannot be had: its type says enough
        said = ""
    detail = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[:MAX_DETAIL_CHARS] + "…"
    return f"[{detail}]"


#: Plain-function agents running at once, at most (anyio's own worker-thread default).
SYNC_AGENT_THREADS: Final = 40


async def _in_daemon_thread(limiter: anyio.CapacityLimiter, agent: Agent, ctx: TaskContext) -> Any:
    """``agent(ctx)`` in a daemon thread of its own, within ``limiter``.

    Not anyio's worker threads: those are not daemons, so one agent stuck in its function
    would hold the interpreter's exit after the server shut down (aiohttp's ``run_app``
    returns, then Python waits for every such thread). A daemon thread does not; a
    cancelled wait (at shutdown) abandons the thread, and what it returns then is dropped.
    """
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    outcome: list[tuple[bool, Any]] = []
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome.append((True, context.run(agent, ctx)))
        except BaseException as exc:
            outcome.append((False, exc))
        # The loop may be gone (the agent was abandoned at shutdown): nobody waits then.
        with contextlib.suppress(Exception):
            anyio.from_thread.run_sync(done.set, token=token)

    async with limiter:
        threading.Thread(target=run, name="a2a-sync-agent", daemon=True).start()
        await done.wait()
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    return value


class _Exhausted:
    """What ``_drain`` returns when an agent's generator ran to its end."""


_EXHAUSTED = _Exhausted()


class Runtime:
    """What every execution of one server shares: the agent, the storage, and the registry of
    running executions (one per task at most: a follow-up waits for the agent to finish)."""

    def __init__(self, *, agent: Agent, storage: Storage) -> None:
        self.agent = agent
        self.storage = storage
        #: The executions running now, by task id: registered by `register`, removed by the
        #: execution itself when it ends.
        self.executions: dict[str, Execution] = {}
        #: Called by each execution as it ends, after it left ``executions``, when set (the
        #: guards count what runs); it must not raise.
        self.on_ended: Callable[[Execution], None] | None = None
        self._agent_kind: tuple[Agent, str] | None = None
        self._sync_limiter: anyio.CapacityLimiter | None = None
        #: The largest checkpoint an agent may store (the server's `RecoveryPolicy`).
        self.max_checkpoint_bytes = DEFAULT_MAX_CHECKPOINT_BYTES
        #: Whether a failed task's status message shows the agent's exception (the
        #: server's ``show_errors``: for development).
        self.show_errors = False
        #: Seconds a cancelled agent has to stop before it is cut loose (``_cancel``).
        self.cancel_grace = 5.0
        #: Told of the asyncio task of an agent cut loose (the background lets go of it).
        self.let_go: Callable[[asyncio.Task[Any]], None] | None = None

    def sync_agent_limiter(self) -> anyio.CapacityLimiter:
        """How many plain-function agents run at once (made on first use, in the loop)."""
        if self._sync_limiter is None:
            self._sync_limiter = anyio.CapacityLimiter(SYNC_AGENT_THREADS)
        return self._sync_limiter

    def register(self, execution: Execution) -> None:
        """Record ``execution`` as its task's running execution, until it ends."""
        self.executions[execution.task_id] = execution

    def agent_kind(self) -> str:
        """How to call the agent: ``generator``, ``coroutine`` or ``sync`` (cached: the
        introspection cost a few percent of a request)."""
        agent = self.agent
        cached = self._agent_kind
        if cached is None or cached[0] is not agent:
            # A class instance with an async __call__ counts as async too.
            call = type(agent).__call__ if not inspect.isfunction(agent) else None
            if inspect.isasyncgenfunction(agent) or inspect.isasyncgenfunction(call):
                kind = "generator"
            elif inspect.iscoroutinefunction(agent) or inspect.iscoroutinefunction(call):
                kind = "coroutine"
            else:
                kind = "sync"
            cached = self._agent_kind = (agent, kind)
        return cached[1]


class Execution:
    """The agent handling one message, run in the background (see the module docstring)."""

    def __init__(
        self,
        runtime: Runtime,
        invocation: Invocation,
        *,
        create_first: bool,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.runtime = runtime
        self.invocation = invocation
        #: The task, created on first use (by the agent's first report or by the execution).
        self.task = TaskHandle(runtime.storage, invocation)
        self.task.on_created = self._watch
        self.context = TaskContext(self.task, invocation, runtime.max_checkpoint_bytes)
        # Create the task (or record the follow-up) before the agent is asked: a request
        # that answers with the task at once (non-blocking, a follow-up) needs it.
        self._create_first = create_first
        # Created when the execution starts; a cancel that comes first is remembered.
        self._scope: anyio.CancelScope | None = None
        self._cancel_requested = False
        # On asyncio: the agent is cancelled once, as asyncio cancels a task (``_cancel``):
        # the task running it, and its canceller once it is first cancelled.
        self._edge_wanted = loop is not None and EDGE_AVAILABLE
        self._host: asyncio.Task[Any] | None = None
        self._edge: EdgeCancel | None = None
        # Set once the execution's end is recorded (by `run`, or when it is cut loose).
        self._ended = False
        # Set by `stop`: the status message of the FAILED task, once the agent is stopped.
        self._stop_text: str | None = None
        # Signals, not anyio Events: most are never waited for (see ``_sync``).
        #: Set when the task exists, a message-only reply is ready, or the execution failed
        #: before creating a task: what a streaming or non-blocking request waits for.
        self.started = Signal(loop)
        #: Set when a blocking request may return: terminal or interrupted, or done.
        self.settled = Signal(loop)
        #: Set when the agent has returned (or failed, or was cancelled).
        self.done = Signal(loop)
        self.reply_message: Message | None = None
        self.first_snapshot: StoredTask | None = None
        self.error: A2AError | None = None
        #: The task a copy of this message created first, on another replica (a message
        #: sent again, ``_idempotency``): this execution wrote nothing, its agent stopped.
        self.duplicate: StoredTask | None = None
        #: Told how the agent's run goes, when the server is observed (set before it runs).
        self.observation: ExecutionObservation | None = None

    @property
    def task_id(self) -> str:
        """The task this execution works on."""
        return self.invocation.task_id

    async def run(self, scope_class: type[anyio.CancelScope] = anyio.CancelScope) -> None:
        """Run the agent to the end; never raises (failures go to the task and the log).

        ``scope_class`` makes the cancel scope (the backend's own class saves a lookup)."""
        observation = self.observation
        activation: contextlib.AbstractContextManager[object] | None = None
        if observation is not None:
            # The agent's span (say) is current while it runs, while its task is written and
            # while its failure is logged: its webhooks, its calls to other agents and its
            # log records carry the trace. Entered by hand, not by a `with` around a
            # coroutine of its own: an unobserved execution must not pay for one.
            activation = observation.activated()
            activation.__enter__()
        self._scope = scope = scope_class()
        if self._edge_wanted:
            self._host = asyncio.current_task()
        if self._cancel_requested:
            self.cancel_soon()
        raised: BaseException | None = None
        try:
            try:
                with scope:
                    if self._create_first:
                        await self.task.ensure()
                    result = await self._invoke()
                    if self._edge is not None and self._edge.sent:
                        self._edge.consume()  # the agent caught our cancel, then returned
                    await self._finish(result)
            except asyncio.CancelledError:
                # Ours (the agent was cancelled and let it through) ends the agent as the
                # scope's own would; anyone else's goes on up.
                if self._edge is None or not self._edge.consume():
                    raise
            if self._stop_text is not None:  # stopped by a guard before it wrote FAILED
                await self._fail(None, self._stop_text)
        except TaskExistsError:
            # A copy of this message created the task (or recorded the follow-up) first,
            # on another replica: this run is dropped, and the request answers with that.
            twin = await self._twin()
            if twin is not None and find_sent(twin.task, self._as_sent()):
                self.duplicate = twin
            else:  # another message under the same messageId won the race for the id
                self.error = InvalidParamsError(
                    "This messageId is in use for another message: send with a new one"
                )
        except TaskLimitError as exc:
            raised = exc  # the task went over a limit: it failed saying so, the agent stops
        except A2AError as exc:
            raised = exc
            if self.task.writer is None or isinstance(exc, BackendUnavailableError):
                # A store that went away: a request still waiting gets that error, never
                # a state of the task that was not stored.
                self.error = exc
            if self.task.writer is not None:
                await self._fail(exc)
        except Exception as exc:
            raised = exc
            logger.exception(
                "agent raised while handling task %s (context %s, %s)",
                self.task_id,
                self.invocation.context_id,
                self.invocation.call.operation.value,
            )
            await self._fail(exc)
        finally:
            self._end(raised)
            if activation is not None:
                activation.__exit__(None, None, None)

    def _end(self, raised: BaseException | None) -> None:
        """Record that the execution ended (once: `run`, or `_cut_loose` before it)."""
        if self._ended:
            return
        self._ended = True
        if self._edge is not None:
            self._edge.close()
        # Both refer back to this execution (a cycle, freed only by the collector).
        self._edge = self._host = None
        observation = self.observation
        if observation is not None:
            writer = self.task.writer
            observation.ended(writer.task if writer is not None else None, raised)
        runtime = self.runtime
        executions = runtime.executions
        if executions.get(self.task_id) is self:
            del executions[self.task_id]
        if runtime.on_ended is not None:
            runtime.on_ended(self)
        self.started.set()
        self.settled.set()
        self.done.set()
        self._detach()

    def _cut_loose(self) -> None:
        """The agent is still running ``cancel_grace`` seconds after it was cancelled (it
        catches the cancellation): the execution ends without it (``_cancel``)."""
        edge = self._edge
        if edge is None or self._ended:
            return
        logger.warning(
            "the agent of task %s still runs %.1f s after it was cancelled (does it catch "
            "CancelledError?): its execution ends without it, and it can change the task "
            "no more",
            self.task_id,
            self.runtime.cancel_grace,
        )
        if self._stop_text is not None and self.task.writer is None:
            # Stopped by a guard before its task existed: the task is failed without it.
            self.error = InternalError()
        writer = self.task.writer
        if writer is not None and writer.task.status.state not in TERMINAL_STATES:
            writer.release()  # whatever it still reports is not written
        task = edge.task
        self._end(None)
        if self.runtime.let_go is not None:
            self.runtime.let_go(task)

    def _detach(self) -> None:
        """Let go of everything that refers back to this execution, once it has ended.

        Its handle and writer held callbacks of the execution (bound methods), which made
        every execution a reference cycle: freed only by the garbage collector, whose full
        collections then walked them all and stopped the loop for tens of milliseconds (the
        p99 of a blocking send). Without the cycle, reference counting frees an execution
        and its task's objects as soon as its request lets go of them."""
        handle = self.task
        handle.on_created = None
        writer = handle.writer
        if writer is not None:
            writer.on_lost = None
            writer.settles = None
        self._scope = None

    def _as_sent(self) -> Message:
        """The client's message as it came (the invocation's has the ids the server filled
        in, a context id it generated among them)."""
        request = self.invocation.call.request
        return (
            request.message if isinstance(request, SendMessageRequest) else self.invocation.message
        )

    async def _twin(self) -> StoredTask | None:
        with anyio.CancelScope(shield=True):
            try:
                return await self.runtime.storage.store.get(self.task_id)
            except Exception:
                logger.exception("could not read task %s, created by a copy", self.task_id)
        return None

    def cancel_soon(self) -> None:
        """Cancel the agent; it stops at its next checkpoint (the task has already ended,
        or is about to: a cancel writes CANCELED first, a guard FAILED)."""
        self._cancel_requested = True
        self.context._stopping = True
        if self._host is not None:
            if self._edge is None:
                self._edge = EdgeCancel(self._host, self._cut_loose)
            self._edge.cancel(self.runtime.cancel_grace)
        elif self._scope is not None:
            self._scope.cancel()

    async def stop(self, text: str) -> None:
        """Stop the agent and fail its task with ``text`` as status message (a guard ran
        out). FAILED is written first when the task exists, as a cancel writes CANCELED
        first, so that whatever the agent reports while it unwinds is dropped; otherwise
        the execution writes it once the agent has stopped."""
        self._stop_text = text
        writer = self.task.writer
        if writer is not None and writer.task.status.state not in TERMINAL_STATES:
            await writer.status(TaskState.FAILED, self.context.agent_message(text))
        self.cancel_soon()

    def _lost(self) -> None:
        # The store lost the task (see `writes`): the writer said so in the log; stop the
        # agent, and answer a request still waiting with an error, never the lost task.
        self.error = TaskLostError()
        self.cancel_soon()
        self.started.set()
        self.settled.set()

    async def open_task(self) -> None:
        """Create the task now, unless the agent has begun to (a streaming send whose agent
        is quiet: its stream starts with the task). In the agent's trace context, as if
        the agent had written it. When it cannot be created, the stream is answered at
        once and the agent stopped: a copy of the message created it first on another
        replica (the stream follows that task), or the error (the backend is down)."""
        activation = self.observation.activated() if self.observation is not None else None
        with anyio.CancelScope(shield=True), activation or contextlib.nullcontext():
            try:
                await self.task.ensure()
                return
            except TaskExistsError:
                twin = await self._twin()
                if twin is not None and find_sent(twin.task, self._as_sent()):
                    self.duplicate = twin
                else:
                    self.error = InvalidParamsError(
                        "This messageId is in use for another message: send with a new one"
                    )
            except A2AError as exc:
                self.error = exc
            except Exception:
                logger.exception("could not create task %s ahead of its agent", self.task_id)
                self.error = InternalError()
        self.cancel_soon()
        self.started.set()
        self.settled.set()

    def release(self) -> bool:
        """Hand this execution off (a clean stop under a recovering policy): its writer
        writes nothing more, so the task stays running for another replica to claim, and
        the agent is cancelled. ``False`` when there is no task yet to hand off."""
        writer = self.task.writer
        if writer is None:
            return False
        writer.release()
        self.cancel_soon()
        return True

    def _watch(self, writer: TaskWriter) -> None:
        writer.epoch = self.invocation.epoch
        writer.settles = self.settled
        writer.on_lost = self._lost
        # The task as it stood when it came into existence (a follow-up: just recorded):
        # a stream starts from here, whatever the agent has done by the time it is read.
        self.first_snapshot = writer.stored
        self.started.set()
        if ends_wait(writer.task.status.state):
            self.settled.set()

    async def _invoke(self) -> Any:
        agent = self.runtime.agent
        ctx = self.context
        kind = self.runtime.agent_kind()
        if kind == "generator":
            return await self._drain(agent(ctx))  # type: ignore[arg-type]
        if kind == "coroutine":
            return await agent(ctx)  # type: ignore[misc]
        result = await _in_daemon_thread(self.runtime.sync_agent_limiter(), agent, ctx)
        if inspect.isawaitable(result):
            return await result
        if isinstance(result, AsyncIterator):
            return await self._drain(result)
        return result

    async def _drain(self, chunks: AsyncIterator[Any]) -> Any:
        """Consume an agent's async generator; returns a final result for ``_finish``."""
        ctx = self.context
        try:
            async for item in chunks:
                if isinstance(item, InputRequired | AuthRequired):
                    return item
                if isinstance(item, Message):
                    await ctx.working(item)
                elif isinstance(item, Artifact):
                    await ctx.artifact(item)
                elif isinstance(item, str | Part) or (
                    isinstance(item, Sequence) and item and isinstance(item[0], Part)
                ):
                    await ctx.stream_chunk(item)
                elif item is not None:
                    raise TypeError(f"an agent cannot yield a {type(item).__name__}")
        finally:
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                with anyio.CancelScope(shield=True):
                    await aclose()
        return _EXHAUSTED

    async def _finish(self, result: Any) -> None:
        ctx = self.context
        if result is _EXHAUSTED:
            # A generator that ran to its end completes the task, even after yielding a
            # working status message; unless it already interrupted or ended it by hand.
            writer = await self.task.ensure()
            if not ends_wait(writer.task.status.state):
                await ctx.complete()
            return
        if isinstance(result, Message):
            if not self.task.begun:  # no task, and none on its way: a message-only reply
                reply = agent_message(result, context_id=ctx.context_id)
                if reply.task_id:
                    # No task was created, so the reply points at none: not the id the task
                    # would have had, nor another task's that the agent copied.
                    reply = msgspec.structs.replace(reply, task_id="")
                self.reply_message = reply
                self.started.set()
                self.settled.set()
                return
            await ctx.complete(result)
            return
        if isinstance(result, InputRequired):
            await ctx.input_required(result.message)
            return
        if isinstance(result, AuthRequired):
            await ctx.auth_required(result.message)
            return
        if result is None:
            writer = await self.task.ensure()
            if writer.task.status.state is TaskState.SUBMITTED:
                await ctx.complete()
            return  # WORKING: left open, to be finished elsewhere; else already settled
        if isinstance(result, str | Part | Artifact | Sequence):
            await self.task.answer(result)
            return
        raise TypeError(f"an agent cannot return a {type(result).__name__}")

    async def _fail(self, exc: BaseException | None, text: str = FAILURE_TEXT) -> None:
        if exc is not None and self.runtime.show_errors:
            text = f"{text} {failure_detail(exc)}"
        with anyio.CancelScope(shield=True):
            try:
                writer = await self.task.ensure()
                if writer.task.status.state not in TERMINAL_STATES:
                    await writer.status(TaskState.FAILED, self.context.agent_message(text))
            except BackendUnavailableError:
                # The backend logged the outage once; no traceback per task.
                logger.debug("could not record the failure of task %s", self.task_id)
            except Exception:
                logger.exception("could not record the failure of task %s", self.task_id)
