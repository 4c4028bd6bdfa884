"""The agent card and everything nested in it, security schemes included (v1.0 model)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import field

from a2a_core.types._base import WireStruct, check_oneof

from ._common import NonEmptyStr, Struct

__all__ = [
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DeviceCodeOAuthFlow",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "PasswordOAuthFlow",
    "SecurityRequirement",
    "SecurityScheme",
    "StringList",
    "TransportProtocol",
]


# StringList has a member named `list`, which shadows the builtin inside its class body.
_Strings = list[str]
_new_strings = list


class TransportProtocol:
    """The binding names of ``AgentInterface.protocolBinding`` (plain strings on the wire)."""

    JSONRPC = "JSONRPC"
    GRPC = "GRPC"
    HTTP_JSON = "HTTP+JSON"


class AgentInterface(WireStruct, kw_only=True, frozen=True):
    """One endpoint of the agent: a URL, the binding it speaks, and the protocol version."""

    url: NonEmptyStr
    """Where the binding is served."""
    protocol_binding: NonEmptyStr
    """``JSONRPC``, ``HTTP+JSON``, ``GRPC`` or a custom binding URI."""
    tenant: str = ""
    """Tenant to copy into every request sent to this interface."""
    protocol_version: NonEmptyStr
    """``Major.Minor`` of the A2A version served there, e.g. ``1.0``."""


class AgentProvider(WireStruct, kw_only=True, frozen=True):
    """The organisation behind the agent."""

    url: str
    """The provider's website."""
    organization: str
    """The provider's name."""


class AgentExtension(WireStruct, kw_only=True, frozen=True):
    """A protocol extension the agent supports."""

    uri: str = ""
    """The extension's identifying URI."""
    description: str = ""
    """What the extension does for this agent."""
    required: bool = False
    """Clients must activate it (``A2A-Extensions``) to talk to this agent."""
    params: Struct = field(default_factory=dict)
    """Extension-specific configuration."""


class AgentCapabilities(WireStruct, kw_only=True, frozen=True):
    """Optional features; an absent capability counts as false, a set one is always emitted."""

    streaming: bool | None = None
    """SendStreamingMessage and SubscribeToTask are served."""
    push_notifications: bool | None = None
    """Push-notification configs are served."""
    extensions: list[AgentExtension] = field(default_factory=list)
    """Extensions the agent supports."""
    extended_agent_card: bool | None = None
    """An extended card is served to authenticated callers."""


class StringList(WireStruct, kw_only=True, frozen=True):
    """A list of strings (a proto wrapper, used for scopes in security requirements)."""

    list: _Strings = field(default_factory=_new_strings)
    """The strings."""


class SecurityRequirement(WireStruct, kw_only=True, frozen=True):
    """Schemes (by name) and the scopes each needs; all of them must be satisfied."""

    schemes: dict[str, StringList] = field(default_factory=dict)
    """Scheme name -> required scopes."""


class AgentSkill(WireStruct, kw_only=True, frozen=True):
    """Something the agent can do."""

    id: str
    """Unique id of the skill."""
    name: str
    """Human-readable name."""
    description: str
    """What the skill does."""
    tags: list[str]
    """Keywords."""
    examples: list[str] = field(default_factory=list)
    """Example prompts."""
    input_modes: list[str] = field(default_factory=list)
    """Media types accepted, when they differ from the card's defaults."""
    output_modes: list[str] = field(default_factory=list)
    """Media types produced, when they differ from the card's defaults."""
    security_requirements: list[SecurityRequirement] = field(default_factory=list)
    """Security needed for this skill in particular."""


class AgentCardSignature(WireStruct, kw_only=True, frozen=True):
    """A JWS signature over the card (RFC 7515, JSON-canonicalised payload)."""

    protected: str
    """The base64url protected header."""
    signature: str
    """The base64url signature."""
    header: Struct = field(default_factory=dict)
    """The unprotected header."""


class APIKeySecurityScheme(WireStruct, kw_only=True, frozen=True):
    """An API key sent in a query parameter, a header or a cookie."""

    description: str = ""
    """Human-readable description."""
    location: str
    """``query``, ``header`` or ``cookie``."""
    name: str
    """Name of the parameter, header or cookie."""


class HTTPAuthSecurityScheme(WireStruct, kw_only=True, frozen=True):
    """HTTP authentication (RFC 7235), e.g. ``Bearer``."""

    description: str = ""
    """Human-readable description."""
    scheme: str
    """The IANA scheme name."""
    bearer_format: str = ""
    """A hint for the bearer token's format, e.g. ``JWT``."""


class AuthorizationCodeOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 authorization code flow."""

    authorization_url: str
    """The authorization endpoint."""
    token_url: str
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""
    pkce_required: bool = False
    """PKCE (RFC 7636) is required."""


class ClientCredentialsOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 client credentials flow."""

    token_url: str
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""


class ImplicitOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 implicit flow (deprecated)."""

    authorization_url: str = ""
    """The authorization endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str] = field(default_factory=dict)
    """Scope -> description."""


class PasswordOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 resource owner password flow (deprecated)."""

    token_url: str = ""
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str] = field(default_factory=dict)
    """Scope -> description."""


class DeviceCodeOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 device authorization flow (RFC 8628)."""

    device_authorization_url: str
    """The device authorization endpoint."""
    token_url: str
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""


class OAuthFlows(WireStruct, kw_only=True, frozen=True):
    """Exactly one OAuth 2.0 flow (a oneof in v1.0; v0.3 allowed several)."""

    __oneof__ = ("authorization_code", "client_credentials", "implicit", "password", "device_code")

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    """Authorization code flow."""
    client_credentials: ClientCredentialsOAuthFlow | None = None
    """Client credentials flow."""
    implicit: ImplicitOAuthFlow | None = None
    """Implicit flow (deprecated)."""
    password: PasswordOAuthFlow | None = None
    """Password flow (deprecated)."""
    device_code: DeviceCodeOAuthFlow | None = None
    """Device code flow."""

    def __post_init__(self) -> None:
        check_oneof(self)


class OAuth2SecurityScheme(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0."""

    description: str = ""
    """Human-readable description."""
    flows: OAuthFlows
    """The flow to use."""
    oauth2_metadata_url: str = ""
    """RFC 8414 authorization server metadata URL."""


class OpenIdConnectSecurityScheme(WireStruct, kw_only=True, frozen=True):
    """OpenID Connect discovery."""

    description: str = ""
    """Human-readable description."""
    open_id_connect_url: str
    """The OpenID Connect discovery URL."""


class MutualTlsSecurityScheme(WireStruct, kw_only=True, frozen=True):
    """Mutual TLS."""

    description: str = ""
    """Human-readable description."""


class SecurityScheme(WireStruct, kw_only=True, frozen=True):
    """One security scheme; the member name is the discriminator (exactly one is set)."""

    __oneof__ = (
        "api_key_security_scheme",
        "http_auth_security_scheme",
        "oauth2_security_scheme",
        "open_id_connect_security_scheme",
        "mtls_security_scheme",
    )

    api_key_security_scheme: APIKeySecurityScheme | None = None
    """API key."""
    http_auth_security_scheme: HTTPAuthSecurityScheme | None = None
    """HTTP authentication."""
    oauth2_security_scheme: OAuth2SecurityScheme | None = None
    """OAuth 2.0."""
    open_id_connect_security_scheme: OpenIdConnectSecurityScheme | None = None
    """OpenID Connect."""
    mtls_security_scheme: MutualTlsSecurityScheme | None = None
    """Mutual TLS."""

    def __post_init__(self) -> None:
        check_oneof(self)


NonEmptyInterfaces = Annotated[list[AgentInterface], msgspec.Meta(min_length=1)]


class AgentCard(WireStruct, kw_only=True, frozen=True):
    """The agent's self-description, served at ``/.well-known/agent-card.json``.

    REQUIRED members have no default, so they are always emitted (the signing rules of
    v1.0 §8.4 keep them even when empty).
    """

    name: str
    """Human-readable name."""
    description: str
    """What the agent does."""
    supported_interfaces: NonEmptyInterfaces
    """Endpoints in preference order (v1.0 entries before 0.3 ones of the same binding)."""
    provider: AgentProvider | None = None
    """Who provides the agent."""
    version: str
    """The agent's own version."""
    documentation_url: str | None = None
    """Where its documentation lives."""
    capabilities: AgentCapabilities
    """Optional features served."""
    security_schemes: dict[str, SecurityScheme] = field(default_factory=dict)
    """Named security schemes."""
    security_requirements: list[SecurityRequirement] = field(default_factory=list)
    """Alternatives of schemes a client must satisfy (any one of the list)."""
    default_input_modes: list[str]
    """Media types accepted by default."""
    default_output_modes: list[str]
    """Media types produced by default."""
    skills: list[AgentSkill]
    """What the agent can do."""
    signatures: list[AgentCardSignature] = field(default_factory=list)
    """JWS signatures of the card."""
    icon_url: str | None = None
    """An icon for the agent."""
