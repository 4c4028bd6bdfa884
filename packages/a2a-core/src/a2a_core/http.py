"""The HTTP values that adapters exchange with the core: one request shape, two reply shapes.

An adapter turns its framework's request into an :class:`HttpRequest`, hands it to the core,
and writes back whatever it gets: an :class:`HttpResponse` (one body) or an
:class:`SseResponse` (an async iterator of ready-made frames). These are the only shapes an
adapter ever sees, which is what keeps adapters short and alike.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import parse_qsl

from a2a_core._base import fast_frozen_init

__all__ = ["Headers", "HttpRequest", "HttpResponse", "SseResponse"]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Headers:
    """Immutable, case-insensitive multi-valued headers, in the order received.

    Adapters pass ``(name, value)`` pairs as ``str`` or latin-1 ``bytes`` (the ASGI form).
    """

    __slots__ = ("_first", "_items")

    def __init__(self, items: Iterable[tuple[str | bytes, str | bytes]] = ()) -> None:
        # Adapters build Headers on every request: the ASGI form (a list of bytes pairs) is
        # converted in one comprehension, anything else (str pairs, mixed, other iterables)
        # in the general loop.
        pairs: list[tuple[str, str]] | None = None
        if type(items) is list and items and type(items[0][0]) is bytes:
            raw: list[tuple[bytes, bytes]] = items
            try:
                pairs = [(n.decode("latin-1").lower(), v.decode("latin-1")) for n, v in raw]
            except AttributeError:  # a str among the bytes
                pairs = None
        if pairs is None:
            pairs = []
            for name, value in items:
                if isinstance(name, bytes):
                    name = name.decode("latin-1")
                if isinstance(value, bytes):
                    value = value.decode("latin-1")
                pairs.append((name.lower(), value))
        self._items: tuple[tuple[str, str], ...] = tuple(pairs)
        # The first value of each name, for `get` (a request asks for several headers):
        # built from the reversed pairs so that the first occurrence is the one kept.
        self._first: dict[str, str] = dict(reversed(pairs))

    def get(self, name: str, default: str | None = None) -> str | None:
        """The first value of a header, or ``default``."""
        return self._first.get(name.lower(), default)

    def get_all(self, name: str) -> list[str]:
        """Every value of a header, in order (repeated headers are not joined)."""
        key = name.lower()
        return [value for item_name, value in self._items if item_name == key]

    def items(self) -> tuple[tuple[str, str], ...]:
        """All ``(lower-case name, value)`` pairs."""
        return self._items

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._first

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Headers) and other._items == self._items

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"Headers({list(self._items)!r})"


@fast_frozen_init
@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request, as the adapter received it, relative to where the core is mounted."""

    method: str
    """The HTTP method, upper-case (``GET``, ``POST``...)."""
    path: str
    """The path below the mount point, starting with ``/`` (``/`` for the mount itself), still
    percent-encoded as it arrived (ASGI ``raw_path``), so that an id containing ``%2F`` is
    not mistaken for two path segments."""
    query: str = ""
    """The raw, still percent-encoded query string, without the ``?``."""
    headers: Headers = field(default_factory=Headers)
    """The request headers."""
    body: bytes = b""
    """The body. Adapters read at most ``max_body_size + 1`` bytes, so that an oversized body
    is answered by the core, in the protocol's order of checks, without reading it all."""
    identity: Any = None
    """The authenticated caller, as set by upstream middleware; ``None`` for anonymous."""
    base_url: str | None = None
    """Public URL of the mount point for this request (per-request override), or ``None``."""
    metadata: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    """Per-request metadata set by upstream middleware (merged over the server's)."""

    def query_params(self) -> list[tuple[str, str]]:
        """The decoded query parameters in order (repeated names kept)."""
        if not self.query:
            return []  # most requests: skip parse_qsl's argument coercion
        return parse_qsl(self.query, keep_blank_values=True)


@fast_frozen_init
@dataclass(frozen=True, slots=True)
class HttpResponse:
    """A complete response: status, headers and body."""

    status: int
    """The HTTP status code."""
    headers: tuple[tuple[str, str], ...] = ()
    """Header pairs, in order; names lower-case."""
    body: bytes = b""
    """The body (empty for 304, HEAD and similar)."""

    def header(self, name: str) -> str | None:
        """The first value of a header, for tests and adapters."""
        key = name.lower()
        return next((value for item, value in self.headers if item == key), None)


@dataclass(frozen=True, slots=True)
class SseResponse:
    """A Server-Sent Events response: the status, headers, then frames as they are produced.

    Each item of ``frames`` is one or more complete SSE frames, ready to write; the stream ends
    when the iterator does. Adapters write every item and flush; when the client goes away
    they stop iterating and close the iterator (``aclose``), which never affects the task.
    """

    status: int
    """The HTTP status code (200)."""
    headers: tuple[tuple[str, str], ...]
    """Header pairs; names lower-case."""
    frames: AsyncIterator[bytes]
    """The frames, as bytes."""

    def header(self, name: str) -> str | None:
        """The first value of a header."""
        key = name.lower()
        return next((value for item, value in self.headers if item == key), None)
