"""Why a request was answered without becoming a call: the `Refusal` value.

The public face of ``a2a_core._protocol.refusal``: import these names from here.
"""

from a2a_core._protocol.refusal import (
    Refusal,
    RefusedAt,
)

__all__ = [
    "Refusal",
    "RefusedAt",
]
