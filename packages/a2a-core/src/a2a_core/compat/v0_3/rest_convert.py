"""Conversions between the v0.3 REST (proto ProtoJSON) payloads and the v1.0 model.

This module owns the *meaning* of the v0.3 REST dialect of :mod:`.rest_types`: how each of
its values maps onto the v1.0 model and back, and the compound resource names
(``tasks/{id}``, ``tasks/{id}/pushNotificationConfigs/{cfg}``) that stand for ids there.
Functions are pure and total (they never raise on a value their own model accepts) and are
named after the v0.3 value they take or return: ``message_to_v1(rest.Message) ->
v1.Message``, ``message_from_v1(v1.Message) -> rest.Message``. Checking a request against
its path (a name that names another task) is the REST codec's job (:mod:`a2a_core.rest`).

The JSON-RPC v0.3 conversions (:mod:`.convert`) make the same choices where the two dialects
meet: the state and role tables, the ``data_part_compat`` wrapping of non-object data, the
default ``final`` flag and the legacy card fields are reused from there.

What does not survive (the shared subset is everything else; on it v1.0 -> v0.3 -> v1.0 is
the identity, which the property tests check):

v1.0 -> v0.3 (a v0.3 REST client sees less):

- ``Message.referenceTaskIds`` (the v0.3 proto has no such field);
- ``filename`` and ``mediaType`` of text and data parts (v0.3 has them only on files);
- ``Part.data`` that is not a JSON object is wrapped as ``{"value": x}`` with
  ``metadata.data_part_compat = true`` (unwrapped again on the way back);
- ``tenant`` everywhere;
- a push config whose task id contains ``/pushNotificationConfigs/`` (the compound name
  ``tasks/{id}/pushNotificationConfigs/{cfg}`` is split at its first occurrence);
- ``taskId`` of the webhook in a ``SendMessageConfiguration`` (v0.3 nests a bare
  ``PushNotificationConfig`` there; v1.0 says the field should be empty anyway);
- ``SendMessageConfiguration.historyLength = 0`` ("no history"): proto3 cannot tell 0 from
  unset, so it comes back unset;
- push ``authentication`` becomes ``schemes: [scheme]``;
- card: ``iconUrl``; ``supportedInterfaces`` other than the 0.x ones (see
  :func:`.convert.card_v0_3_fields`); a ``deviceCode`` OAuth flow (its scheme is kept with
  empty ``flows``); ``pkceRequired``; capabilities set to ``false`` become absent.

v0.3 -> v1.0 (the server sees less than the client sent):

- ``final`` of status updates (a v1.0 stream simply ends);
- push ``authentication.schemes`` beyond the first;
- ``historyLength: 0`` in a send configuration means unset (see above);
- card: the patch digit of ``protocolVersion``; an OAuth scheme with no flow (dropped).

Normalisations: ``TASK_STATE_CANCELLED`` <-> ``TASK_STATE_CANCELED``; an absent ``blocking``
in a ``configuration`` is proto3's ``false`` (non-blocking: the v0.3 proto gives the field no
presence, so proto-based clients such as the official SDK's REST transports ask for a
non-blocking send by leaving it out) and comes back as ``blocking: false``; a request without
``configuration`` keeps the blocking default; timestamps come back in UTC.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, NoReturn

from msgspec import UNSET

from a2a_core import types as v1
from a2a_core.compat.v0_3 import rest_types as rest
from a2a_core.compat.v0_3.convert import DATA_PART_COMPAT_KEY, card_v0_3_fields, final_for_state

__all__ = [
    "PUSH_CONFIGS_COLLECTION",
    "TASKS_COLLECTION",
    "artifact_from_v1",
    "artifact_to_v1",
    "artifact_update_from_v1",
    "artifact_update_to_v1",
    "card_from_v1",
    "card_to_v1",
    "message_from_v1",
    "message_to_v1",
    "parse_push_config_name",
    "parse_task_name",
    "part_from_v1",
    "part_to_v1",
    "push_config_from_v1",
    "push_config_list_from_v1",
    "push_config_list_to_v1",
    "push_config_name",
    "push_config_to_v1",
    "role_from_v1",
    "role_to_v1",
    "send_configuration_from_v1",
    "send_configuration_to_v1",
    "send_request_from_v1",
    "send_request_to_v1",
    "send_response_from_v1",
    "send_response_to_v1",
    "status_update_from_v1",
    "status_update_to_v1",
    "stream_response_from_v1",
    "stream_response_to_v1",
    "task_from_v1",
    "task_name",
    "task_push_config_from_v1",
    "task_push_config_to_v1",
    "task_state_from_v1",
    "task_state_to_v1",
    "task_status_from_v1",
    "task_status_to_v1",
    "task_to_v1",
]

#: The collection segment of task resource names.
TASKS_COLLECTION: Final = "tasks"
#: The collection segment of push-config resource names under a task.
PUSH_CONFIGS_COLLECTION: Final = "pushNotificationConfigs"

_TASK_PREFIX: Final = TASKS_COLLECTION + "/"
_CONFIGS_INFIX: Final = "/" + PUSH_CONFIGS_COLLECTION + "/"
_DEFAULT_TRANSPORT: Final = "JSONRPC"


def _unreachable(value: object) -> NoReturn:
    # Only values built around their own validation (a oneof with no member set) get here.
    raise ValueError(f"{type(value).__name__} has no member set")


# --- resource names --------------------------------------------------------------------------


def task_name(task_id: str) -> str:
    """``tasks/{id}``: the v0.3 resource name of a task."""
    return _TASK_PREFIX + task_id


def push_config_name(task_id: str, config_id: str) -> str:
    """``tasks/{id}/pushNotificationConfigs/{cfg}``: the v0.3 name of a push config."""
    return _TASK_PREFIX + task_id + _CONFIGS_INFIX + config_id


def parse_task_name(name: str) -> str | None:
    """The task id of ``tasks/{id}``, or ``None`` when ``name`` is not such a name.

    Lenient: the id is everything after ``tasks/``, so a caller that compares it with the id
    of a path (which never holds ``/``) rejects a longer name by the comparison alone.
    """
    task_id = name.removeprefix(_TASK_PREFIX)
    if task_id == name or not task_id:
        return None
    return task_id


def parse_push_config_name(name: str) -> tuple[str, str] | None:
    """``(task id, config id)`` of ``tasks/{id}/pushNotificationConfigs/{cfg}``, else ``None``.

    The task id ends at the first ``/pushNotificationConfigs/``. The config id may be empty
    (``.../pushNotificationConfigs/``): the reference SDK's client writes that name for a
    config whose id the server is to assign.
    """
    rest_of = name.removeprefix(_TASK_PREFIX)
    if rest_of == name:
        return None
    task_id, infix, config_id = rest_of.partition(_CONFIGS_INFIX)
    if not infix or not task_id:
        return None
    return task_id, config_id


# --- enums -----------------------------------------------------------------------------------

_STATE_TO_V1: Final[Mapping[rest.TaskState, v1.TaskState]] = {
    rest.TaskState.UNSPECIFIED: v1.TaskState.UNSPECIFIED,
    rest.TaskState.SUBMITTED: v1.TaskState.SUBMITTED,
    rest.TaskState.WORKING: v1.TaskState.WORKING,
    rest.TaskState.COMPLETED: v1.TaskState.COMPLETED,
    rest.TaskState.FAILED: v1.TaskState.FAILED,
    rest.TaskState.CANCELLED: v1.TaskState.CANCELED,
    rest.TaskState.INPUT_REQUIRED: v1.TaskState.INPUT_REQUIRED,
    rest.TaskState.REJECTED: v1.TaskState.REJECTED,
    rest.TaskState.AUTH_REQUIRED: v1.TaskState.AUTH_REQUIRED,
}
_STATE_FROM_V1: Final[Mapping[v1.TaskState, rest.TaskState]] = {
    new: old for old, new in _STATE_TO_V1.items()
}
_ROLE_TO_V1: Final[Mapping[rest.Role, v1.Role]] = {
    rest.Role.UNSPECIFIED: v1.Role.UNSPECIFIED,
    rest.Role.USER: v1.Role.USER,
    rest.Role.AGENT: v1.Role.AGENT,
}
_ROLE_FROM_V1: Final[Mapping[v1.Role, rest.Role]] = {new: old for old, new in _ROLE_TO_V1.items()}


def task_state_to_v1(state: rest.TaskState) -> v1.TaskState:
    """``TASK_STATE_CANCELLED`` -> ``TASK_STATE_CANCELED``; every other name is the same."""
    return _STATE_TO_V1[state]


def task_state_from_v1(state: v1.TaskState) -> rest.TaskState:
    """``TASK_STATE_CANCELED`` -> ``TASK_STATE_CANCELLED``; every other name is the same."""
    return _STATE_FROM_V1[state]


def role_to_v1(role: rest.Role) -> v1.Role:
    """Same names in both versions."""
    return _ROLE_TO_V1[role]


def role_from_v1(role: v1.Role) -> rest.Role:
    """Same names in both versions."""
    return _ROLE_FROM_V1[role]


# --- parts, messages, artifacts, tasks -------------------------------------------------------


def part_to_v1(part: rest.Part) -> v1.Part:
    """``{text}|{file}|{data}`` -> a v1.0 Part; a wrapped non-object ``data`` is unwrapped."""
    metadata = dict(part.metadata)
    if isinstance(part.text, str):
        return v1.Part(text=part.text, metadata=metadata)
    if (file := part.file) is not None:
        if isinstance(file.file_with_bytes, bytes):
            return v1.Part(
                raw=file.file_with_bytes,
                metadata=metadata,
                filename=file.name,
                media_type=file.mime_type,
            )
        url = file.file_with_uri if isinstance(file.file_with_uri, str) else ""
        return v1.Part(url=url, metadata=metadata, filename=file.name, media_type=file.mime_type)
    if (data := part.data) is not None:
        if metadata.get(DATA_PART_COMPAT_KEY) is True and set(data.data) == {"value"}:
            del metadata[DATA_PART_COMPAT_KEY]
            return v1.Part(data=data.data["value"], metadata=metadata)
        return v1.Part(data=dict(data.data), metadata=metadata)
    _unreachable(part)


def part_from_v1(part: v1.Part) -> rest.Part:
    """A v1.0 Part -> ``{text}|{file}|{data}`` (``raw``/``url`` become ``file``)."""
    metadata = dict(part.metadata)
    if isinstance(part.text, str):
        return rest.Part(text=part.text, metadata=metadata)
    if isinstance(part.raw, bytes):
        file = rest.FilePart(
            file_with_bytes=part.raw, mime_type=part.media_type, name=part.filename
        )
        return rest.Part(file=file, metadata=metadata)
    if isinstance(part.url, str):
        file = rest.FilePart(file_with_uri=part.url, mime_type=part.media_type, name=part.filename)
        return rest.Part(file=file, metadata=metadata)
    data: Any = None if part.data is UNSET else part.data
    if isinstance(data, dict):
        return rest.Part(data=rest.DataPart(data=dict(data)), metadata=metadata)
    metadata[DATA_PART_COMPAT_KEY] = True
    return rest.Part(data=rest.DataPart(data={"value": data}), metadata=metadata)


def message_to_v1(message: rest.Message) -> v1.Message:
    """A v0.3 message (parts in ``content``) -> v1.0."""
    return v1.Message(
        message_id=message.message_id,
        context_id=message.context_id,
        task_id=message.task_id,
        role=role_to_v1(message.role),
        parts=[part_to_v1(p) for p in message.content],
        metadata=dict(message.metadata),
        extensions=list(message.extensions),
    )


def message_from_v1(message: v1.Message) -> rest.Message:
    """A v1.0 message -> v0.3 (``referenceTaskIds`` has no v0.3 form and is dropped)."""
    return rest.Message(
        message_id=message.message_id,
        context_id=message.context_id,
        task_id=message.task_id,
        role=role_from_v1(message.role),
        content=[part_from_v1(p) for p in message.parts],
        metadata=dict(message.metadata),
        extensions=list(message.extensions),
    )


def artifact_to_v1(artifact: rest.Artifact) -> v1.Artifact:
    """A v0.3 artifact -> v1.0 (same members)."""
    return v1.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name,
        description=artifact.description,
        parts=[part_to_v1(p) for p in artifact.parts],
        metadata=dict(artifact.metadata),
        extensions=list(artifact.extensions),
    )


def artifact_from_v1(artifact: v1.Artifact) -> rest.Artifact:
    """A v1.0 artifact -> v0.3 (same members)."""
    return rest.Artifact(
        artifact_id=artifact.artifact_id,
        name=artifact.name,
        description=artifact.description,
        parts=[part_from_v1(p) for p in artifact.parts],
        metadata=dict(artifact.metadata),
        extensions=list(artifact.extensions),
    )


def task_status_to_v1(status: rest.TaskStatus) -> v1.TaskStatus:
    """A v0.3 status (message in ``update``) -> v1.0; the timestamp is normalised to UTC."""
    return v1.TaskStatus(
        state=task_state_to_v1(status.state),
        message=message_to_v1(status.update) if status.update is not None else None,
        timestamp=status.timestamp,
    )


def task_status_from_v1(status: v1.TaskStatus) -> rest.TaskStatus:
    """A v1.0 status -> v0.3."""
    return rest.TaskStatus(
        state=task_state_from_v1(status.state),
        update=message_from_v1(status.message) if status.message is not None else None,
        timestamp=status.timestamp,
    )


def task_to_v1(task: rest.Task) -> v1.Task:
    """A v0.3 task -> v1.0."""
    return v1.Task(
        id=task.id,
        context_id=task.context_id,
        status=task_status_to_v1(task.status),
        artifacts=[artifact_to_v1(a) for a in task.artifacts],
        history=[message_to_v1(m) for m in task.history],
        metadata=dict(task.metadata),
    )


def task_from_v1(task: v1.Task) -> rest.Task:
    """A v1.0 task -> v0.3."""
    return rest.Task(
        id=task.id,
        context_id=task.context_id,
        status=task_status_from_v1(task.status),
        artifacts=[artifact_from_v1(a) for a in task.artifacts],
        history=[message_from_v1(m) for m in task.history],
        metadata=dict(task.metadata),
    )


# --- events and results ----------------------------------------------------------------------


def status_update_to_v1(event: rest.TaskStatusUpdateEvent) -> v1.TaskStatusUpdateEvent:
    """A v0.3 status update -> v1.0; ``final`` is dropped (a v1.0 stream just ends)."""
    return v1.TaskStatusUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        status=task_status_to_v1(event.status),
        metadata=dict(event.metadata),
    )


def status_update_from_v1(
    event: v1.TaskStatusUpdateEvent, *, final: bool | None = None
) -> rest.TaskStatusUpdateEvent:
    """A v1.0 status update -> v0.3, with ``final`` as given or ``final_for_state``."""
    return rest.TaskStatusUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        status=task_status_from_v1(event.status),
        final=final_for_state(event.status.state) if final is None else final,
        metadata=dict(event.metadata),
    )


def artifact_update_to_v1(event: rest.TaskArtifactUpdateEvent) -> v1.TaskArtifactUpdateEvent:
    """A v0.3 artifact update -> v1.0 (same members)."""
    return v1.TaskArtifactUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        artifact=artifact_to_v1(event.artifact),
        append=event.append,
        last_chunk=event.last_chunk,
        metadata=dict(event.metadata),
    )


def artifact_update_from_v1(event: v1.TaskArtifactUpdateEvent) -> rest.TaskArtifactUpdateEvent:
    """A v1.0 artifact update -> v0.3 (same members)."""
    return rest.TaskArtifactUpdateEvent(
        task_id=event.task_id,
        context_id=event.context_id,
        artifact=artifact_from_v1(event.artifact),
        append=event.append,
        last_chunk=event.last_chunk,
        metadata=dict(event.metadata),
    )


def send_response_to_v1(response: rest.SendMessageResponse) -> v1.SendMessageResponse:
    """``{task}|{message}`` -> the v1.0 response (same oneof)."""
    if response.task is not None:
        return v1.SendMessageResponse(task=task_to_v1(response.task))
    if response.msg is not None:
        return v1.SendMessageResponse(message=message_to_v1(response.msg))
    _unreachable(response)


def send_response_from_v1(response: v1.SendMessageResponse) -> rest.SendMessageResponse:
    """The v1.0 response -> ``{task}|{message}``."""
    if response.task is not None:
        return rest.SendMessageResponse(task=task_from_v1(response.task))
    if response.message is not None:
        return rest.SendMessageResponse(msg=message_from_v1(response.message))
    _unreachable(response)


def stream_response_to_v1(event: rest.StreamResponse) -> v1.StreamResponse:
    """A v0.3 stream event -> v1.0 (same oneof; ``final`` is dropped)."""
    if event.task is not None:
        return v1.StreamResponse(task=task_to_v1(event.task))
    if event.msg is not None:
        return v1.StreamResponse(message=message_to_v1(event.msg))
    if event.status_update is not None:
        return v1.StreamResponse(status_update=status_update_to_v1(event.status_update))
    if event.artifact_update is not None:
        return v1.StreamResponse(artifact_update=artifact_update_to_v1(event.artifact_update))
    _unreachable(event)


def stream_response_from_v1(
    event: v1.StreamResponse, *, final: bool | None = None
) -> rest.StreamResponse:
    """A v1.0 stream event -> v0.3; ``final`` applies to a status update (see above)."""
    if event.task is not None:
        return rest.StreamResponse(task=task_from_v1(event.task))
    if event.message is not None:
        return rest.StreamResponse(msg=message_from_v1(event.message))
    if event.status_update is not None:
        update = status_update_from_v1(event.status_update, final=final)
        return rest.StreamResponse(status_update=update)
    if event.artifact_update is not None:
        return rest.StreamResponse(artifact_update=artifact_update_from_v1(event.artifact_update))
    _unreachable(event)


# --- push-notification configs ---------------------------------------------------------------


def push_config_to_v1(
    config: rest.PushNotificationConfig, *, task_id: str = ""
) -> v1.TaskPushNotificationConfig:
    """A nested v0.3 webhook -> the flat v1.0 config; only the first scheme is kept."""
    auth = config.authentication
    return v1.TaskPushNotificationConfig(
        id=config.id,
        task_id=task_id,
        url=config.url,
        token=config.token,
        authentication=(
            v1.AuthenticationInfo(scheme=auth.schemes[0], credentials=auth.credentials)
            if auth is not None and auth.schemes
            else None
        ),
    )


def push_config_from_v1(config: v1.TaskPushNotificationConfig) -> rest.PushNotificationConfig:
    """The flat v1.0 config -> the v0.3 webhook (``tenant`` and ``taskId`` are dropped)."""
    auth = config.authentication
    return rest.PushNotificationConfig(
        id=config.id,
        url=config.url,
        token=config.token,
        authentication=(
            rest.AuthenticationInfo(schemes=[auth.scheme], credentials=auth.credentials)
            if auth is not None
            else None
        ),
    )


def task_push_config_to_v1(
    config: rest.TaskPushNotificationConfig,
) -> v1.TaskPushNotificationConfig:
    """``{name, pushNotificationConfig}`` -> the flat v1.0 config.

    The task id comes from ``name`` (empty when it is not a push-config name); the config id
    is ``pushNotificationConfig.id``, else the one in ``name``.
    """
    parsed = parse_push_config_name(config.name)
    task_id, name_config_id = parsed if parsed is not None else ("", "")
    flat = push_config_to_v1(config.push_notification_config, task_id=task_id)
    if not flat.id and name_config_id:
        return v1.TaskPushNotificationConfig(
            id=name_config_id,
            task_id=flat.task_id,
            url=flat.url,
            token=flat.token,
            authentication=flat.authentication,
        )
    return flat


def task_push_config_from_v1(
    config: v1.TaskPushNotificationConfig,
) -> rest.TaskPushNotificationConfig:
    """The flat v1.0 config -> ``{name: "tasks/{id}/pushNotificationConfigs/{cfg}", ...}``."""
    return rest.TaskPushNotificationConfig(
        name=push_config_name(config.task_id, config.id),
        push_notification_config=push_config_from_v1(config),
    )


def push_config_list_to_v1(
    response: rest.ListTaskPushNotificationConfigResponse,
) -> v1.ListTaskPushNotificationConfigsResponse:
    """A v0.3 page of configs -> v1.0 (the page token is kept)."""
    return v1.ListTaskPushNotificationConfigsResponse(
        configs=[task_push_config_to_v1(c) for c in response.configs],
        next_page_token=response.next_page_token,
    )


def push_config_list_from_v1(
    response: v1.ListTaskPushNotificationConfigsResponse,
) -> rest.ListTaskPushNotificationConfigResponse:
    """A v1.0 page of configs -> v0.3 (the page token is kept)."""
    return rest.ListTaskPushNotificationConfigResponse(
        configs=[task_push_config_from_v1(c) for c in response.configs],
        next_page_token=response.next_page_token,
    )


# --- send requests ---------------------------------------------------------------------------


def send_configuration_to_v1(
    config: rest.SendMessageConfiguration,
) -> v1.SendMessageConfiguration:
    """``blocking`` -> ``returnImmediately = not blocking``; ``historyLength`` 0 is unset.

    ``blocking`` is a proto3 ``bool`` in the v0.3 proto (no presence): absent is ``false``,
    non-blocking. (The JSON-RPC binding, with its optional ``blocking``, reads absent as
    blocking; a REST request without any ``configuration`` blocks too.)
    """
    push = config.push_notification
    return v1.SendMessageConfiguration(
        accepted_output_modes=list(config.accepted_output_modes),
        task_push_notification_config=push_config_to_v1(push) if push is not None else None,
        history_length=config.history_length or None,
        return_immediately=not config.blocking,
    )


def send_configuration_from_v1(
    config: v1.SendMessageConfiguration,
) -> rest.SendMessageConfiguration:
    """``returnImmediately`` -> an explicit ``blocking``; an unset or 0 history length -> 0."""
    push = config.task_push_notification_config
    return rest.SendMessageConfiguration(
        accepted_output_modes=list(config.accepted_output_modes),
        push_notification=push_config_from_v1(push) if push is not None else None,
        history_length=config.history_length or 0,
        blocking=not config.return_immediately,
    )


def send_request_to_v1(request: rest.SendMessageRequest) -> v1.SendMessageRequest:
    """The body of ``/v1/message:send`` (and ``:stream``) -> SendMessageRequest."""
    configuration = request.configuration
    return v1.SendMessageRequest(
        message=message_to_v1(request.request),
        configuration=(
            send_configuration_to_v1(configuration) if configuration is not None else None
        ),
        metadata=dict(request.metadata),
    )


def send_request_from_v1(request: v1.SendMessageRequest) -> rest.SendMessageRequest:
    """SendMessageRequest -> the v0.3 body (``tenant`` is dropped)."""
    configuration = request.configuration
    return rest.SendMessageRequest(
        request=message_from_v1(request.message),
        configuration=(
            send_configuration_from_v1(configuration) if configuration is not None else None
        ),
        metadata=dict(request.metadata),
    )


# --- agent card ------------------------------------------------------------------------------


def _requirements_from_v1(requirements: Sequence[v1.SecurityRequirement]) -> list[rest.Security]:
    return [
        rest.Security(
            schemes={name: rest.StringList(list=list(s.list)) for name, s in r.schemes.items()}
        )
        for r in requirements
    ]


def _requirements_to_v1(requirements: Sequence[rest.Security]) -> list[v1.SecurityRequirement]:
    return [
        v1.SecurityRequirement(
            schemes={name: v1.StringList(list=list(s.list)) for name, s in r.schemes.items()}
        )
        for r in requirements
    ]


def _flows_from_v1(flows: v1.OAuthFlows) -> rest.OAuthFlows:
    """The one v1.0 flow -> v0.3 (``deviceCode`` has no v0.3 form: empty flows)."""
    if (code := flows.authorization_code) is not None:
        return rest.OAuthFlows(
            authorization_code=rest.AuthorizationCodeOAuthFlow(
                authorization_url=code.authorization_url,
                token_url=code.token_url,
                refresh_url=code.refresh_url,
                scopes=dict(code.scopes),
            )
        )
    if (client := flows.client_credentials) is not None:
        return rest.OAuthFlows(
            client_credentials=rest.ClientCredentialsOAuthFlow(
                token_url=client.token_url,
                refresh_url=client.refresh_url,
                scopes=dict(client.scopes),
            )
        )
    if (implicit := flows.implicit) is not None:
        return rest.OAuthFlows(
            implicit=rest.ImplicitOAuthFlow(
                authorization_url=implicit.authorization_url,
                refresh_url=implicit.refresh_url,
                scopes=dict(implicit.scopes),
            )
        )
    if (password := flows.password) is not None:
        return rest.OAuthFlows(
            password=rest.PasswordOAuthFlow(
                token_url=password.token_url,
                refresh_url=password.refresh_url,
                scopes=dict(password.scopes),
            )
        )
    return rest.OAuthFlows()


def _flows_to_v1(flows: rest.OAuthFlows) -> v1.OAuthFlows | None:
    """The v0.3 flow -> v1.0, or ``None`` when no flow is set (no v1.0 form)."""
    if (code := flows.authorization_code) is not None:
        return v1.OAuthFlows(
            authorization_code=v1.AuthorizationCodeOAuthFlow(
                authorization_url=code.authorization_url,
                token_url=code.token_url,
                refresh_url=code.refresh_url,
                scopes=dict(code.scopes),
            )
        )
    if (client := flows.client_credentials) is not None:
        return v1.OAuthFlows(
            client_credentials=v1.ClientCredentialsOAuthFlow(
                token_url=client.token_url,
                refresh_url=client.refresh_url,
                scopes=dict(client.scopes),
            )
        )
    if (implicit := flows.implicit) is not None:
        return v1.OAuthFlows(
            implicit=v1.ImplicitOAuthFlow(
                authorization_url=implicit.authorization_url,
                refresh_url=implicit.refresh_url,
                scopes=dict(implicit.scopes),
            )
        )
    if (password := flows.password) is not None:
        return v1.OAuthFlows(
            password=v1.PasswordOAuthFlow(
                token_url=password.token_url,
                refresh_url=password.refresh_url,
                scopes=dict(password.scopes),
            )
        )
    return None


def _scheme_from_v1(scheme: v1.SecurityScheme) -> rest.SecurityScheme:
    if (api_key := scheme.api_key_security_scheme) is not None:
        return rest.SecurityScheme(
            api_key_security_scheme=rest.APIKeySecurityScheme(
                description=api_key.description, location=api_key.location, name=api_key.name
            )
        )
    if (http := scheme.http_auth_security_scheme) is not None:
        return rest.SecurityScheme(
            http_auth_security_scheme=rest.HTTPAuthSecurityScheme(
                description=http.description,
                scheme=http.scheme,
                bearer_format=http.bearer_format,
            )
        )
    if (oauth := scheme.oauth2_security_scheme) is not None:
        return rest.SecurityScheme(
            oauth2_security_scheme=rest.OAuth2SecurityScheme(
                description=oauth.description,
                flows=_flows_from_v1(oauth.flows),
                oauth2_metadata_url=oauth.oauth2_metadata_url,
            )
        )
    if (oidc := scheme.open_id_connect_security_scheme) is not None:
        return rest.SecurityScheme(
            open_id_connect_security_scheme=rest.OpenIdConnectSecurityScheme(
                description=oidc.description, open_id_connect_url=oidc.open_id_connect_url
            )
        )
    if (mtls := scheme.mtls_security_scheme) is not None:
        return rest.SecurityScheme(
            mtls_security_scheme=rest.MutualTlsSecurityScheme(description=mtls.description)
        )
    _unreachable(scheme)


def _scheme_to_v1(scheme: rest.SecurityScheme) -> v1.SecurityScheme | None:
    """The v1.0 scheme, or ``None`` for an OAuth scheme without a flow (no v1.0 form)."""
    if (api_key := scheme.api_key_security_scheme) is not None:
        return v1.SecurityScheme(
            api_key_security_scheme=v1.APIKeySecurityScheme(
                description=api_key.description, location=api_key.location, name=api_key.name
            )
        )
    if (http := scheme.http_auth_security_scheme) is not None:
        return v1.SecurityScheme(
            http_auth_security_scheme=v1.HTTPAuthSecurityScheme(
                description=http.description,
                scheme=http.scheme,
                bearer_format=http.bearer_format,
            )
        )
    if (oauth := scheme.oauth2_security_scheme) is not None:
        flows = _flows_to_v1(oauth.flows)
        if flows is None:
            return None
        return v1.SecurityScheme(
            oauth2_security_scheme=v1.OAuth2SecurityScheme(
                description=oauth.description,
                flows=flows,
                oauth2_metadata_url=oauth.oauth2_metadata_url,
            )
        )
    if (oidc := scheme.open_id_connect_security_scheme) is not None:
        return v1.SecurityScheme(
            open_id_connect_security_scheme=v1.OpenIdConnectSecurityScheme(
                description=oidc.description, open_id_connect_url=oidc.open_id_connect_url
            )
        )
    if (mtls := scheme.mtls_security_scheme) is not None:
        return v1.SecurityScheme(
            mtls_security_scheme=v1.MutualTlsSecurityScheme(description=mtls.description)
        )
    _unreachable(scheme)


def _skill_from_v1(skill: v1.AgentSkill) -> rest.AgentSkill:
    return rest.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=list(skill.tags),
        examples=list(skill.examples),
        input_modes=list(skill.input_modes),
        output_modes=list(skill.output_modes),
        security=_requirements_from_v1(skill.security_requirements),
    )


def _skill_to_v1(skill: rest.AgentSkill) -> v1.AgentSkill:
    return v1.AgentSkill(
        id=skill.id,
        name=skill.name,
        description=skill.description,
        tags=list(skill.tags),
        examples=list(skill.examples),
        input_modes=list(skill.input_modes),
        output_modes=list(skill.output_modes),
        security_requirements=_requirements_to_v1(skill.security),
    )


def card_from_v1(card: v1.AgentCard) -> rest.AgentCard:
    """A v1.0 card -> the v0.3 proto card of ``GET /v1/card``.

    ``url``, ``preferredTransport``, ``protocolVersion`` and ``additionalInterfaces`` come
    from the card's 0.x interfaces exactly as for the JSON-RPC v0.3 card
    (:func:`.convert.card_v0_3_fields`), so both v0.3 bindings describe the same endpoints.
    """
    legacy = card_v0_3_fields(card)
    listed = legacy.get("additionalInterfaces")
    additional = [
        rest.AgentInterface(url=str(i["url"]), transport=str(i["transport"]))
        for i in (listed if isinstance(listed, list) else ())
    ]
    capabilities = card.capabilities
    provider = card.provider
    return rest.AgentCard(
        protocol_version=str(legacy["protocolVersion"]),
        name=card.name,
        description=card.description,
        url=str(legacy["url"]),
        preferred_transport=str(legacy["preferredTransport"]),
        additional_interfaces=additional,
        provider=(
            rest.AgentProvider(url=provider.url, organization=provider.organization)
            if provider is not None
            else None
        ),
        version=card.version,
        documentation_url=card.documentation_url or "",
        capabilities=rest.AgentCapabilities(
            streaming=bool(capabilities.streaming),
            push_notifications=bool(capabilities.push_notifications),
            extensions=[
                rest.AgentExtension(
                    uri=e.uri, description=e.description, required=e.required, params=e.params
                )
                for e in capabilities.extensions
            ],
        ),
        security_schemes={n: _scheme_from_v1(s) for n, s in card.security_schemes.items()},
        security=_requirements_from_v1(card.security_requirements),
        default_input_modes=list(card.default_input_modes),
        default_output_modes=list(card.default_output_modes),
        skills=[_skill_from_v1(s) for s in card.skills],
        supports_authenticated_extended_card=bool(capabilities.extended_agent_card),
        signatures=[
            rest.AgentCardSignature(
                protected=s.protected, signature=s.signature, header=dict(s.header)
            )
            for s in card.signatures
        ],
    )


def _major_minor(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else (version or "0.3")


def card_to_v1(card: rest.AgentCard) -> v1.AgentCard:
    """A v0.3 proto card -> v1.0: ``url`` + ``additionalInterfaces`` -> ``supportedInterfaces``.

    The main interface comes first and additional entries equal to it are skipped; all carry
    the card's ``protocolVersion`` as Major.Minor. Capabilities that are false become absent.
    """
    version = _major_minor(card.protocol_version)
    main = v1.AgentInterface(
        url=card.url,
        protocol_binding=card.preferred_transport or _DEFAULT_TRANSPORT,
        protocol_version=version,
    )
    interfaces = [main]
    for extra in card.additional_interfaces:
        if extra.url != main.url or extra.transport != main.protocol_binding:
            interfaces.append(
                v1.AgentInterface(
                    url=extra.url, protocol_binding=extra.transport, protocol_version=version
                )
            )
    capabilities = card.capabilities or rest.AgentCapabilities()
    schemes = {name: _scheme_to_v1(scheme) for name, scheme in card.security_schemes.items()}
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
        documentation_url=card.documentation_url or None,
        capabilities=v1.AgentCapabilities(
            streaming=capabilities.streaming or None,
            push_notifications=capabilities.push_notifications or None,
            extensions=[
                v1.AgentExtension(
                    uri=e.uri, description=e.description, required=e.required, params=e.params
                )
                for e in capabilities.extensions
            ],
            extended_agent_card=card.supports_authenticated_extended_card or None,
        ),
        security_schemes={name: s for name, s in schemes.items() if s is not None},
        security_requirements=_requirements_to_v1(card.security),
        default_input_modes=list(card.default_input_modes),
        default_output_modes=list(card.default_output_modes),
        skills=[_skill_to_v1(s) for s in card.skills],
        signatures=[
            v1.AgentCardSignature(
                protected=s.protected, signature=s.signature, header=dict(s.header)
            )
            for s in card.signatures
        ],
    )
