"""The v0.3 REST dialect: proto ProtoJSON payloads (rest_types), their v1.0 conversions
(rest_convert), and the ``/v1/...`` routes of a2a_core.rest end to end.

Tables first: the struct shapes against the v0.3 proto's field table, ProtoJSON input rules,
validation, the conversion tables (states, roles, parts), the losses one by one, the request
bodies of every v0.3 route and the bytes of every v0.3 result. Then hypothesis: v1.0 -> v0.3
-> bytes -> v0.3 -> v1.0 is the identity on the shared subset.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from urllib.parse import parse_qsl

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec import UNSET

from a2a_core import codec, rest
from a2a_core import types as t
from a2a_core.compat.v0_3 import rest_convert as rc
from a2a_core.compat.v0_3 import rest_types as r
from a2a_core.errors import InvalidParamsError, JSONParseError, LocalProtocolError
from a2a_core.jsonrpc import Operation
from a2a_core.testing import strategy_for

UTC = dt.UTC


def _decode(method: str, path: str, query: str = "", body: bytes | dict[str, Any] = b"") -> Any:
    match = rest.match_route(method, path)
    assert isinstance(match, rest.RouteMatch), match
    assert match.dialect == "0.3"
    raw = json.dumps(body).encode() if isinstance(body, dict) else body
    return rest.decode_rest_request(match, parse_qsl(query, keep_blank_values=True), raw)


def _json(value: Any) -> Any:
    return json.loads(codec.encode(value))


# --- shapes: every struct against the v0.3 proto (reference/v0.3/fields.md) -------------------

# JSON names of each proto message, from the field table of the v0.3.0 proto.
PROTO_FIELDS: dict[str, set[str]] = {
    "SendMessageConfiguration": {
        "acceptedOutputModes",
        "pushNotification",
        "historyLength",
        "blocking",
    },
    "Task": {"id", "contextId", "status", "artifacts", "history", "metadata"},
    "TaskStatus": {"state", "message", "timestamp"},
    "Part": {"text", "file", "data"},
    "FilePart": {"fileWithUri", "fileWithBytes", "mimeType"},
    "DataPart": {"data"},
    "Message": {"messageId", "contextId", "taskId", "role", "content", "metadata", "extensions"},
    "Artifact": {"artifactId", "name", "description", "parts", "metadata", "extensions"},
    "TaskStatusUpdateEvent": {"taskId", "contextId", "status", "final", "metadata"},
    "TaskArtifactUpdateEvent": {
        "taskId",
        "contextId",
        "artifact",
        "append",
        "lastChunk",
        "metadata",
    },
    "PushNotificationConfig": {"id", "url", "token", "authentication"},
    "AuthenticationInfo": {"schemes", "credentials"},
    "AgentInterface": {"url", "transport"},
    "AgentCard": {
        "protocolVersion",
        "name",
        "description",
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "provider",
        "version",
        "documentationUrl",
        "capabilities",
        "securitySchemes",
        "security",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "supportsAuthenticatedExtendedCard",
        "signatures",
    },
    "AgentProvider": {"url", "organization"},
    "AgentCapabilities": {"streaming", "pushNotifications", "extensions"},
    "AgentExtension": {"uri", "description", "required", "params"},
    "AgentSkill": {
        "id",
        "name",
        "description",
        "tags",
        "examples",
        "inputModes",
        "outputModes",
        "security",
    },
    "AgentCardSignature": {"protected", "signature", "header"},
    "TaskPushNotificationConfig": {"name", "pushNotificationConfig"},
    "StringList": {"list"},
    "Security": {"schemes"},
    "SecurityScheme": {
        "apiKeySecurityScheme",
        "httpAuthSecurityScheme",
        "oauth2SecurityScheme",
        "openIdConnectSecurityScheme",
        "mtlsSecurityScheme",
    },
    "APIKeySecurityScheme": {"description", "location", "name"},
    "HTTPAuthSecurityScheme": {"description", "scheme", "bearerFormat"},
    "OAuth2SecurityScheme": {"description", "flows", "oauth2MetadataUrl"},
    "OpenIdConnectSecurityScheme": {"description", "openIdConnectUrl"},
    "MutualTlsSecurityScheme": {"description"},
    "OAuthFlows": {"authorizationCode", "clientCredentials", "implicit", "password"},
    "AuthorizationCodeOAuthFlow": {"authorizationUrl", "tokenUrl", "refreshUrl", "scopes"},
    "ClientCredentialsOAuthFlow": {"tokenUrl", "refreshUrl", "scopes"},
    "ImplicitOAuthFlow": {"authorizationUrl", "refreshUrl", "scopes"},
    "PasswordOAuthFlow": {"tokenUrl", "refreshUrl", "scopes"},
    "SendMessageRequest": {"message", "configuration", "metadata"},
    "CancelTaskRequest": {"name"},
    "TaskSubscriptionRequest": {"name"},
    "SendMessageResponse": {"task", "message"},
    "StreamResponse": {"task", "message", "statusUpdate", "artifactUpdate"},
    "ListTaskPushNotificationConfigResponse": {"configs", "nextPageToken"},
}
# Beyond v0.3.0: the later 0.3.x proto the reference SDK ships added these.
LATER_FIELDS = {"Part": {"metadata"}, "FilePart": {"name"}}
# Not a proto message: both forms of the create body in one struct.
CREATE_BODY_FIELDS = {"parent", "configId", "config", "name", "pushNotificationConfig"}


@pytest.mark.parametrize("cls", r.ALL_STRUCTS, ids=lambda cls: cls.__name__)
def test_struct_fields_are_the_proto_json_names(cls: type[Any]) -> None:
    names = set(cls.__struct_encode_fields__)
    if cls is r.CreateTaskPushNotificationConfigBody:
        assert names == CREATE_BODY_FIELDS
        return
    assert names == PROTO_FIELDS[cls.__name__] | LATER_FIELDS.get(cls.__name__, set())


def test_every_proto_message_that_rest_needs_is_modelled() -> None:
    assert {cls.__name__ for cls in r.ALL_STRUCTS} == set(PROTO_FIELDS) | {
        "CreateTaskPushNotificationConfigBody"
    }


def test_enums_are_the_proto_enums_in_number_order() -> None:
    assert [s.value for s in r.TaskState] == [
        "TASK_STATE_UNSPECIFIED",
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELLED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    ]
    assert [s.value for s in r.Role] == ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]


# --- ProtoJSON input rules (type, input, canonical output) ------------------------------------

ACCEPTED: list[tuple[type[Any], dict[str, Any], dict[str, Any]]] = [
    # original proto field names, as the reference SDK's client sends them
    (
        r.SendMessageRequest,
        {
            "request": {
                "message_id": "m",
                "context_id": "c",
                "role": "ROLE_USER",
                "content": [{"file": {"file_with_bytes": "aGk=", "mime_type": "text/plain"}}],
            },
            "configuration": {
                "accepted_output_modes": ["text/plain"],
                "history_length": 3,
                "push_notification": {"url": "https://h"},
                "blocking": True,
            },
        },
        {
            "message": {
                "messageId": "m",
                "contextId": "c",
                "role": "ROLE_USER",
                "content": [{"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain"}}],
            },
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "pushNotification": {"url": "https://h"},
                "historyLength": 3,
                "blocking": True,
            },
        },
    ),
    # TaskStatus.update is `message` in JSON; `update` is accepted too; integer enums
    (
        r.TaskStatus,
        {"state": 5, "update": {"messageId": "m", "role": 2, "content": [{"text": "bye"}]}},
        {
            "state": "TASK_STATE_CANCELLED",
            "message": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "bye"}]},
        },
    ),
    # the response oneofs name `msg` as `message`; `msg` is accepted too
    (
        r.StreamResponse,
        {
            "msg": {
                "messageId": "m",
                "role": "ROLE_AGENT",
                "content": [{"data": {"data": {"k": [1]}}}],
            }
        },
        {
            "message": {
                "messageId": "m",
                "role": "ROLE_AGENT",
                "content": [{"data": {"data": {"k": [1]}}}],
            }
        },
    ),
    # timestamps with an offset are normalised to UTC
    (
        r.SendMessageResponse,
        {
            "task": {
                "id": "t",
                "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-01-01T02:00:00+02:00"},
            }
        },
        {
            "task": {
                "id": "t",
                "status": {"state": "TASK_STATE_WORKING", "timestamp": "2025-01-01T00:00:00Z"},
            }
        },
    ),
    # defaults are omitted, an empty text part is still a part, unknown fields are ignored
    (
        r.Task,
        {
            "id": "t",
            "contextId": "",
            "status": {},
            "artifacts": [],
            "kind": "task",
            "history": [
                {"messageId": "m", "role": "ROLE_USER", "content": [{"text": ""}], "extensions": []}
            ],
        },
        {
            "id": "t",
            "status": {},
            "history": [{"messageId": "m", "role": "ROLE_USER", "content": [{"text": ""}]}],
        },
    ),
    (
        r.TaskStatusUpdateEvent,
        {
            "task_id": "t",
            "context_id": "c",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "final": True,
        },
        {
            "taskId": "t",
            "contextId": "c",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "final": True,
        },
    ),
    (
        r.TaskArtifactUpdateEvent,
        {
            "taskId": "t",
            "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"text": "x", "metadata": {"k": 1}}]},
            "append": False,
            "last_chunk": True,
        },
        {
            "taskId": "t",
            "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"text": "x", "metadata": {"k": 1}}]},
            "lastChunk": True,
        },
    ),
    (
        r.TaskPushNotificationConfig,
        {
            "name": "tasks/t/pushNotificationConfigs/c",
            "push_notification_config": {
                "id": "c",
                "url": "https://h",
                "authentication": {"schemes": ["Bearer"], "credentials": "x"},
            },
        },
        {
            "name": "tasks/t/pushNotificationConfigs/c",
            "pushNotificationConfig": {
                "id": "c",
                "url": "https://h",
                "authentication": {"schemes": ["Bearer"], "credentials": "x"},
            },
        },
    ),
    (
        r.CreateTaskPushNotificationConfigBody,
        {
            "parent": "tasks/t",
            "config_id": "c",
            "config": {"push_notification_config": {"url": "https://h"}},
        },
        {
            "parent": "tasks/t",
            "configId": "c",
            "config": {"pushNotificationConfig": {"url": "https://h"}},
        },
    ),
    (
        r.SecurityScheme,
        {
            "oauth2_security_scheme": {
                "flows": {"client_credentials": {"token_url": "https://t", "scopes": {"a": "b"}}}
            }
        },
        {
            "oauth2SecurityScheme": {
                "flows": {"clientCredentials": {"tokenUrl": "https://t", "scopes": {"a": "b"}}}
            }
        },
    ),
]


@pytest.mark.parametrize(
    ("type_", "doc", "expected"), ACCEPTED, ids=[c[0].__name__ for c in ACCEPTED]
)
def test_protojson_input_rules(
    type_: type[Any], doc: dict[str, Any], expected: dict[str, Any]
) -> None:
    value = codec.decode(json.dumps(doc).encode(), type_)
    assert _json(value) == expected
    assert codec.decode(codec.encode(value), type_) == value


REFUSED: list[tuple[type[Any], dict[str, Any], str]] = [
    (
        r.Message,
        {"role": "ROLE_USER", "content": [{"text": "x"}]},
        "Object missing required field `messageId`",
    ),
    (
        r.Message,
        {"messageId": "", "role": "ROLE_USER", "content": [{"text": "x"}]},
        "Expected `str` of length >= 1 - at `$.messageId`",
    ),
    (
        r.Message,
        {"messageId": "m", "role": "ROLE_USER", "content": []},
        "Expected `array` of length >= 1 - at `$.content`",
    ),
    (
        r.Message,
        {"messageId": "m", "role": "ROLE_UNSPECIFIED", "content": [{"text": "x"}]},
        "Message.role must be ROLE_USER or ROLE_AGENT",
    ),
    (
        r.Message,
        {"messageId": "m", "content": [{"text": "x"}]},
        "Object missing required field `role`",
    ),
    # the JSON-RPC v0.3 shape is not the REST shape
    (
        r.Message,
        {"messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "x"}]},
        "Invalid enum value 'user' - at `$.role`",
    ),
    (r.Part, {}, "Part needs exactly one of: text, file, data (found none)"),
    (
        r.Part,
        {"text": "x", "data": {"data": {}}},
        "Part needs exactly one of: text, file, data (found 2)",
    ),
    (
        r.FilePart,
        {"mimeType": "a/b"},
        "FilePart needs exactly one of: fileWithUri, fileWithBytes (found none)",
    ),
    (
        r.FilePart,
        {"fileWithUri": "u", "fileWithBytes": "AA=="},
        "FilePart needs exactly one of: fileWithUri, fileWithBytes (found 2)",
    ),
    (r.DataPart, {"data": [1]}, "Expected `object`, got `array` - at `$.data`"),
    (
        r.SendMessageConfiguration,
        {"historyLength": -1},
        "Expected `int` >= 0 - at `$.historyLength`",
    ),
    (r.AuthenticationInfo, {"schemes": []}, "Expected `array` of length >= 1 - at `$.schemes`"),
    (r.PushNotificationConfig, {"id": "c"}, "Object missing required field `url`"),
    (r.OAuthFlows, {"implicit": {}, "password": {}}, "OAuthFlows holds at most one flow"),
    (r.TaskState, "TASK_STATE_CANCELED", "Invalid enum value 'TASK_STATE_CANCELED'"),
    (
        r.TaskStatus,
        {"timestamp": "0001-01-01T00:00:00+01:00"},
        "TaskStatus.timestamp is out of range",
    ),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("type_", "doc", "message"), REFUSED, ids=[c[2][:40] for c in REFUSED])
def test_validation(type_: type[Any], doc: Any, message: str) -> None:
    with pytest.raises(codec.DecodeError) as info:
        codec.decode(json.dumps(doc).encode(), type_)
    assert info.value.message == message
    assert not info.value.malformed_json


# --- conversion tables -----------------------------------------------------------------------

STATES = [
    (r.TaskState.UNSPECIFIED, t.TaskState.UNSPECIFIED),
    (r.TaskState.SUBMITTED, t.TaskState.SUBMITTED),
    (r.TaskState.WORKING, t.TaskState.WORKING),
    (r.TaskState.COMPLETED, t.TaskState.COMPLETED),
    (r.TaskState.FAILED, t.TaskState.FAILED),
    (r.TaskState.CANCELLED, t.TaskState.CANCELED),
    (r.TaskState.INPUT_REQUIRED, t.TaskState.INPUT_REQUIRED),
    (r.TaskState.REJECTED, t.TaskState.REJECTED),
    (r.TaskState.AUTH_REQUIRED, t.TaskState.AUTH_REQUIRED),
]


@pytest.mark.parametrize(("old", "new"), STATES, ids=[s[0].value for s in STATES])
def test_state_table(old: r.TaskState, new: t.TaskState) -> None:
    assert rc.task_state_to_v1(old) is new
    assert rc.task_state_from_v1(new) is old


def test_state_and_role_tables_are_complete() -> None:
    assert {old for old, _ in STATES} == set(r.TaskState)
    assert {new for _, new in STATES} == set(t.TaskState)
    for role in t.Role:
        assert rc.role_to_v1(rc.role_from_v1(role)) is role
        assert rc.role_from_v1(role).value == role.value


# (v1.0 part JSON, v0.3 part JSON, v1.0 part JSON after the way back)
PARTS: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    ({"text": "hi"}, {"text": "hi"}, {"text": "hi"}),
    ({"text": ""}, {"text": ""}, {"text": ""}),
    (
        {"text": "hi", "metadata": {"k": 1}},
        {"text": "hi", "metadata": {"k": 1}},
        {"text": "hi", "metadata": {"k": 1}},
    ),
    (
        {"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"},
        {"file": {"fileWithBytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}},
        {"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"},
    ),
    (
        {"url": "https://f/x.png", "mediaType": "image/png"},
        {"file": {"fileWithUri": "https://f/x.png", "mimeType": "image/png"}},
        {"url": "https://f/x.png", "mediaType": "image/png"},
    ),
    ({"url": ""}, {"file": {"fileWithUri": ""}}, {"url": ""}),
    ({"data": {"a": [1, 2]}}, {"data": {"data": {"a": [1, 2]}}}, {"data": {"a": [1, 2]}}),
    # a non-object data value is wrapped (the reference SDK's convention) and unwrapped
    (
        {"data": [1, "x"], "metadata": {"k": "v"}},
        {"data": {"data": {"value": [1, "x"]}}, "metadata": {"k": "v", "data_part_compat": True}},
        {"data": [1, "x"], "metadata": {"k": "v"}},
    ),
    (
        {"data": None},
        {"data": {"data": {"value": None}}, "metadata": {"data_part_compat": True}},
        {"data": None},
    ),
    # lossy: text and data parts have no filename or media type in v0.3
    (
        {"text": "hi", "filename": "a.txt", "mediaType": "text/plain"},
        {"text": "hi"},
        {"text": "hi"},
    ),
    ({"data": {}, "mediaType": "application/json"}, {"data": {}}, {"data": {}}),
]


@pytest.mark.parametrize(("new", "old", "back"), PARTS, ids=[json.dumps(p[0])[:40] for p in PARTS])
def test_part_table(new: dict[str, Any], old: dict[str, Any], back: dict[str, Any]) -> None:
    v03 = rc.part_from_v1(codec.convert(new, t.Part))
    assert _json(v03) == old
    decoded = codec.decode(codec.encode(v03), r.Part)
    assert _json(rc.part_to_v1(decoded)) == back


def test_a_data_object_that_looks_wrapped_is_not_unwrapped_without_the_marker() -> None:
    part = codec.convert({"data": {"data": {"value": 1}}}, r.Part)
    assert rc.part_to_v1(part) == t.Part(data={"value": 1})


# A task with every feature, both ways: the v1.0 golden and its v0.3 REST form.
TASK_V1: dict[str, Any] = {
    "id": "t1",
    "contextId": "c1",
    "status": {
        "state": "TASK_STATE_CANCELED",
        "message": {
            "messageId": "m2",
            "contextId": "c1",
            "taskId": "t1",
            "role": "ROLE_AGENT",
            "parts": [{"text": "stopped"}],
        },
        "timestamp": "2025-03-04T05:06:07.123000Z",
    },
    "artifacts": [
        {
            "artifactId": "a1",
            "name": "out",
            "description": "d",
            "parts": [{"url": "https://f/x", "mediaType": "image/png"}, {"data": {"n": 1}}],
            "metadata": {"k": "v"},
            "extensions": ["https://ext"],
        }
    ],
    "history": [
        {
            "messageId": "m1",
            "role": "ROLE_USER",
            "parts": [{"raw": "AAE=", "filename": "b.bin"}],
            "metadata": {"a": 1},
            "extensions": ["https://ext"],
        }
    ],
    "metadata": {"x": {"y": None}},
}
TASK_V03: dict[str, Any] = {
    "id": "t1",
    "contextId": "c1",
    "status": {
        "state": "TASK_STATE_CANCELLED",
        "message": {
            "messageId": "m2",
            "contextId": "c1",
            "taskId": "t1",
            "role": "ROLE_AGENT",
            "content": [{"text": "stopped"}],
        },
        "timestamp": "2025-03-04T05:06:07.123000Z",
    },
    "artifacts": [
        {
            "artifactId": "a1",
            "name": "out",
            "description": "d",
            "parts": [
                {"file": {"fileWithUri": "https://f/x", "mimeType": "image/png"}},
                {"data": {"data": {"n": 1}}},
            ],
            "metadata": {"k": "v"},
            "extensions": ["https://ext"],
        }
    ],
    "history": [
        {
            "messageId": "m1",
            "role": "ROLE_USER",
            "content": [{"file": {"fileWithBytes": "AAE=", "name": "b.bin"}}],
            "metadata": {"a": 1},
            "extensions": ["https://ext"],
        }
    ],
    "metadata": {"x": {"y": None}},
}


def test_task_golden_both_ways() -> None:
    task = codec.convert(TASK_V1, t.Task)
    assert _json(rc.task_from_v1(task)) == TASK_V03
    assert rc.task_to_v1(codec.convert(TASK_V03, r.Task)) == task


def test_send_request_golden() -> None:
    body = {
        "message": {"messageId": "m", "role": "ROLE_USER", "content": [{"text": "hi"}]},
        "configuration": {
            "acceptedOutputModes": ["text/plain"],
            "pushNotification": {
                "id": "p",
                "url": "https://h",
                "token": "tok",
                "authentication": {"schemes": ["Bearer", "Basic"], "credentials": "c"},
            },
            "historyLength": 2,
            "blocking": False,
        },
        "metadata": {"k": 1},
    }
    expected = t.SendMessageRequest(
        message=t.Message(message_id="m", role=t.Role.USER, parts=[t.Part(text="hi")]),
        configuration=t.SendMessageConfiguration(
            accepted_output_modes=["text/plain"],
            task_push_notification_config=t.TaskPushNotificationConfig(
                id="p",
                url="https://h",
                token="tok",
                authentication=t.AuthenticationInfo(scheme="Bearer", credentials="c"),
            ),
            history_length=2,
            return_immediately=True,
        ),
        metadata={"k": 1},
    )
    assert rc.send_request_to_v1(codec.convert(body, r.SendMessageRequest)) == expected


@pytest.mark.parametrize(
    ("configuration", "return_immediately", "history_length"),
    [
        # proto3: an absent bool is false, so absent blocking is non-blocking (the official
        # SDK's REST transports leave it out to ask for that)
        ({}, True, None),
        ({"blocking": True}, False, None),
        ({"blocking": False}, True, None),
        ({"historyLength": 0, "blocking": True}, False, None),  # proto3: 0 is "not set"
        ({"historyLength": 5, "blocking": True}, False, 5),
    ],
)
def test_send_configuration_table(
    configuration: dict[str, Any], return_immediately: bool, history_length: int | None
) -> None:
    v1 = rc.send_configuration_to_v1(codec.convert(configuration, r.SendMessageConfiguration))
    assert (v1.return_immediately, v1.history_length) == (return_immediately, history_length)


@pytest.mark.parametrize(
    ("name", "task", "config"),
    [
        ("tasks/t1", "t1", None),
        ("tasks/a:b", "a:b", None),
        ("tasks/t1/pushNotificationConfigs/c1", "t1/pushNotificationConfigs/c1", ("t1", "c1")),
        ("tasks/t1/pushNotificationConfigs/", "t1/pushNotificationConfigs/", ("t1", "")),
        (
            "tasks/a/b/pushNotificationConfigs/c/d",
            "a/b/pushNotificationConfigs/c/d",
            ("a/b", "c/d"),
        ),
        ("tasks/", None, None),
        ("task/t1", None, None),
        ("t1", None, None),
        ("", None, None),
        ("tasks//pushNotificationConfigs/c", "/pushNotificationConfigs/c", None),
        ("tasks/t1/pushNotificationConfig/c", "t1/pushNotificationConfig/c", None),
    ],
)
def test_resource_names(name: str, task: str | None, config: tuple[str, str] | None) -> None:
    assert rc.parse_task_name(name) == task
    assert rc.parse_push_config_name(name) == config


def test_resource_names_round_trip() -> None:
    assert rc.task_name("t1") == "tasks/t1"
    assert rc.push_config_name("t1", "c1") == "tasks/t1/pushNotificationConfigs/c1"
    assert rc.parse_push_config_name(rc.push_config_name("a:b", "c d")) == ("a:b", "c d")


def test_push_config_golden() -> None:
    v1 = t.TaskPushNotificationConfig(
        tenant="acme",
        id="c1",
        task_id="t1",
        url="https://h",
        token="tok",
        authentication=t.AuthenticationInfo(scheme="Bearer", credentials="x"),
    )
    v03 = {
        "name": "tasks/t1/pushNotificationConfigs/c1",
        "pushNotificationConfig": {
            "id": "c1",
            "url": "https://h",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "x"},
        },
    }
    assert _json(rc.task_push_config_from_v1(v1)) == v03
    # the tenant has no v0.3 form
    assert rc.task_push_config_to_v1(codec.convert(v03, r.TaskPushNotificationConfig)) == (
        msgspec.structs.replace(v1, tenant="")
    )
    # the config id comes from the name when the webhook has none
    bare = codec.convert(
        {"name": "tasks/t1/pushNotificationConfigs/c9", "pushNotificationConfig": {"url": "u"}},
        r.TaskPushNotificationConfig,
    )
    assert rc.task_push_config_to_v1(bare) == t.TaskPushNotificationConfig(
        id="c9", task_id="t1", url="u"
    )
    # a name that is not a config name leaves the task id empty (conversions never raise)
    odd = codec.convert(
        {"name": "nope", "pushNotificationConfig": {"url": "u"}}, r.TaskPushNotificationConfig
    )
    assert rc.task_push_config_to_v1(odd) == t.TaskPushNotificationConfig(url="u")


# --- what does not survive, one case each ------------------------------------------------------


def _message(**extra: Any) -> t.Message:
    return t.Message(message_id="m", role=t.Role.USER, parts=[t.Part(text="x")], **extra)


def test_lossy_v1_to_v0_3() -> None:
    # referenceTaskIds: no such field in the v0.3 proto
    message = _message(reference_task_ids=["t0"])
    assert "referenceTaskIds" not in _json(rc.message_from_v1(message))
    assert rc.message_to_v1(rc.message_from_v1(message)) == _message()
    # tenant of a send request
    request = t.SendMessageRequest(tenant="acme", message=_message())
    assert rc.send_request_to_v1(rc.send_request_from_v1(request)) == t.SendMessageRequest(
        message=_message()
    )
    # historyLength 0 ("no history") cannot be told from unset in proto3
    zero = t.SendMessageConfiguration(history_length=0)
    assert rc.send_configuration_to_v1(rc.send_configuration_from_v1(zero)).history_length is None
    # the taskId of the webhook in a send configuration (v1.0 says it should be empty)
    push = t.TaskPushNotificationConfig(task_id="t", url="u")
    config = t.SendMessageConfiguration(task_push_notification_config=push)
    back = rc.send_configuration_to_v1(rc.send_configuration_from_v1(config))
    assert back.task_push_notification_config == t.TaskPushNotificationConfig(url="u")
    # a push config whose task id holds the name's separator
    odd = t.TaskPushNotificationConfig(id="c", task_id="a/pushNotificationConfigs/b", url="u")
    assert rc.task_push_config_to_v1(rc.task_push_config_from_v1(odd)).task_id == "a"


def test_lossy_v0_3_to_v1() -> None:
    # final: a v1.0 stream simply ends
    update = r.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=r.TaskStatus(state=r.TaskState.WORKING), final=True
    )
    back = rc.status_update_from_v1(rc.status_update_to_v1(update))
    assert back.final is False  # the default for WORKING
    # authentication schemes beyond the first
    webhook = r.PushNotificationConfig(
        url="u", authentication=r.AuthenticationInfo(schemes=["Bearer", "Basic"], credentials="x")
    )
    assert rc.push_config_to_v1(webhook).authentication == t.AuthenticationInfo(
        scheme="Bearer", credentials="x"
    )


@pytest.mark.parametrize(
    ("state", "final"),
    [
        (t.TaskState.WORKING, False),
        (t.TaskState.SUBMITTED, False),
        (t.TaskState.AUTH_REQUIRED, False),  # streams stay open while auth is pending (A6)
        (t.TaskState.INPUT_REQUIRED, True),
        (t.TaskState.COMPLETED, True),
        (t.TaskState.FAILED, True),
        (t.TaskState.CANCELED, True),
        (t.TaskState.REJECTED, True),
    ],
)
def test_stream_status_update_final_default(state: t.TaskState, final: bool) -> None:
    event = t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t", context_id="c", status=t.TaskStatus(state=state)
        )
    )
    body = json.loads(rest.encode_rest_stream_event("0.3", event))
    expected_state = "TASK_STATE_CANCELLED" if state is t.TaskState.CANCELED else state.value
    assert body == {
        "statusUpdate": {
            "taskId": "t",
            "contextId": "c",
            "status": {"state": expected_state},
            **({"final": True} if final else {}),
        }
    }
    overridden = json.loads(rest.encode_rest_stream_event("0.3", event, final=not final))
    assert overridden["statusUpdate"].get("final", False) is (not final)


def test_stream_events_in_v0_3() -> None:
    task = t.Task(id="t", context_id="c", status=t.TaskStatus(state=t.TaskState.SUBMITTED))
    assert json.loads(rest.encode_rest_stream_event("0.3", t.StreamResponse(task=task))) == {
        "task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}
    }
    message = t.Message(message_id="m", role=t.Role.AGENT, parts=[t.Part(text="hi")])
    assert json.loads(rest.encode_rest_stream_event("0.3", t.StreamResponse(message=message))) == {
        "message": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "hi"}]}
    }
    artifact = t.TaskArtifactUpdateEvent(
        task_id="t",
        context_id="c",
        artifact=t.Artifact(artifact_id="a", parts=[t.Part(text="x")]),
        append=True,
        last_chunk=True,
    )
    assert json.loads(
        rest.encode_rest_stream_event("0.3", t.StreamResponse(artifact_update=artifact))
    ) == {
        "artifactUpdate": {
            "taskId": "t",
            "contextId": "c",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
            "append": True,
            "lastChunk": True,
        }
    }


# --- the /v1/... routes: request bodies ----------------------------------------------------------

MESSAGE_V03 = {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]}
MESSAGE_V1 = t.Message(message_id="m1", role=t.Role.USER, parts=[t.Part(text="hi")])
WEBHOOK = {"url": "https://h"}


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "expected"),
    [
        (
            "POST",
            "/v1/message:send",
            "",
            {"message": MESSAGE_V03},
            t.SendMessageRequest(message=MESSAGE_V1),
        ),
        (
            "POST",
            "/v1/message:stream",
            "",
            {"request": MESSAGE_V03, "metadata": {"k": 1}},
            t.SendMessageRequest(message=MESSAGE_V1, metadata={"k": 1}),
        ),
        # exactly what the reference SDK's v0.3 REST client sends (proto field names)
        (
            "POST",
            "/v1/message:send",
            "",
            {
                "request": {"message_id": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]},
                "configuration": {
                    "accepted_output_modes": [],
                    "history_length": 0,
                    "blocking": True,
                },
            },
            t.SendMessageRequest(message=MESSAGE_V1, configuration=t.SendMessageConfiguration()),
        ),
        ("GET", "/v1/tasks/t1", "", b"", t.GetTaskRequest(id="t1")),
        (
            "GET",
            "/v1/tasks/t1",
            "historyLength=0",
            b"",
            t.GetTaskRequest(id="t1", history_length=0),
        ),
        (
            "GET",
            "/v1/tasks/t1",
            "history_length=4&A2A-Version=0.3",
            b"ignored",
            t.GetTaskRequest(id="t1", history_length=4),
        ),
        ("POST", "/v1/tasks/t1:cancel", "", b"", t.CancelTaskRequest(id="t1")),
        ("POST", "/v1/tasks/t1:cancel", "", {"name": "tasks/t1"}, t.CancelTaskRequest(id="t1")),
        ("GET", "/v1/tasks/t1:subscribe", "", b"{", t.SubscribeToTaskRequest(id="t1")),
        ("POST", "/v1/tasks/t1:subscribe", "", {}, t.SubscribeToTaskRequest(id="t1")),
        (
            "POST",
            "/v1/tasks/t1:subscribe",
            "",
            {"name": "tasks/t1"},
            t.SubscribeToTaskRequest(id="t1"),
        ),
        # create: the bare TaskPushNotificationConfig (the proto's `body: "config"`)...
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"pushNotificationConfig": {"id": "c1", **WEBHOOK}},
            t.TaskPushNotificationConfig(id="c1", task_id="t1", url="https://h"),
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"name": "tasks/t1/pushNotificationConfigs/c2", "pushNotificationConfig": WEBHOOK},
            t.TaskPushNotificationConfig(id="c2", task_id="t1", url="https://h"),
        ),
        # ...or the whole CreateTaskPushNotificationConfigRequest (the v0.3 prose; the SDK)
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {
                "parent": "tasks/t1",
                "config_id": "c3",
                "config": {
                    "name": "tasks/t1/pushNotificationConfigs/",
                    "push_notification_config": {
                        "url": "https://h",
                        "token": "tok",
                        "authentication": {"schemes": ["Bearer"]},
                    },
                },
            },
            t.TaskPushNotificationConfig(
                id="c3",
                task_id="t1",
                url="https://h",
                token="tok",
                authentication=t.AuthenticationInfo(scheme="Bearer"),
            ),
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"config": {"pushNotificationConfig": WEBHOOK}},
            t.TaskPushNotificationConfig(task_id="t1", url="https://h"),
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"configId": "c4", "config": {"pushNotificationConfig": {"id": "c4", **WEBHOOK}}},
            t.TaskPushNotificationConfig(id="c4", task_id="t1", url="https://h"),
        ),
        (
            "GET",
            "/v1/tasks/t1/pushNotificationConfigs/c1",
            "",
            b"",
            t.GetTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
        ),
        (
            "GET",
            "/v1/tasks/t1/pushNotificationConfigs",
            "pageSize=2&pageToken=p",
            b"",
            t.ListTaskPushNotificationConfigsRequest(task_id="t1", page_size=2, page_token="p"),
        ),
        (
            "DELETE",
            "/v1/tasks/t1/pushNotificationConfigs/c1",
            "",
            b"",
            t.DeleteTaskPushNotificationConfigRequest(task_id="t1", id="c1"),
        ),
        ("GET", "/v1/card", "", b"", t.GetExtendedAgentCardRequest()),
    ],
)
def test_v0_3_route_requests(method: str, path: str, query: str, body: Any, expected: Any) -> None:
    assert _decode(method, path, query, body) == expected


@pytest.mark.parametrize(
    ("method", "path", "query", "body", "error", "message"),
    [
        (
            "POST",
            "/v1/message:send",
            "",
            b"{",
            JSONParseError,
            "Invalid JSON payload: Input data was truncated",
        ),
        (
            "POST",
            "/v1/message:send",
            "",
            b"",
            InvalidParamsError,
            "Invalid parameters: Object missing required field `message`",
        ),
        # a JSON-RPC-shaped message is not the v0.3 REST shape (spec-decisions A4)
        (
            "POST",
            "/v1/message:send",
            "",
            {
                "message": {
                    "kind": "message",
                    "messageId": "m",
                    "role": "user",
                    "parts": [{"kind": "text", "text": "x"}],
                }
            },
            InvalidParamsError,
            "Invalid parameters: Invalid enum value 'user' - at `$.message.role`",
        ),
        (
            "POST",
            "/v1/message:send",
            "",
            {"message": MESSAGE_V03, "configuration": {"historyLength": -1}},
            InvalidParamsError,
            "Invalid parameters: Expected `int` >= 0 - at `$.configuration.historyLength`",
        ),
        (
            "GET",
            "/v1/tasks/t1",
            "historyLength=x",
            b"",
            InvalidParamsError,
            "Invalid parameters: query parameter 'historyLength' must be an integer",
        ),
        (
            "GET",
            "/v1/tasks/t1",
            "historyLength=-1",
            b"",
            InvalidParamsError,
            "Invalid parameters: Expected `int` >= 0 - at `$.historyLength`",
        ),
        (
            "POST",
            "/v1/tasks/t1:cancel",
            "",
            {"name": "tasks/t2"},
            InvalidParamsError,
            "Invalid parameters: name in the body does not name the task of the path",
        ),
        (
            "POST",
            "/v1/tasks/t1:cancel",
            "",
            {"name": "t1"},
            InvalidParamsError,
            "Invalid parameters: name in the body does not name the task of the path",
        ),
        (
            "POST",
            "/v1/tasks/t1:subscribe",
            "",
            {"name": "tasks/t1/x"},
            InvalidParamsError,
            "Invalid parameters: name in the body does not name the task of the path",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {},
            InvalidParamsError,
            "Invalid parameters: the body needs `config` or `pushNotificationConfig`",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            WEBHOOK,
            InvalidParamsError,
            "Invalid parameters: the body needs `config` or `pushNotificationConfig`",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"parent": "tasks/t2", "config": {"pushNotificationConfig": WEBHOOK}},
            InvalidParamsError,
            "Invalid parameters: parent in the body does not name the task of the path",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"name": "tasks/t2/pushNotificationConfigs/c", "pushNotificationConfig": WEBHOOK},
            InvalidParamsError,
            "Invalid parameters: name in the body does not name a config of the path's task",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"name": "tasks/t1", "pushNotificationConfig": WEBHOOK},
            InvalidParamsError,
            "Invalid parameters: name in the body does not name a config of the path's task",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"configId": "a", "config": {"pushNotificationConfig": {"id": "b", **WEBHOOK}}},
            InvalidParamsError,
            "Invalid parameters: the body gives different config ids",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {
                "name": "tasks/t1/pushNotificationConfigs/a",
                "pushNotificationConfig": {"id": "b", **WEBHOOK},
            },
            InvalidParamsError,
            "Invalid parameters: the body gives different config ids",
        ),
        (
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "",
            {"pushNotificationConfig": {"url": "u", "authentication": {"schemes": []}}},
            InvalidParamsError,
            "Invalid parameters: Expected `array` of length >= 1 - at `$.pushNotificationConfig.authentication.schemes`",
        ),
        (
            "GET",
            "/v1/tasks/t1/pushNotificationConfigs",
            "pageSize=1&pageSize=2",
            b"",
            InvalidParamsError,
            "Invalid parameters: query parameter 'pageSize' is given more than once",
        ),
    ],
)
def test_v0_3_route_errors(
    method: str, path: str, query: str, body: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        _decode(method, path, query, body)
    assert str(info.value) == message


# --- the /v1/... routes: results -----------------------------------------------------------------

TASK = t.Task(id="t1", context_id="c1", status=t.TaskStatus(state=t.TaskState.CANCELED))
TASK_JSON = {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_CANCELLED"}}
CONFIG = t.TaskPushNotificationConfig(tenant="acme", id="c1", task_id="t1", url="https://h")
CONFIG_JSON = {
    "name": "tasks/t1/pushNotificationConfigs/c1",
    "pushNotificationConfig": {"id": "c1", "url": "https://h"},
}


@pytest.mark.parametrize(
    ("operation", "value", "expected"),
    [
        (Operation.SEND_MESSAGE, t.SendMessageResponse(task=TASK), {"task": TASK_JSON}),
        (
            Operation.SEND_MESSAGE,
            t.SendMessageResponse(message=MESSAGE_V1),
            {"message": MESSAGE_V03},
        ),
        (Operation.GET_TASK, TASK, TASK_JSON),
        (Operation.CANCEL_TASK, TASK, TASK_JSON),
        (Operation.CREATE_PUSH_CONFIG, CONFIG, CONFIG_JSON),
        (Operation.GET_PUSH_CONFIG, CONFIG, CONFIG_JSON),
        (
            Operation.LIST_PUSH_CONFIGS,
            t.ListTaskPushNotificationConfigsResponse(configs=[CONFIG], next_page_token="n"),
            {"configs": [CONFIG_JSON], "nextPageToken": "n"},
        ),
        (Operation.LIST_PUSH_CONFIGS, t.ListTaskPushNotificationConfigsResponse(), {}),
        (Operation.DELETE_PUSH_CONFIG, None, {}),
    ],
)
def test_v0_3_result_encodings(operation: Operation, value: Any, expected: Any) -> None:
    assert json.loads(rest.encode_rest_result(operation, "0.3", value)) == expected


def test_v0_3_result_misuse() -> None:
    with pytest.raises(LocalProtocolError, match="returns Task, not SendMessageResponse"):
        rest.encode_rest_result(Operation.GET_TASK, "0.3", t.SendMessageResponse(task=TASK))


CARD_V1: dict[str, Any] = {
    "name": "Agent",
    "description": "Does things",
    "supportedInterfaces": [
        {"url": "https://a/json", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
        {"url": "https://a/rpc03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ],
    "provider": {"url": "https://org", "organization": "Org"},
    "version": "2.1",
    "documentationUrl": "https://docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "extendedAgentCard": True,
        "extensions": [{"uri": "https://ext", "required": True, "params": {"p": 1}}],
    },
    "securitySchemes": {
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://a/auth",
                        "tokenUrl": "https://a/token",
                        "scopes": {"read": "Read"},
                        "pkceRequired": True,
                    }
                }
            }
        },
        "device": {
            "oauth2SecurityScheme": {
                "flows": {
                    "deviceCode": {
                        "deviceAuthorizationUrl": "https://a/dev",
                        "tokenUrl": "https://a/token",
                        "scopes": {},
                    }
                }
            }
        },
        "oidc": {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://a/.well-known/openid-configuration"
            }
        },
        "mtls": {"mtlsSecurityScheme": {"description": "client certs"}},
    },
    "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}, {"schemes": {"key": {}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "s",
            "name": "S",
            "description": "d",
            "tags": ["t"],
            "examples": ["e"],
            "inputModes": ["text/plain"],
            "securityRequirements": [{"schemes": {"bearer": {}}}],
        }
    ],
    "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}],
    "iconUrl": "https://a/icon.png",
}
CARD_V03: dict[str, Any] = {
    "protocolVersion": "0.3.0",
    "name": "Agent",
    "description": "Does things",
    "url": "https://a/rest",
    "preferredTransport": "HTTP+JSON",
    "additionalInterfaces": [
        {"url": "https://a/rest", "transport": "HTTP+JSON"},
        {"url": "https://a/rpc03", "transport": "JSONRPC"},
    ],
    "provider": {"url": "https://org", "organization": "Org"},
    "version": "2.1",
    "documentationUrl": "https://docs",
    "capabilities": {
        "streaming": True,
        "extensions": [{"uri": "https://ext", "required": True, "params": {"p": 1}}],
    },
    "securitySchemes": {
        "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://a/auth",
                        "tokenUrl": "https://a/token",
                        "scopes": {"read": "Read"},
                    }
                }
            }
        },
        "device": {"oauth2SecurityScheme": {"flows": {}}},
        "oidc": {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://a/.well-known/openid-configuration"
            }
        },
        "mtls": {"mtlsSecurityScheme": {"description": "client certs"}},
    },
    "security": [{"schemes": {"oauth": {"list": ["read"]}}}, {"schemes": {"key": {}}}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "s",
            "name": "S",
            "description": "d",
            "tags": ["t"],
            "examples": ["e"],
            "inputModes": ["text/plain"],
            "security": [{"schemes": {"bearer": {}}}],
        }
    ],
    "supportsAuthenticatedExtendedCard": True,
    "signatures": [{"protected": "p", "signature": "s", "header": {"kid": "k"}}],
}


def test_card_golden() -> None:
    card = codec.convert(CARD_V1, t.AgentCard)
    assert json.loads(rest.encode_rest_result(Operation.GET_EXTENDED_CARD, "0.3", card)) == CARD_V03


def test_card_back_to_v1_keeps_the_shared_subset() -> None:
    back = rc.card_to_v1(codec.convert(CARD_V03, r.AgentCard))
    expected = dict(CARD_V1)
    # lost on the way: the v1.0 interface, iconUrl, pkceRequired, a deviceCode flow's
    # scheme (empty flows have no v1.0 form), false capabilities
    expected["supportedInterfaces"] = [
        {"url": "https://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
        {"url": "https://a/rpc03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
    ]
    del expected["iconUrl"]
    expected["capabilities"] = {k: v for k, v in CARD_V1["capabilities"].items() if v is not False}
    schemes = dict(CARD_V1["securitySchemes"])
    del schemes["device"]
    schemes["oauth"] = {
        "oauth2SecurityScheme": {
            "flows": {
                "authorizationCode": {
                    "authorizationUrl": "https://a/auth",
                    "tokenUrl": "https://a/token",
                    "scopes": {"read": "Read"},
                }
            }
        }
    }
    expected["securitySchemes"] = schemes
    assert _json(back) == expected


def test_card_without_legacy_interfaces_falls_back_to_the_first() -> None:
    card = codec.convert(
        {**CARD_V1, "supportedInterfaces": CARD_V1["supportedInterfaces"][:1]}, t.AgentCard
    )
    v03 = _json(rc.card_from_v1(card))
    assert (v03["url"], v03["preferredTransport"], v03["protocolVersion"]) == (
        "https://a/json",
        "JSONRPC",
        "0.3.0",
    )
    assert "additionalInterfaces" not in v03


# --- hypothesis: the shared subset round-trips --------------------------------------------------


def _shared(value: Any) -> Any:
    """``value`` without what v0.3 REST cannot carry (see rest_convert's docstring)."""
    if isinstance(value, list):
        return [_shared(v) for v in value]
    if not isinstance(value, msgspec.Struct):
        return value
    fields = {f: _shared(getattr(value, f)) for f in value.__struct_fields__}
    if isinstance(value, t.Message):
        fields["reference_task_ids"] = []
    elif isinstance(value, t.Part) and (value.text is not UNSET or value.data is not UNSET):
        fields["filename"] = fields["media_type"] = ""
    elif isinstance(value, t.SendMessageConfiguration):
        if value.history_length == 0:
            fields["history_length"] = None
        push = fields["task_push_notification_config"]
        if push is not None:  # the webhook of a send has no task yet: no taskId in v0.3
            fields["task_push_notification_config"] = msgspec.structs.replace(push, task_id="")
    if "tenant" in fields:
        fields["tenant"] = ""
    return type(value)(**fields)


# (v1.0 type, v1.0 -> v0.3, v0.3 type, v0.3 -> v1.0)
PAIRS: list[tuple[type[Any], Any, type[Any], Any]] = [
    (t.Part, rc.part_from_v1, r.Part, rc.part_to_v1),
    (t.Message, rc.message_from_v1, r.Message, rc.message_to_v1),
    (t.Artifact, rc.artifact_from_v1, r.Artifact, rc.artifact_to_v1),
    (t.TaskStatus, rc.task_status_from_v1, r.TaskStatus, rc.task_status_to_v1),
    (t.Task, rc.task_from_v1, r.Task, rc.task_to_v1),
    (
        t.TaskStatusUpdateEvent,
        rc.status_update_from_v1,
        r.TaskStatusUpdateEvent,
        rc.status_update_to_v1,
    ),
    (
        t.TaskArtifactUpdateEvent,
        rc.artifact_update_from_v1,
        r.TaskArtifactUpdateEvent,
        rc.artifact_update_to_v1,
    ),
    (
        t.SendMessageResponse,
        rc.send_response_from_v1,
        r.SendMessageResponse,
        rc.send_response_to_v1,
    ),
    (t.StreamResponse, rc.stream_response_from_v1, r.StreamResponse, rc.stream_response_to_v1),
    (
        t.TaskPushNotificationConfig,
        rc.task_push_config_from_v1,
        r.TaskPushNotificationConfig,
        rc.task_push_config_to_v1,
    ),
    (
        t.ListTaskPushNotificationConfigsResponse,
        rc.push_config_list_from_v1,
        r.ListTaskPushNotificationConfigResponse,
        rc.push_config_list_to_v1,
    ),
    (
        t.SendMessageConfiguration,
        rc.send_configuration_from_v1,
        r.SendMessageConfiguration,
        rc.send_configuration_to_v1,
    ),
    (t.SendMessageRequest, rc.send_request_from_v1, r.SendMessageRequest, rc.send_request_to_v1),
]
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _no_separator_in_names(value: Any) -> bool:
    # A task id holding the compound name's separator is a listed loss, drawn almost never.
    return "/pushNotificationConfigs/" not in codec.encode(value).decode()


@pytest.mark.parametrize(
    ("v1_type", "from_v1", "v03_type", "to_v1"), PAIRS, ids=[p[0].__name__ for p in PAIRS]
)
@SETTINGS
@given(data=st.data())
def test_v1_to_v0_3_and_back_is_the_identity_on_the_shared_subset(
    v1_type: type[Any], from_v1: Any, v03_type: type[Any], to_v1: Any, data: st.DataObject
) -> None:
    value = data.draw(strategy_for(v1_type).filter(_no_separator_in_names))
    v03 = from_v1(value)
    wire = codec.encode(v03)
    decoded = codec.decode(wire, v03_type)
    assert decoded == v03  # the v0.3 bytes decode to what was encoded
    assert to_v1(decoded) == _shared(value)
    # v0.3 written this way survives v0.3 -> v1.0 -> v0.3 unchanged
    assert from_v1(to_v1(decoded)) == v03


@SETTINGS
@given(data=st.data())
def test_every_v1_card_encodes_for_v0_3(data: st.DataObject) -> None:
    card = data.draw(strategy_for(t.AgentCard))
    body = rest.encode_rest_result(Operation.GET_EXTENDED_CARD, "0.3", card)
    decoded = codec.decode(body, r.AgentCard)
    assert decoded.name == card.name
    assert set(decoded.security_schemes) == set(card.security_schemes)
    assert len(decoded.skills) == len(card.skills)
