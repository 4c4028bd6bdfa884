"""Serve an A2A agent from aiohttp.

``a2a_subapp(server)`` returns a sub-application for ``app.add_subapp("/a2a", ...)``;
``add_routes(app, server)`` adds the routes to an existing application. Both start and stop
the server with the application (``cleanup_ctx``). Upstream middleware sets per-request
overrides with ``put_base_url``, ``put_metadata`` and ``put_identity``.
``health_handler(server)`` answers a readiness probe (200/503).
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

__version__: str = _version("a2aserve-aiohttp")

__all__ = [
    "__version__",
    "IDENTITY_KEY",
    "a2a_subapp",
    "add_routes",
    "health_handler",
    "put_base_url",
    "put_identity",
    "put_metadata",
]
