"""``A2A-Version`` negotiation (L1, pure).

The client names the protocol version it speaks in the ``A2A-Version`` header or, failing
that, in an ``A2A-Version`` query parameter. Only Major.Minor counts (``1.0.1`` is ``1.0``).
A missing or empty value means ``0.3``, the last version without the header. A version the
server does not serve is answered with VersionNotSupportedError (-32009), naming the
requested and the supported versions.

By default the header validates but does not veto a dialect: JSON-RPC method names say which
dialect a request uses (the two sets are disjoint), and clients exist that send v1.0 methods
without the header (spec-decisions A1). ``strict_versions`` turns the veto on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from a2a_core._protocol.errors import VersionNotSupportedError
from a2a_core._protocol.http import HttpRequest

__all__ = [
    "DEFAULT_VERSIONS",
    "HEADER",
    "LEGACY_VERSION",
    "NegotiatedVersion",
    "negotiate_version",
    "normalize_version",
]

HEADER: Final = "a2a-version"
#: What a request without a version speaks.
LEGACY_VERSION: Final = "0.3"
#: The versions served unless configured otherwise.
DEFAULT_VERSIONS: Final = ("0.3", "1.0")

_VERSION: Final = re.compile(r"\s*v?(\d{1,4})(?:\.(\d{1,4}))?(?:\.\d{1,9})?\s*", re.IGNORECASE)


def normalize_version(value: str) -> str | None:
    """``"1.0.1"`` -> ``"1.0"``, ``"1"`` -> ``"1.0"``; ``None`` when it is not a version."""
    if value in _NORMALIZED:
        return _NORMALIZED[value]
    match = _VERSION.fullmatch(value)
    result = None if match is None else f"{int(match.group(1))}.{int(match.group(2) or 0)}"
    # Every request names its version: remember the few short spellings clients send, in a
    # table bounded in entries and key length, so that no client can grow it.
    if len(value) <= 16 and len(_NORMALIZED) < 64:
        _NORMALIZED[value] = result
    return result


_NORMALIZED: dict[str, str | None] = {}


@dataclass(frozen=True, slots=True)
class NegotiatedVersion:
    """The outcome of negotiation: the version to serve and whether the client named it."""

    version: str
    """Major.Minor; ``0.3`` when the client sent nothing."""
    explicit: bool
    """The client sent a non-empty version (header or query parameter)."""


def _requested(request: HttpRequest) -> str:
    header = request.headers.get(HEADER)
    if header is not None and header.strip():
        return header.strip()
    for name, value in request.query_params():
        if name.lower() == HEADER and value.strip():
            return value.strip()
    return ""


def negotiate_version(request: HttpRequest, supported: Iterable[str]) -> NegotiatedVersion:
    """The version a request speaks; raise VersionNotSupportedError when it is not served.

    A request that names no version speaks 0.3. If 0.3 is not served, that is not an error
    here: such a request may still call a v1.0 method, and the dialect check that follows
    decides (spec-decisions A1).
    """
    raw = _requested(request)
    if not raw:
        return NegotiatedVersion(LEGACY_VERSION, explicit=False)
    served = tuple(supported)
    version = normalize_version(raw)
    if version is None or version not in served:
        shown = raw if len(raw) <= 32 else raw[:32] + "..."
        raise VersionNotSupportedError(
            f"A2A-Version {shown!r} is not supported; supported: {', '.join(served)}",
            data={"requestedVersion": shown, "supportedVersions": list(served)},
            metadata={"requestedVersion": shown, "supportedVersions": ",".join(served)},
        )
    return NegotiatedVersion(version, explicit=True)
