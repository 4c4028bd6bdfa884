"""Shared command line of the examples: the settings of ``a2aserve serve`` (an adapter, a
host, a port and a public URL, a Redis or a database for the tasks, a card signing key,
OpenTelemetry, gRPC beside HTTP, the log level and access log), each a flag and an
``A2ASERVE_<NAME>`` environment variable (see ``a2a_core.cli.serve``).

Every example ends with ``serve(server, args)``, which runs the agent as ``a2aserve serve``
does: at the root of the chosen framework, with ``/healthz`` and ``/readyz``, the server
limits of the adapter (``a2a_starlette.limits``, ``a2a_aiohttp.HANDLER_ARGS``), the line
with the URL printed once the server accepts connections, and exit code 0 after SIGTERM.
Middleware (for instance to authenticate callers) is passed per adapter, because each
framework has its own kind.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from a2a_core.cli import serve as serving
from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

ADAPTERS = serving.ADAPTERS


def parse_args(
    description: str,
    extra: Callable[[argparse.ArgumentParser], None] | None = None,
    *,
    public_host: str | None = None,
) -> argparse.Namespace:
    """The examples' common options (``args.settings``: the `ServeSettings` they give);
    ``public_host`` replaces the listening host in the default public URL."""
    parser = argparse.ArgumentParser(description=description)
    serving.add_serve_arguments(parser)
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    try:
        settings = serving.settings_from(args)
    except serving.SettingsError as exc:
        parser.error(str(exc))  # exit 2, with the usage
    if public_host is not None and not settings.public_url:
        settings = dataclasses.replace(settings, public_url=f"http://{public_host}:{settings.port}")
    args.settings = settings
    return args


def public_url(args: argparse.Namespace) -> str:
    """The base URL the agent card's interface URLs are built from (JSON-RPC at ``URL/``,
    HTTP+JSON at ``URL``)."""
    url: str = args.settings.url
    return url


def backend_options(args: argparse.Namespace) -> dict[str, Any]:
    """The A2AServer options of the chosen backend (none: in memory; Redis or SQL), and of
    ``--otel`` (the observer; `serve` sets the SDK up, and flushes it when it stops)."""
    return _or_exit(serving.backend_options, args.settings)


def console_options(args: argparse.Namespace) -> dict[str, Any]:
    """``console=True`` for ``--console`` (the developer console at ``/a2a-console/``)."""
    return {"console": True} if args.settings.console else {}


def signing_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ProtocolOptions of ``--signing-key``: none, or the key and the JWKS path."""
    return _or_exit(serving.signing_options, args.settings)


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
    """Serve on the chosen adapter until SIGTERM or SIGINT (`a2a_core.cli.serve.run`).

    ``asgi_middleware``: ASGI middleware classes or factories (``app -> app``), outermost
    first. ``aiohttp_middlewares``: aiohttp middlewares, as ``web.Application`` takes them.
    """
    try:
        serving.run(
            server,
            args.settings,
            asgi_middleware=asgi_middleware,
            aiohttp_middlewares=aiohttp_middlewares,
        )
    except serving.SettingsError as exc:
        _usage_error(exc)
    except serving.ListenError as exc:  # a port in use: one line, exit code 1
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        pass


def _or_exit(function: Callable[[Any], dict[str, Any]], settings: Any) -> dict[str, Any]:
    try:
        return function(settings)
    except serving.SettingsError as exc:
        _usage_error(exc)


def _usage_error(exc: Exception) -> NoReturn:
    """A setting that cannot be used: one line, exit code 2 (as ``a2aserve serve``)."""
    print(f"error: {exc}", file=sys.stderr)
    raise SystemExit(2)
