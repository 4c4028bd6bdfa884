"""`A2AClient`: every A2A operation, on httpx, over the sans-IO client protocol (L2).

The protocol (`a2a_core._protocol.client`) builds each request and reads each reply; this
module owns what needs I/O and time: the HTTP exchange, credentials, retries, the limits on
what a reply may cost, and the resumption of a stream cut mid-way.
"""

from __future__ import annotations

import contextlib
import itertools
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Final, Literal
from urllib.parse import urlencode

import anyio
import httpx
import msgspec

from a2a_core._protocol.agent_card import DEFAULT_CARD_PATH
from a2a_core._protocol.client import (
    AgentError,
    Endpoint,
    InvalidReplyError,
    ReceivedEvent,
    StreamDecoder,
    build_request,
    choose_interface,
    read_error,
    read_reply,
    request_url,
)
from a2a_core._protocol.errors import TaskNotFoundError, UnsupportedOperationError
from a2a_core._protocol.http import HttpRequest
from a2a_core._protocol.operations import Operation
from a2a_core.client._auth import Credentials, TokenSource, apply_credentials
from a2a_core.client._cards import DEFAULT_CARD_CACHE, CardCache, card_url_for, fetch_card
from a2a_core.client._errors import TransportError
from a2a_core.client._retry import RetryPolicy
from a2a_core.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

__all__ = ["A2AClient"]

#: The largest one-shot reply the client reads, by default.
DEFAULT_MAX_REPLY_BYTES: Final = 64 * 1024 * 1024
#: The most a stream may send without completing an event, by default.
DEFAULT_MAX_EVENT_BYTES: Final = 64 * 1024 * 1024
#: How many event ids a resumed stream remembers to drop repeats.
_SEEN_IDS: Final = 4096
_SSE: Final = "text/event-stream"

# Connection failures that happen before any byte of a response: safe to retry.
_BEFORE_REPLY: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_propagate: Any = None


def _trace_headers() -> list[tuple[str, str]]:
    """W3C trace context for the current span, when OpenTelemetry is installed."""
    global _propagate
    if _propagate is None:
        try:
            from opentelemetry import propagate
        except ImportError:
            _propagate = False
        else:
            _propagate = propagate
    if _propagate is False:
        return []
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    return list(carrier.items())


def _task_id_of(event: StreamResponse) -> str | None:
    if event.task is not None:
        return event.task.id
    if event.status_update is not None:
        return event.status_update.task_id
    if event.artifact_update is not None:
        return event.artifact_update.task_id
    return None


class A2AClient:
    """A client of one agent: its card, the interface chosen on it, and every operation.

    Make one with `connect` (reads the card and picks the interface), or directly from an
    `Endpoint`. It may own its ``httpx.AsyncClient`` (closed by `aclose` or ``async with``)
    or use the caller's (left open). Works under asyncio and trio, and from inside an agent
    (an agent calling another agent): errors the other agent answers are `AgentError`,
    which the calling agent's server never mistakes for its own.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        card: AgentCard | None = None,
        http: httpx.AsyncClient | None = None,
        credentials: Credentials | None = None,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        extensions: Sequence[str] = (),
        timeout: float | None = 30.0,
        retry: RetryPolicy | None = None,
        resume: bool = True,
        tenant: str | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        if tenant is not None:
            endpoint = Endpoint(endpoint.url, endpoint.binding, endpoint.dialect, tenant)
        self.endpoint = endpoint
        """The interface every call goes to."""
        self.card = card
        """The agent's card (the extended one when it was asked for), if known."""
        self._owns_http = http is None
        self._http = http if http is not None else httpx.AsyncClient()
        self._credentials = credentials or Credentials()
        self._tokens = TokenSource(self._credentials.oauth) if self._credentials.oauth else None
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        self._headers = [(str(name), str(value)) for name, value in pairs]
        self._extensions = tuple(extensions)
        self._timeout = timeout
        self._retry = retry or RetryPolicy()
        self._resume = resume
        self._max_reply_bytes = max_reply_bytes
        self._max_event_bytes = max_event_bytes
        self._ids = itertools.count(1)

    # --- making one ------------------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        http: httpx.AsyncClient | None = None,
        bindings: Sequence[str] | None = None,
        versions: Sequence[str] | None = None,
        card_path: str = DEFAULT_CARD_PATH,
        extended_card: bool = False,
        signing_keys: Mapping[str, Any] | None = None,
        verify_signature: bool = False,
        card_cache: CardCache | None = DEFAULT_CARD_CACHE,
        credentials: Credentials | None = None,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        extensions: Sequence[str] = (),
        timeout: float | None = 30.0,
        retry: RetryPolicy | None = None,
        resume: bool = True,
        tenant: str | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> A2AClient:
        """Read the card of the agent at ``url`` and return a client of the interface chosen.

        ``url`` is the agent's base URL (its card at ``card_path`` below it) or the card's
        own URL (ending in ``.json``). ``bindings`` (``JSONRPC``, ``HTTP+JSON``) and
        ``versions`` (``1.0``, ``0.3``) narrow and order the choice; by default the card's
        first interface this client speaks is used. ``extended_card`` fetches the extended
        card with the credentials when the card offers one. ``signing_keys`` or
        ``verify_signature`` refuse a card whose signature does not verify (`CardError`).
        The other keywords are the constructor's.
        """
        own_http = http is None
        http = http if http is not None else httpx.AsyncClient()
        try:
            location = card_url_for(url, card_path)
            extra = dict(headers.items() if isinstance(headers, Mapping) else headers)
            with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                card, _ = await fetch_card(
                    http,
                    location,
                    cache=card_cache,
                    headers=extra,
                    signing_keys=signing_keys,
                    verify_signature=verify_signature,
                )
            endpoint = choose_interface(
                card, bindings=bindings, versions=versions, base_url=location
            )
            client = cls(
                endpoint,
                card=card,
                http=http,
                credentials=credentials,
                headers=headers,
                extensions=extensions,
                timeout=timeout,
                retry=retry,
                resume=resume,
                tenant=tenant,
                max_reply_bytes=max_reply_bytes,
                max_event_bytes=max_event_bytes,
            )
            client._owns_http = own_http
            if extended_card and card.capabilities.extended_agent_card:
                client.card = await client.get_extended_card()
        except TimeoutError:
            if own_http:
                await http.aclose()
            raise TransportError(f"timed out reading the agent card of {url}") from None
        except BaseException:
            if own_http:
                await http.aclose()
            raise
        return client

    async def aclose(self) -> None:
        """Close the HTTP client if this client made it."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> A2AClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # --- the operations --------------------------------------------------------------------

    async def send(
        self,
        message: Message | str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        return_immediately: bool = False,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_config: TaskPushNotificationConfig | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | Literal["default"] | None = "default",
    ) -> Task | Message:
        """Send a message; the agent's answer: a `Task`, or a `Message` (no task made).

        ``message`` is a `Message` or a text (a user message with a new id). ``task_id`` and
        ``context_id`` continue a task or a conversation. ``return_immediately`` asks for the
        task at once, not when it stops (it may then still be working).
        """
        request = self._send_request(
            message,
            task_id,
            context_id,
            return_immediately,
            history_length,
            accepted_output_modes,
            push_config,
            metadata,
        )
        response = await self.send_message(request, timeout=timeout)
        if response.task is not None:
            return response.task
        if response.message is not None:
            return response.message
        raise InvalidReplyError("the SendMessage reply holds neither a task nor a message")

    async def send_message(
        self,
        request: SendMessageRequest,
        *,
        timeout: float | Literal["default"] | None = "default",
    ) -> SendMessageResponse:
        """SendMessage with a request built by the caller."""
        result: SendMessageResponse = await self.call(
            Operation.SEND_MESSAGE, request, timeout=timeout
        )
        return result

    def stream(
        self,
        message: Message | str,
        *,
        task_id: str | None = None,
        context_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: Sequence[str] = (),
        push_config: TaskPushNotificationConfig | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | Literal["default"] | None = "default",
    ) -> AsyncIterator[ReceivedEvent]:
        """Send a message and follow what it does: each event as it arrives.

        A stream cut mid-way is resumed (see ``resume``): the events continue after the last
        one received, none lost and none repeated.
        """
        request = self._send_request(
            message,
            task_id,
            context_id,
            False,
            history_length,
            accepted_output_modes,
            push_config,
            metadata,
        )
        return self.stream_message(request, timeout=timeout)

    def stream_message(
        self,
        request: SendMessageRequest,
        *,
        timeout: float | Literal["default"] | None = "default",
    ) -> AsyncIterator[ReceivedEvent]:
        """SendStreamingMessage with a request built by the caller."""
        return self._stream(Operation.SEND_STREAMING_MESSAGE, request, None, timeout)

    def subscribe(
        self,
        task_id: str,
        *,
        last_event_id: str | None = None,
        timeout: float | Literal["default"] | None = "default",
    ) -> AsyncIterator[ReceivedEvent]:
        """Follow a task's events until it ends; with ``last_event_id``, only the events
        after that one (``Last-Event-ID``), for a running task as for a finished one."""
        request = SubscribeToTaskRequest(id=task_id)
        return self._stream(Operation.SUBSCRIBE_TO_TASK, request, last_event_id, timeout)

    async def get_task(
        self,
        task_id: str,
        *,
        history_length: int | None = None,
        timeout: float | Literal["default"] | None = "default",
    ) -> Task:
        """The task as it is now (``history_length``: at most that many messages)."""
        request = GetTaskRequest(id=task_id, history_length=history_length)
        task: Task = await self.call(Operation.GET_TASK, request, timeout=timeout)
        return task

    async def list_tasks(
        self,
        request: ListTasksRequest | None = None,
        *,
        timeout: float | Literal["default"] | None = "default",
        **filters: Any,
    ) -> ListTasksResponse:
        """One page of the caller's tasks: a `ListTasksRequest`, or its fields as keywords
        (``context_id``, ``status``, ``page_size``, ``page_token``...). v1.0 only."""
        if request is None:
            request = ListTasksRequest(**filters)
        elif filters:
            request = msgspec.structs.replace(request, **filters)
        page: ListTasksResponse = await self.call(Operation.LIST_TASKS, request, timeout=timeout)
        return page

    async def iter_tasks(
        self,
        request: ListTasksRequest | None = None,
        *,
        timeout: float | Literal["default"] | None = "default",
        **filters: Any,
    ) -> AsyncIterator[Task]:
        """Every task `list_tasks` would page through, page after page."""
        request = request or ListTasksRequest(**filters)
        if filters and request is not None:
            request = msgspec.structs.replace(request, **filters)
        while True:
            page = await self.list_tasks(request, timeout=timeout)
            for task in page.tasks:
                yield task
            if not page.next_page_token or page.next_page_token == request.page_token:
                return
            request = msgspec.structs.replace(request, page_token=page.next_page_token)

    async def cancel_task(
        self,
        task_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | Literal["default"] | None = "default",
    ) -> Task:
        """Ask the agent to cancel a task; the task as the cancellation left it."""
        request = CancelTaskRequest(id=task_id, metadata=dict(metadata or {}))
        task: Task = await self.call(Operation.CANCEL_TASK, request, timeout=timeout)
        return task

    async def create_push_config(
        self,
        config: TaskPushNotificationConfig,
        *,
        timeout: float | Literal["default"] | None = "default",
    ) -> TaskPushNotificationConfig:
        """Register a webhook for a task's updates; the config as stored (with its id)."""
        stored: TaskPushNotificationConfig = await self.call(
            Operation.CREATE_PUSH_CONFIG, config, timeout=timeout
        )
        return stored

    async def get_push_config(
        self,
        task_id: str,
        config_id: str,
        *,
        timeout: float | Literal["default"] | None = "default",
    ) -> TaskPushNotificationConfig:
        """One webhook config of a task."""
        request = GetTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        config: TaskPushNotificationConfig = await self.call(
            Operation.GET_PUSH_CONFIG, request, timeout=timeout
        )
        return config

    async def list_push_configs(
        self,
        task_id: str,
        *,
        page_size: int = 0,
        page_token: str = "",
        timeout: float | Literal["default"] | None = "default",
    ) -> ListTaskPushNotificationConfigsResponse:
        """A page of a task's webhook configs."""
        request = ListTaskPushNotificationConfigsRequest(
            task_id=task_id, page_size=page_size, page_token=page_token
        )
        page: ListTaskPushNotificationConfigsResponse = await self.call(
            Operation.LIST_PUSH_CONFIGS, request, timeout=timeout
        )
        return page

    async def delete_push_config(
        self,
        task_id: str,
        config_id: str,
        *,
        timeout: float | Literal["default"] | None = "default",
    ) -> None:
        """Remove a webhook config."""
        request = DeleteTaskPushNotificationConfigRequest(task_id=task_id, id=config_id)
        await self.call(Operation.DELETE_PUSH_CONFIG, request, timeout=timeout)

    async def get_extended_card(
        self, *, timeout: float | Literal["default"] | None = "default"
    ) -> AgentCard:
        """The card the agent shows this caller once authenticated."""
        card: AgentCard = await self.call(
            Operation.GET_EXTENDED_CARD, GetExtendedAgentCardRequest(), timeout=timeout
        )
        return card

    async def call(
        self,
        operation: Operation,
        request: Any,
        *,
        timeout: float | Literal["default"] | None = "default",
    ) -> Any:
        """Any one-shot operation with its v1.0 request; its v1.0 result (`read_reply`)."""
        request_id = next(self._ids)
        http_request = build_request(
            operation,
            request,
            self.endpoint,
            request_id=request_id,
            headers=self._headers,
            extensions=self._extensions,
        )
        limit = self._call_timeout(timeout)
        try:
            with anyio.fail_after(limit) if limit is not None else contextlib.nullcontext():
                response = await self._send(http_request, limit)
                try:
                    body = await self._read_body(response)
                finally:
                    await response.aclose()
        except TimeoutError:
            raise TransportError(
                f"{operation.value} got no reply within {limit} s from {self.endpoint.url}"
            ) from None
        except httpx.HTTPError as exc:
            raise TransportError(
                f"{operation.value} to {self.endpoint.url} failed: {_describe(exc)}"
            ) from None
        return read_reply(
            operation,
            self.endpoint,
            response.status_code,
            body,
            request_id=request_id if self.endpoint.binding == "jsonrpc" else None,
        )

    # --- the machinery ---------------------------------------------------------------------

    def _call_timeout(self, timeout: float | Literal["default"] | None) -> float | None:
        return self._timeout if timeout == "default" else timeout

    def _send_request(
        self,
        message: Message | str,
        task_id: str | None,
        context_id: str | None,
        return_immediately: bool,
        history_length: int | None,
        accepted_output_modes: Sequence[str],
        push_config: TaskPushNotificationConfig | None,
        metadata: Mapping[str, Any] | None,
    ) -> SendMessageRequest:
        if isinstance(message, str):
            message = Message(
                message_id=uuid.uuid4().hex,
                role=Role.USER,
                parts=[Part(text=message)],
            )
        changes: dict[str, str] = {}
        if task_id is not None:
            changes["task_id"] = task_id
        if context_id is not None:
            changes["context_id"] = context_id
        if changes:
            message = msgspec.structs.replace(message, **changes)
        configuration = None
        if return_immediately or history_length is not None or accepted_output_modes or push_config:
            configuration = SendMessageConfiguration(
                accepted_output_modes=list(accepted_output_modes),
                task_push_notification_config=push_config,
                history_length=history_length,
                return_immediately=return_immediately,
            )
        return SendMessageRequest(
            message=message, configuration=configuration, metadata=dict(metadata or {})
        )

    async def _to_httpx(self, request: HttpRequest, timeout: float | None) -> httpx.Request:
        applied = await apply_credentials(self.card, self._credentials, self._tokens, self._http)
        url = request_url(request)
        if applied.query:
            extra = urlencode(applied.query)
            url = f"{url}{'&' if '?' in url else '?'}{extra}"
        headers = [*request.headers.items(), *applied.headers, *_trace_headers()]
        if applied.cookies:
            cookie = "; ".join(f"{k}={v}" for k, v in applied.cookies.items())
            headers.append(("cookie", cookie))
        return self._http.build_request(
            request.method,
            url,
            headers=headers,
            content=request.body or None,
            timeout=httpx.Timeout(timeout) if timeout is not None else httpx.Timeout(None),
        )

    async def _send(self, request: HttpRequest, timeout: float | None) -> httpx.Response:
        """The response's head (the body not read yet), after the retries the policy allows
        for connection failures and the one retry with fresh credentials after a 401."""
        policy = self._retry
        started = time.monotonic()
        retry = 0
        refreshed = False
        while True:
            outgoing = await self._to_httpx(request, timeout)
            try:
                response = await self._http.send(outgoing, stream=True)
            except _BEFORE_REPLY:
                if retry + 1 >= policy.attempts or time.monotonic() - started > policy.deadline:
                    raise
                await anyio.sleep(policy.wait(retry))
                retry += 1
                continue
            if response.status_code == 401 and self._tokens is not None and not refreshed:
                await response.aclose()
                self._tokens.invalidate()
                refreshed = True
                continue
            return response

    async def _read_body(self, response: httpx.Response) -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max_reply_bytes:
                raise InvalidReplyError(
                    f"the reply is larger than {self._max_reply_bytes} bytes (max_reply_bytes)",
                    status=response.status_code,
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def _stream(
        self,
        operation: Operation,
        request: Any,
        last_event_id: str | None,
        timeout: float | Literal["default"] | None,
    ) -> AsyncIterator[ReceivedEvent]:
        """The events of a streaming call, resumed by SubscribeToTask when cut."""
        limit = self._call_timeout(timeout)
        task_id = request.id if operation is Operation.SUBSCRIBE_TO_TASK else None
        seen: set[str] = set()
        order: deque[str] = deque()
        fruitless = 0
        resuming = False
        while True:
            progressed = False
            cut: str | None = None
            try:
                async for received in self._one_stream(
                    operation, request, last_event_id, limit, resuming
                ):
                    event_id = received.event_id
                    if event_id is not None:
                        if event_id in seen:
                            continue  # a replay's repeat: never yield an event twice
                        seen.add(event_id)
                        order.append(event_id)
                        if len(order) > _SEEN_IDS:
                            seen.discard(order.popleft())
                        last_event_id = event_id
                    task_id = task_id or _task_id_of(received.event)
                    progressed = True
                    yield received
                    if received.last:
                        return
            except _StreamCutError as exc:
                cut = exc.reason
            except AgentError as exc:
                if not resuming or exc.error_type not in (
                    UnsupportedOperationError,
                    TaskNotFoundError,
                ):
                    raise
                # The task ended while we were away and the server keeps no log to replay:
                # its final state is what was missed.
                assert task_id is not None
                task = await self.get_task(task_id, timeout=timeout)
                yield ReceivedEvent(StreamResponse(task=task), None, True)
                return
            if cut is None:
                cut = "the stream ended before its last event"
            if not self._resume or task_id is None:
                raise TransportError(f"{operation.value}: {cut}")
            fruitless = 0 if progressed else fruitless + 1
            if fruitless >= self._retry.attempts:
                raise TransportError(
                    f"{operation.value}: {cut}; resuming failed {fruitless} times in a row"
                )
            await anyio.sleep(self._retry.wait(fruitless))
            operation = Operation.SUBSCRIBE_TO_TASK
            request = SubscribeToTaskRequest(id=task_id)
            resuming = True

    async def _one_stream(
        self,
        operation: Operation,
        request: Any,
        last_event_id: str | None,
        timeout: float | None,
        resuming: bool,
    ) -> AsyncIterator[ReceivedEvent]:
        """One streaming request's events; `_StreamCutError` when it ends early or breaks."""
        http_request = build_request(
            operation,
            request,
            self.endpoint,
            request_id=next(self._ids),
            headers=self._headers,
            extensions=self._extensions,
            last_event_id=last_event_id,
        )
        try:
            # The timeout bounds the wait for the stream's head; events may take their time
            # (an idle server sends keep-alives, and the agent decides the pace).
            with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                response = await self._send(http_request, None)
        except TimeoutError:
            raise _StreamCutError(f"no reply within {timeout} s") from None
        except httpx.HTTPError as exc:
            if resuming:
                raise _StreamCutError(_describe(exc)) from None
            raise TransportError(
                f"{operation.value} to {self.endpoint.url} failed: {_describe(exc)}"
            ) from None
        try:
            content_type = response.headers.get("content-type", "")
            if response.status_code != 200 or not content_type.lower().startswith(_SSE):
                body = await self._read_body(response)
                raise read_error(self.endpoint, response.status_code, body)
            decoder = StreamDecoder(operation, self.endpoint)
            pending = 0
            try:
                async for chunk in response.aiter_bytes():
                    pending += len(chunk)
                    events = decoder.feed(chunk)
                    if events:
                        pending = 0
                    elif pending > self._max_event_bytes:
                        raise InvalidReplyError(
                            f"a stream event is larger than {self._max_event_bytes} bytes "
                            "(max_event_bytes)"
                        )
                    for received in events:
                        yield received
                        if received.last:
                            return
                for received in decoder.close():
                    yield received
                    if received.last:
                        return
            except httpx.HTTPError as exc:
                raise _StreamCutError(f"the connection was cut: {_describe(exc)}") from None
            raise _StreamCutError("the stream ended before its last event")
        finally:
            await response.aclose()


class _StreamCutError(Exception):
    """A stream ended or broke before its last event (resumable)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
