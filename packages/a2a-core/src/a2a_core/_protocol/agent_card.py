"""Serving the public agent card (L1, pure): the card's content, its bytes and its HTTP replies.

This module owns three things (spec-decisions F5, A21):

- **What the card says.** The developer gives a card *template* and the server says which
  bindings it serves where (:class:`ServedInterface`, paths relative to the mount). For a
  base URL, :func:`build_card` turns those into absolute ``supportedInterfaces`` entries,
  v1.0 entries before 0.3 ones (the new TCK takes the first entry of each binding), followed
  by whatever the template already listed (a gRPC URL, another host); and it merges the
  declared extensions into ``capabilities.extensions``.
- **What goes on the wire.** By default a pure v1.0 card, because the strict v1.0 JSON Schema
  (``additionalProperties: false``) rejects anything else. With
  ``CardOptions.legacy_v0_3_fields`` the v0.3 fields are merged in for v0.3-era clients
  (the reference SDK's "hybrid" card): the top-level ``url``, ``preferredTransport``,
  ``protocolVersion``, ``additionalInterfaces``, ``supportsAuthenticatedExtendedCard`` and
  ``security``, and each security scheme object also gets its v0.3 members (``type``,
  ``in``...) beside the v1.0 wrapper. See :func:`encode_card`.
- **The HTTP exchange.** :meth:`AgentCardPublisher.respond` answers GET and HEAD with the
  bytes and the caching headers (strong ``ETag``, ``Last-Modified``, ``Cache-Control``),
  answers conditional requests with 304 (RFC 9110 §13), and anything else with 405.

The body, its ETag and its ``Last-Modified`` are computed once per base URL and kept in a
small LRU (:attr:`AgentCardPublisher.cache_limit` entries), since per-request base URLs may
come from headers a client influences and must not grow memory without bound.

Nothing here reads the clock (``last_modified`` is given), does I/O or raises on client
input. Serving a card that needs a base URL without one is a developer error: it raises
:class:`~a2a_core.errors.LocalProtocolError` rather than publishing a wrong URL.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import email.utils
import hashlib
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

from a2a_core._protocol import codec
from a2a_core._protocol.errors import LocalProtocolError, MissingBaseUrlError
from a2a_core._protocol.http import Headers, HttpRequest, HttpResponse
from a2a_core.compat.v0_3 import convert as _v03
from a2a_core.types import AgentCard, AgentExtension, AgentInterface
from a2a_core.types._common import to_utc

if TYPE_CHECKING:  # the signing extra is optional: nothing is imported unless a key is given
    from a2a_core._protocol.signing import CardSigningKey

__all__ = [
    "DEFAULT_CARD_PATH",
    "AgentCardDocument",
    "AgentCardPublisher",
    "CardOptions",
    "ServedInterface",
    "build_card",
    "encode_card",
]

#: The well-known path of the public card (RFC 8615; the same in v0.3 and v1.0).
DEFAULT_CARD_PATH: Final = "/.well-known/agent-card.json"

_ALLOWED: Final = "GET, HEAD"
_METHOD_NOT_ALLOWED_BODY: Final = (
    b'{"error":{"code":405,"message":"Method not allowed: the agent card is served to GET '
    b'and HEAD only"}}'
)
_VERSION: Final = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")
# The opaque tags of an If-None-Match list (RFC 9110 §8.8.3): each quoted string. A `W/`
# prefix sits outside the quotes, and the weak comparison ignores it anyway; whatever else
# lies between the tags is skipped, so garbage simply never matches.
_OPAQUE_TAG: Final = re.compile(r'"[^"]*"')


# --- configuration values ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CardOptions:
    """How the public card is served: where, with which caching headers, in which variant."""

    last_modified: _dt.datetime
    """When the card last changed; sent as ``Last-Modified`` at second precision. A naive
    value is taken as UTC. The async server passes its build time by default: the core reads
    no clock."""
    path: str | None = DEFAULT_CARD_PATH
    """Path of the card below the mount; ``None`` disables the card (no path matches)."""
    cache_control: str = "public, max-age=300"
    """``Cache-Control`` of 200 and 304 replies (v1.0 §8.6 asks for a ``max-age``)."""
    legacy_v0_3_fields: bool = False
    """Merge the v0.3 card fields into the v1.0 card, for v0.3-era clients (spec-decisions A21).
    Off by default: the strict v1.0 schema, hence the new TCK, rejects such a card."""
    content_type: str = "application/json"
    """``Content-Type`` of the card."""
    vary: str | None = None
    """``Vary`` of 200 and 304 replies, or ``None`` for none. Set it to the request headers
    a per-request base URL is derived from (e.g. ``"X-Forwarded-Host, X-Forwarded-Proto"``)
    so that shared caches do not serve one host's card for another; see
    :meth:`AgentCardPublisher.respond`."""
    signing_key: CardSigningKey | None = None
    """Sign each card variant with this key (v1.0 §8.4; see :mod:`a2a_core.signing`). The
    card's ``signatures`` become that one signature, computed once per variant and cached
    with its bytes, so a signed variant has its own stable ``ETag``."""
    jwks_path: str | None = None
    """Path (below the mount) of the JWK Set of ``signing_key``'s public key, served like
    the card; the signatures' ``jku`` then points to it, unless the key has its own
    ``jku``. ``None``: no JWKS served."""


@dataclass(frozen=True, slots=True)
class ServedInterface:
    """One binding this server serves, relative to where it is mounted.

    ``path`` is joined to the base URL: ``""`` is the mount itself (the base URL as is),
    ``"/"`` the mount root with its trailing slash, ``"/rest"`` a prefix below it. What
    :class:`~a2a_core.protocol.ServerProtocol` serves by default: ``("JSONRPC", "1.0", "/")``
    and ``("JSONRPC", "0.3", "/")`` (a client POSTs to exactly that URL, and a framework
    redirects the bare path of a mounted sub-application), ``("HTTP+JSON", "1.0", "")`` and
    ``("HTTP+JSON", "0.3", "")`` (a client appends ``/message:send`` to it).
    """

    binding: str
    """``protocolBinding``: ``JSONRPC``, ``HTTP+JSON``, ``GRPC`` or a custom URI."""
    version: str
    """``protocolVersion``, ``Major.Minor`` (``"1.0"``, ``"0.3"``)."""
    path: str = ""
    """Path below the mount, ``""`` or starting with ``/``."""
    tenant: str = ""
    """``tenant`` to publish with the interface (spec-decisions F12), empty for none."""


@dataclass(frozen=True, slots=True)
class AgentCardDocument:
    """The card served for one base URL: the value, its bytes and their validators."""

    card: AgentCard
    """The v1.0 card (never carries the legacy fields, which exist only in ``body``)."""
    body: bytes
    """The encoded card, exactly as sent."""
    etag: str
    """Strong entity tag: the quoted lowercase hex SHA-256 of ``body``."""
    last_modified: str
    """``Last-Modified`` as an RFC 9110 IMF-fixdate."""


# --- building and encoding the card --------------------------------------------------------


def _version_key(interface: ServedInterface) -> tuple[int, int]:
    match = _VERSION.fullmatch(interface.version)
    if match is None:  # refused by _check_config; kept total for direct callers
        return (-1, -1)
    return (int(match.group(1)), int(match.group(2)))


def _strip_base(base_url: str | None) -> str:
    """The base URL without trailing slashes; ``""`` for none (``None``, ``""``, ``"/"``)."""
    return base_url.rstrip("/") if base_url else ""


def _merge_extensions(
    template: Sequence[AgentExtension], declared: Sequence[AgentExtension]
) -> list[AgentExtension]:
    """Template entries in order, each replaced by a declared one of the same URI; then the
    remaining declared ones, in order."""
    by_uri = {e.uri: e for e in declared}
    merged = [by_uri.pop(e.uri, e) for e in template]
    merged.extend(e for e in declared if e.uri in by_uri)
    return merged


def build_card(
    template: AgentCard,
    interfaces: Sequence[ServedInterface],
    extensions: Sequence[AgentExtension] = (),
    base_url: str | None = None,
) -> AgentCard:
    """The card served at ``base_url``: the template with absolute interfaces and extensions.

    ``supportedInterfaces`` is one entry per served interface, newest protocol version first
    (stable, so the given binding order is kept within a version), followed by the template's
    own entries that are not exact duplicates. ``base_url`` is needed only when ``interfaces``
    is not empty. Pure and cheap; the extended card reuses it with its own template.
    """
    served: list[AgentInterface] = []
    base = _strip_base(base_url)
    if interfaces:
        if not base:
            raise MissingBaseUrlError()
        for interface in sorted(interfaces, key=_version_key, reverse=True):
            served.append(
                AgentInterface(
                    # Concatenation, not urljoin, which would drop a path prefix of the
                    # base URL (the "a2a" of https://h/a2a) for a path starting with "/".
                    url=base + interface.path,
                    protocol_binding=interface.binding,
                    protocol_version=interface.version,
                    tenant=interface.tenant,
                )
            )
    seen = set(served)
    for listed in template.supported_interfaces:
        if listed not in seen:
            seen.add(listed)
            served.append(listed)
    capabilities = template.capabilities
    if extensions:
        capabilities = msgspec.structs.replace(
            capabilities, extensions=_merge_extensions(capabilities.extensions, extensions)
        )
    return msgspec.structs.replace(template, supported_interfaces=served, capabilities=capabilities)


def _legacy_fields(card: AgentCard) -> tuple[dict[str, Any], dict[str, Any]]:
    """The v0.3 members to add: at the top level, and inside each named security scheme."""
    top: dict[str, Any] = dict(_v03.card_v0_3_fields(card))
    legacy = _v03.card_from_v1(card)
    if legacy.security is not None:
        top["security"] = msgspec.to_builtins(legacy.security)
    schemes = {
        name: msgspec.to_builtins(scheme)
        for name, scheme in (legacy.security_schemes or {}).items()
    }
    return top, schemes


def encode_card(card: AgentCard, *, legacy_v0_3_fields: bool = False) -> bytes:
    """The card's bytes: pure v1.0 ProtoJSON, or the hybrid v0.3+v1.0 card if asked.

    The hybrid card is the v1.0 object plus the top-level v0.3 fields of
    :func:`a2a_core.compat.v0_3.card_v0_3_fields` and ``security``; each security scheme
    object keeps its v1.0 wrapper (``{"apiKeySecurityScheme": {...}}``) and also gets the
    v0.3 members (``"type": "apiKey", "in": "header", "name": ...``), as the reference SDK
    serves it. The key sets are disjoint, and v1.0 members win anyway. Skills keep only
    their v1.0 ``securityRequirements``, and each carries ``inputModes`` and
    ``outputModes`` (its own, else the card's defaults).
    """
    if not legacy_v0_3_fields:
        return codec.encode(card)
    document: dict[str, Any] = msgspec.to_builtins(card)
    top, legacy_schemes = _legacy_fields(card)
    for key, value in top.items():
        document.setdefault(key, value)
    schemes: dict[str, dict[str, Any]] = document.get("securitySchemes", {})
    for name, v03_scheme in legacy_schemes.items():
        if name in schemes:
            schemes[name] = {**v03_scheme, **schemes[name]}
    # v0.3-era card models require each skill's modes (optional in both specs): its own,
    # else the card's defaults, which a skill without its own has anyway.
    for skill in document.get("skills", ()):
        skill.setdefault("inputModes", list(card.default_input_modes))
        skill.setdefault("outputModes", list(card.default_output_modes))
    return codec.encode(document)


# --- conditional requests (RFC 9110 §13) ---------------------------------------------------


def _if_none_match_hits(values: list[str], etag: str) -> bool:
    """Whether any tag of the (possibly repeated) header matches, weakly, or one is ``*``."""
    for value in values:
        if value.strip() == "*":
            return True
        # Weak comparison (§8.8.3.2): only the opaque tags count, W/ or not; ours is strong.
        if etag in _OPAQUE_TAG.findall(value):
            return True
    return False


def _parse_http_date(value: str) -> _dt.datetime | None:
    """An HTTP-date as an aware UTC datetime, or ``None`` when it is not one (ignored)."""
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return to_utc(parsed)


def _not_modified(headers: Headers, etag: str, last_modified: _dt.datetime) -> bool:
    """RFC 9110 §13.2.2 for GET/HEAD: If-None-Match decides when present, else
    If-Modified-Since (an invalid, or repeated, date is ignored)."""
    if_none_match = headers.get_all("if-none-match")
    if if_none_match:
        return _if_none_match_hits(if_none_match, etag)
    if_modified_since = headers.get_all("if-modified-since")
    if len(if_modified_since) != 1:
        return False
    since = _parse_http_date(if_modified_since[0])
    return since is not None and last_modified <= since


# --- the publisher -------------------------------------------------------------------------


class AgentCardPublisher:
    """Serves the public agent card: configured once, asked per request.

    It is configured with the card template, the interfaces the server serves, the declared
    extensions, an optional base URL and the :class:`CardOptions`. Configuration errors (an
    invalid card, a bad interface, a duplicate extension URI) raise
    :class:`~a2a_core.errors.LocalProtocolError` here, at startup, not on the first request.

    Documents are cached per base URL in an LRU of :attr:`cache_limit` entries; the number
    held is :attr:`cache_size`. The cache is meant for one event loop (it uses no lock): at
    worst a concurrent use recomputes a document, it never serves a wrong one.
    """

    __slots__ = (
        "_base_url",
        "_cache",
        "_cache_limit",
        "_extensions",
        "_interfaces",
        "_jwks",
        "_last_modified",
        "_last_modified_text",
        "_method_not_allowed",
        "_options",
        "_template",
    )

    def __init__(
        self,
        card: AgentCard,
        *,
        options: CardOptions,
        interfaces: Iterable[ServedInterface] = (),
        extensions: Iterable[AgentExtension] = (),
        base_url: str | None = None,
        cache_limit: int = 64,
    ) -> None:
        self._template = card
        self._options = options
        self._interfaces = tuple(interfaces)
        self._extensions = tuple(extensions)
        self._base_url = _strip_base(base_url) or None
        if cache_limit < 1:
            raise LocalProtocolError("cache_limit must be at least 1")
        self._cache_limit = cache_limit
        self._cache: OrderedDict[str, AgentCardDocument] = OrderedDict()
        _check_config(options, self._interfaces, self._extensions)
        # Second precision: that is all an HTTP-date carries, and If-Modified-Since compares
        # against what the client was sent.
        self._last_modified = to_utc(options.last_modified).replace(microsecond=0)
        self._last_modified_text = email.utils.format_datetime(self._last_modified, usegmt=True)
        self._method_not_allowed = HttpResponse(
            405,
            (("allow", _ALLOWED), ("content-type", "application/json")),
            _METHOD_NOT_ALLOWED_BODY,
        )
        self._jwks: tuple[bytes, str] | None = None
        if options.signing_key is not None and options.jwks_path is not None:
            from a2a_core._protocol.signing import jwks_document

            jwks = codec.encode(jwks_document([options.signing_key]))
            self._jwks = (jwks, f'"{hashlib.sha256(jwks).hexdigest()}"')
        self._check_card()

    @property
    def options(self) -> CardOptions:
        """The serving options."""
        return self._options

    @property
    def base_url(self) -> str | None:
        """The configured base URL (without trailing slashes), used when a request brings
        none."""
        return self._base_url

    @property
    def cache_limit(self) -> int:
        """Most documents kept at once (one per base URL, least recently used evicted)."""
        return self._cache_limit

    @property
    def cache_size(self) -> int:
        """Documents currently cached; never more than :attr:`cache_limit`."""
        return len(self._cache)

    def matches_path(self, path: str) -> bool:
        """Whether ``path`` (below the mount) is the card's; always false when disabled."""
        return self._options.path is not None and path == self._options.path

    def matches_jwks_path(self, path: str) -> bool:
        """Whether ``path`` (below the mount) is the signing key's JWKS (when served)."""
        return self._jwks is not None and path == self._options.jwks_path

    def card_for(self, base_url: str | None = None) -> AgentCard:
        """The v1.0 card value for ``base_url`` (or the configured one)."""
        return self.document_for(base_url).card

    def document_for(self, base_url: str | None = None) -> AgentCardDocument:
        """The card, its bytes and validators for ``base_url`` (or the configured one).

        Trailing slashes of a base URL are ignored (``https://h/a2a/`` is ``https://h/a2a``),
        and one made of slashes only counts as none.

        Raises :class:`~a2a_core.errors.LocalProtocolError` when the card has interfaces to
        publish and there is no base URL at all.
        """
        key = _strip_base(base_url) or self._base_url or ""
        document = self._cache.get(key)
        if document is not None:
            # KeyError: evicted meanwhile by another user of this cache; nothing to refresh.
            with contextlib.suppress(KeyError):
                self._cache.move_to_end(key)
            return document
        document = self._make_document(key)
        self._cache[key] = document
        while len(self._cache) > self._cache_limit:
            try:
                self._cache.popitem(last=False)
            except KeyError:  # pragma: no cover - emptied meanwhile
                break
        return document

    def respond(self, request: HttpRequest, base_url: str | None = None) -> HttpResponse:
        """The reply to a request the caller routed to the card (see :meth:`matches_path`).

        - GET: 200 with the card and ``content-type``, ``etag``, ``last-modified``,
          ``cache-control`` (and ``vary`` if configured).
        - HEAD: the same headers plus ``content-length`` of the GET body, and no body.
          Adapters must keep that ``content-length`` rather than compute one from the empty
          body (RFC 9110 §9.3.2).
        - Either one, conditional: 304 with ``etag``, ``last-modified``, ``cache-control``
          (and ``vary``) when ``If-None-Match`` lists a weakly matching tag or ``*``, or,
          only if ``If-None-Match`` is absent, when ``If-Modified-Since`` is a valid date not
          earlier than ``Last-Modified``.
        - Any other method: 405 with ``allow: GET, HEAD`` and a small JSON body.

        The base URL is ``base_url``, else ``request.base_url``, else the configured one.
        When it is derived from request headers, set ``CardOptions.vary`` to those headers
        (and trust forwarded headers only from known proxies): otherwise a shared cache
        keyed on the URL alone could hand one client a card built from another's headers.
        """
        if request.method not in ("GET", "HEAD"):
            return self._method_not_allowed
        document = self.document_for(base_url or request.base_url)
        return self._conditional(
            request, document.body, document.etag, self._options.content_type, self._options.vary
        )

    def respond_jwks(self, request: HttpRequest) -> HttpResponse:
        """The reply to a request routed to the JWKS (see :meth:`matches_jwks_path`): as
        :meth:`respond`, with the JWK Set as ``application/jwk-set+json`` (RFC 7517 §8.5).
        It does not depend on the base URL, hence no ``vary``."""
        if request.method not in ("GET", "HEAD") or self._jwks is None:
            return self._method_not_allowed
        body, etag = self._jwks
        return self._conditional(request, body, etag, "application/jwk-set+json", None)

    def _conditional(
        self, request: HttpRequest, body: bytes, etag: str, content_type: str, vary: str | None
    ) -> HttpResponse:
        validators = [
            ("etag", etag),
            ("last-modified", self._last_modified_text),
            ("cache-control", self._options.cache_control),
        ]
        if vary is not None:
            validators.append(("vary", vary))
        if _not_modified(request.headers, etag, self._last_modified):
            return HttpResponse(304, tuple(validators))
        headers = [("content-type", content_type), *validators]
        if request.method == "HEAD":
            headers.append(("content-length", str(len(body))))
            return HttpResponse(200, tuple(headers))
        return HttpResponse(200, tuple(headers), body)

    def jwks_url(self, base_url: str) -> str | None:
        """The absolute URL of the served JWKS for a base URL, or ``None`` if none is."""
        if self._jwks is None or self._options.jwks_path is None or not base_url:
            return None
        return base_url + self._options.jwks_path

    def _make_document(self, base_url: str) -> AgentCardDocument:
        card = build_card(self._template, self._interfaces, self._extensions, base_url)
        key = self._options.signing_key
        if key is not None:
            # The template's own signatures would be stale: they signed another card.
            card = msgspec.structs.replace(card, signatures=[])
        body = encode_card(card, legacy_v0_3_fields=self._options.legacy_v0_3_fields)
        if key is not None:
            # Signed over exactly the object sent (legacy members included), then sent with
            # the signature appended: `verify_agent_card` checks the same object.
            sent: dict[str, Any] = msgspec.json.decode(body)
            signature = key.sign_document(sent, jku=self.jwks_url(base_url))
            sent["signatures"] = [signature]
            body = codec.encode(sent)
            card = msgspec.structs.replace(card, signatures=[signature])
        etag = f'"{hashlib.sha256(body).hexdigest()}"'
        return AgentCardDocument(card, body, etag, self._last_modified_text)

    def _check_card(self) -> None:
        """Refuse at startup a card that the v1.0 model would refuse on the wire.

        msgspec does not validate on construction, so the merged card (built for the
        configured base URL, or a placeholder) is decoded back once.
        """
        card = build_card(
            self._template,
            self._interfaces,
            self._extensions,
            self._base_url or "http://base-url.invalid",
        )
        try:
            codec.decode(codec.encode(card), AgentCard)
        except codec.DecodeError as exc:
            raise LocalProtocolError(f"the agent card is not valid: {exc.message}") from None
        if self._options.signing_key is not None:
            from a2a_core._protocol.signing import CardSignatureError, canonical_card_payload

            body = encode_card(card, legacy_v0_3_fields=self._options.legacy_v0_3_fields)
            try:
                canonical_card_payload(msgspec.json.decode(body))
            except CardSignatureError as exc:
                raise LocalProtocolError(f"the agent card cannot be signed: {exc}") from None


def _check_config(
    options: CardOptions,
    interfaces: Sequence[ServedInterface],
    extensions: Sequence[AgentExtension],
) -> None:
    if options.path is not None and not options.path.startswith("/"):
        raise LocalProtocolError(f"the card path must start with '/': {options.path!r}")
    if options.jwks_path is not None:
        if not options.jwks_path.startswith("/") or options.jwks_path == options.path:
            raise LocalProtocolError(
                f"the JWKS path must start with '/' and differ from the card's: "
                f"{options.jwks_path!r}"
            )
        if options.signing_key is None:
            raise LocalProtocolError("a JWKS path is configured without a card signing key")
    for interface in interfaces:
        if not interface.binding:
            raise LocalProtocolError(f"a served interface has no binding: {interface!r}")
        if _VERSION.fullmatch(interface.version) is None:
            raise LocalProtocolError(
                f"a served interface's version must be Major.Minor: {interface!r}"
            )
        if interface.path and not interface.path.startswith("/"):
            raise LocalProtocolError(
                f"a served interface's path must be empty or start with '/': {interface!r}"
            )
    uris = [e.uri for e in extensions]
    duplicates = sorted({u for u in uris if uris.count(u) > 1})
    if duplicates:
        raise LocalProtocolError(f"extensions declared more than once: {duplicates}")
