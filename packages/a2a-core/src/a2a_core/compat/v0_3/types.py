"""L0: the v0.3 JSON-RPC objects as frozen msgspec Structs.

This module owns the *shape* of the v0.3 dialect: every object of
``reference/v0.3/a2a.schema.json`` that a server reads (request ``params``) or writes
(results, stream events, webhook bodies, the agent card). Nothing here has behaviour beyond
validation; :mod:`a2a_core.compat.v0_3.convert` maps these values to and from the v1.0
model, which is the only model the rest of the library sees.

Rules of the family (the v0.3 twin of :class:`a2a_core.types._base.WireStruct`):

- camelCase on the wire, frozen, keyword-only, unknown fields ignored.
- Members the schema lists as ``required`` have no default. Optional members default to
  ``None`` and are omitted while unset, so a decoded value re-encodes to the same JSON,
  explicit ``{}``, ``[]`` and ``false`` included (the golden tests check this).
- ``kind`` is not a field: it is the msgspec tag of ``Message``, ``Task``, the two update
  events and the three parts, so it is always emitted and selects the member of each
  union on decode. Where a struct stands alone (``MessageSendParams.message``) a missing
  ``kind`` is accepted, a wrong one is not. Security schemes are tagged on ``type``.
- ``FilePart.file`` is the schema's untagged ``FileWithBytes | FileWithUri``; msgspec cannot
  decode an untagged union of structs, so :class:`FileContent` has both members optional
  and checks that exactly one is set.
- Where a v0.3 member becomes a v1.0 member that the v1.0 model constrains (non-empty ids,
  non-empty ``parts``, ``historyLength`` not negative, a push scheme present), the same
  constraint applies here. The schema is looser, but a client value the v1.0 side would
  refuse must be refused at decode (InvalidParams) rather than slip through conversion:
  every decoded v0.3 value converts to a valid v1.0 value.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Annotated, ClassVar, TypeAlias

import msgspec
from msgspec import field

from a2a_core.types._common import HistoryLength, NonEmptyStr, Struct

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
    "AuthorizationCodeOAuthFlow",
    "ClientCredentialsOAuthFlow",
    "DataPart",
    "DeleteTaskPushNotificationConfigParams",
    "FileContent",
    "FilePart",
    "GetTaskPushNotificationConfigParams",
    "HTTPAuthSecurityScheme",
    "ImplicitOAuthFlow",
    "ListTaskPushNotificationConfigParams",
    "Message",
    "MessageSendConfiguration",
    "MessageSendParams",
    "MutualTLSSecurityScheme",
    "OAuth2SecurityScheme",
    "OAuthFlows",
    "OpenIdConnectSecurityScheme",
    "Part",
    "PasswordOAuthFlow",
    "PushNotificationAuthenticationInfo",
    "PushNotificationConfig",
    "Role",
    "SecurityRequirement",
    "SecurityScheme",
    "SendMessageResult",
    "StreamResult",
    "Task",
    "TaskArtifactUpdateEvent",
    "TaskIdParams",
    "TaskPushNotificationConfig",
    "TaskQueryParams",
    "TaskState",
    "TaskStatus",
    "TaskStatusUpdateEvent",
    "TextPart",
    "V03Struct",
]


#: ``bytes`` under another name: ``FileContent.bytes`` shadows the builtin in its class body.
_Bytes: TypeAlias = bytes


class V03Struct(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    kw_only=True,
    frozen=True,
):
    """Base of every v0.3 value: camelCase, unset members omitted, immutable.

    msgspec applies ``kw_only`` only to the fields of the class that sets it, so every
    subclass repeats ``kw_only=True``, and ``frozen=True`` so that type checkers (which see
    Structs as dataclasses) know the subclass is frozen too.
    """


# --- enums ---------------------------------------------------------------------------------


class TaskState(enum.Enum):
    """A task's lifecycle state, spelled as the v0.3 schema spells it."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    COMPLETED = "completed"
    CANCELED = "canceled"
    FAILED = "failed"
    REJECTED = "rejected"
    AUTH_REQUIRED = "auth-required"
    UNKNOWN = "unknown"


class Role(enum.Enum):
    """Who sent a message."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    USER = "user"
    AGENT = "agent"


# --- parts ---------------------------------------------------------------------------------


class TextPart(V03Struct, tag_field="kind", tag="text", kw_only=True, frozen=True):
    """Text content (``kind: "text"``)."""

    text: str
    """The text."""
    metadata: Struct | None = None
    """Free-form metadata of the part."""


class FileContent(V03Struct, kw_only=True, frozen=True):
    """The schema's ``FileWithBytes | FileWithUri``: exactly one of ``bytes`` or ``uri``."""

    #: The exactly-one group, named as v1.0 oneofs name theirs (read by the strategies).
    __oneof__: ClassVar[tuple[str, ...]] = ("bytes", "uri")

    bytes: _Bytes | None = None
    """The file content (base64 on the wire)."""
    uri: str | None = None
    """Where the file content can be fetched."""
    name: str | None = None
    """The file name."""
    mime_type: str | None = None
    """The media type of the content."""

    def __post_init__(self) -> None:
        if (self.bytes is None) == (self.uri is None):
            raise ValueError("file needs exactly one of: bytes, uri")


class FilePart(V03Struct, tag_field="kind", tag="file", kw_only=True, frozen=True):
    """A file, inline or by reference (``kind: "file"``)."""

    file: FileContent
    """The file."""
    metadata: Struct | None = None
    """Free-form metadata of the part."""


class DataPart(V03Struct, tag_field="kind", tag="data", kw_only=True, frozen=True):
    """Structured content (``kind: "data"``); v0.3 allows only a JSON object here."""

    data: Struct
    """The data object."""
    metadata: Struct | None = None
    """Free-form metadata of the part."""


#: One part of a message or artifact, selected by ``kind``.
Part: TypeAlias = TextPart | FilePart | DataPart

NonEmptyParts = Annotated[list[Part], msgspec.Meta(min_length=1)]


# --- messages, tasks, artifacts, events ----------------------------------------------------


class Message(V03Struct, tag_field="kind", tag="message", kw_only=True, frozen=True):
    """One turn of communication (``kind: "message"``)."""

    role: Role
    """Who sent it."""
    parts: NonEmptyParts
    """The content (at least one part)."""
    metadata: Struct | None = None
    """Free-form metadata."""
    extensions: list[str] | None = None
    """URIs of the extensions relevant to this message."""
    reference_task_ids: list[str] | None = None
    """Other tasks this message refers to."""
    message_id: NonEmptyStr
    """Unique id chosen by the sender."""
    task_id: str | None = None
    """The task this message belongs to."""
    context_id: str | None = None
    """The conversation this message belongs to."""


class TaskStatus(V03Struct, kw_only=True, frozen=True):
    """A task's state, with an optional message and time.

    ``timestamp`` is ISO 8601; the spec's own examples omit the zone, so a naive value is
    accepted (and kept naive on re-encoding; the v1.0 side reads it as UTC).
    """

    state: TaskState
    """The lifecycle state."""
    message: Message | None = None
    """A message that goes with the status."""
    timestamp: _dt.datetime | None = None
    """When the status was recorded."""


class Artifact(V03Struct, kw_only=True, frozen=True):
    """An output of a task."""

    artifact_id: NonEmptyStr
    """Unique id within the task."""
    name: str | None = None
    """A human-readable name."""
    description: str | None = None
    """A human-readable description."""
    parts: NonEmptyParts
    """The content (at least one part)."""
    metadata: Struct | None = None
    """Free-form metadata."""
    extensions: list[str] | None = None
    """URIs of the extensions relevant to this artifact."""


class Task(V03Struct, tag_field="kind", tag="task", kw_only=True, frozen=True):
    """The unit of work (``kind: "task"``); also the v0.3 webhook body."""

    id: NonEmptyStr
    """The task id."""
    context_id: str
    """The conversation the task belongs to (required in v0.3)."""
    status: TaskStatus
    """The current status."""
    history: list[Message] | None = None
    """The messages exchanged so far."""
    artifacts: list[Artifact] | None = None
    """Outputs produced so far."""
    metadata: Struct | None = None
    """Free-form metadata."""


class TaskStatusUpdateEvent(
    V03Struct, tag_field="kind", tag="status-update", kw_only=True, frozen=True
):
    """A streamed status change (``kind: "status-update"``); ``final`` ends the stream."""

    task_id: NonEmptyStr
    """The task that changed."""
    context_id: NonEmptyStr
    """The task's context."""
    status: TaskStatus
    """The new status."""
    final: bool
    """This is the last event of the stream."""
    metadata: Struct | None = None
    """Free-form metadata."""


class TaskArtifactUpdateEvent(
    V03Struct, tag_field="kind", tag="artifact-update", kw_only=True, frozen=True
):
    """A streamed artifact or artifact chunk (``kind: "artifact-update"``)."""

    task_id: NonEmptyStr
    """The task the artifact belongs to."""
    context_id: NonEmptyStr
    """The task's context."""
    artifact: Artifact
    """The artifact, or the chunk to append."""
    append: bool | None = None
    """Append these parts to the artifact already sent with the same id."""
    last_chunk: bool | None = None
    """This is the final chunk of the artifact."""
    metadata: Struct | None = None
    """Free-form metadata."""


#: The ``result`` of ``message/send``: a bare Task or Message, told apart by ``kind``.
SendMessageResult: TypeAlias = Task | Message
#: The ``result`` of each event of ``message/stream`` and ``tasks/resubscribe``.
StreamResult: TypeAlias = Task | Message | TaskStatusUpdateEvent | TaskArtifactUpdateEvent


# --- push notifications --------------------------------------------------------------------


class PushNotificationAuthenticationInfo(V03Struct, kw_only=True, frozen=True):
    """Credentials for a webhook; v1.0 keeps one scheme, so at least one is required."""

    schemes: Annotated[list[NonEmptyStr], msgspec.Meta(min_length=1)]
    """HTTP authentication schemes (``Bearer``...)."""
    credentials: str | None = None
    """The credentials."""


class PushNotificationConfig(V03Struct, kw_only=True, frozen=True):
    """A webhook (without the task it belongs to)."""

    id: str | None = None
    """Config id; the server assigns one when absent."""
    url: NonEmptyStr
    """The webhook URL."""
    token: str | None = None
    """A token echoed to the webhook."""
    authentication: PushNotificationAuthenticationInfo | None = None
    """Credentials for the webhook."""


class TaskPushNotificationConfig(V03Struct, kw_only=True, frozen=True):
    """A webhook bound to a task: params and result of ``tasks/pushNotificationConfig/*``."""

    task_id: str
    """The task."""
    push_notification_config: PushNotificationConfig
    """The webhook."""


# --- request params ------------------------------------------------------------------------


class MessageSendConfiguration(V03Struct, kw_only=True, frozen=True):
    """How the server should handle a sent message."""

    accepted_output_modes: list[str] | None = None
    """Media types the client accepts."""
    history_length: HistoryLength | None = None
    """At most this many recent messages in the returned task (0: none)."""
    push_notification_config: PushNotificationConfig | None = None
    """A webhook to register for the task."""
    blocking: bool | None = None
    """Wait for a terminal or interrupted state (unset: wait)."""


class MessageSendParams(V03Struct, kw_only=True, frozen=True):
    """Params of ``message/send`` and ``message/stream``."""

    message: Message
    """The message."""
    configuration: MessageSendConfiguration | None = None
    """How to handle it."""
    metadata: Struct | None = None
    """Free-form request metadata."""


class TaskIdParams(V03Struct, kw_only=True, frozen=True):
    """Params of ``tasks/cancel`` and ``tasks/resubscribe``."""

    id: NonEmptyStr
    """The task id."""
    metadata: Struct | None = None
    """Free-form request metadata."""


class TaskQueryParams(V03Struct, kw_only=True, frozen=True):
    """Params of ``tasks/get``."""

    id: NonEmptyStr
    """The task id."""
    history_length: HistoryLength | None = None
    """At most this many recent messages (0: none)."""
    metadata: Struct | None = None
    """Free-form request metadata."""


class GetTaskPushNotificationConfigParams(V03Struct, kw_only=True, frozen=True):
    """Params of ``tasks/pushNotificationConfig/get`` (also accepts a bare TaskIdParams)."""

    id: NonEmptyStr
    """The **task** id."""
    push_notification_config_id: NonEmptyStr | None = None
    """The config id; absent means the task's default config (id = task id)."""
    metadata: Struct | None = None
    """Free-form request metadata."""


class ListTaskPushNotificationConfigParams(V03Struct, kw_only=True, frozen=True):
    """Params of ``tasks/pushNotificationConfig/list``."""

    id: NonEmptyStr
    """The **task** id."""
    metadata: Struct | None = None
    """Free-form request metadata."""


class DeleteTaskPushNotificationConfigParams(V03Struct, kw_only=True, frozen=True):
    """Params of ``tasks/pushNotificationConfig/delete``."""

    id: NonEmptyStr
    """The **task** id."""
    push_notification_config_id: NonEmptyStr
    """The config id."""
    metadata: Struct | None = None
    """Free-form request metadata."""


# --- agent card ----------------------------------------------------------------------------


class AgentProvider(V03Struct, kw_only=True, frozen=True):
    """The organisation behind the agent."""

    organization: str
    """The provider's name."""
    url: str
    """The provider's website."""


class AgentExtension(V03Struct, kw_only=True, frozen=True):
    """A protocol extension the agent supports."""

    uri: str
    """The extension's URI."""
    description: str | None = None
    """What it does for this agent."""
    required: bool | None = None
    """Clients must activate it."""
    params: Struct | None = None
    """Extension-specific configuration."""


class AgentCapabilities(V03Struct, kw_only=True, frozen=True):
    """Optional features of the agent."""

    streaming: bool | None = None
    """``message/stream`` and ``tasks/resubscribe`` are served."""
    push_notifications: bool | None = None
    """Push-notification configs are served."""
    state_transition_history: bool | None = None
    """The agent keeps a history of state transitions (removed in v1.0)."""
    extensions: list[AgentExtension] | None = None
    """Extensions the agent supports."""


#: ``{scheme name: [scopes]}``; all schemes of one requirement must be satisfied.
SecurityRequirement: TypeAlias = dict[str, list[str]]


class APIKeySecurityScheme(V03Struct, tag_field="type", tag="apiKey", kw_only=True, frozen=True):
    """An API key in a query parameter, header or cookie (``type: "apiKey"``)."""

    description: str | None = None
    """Human-readable description."""
    in_: str = field(name="in")
    """``query``, ``header`` or ``cookie`` (not enforced: v1.0's ``location`` is free)."""
    name: str
    """Name of the parameter, header or cookie."""


class HTTPAuthSecurityScheme(V03Struct, tag_field="type", tag="http", kw_only=True, frozen=True):
    """HTTP authentication, e.g. Bearer (``type: "http"``)."""

    description: str | None = None
    """Human-readable description."""
    scheme: str
    """The IANA scheme name."""
    bearer_format: str | None = None
    """A hint for the bearer token's format."""


class AuthorizationCodeOAuthFlow(V03Struct, kw_only=True, frozen=True):
    """OAuth 2.0 authorization code flow."""

    authorization_url: str
    """The authorization endpoint."""
    token_url: str
    """The token endpoint."""
    refresh_url: str | None = None
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""


class ClientCredentialsOAuthFlow(V03Struct, kw_only=True, frozen=True):
    """OAuth 2.0 client credentials flow."""

    token_url: str
    """The token endpoint."""
    refresh_url: str | None = None
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""


class ImplicitOAuthFlow(V03Struct, kw_only=True, frozen=True):
    """OAuth 2.0 implicit flow."""

    authorization_url: str
    """The authorization endpoint."""
    refresh_url: str | None = None
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""


class PasswordOAuthFlow(V03Struct, kw_only=True, frozen=True):
    """OAuth 2.0 resource owner password flow."""

    token_url: str
    """The token endpoint."""
    refresh_url: str | None = None
    """The refresh endpoint."""
    scopes: dict[str, str]
    """Scope -> description."""


class OAuthFlows(V03Struct, kw_only=True, frozen=True):
    """The OAuth 2.0 flows a scheme offers; unlike v1.0, several may be set (or none)."""

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    """Authorization code flow."""
    client_credentials: ClientCredentialsOAuthFlow | None = None
    """Client credentials flow."""
    implicit: ImplicitOAuthFlow | None = None
    """Implicit flow."""
    password: PasswordOAuthFlow | None = None
    """Password flow."""


class OAuth2SecurityScheme(V03Struct, tag_field="type", tag="oauth2", kw_only=True, frozen=True):
    """OAuth 2.0 (``type: "oauth2"``)."""

    description: str | None = None
    """Human-readable description."""
    flows: OAuthFlows
    """The flows offered."""
    oauth2_metadata_url: str | None = None
    """RFC 8414 authorization server metadata URL."""


class OpenIdConnectSecurityScheme(
    V03Struct, tag_field="type", tag="openIdConnect", kw_only=True, frozen=True
):
    """OpenID Connect discovery (``type: "openIdConnect"``)."""

    description: str | None = None
    """Human-readable description."""
    open_id_connect_url: str
    """The discovery URL."""


class MutualTLSSecurityScheme(
    V03Struct, tag_field="type", tag="mutualTLS", kw_only=True, frozen=True
):
    """Mutual TLS (``type: "mutualTLS"``)."""

    description: str | None = None
    """Human-readable description."""


#: A security scheme, selected by ``type``.
SecurityScheme: TypeAlias = (
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTLSSecurityScheme
)


class AgentSkill(V03Struct, kw_only=True, frozen=True):
    """Something the agent can do."""

    id: str
    """Unique id of the skill."""
    name: str
    """Human-readable name."""
    description: str
    """What the skill does."""
    tags: list[str]
    """Keywords."""
    examples: list[str] | None = None
    """Example prompts."""
    input_modes: list[str] | None = None
    """Media types accepted, when they differ from the card's defaults."""
    output_modes: list[str] | None = None
    """Media types produced, when they differ from the card's defaults."""
    security: list[SecurityRequirement] | None = None
    """Security needed for this skill in particular."""


class AgentInterface(V03Struct, kw_only=True, frozen=True):
    """An additional endpoint: a URL and the transport spoken there."""

    url: NonEmptyStr
    """The endpoint."""
    transport: NonEmptyStr
    """``JSONRPC``, ``GRPC``, ``HTTP+JSON`` or a custom transport."""


class AgentCardSignature(V03Struct, kw_only=True, frozen=True):
    """A JWS signature over the card."""

    protected: str
    """The base64url protected header."""
    signature: str
    """The base64url signature."""
    header: Struct | None = None
    """The unprotected header."""


class AgentCard(V03Struct, kw_only=True, frozen=True):
    """The v0.3 agent card: one main ``url`` + ``preferredTransport``, one protocol version."""

    protocol_version: NonEmptyStr
    """The A2A version the agent speaks, full semver (``0.3.0``)."""
    name: str
    """Human-readable name."""
    description: str
    """What the agent does."""
    url: NonEmptyStr
    """The main endpoint."""
    preferred_transport: NonEmptyStr | None = None
    """The transport at ``url`` (absent: ``JSONRPC``)."""
    additional_interfaces: list[AgentInterface] | None = None
    """Every endpoint, the main one included."""
    icon_url: str | None = None
    """An icon for the agent."""
    provider: AgentProvider | None = None
    """Who provides the agent."""
    version: str
    """The agent's own version."""
    documentation_url: str | None = None
    """Where its documentation lives."""
    capabilities: AgentCapabilities
    """Optional features served."""
    security_schemes: dict[str, SecurityScheme] | None = None
    """Named security schemes."""
    security: list[SecurityRequirement] | None = None
    """Alternatives of schemes a client must satisfy."""
    default_input_modes: list[str]
    """Media types accepted by default."""
    default_output_modes: list[str]
    """Media types produced by default."""
    skills: list[AgentSkill]
    """What the agent can do."""
    supports_authenticated_extended_card: bool | None = None
    """``agent/getAuthenticatedExtendedCard`` is served."""
    signatures: list[AgentCardSignature] | None = None
    """JWS signatures of the card."""


#: Every struct of the v0.3 dialect, for tests, strategies and documentation.
ALL_STRUCTS: tuple[type[V03Struct], ...] = (
    TextPart,
    FileContent,
    FilePart,
    DataPart,
    Message,
    TaskStatus,
    Artifact,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    PushNotificationAuthenticationInfo,
    PushNotificationConfig,
    TaskPushNotificationConfig,
    MessageSendConfiguration,
    MessageSendParams,
    TaskIdParams,
    TaskQueryParams,
    GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams,
    DeleteTaskPushNotificationConfigParams,
    AgentProvider,
    AgentExtension,
    AgentCapabilities,
    APIKeySecurityScheme,
    HTTPAuthSecurityScheme,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    ImplicitOAuthFlow,
    PasswordOAuthFlow,
    OAuthFlows,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTLSSecurityScheme,
    AgentSkill,
    AgentInterface,
    AgentCardSignature,
    AgentCard,
)
