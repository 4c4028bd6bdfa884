"""Conversions between the v0.3 dialect and the v1.0 model.

- Conversion tables: v0.3 JSON -> v1.0 JSON and back, for every pair of shapes, with both
  sides validated (the v0.3 JSON Schema, the strict v1.0 JSON Schema).
- The specification's v0.3 examples, converted: valid v1.0, and never a v0.3-only field.
- One test per lossy case, asserting exactly what is lost (the list is in the docstring of
  ``a2a_core.compat.v0_3.convert`` and in docs/wire-dialects.md).
- Properties: v1.0 -> v0.3 -> v1.0 is the identity on the shared subset, v0.3 -> v1.0 -> v0.3
  is the identity on v0.3 values without lossy features, and the two subsets correspond;
  both directions are total and always produce values their own schema accepts.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_core import codec
from a2a_core import types as v1
from a2a_core.compat.v0_3 import convert as c
from a2a_core.compat.v0_3 import types as v03
from a2a_core.testing import strategy_for
from helpers.schema_v0_3 import schema_errors
from helpers.schema_v1 import validator_for as v1_validator_for

MARKER = c.DATA_PART_COMPAT_KEY


def _json(value: Any) -> Any:
    return json.loads(codec.encode(value))


def _decode(type_: Any, document: Any) -> Any:
    return codec.decode(json.dumps(document).encode(), type_)


def _v03_schema_errors(value: Any) -> list[str]:
    if isinstance(value, list):
        return [e for item in value for e in _v03_schema_errors(item)]
    return schema_errors(type(value).__name__, _json(value))


def _v1_schema_errors(value: Any) -> list[str]:
    return [e.message for e in v1_validator_for(type(value).__name__).iter_errors(_json(value))]


# --- conversion tables ---------------------------------------------------------------------

TEXT_03 = {"kind": "text", "text": "hi", "metadata": {"a": 1}}
TEXT_1 = {"text": "hi", "metadata": {"a": 1}}
MSG_03 = {
    "role": "agent",
    "parts": [TEXT_03],
    "metadata": {"m": True},
    "extensions": ["https://example.com/ext"],
    "referenceTaskIds": ["t0"],
    "messageId": "m1",
    "taskId": "t1",
    "contextId": "c1",
    "kind": "message",
}
MSG_1 = {
    "messageId": "m1",
    "contextId": "c1",
    "taskId": "t1",
    "role": "ROLE_AGENT",
    "parts": [TEXT_1],
    "metadata": {"m": True},
    "extensions": ["https://example.com/ext"],
    "referenceTaskIds": ["t0"],
}
ART_03 = {
    "artifactId": "a1",
    "name": "n",
    "description": "d",
    "parts": [TEXT_03],
    "metadata": {"x": 1},
    "extensions": ["e"],
}
ART_1 = {**ART_03, "parts": [TEXT_1]}
TASK_03 = {
    "id": "t1",
    "contextId": "c1",
    "status": {"state": "input-required", "message": MSG_03, "timestamp": "2024-03-15T10:10:00Z"},
    "history": [MSG_03],
    "artifacts": [ART_03],
    "metadata": {"k": "v"},
    "kind": "task",
}
TASK_1 = {
    "id": "t1",
    "contextId": "c1",
    "status": {
        "state": "TASK_STATE_INPUT_REQUIRED",
        "message": MSG_1,
        "timestamp": "2024-03-15T10:10:00Z",
    },
    "artifacts": [ART_1],
    "history": [MSG_1],
    "metadata": {"k": "v"},
}
STATUS_03 = {
    "taskId": "t1",
    "contextId": "c1",
    "status": {"state": "completed"},
    "final": True,
    "metadata": {"s": 1},
    "kind": "status-update",
}
STATUS_1 = {
    "taskId": "t1",
    "contextId": "c1",
    "status": {"state": "TASK_STATE_COMPLETED"},
    "metadata": {"s": 1},
}
ARTUP_03 = {
    "taskId": "t1",
    "contextId": "c1",
    "artifact": ART_03,
    "append": True,
    "lastChunk": True,
    "kind": "artifact-update",
}
ARTUP_1 = {"taskId": "t1", "contextId": "c1", "artifact": ART_1, "append": True, "lastChunk": True}
PUSH_03 = {
    "taskId": "t1",
    "pushNotificationConfig": {
        "id": "c1",
        "url": "https://h.example/hook",
        "token": "tok",
        "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
    },
}
PUSH_1 = {
    "id": "c1",
    "taskId": "t1",
    "url": "https://h.example/hook",
    "token": "tok",
    "authentication": {"scheme": "Bearer", "credentials": "secret"},
}
CARD_03 = {
    "protocolVersion": "0.3.0",
    "name": "Recipe Agent",
    "description": "Agent that helps users with recipes and cooking.",
    "url": "https://api.example.com/a2a/v1",
    "preferredTransport": "JSONRPC",
    "additionalInterfaces": [
        {"url": "https://api.example.com/a2a/v1", "transport": "JSONRPC"},
        {"url": "https://rest.example.com/v1", "transport": "HTTP+JSON"},
    ],
    "iconUrl": "https://api.example.com/icon.png",
    "provider": {"organization": "Google", "url": "https://ai.google.dev"},
    "version": "1.0.0",
    "documentationUrl": "https://api.example.com/docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "extensions": [
            {"uri": "https://e.example", "description": "d", "required": True, "params": {"k": 1}}
        ],
    },
    "securitySchemes": {
        "oauth": {
            "type": "oauth2",
            "description": "d",
            "flows": {
                "clientCredentials": {
                    "tokenUrl": "https://auth.example/token",
                    "refreshUrl": "https://auth.example/refresh",
                    "scopes": {"read": "Read"},
                }
            },
            "oauth2MetadataUrl": "https://auth.example/.well-known/oauth-authorization-server",
        },
        "api-key": {"type": "apiKey", "in": "header", "name": "X-Key"},
        "mtls": {"type": "mutualTLS", "description": "m"},
        "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
        "google": {"type": "openIdConnect", "openIdConnectUrl": "https://accounts.example/oidc"},
    },
    "security": [{"oauth": ["read"]}, {"api-key": [], "mtls": []}],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "s",
            "name": "S",
            "description": "D",
            "tags": ["t"],
            "examples": ["e"],
            "inputModes": ["text/plain"],
            "outputModes": ["text/plain"],
            "security": [{"google": ["oidc"]}],
        }
    ],
    "supportsAuthenticatedExtendedCard": True,
    "signatures": [{"protected": "eyJ", "signature": "c2ln", "header": {"kid": "k"}}],
}
CARD_1 = {
    "name": "Recipe Agent",
    "description": "Agent that helps users with recipes and cooking.",
    "supportedInterfaces": [
        {
            "url": "https://api.example.com/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.3",
        },
        {
            "url": "https://rest.example.com/v1",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "0.3",
        },
    ],
    "provider": {"url": "https://ai.google.dev", "organization": "Google"},
    "version": "1.0.0",
    "documentationUrl": "https://api.example.com/docs",
    "capabilities": {
        "streaming": True,
        "pushNotifications": False,
        "extensions": [
            {"uri": "https://e.example", "description": "d", "required": True, "params": {"k": 1}}
        ],
        "extendedAgentCard": True,
    },
    "securitySchemes": {
        "oauth": {
            "oauth2SecurityScheme": {
                "description": "d",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": "https://auth.example/token",
                        "refreshUrl": "https://auth.example/refresh",
                        "scopes": {"read": "Read"},
                    }
                },
                "oauth2MetadataUrl": "https://auth.example/.well-known/oauth-authorization-server",
            }
        },
        "api-key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
        "mtls": {"mtlsSecurityScheme": {"description": "m"}},
        "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
        "google": {
            "openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.example/oidc"}
        },
    },
    "securityRequirements": [
        {"schemes": {"oauth": {"list": ["read"]}}},
        {"schemes": {"api-key": {}, "mtls": {}}},
    ],
    "defaultInputModes": ["text/plain"],
    "defaultOutputModes": ["application/json"],
    "skills": [
        {
            "id": "s",
            "name": "S",
            "description": "D",
            "tags": ["t"],
            "examples": ["e"],
            "inputModes": ["text/plain"],
            "outputModes": ["text/plain"],
            "securityRequirements": [{"schemes": {"google": {"list": ["oidc"]}}}],
        }
    ],
    "signatures": [{"protected": "eyJ", "signature": "c2ln", "header": {"kid": "k"}}],
    "iconUrl": "https://api.example.com/icon.png",
}


class Row(NamedTuple):
    name: str
    v03_type: Any
    v03_doc: Any
    v1_type: Any
    v1_doc: Any
    to_v1: Callable[[Any], Any]
    from_v1: Callable[[Any], Any]


ROWS = [
    Row("text part", v03.Part, TEXT_03, v1.Part, TEXT_1, c.part_to_v1, c.part_from_v1),
    Row(
        "file part, bytes",
        v03.Part,
        {"kind": "file", "file": {"bytes": "aGk=", "name": "a.txt", "mimeType": "text/plain"}},
        v1.Part,
        {"raw": "aGk=", "filename": "a.txt", "mediaType": "text/plain"},
        c.part_to_v1,
        c.part_from_v1,
    ),
    Row(
        "file part, uri",
        v03.Part,
        {"kind": "file", "file": {"uri": "https://f.example/a.png"}, "metadata": {"x": 1}},
        v1.Part,
        {"url": "https://f.example/a.png", "metadata": {"x": 1}},
        c.part_to_v1,
        c.part_from_v1,
    ),
    Row(
        "data part, object",
        v03.Part,
        {"kind": "data", "data": {"a": [1, None]}},
        v1.Part,
        {"data": {"a": [1, None]}},
        c.part_to_v1,
        c.part_from_v1,
    ),
    Row(
        "data part, not an object (wrapped)",
        v03.Part,
        {"kind": "data", "data": {"value": [1, 2]}, "metadata": {MARKER: True}},
        v1.Part,
        {"data": [1, 2]},
        c.part_to_v1,
        c.part_from_v1,
    ),
    Row("message", v03.Message, MSG_03, v1.Message, MSG_1, c.message_to_v1, c.message_from_v1),
    Row("artifact", v03.Artifact, ART_03, v1.Artifact, ART_1, c.artifact_to_v1, c.artifact_from_v1),
    Row("task", v03.Task, TASK_03, v1.Task, TASK_1, c.task_to_v1, c.task_from_v1),
    Row(
        "status update, final",
        v03.TaskStatusUpdateEvent,
        STATUS_03,
        v1.TaskStatusUpdateEvent,
        STATUS_1,
        c.status_update_to_v1,
        c.status_update_from_v1,
    ),
    Row(
        "artifact update",
        v03.TaskArtifactUpdateEvent,
        ARTUP_03,
        v1.TaskArtifactUpdateEvent,
        ARTUP_1,
        c.artifact_update_to_v1,
        c.artifact_update_from_v1,
    ),
    *[
        Row(
            f"stream result, {name}",
            v03.StreamResult,
            doc03,
            v1.StreamResponse,
            {name: doc1},
            c.stream_event_to_v1,
            c.stream_event_from_v1,
        )
        for name, doc03, doc1 in [
            ("task", TASK_03, TASK_1),
            ("message", MSG_03, MSG_1),
            ("statusUpdate", STATUS_03, STATUS_1),
            ("artifactUpdate", ARTUP_03, ARTUP_1),
        ]
    ],
    *[
        Row(
            f"send result, {name}",
            v03.SendMessageResult,
            doc03,
            v1.SendMessageResponse,
            {name: doc1},
            c.send_result_to_v1,
            c.send_result_from_v1,
        )
        for name, doc03, doc1 in [("task", TASK_03, TASK_1), ("message", MSG_03, MSG_1)]
    ],
    Row(
        "message/send params, non-blocking with a webhook",
        v03.MessageSendParams,
        {
            "message": MSG_03,
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "historyLength": 2,
                "pushNotificationConfig": {"url": "https://h.example/hook", "token": "tok"},
                "blocking": False,
            },
            "metadata": {"m": 1},
        },
        v1.SendMessageRequest,
        {
            "message": MSG_1,
            "configuration": {
                "acceptedOutputModes": ["text/plain"],
                "taskPushNotificationConfig": {"url": "https://h.example/hook", "token": "tok"},
                "historyLength": 2,
                "returnImmediately": True,
            },
            "metadata": {"m": 1},
        },
        c.send_params_to_v1,
        c.send_params_from_v1,
    ),
    Row(
        "message/send params, blocking",
        v03.MessageSendParams,
        {"message": MSG_03, "configuration": {"blocking": True}},
        v1.SendMessageRequest,
        {"message": MSG_1, "configuration": {}},
        c.send_params_to_v1,
        c.send_params_from_v1,
    ),
    Row(
        "tasks/get params",
        v03.TaskQueryParams,
        {"id": "t1", "historyLength": 0},
        v1.GetTaskRequest,
        {"id": "t1", "historyLength": 0},
        c.get_task_params_to_v1,
        c.get_task_params_from_v1,
    ),
    Row(
        "tasks/cancel params",
        v03.TaskIdParams,
        {"id": "t1", "metadata": {"why": "x"}},
        v1.CancelTaskRequest,
        {"id": "t1", "metadata": {"why": "x"}},
        c.cancel_params_to_v1,
        c.cancel_params_from_v1,
    ),
    Row(
        "tasks/resubscribe params",
        v03.TaskIdParams,
        {"id": "t1"},
        v1.SubscribeToTaskRequest,
        {"id": "t1"},
        c.subscribe_params_to_v1,
        c.subscribe_params_from_v1,
    ),
    Row(
        "push get params, with config id",
        v03.GetTaskPushNotificationConfigParams,
        {"id": "t1", "pushNotificationConfigId": "c1"},
        v1.GetTaskPushNotificationConfigRequest,
        {"taskId": "t1", "id": "c1"},
        c.get_push_config_params_to_v1,
        c.get_push_config_params_from_v1,
    ),
    Row(
        "push get params, the task's default config",
        v03.GetTaskPushNotificationConfigParams,
        {"id": "t1"},
        v1.GetTaskPushNotificationConfigRequest,
        {"taskId": "t1", "id": "t1"},
        c.get_push_config_params_to_v1,
        c.get_push_config_params_from_v1,
    ),
    Row(
        "push list params",
        v03.ListTaskPushNotificationConfigParams,
        {"id": "t1"},
        v1.ListTaskPushNotificationConfigsRequest,
        {"taskId": "t1"},
        c.list_push_config_params_to_v1,
        c.list_push_config_params_from_v1,
    ),
    Row(
        "push delete params",
        v03.DeleteTaskPushNotificationConfigParams,
        {"id": "t1", "pushNotificationConfigId": "c1"},
        v1.DeleteTaskPushNotificationConfigRequest,
        {"taskId": "t1", "id": "c1"},
        c.delete_push_config_params_to_v1,
        c.delete_push_config_params_from_v1,
    ),
    Row(
        "push config (set params and result)",
        v03.TaskPushNotificationConfig,
        PUSH_03,
        v1.TaskPushNotificationConfig,
        PUSH_1,
        c.task_push_config_to_v1,
        c.task_push_config_from_v1,
    ),
    Row(
        "push config list result",
        list[v03.TaskPushNotificationConfig],
        [PUSH_03, {"taskId": "t2", "pushNotificationConfig": {"url": "https://b.example"}}],
        v1.ListTaskPushNotificationConfigsResponse,
        {"configs": [PUSH_1, {"taskId": "t2", "url": "https://b.example"}]},
        c.push_config_list_to_v1,
        c.push_config_list_from_v1,
    ),
    Row("agent card", v03.AgentCard, CARD_03, v1.AgentCard, CARD_1, c.card_to_v1, c.card_from_v1),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_v0_3_to_v1(row: Row) -> None:
    converted = row.to_v1(_decode(row.v03_type, row.v03_doc))
    assert isinstance(converted, row.v1_type)
    assert _json(converted) == row.v1_doc
    assert not _v1_schema_errors(converted)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_v1_to_v0_3(row: Row) -> None:
    converted = row.from_v1(_decode(row.v1_type, row.v1_doc))
    assert _json(converted) == row.v03_doc
    assert not _v03_schema_errors(converted)


def test_rows_cover_every_conversion() -> None:
    used = {fn.__name__ for row in ROWS for fn in (row.to_v1, row.from_v1)}
    enum_and_helpers = {
        "role_to_v1",
        "role_from_v1",
        "task_state_to_v1",
        "task_state_from_v1",
        "final_for_state",
        "card_v0_3_fields",
        "push_config_to_v1",  # inside send configurations and push configs
        "push_config_from_v1",
        "send_configuration_to_v1",  # inside send params
        "send_configuration_from_v1",
        "task_status_to_v1",  # inside tasks and status updates
        "task_status_from_v1",
    }
    functions = {n for n in c.__all__ if callable(getattr(c, n))}
    assert functions - used == enum_and_helpers


STATES = [
    ("submitted", v1.TaskState.SUBMITTED, False),
    ("working", v1.TaskState.WORKING, False),
    ("input-required", v1.TaskState.INPUT_REQUIRED, True),
    ("completed", v1.TaskState.COMPLETED, True),
    ("canceled", v1.TaskState.CANCELED, True),
    ("failed", v1.TaskState.FAILED, True),
    ("rejected", v1.TaskState.REJECTED, True),
    ("auth-required", v1.TaskState.AUTH_REQUIRED, False),
    ("unknown", v1.TaskState.UNSPECIFIED, False),
]


@pytest.mark.parametrize(("old", "new", "final"), STATES)
def test_task_state_table(old: str, new: v1.TaskState, final: bool) -> None:
    assert c.task_state_to_v1(v03.TaskState(old)) is new
    assert c.task_state_from_v1(new) is v03.TaskState(old)
    assert c.final_for_state(new) is final


def test_task_state_table_is_complete() -> None:
    assert {s[0] for s in STATES} == {s.value for s in v03.TaskState}
    assert {s[1] for s in STATES} == set(v1.TaskState)


def test_role_table() -> None:
    assert c.role_to_v1(v03.Role.USER) is v1.Role.USER
    assert c.role_to_v1(v03.Role.AGENT) is v1.Role.AGENT
    assert c.role_from_v1(v1.Role.USER) is v03.Role.USER
    assert c.role_from_v1(v1.Role.AGENT) is v03.Role.AGENT


# --- the specification's examples, converted -----------------------------------------------

EXAMPLES = json.loads((Path(__file__).parent / "data" / "v0_3_spec_examples.json").read_text())
CONVERTERS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "AgentCard": (c.card_to_v1, c.card_from_v1),
    "MessageSendParams": (c.send_params_to_v1, c.send_params_from_v1),
    "SendMessageResult": (c.send_result_to_v1, c.send_result_from_v1),
    "StreamResult": (c.stream_event_to_v1, c.stream_event_from_v1),
    "Task": (c.task_to_v1, c.task_from_v1),
}


def _decodable(example: dict[str, Any]) -> bool:
    try:
        _decode(getattr(v03, example["type"]), example["json"])
    except codec.DecodeError:
        return False
    return True


VALID_EXAMPLES = [e for e in EXAMPLES if _decodable(e)]


# Free-form maps: their keys are data, not field names.
_FREE_FORM = {"metadata", "data", "params", "header", "scopes"}


def _keys(node: Any) -> set[str]:
    """Every field name in a JSON document, free-form maps left out."""
    if isinstance(node, dict):
        inner = [_keys(v) for k, v in node.items() if k not in _FREE_FORM]
        return set(node) | set().union(*inner)
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node)) if node else set()
    return set()


@pytest.mark.parametrize("example", VALID_EXAMPLES, ids=lambda e: e["source"][22:38])
def test_spec_example_converts_to_valid_v1(example: dict[str, Any]) -> None:
    to_v1, from_v1 = CONVERTERS[example["type"]]
    value = _decode(getattr(v03, example["type"]), example["json"])
    converted = to_v1(value)
    assert not _v1_schema_errors(converted)
    # v0.3-only members never leak into v1.0 payloads (spec-decisions A21)
    assert not _keys(_json(converted)) & {"kind", "final", "mimeType", "bytes", "uri"}
    back = from_v1(converted)
    assert not _v03_schema_errors(back)
    assert type(back) is type(value)


def test_valid_examples_are_the_ones_the_golden_test_accepts() -> None:
    assert len(VALID_EXAMPLES) == 15


def test_spec_sample_card_in_v1() -> None:
    # v0.3 §5.7: protocolVersion 0.2.9, the main interface repeated in additionalInterfaces.
    sample = next(e for e in EXAMPLES if e["type"] == "AgentCard")["json"]
    card = _json(c.card_to_v1(_decode(v03.AgentCard, sample)))
    assert card["supportedInterfaces"] == [
        {
            "url": "https://georoute-agent.example.com/a2a/v1",
            "protocolBinding": "JSONRPC",
            "protocolVersion": "0.2",
        },
        {
            "url": "https://georoute-agent.example.com/a2a/grpc",
            "protocolBinding": "GRPC",
            "protocolVersion": "0.2",
        },
        {
            "url": "https://georoute-agent.example.com/a2a/json",
            "protocolBinding": "HTTP+JSON",
            "protocolVersion": "0.2",
        },
    ]
    assert card["capabilities"] == {
        "streaming": True,
        "pushNotifications": True,
        "extendedAgentCard": True,
    }
    assert card["securitySchemes"] == {
        "google": {
            "openIdConnectSecurityScheme": {
                "openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"
            }
        }
    }
    assert card["securityRequirements"] == [
        {"schemes": {"google": {"list": ["openid", "profile", "email"]}}}
    ]
    assert not {"url", "preferredTransport", "protocolVersion", "security"} & card.keys()


# --- lossy cases, one by one ---------------------------------------------------------------


@pytest.mark.parametrize("data", [[1, 2], "s", 3, 2.5, True, False, None, []])
def test_non_object_data_is_wrapped_with_the_sdk_marker(data: Any) -> None:
    part = v1.Part(data=data, metadata={"k": 1})
    old = c.part_from_v1(part)
    assert _json(old) == {
        "kind": "data",
        "data": {"value": data},
        "metadata": {"k": 1, MARKER: True},
    }
    assert not _v03_schema_errors(old)
    assert c.part_to_v1(old) == part


def test_data_part_compat_is_a_reserved_metadata_key() -> None:
    # A v1.0 value that already uses the key cannot be told from a wrapped one.
    looks_wrapped = v1.Part(data={"value": 1}, metadata={MARKER: True})
    assert c.part_to_v1(c.part_from_v1(looks_wrapped)) == v1.Part(data=1)
    overwritten = v1.Part(data=[1], metadata={MARKER: "mine"})
    assert c.part_to_v1(c.part_from_v1(overwritten)) == v1.Part(data=[1])
    # A wrapped object cannot occur, so {"value": {...}} is never unwrapped.
    kept = v03.DataPart(data={"value": {"a": 1}}, metadata={MARKER: True})
    assert c.part_to_v1(kept) == v1.Part(data={"value": {"a": 1}}, metadata={MARKER: True})


@pytest.mark.parametrize("content", [{"text": "hi"}, {"data": {"a": 1}}])
def test_filename_and_media_type_of_text_and_data_parts_are_dropped(content: Any) -> None:
    part = v1.Part(**content, filename="a.json", media_type="application/json")
    encoded = _json(c.part_from_v1(part))
    assert not {"filename", "mediaType", "name", "mimeType"} & _keys(encoded)
    assert c.part_to_v1(c.part_from_v1(part)) == msgspec.structs.replace(
        part, filename="", media_type=""
    )


TENANT_CASES: list[tuple[Any, Callable[[Any], Any], Callable[[Any], Any]]] = [
    (
        v1.SendMessageRequest(
            tenant="acme",
            message=v1.Message(message_id="m", role=v1.Role.USER, parts=[v1.Part(text="x")]),
        ),
        c.send_params_from_v1,
        c.send_params_to_v1,
    ),
    (v1.GetTaskRequest(tenant="acme", id="t"), c.get_task_params_from_v1, c.get_task_params_to_v1),
    (v1.CancelTaskRequest(tenant="acme", id="t"), c.cancel_params_from_v1, c.cancel_params_to_v1),
    (
        v1.SubscribeToTaskRequest(tenant="acme", id="t"),
        c.subscribe_params_from_v1,
        c.subscribe_params_to_v1,
    ),
    (
        v1.GetTaskPushNotificationConfigRequest(tenant="acme", task_id="t", id="c"),
        c.get_push_config_params_from_v1,
        c.get_push_config_params_to_v1,
    ),
    (
        v1.ListTaskPushNotificationConfigsRequest(tenant="acme", task_id="t"),
        c.list_push_config_params_from_v1,
        c.list_push_config_params_to_v1,
    ),
    (
        v1.DeleteTaskPushNotificationConfigRequest(tenant="acme", task_id="t", id="c"),
        c.delete_push_config_params_from_v1,
        c.delete_push_config_params_to_v1,
    ),
    (
        v1.TaskPushNotificationConfig(tenant="acme", task_id="t", url="https://h.example"),
        c.task_push_config_from_v1,
        c.task_push_config_to_v1,
    ),
]


@pytest.mark.parametrize(
    ("value", "from_v1", "to_v1"), TENANT_CASES, ids=[type(x[0]).__name__ for x in TENANT_CASES]
)
def test_tenant_is_dropped(value: Any, from_v1: Any, to_v1: Any) -> None:
    assert "tenant" not in _keys(_json(from_v1(value)))
    assert to_v1(from_v1(value)) == msgspec.structs.replace(value, tenant="")


def test_push_list_paging_is_dropped() -> None:
    request = v1.ListTaskPushNotificationConfigsRequest(task_id="t", page_size=5, page_token="p")
    assert _json(c.list_push_config_params_from_v1(request)) == {"id": "t"}
    response = v1.ListTaskPushNotificationConfigsResponse(
        configs=[v1.TaskPushNotificationConfig(url="https://h.example")], next_page_token="next"
    )
    assert _json(c.push_config_list_from_v1(response)) == [
        {"taskId": "", "pushNotificationConfig": {"url": "https://h.example"}}
    ]


def test_only_the_first_push_scheme_survives() -> None:
    auth = v03.PushNotificationAuthenticationInfo(schemes=["Bearer", "Basic"], credentials="x")
    config = v03.PushNotificationConfig(url="https://h.example", authentication=auth)
    converted = c.push_config_to_v1(config)
    assert converted.authentication == v1.AuthenticationInfo(scheme="Bearer", credentials="x")
    assert c.push_config_from_v1(
        converted
    ).authentication == v03.PushNotificationAuthenticationInfo(schemes=["Bearer"], credentials="x")


def test_push_auth_without_a_scheme_is_dropped_whole() -> None:
    # Decoding refuses it; a value built in code converts without its credentials.
    auth = v03.PushNotificationAuthenticationInfo(schemes=[], credentials="x")
    config = v03.PushNotificationConfig(url="https://h.example", authentication=auth)
    assert c.push_config_to_v1(config).authentication is None


def test_send_configuration_webhook_loses_task_id_and_tenant() -> None:
    push = v1.TaskPushNotificationConfig(tenant="acme", task_id="t", url="https://h.example")
    config = v1.SendMessageConfiguration(task_push_notification_config=push)
    back = c.send_configuration_to_v1(c.send_configuration_from_v1(config))
    assert back.task_push_notification_config == v1.TaskPushNotificationConfig(
        url="https://h.example"
    )


def test_final_is_dropped_and_recomputed() -> None:
    event = v03.TaskStatusUpdateEvent(
        task_id="t", context_id="c", status=v03.TaskStatus(state=v03.TaskState.WORKING), final=True
    )
    converted = c.status_update_to_v1(event)
    assert "final" not in _keys(_json(converted))
    assert c.status_update_from_v1(converted).final is False  # working does not end a stream
    assert c.status_update_from_v1(converted, final=True).final is True
    streamed = c.stream_event_from_v1(v1.StreamResponse(status_update=converted), final=True)
    assert isinstance(streamed, v03.TaskStatusUpdateEvent)
    assert streamed.final is True


@pytest.mark.parametrize(
    ("params", "to_v1"),
    [
        (v03.TaskQueryParams(id="t", metadata={"a": 1}), c.get_task_params_to_v1),
        (v03.TaskIdParams(id="t", metadata={"a": 1}), c.subscribe_params_to_v1),
        (
            v03.GetTaskPushNotificationConfigParams(id="t", metadata={"a": 1}),
            c.get_push_config_params_to_v1,
        ),
        (
            v03.ListTaskPushNotificationConfigParams(id="t", metadata={"a": 1}),
            c.list_push_config_params_to_v1,
        ),
        (
            v03.DeleteTaskPushNotificationConfigParams(
                id="t", push_notification_config_id="c", metadata={"a": 1}
            ),
            c.delete_push_config_params_to_v1,
        ),
    ],
    ids=["tasks/get", "tasks/resubscribe", "push get", "push list", "push delete"],
)
def test_params_metadata_without_a_v1_place_is_dropped(params: Any, to_v1: Any) -> None:
    assert "metadata" not in _keys(_json(to_v1(params)))
    # ... while tasks/cancel keeps it
    assert c.cancel_params_to_v1(v03.TaskIdParams(id="t", metadata={"a": 1})).metadata == {"a": 1}


def test_state_transition_history_is_dropped() -> None:
    card = _decode(v03.AgentCard, {**CARD_03, "capabilities": {"stateTransitionHistory": True}})
    assert _json(c.card_to_v1(card))["capabilities"] == {"extendedAgentCard": True}
    assert c.card_from_v1(c.card_to_v1(card)).capabilities.state_transition_history is None


def test_protocol_version_keeps_major_minor() -> None:
    card = _decode(v03.AgentCard, {**CARD_03, "protocolVersion": "0.3.2"})
    converted = c.card_to_v1(card)
    assert {i.protocol_version for i in converted.supported_interfaces} == {"0.3"}
    assert c.card_from_v1(converted).protocol_version == "0.3.0"


def _card_with(*interfaces: tuple[str, str, str, str]) -> v1.AgentCard:
    card = _decode(v1.AgentCard, CARD_1)
    return msgspec.structs.replace(
        card,
        supported_interfaces=[
            v1.AgentInterface(url=u, protocol_binding=b, protocol_version=pv, tenant=tenant)
            for u, b, pv, tenant in interfaces
        ],
    )


def test_v0_3_card_keeps_only_0_x_interfaces() -> None:
    card = _card_with(
        ("https://a.example/rpc", "JSONRPC", "1.0", ""),
        ("https://a.example/rpc", "JSONRPC", "0.3", "acme"),
        ("https://a.example/rest", "HTTP+JSON", "0.3", ""),
        ("https://a.example/rest", "HTTP+JSON", "1.0", ""),
        ("https://a.example/rest", "HTTP+JSON", "0.3", "other"),  # same url and binding
    )
    old = _json(c.card_from_v1(card))
    assert old["url"] == "https://a.example/rpc"
    assert old["preferredTransport"] == "JSONRPC"
    assert old["protocolVersion"] == "0.3.0"
    assert old["additionalInterfaces"] == [
        {"url": "https://a.example/rpc", "transport": "JSONRPC"},
        {"url": "https://a.example/rest", "transport": "HTTP+JSON"},
    ]
    assert "tenant" not in _keys(old)
    # the v1.0 entries are gone for good
    back = c.card_to_v1(c.card_from_v1(card))
    assert [(i.url, i.protocol_version) for i in back.supported_interfaces] == [
        ("https://a.example/rpc", "0.3"),
        ("https://a.example/rest", "0.3"),
    ]


def test_v0_3_card_falls_back_to_the_first_interface() -> None:
    card = _card_with(
        ("https://a.example/rpc", "JSONRPC", "1.0", ""),
        ("https://a.example/rest", "HTTP+JSON", "1.0", ""),
    )
    old = _json(c.card_from_v1(card))
    assert (old["url"], old["preferredTransport"], old["protocolVersion"]) == (
        "https://a.example/rpc",
        "JSONRPC",
        "0.3.0",
    )
    assert "additionalInterfaces" not in old


def test_card_without_interfaces_built_in_code_does_not_raise() -> None:
    card = msgspec.structs.replace(_decode(v1.AgentCard, CARD_1), supported_interfaces=[])
    old = c.card_from_v1(card)
    assert (old.url, old.preferred_transport, old.additional_interfaces) == ("", "JSONRPC", None)


OAUTH_FLOWS_03 = {
    "authorizationCode": {
        "authorizationUrl": "https://auth.example/authorize",
        "tokenUrl": "https://auth.example/token",
        "scopes": {"read": "Read"},
    },
    "clientCredentials": {"tokenUrl": "https://auth.example/token", "scopes": {}},
    "implicit": {"authorizationUrl": "https://auth.example/authorize", "scopes": {}},
    "password": {"tokenUrl": "https://auth.example/token", "scopes": {}},
}


def test_several_oauth_flows_become_one_scheme_per_flow() -> None:
    card = _decode(
        v03.AgentCard,
        {
            **CARD_03,
            "securitySchemes": {
                "oauth": {"type": "oauth2", "description": "d", "flows": OAUTH_FLOWS_03},
                "oauth.implicit": {"type": "mutualTLS"},  # takes the name a flow would get
                "key": {"type": "apiKey", "in": "query", "name": "k"},
            },
            "security": [{"oauth": ["read"], "key": []}],
            "skills": [{**CARD_03["skills"][0], "security": [{"oauth": []}]}],
        },
    )
    converted = c.card_to_v1(card)
    schemes = converted.security_schemes
    assert list(schemes) == [
        "oauth",
        "oauth.clientCredentials",
        "oauth.implicit.2",
        "oauth.password",
        "oauth.implicit",
        "key",
    ]
    assert schemes["oauth"].oauth2_security_scheme is not None
    assert schemes["oauth"].oauth2_security_scheme.flows.authorization_code is not None
    password = schemes["oauth.password"].oauth2_security_scheme
    assert password is not None
    assert password.description == "d"
    assert password.flows.password is not None
    assert schemes["oauth.implicit"].mtls_security_scheme is not None
    # "any one flow will do": one alternative per flow, each still with the api key
    oauth_names = ["oauth", "oauth.clientCredentials", "oauth.implicit.2", "oauth.password"]
    assert [r.schemes for r in converted.security_requirements] == [
        {name: v1.StringList(list=["read"]), "key": v1.StringList()} for name in oauth_names
    ]
    assert [r.schemes for r in converted.skills[0].security_requirements] == [
        {name: v1.StringList()} for name in oauth_names
    ]
    assert not _v1_schema_errors(converted)
    # Back in v0.3, the split stays: four one-flow schemes.
    back = c.card_from_v1(converted)
    assert back.security_schemes is not None
    assert len(back.security_schemes) == 6


def test_oauth_scheme_without_flows_is_dropped_but_still_required() -> None:
    card = _decode(
        v03.AgentCard,
        {
            **CARD_03,
            "securitySchemes": {"oauth": {"type": "oauth2", "flows": {}}},
            "security": [{"oauth": []}],
        },
    )
    converted = c.card_to_v1(card)
    assert converted.security_schemes == {}
    # unsatisfiable, never open: the requirement still names the scheme
    assert [r.schemes for r in converted.security_requirements] == [{"oauth": v1.StringList()}]


def test_device_code_and_pkce_have_no_v0_3_form() -> None:
    device = v1.SecurityScheme(
        oauth2_security_scheme=v1.OAuth2SecurityScheme(
            description="tv",
            flows=v1.OAuthFlows(
                device_code=v1.DeviceCodeOAuthFlow(
                    device_authorization_url="https://auth.example/device",
                    token_url="https://auth.example/token",
                    scopes={},
                )
            ),
        )
    )
    pkce = v1.SecurityScheme(
        oauth2_security_scheme=v1.OAuth2SecurityScheme(
            flows=v1.OAuthFlows(
                authorization_code=v1.AuthorizationCodeOAuthFlow(
                    authorization_url="https://auth.example/authorize",
                    token_url="https://auth.example/token",
                    scopes={},
                    pkce_required=True,
                )
            ),
        )
    )
    card = msgspec.structs.replace(
        _decode(v1.AgentCard, CARD_1), security_schemes={"device": device, "pkce": pkce}
    )
    old = c.card_from_v1(card)
    encoded = _json(old)
    assert encoded["securitySchemes"]["device"] == {
        "type": "oauth2",
        "description": "tv",
        "flows": {},
    }
    assert "pkceRequired" not in _keys(encoded)
    assert not _v03_schema_errors(old)
    back = c.card_to_v1(old)
    assert "device" not in back.security_schemes
    flow = back.security_schemes["pkce"].oauth2_security_scheme
    assert flow is not None
    assert flow.flows.authorization_code is not None
    assert flow.flows.authorization_code.pkce_required is False


@pytest.mark.parametrize(
    ("written", "read_back"),
    [
        ("2025-04-02T16:59:25.331844", "2025-04-02T16:59:25.331844Z"),  # the spec's, no zone
        ("2024-03-15T10:10:00+02:00", "2024-03-15T08:10:00Z"),
        ("2024-03-15T10:10:00Z", "2024-03-15T10:10:00Z"),
    ],
)
def test_timestamps_come_back_in_utc(written: str, read_back: str) -> None:
    status = _decode(v03.TaskStatus, {"state": "working", "timestamp": written})
    converted = c.task_status_to_v1(status)
    assert converted.timestamp is not None
    assert converted.timestamp.tzinfo is dt.UTC
    assert _json(c.task_status_from_v1(converted))["timestamp"] == read_back


@pytest.mark.parametrize(
    ("blocking", "return_immediately", "back"),
    [(None, False, True), (True, False, True), (False, True, False)],
)
def test_blocking(blocking: bool | None, return_immediately: bool, back: bool) -> None:
    converted = c.send_configuration_to_v1(v03.MessageSendConfiguration(blocking=blocking))
    assert converted.return_immediately is return_immediately
    assert c.send_configuration_from_v1(converted).blocking is back


def test_push_config_id_equal_to_the_task_id_comes_back_absent() -> None:
    params = v03.GetTaskPushNotificationConfigParams(id="t", push_notification_config_id="t")
    converted = c.get_push_config_params_to_v1(params)
    assert (converted.task_id, converted.id) == ("t", "t")
    assert c.get_push_config_params_from_v1(converted).push_notification_config_id is None


def test_explicit_defaults_come_back_absent() -> None:
    message = _decode(
        v03.Message,
        {**MSG_03, "metadata": {}, "extensions": [], "contextId": "", "referenceTaskIds": []},
    )
    assert _json(c.message_from_v1(c.message_to_v1(message))) == {
        k: v
        for k, v in MSG_03.items()
        if k not in {"metadata", "extensions", "contextId", "referenceTaskIds"}
    }
    update = _decode(v03.StreamResult, {**ARTUP_03, "append": False, "lastChunk": False})
    assert _json(c.stream_event_from_v1(c.stream_event_to_v1(update))) == {
        k: v for k, v in ARTUP_03.items() if k not in {"append", "lastChunk"}
    }
    extension = {"uri": "https://e.example", "required": False}
    card = _decode(v03.AgentCard, {**CARD_03, "capabilities": {"extensions": [extension]}})
    assert _json(c.card_from_v1(c.card_to_v1(card)))["capabilities"] == {
        "extensions": [{"uri": "https://e.example"}]
    }


def test_unspecified_role_becomes_user() -> None:
    # No valid Message holds it; the function is total all the same.
    assert c.role_from_v1(v1.Role.UNSPECIFIED) is v03.Role.USER


def test_card_interfaces_are_normalised() -> None:
    without = {k: v for k, v in CARD_03.items() if k not in {"preferredTransport"}}
    back = _json(c.card_from_v1(c.card_to_v1(_decode(v03.AgentCard, without))))
    assert back["preferredTransport"] == "JSONRPC"
    # the main interface missing from additionalInterfaces is added, first
    only_rest = {**CARD_03, "additionalInterfaces": [CARD_03["additionalInterfaces"][1]]}
    back = _json(c.card_from_v1(c.card_to_v1(_decode(v03.AgentCard, only_rest))))
    assert back["additionalInterfaces"] == CARD_03["additionalInterfaces"]
    # just the main interface: no list at all
    only_main = {**CARD_03, "additionalInterfaces": [CARD_03["additionalInterfaces"][0]]}
    back = _json(c.card_from_v1(c.card_to_v1(_decode(v03.AgentCard, only_main))))
    assert "additionalInterfaces" not in back


# --- the hybrid card's legacy fields -------------------------------------------------------


def test_card_v0_3_fields() -> None:
    card = _card_with(
        ("https://a.example/rpc", "JSONRPC", "1.0", ""),
        ("https://a.example/rpc", "JSONRPC", "0.3", ""),
        ("https://a.example/rest", "HTTP+JSON", "0.3", ""),
    )
    fields = c.card_v0_3_fields(card)
    assert fields == {
        "url": "https://a.example/rpc",
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [
            {"url": "https://a.example/rpc", "transport": "JSONRPC"},
            {"url": "https://a.example/rest", "transport": "HTTP+JSON"},
        ],
        "supportsAuthenticatedExtendedCard": True,
    }
    json.dumps(fields)  # JSON-ready as it is
    unset = msgspec.structs.replace(card, capabilities=v1.AgentCapabilities())
    assert "supportsAuthenticatedExtendedCard" not in c.card_v0_3_fields(unset)


def test_hybrid_card_without_schemes_is_a_valid_v0_3_card() -> None:
    card = msgspec.structs.replace(
        _decode(v1.AgentCard, CARD_1), security_schemes={}, security_requirements=[], skills=[]
    )
    hybrid = {**_json(card), **c.card_v0_3_fields(card)}
    assert not schema_errors("AgentCard", hybrid)


# --- properties ----------------------------------------------------------------------------

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _walk(value: Any, fix: Callable[[Any], Any]) -> Any:
    """Rebuild ``value`` bottom-up, passing every struct through ``fix``."""
    if isinstance(value, msgspec.Struct):
        changes = {name: _walk(getattr(value, name), fix) for name in value.__struct_fields__}
        return fix(msgspec.structs.replace(value, **changes))
    if isinstance(value, list):
        return [_walk(item, fix) for item in value]
    if isinstance(value, dict):
        return {key: _walk(item, fix) for key, item in value.items()}
    return value


def _dedupe_interfaces(items: list[Any], key: Callable[[Any], tuple[str, str]]) -> list[Any]:
    seen: set[tuple[str, str]] = set()
    out = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            out.append(item)
    return out


def _shared_v1(value: Any) -> Any:
    """The v1.0 value without the features v0.3 cannot carry (the lossy cases above)."""
    replace = msgspec.structs.replace
    if "tenant" in value.__struct_fields__:
        value = replace(value, tenant="")
    if isinstance(value, v1.Part):
        data_part = value.data is not msgspec.UNSET
        if isinstance(value.text, str) or data_part:
            value = replace(value, filename="", media_type="")
        if data_part and MARKER in value.metadata:
            data = value.data
            reserved = not isinstance(data, dict) or (
                value.metadata[MARKER] is True
                and data.keys() == {"value"}
                and not isinstance(data["value"], dict)
            )
            if reserved:
                value = replace(
                    value, metadata={k: v for k, v in value.metadata.items() if k != MARKER}
                )
    elif isinstance(value, v1.ListTaskPushNotificationConfigsRequest):
        value = replace(value, page_size=0, page_token="")
    elif isinstance(value, v1.ListTaskPushNotificationConfigsResponse):
        value = replace(value, next_page_token="")
    elif isinstance(value, v1.SendMessageConfiguration):
        push = value.task_push_notification_config
        if push is not None:
            value = replace(value, task_push_notification_config=replace(push, task_id=""))
    elif isinstance(value, v1.AgentInterface):
        value = replace(value, protocol_version="0.3")
    elif isinstance(value, v1.AgentCard):
        interfaces = _dedupe_interfaces(
            value.supported_interfaces, lambda i: (i.url, i.protocol_binding)
        )
        value = replace(value, supported_interfaces=interfaces)
    elif isinstance(value, v1.AuthorizationCodeOAuthFlow):
        value = replace(value, pkce_required=False)
    elif isinstance(value, v1.OAuthFlows) and value.device_code is not None:
        device = value.device_code
        value = v1.OAuthFlows(
            client_credentials=v1.ClientCredentialsOAuthFlow(
                token_url=device.token_url, refresh_url=device.refresh_url, scopes=device.scopes
            )
        )
    return value


def _valid_api_key_location(value: Any) -> Any:
    """v1.0 does not constrain ``location``; the v0.3 schema does."""
    if isinstance(value, v1.APIKeySecurityScheme):
        locations = ["query", "header", "cookie"]
        return msgspec.structs.replace(value, location=locations[len(value.location) % 3])
    return value


# Optional v0.3 members whose empty value survives: the v1.0 twin keeps presence, or the
# member is one side of FileContent's exactly-one choice (an empty URL is still a URL).
_KEEPS_EMPTY = {
    (v03.AgentCard, "documentation_url"),
    (v03.AgentCard, "icon_url"),
    (v03.FileContent, "uri"),
}


def _lossless_v03(value: Any) -> Any:
    """The v0.3 value without lossy features, written the way ``convert`` writes v0.3."""
    replace = msgspec.structs.replace
    empties = {
        f.name: None
        for f in msgspec.structs.fields(value)
        if f.default is None
        and (type(value), f.name) not in _KEEPS_EMPTY
        and isinstance(getattr(value, f.name), str | list | dict)
        and not getattr(value, f.name)
    }
    if empties:
        value = replace(value, **empties)
    if isinstance(value, v03.TaskArtifactUpdateEvent):
        value = replace(value, append=value.append or None, last_chunk=value.last_chunk or None)
    elif isinstance(value, v03.AgentExtension):
        value = replace(value, required=value.required or None)
    elif isinstance(value, v03.TaskStatusUpdateEvent):
        final = c.final_for_state(c.task_state_to_v1(value.status.state))
        value = replace(value, final=final)
    elif isinstance(value, v03.MessageSendConfiguration) and value.blocking is None:
        value = replace(value, blocking=True)
    elif isinstance(value, v03.PushNotificationAuthenticationInfo):
        value = replace(value, schemes=value.schemes[:1])
    elif isinstance(value, v03.AgentCapabilities):
        value = replace(value, state_transition_history=None)
    elif isinstance(value, v03.OAuthFlows):
        names = ["authorization_code", "client_credentials", "implicit", "password"]
        first = next((n for n in names if getattr(value, n) is not None), None)
        value = v03.OAuthFlows(**({first: getattr(value, first)} if first else {}))
    elif isinstance(value, v03.TaskStatus) and value.timestamp is not None:
        if value.timestamp.tzinfo is None:
            value = replace(value, timestamp=value.timestamp.replace(tzinfo=dt.UTC))
    elif isinstance(value, v03.AgentCard):
        transport = value.preferred_transport or "JSONRPC"
        main = v03.AgentInterface(url=value.url, transport=transport)
        interfaces = _dedupe_interfaces(
            [main, *(value.additional_interfaces or [])], lambda i: (i.url, i.transport)
        )
        schemes = {
            name: scheme
            for name, scheme in (value.security_schemes or {}).items()
            if not isinstance(scheme, v03.OAuth2SecurityScheme) or scheme.flows != v03.OAuthFlows()
        }
        value = replace(
            value,
            protocol_version="0.3.0",
            preferred_transport=transport,
            additional_interfaces=interfaces if len(interfaces) > 1 else None,
            security_schemes=schemes or None,
        )
    return value


def _no_metadata(value: Any) -> Any:
    return msgspec.structs.replace(value, metadata=None)


def _default_config_id(value: Any) -> Any:
    value = _no_metadata(value)
    if value.push_notification_config_id == value.id:
        value = msgspec.structs.replace(value, push_notification_config_id=None)
    return value


def _no_task_id(value: Any) -> Any:
    return msgspec.structs.replace(value, task_id="")


class Pair(NamedTuple):
    v1_type: Any
    v03_type: Any
    to_v1: Callable[[Any], Any]
    from_v1: Callable[[Any], Any]
    v03_fix: Callable[[Any], Any] = lambda value: value
    v1_fix: Callable[[Any], Any] = lambda value: value


PAIRS = {
    "Part": Pair(v1.Part, v03.Part, c.part_to_v1, c.part_from_v1),
    "Message": Pair(v1.Message, v03.Message, c.message_to_v1, c.message_from_v1),
    "Artifact": Pair(v1.Artifact, v03.Artifact, c.artifact_to_v1, c.artifact_from_v1),
    "TaskStatus": Pair(v1.TaskStatus, v03.TaskStatus, c.task_status_to_v1, c.task_status_from_v1),
    "Task": Pair(v1.Task, v03.Task, c.task_to_v1, c.task_from_v1),
    "TaskStatusUpdateEvent": Pair(
        v1.TaskStatusUpdateEvent,
        v03.TaskStatusUpdateEvent,
        c.status_update_to_v1,
        c.status_update_from_v1,
    ),
    "TaskArtifactUpdateEvent": Pair(
        v1.TaskArtifactUpdateEvent,
        v03.TaskArtifactUpdateEvent,
        c.artifact_update_to_v1,
        c.artifact_update_from_v1,
    ),
    "StreamResponse": Pair(
        v1.StreamResponse, v03.StreamResult, c.stream_event_to_v1, c.stream_event_from_v1
    ),
    "SendMessageResponse": Pair(
        v1.SendMessageResponse, v03.SendMessageResult, c.send_result_to_v1, c.send_result_from_v1
    ),
    "SendMessageConfiguration": Pair(
        v1.SendMessageConfiguration,
        v03.MessageSendConfiguration,
        c.send_configuration_to_v1,
        c.send_configuration_from_v1,
    ),
    "SendMessageRequest": Pair(
        v1.SendMessageRequest, v03.MessageSendParams, c.send_params_to_v1, c.send_params_from_v1
    ),
    "GetTaskRequest": Pair(
        v1.GetTaskRequest,
        v03.TaskQueryParams,
        c.get_task_params_to_v1,
        c.get_task_params_from_v1,
        v03_fix=_no_metadata,
    ),
    "CancelTaskRequest": Pair(
        v1.CancelTaskRequest, v03.TaskIdParams, c.cancel_params_to_v1, c.cancel_params_from_v1
    ),
    "SubscribeToTaskRequest": Pair(
        v1.SubscribeToTaskRequest,
        v03.TaskIdParams,
        c.subscribe_params_to_v1,
        c.subscribe_params_from_v1,
        v03_fix=_no_metadata,
    ),
    "GetTaskPushNotificationConfigRequest": Pair(
        v1.GetTaskPushNotificationConfigRequest,
        v03.GetTaskPushNotificationConfigParams,
        c.get_push_config_params_to_v1,
        c.get_push_config_params_from_v1,
        v03_fix=_default_config_id,
    ),
    "ListTaskPushNotificationConfigsRequest": Pair(
        v1.ListTaskPushNotificationConfigsRequest,
        v03.ListTaskPushNotificationConfigParams,
        c.list_push_config_params_to_v1,
        c.list_push_config_params_from_v1,
        v03_fix=_no_metadata,
    ),
    "DeleteTaskPushNotificationConfigRequest": Pair(
        v1.DeleteTaskPushNotificationConfigRequest,
        v03.DeleteTaskPushNotificationConfigParams,
        c.delete_push_config_params_to_v1,
        c.delete_push_config_params_from_v1,
        v03_fix=_no_metadata,
    ),
    "TaskPushNotificationConfig": Pair(
        v1.TaskPushNotificationConfig,
        v03.TaskPushNotificationConfig,
        c.task_push_config_to_v1,
        c.task_push_config_from_v1,
    ),
    "PushNotificationConfig": Pair(
        v1.TaskPushNotificationConfig,
        v03.PushNotificationConfig,
        c.push_config_to_v1,
        c.push_config_from_v1,
        v1_fix=_no_task_id,
    ),
    "ListTaskPushNotificationConfigsResponse": Pair(
        v1.ListTaskPushNotificationConfigsResponse,
        list[v03.TaskPushNotificationConfig],
        c.push_config_list_to_v1,
        c.push_config_list_from_v1,
    ),
    "AgentCard": Pair(v1.AgentCard, v03.AgentCard, c.card_to_v1, c.card_from_v1),
}


def _shared(pair: Pair, value: Any) -> Any:
    return pair.v1_fix(_walk(value, _shared_v1))


def _lossless(pair: Pair, value: Any) -> Any:
    return pair.v03_fix(_walk(value, _lossless_v03))


@pytest.mark.parametrize("pair", PAIRS.values(), ids=list(PAIRS))
@SETTINGS
@given(data=st.data())
def test_v1_v0_3_v1_is_the_identity_on_the_shared_subset(pair: Pair, data: st.DataObject) -> None:
    value = _shared(pair, data.draw(strategy_for(pair.v1_type)))
    old = pair.from_v1(value)
    assert pair.to_v1(old) == value
    # what we write in v0.3 has no lossy feature: the two subsets correspond
    assert _lossless(pair, old) == old


@pytest.mark.parametrize("pair", PAIRS.values(), ids=list(PAIRS))
@SETTINGS
@given(data=st.data())
def test_v0_3_v1_v0_3_is_the_identity_without_lossy_features(
    pair: Pair, data: st.DataObject
) -> None:
    value = _lossless(pair, data.draw(strategy_for(pair.v03_type)))
    new = pair.to_v1(value)
    assert pair.from_v1(new) == value
    assert _shared(pair, new) == new


@pytest.mark.parametrize("pair", PAIRS.values(), ids=list(PAIRS))
@SETTINGS
@given(data=st.data())
def test_from_v1_is_total_and_writes_valid_v0_3(pair: Pair, data: st.DataObject) -> None:
    value = _walk(data.draw(strategy_for(pair.v1_type)), _valid_api_key_location)
    old = pair.from_v1(value)
    encoded = codec.encode(old)
    # the v0.3 decoder (stricter than the schema) reads it back unchanged ...
    assert codec.decode(encoded, pair.v03_type) == old
    # ... and the v0.3 schema accepts it
    assert not _v03_schema_errors(old)


@pytest.mark.parametrize("pair", PAIRS.values(), ids=list(PAIRS))
@SETTINGS
@given(data=st.data())
def test_to_v1_is_total_and_writes_valid_v1(pair: Pair, data: st.DataObject) -> None:
    value = data.draw(strategy_for(pair.v03_type))
    new = pair.to_v1(value)
    assert codec.decode(codec.encode(new), pair.v1_type) == new
    assert not _v1_schema_errors(new)


def test_pairs_cover_every_conversion_with_a_v1_struct() -> None:
    covered = {fn.__name__ for pair in PAIRS.values() for fn in (pair.to_v1, pair.from_v1)}
    functions = {n for n in c.__all__ if callable(getattr(c, n))}
    enums_and_card_fields = {
        "role_to_v1",
        "role_from_v1",
        "task_state_to_v1",
        "task_state_from_v1",
        "final_for_state",
        "card_v0_3_fields",
    }
    assert functions - covered == enums_and_card_fields
