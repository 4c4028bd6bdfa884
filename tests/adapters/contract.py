"""The harness of the adapter contract suite: real servers on 127.0.0.1, one client.

A :class:`Harness` knows one *deployment*: an adapter (Starlette/ASGI or aiohttp) and how
the A2A app is placed in the framework's application (at the root, or under ``/a2a`` by each
framework's own mounting mechanism). ``async with harness.serve(server) as live:`` builds
that application around an :class:`A2AServer`, serves it on a socket bound to 127.0.0.1
beforehand (so the base URL is known before the server is built), and yields a :class:`Live`
with an ``httpx.AsyncClient``. On exit it stops everything and checks that nothing was left
behind: the A2A server is stopped, the port refuses connections, no asyncio task remains.

Middleware is described once, framework-neutrally (:class:`Overrides` from the request
headers), and installed the way each framework does it, calling that adapter's own
``put_base_url`` / ``put_metadata`` / ``put_identity``. ``native_user`` is the framework's
own authentication instead: Starlette's ``AuthenticationMiddleware`` (``request.user``),
aiohttp's ``IDENTITY_KEY`` request key.

Tests written against :class:`Live` run unchanged on every deployment.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from a2a_core.server import A2AServer
from a2a_core.sse import parse_frames
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

#: Deployments at the root of the server: the suite's main parametrization.
ROOT_DEPLOYMENTS = ("starlette", "aiohttp")
#: Deployments under ``/a2a``, one per mounting mechanism of each framework.
MOUNTED_DEPLOYMENTS = (
    "starlette-mount",  # Starlette(routes=[Mount("/a2a", app=...)], lifespan=...)
    "starlette-routes",  # Starlette(routes=A2AStarlette(...).routes("/a2a"), lifespan=...)
    "fastapi-mount",  # FastAPI(lifespan=...).mount("/a2a", ...)
    "fastapi-routes",  # FastAPI(lifespan=...).router.routes.extend(A2AStarlette(...).routes("/a2a"))
    "fastapi-mount-helper",  # A2AStarlette(...).mount(FastAPI(lifespan=its_own), "/a2a")
    "aiohttp-subapp",  # app.add_subapp("/a2a", a2a_subapp(server))
    "aiohttp-add_routes",  # add_routes(app, server, prefix="/a2a")
)
PREFIX = "/a2a"
# Every URL is plain http on 127.0.0.1: no client needs CA certificates (loading them for
# each test's client costs more than serving the test).
_NO_TLS = False


@dataclass
class Overrides:
    """What an upstream middleware sets for one request (``None``: nothing)."""

    base_url: str | None = None
    metadata: Mapping[str, Any] | None = None
    identity: Any = None


#: A framework-neutral middleware: request headers (lower-case names) -> overrides.
Middleware = Callable[[Mapping[str, str]], Overrides]
#: Framework-native authentication: request headers -> user name, or ``None`` (anonymous).
NativeUser = Callable[[Mapping[str, str]], str | None]


def identity_name(identity: Any) -> Any:
    """The user name of an identity, whichever way the adapter delivered it."""
    return getattr(identity, "username", identity)  # Starlette's SimpleUser has .username


def make_card(
    *, streaming: bool = True, push: bool = False, extended: bool = False, extensions: Any = None
) -> AgentCard:
    """A small card with the given capabilities."""
    return AgentCard(
        name="Contract agent",
        description="An agent for the adapter contract suite",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(
            streaming=streaming,
            push_notifications=push,
            extended_agent_card=extended or None,
            extensions=extensions or [],
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="s", name="S", description="skill", tags=["t"])],
    )


def urls_by_binding(card: Mapping[str, Any]) -> dict[str, set[str]]:
    """The URLs of a (v1.0) card's ``supportedInterfaces``, by ``protocolBinding``."""
    urls: dict[str, set[str]] = {}
    for interface in card["supportedInterfaces"]:
        urls.setdefault(interface["protocolBinding"], set()).add(interface["url"])
    return urls


def message(
    text: str = "hi", *, task_id: str = "", context_id: str = "", mid: str = ""
) -> dict[str, Any]:
    """A v1.0 user message as JSON; a messageId of its own unless ``mid`` is given (the same
    message sent again is answered with what it started: idempotent sends)."""
    msg: dict[str, Any] = {
        "messageId": mid or uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    return msg


def send_params(text: str = "hi", *, configuration: Any = None, **kw: Any) -> dict[str, Any]:
    """v1.0 ``SendMessage`` params."""
    params: dict[str, Any] = {"message": message(text, **kw)}
    if configuration is not None:
        params["configuration"] = configuration
    return params


def message_v03(text: str = "hi", *, task_id: str = "", mid: str = "") -> dict[str, Any]:
    """A v0.3 JSON-RPC user message; a messageId of its own unless ``mid`` is given."""
    msg: dict[str, Any] = {
        "kind": "message",
        "messageId": mid or uuid.uuid4().hex,
        "role": "user",
        "parts": [{"kind": "text", "text": text}],
    }
    if task_id:
        msg["taskId"] = task_id
    return msg


def rpc_body(method: str, params: Any = None, id: Any = 1) -> bytes:
    """A JSON-RPC request body."""
    doc: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        doc["params"] = params
    return json.dumps(doc).encode()


@dataclass
class Frame:
    """One SSE frame as it came over the wire."""

    raw: bytes
    id: str | None
    data: Any  # parsed JSON; None for a comment
    comment: str | None = None  # the text of a comment frame (``: keep-alive``)


def parse_frame(chunk: bytes) -> Frame:
    """One frame (without its blank line): a comment, or ``id``/``data`` fields."""
    raw = chunk + b"\n\n"
    if chunk.startswith(b":"):
        return Frame(raw, None, None, chunk[1:].decode().strip())
    parsed = parse_frames(raw)
    assert len(parsed) == 1, chunk
    data = json.loads(parsed[0].data) if parsed[0].data is not None else None
    return Frame(raw, parsed[0].id, data)


def split_frames(raw: bytes) -> list[Frame]:
    """Split an SSE body into frames, comments included."""
    return [parse_frame(chunk) for chunk in raw.split(b"\n\n") if chunk.strip()]


@dataclass
class Stream:
    """A whole SSE response: status, headers, raw bytes, and its frames."""

    status: int
    headers: httpx.Headers
    raw: bytes
    all_frames: list[Frame] = field(default_factory=list)

    @property
    def frames(self) -> list[Frame]:
        """The data frames (comments left out)."""
        return [f for f in self.all_frames if f.comment is None]

    @property
    def data(self) -> list[Any]:
        """The parsed ``data`` of every data frame, in order."""
        return [f.data for f in self.frames]


class OpenStream:
    """A streamed response read frame by frame, as it arrives."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._chunks = response.aiter_raw()
        self._buffer = b""
        self.raw = b""

    @property
    def status(self) -> int:
        return self.response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.response.headers

    async def next(self) -> Frame | None:
        """The next frame (a comment too), or ``None`` at the end of the stream."""
        while b"\n\n" not in self._buffer:
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                assert not self._buffer.strip(), self._buffer  # no half frame at the end
                return None
            self._buffer += chunk
            self.raw += chunk
        frame, self._buffer = self._buffer.split(b"\n\n", 1)
        return parse_frame(frame)

    async def next_data(self) -> Frame:
        """The next data frame (comments skipped); the stream must not end before it."""
        while True:
            frame = await self.next()
            assert frame is not None, "the stream ended"
            if frame.comment is None:
                return frame

    async def rest(self) -> list[Frame]:
        """Every remaining data frame, to the end of the stream."""
        out = []
        while (frame := await self.next()) is not None:
            if frame.comment is None:
                out.append(frame)
        return out


class Live:
    """A running deployment: its public base URL and a client for it."""

    def __init__(
        self,
        base_url: str,
        client: httpx.AsyncClient,
        server: A2AServer,
        errors: list[logging.LogRecord],
    ) -> None:
        self.base_url = base_url
        self.client = client
        self.server = server
        self.errors = errors
        """Error records logged so far by the framework, the adapters or the core."""

    def url(self, path: str = "") -> str:
        """The absolute URL of ``path`` below the mount point."""
        return self.base_url + path

    @staticmethod
    def _headers(version: str | None, headers: Mapping[str, str] | None) -> dict[str, str]:
        out = {"content-type": "application/json"}
        if version is not None:
            out["a2a-version"] = version
        out.update(headers or {})
        return out

    async def post_rpc(
        self,
        method: str,
        params: Any = None,
        *,
        id: Any = 1,
        version: str | None = "1.0",
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """POST one JSON-RPC request to the mount root with its trailing slash (the URL the
        card publishes for JSON-RPC: a plain Starlette ``Mount`` redirects the bare prefix)."""
        return await self.client.post(
            self.url("/"),
            content=rpc_body(method, params, id),
            headers=self._headers(version, headers),
        )

    async def rpc(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        """A JSON-RPC call: the parsed response (HTTP 200, JSON, the same id)."""
        response = await self.post_rpc(method, params, **kw)
        assert response.status_code == 200, (response.status_code, response.text)
        assert response.headers["content-type"].startswith("application/json")
        doc: dict[str, Any] = response.json()
        assert doc["jsonrpc"] == "2.0"
        return doc

    async def result(self, method: str, params: Any = None, **kw: Any) -> Any:
        """A JSON-RPC call that must succeed: its result."""
        doc = await self.rpc(method, params, **kw)
        assert "error" not in doc, doc
        return doc["result"]

    async def error(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        """A JSON-RPC call that must fail: its error object."""
        doc = await self.rpc(method, params, **kw)
        assert "error" in doc and "result" not in doc, doc
        error: dict[str, Any] = doc["error"]
        return error

    async def rest(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        version: str | None = "1.0",
        headers: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        """One REST request to ``path`` below the mount point."""
        content = None if body is None else json.dumps(body).encode()
        return await self.client.request(
            method,
            self.url(path),
            content=content,
            headers=self._headers(version, headers),
            params=params,
        )

    async def stream(
        self,
        method: str,
        path: str,
        body: bytes | None,
        *,
        version: str | None = "1.0",
        headers: Mapping[str, str] | None = None,
        timeout: float = 10,
    ) -> Stream:
        """Read a whole streamed response (to the server's end of the stream)."""
        raw = b""
        with anyio.fail_after(timeout):
            async with self.client.stream(
                method, self.url(path), content=body, headers=self._headers(version, headers)
            ) as response:
                async for chunk in response.aiter_raw():
                    raw += chunk
        return Stream(response.status_code, response.headers, raw, split_frames(raw))

    @contextlib.asynccontextmanager
    async def open_stream(
        self,
        method: str,
        path: str,
        body: bytes | None,
        *,
        version: str | None = "1.0",
        headers: Mapping[str, str] | None = None,
    ) -> AsyncIterator[OpenStream]:
        """Open a streamed response to read it frame by frame; leaving the block closes the
        connection (a client that goes away) unless the stream was read to its end."""
        async with self.client.stream(
            method, self.url(path), content=body, headers=self._headers(version, headers)
        ) as response:
            yield OpenStream(response)

    def open_rpc_stream(
        self, method: str, params: Any = None, *, id: Any = 1, **kw: Any
    ) -> contextlib.AbstractAsyncContextManager[OpenStream]:
        """:meth:`open_stream` for a streaming JSON-RPC call."""
        return self.open_stream("POST", "/", rpc_body(method, params, id), **kw)

    async def stream_rpc(
        self, method: str, params: Any = None, *, id: Any = 1, **kw: Any
    ) -> Stream:
        """A streaming JSON-RPC call, read to the end."""
        return await self.stream("POST", "/", rpc_body(method, params, id), **kw)

    async def wait_for_state(
        self,
        task_id: str,
        state: str,
        *,
        version: str = "1.0",
        timeout: float = 10,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Poll GetTask until the task reaches ``state``; return the task (``headers``: as
        the caller that owns it)."""
        with anyio.fail_after(timeout):
            while True:
                task: dict[str, Any] = await self.result(
                    "GetTask", {"id": task_id}, headers=headers
                )
                if task["status"]["state"] == state:
                    return task
                await anyio.sleep(0.01)


@contextlib.asynccontextmanager
async def _app_state_lifespan(app: Any) -> AsyncIterator[dict[str, Any]]:
    """An application's own lifespan, yielding its state (as FastAPI apps do)."""
    yield {"app_lifespan": "ran"}


class Harness:
    """One deployment and a socket bound for it on 127.0.0.1 (see the module docstring)."""

    def __init__(self, deployment: str) -> None:
        self.deployment = deployment
        self.adapter = "aiohttp" if deployment.startswith("aiohttp") else "starlette"
        self.prefix = "" if deployment in ROOT_DEPLOYMENTS else PREFIX
        # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY only on sockets that say so, and
        # without it every response written in two parts waits for a delayed ACK (~40 ms).
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.base_url = self.origin + self.prefix
        self._used = False
        self._health_path: str | None = None

    def close(self) -> None:
        """Release the socket (the server closes it too when it stops)."""
        self.sock.close()

    @contextlib.asynccontextmanager
    async def serve(
        self,
        server: A2AServer,
        *,
        middleware: Middleware | None = None,
        native_user: NativeUser | None = None,
        trust_host_header: bool = False,
        expect_errors: bool = False,
        timeout: float = 30,
        health_path: str | None = None,
    ) -> AsyncIterator[Live]:
        """Serve ``server`` in this deployment; yield a :class:`Live`; stop and check.

        ``health_path``: also serve the adapter's readiness route there (root deployments)."""
        assert not self._used, "one server per harness"
        self._used = True
        self._health_path = health_path
        before = set(asyncio.all_tasks())
        if self.adapter == "starlette":
            runner = self._serve_starlette(server, middleware, native_user, trust_host_header)
        else:
            runner = self._serve_aiohttp(server, middleware, native_user, trust_host_header)
        errors = _ErrorLog()
        logging.getLogger().addHandler(errors)
        try:
            async with runner:
                assert server.running
                with anyio.fail_after(timeout):
                    async with httpx.AsyncClient(timeout=10, verify=_NO_TLS) as client:
                        yield Live(self.base_url, client, server, errors.records)
        finally:
            logging.getLogger().removeHandler(errors)
        # No error logged by the framework, the adapter or the core, unless the test expected
        # (and checked) one: an exception escaping the adapter is logged by the framework.
        if not expect_errors:
            assert not errors.records, [r.getMessage() for r in errors.records]
        # Nothing left behind: the server stopped, the port is closed, no task runs on.
        assert not server.running
        with socket.socket() as probe, contextlib.suppress(ConnectionRefusedError):
            probe.connect(("127.0.0.1", self.port))
            raise AssertionError(f"port {self.port} still accepts connections")
        for _ in range(5):
            await asyncio.sleep(0)
        leaked = [t for t in asyncio.all_tasks() - before if not t.done()]
        assert not leaked, leaked

    # --- Starlette / ASGI -----------------------------------------------------------------

    def _starlette_app(
        self,
        server: A2AServer,
        middleware: Middleware | None,
        native_user: NativeUser | None,
        trust_host_header: bool,
    ) -> Any:
        from fastapi import FastAPI
        from starlette.applications import Starlette
        from starlette.middleware import Middleware as StarletteMiddleware
        from starlette.middleware.authentication import AuthenticationMiddleware
        from starlette.routing import Mount

        from a2a_starlette import A2AStarlette

        a2a = A2AStarlette(server, trust_host_header=trust_host_header)
        stack: list[StarletteMiddleware] = []
        if native_user is not None:
            stack.append(
                StarletteMiddleware(AuthenticationMiddleware, backend=_HeaderAuth(native_user))
            )
        if middleware is not None:
            stack.append(StarletteMiddleware(_OverridesASGI, overrides=middleware))

        if self.deployment == "starlette" and self._health_path is not None:
            from starlette.applications import Starlette as App

            from a2a_starlette import health_route

            routes = [health_route(server, self._health_path), *a2a.routes()]
            return App(routes=routes, middleware=stack, lifespan=a2a.lifespan)
        if self.deployment == "starlette":
            app: Any = a2a  # the plain ASGI app; uvicorn runs its lifespan
            for item in reversed(stack):
                app = item.cls(app, *item.args, **item.kwargs)
            return app
        if self.deployment == "starlette-mount":
            return Starlette(
                routes=[Mount(PREFIX, app=a2a)], middleware=stack, lifespan=a2a.lifespan
            )
        if self.deployment == "starlette-routes":
            return Starlette(routes=a2a.routes(PREFIX), middleware=stack, lifespan=a2a.lifespan)
        # FastAPI applications usually write middleware as ``@app.middleware("http")``
        # (Starlette's BaseHTTPMiddleware, which relays the body and the stream): use that.
        helper = self.deployment == "fastapi-mount-helper"
        # With the helper, the app keeps a lifespan of its own, which the helper composes.
        fastapi = FastAPI(
            lifespan=_app_state_lifespan if helper else a2a.lifespan,
            middleware=stack[:1] if native_user else [],
        )
        if middleware is not None:
            from a2a_starlette import put_base_url, put_identity, put_metadata

            @fastapi.middleware("http")
            async def overrides(request: Any, call_next: Any) -> Any:
                found = middleware(_lower(request.headers.items()))
                if found.base_url is not None:
                    put_base_url(request, found.base_url)
                if found.metadata is not None:
                    put_metadata(request, found.metadata)
                if found.identity is not None:
                    put_identity(request, found.identity)
                return await call_next(request)

        if self.deployment == "fastapi-mount":
            fastapi.mount(PREFIX, a2a)
        elif helper:
            a2a.mount(fastapi, PREFIX)
        else:
            assert self.deployment == "fastapi-routes"
            fastapi.router.routes.extend(a2a.routes(PREFIX))
        return fastapi

    @contextlib.asynccontextmanager
    async def _serve_starlette(
        self,
        server: A2AServer,
        middleware: Middleware | None,
        native_user: NativeUser | None,
        trust_host_header: bool,
    ) -> AsyncIterator[None]:
        import uvicorn

        app = self._starlette_app(server, middleware, native_user, trust_host_header)
        config = uvicorn.Config(
            app,
            lifespan="on",
            ws="none",
            log_config=None,
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=5,
        )
        uv = _uvicorn_server_class()(config)
        task = asyncio.create_task(uv.serve(sockets=[self.sock]))
        try:
            with anyio.fail_after(10):
                while not uv.started:
                    assert not task.done(), "uvicorn did not start"
                    await asyncio.sleep(0.005)
            yield
        finally:
            uv.should_exit = True
            uv.stop.set()
            await task

    # --- aiohttp ----------------------------------------------------------------------------

    def _aiohttp_app(
        self,
        server: A2AServer,
        middleware: Middleware | None,
        native_user: NativeUser | None,
        trust_host_header: bool,
    ) -> Any:
        from aiohttp import web

        from a2a_aiohttp import IDENTITY_KEY, a2a_subapp, add_routes, put_base_url, put_identity
        from a2a_aiohttp import put_metadata as put_metadata

        stack: list[Any] = []
        if native_user is not None:

            @web.middleware
            async def authenticate(request: web.Request, handler: Any) -> web.StreamResponse:
                name = native_user(_lower(request.headers.items()))
                if name is not None:
                    request[IDENTITY_KEY] = name
                return await handler(request)

            stack.append(authenticate)
        if middleware is not None:

            @web.middleware
            async def overrides(request: web.Request, handler: Any) -> web.StreamResponse:
                found = middleware(_lower(request.headers.items()))
                if found.base_url is not None:
                    put_base_url(request, found.base_url)
                if found.metadata is not None:
                    put_metadata(request, found.metadata)
                if found.identity is not None:
                    put_identity(request, found.identity)
                return await handler(request)

            stack.append(overrides)

        if self.deployment == "aiohttp" and self._health_path is not None:
            from a2a_aiohttp import health_handler

            app = web.Application(middlewares=stack)
            app.router.add_get(self._health_path, health_handler(server))
            add_routes(app, server, trust_host_header=trust_host_header)
            return app
        if self.deployment == "aiohttp":
            app = a2a_subapp(server, trust_host_header=trust_host_header)
            app.middlewares.extend(stack)  # the sub-application itself, as the main app
            return app
        app = web.Application(middlewares=stack)
        if self.deployment == "aiohttp-subapp":
            app.add_subapp(PREFIX, a2a_subapp(server, trust_host_header=trust_host_header))
        else:
            assert self.deployment == "aiohttp-add_routes"
            add_routes(app, server, prefix=PREFIX, trust_host_header=trust_host_header)
        return app

    @contextlib.asynccontextmanager
    async def _serve_aiohttp(
        self,
        server: A2AServer,
        middleware: Middleware | None,
        native_user: NativeUser | None,
        trust_host_header: bool,
    ) -> AsyncIterator[None]:
        from aiohttp import web

        app = self._aiohttp_app(server, middleware, native_user, trust_host_header)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=5)
        await runner.setup()
        try:
            site = web.SockSite(runner, self.sock)
            await site.start()
            yield
        finally:
            await runner.cleanup()


def _uvicorn_server_class() -> Any:
    import uvicorn

    class Uvicorn(uvicorn.Server):
        """uvicorn's server, told to stop by an event rather than its 0.1 s polling loop
        (which would add that much to every test)."""

        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.stop = asyncio.Event()

        async def main_loop(self) -> None:
            await self.on_tick(0)  # sets the default headers (date, server)
            await self.stop.wait()

    return Uvicorn


class _ErrorLog(logging.Handler):
    """Collects the error records of the servers under test (framework, adapters, core)."""

    SOURCES = ("uvicorn", "aiohttp", "starlette", "fastapi", "a2a_")

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(self.SOURCES):
            self.records.append(record)


def _lower(items: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in items}


class _OverridesASGI:
    """A pure ASGI middleware applying a neutral :data:`Middleware` via ``a2a_starlette``."""

    def __init__(self, app: Any, overrides: Middleware) -> None:
        self.app = app
        self.overrides = overrides

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            from a2a_starlette import put_base_url, put_identity, put_metadata

            found = self.overrides(_lower((k.decode(), v.decode()) for k, v in scope["headers"]))
            if found.base_url is not None:
                put_base_url(scope, found.base_url)
            if found.metadata is not None:
                put_metadata(scope, found.metadata)
            if found.identity is not None:
                put_identity(scope, found.identity)
        await self.app(scope, receive, send)


class _HeaderAuth:
    """A Starlette authentication backend naming the user from the request headers."""

    def __init__(self, native_user: NativeUser) -> None:
        self.native_user = native_user

    async def authenticate(self, conn: Any) -> Any:
        from starlette.authentication import AuthCredentials, SimpleUser

        name = self.native_user(_lower(conn.headers.items()))
        if name is None:
            return None
        return AuthCredentials(["authenticated"]), SimpleUser(name)
