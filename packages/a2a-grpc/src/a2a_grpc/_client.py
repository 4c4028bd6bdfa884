"""The client's gRPC transport: `A2AClient` calls over a grpc.aio channel.

`GrpcExchange` is what `a2a_core.client.A2AClient` uses for an interface whose binding is
``GRPC`` (the same face as its HTTP exchange: ``call``, ``stream``, ``card``, ``aclose``).
The pure client protocol builds each call (`build_request`: path, metadata, protobuf body)
and reads each reply (`read_grpc_reply`, `read_grpc_event`); this module only moves bytes:
credentials into metadata (the card's requirements say which), retries of a call the
server never received (UNAVAILABLE), one retry with a fresh OAuth token after
UNAUTHENTICATED, and a stream cut mid-way resumed by SubscribeToTask, whose first event is
the task as it stands (gRPC has no event ids to replay from).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final

import anyio
import grpc
import httpx
from grpc import aio

from a2a_core.client import (
    AgentError,
    ClientError,
    CredentialPolicy,
    Credentials,
    Endpoint,
    ReceivedEvent,
    RetryPolicy,
    TokenSource,
    TransportError,
    apply_credentials,
    build_request,
    grpc_error,
    read_grpc_event,
    read_grpc_reply,
    refuse_unsafe_headers,
)
from a2a_core.grpc import STATUS_DETAILS_KEY, GrpcStatus
from a2a_core.operations import Operation
from a2a_core.sse import CLOSING_STATES, SUBSCRIPTION_CLOSING_STATES
from a2a_core.types import AgentCard, GetTaskRequest, StreamResponse, SubscribeToTaskRequest, Task

__all__ = ["GrpcExchange"]

_OK: Final = GrpcStatus(0)
#: Codes that mean the call never reached the agent, or the connection broke.
_TRANSPORT_CODES: Final = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED}
)


def _status(exc: aio.AioRpcError) -> GrpcStatus:
    details = b""
    for key, value in exc.trailing_metadata() or ():
        if key == STATUS_DETAILS_KEY and isinstance(value, bytes):
            details = value
    return GrpcStatus(exc.code().value[0], exc.details() or "", details)


class GrpcExchange:
    """Calls and streams to one gRPC `Endpoint` over one channel."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        endpoint: Endpoint,
        *,
        credentials: Credentials,
        headers: Sequence[tuple[str, str]],
        extensions: Sequence[str],
        retry: RetryPolicy,
        resume: bool,
        max_reply_bytes: int,
        max_event_bytes: int,
        credential_policy: CredentialPolicy,
        channel_credentials: grpc.ChannelCredentials | bool | None = None,
    ) -> None:
        #: The HTTP client (OAuth tokens are fetched with it).
        self.http = http
        self.endpoint = endpoint
        #: The card whose security requirements say where credentials go.
        self.card: AgentCard | None = None
        self._credentials = credentials
        self._policy = credential_policy
        self._tokens = (
            TokenSource(
                credentials.oauth,
                credential_origins=credential_policy.allowed,
                home=credential_policy.home,
            )
            if credentials.oauth
            else None
        )
        self._headers = [(name.lower(), value) for name, value in headers]
        self._extensions = tuple(extensions)
        self._retry = retry
        self._resume = resume
        options = [
            ("grpc.max_receive_message_length", max(max_reply_bytes, max_event_bytes)),
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.keepalive_timeout_ms", 20_000),
        ]
        if channel_credentials is True:
            channel_credentials = grpc.ssl_channel_credentials()  # the system's roots
        secure = isinstance(channel_credentials, grpc.ChannelCredentials)
        #: The target as a URL whose scheme says TLS or not, for the credential rule.
        self._url = f"{'https' if secure else 'http'}://{endpoint.url}"
        if isinstance(channel_credentials, grpc.ChannelCredentials):
            self._channel = aio.secure_channel(endpoint.url, channel_credentials, options)
        else:
            self._channel = aio.insecure_channel(endpoint.url, options)

    async def aclose(self) -> None:
        """Close the channel."""
        await self._channel.close()

    async def _metadata(self, headers: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
        if self._credentials:
            self._policy.check_interface(self._url)  # before any token is fetched
        applied = await apply_credentials(self.card, self._credentials, self._tokens, self.http)
        metadata = [(name, value) for name, value in headers if name != "content-type"]
        metadata += [(name.lower(), value) for name, value in applied.headers]
        # gRPC has no query string or cookies: an API key the card puts there goes in the
        # metadata under its name.
        metadata += [(name.lower(), value) for name, value in applied.query]
        if applied.cookies:
            metadata.append(("cookie", "; ".join(f"{k}={v}" for k, v in applied.cookies.items())))
        # grpc refuses such a value too, but with an error of its own and a log line.
        refuse_unsafe_headers(metadata)
        return metadata

    async def call(self, operation: Operation, request: Any, *, timeout: float | None) -> Any:
        """Any one-shot operation with its v1.0 request; its v1.0 result."""
        outgoing = build_request(
            operation, request, self.endpoint, headers=self._headers, extensions=self._extensions
        )
        method: aio.UnaryUnaryMultiCallable[bytes, bytes] = self._channel.unary_unary(outgoing.path)
        policy = self._retry
        started = time.monotonic()
        retry = 0
        refreshed = False
        while True:
            metadata = await self._metadata(outgoing.headers.items())
            try:
                reply = await method(outgoing.body, metadata=metadata, timeout=timeout)
            except aio.AioRpcError as exc:
                code = exc.code()
                if code is grpc.StatusCode.UNAUTHENTICATED and self._tokens and not refreshed:
                    self._tokens.invalidate()
                    refreshed = True
                    continue
                if (
                    code is grpc.StatusCode.UNAVAILABLE
                    and retry + 1 < policy.attempts
                    and time.monotonic() - started <= policy.deadline
                ):
                    await anyio.sleep(policy.wait(retry))
                    retry += 1
                    continue
                raise self._failure(operation, exc, timeout) from None
            return read_grpc_reply(operation, _OK, reply)

    def _failure(
        self, operation: Operation, exc: aio.AioRpcError, timeout: float | None
    ) -> ClientError:
        status = _status(exc)
        if exc.code() is grpc.StatusCode.DEADLINE_EXCEEDED and not status.details:
            return TransportError(
                f"{operation.value} got no reply within {timeout} s from {self.endpoint.url}"
            )
        if exc.code() in _TRANSPORT_CODES and not status.details:
            return TransportError(
                f"{operation.value} to {self.endpoint.url} failed: {status.name}: {status.message}"
            )
        return grpc_error(status)

    async def stream(
        self,
        operation: Operation,
        request: Any,
        last_event_id: str | None,
        timeout: float | None,
    ) -> AsyncIterator[ReceivedEvent]:
        """The events of a streaming call; cut mid-way, resumed by SubscribeToTask (whose
        first event is the task as it stands). gRPC has no event ids: a ``last_event_id`` is
        refused (`ClientError`) rather than ignored, since what follows it cannot be had."""
        if last_event_id is not None:
            raise ClientError(
                "gRPC streams carry no event ids: subscribe without one (the first event is "
                "the task as it stands)"
            )
        closing = (
            SUBSCRIPTION_CLOSING_STATES
            if operation is Operation.SUBSCRIBE_TO_TASK
            else CLOSING_STATES
        )
        task_id = request.id if operation is Operation.SUBSCRIBE_TO_TASK else None
        fruitless = 0
        resuming = False
        while True:
            progressed = False
            outgoing = build_request(
                operation,
                request,
                self.endpoint,
                headers=self._headers,
                extensions=self._extensions,
            )
            metadata = await self._metadata(outgoing.headers.items())
            streaming: aio.UnaryStreamMultiCallable[bytes, bytes] = self._channel.unary_stream(
                outgoing.path
            )
            call = streaming(outgoing.body, metadata=metadata)
            cut = "the stream ended before its last event"
            try:
                async for message in call:
                    received = read_grpc_event(message, closing)
                    task_id = task_id or received.task_id
                    progressed = True
                    yield received
                    if received.last:
                        return
            except aio.AioRpcError as exc:
                failure = self._failure(operation, exc, timeout)
                if isinstance(failure, AgentError):
                    if not resuming or task_id is None:
                        raise failure from None
                    # The task ended while we were away: subscribing to it is refused.
                    final = await self._task_now(task_id, timeout)
                    if final is None or not final.status.state.is_terminal:
                        raise failure from None
                    yield ReceivedEvent(StreamResponse(task=final), None, True)
                    return
                cut = str(failure)
            finally:
                call.cancel()
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

    async def _task_now(self, task_id: str, timeout: float | None) -> Task | None:
        try:
            task: Task = await self.call(
                Operation.GET_TASK, GetTaskRequest(id=task_id), timeout=timeout
            )
        except ClientError:
            return None
        return task
