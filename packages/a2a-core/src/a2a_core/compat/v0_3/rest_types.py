"""L0: the v0.3 HTTP+JSON (REST) payloads, which are the ProtoJSON of the v0.3 gRPC proto.

This module owns the *shape* of the v0.3 REST dialect. It is not the v0.3 JSON-RPC shape of
:mod:`a2a_core.compat.v0_3.types` (spec-decisions F3, A4): the v0.3 REST binding is gRPC
transcoding of ``reference/v0.3/a2a.proto`` (package ``a2a.v1``), so its JSON is ProtoJSON:

- no ``kind`` tags; enums are proto names (``ROLE_USER``, ``TASK_STATE_WORKING``, and
  ``TASK_STATE_CANCELLED`` with two Ls);
- a message's parts are in ``content`` (an artifact's are still in ``parts``); a part is
  ``{text}`` | ``{file: {fileWithUri | fileWithBytes, mimeType}}`` | ``{data: {data: {...}}}``;
- ``TaskStatus.update`` is spelled ``message`` on the wire, ``SendMessageRequest.request`` and
  the ``msg`` member of the response oneofs too;
- push configs are nested (``{name, pushNotificationConfig: {id, url, token,
  authentication: {schemes, credentials}}}``) and addressed by compound resource names
  (``tasks/{id}/pushNotificationConfigs/{cfg}``);
- the card's security schemes are oneof wrappers (``{"apiKeySecurityScheme": {...}}``), its
  requirements ``[{"schemes": {name: {"list": [scopes]}}}]``.

Every struct derives from :class:`a2a_core.types._base.WireStruct`, so the rules of the v1.0 model
hold here too: camelCase out, defaults omitted (proto3 has no presence for these fields, so
``""``, ``0``, ``false``, ``[]`` and ``{}`` are "not set"), and :func:`a2a_core.codec.decode`
accepts what ProtoJSON parsers accept. That includes the *original proto field names*, which
the reference SDK's v0.3 REST client sends (``preserving_proto_field_name=True``): the
Python attribute of each renamed member carries the proto name (``request``, ``update``,
``msg``), so ``{"request": {...}}`` decodes like ``{"message": {...}}``.

Beyond the v0.3.0 proto, ``Part.metadata`` and ``FilePart.name`` (field 4 of each, added by
the later 0.3.x proto the reference SDK ships) are accepted and emitted when non-empty.

Constraints the v1.0 model puts on the same values (non-empty ids and parts, a role, exactly
one part member, a push ``url`` and scheme, ``historyLength`` not negative) are enforced at
decode, so that every decoded value converts to a valid v1.0 value and a bad request is
answered with InvalidParams before anything runs (:mod:`.rest_convert`).
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Annotated, ClassVar

import msgspec
from msgspec import UNSET, UnsetType, field

from a2a_core.types._base import WireStruct, check_oneof
from a2a_core.types._common import HistoryLength, NonEmptyStr, Struct, to_utc

__all__ = [
    "ALL_STRUCTS",
    "APIKeySecurityScheme",
    "AgentCapabilities",
    "AgentCard",
    "AgentCardSignature",
    "AgentExtension",
    "AgentInterface",
    "AgentProvider",
    "AgentSkill",
    "Artifact",
    "AuthenticationInfo",
    "AuthorizationCodeOAuthFlow",
    "CancelTaskRequest",
    "ClientCredentialsOAuthFlow",
    "CreateTaskPushNotificationConfigBody",
    "DataPart",
    "FilePart",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "ListTaskPushNotificationConfigResponse",
    "Message",
    "MutualTlsSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "Part",
    "PasswordOAuthFlow",
    "PushNotificationConfig",
    "Role",
    "Security",
    "SecurityScheme",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SendMessageResponse",
    "StreamResponse",
    "StringList",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskPushNotificationConfig",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "TaskSubscriptionRequest",
]

# StringList has a member named `list`, which shadows the builtin inside its class body.
_Strings = list[str]
_new_strings = list


# --- enums (declared in proto-number order: the codec maps integer values by position) -----


class TaskState(enum.Enum):
    """A task's lifecycle state as the v0.3 proto spells it (``CANCELLED`` with two Ls)."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    UNSPECIFIED = "TASK_STATE_UNSPECIFIED"
    SUBMITTED = "TASK_STATE_SUBMITTED"
    WORKING = "TASK_STATE_WORKING"
    COMPLETED = "TASK_STATE_COMPLETED"
    FAILED = "TASK_STATE_FAILED"
    CANCELLED = "TASK_STATE_CANCELLED"
    INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
    REJECTED = "TASK_STATE_REJECTED"
    AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"


class Role(enum.Enum):
    """Who sent a message (proto ``a2a.v1.Role``)."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    UNSPECIFIED = "ROLE_UNSPECIFIED"
    USER = "ROLE_USER"
    AGENT = "ROLE_AGENT"


# --- parts -----------------------------------------------------------------------------------


class FilePart(WireStruct, kw_only=True, frozen=True):
    """A file, by URI or inline: exactly one of ``fileWithUri`` or ``fileWithBytes``."""

    __oneof__ = ("file_with_uri", "file_with_bytes")

    file_with_uri: str | UnsetType = UNSET
    """Where the file content can be fetched."""
    file_with_bytes: bytes | UnsetType = UNSET
    """The file content (base64 on the wire)."""
    mime_type: str = ""
    """The media type of the content."""
    name: str = ""
    """The file name (field 4 of the later 0.3.x proto)."""

    def __post_init__(self) -> None:
        check_oneof(self)


class DataPart(WireStruct, kw_only=True, frozen=True):
    """Structured content: a ``google.protobuf.Struct`` (a JSON object) under ``data``."""

    data: Struct = field(default_factory=dict)
    """The data object."""


class Part(WireStruct, kw_only=True, frozen=True):
    """One piece of content: exactly one of ``text``, ``file`` or ``data``."""

    __oneof__ = ("text", "file", "data")

    text: str | UnsetType = UNSET
    """Plain text content (``""`` is a set member: oneof members have presence)."""
    file: FilePart | None = None
    """A file."""
    data: DataPart | None = None
    """Structured data."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata of the part (field 4 of the later 0.3.x proto)."""

    def __post_init__(self) -> None:
        check_oneof(self)


NonEmptyParts = Annotated[list[Part], msgspec.Meta(min_length=1)]


# --- messages, tasks, artifacts, events -------------------------------------------------------


class Message(WireStruct, kw_only=True, frozen=True):
    """One turn of communication; the parts are in ``content``."""

    message_id: NonEmptyStr
    """Unique id chosen by the sender."""
    context_id: str = ""
    """The conversation this message belongs to."""
    task_id: str = ""
    """The task this message belongs to."""
    role: Role
    """Who sent it (``ROLE_USER`` or ``ROLE_AGENT``)."""
    content: NonEmptyParts
    """The content (at least one part)."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""
    extensions: list[str] = field(default_factory=list)
    """URIs of the extensions relevant to this message."""

    def __post_init__(self) -> None:
        if self.role is Role.UNSPECIFIED:
            raise ValueError("Message.role must be ROLE_USER or ROLE_AGENT")


class TaskStatus(WireStruct, kw_only=True, frozen=True):
    """A task's state, with an optional message (proto ``update``, JSON ``message``) and time."""

    state: TaskState = TaskState.UNSPECIFIED
    """The lifecycle state."""
    update: Message | None = field(name="message", default=None)
    """A message that goes with the status."""
    timestamp: _dt.datetime | None = None
    """When the status was recorded; normalised to UTC (a zone-less time is UTC)."""

    def __post_init__(self) -> None:
        if self.timestamp is not None:
            try:
                utc = to_utc(self.timestamp)
            except ValueError:  # year 1 with a positive offset: no UTC form
                raise ValueError("TaskStatus.timestamp is out of range") from None
            msgspec.structs.force_setattr(self, "timestamp", utc)


class Artifact(WireStruct, kw_only=True, frozen=True):
    """An output of a task (its parts are in ``parts``, unlike a message's)."""

    artifact_id: NonEmptyStr
    """Unique id within the task."""
    name: str = ""
    """A human-readable name."""
    description: str = ""
    """A human-readable description."""
    parts: NonEmptyParts
    """The content (at least one part)."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""
    extensions: list[str] = field(default_factory=list)
    """URIs of the extensions relevant to this artifact."""


class Task(WireStruct, kw_only=True, frozen=True):
    """The unit of work."""

    id: NonEmptyStr
    """The task id."""
    context_id: str = ""
    """The conversation the task belongs to."""
    status: TaskStatus
    """The current status."""
    artifacts: list[Artifact] = field(default_factory=list)
    """Outputs produced so far."""
    history: list[Message] = field(default_factory=list)
    """The messages exchanged so far."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""


class TaskStatusUpdateEvent(WireStruct, kw_only=True, frozen=True):
    """A streamed status change; ``final`` marks the last event of the stream."""

    task_id: NonEmptyStr
    """The task that changed."""
    context_id: NonEmptyStr
    """The task's context."""
    status: TaskStatus
    """The new status."""
    final: bool = False
    """This is the last event of the stream."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""


class TaskArtifactUpdateEvent(WireStruct, kw_only=True, frozen=True):
    """A streamed artifact or artifact chunk."""

    task_id: NonEmptyStr
    """The task the artifact belongs to."""
    context_id: NonEmptyStr
    """The task's context."""
    artifact: Artifact
    """The artifact, or the chunk to append."""
    append: bool = False
    """Append these parts to the artifact already sent with the same id."""
    last_chunk: bool = False
    """This is the final chunk of the artifact."""
    metadata: Struct = field(default_factory=dict)
    """Free-form metadata."""


class SendMessageResponse(WireStruct, kw_only=True, frozen=True):
    """The result of ``POST /v1/message:send``: exactly one of ``task`` or ``message``."""

    __oneof__ = ("task", "msg")

    task: Task | None = None
    """The task the message created or continued."""
    msg: Message | None = field(name="message", default=None)
    """A direct reply (proto ``msg``, JSON ``message``)."""

    def __post_init__(self) -> None:
        check_oneof(self)


class StreamResponse(WireStruct, kw_only=True, frozen=True):
    """One SSE event of ``message:stream`` and ``:subscribe``: exactly one member is set."""

    __oneof__ = ("task", "msg", "status_update", "artifact_update")

    task: Task | None = None
    """A task snapshot."""
    msg: Message | None = field(name="message", default=None)
    """A message (proto ``msg``, JSON ``message``)."""
    status_update: TaskStatusUpdateEvent | None = None
    """A status change."""
    artifact_update: TaskArtifactUpdateEvent | None = None
    """An artifact or artifact chunk."""

    def __post_init__(self) -> None:
        check_oneof(self)


# --- push notifications ----------------------------------------------------------------------


class AuthenticationInfo(WireStruct, kw_only=True, frozen=True):
    """Credentials for a webhook; v1.0 keeps one scheme, so at least one is required."""

    schemes: Annotated[list[NonEmptyStr], msgspec.Meta(min_length=1)]
    """HTTP authentication schemes (``Bearer``...)."""
    credentials: str = ""
    """The credentials."""


class PushNotificationConfig(WireStruct, kw_only=True, frozen=True):
    """A webhook (without the task it belongs to)."""

    id: str = ""
    """Config id; the server assigns one when empty."""
    url: NonEmptyStr
    """The webhook URL."""
    token: str = ""
    """A token echoed to the webhook."""
    authentication: AuthenticationInfo | None = None
    """Credentials for the webhook."""


class TaskPushNotificationConfig(WireStruct, kw_only=True, frozen=True):
    """A webhook bound to a task by its name ``tasks/{id}/pushNotificationConfigs/{cfg}``."""

    name: str = ""
    """The compound resource name."""
    push_notification_config: PushNotificationConfig
    """The webhook."""


class ListTaskPushNotificationConfigResponse(WireStruct, kw_only=True, frozen=True):
    """The result of ``GET /v1/tasks/{id}/pushNotificationConfigs``."""

    configs: list[TaskPushNotificationConfig] = field(default_factory=list)
    """The configs."""
    next_page_token: str = ""
    """Cursor of the next page; empty on the last page."""


# --- request bodies --------------------------------------------------------------------------


class SendMessageConfiguration(WireStruct, kw_only=True, frozen=True):
    """How the server should handle a sent message."""

    accepted_output_modes: list[str] = field(default_factory=list)
    """Media types the client accepts."""
    push_notification: PushNotificationConfig | None = None
    """A webhook to register for the task."""
    history_length: HistoryLength = 0
    """At most this many recent messages in the returned task; proto3 cannot tell 0 from
    unset, so 0 means "the server's default" here (spec-decisions A10)."""
    blocking: bool | None = None
    """Wait for a terminal or interrupted state. Absent means wait (the reference SDK's
    reading, spec-decisions F4), although a proto3 parser would read it as false."""


class SendMessageRequest(WireStruct, kw_only=True, frozen=True):
    """The body of ``POST /v1/message:send`` and ``:stream`` (proto ``request`` is ``message``)."""

    request: Message = field(name="message")
    """The message."""
    configuration: SendMessageConfiguration | None = None
    """How to handle it."""
    metadata: Struct = field(default_factory=dict)
    """Free-form request metadata."""


class CancelTaskRequest(WireStruct, kw_only=True, frozen=True):
    """The optional body of ``POST /v1/tasks/{id}:cancel``: ``{name: "tasks/{id}"}``."""

    name: str = ""
    """The task's resource name; when present it must name the task of the path."""


class TaskSubscriptionRequest(WireStruct, kw_only=True, frozen=True):
    """The optional body of ``POST /v1/tasks/{id}:subscribe``: ``{name: "tasks/{id}"}``."""

    name: str = ""
    """The task's resource name; when present it must name the task of the path."""


class CreateTaskPushNotificationConfigBody(WireStruct, kw_only=True, frozen=True):
    """The body of ``POST /v1/tasks/{id}/pushNotificationConfigs``, in either form clients use.

    The proto's transcoding (``body: "config"``) makes the body a bare
    ``TaskPushNotificationConfig`` (``{name, pushNotificationConfig}``); the v0.3 prose and
    the reference SDK's client send the whole ``CreateTaskPushNotificationConfigRequest``
    (``{parent, configId, config: {...}}``). This struct holds the members of both; which
    form was sent is decided in :mod:`.rest_convert`.
    """

    parent: str = ""
    """``tasks/{id}`` (request form)."""
    config_id: str = ""
    """The config id (request form)."""
    config: TaskPushNotificationConfig | None = None
    """The config (request form)."""
    name: str = ""
    """``tasks/{id}/pushNotificationConfigs/{cfg}`` (bare form)."""
    push_notification_config: PushNotificationConfig | None = None
    """The webhook (bare form)."""


# --- agent card (GET /v1/card) ---------------------------------------------------------------


class AgentInterface(WireStruct, kw_only=True, frozen=True):
    """An endpoint: a URL and the transport spoken there."""

    url: str = ""
    """The endpoint."""
    transport: str = ""
    """``JSONRPC``, ``GRPC``, ``HTTP+JSON`` or a custom transport."""


class AgentProvider(WireStruct, kw_only=True, frozen=True):
    """The organisation behind the agent."""

    url: str = ""
    """The provider's website."""
    organization: str = ""
    """The provider's name."""


class AgentExtension(WireStruct, kw_only=True, frozen=True):
    """A protocol extension the agent supports."""

    uri: str = ""
    """The extension's URI."""
    description: str = ""
    """What it does for this agent."""
    required: bool = False
    """Clients must activate it."""
    params: Struct = field(default_factory=dict)
    """Extension-specific configuration."""


class AgentCapabilities(WireStruct, kw_only=True, frozen=True):
    """Optional features of the agent (no presence in the v0.3 proto: false is omitted)."""

    streaming: bool = False
    """Streaming is served."""
    push_notifications: bool = False
    """Push-notification configs are served."""
    extensions: list[AgentExtension] = field(default_factory=list)
    """Extensions the agent supports."""


class StringList(WireStruct, kw_only=True, frozen=True):
    """A list of strings (the scopes of one scheme in a requirement)."""

    list: _Strings = field(default_factory=_new_strings)
    """The strings."""


class Security(WireStruct, kw_only=True, frozen=True):
    """One security requirement: scheme name -> scopes; all must be satisfied."""

    schemes: dict[str, StringList] = field(default_factory=dict)
    """Scheme name -> required scopes."""


class APIKeySecurityScheme(WireStruct, kw_only=True, frozen=True):
    """An API key in a query parameter, header or cookie."""

    description: str = ""
    """Human-readable description."""
    location: str = ""
    """``query``, ``header`` or ``cookie``."""
    name: str = ""
    """Name of the parameter, header or cookie."""


class HTTPAuthSecurityScheme(WireStruct, kw_only=True, frozen=True):
    """HTTP authentication, e.g. Bearer."""

    description: str = ""
    """Human-readable description."""
    scheme: str = ""
    """The IANA scheme name."""
    bearer_format: str = ""
    """A hint for the bearer token's format."""


class AuthorizationCodeOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 authorization code flow."""

    authorization_url: str = ""
    """The authorization endpoint."""
    token_url: str = ""
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str] = field(default_factory=dict)
    """Scope -> description."""


class ClientCredentialsOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 client credentials flow."""

    token_url: str = ""
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str] = field(default_factory=dict)
    """Scope -> description."""


class ImplicitOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 implicit flow."""

    authorization_url: str = ""
    """The authorization endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str] = field(default_factory=dict)
    """Scope -> description."""


class PasswordOAuthFlow(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0 resource owner password flow."""

    token_url: str = ""
    """The token endpoint."""
    refresh_url: str = ""
    """The refresh endpoint."""
    scopes: dict[str, str] = field(default_factory=dict)
    """Scope -> description."""


class OAuthFlows(WireStruct, kw_only=True, frozen=True):
    """At most one OAuth 2.0 flow (a proto oneof, which may also be left unset)."""

    #: The members of the proto oneof ``flow``; unlike a v1.0 oneof, none may be set.
    FLOWS: ClassVar[tuple[str, ...]] = (
        "authorization_code",
        "client_credentials",
        "implicit",
        "password",
    )

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    """Authorization code flow."""
    client_credentials: ClientCredentialsOAuthFlow | None = None
    """Client credentials flow."""
    implicit: ImplicitOAuthFlow | None = None
    """Implicit flow."""
    password: PasswordOAuthFlow | None = None
    """Password flow."""

    def __post_init__(self) -> None:
        if sum(getattr(self, name) is not None for name in self.FLOWS) > 1:
            raise ValueError("OAuthFlows holds at most one flow")


class OAuth2SecurityScheme(WireStruct, kw_only=True, frozen=True):
    """OAuth 2.0."""

    description: str = ""
    """Human-readable description."""
    flows: OAuthFlows = field(default_factory=OAuthFlows)
    """The flow offered."""
    oauth2_metadata_url: str = ""
    """RFC 8414 authorization server metadata URL."""


class OpenIdConnectSecurityScheme(WireStruct, kw_only=True, frozen=True):
    """OpenID Connect discovery."""

    description: str = ""
    """Human-readable description."""
    open_id_connect_url: str = ""
    """The discovery URL."""


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


class AgentSkill(WireStruct, kw_only=True, frozen=True):
    """Something the agent can do."""

    id: str = ""
    """Unique id of the skill."""
    name: str = ""
    """Human-readable name."""
    description: str = ""
    """What the skill does."""
    tags: list[str] = field(default_factory=list)
    """Keywords."""
    examples: list[str] = field(default_factory=list)
    """Example prompts."""
    input_modes: list[str] = field(default_factory=list)
    """Media types accepted, when they differ from the card's defaults."""
    output_modes: list[str] = field(default_factory=list)
    """Media types produced, when they differ from the card's defaults."""
    security: list[Security] = field(default_factory=list)
    """Security needed for this skill in particular."""


class AgentCardSignature(WireStruct, kw_only=True, frozen=True):
    """A JWS signature over the card."""

    protected: str
    """The base64url protected header."""
    signature: str
    """The base64url signature."""
    header: Struct = field(default_factory=dict)
    """The unprotected header."""


class AgentCard(WireStruct, kw_only=True, frozen=True):
    """The v0.3 proto card served by ``GET /v1/card``: one ``url`` + transport, one version.

    The v0.3 proto has no ``iconUrl`` and no ``stateTransitionHistory`` capability, and its
    security schemes are oneof wrappers, so this is not the JSON-RPC v0.3 card.
    """

    protocol_version: str = ""
    """The A2A version the agent speaks, full semver (``0.3.0``)."""
    name: str = ""
    """Human-readable name."""
    description: str = ""
    """What the agent does."""
    url: str = ""
    """The main endpoint."""
    preferred_transport: str = ""
    """The transport at ``url``."""
    additional_interfaces: list[AgentInterface] = field(default_factory=list)
    """Every endpoint, the main one included."""
    provider: AgentProvider | None = None
    """Who provides the agent."""
    version: str = ""
    """The agent's own version."""
    documentation_url: str = ""
    """Where its documentation lives."""
    capabilities: AgentCapabilities | None = None
    """Optional features served."""
    security_schemes: dict[str, SecurityScheme] = field(default_factory=dict)
    """Named security schemes."""
    security: list[Security] = field(default_factory=list)
    """Alternatives of schemes a client must satisfy."""
    default_input_modes: list[str] = field(default_factory=list)
    """Media types accepted by default."""
    default_output_modes: list[str] = field(default_factory=list)
    """Media types produced by default."""
    skills: list[AgentSkill] = field(default_factory=list)
    """What the agent can do."""
    supports_authenticated_extended_card: bool = False
    """``GET /v1/card`` serves an extended card to authenticated callers."""
    signatures: list[AgentCardSignature] = field(default_factory=list)
    """JWS signatures of the card."""


#: Every struct of the v0.3 REST dialect, for tests, strategies and documentation.
ALL_STRUCTS: tuple[type[WireStruct], ...] = (
    FilePart,
    DataPart,
    Part,
    Message,
    TaskStatus,
    Artifact,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    SendMessageResponse,
    StreamResponse,
    AuthenticationInfo,
    PushNotificationConfig,
    TaskPushNotificationConfig,
    ListTaskPushNotificationConfigResponse,
    SendMessageConfiguration,
    SendMessageRequest,
    CancelTaskRequest,
    TaskSubscriptionRequest,
    CreateTaskPushNotificationConfigBody,
    AgentInterface,
    AgentProvider,
    AgentExtension,
    AgentCapabilities,
    StringList,
    Security,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    ImplicitOAuthFlow,
    PasswordOAuthFlow,
    OAuthFlows,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTlsSecurityScheme,
    SecurityScheme,
    AgentSkill,
    AgentCardSignature,
    AgentCard,
)
