"""Serve an A2A agent from aiohttp.

``a2a_subapp(server)`` returns a sub-application for ``app.add_subapp("/a2a", ...)``;
``add_routes(app, server)`` adds the routes to an existing application. Both start and stop
the server with the application (``cleanup_ctx``). Upstream middleware sets per-request
overrides with ``put_base_url``, ``put_metadata`` and ``put_identity``.
``health_handler(server)`` answers a readiness probe (200/503). ``run(server)`` serves one
server as a whole process (what ``a2aserve serve --adapter aiohttp`` runs), with the limits
of `HANDLER_ARGS`.
"""

from importlib.metadata import version as _version

from a2a_aiohttp._app import (
    IDENTITY_KEY,
    a2a_subapp,
    add_routes,
    health_handler,
    put_base_url,
    put_identity,
    put_metadata,
)
from a2a_aiohttp._limits import HANDLER_ARGS
from a2a_aiohttp._run import LIVENESS_PATH, READINESS_PATH, build_app, run

__version__: str = _version("a2aserve-aiohttp")

__all__ = [
    "__version__",
    "HANDLER_ARGS",
    "IDENTITY_KEY",
    "LIVENESS_PATH",
    "READINESS_PATH",
    "a2a_subapp",
    "add_routes",
    "build_app",
    "health_handler",
    "put_base_url",
    "put_identity",
    "put_metadata",
    "run",
]
