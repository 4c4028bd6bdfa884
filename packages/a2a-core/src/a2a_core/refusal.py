"""What a request answered without becoming a call was refused for (L1, pure).

The public face of ``a2a_core.refusal``: import these names from here.
"""

from a2a_core._protocol.refusal import (
    Refusal,
    RefusedAt,
    refusal_of,
)

__all__ = [
    "Refusal",
    "RefusedAt",
    "refusal_of",
]
