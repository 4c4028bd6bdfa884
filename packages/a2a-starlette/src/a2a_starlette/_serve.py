"""Running under uvicorn with a bounded, clean shutdown (optional: needs ``uvicorn``).

Under plain uvicorn, SIGTERM stops accepting connections and then waits for every open
response to finish before the ASGI lifespan hears of the shutdown: an open SSE stream (a
subscription, say) holds the process up for as long as it lasts, and the agents behind
blocking calls are never told to stop. :class:`UvicornServer` starts the A2A server's own
:meth:`~a2a_core.server.A2AServer.shutdown` first, as uvicorn begins to shut down, while
connections are still open: new calls are refused (503), running agents get their grace,
then their tasks are failed, and every open stream ends with a final frame. uvicorn then
finds the connections finished and exits, within the grace period plus about a second.

``on_shutdown`` callables run last, once uvicorn's shutdown (the ASGI lifespan's included)
is over: the place to flush telemetry. Not after ``run()`` returns: on SIGTERM uvicorn
raises the signal again once it has shut down, and the process ends there, exit hooks
unrun, so whatever a batch span processor still held would be lost.
"""

from __future__ import annotations

import inspect
import socket
from collections.abc import Callable, Sequence
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
        raise ImportError("a2a_starlette.serve needs uvicorn: pip install uvicorn") from None

    class _Server(uvicorn.Server):
        a2a_servers: tuple[A2AServer, ...] = ()
        on_shutdown: tuple[Callable[[], object], ...] = ()
        on_ready: Callable[[], object] | None = None

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            # The sockets listen now: what `on_ready` says (a URL printed) is true.
            if not self.should_exit and self.on_ready is not None:
                self.on_ready()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Before uvicorn waits for the connections: they end because these stop.
            async with anyio.create_task_group() as tg:
                for server in self.a2a_servers:
                    tg.start_soon(server.shutdown)
            try:
                await super().shutdown(sockets)
            finally:
                for hook in self.on_shutdown:
                    done = hook()
                    if inspect.isawaitable(done):
                        await done

    return _Server


def UvicornServer(  # noqa: N802 - a class to its users, built lazily (uvicorn is optional)
    app: Any,
    servers: A2AServer | Sequence[A2AServer],
    *,
    on_shutdown: Sequence[Callable[[], object]] = (),
    on_ready: Callable[[], object] | None = None,
    **config: Any,
) -> uvicorn.Server:
    """A ``uvicorn.Server`` for ``app`` that shuts ``servers`` down first (module docstring),
    and calls ``on_shutdown`` (functions or coroutine functions) when it has shut down, and
    ``on_ready`` once its sockets accept connections (the application started).

    ``config`` is passed to ``uvicorn.Config``; ``timeout_graceful_shutdown`` defaults to
    the longest ``ExecutionGuards.shutdown_grace`` plus two seconds, a backstop for
    responses that are not the A2A server's (another route of the same app).
    """
    import uvicorn

    a2a_servers = (servers,) if isinstance(servers, A2AServer) else tuple(servers)
    grace = max((s.guard_options.shutdown_grace for s in a2a_servers), default=0.0)
    config.setdefault("timeout_graceful_shutdown", int(grace + 2))
    server = _server_class()(uvicorn.Config(app, **config))
    server.a2a_servers = a2a_servers  # type: ignore[attr-defined]
    server.on_shutdown = tuple(on_shutdown)  # type: ignore[attr-defined]
    server.on_ready = on_ready  # type: ignore[attr-defined]
    return server


def serve(
    app: Any,
    servers: A2AServer | Sequence[A2AServer],
    *,
    on_shutdown: Sequence[Callable[[], object]] = (),
    **config: Any,
) -> None:
    """Run ``app`` under uvicorn until SIGINT/SIGTERM, like ``uvicorn.run``, shutting
    ``servers`` down cleanly first and calling ``on_shutdown`` last (see `UvicornServer`)."""
    UvicornServer(app, servers, on_shutdown=on_shutdown, **config).run()
