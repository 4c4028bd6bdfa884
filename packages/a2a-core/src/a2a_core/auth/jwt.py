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

import base64
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final, Protocol

import anyio
import httpx
import jwt
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from a2a_core.http import HttpRequest
from a2a_core.security import AuthenticatedIdentity, CredentialsRejected, SchemeSpec

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "Jwks",
    "JwtBearer",
    "KeySource",
    "StaticKeys",
    "fetch_json",
    "scopes_of",
]

logger = logging.getLogger("a2a_core.auth")

#: The default allow-list: every asymmetric JWS algorithm PyJWT verifies.
ASYMMETRIC_ALGORITHMS: Final = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
_HMAC: Final = frozenset({"HS256", "HS384", "HS512"})
# The JWK key type each algorithm needs: a key of another type is never tried.
_KEY_TYPES: Final = {
    **dict.fromkeys(("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"), "RSA"),
    **dict.fromkeys(("ES256", "ES384", "ES512"), "EC"),
    "EdDSA": "OKP",
    **dict.fromkeys(_HMAC, "oct"),
}
#: Largest key set or metadata document read (a JWKS is a few KiB).
MAX_DOCUMENT_BYTES: Final = 1024 * 1024


async def fetch_json(
    url: str, *, timeout: float, transport: httpx.AsyncBaseTransport | None = None
) -> Any:
    """GET a JSON document (a JWKS, discovery metadata), bounded in time and size."""
    async with (
        httpx.AsyncClient(timeout=timeout, transport=transport, follow_redirects=False) as client,
        client.stream("GET", url, headers={"accept": "application/json"}) as response,
    ):
        response.raise_for_status()
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise ValueError(f"{url}: document over {MAX_DOCUMENT_BYTES} bytes")
    return httpx.Response(200, content=bytes(body)).json()


class KeySource(Protocol):
    """Where a token's verification key comes from."""

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The key for ``kid`` usable with ``algorithm``; raises `CredentialsRejected`."""
        ...


class _KeyRing:
    """JWKs by ``kid``, each turned into a PyJWK per algorithm on first use."""

    def __init__(self, jwks: Iterable[Mapping[str, Any]], *, allow_symmetric: bool) -> None:
        self.keys: list[Mapping[str, Any]] = []
        for jwk in jwks:
            if not isinstance(jwk, Mapping) or not isinstance(jwk.get("kty"), str):
                continue
            if jwk["kty"] == "oct" and not allow_symmetric:
                continue  # a secret in a public key set: never trusted
            if jwk.get("use", "sig") != "sig":
                continue
            self.keys.append(jwk)
        self._prepared: dict[tuple[int, str], jwt.PyJWK | None] = {}

    def find(self, kid: str | None, algorithm: str) -> jwt.PyJWK | None:
        kty = _KEY_TYPES.get(algorithm)
        candidates = [
            i
            for i, jwk in enumerate(self.keys)
            if jwk["kty"] == kty
            and (kid is None or jwk.get("kid") == kid)
            and jwk.get("alg", algorithm) == algorithm
        ]
        if len(candidates) != 1:
            return None  # unknown kid, or no kid and several keys that could fit
        index = candidates[0]
        slot = (index, algorithm)
        if slot not in self._prepared:
            try:
                self._prepared[slot] = jwt.PyJWK(dict(self.keys[index]), algorithm=algorithm)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
                self._prepared[slot] = None
        return self._prepared[slot]


class StaticKeys:
    """Fixed verification keys: PEM public keys, cryptography public key objects or JWK
    dicts, by ``kid`` (a key without a kid matches a token without one). HMAC secrets only
    through `StaticKeys.shared_secret`, so that a public key is never taken for a secret."""

    def __init__(self, keys: Mapping[str, Any] | Sequence[Any]) -> None:
        items = keys.items() if isinstance(keys, Mapping) else [(None, k) for k in keys]
        self._ring = _KeyRing([_to_jwk(key, kid) for kid, key in items], allow_symmetric=False)
        self.symmetric = False

    @classmethod
    def shared_secret(cls, secret: bytes, *, kid: str | None = None) -> StaticKeys:
        """An HMAC secret (HS256/384/512), at least 32 bytes (RFC 7518 §3.2)."""
        if len(secret) < 32:
            raise ValueError("an HMAC secret must be at least 32 bytes")
        self = cls([])
        k = base64.urlsafe_b64encode(secret).rstrip(b"=").decode()
        jwk: dict[str, Any] = {"kty": "oct", "k": k}
        if kid is not None:
            jwk["kid"] = kid
        self._ring = _KeyRing([jwk], allow_symmetric=True)
        self.symmetric = True
        return self

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The configured key for ``kid``."""
        found = self._ring.find(kid, algorithm)
        if found is None:
            raise CredentialsRejected("The token is signed with an unknown key")
        return found


def _to_jwk(key: Any, kid: str | None) -> Mapping[str, Any]:
    if isinstance(key, Mapping):
        jwk = dict(key)
    else:
        if isinstance(key, str | bytes):
            from cryptography.hazmat.primitives.serialization import load_pem_public_key

            key = load_pem_public_key(key.encode() if isinstance(key, str) else key)
        for algorithm in (RSAAlgorithm, ECAlgorithm, OKPAlgorithm):
            try:
                jwk = algorithm.to_jwk(key, as_dict=True)
                break
            except (jwt.InvalidKeyError, TypeError, ValueError, AttributeError):
                continue
        else:
            raise ValueError(f"not a public key: {type(key).__name__}")
        for private in ("d", "p", "q", "dp", "dq", "qi"):
            jwk.pop(private, None)  # a private key given by mistake: keep its public half
    if kid is not None:
        jwk["kid"] = kid
    return jwk


class Jwks:
    """A JWKS URL, fetched asynchronously (httpx) and cached.

    Fetched at first use and again after ``max_age`` seconds; a token whose ``kid`` is not
    in the cached set triggers a fetch (key rotation), but at most one per
    ``min_refresh_interval`` seconds, so tokens with made-up kids cannot make the server
    hammer the issuer. Concurrent requests share one fetch. A failed fetch keeps the keys
    it had (and is logged: a warning, the token answered 401)."""

    def __init__(
        self,
        url: str,
        *,
        max_age: float = 3600.0,
        min_refresh_interval: float = 30.0,
        timeout: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url
        self.max_age = max_age
        self.min_refresh_interval = min_refresh_interval
        self.timeout = timeout
        self.transport = transport
        self._ring = _KeyRing([], allow_symmetric=False)
        self._fetched_at: float | None = None
        self._failed_at: float | None = None
        self._kid_refresh_at: float | None = None
        self._generation = 0
        self._lock = anyio.Lock()
        #: How many times the set was fetched (for tests and metrics).
        self.fetches = 0

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The key for ``kid``, fetching the set when stale or when ``kid`` is new."""
        fetched = self._fetched_at
        if fetched is None or time.monotonic() - fetched > self.max_age:
            await self._refresh(self._generation, on_unknown_kid=False)
        found = self._ring.find(kid, algorithm)
        if found is None and self._may_refresh():
            await self._refresh(self._generation, on_unknown_kid=True)
            found = self._ring.find(kid, algorithm)
        if found is None:
            if self._fetched_at is None:
                raise CredentialsRejected("The issuer's keys are unavailable")
            raise CredentialsRejected("The token is signed with an unknown key")
        return found

    def _may_refresh(self) -> bool:
        last = self._kid_refresh_at
        return last is None or time.monotonic() - last >= self.min_refresh_interval

    async def _refresh(self, generation: int, *, on_unknown_kid: bool) -> None:
        """Fetch the set, unless another request did while this one waited for the lock
        (``generation`` is the attempt count it saw). Only fetches for an unknown kid count
        against ``min_refresh_interval``; a failed fetch waits as long before the next."""
        async with self._lock:
            if self._generation != generation:
                return
            self._generation += 1
            now = time.monotonic()
            if on_unknown_kid:
                self._kid_refresh_at = now
            elif self._failed_at is not None and now - self._failed_at < self.min_refresh_interval:
                return
            try:
                document = await fetch_json(
                    self.url, timeout=self.timeout, transport=self.transport
                )
                keys = document.get("keys") if isinstance(document, dict) else None
                if not isinstance(keys, list):
                    raise ValueError("no 'keys' list")
            except Exception as exc:
                self._failed_at = time.monotonic()
                logger.warning("could not fetch the JWKS at %s: %s", self.url, exc)
                return
            self._ring = _KeyRing(keys, allow_symmetric=False)
            self._fetched_at = time.monotonic()
            self._failed_at = None
            self.fetches += 1


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The scopes of a token: ``scope`` (space-separated, RFC 8693/9068) or ``scp`` (a
    list, or a space-separated string, as some issuers send)."""
    for name in ("scope", "scp"):
        value = claims.get(name)
        if isinstance(value, str):
            return frozenset(value.split())
        if isinstance(value, list):
            return frozenset(s for s in value if isinstance(s, str))
    return frozenset()


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
        bad = sorted({a for a in algorithms if a.lower() == "none" or a not in _KEY_TYPES})
        if bad:
            raise ValueError(f"algorithms not accepted: {bad}")
        symmetric = bool(_HMAC & set(algorithms))
        if symmetric and not (isinstance(keys, StaticKeys) and keys.symmetric):
            raise ValueError("HMAC algorithms need keys=StaticKeys.shared_secret(...)")
        if symmetric and len(set(algorithms) - _HMAC):
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
            from a2a_core.auth.oauth import Discovery

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
