"""``run(server)``: one A2A server as a whole process under uvicorn (needs ``uvicorn``).

What ``a2aserve serve`` and the examples run: the agent at the root, ``/healthz`` (the
process answers) and ``/readyz`` (`A2AServer.check_health`) beside it, uvicorn on h11 with
the limits of `a2a_starlette.limits`, the A2A server shut down first on SIGTERM
(`UvicornServer`), and companions (a gRPC server) started with it. ``ready`` is called once
the socket accepts connections, not before: a line printed from there is a promise a probe
can rely on. SIGTERM ends the process with exit code 0 once the shutdown is over; SIGINT
raises ``KeyboardInterrupt`` after it, as Python does.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from a2a_core.server import LIVENESS_PATH, READINESS_PATH, A2AServer
from a2a_starlette._app import A2AStarlette, health_route, put_base_url
from a2a_starlette._serve import UvicornServer

__all__ = ["LIVENESS_PATH", "READINESS_PATH", "run"]


def run(
    server: A2AServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    public_url: str | None = None,
    health: bool = True,
    log_level: str = "info",
    access_log: bool = False,
    ready: Callable[[], object] | None = None,
    companions: Sequence[AbstractAsyncContextManager[Any]] = (),
    asgi_middleware: Sequence[Callable[[ASGIApp], ASGIApp]] = (),
    on_shutdown: Sequence[Callable[[], object]] = (),
    sockets: Sequence[socket.socket] = (),
    **uvicorn_settings: Any,
) -> None:
    """Serve ``server`` at the root of ``host:port`` until SIGTERM or SIGINT.

    - ``public_url``: the URL clients use, for the card, when the server has no
      ``base_url`` (each request gets it, as middleware's ``put_base_url`` would).
    - ``health``: serve ``/healthz`` and ``/readyz`` beside the agent.
    - ``log_level``, ``access_log``: uvicorn's, and the level of the ``a2a_core`` loggers
      (the root logger gets a handler when it has none).
    - ``ready``: called once the server accepts connections.
    - ``companions``: async context managers entered once the A2A server runs and exited
      before it stops (a `a2a_grpc.GrpcServer`).
    - ``asgi_middleware``: ``app -> app`` wrappers, outermost first.
    - ``on_shutdown``: called last, once everything stopped (flush telemetry there).
    - ``sockets``: bound sockets to serve on instead of binding ``host:port`` (which then
      only name them): a caller that binds first can say "port in use" in its own words.
    - ``uvicorn_settings``: over `a2a_starlette.limits.UVICORN_SETTINGS` (``http=``...).
    """
    from a2a_starlette.limits import UVICORN_SETTINGS

    _configure_logging(log_level)
    server.warn_if_console_exposed(host)
    server.guard_loopback(host, public_url)
    app = build_app(server, public_url=public_url, health=health, companions=companions)
    for middleware in reversed(asgi_middleware):
        app = middleware(app)
    settings = {**UVICORN_SETTINGS, **uvicorn_settings}
    uvicorn = UvicornServer(
        app,
        server,
        on_shutdown=on_shutdown,
        on_ready=ready,
        host=host,
        port=port,
        log_level=log_level.lower(),
        access_log=access_log,
        **settings,
    )
    with _sigterm_ends_cleanly():
        uvicorn.run(sockets=list(sockets) or None)


def build_app(
    server: A2AServer,
    *,
    public_url: str | None = None,
    health: bool = True,
    companions: Sequence[AbstractAsyncContextManager[Any]] = (),
) -> ASGIApp:
    """The ASGI app `run` serves: the agent at the root, the probes beside it, the server
    and its companions run by the app's lifespan."""
    puts_url = public_url is not None and not server.protocol.base_url
    # With the public URL put on every request, the card always has one: the adapter is
    # told its requests bring one (no start-up warning); the Host header is never read,
    # since a URL put by middleware wins over one derived from it.
    a2a = A2AStarlette(server, trust_host_header=puts_url)
    routes: list[BaseRoute] = []
    if health:
        routes += [Route(LIVENESS_PATH, _alive, methods=["GET"])]
        routes += [health_route(server, READINESS_PATH)]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with a2a.lifespan(), contextlib.AsyncExitStack() as stack:
            for companion in companions:
                await stack.enter_async_context(companion)
            yield

    app: ASGIApp = Starlette(routes=[*routes, *a2a.routes("")], lifespan=lifespan)
    if puts_url:
        assert public_url is not None
        app = _PublicUrl(app, public_url.rstrip("/"))
    return app


async def _alive(request: Request) -> Response:
    return JSONResponse({"status": "ok"}, headers={"cache-control": "no-store"})


class _PublicUrl:
    """Puts the public URL on every request (for a server built without ``base_url``)."""

    def __init__(self, app: ASGIApp, url: str) -> None:
        self.app = app
        self.url = url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            put_base_url(scope, self.url)
        await self.app(scope, receive, send)


def _configure_logging(level: str) -> None:
    """The level of our loggers, and a handler on the root logger when it has none (what
    a process would print otherwise: nothing below WARNING, with no format)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(format="%(levelname)s:     %(name)s: %(message)s")
    for name in ("a2a_core", "a2a_starlette", "a2a_grpc", "a2a_sql", "a2aserve_redis"):
        logging.getLogger(name).setLevel(level.upper())


@contextlib.contextmanager
def _sigterm_ends_cleanly() -> Iterator[None]:
    """uvicorn raises a signal it handled again once it has shut down, so that the
    previous handler acts on it; SIGTERM's is to die by the signal (exit status 143).
    Here the previous handler does nothing: the shutdown is over, and the process ends
    with exit code 0, as a supervisor expects of a clean stop."""
    if threading.current_thread() is not threading.main_thread():
        yield  # uvicorn does not handle signals outside the main thread either
        return
    previous = signal.signal(signal.SIGTERM, _stopped)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stopped(signum: int, frame: Any) -> None:
    """SIGTERM raised again by uvicorn after its shutdown: nothing left to do."""
