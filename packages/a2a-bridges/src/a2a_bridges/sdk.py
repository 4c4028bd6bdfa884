"""Run an a2a-sdk 1.x ``AgentExecutor`` on our server, unchanged.

Google ADK (``A2aAgentExecutor``) and most agents written for the official SDK implement
``execute(context, event_queue)`` and ``cancel(context, event_queue)``. `from_executor`
turns such an executor into the agent :class:`~a2a_core.server.A2AServer` takes:

- the executor gets the SDK's own ``RequestContext`` (the user's message with both ids set,
  ``task_id`` and ``context_id`` of our task, ``current_task``: ``None`` for a new task and
  the stored task on a follow-up, the request's metadata and configuration, and a
  ``ServerCallContext`` with the caller, the tenant and the requested extensions);
- every event it enqueues (``Task``, ``Message``, ``TaskStatusUpdateEvent``,
  ``TaskArtifactUpdateEvent``) becomes our task's event when it is enqueued, in the
  executor's order, so streams are live and the SDK's ``TaskUpdater`` works unchanged;
- a client's cancel stops ``execute`` itself (executors do not stop of their own accord
  when told) and then calls ``executor.cancel``; an executor that raises fails the task
  with a generic message, the details going to the log.

Messages and tasks cross between the SDK's protobuf classes and our Structs as protobuf bytes
(``a2a_core.grpc``'s codec), so what the executor writes is validated as a request is.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Sequence
from typing import Any

import anyio
from a2a.auth.user import UnauthenticatedUser, User
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format

from a2a_bridges._card import agent_card, skill
from a2a_core.grpc import DecodeError, decode_message, encode_message
from a2a_core.server import Agent, TaskContext, owner_key
from a2a_core.types import (
    AgentCard,
    AgentSkill,
    Artifact,
    Message,
    TaskState,
    TaskStatus,
)

__all__ = ["CALL_STATE_KEY", "InvalidExecutorEventError", "card", "card_from_sdk", "from_executor"]

logger = logging.getLogger("a2a_bridges.sdk")

#: The key of our :class:`TaskContext` in ``RequestContext.call_context.state``, for an
#: executor that wants more of the call than the SDK's context carries.
CALL_STATE_KEY = "a2a_core.task_context"

#: How long ``executor.cancel`` may take, by default, before it is abandoned.
CANCEL_GRACE = 5.0


class InvalidExecutorEventError(Exception):
    """The executor enqueued something that cannot become an event of the task (the task
    fails; the log says what)."""


class _Caller(User):
    """Our authenticated caller as the SDK's ``User`` (ADK takes its user id from here)."""

    def __init__(self, identity: Any) -> None:
        self.identity = identity

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        # The owner key, not the bare subject: ADK keys its sessions by this name, and one
        # subject from two issuers is two callers. An identity with no key raises
        # TypeError (the task fails) rather than a guess that could give two callers one
        # name.
        return owner_key(self.identity)


def _to_pb(value: Any, cls: type[Any]) -> Any:
    """Our Struct as the SDK's protobuf message of the same name."""
    message = cls()
    message.ParseFromString(encode_message(value))
    return message


def _from_pb(message: Any, type_: type[Any]) -> Any:
    """The SDK's protobuf message as our Struct, validated as a request would be."""
    try:
        return decode_message(message.SerializeToString(), type_)
    except DecodeError as exc:
        raise InvalidExecutorEventError(
            f"the executor enqueued an invalid {type(message).__name__}: {exc}"
        ) from None


#: Stands in for the interfaces of a card given without any (ours are the server's).
_NO_INTERFACE = pb.AgentInterface(
    url="http://unused.invalid", protocol_binding="JSONRPC", protocol_version="1.0"
)


def _metadata(event: pb.TaskStatusUpdateEvent | pb.Task) -> dict[str, Any] | None:
    """An event's metadata as JSON values (``None`` without any)."""
    if not event.HasField("metadata"):
        return None
    metadata: dict[str, Any] = json_format.MessageToDict(event.metadata)
    return metadata or None


def _agent_message(message: pb.Message) -> Message:
    """An agent's message, its ``message_id`` filled in when the executor left it empty."""
    if not message.message_id:
        filled = pb.Message()
        filled.CopyFrom(message)
        filled.message_id = str(uuid.uuid4())
        message = filled
    result: Message = _from_pb(message, Message)
    return result


def _call_context(ctx: TaskContext) -> ServerCallContext:
    call = ctx.call
    identity = ctx.identity
    return ServerCallContext(
        user=UnauthenticatedUser() if identity is None else _Caller(identity),
        tenant=call.tenant,
        requested_extensions=set(call.requested_extensions),
        state={CALL_STATE_KEY: ctx},
    )


def _request_context(ctx: TaskContext) -> RequestContext:
    """The SDK's ``RequestContext`` for the message ``ctx`` handles."""
    request = pb.SendMessageRequest(message=_to_pb(ctx.message, pb.Message))
    request.message.task_id = ctx.task_id
    request.message.context_id = ctx.context_id
    call = ctx.call
    params = getattr(call.request, "metadata", None)
    if params:
        request.metadata.update(params)
    if ctx.configuration is not None:
        request.configuration.CopyFrom(_to_pb(ctx.configuration, pb.SendMessageConfiguration))
    task = ctx.task
    return RequestContext(
        call_context=_call_context(ctx),
        request=request,
        task_id=ctx.task_id,
        context_id=ctx.context_id,
        task=None if task is None else _to_pb(task, pb.Task),
    )


class _TaskQueue(EventQueue):
    """The executor's event queue: each event becomes our task's event as it is enqueued.

    Nothing is buffered: ``enqueue_event`` returns once the event is written, so the
    executor is paced by the task's storage, and events keep the executor's order.
    """

    def __init__(self, ctx: TaskContext) -> None:
        self._ctx = ctx
        #: A message-only reply (a lone ``Message`` before any task event).
        self.reply: Message | None = None
        self._in_task = ctx.is_follow_up
        #: Set once the run is over: an event enqueued later (by a task the executor left
        #: behind) is dropped, as the SDK's contract says the queue is no longer its.
        self.closed = False
        self._held_metadata: dict[str, Any] | None = None

    async def enqueue_event(self, event: Any) -> None:
        ctx = self._ctx
        if self.closed:
            logger.warning(
                "the executor enqueued a %s for task %s after its run ended: dropped",
                type(event).__name__,
                ctx.task_id,
            )
            return
        if isinstance(event, pb.Message):
            await self._message(event)
        elif isinstance(event, pb.TaskStatusUpdateEvent):
            self._enter_task(event)
            status: TaskStatus = _from_pb(event.status, TaskStatus)
            await self._status(status.state, status.message, _metadata(event))
        elif isinstance(event, pb.TaskArtifactUpdateEvent):
            self._enter_task(event)
            artifact = _from_pb(event.artifact, Artifact)
            await ctx.artifact(artifact, append=event.append, last_chunk=event.last_chunk)
        elif isinstance(event, pb.Task):
            self._enter_task(event)
            await self._task(event)
        else:
            raise InvalidExecutorEventError(
                f"an executor may enqueue a Task, a Message, a TaskStatusUpdateEvent or a "
                f"TaskArtifactUpdateEvent, not a {type(event).__name__}"
            )

    def _enter_task(self, event: Any) -> None:
        # The ids an event carries are the task's own (only they are written); an empty one
        # is taken as this task's, as the SDK's task manager does.
        task_id = event.id if isinstance(event, pb.Task) else event.task_id
        if task_id and task_id != self._ctx.task_id:
            raise InvalidExecutorEventError(
                f"the executor enqueued a {type(event).__name__} of another task ({task_id!r})"
            )
        if self.reply is not None:
            raise InvalidExecutorEventError(
                f"the executor enqueued a {type(event).__name__} after a message-only reply"
            )
        self._in_task = True

    async def _message(self, event: pb.Message) -> None:
        message = _agent_message(event)
        if self._in_task:
            # A message within the task (the SDK refuses these; ADK and others send them as
            # progress): a working status update that carries it.
            await self._ctx.working(message)
        elif self.reply is not None:
            raise InvalidExecutorEventError("the executor enqueued a second message-only reply")
        else:
            self.reply = message

    async def _task(self, task: pb.Task) -> None:
        """A ``Task`` event: the task is announced (``new_task_from_user_message``), or an
        executor reports its whole state at once. The history is the server's own; new
        artifacts and the status are taken."""
        ctx = self._ctx
        await ctx.submitted()
        current = ctx.task
        known = {a.artifact_id for a in current.artifacts} if current is not None else set()
        for artifact in task.artifacts:
            if artifact.artifact_id not in known:
                await ctx.artifact(_from_pb(artifact, Artifact))
        status: TaskStatus = _from_pb(task.status, TaskStatus)
        metadata = _metadata(task)
        if status.state is not TaskState.SUBMITTED or status.message is not None or metadata:
            await self._status(status.state, status.message, metadata)

    async def _status(
        self, state: TaskState, message: Message | None, metadata: dict[str, Any] | None = None
    ) -> None:
        ctx = self._ctx
        if self._held_metadata:
            metadata = {**self._held_metadata, **(metadata or {})}
            self._held_metadata = None
        if state is TaskState.SUBMITTED:
            # Where a task starts, not a step back to. Metadata reported with it goes with
            # the next status the executor reports (a status write is how it reaches the
            # task), rather than moving the task on by itself.
            await ctx.submitted()
            self._held_metadata = metadata
        elif state is TaskState.WORKING:
            await ctx.working(message, metadata=metadata)
        elif state is TaskState.COMPLETED:
            await ctx.complete(message, metadata=metadata)
        elif state is TaskState.FAILED:
            await ctx.fail(message, metadata=metadata)
        elif state is TaskState.CANCELED:
            await ctx.cancel(message, metadata=metadata)
        elif state is TaskState.REJECTED:
            await ctx.reject(message, metadata=metadata)
        elif state is TaskState.INPUT_REQUIRED:
            await ctx.input_required(message or "", metadata=metadata)
        elif state is TaskState.AUTH_REQUIRED:
            await ctx.auth_required(message or "", metadata=metadata)
        else:
            raise InvalidExecutorEventError(f"the executor reported the task {state.name}")


def from_executor(executor: AgentExecutor, *, cancel_grace: float = CANCEL_GRACE) -> Agent:
    """An agent that runs ``executor`` for every message.

    ``execute`` runs in the agent's own task: a cancel of the task (or a guard, or the
    server's shutdown) cancels it at its current await, as it would any agent, and then
    ``executor.cancel`` is called, bounded by ``cancel_grace`` seconds.
    """

    async def agent(ctx: TaskContext) -> Message | None:
        queue = _TaskQueue(ctx)
        request_context = _request_context(ctx)
        try:
            await executor.execute(request_context, queue)
        except anyio.get_cancelled_exc_class() as exc:
            # Ours only when this agent is being stopped (the server said so, or its scope
            # was cancelled: no time left). One of the executor's own making that escapes
            # it is a failure of the run: re-raised as it is, it would read as a cancel no
            # one asked for.
            if not ctx.stopping and anyio.current_effective_deadline() != -math.inf:
                raise RuntimeError("the executor raised a cancellation of its own") from exc
            with anyio.CancelScope(shield=True):
                await _cancel(executor, ctx, queue, cancel_grace)
            raise
        finally:
            queue.closed = True
        return queue.reply

    return agent


async def _cancel(
    executor: AgentExecutor, ctx: TaskContext, queue: _TaskQueue, grace: float
) -> None:
    """Tell the executor its task was canceled, with the context the SDK gives ``cancel``:
    the caller, the ids and the task, no message. What it enqueues after the task ended is
    dropped; an executor whose cancel raises is only logged."""
    task = ctx.task
    context = RequestContext(
        call_context=_call_context(ctx),
        task_id=ctx.task_id,
        context_id=ctx.context_id,
        task=None if task is None else _to_pb(task, pb.Task),
    )
    with anyio.move_on_after(grace) as scope:
        try:
            await executor.cancel(context, queue)
        except Exception as exc:
            logger.info("the executor's cancel of task %s raised %r", ctx.task_id, exc)
    if scope.cancelled_caught:
        logger.warning("the executor's cancel of task %s took over %.1f s", ctx.task_id, grace)


def card_from_sdk(sdk_card: pb.AgentCard, **overrides: Any) -> AgentCard:
    """The SDK's ``AgentCard`` (say, from ADK's ``AgentCardBuilder``) as ours; keyword
    arguments replace any field. Its interfaces are dropped: the server publishes its own."""
    document = pb.AgentCard()
    document.CopyFrom(sdk_card)
    del document.supported_interfaces[:]
    document.supported_interfaces.append(_NO_INTERFACE)
    if not document.version:
        document.version = "1.0.0"
    try:
        decoded = decode_message(document.SerializeToString(), AgentCard)
    except DecodeError as exc:
        raise ValueError(f"not a valid agent card: {exc}") from None
    fields = {name: getattr(decoded, name) for name in AgentCard.__struct_fields__}
    fields["supported_interfaces"] = []
    fields.update(overrides)
    return AgentCard(**fields)


def card(
    name: str,
    description: str,
    *,
    skills: Sequence[AgentSkill] = (),
    streaming: bool = True,
    **overrides: Any,
) -> AgentCard:
    """A card for an executor, which knows nothing of itself: its name and description, its
    skills (one named after the agent without them); any `AgentCard` field by keyword."""
    return agent_card(
        name=name,
        description=description,
        skills=list(skills) or [skill(name, description)],
        streaming=streaming,
        overrides=overrides,
    )
