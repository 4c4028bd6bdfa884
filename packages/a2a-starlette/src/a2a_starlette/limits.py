"""Limits for uvicorn that A2A servers need and uvicorn leaves open (needs ``uvicorn``:
``a2aserve-starlette[uvicorn]``).

The adapter refuses what is A2A's to refuse (a body over ``max_body_size``, at once). What
comes before the body (the request line and headers) and how long a client may take to send
a request are the HTTP server's to bound: uvicorn bounds neither the size of a request head
nor the time a client takes to send a request (its keep-alive timer restarts with every
byte). `LimitedH11Protocol`, its h11 protocol with both, does; `UVICORN_SETTINGS` are the
settings `run` and ``a2aserve serve`` use, for ``uvicorn.run(app, **UVICORN_SETTINGS)``.
Behind a reverse proxy that bounds them (docs/adapters.md, "Server limits"), plain
``http="httptools"`` is faster.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "MAX_CONNECTIONS_PER_PEER",
    "MAX_HEADERS",
    "MAX_HEAD_SIZE",
    "OVER_LIMIT_DEADLINE",
    "REQUEST_DEADLINE",
    "RETRY_AFTER",
    "UVICORN_SETTINGS",
    "LimitedH11Protocol",
]

#: Largest request head (request line and headers), in bytes.
MAX_HEAD_SIZE = 16 * 1024
#: Most header fields in one request.
MAX_HEADERS = 100
#: Seconds a client has to send a whole request, head and body, from the moment the server
#: waits for one (the connection opened, or the previous reply ended). 8 MiB (the default
#: ``max_body_size``) in 30 s needs some 280 KB/s of upload.
REQUEST_DEADLINE = 30.0
#: Connections one client address may hold at once (uvicorn); past it, a new connection's
#: request is answered 429 with ``Retry-After`` and the connection closed. Behind a reverse
#: proxy every connection is the proxy's: raise it, or set ``None`` and limit per client at
#: the proxy (docs/adapters.md).
MAX_CONNECTIONS_PER_PEER: int | None = 100
#: Seconds a connection over `MAX_CONNECTIONS_PER_PEER` has to send its request (to be
#: refused) before it is closed: a client holding idle connections gets no more held.
OVER_LIMIT_DEADLINE = 1.0
#: The ``Retry-After`` of that refusal, in seconds.
RETRY_AFTER = 5


class _LimitedHeads(h11.Connection):
    """h11's server side, refusing a head over `MAX_HEAD_SIZE` or `MAX_HEADERS` however it
    arrived: h11's own ``max_incomplete_event_size`` bounds only a head still incomplete, so
    one that comes whole in a single read passes whatever its size."""

    def next_event(self) -> Any:
        event = super().next_event()
        if isinstance(event, h11.Request):
            size = len(event.method) + len(event.target) + 12  # "GET / HTTP/1.1\r\n"
            size += sum(len(name) + len(value) + 4 for name, value in event.headers)
            if len(event.headers) > MAX_HEADERS or size > MAX_HEAD_SIZE:
                # uvicorn answers it with a 400 and closes the connection.
                raise h11.RemoteProtocolError("Request head too large", error_status_hint=431)
        return event


async def _too_many_connections(scope: Any, receive: Any, send: Any) -> None:
    """The ASGI app that answers a connection over its client's limit: 429, then close."""
    body = b"Too many connections from this client: close one, or try again later."
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(RETRY_AFTER).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol (``http="h11"``) with a head limit, a request deadline and a
    limit on connections per client.

    The head: at most `MAX_HEAD_SIZE` bytes and `MAX_HEADERS` fields, else a 400. The
    deadline: a request, head and body, must arrive within `deadline` seconds, else the
    connection is closed; so a client sending a byte at a time (slowloris) holds it no
    longer. Once the request is in no deadline applies, so a reply may stream for hours.
    Per client: at most `max_connections_per_peer` connections from one address; a
    connection past it gets `OVER_LIMIT_DEADLINE` seconds for its request, which is answered
    429 with ``Retry-After`` and ``Connection: close``, so one client holding idle, slow or
    unread connections cannot take the others' place. Built on uvicorn's own class: its
    ``conn`` (the h11 connection), ``app``, ``client``, ``server_state``, ``loop``,
    ``transport`` and ``logger``, and the hooks it calls on data and at the end of a reply.
    """

    deadline: float = REQUEST_DEADLINE
    max_connections_per_peer: int | None = MAX_CONNECTIONS_PER_PEER

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        incomplete = self.config.h11_max_incomplete_event_size or MAX_HEAD_SIZE
        self.conn = _LimitedHeads(h11.SERVER, max_incomplete_event_size=incomplete)
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._peer: str | None = None  # the client address counted for this connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._count_peer()
        self._watch()

    def _count_peer(self) -> None:
        """Count this connection against its client's limit, or refuse it past the limit."""
        limit = self.max_connections_per_peer
        if limit is None or not self.client:
            return
        # One count per uvicorn server: on its state, which every connection of it shares.
        state: Any = self.server_state
        counts: dict[str, int] = state.__dict__.setdefault("connections_per_peer", {})
        peer = self.client[0]
        held = counts.get(peer, 0)
        if held >= limit:
            self.app = _too_many_connections  # this connection's request gets the 429
            self.deadline = OVER_LIMIT_DEADLINE
            _warn_once_a_minute(
                self.logger,
                ("over", peer),
                "Refusing connections of %s: it holds %d, the most one client may.",
                peer,
                limit,
            )
            return
        counts[peer] = held + 1
        self._peer = peer

    def _uncount_peer(self) -> None:
        peer, self._peer = self._peer, None
        if peer is not None:
            counts: dict[str, int] = self.server_state.__dict__["connections_per_peer"]
            left = counts[peer] - 1
            if left:
                counts[peer] = left
            else:
                del counts[peer]

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()  # the next request starts (or a pipelined one has already arrived)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        self._uncount_peer()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Run the deadline while the client owes a head or a body, and only then."""
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._stop_deadline()
        elif self._deadline_timer is None and not self.transport.is_closing():
            self._deadline_timer = self.loop.call_later(self.deadline, self._deadline_passed)

    def _stop_deadline(self) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None

    def _deadline_passed(self) -> None:
        self._deadline_timer = None
        if not self.transport.is_closing():
            if self.app is not _too_many_connections:  # that one was logged already
                peer = self.client[0] if self.client else "a client"
                _warn_once_a_minute(
                    self.logger,
                    ("slow", peer),
                    "Closing connections of %s whose requests took too long to arrive.",
                    peer,
                )
            self.transport.close()


_last_warned: dict[tuple[str, str], float] = {}


def _warn_once_a_minute(logger: Any, key: tuple[str, str], message: str, *args: Any) -> None:
    """A warning about one client at most once a minute: a client that opens a thousand
    connections does not write a thousand lines."""
    now = time.monotonic()
    if now - _last_warned.get(key, -60.0) < 60.0:
        return
    if len(_last_warned) >= 1024:  # bounded: forget every client at once
        _last_warned.clear()
    _last_warned[key] = now
    logger.warning(message, *args)


#: ``uvicorn.run(app, **UVICORN_SETTINGS)`` (or ``uvicorn.Config``).
UVICORN_SETTINGS: dict[str, Any] = {
    # h11 with a head limit and a request deadline (above).
    "http": LimitedH11Protocol,
    # What h11 buffers of a head still incomplete (uvicorn's default for h11, said aloud).
    "h11_max_incomplete_event_size": MAX_HEAD_SIZE,
    # An idle keep-alive connection is closed after this many seconds (uvicorn's default).
    "timeout_keep_alive": 5,
    # Connections and requests at once, of all clients together; beyond it, new requests
    # get a 503. One client is held to MAX_CONNECTIONS_PER_PEER well before it (so one
    # client cannot reach it alone); every open SSE stream counts: size it for your
    # subscribers, and within the process's file descriptors (`ulimit -n`).
    "limit_concurrency": 10_000,
    # A2A has no WebSocket: an upgrade request is served as the plain HTTP request it is.
    "ws": "none",
}
