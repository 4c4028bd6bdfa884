"""Credentials, and the headers they become for a given card (L2).

The caller says what it holds (`Credentials`: a bearer token, an API key, a user and
password, OAuth 2.0 client credentials); the card says what the agent accepts (its
``securityRequirements``, alternatives each naming schemes of ``securitySchemes``). The
first alternative whose every scheme the credentials satisfy decides where each goes: a
bearer token in ``Authorization``, an API key in the header, query parameter or cookie the
scheme names, Basic in ``Authorization``, an OAuth token fetched from the scheme's token URL.
A card that asks for nothing, or for nothing these credentials satisfy, still gets what the
caller gave explicitly (a token as ``Authorization: Bearer``, an API key as ``X-API-Key``):
the caller knows its agent.

OAuth tokens are cached per token URL until shortly before they expire, and dropped on a 401
(`TokenSource.invalidate`) so that the one retry gets a fresh one. The client secret goes
only where `check_token_url` allows, and the token endpoint's answer is bounded in bytes.
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import quote_plus

import anyio
import httpx

from a2a_core._protocol.client import ClientError
from a2a_core._protocol.codec import without_bom
from a2a_core.client._bodies import ACCEPT_ENCODING, read_limited
from a2a_core.client._origins import check_token_url, origin_of, send_guarded
from a2a_core.types import AgentCard, SecurityScheme

__all__ = [
    "AppliedCredentials",
    "Credentials",
    "OAuthClientCredentials",
    "TokenSource",
    "refuse_unsafe_headers",
]

#: Seconds before its expiry at which a cached OAuth token is fetched again.
_REFRESH_MARGIN: Final = 30.0
#: The header an API key goes in when the card names no API-key scheme.
DEFAULT_API_KEY_HEADER: Final = "X-API-Key"
#: The largest answer read from an OAuth token endpoint (a token is a few KiB).
MAX_TOKEN_REPLY_BYTES: Final = 1024 * 1024
#: A header name: an RFC 9110 token.
_HEADER_NAME: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
#: What a header value may hold: visible ASCII, spaces and tabs (no CR, LF or NUL).
_HEADER_VALUE: Final = re.compile(r"[\t\x20-\x7e]*")


@dataclass(frozen=True, slots=True)
class OAuthClientCredentials:
    """An OAuth 2.0 client (RFC 6749 §4.4, the client credentials grant)."""

    client_id: str
    client_secret: str = field(repr=False)
    token_url: str | None = None
    """Where to get tokens; ``None``: the card's ``clientCredentials`` flow says."""
    scopes: tuple[str, ...] = ()
    """The scopes to ask for; empty: none (the server's default)."""


@dataclass(frozen=True, slots=True)
class Credentials:
    """What the caller holds; `A2AClient` sends what the card asks for."""

    bearer_token: str | None = field(default=None, repr=False)
    """A token for ``Authorization: Bearer`` (HTTP bearer scheme, or OAuth/OIDC schemes
    whose token the caller already has)."""
    api_key: str | None = field(default=None, repr=False)
    """A key for an API-key scheme."""
    basic: tuple[str, str] | None = field(default=None, repr=False)
    """A user and password for the HTTP Basic scheme."""
    oauth: OAuthClientCredentials | None = None
    """An OAuth client whose tokens are fetched (and refreshed) as needed."""

    def __bool__(self) -> bool:
        return any((self.bearer_token, self.api_key, self.basic, self.oauth))


@dataclass(slots=True)
class AppliedCredentials:
    """Where credentials go on one request."""

    headers: list[tuple[str, str]] = field(default_factory=list)
    query: list[tuple[str, str]] = field(default_factory=list)
    cookies: dict[str, str] = field(default_factory=dict)


class TokenSource:
    """OAuth 2.0 client-credentials tokens, cached until shortly before they expire."""

    def __init__(
        self,
        client: OAuthClientCredentials,
        *,
        credential_origins: Iterable[str] = (),
        home: str = "",
    ) -> None:
        """``credential_origins``: origins the caller allows the client secret to go to,
        also over plain http (else only https, or http to loopback). ``home``: the URL the
        caller connected to, whose host may receive the secret at a token URL the card
        names (`check_token_url`)."""
        self._client = client
        self._allowed = frozenset(origin_of(url) for url in credential_origins)
        self._home = origin_of(home) if home else ""
        self._tokens: dict[str, tuple[str, float]] = {}
        self._lock = anyio.Lock()

    async def token(
        self, http: httpx.AsyncClient, token_url: str, *, named_by_card: bool = False
    ) -> str:
        """A valid token from ``token_url`` (fetched when none is cached or it expires);
        ``named_by_card``: the URL comes from the agent's card, not from the caller."""
        async with self._lock:
            cached = self._tokens.get(token_url)
            if cached is not None and cached[1] > time.monotonic():
                return cached[0]
            check_token_url(token_url, self._allowed, named_by_card=named_by_card, home=self._home)
            token, lifetime = await self._fetch(http, token_url)
            self._tokens[token_url] = (token, time.monotonic() + lifetime - _REFRESH_MARGIN)
            return token

    def invalidate(self) -> None:
        """Forget every cached token (after a 401: the next request fetches anew)."""
        self._tokens.clear()

    async def _fetch(self, http: httpx.AsyncClient, token_url: str) -> tuple[str, float]:
        client = self._client
        form = {"grant_type": "client_credentials"}
        if client.scopes:
            form["scope"] = " ".join(client.scopes)
        # RFC 6749 §2.3.1: client_secret_basic, the method every server must support.
        secret = base64.b64encode(
            f"{_form_escape(client.client_id)}:{_form_escape(client.client_secret)}".encode()
        ).decode()
        request = http.build_request(
            "POST",
            token_url,
            data=form,
            headers={"Authorization": f"Basic {secret}", "Accept-Encoding": ACCEPT_ENCODING},
        )
        try:
            response = await send_guarded(http, request, ("authorization",))
            try:
                body = await read_limited(
                    response,
                    MAX_TOKEN_REPLY_BYTES,
                    lambda: ClientError(
                        f"the OAuth token endpoint {token_url} answered more than "
                        f"{MAX_TOKEN_REPLY_BYTES} bytes"
                    ),
                )
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise ClientError(f"the OAuth token request to {token_url} failed: {detail}") from None
        return _read_token(token_url, response.status_code, body)


def _read_token(token_url: str, status: int, body: bytes) -> tuple[str, float]:
    """The access token and its lifetime in a token endpoint's answer."""
    try:
        payload = json.loads(without_bom(body))
    except ValueError:
        payload = None
    if status != 200 or not isinstance(payload, dict):
        error = payload.get("error") if isinstance(payload, dict) else None
        raise ClientError(
            f"the OAuth token endpoint {token_url} answered HTTP {status}"
            + (f" ({error[:200]})" if isinstance(error, str) else "")
        )
    token = payload.get("access_token")
    if not isinstance(token, str) or not token:
        raise ClientError(f"the OAuth token endpoint {token_url} sent no access_token")
    expires_in = payload.get("expires_in")
    lifetime = float(expires_in) if isinstance(expires_in, int | float) else 300.0
    return token, max(lifetime, _REFRESH_MARGIN + 1)


def refuse_unsafe_headers(headers: Iterable[tuple[str, str]]) -> None:
    """Raise `ClientError` for a header a request cannot carry as it is: a value with a line
    break, NUL or non-ASCII character (it would end the header early, or be refused by the
    HTTP library with the value in its message), or a name that is not a token. The message
    names the header, never its value: the value may be a credential."""
    for name, value in headers:
        if not _HEADER_NAME.fullmatch(name):
            raise ClientError(f"refused a header whose name is not a token: {name[:64]!r}")
        if not _HEADER_VALUE.fullmatch(value):
            raise ClientError(
                f"refused the {name} header: its value holds a line break (CR, LF), NUL or "
                "another character a header cannot carry (the value is not shown: it may "
                "be a credential)"
            )


def _form_escape(value: str) -> str:
    # The client id and secret are form-urlencoded before Basic encoding (RFC 6749 §2.3.1).
    return quote_plus(value)


def _token_url(scheme: SecurityScheme, credentials: Credentials) -> str | None:
    oauth = scheme.oauth2_security_scheme
    if credentials.oauth is None:
        return None
    if credentials.oauth.token_url:
        return credentials.oauth.token_url
    if oauth is not None and oauth.flows.client_credentials is not None:
        return oauth.flows.client_credentials.token_url
    return None


def _satisfies(scheme: SecurityScheme, credentials: Credentials) -> bool:
    if scheme.api_key_security_scheme is not None:
        return credentials.api_key is not None
    if scheme.http_auth_security_scheme is not None:
        kind = scheme.http_auth_security_scheme.scheme.lower()
        if kind == "basic":
            return credentials.basic is not None
        return credentials.bearer_token is not None
    if scheme.oauth2_security_scheme is not None:
        return credentials.bearer_token is not None or _token_url(scheme, credentials) is not None
    if scheme.open_id_connect_security_scheme is not None:
        return credentials.bearer_token is not None
    return scheme.mtls_security_scheme is not None  # the TLS layer's business, not ours


async def _apply_scheme(
    applied: AppliedCredentials,
    scheme: SecurityScheme,
    credentials: Credentials,
    tokens: TokenSource | None,
    http: httpx.AsyncClient,
) -> None:
    api_key = scheme.api_key_security_scheme
    if api_key is not None and credentials.api_key is not None:
        location = api_key.location.lower()
        if location == "query":
            applied.query.append((api_key.name, credentials.api_key))
        elif location == "cookie":
            applied.cookies[api_key.name] = credentials.api_key
        else:
            applied.headers.append((api_key.name, credentials.api_key))
        return
    http_auth = scheme.http_auth_security_scheme
    if http_auth is not None and http_auth.scheme.lower() == "basic" and credentials.basic:
        user, password = credentials.basic
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
        applied.headers.append(("Authorization", f"Basic {encoded}"))
        return
    if scheme.mtls_security_scheme is not None:
        return
    if credentials.bearer_token is not None:
        applied.headers.append(("Authorization", f"Bearer {credentials.bearer_token}"))
        return
    token_url = _token_url(scheme, credentials)
    if token_url is not None and tokens is not None:
        given = credentials.oauth is not None and credentials.oauth.token_url == token_url
        token = await tokens.token(http, token_url, named_by_card=not given)
        applied.headers.append(("Authorization", f"Bearer {token}"))


async def apply_credentials(
    card: AgentCard | None,
    credentials: Credentials,
    tokens: TokenSource | None,
    http: httpx.AsyncClient,
) -> AppliedCredentials:
    """The headers, query parameters and cookies ``credentials`` become for ``card``."""
    applied = AppliedCredentials()
    if not credentials:
        return applied
    schemes: Mapping[str, SecurityScheme] = card.security_schemes if card else {}
    for requirement in card.security_requirements if card else ():
        names = list(requirement.schemes)
        if names and all(n in schemes and _satisfies(schemes[n], credentials) for n in names):
            for name in names:
                await _apply_scheme(applied, schemes[name], credentials, tokens, http)
            return applied
    # Nothing the card asks for is satisfied (or it asks for nothing): send what the caller
    # gave explicitly, in the usual places.
    if credentials.bearer_token is not None:
        applied.headers.append(("Authorization", f"Bearer {credentials.bearer_token}"))
    elif credentials.basic is not None:
        user, password = credentials.basic
        encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
        applied.headers.append(("Authorization", f"Basic {encoded}"))
    elif credentials.oauth is not None and credentials.oauth.token_url and tokens is not None:
        token = await tokens.token(http, credentials.oauth.token_url)
        applied.headers.append(("Authorization", f"Bearer {token}"))
    if credentials.api_key is not None:
        header = next(
            (
                s.api_key_security_scheme.name
                for s in schemes.values()
                if s.api_key_security_scheme is not None
                and s.api_key_security_scheme.location.lower() == "header"
            ),
            DEFAULT_API_KEY_HEADER,
        )
        applied.headers.append((header, credentials.api_key))
    return applied
