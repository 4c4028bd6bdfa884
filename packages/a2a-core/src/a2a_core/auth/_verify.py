"""The verifier protocol, the requirement check, and the API-key, Basic and custom verifiers.

`Authenticator` is what `A2AServer` runs before anything of a request is read: it asks each
scheme's verifier (one per declared scheme name) for the caller, at most once per request
and only for the schemes a requirement names, and decides by the card's requirements
(alternatives OR, schemes within one AND, scopes included). The verdict is an
`AuthenticatedIdentity`, ``None`` (an anonymous caller an empty requirement admits), or an
`AuthFailure` the protocol answers with 401 or 403 and the challenges.
"""

from __future__ import annotations

import dataclasses
import hmac
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeAlias, runtime_checkable

from a2a_core._protocol.errors import A2AError, PermissionDeniedError, UnauthenticatedError
from a2a_core._protocol.http import HttpRequest
from a2a_core._protocol.security import (
    AuthenticatedIdentity,
    CredentialsRejected,
    SchemeSpec,
    SecurityPolicy,
    basic_credentials,
)
from a2a_core.types import AgentCard

__all__ = [
    "ApiKey",
    "AuthFailure",
    "Authenticator",
    "CallbackResult",
    "HttpBasic",
    "Verifier",
]

logger = logging.getLogger("a2a_core.auth")


@runtime_checkable
class Verifier(Protocol):
    """Verifies the credentials one declared scheme names.

    ``verify`` returns the caller, ``None`` when the request presents nothing for this
    scheme (another alternative may still admit it), or raises `CredentialsRejected` for
    credentials that are presented but not acceptable. Any other exception is logged and
    answered as a 401 ("could not be verified"), never as a 500. A verifier may also define
    ``check_scheme(scheme: SchemeSpec) -> None``, called once when the server is built, to
    refuse a declaration it cannot serve (raise ValueError)."""

    async def verify(
        self, request: HttpRequest, scheme: SchemeSpec
    ) -> AuthenticatedIdentity | None: ...


#: What a user callback answers: a subject (the identity is built around it), a full
#: identity (for scopes or claims; its ``scheme`` is set to the scheme's name), or ``None``
#: for credentials it does not accept. May be awaitable.
CallbackResult: TypeAlias = str | AuthenticatedIdentity | None


async def _answer(
    result: CallbackResult | Awaitable[CallbackResult], scheme: SchemeSpec, what: str
) -> AuthenticatedIdentity:
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        raise CredentialsRejected(f"Unknown {what}")
    if isinstance(result, str):
        if not result:
            raise CredentialsRejected(f"Unknown {what}")
        return AuthenticatedIdentity(subject=result, scheme=scheme.name)
    if isinstance(result, AuthenticatedIdentity):
        return dataclasses.replace(result, scheme=scheme.name)
    raise TypeError(f"a {what} callback returned {type(result).__name__}")


class ApiKey:
    """An API key in the header, query parameter or cookie the card's scheme names.

    ``lookup(key)`` (sync or async) answers who the key belongs to (see `CallbackResult`);
    `ApiKey.of` builds one from a fixed table, compared in constant time."""

    def __init__(self, lookup: Callable[[str], CallbackResult | Awaitable[CallbackResult]]) -> None:
        self.lookup = lookup

    @classmethod
    def of(cls, keys: Mapping[str, str | AuthenticatedIdentity]) -> ApiKey:
        """Keys from a fixed table ``{key: subject or identity}``. Every key is compared
        with `hmac.compare_digest`, so the time taken says nothing of which keys exist."""
        table = [(key.encode(), who) for key, who in keys.items()]

        def lookup(presented: str) -> CallbackResult:
            given = presented.encode("utf-8", "surrogateescape")
            found: CallbackResult = None
            for key, who in table:
                if hmac.compare_digest(key, given):
                    found = who
            return found

        return cls(lookup)

    def check_scheme(self, scheme: SchemeSpec) -> None:
        """Only ``apiKey`` schemes."""
        if scheme.kind != "apiKey":
            raise ValueError(f"ApiKey cannot verify scheme {scheme.name!r} ({scheme.kind})")

    async def verify(
        self, request: HttpRequest, scheme: SchemeSpec
    ) -> AuthenticatedIdentity | None:
        """The key's owner, by the lookup."""
        key = scheme.credential(request)
        if key is None:
            return None
        if not key:
            raise CredentialsRejected("Empty API key", error="invalid_request")
        return await _answer(self.lookup(key), scheme, "API key")


class HttpBasic:
    """HTTP Basic (RFC 7617): ``check(username, password)`` (sync or async) answers who it
    is (see `CallbackResult`). Compare passwords with `hmac.compare_digest` (or a password
    hash's own check), never with ``==``."""

    def __init__(
        self, check: Callable[[str, str], CallbackResult | Awaitable[CallbackResult]]
    ) -> None:
        self.check = check

    def check_scheme(self, scheme: SchemeSpec) -> None:
        """Only ``http`` schemes whose scheme is ``basic``."""
        if scheme.kind != "http" or scheme.http_scheme != "basic":
            raise ValueError(f"HttpBasic cannot verify scheme {scheme.name!r}")

    async def verify(
        self, request: HttpRequest, scheme: SchemeSpec
    ) -> AuthenticatedIdentity | None:
        """The user, by the check."""
        encoded = scheme.credential(request)
        if encoded is None:
            return None
        user, password = basic_credentials(encoded)
        return await _answer(self.check(user, password), scheme, "user or password")


class ClientCertificate:
    """Mutual TLS: the client certificate the TLS server verified, seen through the adapter
    (``HttpRequest.peer_certificate``; aiohttp gives it, an ASGI server through its ``tls``
    extension).

    The TLS server's ``ssl`` context decides which certificates are acceptable (its CA,
    ``CERT_OPTIONAL`` or ``CERT_REQUIRED``): this verifier does not check the chain again.
    ``identify(der)`` (sync or async) answers who the certificate belongs to (see
    `CallbackResult`); by default the subject is the certificate's subject in RFC 4514
    form (needs ``cryptography``, which the ``auth`` extra installs)."""

    def __init__(
        self,
        identify: Callable[[bytes], CallbackResult | Awaitable[CallbackResult]] | None = None,
    ) -> None:
        self.identify = identify if identify is not None else _certificate_subject

    def check_scheme(self, scheme: SchemeSpec) -> None:
        """Only ``mutualTLS`` schemes."""
        if scheme.kind != "mutualTLS":
            raise ValueError(f"ClientCertificate cannot verify scheme {scheme.name!r}")

    async def verify(
        self, request: HttpRequest, scheme: SchemeSpec
    ) -> AuthenticatedIdentity | None:
        """The certificate's owner, by ``identify``; ``None`` without a certificate."""
        der = request.peer_certificate
        if der is None:
            return None
        return await _answer(self.identify(der), scheme, "client certificate")


def _certificate_subject(der: bytes) -> str:
    from cryptography import x509

    try:
        return x509.load_der_x509_certificate(der).subject.rfc4514_string()
    except ValueError:
        raise CredentialsRejected("Unreadable client certificate") from None


@dataclasses.dataclass(frozen=True, slots=True)
class AuthFailure:
    """A request the requirements refuse: the error to answer and its challenges."""

    error: A2AError
    """`UnauthenticatedError` (401) or `PermissionDeniedError` (403)."""
    challenges: tuple[str, ...]
    """The ``WWW-Authenticate`` values, one per challengeable scheme."""


_Outcome: TypeAlias = AuthenticatedIdentity | CredentialsRejected | None


class Authenticator:
    """Enforces a card's ``securityRequirements`` with one verifier per scheme name.

    Built once by `A2AServer` (``authenticators=``); raises ValueError for a card and a set
    of verifiers that do not fit (a required scheme without a verifier, a verifier for a
    name the card does not declare, a verifier that refuses its scheme's kind)."""

    def __init__(self, card: AgentCard, verifiers: Mapping[str, Verifier]) -> None:
        policy = SecurityPolicy.from_card(card)
        if not policy.alternatives:
            raise ValueError(
                "authenticators were given, but the card declares no securityRequirements: "
                "declare what callers must present (an empty requirement admits anonymous "
                "callers beside the others)"
            )
        unknown = sorted(set(verifiers) - set(card.security_schemes))
        if unknown:
            raise ValueError(f"authenticators for undeclared security schemes: {unknown}")
        missing = sorted(set(policy.schemes) - set(verifiers))
        if missing:
            raise ValueError(f"no authenticator for the required security schemes {missing}")
        for name, spec in policy.schemes.items():
            check = getattr(verifiers[name], "check_scheme", None)
            if check is not None:
                check(spec)
        self.policy = policy
        self.verifiers = dict(verifiers)

    async def authenticate(
        self, request: HttpRequest
    ) -> AuthenticatedIdentity | AuthFailure | None:
        """The caller of ``request``, ``None`` for an admitted anonymous one, or why not."""
        policy = self.policy
        outcomes: dict[str, _Outcome] = {}
        short: tuple[str, tuple[str, ...], AuthenticatedIdentity] | None = None
        for alternative in policy.alternatives:
            found: list[AuthenticatedIdentity] = []
            for name, scopes in alternative:
                if name in outcomes:
                    outcome = outcomes[name]
                else:
                    outcome = outcomes[name] = await self._verify(request, name)
                if not isinstance(outcome, AuthenticatedIdentity):
                    break
                if not outcome.scopes.issuperset(scopes):
                    if short is None:
                        short = (name, scopes, outcome)
                    break
                found.append(outcome)
            else:
                if found:
                    first, *others = found
                    return dataclasses.replace(first, factors=tuple(others)) if others else first
        presented = any(outcome is not None for outcome in outcomes.values())
        if not presented and policy.allows_anonymous:
            return None
        if short is not None:
            name, scopes, _ = short
            error: A2AError = PermissionDeniedError(
                "The credentials lack a required scope", metadata={"scheme": name}
            )
            challenges = policy.challenges({name: "insufficient_scope"}, {name: scopes})
            return AuthFailure(error, challenges)
        rejected = {n: o for n, o in outcomes.items() if isinstance(o, CredentialsRejected)}
        message = next(iter(rejected.values())).message if rejected else None
        error = UnauthenticatedError(message)
        return AuthFailure(error, policy.challenges({n: o.error for n, o in rejected.items()}))

    async def _verify(self, request: HttpRequest, name: str) -> _Outcome:
        try:
            return await self.verifiers[name].verify(request, self.policy.schemes[name])
        except CredentialsRejected as exc:
            return exc
        except Exception:
            logger.exception("the verifier of security scheme %r failed", name)
            return CredentialsRejected("The credentials could not be verified")
