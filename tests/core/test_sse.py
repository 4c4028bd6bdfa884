"""SSE streams: events in, exact frame bytes out, per binding and dialect; and back again.

The golden tables spell every expected byte by hand; the properties check that any event,
in any binding and dialect, parses back (with the module's own WHATWG parser) into exactly
the event that went in, and that a stream refuses everything after its last event.
"""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_core import codec
from a2a_core.compat.v0_3 import types as v03
from a2a_core.compat.v0_3.convert import stream_event_from_v1
from a2a_core.errors import (
    ERROR_CLASSES,
    A2AError,
    InternalError,
    LocalProtocolError,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_core.sse import (
    CLOSING_STATES,
    STREAM_HEADERS,
    SUBSCRIPTION_CLOSING_STATES,
    EventStream,
    Frame,
    SseParser,
    comment_frame,
    data_frame,
    ends_stream,
    parse_frames,
    stream_headers,
)
from a2a_core.testing import strategy_for
from a2a_core.types import (
    Artifact,
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)

# The closing rule restated independently of the module (spec-decisions A6, the SDK's choice).
CLOSING = {
    TaskState.COMPLETED,
    TaskState.FAILED,
    TaskState.CANCELED,
    TaskState.REJECTED,
    TaskState.INPUT_REQUIRED,
}


def status(state: TaskState, **kw: Any) -> StreamResponse:
    return StreamResponse(
        status_update=TaskStatusUpdateEvent(
            task_id="t1", context_id="c1", status=TaskStatus(state=state, **kw)
        )
    )


def task(state: TaskState) -> StreamResponse:
    return StreamResponse(task=Task(id="t1", context_id="c1", status=TaskStatus(state=state)))


def rest_v03_stub(event: StreamResponse) -> bytes:
    """Stands in for the v0.3 proto's ProtoJSON, which the REST codec will own."""
    return b'{"v03proto":' + codec.encode(event) + b"}"


# ---------------------------------------------------------------------------------------
# Golden events: (event, v1.0 StreamResponse JSON, v0.3 JSON-RPC result JSON, ends stream)

GOLDEN: dict[str, tuple[StreamResponse, bytes, bytes, bool]] = {
    "task-submitted": (
        StreamResponse(
            task=Task(
                id="t1",
                context_id="c1",
                status=TaskStatus(
                    state=TaskState.SUBMITTED,
                    timestamp=dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
                ),
            )
        ),
        b'{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"2025-01-02T03:04:05Z"}}}',
        b'{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted","timestamp":"2025-01-02T03:04:05Z"}}',
        False,
    ),
    "task-completed": (
        StreamResponse(
            task=Task(
                id="t1",
                context_id="c1",
                status=TaskStatus(state=TaskState.COMPLETED),
                artifacts=[Artifact(artifact_id="a1", parts=[Part(text="done")])],
            )
        ),
        b'{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1","parts":[{"text":"done"}]}]}}',
        b'{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"done"}]}]}',
        True,
    ),
    "message": (
        StreamResponse(
            message=Message(
                message_id="m1", context_id="c1", role=Role.AGENT, parts=[Part(text="hi\nthere")]
            )
        ),
        b'{"message":{"messageId":"m1","contextId":"c1","role":"ROLE_AGENT","parts":[{"text":"hi\\nthere"}]}}',
        b'{"kind":"message","role":"agent","parts":[{"kind":"text","text":"hi\\nthere"}],"messageId":"m1","contextId":"c1"}',
        True,
    ),
    "status-working": (
        status(TaskState.WORKING),
        b'{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}',
        b'{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}',
        False,
    ),
    "status-completed": (
        status(TaskState.COMPLETED),
        b'{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}',
        b'{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}',
        True,
    ),
    "status-input-required": (
        status(
            TaskState.INPUT_REQUIRED,
            message=Message(message_id="m2", role=Role.AGENT, parts=[Part(text="Which city?")]),
        ),
        b'{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"Which city?"}]}}}}',
        b'{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"input-required","message":{"kind":"message","role":"agent","parts":[{"kind":"text","text":"Which city?"}],"messageId":"m2"}},"final":true}',
        True,
    ),
    "status-auth-required": (
        status(TaskState.AUTH_REQUIRED),
        b'{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_AUTH_REQUIRED"}}}',
        b'{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"auth-required"},"final":false}',
        False,
    ),
    "artifact-first-chunk": (
        StreamResponse(
            artifact_update=TaskArtifactUpdateEvent(
                task_id="t1",
                context_id="c1",
                artifact=Artifact(artifact_id="a1", name="out", parts=[Part(text="chu")]),
            )
        ),
        b'{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","name":"out","parts":[{"text":"chu"}]}}}',
        b'{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","name":"out","parts":[{"kind":"text","text":"chu"}]}}',
        False,
    ),
    "artifact-last-chunk": (
        StreamResponse(
            artifact_update=TaskArtifactUpdateEvent(
                task_id="t1",
                context_id="c1",
                artifact=Artifact(artifact_id="a1", parts=[Part(text="nk")]),
                append=True,
                last_chunk=True,
            )
        ),
        b'{"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":"nk"}]},"append":true,"lastChunk":true}}',
        b'{"kind":"artifact-update","taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"kind":"text","text":"nk"}]},"append":true,"lastChunk":true}',
        False,
    ),
}


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_jsonrpc_v1(name: str) -> None:
    event, v1, _, ends = GOLDEN[name]
    stream = EventStream("jsonrpc", "1.0", "req-1")
    expected = b'id: 7\ndata: {"jsonrpc":"2.0","id":"req-1","result":' + v1 + b"}\n\n"
    assert stream.encode(event, 7) == expected
    assert stream.finished is ends


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_jsonrpc_v0_3(name: str) -> None:
    event, _, v03_json, ends = GOLDEN[name]
    stream = EventStream("jsonrpc", "0.3", 42)
    expected = b'data: {"jsonrpc":"2.0","id":42,"result":' + v03_json + b"}\n\n"
    assert stream.encode(event) == expected
    assert stream.finished is ends


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_rest_v1(name: str) -> None:
    event, v1, _, ends = GOLDEN[name]
    stream = EventStream("rest", "1.0")
    assert stream.encode(event, "7-0") == b"id: 7-0\ndata: " + v1 + b"\n\n"
    assert stream.finished is ends


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_rest_v0_3_uses_the_injected_encoder_bare(name: str) -> None:
    event, v1, _, ends = GOLDEN[name]
    stream = EventStream("rest", "0.3", event_encoder=rest_v03_stub)
    assert stream.encode(event, 1) == b'id: 1\ndata: {"v03proto":' + v1 + b"}\n\n"
    assert stream.finished is ends


def test_jsonrpc_null_id_and_injected_encoder_keep_the_envelope() -> None:
    event = GOLDEN["status-working"][0]
    assert EventStream("jsonrpc", "1.0").encode(event) == (
        b'data: {"jsonrpc":"2.0","id":null,"result":' + GOLDEN["status-working"][1] + b"}\n\n"
    )
    custom = EventStream("jsonrpc", "1.0", 5, event_encoder=lambda _: b'{"x":1}')
    assert custom.encode(event) == b'data: {"jsonrpc":"2.0","id":5,"result":{"x":1}}\n\n'


# ---------------------------------------------------------------------------------------
# Error frames

ERROR_INFO = b'{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"%s","domain":"a2a-protocol.org"%s}'

ERROR_CASES: list[tuple[str, dict[str, Any], A2AError, bytes]] = [
    (
        "jsonrpc-1.0",
        {"binding": "jsonrpc", "dialect": "1.0", "request_id": "req-1"},
        TaskNotFoundError(metadata={"taskId": "t9"}),
        b'{"jsonrpc":"2.0","id":"req-1","error":{"code":-32001,"message":"Task not found","data":['
        + ERROR_INFO % (b"TASK_NOT_FOUND", b',"metadata":{"taskId":"t9"}')
        + b"]}}",
    ),
    (
        "jsonrpc-0.3",
        {"binding": "jsonrpc", "dialect": "0.3", "request_id": 3},
        TaskNotFoundError(data={"taskId": "t9"}),
        b'{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"Task not found","data":{"taskId":"t9"}}}',
    ),
    (
        "rest-1.0",
        {"binding": "rest", "dialect": "1.0"},
        TaskNotCancelableError(),
        b'{"error":{"code":409,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled","details":['
        + ERROR_INFO % (b"TASK_NOT_CANCELABLE", b"")
        + b"]}}",
    ),
    (
        "rest-1.0-v1.0.1-table",
        {"binding": "rest", "dialect": "1.0", "status_table": "v1.0.1"},
        TaskNotCancelableError(),
        b'{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled","details":['
        + ERROR_INFO % (b"TASK_NOT_CANCELABLE", b"")
        + b"]}}",
    ),
    (
        "rest-0.3",
        {"binding": "rest", "dialect": "0.3"},
        InternalError(),
        # v0.3: the JSON-RPC code and message at the top level too, as v0.3 clients read.
        b'{"error":{"code":500,"status":"INTERNAL","message":"Internal error","details":['
        + ERROR_INFO % (b"INTERNAL", b"")
        + b']},"code":-32603,"message":"Internal error"}',
    ),
]


@pytest.mark.parametrize(
    ("kwargs", "err", "data"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES]
)
def test_error_frame_is_final_and_has_no_id(
    kwargs: dict[str, Any], err: A2AError, data: bytes
) -> None:
    stream = EventStream(**kwargs)
    stream.encode(GOLDEN["status-working"][0], 1)  # mid-stream
    assert stream.encode_error(err) == b"data: " + data + b"\n\n"
    assert stream.finished
    with pytest.raises(LocalProtocolError):
        stream.encode(GOLDEN["status-working"][0])


@pytest.mark.parametrize("cls", ERROR_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize(
    ("binding", "dialect"), [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0")]
)
def test_every_error_class_gives_one_parseable_frame(
    cls: type[A2AError], binding: Any, dialect: Any
) -> None:
    request_id = "r" if binding == "jsonrpc" else None
    frames = parse_frames(EventStream(binding, dialect, request_id).encode_error(cls()))
    assert len(frames) == 1
    assert frames[0].id is None
    assert frames[0].data is not None
    body = msgspec.json.decode(frames[0].data)
    if binding == "jsonrpc":
        assert body["id"] == "r"
        assert body["error"]["code"] == cls.code
    else:
        assert body["error"]["code"] == cls.http_status
        assert body["error"]["details"][0]["reason"] == cls.reason


# ---------------------------------------------------------------------------------------
# When a stream ends


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
def test_ends_stream_on_closing_states_only(state: TaskState) -> None:
    assert ends_stream(status(state)) is (state in CLOSING)
    assert ends_stream(task(state)) is (state in CLOSING)


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
def test_v0_3_final_flag_matches_the_close(state: TaskState) -> None:
    stream = EventStream("jsonrpc", "0.3", 1)
    data = parse_frames(stream.encode(status(state)))[0].data
    assert data is not None
    assert msgspec.json.decode(data)["result"]["final"] is (state in CLOSING)
    assert stream.finished is (state in CLOSING)


TERMINAL = CLOSING - {TaskState.INPUT_REQUIRED}


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
def test_a_subscription_ends_on_terminal_states_only(state: TaskState) -> None:
    # SubscribeToTask follows the task across interruptions (spec §3.1.6, spec-decisions A6).
    assert ends_stream(status(state), SUBSCRIPTION_CLOSING_STATES) is (state in TERMINAL)
    assert ends_stream(task(state), SUBSCRIPTION_CLOSING_STATES) is (state in TERMINAL)


@pytest.mark.parametrize("state", list(TaskState), ids=lambda s: s.name)
@pytest.mark.parametrize(
    ("closing", "ends"), [(CLOSING_STATES, CLOSING), (SUBSCRIPTION_CLOSING_STATES, TERMINAL)]
)
def test_v0_3_final_flag_follows_the_streams_own_rule(
    state: TaskState, closing: frozenset[TaskState], ends: set[TaskState]
) -> None:
    # JSON-RPC v0.3 (`final` in the kind object) and REST v0.3 (`final` in the proto's
    # status update): true exactly on the event that closes this stream.
    rpc = EventStream("jsonrpc", "0.3", 1, closing_states=closing)
    data = parse_frames(rpc.encode(status(state)))[0].data
    assert data is not None
    assert msgspec.json.decode(data)["result"]["final"] is (state in ends)
    assert rpc.finished is (state in ends)
    rest = EventStream("rest", "0.3", closing_states=closing)
    data = parse_frames(rest.encode(status(state), 3))[0].data
    assert data is not None
    assert msgspec.json.decode(data)["statusUpdate"].get("final", False) is (state in ends)
    assert rest.finished is (state in ends)


def test_a_subscription_stays_open_across_input_required() -> None:
    stream = EventStream("rest", "1.0", closing_states=SUBSCRIPTION_CLOSING_STATES)
    stream.encode(task(TaskState.INPUT_REQUIRED), 1)
    stream.encode(status(TaskState.AUTH_REQUIRED), 2)
    stream.encode(status(TaskState.WORKING), 3)
    assert not stream.finished
    stream.encode(status(TaskState.COMPLETED), 4)
    assert stream.finished


def test_message_always_ends_and_artifact_update_never() -> None:
    assert ends_stream(GOLDEN["message"][0])
    assert not ends_stream(GOLDEN["artifact-last-chunk"][0])


@pytest.mark.parametrize(
    "closing", ["message", "status-completed", "status-input-required", "task-completed"]
)
def test_everything_is_refused_after_the_last_event(closing: str) -> None:
    stream = EventStream("rest", "1.0")
    stream.encode(GOLDEN["task-submitted"][0], 1)
    assert stream.keep_alive() == b": keep-alive\n\n"
    stream.encode(GOLDEN[closing][0], 2)
    assert stream.finished
    with pytest.raises(LocalProtocolError, match="finished"):
        stream.encode(GOLDEN["status-working"][0], 3)
    with pytest.raises(LocalProtocolError, match="finished"):
        stream.encode_error(InternalError())
    with pytest.raises(LocalProtocolError, match="finished"):
        stream.keep_alive()
    assert stream.finished


@pytest.mark.parametrize(
    "open_event", ["status-working", "status-auth-required", "artifact-last-chunk"]
)
def test_stream_stays_open_after_non_closing_events(open_event: str) -> None:
    stream = EventStream("jsonrpc", "1.0", 1)
    stream.encode(GOLDEN[open_event][0])
    assert not stream.finished
    assert stream.keep_alive() == b": keep-alive\n\n"
    assert stream.encode(GOLDEN["status-completed"][0]).startswith(b"data: ")
    assert stream.finished


def test_a_refused_frame_does_not_finish_the_stream() -> None:
    stream = EventStream("rest", "1.0")
    with pytest.raises(LocalProtocolError):
        stream.encode(GOLDEN["status-completed"][0], "bad\nid")
    assert not stream.finished
    assert stream.encode(GOLDEN["status-completed"][0], 1).startswith(b"id: 1\n")


def test_an_injected_encoder_that_breaks_lines_is_refused() -> None:
    stream = EventStream("rest", "0.3", event_encoder=lambda _: b'{\n"pretty": true\n}')
    with pytest.raises(LocalProtocolError, match="line break"):
        stream.encode(GOLDEN["message"][0])
    assert not stream.finished


def test_constructor_refuses_what_it_cannot_stream() -> None:
    with pytest.raises(ValueError, match="request id"):
        EventStream("rest", "1.0", "req-1")
    with pytest.raises(ValueError, match="request id"):
        EventStream("grpc", "1.0", "req-1")
    with pytest.raises(ValueError, match="no SSE encoding"):
        EventStream("grpc", "0.3")  # v0.3's gRPC service is not served
    with pytest.raises(ValueError, match="no SSE encoding"):
        EventStream("jsonrpc", "0.2")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Headers and frames


def test_stream_headers() -> None:
    assert STREAM_HEADERS == (
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        ("x-accel-buffering", "no"),
    )
    assert stream_headers([("A2A-Version", "1.0")]) == (*STREAM_HEADERS, ("a2a-version", "1.0"))


@pytest.mark.parametrize(
    ("event_id", "expected"),
    [
        (None, b"data: {}\n\n"),
        (0, b"id: 0\ndata: {}\n\n"),
        (12345, b"id: 12345\ndata: {}\n\n"),
        ("1700000000000-3", b"id: 1700000000000-3\ndata: {}\n\n"),
        ("", b"id: \ndata: {}\n\n"),
        ("é", b"id: \xc3\xa9\ndata: {}\n\n"),
    ],
)
def test_data_frame_id_lines(event_id: str | int | None, expected: bytes) -> None:
    assert data_frame(b"{}", event_id) == expected


@pytest.mark.parametrize("data", [b'{"a":\n1}', b'{"a":\r1}', b'{"a":\r\n1}', b"\n"])
def test_data_frame_refuses_line_breaks_in_data(data: bytes) -> None:
    with pytest.raises(LocalProtocolError, match="line break"):
        data_frame(data)


@pytest.mark.parametrize("event_id", ["a\nb", "a\rb", "a\x00b"])
def test_data_frame_refuses_bad_ids(event_id: str) -> None:
    with pytest.raises(LocalProtocolError):
        data_frame(b"{}", event_id)


def test_comment_frames() -> None:
    assert comment_frame() == b": keep-alive\n\n"
    assert comment_frame("ping") == b": ping\n\n"
    assert comment_frame("") == b":\n\n"
    with pytest.raises(LocalProtocolError):
        comment_frame("a\nb")
    assert parse_frames(comment_frame()) == [Frame(comment="keep-alive")]


# ---------------------------------------------------------------------------------------
# The parser

PARSER_CASES: list[tuple[bytes, list[Frame]]] = [
    (b"data: a\n\n", [Frame(data="a")]),
    (b"data:a\n\n", [Frame(data="a")]),
    (b"data:  a\n\n", [Frame(data=" a")]),
    (b"data: a\ndata: b\n\n", [Frame(data="a\nb")]),
    (b"data: a\r\ndata: b\r\n\r\n", [Frame(data="a\nb")]),
    (b"data: a\rdata: b\r\r", [Frame(data="a\nb")]),
    (b"data\n\n", [Frame(data="")]),
    (b"data:\ndata:\n\n", [Frame(data="\n")]),
    (b"id: 5\ndata: x\n\n", [Frame(data="x", id="5")]),
    (b"id: 5\nid: 6\ndata: x\n\n", [Frame(data="x", id="6")]),
    (b"id: a\x00b\ndata: x\n\n", [Frame(data="x")]),
    (b"id: 9\n\n", [Frame(id="9")]),
    (b"event: update\ndata: x\n\n", [Frame(data="x", event="update")]),
    (b"retry: 1500\n\n", [Frame(retry=1500)]),
    (b"retry: 15s\ndata: x\n\n", [Frame(data="x")]),
    (b"foo: bar\ndata: x\n\n", [Frame(data="x")]),
    (b": keep-alive\n\n", [Frame(comment="keep-alive")]),
    (b":a\n: b\ndata: x\n\n", [Frame(data="x", comment="a\nb")]),
    (b"\n\n\n", []),
    (b"data: x\n", []),
    (b"data: x", []),
    (b"data: a\n\ndata: b\n", [Frame(data="a")]),
    (b"\xef\xbb\xbfdata: x\n\n", [Frame(data="x")]),
    (b"data: \xff\n\n", [Frame(data="\ufffd")]),
    (b"data: x\r", []),
    (b"data: x\r\r", [Frame(data="x")]),
]


@pytest.mark.parametrize(
    ("stream", "expected"), PARSER_CASES, ids=[repr(c[0]) for c in PARSER_CASES]
)
def test_parser(stream: bytes, expected: list[Frame]) -> None:
    assert parse_frames(stream) == expected


def test_parser_waits_for_the_lf_of_a_split_crlf() -> None:
    parser = SseParser()
    assert parser.feed(b"data: a\r") == []
    # Had the CR been taken as a line end, this LF would be a blank line and dispatch "a".
    assert parser.feed(b"\ndata: b\r") == []
    assert parser.feed(b"\n\r\n") == [Frame(data="a\nb")]
    assert parser.close() == []


def test_parser_joins_a_multibyte_character_split_across_chunks() -> None:
    parser = SseParser()
    encoded = "data: é\n\n".encode()
    split = encoded.index(b"\xa9")
    assert parser.feed(encoded[:split]) == []
    assert parser.feed(encoded[split:]) == [Frame(data="é")]


def test_parser_drops_only_one_leading_bom() -> None:
    # The second BOM is part of the line: "\ufeffdata" is an unknown field, so no event.
    assert parse_frames(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == [Frame()]


@given(
    frames=st.lists(
        st.one_of(
            st.builds(
                data_frame,
                st.text().map(lambda s: msgspec.json.encode(s)),
                st.none() | st.integers(0, 10**6),
            ),
            st.builds(comment_frame, st.text().filter(lambda s: "\n" not in s and "\r" not in s)),
        ),
        max_size=5,
    ),
    line_end=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(0, 10_000), max_size=6),
)
def test_parser_is_indifferent_to_chunking_and_line_ends(
    frames: list[bytes], line_end: bytes, cuts: list[int]
) -> None:
    whole = b"".join(frames).replace(b"\n", line_end)
    expected = parse_frames(b"".join(frames))
    parser = SseParser()
    got: list[Frame] = []
    bounds = sorted({min(c, len(whole)) for c in cuts} | {0, len(whole)})
    for start, end in itertools.pairwise(bounds):
        got += parser.feed(whole[start:end])
    got += parser.close()
    assert got == expected
    assert len(expected) == len(frames)


# ---------------------------------------------------------------------------------------
# Properties over any event


class _Envelope(msgspec.Struct):
    jsonrpc: str
    id: str | int | None
    result: msgspec.Raw


_V03_RESULT = msgspec.json.Decoder(v03.StreamResult)
_ENVELOPE = msgspec.json.Decoder(_Envelope)

event_ids = (
    st.none() | st.integers(0, 2**63) | st.text().filter(lambda s: not {"\n", "\r", "\0"} & set(s))
)


@given(
    event=strategy_for(StreamResponse),
    event_id=event_ids,
    request_id=st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(),
)
@pytest.mark.parametrize(
    ("binding", "dialect"), [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0")]
)
def test_any_event_parses_back_to_itself(
    binding: Any,
    dialect: Any,
    event: StreamResponse,
    event_id: str | int | None,
    request_id: str | int | None,
) -> None:
    rid = request_id if binding == "jsonrpc" else None
    frames = parse_frames(EventStream(binding, dialect, rid).encode(event, event_id))
    assert len(frames) == 1
    (frame,) = frames
    assert frame.id == (None if event_id is None else str(event_id))
    assert frame.data is not None
    payload = frame.data.encode()
    if binding == "jsonrpc":
        envelope = _ENVELOPE.decode(payload)
        assert (envelope.jsonrpc, envelope.id) == ("2.0", rid)
        payload = bytes(envelope.result)
    if dialect == "1.0":
        assert codec.decode(payload, StreamResponse) == event
    else:
        assert _V03_RESULT.decode(payload) == stream_event_from_v1(event)


@given(events=st.lists(strategy_for(StreamResponse), min_size=1, max_size=6))
def test_frames_until_the_first_closing_event_then_refusal(events: list[StreamResponse]) -> None:
    def closes(ev: StreamResponse) -> bool:
        if ev.message is not None:
            return True
        holder = ev.task or ev.status_update
        return holder is not None and holder.status.state in CLOSING

    stream = EventStream("jsonrpc", "1.0", 1)
    for seq, event in enumerate(events):
        frame = stream.encode(event, seq)
        assert frame.startswith(f"id: {seq}\ndata: ".encode())
        assert stream.finished is closes(event)
        if stream.finished:
            break
    for event in events[seq + 1 :]:
        with pytest.raises(LocalProtocolError):
            stream.encode(event)
    assert stream.finished is any(closes(e) for e in events)


# ---------------------------------------------------------------------------------------
# Shared payloads: what one stream encodes, another writes in its own frame


ALL_ROWS = [("jsonrpc", "1.0"), ("jsonrpc", "0.3"), ("rest", "1.0"), ("rest", "0.3")]


@given(
    event=strategy_for(StreamResponse),
    event_id=st.none() | st.integers(0, 2**63 - 1),
    request_id=st.none() | st.integers(-(2**63), 2**63 - 1) | st.text(),
    subscription=st.booleans(),
)
@pytest.mark.parametrize(("binding", "dialect"), ALL_ROWS)
def test_a_frame_around_a_shared_payload_is_the_frame_encode_gives(
    binding: Any,
    dialect: Any,
    event: StreamResponse,
    event_id: int | None,
    request_id: str | int | None,
    subscription: bool,
) -> None:
    rid = request_id if binding == "jsonrpc" else None
    closing = SUBSCRIPTION_CLOSING_STATES if subscription else CLOSING_STATES
    own = EventStream(binding, dialect, rid, closing_states=closing)
    shared = EventStream(binding, dialect, rid, closing_states=closing)
    # The payload as another stream of the same share key encoded it.
    payload = EventStream(binding, dialect, None if rid is None else 0, closing_states=closing)
    head, tail = shared.encode_around(event, event_id, payload.encode_payload(event))
    assert head + payload.encode_payload(event) + tail == own.encode(event, event_id)
    assert shared.finished is own.finished
    assert not payload.finished  # encoding a payload changes no stream


def test_which_streams_share_a_payload() -> None:
    working, done = status(TaskState.WORKING), status(TaskState.COMPLETED)

    def key(binding: Any, dialect: Any, event: StreamResponse, subscription: bool = False) -> Any:
        closing = SUBSCRIPTION_CLOSING_STATES if subscription else CLOSING_STATES
        rid = 7 if binding == "jsonrpc" else None
        return EventStream(binding, dialect, rid, closing_states=closing).share_key(event)

    # v1.0 has no `final`: both bindings, send streams and subscriptions alike.
    assert key("jsonrpc", "1.0", working) == key("rest", "1.0", working, True)
    # v0.3 carries `final`: streams that disagree on it do not share; bindings never do.
    input_required = status(TaskState.INPUT_REQUIRED)
    assert key("jsonrpc", "0.3", input_required) != key("jsonrpc", "0.3", input_required, True)
    assert key("jsonrpc", "0.3", done) == key("jsonrpc", "0.3", done, True)
    assert key("jsonrpc", "0.3", working) != key("rest", "0.3", working)
    assert key("jsonrpc", "0.3", working) != key("jsonrpc", "1.0", working)
    custom = EventStream("rest", "1.0", event_encoder=codec.encode)
    assert custom.share_key(working) is None
    with pytest.raises(LocalProtocolError):
        custom.encode_around(working, 1, codec.encode(working))


def test_a_frame_around_a_payload_finishes_the_stream_like_encode() -> None:
    stream = EventStream("jsonrpc", "1.0", 3)
    done = status(TaskState.COMPLETED)
    head, tail = stream.encode_around(done, 5, stream.encode_payload(done))
    assert (head, tail) == (b'id: 5\ndata: {"jsonrpc":"2.0","id":3,"result":', b"}\n\n")
    assert stream.finished
    with pytest.raises(LocalProtocolError):
        stream.encode_around(done, 6, b"{}")
