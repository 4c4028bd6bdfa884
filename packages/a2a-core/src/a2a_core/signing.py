"""Signed agent cards (L1, pure): JWS over the RFC 8785 form of the card (v1.0 §8.4).

The public face of ``a2a_core.signing``: import these names from here.
"""

from a2a_core._protocol.signing import (
    CardSignatureError,
    CardSigningKey,
    VerificationKey,
    canonical_card_payload,
    jwks_document,
    sign_card,
    verify_agent_card,
)

__all__ = [
    "CardSignatureError",
    "CardSigningKey",
    "VerificationKey",
    "canonical_card_payload",
    "jwks_document",
    "sign_card",
    "verify_agent_card",
]
