"""Running agents (L2): the shared runtime state and one execution per incoming message.

:class:`Runtime` holds what every execution shares (store, event log, push, the registry of
running executions) and creates tasks. :class:`Execution` runs the agent for one message in
the server's background (``_background``), detached from the request that started it: a client
that goes away never cancels or corrupts a task. The request only waits on the execution's
signals (task created, result ready, settled).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import anyio
import msgspec

from a2a_core.errors import A2AError, UnsupportedOperationError
from a2a_core.lifecycle import ends_wait
from a2a_core.server._sync import Signal
from a2a_core.server.agent import (
    Agent,
    AuthRequired,
    InputRequired,
    Invocation,
    agent_message,
)
from a2a_core.server.context import TaskContext, TaskWriter, utc_now
from a2a_core.server.events import EventLog, ImmediateEventLog
from a2a_core.server.memory_push import InMemoryPushConfigStore
from a2a_core.server.push import PushConfigStore, PushSender
from a2a_core.server.store import ImmediateTaskStore, LoggedTaskStore, StoredTask, TaskStore
from a2a_core.types import (
    TERMINAL_STATES,
    Artifact,
    Message,
    Part,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

__all__ = ["Execution", "Runtime"]

logger = logging.getLogger("a2a_core.server")

#: The status message of a task whose agent raised: generic on purpose (details go to logs).
FAILURE_TEXT = "The agent failed while processing the request."


class _Exhausted:
    """What ``_drain`` returns when an agent's generator ran to its end."""


_EXHAUSTED = _Exhausted()


class Runtime:
    """State shared by all executions of one server."""

    def __init__(
        self,
        *,
        agent: Agent,
        store: TaskStore,
        events: EventLog,
        push_configs: PushConfigStore | None,
        push_sender: PushSender | None,
        push_enabled: bool,
    ) -> None:
        self.agent = agent
        self.store = store
        self.events = events
        self.push_configs = push_configs
        self.push_sender = push_sender
        self.push_enabled = push_enabled
        self.executions: dict[str, Execution] = {}
        self._agent_kind: tuple[Agent, str] | None = None
        self._immediate: tuple[ImmediateTaskStore, ImmediateEventLog] | None = None
        #: The event log, when it is immediate (see ``ImmediateEventLog``).
        self.immediate_log = events if isinstance(events, ImmediateEventLog) else None
        if isinstance(store, ImmediateTaskStore) and isinstance(events, ImmediateEventLog):
            self._immediate = (store, events)

    def immediate(self, task_id: str) -> tuple[ImmediateTaskStore, ImmediateEventLog] | None:
        """The store and log, when a change of this task can be recorded without waiting:
        both are immediate (see :class:`~a2a_core.server.store.ImmediateTaskStore`) and the
        task has no webhook to hand the change to."""
        immediate = self._immediate
        if immediate is not None and self.push_sender is not None:
            configs = self.push_configs
            if not isinstance(configs, InMemoryPushConfigStore) or configs.has_targets(task_id):
                return None
        return immediate

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

    @property
    def logged_store(self) -> LoggedTaskStore | None:
        """The store, when it keeps this runtime's event log itself (see
        :class:`~a2a_core.server.store.LoggedTaskStore`): events are then appended and
        tasks written in one step."""
        store = self.store
        if getattr(store, "event_log", None) is self.events:
            return cast(LoggedTaskStore, store)
        return None

    async def materialize(self, invocation: Invocation) -> TaskWriter:
        """Create the task of a new message (SUBMITTED, the message in its history), or record
        a follow-up message on an existing task (which moves to WORKING)."""
        call = invocation.call
        if invocation.task is None:
            task = Task(
                id=invocation.task_id,
                context_id=invocation.context_id,
                status=TaskStatus(state=TaskState.SUBMITTED, timestamp=utc_now()),
                history=[invocation.message],
            )
            config = invocation.configuration
            immediate = self.immediate(task.id)
            if immediate is not None and (
                config is None or config.task_push_notification_config is None
            ):
                store, log = immediate
                seq = log.append_now(task.id, StreamResponse(task=task))
                stored = store.create_now(task, tenant=call.tenant, last_seq=seq)
                if store.evictions_pending:
                    await store.notify_evicted()
                return TaskWriter(self, stored)
            with anyio.CancelScope(shield=True):
                logged = self.logged_store
                if logged is not None:
                    stored = await logged.create_logged(
                        task, StreamResponse(task=task), tenant=call.tenant
                    )
                else:
                    seq = await self.events.append(task.id, StreamResponse(task=task))
                    stored = await self.store.create(task, tenant=call.tenant, last_seq=seq)
                await self._register_push(invocation)
            return TaskWriter(self, stored)
        existing = await self.store.get(invocation.task_id)
        if existing is None:  # evicted between the check and now
            raise UnsupportedOperationError("The task is no longer available")
        writer = TaskWriter(self, existing)
        message = invocation.message

        def record_message(task: Task) -> Task:
            history = list(task.history)
            if task.status.message is not None:
                history.append(task.status.message)  # the question before its answer
            history.append(message)
            status = msgspec.structs.replace(task.status, message=None)
            return msgspec.structs.replace(task, history=history, status=status)

        update = TaskStatusUpdateEvent(
            task_id=existing.task.id,
            context_id=existing.task.context_id,
            status=TaskStatus(state=TaskState.WORKING, timestamp=utc_now()),
        )
        await writer.emit(StreamResponse(status_update=update), before=record_message)
        await self._register_push(invocation)
        return writer

    async def _register_push(self, invocation: Invocation) -> None:
        config = invocation.configuration
        webhook = config.task_push_notification_config if config is not None else None
        if webhook is None or not self.push_enabled or self.push_configs is None:
            return
        await self.push_configs.set(
            msgspec.structs.replace(webhook, task_id=invocation.task_id),
            legacy_v0_3=invocation.call.dialect == "0.3",
        )

    async def notify_push(self, task: Task, event: StreamResponse) -> None:
        """Hand an event to push delivery when the task has webhooks."""
        if self.push_sender is None or self.push_configs is None:
            return
        targets = await self.push_configs.targets(task.id)
        if targets:
            await self.push_sender.deliver(targets, event, task)


class Execution:
    """The agent handling one message, run in the background (see the module docstring)."""

    def __init__(
        self,
        runtime: Runtime,
        invocation: Invocation,
        *,
        eager: bool,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.runtime = runtime
        self.invocation = invocation
        self.context = TaskContext(runtime, invocation)
        self.context.on_materialized = self._watch
        self._eager = eager
        # Created when the execution starts; a cancel that comes first is remembered.
        self._scope: anyio.CancelScope | None = None
        self._cancel_requested = False
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

    @property
    def task_id(self) -> str:
        """The task this execution works on."""
        return self.invocation.task_id

    async def run(self, scope_class: type[anyio.CancelScope] = anyio.CancelScope) -> None:
        """Run the agent to the end; never raises (failures go to the task and the log).

        ``scope_class`` makes the cancel scope (the backend's own class saves a lookup)."""
        runtime = self.runtime
        runtime.executions[self.task_id] = self
        self._scope = scope = scope_class()
        if self._cancel_requested:
            scope.cancel()
        try:
            with scope:
                if self._eager:
                    await self._ensure_task()
                result = await self._invoke()
                await self._finish(result)
        except A2AError as exc:
            if self.context.writer is None:
                self.error = exc
            else:
                await self._fail(exc)
        except Exception as exc:
            logger.exception("agent raised while handling task %s", self.task_id)
            await self._fail(exc)
        finally:
            runtime.executions.pop(self.task_id, None)
            self.started.set()
            self.settled.set()
            self.done.set()

    def cancel_soon(self) -> None:
        """Cancel the agent; it stops at its next checkpoint (the task is already CANCELED)."""
        self._cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()

    async def _ensure_task(self) -> TaskWriter:
        writer = self.context.writer
        if writer is None:
            await self.context._ensure_task()
            writer = self.context.writer
            assert writer is not None
        return writer

    def _watch(self, writer: TaskWriter) -> None:
        def on_change(task: Task) -> None:
            if ends_wait(task.status.state):
                self.settled.set()

        writer.on_change(on_change)
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
        result = await anyio.to_thread.run_sync(agent, ctx)
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
            writer = await self._ensure_task()
            if not ends_wait(writer.task.status.state):
                await ctx.complete()
            return
        if isinstance(result, Message):
            if ctx.writer is None:
                reply = agent_message(result, context_id=ctx.context_id)
                if reply.task_id == ctx.task_id:
                    # No task was created, so the reply must not point at one (the context's
                    # agent_message() fills in the id the task would have had).
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
            writer = await self._ensure_task()
            if writer.task.status.state is TaskState.SUBMITTED:
                await ctx.complete()
            return  # WORKING: left open, to be finished elsewhere; else already settled
        if isinstance(result, str | Part | Artifact | Sequence):
            await ctx._answer(result)
            return
        raise TypeError(f"an agent cannot return a {type(result).__name__}")

    async def _fail(self, exc: BaseException) -> None:
        with anyio.CancelScope(shield=True):
            try:
                writer = await self._ensure_task()
                if writer.task.status.state not in TERMINAL_STATES:
                    await writer.status(TaskState.FAILED, self.context.agent_message(FAILURE_TEXT))
            except Exception:
                logger.exception("could not record the failure of task %s", self.task_id)
