"""One agent's interface, spoken over httpx: calls, streams, and what keeps them safe (L2).

`Exchange` owns what the sans-IO protocol leaves to the caller: the HTTP exchange, the
credentials each request carries (only where `CredentialPolicy` allows, never across a
redirect to another origin), retries of connection failures (`RetryPolicy`), the one
retry after a 401 with a fresh OAuth token, the bounds on what a reply may cost
(``max_reply_bytes``, ``max_event_bytes``), and the resumption of a stream cut mid-way:
SubscribeToTask from the last event id received (``Last-Event-ID``), repeats dropped, and the
task's final state fetched when the server can no longer replay.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import time
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any, Final
from urllib.parse import urlencode

import anyio
import httpx

from a2a_core._protocol.client import (
    AgentError,
    ClientError,
    Endpoint,
    InvalidReplyError,
    ReceivedEvent,
    StreamDecoder,
    build_request,
    read_error,
    read_reply,
    request_url,
)
from a2a_core._protocol.http import HttpRequest
from a2a_core._protocol.operations import Operation
from a2a_core._protocol.sse import CLOSING_STATES, SUBSCRIPTION_CLOSING_STATES, ends_stream
from a2a_core.client._auth import (
    Credentials,
    TokenSource,
    apply_credentials,
    refuse_unsafe_headers,
)
from a2a_core.client._bodies import ACCEPT_ENCODING, chunks, read_limited
from a2a_core.client._errors import TransportError
from a2a_core.client._origins import CredentialPolicy, send_guarded
from a2a_core.client._retry import BEFORE_REPLY, RetryPolicy
from a2a_core.types import (
    AgentCard,
    GetTaskRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)

__all__ = ["DEFAULT_MAX_EVENT_BYTES", "DEFAULT_MAX_REPLY_BYTES", "Exchange"]

#: The largest one-shot reply the client reads, by default.
DEFAULT_MAX_REPLY_BYTES: Final = 64 * 1024 * 1024
#: The most a stream may send without completing an event, by default.
DEFAULT_MAX_EVENT_BYTES: Final = 64 * 1024 * 1024
#: How many event ids a resumed stream remembers to drop repeats.
_SEEN_IDS: Final = 4096
#: The longest id remembered (4,096 of them: at most 4 MiB of ids).
_MAX_REMEMBERED_ID: Final = 1024
_SSE: Final = "text/event-stream"
#: How long the rest of a stream's body is read after its last event, at most.
_DRAIN_SECONDS: Final = 1.0


def deadline(seconds: float | None) -> contextlib.AbstractAsyncContextManager[Any]:
    """``async with`` it: `TimeoutError` after ``seconds`` (``None``: no limit).

    Under asyncio it is the standard library's ``asyncio.timeout``, a fifth of the cost of
    ``anyio.fail_after``, which looks for the running event loop library at every call (it
    was 9 % of a call's CPU, ``bench/client.py``); under trio, anyio's.
    """
    if seconds is None:
        return contextlib.nullcontext()
    try:
        asyncio.current_task()
    except RuntimeError:  # no asyncio loop running here: trio
        return _AsAsync(anyio.fail_after(seconds))
    return asyncio.timeout(seconds)


class _AsAsync:
    """A synchronous context manager (anyio's cancel scope) used with ``async with``."""

    def __init__(self, scope: contextlib.AbstractContextManager[Any]) -> None:
        self._scope = scope

    async def __aenter__(self) -> Any:
        return self._scope.__enter__()

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return self._scope.__exit__(*exc_info)


@functools.lru_cache(maxsize=16)
def _httpx_timeout(seconds: float | None) -> httpx.Timeout:
    # One per value: building it per request showed in the profile (bench/client.py).
    return httpx.Timeout(seconds)


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


class Exchange:
    """Calls and streams to one `Endpoint` (what `A2AClient` delegates to)."""

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
    ) -> None:
        self.http = http
        self.endpoint = endpoint
        #: The card whose security requirements say where credentials go (``None``: the
        #: caller's credentials go in the usual places).
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
        self._headers = list(headers)
        self._extensions = tuple(extensions)
        self._retry = retry
        self._resume = resume
        self._max_reply_bytes = max_reply_bytes
        self._max_event_bytes = max_event_bytes
        self._ids = itertools.count(1)

    async def call(
        self,
        operation: Operation,
        request: Any,
        *,
        timeout: float | None,
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
        limit = timeout
        try:
            async with deadline(limit):
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

    async def _to_httpx(
        self, request: HttpRequest, timeout: float | None
    ) -> tuple[httpx.Request, list[str]]:
        """The request to send, and the names of the headers that carry credentials (which
        no redirect to another origin may keep)."""
        credentials = self._credentials
        if credentials:
            # Before any token is fetched: an interface the caller's credentials may not
            # reach gets none, and costs no request to the token endpoint.
            self._policy.check_interface(self.endpoint.url)
        applied = await apply_credentials(self.card, credentials, self._tokens, self.http)
        url = request_url(request)
        if applied.query:
            extra = urlencode(applied.query)
            url = f"{url}{'&' if '?' in url else '?'}{extra}"
        headers = [
            *request.headers.items(),
            *applied.headers,
            *_trace_headers(),
            ("accept-encoding", ACCEPT_ENCODING),
        ]
        if applied.cookies:
            cookie = "; ".join(f"{k}={v}" for k, v in applied.cookies.items())
            headers.append(("cookie", cookie))
        refuse_unsafe_headers(headers)
        outgoing = self.http.build_request(
            request.method,
            url,
            headers=headers,
            content=request.body or None,
            timeout=_httpx_timeout(timeout),
        )
        # The caller's own headers may carry secrets of their own (a tenant token, a
        # signature): a redirect to another origin loses them as it loses the credentials.
        secret = [name for name, _ in applied.headers] + [name for name, _ in self._headers]
        if applied.cookies:
            secret.append("cookie")
        return outgoing, secret

    async def _send(self, request: HttpRequest, timeout: float | None) -> httpx.Response:
        """The response's head (the body not read yet), after the retries the policy allows
        for connection failures and the one retry with fresh credentials after a 401."""
        policy = self._retry
        started = time.monotonic()
        retry = 0
        refreshed = False
        while True:
            outgoing, secret_headers = await self._to_httpx(request, timeout)
            try:
                response = await send_guarded(self.http, outgoing, secret_headers)
            except BEFORE_REPLY:
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
        limit = self._max_reply_bytes
        return await read_limited(
            response,
            limit,
            lambda: InvalidReplyError(
                f"the reply is larger than {limit} bytes (max_reply_bytes)",
                status=response.status_code,
            ),
        )

    async def stream(
        self,
        operation: Operation,
        request: Any,
        last_event_id: str | None,
        timeout: float | None,
    ) -> AsyncIterator[ReceivedEvent]:
        """The events of a streaming call, resumed by SubscribeToTask when cut.

        A resumed stream ends where the call would have ended (a send stream also on
        input-required), whatever the subscription it now reads would do.
        """
        closing = (
            SUBSCRIPTION_CLOSING_STATES
            if operation is Operation.SUBSCRIBE_TO_TASK
            else CLOSING_STATES
        )
        task_id = request.id if operation is Operation.SUBSCRIBE_TO_TASK else None
        seen: set[str] = set()
        order: deque[str] = deque()
        fruitless = 0
        resuming = False
        while True:
            progressed = False
            cut: str | None = None
            snapshot: Task | None = None
            try:
                response = await self._open(
                    operation, request, last_event_id, timeout, resuming=resuming
                )
                try:
                    if resuming and last_event_id is None and task_id is not None:
                        # Without event ids the server cannot replay what followed the cut
                        # (the official SDKs send none): the task as it is now holds it,
                        # fetched once the subscription is open, so that nothing falls
                        # between the two.
                        snapshot = await self._task_now(task_id, timeout)
                        if snapshot is not None:
                            event = StreamResponse(task=snapshot)
                            last = ends_stream(event, closing)
                            yield ReceivedEvent(event, None, last)
                            if last:
                                return
                    async with contextlib.aclosing(
                        self._events(response, operation, closing)
                    ) as events:
                        async for received in events:
                            event_id = received.event_id
                            if event_id is not None:
                                if event_id in seen:
                                    continue  # a replay's repeat: never yield it twice
                                # Remembered within a bound in bytes too: an id longer
                                # than any real one is resumed from, not remembered.
                                if len(event_id) <= _MAX_REMEMBERED_ID:
                                    seen.add(event_id)
                                    order.append(event_id)
                                    if len(order) > _SEEN_IDS:
                                        seen.discard(order.popleft())
                                last_event_id = event_id
                            elif snapshot is not None and received.event.task == snapshot:
                                continue  # the task as just fetched: said already
                            task_id = task_id or received.task_id
                            progressed = True
                            yield received
                            if received.last:
                                return
                finally:
                    await response.aclose()
            except _StreamCutError as exc:
                cut = exc.reason
            except AgentError as exc:
                if not resuming or task_id is None:
                    raise
                # The subscription that resumes is refused: the task may have ended while we
                # were away, on a server that cannot replay (subscribing to a finished task
                # is an error in v1.0). Its final state is then what was missed.
                final = await self._task_now(task_id, timeout)
                if final is None or not final.status.state.is_terminal:
                    raise exc from None
                yield ReceivedEvent(StreamResponse(task=final), None, True)
                return
            if cut is None:
                cut = "the stream ended before its last event"
            if not self._resume or task_id is None:
                raise TransportError(f"{operation.value}: {cut}")
            fruitless = 0 if progressed else fruitless + 1
            if resuming and not progressed and snapshot is None:
                # A resumption that brought nothing may be a refusal in disguise (a2a-sdk
                # 0.3's REST binding answers a subscription to a finished task with a
                # stream it then aborts): if the task has ended, its state is what was missed.
                final = await self._task_now(task_id, timeout)
                if final is not None and final.status.state.is_terminal:
                    yield ReceivedEvent(StreamResponse(task=final), None, True)
                    return
            if fruitless >= self._retry.attempts:
                raise TransportError(
                    f"{operation.value}: {cut}; resuming failed {fruitless} times in a row"
                )
            await anyio.sleep(self._retry.wait(fruitless))
            operation = Operation.SUBSCRIBE_TO_TASK
            request = SubscribeToTaskRequest(id=task_id)
            resuming = True

    async def _task_now(self, task_id: str, timeout: float | None) -> Task | None:
        """The task as it is now (``None`` when it cannot be had)."""
        try:
            task: Task = await self.call(
                Operation.GET_TASK, GetTaskRequest(id=task_id), timeout=timeout
            )
        except ClientError:
            return None
        return task

    async def _open(
        self,
        operation: Operation,
        request: Any,
        last_event_id: str | None,
        timeout: float | None,
        *,
        resuming: bool,
    ) -> httpx.Response:
        """A streaming request's response, once its head says it is an event stream.

        A reply that is not one is read as the error it carries (`AgentError`,
        `InvalidReplyError`). A connection failure is `TransportError`, or, when resuming,
        `_StreamCutError` (the resumption is tried again).
        """
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
            async with deadline(timeout):
                response = await self._send(http_request, None)
        except TimeoutError:
            raise _StreamCutError(f"no reply within {timeout} s") from None
        except httpx.HTTPError as exc:
            if resuming:
                raise _StreamCutError(_describe(exc)) from None
            raise TransportError(
                f"{operation.value} to {self.endpoint.url} failed: {_describe(exc)}"
            ) from None
        content_type = response.headers.get("content-type", "")
        if response.status_code == 200 and content_type.lower().startswith(_SSE):
            return response
        try:
            body = await self._read_body(response)
        except httpx.HTTPError as exc:
            raise _StreamCutError(f"the connection was cut: {_describe(exc)}") from None
        finally:
            await response.aclose()
        raise read_error(self.endpoint, response.status_code, body)

    async def _events(
        self, response: httpx.Response, operation: Operation, closing: frozenset[TaskState]
    ) -> AsyncGenerator[ReceivedEvent, None]:
        """The events of an open stream; `_StreamCutError` when it ends early or breaks."""
        decoder = StreamDecoder(operation, self.endpoint, closing_states=closing)
        pending = 0
        try:
            async with contextlib.aclosing(chunks(response)) as body_chunks:
                async for chunk in body_chunks:
                    pending += len(chunk)
                    events = decoder.feed(chunk)
                    if events:
                        pending = 0
                    elif pending > self._max_event_bytes:
                        raise InvalidReplyError(
                            f"a stream event is larger than {self._max_event_bytes} bytes "
                            "(max_event_bytes)"
                        )
                    if any(received.last for received in events):
                        break
                    for received in events:
                        yield received
                else:
                    events = decoder.close()
                if any(received.last for received in events):
                    # Read the rest of the body (the server ends it after its last event)
                    # before handing the last event over: the connection goes back to the
                    # pool, and no reader is left half-way.
                    with anyio.move_on_after(_DRAIN_SECONDS):
                        drained = 0
                        async for chunk in body_chunks:
                            drained += len(chunk)
                            if drained > self._max_event_bytes:
                                break
            for received in events:
                yield received
                if received.last:
                    return
        except httpx.HTTPError as exc:
            raise _StreamCutError(f"the connection was cut: {_describe(exc)}") from None
        raise _StreamCutError("the stream ended before its last event")


class _StreamCutError(Exception):
    """A stream ended or broke before its last event (resumable)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
