"""The card's security, as pure values (L1): schemes, requirements, credentials, challenges.

The agent card declares named `SecurityScheme`s and `SecurityRequirement`s (alternatives are
OR, the schemes inside one alternative AND). This module reads them once into a
`SecurityPolicy`, takes the credentials a scheme names out of a request (``Authorization``,
an API-key header, query parameter or cookie) and builds the ``WWW-Authenticate`` challenges
of a refusal. It verifies nothing: signatures, keys and clocks are the runtime's
(`a2a_core.auth`). It never raises on client input other than `CredentialsRejected`, the
one answer to credentials that cannot even be read, which becomes a 401.

The verified caller is an `AuthenticatedIdentity`, a frozen value that ownership keys on.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from collections.abc import Mapping, Sequence
from http.cookies import CookieError, SimpleCookie
from types import MappingProxyType
from typing import Any, Final, Literal

from a2a_core._protocol.http import Headers, HttpRequest
from a2a_core.types import AgentCard, SecurityScheme

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

#: The longest credential read (a header value, a key), in characters: longer ones are
#: refused as malformed, unparsed. Far beyond a real JWT, and just within what HTTP servers
#: pass on at all (aiohttp refuses header lines over 8190 bytes itself, with a 400).
MAX_CREDENTIAL_LENGTH: Final = 8000

SchemeKind = Literal["apiKey", "http", "oauth2", "openIdConnect", "mutualTLS"]

# RFC 6750 §2.1 b64token (RFC 7235 token68), with the padding it allows.
_TOKEN68: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


class CredentialsRejected(Exception):  # noqa: N818 - a verdict, not a bug
    """Credentials were presented for a scheme but are not acceptable.

    ``error`` is the RFC 6750 error code the challenge carries (``invalid_request`` for what
    cannot be parsed, ``invalid_token`` for what does not verify). ``message`` goes to the
    client: say what is wrong in general terms, never echo the credential or a key."""

    def __init__(self, message: str, *, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.message = message
        self.error = error


@dataclasses.dataclass(frozen=True, slots=True)
class AuthenticatedIdentity:
    """A caller whose credentials the server verified: what ownership and agents trust.

    ``issuer`` is who vouches for the subject: a JWT's ``iss`` or an introspection answer's;
    ``None`` for API keys, passwords and certificates, whose authority is the ``scheme``
    (the card's scheme name). Two identities are the same owner when their authority and
    subject are (see `owner_key`), so an equal ``sub`` from two issuers is two owners."""

    subject: str
    """Who the caller is (a JWT ``sub``, the user a key or password belongs to)."""
    scheme: str
    """The name, in the card's ``securitySchemes``, of the scheme that verified it."""
    issuer: str | None = None
    """Who issued the credential, when it says (a JWT ``iss``)."""
    scopes: frozenset[str] = frozenset()
    """The granted scopes (a JWT ``scope`` or ``scp``), or roles a callback gave."""
    claims: Mapping[str, Any] = dataclasses.field(default_factory=lambda: _EMPTY, compare=False)
    """The verified claims (a JWT's payload, an introspection answer), read only."""
    factors: tuple[AuthenticatedIdentity, ...] = dataclasses.field(default=(), compare=False)
    """The other schemes of the requirement that was met, when it names several (AND)."""

    @property
    def authority(self) -> str:
        """The issuer, or the scheme name for credentials no issuer signs."""
        return self.issuer if self.issuer is not None else self.scheme

    @property
    def owner_key(self) -> str:
        """The task-ownership key: authority and subject, unambiguously joined."""
        return _join_key(self.authority, self.subject)


def _join_key(authority: str, subject: str) -> str:
    # Length-prefixed, so that no choice of authority and subject collides with another.
    return f"{len(authority)}:{authority}|{subject}"


@dataclasses.dataclass(frozen=True, slots=True)
class SchemeSpec:
    """One declared scheme as verifiers need it: its name, kind and where credentials go."""

    name: str
    """The scheme's name in the card."""
    kind: SchemeKind
    """``apiKey``, ``http``, ``oauth2``, ``openIdConnect`` or ``mutualTLS``."""
    declaration: SecurityScheme
    """The card's declaration, as written."""
    http_scheme: str = ""
    """``http`` schemes: the auth scheme, lower-case (``bearer``, ``basic``...)."""
    location: str = ""
    """``apiKey``: ``header``, ``query`` or ``cookie``."""
    parameter: str = ""
    """``apiKey``: the header, parameter or cookie name."""
    discovery_url: str = ""
    """``openIdConnect``: its discovery URL; ``oauth2``: its RFC 8414 metadata URL."""

    @classmethod
    def from_declaration(cls, name: str, scheme: SecurityScheme) -> SchemeSpec:
        """Read one card declaration."""
        if scheme.api_key_security_scheme is not None:
            api = scheme.api_key_security_scheme
            location = api.location.lower()
            if location not in ("header", "query", "cookie"):
                raise ValueError(f"security scheme {name!r}: unknown API key location")
            return cls(name, "apiKey", scheme, location=location, parameter=api.name)
        if scheme.http_auth_security_scheme is not None:
            http_scheme = scheme.http_auth_security_scheme.scheme.lower()
            return cls(name, "http", scheme, http_scheme=http_scheme)
        if scheme.oauth2_security_scheme is not None:
            url = scheme.oauth2_security_scheme.oauth2_metadata_url
            return cls(name, "oauth2", scheme, http_scheme="bearer", discovery_url=url)
        if scheme.open_id_connect_security_scheme is not None:
            url = scheme.open_id_connect_security_scheme.open_id_connect_url
            return cls(name, "openIdConnect", scheme, http_scheme="bearer", discovery_url=url)
        return cls(name, "mutualTLS", scheme)

    @property
    def uses_bearer(self) -> bool:
        """Whether the credential is an ``Authorization: Bearer`` token."""
        return self.http_scheme == "bearer"

    def challenge(
        self, *, realm: str, scopes: Sequence[str] = (), error: str | None = None
    ) -> str | None:
        """This scheme's ``WWW-Authenticate`` challenge, or ``None`` for one HTTP has no
        challenge for (API keys, mTLS). ``error`` is RFC 6750's, for a bearer token."""
        if not self.http_scheme:
            return None
        name = "Bearer" if self.uses_bearer else self.http_scheme.capitalize()
        params = [f'realm="{_quoted(realm)}"']
        if self.http_scheme == "basic":
            params.append('charset="UTF-8"')
        if self.uses_bearer:
            if scopes:
                params.append(f'scope="{_quoted(" ".join(scopes))}"')
            if error:
                params.append(f'error="{error}"')
        return f"{name} {', '.join(params)}"

    def credential(self, request: HttpRequest) -> str | None:
        """The raw credential this scheme reads from ``request``: the bearer token, the
        Basic ``user:password`` pair still encoded, or the API key; ``None`` when absent.
        Raises `CredentialsRejected` for one that is repeated, too long or malformed."""
        if self.kind == "apiKey":
            return _api_key(request, self.location, self.parameter)
        if self.uses_bearer:
            return bearer_token(request.headers)
        if self.http_scheme:
            return _authorization(request.headers, self.http_scheme)
        return None


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _single(values: list[str], what: str) -> str | None:
    if not values:
        return None
    if len(values) > 1:
        raise CredentialsRejected(f"More than one {what}", error="invalid_request")
    value = values[0]
    if len(value) > MAX_CREDENTIAL_LENGTH:
        raise CredentialsRejected(f"The {what} is too long", error="invalid_request")
    return value


def _authorization(headers: Headers, scheme: str) -> str | None:
    """The credentials of ``Authorization: <scheme> <credentials>``, ``None`` when the
    header is absent or names another scheme (which another alternative may accept)."""
    value = _single(headers.get_all("authorization"), "Authorization header")
    if value is None:
        return None
    name, _, rest = value.strip(" \t").partition(" ")
    if name.lower() != scheme:
        return None
    rest = rest.strip(" \t")
    if not _TOKEN68.fullmatch(rest):
        raise CredentialsRejected(
            f"Malformed {scheme.capitalize()} credentials", error="invalid_request"
        )
    return rest


def bearer_token(headers: Headers) -> str | None:
    """The token of ``Authorization: Bearer <token>`` (RFC 6750 §2.1), or ``None``."""
    return _authorization(headers, "bearer")


def basic_credentials(encoded: str) -> tuple[str, str]:
    """``user:password`` out of HTTP Basic's base64 (RFC 7617), UTF-8 decoded."""
    try:
        decoded = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise CredentialsRejected("Malformed Basic credentials", error="invalid_request") from None
    user, colon, password = decoded.partition(":")
    if not colon:
        raise CredentialsRejected("Malformed Basic credentials", error="invalid_request")
    return user, password


def _api_key(request: HttpRequest, location: str, name: str) -> str | None:
    if location == "header":
        return _single(request.headers.get_all(name), f"{name} header")
    if location == "query":
        key = name
        return _single([v for k, v in request.query_params() if k == key], f"{name} parameter")
    cookies: list[str] = []
    for header in request.headers.get_all("cookie"):
        if len(header) > MAX_CREDENTIAL_LENGTH:
            raise CredentialsRejected("The Cookie header is too long", error="invalid_request")
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(header)
        except CookieError:
            raise CredentialsRejected("Malformed Cookie header", error="invalid_request") from None
        morsel = jar.get(name)
        if morsel is not None:
            cookies.append(morsel.value)
    return _single(cookies, f"{name} cookie")


#: One alternative of the card's requirements: (scheme name, required scopes) pairs, all of
#: which must be met. An empty alternative admits anonymous callers.
Alternative = tuple[tuple[str, tuple[str, ...]], ...]


@dataclasses.dataclass(frozen=True, slots=True)
class SecurityPolicy:
    """The card's security requirements, read once: what every call must present."""

    schemes: Mapping[str, SchemeSpec]
    """The declared schemes a requirement names, by name."""
    alternatives: tuple[Alternative, ...]
    """The requirements, in the card's order (OR); empty: nothing is required."""
    realm: str
    """The ``realm`` of challenges (the card's name)."""

    @classmethod
    def from_card(cls, card: AgentCard) -> SecurityPolicy:
        """Read the card's ``securitySchemes`` and ``securityRequirements``. Raises
        ValueError for a requirement that names an undeclared scheme (a card no client
        could satisfy as written)."""
        specs: dict[str, SchemeSpec] = {}
        alternatives: list[Alternative] = []
        for requirement in card.security_requirements:
            alternative: list[tuple[str, tuple[str, ...]]] = []
            for name, scopes in requirement.schemes.items():
                declared = card.security_schemes.get(name)
                if declared is None:
                    raise ValueError(
                        f"securityRequirements names {name!r}, which securitySchemes does "
                        "not declare"
                    )
                if name not in specs:
                    specs[name] = SchemeSpec.from_declaration(name, declared)
                alternative.append((name, tuple(scopes.list)))
            alternatives.append(tuple(alternative))
        return cls(MappingProxyType(specs), tuple(alternatives), card.name or "a2a")

    @property
    def allows_anonymous(self) -> bool:
        """Whether an empty requirement admits callers that present nothing."""
        return not self.alternatives or any(not alt for alt in self.alternatives)

    def challenges(
        self,
        errors: Mapping[str, str] | None = None,
        scopes: Mapping[str, Sequence[str]] | None = None,
    ) -> tuple[str, ...]:
        """One ``WWW-Authenticate`` challenge per challengeable scheme of every alternative,
        in the card's order, each once; ``errors`` and ``scopes`` by scheme name (RFC 6750
        ``error`` and ``scope`` parameters, for bearer schemes)."""
        seen: dict[str, str] = {}
        errors = errors or {}
        wanted: dict[str, list[str]] = {}
        for alternative in self.alternatives:
            for name, needed in alternative:
                listed = wanted.setdefault(name, [])
                listed.extend(s for s in needed if s not in listed)
        if scopes:
            wanted = {name: list(scopes.get(name, ())) for name in wanted}
        for name, listed_scopes in wanted.items():
            challenge = self.schemes[name].challenge(
                realm=self.realm, scopes=listed_scopes, error=errors.get(name)
            )
            if challenge is not None:
                seen[name] = challenge
        # Several bearer schemes would give the same challenge: send it once.
        return tuple(dict.fromkeys(seen.values()))
