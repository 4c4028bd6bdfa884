"""`A2AClient`: every A2A operation, on httpx, over the sans-IO client protocol (L2).

The protocol (`a2a_core._protocol.client`) builds each request and reads each reply; the
exchange (`a2a_core.client._exchange`) sends them with credentials, retries, bounds and
resumption. This module is the face: the card read and the interface chosen (`connect`), and
one method per operation in the v1.0 model.
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import httpx
import msgspec

from a2a_core._install import install_hint
from a2a_core._protocol.agent_card import DEFAULT_CARD_PATH
from a2a_core._protocol.client import (
    HTTP_BINDINGS,
    Endpoint,
    InvalidReplyError,
    NoUsableInterfaceError,
    ReceivedEvent,
    choose_interface,
)
from a2a_core._protocol.operations import Operation
from a2a_core.client._auth import Credentials
from a2a_core.client._cards import DEFAULT_CARD_CACHE, CardCache, card_url_for, fetch_card
from a2a_core.client._errors import TransportError
from a2a_core.client._exchange import (
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_REPLY_BYTES,
    Exchange,
    deadline,
)
from a2a_core.client._origins import CredentialPolicy, grpc_url
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
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

if TYPE_CHECKING:  # the gRPC transport comes with a2aserve-grpc
    from a2a_grpc._client import GrpcExchange

__all__ = ["A2AClient"]


def _spoken() -> tuple[str, ...]:
    """The bindings this client has a transport for: gRPC when ``a2aserve-grpc`` is
    installed."""
    if importlib.util.find_spec("a2a_grpc") is not None:
        return (*HTTP_BINDINGS, "GRPC")
    return HTTP_BINDINGS


def _interface_url(endpoint: Endpoint, grpc_credentials: Any) -> str:
    """The endpoint's URL, with a scheme for a gRPC target (TLS when it has credentials)."""
    if endpoint.binding == "grpc":
        return grpc_url(endpoint.url, secure=bool(grpc_credentials))
    return endpoint.url


class A2AClient:
    """A client of one agent: its card, the interface chosen on it, and every operation.

    Make one with `connect` (reads the card and picks the interface), or directly from an
    `Endpoint`. The caller's credentials go only to the origin it connected to (the card's
    URL, ``card_url``, else the endpoint's) and to the origins ``credential_origins`` lists,
    and over plain http only to loopback or a listed origin (`CredentialRefusedError`
    otherwise; OAuth client secrets go to a token URL at any origin, over https). It may
    own its ``httpx.AsyncClient`` (closed by `aclose` or ``async with``) or use the
    caller's (left open). Works under asyncio and trio, and from inside an agent
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
        grpc_credentials: Any = None,
        credential_origins: Sequence[str] = (),
        card_url: str | None = None,
    ) -> None:
        if tenant is not None:
            endpoint = Endpoint(endpoint.url, endpoint.binding, endpoint.dialect, tenant)
        self._owns_http = http is None
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        options: dict[str, Any] = {
            "credentials": credentials or Credentials(),
            "headers": [(str(name), str(value)) for name, value in pairs],
            "extensions": extensions,
            "retry": retry or RetryPolicy(),
            "resume": resume,
            "max_reply_bytes": max_reply_bytes,
            "max_event_bytes": max_event_bytes,
            "credential_policy": CredentialPolicy.of(
                card_url or _interface_url(endpoint, grpc_credentials), credential_origins
            ),
        }
        http_client = http if http is not None else httpx.AsyncClient()
        self._exchange: Exchange | GrpcExchange
        if endpoint.binding == "grpc":
            try:
                from a2a_grpc._client import GrpcExchange
            except ImportError:
                raise NoUsableInterfaceError(
                    f"the interface at {endpoint.url} is gRPC, which needs the a2aserve-grpc "
                    f"distribution: {install_hint('a2aserve-grpc')}"
                ) from None
            self._exchange = GrpcExchange(
                http_client, endpoint, channel_credentials=grpc_credentials, **options
            )
        else:
            self._exchange = Exchange(http_client, endpoint, **options)
        self._exchange.card = card
        self._timeout = timeout

    @property
    def endpoint(self) -> Endpoint:
        """The interface every call goes to."""
        return self._exchange.endpoint

    @property
    def card(self) -> AgentCard | None:
        """The agent's card (the extended one when it was asked for), if known; its security
        requirements say where the credentials go."""
        return self._exchange.card

    @card.setter
    def card(self, card: AgentCard | None) -> None:
        self._exchange.card = card

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
        grpc_credentials: Any = None,
        credential_origins: Sequence[str] = (),
    ) -> A2AClient:
        """Read the card of the agent at ``url`` and return a client of the interface chosen.

        ``url`` is the agent's base URL (its card at ``card_path`` below it) or the card's
        own URL (ending in ``.json``). ``bindings`` (``JSONRPC``, ``HTTP+JSON``, ``GRPC``)
        and ``versions`` (``1.0``, ``0.3``) narrow and order the choice; by default the
        card's first interface this client speaks is used (``GRPC`` too when
        ``a2aserve-grpc`` is installed). ``extended_card`` fetches the extended card with
        the credentials when the card offers one. ``signing_keys`` or ``verify_signature``
        refuse a card whose signature does not verify (`CardError`). ``grpc_credentials``
        are a gRPC interface's channel credentials (``grpc.ssl_channel_credentials(...)``);
        by default TLS with the system's roots when the card was read over ``https``,
        plaintext otherwise. ``credential_origins`` lists the origins besides the card's
        (``https://auth.example``) that may have the caller's credentials, also over plain
        http. The other keywords are the constructor's.
        """
        own_http = http is None
        http = http if http is not None else httpx.AsyncClient()
        try:
            location = card_url_for(url, card_path)
            extra = dict(headers.items() if isinstance(headers, Mapping) else headers)
            async with deadline(timeout):
                card, _ = await fetch_card(
                    http,
                    location,
                    cache=card_cache,
                    headers=extra,
                    signing_keys=signing_keys,
                    verify_signature=verify_signature,
                    retry=retry,
                )
            endpoint = choose_interface(
                card, bindings=bindings, versions=versions, base_url=location, spoken=_spoken()
            )
            if grpc_credentials is None and location.startswith("https:"):
                grpc_credentials = True  # TLS, the system's roots
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
                grpc_credentials=grpc_credentials,
                credential_origins=credential_origins,
                card_url=location,
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
        """Close the gRPC channel (if any), and the HTTP client if this client made it."""
        close = getattr(self._exchange, "aclose", None)
        try:
            if close is not None:
                await close()
        finally:
            if self._owns_http:
                await self._exchange.http.aclose()

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
        return self._exchange.stream(
            Operation.SEND_STREAMING_MESSAGE, request, None, self._call_timeout(timeout)
        )

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
        return self._exchange.stream(
            Operation.SUBSCRIBE_TO_TASK, request, last_event_id, self._call_timeout(timeout)
        )

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
        if request is None:
            request = ListTasksRequest(**filters)
        elif filters:
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
        return await self._exchange.call(operation, request, timeout=self._call_timeout(timeout))

    # --- helpers ---------------------------------------------------------------------------

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
