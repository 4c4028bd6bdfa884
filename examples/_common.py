"""Shared command line of the examples: pick an adapter, a host, a port and a public URL,
optionally a Redis to share tasks with other replicas (``--redis URL``) or a database that
keeps them across restarts (``--sql URL``), a key to sign the agent card with
(``--signing-key PEM``, which also serves its JWKS), and OpenTelemetry traces and metrics
(``--otel``, configured from the ``OTEL_*`` environment variables: see ``_otel.py``), and
gRPC beside HTTP (``--grpc-port N``, which needs ``a2aserve-grpc``).

Every example ends with ``serve(server, args)``, which serves the agent at the root of the
chosen framework: a plain ASGI app under uvicorn for ``--adapter starlette``, an aiohttp
application for ``--adapter aiohttp``, each with the server limits of ``_limits.py``.
Middleware (for instance to authenticate callers) is passed per adapter, because each
framework has its own kind.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

ADAPTERS = ("starlette", "aiohttp")
#: Where ``--signing-key`` serves the JWK Set its signatures' ``jku`` names.
JWKS_PATH = "/.well-known/jwks.json"


def parse_args(
    description: str,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
    *,
    public_host: str | None = None,
) -> argparse.Namespace:
    """The examples' common options; ``public_host`` replaces HOST in the default public URL."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--adapter",
        choices=ADAPTERS,
        default="starlette",
        help="web framework (default: starlette)",
    )
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    parser.add_argument(
        "--public-url",
        help=f"URL clients use to reach this server (default: http://{public_host or 'HOST'}:PORT)",
    )
    parser.add_argument(
        "--redis",
        metavar="URL",
        help="keep tasks, events and webhooks in this Redis (redis://host:6379/0), so that "
        "several replicas serve the agent together (default: in memory)",
    )
    parser.add_argument(
        "--redis-prefix", default="a2a:", help="key prefix in Redis (default: a2a:)"
    )
    parser.add_argument(
        "--sql",
        metavar="URL",
        help="keep tasks, events and webhooks in this database, so that they survive a "
        "restart (sqlite+aiosqlite:///tasks.db, postgresql+asyncpg://..., "
        "mysql+asyncmy://...; one server per database: see docs/storage.md)",
    )
    parser.add_argument(
        "--signing-key",
        metavar="PEM",
        help="sign the agent card with this private key file (EC, RSA or Ed25519 PEM) and "
        f"serve its public key at {JWKS_PATH} (needs a2aserve-core[signing])",
    )
    parser.add_argument(
        "--otel",
        action="store_true",
        help="export OpenTelemetry traces and metrics, configured from the OTEL_* environment "
        "variables (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER: otlp, console or none; "
        "needs opentelemetry-sdk, and opentelemetry-exporter-otlp for otlp)",
    )
    parser.add_argument(
        "--grpc-port",
        type=int,
        metavar="N",
        help="also serve gRPC (lf.a2a.v1.A2AService) on HOST:N, the same agent and tasks; "
        "the card lists it (needs a2aserve-grpc)",
    )
    parser.set_defaults(public_host=public_host, otel_shutdown=None)
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def public_url(args: argparse.Namespace) -> str:
    """The base URL the agent card's interface URLs are built from (JSON-RPC at ``URL/``,
    HTTP+JSON at ``URL``)."""
    host = args.public_host or args.host
    return str(args.public_url or f"http://{host}:{args.port}").rstrip("/")


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The A2AServer options of the chosen backend (none: in memory; Redis or SQL), and of
    ``--otel`` (the observer; `serve` flushes its providers when the server stops)."""
    options = _otel_options(args)
    if args.redis and args.sql:
        raise SystemExit("choose one backend: --redis or --sql")
    if args.sql:
        from a2a_sql import SqlBackend

        return {**options, "backend": SqlBackend(args.sql)}
    if not args.redis:
        return options
    from a2aserve_redis import RedisBackend

    return {**options, "backend": RedisBackend(args.redis, prefix=args.redis_prefix)}


def _otel_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--otel``: the SDK configured (``_otel``) and an observer for the server."""
    if not args.otel:
        return {}
    import _otel

    if args.otel_shutdown is None:
        args.otel_shutdown = _otel.configure()
    from a2a_core.otel import OpenTelemetryObserver

    return {"observer": OpenTelemetryObserver()}  # `serve` names the agent


def signing_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ProtocolOptions of ``--signing-key``: none, or the key and the JWKS path."""
    if not args.signing_key:
        return {}
    from pathlib import Path

    from a2a_core.signing import CardSigningKey

    key = CardSigningKey.from_pem(Path(args.signing_key).read_bytes())
    return {"card_signing_key": key, "jwks_path": JWKS_PATH}


def card(
    name: str,
    description: str,
    skill: AgentSkill,
    *,
    streaming: bool = True,
    push: bool = True,
    extended: bool = False,
    modes: Sequence[str] = ("text/plain",),
) -> AgentCard:
    """A card for an example agent (interfaces are filled in by the server)."""
    return AgentCard(
        name=name,
        description=description,
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(
            streaming=streaming, push_notifications=push, extended_agent_card=extended or None
        ),
        default_input_modes=list(modes),
        default_output_modes=list(modes),
        skills=[skill],
    )


def serve(
    server: A2AServer,
    args: argparse.Namespace,
    *,
    asgi_middleware: Sequence[Callable[[Any], Any]] = (),
    aiohttp_middlewares: Sequence[Any] = (),
) -> None:
    """Serve on the chosen adapter until interrupted.

    ``asgi_middleware``: ASGI middleware classes or factories (``app -> app``), outermost
    first. ``aiohttp_middlewares``: aiohttp middlewares, as ``web.Application`` takes them.
    """
    url = public_url(args)
    on_shutdown = [args.otel_shutdown] if args.otel_shutdown is not None else []
    if on_shutdown:
        from a2a_core.otel import OpenTelemetryObserver

        if isinstance(server.observer, OpenTelemetryObserver):
            server.observer.agent_name = server.card.name
    grpc_server = _grpc_server(server, args)
    print(
        f"A2A agent on {url} ({args.adapter}); card at {url}/.well-known/agent-card.json"
        + (f"; gRPC on {args.host}:{args.grpc_port}" if grpc_server is not None else ""),
        flush=True,
    )
    if args.adapter == "aiohttp":
        from _limits import AIOHTTP_HANDLER_ARGS
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application(
            middlewares=list(aiohttp_middlewares), handler_args=AIOHTTP_HANDLER_ARGS
        )
        add_routes(app, server)  # also starts and stops the server with the app
        if grpc_server is not None:
            # After the server started, and stopped before it (cleanup runs in reverse).
            async def grpc_context(app: web.Application) -> Any:
                async with grpc_server:
                    yield

            app.cleanup_ctx.append(grpc_context)
        for hook in on_shutdown:  # after the server stopped (cleanup runs in order)

            async def flush(app: web.Application, hook: Callable[[], None] = hook) -> None:
                hook()

            app.on_cleanup.append(flush)
        web.run_app(app, host=args.host, port=args.port, print=None)
    else:
        from _limits import UVICORN_SETTINGS

        from a2a_starlette import A2AStarlette
        from a2a_starlette import serve as serve_uvicorn

        asgi: Any = A2AStarlette(server)  # runs the server in the ASGI lifespan
        if grpc_server is not None:
            asgi = _with_grpc(asgi, grpc_server)
        for middleware in reversed(asgi_middleware):
            asgi = middleware(asgi)
        # uvicorn, shutting the A2A server down first on SIGTERM (bounded; see docs).
        serve_uvicorn(
            asgi,
            server,
            host=args.host,
            port=args.port,
            log_level="warning",
            on_shutdown=on_shutdown,
            **UVICORN_SETTINGS,
        )


def _grpc_server(server: A2AServer, args: argparse.Namespace) -> Any:
    """``--grpc-port``: a gRPC server for the same A2A server (``None`` without it), which
    publishes ``PUBLIC_HOST:N`` in the card."""
    if args.grpc_port is None:
        return None
    from urllib.parse import urlsplit

    from a2a_grpc import GrpcServer

    public_host = urlsplit(public_url(args)).hostname or args.host
    return GrpcServer(
        server,
        host=args.host,
        port=args.grpc_port,
        public_address=f"{public_host}:{args.grpc_port}",
        base_url=public_url(args),
    )


def _with_grpc(asgi: Any, grpc_server: Any) -> Any:
    """``asgi`` whose lifespan also runs ``grpc_server``: started once the app (and the A2A
    server in it) has started, stopped before the app stops."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await asgi(scope, receive, send)
            return

        async def sending(message: Any) -> None:
            if message["type"] == "lifespan.startup.complete":
                await grpc_server.start()
            await send(message)

        async def receiving() -> Any:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                await grpc_server.stop(grace=1.0)
            return message

        await asgi(scope, receiving, sending)

    return app
