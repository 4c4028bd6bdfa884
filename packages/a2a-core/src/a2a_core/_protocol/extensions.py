"""``A2A-Extensions`` negotiation (L1, pure).

Clients list the extension URIs they want active in ``A2A-Extensions`` (v1.0) or
``X-A2A-Extensions`` (v0.3), as repeated headers or comma-separated lists. The server
activates the ones it declares and ignores the rest; if it declares an extension
``required`` that the client did not ask for, the request fails with
ExtensionSupportRequiredError (-32008) naming what is missing. The activated URIs are echoed
under both header names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from a2a_core._protocol.errors import ExtensionSupportRequiredError
from a2a_core._protocol.http import Headers
from a2a_core.types import AgentExtension

__all__ = [
    "HEADER",
    "LEGACY_HEADER",
    "activate_extensions",
    "extension_response_headers",
    "requested_extensions",
]

HEADER: Final = "a2a-extensions"
LEGACY_HEADER: Final = "x-a2a-extensions"
_MAX_URIS: Final = 64  # more than any real client sends; bounds the work per request


def requested_extensions(headers: Headers) -> tuple[str, ...]:
    """The URIs a request asks for, from both header names, in order, without duplicates."""
    if HEADER not in headers and LEGACY_HEADER not in headers:
        return ()  # most requests
    seen: dict[str, None] = {}
    for name in (HEADER, LEGACY_HEADER):
        for value in headers.get_all(name):
            for uri in value.split(","):
                uri = uri.strip()
                if uri and len(seen) < _MAX_URIS:
                    seen.setdefault(uri, None)
    return tuple(seen)


def activate_extensions(
    requested: Sequence[str], declared: Sequence[AgentExtension]
) -> tuple[str, ...]:
    """The declared URIs the client asked for; raise -32008 if a required one is missing."""
    if not declared:
        return ()  # the common case, on every request: nothing to activate or require
    wanted = set(requested)
    missing = [ext.uri for ext in declared if ext.required and ext.uri not in wanted]
    if missing:
        raise ExtensionSupportRequiredError(
            "Required extension(s) not requested: " + ", ".join(missing),
            data={"requiredExtensions": missing},
            metadata={"requiredExtensions": ",".join(missing)},
        )
    declared_uris = {ext.uri for ext in declared}
    return tuple(uri for uri in requested if uri in declared_uris)


def extension_response_headers(activated: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """The headers that echo the activated URIs (both names; none when nothing is active)."""
    if not activated:
        return ()
    value = ", ".join(activated)
    return ((HEADER, value), (LEGACY_HEADER, value))
