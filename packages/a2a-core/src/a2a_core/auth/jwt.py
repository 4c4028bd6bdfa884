"""Bearer JWTs (RFC 7519/9068): signatures against a JWKS or fixed keys, and the claims.

`JwtBearer` verifies ``Authorization: Bearer <jwt>`` for an ``http`` bearer scheme, and for
``oauth2`` and ``openIdConnect`` schemes, whose keys and issuer it can find from the card's
discovery URL (`a2a_core.auth.oauth`). The algorithm comes from an explicit allow-list
(never ``none``; HMAC only with a shared secret given as such, so a public key can never
be used as an HMAC secret); ``iss``, ``aud``, ``exp`` and ``nbf`` are checked with a leeway;
the subject and scopes become the `AuthenticatedIdentity`. Keys are fetched with httpx,
asynchronously, cached, and fetched again on an unknown ``kid`` at a bounded rate
(`Jwks`). Requires the ``a2aserve-core[auth]`` extra (PyJWT with its crypto backend).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, Final

import jwt

from a2a_core._protocol.http import HttpRequest
from a2a_core._protocol.security import AuthenticatedIdentity, CredentialsRejected, SchemeSpec
from a2a_core.auth._keys import (
    ASYMMETRIC_ALGORITHMS,
    HMAC_ALGORITHMS,
    KEY_TYPES,
    Jwks,
    KeySource,
    StaticKeys,
    fetch_json,
    scopes_of,
)
from a2a_core.auth.oauth import Discovery

logger = logging.getLogger("a2a_core.auth")

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "Jwks",
    "JwtBearer",
    "KeySource",
    "StaticKeys",
    "fetch_json",
    "scopes_of",
]

#: The claims that are dates (RFC 7519 §4.1.4-6), which must be JSON numbers.
_NUMERIC_DATES: Final = ("exp", "nbf", "iat")
_REASONS: Final[tuple[tuple[type[Exception], str], ...]] = (
    (jwt.ExpiredSignatureError, "The token has expired"),
    (jwt.ImmatureSignatureError, "The token is not valid yet"),
    (jwt.InvalidAudienceError, "The token is not meant for this agent"),
    (jwt.InvalidIssuerError, "The token's issuer is not trusted"),
    (jwt.InvalidSignatureError, "The token's signature does not verify"),
    (jwt.InvalidAlgorithmError, "The token's algorithm is not accepted"),
)


class JwtBearer:
    """``Authorization: Bearer <jwt>``, verified by signature and claims.

    Parameters:
        audience: The ``aud`` this agent answers to (one or several); always checked.
        issuer: The trusted ``iss`` (one or several). For ``oauth2``/``openIdConnect``
            schemes it may be left out: the discovery document's ``issuer`` is used.
        jwks_url: Where the issuer's keys are (a `Jwks` with its defaults).
        keys: A `KeySource` instead (`Jwks` with other settings, `StaticKeys`). With
            neither, an ``oauth2``/``openIdConnect`` scheme's discovery URL gives the JWKS.
        algorithms: The accepted ``alg`` values; ``none`` never is, HMAC only with
            ``StaticKeys.shared_secret``.
        leeway: Seconds of clock skew allowed on ``exp``, ``nbf`` and ``iat``.
        required_claims: Claims a token must carry (``exp`` and ``sub`` by default; ``iss``
            and ``aud`` are always required).
        introspection: For ``oauth2`` schemes issuing opaque tokens: a token that is not
            a JWT is sent to this RFC 7662 endpoint (`a2a_core.auth.oauth.TokenIntrospection`).
        cache_size: Verified tokens remembered (by their SHA-256), so that a client that
            sends the same token again costs a hash, not a signature check (0: none). An
            entry lasts until the token's ``exp`` and at most ``cache_seconds``; the cache
            holds at most ``cache_size`` entries and ``cache_bytes`` bytes of tokens.
        cache_seconds: The longest a verified token is trusted without a new check: also
            how long a key removed from the JWKS may still vouch for tokens it signed.
    """

    def __init__(
        self,
        *,
        audience: str | Sequence[str],
        issuer: str | Sequence[str] | None = None,
        jwks_url: str | None = None,
        keys: KeySource | None = None,
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
        leeway: float = 30.0,
        required_claims: Sequence[str] = ("exp", "sub"),
        introspection: Any = None,
        cache_size: int = 4096,
        cache_seconds: float = 300.0,
        cache_bytes: int = 8 << 20,
    ) -> None:
        if jwks_url is not None and keys is not None:
            raise ValueError("give jwks_url or keys, not both")
        bad = sorted({a for a in algorithms if a.lower() == "none" or a not in KEY_TYPES})
        if bad:
            raise ValueError(f"algorithms not accepted: {bad}")
        symmetric = bool(HMAC_ALGORITHMS & set(algorithms))
        if symmetric and not (isinstance(keys, StaticKeys) and keys.symmetric):
            raise ValueError("HMAC algorithms need keys=StaticKeys.shared_secret(...)")
        if symmetric and len(set(algorithms) - HMAC_ALGORITHMS):
            raise ValueError("do not mix HMAC and public-key algorithms for one scheme")
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        if not self.audience:
            raise ValueError("an audience is required")
        self.issuer: list[str] | None = (
            None if issuer is None else [issuer] if isinstance(issuer, str) else list(issuer)
        )
        self.keys: KeySource | None = Jwks(jwks_url) if jwks_url is not None else keys
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.required_claims = tuple(dict.fromkeys(("iss", "aud", *required_claims)))
        self.introspection = introspection
        self._discovered: dict[str, Any] = {}
        self._cache = _VerifiedTokens(cache_size, cache_seconds, cache_bytes)

    def check_scheme(self, scheme: SchemeSpec) -> None:
        """Bearer ``http``, ``oauth2`` and ``openIdConnect`` schemes; without keys, one
        with a discovery URL; without an issuer, the same."""
        if not scheme.uses_bearer:
            raise ValueError(f"JwtBearer cannot verify scheme {scheme.name!r} ({scheme.kind})")
        if (self.keys is None or self.issuer is None) and not scheme.discovery_url:
            raise ValueError(
                f"JwtBearer for {scheme.name!r} needs issuer= and jwks_url= or keys= (only "
                "oauth2/openIdConnect schemes with a discovery URL can find them)"
            )
        if scheme.discovery_url and (self.keys is None or self.issuer is None):
            self._discovered[scheme.name] = Discovery(scheme.discovery_url)

    async def verify(
        self, request: HttpRequest, scheme: SchemeSpec
    ) -> AuthenticatedIdentity | None:
        """The token's subject, issuer and scopes; raises `CredentialsRejected`."""
        token = scheme.credential(request)
        if token is None:
            return None
        cached = self._cache.get(scheme.name, token, self.leeway)
        if cached is not None:
            return cached
        if token.count(".") != 2:
            if self.introspection is not None:
                identity: AuthenticatedIdentity = await self.introspection.introspect(
                    token, scheme, self._discovered.get(scheme.name)
                )
                return identity
            raise CredentialsRejected("The bearer token is not a JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise CredentialsRejected("Malformed token") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            raise CredentialsRejected("The token's algorithm is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise CredentialsRejected("Malformed token")
        keys, issuer = await self._keys_and_issuer(scheme)
        key = await keys.key(kid, algorithm)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=issuer,
                leeway=self.leeway,
                options={"require": list(self.required_claims), "strict_aud": False},
            )
        except jwt.MissingRequiredClaimError as exc:
            raise CredentialsRejected(f"The token lacks the {exc.claim!r} claim") from None
        except jwt.InvalidTokenError as exc:
            message = next((m for t, m in _REASONS if isinstance(exc, t)), "Invalid token")
            raise CredentialsRejected(message) from None
        for name in _NUMERIC_DATES:
            # PyJWT takes int("9999999999") for a date; RFC 7519 §2 NumericDate is a number.
            value = claims.get(name, 0)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise CredentialsRejected(f"The token's {name!r} claim is not a number")
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise CredentialsRejected("The token names no subject")
        iss = claims.get("iss")
        verified = AuthenticatedIdentity(
            subject=subject,
            scheme=scheme.name,
            issuer=iss if isinstance(iss, str) else None,
            scopes=scopes_of(claims),
            claims=MappingProxyType(claims),
        )
        self._cache.put(scheme.name, token, verified, claims)
        return verified

    async def _keys_and_issuer(self, scheme: SchemeSpec) -> tuple[KeySource, list[str]]:
        discovery = self._discovered.get(scheme.name)
        if discovery is None:
            assert self.keys is not None
            assert self.issuer is not None
            return self.keys, self.issuer
        metadata = await discovery.metadata()
        keys = self.keys if self.keys is not None else metadata.jwks
        if keys is None:
            raise CredentialsRejected("The issuer publishes no keys")
        return keys, self.issuer if self.issuer is not None else [metadata.issuer]


#: A remembered token: its identity, trusted until, not before, and the token's length.
_Entry = tuple[AuthenticatedIdentity, float, float, int]


class _VerifiedTokens:
    """Tokens verified lately, by scheme and SHA-256, with their identity (bounded LRU).

    Bounded in entries and in the bytes of the tokens they stand for (a client may send
    big tokens); each entry is trusted until the token's ``exp`` (with the leeway) and at
    most ``seconds`` after it was verified, and not before its ``nbf``."""

    def __init__(self, size: int, seconds: float, max_bytes: int) -> None:
        self._size = size
        self._seconds = seconds
        self._max_bytes = max_bytes
        self._bytes = 0
        self._entries: OrderedDict[
            tuple[str, bytes], tuple[AuthenticatedIdentity, float, float, int]
        ] = OrderedDict()

    def get(self, scheme: str, token: str, leeway: float) -> AuthenticatedIdentity | None:
        if not self._size:
            return None
        key = (scheme, hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest())
        entry = self._entries.get(key)
        if entry is None:
            return None
        identity, until, not_before, _ = entry
        now = time.time()
        if now >= until + leeway or now < not_before - leeway:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return identity

    def put(
        self, scheme: str, token: str, identity: AuthenticatedIdentity, claims: dict[str, Any]
    ) -> None:
        exp, nbf = claims.get("exp"), claims.get("nbf", 0)
        size = len(token)
        if (
            not self._size
            or not isinstance(exp, int | float)
            or not isinstance(nbf, int | float)
            or size > self._max_bytes
        ):
            return  # a token without an expiry is checked every time
        key = (scheme, hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest())
        self._drop(key)
        until = min(float(exp), time.time() + self._seconds)
        self._entries[key] = (identity, until, float(nbf), size)
        self._bytes += size
        while len(self._entries) > self._size or self._bytes > self._max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)

    def _drop(self, key: tuple[str, bytes]) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry[3]
