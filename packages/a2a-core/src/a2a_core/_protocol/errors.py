"""Every error the protocol can answer with, and its wire identity in each binding.

This module owns the single error table of the library (spec-decisions F7): each `A2AError` subclass
carries, as class attributes, its JSON-RPC code, its v1.0 ``google.rpc.ErrorInfo`` reason,
its REST status and its gRPC status name, for both the v1.0.0 and the v1.0.1 mapping (the
two disagree, spec-decisions A2). Nothing else in the library spells a code or a status.

It also owns the encoders that turn an error into a wire payload:

- `jsonrpc_error_object`: the ``error`` member of a JSON-RPC response, in the v1.0 form
  (``data`` is an array of ProtoJSON ``Any`` details) or the v0.3 form (free-form ``data``);
- `rest_error_body`: the AIP-193 ``{"error": google.rpc.Status}`` body of the HTTP+JSON binding.

Both return small frozen msgspec Structs ready for ``msgspec.json.encode``; encoding bytes is
the caller's job, so a binding can embed them without decoding and re-encoding.

Client mistakes are `A2AError` instances that become ready replies. A developer's misuse of
the library is a `LocalProtocolError`: it is not an `A2AError`, it is raised to the
developer, and the server answers it as an internal error.

What the client sees is only the message, the reason and the metadata the raiser chose:
``str(err)`` is the message, and nothing here embeds ``repr()`` of ``data`` or a traceback.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final, Literal

import msgspec

from a2a_core._protocol.operations import Dialect

__all__ = [
    "ERROR_CLASSES",
    "ERROR_INFO_DOMAIN",
    "LIBRARY_ERROR_DOMAIN",
    "A2AError",
    "AuthenticatedExtendedCardNotConfiguredError",
    "BadRequest",
    "ContentTypeNotSupportedError",
    "Dialect",
    "ErrorInfo",
    "ExtendedAgentCardNotConfiguredError",
    "ExtensionSupportRequiredError",
    "FieldViolation",
    "HttpStatusTable",
    "InternalError",
    "InvalidAgentResponseError",
    "InvalidParamsError",
    "InvalidRequestError",
    "JSONParseError",
    "JsonRpcErrorObject",
    "LocalProtocolError",
    "MissingBaseUrlError",
    "MethodNotFoundError",
    "PermissionDeniedError",
    "PushNotificationNotSupportedError",
    "ResourceExhaustedError",
    "RestErrorBody",
    "RestStatus",
    "ServerUnavailableError",
    "TableName",
    "TaskNotCancelableError",
    "TaskNotFoundError",
    "UnauthenticatedError",
    "UnsupportedOperationError",
    "VersionNotSupportedError",
    "error_class_for_code",
    "grpc_status_for",
    "http_status_for",
    "jsonrpc_error_object",
    "rest_error_body",
]


#: ``ErrorInfo.domain`` of every A2A error (spec-decisions F7).
ERROR_INFO_DOMAIN: Final = "a2a-protocol.org"
#: ``ErrorInfo.domain`` of the errors this library adds to A2A's: their reasons are ours,
#: and must never be read as (or collide with) a reason the A2A spec defines later.
LIBRARY_ERROR_DOMAIN: Final = "a2a-py.dev"

_ERROR_INFO_TYPE: Final = "type.googleapis.com/google.rpc.ErrorInfo"
_BAD_REQUEST_TYPE: Final = "type.googleapis.com/google.rpc.BadRequest"


class HttpStatusTable(enum.StrEnum):
    """Which edition of the spec's error mapping to answer with (spec-decisions A2).

    v1.0.0 (the default, asserted by the v1.0 TCK) answers 409/415/502 and gRPC
    ``UNIMPLEMENTED`` where v1.0.1 answers 400/400/500 and ``FAILED_PRECONDITION``.
    Being a ``StrEnum``, each member equals its string, so ``"v1.0.1"`` works too.
    """

    V1_0_0 = "v1.0.0"
    V1_0_1 = "v1.0.1"


#: The string spellings accepted wherever an `HttpStatusTable` is expected.
TableName = Literal["v1.0.0", "v1.0.1"]


class LocalProtocolError(Exception):
    """The developer used the library in a way the protocol forbids.

    Examples: an event after a task reached a terminal state, a second reply to one call, a
    card served without a base URL. It is raised to the developer (it is a bug in the server,
    not in the client), and a server that catches it answers the client with `InternalError`
    without revealing this message.
    """


class MissingBaseUrlError(LocalProtocolError):
    """The agent card cannot be built: it needs absolute interface URLs and neither the
    server (``base_url``) nor the request (the adapter's ``trust_host_header``, middleware's
    ``put_base_url``) gives one. A configuration mistake the server reports when it starts
    (`A2AServer.check_base_url`) and answers with a 503 that says what to add."""

    #: What to add, in the words of the server's and the adapters' options.
    fix = (
        "Give A2AServer a base_url (A2AServer(..., base_url='https://agent.example.com/a2a')), "
        "or let the adapter derive it from each request's Host header "
        "(trust_host_header=True, only behind a proxy that sets Host), or set it per "
        "request from middleware (put_base_url)."
    )

    def __init__(self) -> None:
        super().__init__(
            "The agent card needs the public URL of the A2A endpoints, and none is "
            f"configured. {self.fix}"
        )


class A2AError(Exception):
    """Base of every error that is answered to the client.

    Subclasses set the class attributes that give the error's identity on each binding.
    ``A2AError`` itself carries the identity of `InternalError`, so raising the base class
    directly is answered as an internal error rather than failing to encode.

    Instances carry what varies per occurrence: the ``message`` (the class's
    ``default_message`` when not given), free-form ``data`` (the v0.3 ``error.data``; not sent
    in v1.0, whose ``data`` is an array of typed details) and ``metadata`` (the string map of
    the v1.0 ``ErrorInfo``). Keep secrets and internal reprs out of all three: they go to the
    client verbatim.
    """

    #: JSON-RPC ``error.code``.
    code: ClassVar[int] = -32603
    #: The message used when none is given (the v0.3 JSON Schema default where there is one).
    default_message: ClassVar[str] = "Internal error"
    #: v1.0 ``google.rpc.ErrorInfo.reason``, UPPER_SNAKE_CASE.
    reason: ClassVar[str] = "INTERNAL"
    #: REST status in the v1.0.0 mapping.
    http_status: ClassVar[int] = 500
    #: REST status in the v1.0.1 mapping.
    http_status_v1_0_1: ClassVar[int] = 500
    #: Canonical gRPC code name in the v1.0.0 mapping (also the AIP-193 ``status``).
    grpc_status: ClassVar[str] = "INTERNAL"
    #: Canonical gRPC code name in the v1.0.1 mapping.
    grpc_status_v1_0_1: ClassVar[str] = "INTERNAL"
    #: ``google.rpc.ErrorInfo.domain``: whose ``reason`` this is.
    domain: ClassVar[str] = ERROR_INFO_DOMAIN

    message: str
    data: object | None
    metadata: dict[str, str]

    def __init__(
        self,
        message: str | None = None,
        *,
        data: object | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        self.message = self.default_message if message is None else message
        self.data = data
        self.metadata = dict(metadata) if metadata else {}
        # Only the message goes into args, so str(err) and tracebacks never show repr(data).
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class JSONParseError(A2AError):
    """The body is not valid JSON (or not valid UTF-8). Always answered with ``id: null``."""

    code = -32700
    default_message = "Invalid JSON payload"
    reason = "JSON_PARSE"
    http_status = http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "INVALID_ARGUMENT"


class InvalidRequestError(A2AError):
    """The JSON is not a valid JSON-RPC request: bad envelope, batch, or notification."""

    code = -32600
    default_message = "Request payload validation error"
    reason = "INVALID_REQUEST"
    http_status = http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "INVALID_ARGUMENT"


class MethodNotFoundError(A2AError):
    """The method name is unknown, or belongs to a dialect this server does not serve."""

    code = -32601
    default_message = "Method not found"
    reason = "METHOD_NOT_FOUND"
    http_status = http_status_v1_0_1 = 404
    grpc_status = grpc_status_v1_0_1 = "NOT_FOUND"


class FieldViolation(msgspec.Struct, frozen=True):
    """One entry of a ``google.rpc.BadRequest``: which field is wrong, and why."""

    field: str
    """Path of the offending field, e.g. ``message.parts``."""
    description: str
    """Why it is wrong, for humans."""


class InvalidParamsError(A2AError):
    """The params fail validation: missing required fields, bad enum, out-of-range values.

    ``field_violations`` become a ``google.rpc.BadRequest`` detail in v1.0 replies, so a
    client can point at the field; they accept `FieldViolation` values or
    ``(field, description)`` pairs.
    """

    code = -32602
    default_message = "Invalid parameters"
    reason = "INVALID_PARAMS"
    http_status = http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "INVALID_ARGUMENT"

    field_violations: tuple[FieldViolation, ...]

    def __init__(
        self,
        message: str | None = None,
        *,
        data: object | None = None,
        metadata: Mapping[str, str] | None = None,
        field_violations: Iterable[FieldViolation | tuple[str, str]] = (),
    ) -> None:
        super().__init__(message, data=data, metadata=metadata)
        self.field_violations = tuple(
            v if isinstance(v, FieldViolation) else FieldViolation(v[0], v[1])
            for v in field_violations
        )


class InternalError(A2AError):
    """An unexpected failure of the server; the message must not describe internals."""


class TaskNotFoundError(A2AError):
    """Unknown, purged or inaccessible task (or push config); never reveals existence."""

    code = -32001
    default_message = "Task not found"
    reason = "TASK_NOT_FOUND"
    http_status = http_status_v1_0_1 = 404
    grpc_status = grpc_status_v1_0_1 = "NOT_FOUND"


class TaskNotCancelableError(A2AError):
    """Cancel of a task that is terminal or cannot be canceled (spec-decisions A8)."""

    code = -32002
    default_message = "Task cannot be canceled"
    reason = "TASK_NOT_CANCELABLE"
    http_status = 409
    http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "FAILED_PRECONDITION"


class PushNotificationNotSupportedError(A2AError):
    """A push-config operation while ``capabilities.pushNotifications`` is not true."""

    code = -32003
    default_message = "Push Notification is not supported"
    reason = "PUSH_NOTIFICATION_NOT_SUPPORTED"
    http_status = http_status_v1_0_1 = 400
    grpc_status = "UNIMPLEMENTED"
    grpc_status_v1_0_1 = "FAILED_PRECONDITION"


class UnsupportedOperationError(A2AError):
    """An operation the agent does not offer, or one on a terminal task (spec-decisions F7)."""

    code = -32004
    default_message = "This operation is not supported"
    reason = "UNSUPPORTED_OPERATION"
    http_status = http_status_v1_0_1 = 400
    grpc_status = "UNIMPLEMENTED"
    grpc_status_v1_0_1 = "FAILED_PRECONDITION"


class ContentTypeNotSupportedError(A2AError):
    """A part's media type (or the request's Content-Type, spec-decisions A12) is not accepted."""

    code = -32005
    default_message = "Incompatible content types"
    reason = "CONTENT_TYPE_NOT_SUPPORTED"
    http_status = 415
    http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "INVALID_ARGUMENT"


class InvalidAgentResponseError(A2AError):
    """The agent (e.g. a wrapped downstream agent) produced a non-conforming response."""

    code = -32006
    default_message = "Invalid agent response"
    reason = "INVALID_AGENT_RESPONSE"
    http_status = 502
    http_status_v1_0_1 = 500
    grpc_status = grpc_status_v1_0_1 = "INTERNAL"


class ExtendedAgentCardNotConfiguredError(A2AError):
    """The extended-card capability is declared but no extended card is configured."""

    code = -32007
    default_message = "Authenticated Extended Card is not configured"
    reason = "EXTENDED_AGENT_CARD_NOT_CONFIGURED"
    http_status = http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "FAILED_PRECONDITION"


#: The v0.3 name of `ExtendedAgentCardNotConfiguredError` (same class).
AuthenticatedExtendedCardNotConfiguredError = ExtendedAgentCardNotConfiguredError


class ExtensionSupportRequiredError(A2AError):
    """The card marks an extension required, and the client did not request it (v1.0)."""

    code = -32008
    default_message = "A required extension is not supported by the client"
    reason = "EXTENSION_SUPPORT_REQUIRED"
    http_status = http_status_v1_0_1 = 400
    grpc_status = grpc_status_v1_0_1 = "FAILED_PRECONDITION"


class VersionNotSupportedError(A2AError):
    """The requested ``A2A-Version`` is not served by this interface (v1.0)."""

    code = -32009
    default_message = "The requested A2A protocol version is not supported"
    reason = "VERSION_NOT_SUPPORTED"
    http_status = http_status_v1_0_1 = 400
    grpc_status = "UNIMPLEMENTED"
    grpc_status_v1_0_1 = "FAILED_PRECONDITION"


class UnauthenticatedError(A2AError):
    """The call carries no credentials the card's security requirements accept: missing,
    malformed, expired, or signed by nobody we trust.

    Not one of the spec's errors (A2A assigns no JSON-RPC code to authentication,
    spec-decisions A14): -32041 (a mnemonic of 401) in JSON-RPC's server range and the
    library's domain.
    It is answered with HTTP 401 and a ``WWW-Authenticate`` challenge on both bindings,
    JSON-RPC included, before anything of the request is read (see ``docs/security.md``)."""

    code = -32041
    default_message = "Authentication required"
    reason = "UNAUTHENTICATED"
    http_status = http_status_v1_0_1 = 401
    grpc_status = grpc_status_v1_0_1 = "UNAUTHENTICATED"
    domain = LIBRARY_ERROR_DOMAIN


class PermissionDeniedError(A2AError):
    """The credentials are valid, but they lack a scope the security requirement asks for.

    The library's own, like `UnauthenticatedError`: -32043 (a mnemonic of 403), HTTP 403 on
    both bindings, with an ``insufficient_scope`` challenge (RFC 6750 §3.1)."""

    code = -32043
    default_message = "Insufficient scope"
    reason = "PERMISSION_DENIED"
    http_status = http_status_v1_0_1 = 403
    grpc_status = grpc_status_v1_0_1 = "PERMISSION_DENIED"
    domain = LIBRARY_ERROR_DOMAIN


class ServerUnavailableError(A2AError):
    """The server takes no new calls now (it is shutting down): retry, elsewhere or later.

    Not one of the spec's errors: -32050 is in JSON-RPC's range for implementation-defined
    server errors; on REST it is 503, which load balancers and clients retry."""

    code = -32050
    default_message = "The server is unavailable"
    reason = "SERVER_UNAVAILABLE"
    http_status = http_status_v1_0_1 = 503
    grpc_status = grpc_status_v1_0_1 = "UNAVAILABLE"
    domain = LIBRARY_ERROR_DOMAIN


class ResourceExhaustedError(A2AError):
    """The server is at a limit it was configured with (too many running tasks, for the
    server or for the caller); retrying later may succeed.

    Not an A2A error: A2A defines none for "busy", so this one takes a code of the
    JSON-RPC server range far from A2A's own (which count up from -32001), the HTTP status
    and gRPC code of an exhausted quota, and its ErrorInfo the library's own domain.
    """

    code = -32099
    default_message = "The server is busy: try again later"
    reason = "RESOURCE_EXHAUSTED"
    http_status = http_status_v1_0_1 = 429
    grpc_status = grpc_status_v1_0_1 = "RESOURCE_EXHAUSTED"
    domain = LIBRARY_ERROR_DOMAIN


#: Every concrete error class, in code order: the error table, readable as data.
ERROR_CLASSES: Final[tuple[type[A2AError], ...]] = (
    JSONParseError,
    InvalidRequestError,
    MethodNotFoundError,
    InvalidParamsError,
    InternalError,
    TaskNotFoundError,
    TaskNotCancelableError,
    PushNotificationNotSupportedError,
    UnsupportedOperationError,
    ContentTypeNotSupportedError,
    InvalidAgentResponseError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    VersionNotSupportedError,
    UnauthenticatedError,
    PermissionDeniedError,
    ServerUnavailableError,
    ResourceExhaustedError,
)

_BY_CODE: Final[dict[int, type[A2AError]]] = {cls.code: cls for cls in ERROR_CLASSES}


def error_class_for_code(code: int) -> type[A2AError] | None:
    """The error class for a JSON-RPC code (e.g. to rebuild a peer's error), or ``None``."""
    return _BY_CODE.get(code)


def http_status_for(
    err: A2AError | type[A2AError],
    table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0,
) -> int:
    """The REST status of ``err`` in the chosen edition of the mapping.

    An unknown ``table`` raises ``ValueError``: it is a configuration mistake, not input.
    """
    if HttpStatusTable(table) is HttpStatusTable.V1_0_1:
        return err.http_status_v1_0_1
    return err.http_status


def grpc_status_for(
    err: A2AError | type[A2AError],
    table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0,
) -> str:
    """The canonical gRPC code name of ``err`` in the chosen edition of the mapping."""
    if HttpStatusTable(table) is HttpStatusTable.V1_0_1:
        return err.grpc_status_v1_0_1
    return err.grpc_status


# ---------------------------------------------------------------------------------------
# Wire payloads. Fields without defaults are always emitted; omit_defaults drops the rest
# when empty, which is how ``metadata`` disappears from an ErrorInfo that has none.


class ErrorInfo(msgspec.Struct, frozen=True, omit_defaults=True):
    """A ProtoJSON ``google.protobuf.Any`` holding a ``google.rpc.ErrorInfo``."""

    type: str = msgspec.field(name="@type")
    """Always ``type.googleapis.com/google.rpc.ErrorInfo``."""
    reason: str
    """The error's reason, e.g. ``TASK_NOT_FOUND``."""
    domain: str
    """``a2a-protocol.org`` for A2A's errors, ``a2a-py.dev`` for the library's own."""
    metadata: dict[str, str] = {}
    """Extra string facts about this occurrence; omitted when empty."""


class BadRequest(msgspec.Struct, frozen=True, rename="camel"):
    """A ProtoJSON ``google.protobuf.Any`` holding a ``google.rpc.BadRequest``."""

    type: str = msgspec.field(name="@type")
    """Always ``type.googleapis.com/google.rpc.BadRequest``."""
    field_violations: tuple[FieldViolation, ...]
    """The offending fields."""


class JsonRpcErrorObject(msgspec.Struct, frozen=True, omit_defaults=True):
    """The ``error`` member of a JSON-RPC response."""

    code: int
    """The JSON-RPC error code."""
    message: str
    """A short human-readable message."""
    data: Any = None
    """v1.0: list of typed details; v0.3: free-form. Omitted when ``None``."""


class RestStatus(msgspec.Struct, frozen=True):
    """A ``google.rpc.Status`` in AIP-193 JSON form."""

    code: int
    """The HTTP status code (not the gRPC number), as AIP-193 prescribes."""
    status: str
    """The canonical gRPC code name, e.g. ``NOT_FOUND``."""
    message: str
    """A short human-readable message."""
    details: list[ErrorInfo | BadRequest]
    """Typed details; always includes the ErrorInfo."""


class RestErrorBody(msgspec.Struct, frozen=True, omit_defaults=True):
    """The whole AIP-193 error body: ``{"error": {...}}``.

    On the v0.3 routes (``/v1/...``) the body also carries the JSON-RPC ``code`` and
    ``message`` at the top level: v0.3 never defined a REST error body, and that is the shape
    v0.3 REST clients (the JavaScript SDK's among them) read to raise a typed error, while
    clients that read the AIP-193 ``error`` or only the HTTP status are unaffected.
    """

    error: RestStatus
    """The status."""
    code: int | None = None
    """v0.3 routes only: the JSON-RPC error code (e.g. -32001)."""
    message: str | None = None
    """v0.3 routes only: the error message (the same as ``error.message``)."""


def _details(err: A2AError) -> list[ErrorInfo | BadRequest]:
    details: list[ErrorInfo | BadRequest] = [
        ErrorInfo(_ERROR_INFO_TYPE, err.reason, err.domain, err.metadata)
    ]
    if isinstance(err, InvalidParamsError) and err.field_violations:
        details.append(BadRequest(_BAD_REQUEST_TYPE, err.field_violations))
    return details


def jsonrpc_error_object(err: A2AError, dialect: Dialect = "1.0") -> JsonRpcErrorObject:
    """The JSON-RPC ``error`` member for ``err`` in the caller's dialect.

    v1.0: ``data`` is an array with the ErrorInfo (always, although HEAD only says SHOULD)
    and, for `InvalidParamsError` with field violations, a BadRequest; ``err.data`` is not
    sent because v1.0 requires every detail to be a typed ``Any``. v0.3: ``data`` is
    ``err.data`` as is, omitted when ``None``.
    """
    if dialect == "0.3":
        return JsonRpcErrorObject(err.code, err.message, err.data)
    return JsonRpcErrorObject(err.code, err.message, _details(err))


def rest_error_body(
    err: A2AError,
    table: HttpStatusTable | TableName = HttpStatusTable.V1_0_0,
    dialect: Dialect = "1.0",
) -> tuple[int, RestErrorBody]:
    """The HTTP status and AIP-193 body for ``err`` on the HTTP+JSON binding.

    ``dialect="0.3"`` (the ``/v1/...`` routes) adds the JSON-RPC ``code`` and ``message`` at
    the top level (see `RestErrorBody`); the status and the AIP-193 part are the same.
    """
    status = http_status_for(err, table)
    rest_status = RestStatus(status, grpc_status_for(err, table), err.message, _details(err))
    if dialect == "0.3":
        return status, RestErrorBody(rest_status, err.code, err.message)
    return status, RestErrorBody(rest_status)
