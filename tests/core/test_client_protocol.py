"""The client's protocol, driven with values and checked on our own server's protocol.

Every operation, in both bindings and both dialects: the request `build_request` makes
decodes on `ServerProtocol` to the same v1.0 request (what v0.3 cannot carry aside), the
server's result reads back to the same value, its errors read back as `AgentError` with the
table's identity, and its stream frames as events with their ids and the last one marked.
Cards in either version parse, interfaces are chosen as documented, and replies that are
not A2A give `InvalidReplyError`.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import msgspec
import pytest

from a2a_core import types as t
from a2a_core._protocol.grpc import codec as grpc_codec
from a2a_core.agent_card import encode_card
from a2a_core.call import Call
from a2a_core.client import (
    AgentError,
    Endpoint,
    InvalidReplyError,
    NotInDialectError,
    NoUsableInterfaceError,
    StreamDecoder,
    build_request,
    choose_interface,
    parse_card,
    read_reply,
    request_url,
)
from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.errors import (
    ERROR_CLASSES,
    InvalidParamsError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_core.http import HttpRequest
from a2a_core.operations import OPERATIONS, Operation
from helpers.protocol import CARD, make_protocol

URL = "https://agent.example/a2a"
MESSAGE = t.Message(message_id="m-1", role=t.Role.USER, parts=[t.Part(text="hi")])
TASK = t.Task(
    id="task:1",
    context_id="ctx",
    status=t.TaskStatus(state=t.TaskState.COMPLETED),
    artifacts=[t.Artifact(artifact_id="a", parts=[t.Part(text="out")])],
)
CONFIG = t.TaskPushNotificationConfig(task_id="task:1", id="c1", url="https://hook.example/h")

REQUESTS: dict[Operation, Any] = {
    Operation.SEND_MESSAGE: t.SendMessageRequest(
        message=MESSAGE,
        configuration=t.SendMessageConfiguration(return_immediately=True, history_length=2),
    ),
    Operation.SEND_STREAMING_MESSAGE: t.SendMessageRequest(message=MESSAGE),
    Operation.GET_TASK: t.GetTaskRequest(id="task:1", history_length=3),
    Operation.LIST_TASKS: t.ListTasksRequest(
        context_id="ctx",
        status=t.TaskState.INPUT_REQUIRED,
        page_size=5,
        page_token="p",
        history_length=1,
        status_timestamp_after=dt.datetime(2025, 1, 1, 12, tzinfo=dt.UTC),
        include_artifacts=False,
    ),
    Operation.CANCEL_TASK: t.CancelTaskRequest(id="task:cancel"),
    Operation.SUBSCRIBE_TO_TASK: t.SubscribeToTaskRequest(id="a b%c"),
    Operation.CREATE_PUSH_CONFIG: t.TaskPushNotificationConfig(
        task_id="task:1", id="c1", url="https://hook.example/h", token="tok"
    ),
    Operation.GET_PUSH_CONFIG: t.GetTaskPushNotificationConfigRequest(task_id="task:1", id="c1"),
    Operation.LIST_PUSH_CONFIGS: t.ListTaskPushNotificationConfigsRequest(
        task_id="task:1", page_size=2, page_token="n"
    ),
    Operation.DELETE_PUSH_CONFIG: t.DeleteTaskPushNotificationConfigRequest(
        task_id="task:1", id="c1"
    ),
    Operation.GET_EXTENDED_CARD: t.GetExtendedAgentCardRequest(),
}
RESULTS: dict[Operation, Any] = {
    Operation.SEND_MESSAGE: t.SendMessageResponse(task=TASK),
    Operation.GET_TASK: TASK,
    Operation.CANCEL_TASK: TASK,
    Operation.LIST_TASKS: t.ListTasksResponse(
        tasks=[TASK], next_page_token="next", page_size=5, total_size=6
    ),
    Operation.CREATE_PUSH_CONFIG: CONFIG,
    Operation.GET_PUSH_CONFIG: CONFIG,
    Operation.LIST_PUSH_CONFIGS: t.ListTaskPushNotificationConfigsResponse(configs=[CONFIG]),
    Operation.DELETE_PUSH_CONFIG: None,
    Operation.GET_EXTENDED_CARD: msgspec.structs.replace(
        CARD,
        supported_interfaces=[
            t.AgentInterface(url=URL, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
    ),
}
ENDPOINTS = [
    Endpoint(URL, binding, dialect)  # type: ignore[arg-type]
    for binding in ("jsonrpc", "rest")
    for dialect in ("1.0", "0.3")
]
CASES = [
    pytest.param(op, ep, id=f"{ep.binding}-{ep.dialect}-{op.value}")
    for ep in ENDPOINTS
    for op in REQUESTS
    if not (op is Operation.LIST_TASKS and ep.dialect == "0.3")
]


def _served(request: HttpRequest) -> HttpRequest:
    # What the server sees: the path below its mount, the headers; no base URL.
    return HttpRequest(
        request.method,
        request.path,
        query=request.query,
        headers=request.headers,
        body=request.body,
    )


def _call(operation: Operation, endpoint: Endpoint, **options: Any) -> tuple[Call, Any]:
    protocol = make_protocol(**options)
    request = build_request(operation, REQUESTS[operation], endpoint, request_id=7)
    outcome = protocol.receive_request(_served(request))
    assert isinstance(outcome, Call), outcome.body  # type: ignore[union-attr]
    return outcome, protocol


def _carried(operation: Operation, endpoint: Endpoint) -> Any:
    """The request as the dialect can carry it: v0.3 JSON-RPC lists push configs unpaged."""
    request = REQUESTS[operation]
    if (endpoint.dialect, endpoint.binding) == ("0.3", "jsonrpc") and (
        operation is Operation.LIST_PUSH_CONFIGS
    ):
        return msgspec.structs.replace(request, page_size=0, page_token="")
    return request


@pytest.mark.parametrize(("operation", "endpoint"), CASES)
def test_the_request_decodes_on_our_server_to_the_same_request(
    operation: Operation, endpoint: Endpoint
) -> None:
    call, _ = _call(operation, endpoint)
    assert call.operation is operation
    assert call.binding == endpoint.binding
    assert call.dialect == endpoint.dialect
    assert call.request == _carried(operation, endpoint)


@pytest.mark.parametrize(
    ("operation", "endpoint"), [c for c in CASES if not OPERATIONS[c.values[0]].streaming]
)
def test_the_servers_result_reads_back_as_the_same_value(
    operation: Operation, endpoint: Endpoint
) -> None:
    call, protocol = _call(operation, endpoint)
    reply = protocol.reply_result(call, RESULTS[operation])
    request_id = 7 if endpoint.binding == "jsonrpc" else None
    got = read_reply(operation, endpoint, reply.status, reply.body, request_id=request_id)
    expected = RESULTS[operation]
    if endpoint.dialect == "0.3" and operation is Operation.GET_EXTENDED_CARD:
        expected = v03c.card_to_v1(v03c.card_from_v1(expected))  # what v0.3 can say
    if (
        endpoint.dialect == "0.3"
        and endpoint.binding == "jsonrpc"
        and operation is Operation.LIST_PUSH_CONFIGS
    ):
        expected = msgspec.structs.replace(expected, next_page_token="")
    assert got == expected


@pytest.mark.parametrize(("operation", "endpoint"), CASES)
@pytest.mark.parametrize("error_class", [TaskNotFoundError, UnsupportedOperationError])
def test_the_servers_errors_read_back_with_their_identity(
    operation: Operation, endpoint: Endpoint, error_class: type[Exception]
) -> None:
    call, protocol = _call(operation, endpoint)
    reply = protocol.reply_error(call, error_class("no such thing"))  # type: ignore[arg-type]
    with pytest.raises(AgentError) as caught:
        read_reply(operation, endpoint, reply.status, reply.body)
    error = caught.value
    assert error.error_type is error_class
    assert error.code == error_class.code  # type: ignore[attr-defined]
    assert error.reason == error_class.reason  # type: ignore[attr-defined]
    assert error.message == "no such thing"
    assert error.http_status == (200 if endpoint.binding == "jsonrpc" else reply.status)


def test_every_error_of_the_table_reads_back_over_rest_and_jsonrpc() -> None:
    for endpoint in ENDPOINTS:
        call, protocol = _call(Operation.GET_TASK, endpoint)
        for error_class in ERROR_CLASSES:
            reply = protocol.reply_error(call, error_class("m"))
            with pytest.raises(AgentError) as caught:
                read_reply(Operation.GET_TASK, endpoint, reply.status, reply.body)
            assert caught.value.error_type is error_class, (endpoint, error_class)


def test_agent_errors_are_not_the_servers_errors() -> None:
    # An agent that lets another agent's error escape must not answer it as its own.
    error = AgentError("gone", code=TaskNotFoundError.code)
    assert not isinstance(error, TaskNotFoundError)
    assert error.error_type is TaskNotFoundError
    assert str(error) == "TASK_NOT_FOUND: gone"


def test_an_error_of_a_code_the_table_does_not_know_keeps_its_code() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"error":{"code":-32077,"message":"peer-specific"}}'
    endpoint = ENDPOINTS[0]
    with pytest.raises(AgentError) as caught:
        read_reply(Operation.GET_TASK, endpoint, 200, body)
    assert (caught.value.code, caught.value.reason, caught.value.error_type) == (-32077, None, None)


STATES = [t.TaskState.WORKING, t.TaskState.INPUT_REQUIRED, t.TaskState.COMPLETED]


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.binding}-{e.dialect}")
@pytest.mark.parametrize(
    "operation", [Operation.SEND_STREAMING_MESSAGE, Operation.SUBSCRIBE_TO_TASK]
)
def test_stream_events_read_back(operation: Operation, endpoint: Endpoint) -> None:
    call, protocol = _call(operation, endpoint)
    stream = protocol.open_event_stream(call)
    events = [
        t.StreamResponse(
            task=msgspec.structs.replace(TASK, status=t.TaskStatus(state=t.TaskState.SUBMITTED))
        )
    ]
    events += [
        t.StreamResponse(
            status_update=t.TaskStatusUpdateEvent(
                task_id=TASK.id, context_id="ctx", status=t.TaskStatus(state=state)
            )
        )
        for state in STATES
    ]
    frames = b""
    for seq, event in enumerate(events, start=1):
        if not stream.finished:
            frames += stream.encode(event, seq)
    decoder = StreamDecoder(operation, endpoint)
    received = []
    for i in range(0, len(frames), 7):  # fed in small pieces, as a network does
        received += decoder.feed(frames[i : i + 7])
    received += decoder.close()
    # A send stream ends at input-required; a subscription goes on to the terminal state.
    expected = events[:3] if operation is Operation.SEND_STREAMING_MESSAGE else events
    assert [r.event for r in received] == expected
    assert [r.event_id for r in received] == [str(i) for i in range(1, len(expected) + 1)]
    assert [r.last for r in received] == [False] * (len(expected) - 1) + [True]
    assert decoder.finished
    assert decoder.last_event_id == str(len(expected))


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.binding}-{e.dialect}")
def test_an_error_event_in_a_stream_raises_it(endpoint: Endpoint) -> None:
    call, protocol = _call(Operation.SEND_STREAMING_MESSAGE, endpoint)
    stream = protocol.open_event_stream(call)
    working = msgspec.structs.replace(TASK, status=t.TaskStatus(state=t.TaskState.WORKING))
    frames = stream.encode(t.StreamResponse(task=working), 1)
    frames += stream.encode_error(InvalidParamsError("bad"))
    decoder = StreamDecoder(Operation.SEND_STREAMING_MESSAGE, endpoint)
    # The event before the error is handed over first; the error comes at the next call.
    assert [r.event.task for r in decoder.feed(frames)] == [working]
    with pytest.raises(AgentError) as caught:
        decoder.close()
    assert caught.value.error_type is InvalidParamsError


def test_keep_alives_and_empty_frames_are_skipped() -> None:
    decoder = StreamDecoder(Operation.SUBSCRIBE_TO_TASK, ENDPOINTS[0])
    assert decoder.feed(b": keep-alive\n\nid: 4\n\n") == []
    assert decoder.last_event_id is None


# --- the shapes on the wire ------------------------------------------------------------------


def test_jsonrpc_request_shape() -> None:
    endpoint = Endpoint(URL, "jsonrpc", "1.0", tenant="acme")
    request = build_request(
        Operation.GET_TASK,
        t.GetTaskRequest(id="x"),
        endpoint,
        request_id="r-1",
        headers=[("X-Trace", "1")],
        extensions=["https://ext.example/a"],
        last_event_id=None,
    )
    assert request_url(request) == URL
    assert json.loads(request.body) == {
        "jsonrpc": "2.0",
        "id": "r-1",
        "method": "GetTask",
        "params": {"tenant": "acme", "id": "x"},
    }
    assert request.headers.get("a2a-version") == "1.0"
    assert request.headers.get("a2a-extensions") == "https://ext.example/a"
    assert request.headers.get("x-trace") == "1"
    v03 = build_request(
        Operation.GET_TASK, t.GetTaskRequest(id="x"), Endpoint(URL, "jsonrpc", "0.3")
    )
    assert json.loads(v03.body)["method"] == "tasks/get"
    assert "a2a-version" not in v03.headers


def test_rest_request_shapes() -> None:
    endpoint = Endpoint(URL + "/", "rest", "1.0", tenant="acme")
    get = build_request(Operation.GET_TASK, t.GetTaskRequest(id="a/b:c"), endpoint)
    assert request_url(get) == URL + "/acme/tasks/a%2Fb%3Ac"
    assert get.body == b"" and "content-type" not in get.headers
    subscribe = build_request(
        Operation.SUBSCRIBE_TO_TASK, t.SubscribeToTaskRequest(id="x"), endpoint, last_event_id="9"
    )
    assert (subscribe.method, subscribe.path) == ("GET", "/acme/tasks/x:subscribe")
    assert subscribe.headers.get("last-event-id") == "9"
    assert subscribe.headers.get("accept") == "text/event-stream"
    legacy = build_request(
        Operation.CANCEL_TASK, t.CancelTaskRequest(id="x"), Endpoint(URL, "rest", "0.3")
    )
    assert (legacy.method, request_url(legacy)) == ("POST", URL + "/v1/tasks/x:cancel")
    assert json.loads(legacy.body) == {"name": "tasks/x"}


def test_list_tasks_is_not_in_v0_3() -> None:
    for binding in ("jsonrpc", "rest"):
        with pytest.raises(NotInDialectError, match=r"ListTasks is not part of A2A 0.3"):
            build_request(
                Operation.LIST_TASKS,
                t.ListTasksRequest(),
                Endpoint(URL, binding, "0.3"),  # type: ignore[arg-type]
            )


def test_a_request_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(TypeError, match="GetTask takes a GetTaskRequest"):
        build_request(Operation.GET_TASK, t.CancelTaskRequest(id="x"), ENDPOINTS[0])


# --- cards ---------------------------------------------------------------------------------

INTERFACES = [
    t.AgentInterface(url=URL, protocol_binding="GRPC", protocol_version="1.0"),
    t.AgentInterface(url=URL + "/rpc", protocol_binding="JSONRPC", protocol_version="1.0"),
    t.AgentInterface(url="rest", protocol_binding="HTTP+JSON", protocol_version="1.0.2"),
    t.AgentInterface(url=URL + "/v03", protocol_binding="JSONRPC", protocol_version="0.3.0"),
]
MULTI = msgspec.structs.replace(CARD, supported_interfaces=INTERFACES)


def test_the_first_interface_this_client_speaks_is_chosen() -> None:
    assert choose_interface(MULTI) == Endpoint(URL + "/rpc", "jsonrpc", "1.0")


def test_preferences_narrow_and_order_the_choice() -> None:
    chosen = choose_interface(
        MULTI, bindings=["http+json", "JSONRPC"], base_url="https://agent.example/card.json"
    )
    assert chosen == Endpoint("https://agent.example/rest", "rest", "1.0")
    assert choose_interface(MULTI, versions=["0.3"]) == Endpoint(URL + "/v03", "jsonrpc", "0.3")
    with pytest.raises(NoUsableInterfaceError, match=r"binding HTTP\+JSON and version 0.3"):
        choose_interface(MULTI, bindings=["HTTP+JSON"], versions=["0.3"])


def test_a_card_with_nothing_spoken_says_what_it_lists() -> None:
    grpc_only = msgspec.structs.replace(CARD, supported_interfaces=INTERFACES[:1])
    with pytest.raises(
        NoUsableInterfaceError,
        match=r"it lists: GRPC 1.0 at .*a2aserve-grpc: .*dist/a2aserve_grpc-\*\.whl",
    ):
        choose_interface(grpc_only)


def test_grpc_is_chosen_when_spoken() -> None:
    spoken = ("JSONRPC", "HTTP+JSON", "GRPC")
    # The card's order: GRPC first here; its url is the host:port to dial, as given.
    assert choose_interface(MULTI, spoken=spoken, base_url=URL) == Endpoint(URL, "grpc", "1.0")
    v03 = t.AgentInterface(url="h:1", protocol_binding="GRPC", protocol_version="0.3")
    only_v03 = msgspec.structs.replace(CARD, supported_interfaces=[v03])
    with pytest.raises(NoUsableInterfaceError):  # v0.3's gRPC service is not spoken
        choose_interface(only_v03, spoken=spoken)


def test_a_grpc_call_is_the_http2_request_it_is() -> None:
    endpoint = Endpoint("127.0.0.1:50051", "grpc", "1.0", tenant="acme")
    request = build_request(
        Operation.GET_TASK, t.GetTaskRequest(id="t1"), endpoint, extensions=["urn:x"]
    )
    assert (request.method, request.path) == ("POST", "/lf.a2a.v1.A2AService/GetTask")
    assert request.headers.items() == (
        ("content-type", "application/grpc"),
        ("a2a-version", "1.0"),
        ("a2a-extensions", "urn:x"),
    )
    assert grpc_codec.decode(request.body, t.GetTaskRequest) == t.GetTaskRequest(
        id="t1", tenant="acme"
    )


def test_cards_of_both_versions_parse() -> None:
    v1 = encode_card(MULTI)
    assert parse_card(v1) == MULTI
    hybrid = encode_card(MULTI, legacy_v0_3_fields=True)
    # The same card, its skills' modes spelled out (the card's defaults).
    assert parse_card(hybrid) == msgspec.structs.replace(
        MULTI,
        skills=[
            msgspec.structs.replace(
                skill,
                input_modes=skill.input_modes or MULTI.default_input_modes,
                output_modes=skill.output_modes or MULTI.default_output_modes,
            )
            for skill in MULTI.skills
        ],
    )
    legacy = msgspec.json.encode(v03c.card_from_v1(MULTI))
    converted = parse_card(legacy)
    assert converted.name == MULTI.name
    assert choose_interface(converted).dialect == "0.3"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>", "not a JSON object"),
        (b"[1]", "not a JSON object"),
        (b'{"name": "x"}', "neither supportedInterfaces"),
        (b'{"supportedInterfaces": 3}', "not valid"),
        (b"[" * 100_000, "not a JSON object"),
    ],
)
def test_what_is_not_a_card_is_a_clear_error(body: bytes, message: str) -> None:
    with pytest.raises(InvalidReplyError, match=message):
        parse_card(body)


# --- replies that are not A2A ----------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.binding}-{e.dialect}")
@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, b"not json"),
        (200, b'{"jsonrpc":"2.0","id":1}'),
        (200, b'{"jsonrpc":"2.0","id":1,"result":{"id":5}}'),
        (502, b"<html>Bad gateway</html>"),
        (404, b""),
        (
            200,
            b'{"jsonrpc":"2.0","id":2,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}',
        ),
    ],
)
def test_replies_that_are_not_a2a_are_invalid_replies(
    endpoint: Endpoint, status: int, body: bytes
) -> None:
    with pytest.raises(InvalidReplyError):
        read_reply(Operation.GET_TASK, endpoint, status, body, request_id=1)


def test_a_v0_3_rest_error_of_only_a_message_is_the_agents_error() -> None:
    # a2a-sdk 0.3 answers a REST error with its HTTP status and `{"message": ...}` alone.
    endpoint = Endpoint(URL, "rest", "0.3")
    with pytest.raises(AgentError) as caught:
        read_reply(Operation.GET_TASK, endpoint, 404, b'{"message": "Task not found"}')
    error = caught.value
    assert (error.code, error.reason, error.http_status) == (None, None, 404)
    assert str(error) == "HTTP 404: Task not found"
    # Elsewhere such a body is not an A2A error: v1.0 REST errors are AIP-193 bodies.
    with pytest.raises(InvalidReplyError):
        read_reply(Operation.GET_TASK, Endpoint(URL, "rest", "1.0"), 404, b'{"message": "x"}')


def test_the_client_reads_a_v03_part_without_kind_as_its_content() -> None:
    # The same rule as the server's (spec-decisions A26): a v0.3 server that leaves out a
    # part's kind is read, not refused.
    task = {
        "kind": "task",
        "id": "t-1",
        "contextId": "c-1",
        "status": {"state": "completed"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": "hi"}, {"data": {"k": 1}}]}],
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": task}).encode()
    got = read_reply(Operation.GET_TASK, Endpoint(URL, "jsonrpc", "0.3"), 200, body, request_id=1)
    assert got.artifacts[0].parts == [t.Part(text="hi"), t.Part(data={"k": 1})]
