"""The typed, version-neutral operation that L1 hands to the runtime: :class:`Call`.

The public face of ``a2a_core.call``: import these names from here.
"""

from a2a_core._protocol.call import (
    AUTH_METADATA_KEY,
    RESERVED_METADATA_KEYS,
    TENANT_METADATA_KEY,
    Binding,
    Call,
    CallRequest,
    merge_metadata,
)

__all__ = [
    "AUTH_METADATA_KEY",
    "RESERVED_METADATA_KEYS",
    "TENANT_METADATA_KEY",
    "Binding",
    "Call",
    "CallRequest",
    "merge_metadata",
]
