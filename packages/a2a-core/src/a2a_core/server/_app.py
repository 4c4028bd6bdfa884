"""The server object (L2): :class:`A2AServer`, one entry point for every adapter.

``await server.handle(HttpRequest)`` returns an :class:`HttpResponse` or an
:class:`SseResponse`. In between, the sans-IO :class:`ServerProtocol` checks and decodes the
request into a :class:`Call`; this module authorizes and executes it (running the agent in
the server's background, see ``_background``), then lets the protocol encode the reply. The server
must be running (``async with server:``, or the adapter's lifespan) so that agents and push
delivery have somewhere to live that outlasts a request.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Self

import anyio
import msgspec
from anyio.abc import TaskGroup

from a2a_core._protocol.agent_card import build_card
from a2a_core._protocol.call import Call
from a2a_core._protocol.errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    LocalProtocolError,
    ServerUnavailableError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core._protocol.http import HttpRequest, HttpResponse, SseResponse
from a2a_core._protocol.lifecycle import task_view
from a2a_core._protocol.operations import OPERATIONS, Operation
from a2a_core._protocol.server import ProtocolOptions, ServerProtocol
from a2a_core._protocol.sse import EventStream
from a2a_core.auth import Authenticator, AuthFailure, Verifier
from a2a_core.server._agent import Agent
from a2a_core.server._backend import Backend, InMemoryBackend, Service
from a2a_core.server._background import Background
from a2a_core.server._collector import freeze_startup_objects
from a2a_core.server._events import MeasuredEventLog
from a2a_core.server._extensions import Extension
from a2a_core.server._frame_cache import FrameCache
from a2a_core.server._guards import ExecutionGuards, Guards
from a2a_core.server._health import Health, check_backend
from a2a_core.server._limits import TaskLimits
from a2a_core.server._memory_push import PushConfigLimitError
from a2a_core.server._messages import Invocation, agent_message, new_id
from a2a_core.server._ownership import TaskOwner, owner_by_identity
from a2a_core.server._push_delivery import WebhookPushSender
from a2a_core.server._push_secrets import redact_push_config
from a2a_core.server._runtime import Execution, Runtime
from a2a_core.server._stopping import StoppableLog
from a2a_core.server._storage import Storage
from a2a_core.server._store import InvalidPageTokenError, StoredTask, TaskQuery
from a2a_core.server._streams import (
    DEFAULT_BACKLOG_LIMIT,
    EventHook,
    FirstEvent,
    stream_frames,
)
from a2a_core.server._webhook_guard import WebhookUrlRefusedError, check_webhook_url
from a2a_core.server._writes import TaskWriter
from a2a_core.server.observe import CallObservation, Observer
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
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

__all__ = ["SHUTDOWN_TEXT", "A2AServer", "AuthorizeTask", "ExtendedCard", "Service"]

#: The status message of a task failed because the server shut down while its agent ran.
SHUTDOWN_TEXT: Final = (
    "The server shut down before the task finished; send the message again to start over."
)
_STOPPING_TEXT: Final = "The server is shutting down"
#: Seconds cancelled agents get to unwind at shutdown before they are abandoned.
_UNWIND_SECONDS: Final = 1.0

logger = logging.getLogger("a2a_core.server")

#: ``authorize_task(operation, task, call) -> bool``: may the caller do ``operation`` on
#: ``task``? Operations: get, cancel, list, send, subscribe, push_set, push_get, push_list,
#: push_delete. A denial is answered as TaskNotFoundError, so task ids never leak.
AuthorizeTask = Callable[[str, Task, Call], bool | Awaitable[bool]]
#: The extended card: one card for every authenticated caller, or one per caller.
ExtendedCard = AgentCard | Callable[[Any], AgentCard | Awaitable[AgentCard]]

DEFAULT_PAGE_SIZE: Final = 50
#: What ``authorize_task`` is asked for each operation that touches a task (its verb in the
#: operations table).
_VERBS: Final[dict[Operation, str]] = {
    op: spec.verb for op, spec in OPERATIONS.items() if spec.verb is not None
}


class A2AServer:
    """An A2A server for one agent. See ``docs/server.md`` for every option.

    Parameters:
        agent: The agent (see :mod:`a2a_core.server._agent`).
        card: The public agent card (``supported_interfaces`` may be empty: filled in).
        base_url: Public URL of the mount point; or set per request by the adapter.
        protocol: How the protocol is served: paths, card caching, versions, limits, error
            statuses (:class:`~a2a_core.protocol.ProtocolOptions`; its defaults when ``None``).
        backend: Where the state lives and what runs beside the server to keep it
            (:class:`~a2a_core.server.InMemoryBackend` by default; see
            :class:`~a2a_core.server.Backend`).
        task_limits: How large one task may grow, whatever the backend
            (:class:`~a2a_core.server.TaskLimits`; its defaults when ``None``).
        task_owner: Who owns a task (see :mod:`a2a_core.server._ownership`): by default the
            caller's identity, so that another caller's task answers TaskNotFound and
            ListTasks lists the caller's own; a function of the call for another key, or
            ``None`` to let every caller act on every task (then tasks record no owner).
        authorize_task: Authorization hook (see :data:`AuthorizeTask`); with ownership on,
            both must allow.
        extensions: Runtime extensions; their declarations go into the card.
        extended_card: Served by GetExtendedAgentCard to authenticated callers (a callable
            is given the caller's identity, ``None`` for an anonymous caller).
        extended_card_for_anonymous: Serve the extended card to unauthenticated callers too
            (off by default: the spec reserves it for authenticated ones; a conformance
            agent, whose kits send no credentials, turns it on).
        resubscribe_timeout: Seconds without events after which a subscription closes.
        keep_alive_interval: Seconds between SSE keep-alive comments on an idle stream.
        stream_backlog_limit: Bytes of logged events a stream (a subscription, a streaming
            send) may fall behind its task; past it, it ends with an error frame and the
            client resumes with ``Last-Event-ID`` (``None``: no limit). Measured on logs
            that can tell (the in-memory one: ``MeasuredEventLog``).
        last_modified: ``Last-Modified`` of the card (default: when the server was built).
        push_allow_hosts, push_allow_private: Exceptions to the webhook SSRF guard.
        push_reveal_secrets: Answer Get, List and Create of push configs with their token
            and credentials (off: they are omitted, see :mod:`~a2a_core.server._push_secrets`;
            webhook deliveries carry them either way).
        shutdown_grace: Seconds running agents get to finish when the server stops (see
            :meth:`shutdown`); then their tasks are failed and the agents cancelled.
        guards: Limits on running agents, the inactivity timeout, the expiry of unanswered
            interrupted tasks (:class:`~a2a_core.server.ExecutionGuards`; its
            defaults when ``None``).
        authenticators: One verifier per security scheme name of the card
            (:mod:`a2a_core.auth`): the card's ``securityRequirements`` are then enforced on
            every call but the public card, before the request is read (401/403), and the
            verified identity is the call's. An identity put by upstream middleware is
            trusted as it is. ``None``: only middleware identifies callers.
        observer: Told of every call, execution, task change, stream, webhook delivery and
            backend operation (:mod:`a2a_core.server.observe`; OpenTelemetry is
            ``a2a_core.otel.OpenTelemetryObserver``; several: ``Observers``). ``None``: no
            observation, at no cost.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        card: AgentCard,
        base_url: str | None = None,
        protocol: ProtocolOptions | None = None,
        task_owner: TaskOwner | None = owner_by_identity,
        authorize_task: AuthorizeTask | None = None,
        extensions: Sequence[Extension] = (),
        extended_card: ExtendedCard | None = None,
        extended_card_for_anonymous: bool = False,
        resubscribe_timeout: float = 60.0,
        keep_alive_interval: float = 15.0,
        stream_backlog_limit: int | None = DEFAULT_BACKLOG_LIMIT,
        last_modified: _dt.datetime | None = None,
        backend: Backend | None = None,
        task_limits: TaskLimits | None = None,
        push_allow_hosts: Sequence[str] = (),
        push_allow_private: bool = False,
        push_reveal_secrets: bool = False,
        shutdown_grace: float = 5.0,
        guards: ExecutionGuards | None = None,
        authenticators: Mapping[str, Verifier] | None = None,
        observer: Observer | None = None,
    ) -> None:
        #: Enforces the card's security requirements (``None``: identities come from
        #: upstream middleware only); built first, so a card and verifiers that do not fit
        #: fail here.
        self.authenticator = (
            Authenticator(card, authenticators) if authenticators is not None else None
        )
        self.protocol = ServerProtocol(
            card,
            last_modified=last_modified or _dt.datetime.now(_dt.UTC),
            base_url=base_url,
            options=protocol or ProtocolOptions(),
            extensions=[ext.declaration for ext in extensions],
            extension_activation=self._activate_extensions if extensions else None,
            extended_card_configured=extended_card is not None,
        )
        self.card = card
        self.extensions = tuple(extensions)
        self.extended_card = extended_card
        self.extended_card_for_anonymous = extended_card_for_anonymous
        self.task_owner = task_owner
        self.authorize_task = authorize_task
        self.resubscribe_timeout = resubscribe_timeout
        self.keep_alive_interval = keep_alive_interval
        self.stream_backlog_limit = stream_backlog_limit
        #: The payloads of big frames, shared by the streams writing them (bounded by what
        #: the open streams hold: see :mod:`~a2a_core.server._frame_cache`).
        self.shared_frames = FrameCache()
        self.push_enabled = bool(card.capabilities.push_notifications)
        self.push_allow_hosts = tuple(push_allow_hosts)
        self.push_allow_private = push_allow_private
        self.push_reveal_secrets = push_reveal_secrets
        #: Where the state lives (see :class:`~a2a_core.server.Backend`).
        self.backend: Backend = backend if backend is not None else InMemoryBackend()
        #: Told what happens (see :mod:`~a2a_core.server.observe`); ``None``: nobody is.
        self.observer = observer
        push_sender = self.backend.push_sender
        if observer is not None and isinstance(push_sender, WebhookPushSender):
            push_sender.observer = push_sender.observer or observer
        self._own_push_sender = push_sender is None and self.push_enabled
        self.services = tuple(self.backend.services)
        self.storage = Storage(
            store=self.backend.store,
            events=self.backend.event_log,
            push_configs=self.backend.push_config_store,
            push_sender=push_sender,
            push_enabled=self.push_enabled,
            limits=task_limits,
            observer=observer,
        )
        self.runtime = Runtime(agent=agent, storage=self.storage)
        #: The event log as streams follow it: interrupted at shutdown (see ``stopping``).
        self._stream_log = StoppableLog(self.storage.events)
        self.shutdown_grace = shutdown_grace
        #: Set when `shutdown` begins: every call is then refused (ServerUnavailableError).
        self.stopping = False
        self._shutdown_done: anyio.Event | None = None
        #: The execution guards at work (see :mod:`a2a_core.server._guards`); their sweep
        #: runs as the last service.
        self.guards = Guards(guards if guards is not None else ExecutionGuards(), self.runtime)
        self.services = (*self.services, self.guards.service)
        self._task_group: TaskGroup | None = None
        self._background: Background | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None

    @property
    def max_body_size(self) -> int:
        """Largest request body; adapters read at most one byte more, and none of a body
        whose ``Content-Length`` is over it (`a2a_core.http.content_length_exceeds`)."""
        return self.protocol.max_body_size

    # --- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._task_group is not None:
            raise LocalProtocolError("A2AServer is already running")
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            if self._own_push_sender:
                sender = WebhookPushSender(
                    allow_hosts=self.push_allow_hosts,
                    allow_private=self.push_allow_private,
                    observer=self.observer,
                )
                self.storage.push_sender = await stack.enter_async_context(sender)
            for service in self.services:
                await stack.enter_async_context(service(self))
            self._task_group = await stack.enter_async_context(anyio.create_task_group())
            self._background = Background(self._task_group, self.runtime.executions)
            self.stopping = False
            self._shutdown_done = None
            self._stream_log.restart()
            # What exists now lives as long as the process: keep it out of the collector's
            # full collections (see ``_collector``).
            freeze_startup_objects()
        except BaseException:
            await stack.__aexit__(None, None, None)
            raise
        self._exit_stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self.shutdown()
        finally:
            stack, self._exit_stack = self._exit_stack, None
            self._background = None
            if self._task_group is not None:
                self._task_group.cancel_scope.cancel()
            self._task_group = None
            if stack is not None:
                await stack.__aexit__(exc_type, exc, tb)

    async def shutdown(self, grace: float | None = None) -> None:
        """Stop serving, in bounded time (idempotent; leaving ``async with`` calls it).

        1. Every call from now on is refused with ServerUnavailableError (503 on REST); the
           agent card is still served.
        2. Running agents get ``grace`` seconds (``shutdown_grace`` by default) to finish.
        3. The task of each agent still running then is **failed** (terminal) with the status
           message `SHUTDOWN_TEXT`, through the normal writer, so blocking callers, streams
           and webhooks receive it, and a stream of that task ends with it; a call whose
           agent had created no task yet is answered ServerUnavailableError. The agents
           are cancelled and get one more second to unwind; one that ignores cancellation
           is abandoned (logged).
        4. Every open stream ends: one of a task failed above with that status, any other
           (a subscription to a task waiting for input) with a ServerUnavailableError frame;
           the tasks themselves are untouched.

        Adapters call this when their framework begins to shut down (aiohttp's
        ``on_shutdown``; `a2a_starlette.serve` for uvicorn), before open connections are
        closed, so that clients get the final frames.
        """
        if self._shutdown_done is not None:
            await self._shutdown_done.wait()
            return
        done = self._shutdown_done = anyio.Event()
        self.stopping = True
        try:
            with anyio.CancelScope(shield=True):
                await self._stop_executions(self.shutdown_grace if grace is None else grace)
        finally:
            # Last: a stream of a task failed above ends with that status; the others (a
            # subscription to a task waiting for input) with ServerUnavailableError.
            self._stream_log.stop()
            done.set()

    async def _stop_executions(self, grace: float) -> None:
        executions = self.runtime.executions
        with anyio.move_on_after(grace):
            while executions:
                await next(iter(executions.values())).done.wait()
        left = list(executions.values())
        if not left:
            return
        logger.warning(
            "shutting down: %d agent(s) still running after %.1f s; failing their tasks",
            len(left),
            grace,
        )
        for execution in left:
            if execution.task.writer is None:
                execution.error = ServerUnavailableError(SHUTDOWN_TEXT)
            else:
                await self._fail_for_shutdown(execution.task.writer)
            execution.cancel_soon()
        background = self._background
        if background is not None:
            with anyio.move_on_after(_UNWIND_SECONDS):
                await background.aclose()
        for execution in left:
            writer = execution.task.writer  # also one created while the agent was cancelled
            if writer is not None and writer.task.status.state not in TERMINAL_STATES:
                await self._fail_for_shutdown(writer)
        stuck = sum(1 for execution in left if not execution.done.is_set())
        if stuck:
            logger.warning("shutting down: %d agent(s) ignored cancellation; abandoned", stuck)

    async def _fail_for_shutdown(self, writer: TaskWriter) -> None:
        task = writer.task
        message = agent_message(SHUTDOWN_TEXT, task_id=task.id, context_id=task.context_id)
        try:
            await writer.status(TaskState.FAILED, message)
        except Exception:
            logger.exception("could not fail task %s at shutdown", task.id)

    @contextlib.asynccontextmanager
    async def lifespan(self, *_: Any) -> AsyncIterator[None]:
        """The server's lifespan as a context manager (Starlette ``lifespan=`` friendly)."""
        async with self:
            yield

    @property
    def running(self) -> bool:
        """Whether the server has been started."""
        return self._task_group is not None

    async def check_health(self, timeout: float = 2.0) -> Health:
        """Whether the server runs and its backend answers (store, event log, push queue),
        for a readiness probe: see :mod:`a2a_core.server._health`. Never raises; a backend
        that does not answer within ``timeout`` seconds counts as down."""
        sender = self.storage.push_sender
        push = None
        if self._own_push_sender:
            push = isinstance(sender, WebhookPushSender) and sender.running
        return await check_backend(
            self.backend,
            running=self.running,
            stopping=self.stopping,
            push=push,
            timeout=timeout,
        )

    # --- operations for backends (see a2a_core.server.backends) --------------------------

    async def fail_task(self, task_id: str, text: str) -> bool:
        """Fail a task that can no longer finish, e.g. one whose replica was lost.

        Writes FAILED with an agent status message saying ``text``, through the same writer
        as every other change (the event is logged, subscribers and webhooks get it).
        Returns whether this call failed it: ``False`` for a task that is missing or already
        terminal, also when another writer finished it meanwhile.
        """
        stored = await self.storage.store.get(task_id)
        if stored is None or stored.task.status.state in TERMINAL_STATES:
            return False
        task = stored.task
        message = agent_message(text, task_id=task.id, context_id=task.context_id)
        return await TaskWriter(self.storage, stored).status(TaskState.FAILED, message)

    def cancel_local_execution(self, task_id: str) -> bool:
        """Stop this server's agent for a task that was finished elsewhere.

        For a shared backend: another replica canceled (or failed) the task, and the agent
        still running here must stop. Returns whether an agent was running here and was
        asked to stop; one whose own view of the task is already terminal is left to end.
        """
        execution = self.runtime.executions.get(task_id)
        if execution is None:
            return False
        writer = execution.task.writer
        if writer is not None and writer.task.status.state in TERMINAL_STATES:
            return False
        execution.cancel_soon()
        return True

    # --- the entry point -----------------------------------------------------------------

    async def handle(self, request: HttpRequest) -> HttpResponse | SseResponse:
        """Answer one request. Never raises for client input; a server misconfiguration
        (e.g. no base URL for the card) is logged and answered with a generic 500."""
        authenticator = self.authenticator
        if (
            authenticator is not None
            and request.identity is None
            and not self.protocol.is_public(request)
        ):
            verdict = await authenticator.authenticate(request)
            if isinstance(verdict, AuthFailure):
                refused = self.protocol.reply_auth_failure(
                    request, verdict.error, verdict.challenges
                )
                if self.observer is not None:
                    self._observe_refusal(request, refused)
                return refused
            if verdict is not None:
                request = msgspec.structs.replace(request, identity=verdict)
        try:
            received = self.protocol.receive_request(request)
        except LocalProtocolError:
            logger.exception("server misconfiguration")
            return _internal_error_response()
        if isinstance(received, HttpResponse):
            if self.observer is not None:
                self._observe_refusal(request, received)
            return received
        call = received
        if self.observer is not None:
            return await self._handle_observed(call, self.observer.call_started(request, call))
        if self.stopping:
            return self.protocol.reply_error(call, ServerUnavailableError(_STOPPING_TEXT))
        try:
            call = await self._on_request(call)
            return await self._dispatch(call)
        except A2AError as exc:
            return self.protocol.reply_error(call, exc)
        except Exception:
            logger.exception(
                "error while handling %s (task %s)", call.operation.value, _task_named(call)
            )
            return self.protocol.reply_error(call, InternalError())

    def _observe_refusal(self, request: HttpRequest, response: HttpResponse) -> None:
        """Tell the observer of a request answered without becoming a call, if refused."""
        assert self.observer is not None
        refusal = self.protocol.refusal(request, response)
        if refusal is not None:
            self.observer.request_refused(request, refusal)

    async def _handle_observed(
        self, call: Call, observation: CallObservation
    ) -> HttpResponse | SseResponse:
        """`handle` for an observed server: the same, telling ``observation`` the outcome
        (kept apart so that an unobserved call pays nothing for it)."""
        error: A2AError
        with observation.activated():
            if self.stopping:
                error = ServerUnavailableError(_STOPPING_TEXT)
            else:
                try:
                    call = await self._on_request(call)
                    response = await self._dispatch(call, observation)
                except A2AError as exc:
                    error = exc
                except Exception:
                    logger.exception(
                        "error while handling %s (task %s)", call.operation.value, _task_named(call)
                    )
                    error = InternalError()
                else:
                    observation.finished(None)
                    if isinstance(response, SseResponse):
                        observation.stream_opened()
                    return response
        observation.finished(error)
        return self.protocol.reply_error(call, error)

    async def _on_request(self, call: Call) -> Call:
        if not call.extensions:
            return call
        for ext in self._active(call):
            call = await ext.on_request(call)
        return call

    def _activate_extensions(self, call: Call) -> list[str]:
        """The activation decision, made once per call by the protocol (``call.extensions``
        are the declared URIs the client asked for): each extension's `Extension.activate`.
        What it returns becomes the call's ``extensions`` and its ``A2A-Extensions`` reply
        header; the hooks (`_active`) and ``TaskContext.extensions`` read it from the call."""
        try:
            return [
                ext.uri
                for ext in self.extensions
                if ext.uri in call.extensions and ext.activate(call.requested_extensions, call)
            ]
        except Exception:
            logger.exception("extension activation failed for %s", call.operation.value)
            raise InternalError() from None

    def _active(self, call: Call) -> list[Extension] | tuple[()]:
        """The extensions active for ``call`` (decided once, see `_activate_extensions`)."""
        if not call.extensions:  # nearly every call: no list to build
            return ()
        return [ext for ext in self.extensions if ext.uri in call.extensions]

    def _reply(self, call: Call, result: Any) -> HttpResponse:
        for ext in self._active(call):
            result = ext.on_result(call, result)
        return self.protocol.reply_result(call, result)

    async def _dispatch(
        self, call: Call, observation: CallObservation | None = None
    ) -> HttpResponse | SseResponse:
        request = call.request
        op = call.operation
        if op is Operation.SEND_MESSAGE:
            assert isinstance(request, SendMessageRequest)
            return self._reply(call, await self._send(call, request, observation))
        if op is Operation.SEND_STREAMING_MESSAGE:
            assert isinstance(request, SendMessageRequest)
            return await self._send_streaming(call, request, observation)
        if op is Operation.GET_TASK:
            assert isinstance(request, GetTaskRequest)
            stored = await self._load(call, request.id)
            return self._reply(call, task_view(stored.task, history_length=request.history_length))
        if op is Operation.LIST_TASKS:
            assert isinstance(request, ListTasksRequest)
            return self._reply(call, await self._list(call, request))
        if op is Operation.CANCEL_TASK:
            assert isinstance(request, CancelTaskRequest)
            return self._reply(call, await self._cancel(call, request))
        if op is Operation.SUBSCRIBE_TO_TASK:
            assert isinstance(request, SubscribeToTaskRequest)
            return await self._subscribe(call, request, observation)
        if op is Operation.GET_EXTENDED_CARD:
            return self._reply(call, await self._extended_card(call))
        return self._reply(call, await self._push(call))

    # --- tasks -----------------------------------------------------------------------------

    async def _authorized(self, operation: str, task: Task, call: Call) -> bool:
        if self.authorize_task is None:
            return True
        verdict = self.authorize_task(operation, task, call)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)

    async def _load(self, call: Call, task_id: str) -> StoredTask:
        """The task ``call`` acts on, if it exists in the call's tenant, belongs to the caller
        (with ownership on) and ``authorize_task`` allows the operation's verb; else
        TaskNotFound, as for a missing task, so a caller learns nothing of others' tasks."""
        stored = await self.storage.store.get(task_id)
        task_owner = self.task_owner
        if (
            stored is None
            or stored.tenant != call.tenant
            or (task_owner is not None and stored.owner != task_owner(call))
            or not await self._authorized(_VERBS[call.operation], stored.task, call)
        ):
            raise TaskNotFoundError(metadata={"taskId": task_id[:128]})
        return stored

    def _require_running(self) -> Background:
        if self._background is None:
            raise LocalProtocolError(
                "A2AServer is not running: enter it (`async with server:`) or use the "
                "adapter's lifespan before serving requests"
            )
        return self._background

    async def _start(
        self,
        call: Call,
        request: SendMessageRequest,
        *,
        eager: bool,
        observation: CallObservation | None,
    ) -> Execution:
        background = self._require_running()
        config = request.configuration
        webhook = config.task_push_notification_config if config is not None else None
        if webhook is not None and self.push_enabled:
            # An inline webhook meets the same SSRF guard as a created config, before the
            # task exists, rather than being stored and then refused at every delivery.
            self._check_webhook(webhook.url)
        message = request.message
        existing: Task | None = None
        last_seq = 0
        if message.task_id:
            stored = await self._load(call, message.task_id)
            existing, last_seq = stored.task, stored.last_seq
            if existing.status.state in TERMINAL_STATES:
                raise UnsupportedOperationError(
                    f"Task is {existing.status.state.value}: start a new task in the same "
                    "context (referenceTaskIds may point at this one)"
                )
            if message.context_id and message.context_id != existing.context_id:
                raise InvalidParamsError("message.contextId does not match the task's context")
            if message.task_id in self.runtime.executions:
                raise UnsupportedOperationError("The task is still processing a message")
        task_id = existing.id if existing else new_id()
        context_id = existing.context_id if existing else (message.context_id or new_id())
        message = msgspec.structs.replace(message, task_id=task_id, context_id=context_id)
        owner = self.task_owner(call) if self.task_owner is not None else ""
        # Refused before anything is written or the agent is called: InvalidParams.
        self.storage.limits.admit(message, existing, last_seq)
        if self.storage.check_message is not None:
            self.storage.check_message(message, tenant=call.tenant, owner=owner)
        invocation = Invocation(
            message=message,
            task_id=task_id,
            context_id=context_id,
            task=existing,
            configuration=request.configuration,
            call=call,
            owner=owner,
        )
        execution = Execution(
            self.runtime, invocation, eager=eager or existing is not None, loop=background.loop
        )
        self.guards.admit(execution)  # may refuse it: nothing is written yet
        if observation is not None:
            execution.observation = observation.execution_started(invocation)
        self.runtime.register(execution)
        background.start(execution)
        return execution

    def _result_of(self, execution: Execution, history_length: int | None) -> SendMessageResponse:
        if execution.error is not None:
            raise execution.error
        if execution.reply_message is not None:
            return SendMessageResponse(message=execution.reply_message)
        writer = execution.task.writer
        if writer is None:  # pragma: no cover - run() always creates a task or a reply
            raise InternalError()
        return SendMessageResponse(task=task_view(writer.task, history_length=history_length))

    async def _send(
        self, call: Call, request: SendMessageRequest, observation: CallObservation | None
    ) -> SendMessageResponse:
        config = request.configuration
        immediate = bool(config and config.return_immediately)
        execution = await self._start(call, request, eager=immediate, observation=observation)
        ready = execution.started if immediate else execution.settled
        if not ready.is_set():  # an agent started eagerly (3.12+) may have answered already
            await ready.wait()
        return self._result_of(execution, config.history_length if config else None)

    async def _send_streaming(
        self, call: Call, request: SendMessageRequest, observation: CallObservation | None
    ) -> HttpResponse | SseResponse:
        execution = await self._start(call, request, eager=False, observation=observation)
        await execution.started.wait()
        if execution.error is not None:
            raise execution.error
        stream = self.protocol.open_event_stream(call)
        if execution.reply_message is not None:
            only: list[FirstEvent] = [(None, StreamResponse(message=execution.reply_message))]
            return self._sse(call, stream, only, None, 0, idle_limit=None, observation=observation)
        writer = execution.task.writer
        assert writer is not None
        if execution.invocation.task is None:
            # A new task: its log starts with the task snapshot, so replay it all.
            return self._sse(
                call,
                stream,
                [],
                writer.task.id,
                0,
                idle_limit=None,
                replay_until=writer.stored.last_seq,
                observation=observation,
            )
        stored = execution.first_snapshot or writer.stored
        first: list[FirstEvent] = [_snapshot(stored)]
        return self._sse(
            call,
            stream,
            first,
            stored.task.id,
            stored.last_seq,
            idle_limit=None,
            observation=observation,
        )

    async def _subscribe(
        self, call: Call, request: SubscribeToTaskRequest, observation: CallObservation | None
    ) -> HttpResponse | SseResponse:
        stored = await self._load(call, request.id)
        stream = self.protocol.open_event_stream(call)
        snapshot = _snapshot(stored)
        finished = stored.task.status.state in TERMINAL_STATES
        last_event_id = _last_event_id(call)
        # A reconnect gets what it missed, also when the task finished in between (but a
        # client that saw the final event has nothing left to subscribe to).
        missed_up_to = stored.last_seq - 1 if finished else stored.last_seq
        if last_event_id is not None and 0 <= last_event_id <= missed_up_to:
            return self._sse(
                call,
                stream,
                [],
                stored.task.id,
                last_event_id,
                idle_limit=self.resubscribe_timeout,
                replay_until=stored.last_seq,
                observation=observation,
            )
        if finished:
            if call.dialect == "1.0":
                raise UnsupportedOperationError(
                    f"Task is {stored.task.status.state.value}: there is nothing to subscribe to"
                )
            # v0.3 (DIGEST A7): the final task, then close.
            return self._sse(
                call, stream, [snapshot], None, 0, idle_limit=None, observation=observation
            )
        return self._sse(
            call,
            stream,
            [snapshot],
            stored.task.id,
            stored.last_seq,
            idle_limit=self.resubscribe_timeout,
            observation=observation,
        )

    def _sse(
        self,
        call: Call,
        stream: EventStream,
        first: Sequence[FirstEvent],
        task_id: str | None,
        after: int,
        *,
        idle_limit: float | None,
        replay_until: int | None = None,
        observation: CallObservation | None = None,
    ) -> SseResponse:
        """The stream's response: its frames come from `stream_frames` (``streams``);
        ``replay_until`` is the last seq logged before the stream opened (a replay)."""
        events = self.storage.events
        measured = events if isinstance(events, MeasuredEventLog) else None
        frames = stream_frames(
            stream,
            first,
            task_id,
            after,
            log=self._stream_log,
            lookup=self.storage.store.get,
            keep_alive_interval=self.keep_alive_interval,
            idle_limit=idle_limit,
            on_event=self._event_hook(call),
            read_some=measured.read_some_now if measured is not None else None,
            shared=self.shared_frames,
            backlog_limit=self.stream_backlog_limit,
            replay_until=replay_until,
            observation=observation,
        )
        return SseResponse(200, self.protocol.stream_headers(call), frames)

    def _event_hook(self, call: Call) -> EventHook | None:
        """The active extensions' ``on_event`` as one function (``None``: no extension)."""
        active = self._active(call)
        if not active:
            return None

        def on_event(event: StreamResponse) -> StreamResponse:
            for ext in active:
                event = ext.on_event(call, event)
            return event

        return on_event

    async def _list(self, call: Call, request: ListTasksRequest) -> ListTasksResponse:
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        query = TaskQuery(
            tenant=call.tenant,
            owner=self.task_owner(call) if self.task_owner is not None else None,
            context_id=request.context_id,
            state=request.status,
            status_timestamp_after=request.status_timestamp_after,
            page_size=page_size,
            page_token=request.page_token,
        )

        async def visible(task: Task) -> bool:
            return await self._authorized(_VERBS[call.operation], task, call)

        try:
            page = await self.storage.store.list_tasks(
                query, visible if self.authorize_task is not None else None
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

    async def _cancel(self, call: Call, request: CancelTaskRequest) -> Task:
        stored = await self._load(call, request.id)
        if stored.task.status.state in TERMINAL_STATES:
            raise TaskNotCancelableError(
                f"Task is {stored.task.status.state.value} and cannot be canceled"
            )
        execution = self.runtime.executions.get(request.id)
        writer = execution.task.writer if execution is not None else None
        if writer is None:
            writer = TaskWriter(self.storage, stored)
        # CANCELED is written first, so whatever the agent does while it unwinds (or if it
        # ignores cancellation) arrives after a terminal state and is dropped.
        task = await writer.cancel()
        if execution is not None:
            execution.cancel_soon()
        return task

    # --- push configs and the extended card ---------------------------------------------

    async def _push(self, call: Call) -> Any:
        request = call.request
        configs = self.storage.push_configs
        assert configs is not None
        if isinstance(request, TaskPushNotificationConfig):
            await self._load(call, request.task_id)
            self._check_webhook(request.url)
            try:
                stored = await configs.set(request, legacy_v0_3=call.dialect == "0.3")
            except PushConfigLimitError as exc:
                raise InvalidParamsError(str(exc)) from None
            return self._shown(stored)
        if isinstance(request, GetTaskPushNotificationConfigRequest):
            await self._load(call, request.task_id)
            found = await configs.get(request.task_id, request.id)
            if found is None:
                raise TaskNotFoundError("Push notification config not found")
            return self._shown(found)
        if isinstance(request, ListTaskPushNotificationConfigsRequest):
            await self._load(call, request.task_id)
            return ListTaskPushNotificationConfigsResponse(
                configs=[self._shown(c) for c in await configs.list_configs(request.task_id)]
            )
        assert isinstance(request, DeleteTaskPushNotificationConfigRequest)
        await self._load(call, request.task_id)
        await configs.delete(request.task_id, request.id)
        return None

    def _shown(self, config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """A config as a reply shows it: without its secrets, unless they are revealed. The
        Create reply too: one rule for every reply, and a secret the client just sent need
        not travel back through proxies and client logs."""
        return config if self.push_reveal_secrets else redact_push_config(config)

    def _check_webhook(self, url: str) -> None:
        """The static SSRF guard; a refusal is the client's InvalidParams."""
        try:
            check_webhook_url(
                url, allow_hosts=self.push_allow_hosts, allow_private=self.push_allow_private
            )
        except WebhookUrlRefusedError as exc:
            raise InvalidParamsError(f"Webhook URL refused: {exc}") from None

    async def _extended_card(self, call: Call) -> AgentCard:
        if call.identity is None and not self.extended_card_for_anonymous:
            raise UnsupportedOperationError(
                "The extended agent card is only served to authenticated callers"
            )
        source = self.extended_card
        card = source(call.identity) if callable(source) else source
        if inspect.isawaitable(card):
            card = await card
        assert isinstance(card, AgentCard)
        built = build_card(
            card,
            self.protocol.served_interfaces,
            [ext.declaration for ext in self.extensions],
            call.base_url,
        )
        return self.protocol.sign_card(built, call.base_url)


def _snapshot(stored: StoredTask) -> FirstEvent:
    """A subscription's first event: the task as stored, named by its store version, so
    that its subscribers share one encoding of it (``frame_cache``)."""
    task = stored.task
    return stored.last_seq, StreamResponse(task=task), ("task", task.id, stored.version)


def _task_named(call: Call) -> str:
    """The task id a call's request names, for a log line (``-``: none yet)."""
    request = call.request
    if isinstance(request, SendMessageRequest):
        return request.message.task_id or "-"
    found = getattr(request, "task_id", None) or getattr(request, "id", None)
    return (
        str(found)
        if isinstance(found, str) and call.operation.value != "GetExtendedAgentCard"
        else "-"
    )


def _last_event_id(call: Call) -> int | None:
    value = (call.last_event_id or "").strip()
    return int(value) if value.isdigit() and len(value) < 19 else None


def _internal_error_response() -> HttpResponse:
    body = b'{"error":{"code":500,"status":"INTERNAL","message":"Internal error"}}'
    return HttpResponse(500, (("content-type", "application/json"),), body)
