"""The operations table (L1, pure): every fact about each A2A operation, in one row.

An operation is version- and binding-neutral (`Operation`; its value is the v1.0 method
name). Its row (`OperationSpec`) says what the rest of the core needs to know about it: the
v1.0 params struct, its v0.3 JSON-RPC name, params struct and conversion to v1.0, the result
type(s), whether it streams, which card capability gates it, and the verb under which
``authorize_task`` is asked about it. The JSON-RPC method tables (`a2a_core.jsonrpc`), the
REST routes (`a2a_core.rest`), `ServerProtocol` (params, results, capability checks) and the
runtime (authorization) all read these rows; none keeps a parallel table. Adding an
operation is one row here, its REST routes, and one handler in the runtime.

`Dialect`, `Binding` and the request union `CallRequest` are defined here, once.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias

import msgspec

from a2a_core.compat.v0_3 import convert as v03c
from a2a_core.compat.v0_3 import rest_convert as v03r
from a2a_core.compat.v0_3 import rest_types as v03rt
from a2a_core.compat.v0_3 import types as v03
from a2a_core.types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

__all__ = [
    "OPERATIONS",
    "Binding",
    "CallRequest",
    "Dialect",
    "Gate",
    "Operation",
    "OperationSpec",
    "Verb",
]

#: A wire dialect: the v1.0 model, or the v0.3 JSON shapes converted at the edge.
Dialect = Literal["1.0", "0.3"]
#: A protocol binding: JSON-RPC and HTTP+JSON over HTTP, and gRPC (HTTP/2).
Binding = Literal["jsonrpc", "rest", "grpc"]
#: The card capability an operation needs (`AgentCapabilities`): push notifications,
#: streaming, or the extended card.
Gate = Literal["push_notifications", "streaming", "extended_agent_card"]
#: The operation names ``authorize_task`` is asked about (spec-decisions R2).
Verb = Literal[
    "send", "get", "list", "cancel", "subscribe", "push_set", "push_get", "push_list", "push_delete"
]

#: The v1.0 request struct of any operation.
CallRequest: TypeAlias = (
    SendMessageRequest
    | GetTaskRequest
    | ListTasksRequest
    | CancelTaskRequest
    | SubscribeToTaskRequest
    | TaskPushNotificationConfig
    | GetTaskPushNotificationConfigRequest
    | ListTaskPushNotificationConfigsRequest
    | DeleteTaskPushNotificationConfigRequest
    | GetExtendedAgentCardRequest
)


class Operation(enum.Enum):
    """A version-neutral A2A operation; the value is its v1.0 (canonical) method name."""

    # Members are compared by identity; hashing them by identity too (a C slot, rather than
    # Enum's hash of the name in Python) makes every dict and set lookup on them cheaper.
    __hash__ = object.__hash__

    SEND_MESSAGE = "SendMessage"
    SEND_STREAMING_MESSAGE = "SendStreamingMessage"
    GET_TASK = "GetTask"
    LIST_TASKS = "ListTasks"
    CANCEL_TASK = "CancelTask"
    SUBSCRIBE_TO_TASK = "SubscribeToTask"
    CREATE_PUSH_CONFIG = "CreateTaskPushNotificationConfig"
    GET_PUSH_CONFIG = "GetTaskPushNotificationConfig"
    LIST_PUSH_CONFIGS = "ListTaskPushNotificationConfigs"
    DELETE_PUSH_CONFIG = "DeleteTaskPushNotificationConfig"
    GET_EXTENDED_CARD = "GetExtendedAgentCard"


class OperationSpec(msgspec.Struct, frozen=True):
    """Everything the core knows about one operation."""

    operation: Operation
    """The operation; ``operation.value`` is its v1.0 JSON-RPC method name."""
    params: type[Any]
    """The v1.0 params struct (the JSON-RPC ``params``; the REST body plus path values)."""
    results: tuple[type[Any], ...]
    """The v1.0 result types a reply may carry (``NoneType`` for an empty result); ``()``
    for a streaming operation, whose events are ``StreamResponse`` values."""
    streaming: bool = False
    """Whether it answers with an SSE stream rather than one response."""
    gate: Gate | None = None
    """The card capability it needs, checked after the params are decoded."""
    verb: Verb | None = None
    """What ``authorize_task`` is asked about the task it touches (``None``: no task)."""
    v0_3_method: str | None = None
    """Its v0.3 JSON-RPC method name (``None``: not in v0.3 JSON-RPC)."""
    v0_3_params: type[Any] | None = None
    """The v0.3 JSON-RPC params struct."""
    v0_3_to_v1: Callable[[Any], CallRequest] | None = None
    """The conversion of those params to the v1.0 request."""
    v0_3_result: Callable[[Any], Any] | None = None
    """The conversion of its v1.0 result to the v0.3 JSON-RPC result (``None``: the same
    value: an empty result, or an operation v0.3 does not have)."""
    v0_3_rest_result: Callable[[Any], Any] | None = None
    """The conversion of its v1.0 result to the body of its v0.3 REST route (``None``: the
    same value, or no such route)."""
    # The client's direction: the same row, read the other way (a2a_core.client).
    v0_3_from_v1: Callable[[Any], Any] | None = None
    """The conversion of the v1.0 request to the v0.3 JSON-RPC params."""
    v0_3_result_type: Any = None
    """The type of the v0.3 JSON-RPC result (``None``: an empty result, or no v0.3 method)."""
    v0_3_result_to_v1: Callable[[Any], Any] | None = None
    """The conversion of that v0.3 result to the v1.0 result."""
    v0_3_rest_result_type: Any = None
    """The type of the body of its v0.3 REST route's reply (``None``: empty, or no route)."""
    v0_3_rest_result_to_v1: Callable[[Any], Any] | None = None
    """The conversion of that body to the v1.0 result."""


class _V03NoParams(msgspec.Struct):
    """The params of ``agent/getAuthenticatedExtendedCard``: it defines none, any object is
    ignored (an absent or ``null`` params reaches the decoder as ``{}``)."""


def _extended_card_params_to_v1(_params: _V03NoParams) -> GetExtendedAgentCardRequest:
    return GetExtendedAgentCardRequest()


def _extended_card_params_from_v1(_request: GetExtendedAgentCardRequest) -> _V03NoParams:
    return _V03NoParams()


_ROWS: Final = (
    OperationSpec(
        Operation.SEND_MESSAGE,
        SendMessageRequest,
        (SendMessageResponse,),
        verb="send",
        v0_3_method="message/send",
        v0_3_params=v03.MessageSendParams,
        v0_3_to_v1=v03c.send_params_to_v1,
        v0_3_result=v03c.send_result_from_v1,
        v0_3_rest_result=v03r.send_response_from_v1,
        v0_3_from_v1=v03c.send_params_from_v1,
        v0_3_result_type=v03.SendMessageResult,
        v0_3_result_to_v1=v03c.send_result_to_v1,
        v0_3_rest_result_type=v03rt.SendMessageResponse,
        v0_3_rest_result_to_v1=v03r.send_response_to_v1,
    ),
    OperationSpec(
        Operation.SEND_STREAMING_MESSAGE,
        SendMessageRequest,
        (),
        streaming=True,
        gate="streaming",
        verb="send",
        v0_3_method="message/stream",
        v0_3_params=v03.MessageSendParams,
        v0_3_to_v1=v03c.send_params_to_v1,
        v0_3_from_v1=v03c.send_params_from_v1,
    ),
    OperationSpec(
        Operation.GET_TASK,
        GetTaskRequest,
        (Task,),
        verb="get",
        v0_3_method="tasks/get",
        v0_3_params=v03.TaskQueryParams,
        v0_3_to_v1=v03c.get_task_params_to_v1,
        v0_3_result=v03c.task_from_v1,
        v0_3_rest_result=v03r.task_from_v1,
        v0_3_from_v1=v03c.get_task_params_from_v1,
        v0_3_result_type=v03.Task,
        v0_3_result_to_v1=v03c.task_to_v1,
        v0_3_rest_result_type=v03rt.Task,
        v0_3_rest_result_to_v1=v03r.task_to_v1,
    ),
    # v0.3 has no list-tasks method (spec-decisions A4).
    OperationSpec(Operation.LIST_TASKS, ListTasksRequest, (ListTasksResponse,), verb="list"),
    OperationSpec(
        Operation.CANCEL_TASK,
        CancelTaskRequest,
        (Task,),
        verb="cancel",
        v0_3_method="tasks/cancel",
        v0_3_params=v03.TaskIdParams,
        v0_3_to_v1=v03c.cancel_params_to_v1,
        v0_3_result=v03c.task_from_v1,
        v0_3_rest_result=v03r.task_from_v1,
        v0_3_from_v1=v03c.cancel_params_from_v1,
        v0_3_result_type=v03.Task,
        v0_3_result_to_v1=v03c.task_to_v1,
        v0_3_rest_result_type=v03rt.Task,
        v0_3_rest_result_to_v1=v03r.task_to_v1,
    ),
    OperationSpec(
        Operation.SUBSCRIBE_TO_TASK,
        SubscribeToTaskRequest,
        (),
        streaming=True,
        gate="streaming",
        verb="subscribe",
        v0_3_method="tasks/resubscribe",
        v0_3_params=v03.TaskIdParams,
        v0_3_to_v1=v03c.subscribe_params_to_v1,
        v0_3_from_v1=v03c.subscribe_params_from_v1,
    ),
    OperationSpec(
        Operation.CREATE_PUSH_CONFIG,
        TaskPushNotificationConfig,
        (TaskPushNotificationConfig,),
        gate="push_notifications",
        verb="push_set",
        v0_3_method="tasks/pushNotificationConfig/set",
        v0_3_params=v03.TaskPushNotificationConfig,
        v0_3_to_v1=v03c.task_push_config_to_v1,
        v0_3_result=v03c.task_push_config_from_v1,
        v0_3_rest_result=v03r.task_push_config_from_v1,
        v0_3_from_v1=v03c.task_push_config_from_v1,
        v0_3_result_type=v03.TaskPushNotificationConfig,
        v0_3_result_to_v1=v03c.task_push_config_to_v1,
        v0_3_rest_result_type=v03rt.TaskPushNotificationConfig,
        v0_3_rest_result_to_v1=v03r.task_push_config_to_v1,
    ),
    OperationSpec(
        Operation.GET_PUSH_CONFIG,
        GetTaskPushNotificationConfigRequest,
        (TaskPushNotificationConfig,),
        gate="push_notifications",
        verb="push_get",
        v0_3_method="tasks/pushNotificationConfig/get",
        v0_3_params=v03.GetTaskPushNotificationConfigParams,
        v0_3_to_v1=v03c.get_push_config_params_to_v1,
        v0_3_result=v03c.task_push_config_from_v1,
        v0_3_rest_result=v03r.task_push_config_from_v1,
        v0_3_from_v1=v03c.get_push_config_params_from_v1,
        v0_3_result_type=v03.TaskPushNotificationConfig,
        v0_3_result_to_v1=v03c.task_push_config_to_v1,
        v0_3_rest_result_type=v03rt.TaskPushNotificationConfig,
        v0_3_rest_result_to_v1=v03r.task_push_config_to_v1,
    ),
    OperationSpec(
        Operation.LIST_PUSH_CONFIGS,
        ListTaskPushNotificationConfigsRequest,
        (ListTaskPushNotificationConfigsResponse,),
        gate="push_notifications",
        verb="push_list",
        v0_3_method="tasks/pushNotificationConfig/list",
        v0_3_params=v03.ListTaskPushNotificationConfigParams,
        v0_3_to_v1=v03c.list_push_config_params_to_v1,
        v0_3_result=v03c.push_config_list_from_v1,
        v0_3_rest_result=v03r.push_config_list_from_v1,
        v0_3_from_v1=v03c.list_push_config_params_from_v1,
        v0_3_result_type=list[v03.TaskPushNotificationConfig],
        v0_3_result_to_v1=v03c.push_config_list_to_v1,
        v0_3_rest_result_type=v03rt.ListTaskPushNotificationConfigResponse,
        v0_3_rest_result_to_v1=v03r.push_config_list_to_v1,
    ),
    OperationSpec(
        Operation.DELETE_PUSH_CONFIG,
        DeleteTaskPushNotificationConfigRequest,
        (type(None),),
        gate="push_notifications",
        verb="push_delete",
        v0_3_method="tasks/pushNotificationConfig/delete",
        v0_3_params=v03.DeleteTaskPushNotificationConfigParams,
        v0_3_to_v1=v03c.delete_push_config_params_to_v1,
        v0_3_from_v1=v03c.delete_push_config_params_from_v1,
    ),
    OperationSpec(
        Operation.GET_EXTENDED_CARD,
        GetExtendedAgentCardRequest,
        (AgentCard,),
        gate="extended_agent_card",
        v0_3_method="agent/getAuthenticatedExtendedCard",
        v0_3_params=_V03NoParams,
        v0_3_to_v1=_extended_card_params_to_v1,
        v0_3_result=v03c.card_from_v1,
        v0_3_rest_result=v03r.card_from_v1,
        v0_3_from_v1=_extended_card_params_from_v1,
        v0_3_result_type=v03.AgentCard,
        v0_3_result_to_v1=v03c.card_to_v1,
        v0_3_rest_result_type=v03rt.AgentCard,
        v0_3_rest_result_to_v1=v03r.card_to_v1,
    ),
)

#: Every operation's row.
OPERATIONS: Final[Mapping[Operation, OperationSpec]] = MappingProxyType(
    {row.operation: row for row in _ROWS}
)
