"""A server for the SIGTERM tests (tests/adapters/test_shutdown_signal.py), run as a process.

    python shutdown_server.py starlette|aiohttp PORT GRACE

Its agent never finishes a message that says ``forever`` (a coroutine) or ``blocked`` (a
plain function stuck in its worker thread), and asks for more input otherwise, so that a
subscription to its task stays open. It serves the way the docs tell users to: ``a2a_starlette.serve`` under uvicorn,
``web.run_app`` with ``add_routes`` under aiohttp. The test polls the card until it answers.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from typing import Any

from a2a_core.server import A2AServer, ExecutionGuards, InputRequired, TaskContext
from a2a_core.types import AgentCapabilities, AgentCard


def agent(ctx: TaskContext) -> Any:
    if ctx.text == "forever":
        return forever(ctx)
    if ctx.text == "blocked":
        # A plain function that never returns, in its worker thread.
        threading.Event().wait()
    return InputRequired("more?")


async def forever(ctx: TaskContext) -> None:
    await ctx.working("on it")
    await asyncio.Event().wait()


def main() -> None:
    adapter, port, grace = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    card = AgentCard(
        name="Shutdown",
        description="Never finishes.",
        supported_interfaces=[],
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[],
    )
    server = A2AServer(
        agent,
        card=card,
        base_url=f"http://127.0.0.1:{port}",
        guards=ExecutionGuards(shutdown_grace=grace),
    )
    if adapter == "aiohttp":
        from aiohttp import web

        from a2a_aiohttp import add_routes

        app = web.Application()
        add_routes(app, server)
        web.run_app(app, host="127.0.0.1", port=port, print=None)
    else:
        from a2a_starlette import A2AStarlette, serve

        serve(A2AStarlette(server), server, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
