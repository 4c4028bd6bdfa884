"""The error table (codes, reasons, statuses) and the error payload encoders, against goldens."""

from __future__ import annotations

import re

import msgspec
import pytest

from a2a_core import errors
from a2a_core.errors import (
    ERROR_CLASSES,
    LIBRARY_ERROR_DOMAIN,
    A2AError,
    AuthenticatedExtendedCardNotConfiguredError,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    FieldViolation,
    HttpStatusTable,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    LocalProtocolError,
    PermissionDeniedError,
    ResourceExhaustedError,
    ServerUnavailableError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnauthenticatedError,
    VersionNotSupportedError,
    error_class_for_code,
    grpc_status_for,
    http_status_for,
    jsonrpc_error_object,
    rest_error_body,
)

# code, class name, reason, default message, HTTP v1.0.0, HTTP v1.0.1, gRPC v1.0.0, gRPC v1.0.1
# Transcribed from spec-decisions F7 (and its note on the generic errors).
TABLE = [
    (-32700, "JSONParseError", "JSON_PARSE", "Invalid JSON payload",
     400, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
    (-32600, "InvalidRequestError", "INVALID_REQUEST", "Request payload validation error",
     400, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
    (-32601, "MethodNotFoundError", "METHOD_NOT_FOUND", "Method not found",
     404, 404, "NOT_FOUND", "NOT_FOUND"),
    (-32602, "InvalidParamsError", "INVALID_PARAMS", "Invalid parameters",
     400, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
    (-32603, "InternalError", "INTERNAL", "Internal error",
     500, 500, "INTERNAL", "INTERNAL"),
    (-32001, "TaskNotFoundError", "TASK_NOT_FOUND", "Task not found",
     404, 404, "NOT_FOUND", "NOT_FOUND"),
    (-32002, "TaskNotCancelableError", "TASK_NOT_CANCELABLE", "Task cannot be canceled",
     409, 400, "FAILED_PRECONDITION", "FAILED_PRECONDITION"),
    (-32003, "PushNotificationNotSupportedError", "PUSH_NOTIFICATION_NOT_SUPPORTED",
     "Push Notification is not supported", 400, 400, "UNIMPLEMENTED", "FAILED_PRECONDITION"),
    (-32004, "UnsupportedOperationError", "UNSUPPORTED_OPERATION",
     "This operation is not supported", 400, 400, "UNIMPLEMENTED", "FAILED_PRECONDITION"),
    (-32005, "ContentTypeNotSupportedError", "CONTENT_TYPE_NOT_SUPPORTED",
     "Incompatible content types", 415, 400, "INVALID_ARGUMENT", "INVALID_ARGUMENT"),
    (-32006, "InvalidAgentResponseError", "INVALID_AGENT_RESPONSE", "Invalid agent response",
     502, 500, "INTERNAL", "INTERNAL"),
    (-32007, "ExtendedAgentCardNotConfiguredError", "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
     "Authenticated Extended Card is not configured", 400, 400, "FAILED_PRECONDITION",
     "FAILED_PRECONDITION"),
    (-32008, "ExtensionSupportRequiredError", "EXTENSION_SUPPORT_REQUIRED",
     "A required extension is not supported by the client", 400, 400, "FAILED_PRECONDITION",
     "FAILED_PRECONDITION"),
    (-32009, "VersionNotSupportedError", "VERSION_NOT_SUPPORTED",
     "The requested A2A protocol version is not supported", 400, 400, "UNIMPLEMENTED",
     "FAILED_PRECONDITION"),
    # Ours (A2A assigns no code to authentication, A14): HTTP 401/403 on both bindings.
    (-32041, "UnauthenticatedError", "UNAUTHENTICATED", "Authentication required",
     401, 401, "UNAUTHENTICATED", "UNAUTHENTICATED"),
    (-32043, "PermissionDeniedError", "PERMISSION_DENIED", "Insufficient scope",
     403, 403, "PERMISSION_DENIED", "PERMISSION_DENIED"),
    # Ours, not the spec's: answered by a server that is shutting down.
    (-32050, "ServerUnavailableError", "SERVER_UNAVAILABLE", "The server is unavailable",
     503, 503, "UNAVAILABLE", "UNAVAILABLE"),
    # The library's own (not A2A's): a server-range code far from A2A's, HTTP 429.
    (-32099, "ResourceExhaustedError", "RESOURCE_EXHAUSTED", "The server is busy: try again later",
     429, 429, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"),
]  # fmt: skip

ERROR_INFO = (
    '{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"$R","domain":"a2a-protocol.org"'
)
BAD_REQUEST = '{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":'


def info(reason: str, metadata: str = "") -> str:
    """The expected ErrorInfo JSON; ``metadata`` is the raw JSON object text, if any."""
    return ERROR_INFO.replace("$R", reason) + (f',"metadata":{metadata}' if metadata else "") + "}"


def fill(template: str, *details: str) -> str:
    """Put the details' JSON where the template says ``$D`` (keeps JSON braces literal)."""
    return template.replace("$D", ",".join(details))


@pytest.mark.parametrize(
    ("code", "name", "reason", "message", "http0", "http1", "grpc0", "grpc1"), TABLE
)
def test_error_table(
    code: int,
    name: str,
    reason: str,
    message: str,
    http0: int,
    http1: int,
    grpc0: str,
    grpc1: str,
) -> None:
    cls: type[A2AError] = getattr(errors, name)
    assert issubclass(cls, A2AError)
    assert (cls.code, cls.reason, cls.default_message) == (code, reason, message)
    assert (cls.http_status, cls.http_status_v1_0_1) == (http0, http1)
    assert (cls.grpc_status, cls.grpc_status_v1_0_1) == (grpc0, grpc1)
    err = cls()
    assert error_class_for_code(code) is cls
    assert http_status_for(err) == http0
    assert http_status_for(cls, HttpStatusTable.V1_0_0) == http0
    assert http_status_for(err, HttpStatusTable.V1_0_1) == http1
    assert http_status_for(err, "v1.0.1") == http1
    assert grpc_status_for(err) == grpc0
    assert grpc_status_for(err, "v1.0.1") == grpc1
    status, body = rest_error_body(err, "v1.0.1")
    assert status == http1
    assert body.error.status == grpc1


def test_table_covers_every_error_class_once() -> None:
    defined = {
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type) and issubclass(obj, A2AError) and obj is not A2AError
    }
    assert set(ERROR_CLASSES) == defined
    assert [cls.__name__ for cls in ERROR_CLASSES] == [row[1] for row in TABLE]
    assert len({cls.code for cls in ERROR_CLASSES}) == len(ERROR_CLASSES)


@pytest.mark.parametrize("cls", [c for c in ERROR_CLASSES if -32099 <= c.code <= -32000])
def test_a2a_reason_is_the_name_in_upper_snake_case(cls: type[A2AError]) -> None:
    # spec-decisions F7: "the A2A error name in UPPER_SNAKE_CASE, without the Error suffix".
    expected = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__.removesuffix("Error")).upper()
    assert cls.reason == expected


@pytest.mark.parametrize("code", [0, -32000, -32010, -32098, -32604, 200])
def test_unknown_code_has_no_class(code: int) -> None:
    assert error_class_for_code(code) is None


def test_only_the_library_errors_leave_the_a2a_domain() -> None:
    # A reason A2A does not define must not pose as one of A2A's.
    ours = {cls for cls in ERROR_CLASSES if cls.domain == LIBRARY_ERROR_DOMAIN}
    assert ours == {
        ResourceExhaustedError,
        ServerUnavailableError,
        UnauthenticatedError,
        PermissionDeniedError,
    }
    assert all(cls.domain == "a2a-protocol.org" for cls in set(ERROR_CLASSES) - ours)


def test_v0_3_alias_is_the_same_class() -> None:
    assert AuthenticatedExtendedCardNotConfiguredError is ExtendedAgentCardNotConfiguredError
    assert error_class_for_code(-32007) is AuthenticatedExtendedCardNotConfiguredError


def test_unknown_table_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="v2"):
        http_status_for(TaskNotFoundError(), "v2")  # type: ignore[arg-type]


def test_base_class_answers_as_internal_error() -> None:
    err = A2AError()
    assert (err.code, err.reason, err.message) == (-32603, "INTERNAL", "Internal error")
    assert http_status_for(err) == 500
    assert issubclass(InternalError, A2AError)


def test_instance_fields() -> None:
    meta = {"taskId": "t1"}
    err = TaskNotFoundError("no such task", data={"id": "t1"}, metadata=meta)
    meta["taskId"] = "changed"  # the error keeps its own copy
    assert err.message == "no such task"
    assert str(err) == "no such task"
    assert err.args == ("no such task",)
    assert err.data == {"id": "t1"}
    assert err.metadata == {"taskId": "t1"}
    default = TaskNotFoundError()
    assert (default.message, default.data, default.metadata) == ("Task not found", None, {})


def test_message_never_embeds_data_repr() -> None:
    class Secret:
        def __repr__(self) -> str:
            return "<Secret password=hunter2>"

    err = InternalError(data=Secret())
    for text in (str(err), repr(err), err.message, *map(str, err.args)):
        assert "hunter2" not in text
    encoded = msgspec.json.encode(jsonrpc_error_object(err, "1.0"))
    assert b"hunter2" not in encoded


def test_local_protocol_error_is_not_an_answerable_error() -> None:
    assert issubclass(LocalProtocolError, Exception)
    assert not issubclass(LocalProtocolError, A2AError)


def test_field_violations_accept_pairs_and_structs() -> None:
    err = InvalidParamsError(
        field_violations=[("message.parts", "must not be empty"), FieldViolation("a", "b")]
    )
    assert err.field_violations == (
        FieldViolation("message.parts", "must not be empty"),
        FieldViolation("a", "b"),
    )
    assert InvalidParamsError().field_violations == ()


# ---------------------------------------------------------------------------------------
# Error payloads: exact bytes.

V1_CASES = [
    pytest.param(
        TaskNotFoundError(),
        fill('{"code":-32001,"message":"Task not found","data":[$D]}', info("TASK_NOT_FOUND")),
        id="no-metadata",
    ),
    pytest.param(
        TaskNotFoundError("gone", data={"ignored": True}, metadata={"taskId": "t-1"}),
        fill(
            '{"code":-32001,"message":"gone","data":[$D]}',
            info("TASK_NOT_FOUND", '{"taskId":"t-1"}'),
        ),
        id="metadata-and-data-not-sent",
    ),
    pytest.param(
        InvalidParamsError(field_violations=[("message.parts", "must not be empty")]),
        fill(
            '{"code":-32602,"message":"Invalid parameters","data":[$D]}',
            info("INVALID_PARAMS"),
            BAD_REQUEST + '[{"field":"message.parts","description":"must not be empty"}]}',
        ),
        id="bad-request-detail",
    ),
    pytest.param(
        VersionNotSupportedError(metadata={"version": "9.9"}),
        fill(
            '{"code":-32009,"message":"The requested A2A protocol version is not supported",'
            '"data":[$D]}',
            info("VERSION_NOT_SUPPORTED", '{"version":"9.9"}'),
        ),
        id="version",
    ),
    pytest.param(
        ResourceExhaustedError("busy", metadata={"scope": "server"}),
        '{"code":-32099,"message":"busy","data":[{"@type":"type.googleapis.com/google.rpc.'
        'ErrorInfo","reason":"RESOURCE_EXHAUSTED","domain":"a2a-py.dev","metadata":'
        '{"scope":"server"}}]}',
        id="library-error-in-its-own-domain",
    ),
]


@pytest.mark.parametrize(("err", "expected"), V1_CASES)
def test_jsonrpc_error_object_v1(err: A2AError, expected: str) -> None:
    assert msgspec.json.encode(jsonrpc_error_object(err, "1.0")) == expected.encode()
    # v1.0 is the default dialect
    assert msgspec.json.encode(jsonrpc_error_object(err)) == expected.encode()


V0_3_CASES = [
    pytest.param(TaskNotFoundError(), '{"code":-32001,"message":"Task not found"}', id="bare"),
    pytest.param(
        TaskNotFoundError(data={"taskId": "t-1"}, metadata={"not": "sent"}),
        '{"code":-32001,"message":"Task not found","data":{"taskId":"t-1"}}',
        id="data-sent-metadata-not",
    ),
    pytest.param(
        ExtendedAgentCardNotConfiguredError(data=["x", 1]),
        '{"code":-32007,"message":"Authenticated Extended Card is not configured","data":["x",1]}',
        id="array-data",
    ),
    pytest.param(
        InvalidParamsError("bad", field_violations=[("a", "b")]),
        '{"code":-32602,"message":"bad"}',
        id="violations-are-v1-only",
    ),
]


@pytest.mark.parametrize(("err", "expected"), V0_3_CASES)
def test_jsonrpc_error_object_v0_3(err: A2AError, expected: str) -> None:
    assert msgspec.json.encode(jsonrpc_error_object(err, "0.3")) == expected.encode()


REST_CASES = [
    pytest.param(
        TaskNotCancelableError(metadata={"taskId": "t-1"}),
        HttpStatusTable.V1_0_0,
        409,
        fill(
            '{"error":{"code":409,"status":"FAILED_PRECONDITION",'
            '"message":"Task cannot be canceled","details":[$D]}}',
            info("TASK_NOT_CANCELABLE", '{"taskId":"t-1"}'),
        ),
        id="not-cancelable-v1.0.0",
    ),
    pytest.param(
        TaskNotCancelableError(),
        HttpStatusTable.V1_0_1,
        400,
        fill(
            '{"error":{"code":400,"status":"FAILED_PRECONDITION",'
            '"message":"Task cannot be canceled","details":[$D]}}',
            info("TASK_NOT_CANCELABLE"),
        ),
        id="not-cancelable-v1.0.1",
    ),
    pytest.param(
        ContentTypeNotSupportedError("text/csv is not accepted"),
        "v1.0.0",
        415,
        fill(
            '{"error":{"code":415,"status":"INVALID_ARGUMENT",'
            '"message":"text/csv is not accepted","details":[$D]}}',
            info("CONTENT_TYPE_NOT_SUPPORTED"),
        ),
        id="content-type-v1.0.0",
    ),
    pytest.param(
        InvalidRequestError(),
        "v1.0.0",
        400,
        fill(
            '{"error":{"code":400,"status":"INVALID_ARGUMENT",'
            '"message":"Request payload validation error","details":[$D]}}',
            info("INVALID_REQUEST"),
        ),
        id="generic",
    ),
    pytest.param(
        InvalidParamsError(field_violations=[("id", "required")]),
        "v1.0.0",
        400,
        fill(
            '{"error":{"code":400,"status":"INVALID_ARGUMENT",'
            '"message":"Invalid parameters","details":[$D]}}',
            info("INVALID_PARAMS"),
            BAD_REQUEST + '[{"field":"id","description":"required"}]}',
        ),
        id="bad-request",
    ),
    pytest.param(
        ResourceExhaustedError(),
        "v1.0.1",
        429,
        '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"The server is busy: '
        'try again later","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo",'
        '"reason":"RESOURCE_EXHAUSTED","domain":"a2a-py.dev"}]}}',
        id="resource-exhausted",
    ),
]


@pytest.mark.parametrize(("err", "table", "status", "expected"), REST_CASES)
def test_rest_error_body(err: A2AError, table: HttpStatusTable, status: int, expected: str) -> None:
    got_status, body = rest_error_body(err, table)
    assert got_status == status
    assert msgspec.json.encode(body) == expected.encode()


def test_rest_error_body_defaults_to_v1_0_0() -> None:
    status, body = rest_error_body(TaskNotCancelableError())
    assert status == 409
    assert body.error.code == 409


@pytest.mark.parametrize(
    ("error", "status"),
    [(errors.ResourceExhaustedError(), 429), (errors.ServerUnavailableError(), 503)],
)
def test_a_busy_or_unavailable_rest_reply_says_when_to_come_back(
    error: errors.A2AError, status: int
) -> None:
    from a2a_core.http import RETRY_AFTER_SECONDS
    from a2a_core.rest import rest_error_response

    reply = rest_error_response(error)
    assert reply.status == status
    assert ("retry-after", str(RETRY_AFTER_SECONDS)) in reply.headers
    assert not any(
        n == "retry-after" for n, _ in rest_error_response(errors.InternalError()).headers
    )
