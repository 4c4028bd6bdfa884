"""The operations (L2): one handler per `Operation`, found in one table.

`A2AServer.handle` turns a request into a `Call` through the protocol, then runs
``HANDLERS[call.operation]``: a send starts the agent (`Execution`) and waits as the call
asks; a get, list or cancel reads or writes the task; a subscription and a streaming send
answer with a stream of the task's events; the push-config operations and the extended card
do what their names say. A non-streaming handler returns the operation's v1.0 result, which
the server hands to the extensions' ``on_result`` and the protocol encodes; a streaming one
returns the `SseResponse`.

Every handler is given the `ServerState` (what one server's handlers share: the protocol,
the storage, the runtime, the guards, the settings) and the call's observation (a no-op one
when the server is not observed). Every task they touch is found through `load`, which
answers TaskNotFound for a task of another tenant, another owner or one ``authorize_task``
denies, exactly as for a missing one.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, TypeAlias

import anyio
import msgspec

from a2a_core._protocol.call import Call
from a2a_core._protocol.errors import (
    InternalError,
    InvalidParamsError,
    LocalProtocolError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core._protocol.http import SseResponse
from a2a_core._protocol.lifecycle import task_view
from a2a_core._protocol.operations import OPERATIONS, Operation
from a2a_core._protocol.server import ServerProtocol
from a2a_core._protocol.sse import EventStream
from a2a_core.server._background import Background
from a2a_core.server._extensions import Extension
from a2a_core.server._guards import Guards
from a2a_core.server._idempotency import find_sent, same_message, settled, task_id_for
from a2a_core.server._messages import Invocation, new_id
from a2a_core.server._options import PushOptions, StreamOptions
from a2a_core.server._ownership import TaskOwner
from a2a_core.server._push import PushConfigLimitError, PushConfigStore
from a2a_core.server._push_secrets import redact_push_config
from a2a_core.server._recovery import epoch_of
from a2a_core.server._runtime import Execution, Runtime
from a2a_core.server._storage import Storage
from a2a_core.server._store import InvalidPageTokenError, StoredTask, TaskQuery
from a2a_core.server._streams import EventHook, FirstEvent, StreamSource, stream_frames
from a2a_core.server._webhook_guard import WebhookUrlRefusedError
from a2a_core.server._writes import TaskWriter, utc_now
from a2a_core.server.observe import CallObservation, NoOpObservation
from a2a_core.types import (
    TERMINAL_STATES,
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

logger = logging.getLogger("a2a_core.server")

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "HANDLERS",
    "NO_OBSERVATION",
    "AuthorizeTask",
    "ExtendedCard",
    "Handler",
    "ServerState",
    "activation",
    "task_named",
]

#: ``authorize_task(operation, task, call) -> bool``: may the caller do ``operation`` on
#: ``task``? Operations: get, cancel, list, send, subscribe, push_set, push_get, push_list,
#: push_delete. A denial is answered as TaskNotFoundError, so task ids never leak.
AuthorizeTask = Callable[[str, Task, Call], bool | Awaitable[bool]]
#: The extended card: one card for every authenticated caller, or one per caller.
ExtendedCard = AgentCard | Callable[[Any], AgentCard | Awaitable[AgentCard]]

DEFAULT_PAGE_SIZE: Final = 50

#: How long a follow-up waits for the agent still running on its task (seconds) before it
#: is refused as "still processing a message".
FOLLOW_UP_WAIT: Final = 2.0
#: The states in which the task asked its caller for something: a follow-up that answers
#: may wait for the agent that asked to return.
_ASKING_STATES: Final = frozenset({TaskState.INPUT_REQUIRED, TaskState.AUTH_REQUIRED})
#: The states of a task whose agent is at work.
_RUNNING_STATES: Final = frozenset({TaskState.SUBMITTED, TaskState.WORKING})
#: The observation of a call on a server nobody observes: every point costs one call of a
#: method that does nothing.
NO_OBSERVATION: Final = NoOpObservation()


class ServerState:
    """What the handlers of one server share, built once by `A2AServer`."""

    __slots__ = (
        "_holds_now",
        "_looking",
        "authorize_task",
        "background",
        "extended_card",
        "extensions",
        "guards",
        "idempotency_window",
        "idempotent_sends",
        "protocol",
        "push",
        "push_enabled",
        "runtime",
        "storage",
        "stream_source",
        "streams",
        "task_owner",
    )

    def __init__(
        self,
        *,
        protocol: ServerProtocol,
        storage: Storage,
        runtime: Runtime,
        guards: Guards,
        task_owner: TaskOwner | None,
        authorize_task: AuthorizeTask | None,
        push: PushOptions,
        push_enabled: bool,
        streams: StreamOptions,
        stream_source: StreamSource,
        extensions: Sequence[Extension],
        extended_card: ExtendedCard | None,
        idempotent_sends: bool = True,
        idempotency_window: float | None = None,
    ) -> None:
        self.protocol = protocol
        #: Whether a message sent again is answered with what it started (``_idempotency``).
        self.idempotent_sends = idempotent_sends
        # A store that can tell without waiting that a task is not there (the in-memory
        # one) spares a send's look for its copy the read (nearly every send is new).
        self._holds_now: Callable[[str], bool] | None = getattr(storage.store, "holds_now", None)
        #: Seconds after a task's last change that a copy of its message still counts.
        self.idempotency_window = idempotency_window
        #: The derived ids a send is looking up in the store now (`_derived_id`).
        self._looking: dict[str, anyio.Event] = {}
        self.storage = storage
        self.runtime = runtime
        self.guards = guards
        self.task_owner = task_owner
        self.authorize_task = authorize_task
        self.push = push
        self.push_enabled = push_enabled
        self.streams = streams
        self.stream_source = stream_source
        self.extensions = tuple(extensions)
        self.extended_card = extended_card
        #: Where executions run, while the server runs (``None`` when it does not).
        self.background: Background | None = None

    # --- what several handlers do ----------------------------------------------------

    async def authorized(self, operation: str, task: Task, call: Call) -> bool:
        """Whether ``authorize_task`` (if any) lets the call do ``operation`` on ``task``."""
        if self.authorize_task is None:
            return True
        verdict = self.authorize_task(operation, task, call)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    async def load(self, call: Call, task_id: str) -> StoredTask:
        """The task ``call`` acts on, if it exists in the call's tenant, belongs to the
        caller (with ownership on) and ``authorize_task`` allows the operation's verb; else
        TaskNotFound, as for a missing task, so a caller learns nothing of others' tasks."""
        stored = await self.storage.store.get(task_id)
        task_owner = self.task_owner
        if (
            stored is None
            or stored.tenant != call.tenant
            or (task_owner is not None and stored.owner != task_owner(call))
            or not await self.authorized(_VERBS[call.operation], stored.task, call)
        ):
            raise TaskNotFoundError(metadata={"taskId": task_id[:128]})
        return stored

    def check_webhook(self, url: str) -> None:
        """The static SSRF guard; a refusal is the client's InvalidParams."""
        try:
            self.push.webhook_policy.check_url(url)
        except WebhookUrlRefusedError as exc:
            raise InvalidParamsError(f"Webhook URL refused: {exc}") from None

    def shown(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """A config as a reply shows it: without its secrets, unless they are revealed. The
        Create reply too: one rule for every reply, and a secret the client just sent need
        not travel back through proxies and client logs."""
        return config if self.push.reveal_secrets else redact_push_config(config)

    def active(self, call: Call) -> list[Extension] | tuple[()]:
        """The extensions active for ``call`` (decided once, when the call was made)."""
        if not call.extensions:  # nearly every call: no list to build
            return ()
        return [ext for ext in self.extensions if ext.uri in call.extensions]

    def stream(
        self,
        call: Call,
        first: Sequence[FirstEvent],
        task_id: str | None,
        after: int,
        observation: CallObservation,
        *,
        idle_limit: float | None = None,
        replay_until: int | None = None,
    ) -> SseResponse:
        """The call's stream: ``first``, then the task's log after ``after`` (see
        `stream_frames`); ``replay_until`` is the last seq logged before it opened."""
        stream: EventStream = self.protocol.open_event_stream(call)
        frames = stream_frames(
            stream,
            first,
            task_id,
            after,
            self.stream_source,
            idle_limit=idle_limit,
            replay_until=replay_until,
            on_event=self._event_hook(call),
            observation=None if observation is NO_OBSERVATION else observation,
        )
        return SseResponse(200, stream.headers, frames)

    def _event_hook(self, call: Call) -> EventHook | None:
        """The active extensions' ``on_event`` as one function (``None``: no extension)."""
        active = self.active(call)
        if not active:
            return None

        def on_event(event: StreamResponse) -> StreamResponse:
            for ext in active:
                event = ext.on_event(call, event)
            return event

        return on_event

    async def start(
        self, call: Call, request: SendMessageRequest, observation: CallObservation
    ) -> Execution | StoredTask:
        """Start the agent for a message (new task, or a follow-up of an interrupted one):
        every check first, so that a refused message writes nothing. A message sent again
        (``_idempotency``) is not run again: its running execution, or its task as stored,
        is returned instead."""
        background = self.background
        if background is None:
            raise LocalProtocolError(
                "A2AServer is not running: enter it (`async with server:`) or use the "
                "adapter's lifespan before serving requests"
            )
        config = request.configuration
        immediate = bool(config and config.return_immediately)
        webhook = config.task_push_notification_config if config is not None else None
        if webhook is not None and self.push_enabled:
            # An inline webhook meets the same SSRF guard as a created config, before the
            # task exists, rather than being stored and then refused at every delivery.
            self.check_webhook(webhook.url)
        message = request.message
        existing: Task | None = None
        last_seq = 0
        owner = self.task_owner(call) if self.task_owner is not None else ""
        derived_id = ""
        epoch = 1
        if message.task_id:
            stored = await self.load(call, message.task_id)
            copy = self._copy_of_follow_up(stored, message)
            if copy is not None:
                return copy  # this follow-up was sent before: not run again
            running = self.runtime.executions.get(message.task_id)
            if running is not None and stored.task.status.state in _ASKING_STATES:
                # An agent that asked for input may still be returning when the answer
                # comes (a bridged executor unwinds after writing INPUT_REQUIRED): the
                # answer waits for it a moment rather than being refused. A follow-up to a
                # task that is working is refused at once: it did not ask for anything.
                with anyio.move_on_after(FOLLOW_UP_WAIT):
                    await running.done.wait()
                if running.done.is_set():
                    stored = await self.load(call, message.task_id)
                copy = self._copy_of_follow_up(stored, message)
                if copy is not None:
                    return copy  # a copy got there while this one waited
            existing, last_seq = stored.task, stored.last_seq
            epoch = epoch_of(existing)
            if existing.status.state in TERMINAL_STATES:
                raise UnsupportedOperationError(
                    f"Task is {existing.status.state.value}: start a new task in the same "
                    "context (referenceTaskIds may point at this one)"
                )
            if message.context_id and message.context_id != existing.context_id:
                raise InvalidParamsError("message.contextId does not match the task's context")
            if message.task_id in self.runtime.executions:
                raise UnsupportedOperationError("The task is still processing a message")
        elif self.idempotent_sends and message.message_id:
            derived_id, sent = await self._derived_id(call, owner, message)
            if sent is not None:
                return sent  # sent before: not run again
        task_id = existing.id if existing else (derived_id or new_id())
        context_id = existing.context_id if existing else (message.context_id or new_id())
        message = msgspec.structs.replace(message, task_id=task_id, context_id=context_id)
        storage = self.storage
        # Refused before anything is written or the agent is called: InvalidParams.
        storage.limits.admit(message, existing, last_seq)
        if storage.check_message is not None:
            storage.check_message(message, tenant=call.tenant, owner=owner)
        invocation = Invocation(
            message=message,
            task_id=task_id,
            context_id=context_id,
            task=existing,
            configuration=config,
            call=call,
            owner=owner,
            epoch=epoch,
            idempotent=self.idempotent_sends,
        )
        # A non-blocking send, and a follow-up, answer with the task: it is created (or
        # the follow-up recorded) before the agent is asked.
        # A stream told not to wait for the agent (``first_frame_wait=0``) starts with the
        # task, as a non-blocking send does.
        task_first = call.streaming and not self.streams.first_frame_wait
        execution = Execution(
            self.runtime,
            invocation,
            create_first=immediate or existing is not None or task_first,
            loop=background.loop,
        )
        self.guards.admit(execution)  # may refuse it: nothing is written yet
        if observation is not NO_OBSERVATION:
            execution.observation = observation.execution_started(invocation)
        self.runtime.register(execution)
        background.start(execution)
        return execution

    def _copy_of_follow_up(
        self, stored: StoredTask, message: Message
    ) -> Execution | StoredTask | None:
        """What a follow-up sent again started (``_idempotency``): its execution running
        here, or its task, once the message is recorded in it; ``None``: it is new."""
        if not self.idempotent_sends:
            return None
        running = self.runtime.executions.get(stored.task.id)
        if running is not None and running.invocation.task is not None:
            sent = running.invocation.message
            if sent.message_id == message.message_id and same_message(sent, message):
                return running
        if find_sent(stored.task, message) and self._recent(stored.task):
            return stored
        return None

    async def _derived_id(
        self, call: Call, owner: str, message: Message
    ) -> tuple[str, Execution | StoredTask | None]:
        """The id of the task a new message starts (derived from its key, or random when
        that id is taken by another message), or what the message started if it was sent
        before: its execution running here, or its task (see ``_idempotency``)."""
        derived = task_id_for(call.tenant, owner, message.message_id)
        holds_now = self._holds_now
        if holds_now is not None and not holds_now(derived):
            # Nearly every send: the store tells at once that the task is not there, and
            # nothing awaits from here until this message's execution is registered.
            return self._first_copy(derived, message)
        # One look per id at a time on this replica: a copy that ran start to finish while
        # another read the store would be missed by that read, never by the next one.
        while (looking := self._looking.get(derived)) is not None:
            await looking.wait()
        self._looking[derived] = looking = anyio.Event()
        try:
            stored = await self.storage.store.get(derived)
            running = self.runtime.executions.get(derived)
            if running is not None and running.invocation.task is None:
                return self._first_copy(derived, message)
            if stored is None:
                return derived, None
            if await self._same_first_message(call, owner, stored, message):
                # Its task (a follow-up may be running on it now): answered as a copy of
                # the message that started it, from the task's whole log.
                return derived, stored
            return new_id(), None  # the messageId was used for another message: a new task
        finally:
            # Woken waiters run after this send registered its execution (no await before).
            del self._looking[derived]
            looking.set()

    def _first_copy(
        self, derived: str, message: Message
    ) -> tuple[str, Execution | StoredTask | None]:
        """The derived id, or the execution of a copy of ``message`` running under it."""
        running = self.runtime.executions.get(derived)
        if running is None:
            return derived, None
        if running.invocation.task is None and same_message(running.invocation.message, message):
            return derived, running
        return new_id(), None  # another message runs under that id

    async def _same_first_message(
        self, call: Call, owner: str, stored: StoredTask, message: Message
    ) -> bool:
        """Whether ``stored`` is the task ``message`` started, recently enough."""
        history = stored.task.history
        first = history[0] if history else None
        return (
            stored.tenant == call.tenant
            and stored.owner == owner
            and first is not None
            and first.message_id == message.message_id
            and same_message(first, message)
            and self._recent(stored.task)
            and await self.authorized("send", stored.task, call)
        )

    def _recent(self, task: Task) -> bool:
        """Whether a copy of a message of ``task`` still counts as one: while the task runs,
        and for ``idempotency_window`` seconds after its last change."""
        window = self.idempotency_window
        stamp = task.status.timestamp
        if window is None or stamp is None or task.status.state in _RUNNING_STATES:
            return True
        return (utc_now() - stamp).total_seconds() <= window

    async def sent_reply(
        self, request: SendMessageRequest, stored: StoredTask
    ) -> SendMessageResponse:
        """The reply to a SendMessage sent again whose task is ``stored``: what its first
        copy answered (blocking: once the task settles)."""
        config = request.configuration
        if not (config and config.return_immediately):
            stored = await settled(self.stream_source.log, self.storage.store, stored)
        history = config.history_length if config else None
        return SendMessageResponse(task=task_view(stored.task, history_length=history))

    def sent_stream(
        self,
        call: Call,
        request: SendMessageRequest,
        stored: StoredTask,
        observation: CallObservation,
    ) -> SseResponse:
        """The stream of a SendStreamingMessage sent again whose task is ``stored``: a
        message that started the task gets the task's whole log, as its first stream had
        it; a follow-up, the task as it stands and what follows."""
        task_id = stored.task.id
        history = stored.task.history
        if history and history[0].message_id == request.message.message_id:
            return self.stream(call, [], task_id, 0, observation, replay_until=stored.last_seq)
        return self.stream(call, [snapshot(stored)], task_id, stored.last_seq, observation)


# --- the handlers ------------------------------------------------------------------------

#: A handler: the server's state, the call and its observation; the operation's v1.0 result
#: (or, streaming, the `SseResponse`).
Handler: TypeAlias = Callable[[ServerState, Call, CallObservation], Awaitable[Any]]

#: What ``authorize_task`` is asked for each operation that touches a task (its verb in the
#: operations table).
_VERBS: Final[dict[Operation, str]] = {
    op: spec.verb for op, spec in OPERATIONS.items() if spec.verb is not None
}


async def send_message(
    state: ServerState, call: Call, observation: CallObservation
) -> SendMessageResponse:
    """SendMessage: the task (or message) once the agent settled it; at once with
    ``returnImmediately``, the agent running on."""
    request: SendMessageRequest = call.request  # type: ignore[assignment]
    config = request.configuration
    execution = await state.start(call, request, observation)
    if isinstance(execution, StoredTask):  # sent again: answered as the first copy was
        return await state.sent_reply(request, execution)
    ready = execution.started if config and config.return_immediately else execution.settled
    await ready.wait()
    if execution.duplicate is not None:  # a copy on another replica created the task first
        return await state.sent_reply(request, execution.duplicate)
    if execution.error is not None:
        raise execution.error
    if execution.reply_message is not None:
        return SendMessageResponse(message=execution.reply_message)
    writer = execution.task.writer
    if writer is None:  # pragma: no cover - run() always creates a task or a reply
        raise InternalError()
    history = config.history_length if config else None
    return SendMessageResponse(task=task_view(writer.task, history_length=history))


async def send_streaming_message(
    state: ServerState, call: Call, observation: CallObservation
) -> SseResponse:
    """SendStreamingMessage: the task's events from its creation (a follow-up: from the
    task as it stood), until it settles; a message-only reply is one event."""
    request: SendMessageRequest = call.request  # type: ignore[assignment]
    execution = await state.start(call, request, observation)
    if isinstance(execution, StoredTask):  # sent again: its events again
        return state.sent_stream(call, request, execution, observation)
    started = execution.started
    if not await started.wait_at_most(state.streams.first_frame_wait):
        # A quiet agent does not hold the stream back: past the wait, the task is created
        # (listed, cancelable) and is the stream's first frame; keep-alives follow.
        await execution.open_task()
    await started.wait()
    if execution.duplicate is not None:  # a copy on another replica created the task first
        return state.sent_stream(call, request, execution.duplicate, observation)
    if execution.error is not None:
        raise execution.error
    if execution.reply_message is not None:
        only: list[FirstEvent] = [(None, StreamResponse(message=execution.reply_message))]
        return state.stream(call, only, None, 0, observation)
    writer = execution.task.writer
    if writer is None:  # pragma: no cover - started means a task or a reply exists
        raise InternalError()
    if execution.invocation.task is None:
        # A new task: its log starts with the task snapshot, so replay it all.
        task_id = writer.task.id
        return state.stream(call, [], task_id, 0, observation, replay_until=writer.stored.last_seq)
    stored = execution.first_snapshot or writer.stored
    return state.stream(call, [snapshot(stored)], stored.task.id, stored.last_seq, observation)


async def get_task(state: ServerState, call: Call, observation: CallObservation) -> Task:
    """GetTask: the task, with as much history as asked."""
    request: GetTaskRequest = call.request  # type: ignore[assignment]
    stored = await state.load(call, request.id)
    return task_view(stored.task, history_length=request.history_length)


async def list_tasks(
    state: ServerState, call: Call, observation: CallObservation
) -> ListTasksResponse:
    """ListTasks: the caller's tasks (``authorize_task`` filters before paging, so that
    ``totalSize`` and the pages stay right), newest first."""
    request: ListTasksRequest = call.request  # type: ignore[assignment]
    page_size = request.page_size or DEFAULT_PAGE_SIZE
    query = TaskQuery(
        tenant=call.tenant,
        owner=state.task_owner(call) if state.task_owner is not None else None,
        context_id=request.context_id,
        state=request.status,
        status_timestamp_after=request.status_timestamp_after,
        page_size=page_size,
        page_token=request.page_token,
    )

    async def visible(task: Task) -> bool:
        return await state.authorized(_VERBS[call.operation], task, call)

    try:
        page = await state.storage.store.list_tasks(
            query, visible if state.authorize_task is not None else None
        )
    except InvalidPageTokenError:
        raise InvalidParamsError("Invalid pageToken") from None
    tasks = [
        task_view(
            task,
            history_length=request.history_length,
            include_artifacts=bool(request.include_artifacts),
        )
        for task in page.tasks
    ]
    return ListTasksResponse(
        tasks=tasks,
        next_page_token=page.next_page_token,
        page_size=page_size,
        total_size=page.total_size,
    )


async def cancel_task(state: ServerState, call: Call, observation: CallObservation) -> Task:
    """CancelTask: CANCELED is written first, so whatever the agent does while it unwinds
    (or if it ignores cancellation) arrives after a terminal state and is dropped."""
    request: CancelTaskRequest = call.request  # type: ignore[assignment]
    stored = await state.load(call, request.id)
    if stored.task.status.state in TERMINAL_STATES:
        raise TaskNotCancelableError(
            f"Task is {stored.task.status.state.value} and cannot be canceled"
        )
    execution = state.runtime.executions.get(request.id)
    writer = execution.task.writer if execution is not None else None
    if writer is None:
        writer = TaskWriter(state.storage, stored)
    task = await writer.cancel()
    if execution is not None:
        execution.cancel_soon()
    return task


async def subscribe_to_task(
    state: ServerState, call: Call, observation: CallObservation
) -> SseResponse:
    """SubscribeToTask: the task as it stands, then its events until it is terminal; a
    reconnect (``Last-Event-ID``) gets what it missed instead of the snapshot."""
    request: SubscribeToTaskRequest = call.request  # type: ignore[assignment]
    stored = await state.load(call, request.id)
    finished = stored.task.status.state in TERMINAL_STATES
    last_event_id = _last_event_id(call)
    idle = state.streams.idle_timeout
    # A reconnect gets what it missed, also when the task finished in between (but a
    # client that saw the final event has nothing left to subscribe to).
    missed_up_to = stored.last_seq - 1 if finished else stored.last_seq
    if last_event_id is not None and 0 <= last_event_id <= missed_up_to:
        return state.stream(
            call,
            [],
            stored.task.id,
            last_event_id,
            observation,
            idle_limit=idle,
            replay_until=stored.last_seq,
        )
    if finished:
        if call.dialect == "1.0":
            raise UnsupportedOperationError(
                f"Task is {stored.task.status.state.value}: there is nothing to subscribe to"
            )
        # v0.3 (docs/spec-decisions.md): the final task, then close.
        return state.stream(call, [snapshot(stored)], None, 0, observation)
    return state.stream(
        call, [snapshot(stored)], stored.task.id, stored.last_seq, observation, idle_limit=idle
    )


async def create_push_config(
    state: ServerState, call: Call, observation: CallObservation
) -> TaskPushNotificationConfig:
    """CreateTaskPushNotificationConfig: stored (an id assigned when absent), after the
    SSRF guard; the reply shows it without its secrets."""
    request: TaskPushNotificationConfig = call.request  # type: ignore[assignment]
    await state.load(call, request.task_id)
    state.check_webhook(request.url)
    configs = _configs(state)
    try:
        stored = await configs.set(request, legacy_v0_3=call.dialect == "0.3")
    except PushConfigLimitError as exc:
        raise InvalidParamsError(str(exc)) from None
    return state.shown(stored)


async def get_push_config(
    state: ServerState, call: Call, observation: CallObservation
) -> TaskPushNotificationConfig:
    """GetTaskPushNotificationConfig."""
    request: GetTaskPushNotificationConfigRequest = call.request  # type: ignore[assignment]
    await state.load(call, request.task_id)
    found = await _configs(state).get(request.task_id, request.id)
    if found is None:
        raise TaskNotFoundError("Push notification config not found")
    return state.shown(found)


async def list_push_configs(
    state: ServerState, call: Call, observation: CallObservation
) -> ListTaskPushNotificationConfigsResponse:
    """ListTaskPushNotificationConfigs."""
    request: ListTaskPushNotificationConfigsRequest = call.request  # type: ignore[assignment]
    await state.load(call, request.task_id)
    configs = await _configs(state).list_configs(request.task_id)
    return ListTaskPushNotificationConfigsResponse(configs=[state.shown(c) for c in configs])


async def delete_push_config(state: ServerState, call: Call, observation: CallObservation) -> None:
    """DeleteTaskPushNotificationConfig (idempotent)."""
    request: DeleteTaskPushNotificationConfigRequest = call.request  # type: ignore[assignment]
    await state.load(call, request.task_id)
    await _configs(state).delete(request.task_id, request.id)


async def get_extended_card(
    state: ServerState, call: Call, observation: CallObservation
) -> AgentCard:
    """GetExtendedAgentCard: the configured card (or the one made for this caller), with
    the served interfaces and declared extensions filled in, and signed like the public
    one. The protocol gated it already (capability, configured); the spec reserves it for
    authenticated callers (``ProtocolOptions.extended_card_for_anonymous`` lifts that)."""
    if call.identity is None and not state.protocol.options.extended_card_for_anonymous:
        raise UnsupportedOperationError(
            "The extended agent card is only served to authenticated callers"
        )
    source = state.extended_card
    if source is None:  # pragma: no cover - the protocol refuses it when not configured
        raise InternalError()
    card = source(call.identity) if callable(source) else source
    if inspect.isawaitable(card):
        card = await card
    if not isinstance(card, AgentCard):
        raise LocalProtocolError(f"the extended card source gave a {type(card).__name__}")
    return state.protocol.complete_card(card, call.base_url)


#: The handler of each operation; every row of the operations table has one.
HANDLERS: Final[Mapping[Operation, Handler]] = MappingProxyType(
    {
        Operation.SEND_MESSAGE: send_message,
        Operation.SEND_STREAMING_MESSAGE: send_streaming_message,
        Operation.GET_TASK: get_task,
        Operation.LIST_TASKS: list_tasks,
        Operation.CANCEL_TASK: cancel_task,
        Operation.SUBSCRIBE_TO_TASK: subscribe_to_task,
        Operation.CREATE_PUSH_CONFIG: create_push_config,
        Operation.GET_PUSH_CONFIG: get_push_config,
        Operation.LIST_PUSH_CONFIGS: list_push_configs,
        Operation.DELETE_PUSH_CONFIG: delete_push_config,
        Operation.GET_EXTENDED_CARD: get_extended_card,
    }
)
assert set(HANDLERS) == set(OPERATIONS), "an operation without a handler"


# --- helpers -----------------------------------------------------------------------------


def activation(extensions: Sequence[Extension]) -> Callable[[Call], list[str]]:
    """The activation decision the protocol makes once per call (``call.extensions`` are
    the declared URIs the client asked for): each extension's `Extension.activate`. What it
    returns becomes the call's ``extensions`` and its ``A2A-Extensions`` reply header; the
    hooks and ``TaskContext.extensions`` read it from the call."""

    def activate(call: Call) -> list[str]:
        try:
            return [
                ext.uri
                for ext in extensions
                if ext.uri in call.extensions and ext.activate(call.requested_extensions, call)
            ]
        except Exception:
            logger.exception("extension activation failed for %s", call.operation.value)
            raise InternalError() from None

    return activate


def _configs(state: ServerState) -> PushConfigStore:
    configs = state.storage.push_configs
    if configs is None:  # pragma: no cover - the protocol gates push on the capability
        raise InternalError()
    return configs


def snapshot(stored: StoredTask) -> FirstEvent:
    """A subscription's first event: the task as stored, named by its store version, so
    that its subscribers share one encoding of it (``_frame_cache``)."""
    task = stored.task
    return stored.last_seq, StreamResponse(task=task), ("task", task.id, stored.version)


def _last_event_id(call: Call) -> int | None:
    value = (call.last_event_id or "").strip()
    return int(value) if value.isdigit() and len(value) < 19 else None


def task_named(call: Call) -> str:
    """The task id a call's request names, for a log line (``-``: none yet)."""
    request = call.request
    if isinstance(request, SendMessageRequest):
        return request.message.task_id or "-"
    found = getattr(request, "task_id", None) or getattr(request, "id", None)
    return str(found) if isinstance(found, str) and found else "-"
