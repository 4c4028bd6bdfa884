"""The server object (L2): :class:`A2AServer`, one entry point for every adapter.

``await server.handle(HttpRequest)`` returns an :class:`HttpResponse` or an
:class:`SseResponse`, in one pass: the request goes down to the sans-IO
:class:`ServerProtocol` once, which checks and decodes it into a :class:`Call` (or answers
it, saying why it refused); the call's handler (``_handlers``, one per operation) executes
it; the protocol encodes the result. The server must be running (``async with server:``,
or the adapter's lifespan) so that agents and push delivery have somewhere to live that
outlasts a request. This module keeps the construction, the entry point and the lifecycle;
what each operation does is in ``_handlers``, how running agents are stopped in
``_shutdown``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import ipaddress
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, Self

import anyio
import msgspec
from anyio.abc import TaskGroup

from a2a_core._protocol.call import Call
from a2a_core._protocol.console import DEFAULT_CONSOLE_PATH
from a2a_core._protocol.errors import (
    A2AError,
    InternalError,
    LocalProtocolError,
    MissingBaseUrlError,
    ServerUnavailableError,
)
from a2a_core._protocol.hosts import REFUSED_HOST_TEXT, HostAllowList, loopback_hosts
from a2a_core._protocol.http import HttpRequest, HttpResponse, SseResponse
from a2a_core._protocol.refusal import Refusal
from a2a_core._protocol.server import ProtocolOptions, ServerProtocol
from a2a_core.auth._verify import Authenticator, AuthFailure, Verifier
from a2a_core.server._agent import Agent
from a2a_core.server._allocator import freed_memory
from a2a_core.server._backend import Backend, InMemoryBackend
from a2a_core.server._background import Background
from a2a_core.server._collector import freeze_startup_objects
from a2a_core.server._events import MeasuredEventLog
from a2a_core.server._extensions import Extension
from a2a_core.server._frame_cache import FrameCache
from a2a_core.server._guards import ExecutionGuards, Guards
from a2a_core.server._handlers import (
    HANDLERS,
    NO_OBSERVATION,
    AuthorizeTask,
    ExtendedCard,
    ServerState,
    activation,
    task_named,
)
from a2a_core.server._health import Health, check_backend
from a2a_core.server._limits import TaskLimits
from a2a_core.server._messages import agent_message
from a2a_core.server._options import PushOptions, StreamOptions
from a2a_core.server._ownership import TaskOwner, owner_by_identity
from a2a_core.server._peers import StreamSlots
from a2a_core.server._push_delivery import WebhookPushSender
from a2a_core.server._recovering import Recoverer
from a2a_core.server._recovery import Recovery, RecoveryPolicy
from a2a_core.server._runtime import Runtime
from a2a_core.server._shutdown import SHUTDOWN_TEXT, stop_executions
from a2a_core.server._stopping import StoppableLog
from a2a_core.server._storage import Storage
from a2a_core.server._streams import StreamSource
from a2a_core.server._webhook_guard import WebhookPolicy
from a2a_core.server._writes import TaskWriter
from a2a_core.server.observe import Observer
from a2a_core.types import TERMINAL_STATES, AgentCard, TaskState

__all__ = ["SHUTDOWN_TEXT", "A2AServer", "AuthorizeTask", "ExtendedCard"]

_STOPPING_TEXT: Final = "The server is shutting down"
#: The 503 of a call to a server that was never started, and what the log says once.
_NOT_RUNNING_TEXT: Final = (
    "The A2A server was not started: the application must run it. Starlette/FastAPI: "
    "A2AStarlette(server).mount(app, '/a2a'), or lifespan=a2a_app.lifespan on the app the "
    "adapter is mounted in (Starlette does not run a mounted app's lifespan); aiohttp: "
    "add_routes(app, server); your own transport: async with server"
)

logger = logging.getLogger("a2a_core.server")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class A2AServer:
    """An A2A server for one agent. See ``docs/server.md`` for every option.

    Parameters:
        agent: The agent (see :data:`~a2a_core.server.Agent`).
        card: The public agent card (``supported_interfaces`` may be empty: filled in).
        base_url: Public URL of the mount point; or set per request by the adapter.
        protocol: How the protocol is served: paths, the card's caching and
            ``Last-Modified``, versions, limits, error statuses, the extended card for
            anonymous callers (:class:`~a2a_core.protocol.ProtocolOptions`; its defaults when
            ``None``).
        backend: Where the state lives and what runs beside the server to keep it
            (:class:`~a2a_core.server.InMemoryBackend` by default; see
            :class:`~a2a_core.server.Backend`).
        task_limits: How large one task may grow, whatever the backend
            (:class:`~a2a_core.server.TaskLimits`; its defaults when ``None``).
        guards: Limits on running agents, the inactivity timeout, the expiry of unanswered
            interrupted tasks, the grace of running agents at shutdown
            (:class:`~a2a_core.server.ExecutionGuards`; its defaults when ``None``).
        streams: Keep-alive, idle timeout, backlog limit and streams per client of the SSE
            streams (:class:`~a2a_core.server.StreamOptions`; its defaults when ``None``).
        push: The webhook SSRF guard's exceptions, and whether replies show push secrets
            (:class:`~a2a_core.server.PushOptions`; its defaults when ``None``).
        task_owner: Who owns a task (see :data:`~a2a_core.server.TaskOwner`): by default
            the caller's identity, so that another caller's task answers TaskNotFound and
            ListTasks lists the caller's own; a function of the call for another key, or
            ``None`` to let every caller act on every task (then tasks record no owner).
        authorize_task: Authorization hook (see :data:`AuthorizeTask`); with ownership on,
            both must allow.
        extensions: Runtime extensions; their declarations go into the card.
        extended_card: Served by GetExtendedAgentCard to authenticated callers (a callable
            is given the caller's identity, ``None`` for an anonymous caller).
        authenticators: One verifier per security scheme name of the card
            (:mod:`a2a_core.auth`): the card's ``securityRequirements`` are then enforced on
            every call but the public card, before the request is read (401/403), and the
            verified identity is the call's. An identity put by upstream middleware is
            trusted as it is. ``None``: only middleware identifies callers.
        observer: Told of every call, execution, task change, stream, webhook delivery and
            backend operation (:mod:`a2a_core.server.observe`; OpenTelemetry is
            ``a2a_core.otel.OpenTelemetryObserver``; several: ``Observers``). ``None``: no
            observation, at the cost of a few calls of methods that do nothing.
        console: Serve the developer console (a page that shows the card, chats with the
            agent through its public endpoints, lists its tasks and shows the raw stream
            frames) to anyone who can reach the server: meant for development (see
            ``docs/console.md``). ``True``: at ``/a2a-console/`` under the mount
            (`a2a_core.protocol.DEFAULT_CONSOLE_PATH`); a folder path such as
            ``"/tools/console/"``: there. Off by default (``False`` or ``None``): the path
            is then a 404.
        recovery: What becomes of a running task whose process was lost (a crash, a lost
            lease) or stopped (a deploy): ``"fail"`` (the default), ``"retry"`` (the agent
            runs again) or ``"resume"`` (again, from its last checkpoint); a string or a
            :class:`~a2a_core.server.RecoveryPolicy` (attempts, checkpoint size, and
            ``idempotent_sends``: a message sent again by the same caller is answered with
            what it started, on by default). Running again needs a backend that outlives
            the process (Redis, SQL): see ``docs/durability.md``.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        card: AgentCard,
        base_url: str | None = None,
        protocol: ProtocolOptions | None = None,
        backend: Backend | None = None,
        task_limits: TaskLimits | None = None,
        guards: ExecutionGuards | None = None,
        streams: StreamOptions | None = None,
        push: PushOptions | None = None,
        task_owner: TaskOwner | None = owner_by_identity,
        authorize_task: AuthorizeTask | None = None,
        extensions: Sequence[Extension] = (),
        extended_card: ExtendedCard | None = None,
        authenticators: Mapping[str, Verifier] | None = None,
        observer: Observer | None = None,
        console: bool | str | None = False,
        recovery: RecoveryPolicy | Recovery | str | None = None,
    ) -> None:
        #: Enforces the card's security requirements (``None``: identities come from
        #: upstream middleware only); built first, so a card and verifiers that do not fit
        #: fail here.
        self.authenticator = (
            Authenticator(card, authenticators) if authenticators is not None else None
        )
        options = protocol or ProtocolOptions()
        #: The Host names answered (``ProtocolOptions.allowed_hosts``; ``None``: any, see
        #: `guard_loopback`).
        self.allowed_hosts = (
            None if options.allowed_hosts is None else HostAllowList(options.allowed_hosts)
        )
        self.extensions = tuple(extensions)
        self.protocol = ServerProtocol(
            card,
            last_modified=options.last_modified or _dt.datetime.now(_dt.UTC),
            base_url=base_url,
            options=options,
            extensions=[ext.declaration for ext in self.extensions],
            extension_activation=activation(self.extensions) if self.extensions else None,
            extended_card_configured=extended_card is not None,
        )
        if console is True:
            self.protocol.serve_console()
        elif isinstance(console, str):
            self.protocol.serve_console(console)
        elif console is not False and console is not None:
            raise TypeError(f"console must be True, False or a folder path, not {console!r}")
        self.card = card
        self.push_enabled = bool(card.capabilities.push_notifications)
        self.push_options = push or PushOptions()
        self.stream_options = streams or StreamOptions()
        #: Where the state lives (see :class:`~a2a_core.server.Backend`).
        self.backend: Backend = backend if backend is not None else InMemoryBackend()
        #: Told what happens (see :mod:`~a2a_core.server.observe`); ``None``: nobody is.
        self.observer = observer
        push_sender = self.backend.push_sender
        if isinstance(push_sender, WebhookPushSender):
            if observer is not None:
                push_sender.observer = push_sender.observer or observer
            push_sender.share_policy(self.push_options.webhook_policy)
        self._own_push_sender = push_sender is None and self.push_enabled
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
        if recovery is None:
            recovery = RecoveryPolicy()
        elif not isinstance(recovery, RecoveryPolicy):
            recovery = RecoveryPolicy(recovery)
        #: What becomes of lost executions (see :class:`~a2a_core.server.RecoveryPolicy`).
        self.recovery = recovery
        self.runtime.max_checkpoint_bytes = recovery.max_checkpoint_bytes
        # An observed server whose lost work runs again keeps each execution's trace
        # context with its task, for the next attempt to join (``_recovery``).
        self.storage.carry_trace = recovery.recovers and observer is not None
        #: The event log as streams follow it: interrupted at shutdown (see ``_stopping``).
        self._stream_log = StoppableLog(self.storage.events)
        events = self.storage.events
        measured = events if isinstance(events, MeasuredEventLog) else None
        #: The payloads of big frames, shared by the streams writing them (bounded by what
        #: the open streams hold: see ``_frame_cache``).
        self.shared_frames = FrameCache()
        #: The execution guards at work (see ``_guards``); their sweep runs as the last
        #: service.
        self.guard_options = guards if guards is not None else ExecutionGuards()
        self.guards = Guards(self.guard_options, self.runtime)
        self.runtime.show_errors = self.guard_options.show_errors
        self.runtime.cancel_grace = self.guard_options.cancel_grace
        #: Claims and runs the next attempts of lost executions (see ``_recovering``).
        self.recoverer = Recoverer(recovery, self.runtime, self.storage, self.guards)
        self.services = (*self.backend.services, self.guards.service)
        #: What every handler of this server works with (see ``_handlers``).
        self.state = ServerState(
            protocol=self.protocol,
            storage=self.storage,
            runtime=self.runtime,
            guards=self.guards,
            task_owner=task_owner,
            authorize_task=authorize_task,
            push=self.push_options,
            push_enabled=self.push_enabled,
            streams=self.stream_options,
            stream_source=StreamSource(
                self._stream_log,
                self.storage.store.get,
                self.stream_options.keep_alive_interval,
                read_some=measured.read_some_now if measured is not None else None,
                shared=self.shared_frames,
                backlog_limit=self.stream_options.backlog_limit,
            ),
            extensions=self.extensions,
            extended_card=extended_card,
            idempotent_sends=self.recovery.idempotent_sends,
            idempotency_window=self.recovery.idempotency_window,
        )
        most = self.stream_options.max_streams_per_peer
        #: Streams open per client address (``None``: not limited); see ``_peers``.
        self._stream_slots = StreamSlots(most) if most is not None else None
        # Read on every request: attributes of their own, not walks through the above.
        self._observer = observer
        self._public_paths = self.protocol.public_paths
        #: Set when `shutdown` begins: every call is then refused (ServerUnavailableError).
        self.stopping = False
        self._shutdown_done: anyio.Event | None = None
        self._task_group: TaskGroup | None = None
        self._exit_stack: contextlib.AsyncExitStack | None = None
        #: The configuration mistakes already logged (`_report_once`).
        self._reported: set[str] = set()

    @property
    def max_body_size(self) -> int:
        """Largest request body; adapters read at most one byte more, and none of a body
        whose ``Content-Length`` is over it (`a2a_core.http.content_length_exceeds`)."""
        return self.protocol.max_body_size

    # What a backend's services read of the server (`ServerHandle`).

    @property
    def webhook_policy(self) -> WebhookPolicy:
        """The SSRF guard's policy (``PushOptions``), for every sender of this server's
        webhooks (a backend's own included)."""
        return self.push_options.webhook_policy

    # --- the entry point -----------------------------------------------------------------

    async def handle(self, request: HttpRequest) -> HttpResponse | SseResponse:
        """Answer one request. Never raises for client input. A server never started, or a
        card with no base URL to build its URLs from, is answered 503 with what to add
        (logged once); any other server misconfiguration is logged and answered with a
        generic 500."""
        allowed = self.allowed_hosts
        if allowed is not None and not allowed.admits(request.headers.get("host")):
            return self._refuse_host(request)
        authenticator = self.authenticator
        if (
            authenticator is not None
            and request.identity is None
            and (request.path or "/") not in self._public_paths
        ):
            verdict = await authenticator.authenticate(request)
            if isinstance(verdict, AuthFailure):
                received: HttpResponse | Call = self.protocol.reply_auth_failure(
                    request, verdict.error, verdict.challenges
                )
            else:
                if verdict is not None:
                    request = msgspec.structs.replace(request, identity=verdict)
                received = self._receive(request)
        else:
            received = self._receive(request)
        if type(received) is not HttpResponse and self._task_group is None and not self.stopping:
            received = self._refuse_not_running(received)  # type: ignore[arg-type]
        if type(received) is HttpResponse:
            if received.refusal is not None and self._observer is not None:
                self._observer.request_refused(request, received.refusal)
            return received
        call: Call = received  # type: ignore[assignment]
        observer = self._observer
        observation = NO_OBSERVATION if observer is None else observer.call_started(request, call)
        error: A2AError
        give_back: Callable[[], None] | None = None
        with observation.activated():
            try:
                if self.stopping:
                    raise ServerUnavailableError(_STOPPING_TEXT)
                if call.streaming and self._stream_slots is not None and request.peer:
                    # Before the handler: a refused streaming send starts no agent.
                    give_back = self._stream_slots.take(request.peer)
                if call.extensions:
                    for ext in self.state.active(call):
                        call = await ext.on_request(call)
                result = await HANDLERS[call.operation](self.state, call, observation)
                if call.streaming:
                    response: HttpResponse | SseResponse = result
                    if give_back is not None:
                        response = SseResponse(
                            result.status, result.headers, result.frames, on_close=give_back
                        )
                        give_back = None  # the response's to give back, when it is closed
                else:
                    if call.extensions:
                        for ext in self.state.active(call):
                            result = ext.on_result(call, result)
                    response = self.protocol.reply_result(call, result)
            except A2AError as exc:
                error = exc
            except MissingBaseUrlError as exc:  # the extended card, built per call
                self._report_once("base_url", str(exc))
                error = ServerUnavailableError(str(exc))
            except Exception:
                logger.exception(
                    "error while handling %s (task %s)", call.operation.value, task_named(call)
                )
                error = InternalError()
            else:
                observation.finished(None)
                if call.streaming:
                    observation.stream_opened()
                return response
        if give_back is not None:
            give_back()  # the stream was refused: its slot was never used
        observation.finished(error)
        response = self.protocol.reply_error(call, error)
        # The error's traceback holds this frame, whose `error` holds the error: let go of
        # it, or every failed call would be a reference cycle (``_collector``).
        del error
        return response

    def _receive(self, request: HttpRequest) -> HttpResponse | Call:
        try:
            return self.protocol.receive_request(request)
        except MissingBaseUrlError as exc:
            # A mistake of configuration, not a fault of this request: the 503 says what
            # to add (as the log did at start-up: `check_base_url`).
            self._report_once("base_url", str(exc))
            return self.protocol.refuse(request, ServerUnavailableError(str(exc)))
        except LocalProtocolError:
            logger.exception("server misconfiguration")
            return _internal_error_response()

    def _refuse_not_running(self, call: Call) -> HttpResponse:
        """A call to a server that was never started (`_NOT_RUNNING_TEXT`): a 503 on both
        bindings, with the call's JSON-RPC id, rather than a failure of every call; the log
        says so once."""
        self._report_once("not running", _NOT_RUNNING_TEXT)
        error = ServerUnavailableError(_NOT_RUNNING_TEXT)
        response = self.protocol.reply_error(call, error)
        # JSON-RPC errors are 200s; this one is the server's state, which proxies and load
        # balancers read from the status (gRPC keeps its own, in the trailers).
        status = 503 if call.binding != "grpc" else response.status
        refusal = Refusal(call.binding, error.reason, status, error.code)
        return msgspec.structs.replace(response, status=status, refusal=refusal)

    def _report_once(self, mistake: str, text: str) -> None:
        """Log a configuration mistake at ERROR the first time a request meets it (each
        request that meets it again is answered the same way, without a log line)."""
        if mistake not in self._reported:
            self._reported.add(mistake)
            logger.error("%s", text)

    def serve_console(self, path: str = DEFAULT_CONSOLE_PATH) -> None:
        """Serve the developer console at ``path``, as ``console=True`` does: for a server
        built elsewhere (``a2aserve serve app:server --console``). Call it before serving."""
        self.protocol.serve_console(path)
        self._public_paths = self.protocol.public_paths

    @property
    def console_path(self) -> str | None:
        """Where the developer console is served under the mount (``None``: it is not)."""
        console = self.protocol.console
        return None if console is None else console.path

    def allow_hosts(self, names: Sequence[str]) -> None:
        """Answer only these ``Host`` names from now on, as ``ProtocolOptions.allowed_hosts``
        says (for a server built elsewhere: ``a2aserve serve --allowed-hosts``); call it
        before serving. `ValueError` for a name that is no host name."""
        self.allowed_hosts = HostAllowList(names)

    @property
    def show_errors(self) -> bool:
        """Whether a failed task says what the agent raised (``ExecutionGuards.show_errors``;
        settable before serving, as ``a2aserve serve --show-errors`` does)."""
        return self.runtime.show_errors

    @show_errors.setter
    def show_errors(self, on: bool) -> None:
        self.runtime.show_errors = bool(on)

    def guard_loopback(self, host: str, public_url: str | None = None) -> bool:
        """Answer only loopback's Host names (and the public URL's) when ``host``, the
        address listened on, is a loopback one and no ``allowed_hosts`` were given: a
        DNS-rebinding page cannot then read the server. Whole-process runners call this
        (``a2a_starlette.run``, ``a2a_aiohttp.run``, ``a2aserve serve``). True if set."""
        if self.allowed_hosts is not None or not _is_loopback(host):
            return False
        self.allowed_hosts = HostAllowList(loopback_hosts(host, public_url))
        return True

    def _refuse_host(self, request: HttpRequest) -> HttpResponse:
        refusal = Refusal("http", "MISDIRECTED_REQUEST", 421)
        if self._observer is not None:
            self._observer.request_refused(request, refusal)
        if "host" not in self._reported:  # once: a hostile page may send many
            self._reported.add("host")
            logger.warning(
                "refused a request naming a Host not in allowed_hosts (%s): a DNS-rebinding "
                "page, or a name to add to ProtocolOptions.allowed_hosts (docs/security.md)",
                ", ".join(self.allowed_hosts.names) if self.allowed_hosts else "",
            )
        headers = (("content-type", "text/plain; charset=utf-8"),)
        return HttpResponse(421, headers, REFUSED_HOST_TEXT, refusal)

    def warn_if_console_exposed(self, host: str) -> bool:
        """Log a warning when the console is served and ``host``, the address listened
        on, is not a loopback one: anyone who can reach it can then open the console (and,
        where the agent needs no credentials, talk to it); the same for
        ``ExecutionGuards.show_errors``.
        Whole-process runners call this (``a2a_starlette.run``, ``a2a_aiohttp.run``,
        ``a2aserve serve``). True if warned of the console."""
        if self.runtime.show_errors and not _is_loopback(host):
            logger.warning(
                "ExecutionGuards.show_errors is on and the server listens on %s: the "
                "exceptions of failed tasks are shown to whoever reads them; turn it off "
                "outside development",
                host or "every address",
            )
        if self.console_path is None or _is_loopback(host):
            return False
        logger.warning(
            "the developer console is on (%s) and the server listens on %s: anyone who can "
            "reach this address can open it; serve it on 127.0.0.1 only, or turn it off "
            "outside development",
            self.console_path,
            host or "every address",
        )
        return True

    def check_base_url(self, *, from_requests: bool) -> bool:
        """Whether the agent card can get its interface URLs: the server has a ``base_url``,
        or the adapter derives one from each request (``from_requests``: its
        ``trust_host_header``). If not, the log says what to add, at WARNING (middleware
        may still set one per request with ``put_base_url``, which no one can see at
        start-up), and a card request without one is answered 503 with the same text.
        Adapters call this when the application starts."""
        if self.protocol.base_url or from_requests:
            return True
        logger.warning(
            "A2AServer has no base_url and the adapter does not derive one: unless middleware "
            "sets one for every request, the agent card cannot be served. %s",
            MissingBaseUrlError().fix,
        )
        return False

    # --- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        if self._task_group is not None:
            raise LocalProtocolError("A2AServer is already running")
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            self._warn_if_recovery_cannot_work()
            self.recoverer.accepting = True  # a backend's restart rule may claim from now on
            if self._own_push_sender:
                push = self.push_options
                sender = WebhookPushSender(policy=push.webhook_policy, observer=self.observer)
                self.storage.push_sender = await stack.enter_async_context(sender)
            for service in self.services:
                await stack.enter_async_context(service(self))
            # A database's row limit is known once its services started.
            self.storage.limits = self.storage.limits.fitted_to(self.backend)
            self._task_group = await stack.enter_async_context(anyio.create_task_group())
            self.state.background = Background(self._task_group, self.runtime.executions)
            self.runtime.let_go = self.state.background.let_go
            self.recoverer.start_waiting(self.state.background)
            freed = freed_memory()  # what big requests freed goes back (``_allocator``)
            if freed is not None:
                self._task_group.start_soon(freed.run)
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
            self.state.background = None
            self.recoverer.background = None
            if self._task_group is not None:
                self._task_group.cancel_scope.cancel()
            self._task_group = None
            if stack is not None:
                await stack.__aexit__(exc_type, exc, tb)

    async def shutdown(self, grace: float | None = None) -> None:
        """Stop serving, in bounded time (idempotent; leaving ``async with`` calls it).

        Every call from now on is refused with ServerUnavailableError (503 on REST; the card
        is still served); running agents get ``grace`` seconds (``ExecutionGuards.
        shutdown_grace`` by default), then their tasks are failed with `SHUTDOWN_TEXT` and
        the agents cancelled (see ``_shutdown``); last, every open stream ends with a final
        frame. Adapters call this when their framework begins to shut down (aiohttp's
        ``on_shutdown``; `a2a_starlette.serve` for uvicorn), before open connections are
        closed, so that clients get the final frames.
        """
        if self._shutdown_done is not None:
            await self._shutdown_done.wait()
            return
        done = self._shutdown_done = anyio.Event()
        self.stopping = True
        self.recoverer.accepting = False  # what is lost now is left to a live replica
        if grace is None:
            grace = self.guard_options.shutdown_grace
        try:
            with anyio.CancelScope(shield=True):
                await stop_executions(
                    self.runtime, self.state.background, grace, hand_off=self._hands_off
                )
        finally:
            # Last: a stream of a task failed above ends with that status; the others (a
            # subscription to a task waiting for input) with ServerUnavailableError.
            self._stream_log.stop()
            done.set()

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
        for a readiness probe: see :class:`~a2a_core.server.backends.Health`. Never raises;
        a backend that does not answer within ``timeout`` seconds counts as down."""
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

    async def recover_task(
        self, task_id: str, reason: str, *, lost: bool = True, fail_text: str | None = None
    ) -> bool:
        """Recover a running task whose execution's process is gone, by the server's
        `RecoveryPolicy`: fail it (``fail``, or past ``max_attempts``), or claim its next
        attempt and run the agent here (``retry``, ``resume``); see ``docs/durability.md``.

        ``reason`` says what happened (the next attempt's status message says it);
        ``fail_text``: the status message of the task if it is failed instead (``reason``
        when ``None``); ``lost``:
        whether the process was lost (counted against ``max_attempts``) rather than handed
        off by a clean stop. Claiming is one compare-and-set write of the task, so
        replicas racing for it start one attempt. Returns whether this call changed the
        task; ``False`` when it ended, runs here, or another replica claimed it first.
        Called before the server runs (a restart rule), the attempt starts with it.
        """
        return await self.recoverer.recover(task_id, reason, lost=lost, fail_text=fail_text)

    @property
    def _hands_off(self) -> bool:
        """Whether a stop releases running tasks for another replica instead of failing
        them: a recovering policy on a backend that outlives the process."""
        return self.recovery.recovers and bool(getattr(self.backend, "outlives_process", False))

    def _warn_if_recovery_cannot_work(self) -> None:
        if self.recovery.recovers and not getattr(self.backend, "outlives_process", False):
            logger.warning(
                "recovery=%s asks for lost work to run again, but the %s keeps its tasks in "
                "this process's memory, which a crash or a stop loses: running tasks are "
                "failed at shutdown, as with recovery=fail. Use a backend that outlives the "
                "process (Redis, SQL); see docs/durability.md",
                self.recovery.mode.value if isinstance(self.recovery.mode, Recovery) else "",
                type(self.backend).__name__,
            )

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


def _internal_error_response() -> HttpResponse:
    body = b'{"error":{"code":500,"status":"INTERNAL","message":"Internal error"}}'
    return HttpResponse(500, (("content-type", "application/json"),), body)
