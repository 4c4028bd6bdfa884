"""Shared command line of the examples: pick an adapter, a host, a port and a public URL."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from a2a_core.server import A2AServer
from a2a_core.types import AgentCapabilities, AgentCard, AgentSkill

ADAPTERS = ("starlette", "aiohttp")


def parse_args(
    description: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    """The examples' common options."""
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
        "--public-url", help="URL clients use to reach this server (default: http://HOST:PORT)"
    )
    if extra is not None:
        extra(parser)
    return parser.parse_args()


def public_url(args: argparse.Namespace) -> str:
    """The base URL published in the agent card."""
    return str(args.public_url or f"http://{args.host}:{args.port}").rstrip("/")


def card(
    name: str, description: str, skill: AgentSkill, *, streaming: bool = True, push: bool = True
) -> AgentCard:
    """A card for an example agent (interfaces are filled in by the server)."""
    return AgentCard(
        name=name,
        description=description,
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=streaming, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[skill],
    )


def serve(server: A2AServer, args: argparse.Namespace) -> None:
    """Serve on the chosen adapter until interrupted."""
    print(
        f"A2A agent on {public_url(args)} ({args.adapter}); card at {public_url(args)}/.well-known/agent-card.json",
        flush=True,
    )
    if args.adapter == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import a2a_subapp

        web.run_app(a2a_subapp(server), host=args.host, port=args.port, print=None)
    else:
        import uvicorn

        from a2a_starlette import A2AStarlette

        uvicorn.run(A2AStarlette(server), host=args.host, port=args.port, log_level="warning")
