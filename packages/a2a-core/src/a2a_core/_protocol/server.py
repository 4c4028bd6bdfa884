"""The sans-IO server protocol: :class:`ServerProtocol` (L1, pure and synchronous).

One object, configured once, owns everything between request bytes and reply bytes:

- ``receive_request(HttpRequest)`` returns a ready :class:`HttpResponse` (the agent card, a
  304, a 404/405, any protocol error) or a typed :class:`Call` for the runtime to execute;
- ``reply_result(call, value)`` and ``reply_error(call, exc)`` encode the outcome in the
  call's binding and dialect;
- ``open_event_stream(call)`` returns the encoder of a streamed reply, which refuses events
  after the stream finished.

Checks run in one fixed order on every RPC (spec-decisions R1): route -> version (the
``A2A-Version`` reply header is set from here on) -> required extensions requested -> body
size -> JSON nesting -> content type -> envelope -> method -> params -> capability -> extension
activation. Activation is decided once, when the call exists (``extension_activation``): that
one decision sets the call's ``extensions`` and the ``A2A-Extensions`` reply headers, so a
request refused before it became a call echoes no extension. Nothing here does I/O, reads a
clock or raises on client input; a developer mistake (no base URL for the card, a result of
the wrong type) raises :class:`LocalProtocolError`.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

import msgspec

from a2a_core._protocol import codec, rest
from a2a_core._protocol.agent_card import (
    AgentCardPublisher,
    CardOptions,
    ServedInterface,
    build_card,
)
from a2a_core._protocol.call import Call, merge_metadata
from a2a_core._protocol.console import DEFAULT_CONSOLE_PATH, ConsolePages, check_console_path
from a2a_core._protocol.errors import (
    A2AError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    HttpStatusTable,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    LocalProtocolError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    TableName,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_core._protocol.extensions import (
    activate_extensions,
    extension_response_headers,
    requested_extensions,
)
from a2a_core._protocol.grpc import binding as grpc_binding
from a2a_core._protocol.grpc import codec as grpc_codec
from a2a_core._protocol.hosts import HostAllowList
from a2a_core._protocol.http import HttpRequest, HttpResponse, content_length_exceeds
from a2a_core._protocol.jsonrpc import (
    V0_3_METHODS,
    V1_METHODS,
    JsonRpcFailure,
    JsonRpcId,
    MethodSpec,
    NotificationPolicy,
    decode_request,
    encode_error,
    encode_result,
    request_id_of,
)
from a2a_core._protocol.media_types import check_request_content_type
from a2a_core._protocol.operations import (
    OPERATIONS,
    Binding,
    CallRequest,
    Dialect,
    Operation,
    OperationSpec,
)
from a2a_core._protocol.refusal import Refusal, RefusedAt
from a2a_core._protocol.sse import (
    CLOSING_STATES,
    STREAM_HEADERS,
    SUBSCRIPTION_CLOSING_STATES,
    EventStream,
)
from a2a_core._protocol.versions import (
    DEFAULT_VERSIONS,
    LEGACY_VERSION,
    negotiate_version,
    normalize_version,
)
from a2a_core._protocol.versions import HEADER as VERSION_HEADER
from a2a_core.types import (
    AgentCard,
    AgentExtension,
    AgentInterface,
    TransportProtocol,
)

if TYPE_CHECKING:  # the signing extra is optional
    from a2a_core._protocol.signing import CardSigningKey

__all__ = ["DEFAULT_MAX_BODY_SIZE", "DEFAULT_MAX_JSON_DEPTH", "ProtocolOptions", "ServerProtocol"]

#: Largest request body accepted (8 MiB).
DEFAULT_MAX_BODY_SIZE: Final = 8 * 1024 * 1024
#: Deepest JSON nesting accepted; far beyond any real request, far below the recursion limit.
DEFAULT_MAX_JSON_DEPTH: Final = 64

_JSON: Final = "application/json"
_JSON_HEADERS: Final = (("content-type", _JSON),)
_GRPC_HEADERS: Final = (("content-type", grpc_binding.CONTENT_TYPE),)
_GRPC_OK: Final = grpc_binding.status_trailers(grpc_binding.GrpcStatus(0))
#: Every gRPC path starts with this: ``/lf.a2a.v1.A2AService/``.
_GRPC_PREFIX: Final = f"/{grpc_binding.SERVICE}/"
_CARD_FILE: Final = "agent-card.json"
_LEGACY_CARD_FILE: Final = "agent.json"
#: The metadata of a call that has none (read only: merged into a new dict when needed).
_NO_METADATA: Final[Mapping[str, Any]] = MappingProxyType({})

#: The operations table as a plain dict: one lookup per request, on an identity-hashed key.
_SPECS: Final[dict[Operation, OperationSpec]] = dict(OPERATIONS)


def _join_path(*parts: str) -> str:
    return "/" + "/".join(p.strip("/") for p in parts if p.strip("/"))


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProtocolOptions:
    """How the protocol is served: paths, the card's HTTP form, versions, limits, statuses.

    One value, documented here once: `ServerProtocol` takes it as ``options=``, and
    ``A2AServer(protocol=...)`` passes it on. The defaults serve both dialects and both
    bindings at the mount root, the card at its well-known path, and the spec's v1.0.0 error
    statuses.
    """

    jsonrpc_path: str | None = "/"
    """Where JSON-RPC is served, both dialects (``None``: not served)."""
    rest_path: str | None = ""
    """Prefix of the HTTP+JSON routes (``""``: at the mount root, beside JSON-RPC, whose
    routes do not clash; ``None``: not served)."""
    card_path: str | None = "/.well-known/agent-card.json"
    """Where the public card is served, GET and HEAD (``None``: not served)."""
    card_cache_control: str = "public, max-age=300"
    """``Cache-Control`` of the card (which also carries ``ETag`` and ``Last-Modified``)."""
    legacy_card_fields: bool = False
    """Add the v0.3 top-level card fields v0.3-era clients need (off: a pure v1.0 card)."""
    card_signing_key: CardSigningKey | None = None
    """Sign the public card (and the extended card) with this key: a JWS over the card's
    RFC 8785 form, computed once per card variant (v1.0 §8.4; `a2a_core.signing`, which
    needs the ``a2aserve-core[signing]`` extra)."""
    jwks_path: str | None = None
    """Serve the signing key's JWK Set at this path, GET and HEAD, and point the
    signatures' ``jku`` to it (``None``: not served; e.g. ``"/.well-known/jwks.json"``)."""
    versions: Sequence[str] = DEFAULT_VERSIONS
    """The A2A versions served (Major.Minor); another ``A2A-Version`` is -32009."""
    strict_versions: bool = False
    """Refuse a method whose dialect is not the negotiated version (by default a v1.0
    method without the header is served, spec-decisions A1)."""
    max_body_size: int = DEFAULT_MAX_BODY_SIZE
    """Largest request body, in bytes (-32600 / 400 beyond it); adapters read one more, and
    none of a body whose ``Content-Length`` is over it (refused by that header alone)."""
    max_json_depth: int = DEFAULT_MAX_JSON_DEPTH
    """Deepest JSON nesting accepted (-32600 / 400 beyond it). The decoders refuse nesting
    beyond `a2a_core.codec.NESTING_LIMIT` (256) as malformed JSON whatever this says, so
    that no interpreter's recursion limit decides."""
    metadata: Mapping[str, Any] | None = None
    """Server-wide metadata, the bottom layer of every call's metadata."""
    error_table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0
    """The edition of the spec's REST status mapping: ``"v1.0.0"`` (409/415/502) or
    ``"v1.0.1"`` (400/400/500)."""
    rest_content_type: str = rest.JSON_CONTENT_TYPE
    """Content type of HTTP+JSON replies (``application/a2a+json`` by choice)."""
    notifications: NotificationPolicy = "reject"
    """What to do with JSON-RPC notifications (see `a2a_core.jsonrpc.NotificationPolicy`)."""
    last_modified: _dt.datetime | None = None
    """``Last-Modified`` of the card, timezone-aware (``None``: when the server was built;
    ``A2AServer`` reads the clock, a `ServerProtocol` of your own is given
    ``last_modified=``)."""
    allowed_hosts: Sequence[str] | None = None
    """The ``Host`` names answered: exact (``agent.example.com``), a domain and its
    subdomains (``.example.com``), or ``"*"`` (any); a request naming another is answered
    421 by `A2AServer` (the guard against DNS rebinding, ``docs/security.md``). ``None``:
    any, unless a whole-process runner binds loopback (``A2AServer.guard_loopback``)."""
    extended_card_for_anonymous: bool = False
    """Serve the extended card (GetExtendedAgentCard) to callers without credentials too
    (off: the spec reserves it for authenticated ones, and `A2AServer` refuses an anonymous
    call with UnsupportedOperation; a conformance agent, whose kits send no credentials,
    turns it on). A `ServerProtocol` of your own leaves that to you: it knows who is
    identified (``HttpRequest.identity``) but not which identities count."""

    def __post_init__(self) -> None:
        # Mistakes fail here, when the server is configured, each naming its option.
        if self.allowed_hosts is not None:
            if isinstance(self.allowed_hosts, str):
                raise ValueError("allowed_hosts must be a list of host names, not one string")
            HostAllowList(self.allowed_hosts)  # a name that is no host name fails now
        for name in ("jsonrpc_path", "rest_path", "card_path", "jwks_path"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"{name} must be a path (a str) or None, not {value!r}")
        for name in ("max_body_size", "max_json_depth"):
            value = getattr(self, name)
            if type(value) is not int or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        versions = self.versions
        if isinstance(versions, str) or not versions:
            raise ValueError(f"versions must be a non-empty sequence of versions, not {versions!r}")
        unknown = [v for v in versions if v not in DEFAULT_VERSIONS]
        if unknown:
            raise ValueError(
                f"versions: {', '.join(map(repr, unknown))} not served by this library "
                f"(it serves {', '.join(DEFAULT_VERSIONS)})"
            )
        if self.error_table not in tuple(HttpStatusTable):
            raise ValueError(
                f"error_table must be one of {', '.join(HttpStatusTable)}, not {self.error_table!r}"
            )
        if self.notifications not in ("reject", "ignore", "accept"):
            raise ValueError(
                f"notifications must be 'reject', 'ignore' or 'accept', not {self.notifications!r}"
            )
        if not isinstance(self.rest_content_type, str) or not self.rest_content_type:
            raise ValueError(
                f"rest_content_type must be a media type, not {self.rest_content_type!r}"
            )
        if not isinstance(self.card_cache_control, str):
            raise ValueError(f"card_cache_control must be a str, not {self.card_cache_control!r}")
        stamp = self.last_modified
        if stamp is not None and (not isinstance(stamp, _dt.datetime) or stamp.tzinfo is None):
            raise ValueError(f"last_modified must be a timezone-aware datetime, not {stamp!r}")


_DEFAULT_OPTIONS: Final = ProtocolOptions()


class ServerProtocol:
    """The A2A server protocol for one agent, as a pure object.

    Parameters:
        card: The public agent card. ``supported_interfaces`` may be left empty: the
            interfaces this object serves are filled in (with absolute URLs) per base URL.
        base_url: The public URL where the adapter is mounted (e.g. ``https://host/a2a``).
            May be left out when every request carries one (``HttpRequest.base_url``).
        last_modified: ``Last-Modified`` of the card, when ``options.last_modified`` does
            not say (the runtime passes its start time); one of the two is needed.
        options: How the protocol is served (see `ProtocolOptions`).
        extensions: Extensions declared in the card (``required`` ones are enforced).
        extension_activation: Decides, once per call, which of the declared extensions the
            client asked for are active: given the call (its ``extensions`` are those
            candidates), it returns the URIs to activate. The call's ``extensions`` and the
            ``A2A-Extensions`` reply headers both come from that one answer; a declined
            ``required`` extension fails the call with -32008. ``None``: every candidate.
            It must not raise: an A2AError it raises is the call's error reply.
        extended_card_configured: An extended card is available (GetExtendedAgentCard).
    """

    def __init__(
        self,
        card: AgentCard,
        *,
        last_modified: _dt.datetime | None = None,
        base_url: str | None = None,
        options: ProtocolOptions = _DEFAULT_OPTIONS,
        extensions: Sequence[AgentExtension] = (),
        extension_activation: Callable[[Call], Iterable[str]] | None = None,
        extended_card_configured: bool = False,
    ) -> None:
        self.options = options
        stamp = options.last_modified or last_modified
        if stamp is None:
            raise LocalProtocolError(
                "ServerProtocol needs last_modified= or ProtocolOptions(last_modified=...): "
                "the card's Last-Modified (a pure object reads no clock)"
            )
        jsonrpc_path, rest_path, card_path = (
            options.jsonrpc_path,
            options.rest_path,
            options.card_path,
        )
        max_json_depth = options.max_json_depth
        self.versions: tuple[str, ...] = tuple(options.versions)
        self.strict_versions = options.strict_versions
        self.extensions: tuple[AgentExtension, ...] = tuple(extensions)
        self.extension_activation = extension_activation
        self._required_extensions = tuple(ext.uri for ext in self.extensions if ext.required)
        self.extended_card_configured = extended_card_configured
        self.max_body_size = options.max_body_size
        self.max_json_depth = max_json_depth
        # Bodies deeper than max_json_depth are refused before the envelope is decoded: the
        # decoder need not measure them again while that is within its own limit.
        self._depth_within_codec_limit = max_json_depth <= codec.NESTING_LIMIT
        self.metadata: Mapping[str, Any] = dict(options.metadata or {})
        self.error_table = HttpStatusTable(options.error_table)
        self.rest_content_type = options.rest_content_type
        self.notifications: NotificationPolicy = options.notifications
        self.base_url = base_url
        self.jsonrpc_path = None if jsonrpc_path is None else _join_path(jsonrpc_path)
        self.rest_path = None if rest_path is None else _join_path(rest_path)
        self.card_path = None if card_path is None else _join_path(card_path)
        #: The v0.2 card path (``/.well-known/agent.json`` beside ``agent-card.json``),
        #: served with the legacy card fields only: deprecated, for v0.2-era clients that
        #: look nowhere else (spec-decisions A30).
        self.legacy_card_path = (
            self.card_path.removesuffix(_CARD_FILE) + _LEGACY_CARD_FILE
            if options.legacy_card_fields
            and self.card_path is not None
            and self.card_path.endswith("/" + _CARD_FILE)
            else None
        )
        self.capabilities = card.capabilities
        # The JWKS path when one is served (`AgentCardPublisher.matches_jwks_path`), read
        # on every request: a comparison here, not a call.
        self._jwks_path: str | None = None

        served: list[ServedInterface] = []
        # REST at the mount root is published as the base URL itself, without a trailing slash,
        # since clients append their own paths ("/message:send").
        for version in sorted(self.versions, key=_version_key, reverse=True):
            if self.jsonrpc_path is not None:
                # JSON-RPC at the mount root is published with its trailing slash: a client
                # POSTs to exactly this URL, and frameworks answer the bare mount path of a
                # sub-application (`Mount("/a2a")`) with a redirect that clients don't follow.
                served.append(
                    ServedInterface(TransportProtocol.JSONRPC, version, self.jsonrpc_path)
                )
            if self.rest_path is not None:
                rest_url = "" if self.rest_path == "/" else self.rest_path
                served.append(ServedInterface(TransportProtocol.HTTP_JSON, version, rest_url))
        #: The interfaces this protocol serves, relative to the mount (the card lists them).
        self.served_interfaces: tuple[ServedInterface, ...] = tuple(served)
        # Precomputed for the per-request path (see `_negotiate` and `_reply_headers`): the
        # A2A-Version values that name a served version exactly as it is written ("1.0"),
        # and the reply headers of each version when no extension is active.
        self._exact_versions: dict[str, str] = {
            v: v for v in self.versions if v.strip() == v and normalize_version(v) == v
        }
        self._rest_v0_3 = "0.3" in self.versions
        # The JSON-RPC methods of the served dialects (any other name is -32601).
        self._served_methods: dict[str, MethodSpec] = {
            name: spec
            for table in (V1_METHODS, V0_3_METHODS)
            for name, spec in table.items()
            if spec.dialect in self.versions
        }
        self._version_headers: dict[str, tuple[tuple[str, str], ...]] = {
            v: ((VERSION_HEADER, v),) for v in (*self.versions, "0.3", "1.0")
        }
        self._card = card
        self._card_options = CardOptions(
            path=self.card_path,
            cache_control=options.card_cache_control,
            last_modified=stamp,
            legacy_v0_3_fields=options.legacy_card_fields,
            signing_key=options.card_signing_key,
            jwks_path=None if options.jwks_path is None else _join_path(options.jwks_path),
        )
        #: The interfaces served elsewhere, published as they are (gRPC's ``host:port``).
        self.other_interfaces: tuple[AgentInterface, ...] = ()
        self.card_publisher = AgentCardPublisher(
            card,
            interfaces=served,
            extensions=self.extensions,
            base_url=base_url,
            options=self._card_options,
        )
        if self.card_publisher.matches_jwks_path(self.card_publisher.options.jwks_path or ""):
            self._jwks_path = self.card_publisher.options.jwks_path
        #: The paths served to anyone, without credentials, for a server that checks
        #: credentials before the request reaches `receive_request`: the public card, and
        #: the JWKS its signatures' ``jku`` names (a client checks the card before it knows
        #: how to authenticate).
        self.public_paths: frozenset[str] = frozenset(
            p for p in (self.card_path, self.legacy_card_path, self._jwks_path) if p is not None
        )
        #: The developer console, when served (`serve_console`).
        self.console: ConsolePages | None = None
        self._console_paths: frozenset[str] = frozenset()

    def serve_console(self, path: str = DEFAULT_CONSOLE_PATH) -> None:
        """Serve the developer console at ``path`` (under the mount), to anyone: its files
        join `public_paths`, because a browser opening a page sends no credentials (the
        page then calls the agent with the token typed into it). Raises ValueError for a
        path that cannot hold it, or when the public card, which the page reads, is not
        served."""
        path = check_console_path(path)
        if self.card_path is None:
            raise ValueError("the console reads the public card: card_path must be served")
        pages = ConsolePages(path, self.card_path)
        for served in pages.paths:
            if self._serves_otherwise(served):
                raise ValueError(
                    f"the console path {path!r} is already served by the protocol ({served})"
                )
        if self.console is not None:
            self.public_paths -= self._console_paths
        self.console = pages
        self._console_paths = pages.paths
        self.public_paths |= self._console_paths

    def _serves_otherwise(self, path: str) -> bool:
        """Whether the protocol answers ``path`` itself: the card, the JWKS, JSON-RPC, gRPC
        or an HTTP+JSON route (a console file there would hide it, or make it public)."""
        if path in (self.card_path, self.legacy_card_path, self._jwks_path, self.jsonrpc_path):
            return True
        if path.startswith(_GRPC_PREFIX):
            return True
        relative = None if self.rest_path is None else _strip_prefix(path, self.rest_path)
        return relative is not None and any(
            isinstance(rest.match_route(method, relative, v0_3=self._rest_v0_3), rest.RouteMatch)
            for method in ("GET", "POST")
        )

    def publish_interface(self, interface: AgentInterface) -> None:
        """Add an interface served by another transport to the cards (public and extended),
        after those this protocol serves: the gRPC adapter publishes its ``host:port`` here
        once it listens, and withdraws it when it stops. Publishing the same one again
        changes nothing."""
        if interface in self.other_interfaces:
            return
        if (
            interface.protocol_binding == TransportProtocol.GRPC
            and interface.protocol_version not in self.versions
        ):
            raise LocalProtocolError(
                f"gRPC serves A2A {interface.protocol_version}, which this server does not"
            )
        self._republish((*self.other_interfaces, interface))

    def withdraw_interface(self, interface: AgentInterface) -> None:
        """Remove an interface `publish_interface` added (its transport stopped), so that
        no card sends clients to an address nobody listens on."""
        if interface in self.other_interfaces:
            self._republish(tuple(i for i in self.other_interfaces if i != interface))

    def _republish(self, others: tuple[AgentInterface, ...]) -> None:
        self.other_interfaces = others
        template = msgspec.structs.replace(
            self._card, supported_interfaces=[*self._card.supported_interfaces, *others]
        )
        self.card_publisher = AgentCardPublisher(
            template,
            interfaces=self.served_interfaces,
            extensions=self.extensions,
            base_url=self.base_url,
            options=self._card_options,
        )

    def sign_card(self, card: AgentCard, base_url: str | None = None) -> AgentCard:
        """``card`` signed with ``options.card_signing_key`` (as is without one): for the
        extended card, sent as a value in a reply. ``jku`` is this server's JWKS URL for
        ``base_url`` (or the configured one) when it serves one."""
        key = self.options.card_signing_key
        if key is None:
            return card
        from a2a_core._protocol.signing import sign_card

        base = (base_url or self.base_url or "").rstrip("/")
        return sign_card(card, key, jku=self.card_publisher.jwks_url(base))

    def complete_card(self, card: AgentCard, base_url: str | None = None) -> AgentCard:
        """An extended card as a GetExtendedAgentCard reply carries it: ``card`` with the
        interfaces this protocol serves (absolute for ``base_url``, or the configured one)
        and its declared extensions filled in, signed when there is a card signing key."""
        if self.other_interfaces:
            listed = [*card.supported_interfaces]
            listed += [i for i in self.other_interfaces if i not in listed]
            card = msgspec.structs.replace(card, supported_interfaces=listed)
        built = build_card(card, self.served_interfaces, self.extensions, base_url)
        return self.sign_card(built, base_url)

    # --- receiving -------------------------------------------------------------------------

    def receive_request(self, request: HttpRequest) -> HttpResponse | Call:
        """Route and check one request: a ready response, or a call to execute."""
        path = request.path or "/"
        if path in self._console_paths:  # public: first, so that nothing else answers it
            return self.console.respond(request)  # type: ignore[union-attr]
        if path.startswith(_GRPC_PREFIX) and _is_grpc(request):
            return self._receive_grpc(request, path)
        if self.card_path is not None and (path == self.card_path or path == self.legacy_card_path):
            return self.card_publisher.respond(request, request.base_url)
        if path == self._jwks_path:
            return self.card_publisher.respond_jwks(request)
        if self.jsonrpc_path is not None and path == self.jsonrpc_path:
            if request.method != "POST":
                return _plain_error(405, "Method not allowed", (("allow", "POST"),), "jsonrpc")
            return self._receive_jsonrpc(request)
        if self.rest_path is not None:
            relative = _strip_prefix(path, self.rest_path)
            if relative is not None:
                match = rest.match_route(request.method, relative, v0_3=self._rest_v0_3)
                if isinstance(match, rest.RouteMatch):
                    return self._receive_rest(request, match)
                legacy = self._rest_v0_3 and (relative == "/v1" or relative.startswith("/v1/"))
                missed = rest.rest_route_miss_response(
                    match, self.rest_content_type, "0.3" if legacy else "1.0"
                )
                refusal = Refusal("rest", MethodNotFoundError.reason, missed.status)
                return msgspec.structs.replace(missed, refusal=refusal)
        return _plain_error(404, "Not found", (), "http")

    def is_public(self, request: HttpRequest) -> bool:
        """Whether ``request`` is for the public card, which needs no credentials (every
        other path does, when the card declares security requirements): its path is one of
        `public_paths`."""
        return (request.path or "/") in self.public_paths

    def reply_auth_failure(
        self, request: HttpRequest, error: A2AError, challenges: Sequence[str] = ()
    ) -> HttpResponse:
        """The refusal of a request whose credentials the card's requirements do not accept,
        answered before its body is read (spec-decisions A14): the error's HTTP status (401, 403)
        on **both** bindings, one ``WWW-Authenticate`` header per challenge, and the
        binding's error body (JSON-RPC: ``id`` null, in the dialect of the negotiated
        version; REST: AIP-193, v0.3-shaped on the ``/v1/...`` routes)."""
        challenge_headers = tuple(("www-authenticate", c) for c in challenges)
        return self.refuse(request, error, challenge_headers)

    def refuse(
        self, request: HttpRequest, error: A2AError, headers: Sequence[tuple[str, str]] = ()
    ) -> HttpResponse:
        """``request`` refused as a whole, whatever it asked, with ``error``'s HTTP status on
        **both** bindings (a 401 of `reply_auth_failure`, the 503 of a server that is not
        running) and the binding's error body, as `reply_auth_failure` describes; ``headers``
        are added."""
        challenge_headers = tuple(headers)
        path = request.path or "/"
        if path.startswith(_GRPC_PREFIX) and _is_grpc(request):
            refusal = Refusal("grpc", error.reason, 200)
            return self._grpc_error(error, challenge_headers, refusal)
        relative: str | None = None
        try:
            version = self._negotiate(request)[0]
        except A2AError:
            version = "1.0"
        dialect: Dialect = "0.3" if version == "0.3" else "1.0"
        headers = (*challenge_headers, *self._reply_headers(version, ()))
        if self.jsonrpc_path is not None and path == self.jsonrpc_path:
            body = encode_error(self._readable_id(request), error, dialect)
            refusal = Refusal("jsonrpc", error.reason, error.http_status, error.code)
            return HttpResponse(error.http_status, (*_JSON_HEADERS, *headers), body, refusal)
        if self.rest_path is not None:
            relative = _strip_prefix(path, self.rest_path)
            if relative is not None and self._rest_v0_3:
                legacy = relative == "/v1" or relative.startswith("/v1/")
                dialect = "0.3" if legacy else "1.0"
        response = rest.rest_error_response(
            error, self.error_table, self.rest_content_type, dialect
        )
        refusal = Refusal(
            "rest" if relative is not None else "http", error.reason, error.http_status
        )
        return HttpResponse(
            error.http_status, (*response.headers, *headers), response.body, refusal
        )

    def _negotiate(
        self, request: HttpRequest
    ) -> tuple[str, bool, tuple[str, ...], tuple[str, ...]]:
        """Version and extensions: (version, explicit, requested, activated). Raises A2AError.

        The common cases skip `negotiate_version`: an ``A2A-Version`` header that names a
        served version exactly, and no version at all (no header, no query string: 0.3).
        Anything else (spacing, ``1.0.1``, the query parameter, an unserved version) takes
        the full negotiation, which also builds the error.
        """
        headers = request.headers
        raw = headers.get(VERSION_HEADER)
        version = None if raw is None else self._exact_versions.get(raw)
        if version is not None:
            explicit = True
        elif raw is None and not request.query:
            version, explicit = LEGACY_VERSION, False
        else:
            negotiated = negotiate_version(request, self.versions)
            version, explicit = negotiated.version, negotiated.explicit
        requested = requested_extensions(headers)
        activated = activate_extensions(requested, self.extensions) if self.extensions else ()
        return version, explicit, requested, activated

    def _reply_headers(
        self, version: str, activated: tuple[str, ...]
    ) -> tuple[tuple[str, str], ...]:
        """``A2A-Version`` and the activated extensions, the headers of every reply."""
        if not activated:
            headers = self._version_headers.get(version)
            if headers is not None:
                return headers
        return ((VERSION_HEADER, version), *extension_response_headers(activated))

    def _readable_id(self, request: HttpRequest) -> JsonRpcId:
        """The id of a JSON-RPC request refused before its envelope was read, when its body
        is within the limits and says one (`request_id_of`); ``None`` otherwise."""
        body = request.body
        if (
            not body
            or len(body) > self.max_body_size
            or content_length_exceeds(request.headers, self.max_body_size)
            or codec.json_depth_exceeds(body, self.max_json_depth)
        ):
            return None
        return request_id_of(body)

    def _check_body(self, request: HttpRequest, body: bytes, *, always_json: bool) -> None:
        """The checks of a body before it is parsed, the same for both bindings: its size,
        its nesting (-32600), then its content type (-32005). ``always_json``: JSON-RPC,
        whose body is JSON even when empty; REST checks the content type of a body only.
        Each check's common case costs a comparison or two ``bytes.count`` passes.

        A body is oversized when it is longer than the limit (the adapter read one byte more)
        or when its ``Content-Length`` says so: the adapter may then have read none of it,
        to refuse it at once (`a2a_core.http.content_length_exceeds`), and the reply is the
        same either way."""
        if len(body) > self.max_body_size or content_length_exceeds(
            request.headers, self.max_body_size
        ):
            raise InvalidRequestError(
                f"Request body exceeds the limit of {self.max_body_size} bytes"
            )
        if codec.json_depth_exceeds(body, self.max_json_depth):
            raise InvalidRequestError(
                f"JSON nesting exceeds the limit of {self.max_json_depth} levels"
            )
        if body or always_json:
            check_request_content_type(request.headers.get("content-type"))

    def _receive_jsonrpc(self, request: HttpRequest) -> HttpResponse | Call:
        try:
            version, explicit, requested, activated = self._negotiate(request)
        except A2AError as exc:
            return self._refused_rpc(self._readable_id(request), exc, "1.0", ())
        # Until the call exists no extension is active: its replies echo only the version.
        headers = self._reply_headers(version, ())
        default_dialect: Dialect = "0.3" if version == "0.3" else "1.0"
        body = request.body
        try:
            self._check_body(request, body, always_json=True)
        except A2AError as exc:
            # A normal JSON-RPC error (spec-decisions A12), with the request's id when the
            # body could be read (a wrong content type), null when not (too large or deep).
            return self._refused_rpc(self._readable_id(request), exc, default_dialect, headers)

        decoded = decode_request(
            body, notifications=self.notifications, depth_checked=self._depth_within_codec_limit
        )
        if isinstance(decoded, JsonRpcFailure):
            if decoded.dialect is not None and not explicit and not self.strict_versions:
                # The error goes out in the method's dialect: echo that one, as a call would.
                headers = self._reply_headers(decoded.dialect, ())
            if not decoded.reply:
                return HttpResponse(204, headers)
            body = decoded.encode(default_dialect)
            error = decoded.error
            refusal = Refusal("jsonrpc", error.reason, 200, error.code)
            return HttpResponse(200, (*_JSON_HEADERS, *headers), body, refusal)

        spec = self._served_methods.get(decoded.method)
        # A notification (accepted only with notifications="accept") never gets a JSON-RPC
        # reply, not even an error (JSON-RPC 2.0 §4.1), nor a stream (spec-decisions F2): 204.
        silent = decoded.is_notification
        if spec is None:  # unknown, or of a dialect not served
            if silent:
                return HttpResponse(204, headers)
            error = MethodNotFoundError(f"Method not found: {_shorten(decoded.method)}")
            return self._refused_rpc(decoded.id, error, default_dialect, headers)
        dialect = spec.dialect
        if not explicit and not self.strict_versions:
            # No A2A-Version: the method's dialect is the version actually served (A1).
            version = dialect
            headers = self._reply_headers(version, ())
        try:
            if self.strict_versions and dialect != version:
                raise VersionNotSupportedError(
                    f"Method {spec.name} belongs to A2A {dialect}, but the request "
                    f"negotiated {version}"
                    + ("" if explicit else " (no A2A-Version header means 0.3)")
                )
            op_spec = _SPECS[spec.operation]
            call_request, call_metadata = self._decode_params(op_spec, dialect, decoded.params)
            if op_spec.gate is not None:
                self._check_capability(op_spec)
        except A2AError as exc:
            if silent:
                return HttpResponse(204, headers)
            return self._refused_rpc(decoded.id, exc, dialect, headers)
        if silent and spec.streaming:
            return HttpResponse(204, headers)
        call = self._make_call(
            request,
            op_spec,
            call_request,
            call_metadata,
            "jsonrpc",
            dialect,
            version,
            decoded.id,
            requested,
            headers,
        )
        if activated:
            try:
                call = self._activate(call, activated)
            except A2AError as exc:
                if silent:
                    return HttpResponse(204, headers)
                return self._refused_rpc(decoded.id, exc, dialect, headers)
        return msgspec.structs.replace(call, notification=True) if silent else call

    def _decode_params(
        self, op_spec: OperationSpec, dialect: Dialect, params: msgspec.Raw
    ) -> tuple[CallRequest, Mapping[str, Any]]:
        """Params bytes -> the v1.0 request and the call's own metadata. Raises -32602."""
        try:
            if dialect == "0.3":
                # Only operations with a v0.3 method name reach here (the method tables).
                assert op_spec.v0_3_params is not None
                assert op_spec.v0_3_to_v1 is not None
                legacy = codec.decode(params, op_spec.v0_3_params)
                converted = op_spec.v0_3_to_v1(legacy)
                metadata = getattr(legacy, "metadata", None) or _NO_METADATA
                return converted, metadata
            value: CallRequest = codec.decode(params, op_spec.params)
        except codec.DecodeError as exc:
            raise InvalidParamsError(f"Invalid parameters: {exc.message}") from None
        return value, getattr(value, "metadata", None) or _NO_METADATA

    def _check_capability(self, op_spec: OperationSpec) -> None:
        """The operation's capability gate (spec-decisions F10): -32003 / -32004 / -32007."""
        caps = self.capabilities
        gate = op_spec.gate
        if gate == "push_notifications" and not caps.push_notifications:
            raise PushNotificationNotSupportedError()
        if gate == "streaming" and not caps.streaming:
            raise UnsupportedOperationError("Streaming is not supported by this agent")
        if gate == "extended_agent_card":
            if not caps.extended_agent_card:
                raise UnsupportedOperationError("This agent has no extended agent card")
            if not self.extended_card_configured:
                raise ExtendedAgentCardNotConfiguredError()

    def _make_call(
        self,
        request: HttpRequest,
        op_spec: OperationSpec,
        call_request: CallRequest,
        call_metadata: Mapping[str, Any],
        binding: Binding,
        dialect: Dialect,
        version: str,
        request_id: JsonRpcId,
        requested: tuple[str, ...],
        headers: tuple[tuple[str, str], ...],
    ) -> Call:
        """The call, with its metadata merged and no extension active yet (`_activate` adds
        them). Positional arguments: this runs per call."""
        tenant = getattr(call_request, "tenant", "") or ""
        identity = request.identity
        server_metadata = self.metadata
        if server_metadata or request.metadata or call_metadata or tenant or identity is not None:
            metadata = merge_metadata(
                server_metadata, request.metadata, call_metadata, identity=identity, tenant=tenant
            )
        else:
            metadata = {}  # most calls: no metadata anywhere (what merge_metadata returns)
        return Call(
            operation=op_spec.operation,
            request=call_request,
            binding=binding,
            dialect=dialect,
            version=version,
            request_id=request_id,
            streaming=op_spec.streaming,
            requested_extensions=requested,
            metadata=metadata,
            identity=identity,
            tenant=tenant,
            base_url=request.base_url or self.base_url,
            response_headers=headers,
            last_event_id=request.headers.get("last-event-id"),
        )

    def _receive_rest(self, request: HttpRequest, match: rest.RouteMatch) -> HttpResponse | Call:
        route = match.route
        dialect: Dialect = route.dialect
        try:
            version, explicit, requested, activated = self._negotiate(request)
        except A2AError as exc:
            return self._refused_rest(exc, (), dialect)
        if not explicit and not self.strict_versions:
            version = dialect  # no A2A-Version: the route's dialect is what is served (A1)
        headers = self._reply_headers(version, ())  # no extension is active before the call
        try:
            if dialect not in self.versions:
                raise MethodNotFoundError("This route's A2A version is not served")
            if self.strict_versions and dialect != version:
                raise VersionNotSupportedError(
                    f"This route belongs to A2A {dialect}, but the request negotiated {version}"
                )
            body = request.body
            self._check_body(request, body, always_json=False)
            call_request = rest.decode_rest_request(match, request.query_params(), body)
            op_spec = _SPECS[route.operation]
            if op_spec.gate is not None:
                self._check_capability(op_spec)
        except A2AError as exc:
            return self._refused_rest(exc, headers, dialect)
        call = self._make_call(
            request,
            op_spec,
            call_request,
            getattr(call_request, "metadata", None) or _NO_METADATA,
            "rest",
            dialect,
            version,
            None,
            requested,
            headers,
        )
        if activated:
            try:
                call = self._activate(call, activated)
            except A2AError as exc:
                return self._refused_rest(exc, headers, dialect)
        return call

    def _receive_grpc(self, request: HttpRequest, path: str) -> HttpResponse | Call:
        """A gRPC call (see `a2a_core._protocol.grpc.binding`): the RPC from the path, the
        version and extensions from its metadata (the same checks as HTTP; no
        ``a2a-version`` means the service's own, 1.0, as a method's dialect does on
        JSON-RPC), the request message from the body."""
        method = grpc_binding.METHODS.get(path)
        if method is None:
            name = path[len(_GRPC_PREFIX) :]
            status = grpc_binding.GrpcStatus(
                grpc_binding.CODES["UNIMPLEMENTED"], f"Method not found: {_shorten(name)}"
            )
            refusal = Refusal("grpc", MethodNotFoundError.reason, 200)
            trailers = grpc_binding.status_trailers(status)
            return HttpResponse(200, _GRPC_HEADERS, b"", refusal, trailers)
        try:
            try:
                version, explicit, requested, activated = self._negotiate(request)
            except VersionNotSupportedError:
                raw = request.headers.get(VERSION_HEADER) or ""
                raise VersionNotSupportedError(
                    f"A2A-Version {_shorten(raw)!r} is not supported over gRPC; supported: 1.0"
                ) from None
            if not explicit and not self.strict_versions:
                version = "1.0"
            if version != "1.0":
                said = request.headers.get(VERSION_HEADER)
                raise VersionNotSupportedError(
                    f"A2A-Version {_shorten(said or version)!r} is not supported over gRPC; "
                    "supported: 1.0" + ("" if explicit else " (none given means 0.3 here)")
                )
        except A2AError as exc:
            return self._grpc_error(exc, (), Refusal("grpc", exc.reason, 200))
        headers = self._reply_headers(version, ())
        op_spec = _SPECS[method.operation]
        try:
            body = request.body
            if len(body) > self.max_body_size:
                raise InvalidRequestError(
                    f"Request message exceeds the limit of {self.max_body_size} bytes"
                )
            try:
                call_request = grpc_codec.decode(
                    body, op_spec.params, max_depth=self.max_json_depth
                )
            except codec.DecodeError as exc:
                if exc.malformed_json:
                    raise InvalidRequestError(exc.message) from None
                raise InvalidParamsError(f"Invalid parameters: {exc.message}") from None
            if op_spec.gate is not None:
                self._check_capability(op_spec)
        except A2AError as exc:
            return self._grpc_error(exc, headers, Refusal("grpc", exc.reason, 200))
        call = self._make_call(
            request,
            op_spec,
            call_request,
            getattr(call_request, "metadata", None) or _NO_METADATA,
            "grpc",
            "1.0",
            version,
            None,
            requested,
            headers,
        )
        if activated:
            try:
                call = self._activate(call, activated)
            except A2AError as exc:
                return self._grpc_error(exc, headers, Refusal("grpc", exc.reason, 200))
        return call

    def _grpc_error(
        self,
        exc: A2AError,
        headers: tuple[tuple[str, str], ...],
        refusal: Refusal | None = None,
    ) -> HttpResponse:
        """A gRPC call ended by ``exc``: its status in the trailers (code from the error
        table's edition), the reply headers (the call's service parameters), no message."""
        status = grpc_binding.status_of(exc, self.error_table)
        trailers = grpc_binding.status_trailers(status)
        return HttpResponse(200, (*_GRPC_HEADERS, *headers), b"", refusal, trailers)

    def _activate(self, call: Call, offered: tuple[str, ...]) -> Call:
        """The one activation decision of a call: ``offered`` (the declared URIs the client
        asked for) narrowed by ``extension_activation``; the call's ``extensions`` and its
        reply headers both come from it. A required extension that is declined fails the
        call with -32008, as one not asked for does. Raises A2AError."""
        draft = msgspec.structs.replace(call, extensions=offered)
        decide = self.extension_activation
        if decide is None:
            activated = offered
        else:
            chosen = set(decide(draft))
            activated = tuple(uri for uri in offered if uri in chosen)
        declined = [uri for uri in self._required_extensions if uri not in activated]
        if declined:
            raise ExtensionSupportRequiredError(
                "Required extension(s) requested but not activated: " + ", ".join(declined),
                data={"requiredExtensions": declined},
                metadata={"requiredExtensions": ",".join(declined)},
            )
        if not activated:
            return call
        headers = self._reply_headers(call.version, activated)
        return msgspec.structs.replace(call, extensions=activated, response_headers=headers)

    # --- replying --------------------------------------------------------------------------

    def reply_result(self, call: Call, result: object) -> HttpResponse:
        """Encode the result of a non-streaming call in its binding and dialect.

        ``result`` is the v1.0 value of the operation: SendMessageResponse, Task,
        ListTasksResponse, TaskPushNotificationConfig, ListTaskPushNotificationConfigsResponse,
        ``None`` (delete) or AgentCard. Anything else is a developer error.
        """
        expected = _SPECS[call.operation].results
        if not isinstance(result, expected):
            raise LocalProtocolError(
                f"{call.operation.value} cannot reply with a {type(result).__name__}"
            )
        if call.notification:
            return HttpResponse(204, call.response_headers)
        if call.binding == "grpc":
            body = grpc_codec.encode(result, _GRPC_RESULTS[call.operation])
            headers = (*_GRPC_HEADERS, *call.response_headers)
            return HttpResponse(200, headers, body, None, _GRPC_OK)
        if call.binding == "rest":
            body = rest.encode_rest_result(call.operation, call.dialect, result)
            headers = (("content-type", self.rest_content_type), *call.response_headers)
            return HttpResponse(200, headers, body)
        value: Any = result
        if call.dialect == "0.3":
            convert = _SPECS[call.operation].v0_3_result
            if convert is not None:
                value = convert(result)
        elif result is None:
            value = {}  # google.protobuf.Empty
        body = encode_result(call.request_id, value)
        return HttpResponse(200, _JSON_HEADERS + call.response_headers, body)

    def reply_error(self, call: Call, error: BaseException) -> HttpResponse:
        """Encode an error for a call; anything but an A2AError becomes a generic -32603."""
        exc = error if isinstance(error, A2AError) else InternalError()
        if call.notification:
            return HttpResponse(204, call.response_headers)
        if call.binding == "grpc":
            return self._grpc_error(exc, call.response_headers)
        if call.binding == "rest":
            return self._rest_error(exc, call.response_headers, call.dialect)
        return self._jsonrpc_error(call.request_id, exc, call.dialect, call.response_headers)

    def open_event_stream(self, call: Call) -> EventStream:
        """The encoder of a streaming call's frames (it knows the binding, dialect and id),
        with the response headers of the stream (``headers``: the SSE ones and the call's)."""
        if not call.streaming:
            raise LocalProtocolError(f"{call.operation.value} is not a streaming operation")
        # A subscription follows the task until it is terminal, across interruptions; a send
        # stream also closes on input-required (spec-decisions A6).
        closing = (
            SUBSCRIPTION_CLOSING_STATES
            if call.operation is Operation.SUBSCRIBE_TO_TASK
            else CLOSING_STATES
        )
        grpc = call.binding == "grpc"
        return EventStream(
            call.binding,
            call.dialect,
            call.request_id if call.binding == "jsonrpc" else None,
            status_table=self.error_table,
            closing_states=closing,
            headers=(*(_GRPC_HEADERS if grpc else STREAM_HEADERS), *call.response_headers),
        )

    def stream_headers(self, call: Call) -> tuple[tuple[str, str], ...]:
        """Headers of a streamed reply: the SSE ones plus the call's own."""
        return (*STREAM_HEADERS, *call.response_headers)

    # --- error replies ---------------------------------------------------------------------

    def _refused_rpc(
        self,
        request_id: JsonRpcId,
        exc: A2AError,
        dialect: Dialect,
        headers: tuple[tuple[str, str], ...],
    ) -> HttpResponse:
        """A JSON-RPC request refused before it became a call, saying why."""
        response = self._jsonrpc_error(request_id, exc, dialect, headers)
        refusal = Refusal("jsonrpc", exc.reason, response.status, exc.code)
        return msgspec.structs.replace(response, refusal=refusal)

    def _refused_rest(
        self, exc: A2AError, headers: tuple[tuple[str, str], ...], dialect: Dialect
    ) -> HttpResponse:
        """A REST request refused before it became a call, saying why."""
        response = self._rest_error(exc, headers, dialect)
        return msgspec.structs.replace(
            response, refusal=Refusal("rest", exc.reason, response.status)
        )

    def _jsonrpc_error(
        self,
        request_id: JsonRpcId,
        exc: A2AError,
        dialect: Dialect,
        headers: tuple[tuple[str, str], ...],
    ) -> HttpResponse:
        body = encode_error(request_id, exc, dialect)
        return HttpResponse(200, (*_JSON_HEADERS, *headers), body)

    def _rest_error(
        self, exc: A2AError, headers: tuple[tuple[str, str], ...], dialect: Dialect
    ) -> HttpResponse:
        response = rest.rest_error_response(exc, self.error_table, self.rest_content_type, dialect)
        return HttpResponse(response.status, (*response.headers, *headers), response.body)


#: The response message of each operation's RPC.
_GRPC_RESULTS: Final[dict[Operation, str]] = {
    m.operation: m.response for m in grpc_binding.METHODS.values()
}


def _is_grpc(request: HttpRequest) -> bool:
    """A gRPC request (``application/grpc``, ``application/grpc+proto``...)."""
    content_type = request.headers.get("content-type") or ""
    return content_type.startswith(grpc_binding.CONTENT_TYPE)


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def _strip_prefix(path: str, prefix: str) -> str | None:
    if prefix == "/":
        return path
    if path == prefix:
        return "/"
    if path.startswith(prefix + "/"):
        return path[len(prefix) :]
    return None


def _shorten(text: str, limit: int = 64) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


_PLAIN_ERROR_STATUS: Final = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


def _plain_error(
    status: int, message: str, extra: tuple[tuple[str, str], ...], binding: RefusedAt
) -> HttpResponse:
    """An HTTP-level error outside any RPC (unknown path, wrong method), as AIP-193 JSON."""
    name = _PLAIN_ERROR_STATUS[status]
    body = codec.encode({"error": {"code": status, "status": name, "message": message}})
    return HttpResponse(status, (*_JSON_HEADERS, *extra), body, Refusal(binding, name, status))
