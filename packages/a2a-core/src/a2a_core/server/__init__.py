"""L2: the async runtime on anyio - the server object, the agent API, stores and delivery.

Everything here runs under asyncio or trio (through anyio) and imports no web framework.
Adapters call :meth:`A2AServer.handle`; agents receive a :class:`TaskContext`.
"""

from a2a_core.server._agent import Agent, AgentResult, AuthRequired, InputRequired
from a2a_core.server._backend import Backend, InMemoryBackend, Service
from a2a_core.server._context import TaskContext
from a2a_core.server._delivery_rules import DeliveryOutcome, DeliveryRules
from a2a_core.server._events import EventLog, ImmediateEventLog, LoggedEvent
from a2a_core.server._extensions import Extension, TimestampExtension
from a2a_core.server._guards import INACTIVITY_TEXT, INTERRUPTED_EXPIRY_TEXT, ExecutionGuards
from a2a_core.server._health import LIVENESS_PATH, READINESS_PATH
from a2a_core.server._limits import TaskLimitError, TaskLimits
from a2a_core.server._memory_events import InMemoryEventLog
from a2a_core.server._memory_push import InMemoryPushConfigStore
from a2a_core.server._memory_store import InMemoryTaskStore
from a2a_core.server._options import PushOptions, StreamOptions
from a2a_core.server._ownership import ANONYMOUS_OWNER, TaskOwner, owner_by_identity, owner_key
from a2a_core.server._push import PushConfigStore, PushSender, PushTarget
from a2a_core.server._push_delivery import WebhookPushSender
from a2a_core.server._push_secrets import PushSecretCipher, PushSecretError, redact_push_config
from a2a_core.server._recovering import GAVE_UP_TEXT
from a2a_core.server._recovery import CheckpointTooLargeError, Recovery, RecoveryPolicy
from a2a_core.server._server import SHUTDOWN_TEXT, A2AServer, AuthorizeTask, ExtendedCard
from a2a_core.server._store import (
    ImmediateTaskStore,
    LoggedTaskStore,
    StoredTask,
    TaskPage,
    TaskQuery,
    TaskStore,
)
from a2a_core.server._webhook_guard import WebhookPolicy
from a2a_core.server._webhook_poster import WebhookPoster

__all__ = [
    "LIVENESS_PATH",
    "READINESS_PATH",
    "ANONYMOUS_OWNER",
    "INACTIVITY_TEXT",
    "INTERRUPTED_EXPIRY_TEXT",
    "GAVE_UP_TEXT",
    "SHUTDOWN_TEXT",
    "A2AServer",
    "Agent",
    "AgentResult",
    "AuthRequired",
    "AuthorizeTask",
    "Backend",
    "CheckpointTooLargeError",
    "DeliveryOutcome",
    "DeliveryRules",
    "EventLog",
    "ExecutionGuards",
    "ExtendedCard",
    "Extension",
    "ImmediateEventLog",
    "ImmediateTaskStore",
    "InMemoryBackend",
    "InMemoryEventLog",
    "InMemoryPushConfigStore",
    "InMemoryTaskStore",
    "InputRequired",
    "LoggedEvent",
    "LoggedTaskStore",
    "PushConfigStore",
    "PushOptions",
    "PushSecretCipher",
    "PushSecretError",
    "PushSender",
    "PushTarget",
    "Recovery",
    "RecoveryPolicy",
    "Service",
    "StoredTask",
    "StreamOptions",
    "TaskContext",
    "TaskLimitError",
    "TaskLimits",
    "TaskOwner",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "TimestampExtension",
    "WebhookPolicy",
    "WebhookPoster",
    "WebhookPushSender",
    "owner_by_identity",
    "owner_key",
    "redact_push_config",
]
