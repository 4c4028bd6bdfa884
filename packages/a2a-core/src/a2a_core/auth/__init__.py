"""Authentication driven by the agent card (L2): one verifier per declared scheme name.

``A2AServer(..., authenticators={"bearer": JwtBearer(...), "key": ApiKey.of(...)})``
enforces the card's ``securityRequirements`` on every JSON-RPC and REST call (the public
card stays public) before anything of the request is read: 401 with a challenge per
scheme, 403 for valid credentials short of a scope. The verified `AuthenticatedIdentity`
is the call's identity, and what task ownership keys on. See ``docs/security.md``.

The pure parts (reading credentials, challenges, the identity value) are in
`a2a_core.security`; the JWT verifiers need the ``a2aserve-core[auth]`` extra and are imported
from `a2a_core.auth.jwt` and `a2a_core.auth.oauth` (re-exported here when it is installed).
"""

from __future__ import annotations

from a2a_core._protocol.security import AuthenticatedIdentity, CredentialsRejected, SchemeSpec
from a2a_core.auth._verify import (
    ApiKey,
    Authenticator,
    AuthFailure,
    CallbackResult,
    ClientCertificate,
    HttpBasic,
    Verifier,
)

__all__ = [
    "ApiKey",
    "AuthFailure",
    "AuthenticatedIdentity",
    "Authenticator",
    "CallbackResult",
    "ClientCertificate",
    "CredentialsRejected",
    "HttpBasic",
    "SchemeSpec",
    "Verifier",
]

try:  # the ``auth`` extra (PyJWT)
    from a2a_core.auth.jwt import Jwks, JwtBearer, StaticKeys
    from a2a_core.auth.oauth import Discovery, TokenIntrospection
except ImportError:  # pragma: no cover - exercised without the extra only
    pass
else:
    __all__ += ["Discovery", "Jwks", "JwtBearer", "StaticKeys", "TokenIntrospection"]
