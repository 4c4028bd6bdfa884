"""Running under uvicorn with a bounded, clean shutdown (optional: needs ``uvicorn``).

Under plain uvicorn, SIGTERM stops accepting connections and then waits for every open
response to finish before the ASGI lifespan hears of the shutdown: an open SSE stream (a
subscription, say) holds the process up for as long as it lasts, and the agents behind
blocking calls are never told to stop. :class:`UvicornServer` starts the A2A server's own
:meth:`~a2a_core.server.A2AServer.shutdown` first, as uvicorn begins to shut down, while
connections are still open: new calls are refused (503), running agents get their grace,
then their tasks are failed, and every open stream ends with a final frame. uvicorn then
finds the connections finished and exits, within the grace period plus about a second.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from a2a_core.server import A2AServer

if TYPE_CHECKING:
    import uvicorn

__all__ = ["UvicornServer", "serve"]


def _server_class() -> type[uvicorn.Server]:
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "a2a_starlette.serve needs uvicorn: pip install 'a2aserve-starlette[uvicorn]'"
        ) from None

    class _Server(uvicorn.Server):
        a2a_servers: tuple[A2AServer, ...] = ()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Before uvicorn waits for the connections: they end because these stop.
            async with anyio.create_task_group() as tg:
                for server in self.a2a_servers:
                    tg.start_soon(server.shutdown)
            await super().shutdown(sockets)

    return _Server


def UvicornServer(  # noqa: N802 - a class to its users, built lazily (uvicorn is optional)
    app: Any, servers: A2AServer | Sequence[A2AServer], **config: Any
) -> uvicorn.Server:
    """A ``uvicorn.Server`` for ``app`` that shuts ``servers`` down first (module docstring).

    ``config`` is passed to ``uvicorn.Config``; ``timeout_graceful_shutdown`` defaults to
    the longest ``shutdown_grace`` plus two seconds, a backstop for responses that are not
    the A2A server's (another route of the same app).
    """
    import uvicorn

    a2a_servers = (servers,) if isinstance(servers, A2AServer) else tuple(servers)
    grace = max((s.shutdown_grace for s in a2a_servers), default=0.0)
    config.setdefault("timeout_graceful_shutdown", int(grace + 2))
    server = _server_class()(uvicorn.Config(app, **config))
    server.a2a_servers = a2a_servers  # type: ignore[attr-defined]
    return server


def serve(app: Any, servers: A2AServer | Sequence[A2AServer], **config: Any) -> None:
    """Run ``app`` under uvicorn until SIGINT/SIGTERM, like ``uvicorn.run``, shutting
    ``servers`` down cleanly first (see `UvicornServer`)."""
    UvicornServer(app, servers, **config).run()
