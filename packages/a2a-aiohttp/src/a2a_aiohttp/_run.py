"""``run(server)``: one A2A server as a whole process under aiohttp.

What ``a2aserve serve --adapter aiohttp`` and the examples run: the agent at the root,
``/healthz`` (the process answers) and ``/readyz`` (`A2AServer.check_health`) beside it,
the limits of `HANDLER_ARGS`, the A2A server shut down on SIGTERM before open requests are
waited for (``add_routes`` does that), and companions (a gRPC server) started with it.
``ready`` is called once the site accepts connections. SIGTERM and SIGINT end the process
with exit code 0 once the shutdown is over (``web.run_app``'s way).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any

from aiohttp import web

from a2a_aiohttp._app import add_routes, health_handler, put_base_url
from a2a_aiohttp._limits import HANDLER_ARGS
from a2a_core.server import LIVENESS_PATH, READINESS_PATH, A2AServer

__all__ = ["LIVENESS_PATH", "READINESS_PATH", "build_app", "run"]


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
    middlewares: Sequence[Any] = (),
    on_shutdown: Sequence[Callable[[], object]] = (),
    shutdown_timeout: float | None = None,
    sockets: Sequence[socket.socket] = (),
) -> None:
    """Serve ``server`` at the root of ``host:port`` until SIGTERM or SIGINT; the options
    are `a2a_starlette.run`'s (``middlewares``: aiohttp middlewares, as
    ``web.Application`` takes them). ``shutdown_timeout``: how long open requests may take
    once the A2A server has shut down (default: its shutdown grace plus two seconds).
    ``sockets``: bound sockets to serve on instead of binding ``host:port``."""
    _configure_logging(log_level)
    server.warn_if_console_exposed(host)
    server.guard_loopback(host, public_url)
    app = build_app(
        server,
        public_url=public_url,
        health=health,
        companions=companions,
        middlewares=middlewares,
        on_shutdown=on_shutdown,
    )
    if shutdown_timeout is None:
        shutdown_timeout = server.guard_options.shutdown_grace + 2

    def started(*_: Any) -> None:
        # ``run_app`` prints its banner once every site listens: the moment for `ready`.
        if ready is not None:
            ready()

    web.run_app(
        app,
        # Given sockets replace host and port: aiohttp would bind those as well.
        host=None if sockets else host,
        port=None if sockets else port,
        sock=list(sockets) or None,
        print=started,
        access_log=logging.getLogger("aiohttp.access") if access_log else None,
        shutdown_timeout=shutdown_timeout,
    )


def build_app(
    server: A2AServer,
    *,
    public_url: str | None = None,
    health: bool = True,
    companions: Sequence[AbstractAsyncContextManager[Any]] = (),
    middlewares: Sequence[Any] = (),
    on_shutdown: Sequence[Callable[[], object]] = (),
) -> web.Application:
    """The application `run` serves: the probes, the agent at the root, the server and its
    companions started and stopped with it."""
    middleware_list = list(middlewares)
    puts_url = public_url is not None and not server.protocol.base_url
    if puts_url:
        assert public_url is not None
        middleware_list.insert(0, _public_url(public_url.rstrip("/")))
    app = web.Application(middlewares=middleware_list, handler_args=HANDLER_ARGS)
    if health:  # before the agent's catch-all route
        app.router.add_get(LIVENESS_PATH, _alive)
        app.router.add_get(READINESS_PATH, health_handler(server))
    # Starts the server with the app and shuts it down first. With the public URL put on
    # every request, the routes are told their requests bring one (no start-up warning;
    # the Host header is never read: a URL put by middleware wins over a derived one).
    add_routes(app, server, trust_host_header=puts_url)
    if companions:
        # After the server started (cleanup contexts run in order), stopped before it.
        async def run_companions(app: web.Application) -> AsyncIterator[None]:
            async with AsyncExitStack() as stack:
                for companion in companions:
                    await stack.enter_async_context(companion)
                yield

        app.cleanup_ctx.append(run_companions)
    for hook in on_shutdown:  # after the server stopped (cleanup runs in order)

        async def call(app: web.Application, hook: Callable[[], object] = hook) -> None:
            hook()

        app.on_cleanup.append(call)
    return app


async def _alive(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"}, headers={"cache-control": "no-store"})


def _public_url(url: str) -> Any:
    @web.middleware
    async def public_url(request: web.Request, handler: Any) -> web.StreamResponse:
        put_base_url(request, url)
        response: web.StreamResponse = await handler(request)
        return response

    return public_url


def _configure_logging(level: str) -> None:
    """The level of our loggers and aiohttp's, and a handler on the root logger when it
    has none (aiohttp, unlike uvicorn, configures no logging of its own)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(format="%(levelname)s:     %(name)s: %(message)s")
    for name in ("a2a_core", "a2a_aiohttp", "a2a_grpc", "a2a_sql", "a2aserve_redis", "aiohttp"):
        logging.getLogger(name).setLevel(level.upper())
