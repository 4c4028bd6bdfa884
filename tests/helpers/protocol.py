"""Shared values for the ServerProtocol suites: a configured protocol, requests, v1.0 results.

The protocol is driven only through `HttpRequest` values; these helpers build them and the
v1.0 results that a runtime would hand back, so that each suite reads as a table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable
from typing import Any

from a2a_core import types as t
from a2a_core.call import Call
from a2a_core.http import Headers, HttpRequest, HttpResponse
from a2a_core.protocol import ProtocolOptions, ServerProtocol

LAST_MODIFIED = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
LAST_MODIFIED_TEXT = "Thu, 02 Jan 2025 03:04:05 GMT"
BASE = "https://agent.example/a2a"
TIMESTAMP = dt.datetime(2025, 1, 2, 3, 4, 5, tzinfo=dt.UTC)

ALL_CAPABILITIES = t.AgentCapabilities(
    streaming=True, push_notifications=True, extended_agent_card=True
)
CARD = t.AgentCard(
    name="Echo",
    description="Repeats what it hears.",
    supported_interfaces=[],
    version="1.0.0",
    capabilities=ALL_CAPABILITIES,
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[t.AgentSkill(id="echo", name="Echo", description="Echoes", tags=["echo"])],
)
#: A card without any optional capability, for the gating errors.
BARE_CARD = t.AgentCard(
    name="Bare",
    description="No optional capability.",
    supported_interfaces=[],
    version="1.0.0",
    capabilities=t.AgentCapabilities(),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)


_OPTION_FIELDS = {f.name for f in dataclasses.fields(ProtocolOptions)}


def make_protocol(card: t.AgentCard = CARD, **options: Any) -> ServerProtocol:
    """A protocol serving everything at the mount root (JSON-RPC at ``/``, REST at ``/``);
    keywords that name a `ProtocolOptions` field go into its ``options``."""
    options.setdefault("base_url", BASE)
    options.setdefault("extended_card_configured", True)
    options.setdefault("last_modified", LAST_MODIFIED)
    protocol_options = {k: options.pop(k) for k in list(options) if k in _OPTION_FIELDS}
    return ServerProtocol(card, options=ProtocolOptions(**protocol_options), **options)


def rpc(
    body: bytes | dict[str, Any],
    *headers: tuple[str, str],
    path: str = "/",
    **fields: Any,
) -> HttpRequest:
    """A JSON-RPC POST; a dict body is encoded compactly."""
    raw = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
    return HttpRequest("POST", path, headers=Headers(headers), body=raw, **fields)


def envelope(method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
    """A JSON-RPC request object (params omitted when ``None``)."""
    doc: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        doc["params"] = params
    return doc


def http(
    method: str,
    path: str,
    body: bytes | dict[str, Any] = b"",
    *headers: tuple[str, str],
    query: str = "",
    **fields: Any,
) -> HttpRequest:
    """Any request; a dict body is encoded compactly."""
    raw = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
    return HttpRequest(method, path, query=query, headers=Headers(headers), body=raw, **fields)


def as_call(outcome: HttpResponse | Call) -> Call:
    """The outcome, which must be a Call."""
    assert isinstance(outcome, Call), outcome
    return outcome


def as_response(outcome: HttpResponse | Call) -> HttpResponse:
    """The outcome, which must be a ready HttpResponse."""
    assert isinstance(outcome, HttpResponse), outcome
    return outcome


def body_of(response: HttpResponse) -> Any:
    """The JSON body of a response."""
    return json.loads(response.body)


def header_names(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The names of header pairs, in order."""
    return [name for name, _ in headers]


# --- v1.0 values: what a client sends and what a runtime answers -----------------------------

USER_MESSAGE = t.Message(
    message_id="m-1", role=t.Role.USER, parts=[t.Part(text="hi")], context_id="c-1"
)
AGENT_MESSAGE = t.Message(
    message_id="m-2", role=t.Role.AGENT, parts=[t.Part(text="hello")], context_id="c-1"
)
TASK = t.Task(
    id="t-1",
    context_id="c-1",
    status=t.TaskStatus(state=t.TaskState.COMPLETED, timestamp=TIMESTAMP),
    artifacts=[t.Artifact(artifact_id="a-1", parts=[t.Part(text="hello")])],
    history=[USER_MESSAGE],
)
WORKING_TASK = t.Task(id="t-1", context_id="c-1", status=t.TaskStatus(state=t.TaskState.WORKING))
PUSH_CONFIG = t.TaskPushNotificationConfig(
    id="p-1",
    task_id="t-1",
    url="https://hook.example/h",
    token="tok",
    authentication=t.AuthenticationInfo(scheme="Bearer", credentials="secret"),
)
EXTENDED_CARD = t.AgentCard(
    name="Echo+",
    description="For members.",
    supported_interfaces=[
        t.AgentInterface(url=BASE, protocol_binding="JSONRPC", protocol_version="0.3")
    ],
    version="1.0.0",
    capabilities=t.AgentCapabilities(streaming=True),
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    skills=[],
)


# --- valid requests of every method, as JSON documents (goldens start here, fuzzing mutates) --

#: A v1.0 message as a client sends it, with one part of each kind.
V1_MESSAGE_JSON: dict[str, Any] = {
    "messageId": "m-1",
    "contextId": "c-1",
    "role": "ROLE_USER",
    "parts": [
        {"text": "hi"},
        {"data": {"k": [1, 2]}},
        {"url": "https://files.example/f.png", "mediaType": "image/png", "filename": "f.png"},
        {"raw": "aGk="},
    ],
    "metadata": {"x": 1},
}
#: The same message in the v0.3 JSON-RPC dialect.
V03_MESSAGE_JSON: dict[str, Any] = {
    "kind": "message",
    "messageId": "m-1",
    "contextId": "c-1",
    "role": "user",
    "parts": [
        {"kind": "text", "text": "hi"},
        {"kind": "data", "data": {"k": [1, 2]}},
        {
            "kind": "file",
            "file": {
                "uri": "https://files.example/f.png",
                "mimeType": "image/png",
                "name": "f.png",
            },
        },
        {"kind": "file", "file": {"bytes": "aGk="}},
    ],
    "metadata": {"x": 1},
}
#: The same message in the v0.3 REST dialect (the v0.3 proto's ProtoJSON).
V03_REST_MESSAGE_JSON: dict[str, Any] = {
    "messageId": "m-1",
    "contextId": "c-1",
    "role": "ROLE_USER",
    "content": [
        {"text": "hi"},
        {"data": {"data": {"k": [1, 2]}}},
        {"file": {"fileWithUri": "https://files.example/f.png", "mimeType": "image/png"}},
    ],
}
V1_SEND_PARAMS: dict[str, Any] = {
    "message": V1_MESSAGE_JSON,
    "configuration": {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 2,
        "returnImmediately": True,
        "taskPushNotificationConfig": {
            "url": "https://hook.example/h",
            "token": "tok",
            "authentication": {"scheme": "Bearer", "credentials": "secret"},
        },
    },
    "metadata": {"k": "v"},
}
V03_SEND_PARAMS: dict[str, Any] = {
    "message": V03_MESSAGE_JSON,
    "configuration": {
        "acceptedOutputModes": ["text/plain"],
        "historyLength": 2,
        "blocking": False,
        "pushNotificationConfig": {
            "url": "https://hook.example/h",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    },
    "metadata": {"k": "v"},
}
V1_PUSH_CONFIG_JSON: dict[str, Any] = {
    "taskId": "t-1",
    "id": "p-1",
    "url": "https://hook.example/h",
    "token": "tok",
    "authentication": {"scheme": "Bearer", "credentials": "secret"},
}

#: params of every v1.0 JSON-RPC method.
V1_PARAMS: dict[str, Any] = {
    "SendMessage": V1_SEND_PARAMS,
    "SendStreamingMessage": V1_SEND_PARAMS,
    "GetTask": {"id": "t-1", "historyLength": 1},
    "ListTasks": {
        "contextId": "c-1",
        "status": "TASK_STATE_WORKING",
        "pageSize": 10,
        "pageToken": "abc",
        "historyLength": 0,
        "statusTimestampAfter": "2025-01-02T03:04:05Z",
        "includeArtifacts": True,
    },
    "CancelTask": {"id": "t-1", "metadata": {"why": "done"}},
    "SubscribeToTask": {"id": "t-1"},
    "CreateTaskPushNotificationConfig": V1_PUSH_CONFIG_JSON,
    "GetTaskPushNotificationConfig": {"taskId": "t-1", "id": "p-1"},
    "ListTaskPushNotificationConfigs": {"taskId": "t-1", "pageSize": 5, "pageToken": "x"},
    "DeleteTaskPushNotificationConfig": {"taskId": "t-1", "id": "p-1"},
    "GetExtendedAgentCard": {},
}
#: params of every v0.3 JSON-RPC method.
V03_PARAMS: dict[str, Any] = {
    "message/send": V03_SEND_PARAMS,
    "message/stream": V03_SEND_PARAMS,
    "tasks/get": {"id": "t-1", "historyLength": 1, "metadata": {"m": 1}},
    "tasks/cancel": {"id": "t-1", "metadata": {"why": "done"}},
    "tasks/resubscribe": {"id": "t-1"},
    "tasks/pushNotificationConfig/set": {
        "taskId": "t-1",
        "pushNotificationConfig": {
            "id": "p-1",
            "url": "https://hook.example/h",
            "token": "tok",
            "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
        },
    },
    "tasks/pushNotificationConfig/get": {"id": "t-1", "pushNotificationConfigId": "p-1"},
    "tasks/pushNotificationConfig/list": {"id": "t-1"},
    "tasks/pushNotificationConfig/delete": {"id": "t-1", "pushNotificationConfigId": "p-1"},
    "agent/getAuthenticatedExtendedCard": {},
}

#: One valid request of every REST route: (method, path, query, JSON body or ``None``).
REST_REQUESTS: list[tuple[str, str, str, dict[str, Any] | None]] = [
    ("POST", "/message:send", "", V1_SEND_PARAMS),
    ("POST", "/message:stream", "", V1_SEND_PARAMS),
    ("GET", "/tasks/t-1", "historyLength=1", None),
    (
        "GET",
        "/tasks",
        "contextId=c-1&status=TASK_STATE_WORKING&pageSize=10&pageToken=abc&historyLength=0"
        "&statusTimestampAfter=2025-01-02T03:04:05Z&includeArtifacts=true",
        None,
    ),
    ("POST", "/tasks/t-1:cancel", "", {"metadata": {"why": "done"}}),
    ("GET", "/tasks/t-1:subscribe", "", None),
    ("POST", "/tasks/t-1:subscribe", "", {}),
    (
        "POST",
        "/tasks/t-1/pushNotificationConfigs",
        "",
        {k: v for k, v in V1_PUSH_CONFIG_JSON.items() if k != "taskId"},
    ),
    ("GET", "/tasks/t-1/pushNotificationConfigs/p-1", "", None),
    ("GET", "/tasks/t-1/pushNotificationConfigs", "pageSize=5&pageToken=x", None),
    ("DELETE", "/tasks/t-1/pushNotificationConfigs/p-1", "", None),
    ("GET", "/extendedAgentCard", "", None),
    ("POST", "/v1/message:send", "", {"message": V03_REST_MESSAGE_JSON, "metadata": {"k": "v"}}),
    ("POST", "/v1/message:stream", "", {"message": V03_REST_MESSAGE_JSON}),
    ("GET", "/v1/tasks/t-1", "historyLength=1", None),
    ("POST", "/v1/tasks/t-1:cancel", "", {"name": "tasks/t-1"}),
    ("GET", "/v1/tasks/t-1:subscribe", "", None),
    ("POST", "/v1/tasks/t-1:subscribe", "", {"name": "tasks/t-1"}),
    (
        "POST",
        "/v1/tasks/t-1/pushNotificationConfigs",
        "",
        {
            "parent": "tasks/t-1",
            "configId": "p-1",
            "config": {
                "name": "tasks/t-1/pushNotificationConfigs/p-1",
                "pushNotificationConfig": {
                    "url": "https://hook.example/h",
                    "token": "tok",
                    "authentication": {"schemes": ["Bearer"], "credentials": "secret"},
                },
            },
        },
    ),
    ("GET", "/v1/tasks/t-1/pushNotificationConfigs/p-1", "", None),
    ("GET", "/v1/tasks/t-1/pushNotificationConfigs", "pageSize=5&pageToken=x", None),
    ("DELETE", "/v1/tasks/t-1/pushNotificationConfigs/p-1", "", None),
    ("GET", "/v1/card", "", None),
]


# --- what the client sends, as the v1.0 request the runtime gets ---------------------------

PUSH_REQUEST = t.TaskPushNotificationConfig(
    id="p-1",
    task_id="t-1",
    url="https://hook.example/h",
    token="tok",
    authentication=t.AuthenticationInfo(scheme="Bearer", credentials="secret"),
)
SEND_REQUEST = t.SendMessageRequest(
    message=t.Message(
        message_id="m-1",
        context_id="c-1",
        role=t.Role.USER,
        parts=[
            t.Part(text="hi"),
            t.Part(data={"k": [1, 2]}),
            t.Part(url="https://files.example/f.png", media_type="image/png", filename="f.png"),
            t.Part(raw=b"hi"),
        ],
        metadata={"x": 1},
    ),
    configuration=t.SendMessageConfiguration(
        accepted_output_modes=["text/plain"],
        history_length=2,
        return_immediately=True,
        task_push_notification_config=t.TaskPushNotificationConfig(
            url="https://hook.example/h",
            token="tok",
            authentication=t.AuthenticationInfo(scheme="Bearer", credentials="secret"),
        ),
    ),
    metadata={"k": "v"},
)
GET_REQUEST = t.GetTaskRequest(id="t-1", history_length=1)
LIST_REQUEST = t.ListTasksRequest(
    context_id="c-1",
    status=t.TaskState.WORKING,
    page_size=10,
    page_token="abc",
    history_length=0,
    status_timestamp_after=TIMESTAMP,
    include_artifacts=True,
)
CANCEL_REQUEST = t.CancelTaskRequest(id="t-1", metadata={"why": "done"})
SUBSCRIBE_REQUEST = t.SubscribeToTaskRequest(id="t-1")
GET_PUSH_REQUEST = t.GetTaskPushNotificationConfigRequest(task_id="t-1", id="p-1")
LIST_PUSH_REQUEST = t.ListTaskPushNotificationConfigsRequest(
    task_id="t-1", page_size=5, page_token="x"
)
DELETE_PUSH_REQUEST = t.DeleteTaskPushNotificationConfigRequest(task_id="t-1", id="p-1")
CARD_REQUEST = t.GetExtendedAgentCardRequest()

# --- what the runtime answers, and its exact bytes in each dialect ---------------------------

TASK_V1 = (
    '{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED",'
    '"timestamp":"2025-01-02T03:04:05Z"},"artifacts":[{"artifactId":"a-1","parts":'
    '[{"text":"hello"}]}],"history":[{"messageId":"m-1","contextId":"c-1","role":"ROLE_USER",'
    '"parts":[{"text":"hi"}]}]}'
)
TASK_V03 = (
    '{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"completed",'
    '"timestamp":"2025-01-02T03:04:05Z"},"history":[{"kind":"message","role":"user","parts":'
    '[{"kind":"text","text":"hi"}],"messageId":"m-1","contextId":"c-1"}],"artifacts":'
    '[{"artifactId":"a-1","parts":[{"kind":"text","text":"hello"}]}]}'
)
MESSAGE_V1 = '{"messageId":"m-2","contextId":"c-1","role":"ROLE_AGENT","parts":[{"text":"hello"}]}'
MESSAGE_V03 = (
    '{"kind":"message","role":"agent","parts":[{"kind":"text","text":"hello"}],'
    '"messageId":"m-2","contextId":"c-1"}'
)
PUSH_V1 = (
    '{"id":"p-1","taskId":"t-1","url":"https://hook.example/h","token":"tok",'
    '"authentication":{"scheme":"Bearer","credentials":"secret"}}'
)
PUSH_V03 = (
    '{"taskId":"t-1","pushNotificationConfig":{"id":"p-1","url":"https://hook.example/h",'
    '"token":"tok","authentication":{"schemes":["Bearer"],"credentials":"secret"}}}'
)
CARD_V1 = (
    '{"name":"Echo+","description":"For members.","supportedInterfaces":[{"url":'
    '"https://agent.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"0.3"}],'
    '"version":"1.0.0","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],'
    '"defaultOutputModes":["text/plain"],"skills":[]}'
)
CARD_V03 = (
    '{"protocolVersion":"0.3.0","name":"Echo+","description":"For members.","url":'
    '"https://agent.example/a2a","preferredTransport":"JSONRPC","version":"1.0.0",'
    '"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],'
    '"defaultOutputModes":["text/plain"],"skills":[]}'
)
LIST_TASKS_RESULT = t.ListTasksResponse(
    tasks=[TASK], next_page_token="", page_size=10, total_size=1
)
LIST_PUSH_RESULT = t.ListTaskPushNotificationConfigsResponse(
    configs=[PUSH_CONFIG], next_page_token="n"
)

# The same results in the v0.3 REST dialect (the v0.3 proto's ProtoJSON).
TASK_V03_REST = (
    '{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED",'
    '"timestamp":"2025-01-02T03:04:05Z"},"artifacts":[{"artifactId":"a-1","parts":'
    '[{"text":"hello"}]}],"history":[{"messageId":"m-1","contextId":"c-1","role":"ROLE_USER",'
    '"content":[{"text":"hi"}]}]}'
)
MESSAGE_V03_REST = (
    '{"messageId":"m-2","contextId":"c-1","role":"ROLE_AGENT","content":[{"text":"hello"}]}'
)
PUSH_V03_REST = (
    '{"name":"tasks/t-1/pushNotificationConfigs/p-1","pushNotificationConfig":{"id":"p-1",'
    '"url":"https://hook.example/h","token":"tok","authentication":{"schemes":["Bearer"],'
    '"credentials":"secret"}}}'
)
CARD_V03_REST = (
    '{"protocolVersion":"0.3.0","name":"Echo+","description":"For members.","url":'
    '"https://agent.example/a2a","preferredTransport":"JSONRPC","version":"1.0.0",'
    '"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],'
    '"defaultOutputModes":["text/plain"]}'
)

# --- stream events, and their bytes in each dialect ------------------------------------------

STREAM_EVENTS = [
    t.StreamResponse(task=WORKING_TASK),
    t.StreamResponse(
        artifact_update=t.TaskArtifactUpdateEvent(
            task_id="t-1",
            context_id="c-1",
            artifact=t.Artifact(artifact_id="a-1", parts=[t.Part(text="x")]),
            append=True,
            last_chunk=True,
        )
    ),
    t.StreamResponse(
        status_update=t.TaskStatusUpdateEvent(
            task_id="t-1", context_id="c-1", status=t.TaskStatus(state=t.TaskState.COMPLETED)
        )
    ),
]
#: v1.0 (JSON-RPC ``result`` and REST ``data``): the StreamResponse.
STREAM_EVENTS_V1 = [
    '{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}',
    '{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1",'
    '"parts":[{"text":"x"}]},"append":true,"lastChunk":true}}',
    '{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}}',
]
#: v0.3 JSON-RPC ``result``: the kind objects, ``final`` on the last status update.
STREAM_EVENTS_V03 = [
    '{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"working"}}',
    '{"kind":"artifact-update","taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1",'
    '"parts":[{"kind":"text","text":"x"}]},"append":true,"lastChunk":true}',
    '{"kind":"status-update","taskId":"t-1","contextId":"c-1","status":{"state":"completed"},'
    '"final":true}',
]
#: v0.3 REST ``data``: the v0.3 proto's StreamResponse.
STREAM_EVENTS_V03_REST = [
    '{"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}',
    '{"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1",'
    '"parts":[{"text":"x"}]},"append":true,"lastChunk":true}}',
    '{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"},'
    '"final":true}}',
]
