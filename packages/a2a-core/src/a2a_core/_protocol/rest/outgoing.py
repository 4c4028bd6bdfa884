"""REST requests the other way round: a v1.0 request as a method, path, query and body (L1).

The client's half of `decode_rest_request`: what this module builds, that one decodes back to
the same v1.0 request (a property the tests check). The paths are the route table's (the v1.0
ones, under ``/{tenant}`` when the request names a tenant; the v0.3 ones under ``/v1``), each
path value percent-encoded as one segment (``/`` and ``:`` included, so that an id can never
be read as a verb or two segments). SubscribeToTask uses GET, as the proto's HTTP rule says.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias
from urllib.parse import quote, urlencode

import msgspec

from a2a_core import types as v1
from a2a_core._protocol import codec
from a2a_core._protocol.operations import Dialect, Operation
from a2a_core.compat.v0_3 import rest_convert, rest_types

__all__ = ["OutgoingRestRequest", "encode_rest_request"]


@dataclass(frozen=True, slots=True)
class OutgoingRestRequest:
    """One REST request, relative to the interface's URL."""

    method: str
    """The HTTP method."""
    path: str
    """The path below the interface's URL, percent-encoded, starting with ``/``."""
    query: str = ""
    """The encoded query string, without ``?``."""
    body: bytes = b""
    """The JSON body (empty for GET and DELETE)."""


def _segment(value: str) -> str:
    return quote(value, safe="")


def _timestamp(value: _dt.datetime) -> str:
    return value.astimezone(_dt.UTC).isoformat().replace("+00:00", "Z")


def _query(pairs: list[tuple[str, str]]) -> str:
    return urlencode(pairs, quote_via=quote)


def _prefix(tenant: str) -> str:
    return f"/{_segment(tenant)}" if tenant else ""


def _without_tenant(value: Any) -> Any:
    # The tenant travels in the path; the body repeats nothing the path says.
    return msgspec.structs.replace(value, tenant="") if value.tenant else value


_Encoder: TypeAlias = Callable[[Any], OutgoingRestRequest]


def _v1_send(verb: str) -> _Encoder:
    def encode(request: v1.SendMessageRequest) -> OutgoingRestRequest:
        body = codec.encode(_without_tenant(request))
        return OutgoingRestRequest("POST", f"{_prefix(request.tenant)}/message:{verb}", body=body)

    return encode


def _history(length: int | None) -> list[tuple[str, str]]:
    return [] if length is None else [("historyLength", str(length))]


def _v1_get_task(request: v1.GetTaskRequest) -> OutgoingRestRequest:
    path = f"{_prefix(request.tenant)}/tasks/{_segment(request.id)}"
    return OutgoingRestRequest("GET", path, _query(_history(request.history_length)))


def _v1_list_tasks(request: v1.ListTasksRequest) -> OutgoingRestRequest:
    pairs: list[tuple[str, str]] = []
    if request.context_id:
        pairs.append(("contextId", request.context_id))
    if request.status is not v1.TaskState.UNSPECIFIED:
        pairs.append(("status", codec.encode(request.status).decode().strip('"')))
    if request.page_size is not None:
        pairs.append(("pageSize", str(request.page_size)))
    if request.page_token:
        pairs.append(("pageToken", request.page_token))
    pairs += _history(request.history_length)
    if request.status_timestamp_after is not None:
        pairs.append(("statusTimestampAfter", _timestamp(request.status_timestamp_after)))
    if request.include_artifacts is not None:
        pairs.append(("includeArtifacts", "true" if request.include_artifacts else "false"))
    return OutgoingRestRequest("GET", f"{_prefix(request.tenant)}/tasks", _query(pairs))


def _v1_cancel(request: v1.CancelTaskRequest) -> OutgoingRestRequest:
    path = f"{_prefix(request.tenant)}/tasks/{_segment(request.id)}:cancel"
    body = codec.encode({"metadata": request.metadata}) if request.metadata else b"{}"
    return OutgoingRestRequest("POST", path, body=body)


def _v1_subscribe(request: v1.SubscribeToTaskRequest) -> OutgoingRestRequest:
    return OutgoingRestRequest(
        "GET", f"{_prefix(request.tenant)}/tasks/{_segment(request.id)}:subscribe"
    )


def _configs_path(tenant: str, task_id: str) -> str:
    return f"{_prefix(tenant)}/tasks/{_segment(task_id)}/pushNotificationConfigs"


def _v1_create_push(request: v1.TaskPushNotificationConfig) -> OutgoingRestRequest:
    body = codec.encode(msgspec.structs.replace(request, tenant="", task_id=""))
    return OutgoingRestRequest("POST", _configs_path(request.tenant, request.task_id), body=body)


def _v1_get_push(request: v1.GetTaskPushNotificationConfigRequest) -> OutgoingRestRequest:
    path = f"{_configs_path(request.tenant, request.task_id)}/{_segment(request.id)}"
    return OutgoingRestRequest("GET", path)


def _page(page_size: int, page_token: str) -> list[tuple[str, str]]:
    pairs = [("pageSize", str(page_size))] if page_size else []
    return pairs + ([("pageToken", page_token)] if page_token else [])


def _v1_list_push(request: v1.ListTaskPushNotificationConfigsRequest) -> OutgoingRestRequest:
    query = _query(_page(request.page_size, request.page_token))
    return OutgoingRestRequest("GET", _configs_path(request.tenant, request.task_id), query)


def _v1_delete_push(request: v1.DeleteTaskPushNotificationConfigRequest) -> OutgoingRestRequest:
    path = f"{_configs_path(request.tenant, request.task_id)}/{_segment(request.id)}"
    return OutgoingRestRequest("DELETE", path)


def _v1_extended_card(request: v1.GetExtendedAgentCardRequest) -> OutgoingRestRequest:
    return OutgoingRestRequest("GET", f"{_prefix(request.tenant)}/extendedAgentCard")


# v0.3: no tenants, `/v1/` paths, the v0.3 proto's bodies.


def _v0_3_send(verb: str) -> _Encoder:
    def encode(request: v1.SendMessageRequest) -> OutgoingRestRequest:
        body = codec.encode(rest_convert.send_request_from_v1(request))
        return OutgoingRestRequest("POST", f"/v1/message:{verb}", body=body)

    return encode


def _v0_3_get_task(request: v1.GetTaskRequest) -> OutgoingRestRequest:
    path = f"/v1/tasks/{_segment(request.id)}"
    return OutgoingRestRequest("GET", path, _query(_history(request.history_length)))


def _v0_3_cancel(request: v1.CancelTaskRequest) -> OutgoingRestRequest:
    body = codec.encode(rest_types.CancelTaskRequest(name=rest_convert.task_name(request.id)))
    return OutgoingRestRequest("POST", f"/v1/tasks/{_segment(request.id)}:cancel", body=body)


def _v0_3_subscribe(request: v1.SubscribeToTaskRequest) -> OutgoingRestRequest:
    return OutgoingRestRequest("GET", f"/v1/tasks/{_segment(request.id)}:subscribe")


def _v0_3_create_push(request: v1.TaskPushNotificationConfig) -> OutgoingRestRequest:
    body = codec.encode(rest_convert.task_push_config_from_v1(request))
    return OutgoingRestRequest("POST", f"/v1{_configs_path('', request.task_id)}", body=body)


def _v0_3_get_push(request: v1.GetTaskPushNotificationConfigRequest) -> OutgoingRestRequest:
    return OutgoingRestRequest(
        "GET", f"/v1{_configs_path('', request.task_id)}/{_segment(request.id)}"
    )


def _v0_3_list_push(request: v1.ListTaskPushNotificationConfigsRequest) -> OutgoingRestRequest:
    query = _query(_page(request.page_size, request.page_token))
    return OutgoingRestRequest("GET", f"/v1{_configs_path('', request.task_id)}", query)


def _v0_3_delete_push(request: v1.DeleteTaskPushNotificationConfigRequest) -> OutgoingRestRequest:
    return OutgoingRestRequest(
        "DELETE", f"/v1{_configs_path('', request.task_id)}/{_segment(request.id)}"
    )


def _v0_3_card(request: v1.GetExtendedAgentCardRequest) -> OutgoingRestRequest:
    return OutgoingRestRequest("GET", "/v1/card")


_ENCODERS: Final[dict[tuple[Dialect, Operation], _Encoder]] = {
    ("1.0", Operation.SEND_MESSAGE): _v1_send("send"),
    ("1.0", Operation.SEND_STREAMING_MESSAGE): _v1_send("stream"),
    ("1.0", Operation.GET_TASK): _v1_get_task,
    ("1.0", Operation.LIST_TASKS): _v1_list_tasks,
    ("1.0", Operation.CANCEL_TASK): _v1_cancel,
    ("1.0", Operation.SUBSCRIBE_TO_TASK): _v1_subscribe,
    ("1.0", Operation.CREATE_PUSH_CONFIG): _v1_create_push,
    ("1.0", Operation.GET_PUSH_CONFIG): _v1_get_push,
    ("1.0", Operation.LIST_PUSH_CONFIGS): _v1_list_push,
    ("1.0", Operation.DELETE_PUSH_CONFIG): _v1_delete_push,
    ("1.0", Operation.GET_EXTENDED_CARD): _v1_extended_card,
    ("0.3", Operation.SEND_MESSAGE): _v0_3_send("send"),
    ("0.3", Operation.SEND_STREAMING_MESSAGE): _v0_3_send("stream"),
    ("0.3", Operation.GET_TASK): _v0_3_get_task,
    ("0.3", Operation.CANCEL_TASK): _v0_3_cancel,
    ("0.3", Operation.SUBSCRIBE_TO_TASK): _v0_3_subscribe,
    ("0.3", Operation.CREATE_PUSH_CONFIG): _v0_3_create_push,
    ("0.3", Operation.GET_PUSH_CONFIG): _v0_3_get_push,
    ("0.3", Operation.LIST_PUSH_CONFIGS): _v0_3_list_push,
    ("0.3", Operation.DELETE_PUSH_CONFIG): _v0_3_delete_push,
    ("0.3", Operation.GET_EXTENDED_CARD): _v0_3_card,
}


def encode_rest_request(
    operation: Operation, dialect: Dialect, request: Any
) -> OutgoingRestRequest | None:
    """The REST request of ``operation`` for the v1.0 ``request`` in ``dialect``; ``None``
    when the dialect has no route for it (ListTasks in v0.3)."""
    encoder = _ENCODERS.get((dialect, operation))
    return None if encoder is None else encoder(request)
