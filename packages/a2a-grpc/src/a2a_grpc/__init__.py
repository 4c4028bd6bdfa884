"""Serve an A2A agent over gRPC, beside HTTP, with the same `A2AServer`.

``GrpcServer(server, port=50051)`` listens with grpc.aio and answers every RPC of
``lf.a2a.v1.A2AService`` through the server's one entry point, so tasks, ownership,
authentication (``authorization`` metadata), guards and observation are the HTTP ones.
Once it listens, the card lists the GRPC interface.
"""

from importlib.metadata import version as _version

from a2a_grpc._in_flight import DEFAULT_IN_FLIGHT_WAIT, DEFAULT_MAX_IN_FLIGHT, InFlight
from a2a_grpc._server import DEFAULT_KEEPALIVE_SECONDS, GrpcServer

__version__: str = _version("a2aserve-grpc")

__all__ = [
    "DEFAULT_IN_FLIGHT_WAIT",
    "DEFAULT_KEEPALIVE_SECONDS",
    "DEFAULT_MAX_IN_FLIGHT",
    "GrpcServer",
    "InFlight",
    "__version__",
]
