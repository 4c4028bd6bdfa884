"""ServerProtocol over REST (HTTP+JSON): every route, request bytes to reply bytes.

Every v1.0 route is checked at the mount root and under a tenant (``/acme/...``), and every
v0.3 route under ``/v1/``: the `Call` that comes out (operation, the v1.0 request value,
dialect, version, tenant, metadata, streaming), then the exact reply bytes of a v1.0 result in
the route's dialect, or the exact SSE frames for the stream routes (REST v0.3 frames carry the
v0.3 proto's StreamResponse). Errors are AIP-193 bodies with the status of the chosen table.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from a2a_core import types as t
from a2a_core.call import CallRequest
from a2a_core.errors import (
    ContentTypeNotSupportedError,
    LocalProtocolError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_core.jsonrpc import Operation
from helpers.protocol import (
    AGENT_MESSAGE,
    CANCEL_REQUEST,
    CARD_REQUEST,
    CARD_V03_REST,
    CARD_V1,
    DELETE_PUSH_REQUEST,
    EXTENDED_CARD,
    GET_PUSH_REQUEST,
    GET_REQUEST,
    LIST_PUSH_REQUEST,
    LIST_PUSH_RESULT,
    LIST_REQUEST,
    LIST_TASKS_RESULT,
    MESSAGE_V03_REST,
    PUSH_CONFIG,
    PUSH_REQUEST,
    PUSH_V03_REST,
    PUSH_V1,
    REST_REQUESTS,
    SEND_REQUEST,
    STREAM_EVENTS,
    STREAM_EVENTS_V03_REST,
    STREAM_EVENTS_V1,
    SUBSCRIBE_REQUEST,
    TASK,
    TASK_V03_REST,
    TASK_V1,
    as_call,
    as_response,
    http,
    make_protocol,
)

PROTOCOL = make_protocol()

#: The v0.3 REST message of the corpus, as the v1.0 message it converts to.
V03_SEND_REQUEST = t.SendMessageRequest(
    message=t.Message(
        message_id="m-1",
        context_id="c-1",
        role=t.Role.USER,
        parts=[
            t.Part(text="hi"),
            t.Part(data={"k": [1, 2]}),
            t.Part(url="https://files.example/f.png", media_type="image/png"),
        ],
    ),
    metadata={"k": "v"},
)


def _corpus(method: str, path: str) -> tuple[str, bytes | dict[str, Any]]:
    """The query and body of the corpus request for a route."""
    for m, p, query, body in REST_REQUESTS:
        if (m, p) == (method, path):
            return query, b"" if body is None else body
    raise AssertionError(f"no corpus request for {method} {path}")


# (method, path, operation, expected v1.0 request, call metadata, result, result JSON)
V1_ROUTES: list[tuple[str, str, Operation, CallRequest, dict[str, Any], object, str]] = [
    (
        "POST",
        "/message:send",
        Operation.SEND_MESSAGE,
        SEND_REQUEST,
        {"k": "v"},
        t.SendMessageResponse(task=TASK),
        '{"task":' + TASK_V1 + "}",
    ),
    ("GET", "/tasks/t-1", Operation.GET_TASK, GET_REQUEST, {}, TASK, TASK_V1),
    (
        "GET",
        "/tasks",
        Operation.LIST_TASKS,
        LIST_REQUEST,
        {},
        LIST_TASKS_RESULT,
        '{"tasks":[' + TASK_V1 + '],"nextPageToken":"","pageSize":10,"totalSize":1}',
    ),
    (
        "POST",
        "/tasks/t-1:cancel",
        Operation.CANCEL_TASK,
        CANCEL_REQUEST,
        {"why": "done"},
        TASK,
        TASK_V1,
    ),
    (
        "POST",
        "/tasks/t-1/pushNotificationConfigs",
        Operation.CREATE_PUSH_CONFIG,
        PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V1,
    ),
    (
        "GET",
        "/tasks/t-1/pushNotificationConfigs/p-1",
        Operation.GET_PUSH_CONFIG,
        GET_PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V1,
    ),
    (
        "GET",
        "/tasks/t-1/pushNotificationConfigs",
        Operation.LIST_PUSH_CONFIGS,
        LIST_PUSH_REQUEST,
        {},
        LIST_PUSH_RESULT,
        '{"configs":[' + PUSH_V1 + '],"nextPageToken":"n"}',
    ),
    (
        "DELETE",
        "/tasks/t-1/pushNotificationConfigs/p-1",
        Operation.DELETE_PUSH_CONFIG,
        DELETE_PUSH_REQUEST,
        {},
        None,
        "{}",
    ),
    (
        "GET",
        "/extendedAgentCard",
        Operation.GET_EXTENDED_CARD,
        CARD_REQUEST,
        {},
        EXTENDED_CARD,
        CARD_V1,
    ),
]

V03_ROUTES: list[tuple[str, str, Operation, CallRequest, dict[str, Any], object, str]] = [
    (
        "POST",
        "/v1/message:send",
        Operation.SEND_MESSAGE,
        V03_SEND_REQUEST,
        {"k": "v"},
        t.SendMessageResponse(task=TASK),
        '{"task":' + TASK_V03_REST + "}",
    ),
    ("GET", "/v1/tasks/t-1", Operation.GET_TASK, GET_REQUEST, {}, TASK, TASK_V03_REST),
    (
        "POST",
        "/v1/tasks/t-1:cancel",
        Operation.CANCEL_TASK,
        t.CancelTaskRequest(id="t-1"),
        {},
        TASK,
        TASK_V03_REST,
    ),
    (
        "POST",
        "/v1/tasks/t-1/pushNotificationConfigs",
        Operation.CREATE_PUSH_CONFIG,
        PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V03_REST,
    ),
    (
        "GET",
        "/v1/tasks/t-1/pushNotificationConfigs/p-1",
        Operation.GET_PUSH_CONFIG,
        GET_PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V03_REST,
    ),
    (
        "GET",
        "/v1/tasks/t-1/pushNotificationConfigs",
        Operation.LIST_PUSH_CONFIGS,
        LIST_PUSH_REQUEST,
        {},
        LIST_PUSH_RESULT,
        '{"configs":[' + PUSH_V03_REST + '],"nextPageToken":"n"}',
    ),
    (
        "DELETE",
        "/v1/tasks/t-1/pushNotificationConfigs/p-1",
        Operation.DELETE_PUSH_CONFIG,
        DELETE_PUSH_REQUEST,
        {},
        None,
        "{}",
    ),
    (
        "GET",
        "/v1/card",
        Operation.GET_EXTENDED_CARD,
        CARD_REQUEST,
        {},
        EXTENDED_CARD,
        CARD_V03_REST,
    ),
]

STREAM_ROUTES: list[tuple[str, str, Operation, CallRequest, str]] = [
    ("POST", "/message:stream", Operation.SEND_STREAMING_MESSAGE, SEND_REQUEST, "1.0"),
    ("GET", "/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, SUBSCRIBE_REQUEST, "1.0"),
    ("POST", "/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, SUBSCRIBE_REQUEST, "1.0"),
    (
        "POST",
        "/v1/message:stream",
        Operation.SEND_STREAMING_MESSAGE,
        msgspec.structs.replace(V03_SEND_REQUEST, metadata={}),
        "0.3",
    ),
    ("GET", "/v1/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, SUBSCRIBE_REQUEST, "0.3"),
    ("POST", "/v1/tasks/t-1:subscribe", Operation.SUBSCRIBE_TO_TASK, SUBSCRIBE_REQUEST, "0.3"),
]


def test_the_tables_cover_every_route() -> None:
    from a2a_core.rest import ROUTES

    covered = {(m, p) for m, p, *_ in V1_ROUTES + V03_ROUTES + STREAM_ROUTES}
    templates = {
        (r.method, r.template.replace("{task_id}", "t-1").replace("{id}", "t-1"))
        for r in ROUTES
        if not r.template.startswith("/{tenant}")
    }
    # Config ids are p-1 in the tables; normalise them back before comparing.
    normalised = {(m, p.replace("/p-1", "/t-1")) for m, p in covered}
    assert normalised == templates
    assert {(m, p) for m, p, _, _ in REST_REQUESTS} == covered


@pytest.mark.parametrize("tenant", ["", "acme"])
@pytest.mark.parametrize(
    ("method", "path", "operation", "expected", "metadata", "result", "result_json"),
    V1_ROUTES,
    ids=[f"{m} {p}" for m, p, *_ in V1_ROUTES],
)
def test_v1_route_golden(
    tenant: str,
    method: str,
    path: str,
    operation: Operation,
    expected: CallRequest,
    metadata: dict[str, Any],
    result: object,
    result_json: str,
) -> None:
    query, body = _corpus(method, path)
    prefix = f"/{tenant}" if tenant else ""
    call = as_call(PROTOCOL.receive_request(http(method, prefix + path, body, query=query)))
    assert call.operation is operation
    assert call.request == msgspec.structs.replace(expected, tenant=tenant)
    assert (call.binding, call.dialect, call.version) == ("rest", "1.0", "1.0")
    assert call.request_id is None
    assert call.streaming is False
    assert call.tenant == tenant
    assert dict(call.metadata) == ({**metadata, "a2a.tenant": tenant} if tenant else metadata)
    assert call.response_headers == (("a2a-version", "1.0"),)

    reply = PROTOCOL.reply_result(call, result)
    assert reply.status == 200
    assert reply.headers == (("content-type", "application/json"), ("a2a-version", "1.0"))
    assert reply.body == result_json.encode()


@pytest.mark.parametrize(
    ("method", "path", "operation", "expected", "metadata", "result", "result_json"),
    V03_ROUTES,
    ids=[f"{m} {p}" for m, p, *_ in V03_ROUTES],
)
def test_v03_route_golden(
    method: str,
    path: str,
    operation: Operation,
    expected: CallRequest,
    metadata: dict[str, Any],
    result: object,
    result_json: str,
) -> None:
    query, body = _corpus(method, path)
    call = as_call(PROTOCOL.receive_request(http(method, path, body, query=query)))
    assert call.operation is operation
    assert call.request == expected
    assert (call.binding, call.dialect, call.version) == ("rest", "0.3", "0.3")
    assert call.streaming is False
    assert call.tenant == ""
    assert dict(call.metadata) == metadata
    assert call.response_headers == (("a2a-version", "0.3"),)

    reply = PROTOCOL.reply_result(call, result)
    assert reply.status == 200
    assert reply.headers == (("content-type", "application/json"), ("a2a-version", "0.3"))
    assert reply.body == result_json.encode()


@pytest.mark.parametrize(
    ("path", "reply"),
    [
        ("/message:send", '{"message":{"messageId":"m-2","contextId":"c-1","role":"ROLE_AGENT",'
         '"parts":[{"text":"hello"}]}}'),
        ("/v1/message:send", '{"message":' + MESSAGE_V03_REST + "}"),
    ],
)  # fmt: skip
def test_a_message_reply_to_send(path: str, reply: str) -> None:
    _, body = _corpus("POST", path)
    call = as_call(PROTOCOL.receive_request(http("POST", path, body)))
    response = PROTOCOL.reply_result(call, t.SendMessageResponse(message=AGENT_MESSAGE))
    assert response.body == reply.encode()


# v1.0 stream routes with and without a tenant; v0.3 routes have none.
STREAM_CASES = [
    (tenant, *route)
    for route in STREAM_ROUTES
    for tenant in ("", "acme")[: 2 if route[4] == "1.0" else 1]
]


@pytest.mark.parametrize(
    ("tenant", "method", "path", "operation", "expected", "dialect"),
    STREAM_CASES,
    ids=[f"{m} /{tn}{p}" if tn else f"{m} {p}" for tn, m, p, *_ in STREAM_CASES],
)
def test_stream_route_golden(
    tenant: str,
    method: str,
    path: str,
    operation: Operation,
    expected: CallRequest,
    dialect: str,
) -> None:
    query, body = _corpus(method, path)
    prefix = f"/{tenant}" if tenant else ""
    call = as_call(PROTOCOL.receive_request(http(method, prefix + path, body, query=query)))
    assert call.operation is operation
    assert call.request == msgspec.structs.replace(expected, tenant=tenant)
    assert (call.binding, call.dialect, call.version) == ("rest", dialect, dialect)
    assert call.streaming is True
    assert call.tenant == tenant
    assert PROTOCOL.stream_headers(call) == (
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        ("x-accel-buffering", "no"),
        ("a2a-version", dialect),
    )

    stream = PROTOCOL.open_event_stream(call)
    frames = [stream.encode(event, seq) for seq, event in enumerate(STREAM_EVENTS, start=10)]
    payloads = STREAM_EVENTS_V1 if dialect == "1.0" else STREAM_EVENTS_V03_REST
    assert frames == [
        f"id: {seq}\ndata: {payload}\n\n".encode() for seq, payload in enumerate(payloads, 10)
    ]
    assert stream.finished
    with pytest.raises(LocalProtocolError):
        stream.encode(STREAM_EVENTS[0])
    with pytest.raises(LocalProtocolError):
        PROTOCOL.reply_result(call, TASK)


@pytest.mark.parametrize("path", ["/message:stream", "/v1/message:stream"])
def test_rest_stream_error_frame_is_an_aip193_body_without_id(path: str) -> None:
    _, body = _corpus("POST", path)
    stream = PROTOCOL.open_event_stream(as_call(PROTOCOL.receive_request(http("POST", path, body))))
    assert stream.encode(STREAM_EVENTS[0], 1).startswith(b"id: 1\n")
    assert stream.keep_alive() == b": keep-alive\n\n"
    # v0.3 routes add the JSON-RPC code and message at the top level.
    legacy = b',"code":-32001,"message":"Task not found"' if path.startswith("/v1/") else b""
    assert stream.encode_error(TaskNotFoundError()) == (
        b'data: {"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":'
        b'[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",'
        b'"domain":"a2a-protocol.org"}]}' + legacy + b"}\n\n"
    )
    assert stream.finished


# --- reply_error ------------------------------------------------------------------------------


def _aip193(code: int, status: str, message: str, reason: str, metadata: str = "") -> bytes:
    info = (
        '{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"'
        + reason
        + '","domain":"a2a-protocol.org"'
        + (',"metadata":' + metadata if metadata else "")
        + "}"
    )
    return (
        f'{{"error":{{"code":{code},"status":"{status}","message":"{message}",'
        f'"details":[{info}]}}}}'
    ).encode()


@pytest.mark.parametrize(
    ("options", "path", "error", "status", "body"),
    [
        (
            {},
            "/tasks/t-1",
            TaskNotFoundError(),
            404,
            _aip193(404, "NOT_FOUND", "Task not found", "TASK_NOT_FOUND"),
        ),
        (
            {},
            "/v1/tasks/t-1",
            TaskNotFoundError(data={"ignored": True}, metadata={"taskId": "t-1"}),
            404,
            # A v0.3 route: the JSON-RPC code and message at the top level too.
            _aip193(404, "NOT_FOUND", "Task not found", "TASK_NOT_FOUND", '{"taskId":"t-1"}')[:-1]
            + b',"code":-32001,"message":"Task not found"}',
        ),
        (
            {},
            "/tasks/t-1",
            TaskNotCancelableError(),
            409,
            _aip193(409, "FAILED_PRECONDITION", "Task cannot be canceled", "TASK_NOT_CANCELABLE"),
        ),
        (
            {"error_table": "v1.0.1"},
            "/tasks/t-1",
            TaskNotCancelableError(),
            400,
            _aip193(400, "FAILED_PRECONDITION", "Task cannot be canceled", "TASK_NOT_CANCELABLE"),
        ),
        (
            {},
            "/tasks/t-1",
            ContentTypeNotSupportedError(),
            415,
            _aip193(
                415, "INVALID_ARGUMENT", "Incompatible content types", "CONTENT_TYPE_NOT_SUPPORTED"
            ),
        ),
        (
            {},
            "/tasks/t-1",
            KeyError("password"),
            500,
            _aip193(500, "INTERNAL", "Internal error", "INTERNAL"),
        ),
    ],
)
def test_reply_error_golden(
    options: dict[str, Any], path: str, error: BaseException, status: int, body: bytes
) -> None:
    protocol = make_protocol(**options)
    call = as_call(protocol.receive_request(http("GET", path)))
    response = protocol.reply_error(call, error)
    assert response.status == status
    assert response.headers == (("content-type", "application/json"), ("a2a-version", call.version))
    assert response.body == body


def test_rest_content_type_option_applies_to_results_and_errors() -> None:
    protocol = make_protocol(rest_content_type="application/a2a+json")
    call = as_call(protocol.receive_request(http("GET", "/tasks/t-1")))
    assert protocol.reply_result(call, TASK).header("content-type") == "application/a2a+json"
    assert protocol.reply_error(call, TaskNotFoundError()).header("content-type") == (
        "application/a2a+json"
    )
    miss = as_response(protocol.receive_request(http("GET", "/nope")))
    assert miss.header("content-type") == "application/a2a+json"


# --- request details that only REST has ---------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/a2a+json", "application/vnd.x+json; charset=utf-8", None],
)
def test_json_content_types_are_accepted(content_type: str | None) -> None:
    _, body = _corpus("POST", "/message:send")
    headers = [("Content-Type", content_type)] if content_type else []
    call = as_call(PROTOCOL.receive_request(http("POST", "/message:send", body, *headers)))
    assert call.request == SEND_REQUEST


def test_percent_encoded_ids_and_tenants_are_decoded() -> None:
    call = as_call(PROTOCOL.receive_request(http("GET", "/ac%20me/tasks/a%3Ab%C3%A9")))
    assert call.request == t.GetTaskRequest(tenant="ac me", id="a:bé")
    assert call.tenant == "ac me"
    # A slash inside a segment would make two segments of one: never an id.
    assert as_response(PROTOCOL.receive_request(http("GET", "/tasks/a%2Fb"))).status == 404


def test_a_body_tenant_on_a_route_without_one_is_the_tenant() -> None:
    _, body = _corpus("POST", "/message:send")
    assert isinstance(body, dict)
    call = as_call(PROTOCOL.receive_request(http("POST", "/message:send", {**body, "tenant": "b"})))
    assert call.tenant == "b"
    assert call.metadata["a2a.tenant"] == "b"


def test_rest_under_a_prefix_and_jsonrpc_beside_it() -> None:
    protocol = make_protocol(jsonrpc_path="/rpc", rest_path="/rest")
    call = as_call(protocol.receive_request(http("GET", "/rest/acme/tasks/t-1")))
    assert (call.operation, call.tenant) == (Operation.GET_TASK, "acme")
    assert as_call(protocol.receive_request(http("GET", "/rest/tasks/t-1"))).tenant == ""
    # The prefix itself is the REST root, where no route lives.
    root = as_response(protocol.receive_request(http("GET", "/rest")))
    assert root.status == 404
    assert b"No such REST route" in root.body
    # Outside the prefix nothing is REST.
    outside = as_response(protocol.receive_request(http("GET", "/tasks/t-1")))
    assert outside.status == 404
    assert outside.body == b'{"error":{"code":404,"status":"NOT_FOUND","message":"Not found"}}'
