"""Authentication driven by the agent card (L2): one verifier per declared scheme name.

``A2AServer(..., authenticators={"bearer": JwtBearer(...), "key": ApiKey.of(...)})``
enforces the card's ``securityRequirements`` on every JSON-RPC and REST call (the public
card stays public) before anything of the request is read: 401 with a challenge per
scheme, 403 for valid credentials short of a scope. The verified `AuthenticatedIdentity`
is the call's identity, and what task ownership keys on. See ``docs/security.md``.

The pure parts (reading credentials, challenges, the identity value) are in
`a2a_core.security`; the JWT verifiers need the ``a2aserve-core[auth]`` extra and are imported
from `a2a_core.auth.jwt` and `a2a_core.auth.oauth`, re-exported here when first used (PyJWT
and the cryptography it loads take a tenth of a second to import, which a server that
verifies no JWT need not pay).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "Discovery",
    "HttpBasic",
    "Jwks",
    "JwtBearer",
    "SchemeSpec",
    "StaticKeys",
    "TokenIntrospection",
    "Verifier",
]

if TYPE_CHECKING:
    from a2a_core.auth.jwt import Jwks, JwtBearer, StaticKeys
    from a2a_core.auth.oauth import Discovery, TokenIntrospection

#: The names of the ``auth`` extra (PyJWT), and the module of each.
_EXTRA: dict[str, str] = {
    "Discovery": "a2a_core.auth.oauth",
    "Jwks": "a2a_core.auth.jwt",
    "JwtBearer": "a2a_core.auth.jwt",
    "StaticKeys": "a2a_core.auth.jwt",
    "TokenIntrospection": "a2a_core.auth.oauth",
}


def __getattr__(name: str) -> Any:
    module = _EXTRA.get(name)
    if module is None:
        raise AttributeError(f"module 'a2a_core.auth' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ImportError(
            f"a2a_core.auth.{name} needs the auth extra of a2aserve-core: "
            "pip install 'PyJWT[crypto]'"
        ) from exc
    globals()[name] = value
    return value
