"""ServerProtocol over JSON-RPC: every method of both dialects, request bytes to reply bytes.

Each row of the golden tables is one method: the request goes in as an `HttpRequest`, the
`Call` that comes out is checked field by field (operation, the v1.0 request value, dialect,
version, id, tenant, metadata), then a v1.0 result goes back through `reply_result` and the
reply must be these exact bytes in the call's dialect. The two dialects share the expected
v1.0 requests where the wire carries the same meaning, which also checks the v0.3 edge
conversion of every params type. Streaming methods are checked frame by frame.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_core import types as t
from a2a_core.call import CallRequest
from a2a_core.client import Endpoint, parse_card, read_reply
from a2a_core.errors import (
    InvalidParamsError,
    LocalProtocolError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_core.http import Headers, HttpRequest
from a2a_core.jsonrpc import Operation
from helpers.protocol import (
    AGENT_MESSAGE,
    BASE,
    CANCEL_REQUEST,
    CARD_REQUEST,
    CARD_V03,
    CARD_V1,
    DELETE_PUSH_REQUEST,
    EXTENDED_CARD,
    GET_PUSH_REQUEST,
    GET_REQUEST,
    LIST_PUSH_REQUEST,
    LIST_PUSH_RESULT,
    LIST_REQUEST,
    LIST_TASKS_RESULT,
    MESSAGE_V03,
    MESSAGE_V1,
    PUSH_CONFIG,
    PUSH_REQUEST,
    PUSH_V03,
    PUSH_V1,
    SEND_REQUEST,
    STREAM_EVENTS,
    STREAM_EVENTS_V03,
    STREAM_EVENTS_V1,
    SUBSCRIBE_REQUEST,
    TASK,
    TASK_V03,
    TASK_V1,
    V03_PARAMS,
    V1_PARAMS,
    as_call,
    as_response,
    body_of,
    envelope,
    make_protocol,
    rpc,
)

PROTOCOL = make_protocol()

# (method, operation, expected v1.0 request, call metadata, result, result JSON)
V1_CASES: list[tuple[str, Operation, CallRequest, dict[str, Any], object, str]] = [
    (
        "SendMessage",
        Operation.SEND_MESSAGE,
        SEND_REQUEST,
        {"k": "v"},
        t.SendMessageResponse(task=TASK),
        '{"task":' + TASK_V1 + "}",
    ),
    ("GetTask", Operation.GET_TASK, GET_REQUEST, {}, TASK, TASK_V1),
    (
        "ListTasks",
        Operation.LIST_TASKS,
        LIST_REQUEST,
        {},
        LIST_TASKS_RESULT,
        '{"tasks":[' + TASK_V1 + '],"nextPageToken":"","pageSize":10,"totalSize":1}',
    ),
    ("CancelTask", Operation.CANCEL_TASK, CANCEL_REQUEST, {"why": "done"}, TASK, TASK_V1),
    (
        "CreateTaskPushNotificationConfig",
        Operation.CREATE_PUSH_CONFIG,
        PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V1,
    ),
    (
        "GetTaskPushNotificationConfig",
        Operation.GET_PUSH_CONFIG,
        GET_PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V1,
    ),
    (
        "ListTaskPushNotificationConfigs",
        Operation.LIST_PUSH_CONFIGS,
        LIST_PUSH_REQUEST,
        {},
        LIST_PUSH_RESULT,
        '{"configs":[' + PUSH_V1 + '],"nextPageToken":"n"}',
    ),
    (
        "DeleteTaskPushNotificationConfig",
        Operation.DELETE_PUSH_CONFIG,
        DELETE_PUSH_REQUEST,
        {},
        None,
        "{}",
    ),
    ("GetExtendedAgentCard", Operation.GET_EXTENDED_CARD, CARD_REQUEST, {}, EXTENDED_CARD, CARD_V1),
]

V03_CASES: list[tuple[str, Operation, CallRequest, dict[str, Any], object, str]] = [
    (
        "message/send",
        Operation.SEND_MESSAGE,
        SEND_REQUEST,
        {"k": "v"},
        t.SendMessageResponse(task=TASK),
        TASK_V03,
    ),
    # v1.0 GetTask has no metadata; the v0.3 params' metadata still reaches the call.
    ("tasks/get", Operation.GET_TASK, GET_REQUEST, {"m": 1}, TASK, TASK_V03),
    ("tasks/cancel", Operation.CANCEL_TASK, CANCEL_REQUEST, {"why": "done"}, TASK, TASK_V03),
    (
        "tasks/pushNotificationConfig/set",
        Operation.CREATE_PUSH_CONFIG,
        PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V03,
    ),
    (
        "tasks/pushNotificationConfig/get",
        Operation.GET_PUSH_CONFIG,
        GET_PUSH_REQUEST,
        {},
        PUSH_CONFIG,
        PUSH_V03,
    ),
    (
        "tasks/pushNotificationConfig/list",
        Operation.LIST_PUSH_CONFIGS,
        t.ListTaskPushNotificationConfigsRequest(task_id="t-1"),
        {},
        LIST_PUSH_RESULT,
        "[" + PUSH_V03 + "]",  # a bare array: v0.3 has no page token
    ),
    (
        "tasks/pushNotificationConfig/delete",
        Operation.DELETE_PUSH_CONFIG,
        DELETE_PUSH_REQUEST,
        {},
        None,
        "null",
    ),
    (
        "agent/getAuthenticatedExtendedCard",
        Operation.GET_EXTENDED_CARD,
        CARD_REQUEST,
        {},
        EXTENDED_CARD,
        CARD_V03,
    ),
]


def _ids(cases: list[Any]) -> list[str]:
    return [case[0] for case in cases]


def test_the_tables_cover_every_non_streaming_method() -> None:
    from a2a_core.jsonrpc import V0_3_METHODS, V1_METHODS

    assert {c[0] for c in V1_CASES} == {n for n, s in V1_METHODS.items() if not s.streaming}
    assert {c[0] for c in V03_CASES} == {n for n, s in V0_3_METHODS.items() if not s.streaming}


@pytest.mark.parametrize(
    ("method", "operation", "expected", "metadata", "result", "result_json"),
    V1_CASES,
    ids=_ids(V1_CASES),
)
def test_v1_method_golden(
    method: str,
    operation: Operation,
    expected: CallRequest,
    metadata: dict[str, Any],
    result: object,
    result_json: str,
) -> None:
    call = as_call(
        PROTOCOL.receive_request(
            rpc(envelope(method, V1_PARAMS[method], id="r-7"), ("A2A-Version", "1.0"))
        )
    )
    assert call.operation is operation
    assert call.request == expected
    assert (call.binding, call.dialect, call.version) == ("jsonrpc", "1.0", "1.0")
    assert call.request_id == "r-7"
    assert call.streaming is False
    assert call.tenant == ""
    assert dict(call.metadata) == metadata
    assert call.identity is None
    assert call.base_url == BASE
    assert call.response_headers == (("a2a-version", "1.0"),)

    reply = PROTOCOL.reply_result(call, result)
    assert reply.status == 200
    assert reply.headers == (("content-type", "application/json"), ("a2a-version", "1.0"))
    expected_body = '{"jsonrpc":"2.0","id":"r-7","result":' + result_json + "}"
    assert reply.body == expected_body.encode()


@pytest.mark.parametrize(
    ("method", "operation", "expected", "metadata", "result", "result_json"),
    V03_CASES,
    ids=_ids(V03_CASES),
)
def test_v03_method_golden(
    method: str,
    operation: Operation,
    expected: CallRequest,
    metadata: dict[str, Any],
    result: object,
    result_json: str,
) -> None:
    # No A2A-Version header: what a v0.3 client sends.
    call = as_call(PROTOCOL.receive_request(rpc(envelope(method, V03_PARAMS[method], id=7))))
    assert call.operation is operation
    assert call.request == expected
    assert (call.binding, call.dialect, call.version) == ("jsonrpc", "0.3", "0.3")
    assert call.request_id == 7
    assert call.streaming is False
    assert call.tenant == ""
    assert dict(call.metadata) == metadata
    assert call.response_headers == (("a2a-version", "0.3"),)

    reply = PROTOCOL.reply_result(call, result)
    assert reply.status == 200
    assert reply.headers == (("content-type", "application/json"), ("a2a-version", "0.3"))
    assert reply.body == ('{"jsonrpc":"2.0","id":7,"result":' + result_json + "}").encode()


@pytest.mark.parametrize(
    ("method", "headers", "reply"),
    [
        (
            "SendMessage",
            [("A2A-Version", "1.0")],
            '{"jsonrpc":"2.0","id":1,"result":{"message":' + MESSAGE_V1 + "}}",
        ),
        ("message/send", [], '{"jsonrpc":"2.0","id":1,"result":' + MESSAGE_V03 + "}"),
    ],
)
def test_a_message_reply_to_send(method: str, headers: list[tuple[str, str]], reply: str) -> None:
    params = V1_PARAMS.get(method) or V03_PARAMS[method]
    call = as_call(PROTOCOL.receive_request(rpc(envelope(method, params), *headers)))
    response = PROTOCOL.reply_result(call, t.SendMessageResponse(message=AGENT_MESSAGE))
    assert response.body == reply.encode()


def test_params_may_be_omitted_or_null_where_nothing_is_required() -> None:
    for method in ("GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"):
        for body in (envelope(method), {**envelope(method), "params": None}):
            call = as_call(PROTOCOL.receive_request(rpc(body)))
            assert call.request == CARD_REQUEST


def test_snake_case_params_and_integer_enums_are_accepted() -> None:
    params = {"context_id": "c-1", "status": 2, "page_size": 10, "include_artifacts": True}
    call = as_call(PROTOCOL.receive_request(rpc(envelope("ListTasks", params))))
    assert call.request == t.ListTasksRequest(
        context_id="c-1", status=t.TaskState.WORKING, page_size=10, include_artifacts=True
    )


def test_tenant_in_params_is_carried_on_the_call() -> None:
    call = as_call(
        PROTOCOL.receive_request(rpc(envelope("GetTask", {"tenant": "acme", "id": "t-1"})))
    )
    assert call.tenant == "acme"
    assert call.request == t.GetTaskRequest(tenant="acme", id="t-1")
    assert call.metadata == {"a2a.tenant": "acme"}


# --- streaming methods ------------------------------------------------------------------------

# (method, params, headers, id, operation, expected request, dialect, event results)
STREAM_CASES: list[
    tuple[str, Any, list[tuple[str, str]], Any, Operation, CallRequest, str, list[str]]
] = [
    (
        "SendStreamingMessage",
        V1_PARAMS["SendStreamingMessage"],
        [("A2A-Version", "1.0")],
        "s-1",
        Operation.SEND_STREAMING_MESSAGE,
        SEND_REQUEST,
        "1.0",
        STREAM_EVENTS_V1,
    ),
    (
        "SubscribeToTask",
        V1_PARAMS["SubscribeToTask"],
        [("A2A-Version", "1.0")],
        2,
        Operation.SUBSCRIBE_TO_TASK,
        SUBSCRIBE_REQUEST,
        "1.0",
        STREAM_EVENTS_V1,
    ),
    (
        "message/stream",
        V03_PARAMS["message/stream"],
        [],
        3,
        Operation.SEND_STREAMING_MESSAGE,
        SEND_REQUEST,
        "0.3",
        STREAM_EVENTS_V03,
    ),
    (
        "tasks/resubscribe",
        V03_PARAMS["tasks/resubscribe"],
        [],
        "s-4",
        Operation.SUBSCRIBE_TO_TASK,
        SUBSCRIBE_REQUEST,
        "0.3",
        STREAM_EVENTS_V03,
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "headers", "id_", "operation", "expected", "dialect", "results"),
    STREAM_CASES,
    ids=_ids(STREAM_CASES),
)
def test_streaming_method_golden(
    method: str,
    params: Any,
    headers: list[tuple[str, str]],
    id_: Any,
    operation: Operation,
    expected: CallRequest,
    dialect: str,
    results: list[str],
) -> None:
    call = as_call(PROTOCOL.receive_request(rpc(envelope(method, params, id=id_), *headers)))
    assert call.operation is operation
    assert call.request == expected
    assert (call.binding, call.dialect, call.version) == ("jsonrpc", dialect, dialect)
    assert call.request_id == id_
    assert call.streaming is True
    assert PROTOCOL.stream_headers(call) == (
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        ("x-accel-buffering", "no"),
        ("a2a-version", dialect),
    )

    stream = PROTOCOL.open_event_stream(call)
    id_json = f'"{id_}"' if isinstance(id_, str) else str(id_)
    frames = [stream.encode(event, seq) for seq, event in enumerate(STREAM_EVENTS, start=1)]
    assert frames == [
        f'id: {seq}\ndata: {{"jsonrpc":"2.0","id":{id_json},"result":{result}}}\n\n'.encode()
        for seq, result in enumerate(results, start=1)
    ]
    # The completed status ended the stream: anything more is the caller's bug.
    assert stream.finished
    with pytest.raises(LocalProtocolError):
        stream.encode(STREAM_EVENTS[0], 4)
    # A streaming call has no single reply.
    with pytest.raises(LocalProtocolError):
        PROTOCOL.reply_result(call, TASK)


@pytest.mark.parametrize(
    ("method", "headers", "frame"),
    [
        (
            "SendStreamingMessage",
            [("A2A-Version", "1.0")],
            b'data: {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found",'
            b'"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":'
            b'"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}\n\n',
        ),
        (
            "message/stream",
            [],
            b'data: {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}'
            b"\n\n",
        ),
    ],
)
def test_stream_keep_alive_and_error_frames(
    method: str, headers: list[tuple[str, str]], frame: bytes
) -> None:
    params = V1_PARAMS.get(method) or V03_PARAMS[method]
    call = as_call(PROTOCOL.receive_request(rpc(envelope(method, params), *headers)))
    stream = PROTOCOL.open_event_stream(call)
    assert stream.keep_alive() == b": keep-alive\n\n"
    assert stream.encode_error(TaskNotFoundError()) == frame
    assert stream.finished
    with pytest.raises(LocalProtocolError):
        stream.keep_alive()


# --- reply_error in each dialect --------------------------------------------------------------

ERROR_INFO = '{{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"{}","domain":"a2a-protocol.org"}}'


@pytest.mark.parametrize(
    ("method", "error", "reply"),
    [
        (
            "GetTask",
            TaskNotFoundError(),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found","data":['
            + ERROR_INFO.format("TASK_NOT_FOUND")
            + "]}}",
        ),
        (
            "CancelTask",
            TaskNotCancelableError(data={"state": "completed"}, metadata={"taskId": "t-1"}),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Task cannot be canceled",'
            '"data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":'
            '"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org","metadata":{"taskId":"t-1"}}]}}',
        ),
        (
            "SendMessage",
            InvalidParamsError("bad part", field_violations=[("message.parts", "empty")]),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad part","data":['
            + ERROR_INFO.format("INVALID_PARAMS")
            + ',{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":'
            '[{"field":"message.parts","description":"empty"}]}]}}',
        ),
        (
            "GetTask",
            RuntimeError("password=hunter2 at <a2a_core.server object>"),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":['
            + ERROR_INFO.format("INTERNAL")
            + "]}}",
        ),
        (
            "tasks/get",
            TaskNotFoundError(data={"taskId": "t-1"}),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found",'
            '"data":{"taskId":"t-1"}}}',
        ),
        (
            "tasks/cancel",
            TaskNotCancelableError(),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Task cannot be canceled"}}',
        ),
        (
            "message/send",
            LocalProtocolError("an event after the end"),
            '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}',
        ),
    ],
)
def test_reply_error_golden(method: str, error: BaseException, reply: str) -> None:
    params = V1_PARAMS.get(method) or V03_PARAMS[method]
    call = as_call(PROTOCOL.receive_request(rpc(envelope(method, params))))
    response = PROTOCOL.reply_error(call, error)
    assert response.status == 200
    assert response.headers == (
        ("content-type", "application/json"),
        ("a2a-version", call.dialect),
    )
    assert response.body == reply.encode()


# --- v0.3 parts without `kind` (issue 48, item 1) ---------------------------------------------


def v03_send(*parts: dict[str, Any]) -> dict[str, Any]:
    message = {"kind": "message", "messageId": "m-1", "role": "user", "parts": list(parts)}
    return envelope("message/send", {"message": message})


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ({"text": "hi"}, t.Part(text="hi")),
        ({"type": "text", "text": "hi"}, t.Part(text="hi")),
        ({"data": {"k": 1}}, t.Part(data={"k": 1})),
        (
            {"file": {"uri": "https://files.example/f.png", "mimeType": "image/png"}},
            t.Part(url="https://files.example/f.png", media_type="image/png"),
        ),
    ],
    ids=["text", "type-instead-of-kind", "data", "file"],
)
def test_a_v03_part_without_kind_is_read_as_its_one_content_member(
    part: dict[str, Any], expected: t.Part
) -> None:
    # Both official servers run the agent for these; clients in the wild send them.
    call = as_call(PROTOCOL.receive_request(rpc(v03_send(part, {"kind": "text", "text": "x"}))))
    assert isinstance(call.request, t.SendMessageRequest)
    assert call.request.message.parts == [expected, t.Part(text="x")]


@pytest.mark.parametrize(
    "part",
    [
        {},
        {"text": "a", "data": {"k": 1}},
        {"type": "text"},
        # The v0.3 compatibility kit's unsupported part: refused, not read as text.
        {"type": "unsupported_type", "text": "This should be rejected"},
    ],
    ids=["none", "two", "type-alone", "unsupported-type"],
)
def test_a_v03_part_with_no_content_or_two_still_needs_its_kind(part: dict[str, Any]) -> None:
    response = as_response(PROTOCOL.receive_request(rpc(v03_send(part))))
    error = body_of(response)["error"]
    assert error["code"] == -32602
    assert "kind" in error["message"]


# --- ids (issue 48, items 2 and 6) ------------------------------------------------------------


def test_an_integral_id_with_a_fraction_is_served_and_echoed_as_a_number() -> None:
    call = as_call(PROTOCOL.receive_request(rpc(envelope("GetTask", {"id": "t"}, id=1.0))))
    assert call.request_id == 1.0
    reply = PROTOCOL.reply_result(call, TASK)
    assert body_of(reply)["id"] == 1.0
    assert reply.body.startswith(b'{"jsonrpc":"2.0","id":1.0,')


@pytest.mark.parametrize("bad_id", [None, 1.5, True], ids=["null", "fraction", "bool"])
def test_a_null_bool_or_fractional_id_is_refused_with_a_null_id(bad_id: Any) -> None:
    response = as_response(PROTOCOL.receive_request(rpc(envelope("GetTask", {"id": "t"}, bad_id))))
    body = body_of(response)
    assert body["id"] is None
    assert body["error"]["code"] == -32600
    assert "'id' must be a string or an integer" in body["error"]["message"]


@pytest.mark.parametrize(
    "header",
    [("A2A-Version", "2.0"), ("Content-Type", "text/plain")],
    ids=["version", "content-type"],
)
def test_a_request_refused_before_its_envelope_is_read_still_gets_its_id(
    header: tuple[str, str],
) -> None:
    response = as_response(
        PROTOCOL.receive_request(rpc(envelope("GetTask", {"id": "t"}, id="abc"), header))
    )
    assert body_of(response)["id"] == "abc"
    # Unless the id cannot be read: not JSON, or not an object.
    for body in (b"{oops", b"[1]"):
        unread = as_response(PROTOCOL.receive_request(rpc(body, header)))
        assert body_of(unread)["id"] is None


# --- a leading byte order mark (issue 48, item 3) ---------------------------------------------

BOM = b"\xef\xbb\xbf"


def test_a_request_starting_with_a_bom_is_served_on_both_bindings() -> None:
    body = BOM + json.dumps(envelope("GetTask", {"id": "t"}, id=3)).encode()
    call = as_call(PROTOCOL.receive_request(rpc(body)))
    assert call.request == t.GetTaskRequest(id="t") and call.request_id == 3
    send = (
        BOM
        + json.dumps(
            {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
        ).encode()
    )
    rest = as_call(
        PROTOCOL.receive_request(
            HttpRequest(
                "POST",
                "/message:send",
                headers=Headers([("content-type", "application/json"), ("a2a-version", "1.0")]),
                body=send,
            )
        )
    )
    assert isinstance(rest.request, t.SendMessageRequest)
    assert rest.request.message.parts == [t.Part(text="hi")]


def test_the_client_reads_replies_and_cards_starting_with_a_bom() -> None:
    reply = BOM + b'{"jsonrpc":"2.0","id":1,"result":' + TASK_V1.encode() + b"}"
    task = read_reply(
        Operation.GET_TASK, Endpoint("http://a.example", "jsonrpc", "1.0"), 200, reply, request_id=1
    )
    assert isinstance(task, t.Task)
    card = parse_card(BOM + CARD_V1.encode())
    assert card.name
