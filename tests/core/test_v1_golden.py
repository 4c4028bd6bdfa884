"""Golden tables for the v1.0 wire model: bytes -> structs -> bytes.

Two tables: every complete JSON example of the v1.0 specification (tests/core/data), and our
own cases for each ProtoJSON input rule and each validation rule the model enforces.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from a2a_core import codec
from a2a_core import types as t
from helpers.schema_v1 import validator_for

EXAMPLES = json.loads((Path(__file__).parent / "data" / "v1_0_spec_examples.json").read_text())
MODEL_EXAMPLES = [e for e in EXAMPLES if hasattr(t, e["type"])]

# Examples in the spec text that break its own rules: the model must refuse them with a
# message that points at the problem (REQUIRED `messageId` missing; base64 cut with "...").
INVALID_IN_SPEC = {
    "line 1055 ": "Object missing required field `messageId` - at `$.message`",
    "line 1087 ": "Object missing required field `messageId`",
    "line 1406 ": "Object missing required field `messageId` - at `$.task.status.message`",
    "line 2777 ": "Object missing required field `messageId` - at `$.message`",
    "line 3484 ": "Invalid base64 encoded string - at `$.raw`",
}


def _known_invalid(example: dict[str, Any]) -> str | None:
    return next((msg for key, msg in INVALID_IN_SPEC.items() if key in example["source"]), None)


def test_every_example_is_classified() -> None:
    assert len(MODEL_EXAMPLES) >= 25
    assert {e["type"] for e in MODEL_EXAMPLES} >= {
        "SendMessageRequest",
        "SendMessageResponse",
        "ListTasksResponse",
        "StreamResponse",
        "AgentCard",
        "Part",
        "Artifact",
    }


@pytest.mark.parametrize("example", MODEL_EXAMPLES, ids=lambda e: e["source"][22:60])
def test_spec_example_round_trips(example: dict[str, Any]) -> None:
    type_ = getattr(t, example["type"])
    body = json.dumps(example["json"]).encode()
    expected_error = _known_invalid(example)
    if expected_error is not None:
        with pytest.raises(codec.DecodeError) as info:
            codec.decode(body, type_)
        assert info.value.message == expected_error
        assert not info.value.malformed_json
        return
    value = codec.decode(body, type_)
    out = codec.encode(value)
    assert json.loads(out) == example["json"]
    assert codec.decode(out, type_) == value
    assert not list(validator_for(example["type"]).iter_errors(json.loads(out)))


@pytest.mark.parametrize(
    "example",
    [e for e in EXAMPLES if e["type"] == "jsonrpc-request"],
    ids=lambda e: e["json"]["method"],
)
def test_spec_jsonrpc_params_decode(example: dict[str, Any]) -> None:
    params_type = {
        "GetTask": t.GetTaskRequest,
        "ListTasks": t.ListTasksRequest,
        "CancelTask": t.CancelTaskRequest,
        "SubscribeToTask": t.SubscribeToTaskRequest,
        "GetExtendedAgentCard": t.GetExtendedAgentCardRequest,
    }[example["json"]["method"]]
    params = example["json"].get("params", {})
    value = codec.decode(json.dumps(params).encode(), params_type)
    assert json.loads(codec.encode(value)) == params


# --- ProtoJSON input rules: (type, input, canonical output) ----------------------------------

MSG = b'"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]'

ACCEPTED: list[tuple[type[Any], bytes, bytes]] = [
    # snake_case names in, camelCase out
    (
        t.Message,
        b'{"message_id":"m1","context_id":"c","task_id":"t","role":"ROLE_USER",'
        b'"parts":[{"text":"hi","media_type":"text/plain"}],"reference_task_ids":["r"]}',
        b'{"messageId":"m1","contextId":"c","taskId":"t","role":"ROLE_USER",'
        b'"parts":[{"text":"hi","mediaType":"text/plain"}],"referenceTaskIds":["r"]}',
    ),
    # keys inside free-form maps are never renamed, even on the snake_case path
    (
        t.Message,
        b'{"message_id":"m1","role":"ROLE_USER","parts":[{"data":{"a_b":{"c_d":1}}}],'
        b'"metadata":{"x_y":[{"z_w":null}]}}',
        b'{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"a_b":{"c_d":1}}}],'
        b'"metadata":{"x_y":[{"z_w":null}]}}',
    ),
    # integer enums in, names out
    (
        t.TaskStatus,
        b'{"state":3}',
        b'{"state":"TASK_STATE_COMPLETED"}',
    ),
    (
        t.Message,
        b"{" + MSG.replace(b'"ROLE_USER"', b"2") + b"}",
        b"{" + MSG.replace(b"USER", b"AGENT") + b"}",
    ),
    # timestamps with offsets in, UTC with Z out
    (
        t.TaskStatus,
        b'{"state":"TASK_STATE_WORKING","timestamp":"2025-10-28T12:30:00.125+02:00"}',
        b'{"state":"TASK_STATE_WORKING","timestamp":"2025-10-28T10:30:00.125000Z"}',
    ),
    # a naive timestamp (v0.3 examples omit the zone) is taken as UTC
    (
        t.TaskStatus,
        b'{"state":"TASK_STATE_WORKING","timestamp":"2025-10-28T10:30:00"}',
        b'{"state":"TASK_STATE_WORKING","timestamp":"2025-10-28T10:30:00Z"}',
    ),
    # unknown fields are ignored
    (t.GetTaskRequest, b'{"id":"t1","futureField":{"x":1},"kind":"task"}', b'{"id":"t1"}'),
    # null means "not set"
    (t.GetTaskRequest, b'{"id":"t1","historyLength":null,"tenant":null}', b'{"id":"t1"}'),
    # ...except for a Value, where null is a value
    (t.Part, b'{"data":null}', b'{"data":null}'),
    # Value members keep every JSON type, integers stay integers
    (t.Part, b'{"data":[1,2.5,"x",true,{"k":1}]}', b'{"data":[1,2.5,"x",true,{"k":1}]}'),
    # int32 as a decimal string
    (t.GetTaskRequest, b'{"id":"t1","historyLength":"10"}', b'{"id":"t1","historyLength":10}'),
    # URL-safe and unpadded base64 in, standard padded base64 out
    (t.Part, b'{"raw":"-_8"}', b'{"raw":"+/8="}'),
    # presence fields are emitted when set, even to their zero value
    (
        t.AgentCapabilities,
        b'{"streaming":false,"pushNotifications":false}',
        b'{"streaming":false,"pushNotifications":false}',
    ),
    (t.GetTaskRequest, b'{"id":"t1","historyLength":0}', b'{"id":"t1","historyLength":0}'),
    # fields without presence are omitted at their default
    (
        t.Task,
        b'{"id":"t1","contextId":"","status":{"state":"TASK_STATE_SUBMITTED"},'
        b'"artifacts":[],"history":[],"metadata":{}}',
        b'{"id":"t1","status":{"state":"TASK_STATE_SUBMITTED"}}',
    ),
    (
        t.TaskArtifactUpdateEvent,
        b'{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},'
        b'"append":false,"lastChunk":true}',
        b'{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},'
        b'"lastChunk":true}',
    ),
    # ListTasksResponse always carries its four members
    (
        t.ListTasksResponse,
        b'{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}',
        b'{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}',
    ),
    # an empty text part is a set member of the oneof
    (t.Part, b'{"text":""}', b'{"text":""}'),
    # the flat v1.0 push config with snake_case (what the old TCK sends)
    (
        t.GetTaskPushNotificationConfigRequest,
        b'{"task_id":"t1","id":"cfg"}',
        b'{"taskId":"t1","id":"cfg"}',
    ),
    (
        t.SecurityScheme,
        b'{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"https://a/d",'
        b'"tokenUrl":"https://a/t","scopes":{}}}}}',
        b'{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"https://a/d",'
        b'"tokenUrl":"https://a/t","scopes":{}}}}}',
    ),
    (
        t.ListTasksRequest,
        b'{"status":"TASK_STATE_WORKING","pageSize":100,"statusTimestampAfter":"2025-01-01T00:00:00Z",'
        b'"includeArtifacts":false}',
        b'{"status":"TASK_STATE_WORKING","pageSize":100,"statusTimestampAfter":"2025-01-01T00:00:00Z",'
        b'"includeArtifacts":false}',
    ),
]


@pytest.mark.parametrize(("type_", "body", "expected"), ACCEPTED)
def test_protojson_input_rules(type_: type[Any], body: bytes, expected: bytes) -> None:
    value = codec.decode(body, type_)
    assert codec.encode(value) == expected
    assert codec.decode(expected, type_) == value


# --- validation: (type, input, message the client gets) --------------------------------------

REJECTED: list[tuple[type[Any], bytes, str]] = [
    (t.Part, b"{}", "Part needs exactly one of: text, raw, url, data (found none)"),
    (
        t.Part,
        b'{"text":"a","url":"u"}',
        "Part needs exactly one of: text, raw, url, data (found 2)",
    ),
    (
        t.Message,
        b'{"messageId":"m","role":"ROLE_USER","parts":[]}',
        "Expected `array` of length >= 1 - at `$.parts`",
    ),
    (t.Message, b'{"messageId":"m","role":"ROLE_USER"}', "Object missing required field `parts`"),
    (
        t.Message,
        b'{"messageId":"","role":"ROLE_USER","parts":[{"text":"x"}]}',
        "Expected `str` of length >= 1 - at `$.messageId`",
    ),
    (
        t.Message,
        b'{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"x"}]}',
        "Message.role must be ROLE_USER or ROLE_AGENT",
    ),
    (
        t.Message,
        b'{"messageId":"m","role":"user","parts":[{"text":"x"}]}',
        "Invalid enum value 'user' - at `$.role`",
    ),
    (
        t.Message,
        b'{"messageId":"m","role":9,"parts":[{"text":"x"}]}',
        "Expected `str`, got `int` - at `$.role`",
    ),
    (
        t.Artifact,
        b'{"artifactId":"a","parts":[]}',
        "Expected `array` of length >= 1 - at `$.parts`",
    ),
    (t.Task, b'{"id":"t"}', "Object missing required field `status`"),
    (
        t.GetTaskRequest,
        b'{"id":"t","historyLength":-1}',
        "Expected `int` >= 0 - at `$.historyLength`",
    ),
    (t.ListTasksRequest, b'{"pageSize":0}', "Expected `int` >= 1 - at `$.pageSize`"),
    (t.ListTasksRequest, b'{"pageSize":101}', "Expected `int` <= 100 - at `$.pageSize`"),
    (
        t.ListTasksRequest,
        b'{"statusTimestampAfter":"yesterday"}',
        "Invalid RFC3339 encoded datetime - at `$.statusTimestampAfter`",
    ),
    (
        t.StreamResponse,
        b"{}",
        "StreamResponse needs exactly one of: task, message, statusUpdate, artifactUpdate (found none)",
    ),
    (
        t.SendMessageResponse,
        b'{"task":{"id":"t","status":{"state":1}},"message":{"messageId":"m","role":1,"parts":[{"text":"x"}]}}',
        "SendMessageResponse needs exactly one of: task, message (found 2)",
    ),
    (
        t.OAuthFlows,
        b"{}",
        "OAuthFlows needs exactly one of: authorizationCode, clientCredentials, implicit, password, deviceCode (found none)",
    ),
    (
        t.SecurityScheme,
        b'{"mtlsSecurityScheme":{},"httpAuthSecurityScheme":{"scheme":"Bearer"}}',
        "SecurityScheme needs exactly one of: apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme, mtlsSecurityScheme (found 2)",
    ),
    (
        t.AgentCard,
        b'{"name":"n","description":"d","supportedInterfaces":[],"version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}',
        "Expected `array` of length >= 1 - at `$.supportedInterfaces`",
    ),
    (t.TaskPushNotificationConfig, b'{"taskId":"t"}', "Object missing required field `url`"),
    (t.SendMessageRequest, b'{"message":"hello"}', "Expected `object`, got `str` - at `$.message`"),
    (t.Part, b'{"raw":"%%%"}', "Invalid base64 encoded string - at `$.raw`"),
]


@pytest.mark.parametrize(("type_", "body", "message"), REJECTED)
def test_validation_rules(type_: type[Any], body: bytes, message: str) -> None:
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(body, type_)
    assert info.value.message == message
    assert not info.value.malformed_json


@pytest.mark.parametrize("body", [b"", b"{", b'{"id":}', b"\xff\xfe", b'{"id":"t"} x', b"nul"])
def test_malformed_json_is_told_apart(body: bytes) -> None:
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(body, t.GetTaskRequest)
    assert info.value.malformed_json


def test_constructing_an_invalid_oneof_raises_for_the_developer() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        t.Part(text="a", url="b")
    with pytest.raises(ValueError, match="ROLE_USER or ROLE_AGENT"):
        t.Message(message_id="m", role=t.Role.UNSPECIFIED, parts=[t.Part(text="x")])


def test_structs_are_frozen() -> None:
    part = t.Part(text="a")
    with pytest.raises(AttributeError):
        part.text = "b"  # type: ignore[misc]


def test_state_sets() -> None:
    terminal = {s for s in t.TaskState if s.is_terminal}
    interrupted = {s for s in t.TaskState if s.is_interrupted}
    assert terminal == {
        t.TaskState.COMPLETED,
        t.TaskState.FAILED,
        t.TaskState.CANCELED,
        t.TaskState.REJECTED,
    }
    assert interrupted == {t.TaskState.INPUT_REQUIRED, t.TaskState.AUTH_REQUIRED}


def test_enum_members_are_in_proto_number_order() -> None:
    # The codec maps integer enums by position; the proto numbers are the positions.
    assert [s.value for s in t.TaskState][3] == "TASK_STATE_COMPLETED"
    assert [s.value for s in t.TaskState][8] == "TASK_STATE_AUTH_REQUIRED"
    assert [r.value for r in t.Role] == ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]
