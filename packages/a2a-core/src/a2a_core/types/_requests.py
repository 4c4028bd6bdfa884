"""Request and response messages of every v1.0 operation, and push-notification configs.

Each JSON-RPC ``params`` object (and each REST body, minus path parameters) decodes into one
of these. Range rules that the spec states for the request (``historyLength`` not negative,
``pageSize`` 1..100) are part of the field types, so a bad value fails decoding and the
caller gets InvalidParams before anything runs.
"""

from __future__ import annotations

import datetime as _dt

import msgspec
from msgspec import field

from a2a_core.types._base import WireStruct

from ._common import HistoryLength, Int32, NonEmptyStr, PageSize, Struct, to_utc
from ._enums import TaskState
from ._task import Message, Task

__all__ = [
    "AuthenticationInfo",
    "CancelTaskRequest",
    "DeleteTaskPushNotificationConfigRequest",
    "GetExtendedAgentCardRequest",
    "GetTaskPushNotificationConfigRequest",
    "GetTaskRequest",
    "ListTaskPushNotificationConfigsRequest",
    "ListTaskPushNotificationConfigsResponse",
    "ListTasksRequest",
    "ListTasksResponse",
    "SendMessageConfiguration",
    "SendMessageRequest",
    "SubscribeToTaskRequest",
    "TaskPushNotificationConfig",
]


class AuthenticationInfo(WireStruct, kw_only=True, frozen=True):
    """Credentials the server sends to a push-notification webhook."""

    scheme: NonEmptyStr
    """IANA HTTP authentication scheme (``Bearer``, ``Basic``...), case-insensitive."""
    credentials: str = ""
    """The credentials, sent as ``Authorization: <scheme> <credentials>``."""


class TaskPushNotificationConfig(WireStruct, kw_only=True, frozen=True):
    """A webhook that receives a task's events.

    This flat shape is also the request of CreateTaskPushNotificationConfig.
    """

    tenant: str = ""
    """Tenant the request is routed to."""
    id: str = ""
    """Config id; the server assigns one when it is empty."""
    task_id: str = ""
    """The task whose events are delivered."""
    url: NonEmptyStr
    """The webhook URL."""
    token: str = ""
    """A token sent back with each notification so the receiver can check its origin."""
    authentication: AuthenticationInfo | None = None
    """Credentials for the webhook."""


class SendMessageConfiguration(WireStruct, kw_only=True, frozen=True):
    """How the server should handle a sent message."""

    accepted_output_modes: list[str] = field(default_factory=list)
    """Media types the client accepts in the reply."""
    task_push_notification_config: TaskPushNotificationConfig | None = None
    """A webhook to register for the task."""
    history_length: HistoryLength | None = None
    """At most this many recent messages in the returned task (0: none)."""
    return_immediately: bool = False
    """Return at once instead of waiting for a terminal or interrupted state."""


class SendMessageRequest(WireStruct, kw_only=True, frozen=True):
    """SendMessage and SendStreamingMessage."""

    tenant: str = ""
    """Tenant the request is routed to."""
    message: Message
    """The message to send."""
    configuration: SendMessageConfiguration | None = None
    """How to handle it."""
    metadata: Struct = field(default_factory=dict)
    """Free-form request metadata."""


class GetTaskRequest(WireStruct, kw_only=True, frozen=True):
    """GetTask."""

    tenant: str = ""
    """Tenant the request is routed to."""
    id: NonEmptyStr
    """The task id."""
    history_length: HistoryLength | None = None
    """At most this many recent messages (0: none; unset: the server's default)."""


class ListTasksRequest(WireStruct, kw_only=True, frozen=True):
    """ListTasks: filters, a cursor and how much of each task to return."""

    tenant: str = ""
    """Tenant the request is routed to."""
    context_id: str = ""
    """Only tasks of this context."""
    status: TaskState = TaskState.UNSPECIFIED
    """Only tasks in this state (UNSPECIFIED: any)."""
    page_size: PageSize | None = None
    """Tasks per page, 1..100 (default 50)."""
    page_token: str = ""
    """The opaque cursor of a previous response's ``nextPageToken``."""
    history_length: HistoryLength | None = None
    """At most this many recent messages per task."""
    status_timestamp_after: _dt.datetime | None = None
    """Only tasks whose status timestamp is at or after this time."""
    include_artifacts: bool | None = None
    """Include artifacts (default false: the ``artifacts`` key is absent)."""

    def __post_init__(self) -> None:
        if self.status_timestamp_after is not None:
            utc = to_utc(self.status_timestamp_after)
            msgspec.structs.force_setattr(self, "status_timestamp_after", utc)


class ListTasksResponse(WireStruct, kw_only=True, frozen=True):
    """A page of tasks; all four members are always emitted (spec-decisions F6)."""

    tasks: list[Task]
    """The page, newest status first."""
    next_page_token: str
    """Cursor of the next page; empty on the last page."""
    page_size: Int32
    """The page size used for this response."""
    total_size: Int32
    """How many tasks matched before paging."""


class CancelTaskRequest(WireStruct, kw_only=True, frozen=True):
    """CancelTask."""

    tenant: str = ""
    """Tenant the request is routed to."""
    id: NonEmptyStr
    """The task id."""
    metadata: Struct = field(default_factory=dict)
    """Free-form request metadata."""


class SubscribeToTaskRequest(WireStruct, kw_only=True, frozen=True):
    """SubscribeToTask."""

    tenant: str = ""
    """Tenant the request is routed to."""
    id: NonEmptyStr
    """The task id."""


class GetTaskPushNotificationConfigRequest(WireStruct, kw_only=True, frozen=True):
    """GetTaskPushNotificationConfig."""

    tenant: str = ""
    """Tenant the request is routed to."""
    task_id: NonEmptyStr
    """The task id."""
    id: NonEmptyStr
    """The config id."""


class DeleteTaskPushNotificationConfigRequest(WireStruct, kw_only=True, frozen=True):
    """DeleteTaskPushNotificationConfig."""

    tenant: str = ""
    """Tenant the request is routed to."""
    task_id: NonEmptyStr
    """The task id."""
    id: NonEmptyStr
    """The config id."""


class ListTaskPushNotificationConfigsRequest(WireStruct, kw_only=True, frozen=True):
    """ListTaskPushNotificationConfigs."""

    task_id: NonEmptyStr
    """The task id."""
    page_size: Int32 = 0
    """Configs per page (0: the server's default)."""
    page_token: str = ""
    """The cursor of a previous response."""
    tenant: str = ""
    """Tenant the request is routed to."""


class ListTaskPushNotificationConfigsResponse(WireStruct, kw_only=True, frozen=True):
    """A page of push-notification configs."""

    configs: list[TaskPushNotificationConfig] = field(default_factory=list)
    """The configs."""
    next_page_token: str = ""
    """Cursor of the next page; empty on the last page."""


class GetExtendedAgentCardRequest(WireStruct, kw_only=True, frozen=True):
    """GetExtendedAgentCard (``params`` may be omitted entirely)."""

    tenant: str = ""
    """Tenant the request is routed to."""
