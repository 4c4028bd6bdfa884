"""The gRPC binding of ServerProtocol, driven with bytes: calls, statuses, framing, fuzz.

A gRPC call reaches the core as an `HttpRequest` (POST to ``/lf.a2a.v1.A2AService/<Rpc>``,
``content-type: application/grpc``, metadata as headers, the message as body); the reply's
trailers carry the status. The official SDK's generated messages build the requests and read
the replies, so the bytes are what a real client sends.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from a2a.types import a2a_pb2
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import types as t
from a2a_core._protocol.grpc import binding, codec
from a2a_core.call import Call
from a2a_core.errors import (
    InvalidParamsError,
    PushNotificationNotSupportedError,
    TaskNotFoundError,
)
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.operations import Operation
from a2a_core.protocol import ServerProtocol
from helpers.protocol import BARE_CARD, make_protocol

SERVICE = "/lf.a2a.v1.A2AService/"


def grpc_request(rpc: str, message: Any, **metadata: str) -> HttpRequest:
    body = message if isinstance(message, bytes) else message.SerializeToString()
    headers = [("content-type", "application/grpc"), *metadata.items()]
    return HttpRequest("POST", SERVICE + rpc, headers=Headers(headers), body=body)


def send_request(text: str = "hi") -> a2a_pb2.SendMessageRequest:
    return a2a_pb2.SendMessageRequest(
        message=a2a_pb2.Message(
            message_id="m1", role=a2a_pb2.ROLE_USER, parts=[a2a_pb2.Part(text=text)]
        )
    )


def status_of(response: HttpResponse) -> tuple[int, str, status_pb2.Status]:
    """The call's code and message from the trailers, and the google.rpc.Status."""
    trailers = dict(response.trailers)
    details = status_pb2.Status()
    raw = trailers.get("grpc-status-details-bin")
    if raw:
        details.ParseFromString(base64.b64decode(raw))
    message = binding.status_from_trailers(response.trailers).message
    return int(trailers["grpc-status"]), message, details


def error_info(details: status_pb2.Status) -> error_details_pb2.ErrorInfo:
    info = error_details_pb2.ErrorInfo()
    assert details.details[0].Unpack(info)
    return info


@pytest.fixture
def protocol() -> ServerProtocol:
    return make_protocol()


def test_a_send_becomes_a_call(protocol: ServerProtocol) -> None:
    call = protocol.receive_request(
        grpc_request("SendMessage", send_request(), **{"a2a-version": "1.0"})
    )
    assert isinstance(call, Call)
    assert (call.operation, call.binding, call.dialect, call.version) == (
        Operation.SEND_MESSAGE,
        "grpc",
        "1.0",
        "1.0",
    )
    assert call.request.message.parts[0].text == "hi"
    assert ("a2a-version", "1.0") in call.response_headers


def test_no_version_metadata_is_the_service_version(protocol: ServerProtocol) -> None:
    call = protocol.receive_request(grpc_request("SendMessage", send_request()))
    assert isinstance(call, Call)
    assert call.version == "1.0"


@pytest.mark.parametrize(("table", "code"), [("v1.0.0", 12), ("v1.0.1", 9)])
@pytest.mark.parametrize("version", ["0.3", "9.9"])
def test_another_version_is_refused(table: str, code: int, version: str) -> None:
    protocol = make_protocol(error_table=table)
    reply = protocol.receive_request(
        grpc_request("GetTask", a2a_pb2.GetTaskRequest(id="t"), **{"a2a-version": version})
    )
    assert isinstance(reply, HttpResponse)
    got, message, details = status_of(reply)
    assert got == code
    assert details.code == code and details.message == message
    assert error_info(details).reason == "VERSION_NOT_SUPPORTED"
    assert "supported: 1.0" in message


def test_a_strict_server_wants_the_version(protocol: ServerProtocol) -> None:
    strict = make_protocol(strict_versions=True)
    reply = strict.receive_request(grpc_request("GetTask", a2a_pb2.GetTaskRequest(id="t")))
    assert isinstance(reply, HttpResponse)
    assert status_of(reply)[0] == 12


def test_invalid_params_are_invalid_argument_with_the_json_message(
    protocol: ServerProtocol,
) -> None:
    request = send_request()
    request.message.message_id = ""
    reply = protocol.receive_request(grpc_request("SendMessage", request))
    assert isinstance(reply, HttpResponse)
    code, message, details = status_of(reply)
    assert code == 3
    assert message == "Invalid parameters: Expected `str` of length >= 1 - at `$.message.messageId`"
    assert error_info(details).reason == "INVALID_PARAMS"
    assert reply.refusal is not None and reply.refusal.binding == "grpc"


def test_malformed_bytes_are_invalid_argument(protocol: ServerProtocol) -> None:
    reply = protocol.receive_request(grpc_request("SendMessage", b"\x12\x05ab"))
    assert isinstance(reply, HttpResponse)
    code, message, details = status_of(reply)
    assert (code, error_info(details).reason) == (3, "INVALID_REQUEST")
    assert message.startswith("Invalid protobuf message")


def test_an_unknown_rpc_is_unimplemented(protocol: ServerProtocol) -> None:
    reply = protocol.receive_request(grpc_request("Teleport", b""))
    assert isinstance(reply, HttpResponse)
    assert status_of(reply)[:2] == (12, "Method not found: Teleport")


def test_capability_gates_answer_with_the_tables_code() -> None:
    bare = make_protocol(BARE_CARD)
    reply = bare.receive_request(
        grpc_request("SubscribeToTask", a2a_pb2.SubscribeToTaskRequest(id="t"))
    )
    assert isinstance(reply, HttpResponse)
    code, _, details = status_of(reply)
    assert (code, error_info(details).reason) == (12, "UNSUPPORTED_OPERATION")
    reply = bare.receive_request(
        grpc_request(
            "GetTaskPushNotificationConfig",
            a2a_pb2.GetTaskPushNotificationConfigRequest(task_id="t", id="c"),
        )
    )
    assert isinstance(reply, HttpResponse)
    assert status_of(reply)[0] == binding.CODES["UNIMPLEMENTED"]


def test_results_are_protobuf_with_an_ok_status(protocol: ServerProtocol) -> None:
    call = protocol.receive_request(grpc_request("GetTask", a2a_pb2.GetTaskRequest(id="t1")))
    assert isinstance(call, Call)
    task = t.Task(id="t1", context_id="c1", status=t.TaskStatus(state=t.TaskState.WORKING))
    reply = protocol.reply_result(call, task)
    assert dict(reply.trailers) == {"grpc-status": "0"}
    assert reply.header("content-type") == "application/grpc"
    parsed = a2a_pb2.Task()
    parsed.ParseFromString(reply.body)
    assert (parsed.id, parsed.status.state) == ("t1", a2a_pb2.TASK_STATE_WORKING)


def test_a_delete_replies_empty(protocol: ServerProtocol) -> None:
    request = a2a_pb2.DeleteTaskPushNotificationConfigRequest(task_id="t", id="c")
    call = protocol.receive_request(grpc_request("DeleteTaskPushNotificationConfig", request))
    assert isinstance(call, Call)
    assert protocol.reply_result(call, None).body == b""


def test_errors_carry_error_info_and_field_violations(protocol: ServerProtocol) -> None:
    call = protocol.receive_request(grpc_request("GetTask", a2a_pb2.GetTaskRequest(id="t1")))
    assert isinstance(call, Call)
    reply = protocol.reply_error(call, TaskNotFoundError(metadata={"taskId": "t1"}))
    code, message, details = status_of(reply)
    assert (code, message, details.code, details.message) == (5, "Task not found", 5, message)
    info = error_info(details)
    assert (info.reason, info.domain, dict(info.metadata)) == (
        "TASK_NOT_FOUND",
        "a2a-protocol.org",
        {"taskId": "t1"},
    )
    invalid = InvalidParamsError("bad", field_violations=[("message.parts", "empty")])
    _, _, details = status_of(protocol.reply_error(call, invalid))
    bad = error_details_pb2.BadRequest()
    assert details.details[1].Unpack(bad)
    assert [(v.field, v.description) for v in bad.field_violations] == [("message.parts", "empty")]
    # Anything but an A2A error is a bare INTERNAL, whatever it said.
    code, message, _ = status_of(protocol.reply_error(call, RuntimeError("secret")))
    assert (code, message) == (13, "Internal error")


def test_status_details_read_back() -> None:
    status = binding.status_of(PushNotificationNotSupportedError(), "v1.0.1")
    read = binding.parse_status_details(status.details)
    assert (read.code, read.message, read.reason) == (
        9,
        "Push Notification is not supported",
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    )
    assert binding.status_from_trailers(binding.status_trailers(status)) == status


def test_messages_with_any_character_survive_the_trailers() -> None:
    status = binding.GrpcStatus(5, "100% naïve\r\nline", b"")
    assert binding.status_from_trailers(binding.status_trailers(status)).message == status.message


# --- streams ---------------------------------------------------------------------------------


def test_a_stream_is_length_prefixed_messages_then_a_trailers_frame(
    protocol: ServerProtocol,
) -> None:
    call = protocol.receive_request(grpc_request("SendStreamingMessage", send_request()))
    assert isinstance(call, Call)
    stream = protocol.open_event_stream(call)
    assert stream.headers[0] == ("content-type", "application/grpc")
    working = t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=t.TaskStatus(state=t.TaskState.WORKING)
        )
    )
    wire = (
        stream.encode(working, 7) + stream.keep_alive() + stream.encode_error(TaskNotFoundError())
    )
    deframer = binding.Deframer()
    items = [item for at in range(0, len(wire), 3) for item in deframer.feed(wire[at : at + 3])]
    assert deframer.pending == 0
    event, status = items
    assert isinstance(event, bytes) and codec.decode(event, t.StreamResponse) == working
    assert isinstance(status, binding.GrpcStatus)
    assert (status.code, status.message) == (5, "Task not found")
    assert binding.parse_status_details(status.details).reason == "TASK_NOT_FOUND"
    assert stream.finished


@settings(max_examples=50, deadline=None)
@given(
    messages=st.lists(st.binary(max_size=40), max_size=5),
    cuts=st.lists(st.integers(1, 50), max_size=20),
)
def test_the_deframer_reads_frames_cut_anywhere(messages: list[bytes], cuts: list[int]) -> None:
    wire = b"".join(binding.message_frame(m) for m in messages)
    deframer = binding.Deframer()
    got: list[Any] = []
    at = 0
    for size in [*cuts, len(wire)]:
        got += deframer.feed(wire[at : at + size])
        at += size
    assert got == messages


def test_a_message_after_its_head_in_one_chunk_is_that_chunk_not_a_copy() -> None:
    # The server's shared payload of a big event reaches the transport as the very bytes
    # object every stream holds (EventStream.whole_frames).
    payload = bytes(range(256)) * 1024
    deframer = binding.Deframer()
    assert deframer.feed(b"\x00" + len(payload).to_bytes(4, "big")) == []
    (got,) = deframer.feed(payload)
    assert got is payload
    assert deframer.pending == 0
    # What follows is read as usual.
    assert deframer.feed(binding.message_frame(b"next")) == [b"next"]


# --- the card --------------------------------------------------------------------------------


def test_the_grpc_interface_is_published_after_the_http_ones(protocol: ServerProtocol) -> None:
    protocol.publish_interface(
        t.AgentInterface(url="127.0.0.1:50051", protocol_binding="GRPC", protocol_version="1.0")
    )
    reply = protocol.receive_request(HttpRequest("GET", "/.well-known/agent-card.json"))
    assert isinstance(reply, HttpResponse)
    card = codec_json_card(reply.body)
    listed = [(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces]
    assert listed[-1] == ("GRPC", "1.0", "127.0.0.1:50051")
    assert listed[0][0] == "JSONRPC"
    extended = protocol.complete_card(BARE_CARD, "https://agent.example/a2a")
    assert extended.supported_interfaces[-1].url == "127.0.0.1:50051"


def codec_json_card(body: bytes) -> t.AgentCard:
    from a2a_core import codec as json_codec

    return json_codec.decode(body, t.AgentCard)


# --- the fuzz invariant ----------------------------------------------------------------------

RPC_NAMES = [path.rsplit("/", 1)[1] for path in binding.METHODS]
FUZZ_PROTOCOLS = {
    "default": make_protocol(),
    "bare-strict-v1.0.1": make_protocol(BARE_CARD, strict_versions=True, error_table="v1.0.1"),
}


@pytest.mark.parametrize("name", sorted(FUZZ_PROTOCOLS))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rpc=st.sampled_from([*RPC_NAMES, "Nope", ""]),
    body=st.binary(max_size=200),
    version=st.sampled_from([None, "1.0", "0.3", "1.0.1", " 1.0", "x" * 300]),
    extensions=st.sampled_from([None, "", "urn:a, urn:b", "\x00"]),
)
def test_any_grpc_request_gets_a_status(
    name: str, rpc: str, body: bytes, version: str | None, extensions: str | None
) -> None:
    """Random bytes to every RPC: a call, or a status from the table; never an exception,
    never INTERNAL or UNKNOWN for the client's bytes."""
    protocol = FUZZ_PROTOCOLS[name]
    metadata = {}
    if version is not None:
        metadata["a2a-version"] = version
    if extensions is not None:
        metadata["a2a-extensions"] = extensions
    received = protocol.receive_request(grpc_request(rpc, body, **metadata))
    if isinstance(received, Call):
        assert received.binding == "grpc"
        reply = protocol.reply_error(received, TaskNotFoundError())
        assert status_of(reply)[0] == 5
        return
    code, message, details = status_of(received)
    assert code in (3, 9, 12), (code, message)
    assert received.body == b""
    if rpc in RPC_NAMES:
        assert (details.code, details.message) == (code, message)
        assert error_info(details).reason


# --- the client's side -----------------------------------------------------------------------


def test_the_client_reads_results_and_errors() -> None:
    from a2a_core.client import AgentError, InvalidReplyError, read_grpc_reply

    task = t.Task(id="t1", status=t.TaskStatus(state=t.TaskState.COMPLETED))
    ok = binding.GrpcStatus(0)
    assert read_grpc_reply(Operation.GET_TASK, ok, codec.encode(task)) == task
    assert read_grpc_reply(Operation.DELETE_PUSH_CONFIG, ok, b"") is None
    with pytest.raises(InvalidReplyError, match="not a Task"):
        read_grpc_reply(Operation.GET_TASK, ok, b"\x0a\x05ab")
    with pytest.raises(AgentError) as caught:
        read_grpc_reply(Operation.GET_TASK, binding.status_of(TaskNotFoundError()), b"")
    assert (caught.value.reason, caught.value.code, caught.value.grpc_status) == (
        "TASK_NOT_FOUND",
        -32001,
        "NOT_FOUND",
    )
    bare = binding.GrpcStatus(8, "slow down")  # a status without details: named by its code
    with pytest.raises(AgentError, match="RESOURCE_EXHAUSTED: slow down"):
        read_grpc_reply(Operation.GET_TASK, bare, b"")
