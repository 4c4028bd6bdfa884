"""Where the JWT verifiers' keys come from, and what the verifiers share (L2, private).

`StaticKeys` (keys given at start-up) and `Jwks` (an issuer's key set, fetched with httpx,
cached, fetched again on an unknown ``kid`` at a bounded rate) are the `KeySource` values
`JwtBearer` (``jwt``) verifies signatures with; `Discovery` (``oauth``) builds a `Jwks` from
an issuer's metadata. Both verifiers read documents with `fetch_json` and scopes with
`scopes_of`. Kept apart from ``jwt`` so that ``jwt`` and ``oauth`` need not import each other.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

import anyio
import httpx
import jwt
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from a2a_core._protocol.security import CredentialsRejected

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "MAX_DOCUMENT_BYTES",
    "Jwks",
    "KeySource",
    "StaticKeys",
    "fetch_json",
    "request_json",
    "scopes_of",
]

logger = logging.getLogger("a2a_core.auth")

#: The default allow-list: every asymmetric JWS algorithm PyJWT verifies.
ASYMMETRIC_ALGORITHMS: Final = (
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
)  # fmt: skip
HMAC_ALGORITHMS: Final = frozenset({"HS256", "HS384", "HS512"})
# The JWK key type each algorithm needs: a key of another type is never tried.
KEY_TYPES: Final = {
    **dict.fromkeys(("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"), "RSA"),
    **dict.fromkeys(("ES256", "ES384", "ES512"), "EC"),
    "EdDSA": "OKP",
    **dict.fromkeys(HMAC_ALGORITHMS, "oct"),
}
#: Largest key set or metadata document read (a JWKS is a few KiB).
MAX_DOCUMENT_BYTES: Final = 1024 * 1024


async def fetch_json(
    url: str, *, timeout: float, transport: httpx.AsyncBaseTransport | None = None
) -> Any:
    """GET a JSON document (a JWKS, discovery metadata), bounded in time and size."""
    return await request_json("GET", url, timeout=timeout, transport=transport)


async def request_json(
    method: str,
    url: str,
    *,
    timeout: float,
    transport: httpx.AsyncBaseTransport | None = None,
    data: Mapping[str, str] | None = None,
    auth: tuple[str, str] | None = None,
) -> Any:
    """One request for a JSON document, answered within ``timeout`` seconds in all.

    httpx's timeout bounds each read, so a server that sends a byte now and then would
    hold the caller for ever: the deadline here covers connect, headers and the whole
    body. A body over `MAX_DOCUMENT_BYTES` is refused unread when its ``Content-Length``
    says so, and as soon as it grows past the limit otherwise. Raises `TimeoutError`,
    `ValueError` (too big, not JSON) or an `httpx.HTTPError`."""
    try:
        with anyio.fail_after(timeout):
            async with (
                httpx.AsyncClient(
                    timeout=timeout, transport=transport, follow_redirects=False
                ) as client,
                client.stream(
                    method,
                    url,
                    data=data,
                    auth=auth,
                    # No compression: the size bound holds for what comes over the wire.
                    headers={"accept": "application/json", "accept-encoding": "identity"},
                ) as response,
            ):
                response.raise_for_status()
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_DOCUMENT_BYTES:
                    raise ValueError(f"{url}: document over {MAX_DOCUMENT_BYTES} bytes")
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_DOCUMENT_BYTES:
                        raise ValueError(f"{url}: document over {MAX_DOCUMENT_BYTES} bytes")
    except TimeoutError:
        raise TimeoutError(f"{url}: no complete answer within {timeout:g} s") from None
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
        kty = KEY_TYPES.get(algorithm)
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
    hammer the issuer. Concurrent requests share one fetch, and a fetch ends within
    ``timeout`` seconds (connect, headers and body: `request_json`), so no caller waits
    longer than that on another's; while stale keys are refreshed, the other callers use
    them. A failed fetch keeps the keys it had (and is logged: a warning, the token
    answered 401), and the next waits ``min_refresh_interval``."""

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
        tried = fetched is None or (
            # Stale keys are still the issuer's keys: while another caller refreshes them
            # (a slow key server), the others go on with the set they have.
            time.monotonic() - fetched > self.max_age and not self._lock.locked()
        )
        if tried:
            await self._refresh(self._generation, on_unknown_kid=False)
        found = self._ring.find(kid, algorithm)
        # An unknown kid asks for the set again, unless this call just did (or waited for
        # another's attempt): one fetch per caller at most, so one deadline.
        if found is None and not tried and self._may_refresh():
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
            else:
                self._ring = _KeyRing(keys, allow_symmetric=False)
                self._fetched_at = time.monotonic()
                self._failed_at = None
                self.fetches += 1
            finally:
                # Counted once the attempt is over: whoever started waiting during it saw
                # the count before, and takes its outcome instead of fetching again.
                self._generation += 1


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
