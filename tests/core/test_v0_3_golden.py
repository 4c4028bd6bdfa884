"""Golden tables for the v0.3 JSON-RPC dialect: bytes -> v0.3 structs -> bytes.

Three tables, all checked the same way (decode, encode, compare the JSON, validate against
the definition of the v0.3 JSON Schema of the same name):

- every JSON example of the v0.3 specification text (tests/core/data), with the ones that
  break the spec's own schema refused with a message that names the problem;
- our own cases for every shape the examples do not show (push configs, params of every
  method, every security scheme, every part and state), from ``types.ts`` examples where it
  has them;
- what the decoder refuses, and what it accepts leniently and writes canonically.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from a2a_core import codec
from a2a_core.compat.v0_3 import types as t
from helpers.schema_v0_3 import DEFINITIONS, schema_errors

EXAMPLES = json.loads((Path(__file__).parent / "data" / "v0_3_spec_examples.json").read_text())

# Examples in the spec text that break its own schema: the decoder must refuse each with a
# message that points at the problem.
INVALID_IN_SPEC = {
    # 9.2: the message-only reply has no `role` (REQUIRED).
    "line 1314 ": "Object missing required field `role`",
    # 9.3: the file part carries `data` instead of `bytes` (FileWithBytes needs `bytes`).
    "line 1339 ": "file needs exactly one of: bytes, uri - at `$.message.parts[1].file`",
    "line 1371 ": "file needs exactly one of: bytes, uri - at `$.history[0].parts[1].file`",
    # 9.4: `messageId` sits in `params` instead of in the message.
    "line 1487 ": "Object missing required field `messageId` - at `$.message`",
    # 9.4: the agent's status message has no `messageId`.
    "line 1575 ": "Object missing required field `messageId` - at `$.status.message`",
    # 9.5: the result omits `kind` ("... other fields ..."), so Task|Message is undecidable.
    "line 1697 ": "Object missing required field `kind`",
    # 9.6: the base64 is cut short with "...".
    "line 1741 ": "Invalid base64 encoded string - at `$.message.parts[1].file.bytes`",
}


def _known_invalid(example: dict[str, Any]) -> str | None:
    return next((msg for key, msg in INVALID_IN_SPEC.items() if key in example["source"]), None)


def _with_message_kind(node: Any) -> Any:
    """The spec's examples leave out ``kind`` on nested messages; we always write it."""
    if isinstance(node, list):
        return [_with_message_kind(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _with_message_kind(value) for key, value in node.items()}
    if {"role", "parts", "messageId"} <= out.keys() and "kind" not in out:
        out["kind"] = "message"
    return out


def _struct_types(value: Any) -> set[type]:
    """Every struct type that occurs in a decoded value."""
    if isinstance(value, msgspec.Struct):
        found = {type(value)}
        for name in value.__struct_fields__:
            found |= _struct_types(getattr(value, name))
        return found
    if isinstance(value, list):
        return set().union(*(_struct_types(v) for v in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(_struct_types(v) for v in value.values())) if value else set()
    return set()


def _assert_schema_valid(value: Any, document: Any) -> None:
    if isinstance(value, list):
        for item, item_doc in zip(value, document, strict=True):
            _assert_schema_valid(item, item_doc)
        return
    errors = schema_errors(type(value).__name__, document)
    assert not errors, errors


def _round_trip(type_: Any, document: Any) -> Any:
    """Decode, encode, and check that the encoding is canonical and schema-valid."""
    value = codec.decode(json.dumps(document).encode(), type_)
    out = codec.encode(value)
    assert codec.decode(out, type_) == value
    assert codec.encode(codec.decode(out, type_)) == out  # canonical: one more turn, same bytes
    _assert_schema_valid(value, json.loads(out))
    return value, json.loads(out)


# --- the specification's examples ----------------------------------------------------------


def test_every_example_is_classified() -> None:
    assert len(EXAMPLES) == 22
    assert {e["type"] for e in EXAMPLES} == {
        "AgentCard",
        "MessageSendParams",
        "SendMessageResult",
        "StreamResult",
        "Task",
    }
    # the only changes made to parse them: comments and one trailing comma
    edited = {e["source"].split()[3]: e["edits"] for e in EXAMPLES if e["edits"]}
    assert edited == {
        "1425": ["trailing comma removed"],
        **{line: ["// comments removed"] for line in ("1663", "1697", "1718", "1741", "1771")},
    }


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e["source"][22:38])
def test_spec_example_round_trips(example: dict[str, Any]) -> None:
    type_ = getattr(t, example["type"])
    expected_error = _known_invalid(example)
    if expected_error is not None:
        with pytest.raises(codec.DecodeError) as info:
            codec.decode(json.dumps(example["json"]).encode(), type_)
        assert info.value.message == expected_error
        assert not info.value.malformed_json
        return
    _, out = _round_trip(type_, example["json"])
    assert out == _with_message_kind(example["json"])


def test_spec_stream_shows_every_event_kind() -> None:
    # §9.3: the stream of one task, decoded as the union a v0.3 stream result is.
    events: list[Any] = [
        codec.decode(json.dumps(e["json"]).encode(), t.StreamResult)
        for e in EXAMPLES
        if e["type"] == "StreamResult" and _known_invalid(e) is None
    ]
    assert [type(e).__name__ for e in events] == [
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    chunks = [e for e in events if isinstance(e, t.TaskArtifactUpdateEvent)]
    assert [(e.append, e.last_chunk) for e in chunks] == [
        (False, False),
        (True, False),
        (True, True),
    ]
    final = events[3]
    assert isinstance(final, t.TaskStatusUpdateEvent)
    assert final.final is True
    assert final.status.state is t.TaskState.COMPLETED
    # the spec's timestamps have no zone: accepted and kept as written
    assert final.status.timestamp is not None
    assert final.status.timestamp.tzinfo is None


# --- our own cases: every shape the examples do not show -----------------------------------

TEXT = {"kind": "text", "text": "hello", "metadata": {"x": 1}}
FILE_BYTES = {
    "kind": "file",
    "file": {"bytes": "aGVsbG8=", "name": "hello.txt", "mimeType": "text/plain"},
    "metadata": {},
}
FILE_URI = {"kind": "file", "file": {"uri": "https://example.com/a.png", "mimeType": "image/png"}}
DATA = {"kind": "data", "data": {"a": [1, 2.5, None, True, "s"], "b": {}}}
MESSAGE = {
    "role": "agent",
    "parts": [TEXT, FILE_BYTES, FILE_URI, DATA],
    "metadata": {"https://example.com/ext": {"k": "v"}},
    "extensions": ["https://example.com/ext"],
    "referenceTaskIds": ["t0"],
    "messageId": "m1",
    "taskId": "t1",
    "contextId": "c1",
    "kind": "message",
}
ARTIFACT = {
    "artifactId": "a1",
    "name": "report",
    "description": "The report.",
    "parts": [TEXT],
    "metadata": {"pages": 3},
    "extensions": ["https://example.com/ext"],
}
STATUS = {"state": "input-required", "message": MESSAGE, "timestamp": "2023-10-27T10:00:00Z"}
TASK = {
    "id": "t1",
    "contextId": "c1",
    "status": STATUS,
    "history": [MESSAGE],
    "artifacts": [ARTIFACT],
    "metadata": {"owner": "me"},
    "kind": "task",
}
PUSH_CONFIG = {
    "id": "cfg-1",
    "url": "https://client.example.com/webhook/a2a-notifications",
    "token": "secure-client-token-for-task-aaa",
    "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c2VjcmV0"},
}
OAUTH = {
    "type": "oauth2",
    "description": "OAuth 2.0 with every v0.3 flow",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "https://auth.example.com/authorize",
            "tokenUrl": "https://auth.example.com/token",
            "refreshUrl": "https://auth.example.com/refresh",
            "scopes": {"read": "Read access"},
        },
        "clientCredentials": {
            "tokenUrl": "https://auth.example.com/token",
            "scopes": {"read": "Read access", "write": "Write access"},
        },
        "implicit": {"authorizationUrl": "https://auth.example.com/authorize", "scopes": {}},
        "password": {"tokenUrl": "https://auth.example.com/token", "scopes": {}},
    },
    "oauth2MetadataUrl": "https://auth.example.com/.well-known/oauth-authorization-server",
}
CARD = {
    "protocolVersion": "0.3.0",
    "name": "Recipe Agent",  # types.ts examples
    "description": "Agent that helps users with recipes and cooking.",
    "url": "https://api.example.com/a2a/v1",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://api.example.com/a2a/v1", "transport": "JSONRPC"},
        {"url": "https://grpc.example.com/a2a", "transport": "GRPC"},
        {"url": "https://rest.example.com/v1", "transport": "HTTP+JSON"},
    ],
    "iconUrl": "https://api.example.com/icon.png",
    "provider": {"organization": "Google", "url": "https://ai.google.dev"},
    "version": "1.0.0",
    "documentationUrl": "https://api.example.com/docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "stateTransitionHistory": True,
        "extensions": [
            {
                "uri": "https://developers.google.com/identity/protocols/oauth2",
                "description": "Google OAuth 2.0 authentication",
                "required": False,
                "params": {"hint": "x"},
            }
        ],
    },
    "securitySchemes": {
        "oauth": OAUTH,
        "api-key": {"type": "apiKey", "description": "A key", "in": "header", "name": "X-Key"},
        "mtls": {"type": "mutualTLS"},
        "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
        "google": {
            "type": "openIdConnect",
            "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration",
        },
    },
    "security": [{"oauth": ["read"]}, {"api-key": [], "mtls": []}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["text/plain", "application/json"],
    "skills": [
        {
            "id": "recipes",
            "name": "Recipes",
            "description": "Finds recipes.",
            "tags": ["cooking", "customer support", "billing"],
            "examples": ["I need a recipe for bread"],
            "inputModes": ["text/plain"],
            "outputModes": ["application/json"],
            "security": [{"google": ["oidc"]}],
        }
    ],
    "supportsAuthenticatedExtendedCard": False,
    "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2ln", "header": {"k": 1}}],
}
MINIMAL_CARD = {
    "protocolVersion": "0.3.0",
    "name": "a",
    "description": "b",
    "url": "https://a.example/rpc",
    "version": "1",
    "capabilities": {},
    "defaultInputModes": [],
    "defaultOutputModes": [],
    "skills": [],
}

OURS: list[tuple[str, Any, Any]] = [
    ("text part", t.Part, TEXT),
    ("file part, bytes", t.Part, FILE_BYTES),
    ("file part, uri", t.Part, FILE_URI),
    ("data part", t.Part, DATA),
    ("message, every member", t.Message, MESSAGE),
    ("artifact, every member", t.Artifact, ARTIFACT),
    ("task, every member", t.Task, TASK),
    ("task as send result", t.SendMessageResult, TASK),
    ("message as send result", t.SendMessageResult, MESSAGE),
    ("message as stream result", t.StreamResult, MESSAGE),
    (
        "status update, not final",
        t.StreamResult,
        {
            "taskId": "t1",
            "contextId": "c1",
            "status": {"state": "working"},
            "final": False,
            "metadata": {"step": 2},
            "kind": "status-update",
        },
    ),
    (
        "artifact update, a middle chunk",
        t.StreamResult,
        {
            "taskId": "t1",
            "contextId": "c1",
            "artifact": ARTIFACT,
            "append": True,
            "lastChunk": False,
            "metadata": {},
            "kind": "artifact-update",
        },
    ),
    (
        "message/send params, full configuration",
        t.MessageSendParams,
        {
            "message": MESSAGE,
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "historyLength": 0,
                "pushNotificationConfig": PUSH_CONFIG,
                "blocking": False,
            },
            "metadata": {"trace": "abc"},
        },
    ),
    # §9.2 prose: "periodically call tasks/get with params: {"id": "363422be-..."}"
    ("tasks/get params, §9.2", t.TaskQueryParams, {"id": "363422be-b0f9-4692-a24d-278670e7c7f1"}),
    (
        "tasks/get params, every member",
        t.TaskQueryParams,
        {"id": "t1", "historyLength": 5, "metadata": {"a": 1}},
    ),
    ("tasks/cancel params", t.TaskIdParams, {"id": "t1", "metadata": {"reason": "user"}}),
    ("push get params, TaskIdParams form", t.GetTaskPushNotificationConfigParams, {"id": "t1"}),
    (
        "push get params, with config id",
        t.GetTaskPushNotificationConfigParams,
        {"id": "t1", "pushNotificationConfigId": "cfg-1", "metadata": {}},
    ),
    ("push list params", t.ListTaskPushNotificationConfigParams, {"id": "t1"}),
    (
        "push delete params",
        t.DeleteTaskPushNotificationConfigParams,
        {"id": "t1", "pushNotificationConfigId": "cfg-1"},
    ),
    (
        "push set params and result",
        t.TaskPushNotificationConfig,
        {"taskId": "t1", "pushNotificationConfig": PUSH_CONFIG},
    ),
    (
        "push list result (a bare array)",
        list[t.TaskPushNotificationConfig],
        [
            {"taskId": "t1", "pushNotificationConfig": PUSH_CONFIG},
            {"taskId": "t1", "pushNotificationConfig": {"url": "https://b.example/hook"}},
        ],
    ),
    ("agent card, every member and scheme", t.AgentCard, CARD),
    ("agent card, required members only", t.AgentCard, MINIMAL_CARD),
] + [(f"status {state.value}", t.TaskStatus, {"state": state.value}) for state in t.TaskState]


@pytest.mark.parametrize(("type_", "document"), [c[1:] for c in OURS], ids=[c[0] for c in OURS])
def test_our_case_round_trips(type_: Any, document: Any) -> None:
    _, out = _round_trip(type_, document)
    assert out == document


def test_cases_cover_every_struct() -> None:
    seen: set[type] = set()
    for _, type_, document in OURS:
        seen |= _struct_types(codec.decode(json.dumps(document).encode(), type_))
    assert seen == set(t.ALL_STRUCTS)


def test_structs_cover_every_object_of_the_schema() -> None:
    # Everything but the JSON-RPC envelopes and errors (jsonrpc.py owns those), the bases the
    # schema inherits from, the two unions, the enums and the untagged file choice, which is
    # FileContent here.
    skipped = {"PartBase", "FileBase", "SecuritySchemeBase", "Part", "SecurityScheme"}
    skipped |= {"TaskState", "TransportProtocol", "FileWithBytes", "FileWithUri"}
    objects = {
        name
        for name in DEFINITIONS
        if not name.startswith("JSONRPC")
        and not name.endswith(("Request", "Response", "Error"))
        and name not in skipped
    }
    assert objects == {cls.__name__ for cls in t.ALL_STRUCTS} - {"FileContent"}
    assert len(t.ALL_STRUCTS) == 37
    assert [s.value for s in t.TaskState] == DEFINITIONS["TaskState"]["enum"]


# --- what the decoder refuses, and what it accepts leniently -------------------------------

TASK_HEAD = {"id": "t1", "contextId": "c1", "status": {"state": "working"}}
MSG_HEAD = {"role": "user", "parts": [{"kind": "text", "text": "hi"}], "messageId": "m1"}

REFUSED: list[tuple[str, Any, Any, str]] = [
    (
        "a kind of the wrong union",
        t.Part,
        {"kind": "task", **TASK_HEAD},
        "Invalid value 'task' - at `$.kind`",
    ),
    (
        "a union member without kind",
        t.StreamResult,
        TASK_HEAD,
        "Object missing required field `kind`",
    ),
    (
        "a standalone struct with another kind",
        t.Message,
        {**MSG_HEAD, "kind": "task"},
        "Invalid value 'task' - at `$.kind`",
    ),
    (
        "a file with bytes and uri",
        t.Part,
        {"kind": "file", "file": {"bytes": "aGk=", "uri": "https://a.example/f"}},
        "file needs exactly one of: bytes, uri - at `$.file`",
    ),
    (
        "a role v0.3 does not have",
        t.Message,
        {**MSG_HEAD, "role": "system"},
        "Invalid enum value 'system' - at `$.role`",
    ),
    (
        "a v1.0 state name",
        t.TaskStatus,
        {"state": "TASK_STATE_WORKING"},
        "Invalid enum value 'TASK_STATE_WORKING' - at `$.state`",
    ),
    (
        "no parts",
        t.Message,
        {**MSG_HEAD, "parts": []},
        "Expected `array` of length >= 1 - at `$.parts`",
    ),
    (
        "an empty messageId",
        t.Message,
        {**MSG_HEAD, "messageId": ""},
        "Expected `str` of length >= 1 - at `$.messageId`",
    ),
    (
        "an empty task id",
        t.Task,
        {**TASK_HEAD, "id": "", "kind": "task"},
        "Expected `str` of length >= 1 - at `$.id`",
    ),
    (
        "a task without contextId",
        t.Task,
        {"id": "t1", "status": {"state": "working"}},
        "Object missing required field `contextId`",
    ),
    (
        "a negative historyLength",
        t.TaskQueryParams,
        {"id": "t1", "historyLength": -1},
        "Expected `int` >= 0 - at `$.historyLength`",
    ),
    (
        "a status update without final",
        t.StreamResult,
        {
            "taskId": "t1",
            "contextId": "c1",
            "status": {"state": "working"},
            "kind": "status-update",
        },
        "Object missing required field `final`",
    ),
    (
        "data that is not an object",
        t.Part,
        {"kind": "data", "data": [1, 2]},
        "Expected `object`, got `array` - at `$.data`",
    ),
    (
        "push auth without a scheme",
        t.PushNotificationConfig,
        {"url": "https://a.example/hook", "authentication": {"schemes": []}},
        "Expected `array` of length >= 1 - at `$.authentication.schemes`",
    ),
    (
        "a delete without config id",
        t.DeleteTaskPushNotificationConfigParams,
        {"id": "t1"},
        "Object missing required field `pushNotificationConfigId`",
    ),
    (
        "a card without url",
        t.AgentCard,
        {k: v for k, v in MINIMAL_CARD.items() if k != "url"},
        "Object missing required field `url`",
    ),
    (
        "a scheme type v0.3 does not have",
        t.AgentCard,
        {**MINIMAL_CARD, "securitySchemes": {"x": {"type": "basic"}}},
        "Invalid value 'basic' - at `$.securitySchemes[...].type`",
    ),
]


def _refused_params() -> list[Any]:
    return [pytest.param(*case[1:], id=case[0]) for case in REFUSED]


@pytest.mark.parametrize(
    ("type_", "document", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED]
)
def test_refused_by_the_structs(type_: Any, document: Any, message: str) -> None:
    with pytest.raises(msgspec.ValidationError) as info:
        msgspec.json.decode(json.dumps(document).encode(), type=type_)
    assert str(info.value) == message


@pytest.mark.parametrize(("type_", "document", "message"), _refused_params())
def test_refused_by_the_codec(type_: Any, document: Any, message: str) -> None:
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(json.dumps(document).encode(), type_)
    assert info.value.message == message
    assert not info.value.malformed_json


LENIENT: list[tuple[str, Any, Any, Any]] = [
    (
        "a standalone message without kind gets one",
        t.MessageSendParams,
        {"message": MSG_HEAD},
        {"message": {**MSG_HEAD, "kind": "message"}},
    ),
    (
        "unknown fields are ignored, at every depth",
        t.Task,
        {**TASK_HEAD, "kind": "task", "extra": 1, "status": {"state": "working", "why": "x"}},
        {**TASK_HEAD, "kind": "task"},
    ),
    (
        "snake_case names in, camelCase out",
        t.MessageSendParams,
        {
            "message": {
                "role": "user",
                "parts": [{"kind": "text", "text": "hi"}],
                "message_id": "m1",
                "context_id": "c",
            }
        },
        {"message": {**MSG_HEAD, "contextId": "c", "kind": "message"}},
    ),
    (
        "a timestamp keeps its offset (v0.3 has no UTC rule; v1.0 conversion applies one)",
        t.TaskStatus,
        {"state": "working", "timestamp": "2024-03-15T10:10:00+02:00"},
        {"state": "working", "timestamp": "2024-03-15T10:10:00+02:00"},
    ),
]


@pytest.mark.parametrize(
    ("type_", "document", "expected"), [c[1:] for c in LENIENT], ids=[c[0] for c in LENIENT]
)
def test_lenient_input_canonical_output(type_: Any, document: Any, expected: Any) -> None:
    value = codec.decode(json.dumps(document).encode(), type_)
    out = json.loads(codec.encode(value))
    assert out == expected
    _assert_schema_valid(value, out)


def test_kind_is_always_written_first() -> None:
    # The tag leads the object, so a reader that peeks at the first key sees the kind.
    value = t.Task(id="t1", context_id="c1", status=t.TaskStatus(state=t.TaskState.WORKING))
    assert codec.encode(value).startswith(b'{"kind":"task",')
    api_key = t.APIKeySecurityScheme(in_="query", name="k")
    assert codec.encode(api_key) == b'{"type":"apiKey","in":"query","name":"k"}'
