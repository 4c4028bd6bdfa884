"""The ASGI adapter: ASGI scope and messages <-> the core's HTTP values."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Mapping
from types import MappingProxyType
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Message, Receive, Scope, Send

from a2a_core.http import Headers, HttpRequest, HttpResponse, SseResponse, content_length_exceeds
from a2a_core.openapi import openapi_paths
from a2a_core.server import A2AServer

__all__ = ["A2AStarlette", "put_base_url", "put_identity", "put_metadata"]

_STATE_KEY = "a2a"
_NO_OVERRIDES: Mapping[str, Any] = MappingProxyType({})


def _overrides(scope: Scope) -> dict[str, Any]:
    state = scope.setdefault("state", {})
    overrides: dict[str, Any] = state.setdefault(_STATE_KEY, {})
    return overrides


def put_base_url(connection: HTTPConnection | Scope, base_url: str) -> None:
    """Set the public URL of the A2A mount for this request (call from middleware)."""
    _overrides(_scope_of(connection))["base_url"] = base_url


def put_metadata(connection: HTTPConnection | Scope, metadata: Mapping[str, Any]) -> None:
    """Add per-request metadata, merged over the server's and under the call's own."""
    _overrides(_scope_of(connection)).setdefault("metadata", {}).update(metadata)


def put_identity(connection: HTTPConnection | Scope, identity: Any) -> None:
    """Set the authenticated caller explicitly (instead of ``request.user``)."""
    _overrides(_scope_of(connection))["identity"] = identity


def _scope_of(connection: HTTPConnection | Scope) -> Scope:
    return connection.scope if isinstance(connection, HTTPConnection) else connection


def _identity(scope: Scope, overrides: Mapping[str, Any]) -> Any:
    if "identity" in overrides:
        return overrides["identity"]
    user = scope.get("user")  # Starlette's AuthenticationMiddleware
    if user is not None and getattr(user, "is_authenticated", False):
        return user
    return None


class A2AStarlette:
    """An ASGI app serving one :class:`A2AServer`.

    Parameters:
        server: The server to serve.
        trust_host_header: When no base URL is configured or put by middleware, derive it
            from the request (scheme, ``Host`` and mount path). Only enable this behind a
            proxy that sets ``Host`` itself: otherwise clients choose the URLs in the card.
    """

    def __init__(self, server: A2AServer, *, trust_host_header: bool = False) -> None:
        self.server = server
        self.trust_host_header = trust_host_header

    # --- lifespan --------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """Start and stop the server's background work; pass as ``lifespan=`` when mounting
        (Starlette does not run the lifespan of mounted apps), or use `mount`, which does
        it for you. On start, a server whose card cannot get its URLs is reported
        (`A2AServer.check_base_url`)."""
        async with self.server:
            self.server.check_base_url(from_requests=self.trust_host_header)
            yield

    def mount(self, app: Starlette, path: str = "/a2a") -> None:
        """Serve this adapter at ``path`` of ``app`` (Starlette or FastAPI) and run the A2A
        server with the app.

        The route is added as `routes` makes it, and the app's lifespan becomes one that
        runs the A2A server around the app's own (started before it, stopped after it), so
        that the server runs whenever the app does: a plain ``app.mount(...)`` without
        ``lifespan=`` leaves it stopped, and every call is answered 503. Call it before the
        app starts; the app's own lifespan (``lifespan=``, startup handlers) keeps working,
        and what it yields is the app's state as before. On a FastAPI app, the A2A routes
        also appear in its OpenAPI document (`a2a_core.openapi`).
        """
        router = app.router
        prefix = path.rstrip("/")
        router.routes.extend(self.routes(prefix))
        if callable(getattr(app, "openapi", None)) and hasattr(app, "openapi_schema"):
            self._describe_in_openapi(app, prefix)
        own_lifespan = router.lifespan_context

        @contextlib.asynccontextmanager
        async def lifespan(running: Any) -> AsyncIterator[Any]:
            async with self.lifespan(), own_lifespan(running) as state:
                yield state

        router.lifespan_context = lifespan

    def _describe_in_openapi(self, app: Any, prefix: str) -> None:
        """FastAPI: the app's OpenAPI document also lists the A2A routes
        (`a2a_core.openapi.openapi_paths`: the card, JSON-RPC, the v1.0 HTTP+JSON routes the
        card enables, the wire types as schemas), merged in once, when it is first built."""
        build = app.openapi

        def openapi() -> dict[str, Any]:
            if app.openapi_schema is not None:  # built, ours merged in: FastAPI's cache
                cached: dict[str, Any] = app.openapi_schema
                return cached
            document: dict[str, Any] = build()
            ours = openapi_paths(self.server.protocol, self.server.card, prefix)
            document.setdefault("paths", {}).update(ours["paths"])
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(ours["components"]["schemas"])
            return document

        app.openapi = openapi

    def routes(self, prefix: str = "") -> list[BaseRoute]:
        """The routes to add to a Starlette app's route list (a mount at ``prefix``).

        The same as a plain ``Mount(prefix, app=...)`` (the card publishes the JSON-RPC URL
        as ``prefix/``, with its slash, which a plain mount serves), except that this mount
        also serves ``prefix`` itself, which Starlette would answer with a redirect: for
        clients that post to the mount path without its slash.
        """
        return [_Mount(prefix, app=self)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # Inline rather than a coroutine of its own: one frame fewer per idle stream. No
            # local for the request: a stream can live for hours, and must not keep the
            # request's headers and body alive meanwhile.
            response = await self.server.handle(await self._request(scope, receive))
            if isinstance(response, SseResponse):
                await _send_stream(response, receive, send)
            else:
                await _send_response(response, send, head=scope["method"] == "HEAD")
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":  # pragma: no cover - ASGI guarantees it
            return
        started = False
        try:
            async with self.lifespan():
                await send({"type": "lifespan.startup.complete"})
                started = True
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except BaseException as exc:
            # After startup.complete, ASGI allows only a shutdown reply: a failure from then
            # on (stopping the server, or while waiting for the shutdown) is the shutdown's.
            failed = "lifespan.shutdown.failed" if started else "lifespan.startup.failed"
            await send({"type": failed, "message": type(exc).__name__})
            raise
        await send({"type": "lifespan.shutdown.complete"})

    # --- requests --------------------------------------------------------------------------

    async def _request(self, scope: Scope, receive: Receive) -> HttpRequest:
        # Read only: creating the state dicts on every request is for the put_* helpers.
        state = scope.get("state")
        overrides: Mapping[str, Any] = (state.get(_STATE_KEY) if state else None) or _NO_OVERRIDES
        root = scope.get("root_path", "")
        raw = scope.get("raw_path") or scope["path"].encode()
        path = raw.decode("latin-1").split("?", 1)[0]
        if root and path.startswith(root):
            path = path[len(root) :]
        base_url = overrides.get("base_url")
        if base_url is None and self.trust_host_header:
            base_url = _derived_base_url(scope)
        headers = Headers(scope["headers"])
        limit = self.server.max_body_size
        # A body whose Content-Length is over the limit is refused before any of it is read
        # (the core answers by the header; receive() is never called, so the server sends no
        # "100 Continue" for it either).
        body = b"" if content_length_exceeds(headers, limit) else await _read_body(receive, limit)
        return HttpRequest(
            method=scope["method"],
            path=path or "/",
            query=scope.get("query_string", b"").decode("latin-1"),
            headers=headers,
            body=body,
            identity=_identity(scope, overrides),
            base_url=base_url,
            metadata=overrides.get("metadata") or _NO_OVERRIDES,
            peer_certificate=_peer_certificate(scope) if scope.get("scheme") == "https" else None,
            peer=_peer(scope),
        )


def _peer(scope: Scope) -> str | None:
    """The client's address (ASGI ``client``: uvicorn's is the proxy's client when it trusts
    the proxy's headers), without the port."""
    client = scope.get("client")
    return str(client[0]) if client else None


def _peer_certificate(scope: Scope) -> bytes | None:
    """The client certificate, DER, from the ASGI TLS extension (``client_cert_chain``, PEM,
    the client's own first), where the server provides it (uvicorn does not)."""
    tls = (scope.get("extensions") or {}).get("tls")
    chain = tls.get("client_cert_chain") if tls else None
    if not chain:
        return None
    try:
        return ssl.PEM_cert_to_DER_cert(chain[0])
    except ValueError:  # not PEM: the server's business, not the client's
        return None


class _Mount(Mount):
    """A ``Mount`` that matches its own path too (``/a2a`` as well as ``/a2a/...``)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        path = scope.get("path")
        if self.path and scope["type"] == "http" and path == scope.get("root_path", "") + self.path:
            return super().matches({**scope, "path": path + "/"})
        return super().matches(scope)


def _derived_base_url(scope: Scope) -> str:
    headers = Headers(scope["headers"])
    host = headers.get("host")
    if host is None:
        server = scope.get("server") or ("localhost", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The body; reading stops as soon as it passes ``limit``, keeping one byte more, so that
    the core's refusal goes out at once. What the client still sends, the server drops after
    the reply (uvicorn reads it to its end without keeping it, on the same connection)."""
    message = await receive()
    if message["type"] == "http.request" and not message.get("more_body", False):
        whole: bytes = message.get("body", b"")  # the usual case: one message, no copy
        return whole[: limit + 1]
    body = bytearray()
    while message["type"] == "http.request":
        body += message.get("body", b"")[: limit + 1 - len(body)]
        if not message.get("more_body", False) or len(body) > limit:
            break
        message = await receive()
    return bytes(body)


def _raw_headers(
    headers: tuple[tuple[str, str], ...], body_length: int | None
) -> list[tuple[bytes, bytes]]:
    raw = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in headers]
    if body_length is not None and not any(name == b"content-length" for name, _ in raw):
        raw.append((b"content-length", str(body_length).encode()))
    return raw


async def _send_response(response: HttpResponse, send: Send, *, head: bool) -> None:
    length = None if response.status in (204, 304) else len(response.body)
    await send(
        {
            "type": "http.response.start",
            "status": response.status,
            "headers": _raw_headers(response.headers, length),
        }
    )
    await send({"type": "http.response.body", "body": b"" if head else response.body})


async def _send_stream(response: SseResponse, receive: Receive, send: Send) -> None:
    """Write frames as they come; stop (closing the frames) when the client disconnects."""
    frames = response.frames
    try:
        # Inside the try: a client gone before the head is written still closes the response.
        await send(
            {
                "type": "http.response.start",
                "status": response.status,
                "headers": _raw_headers(response.headers, None),
            }
        )
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not on asyncio (trio)
            task = None
        if task is None:
            await _relay_in_task_group(frames, receive, send)
        else:
            # On asyncio, a task awaiting ``receive()`` cancels this one at the disconnect:
            # an idle stream holds that task and one small object, where a task group holds
            # its cancel scopes, sets, task handle and events (some 3 KB per stream).
            watch = _DisconnectWatch(receive, task)
            try:
                async for frame in frames:
                    await send({"type": "http.response.body", "body": frame, "more_body": True})
            except asyncio.CancelledError:
                if not watch.stop():
                    raise  # not (only) ours: the task itself is being cancelled
            finally:
                watch.stop()
            if watch.error is not None:
                raise watch.error
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
    finally:
        with anyio.CancelScope(shield=True):
            await response.aclose()


async def _relay_in_task_group(frames: AsyncIterator[bytes], receive: Receive, send: Send) -> None:
    """Write the frames until they end or the client disconnects (any anyio backend)."""
    async with anyio.create_task_group() as tg:

        async def watch_disconnect() -> None:
            message: Message = {"type": ""}
            while message["type"] != "http.disconnect":
                message = await receive()
            tg.cancel_scope.cancel()

        tg.start_soon(watch_disconnect)
        async for frame in frames:
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        tg.cancel_scope.cancel()


class _DisconnectWatch:
    """On asyncio: awaits ``http.disconnect`` in a task of its own, then cancels ``task``.

    Done callbacks rather than a watcher coroutine, so that the task awaiting ``receive()``
    is the only one. ``error`` is what ``receive()`` raised, if anything (the stream stops).
    """

    __slots__ = ("active", "error", "fired", "receive", "task", "waiter")

    def __init__(self, receive: Receive, task: asyncio.Task[Any]) -> None:
        self.receive = receive
        self.task = task
        self.active = True
        self.fired = False
        self.error: BaseException | None = None
        self.waiter = self._wait()

    def _wait(self) -> asyncio.Future[Message]:
        waiter = asyncio.ensure_future(self.receive())
        waiter.add_done_callback(self._received)
        return waiter

    def _received(self, waiter: asyncio.Future[Message]) -> None:
        if not self.active or waiter.cancelled():
            return
        error = waiter.exception()
        if error is None and waiter.result()["type"] != "http.disconnect":
            self.waiter = self._wait()
            return
        self.active = False
        self.error = error
        self.fired = True
        self.task.cancel()

    def stop(self) -> bool:
        """Stop watching. True when the client left and its cancellation was the only one
        the task got: that cancellation is then withdrawn (``Task.uncancel``)."""
        self.active = False
        if not self.waiter.done():
            self.waiter.cancel()
        if not self.fired:
            return False
        self.fired = False
        return self.task.uncancel() == 0


def health_route(server: A2AServer, path: str = "/healthz") -> Route:
    """A readiness route for a Starlette or FastAPI app's routes: answers ``GET path`` with
    200 or 503 and the JSON of `A2AServer.check_health`."""

    async def health(request: Request) -> Response:
        health = await server.check_health()
        return Response(health.body(), status_code=health.status, headers=dict(health.headers))

    return Route(path, health, methods=["GET"])
