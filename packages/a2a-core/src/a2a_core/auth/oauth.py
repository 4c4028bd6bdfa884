"""OAuth 2.0 and OpenID Connect: discovery of the issuer's keys, and token introspection.

`Discovery` reads the document the card's scheme points at (``openIdConnectUrl``, or an
``oauth2`` scheme's RFC 8414 ``oauth2MetadataUrl``) for the ``issuer``, the ``jwks_uri``
(a `Jwks`) and the ``introspection_endpoint``; `JwtBearer` uses it when it was given no
keys or issuer. `TokenIntrospection` verifies opaque access tokens through RFC 7662,
caching each answer for the token's lifetime in a bounded cache.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import logging
import time
from types import MappingProxyType
from typing import Any, Final

import anyio
import httpx

from a2a_core._protocol.security import AuthenticatedIdentity, CredentialsRejected, SchemeSpec
from a2a_core.auth._keys import Jwks, fetch_json, request_json, scopes_of

__all__ = ["Discovery", "IssuerMetadata", "TokenIntrospection"]

logger = logging.getLogger("a2a_core.auth")


@dataclasses.dataclass(frozen=True, slots=True)
class IssuerMetadata:
    """What the discovery document says."""

    issuer: str
    """The issuer, which tokens' ``iss`` must equal."""
    jwks: Jwks | None
    """Its signing keys, if it publishes a ``jwks_uri``."""
    introspection_endpoint: str | None
    """Its RFC 7662 endpoint, if any."""


class Discovery:
    """A discovery document, fetched (httpx, asynchronously) once it is first needed.

    A failed fetch is retried, at most once per ``retry_interval`` seconds; until one
    succeeds, tokens of the scheme are refused as unverifiable (401), never a 500."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 5.0,
        retry_interval: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.retry_interval = retry_interval
        self.transport = transport
        self._metadata: IssuerMetadata | None = None
        self._failed_at: float | None = None
        self._lock = anyio.Lock()

    async def metadata(self) -> IssuerMetadata:
        """The issuer's metadata; raises `CredentialsRejected` while it is unavailable."""
        if self._metadata is not None:
            return self._metadata
        async with self._lock:
            if self._metadata is None:
                failed = self._failed_at
                if failed is None or time.monotonic() - failed >= self.retry_interval:
                    await self._fetch()
        metadata = self._current()
        if metadata is None:
            raise CredentialsRejected("The token issuer's metadata is unavailable")
        return metadata

    def _current(self) -> IssuerMetadata | None:
        return self._metadata

    async def _fetch(self) -> None:
        try:
            document = await fetch_json(self.url, timeout=self.timeout, transport=self.transport)
            issuer = document["issuer"]
            if not isinstance(issuer, str) or not issuer:
                raise ValueError("no issuer")
            jwks_uri = document.get("jwks_uri")
            endpoint = document.get("introspection_endpoint")
        except Exception as exc:
            self._failed_at = time.monotonic()
            logger.warning("could not read the issuer metadata at %s: %s", self.url, exc)
            return
        jwks = Jwks(jwks_uri, transport=self.transport) if isinstance(jwks_uri, str) else None
        self._metadata = IssuerMetadata(
            issuer, jwks, endpoint if isinstance(endpoint, str) else None
        )


_CACHE_SIZE: Final = 10_000
#: Seconds between two warnings that introspection questions were refused.
_REFUSAL_LOG_INTERVAL: Final = 30.0


class TokenIntrospection:
    """Opaque bearer tokens, verified by the issuer's RFC 7662 introspection endpoint.

    Parameters:
        client_id, client_secret: This agent's credentials at the endpoint (HTTP Basic).
        endpoint: The endpoint; ``None``: the scheme's discovery document says.
        audience: When given, an answer's ``aud`` must include it.
        max_cache_seconds: An active answer is cached until the token's ``exp``, and at most
            this long (a revoked token is then noticed within it).
        cache_size: Most answers cached (the least recently used go first).
        timeout: Seconds for one question to the endpoint, the whole answer included.
        max_concurrent: Most questions open at once; a token that would be one more is
            refused at once (401, and a warning at most every 30 s), so that a slow
            endpoint and a client sending many made-up tokens cost the server a bounded
            number of waiting requests.
    """

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str,
        endpoint: str | None = None,
        audience: str | None = None,
        max_cache_seconds: float = 300.0,
        cache_size: int = _CACHE_SIZE,
        timeout: float = 5.0,
        max_concurrent: int = 8,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, not {max_concurrent}")
        self.client_id = client_id
        self.client_secret = client_secret
        self.endpoint = endpoint
        self.audience = audience
        self.max_cache_seconds = max_cache_seconds
        self.cache_size = cache_size
        self.timeout = timeout
        self.max_concurrent = max_concurrent
        self.transport = transport
        self._open = 0
        self._refused_logged_at = -_REFUSAL_LOG_INTERVAL
        self._cache: collections.OrderedDict[bytes, tuple[float, dict[str, Any]]] = (
            collections.OrderedDict()
        )
        #: How many times the endpoint was asked (for tests and metrics).
        self.requests = 0

    async def introspect(
        self, token: str, scheme: SchemeSpec, discovery: Any = None
    ) -> AuthenticatedIdentity:
        """The token's owner; raises `CredentialsRejected` for an inactive token."""
        digest = hashlib.sha256(token.encode()).digest()  # the cache keeps no token
        now = time.time()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(digest)
            answer = cached[1]
        else:
            self._cache.pop(digest, None)
            answer = await self._ask(token, discovery)
            expires = min(now + self.max_cache_seconds, _number(answer.get("exp"), now + 1e9))
            if expires > now:
                self._cache[digest] = (expires, answer)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return self._identity(answer, scheme, now)

    async def _ask(self, token: str, discovery: Any) -> dict[str, Any]:
        endpoint = self.endpoint
        if endpoint is None and discovery is not None:
            endpoint = (await discovery.metadata()).introspection_endpoint
        if endpoint is None:
            raise CredentialsRejected("The token issuer offers no introspection")
        if self._open >= self.max_concurrent:
            now = time.monotonic()
            if now - self._refused_logged_at >= _REFUSAL_LOG_INTERVAL:
                self._refused_logged_at = now
                logger.warning(
                    "token introspection at %s: %d questions open, refusing more",
                    endpoint,
                    self._open,
                )
            raise CredentialsRejected("The token could not be verified")
        self.requests += 1
        self._open += 1
        try:
            answer = await request_json(
                "POST",
                endpoint,
                timeout=self.timeout,
                transport=self.transport,
                data={"token": token, "token_type_hint": "access_token"},
                auth=(self.client_id, self.client_secret),
            )
        except Exception as exc:
            logger.warning("token introspection at %s failed: %s", endpoint, exc)
            raise CredentialsRejected("The token could not be verified") from None
        finally:
            self._open -= 1
        if not isinstance(answer, dict):
            raise CredentialsRejected("The token could not be verified")
        return answer

    def _identity(
        self, answer: dict[str, Any], scheme: SchemeSpec, now: float
    ) -> AuthenticatedIdentity:
        if answer.get("active") is not True:
            raise CredentialsRejected("The token is not active")
        if _number(answer.get("exp"), now + 1) <= now:
            raise CredentialsRejected("The token has expired")
        if self.audience is not None:
            aud = answer.get("aud")
            audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
            if self.audience not in audiences:
                raise CredentialsRejected("The token is not meant for this agent")
        subject = answer.get("sub") or answer.get("username") or answer.get("client_id")
        if not isinstance(subject, str) or not subject:
            raise CredentialsRejected("The token names no subject")
        iss = answer.get("iss")
        return AuthenticatedIdentity(
            subject=subject,
            scheme=scheme.name,
            issuer=iss if isinstance(iss, str) else None,
            scopes=scopes_of(answer),
            claims=MappingProxyType(answer),
        )


def _number(value: Any, default: float) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
    )
