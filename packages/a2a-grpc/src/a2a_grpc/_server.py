"""The grpc.aio adapter: one `A2AServer`, served over gRPC on its own port.

Every RPC is a generic raw-bytes handler: the request message's bytes, the call's metadata
and the peer become an `HttpRequest` (a gRPC call is an HTTP/2 request), the server answers
it exactly as it answers HTTP (authentication, ownership, guards, extensions, observer), and
the reply's trailers become the call's status (`a2a_core.grpc`). Nothing
here knows an operation: a new RPC, a bidirectional one included, is a row of the core's
method table and a handler kind here.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from types import TracebackType
from typing import Any, Final, Self

import grpc
from grpc import aio

from a2a_core import grpc as binding
from a2a_core.http import Headers, HttpRequest, HttpResponse, SseResponse
from a2a_core.server import A2AServer
from a2a_core.types import AgentInterface, TransportProtocol
from a2a_grpc._in_flight import (
    DEFAULT_IN_FLIGHT_WAIT,
    DEFAULT_MAX_IN_FLIGHT,
    InFlight,
    InFlightWaitError,
)

__all__ = ["DEFAULT_KEEPALIVE_SECONDS", "GrpcServer"]

logger = logging.getLogger("a2a_grpc")

#: Seconds between HTTP/2 PINGs on an idle connection (a stream waiting for events, too).
DEFAULT_KEEPALIVE_SECONDS: Final = 30.0
#: Seconds a new connection has to finish its handshake (TLS, the HTTP/2 preface).
DEFAULT_HANDSHAKE_TIMEOUT: Final = 10.0
#: Seconds a connection with no call open is kept (then a GOAWAY; grpc clients reconnect).
DEFAULT_IDLE_TIMEOUT: Final = 300.0
#: Most gRPC connections at once when not given: half the process's file descriptors (the
#: HTTP side and the backends keep the rest), and no more than uvicorn's default in all.
_MAX_CONNECTIONS_CEILING: Final = 10_000
_GRPC_CONTENT_TYPE: Final = (("content-type", binding.CONTENT_TYPE),)
_STATUS_CODES: Final = {code.value[0]: code for code in grpc.StatusCode}
_NOT_READ: Final = (
    "Too much is in flight to this client on its other streams; read them, or subscribe again later"
)


class GrpcServer:
    """Serve ``server`` over gRPC at ``host:port`` (``port=0``: any free port).

    Use it as an async context manager, or `start` and `stop`; `address` is the bound
    ``host:port``. Once it listens, the server's card lists ``{"protocolBinding": "GRPC",
    "protocolVersion": "1.0", "url": public_address or address}``. If ``server`` is not
    running yet (gRPC served alone, without an HTTP adapter's lifespan), it is started here
    and stopped with the gRPC server; otherwise its lifecycle stays with whoever started it.

    Parameters:
        server: The `A2AServer` (the same instance the HTTP adapter serves).
        host: The address to listen on.
        port: The port (``0``: any free one).
        public_address: ``host:port`` to publish in the card (default: the bound one).
        base_url: The public URL of the HTTP interfaces, for what a gRPC reply lists of
            them (the extended card's interfaces): needed when ``server`` has no
            ``base_url`` of its own because its HTTP adapter takes it from each request.
        credentials: ``grpc.ssl_server_credentials(...)`` for TLS (``None``: plaintext).
        keepalive: Seconds between HTTP/2 PINGs on an idle connection.
        health: Serve ``grpc.health.v1.Health`` (needs the ``a2aserve-grpc[health]``
            extra): SERVING while the server runs, NOT_SERVING from its shutdown.
        reflection: Serve ``grpc.reflection.v1alpha`` for the A2A service (needs the
            ``a2aserve-grpc[reflection]`` extra), for grpcurl and similar tools.
        max_connections: Connections at once, of every client together; past it a new one is
            closed at once. ``None``: half the process's file descriptor limit (at most
            10,000), so that a flood of gRPC connections leaves the HTTP side its own.
            gRPC has no hook to count connections per client address: limit those at a
            proxy in front (docs/grpc.md).
        handshake_timeout: Seconds a new connection has to complete its handshake (TLS and
            the HTTP/2 preface) before it is closed: a silent connection costs no longer.
        idle_timeout: Seconds a connection with no call open is kept (``None``: forever);
            then it is closed with a GOAWAY, after which grpc clients reconnect by
            themselves.
        max_in_flight: Bytes of stream messages handed to gRPC and not yet read by their
            client, per client address: beyond it a stream waits before it sends (a message
            larger than this goes alone). gRPC copies each message whole into its buffers,
            so without it a client's unread streams would cost one copy each.
        in_flight_wait: Seconds a stream waits for that budget before it ends with
            RESOURCE_EXHAUSTED (its client is not reading what is in flight to it).
        options: Further channel arguments for ``grpc.aio.server``.
    """

    def __init__(
        self,
        server: A2AServer,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        public_address: str | None = None,
        base_url: str | None = None,
        credentials: grpc.ServerCredentials | None = None,
        keepalive: float = DEFAULT_KEEPALIVE_SECONDS,
        max_connections: int | None = None,
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        health: bool = False,
        reflection: bool = False,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        in_flight_wait: float = DEFAULT_IN_FLIGHT_WAIT,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.server = server
        self.host = host
        self.port = port
        self.public_address = public_address
        self.base_url = base_url
        self.credentials = credentials
        self.keepalive = keepalive
        self.max_connections = max_connections or default_max_connections()
        self.handshake_timeout = handshake_timeout
        self.idle_timeout = idle_timeout
        self.health = health
        self.reflection = reflection
        self.in_flight = InFlight(max_in_flight, in_flight_wait)
        """Bytes in flight per client address (``in_flight.total``, ``in_flight.held(ip)``)."""
        self.options = tuple(options)
        self._grpc: aio.Server | None = None
        self._own_server = False
        self._health: Any = None
        self._bound: int | None = None
        self._published: AgentInterface | None = None

    @property
    def address(self) -> str:
        """The bound ``host:port`` (after `start`)."""
        if self._bound is None:
            raise RuntimeError("the gRPC server is not started")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self._bound}"

    async def start(self) -> str:
        """Listen, publish the interface in the card, and return the bound ``host:port``."""
        if self._grpc is not None:
            raise RuntimeError("the gRPC server is already started")
        limit = self.server.max_body_size
        keepalive_ms = int(self.keepalive * 1000)
        options = [
            # A message over the body limit is refused by gRPC itself (RESOURCE_EXHAUSTED)
            # before it is read into memory.
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", -1),
            ("grpc.keepalive_time_ms", keepalive_ms),
            ("grpc.keepalive_timeout_ms", 20_000),
            ("grpc.http2.min_ping_interval_without_data_ms", min(keepalive_ms, 10_000)),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.so_reuseport", 0),
            # Connections beyond the limit are closed as they come; a silent one goes after
            # the handshake timeout, an idle one after the idle timeout.
            ("grpc.max_allowed_incoming_connections", self.max_connections),
            ("grpc.server_handshake_timeout_ms", int(self.handshake_timeout * 1000)),
            *self._idle_option(),
            *self.options,
        ]
        grpc_server = aio.server(options=options)
        handler = _A2AHandler(
            self.server, self.base_url, self.credentials is not None, self.in_flight
        )
        grpc_server.add_generic_rpc_handlers((handler,))
        if self.health:
            self._health = _add_health(grpc_server)
        if self.reflection:
            from a2a_grpc._reflection import add_reflection

            add_reflection(grpc_server)
        target = f"{'[' + self.host + ']' if ':' in self.host else self.host}:{self.port}"
        if self.credentials is not None:
            bound = grpc_server.add_secure_port(target, self.credentials)
        else:
            bound = grpc_server.add_insecure_port(target)
        if not bound:
            raise OSError(f"cannot listen for gRPC on {target}")
        if not self.server.running:
            await self.server.__aenter__()
            self._own_server = True
        try:
            await grpc_server.start()
        except BaseException:
            if self._own_server:
                await self.server.__aexit__(None, None, None)
                self._own_server = False
            raise
        self._grpc, self._bound = grpc_server, bound
        self._published = AgentInterface(
            url=self.public_address or self.address,
            protocol_binding=TransportProtocol.GRPC,
            protocol_version="1.0",
        )
        self.server.protocol.publish_interface(self._published)
        if self._health is not None:
            await self._health.set("", _serving(True))
        return self.address

    def _idle_option(self) -> list[tuple[str, int]]:
        if self.idle_timeout is None:
            return []
        return [("grpc.max_connection_idle_ms", int(self.idle_timeout * 1000))]

    async def stop(self, grace: float | None = None) -> None:
        """Stop: the A2A server's shutdown first when this started it (running agents get
        their grace, open streams their final frames), then gRPC, whose open calls get
        ``grace`` seconds (``None``: cancelled at once). The card stops listing it at once."""
        grpc_server, self._grpc = self._grpc, None
        if grpc_server is None:
            return
        if self._published is not None:
            # No card sends clients here any more.
            self.server.protocol.withdraw_interface(self._published)
            self._published = None
        try:
            if self._health is not None:
                await self._health.set("", _serving(False))
            if self._own_server:
                await self.server.shutdown()
            await grpc_server.stop(grace)
        finally:
            if self._own_server:
                self._own_server = False
                await self.server.__aexit__(None, None, None)

    async def wait(self) -> None:
        """Wait until the gRPC server stops."""
        if self._grpc is not None:
            await self._grpc.wait_for_termination()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop(grace=1.0)


class _A2AHandler(grpc.GenericRpcHandler):
    """Every RPC of the core's method table, as a raw-bytes handler; ``None`` (gRPC's own
    UNIMPLEMENTED) for any other method."""

    def __init__(
        self, server: A2AServer, base_url: str | None, tls: bool, in_flight: InFlight
    ) -> None:
        self.server = server
        self.base_url = base_url
        self.tls = tls
        self.in_flight = in_flight
        self._handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {}
        for path, method in binding.METHODS.items():
            if method.streaming:
                self._handlers[path] = grpc.unary_stream_rpc_method_handler(self._streaming(path))
            else:
                self._handlers[path] = grpc.unary_unary_rpc_method_handler(self._unary(path))

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        return self._handlers.get(handler_call_details.method)

    def _unary(
        self, path: str
    ) -> Callable[[bytes, aio.ServicerContext[Any, Any]], Awaitable[bytes]]:
        server, base_url, tls = self.server, self.base_url, self.tls

        async def unary(message: bytes, context: aio.ServicerContext[Any, Any]) -> bytes:
            response = await server.handle(_request(path, message, context, base_url, tls))
            if isinstance(response, SseResponse):  # pragma: no cover - the table says unary
                await response.aclose()
                await context.abort(grpc.StatusCode.INTERNAL, "Internal error")
            assert isinstance(response, HttpResponse)
            status = binding.status_from_trailers(response.trailers)
            if status.code:
                await _abort(context, status, response.headers)
            # The service parameters (a2a-version, a2a-extensions) go out with the status:
            # initial metadata of their own would be one more batch per call (~40 µs,
            # bench/grpc_servers.py), for what a unary reply's client reads at its end anyway.
            context.set_trailing_metadata(_metadata(response.headers))
            return response.body

        return unary

    def _streaming(
        self, path: str
    ) -> Callable[[bytes, aio.ServicerContext[Any, Any]], AsyncIterator[bytes]]:
        server, base_url, tls, in_flight = self.server, self.base_url, self.tls, self.in_flight

        async def streaming(
            message: bytes, context: aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[bytes]:
            response = await server.handle(_request(path, message, context, base_url, tls))
            if isinstance(response, HttpResponse):
                # Refused before the stream began: only a status.
                status = binding.status_from_trailers(response.trailers)
                await _abort(context, status, response.headers)
                return
            # A stream's service parameters come before its first event.
            await context.send_initial_metadata(_metadata(response.headers))
            deframer = binding.Deframer()
            address = _peer_address(context.peer()) or context.peer()
            try:
                async for chunk in response.frames:
                    for item in deframer.feed(chunk):
                        if isinstance(item, bytes):
                            # grpc resumes this generator once the message is sent: until
                            # then it counts against its client's budget.
                            try:
                                async with in_flight.hold(address, len(item)):
                                    yield item
                            except InFlightWaitError:
                                await context.abort(
                                    grpc.StatusCode.RESOURCE_EXHAUSTED, _NOT_READ, ()
                                )
                        elif item.code:
                            await _abort(context, item, ())
            finally:
                # Also when the client cancelled (RST_STREAM: this generator is closed):
                # the stream stops following the task's log; the task itself goes on.
                await response.aclose()

        return streaming


def default_max_connections() -> int:
    """Half the process's soft file descriptor limit, at most 10,000 (at least 16)."""
    try:
        import resource
    except ImportError:  # Windows: no such limit to share
        return _MAX_CONNECTIONS_CEILING
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return _MAX_CONNECTIONS_CEILING
    return max(16, min(_MAX_CONNECTIONS_CEILING, soft // 2))


def _peer_address(peer: str) -> str | None:
    """The IP address of a grpc peer string (``ipv4:1.2.3.4:5``, ``ipv6:[::1]:5``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or None
    if kind == "ipv6":
        return rest.rpartition(":")[0].strip("[]") or None
    return None


def _request(
    path: str,
    message: bytes,
    context: aio.ServicerContext[Any, Any],
    base_url: str | None,
    tls: bool,
) -> HttpRequest:
    pairs: list[tuple[str, str]] = list(_GRPC_CONTENT_TYPE)
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, bytes):  # a -bin key: base64, as on the wire
            value = base64.b64encode(value).decode()
        pairs.append((key, value))
    return HttpRequest(
        "POST",
        path,
        headers=Headers(pairs),
        body=message,
        base_url=base_url,
        peer=_peer_address(context.peer()),
        # Only a TLS server can have a client certificate to look up.
        peer_certificate=_peer_certificate(context) if tls else None,
    )


def _peer_certificate(context: aio.ServicerContext[Any, Any]) -> bytes | None:
    """The client's TLS certificate (DER), when it presented one (mTLS)."""
    with contextlib.suppress(Exception):
        for pem in context.auth_context().get("x509_pem_cert") or ():
            return ssl.PEM_cert_to_DER_cert(pem.decode())
    return None


def _metadata(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """A reply's headers as gRPC metadata: the service parameters, not the content type."""
    return tuple((k.lower(), v) for k, v in headers if k.lower() != "content-type")


async def _abort(
    context: aio.ServicerContext[Any, Any],
    status: binding.GrpcStatus,
    headers: tuple[tuple[str, str], ...],
) -> None:
    trailing: list[tuple[str, str | bytes]] = [*_metadata(headers)]
    if status.details:
        trailing.append((binding.STATUS_DETAILS_KEY, status.details))
    code = _STATUS_CODES.get(status.code, grpc.StatusCode.UNKNOWN)
    await context.abort(code, status.message, tuple(trailing))


def _serving(on: bool) -> Any:
    from grpc_health.v1 import health_pb2

    return (
        health_pb2.HealthCheckResponse.SERVING if on else health_pb2.HealthCheckResponse.NOT_SERVING
    )


def _add_health(grpc_server: aio.Server) -> Any:
    try:
        from grpc_health.v1 import health, health_pb2_grpc
    except ImportError:  # pragma: no cover - the extra is installed in the workspace
        raise RuntimeError(
            "health=True needs the gRPC health service: pip install grpcio-health-checking"
        ) from None
    servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, grpc_server)
    return servicer
