"""``A2A-Extensions`` negotiation (L1, pure).

The public face of ``a2a_core.extensions``: import these names from here.
"""

from a2a_core._protocol.extensions import (
    HEADER,
    LEGACY_HEADER,
    activate_extensions,
    extension_response_headers,
    requested_extensions,
)

__all__ = [
    "HEADER",
    "LEGACY_HEADER",
    "activate_extensions",
    "extension_response_headers",
    "requested_extensions",
]
