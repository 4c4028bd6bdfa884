"""The HTTP values that adapters exchange with the core: one request shape, two reply shapes.

An adapter turns its framework's request into an :class:`HttpRequest`, hands it to the core,
and writes back whatever it gets: an :class:`HttpResponse` (one body) or an
:class:`SseResponse` (an async iterator of ready-made frames). These are the only shapes an
adapter ever sees, which is what keeps adapters short and alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final
from urllib.parse import parse_qsl

import msgspec

from a2a_core._protocol.refusal import Refusal

__all__ = [
    "RETRY_AFTER_SECONDS",
    "Headers",
    "HttpRequest",
    "HttpResponse",
    "SseResponse",
    "content_length_exceeds",
]

#: The ``Retry-After`` every 503 and 429 carries (a store outage, a server stopping, a
#: readiness check failing, a server busy): long enough for a restart or a fail-over, short
#: enough for a client that waits for it.
RETRY_AFTER_SECONDS: Final = 5

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Headers:
    """Immutable, case-insensitive multi-valued headers, in the order received.

    Adapters pass ``(name, value)`` pairs as ``str`` or latin-1 ``bytes`` (the ASGI form).
    """

    # Adapters build Headers on every request, and the protocol then reads only a few of
    # them. So the ASGI form (a list of pairs whose names are lower-case ASCII bytes, as
    # servers send them) is kept as it is, indexed by the raw names, and a value is decoded
    # only when it is read (`items` decodes all of them once). Any other input is decoded
    # and lower-cased up front. Both give the same answers.
    __slots__ = ("_decoded", "_first", "_raw", "_raw_first")

    def __init__(self, items: Iterable[tuple[str | bytes, str | bytes]] = ()) -> None:
        self._raw: tuple[tuple[bytes, str | bytes], ...] | None = None
        self._decoded: tuple[tuple[str, str], ...] | None = None
        # The first value of each name (built from the reversed pairs, so that the first
        # occurrence is the one kept): by raw name over `_raw`, else by decoded name.
        self._raw_first: dict[bytes, str | bytes] = {}
        self._first: dict[str, str] = {}
        if type(items) is list and items:
            try:
                first = dict(reversed(items))
                names = b"".join(first)  # TypeError unless every name is bytes
            except (TypeError, ValueError):  # str names, or not pairs: the general path
                pass
            else:
                if names.isascii() and names.lower() == names:
                    self._raw = tuple(items)
                    self._raw_first = first
                    return
        pairs = []
        for name, value in items:
            if isinstance(name, bytes):
                name = name.decode("latin-1")
            if isinstance(value, bytes):
                value = value.decode("latin-1")
            pairs.append((name.lower(), value))
        self._decoded = tuple(pairs)
        self._first = dict(reversed(pairs))

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of a header, or ``default``."""
        if self._raw is None:
            return self._first.get(name.lower(), default)
        key = _RAW_NAMES.get(name)
        if key is None:
            key = _raw_name(name)
            if key is None:
                return default  # not latin-1: no such header
        value = self._raw_first.get(key)
        if value is None:
            return default
        return value.decode("latin-1") if isinstance(value, bytes) else value

    def get_all(self, name: str) -> list[str]:
        """Every value of a header, in order (repeated headers are not joined)."""
        key = name.lower()
        return [value for item_name, value in self.items() if item_name == key]

    def items(self) -> tuple[tuple[str, str], ...]:
        """All ``(lower-case name, value)`` pairs."""
        decoded = self._decoded
        if decoded is None:
            decoded = self._decoded = tuple(
                (n.decode("latin-1"), v.decode("latin-1") if isinstance(v, bytes) else v)
                for n, v in self._raw or ()
            )
        return decoded

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if self._raw is None:
            return name.lower() in self._first
        key = _RAW_NAMES.get(name) or _raw_name(name)
        return key is not None and key in self._raw_first

    def __len__(self) -> int:
        return len(self._raw if self._raw is not None else self.items())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and other.items() == self.items()

    def __hash__(self) -> int:
        return hash(self.items())

    def __repr__(self) -> str:
        return f"Headers({list(self.items())!r})"


#: Header names as `Headers.get` looks them up in raw ASGI headers (lower-case latin-1
#: bytes), for the names asked for; bounded, since any caller may ask for any name.
_RAW_NAMES: dict[str, bytes] = {}


def _raw_name(name: str) -> bytes | None:
    try:
        key = name.lower().encode("latin-1")
    except UnicodeEncodeError:
        return None
    if len(_RAW_NAMES) < 256:
        _RAW_NAMES[name] = key
    return key


def content_length_exceeds(headers: Headers, limit: int) -> bool:
    """Whether ``Content-Length`` declares a body longer than ``limit`` bytes.

    The one answer to "may this body be left unread?": an adapter that gets True refuses the
    body before any of it arrives (it passes an empty body, and the core answers the request
    as oversized, by this same test). A missing or malformed value (``abc``, ``-1``,
    ``1, 2``) declares nothing: the HTTP server framed the body (and answers 400 to those
    values itself), and reading stops at the limit anyway. Never raises.
    """
    value = headers.get("content-length")
    if value is None:
        return False
    value = value.strip(" \t")
    if not value.isascii() or not value.isdigit():  # empty, a sign, a list, a non-ASCII digit
        return False
    digits = value.lstrip("0")
    # Over 18 digits (an exabyte) is over any limit, and spares int() a 5,000-digit string,
    # which Python refuses (sys.int_max_str_digits).
    return len(digits) > 18 or int(digits or "0") > limit


class HttpRequest(msgspec.Struct, frozen=True):
    """One HTTP request, as the adapter received it, relative to where the core is mounted.

    A frozen msgspec Struct (one per request: several times cheaper to build than a frozen
    dataclass)."""

    method: str
    """The HTTP method, upper-case (``GET``, ``POST``...)."""
    path: str
    """The path below the mount point, starting with ``/`` (``/`` for the mount itself), still
    percent-encoded as it arrived (ASGI ``raw_path``), so that an id containing ``%2F`` is
    not mistaken for two path segments."""
    query: str = ""
    """The raw, still percent-encoded query string, without the ``?``."""
    headers: Headers = msgspec.field(default_factory=Headers)
    """The request headers."""
    body: bytes = b""
    """The body. Adapters read at most ``max_body_size + 1`` bytes, so that an oversized body
    is answered by the core, in the protocol's order of checks, without reading it all; and
    none of a body whose ``Content-Length`` is over the limit (`content_length_exceeds`):
    the core refuses that one by its header, as if it had been read."""
    identity: Any = None
    """The authenticated caller, as set by upstream middleware; ``None`` for anonymous."""
    base_url: str | None = None
    """Public URL of the mount point for this request (per-request override), or ``None``."""
    metadata: Mapping[str, Any] = msgspec.field(default_factory=lambda: _EMPTY)
    """Per-request metadata set by upstream middleware (merged over the server's)."""
    peer_certificate: bytes | None = None
    """The client's TLS certificate (DER), when the connection is TLS, the client presented
    one and the server lets the adapter see it (aiohttp does; an ASGI server through the
    ``tls`` extension): for an mTLS verifier (`a2a_core.auth`). Checking it against a
    trusted CA is the TLS server's job (its ``ssl`` context); ``None`` otherwise."""
    peer: str | None = None
    """The client's address (an IP address, without the port) as the HTTP server reports it:
    what per-client limits count by (``StreamOptions.max_streams_per_peer``). Behind a
    reverse proxy it is the proxy's, unless the server takes the client's from the proxy's
    headers (uvicorn's ``forwarded_allow_ips``); ``None`` when unknown (no per-client limit
    applies)."""

    def query_params(self) -> list[tuple[str, str]]:
        """The decoded query parameters in order (repeated names kept)."""
        if not self.query:
            return []  # most requests: skip parse_qsl's argument coercion
        return parse_qsl(self.query, keep_blank_values=True)


class HttpResponse(msgspec.Struct, frozen=True, gc=False):
    """A complete response: status, headers and body.

    A frozen msgspec Struct, untracked by the garbage collector (it holds only a status,
    string pairs, bytes and a refusal)."""

    status: int
    """The HTTP status code."""
    headers: tuple[tuple[str, str], ...] = ()
    """Header pairs, in order; names lower-case."""
    body: bytes = b""
    """The body (empty for 304, HEAD and similar)."""
    refusal: Refusal | None = None
    """Why the request was refused, when this answers a request that did not become a call
    (`ServerProtocol.receive_request`, `ServerProtocol.reply_auth_failure`); ``None`` for
    anything else (the card, a 304, a notification's 204, every reply to a call). Adapters
    ignore it; the server tells its observer."""
    trailers: tuple[tuple[str, str], ...] = ()
    """Trailer pairs, sent after the body: only a gRPC reply has them (``grpc-status``,
    ``grpc-message``, ``grpc-status-details-bin``; see `a2a_core._protocol.grpc.binding`)."""

    def header(self, name: str) -> str | None:
        """The first value of a header, for tests and adapters."""
        key = name.lower()
        return next((value for item, value in self.headers if item == key), None)

    # A reply is what goes on the wire: two with the same status, headers and body are the
    # same reply, whatever the server was told of why (``refusal`` is for its observer).
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HttpResponse):
            return NotImplemented
        return (
            self.status == other.status
            and self.headers == other.headers
            and self.body == other.body
            and self.trailers == other.trailers
        )

    def __hash__(self) -> int:
        return hash((self.status, self.headers, self.body, self.trailers))


@dataclass(frozen=True, slots=True)
class SseResponse:
    """A Server-Sent Events response: the status, headers, then frames as they are produced.

    Each item of ``frames`` is ready to write as it is: one or more complete SSE frames, or a
    piece of a frame larger than about 64 KiB (written in several items, so that for a
    client that does not read a transport buffers a piece, not the whole frame). A gRPC
    stream's frames are not cut: a big message comes as its 5-byte head, then its payload as
    one item (`EventStream.whole_frames`). The stream ends when the iterator does. Adapters
    write every item and flush; when the client goes away they stop iterating, and in any
    case they close the response (`aclose`) once done with it, which never affects the task.
    """

    status: int
    """The HTTP status code (200)."""
    headers: tuple[tuple[str, str], ...]
    """Header pairs; names lower-case."""
    frames: AsyncIterator[bytes]
    """The frames, as bytes."""
    on_close: Callable[[], None] | None = field(default=None, compare=False)
    """Called when the response is closed (at every `aclose`, so it must not mind a second
    call), whether or not its frames were ever read: what the server holds for an open
    stream (its client's stream slot) is given back there."""

    def header(self, name: str) -> str | None:
        """The first value of a header."""
        key = name.lower()
        return next((value for item, value in self.headers if item == key), None)

    async def aclose(self) -> None:
        """Close the frames: an async generator (the server's own streams) is closed, which
        ends its work (a follower of the task's event log) at once; an iterator without
        ``aclose`` is left alone; then ``on_close`` runs. Idempotent, and safe after the
        frames ran out."""
        try:
            aclose = getattr(self.frames, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            if self.on_close is not None:
                self.on_close()
