"""The card's security, as pure values (L1): schemes, requirements, credentials, challenges.

The public face of ``a2a_core.security``: import these names from here.
"""

from a2a_core._protocol.security import (
    MAX_CREDENTIAL_LENGTH,
    AuthenticatedIdentity,
    CredentialsRejected,
    SchemeKind,
    SchemeSpec,
    SecurityPolicy,
    basic_credentials,
    bearer_token,
)

__all__ = [
    "MAX_CREDENTIAL_LENGTH",
    "AuthenticatedIdentity",
    "CredentialsRejected",
    "SchemeKind",
    "SchemeSpec",
    "SecurityPolicy",
    "basic_credentials",
    "bearer_token",
]
