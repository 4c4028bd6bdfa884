"""``A2A-Version`` negotiation (L1, pure).

The public face of ``a2a_core.versions``: import these names from here.
"""

from a2a_core._protocol.versions import (
    DEFAULT_VERSIONS,
    HEADER,
    LEGACY_VERSION,
    NegotiatedVersion,
    negotiate_version,
    normalize_version,
)

__all__ = [
    "DEFAULT_VERSIONS",
    "HEADER",
    "LEGACY_VERSION",
    "NegotiatedVersion",
    "negotiate_version",
    "normalize_version",
]
