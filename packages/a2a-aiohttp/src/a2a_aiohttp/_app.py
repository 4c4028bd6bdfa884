"""The aiohttp adapter: ``web.Request`` <-> the core's HTTP values."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from aiohttp import HttpVersion11, web
from aiohttp.http_exceptions import HttpProcessingError

from a2a_core.http import Headers, HttpRequest, SseResponse, content_length_exceeds
from a2a_core.server import A2AServer

__all__ = [
    "IDENTITY_KEY",
    "a2a_subapp",
    "add_routes",
    "put_base_url",
    "put_identity",
    "put_metadata",
]


def _request_key(name: str) -> Any:
    # aiohttp 3.14+ warns on plain string request keys and offers typed ``web.RequestKey``;
    # older releases have no such class and take the plain name.
    request_key = getattr(web, "RequestKey", None)
    return name if request_key is None else request_key(name, object)


#: Request key holding the authenticated caller (set it from your auth middleware).
IDENTITY_KEY: Any = _request_key("a2a.identity")
_BASE_URL_KEY: Any = _request_key("a2a.base_url")
_METADATA_KEY: Any = _request_key("a2a.metadata")
_TAIL = "a2a_tail"


def put_base_url(request: web.Request, base_url: str) -> None:
    """Set the public URL of the A2A mount for this request (call from middleware)."""
    request[_BASE_URL_KEY] = base_url


def put_metadata(request: web.Request, metadata: Mapping[str, Any]) -> None:
    """Add per-request metadata, merged over the server's and under the call's own."""
    request.setdefault(_METADATA_KEY, {}).update(metadata)


def put_identity(request: web.Request, identity: Any) -> None:
    """Set the authenticated caller for this request."""
    request[IDENTITY_KEY] = identity


class _Handler:
    """Serves one route; ``handle`` is the route's handler (a bound coroutine method, so
    that an idle stream holds no wrapper coroutine between aiohttp and the stream)."""

    def __init__(self, server: A2AServer, trust_host_header: bool, tail: str | None) -> None:
        self.server = server
        self.trust_host_header = trust_host_header
        self.tail = tail  # the fixed routes' own; None: the catch-all's match

    async def handle(self, request: web.Request) -> web.StreamResponse:
        # The request is built in a coroutine of its own, so that a stream (which can live
        # for hours) keeps no copy of the headers and body, nor the locals that built it.
        response = await self.server.handle(await self._request(request))
        if isinstance(response, SseResponse):
            return await _stream(request, response)
        # All headers at once (pairs: repeated names kept), cheaper than one add() each.
        return web.Response(status=response.status, body=response.body, headers=response.headers)

    async def expect(self, request: web.Request) -> None:
        """``Expect: 100-continue``: invite only a body that will be read. aiohttp's own
        handler invites every body, also one refused unread for its ``Content-Length``;
        without the invitation the client gets the refusal instead, and sends nothing."""
        if request.version != HttpVersion11:
            return
        expect = request.headers.get("Expect", "")
        if expect.lower() != "100-continue":
            raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
        if not content_length_exceeds(Headers(request.headers.items()), self.server.max_body_size):
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0  # not part of the response (as aiohttp does)

    async def _request(self, request: web.Request) -> HttpRequest:
        tail = self.tail
        if tail is None:
            tail = request.match_info.get(_TAIL, "")
        raw = request.raw_path.split("?", 1)[0]
        # The mount prefix is the decoded path minus the decoded tail; strip it from the raw
        # path so that escapes inside ids survive.
        prefix = request.path[: len(request.path) - len(tail)].rstrip("/")
        path = raw[len(prefix) :] if prefix and raw.startswith(prefix) else raw
        # The put_* overrides live in the request's own mapping, whose get() pays for a
        # KeyError per missing key: look only when something was put there.
        overrides = len(request) > 0
        base_url = request.get(_BASE_URL_KEY) if overrides else None
        if base_url is None and self.trust_host_header:
            base_url = f"{request.scheme}://{request.host}{prefix}"
        headers = Headers(request.headers.items())
        limit = self.server.max_body_size
        # No body (GET, HEAD): nothing to await (the card, GetTask, subscribe...). A body whose
        # Content-Length is over the limit is refused before any of it is read (the core
        # answers by the header).
        body = (
            await _read_body(request, limit + 1)
            if request.can_read_body and not content_length_exceeds(headers, limit)
            else b""
        )
        return HttpRequest(
            method=request.method,
            path=path or "/",
            query=request.rel_url.raw_query_string,  # query_string is half-decoded
            headers=headers,
            body=body,
            identity=request.get(IDENTITY_KEY) if overrides else None,
            base_url=base_url,
            metadata=(request.get(_METADATA_KEY) if overrides else None) or {},
            peer_certificate=_peer_certificate(request) if request.secure else None,
            peer=request.remote,
        )


def _peer_certificate(request: web.Request) -> bytes | None:
    """The client certificate of a TLS connection, DER (``None``: none presented)."""
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    if ssl_object is None:
        return None
    der: bytes | None = ssl_object.getpeercert(binary_form=True)
    return der


async def _read_body(request: web.Request, limit: int) -> bytes:
    """Read at most ``limit`` bytes of the body (the core answers an oversized body). What the
    client still sends, aiohttp drops after the reply for up to its ``lingering_time``
    (10 s): a body that ends by then leaves the connection open, else aiohttp closes it. A
    client that hangs up before its body ended gets a 400 it will not read."""
    body = bytearray()
    try:
        while len(body) < limit:
            chunk = await request.content.read(limit - len(body))
            if not chunk:
                break
            body += chunk
    except ConnectionResetError:
        # The client hung up mid-body. An HTTP error is what aiohttp answers without a log
        # line (anything else is a traceback at ERROR: a client could flood the logs).
        raise web.HTTPBadRequest(text="The request body did not arrive whole") from None
    return bytes(body)


async def _stream(request: web.Request, response: SseResponse) -> web.StreamResponse:
    """Write frames as they come; a client that goes away only closes the frames."""
    out = web.StreamResponse(status=response.status)
    for name, value in response.headers:
        out.headers.add(name, value)
    frames = response.frames
    try:
        await out.prepare(request)
        async for frame in frames:
            await out.write(frame)
        with contextlib.suppress(ConnectionError):
            await out.write_eof()
    except ConnectionError:
        pass  # the client disconnected; the task carries on
    finally:
        await response.aclose()
    return out


class _OneLineForBadRequests(logging.Filter):
    """aiohttp logs a request it cannot parse (a header too long, a NUL byte) with a full
    traceback at ERROR, so a client could fill the logs with them: one line at INFO says
    the same (the client still gets aiohttp's 400 and the connection is closed)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            said = record.getMessage()  # "Error handling request from <peer>"
            record.msg = "%s: %d %s"
            # aiohttp's message quotes the offending bytes on lines of their own: its first
            # line says what was wrong, and what the client sent stays out of the log (no
            # forged lines, no escape sequences), bounded.
            first = str(exc.message).split("\n", 1)[0].rstrip(": ")[:200]
            record.args = (said, exc.code, "".join(_printable(c) for c in first))
            record.exc_info = None
            record.exc_text = None
            if record.levelno > logging.INFO:  # lowered, never raised (aiohttp's DEBUG)
                record.levelno, record.levelname = logging.INFO, "INFO"
        return True


def _printable(char: str) -> str:
    return char if char.isprintable() else repr(char)[1:-1]


_BAD_REQUEST_FILTER = _OneLineForBadRequests()


def _cleanup_ctx(server: A2AServer, trust_host_header: bool) -> Any:
    async def run(app: web.Application) -> AsyncIterator[None]:
        async with server:
            # On start, a server whose card cannot get its URLs is reported.
            server.check_base_url(from_requests=trust_host_header)
            yield

    return run


def _on_shutdown(server: A2AServer) -> Any:
    # aiohttp's on_shutdown runs after the listening sockets closed and before it waits for
    # open requests: the moment to refuse new calls, end the streams with a final frame and
    # give the agents their grace, so that those requests finish (see A2AServer.shutdown).
    async def shutdown(app: web.Application) -> None:
        await server.shutdown()

    return shutdown


def add_routes(
    app: web.Application,
    server: A2AServer,
    *,
    prefix: str = "",
    trust_host_header: bool = False,
) -> None:
    """Serve ``server`` under ``prefix`` of ``app`` (and run it with the app)."""
    # Bound coroutine methods: aiohttp wants a coroutine function (a callable instance is
    # deprecated: "Bare functions are deprecated", a DeprecationWarning when the route is
    # added).
    catch_all = _Handler(server, trust_host_header, None)
    # The busiest paths (JSON-RPC, the card) as plain routes: aiohttp finds those by a dict
    # lookup, where the catch-all below costs a regular expression match per request.
    protocol = server.protocol
    for fixed in dict.fromkeys(p for p in (protocol.jsonrpc_path, protocol.card_path) if p):
        handler = _Handler(server, trust_host_header, fixed[1:])
        path = prefix.rstrip("/") + fixed
        app.router.add_route("*", path, handler.handle, expect_handler=handler.expect)
    path = prefix.rstrip("/") + "/{" + _TAIL + ":.*}"
    app.router.add_route("*", path, catch_all.handle, expect_handler=catch_all.expect)
    # The mount point itself ("/a2a" without the slash), for clients that post JSON-RPC there
    # rather than to the URL the card publishes ("/a2a/"). As a sub-application's empty
    # path, it becomes the bare prefix.
    path = prefix.rstrip("/")
    app.router.add_route("*", path, catch_all.handle, expect_handler=catch_all.expect)
    app.cleanup_ctx.append(_cleanup_ctx(server, trust_host_header))
    app.on_shutdown.append(_on_shutdown(server))
    # aiohttp's request handlers log to this logger unless given another (AppRunner(logger=)).
    logging.getLogger("aiohttp.server").addFilter(_BAD_REQUEST_FILTER)


def a2a_subapp(server: A2AServer, *, trust_host_header: bool = False) -> web.Application:
    """A sub-application serving ``server``, for ``app.add_subapp("/a2a", ...)``."""
    app = web.Application()
    add_routes(app, server, trust_host_header=trust_host_header)
    return app


def health_handler(server: A2AServer) -> Any:
    """A readiness handler: ``app.router.add_get("/healthz", health_handler(server))``
    answers 200 or 503 with the JSON of `A2AServer.check_health`."""

    async def health(request: web.Request) -> web.Response:
        health = await server.check_health()
        return web.Response(body=health.body(), status=health.status, headers=health.headers)

    return health
