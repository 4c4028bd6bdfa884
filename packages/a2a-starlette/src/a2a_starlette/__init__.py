"""Serve an A2A agent from Starlette, FastAPI or any ASGI server.

``A2AStarlette(server)`` is a plain ASGI app: run it with uvicorn, mount it
(``Mount("/a2a", app=...)``, ``fastapi_app.mount("/a2a", ...)``), or use its ``routes()``.
It translates ASGI to the core's ``HttpRequest`` and writes back ``HttpResponse`` /
``SseResponse``; everything else is the core's job. ``serve(app, server, ...)`` runs it under
uvicorn with a bounded, clean shutdown (``UvicornServer``); ``health_route(server)`` is a
readiness route (200/503) for the app's routes. ``run(server)`` serves one server as a
whole process (what ``a2aserve serve`` runs), with the limits of `a2a_starlette.limits`.
"""

from importlib.metadata import version as _version

from a2a_starlette._app import (
    A2AStarlette,
    health_route,
    put_base_url,
    put_identity,
    put_metadata,
)
from a2a_starlette._run import LIVENESS_PATH, READINESS_PATH, build_app, run
from a2a_starlette._serve import UvicornServer, serve

__version__: str = _version("a2aserve-starlette")

__all__ = [
    "__version__",
    "LIVENESS_PATH",
    "READINESS_PATH",
    "A2AStarlette",
    "UvicornServer",
    "health_route",
    "put_base_url",
    "put_identity",
    "put_metadata",
    "build_app",
    "run",
    "serve",
]
