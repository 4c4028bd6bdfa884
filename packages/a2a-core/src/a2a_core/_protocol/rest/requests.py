"""REST requests: path values, query and body decoded into the v1.0 request (L1, pure)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias, TypeVar

import msgspec
from msgspec import field

from a2a_core import types as v1
from a2a_core._protocol import codec
from a2a_core._protocol.errors import (
    FieldViolation,
    InvalidParamsError,
    JSONParseError,
)
from a2a_core._protocol.operations import CallRequest, Operation
from a2a_core._protocol.rest.query import QueryField, QueryKind, parse_query
from a2a_core._protocol.rest.routes import RouteMatch
from a2a_core.compat.v0_3 import rest_convert, rest_types
from a2a_core.types._base import WireStruct
from a2a_core.types._common import Struct

T = TypeVar("T")

#: The v1.0 request a REST route decodes to (the operations' request union).
RestRequest: TypeAlias = CallRequest


# ---------------------------------------------------------------------------------------
# Request decoding


#: The query fields of each GET route that takes some.
_HISTORY: Final = QueryField("historyLength", QueryKind.INT)
_PAGE_SIZE: Final = QueryField("pageSize", QueryKind.INT)
_PAGE_TOKEN: Final = QueryField("pageToken", QueryKind.STRING)
_GET_TASK_QUERY: Final = (_HISTORY,)
_LIST_TASKS_QUERY: Final = (
    QueryField("contextId", QueryKind.STRING),
    QueryField("status", QueryKind.ENUM, enum=v1.TaskState),
    _PAGE_SIZE,
    _PAGE_TOKEN,
    _HISTORY,
    QueryField("statusTimestampAfter", QueryKind.TIMESTAMP),
    QueryField("includeArtifacts", QueryKind.BOOL),
)
_LIST_PUSH_QUERY: Final = (_PAGE_SIZE, _PAGE_TOKEN)


def _invalid(message: str, field_name: str | None = None) -> InvalidParamsError:
    violations = [FieldViolation(field_name, message)] if field_name else []
    return InvalidParamsError(
        f"{InvalidParamsError.default_message}: {message}", field_violations=violations
    )


# msgspec ends a validation message with the JSON path of the culprit: `... - at `$.a.b``.
_AT_PATH: Final = re.compile(r" - at `\$\.?([^`]*)`$")


def _schema_error(message: str) -> InvalidParamsError:
    """InvalidParams for a codec message, pointing at the field it names (for BadRequest)."""
    at = _AT_PATH.search(message)
    return _invalid(message, at.group(1) if at and at.group(1) else None)


def _decode_body(body: bytes, type_: type[T]) -> T:
    if not body.strip():
        body = b"{}"
    try:
        return codec.decode(body, type_)
    except codec.DecodeError as exc:
        if exc.malformed_json:
            raise JSONParseError(f"{JSONParseError.default_message}: {exc.message}") from None
        raise _schema_error(exc.message) from None
    except OverflowError:
        # A timestamp whose UTC form falls outside datetime's range (year 1 with an offset).
        raise _invalid("a timestamp is out of range") from None


def _convert(values: dict[str, Any], type_: type[T]) -> T:
    try:
        return codec.convert(values, type_)
    except codec.DecodeError as exc:
        raise _schema_error(exc.message) from None


def _same(body_value: str, path_value: str, what: str) -> None:
    if body_value and body_value != path_value:
        raise _invalid(f"{what} in the body does not match the path", what)


def _tenant(match: RouteMatch, body_tenant: str) -> str:
    """The tenant: the path's when the route has one (the body may repeat it), else the body's."""
    path_tenant = match.tenant
    if not path_tenant:
        return body_tenant
    _same(body_tenant, path_tenant, "tenant")
    return path_tenant


class CancelTaskBody(WireStruct, kw_only=True, frozen=True):
    """The body of ``POST /tasks/{id}:cancel``: CancelTaskRequest with the path's members
    optional (given, they must match the path)."""

    tenant: str = ""
    id: str = ""
    metadata: Struct = field(default_factory=dict)


class SubscribeToTaskBody(WireStruct, kw_only=True, frozen=True):
    """The body of ``POST /tasks/{id}:subscribe``: SubscribeToTaskRequest with the path's
    members optional (given, they must match the path)."""

    tenant: str = ""
    id: str = ""


#: What describes the v1.0 routes (`a2a_core.openapi`): the body a POST route decodes...
V1_BODIES: Final[dict[Operation, type[Any]]] = {
    Operation.SEND_MESSAGE: v1.SendMessageRequest,
    Operation.SEND_STREAMING_MESSAGE: v1.SendMessageRequest,
    Operation.CANCEL_TASK: CancelTaskBody,
    Operation.SUBSCRIBE_TO_TASK: SubscribeToTaskBody,
    Operation.CREATE_PUSH_CONFIG: v1.TaskPushNotificationConfig,
}
#: ... and the query fields a GET route reads.
V1_QUERIES: Final[dict[Operation, tuple[QueryField, ...]]] = {
    Operation.GET_TASK: _GET_TASK_QUERY,
    Operation.LIST_TASKS: _LIST_TASKS_QUERY,
    Operation.LIST_PUSH_CONFIGS: _LIST_PUSH_QUERY,
}


# One decoder per operation and dialect: path values, query and body to the v1.0 request.
_Decoder: TypeAlias = Callable[[RouteMatch, Sequence[tuple[str, str]], bytes], RestRequest]


def _v1_send(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    send = _decode_body(body, v1.SendMessageRequest)
    tenant = _tenant(match, send.tenant)
    return send if tenant == send.tenant else msgspec.structs.replace(send, tenant=tenant)


def _v1_get_task(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    values = parse_query(query, _GET_TASK_QUERY)
    return _convert({**values, "tenant": match.tenant, "id": match.params["id"]}, v1.GetTaskRequest)


def _v1_list_tasks(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    values = parse_query(query, _LIST_TASKS_QUERY)
    return _convert({**values, "tenant": match.tenant}, v1.ListTasksRequest)


def _v1_cancel(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    task_id = match.params["id"]
    cancel = _decode_body(body, CancelTaskBody)
    _same(cancel.id, task_id, "id")
    return v1.CancelTaskRequest(
        tenant=_tenant(match, cancel.tenant), id=task_id, metadata=cancel.metadata
    )


def _v1_subscribe(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    task_id = match.params["id"]
    tenant = match.tenant
    if match.route.method == "POST":
        subscribe = _decode_body(body, SubscribeToTaskBody)
        _same(subscribe.id, task_id, "id")
        tenant = _tenant(match, subscribe.tenant)
    return v1.SubscribeToTaskRequest(tenant=tenant, id=task_id)


def _v1_create_push(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    task_id = match.params["task_id"]
    config = _decode_body(body, v1.TaskPushNotificationConfig)
    _same(config.task_id, task_id, "taskId")
    return msgspec.structs.replace(config, tenant=_tenant(match, config.tenant), task_id=task_id)


def _v1_get_push(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    params = match.params
    return v1.GetTaskPushNotificationConfigRequest(
        tenant=match.tenant, task_id=params["task_id"], id=params["id"]
    )


def _v1_list_push(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    values = parse_query(query, _LIST_PUSH_QUERY)
    values.update(tenant=match.tenant, taskId=match.params["task_id"])
    return _convert(values, v1.ListTaskPushNotificationConfigsRequest)


def _v1_delete_push(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    params = match.params
    return v1.DeleteTaskPushNotificationConfigRequest(
        tenant=match.tenant, task_id=params["task_id"], id=params["id"]
    )


def _v1_extended_card(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    return v1.GetExtendedAgentCardRequest(tenant=match.tenant)


def _same_task_name(name: str, task_id: str, what: str) -> None:
    if name and rest_convert.parse_task_name(name) != task_id:
        raise _invalid(f"{what} in the body does not name the task of the path", what)


def _v0_3_push_config(
    body: rest_types.CreateTaskPushNotificationConfigBody, task_id: str
) -> v1.TaskPushNotificationConfig:
    """Either body form -> the v1.0 config, after checking every name against the path."""
    ids: list[str] = []
    if body.config is not None:  # {parent, configId, config: {name, pushNotificationConfig}}
        _same_task_name(body.parent, task_id, "parent")
        name, webhook = body.config.name, body.config.push_notification_config
        ids.append(body.config_id)
    elif body.push_notification_config is not None:  # {name, pushNotificationConfig}
        name, webhook = body.name, body.push_notification_config
    else:
        raise _invalid(
            "the body needs `config` or `pushNotificationConfig`", "pushNotificationConfig"
        )
    if name:
        parsed = rest_convert.parse_push_config_name(name)
        if parsed is None or parsed[0] != task_id:
            raise _invalid("name in the body does not name a config of the path's task", "name")
        ids.append(parsed[1])
    ids.append(webhook.id)
    distinct = {i for i in ids if i}
    if len(distinct) > 1:
        raise _invalid("the body gives different config ids", "pushNotificationConfig.id")
    config = rest_convert.push_config_to_v1(webhook, task_id=task_id)
    config_id = distinct.pop() if distinct else ""
    return config if config.id == config_id else msgspec.structs.replace(config, id=config_id)


def _v0_3_send(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    return rest_convert.send_request_to_v1(_decode_body(body, rest_types.SendMessageRequest))


def _v0_3_get_task(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    values = parse_query(query, _GET_TASK_QUERY)
    return _convert({**values, "id": match.params["id"]}, v1.GetTaskRequest)


def _v0_3_cancel(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    task_id = match.params["id"]
    cancel = _decode_body(body, rest_types.CancelTaskRequest)
    _same_task_name(cancel.name, task_id, "name")
    return v1.CancelTaskRequest(id=task_id)


def _v0_3_subscribe(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    task_id = match.params["id"]
    if match.route.method == "POST":
        subscribe = _decode_body(body, rest_types.TaskSubscriptionRequest)
        _same_task_name(subscribe.name, task_id, "name")
    return v1.SubscribeToTaskRequest(id=task_id)


def _v0_3_create_push(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    create = _decode_body(body, rest_types.CreateTaskPushNotificationConfigBody)
    return _v0_3_push_config(create, match.params["task_id"])


def _v0_3_get_push(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    params = match.params
    return v1.GetTaskPushNotificationConfigRequest(task_id=params["task_id"], id=params["id"])


def _v0_3_list_push(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    values = parse_query(query, _LIST_PUSH_QUERY)
    values["taskId"] = match.params["task_id"]
    return _convert(values, v1.ListTaskPushNotificationConfigsRequest)


def _v0_3_delete_push(
    match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes
) -> RestRequest:
    params = match.params
    return v1.DeleteTaskPushNotificationConfigRequest(task_id=params["task_id"], id=params["id"])


def _v0_3_card(match: RouteMatch, query: Sequence[tuple[str, str]], body: bytes) -> RestRequest:
    # GET /v1/card is the v0.3 GetAgentCard, i.e. the (extended) card (spec-decisions F1).
    return v1.GetExtendedAgentCardRequest()


#: The decoder of each operation's routes, per dialect (v0.3 has no ListTasks route).
_DECODERS: Final[dict[tuple[str, Operation], _Decoder]] = {
    ("1.0", Operation.SEND_MESSAGE): _v1_send,
    ("1.0", Operation.SEND_STREAMING_MESSAGE): _v1_send,
    ("1.0", Operation.GET_TASK): _v1_get_task,
    ("1.0", Operation.LIST_TASKS): _v1_list_tasks,
    ("1.0", Operation.CANCEL_TASK): _v1_cancel,
    ("1.0", Operation.SUBSCRIBE_TO_TASK): _v1_subscribe,
    ("1.0", Operation.CREATE_PUSH_CONFIG): _v1_create_push,
    ("1.0", Operation.GET_PUSH_CONFIG): _v1_get_push,
    ("1.0", Operation.LIST_PUSH_CONFIGS): _v1_list_push,
    ("1.0", Operation.DELETE_PUSH_CONFIG): _v1_delete_push,
    ("1.0", Operation.GET_EXTENDED_CARD): _v1_extended_card,
    ("0.3", Operation.SEND_MESSAGE): _v0_3_send,
    ("0.3", Operation.SEND_STREAMING_MESSAGE): _v0_3_send,
    ("0.3", Operation.GET_TASK): _v0_3_get_task,
    ("0.3", Operation.CANCEL_TASK): _v0_3_cancel,
    ("0.3", Operation.SUBSCRIBE_TO_TASK): _v0_3_subscribe,
    ("0.3", Operation.CREATE_PUSH_CONFIG): _v0_3_create_push,
    ("0.3", Operation.GET_PUSH_CONFIG): _v0_3_get_push,
    ("0.3", Operation.LIST_PUSH_CONFIGS): _v0_3_list_push,
    ("0.3", Operation.DELETE_PUSH_CONFIG): _v0_3_delete_push,
    ("0.3", Operation.GET_EXTENDED_CARD): _v0_3_card,
}


def decode_rest_request(
    match: RouteMatch,
    query: Sequence[tuple[str, str]] = (),
    body: bytes = b"",
) -> RestRequest:
    """Build the v1.0 request of ``match.operation`` from the path, query and body.

    ``query`` is the decoded query pairs (`a2a_core.http.HttpRequest.query_params`).
    Raises `InvalidParamsError` (bad parameters, or a body value that contradicts the
    path) or `JSONParseError` (a body that is not JSON); nothing else on any input. The
    ``Content-Type`` is checked separately (`check_request_content_type`).
    """
    return _DECODERS[match.dialect, match.operation](match, query, body)
