"""Conversions between the v0.3 JSON-RPC dialect and the v1.0 model, both ways.

This module owns the *meaning* of the v0.3 dialect: how each v0.3 value maps onto the one
v1.0 model the library works with, and back. Every function is total (it never raises on a
value its own model accepts), pure and cheap: containers are copied shallowly, nothing is
encoded or decoded here. Functions are named after the v0.3 shape they take or return:
``message_to_v1(v03.Message) -> v1.Message`` and ``message_from_v1(v1.Message) ->
v03.Message``.

What the shared subset is: every value whose meaning both dialects can carry. On it,
v1.0 -> v0.3 -> v1.0 is the identity, and so is v0.3 -> v1.0 -> v0.3 for v0.3 values written
the way this module writes them (the property tests in ``tests/core/test_v0_3_convert.py``
check both). Outside it, the losses are deliberate and listed here (and, with reasons, in
``docs/wire-dialects.md``):

v1.0 -> v0.3 (a v0.3 client sees less):

- ``Part.data`` that is not a JSON object (v0.3 ``DataPart.data`` must be one) is wrapped as
  ``{"value": x}`` and the part's metadata gets ``"data_part_compat": true``, the convention
  of the reference SDK; :func:`part_to_v1` unwraps it again. ``data_part_compat`` is
  therefore a reserved metadata key on data parts: a v1.0 data part that already carries
  it, with non-object data or with exactly ``{"value": <non-object>}``, comes back changed.
- ``filename`` and ``mediaType`` of text and data parts are dropped (v0.3 has them only on
  files, as ``name``/``mimeType``).
- ``tenant`` of every request and of push configs and card interfaces is dropped; so are
  ``pageSize``/``pageToken`` of ListTaskPushNotificationConfigs and ``nextPageToken`` of its
  response (v0.3 returns a bare array).
- Push ``authentication`` becomes ``schemes: [scheme]``; the webhook of a send
  configuration loses ``taskId`` (v0.3 binds it to the task the message creates).
- Card: only the ``0.x`` entries of ``supportedInterfaces`` are kept (v1.0 entries have no
  v0.3 form, a v0.3 card speaks one version); without any, the first interface stands in.
  ``protocolVersion`` becomes ``Major.Minor.0``. A ``deviceCode`` OAuth flow has no v0.3
  form: its scheme is kept with empty ``flows`` so requirements naming it stay valid.
  ``pkceRequired`` is dropped.
- ``TaskStatusUpdateEvent`` gains ``final``: given by the caller, else true for terminal
  states and input-required (spec-decisions A6).
- ``Role.UNSPECIFIED`` (which no valid ``Message`` holds) becomes ``user``.

v0.3 -> v1.0 (the server sees less than the client sent):

- ``final`` of status updates (the v1.0 stream simply ends) and ``kind`` (the v1.0 type says
  it; v1.0 payloads never carry it, spec-decisions A21).
- Push ``authentication.schemes`` beyond the first (an ``authentication`` without any
  scheme, which decoding refuses, is dropped whole).
- ``metadata`` of ``tasks/get``, ``tasks/resubscribe`` and the three push-config params
  (their v1.0 requests have no metadata).
- Card: ``capabilities.stateTransitionHistory``; the patch digit of ``protocolVersion``
  (v1.0 keeps ``Major.Minor``); an OAuth scheme with several flows becomes one v1.0 scheme per
  flow (spec-decisions A18). The first flow, in the order ``authorizationCode``,
  ``clientCredentials``, ``implicit``, ``password``, keeps the scheme's name; each further
  flow is named ``"<name>.<flow>"`` (``"oauth.clientCredentials"``; ``.2``, ``.3``... appended
  if taken), and every security requirement naming the scheme is expanded into one
  alternative per flow, so "any one flow will do" keeps its meaning. An OAuth scheme with
  no flow at all cannot exist in v1.0 and is dropped; requirements naming it are kept, so
  they stay unsatisfiable rather than becoming open.

Normalisations (same meaning, different bytes, so v0.3 -> v1.0 -> v0.3 changes them):

- An optional member present with its default (``metadata: {}``, ``extensions: []``,
  ``append: false``, ``required: false``, ``contextId: ""``...) comes back absent.
- ``TaskState`` ``unknown`` <-> ``TASK_STATE_UNSPECIFIED``: one to one, but v0.3's
  "indeterminate" is v1.0's "not set".
- Timestamps come back in UTC with ``Z`` (a zone-less v0.3 timestamp is read as UTC).
- ``blocking`` absent comes back as ``blocking: true`` (absent means blocking, spec-decisions F4;
  v1.0 cannot tell them apart, and v0.3 left the default open, so we say it).
- ``pushNotificationConfigId`` equal to the task id comes back absent (absent means the
  task's default config, whose id is the task id).
- Card: ``preferredTransport`` absent comes back as ``JSONRPC``; ``additionalInterfaces``
  comes back as the full list with the main interface first and no entry twice (same
  ``url`` and transport), or absent when the main interface is the only one.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NoReturn, TypeVar

import msgspec
from msgspec import UNSET

from a2a_core import types as v1
from a2a_core.compat.v0_3 import types as v03

__all__ = [
    "DATA_PART_COMPAT_KEY",
    "artifact_from_v1",
    "artifact_to_v1",
    "artifact_update_from_v1",
    "artifact_update_to_v1",
    "cancel_params_from_v1",
    "cancel_params_to_v1",
    "card_from_v1",
    "card_to_v1",
    "card_v0_3_fields",
    "delete_push_config_params_from_v1",
    "delete_push_config_params_to_v1",
    "final_for_state",
    "get_push_config_params_from_v1",
    "get_push_config_params_to_v1",
    "get_task_params_from_v1",
    "get_task_params_to_v1",
    "list_push_config_params_from_v1",
    "list_push_config_params_to_v1",
    "message_from_v1",
    "message_to_v1",
    "part_from_v1",
    "part_to_v1",
    "push_config_from_v1",
    "push_config_list_from_v1",
    "push_config_list_to_v1",
    "push_config_to_v1",
    "role_from_v1",
    "role_to_v1",
    "send_configuration_from_v1",
    "send_configuration_to_v1",
    "send_params_from_v1",
    "send_params_to_v1",
    "send_result_from_v1",
    "send_result_to_v1",
    "status_update_from_v1",
    "status_update_to_v1",
    "stream_event_from_v1",
    "stream_event_to_v1",
    "subscribe_params_from_v1",
    "subscribe_params_to_v1",
    "task_from_v1",
    "task_push_config_from_v1",
    "task_push_config_to_v1",
    "task_state_from_v1",
    "task_state_to_v1",
    "task_status_from_v1",
    "task_status_to_v1",
    "task_to_v1",
]

_T = TypeVar("_T")
_K = TypeVar("_K")
_V = TypeVar("_V")

#: Metadata key marking a v0.3 DataPart that wraps a non-object v1.0 ``data`` as
#: ``{"value": x}`` (the reference SDK's convention, so the two interoperate).
DATA_PART_COMPAT_KEY: Final = "data_part_compat"

_DEFAULT_TRANSPORT: Final = "JSONRPC"
_DEFAULT_PROTOCOL_VERSION: Final = "0.3.0"


# --- small helpers: v0.3 "absent" <-> v1.0 "default" ---------------------------------------


# The helpers below are inlined (as the same expressions) in the conversions of messages,
# parts, artifacts and tasks, which run on every v0.3 request and reply: a Python call costs
# about as much as the conversion of one member.


def _list(items: Iterable[_T] | None) -> list[_T]:
    return list(items) if items is not None else []


def _dict(items: Mapping[_K, _V] | None) -> dict[_K, _V]:
    return dict(items) if items is not None else {}


def _opt_list(items: Sequence[_T]) -> list[_T] | None:
    return list(items) if items else None


def _opt_dict(items: Mapping[_K, _V]) -> dict[_K, _V] | None:
    return dict(items) if items else None


def _opt_str(value: str) -> str | None:
    return value or None


def _unreachable(value: object) -> NoReturn:
    # Only values built around their own validation (a oneof with no member set) get here.
    raise ValueError(f"{type(value).__name__} has no member set")


# --- enums ---------------------------------------------------------------------------------

_V1_USER: Final = v1.Role.USER
_V1_AGENT: Final = v1.Role.AGENT
_V03_USER: Final = v03.Role.USER
_V03_AGENT: Final = v03.Role.AGENT
_TEXT_PART: Final = v03.TextPart

_STATE_TO_V1: Final[Mapping[v03.TaskState, v1.TaskState]] = {
    v03.TaskState.SUBMITTED: v1.TaskState.SUBMITTED,
    v03.TaskState.WORKING: v1.TaskState.WORKING,
    v03.TaskState.INPUT_REQUIRED: v1.TaskState.INPUT_REQUIRED,
    v03.TaskState.COMPLETED: v1.TaskState.COMPLETED,
    v03.TaskState.CANCELED: v1.TaskState.CANCELED,
    v03.TaskState.FAILED: v1.TaskState.FAILED,
    v03.TaskState.REJECTED: v1.TaskState.REJECTED,
    v03.TaskState.AUTH_REQUIRED: v1.TaskState.AUTH_REQUIRED,
    v03.TaskState.UNKNOWN: v1.TaskState.UNSPECIFIED,
}
_STATE_FROM_V1: Final[Mapping[v1.TaskState, v03.TaskState]] = {
    new: old for old, new in _STATE_TO_V1.items()
}


def task_state_to_v1(state: v03.TaskState) -> v1.TaskState:
    """``"input-required"`` -> ``TASK_STATE_INPUT_REQUIRED``; ``"unknown"`` -> UNSPECIFIED."""
    return _STATE_TO_V1[state]


def task_state_from_v1(state: v1.TaskState) -> v03.TaskState:
    """``TASK_STATE_INPUT_REQUIRED`` -> ``"input-required"``; UNSPECIFIED -> ``"unknown"``."""
    return _STATE_FROM_V1[state]


def role_to_v1(role: v03.Role) -> v1.Role:
    """``"user"`` -> ``ROLE_USER``, ``"agent"`` -> ``ROLE_AGENT``."""
    return v1.Role.AGENT if role is v03.Role.AGENT else v1.Role.USER


def role_from_v1(role: v1.Role) -> v03.Role:
    """``ROLE_AGENT`` -> ``"agent"``; anything else (UNSPECIFIED too) -> ``"user"``."""
    return v03.Role.AGENT if role is v1.Role.AGENT else v03.Role.USER


def final_for_state(state: v1.TaskState) -> bool:
    """The v0.3 ``final`` flag a status update in ``state`` carries by default.

    True for terminal states and input-required: that is where the server closes the
    stream (spec-decisions A6); auth-required keeps it open.
    """
    return state.is_terminal or state is v1.TaskState.INPUT_REQUIRED


# --- parts, messages, artifacts, tasks -----------------------------------------------------


def _is_wrapped(data: Mapping[str, Any], metadata: Mapping[str, Any]) -> bool:
    """A DataPart that :func:`part_from_v1` wrapped: the marker, and only a non-object ``value``.

    A wrapped object cannot occur (objects are never wrapped), so ``{"value": {...}}`` stays
    as it is even with the marker: one less case where a real object would be unwrapped.
    """
    return (
        metadata.get(DATA_PART_COMPAT_KEY) is True
        and data.keys() == {"value"}
        and not isinstance(data["value"], dict)
    )


def part_to_v1(part: v03.Part) -> v1.Part:
    """A kind-tagged part -> a oneof Part; a wrapped non-object ``data`` is unwrapped."""
    if isinstance(part, _TEXT_PART):
        metadata = part.metadata
        return v1.Part(text=part.text, metadata=dict(metadata) if metadata is not None else {})
    if isinstance(part, v03.FilePart):
        file = part.file
        filename = file.name or ""
        media_type = file.mime_type or ""
        metadata = _dict(part.metadata)
        if file.bytes is not None:
            return v1.Part(
                raw=file.bytes, metadata=metadata, filename=filename, media_type=media_type
            )
        return v1.Part(
            url=file.uri or "", metadata=metadata, filename=filename, media_type=media_type
        )
    metadata = _dict(part.metadata)
    if _is_wrapped(part.data, metadata):
        del metadata[DATA_PART_COMPAT_KEY]
        return v1.Part(data=part.data["value"], metadata=metadata)
    return v1.Part(data=dict(part.data), metadata=metadata)


def part_from_v1(part: v1.Part) -> v03.Part:
    """A oneof Part -> a kind-tagged part (``raw``/``url`` -> ``file``; see the data rule)."""
    metadata = dict(part.metadata) if part.metadata else None
    text = part.text
    if isinstance(text, str):
        return _TEXT_PART(text=text, metadata=metadata)
    name, mime_type = _opt_str(part.filename), _opt_str(part.media_type)
    if isinstance(part.raw, bytes):
        file = v03.FileContent(bytes=part.raw, name=name, mime_type=mime_type)
        return v03.FilePart(file=file, metadata=metadata)
    if isinstance(part.url, str):
        file = v03.FileContent(uri=part.url, name=name, mime_type=mime_type)
        return v03.FilePart(file=file, metadata=metadata)
    data: Any = None if part.data is UNSET else part.data
    if isinstance(data, dict):
        return v03.DataPart(data=dict(data), metadata=metadata)
    return v03.DataPart(
        data={"value": data}, metadata={**part.metadata, DATA_PART_COMPAT_KEY: True}
    )


def message_to_v1(message: v03.Message) -> v1.Message:
    """A v0.3 Message -> v1.0 (absent ids become ``""``, ``kind`` goes)."""
    metadata = message.metadata
    extensions = message.extensions
    references = message.reference_task_ids
    return v1.Message(
        message_id=message.message_id,
        context_id=message.context_id or "",
        task_id=message.task_id or "",
        role=_V1_AGENT if message.role is _V03_AGENT else _V1_USER,
        parts=[part_to_v1(p) for p in message.parts],
        metadata=dict(metadata) if metadata is not None else {},
        extensions=list(extensions) if extensions is not None else [],
        reference_task_ids=list(references) if references is not None else [],
    )


def message_from_v1(message: v1.Message) -> v03.Message:
    """A v1.0 Message -> v0.3 (empty members become absent, ``kind: "message"`` is added)."""
    metadata = message.metadata
    extensions = message.extensions
    references = message.reference_task_ids
    return v03.Message(
        role=_V03_AGENT if message.role is _V1_AGENT else _V03_USER,
        parts=[part_from_v1(p) for p in message.parts],
        metadata=dict(metadata) if metadata else None,
        extensions=list(extensions) if extensions else None,
        reference_task_ids=list(references) if references else None,
        message_id=message.message_id,
        task_id=message.task_id or None,
        context_id=message.context_id or None,
    )


def artifact_to_v1(artifact: v03.Artifact) -> v1.Artifact:
    """A v0.3 Artifact -> v1.0."""
    return v1.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name or "",
        description=artifact.description or "",
        parts=[part_to_v1(p) for p in artifact.parts],
        metadata=_dict(artifact.metadata),
        extensions=_list(artifact.extensions),
    )


def artifact_from_v1(artifact: v1.Artifact) -> v03.Artifact:
    """A v1.0 Artifact -> v0.3."""
    metadata = artifact.metadata
    extensions = artifact.extensions
    return v03.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name or None,
        description=artifact.description or None,
        parts=[part_from_v1(p) for p in artifact.parts],
        metadata=dict(metadata) if metadata else None,
        extensions=list(extensions) if extensions else None,
    )


def task_status_to_v1(status: v03.TaskStatus) -> v1.TaskStatus:
    """A v0.3 TaskStatus -> v1.0 (the timestamp is normalised to UTC by v1.0)."""
    return v1.TaskStatus(
        state=task_state_to_v1(status.state),
        message=message_to_v1(status.message) if status.message is not None else None,
        timestamp=status.timestamp,
    )


def task_status_from_v1(status: v1.TaskStatus) -> v03.TaskStatus:
    """A v1.0 TaskStatus -> v0.3."""
    message = status.message
    return v03.TaskStatus(
        state=_STATE_FROM_V1[status.state],
        message=message_from_v1(message) if message is not None else None,
        timestamp=status.timestamp,
    )


def task_to_v1(task: v03.Task) -> v1.Task:
    """A v0.3 Task -> v1.0."""
    return v1.Task(
        id=task.id,
        context_id=task.context_id,
        status=task_status_to_v1(task.status),
        artifacts=[artifact_to_v1(a) for a in task.artifacts or ()],
        history=[message_to_v1(m) for m in task.history or ()],
        metadata=_dict(task.metadata),
    )


def task_from_v1(task: v1.Task) -> v03.Task:
    """A v1.0 Task -> v0.3 (``kind: "task"``; also the v0.3 webhook body)."""
    metadata = task.metadata
    return v03.Task(
        id=task.id,
        context_id=task.context_id,
        status=task_status_from_v1(task.status),
        history=[message_from_v1(m) for m in task.history] or None,
        artifacts=[artifact_from_v1(a) for a in task.artifacts] or None,
        metadata=dict(metadata) if metadata else None,
    )


# --- stream events and results -------------------------------------------------------------


def status_update_to_v1(event: v03.TaskStatusUpdateEvent) -> v1.TaskStatusUpdateEvent:
    """A v0.3 status update -> v1.0; ``final`` is dropped (a v1.0 stream just ends)."""
    return v1.TaskStatusUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        status=task_status_to_v1(event.status),
        metadata=_dict(event.metadata),
    )


def status_update_from_v1(
    event: v1.TaskStatusUpdateEvent, *, final: bool | None = None
) -> v03.TaskStatusUpdateEvent:
    """A v1.0 status update -> v0.3, with ``final`` as given or :func:`final_for_state`."""
    return v03.TaskStatusUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        status=task_status_from_v1(event.status),
        final=final_for_state(event.status.state) if final is None else final,
        metadata=_opt_dict(event.metadata),
    )


def artifact_update_to_v1(event: v03.TaskArtifactUpdateEvent) -> v1.TaskArtifactUpdateEvent:
    """A v0.3 artifact update -> v1.0 (absent ``append``/``lastChunk`` mean false)."""
    return v1.TaskArtifactUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        artifact=artifact_to_v1(event.artifact),
        append=bool(event.append),
        last_chunk=bool(event.last_chunk),
        metadata=_dict(event.metadata),
    )


def artifact_update_from_v1(event: v1.TaskArtifactUpdateEvent) -> v03.TaskArtifactUpdateEvent:
    """A v1.0 artifact update -> v0.3 (false flags are omitted)."""
    return v03.TaskArtifactUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        artifact=artifact_from_v1(event.artifact),
        append=event.append or None,
        last_chunk=event.last_chunk or None,
        metadata=_opt_dict(event.metadata),
    )


def stream_event_to_v1(event: v03.StreamResult) -> v1.StreamResponse:
    """A bare v0.3 stream ``result`` -> the v1.0 ``StreamResponse`` wrapper."""
    if isinstance(event, v03.Task):
        return v1.StreamResponse(task=task_to_v1(event))
    if isinstance(event, v03.Message):
        return v1.StreamResponse(message=message_to_v1(event))
    if isinstance(event, v03.TaskStatusUpdateEvent):
        return v1.StreamResponse(status_update=status_update_to_v1(event))
    return v1.StreamResponse(artifact_update=artifact_update_to_v1(event))


def stream_event_from_v1(
    event: v1.StreamResponse, *, final: bool | None = None
) -> v03.StreamResult:
    """A v1.0 ``StreamResponse`` -> the bare v0.3 ``result`` (``final`` for status updates)."""
    if event.task is not None:
        return task_from_v1(event.task)
    if event.message is not None:
        return message_from_v1(event.message)
    if event.status_update is not None:
        return status_update_from_v1(event.status_update, final=final)
    if event.artifact_update is not None:
        return artifact_update_from_v1(event.artifact_update)
    _unreachable(event)


def send_result_to_v1(result: v03.SendMessageResult) -> v1.SendMessageResponse:
    """A bare v0.3 ``message/send`` result -> the v1.0 ``SendMessageResponse`` wrapper."""
    if isinstance(result, v03.Task):
        return v1.SendMessageResponse(task=task_to_v1(result))
    return v1.SendMessageResponse(message=message_to_v1(result))


def send_result_from_v1(result: v1.SendMessageResponse) -> v03.SendMessageResult:
    """A v1.0 ``SendMessageResponse`` -> the bare v0.3 Task or Message."""
    if result.task is not None:
        return task_from_v1(result.task)
    if result.message is not None:
        return message_from_v1(result.message)
    _unreachable(result)


# --- push-notification configs -------------------------------------------------------------


def push_config_to_v1(
    config: v03.PushNotificationConfig, *, task_id: str = ""
) -> v1.TaskPushNotificationConfig:
    """A nested v0.3 webhook config -> the flat v1.0 one; only the first scheme is kept."""
    auth = config.authentication
    authentication = (
        v1.AuthenticationInfo(scheme=auth.schemes[0], credentials=auth.credentials or "")
        if auth is not None and auth.schemes
        else None
    )
    return v1.TaskPushNotificationConfig(
        id=config.id or "",
        task_id=task_id,
        url=config.url,
        token=config.token or "",
        authentication=authentication,
    )


def push_config_from_v1(config: v1.TaskPushNotificationConfig) -> v03.PushNotificationConfig:
    """A flat v1.0 config -> the v0.3 webhook part (``tenant`` and ``taskId`` are dropped)."""
    auth = config.authentication
    return v03.PushNotificationConfig(
        id=_opt_str(config.id),
        url=config.url,
        token=_opt_str(config.token),
        authentication=(
            v03.PushNotificationAuthenticationInfo(
                schemes=[auth.scheme], credentials=_opt_str(auth.credentials)
            )
            if auth is not None
            else None
        ),
    )


def task_push_config_to_v1(config: v03.TaskPushNotificationConfig) -> v1.TaskPushNotificationConfig:
    """``{taskId, pushNotificationConfig: {...}}`` -> the flat v1.0 config."""
    return push_config_to_v1(config.push_notification_config, task_id=config.task_id)


def task_push_config_from_v1(
    config: v1.TaskPushNotificationConfig,
) -> v03.TaskPushNotificationConfig:
    """The flat v1.0 config -> ``{taskId, pushNotificationConfig: {...}}``."""
    return v03.TaskPushNotificationConfig(
        task_id=config.task_id, push_notification_config=push_config_from_v1(config)
    )


def push_config_list_to_v1(
    configs: Sequence[v03.TaskPushNotificationConfig],
) -> v1.ListTaskPushNotificationConfigsResponse:
    """The bare v0.3 list result -> a v1.0 response (a single page)."""
    return v1.ListTaskPushNotificationConfigsResponse(
        configs=[task_push_config_to_v1(c) for c in configs]
    )


def push_config_list_from_v1(
    response: v1.ListTaskPushNotificationConfigsResponse,
) -> list[v03.TaskPushNotificationConfig]:
    """A v1.0 list response -> the bare v0.3 array (``nextPageToken`` is dropped)."""
    return [task_push_config_from_v1(c) for c in response.configs]


# --- request params ------------------------------------------------------------------------


def send_configuration_to_v1(
    config: v03.MessageSendConfiguration,
) -> v1.SendMessageConfiguration:
    """``blocking`` -> ``returnImmediately = not blocking`` (absent blocking: blocking)."""
    push = config.push_notification_config
    return v1.SendMessageConfiguration(
        accepted_output_modes=_list(config.accepted_output_modes),
        task_push_notification_config=push_config_to_v1(push) if push is not None else None,
        history_length=config.history_length,
        return_immediately=config.blocking is False,
    )


def send_configuration_from_v1(
    config: v1.SendMessageConfiguration,
) -> v03.MessageSendConfiguration:
    """``returnImmediately`` -> an explicit ``blocking`` (v0.3 left its default open)."""
    push = config.task_push_notification_config
    return v03.MessageSendConfiguration(
        accepted_output_modes=_opt_list(config.accepted_output_modes),
        history_length=config.history_length,
        push_notification_config=push_config_from_v1(push) if push is not None else None,
        blocking=not config.return_immediately,
    )


def send_params_to_v1(params: v03.MessageSendParams) -> v1.SendMessageRequest:
    """``message/send`` / ``message/stream`` params -> SendMessageRequest."""
    configuration = params.configuration
    metadata = params.metadata
    return v1.SendMessageRequest(
        message=message_to_v1(params.message),
        configuration=(
            send_configuration_to_v1(configuration) if configuration is not None else None
        ),
        metadata=dict(metadata) if metadata is not None else {},
    )


def send_params_from_v1(request: v1.SendMessageRequest) -> v03.MessageSendParams:
    """SendMessageRequest -> ``message/send`` params (``tenant`` is dropped)."""
    configuration = request.configuration
    return v03.MessageSendParams(
        message=message_from_v1(request.message),
        configuration=(
            send_configuration_from_v1(configuration) if configuration is not None else None
        ),
        metadata=_opt_dict(request.metadata),
    )


def get_task_params_to_v1(params: v03.TaskQueryParams) -> v1.GetTaskRequest:
    """``tasks/get`` params -> GetTaskRequest (``metadata`` is dropped)."""
    return v1.GetTaskRequest(id=params.id, history_length=params.history_length)


def get_task_params_from_v1(request: v1.GetTaskRequest) -> v03.TaskQueryParams:
    """GetTaskRequest -> ``tasks/get`` params (``tenant`` is dropped)."""
    return v03.TaskQueryParams(id=request.id, history_length=request.history_length)


def cancel_params_to_v1(params: v03.TaskIdParams) -> v1.CancelTaskRequest:
    """``tasks/cancel`` params -> CancelTaskRequest."""
    return v1.CancelTaskRequest(id=params.id, metadata=_dict(params.metadata))


def cancel_params_from_v1(request: v1.CancelTaskRequest) -> v03.TaskIdParams:
    """CancelTaskRequest -> ``tasks/cancel`` params (``tenant`` is dropped)."""
    return v03.TaskIdParams(id=request.id, metadata=_opt_dict(request.metadata))


def subscribe_params_to_v1(params: v03.TaskIdParams) -> v1.SubscribeToTaskRequest:
    """``tasks/resubscribe`` params -> SubscribeToTaskRequest (``metadata`` is dropped)."""
    return v1.SubscribeToTaskRequest(id=params.id)


def subscribe_params_from_v1(request: v1.SubscribeToTaskRequest) -> v03.TaskIdParams:
    """SubscribeToTaskRequest -> ``tasks/resubscribe`` params (``tenant`` is dropped)."""
    return v03.TaskIdParams(id=request.id)


def get_push_config_params_to_v1(
    params: v03.GetTaskPushNotificationConfigParams,
) -> v1.GetTaskPushNotificationConfigRequest:
    """``id`` is the task id; an absent config id means the default config (id = task id)."""
    return v1.GetTaskPushNotificationConfigRequest(
        task_id=params.id, id=params.push_notification_config_id or params.id
    )


def get_push_config_params_from_v1(
    request: v1.GetTaskPushNotificationConfigRequest,
) -> v03.GetTaskPushNotificationConfigParams:
    """The config id is omitted when it is the task's default config (id = task id)."""
    config_id = request.id if request.id and request.id != request.task_id else None
    return v03.GetTaskPushNotificationConfigParams(
        id=request.task_id, push_notification_config_id=config_id
    )


def list_push_config_params_to_v1(
    params: v03.ListTaskPushNotificationConfigParams,
) -> v1.ListTaskPushNotificationConfigsRequest:
    """``tasks/pushNotificationConfig/list`` params -> the v1.0 request (one page)."""
    return v1.ListTaskPushNotificationConfigsRequest(task_id=params.id)


def list_push_config_params_from_v1(
    request: v1.ListTaskPushNotificationConfigsRequest,
) -> v03.ListTaskPushNotificationConfigParams:
    """The v1.0 request -> v0.3 params (paging and ``tenant`` are dropped)."""
    return v03.ListTaskPushNotificationConfigParams(id=request.task_id)


def delete_push_config_params_to_v1(
    params: v03.DeleteTaskPushNotificationConfigParams,
) -> v1.DeleteTaskPushNotificationConfigRequest:
    """``id`` is the task id, ``pushNotificationConfigId`` the config id."""
    return v1.DeleteTaskPushNotificationConfigRequest(
        task_id=params.id, id=params.push_notification_config_id
    )


def delete_push_config_params_from_v1(
    request: v1.DeleteTaskPushNotificationConfigRequest,
) -> v03.DeleteTaskPushNotificationConfigParams:
    """The v1.0 request -> v0.3 params (``tenant`` is dropped)."""
    return v03.DeleteTaskPushNotificationConfigParams(
        id=request.task_id, push_notification_config_id=request.id
    )


# --- agent card: security ------------------------------------------------------------------

#: v0.3 OAuthFlows members in the order that decides which flow keeps the scheme's name.
_FLOW_NAMES: Final = (
    ("authorization_code", "authorizationCode"),
    ("client_credentials", "clientCredentials"),
    ("implicit", "implicit"),
    ("password", "password"),
)


def _flows_to_v1(flows: v03.OAuthFlows) -> list[tuple[str, v1.OAuthFlows]]:
    """Each flow set in ``flows`` as a one-flow v1.0 OAuthFlows, with its JSON name."""
    out: list[tuple[str, v1.OAuthFlows]] = []
    if (code := flows.authorization_code) is not None:
        flow = v1.AuthorizationCodeOAuthFlow(
            authorization_url=code.authorization_url,
            token_url=code.token_url,
            refresh_url=code.refresh_url or "",
            scopes=dict(code.scopes),
        )
        out.append(("authorizationCode", v1.OAuthFlows(authorization_code=flow)))
    if (client := flows.client_credentials) is not None:
        flow_cc = v1.ClientCredentialsOAuthFlow(
            token_url=client.token_url,
            refresh_url=client.refresh_url or "",
            scopes=dict(client.scopes),
        )
        out.append(("clientCredentials", v1.OAuthFlows(client_credentials=flow_cc)))
    if (implicit := flows.implicit) is not None:
        flow_imp = v1.ImplicitOAuthFlow(
            authorization_url=implicit.authorization_url,
            refresh_url=implicit.refresh_url or "",
            scopes=dict(implicit.scopes),
        )
        out.append(("implicit", v1.OAuthFlows(implicit=flow_imp)))
    if (password := flows.password) is not None:
        flow_pw = v1.PasswordOAuthFlow(
            token_url=password.token_url,
            refresh_url=password.refresh_url or "",
            scopes=dict(password.scopes),
        )
        out.append(("password", v1.OAuthFlows(password=flow_pw)))
    return out


def _flows_from_v1(flows: v1.OAuthFlows) -> v03.OAuthFlows:
    """The one v1.0 flow -> v0.3 OAuthFlows; ``deviceCode`` and ``pkceRequired`` are lost."""
    code = flows.authorization_code
    client = flows.client_credentials
    implicit = flows.implicit
    password = flows.password
    return v03.OAuthFlows(
        authorization_code=(
            v03.AuthorizationCodeOAuthFlow(
                authorization_url=code.authorization_url,
                token_url=code.token_url,
                refresh_url=_opt_str(code.refresh_url),
                scopes=dict(code.scopes),
            )
            if code is not None
            else None
        ),
        client_credentials=(
            v03.ClientCredentialsOAuthFlow(
                token_url=client.token_url,
                refresh_url=_opt_str(client.refresh_url),
                scopes=dict(client.scopes),
            )
            if client is not None
            else None
        ),
        implicit=(
            v03.ImplicitOAuthFlow(
                authorization_url=implicit.authorization_url,
                refresh_url=_opt_str(implicit.refresh_url),
                scopes=dict(implicit.scopes),
            )
            if implicit is not None
            else None
        ),
        password=(
            v03.PasswordOAuthFlow(
                token_url=password.token_url,
                refresh_url=_opt_str(password.refresh_url),
                scopes=dict(password.scopes),
            )
            if password is not None
            else None
        ),
    )


def _free_name(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}.{n}", n + 1
    taken.add(name)
    return name


def _schemes_to_v1(
    schemes: Mapping[str, v03.SecurityScheme],
) -> tuple[dict[str, v1.SecurityScheme], dict[str, list[str]]]:
    """The v1.0 schemes, and for each v0.3 name the v1.0 names that stand in for it.

    An OAuth scheme with n flows stands for n alternatives (see the module docstring for
    the naming); one with none has no v1.0 form and maps to no name.
    """
    out: dict[str, v1.SecurityScheme] = {}
    aliases: dict[str, list[str]] = {}
    taken = set(schemes)  # generated names never shadow a scheme the card declares
    for name, scheme in schemes.items():
        if isinstance(scheme, v03.OAuth2SecurityScheme):
            names: list[str] = []
            for i, (flow_name, flows) in enumerate(_flows_to_v1(scheme.flows)):
                v1_name = name if i == 0 else _free_name(f"{name}.{flow_name}", taken)
                out[v1_name] = v1.SecurityScheme(
                    oauth2_security_scheme=v1.OAuth2SecurityScheme(
                        description=scheme.description or "",
                        flows=flows,
                        oauth2_metadata_url=scheme.oauth2_metadata_url or "",
                    )
                )
                names.append(v1_name)
            aliases[name] = names
            continue
        out[name] = _scheme_to_v1(scheme)
        aliases[name] = [name]
    return out, aliases


def _scheme_to_v1(
    scheme: v03.APIKeySecurityScheme
    | v03.HTTPAuthSecurityScheme
    | v03.OpenIdConnectSecurityScheme
    | v03.MutualTLSSecurityScheme,
) -> v1.SecurityScheme:
    """Every scheme but OAuth 2.0 (which may split, see :func:`_schemes_to_v1`)."""
    if isinstance(scheme, v03.APIKeySecurityScheme):
        return v1.SecurityScheme(
            api_key_security_scheme=v1.APIKeySecurityScheme(
                description=scheme.description or "", location=scheme.in_, name=scheme.name
            )
        )
    if isinstance(scheme, v03.HTTPAuthSecurityScheme):
        return v1.SecurityScheme(
            http_auth_security_scheme=v1.HTTPAuthSecurityScheme(
                description=scheme.description or "",
                scheme=scheme.scheme,
                bearer_format=scheme.bearer_format or "",
            )
        )
    if isinstance(scheme, v03.OpenIdConnectSecurityScheme):
        return v1.SecurityScheme(
            open_id_connect_security_scheme=v1.OpenIdConnectSecurityScheme(
                description=scheme.description or "",
                open_id_connect_url=scheme.open_id_connect_url,
            )
        )
    return v1.SecurityScheme(
        mtls_security_scheme=v1.MutualTlsSecurityScheme(description=scheme.description or "")
    )


def _scheme_from_v1(scheme: v1.SecurityScheme) -> v03.SecurityScheme:
    if (api_key := scheme.api_key_security_scheme) is not None:
        return v03.APIKeySecurityScheme(
            description=_opt_str(api_key.description), in_=api_key.location, name=api_key.name
        )
    if (http := scheme.http_auth_security_scheme) is not None:
        return v03.HTTPAuthSecurityScheme(
            description=_opt_str(http.description),
            scheme=http.scheme,
            bearer_format=_opt_str(http.bearer_format),
        )
    if (oauth := scheme.oauth2_security_scheme) is not None:
        return v03.OAuth2SecurityScheme(
            description=_opt_str(oauth.description),
            flows=_flows_from_v1(oauth.flows),
            oauth2_metadata_url=_opt_str(oauth.oauth2_metadata_url),
        )
    if (oidc := scheme.open_id_connect_security_scheme) is not None:
        return v03.OpenIdConnectSecurityScheme(
            description=_opt_str(oidc.description), open_id_connect_url=oidc.open_id_connect_url
        )
    if (mtls := scheme.mtls_security_scheme) is not None:
        return v03.MutualTLSSecurityScheme(description=_opt_str(mtls.description))
    _unreachable(scheme)


def _requirements_to_v1(
    requirements: Sequence[v03.SecurityRequirement], aliases: Mapping[str, list[str]]
) -> list[v1.SecurityRequirement]:
    """``[{name: scopes}]`` -> v1.0 requirements, one alternative per combination of flows."""
    out: list[v1.SecurityRequirement] = []
    for requirement in requirements:
        choices = [
            [(alias, scopes) for alias in aliases.get(name) or (name,)]
            for name, scopes in requirement.items()
        ]
        for combination in itertools.product(*choices):
            schemes = {alias: v1.StringList(list=list(scopes)) for alias, scopes in combination}
            out.append(v1.SecurityRequirement(schemes=schemes))
    return out


def _requirements_from_v1(
    requirements: Sequence[v1.SecurityRequirement],
) -> list[v03.SecurityRequirement] | None:
    return [
        {name: list(scopes.list) for name, scopes in requirement.schemes.items()}
        for requirement in requirements
    ] or None


# --- agent card ----------------------------------------------------------------------------


def _major_minor(version: str) -> str:
    """``0.3.0`` -> ``0.3``: v1.0 interfaces carry ``Major.Minor`` only."""
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else (version or "0.3")


def _is_v0(version: str) -> bool:
    return version.split(".", 1)[0] == "0"


def _legacy_interfaces(
    card: v1.AgentCard,
) -> tuple[str, str, str, list[v03.AgentInterface] | None]:
    """``url``, ``preferredTransport``, ``protocolVersion`` and ``additionalInterfaces``.

    From the card's ``0.x`` interfaces, in order; without any, from its first interface
    (a v0.3 client then meets the one endpoint the card prefers).
    """
    interfaces = card.supported_interfaces
    chosen: list[v1.AgentInterface] = []
    seen: set[tuple[str, str]] = set()
    for interface in [i for i in interfaces if _is_v0(i.protocol_version)] or interfaces[:1]:
        if (interface.url, interface.protocol_binding) not in seen:
            seen.add((interface.url, interface.protocol_binding))
            chosen.append(interface)
    if not chosen:
        return "", _DEFAULT_TRANSPORT, _DEFAULT_PROTOCOL_VERSION, None
    main = chosen[0]
    version = main.protocol_version
    if not _is_v0(version):
        version = _DEFAULT_PROTOCOL_VERSION
    elif version.count(".") < 2:
        version = f"{version}.0"
    additional = (
        [v03.AgentInterface(url=i.url, transport=i.protocol_binding) for i in chosen]
        if len(chosen) > 1
        else None
    )
    return main.url, main.protocol_binding, version, additional


def _capabilities_to_v1(card: v03.AgentCard) -> v1.AgentCapabilities:
    capabilities = card.capabilities
    return v1.AgentCapabilities(
        streaming=capabilities.streaming,
        push_notifications=capabilities.push_notifications,
        extensions=[
            v1.AgentExtension(
                uri=e.uri,
                description=e.description or "",
                required=bool(e.required),
                params=_dict(e.params),
            )
            for e in capabilities.extensions or ()
        ],
        extended_agent_card=card.supports_authenticated_extended_card,
    )


def _capabilities_from_v1(capabilities: v1.AgentCapabilities) -> v03.AgentCapabilities:
    return v03.AgentCapabilities(
        streaming=capabilities.streaming,
        push_notifications=capabilities.push_notifications,
        extensions=[
            v03.AgentExtension(
                uri=e.uri,
                description=_opt_str(e.description),
                required=e.required or None,
                params=_opt_dict(e.params),
            )
            for e in capabilities.extensions
        ]
        or None,
    )


def _skill_to_v1(skill: v03.AgentSkill, aliases: Mapping[str, list[str]]) -> v1.AgentSkill:
    return v1.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=list(skill.tags),
        examples=_list(skill.examples),
        input_modes=_list(skill.input_modes),
        output_modes=_list(skill.output_modes),
        security_requirements=_requirements_to_v1(skill.security or (), aliases),
    )


def _skill_from_v1(skill: v1.AgentSkill) -> v03.AgentSkill:
    return v03.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=list(skill.tags),
        examples=_opt_list(skill.examples),
        input_modes=_opt_list(skill.input_modes),
        output_modes=_opt_list(skill.output_modes),
        security=_requirements_from_v1(skill.security_requirements),
    )


def card_to_v1(card: v03.AgentCard) -> v1.AgentCard:
    """A v0.3 card -> v1.0: the main and additional interfaces become ``supportedInterfaces``.

    The main interface comes first; additional entries equal to one already listed (the spec
    asks cards to repeat the main one there) are skipped. All carry the card's
    ``protocolVersion`` as Major.Minor.
    """
    version = _major_minor(card.protocol_version)
    main = v1.AgentInterface(
        url=card.url,
        protocol_binding=card.preferred_transport or _DEFAULT_TRANSPORT,
        protocol_version=version,
    )
    interfaces = [main]
    seen = {(main.url, main.protocol_binding)}
    for extra in card.additional_interfaces or ():
        if (extra.url, extra.transport) not in seen:
            seen.add((extra.url, extra.transport))
            interfaces.append(
                v1.AgentInterface(
                    url=extra.url, protocol_binding=extra.transport, protocol_version=version
                )
            )
    schemes, aliases = _schemes_to_v1(card.security_schemes or {})
    provider = card.provider
    return v1.AgentCard(
        name=card.name,
        description=card.description,
        supported_interfaces=interfaces,
        provider=(
            v1.AgentProvider(url=provider.url, organization=provider.organization)
            if provider is not None
            else None
        ),
        version=card.version,
        documentation_url=card.documentation_url,
        capabilities=_capabilities_to_v1(card),
        security_schemes=schemes,
        security_requirements=_requirements_to_v1(card.security or (), aliases),
        default_input_modes=list(card.default_input_modes),
        default_output_modes=list(card.default_output_modes),
        skills=[_skill_to_v1(s, aliases) for s in card.skills],
        signatures=[
            v1.AgentCardSignature(
                protected=s.protected, signature=s.signature, header=_dict(s.header)
            )
            for s in card.signatures or ()
        ],
        icon_url=card.icon_url,
    )


def card_from_v1(card: v1.AgentCard) -> v03.AgentCard:
    """A v1.0 card -> v0.3, from its ``0.x`` interfaces (see :func:`card_v0_3_fields`)."""
    url, transport, version, additional = _legacy_interfaces(card)
    provider = card.provider
    return v03.AgentCard(
        protocol_version=version,
        name=card.name,
        description=card.description,
        url=url,
        preferred_transport=transport,
        additional_interfaces=additional,
        icon_url=card.icon_url,
        provider=(
            v03.AgentProvider(organization=provider.organization, url=provider.url)
            if provider is not None
            else None
        ),
        version=card.version,
        documentation_url=card.documentation_url,
        capabilities=_capabilities_from_v1(card.capabilities),
        security_schemes={
            name: _scheme_from_v1(scheme) for name, scheme in card.security_schemes.items()
        }
        or None,
        security=_requirements_from_v1(card.security_requirements),
        default_input_modes=list(card.default_input_modes),
        default_output_modes=list(card.default_output_modes),
        skills=[_skill_from_v1(s) for s in card.skills],
        supports_authenticated_extended_card=card.capabilities.extended_agent_card,
        signatures=[
            v03.AgentCardSignature(
                protected=s.protected, signature=s.signature, header=_opt_dict(s.header)
            )
            for s in card.signatures
        ]
        or None,
    )


def card_v0_3_fields(card_v1: v1.AgentCard) -> dict[str, object]:
    """The top-level v0.3 fields to merge into a v1.0 card for v0.3-era clients
    (spec-decisions A21).

    ``url``, ``preferredTransport`` and ``protocolVersion`` (``"0.3.0"`` for a ``0.3``
    interface) always; ``additionalInterfaces`` when the card has more than one 0.x
    interface; ``supportsAuthenticatedExtendedCard`` when the capability is set. Derived from
    the ``0.x`` entries of ``supportedInterfaces``, falling back to the first entry. Values
    are JSON-ready and equal to the same members of ``card_from_v1(card_v1)``.
    """
    url, transport, version, additional = _legacy_interfaces(card_v1)
    fields: dict[str, object] = {
        "url": url,
        "preferredTransport": transport,
        "protocolVersion": version,
    }
    if additional is not None:
        fields["additionalInterfaces"] = msgspec.to_builtins(additional)
    extended = card_v1.capabilities.extended_agent_card
    if extended is not None:
        fields["supportsAuthenticatedExtendedCard"] = extended
    return fields
